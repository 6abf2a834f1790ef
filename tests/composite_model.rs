//! Composites against a model: random programs of composite spawns, owner releases, parts
//! destroyed, cut loose or joined by another sub-object, collections and frames, under each
//! policy. After every step: each live set resolves and is linked (every part it still has
//! names the owner as its outer), every released handle is stale, nothing alive or waiting
//! in the pool was dropped, nothing was dropped twice, and after a collection everything
//! released is dropped. A spawn hands out either a freshly built set or, under `Reuse`, a
//! whole set released intact earlier, never a mix. At the end, every object made was
//! dropped exactly once, and the pool's counts match the model's.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};

use proptest::prelude::*;
use respawn::{Composite, GcSettings, Handle, Heap, Object, Policy, PoolConfig, Poolable, RawHandle, Trace, World};

/// Objects made, by class, and how often each was dropped.
static MADE: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
static DROPS: LazyLock<Mutex<HashMap<(usize, u64), u32>>> = LazyLock::new(Default::default);

fn make(class: usize) -> u64 {
    MADE[class].fetch_add(1, Ordering::Relaxed)
}

fn drops(key: (usize, u64)) -> u32 {
    DROPS.lock().unwrap().get(&key).copied().unwrap_or(0)
}

#[derive(Trace, Object)]
struct Part<const C: usize> {
    #[trace(skip)]
    id: u64,
}

impl<const C: usize> Drop for Part<C> {
    fn drop(&mut self) {
        *DROPS.lock().unwrap().entry((C, self.id)).or_default() += 1;
    }
}

impl<const C: usize> Poolable for Part<C> {
    fn create() -> Self {
        Self { id: make(C) }
    }
}

#[derive(Trace, Object)]
struct Tower {
    #[trace(skip)]
    id: u64,
    a: Option<Handle<Part<1>>>,
    b: Option<Handle<Part<2>>>,
    c: Option<Handle<Part<3>>>,
}

impl Drop for Tower {
    fn drop(&mut self) {
        *DROPS.lock().unwrap().entry((0, self.id)).or_default() += 1;
    }
}

impl Poolable for Tower {
    fn create() -> Self {
        Self { id: make(0), a: None, b: None, c: None }
    }
}

impl Composite for Tower {
    type Parts = (Part<1>, Part<2>, Part<3>);
    fn assemble() -> (Self, Self::Parts) {
        (Tower::create(), (Part::create(), Part::create(), Part::create()))
    }
    fn attach(&mut self, (a, b, c): (Handle<Part<1>>, Handle<Part<2>>, Handle<Part<3>>)) {
        (self.a, self.b, self.c) = (Some(a), Some(b), Some(c));
    }
}

#[derive(Clone, Copy, Debug)]
enum Op {
    Spawn,
    DestroyOwner(usize),
    DestroyPart(usize, usize),
    Unlink(usize, usize),
    AddExtra(usize),
    DestroyLoose(usize),
    Collect,
    EndFrame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => Just(Op::Spawn),
        4 => any::<usize>().prop_map(Op::DestroyOwner),
        1 => (any::<usize>(), 0..3usize).prop_map(|(i, p)| Op::DestroyPart(i, p)),
        1 => (any::<usize>(), 0..3usize).prop_map(|(i, p)| Op::Unlink(i, p)),
        1 => any::<usize>().prop_map(Op::AddExtra),
        1 => any::<usize>().prop_map(Op::DestroyLoose),
        1 => Just(Op::Collect),
        2 => Just(Op::EndFrame),
    ]
}

/// A live set as the model knows it.
struct Set {
    owner: Handle<Tower>,
    parts: [RawHandle; 3],
    /// (class, id) of the owner and each part.
    ids: [(usize, u64); 4],
    /// Part `p` is still the owner's (not destroyed or cut loose).
    linked: [bool; 3],
    /// Sub-objects added beside the parts (of the radar's class): (handle, id).
    extras: Vec<(RawHandle, u64)>,
    /// Parts destroyed on their own and not yet purged: garbage, still linked.
    garbage: usize,
}

struct Model {
    policy: Policy,
    live: Vec<Set>,
    /// Parts cut loose, kept by the world until destroyed: (handle, class, id).
    loose: Vec<(RawHandle, usize, u64)>,
    /// Released, to be dropped by the next collection at the latest.
    gone: Vec<(usize, u64)>,
    /// Dropped for good (checked never again).
    dead: HashSet<(usize, u64)>,
    /// Sets released intact under `Reuse`: their ids, which a later spawn hands out whole.
    pooled: Vec<[(usize, u64); 4]>,
    /// Every object handed out so far, to tell a fresh set from a reused one.
    seen: HashSet<(usize, u64)>,
    stale: Vec<RawHandle>,
    released: u64,
    broken: u64,
}

fn part_raw(world: &World, raw: RawHandle) -> bool {
    world.heap().table().resolve(raw).is_ok()
}

impl Model {
    fn spawn(&mut self, world: &mut World) {
        // Kept by the world until destroyed: no root needed.
        let (owner, (a, b, c)) = world.spawn_composite::<Tower>();
        let ids = [
            (0, world.get(owner).unwrap().id),
            (1, world.get(a).unwrap().id),
            (2, world.get(b).unwrap().id),
            (3, world.get(c).unwrap().id),
        ];
        if let Some(at) = self.pooled.iter().position(|set| *set == ids) {
            self.pooled.swap_remove(at);
        } else {
            assert!(ids.iter().all(|id| !self.seen.contains(id)), "a mixed or repeated set: {ids:?}");
        }
        self.seen.extend(ids);
        self.live.push(Set {
            owner,
            parts: [a.raw(), b.raw(), c.raw()],
            ids,
            linked: [true; 3],
            extras: Vec::new(),
            garbage: 0,
        });
    }

    fn destroy_owner(&mut self, world: &mut World, i: usize) {
        if self.live.is_empty() {
            return;
        }
        let set = self.live.swap_remove(i % self.live.len());
        world.destroy(set.owner).unwrap();
        self.released += 1;
        // The pool reuses a set whose owner has, class for class, one visible sub-object
        // per part, whichever object it is: an extra radar stands in for a radar cut loose.
        let radars: Vec<_> =
            set.linked[2].then_some(set.ids[3].1).into_iter().chain(set.extras.iter().map(|&(_, id)| id)).collect();
        let intact = set.linked[0] && set.linked[1] && radars.len() == 1 && set.garbage == 0;
        self.stale.push(set.owner.raw());
        for (p, raw) in set.parts.iter().enumerate() {
            if set.linked[p] {
                self.stale.push(*raw);
            }
        }
        self.stale.extend(set.extras.iter().map(|(raw, _)| *raw));
        if self.policy == Policy::Reuse && intact {
            self.pooled.push([set.ids[0], set.ids[1], set.ids[2], (3, radars[0])]);
            return;
        }
        self.broken += u64::from(self.policy == Policy::Reuse);
        self.gone.push(set.ids[0]);
        for p in 0..3 {
            if set.linked[p] {
                self.gone.push(set.ids[p + 1]);
            }
        }
        self.gone.extend(set.extras.iter().map(|&(_, id)| (3, id)));
    }

    fn pick_part(&self, i: usize, p: usize) -> Option<usize> {
        let i = i.checked_rem(self.live.len())?;
        self.live[i].linked[p].then_some(i)
    }

    fn step(&mut self, world: &mut World, op: Op) {
        match op {
            Op::Spawn => self.spawn(world),
            Op::DestroyOwner(i) => self.destroy_owner(world, i),
            Op::DestroyPart(i, p) => {
                let Some(i) = self.pick_part(i, p) else { return };
                let set = &mut self.live[i];
                // A part's class has no pool: its destroy is the collector's mark.
                heap_of(world).mark_as_garbage(set.parts[p]).unwrap();
                set.linked[p] = false;
                set.garbage += 1;
                self.stale.push(set.parts[p]);
                self.gone.push(set.ids[p + 1]);
            }
            Op::Unlink(i, p) => {
                let Some(i) = self.pick_part(i, p) else { return };
                let set = &mut self.live[i];
                let raw = set.parts[p];
                heap_of(world).set_outer(raw, None).unwrap();
                set.linked[p] = false;
                self.loose.push((raw, p + 1, set.ids[p + 1].1));
            }
            Op::AddExtra(i) => {
                let Some(i) = i.checked_rem(self.live.len()) else { return };
                let set = &mut self.live[i];
                let extra = world.spawn_sub::<Part<3>, _>(set.owner).unwrap();
                let id = world.get(extra).unwrap().id;
                set.extras.push((extra.raw(), id));
            }
            Op::DestroyLoose(j) => {
                let Some(j) = j.checked_rem(self.loose.len()) else { return };
                let (raw, class, id) = self.loose.swap_remove(j);
                heap_of(world).mark_as_garbage(raw).unwrap();
                self.stale.push(raw);
                self.gone.push((class, id));
            }
            Op::Collect => {
                // Everything the world spawned stays until destroyed, extra sub-objects
                // that nothing references too; purged garbage parts are cut loose from
                // their owner.
                for set in &mut self.live {
                    set.garbage = 0;
                }
                world.collect_garbage();
                for key in self.gone.drain(..) {
                    assert_eq!(drops(key), 1, "released object {key:?} dropped by the collection");
                    self.dead.insert(key);
                }
            }
            Op::EndFrame => {
                world.end_frame();
            }
        }
    }

    fn check(&self, world: &World) {
        for set in &self.live {
            let owner = world.get(set.owner).expect("a live owner resolves");
            let attached = [owner.a.map(Handle::raw), owner.b.map(Handle::raw), owner.c.map(Handle::raw)];
            assert_eq!(attached, set.parts.map(Some), "attach");
            let subs: HashSet<_> = world.heap().sub_objects(set.owner.raw()).collect();
            for p in 0..3 {
                if set.linked[p] {
                    assert!(part_raw(world, set.parts[p]), "a linked part resolves");
                    assert_eq!(world.heap().table().resolve(set.parts[p]).unwrap().outer(), Some(set.owner.index()));
                    assert!(subs.contains(&set.parts[p]));
                }
            }
            for (extra, _) in &set.extras {
                assert!(subs.contains(extra));
            }
            assert_eq!(drops(set.ids[0]), 0, "a live owner was dropped");
            for p in 0..3 {
                if set.linked[p] {
                    assert_eq!(drops(set.ids[p + 1]), 0, "a live part was dropped");
                }
            }
        }
        for &(raw, class, id) in &self.loose {
            assert!(part_raw(world, raw), "a loose part lives on");
            assert_eq!(drops((class, id)), 0);
        }
        for set in &self.pooled {
            assert!(set.iter().all(|&key| drops(key) == 0), "a pooled set was dropped");
        }
        for raw in &self.stale {
            assert!(!part_raw(world, *raw), "a released handle resolves: {raw:?}");
        }
        for key in self.gone.iter().chain(&self.dead) {
            assert!(drops(*key) <= 1, "{key:?} dropped twice");
        }
    }
}

fn run(policy: Policy, workers: usize, ops: &[Op]) {
    let made_before: Vec<u64> = MADE.iter().map(|m| m.load(Ordering::Relaxed)).collect();
    let config = PoolConfig {
        capacity: 4,
        max: 256,
        low_watermark: u32::from(workers > 0) as usize * 2,
        grow_by: 4,
        policy,
        precreate: workers > 0,
        workers,
        idle_trim: None,
    };
    let gc = GcSettings { time_between_collections: None, ..GcSettings::DEFAULT };
    let mut world = World::builder().composite::<Tower>(config).gc(gc).build().unwrap();
    let mut model = Model {
        policy,
        live: Vec::new(),
        loose: Vec::new(),
        gone: Vec::new(),
        dead: HashSet::new(),
        pooled: Vec::new(),
        seen: HashSet::new(),
        stale: Vec::new(),
        released: 0,
        broken: 0,
    };
    for &op in ops {
        model.step(&mut world, op);
        model.check(&world);
    }
    // Garbage counts as in use until it is purged.
    model.step(&mut world, Op::Collect);
    model.check(&world);
    let stats = world.composite_stats::<Tower>().unwrap();
    assert_eq!(stats.pool.released, model.released);
    assert_eq!(stats.broken, model.broken);
    assert_eq!(stats.pool.in_use, model.live.len());
    drop(world);
    for (class, made) in MADE.iter().enumerate() {
        for id in made_before[class]..made.load(Ordering::Relaxed) {
            assert_eq!(drops((class, id)), 1, "object {id} of class {class} dropped once by the end");
        }
    }
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::config(256))]

    #[test]
    fn composites_match_the_model(
        policy in prop::sample::select(vec![Policy::Default, Policy::Purge, Policy::Reuse]),
        workers in 0..2usize,
        ops in prop::collection::vec(op(), 1..60),
    ) {
        run(policy, workers, &ops);
    }
}

/// The world's heap, for what a test does behind the world's back.
fn heap_of(world: &mut World) -> &mut Heap {
    // SAFETY: the callers call the heap's methods through it and never replace it.
    unsafe { world.pools_mut().heap_mut() }
}
