//! The World against a simple model: random spawn / sub-object spawn / destroy / double and
//! stale destroy / link / root / unroot / tick / collect / end_frame over three pooled
//! classes (Reuse without workers, Purge and Default with a worker each, small `max` so
//! overflow happens) and a plain class. After every step, each live object resolves to
//! its model value, no released handle resolves, and no handle value was issued twice;
//! after every collection the survivors are exactly the model's (reachable from roots
//! through links and sub-object → owner edges) and each pool's `in_use` agrees; at the end
//! every object ever made was dropped exactly once.

mod common;

use std::collections::{BTreeMap, HashSet};

use common::Drops;
use proptest::prelude::*;
use respawn::{Handle, Object, Policy, PoolConfig, PoolError, Poolable, RawHandle, Trace, World};

/// What the model needs of each class.
trait Kind: Poolable {
    const KIND: u8;
    fn value(&self) -> u64;
    fn set_value(&mut self, v: u64);
    fn links_mut(&mut self) -> &mut Vec<RawHandle>;
}

macro_rules! kind {
    ($name:ident, $kind:expr) => {
        #[derive(Trace, Object)]
        struct $name {
            #[trace(skip)]
            id: u64,
            #[trace(skip)]
            value: u64,
            links: Vec<RawHandle>,
            #[trace(skip)]
            drops: Drops,
        }
        impl Drop for $name {
            fn drop(&mut self) {
                self.drops.note_drop(self.id);
            }
        }
        impl Poolable for $name {
            fn create() -> Self {
                unreachable!("built by counting closures")
            }
            fn reset(&mut self) {
                self.value = 0;
                self.links.clear();
            }
        }
        impl Kind for $name {
            const KIND: u8 = $kind;
            fn value(&self) -> u64 {
                self.value
            }
            fn set_value(&mut self, v: u64) {
                self.value = v;
            }
            fn links_mut(&mut self) -> &mut Vec<RawHandle> {
                &mut self.links
            }
        }
        impl $name {
            fn new(drops: &Drops) -> Self {
                Self { id: drops.make(), value: 0, links: Vec::new(), drops: drops.clone() }
            }
        }
    };
}

kind!(Reused, 0);
kind!(Purged, 1);
kind!(Collected, 2);
kind!(Plain, 3);

#[derive(Clone, Debug)]
enum Op {
    Spawn { kind: u8, value: u64, rooted: bool },
    SpawnSub { kind: u8, outer: usize },
    Destroy(usize),
    DestroyAgain(usize),
    Link(usize, usize),
    Root(usize),
    Unroot(usize),
    Tick(u8),
    Collect,
    EndFrame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => (0..4u8, any::<u64>(), any::<bool>()).prop_map(|(kind, value, rooted)| Op::Spawn { kind, value: value >> 8, rooted }),
        1 => (0..4u8, any::<usize>()).prop_map(|(kind, outer)| Op::SpawnSub { kind, outer }),
        4 => any::<usize>().prop_map(Op::Destroy),
        1 => any::<usize>().prop_map(Op::DestroyAgain),
        2 => (any::<usize>(), any::<usize>()).prop_map(|(a, b)| Op::Link(a, b)),
        1 => any::<usize>().prop_map(Op::Root),
        1 => any::<usize>().prop_map(Op::Unroot),
        1 => (0..4u8).prop_map(Op::Tick),
        1 => Just(Op::Collect),
        1 => Just(Op::EndFrame),
    ]
}

#[derive(Clone, Debug)]
struct MObj {
    kind: u8,
    value: u64,
    rooted: bool,
    links: Vec<RawHandle>,
    outer: Option<RawHandle>,
}

struct Harness {
    world: World,
    model: BTreeMap<u64, MObj>,
    issued: HashSet<u64>,
    released: Vec<RawHandle>,
}

fn pick(model: &BTreeMap<u64, MObj>, i: usize) -> Option<RawHandle> {
    (!model.is_empty()).then(|| RawHandle::from_bits(*model.keys().nth(i % model.len()).unwrap()).unwrap())
}

impl Harness {
    fn spawn<T: Kind>(&mut self, value: u64, rooted: bool, outer: Option<RawHandle>) {
        let h: Handle<T> = match outer {
            None => self.world.spawn_with(|t: &mut T| t.set_value(value)),
            Some(o) => {
                let h = self.world.spawn_sub::<T, ()>(Handle::from_raw(o)).unwrap();
                self.world.get_mut(h).unwrap().set_value(value);
                h
            }
        };
        if rooted {
            self.world.add_to_root(h).unwrap();
        }
        assert!(self.issued.insert(h.raw().to_bits()), "handle {:?} issued twice", h.raw());
        self.model.insert(h.raw().to_bits(), MObj { kind: T::KIND, value, rooted, links: Vec::new(), outer });
    }

    fn subtree(&self, raw: RawHandle) -> Vec<RawHandle> {
        let mut out = vec![raw];
        let mut i = 0;
        while i < out.len() {
            let p = out[i];
            out.extend(
                self.model.iter().filter(|(_, o)| o.outer == Some(p)).map(|(&k, _)| RawHandle::from_bits(k).unwrap()),
            );
            i += 1;
        }
        out
    }

    fn destroy(&mut self, raw: RawHandle) {
        let kind = self.model[&raw.to_bits()].kind;
        let result = match kind {
            0 => self.world.destroy(Handle::<Reused>::from_raw(raw)),
            1 => self.world.destroy(Handle::<Purged>::from_raw(raw)),
            2 => self.world.destroy(Handle::<Collected>::from_raw(raw)),
            _ => self.world.destroy(Handle::<Plain>::from_raw(raw)),
        };
        let tree = self.subtree(raw);
        if tree.iter().any(|h| self.model[&h.to_bits()].rooted) {
            assert!(matches!(result, Err(PoolError::Arena(respawn::ArenaError::Rooted))), "{result:?}");
            return;
        }
        result.unwrap();
        for h in tree {
            self.model.remove(&h.to_bits());
            self.released.push(h);
        }
    }

    fn value_of<T: Kind>(&self, raw: RawHandle) -> Option<u64> {
        self.world.get(Handle::<T>::from_raw(raw)).map(T::value)
    }

    fn check(&self) {
        for (&bits, o) in &self.model {
            let raw = RawHandle::from_bits(bits).unwrap();
            let got = match o.kind {
                0 => self.value_of::<Reused>(raw),
                1 => self.value_of::<Purged>(raw),
                2 => self.value_of::<Collected>(raw),
                _ => self.value_of::<Plain>(raw),
            };
            assert_eq!(got, Some(o.value), "object {raw:?} of kind {}", o.kind);
        }
        for &raw in &self.released {
            assert!(self.world.heap().table().resolve(raw).is_err(), "released {raw:?} resolves");
        }
    }

    fn collect(&mut self) {
        // Reachable: from roots, through links to live objects and sub-object → owner edges.
        let mut seen: HashSet<u64> = self.model.iter().filter(|(_, o)| o.rooted).map(|(&k, _)| k).collect();
        let mut stack: Vec<u64> = seen.iter().copied().collect();
        while let Some(k) = stack.pop() {
            let o = &self.model[&k];
            for next in o.links.iter().chain(o.outer.iter()) {
                let nb = next.to_bits();
                if self.model.contains_key(&nb) && seen.insert(nb) {
                    stack.push(nb);
                }
            }
        }
        self.world.collect_garbage();
        let dead: Vec<u64> = self.model.keys().filter(|k| !seen.contains(k)).copied().collect();
        for k in dead {
            self.model.remove(&k);
            self.released.push(RawHandle::from_bits(k).unwrap());
        }
        let count = |kind| self.model.values().filter(|o| o.kind == kind).count();
        assert_eq!(self.world.len::<Reused>(), count(0));
        assert_eq!(self.world.len::<Purged>(), count(1));
        assert_eq!(self.world.len::<Collected>(), count(2));
        assert_eq!(self.world.len::<Plain>(), count(3));
        assert_eq!(self.world.pool_stats::<Reused>().unwrap().in_use, count(0));
        assert_eq!(self.world.pool_stats::<Purged>().unwrap().in_use, count(1));
        assert_eq!(self.world.pool_stats::<Collected>().unwrap().in_use, count(2));
    }
}

fn run(ops: Vec<Op>) {
    let drops = Drops::default();
    let (d0, d1, d2, d3) = (drops.clone(), drops.clone(), drops.clone(), drops.clone());
    let small = |policy, workers: usize| PoolConfig {
        capacity: if workers > 0 { 4 } else { 0 },
        max: 12,
        low_watermark: 0,
        grow_by: 4,
        policy,
        precreate: workers > 0,
        workers,
    };
    let world = World::builder()
        .pool_with::<Reused>(small(Policy::Reuse, 0), move || Reused::new(&d0))
        .pool_with::<Purged>(small(Policy::Purge, 1), move || Purged::new(&d1))
        .pool_with::<Collected>(small(Policy::Default, 1), move || Collected::new(&d2))
        .gc(respawn::GcSettings { time_between_collections: None, ..respawn::GcSettings::SINGLE_THREADED })
        .build()
        .unwrap();
    let mut h = Harness { world, model: BTreeMap::new(), issued: HashSet::new(), released: Vec::new() };
    for op in ops {
        match op {
            Op::Spawn { kind, value, rooted } => match kind {
                0 => h.spawn::<Reused>(value, rooted, None),
                1 => h.spawn::<Purged>(value, rooted, None),
                2 => h.spawn::<Collected>(value, rooted, None),
                _ => {
                    let p = h.world.insert(Plain::new(&d3));
                    h.world.get_mut(p).unwrap().set_value(value);
                    if rooted {
                        h.world.add_to_root(p).unwrap();
                    }
                    assert!(h.issued.insert(p.raw().to_bits()), "handle issued twice");
                    h.model.insert(p.raw().to_bits(), MObj { kind: 3, value, rooted, links: Vec::new(), outer: None });
                }
            },
            Op::SpawnSub { kind, outer } => {
                let Some(o) = pick(&h.model, outer) else { continue };
                match kind {
                    0 => h.spawn::<Reused>(7, false, Some(o)),
                    1 => h.spawn::<Purged>(7, false, Some(o)),
                    _ => h.spawn::<Collected>(7, false, Some(o)),
                }
            }
            Op::Destroy(i) => {
                if let Some(raw) = pick(&h.model, i) {
                    h.destroy(raw);
                }
            }
            Op::DestroyAgain(i) => {
                if !h.released.is_empty() {
                    let raw = h.released[i % h.released.len()];
                    let r = h.world.destroy(Handle::<Reused>::from_raw(raw));
                    assert!(matches!(r, Err(PoolError::AlreadyReleased | PoolError::Stale)), "{r:?}");
                }
            }
            Op::Link(a, b) => {
                let (Some(a), Some(b)) = (pick(&h.model, a), pick(&h.model, b)) else { continue };
                let kind = h.model[&a.to_bits()].kind;
                let links = match kind {
                    0 => h.world.get_mut(Handle::<Reused>::from_raw(a)).map(Kind::links_mut),
                    1 => h.world.get_mut(Handle::<Purged>::from_raw(a)).map(Kind::links_mut),
                    2 => h.world.get_mut(Handle::<Collected>::from_raw(a)).map(Kind::links_mut),
                    _ => h.world.get_mut(Handle::<Plain>::from_raw(a)).map(Kind::links_mut),
                };
                links.unwrap().push(b);
                h.model.get_mut(&a.to_bits()).unwrap().links.push(b);
            }
            Op::Root(i) | Op::Unroot(i) => {
                let Some(raw) = pick(&h.model, i) else { continue };
                let root = matches!(op, Op::Root(_));
                let o = h.model.get_mut(&raw.to_bits()).unwrap();
                let r = if root {
                    h.world.add_to_root(Handle::<Plain>::from_raw(raw))
                } else {
                    h.world.remove_from_root(Handle::<Plain>::from_raw(raw))
                };
                if root {
                    r.unwrap();
                } else {
                    assert_eq!(r.is_ok(), o.rooted);
                }
                o.rooted = root;
            }
            Op::Tick(kind) => {
                match kind {
                    0 => h.world.tick::<Reused>(|t| t.value += 1),
                    1 => h.world.tick::<Purged>(|t| t.value += 1),
                    2 => h.world.tick::<Collected>(|t| t.value += 1),
                    _ => h.world.tick::<Plain>(|t| t.value += 1),
                }
                h.model.values_mut().filter(|o| o.kind == kind).for_each(|o| o.value += 1);
            }
            Op::Collect => h.collect(),
            Op::EndFrame => {
                h.world.end_frame();
            }
        }
        h.check();
    }
    drop(h);
    drops.assert_each_once();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn world_matches_the_model(ops in proptest::collection::vec(op(), 1..200)) {
        run(ops);
    }
}
