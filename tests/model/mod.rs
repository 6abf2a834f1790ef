//! The World against a trivially correct model: a [`Program`] (a [`Setup`] and a list of
//! [`Op`]s) run on a real [`World`] and on a few maps, compared after every step.
//!
//! Shared by the proptest `tests/world_model.rs` and the cargo-fuzz target
//! `fuzz/fuzz_targets/world.rs`; both only build programs and call [`run`].
//!
//! Four classes: `Reused`, `Purged` and `Collected` have pools with the [`Policy`] they are
//! named after (small `max`, so overflow objects happen; `Reused` has no workers, the other
//! two 0 or 1 as the setup says), `Plain` has none (inserted, collected, `destroy` marks it as
//! garbage).
//!
//! The setup declares some classes [`Lifetime::Collected`]; the others are owned by the
//! world, so a collection keeps (and traces) every live object of theirs until it is
//! destroyed, as it keeps roots.
//!
//! The model keeps every object the world holds for us, in one of three states, and moves
//! it as the world should:
//! - live → gone: `destroy` under `Reuse` or `Purge`; unreachable at a full collection;
//! - live → garbage (hidden, held): `destroy` under `Default` or of a plain object;
//! - live or garbage → pending (hidden, held): unreachable at an incremental collection;
//! - garbage → gone: the next full collection; pending → gone: a purge step, a frame's
//!   purge, or the next collection.
//!
//! After every step:
//! - each live object resolves, by its class only, to its model value, and is rooted exactly
//!   when the model says; its drop has not run;
//! - no released handle resolves (nor does a garbage or pending object, which the world
//!   still holds); no handle value was ever issued twice, and a handle forged near a real
//!   one resolves only if it names a live model object;
//! - `iter` visits exactly the live objects of each class, `len` counts them and the
//!   garbage and pending ones, and each pool's `in_use` equals its class's `len`.
//!
//! After every collection the survivors are exactly those the model reaches from its roots
//! (rooted or guarded objects, and the live objects of owned classes) through links and
//! sub-object → owner edges, and the
//! collector's counts agree. After every purge step the objects it ended match its count.
//! At the end every object ever made was dropped exactly once.
//!
//! # Bugs this model found
//!
//! Both fixed; their reproducers stay in `fuzz/artifacts/world/` and their tests in
//! `tests/world.rs` (`a_retired_slot_leaves_the_pool_in_use_count`) and `tests/misuse.rs`
//! (`destroy_at_the_last_generation_is_an_error_not_an_overflow`).
//!
//! 1. `retired-slot-in-use-leak`: a pooled object whose slot retired at the generation
//!    ceiling and that ended through the collector or `destroy_now` was never returned by its
//!    class, so its pool never counted it out and refused spawns while empty.
//! 2. `destroy-generation-max-overflow`: `World::destroy` of a handle at generation
//!    `u32::MAX` overflowed computing the next generation (a debug-build panic).
#![allow(dead_code, reason = "each includer uses its part")]

use std::any::Any;
use std::collections::{BTreeMap, HashSet};
use std::num::NonZeroU32;
use std::time::Duration;

use respawn::{
    ArenaConfig, ArenaError, CollectOptions, GcSettings, GcStats, GcStep, Handle, Lifetime, Object, Policy, PoolConfig,
    PoolError, Poolable, RawHandle, SlabConfig, Trace, World,
};
use respawn_testkit::drops::Drops;
use respawn_testkit::graph;

/// Programs longer than this are cut (the fuzz target's inputs stay small and fast).
pub const MAX_OPS: usize = 256;

/// One of the model's four classes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// Pooled, [`Policy::Reuse`], no workers.
    Reused,
    /// Pooled, [`Policy::Purge`].
    Purged,
    /// Pooled, [`Policy::Default`].
    Collected,
    /// No pool.
    Plain,
}

impl Class {
    pub const ALL: [Class; 4] = [Class::Reused, Class::Purged, Class::Collected, Class::Plain];

    /// Whether `destroy` ends the object (and its sub-objects) at once instead of marking it
    /// as garbage for the next collection.
    fn ends_at_once(self) -> bool {
        matches!(self, Class::Reused | Class::Purged)
    }

    /// Another class, for lookups that must fail.
    fn other(self) -> Class {
        Class::ALL[(self as usize + 1) % Class::ALL.len()]
    }
}

/// What a [`Program`]'s world is built with.
#[derive(Clone, Copy, Debug)]
pub struct Setup {
    /// [`ArenaConfig::max_generation`]: low values retire slots often.
    pub max_generation: u32,
    /// Workers of the `Purged` and `Collected` pools (0 or 1; with 1 they precreate).
    pub workers: [u8; 2],
    /// [`GcSettings::time_between_collections`], driven by [`Op::EndFrame`]'s `dt`.
    pub collect_every_ms: Option<u16>,
    /// The classes declared [`Lifetime::Collected`] (by `Class as usize`); the others are
    /// owned by the world: kept until destroyed.
    pub collected: [bool; 4],
}

/// How [`Op::Spawn`] makes its object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum How {
    /// `World::spawn_with` (overflows past `max`).
    Spawn,
    /// `World::try_spawn` (refuses past `max`).
    TrySpawn,
    /// `World::insert`: a plain object, counted by its class's pool if it has one.
    Insert,
}

/// What [`Op::Forge`] does with its handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Forged {
    /// Resolves it under every class.
    Get,
    /// Stores it in the `n`-th live object's links.
    Link(usize),
    /// Destroys it.
    Destroy,
}

/// One step. Indices pick modulo the length of what they index (live objects in key order,
/// released handles, issued handles, guards in the order taken); a step with nothing to
/// pick does nothing.
#[derive(Clone, Debug)]
pub enum Op {
    /// Makes an object (`Plain` always by `Insert`).
    Spawn { class: Class, how: How, value: u32, rooted: bool },
    /// Makes a sub-object of a live object (`spawn_sub`; `Plain`: `insert` + `set_outer`).
    SpawnSub { class: Class, outer: usize },
    /// Destroys a live object (refused if it or a sub-object is rooted).
    Destroy(usize),
    /// Destroys a released handle again: `AlreadyReleased` or `Stale`, nothing changes.
    DestroyAgain(usize),
    /// Resolves a live object under its class and another, or a released handle under its
    /// class (and tries to root it).
    Get { released: bool, index: usize },
    /// A handle near an issued one (index and generation moved), used as [`Forged`] says.
    Forge { base: usize, index: i8, generation: i8, then: Forged },
    /// Stores the second live object's handle in the first's links.
    Link(usize, usize),
    /// Stores a released handle in a live object's links.
    LinkReleased(usize, usize),
    /// Makes the second live object the first's owner (`None`: cuts it loose).
    SetOuter { child: usize, outer: Option<usize> },
    /// `add_to_root`.
    Root(usize),
    /// `remove_from_root` (errs if not added).
    Unroot(usize),
    /// Takes an RAII [`respawn::Root`] guard.
    Guard(usize),
    /// Drops a guard.
    Unguard(usize),
    /// Adds one to the value of every live object of the class.
    Tick(Class),
    /// A full collection.
    Collect,
    /// A collection that leaves the purge to later steps.
    CollectIncremental,
    /// `World::purge` with a budget of this many microseconds (0: exactly one object).
    Purge(u8),
    /// `World::end_frame_with` this many milliseconds.
    EndFrame(u8),
}

/// A world's setup and what to do with it.
#[derive(Clone, Debug)]
pub struct Program {
    pub setup: Setup,
    pub ops: Vec<Op>,
}

/// Runs `program` on a world and on the model; panics at the first disagreement.
pub fn run(program: &Program) {
    let drops = Drops::default();
    let mut h = Harness::new(program.setup, &drops);
    for op in program.ops.iter().take(MAX_OPS) {
        h.step(op);
        h.check();
    }
    // The guards hold the object table, not the world: they may outlive it.
    let Harness { world, guards, .. } = h;
    drop(world);
    drop(guards);
    drops.assert_each_once();
}

/// What the model needs of each class.
trait Kind: Poolable {
    const CLASS: Class;
    fn new(drops: &Drops) -> Self;
    fn id(&self) -> usize;
    fn value(&self) -> u64;
    fn set_value(&mut self, v: u64);
    fn links_mut(&mut self) -> &mut Vec<RawHandle>;
}

macro_rules! kind {
    ($name:ident) => {
        #[derive(Trace, Object)]
        struct $name {
            #[trace(skip)]
            id: usize,
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
            const CLASS: Class = Class::$name;
            fn new(drops: &Drops) -> Self {
                Self { id: drops.make(), value: 0, links: Vec::new(), drops: drops.clone() }
            }
            fn id(&self) -> usize {
                self.id
            }
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
    };
}

kind!(Reused);
kind!(Purged);
kind!(Collected);
kind!(Plain);

/// Runs `$body` with `$t` naming the type of `$class`.
macro_rules! with_class {
    ($class:expr, |$t:ident| $body:expr) => {
        match $class {
            Class::Reused => {
                type $t = Reused;
                $body
            }
            Class::Purged => {
                type $t = Purged;
                $body
            }
            Class::Collected => {
                type $t = Collected;
                $body
            }
            Class::Plain => {
                type $t = Plain;
                $body
            }
        }
    };
}

/// Where a model object is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum State {
    /// Resolves.
    Live,
    /// Destroyed by `Default` / plain `destroy`: hidden, held until a collection.
    Garbage,
    /// Found unreachable by an incremental collection: hidden, held until purged.
    Pending,
}

#[derive(Clone, Debug)]
struct MObj {
    class: Class,
    /// The object's `Drops` id.
    id: usize,
    value: u64,
    /// In the root set by `add_to_root`.
    rooted: bool,
    /// RAII guards held.
    guards: usize,
    links: Vec<RawHandle>,
    outer: Option<RawHandle>,
    state: State,
}

impl MObj {
    fn is_root(&self) -> bool {
        self.rooted || self.guards > 0
    }
}

struct Harness {
    world: World,
    drops: Drops,
    /// Every object the world holds for us, by handle bits: live, garbage and pending.
    objects: BTreeMap<u64, MObj>,
    /// Live objects' handle bits, in order, for picking.
    live: Vec<u64>,
    /// Every handle issued, in order (for `Forge`); `issued` the same as a set.
    handles: Vec<RawHandle>,
    issued: HashSet<u64>,
    /// Handles that must never resolve again, with their class.
    released: Vec<(RawHandle, Class)>,
    guards: Vec<(RawHandle, Box<dyn Any>)>,
    /// [`Setup::collected`].
    collected: [bool; 4],
    collect_every: Option<Duration>,
    since_collection: Duration,
    frames: u64,
}

fn raw(bits: u64) -> RawHandle {
    RawHandle::from_bits(bits).expect("model keys are handle bits")
}

impl Harness {
    fn new(setup: Setup, drops: &Drops) -> Self {
        let (d0, d1, d2) = (drops.clone(), drops.clone(), drops.clone());
        let small = |policy, workers: u8| {
            let workers = usize::from(workers.min(1));
            PoolConfig {
                capacity: if workers > 0 { 4 } else { 0 },
                max: 12,
                low_watermark: 0,
                grow_by: 4,
                policy,
                precreate: workers > 0,
                workers,
                idle_trim: None,
            }
        };
        let collect_every = setup.collect_every_ms.map(|ms| Duration::from_millis(u64::from(ms.max(1))));
        let mut builder = World::builder()
            .pool_with::<Reused>(small(Policy::Reuse, 0), move || Reused::new(&d0))
            .pool_with::<Purged>(small(Policy::Purge, setup.workers[0]), move || Purged::new(&d1))
            .pool_with::<Collected>(small(Policy::Default, setup.workers[1]), move || Collected::new(&d2))
            .gc(GcSettings { time_between_collections: collect_every, ..GcSettings::SINGLE_THREADED })
            .arena(ArenaConfig {
                // Small slabs: several per class, and slot reuse soon.
                slab: SlabConfig { cells_per_slab: 8, spare_slabs: 1, max_slabs: 256, huge_pages: false },
                max_generation: setup.max_generation.max(1),
                ..ArenaConfig::DEFAULT
            });
        for class in Class::ALL.into_iter().filter(|&c| setup.collected[c as usize]) {
            builder = with_class!(class, |T| builder.collected::<T>());
        }
        let world = builder.build().expect("the setup is valid");
        for class in Class::ALL {
            let lifetime = with_class!(class, |T| world.lifetime::<T>());
            let expected = if setup.collected[class as usize] { Lifetime::Collected } else { Lifetime::Owned };
            assert_eq!(lifetime, expected, "{class:?}");
        }
        Self {
            world,
            drops: drops.clone(),
            objects: BTreeMap::new(),
            live: Vec::new(),
            handles: Vec::new(),
            issued: HashSet::new(),
            released: Vec::new(),
            guards: Vec::new(),
            collected: setup.collected,
            collect_every,
            since_collection: Duration::ZERO,
            frames: 0,
        }
    }

    /// The `i`-th live object (modulo), if any.
    fn pick(&self, i: usize) -> Option<RawHandle> {
        (!self.live.is_empty()).then(|| raw(self.live[i % self.live.len()]))
    }

    fn obj(&self, h: RawHandle) -> &MObj {
        &self.objects[&h.to_bits()]
    }

    fn obj_mut(&mut self, h: RawHandle) -> &mut MObj {
        self.objects.get_mut(&h.to_bits()).expect("a model object")
    }

    /// Records a new live object.
    fn activate<T: Kind>(&mut self, h: Handle<T>, value: u64, rooted: bool, outer: Option<RawHandle>) {
        let bits = h.raw().to_bits();
        assert!(self.issued.insert(bits), "handle {:?} issued twice", h.raw());
        let object = self.world.get_mut(h).expect("made just now");
        object.set_value(value);
        let id = object.id();
        assert!(!self.drops.dropped(id), "object {id} handed out after its drop");
        if rooted {
            self.world.add_to_root(h).unwrap();
        }
        self.handles.push(h.raw());
        let at = self.live.binary_search(&bits).expect_err("a new handle");
        self.live.insert(at, bits);
        let o = MObj { class: T::CLASS, id, value, rooted, guards: 0, links: Vec::new(), outer, state: State::Live };
        self.objects.insert(bits, o);
    }

    fn spawn<T: Kind>(&mut self, how: How, value: u64, rooted: bool) {
        let how = if T::CLASS == Class::Plain { How::Insert } else { how };
        let h = match how {
            How::Spawn => self.world.spawn::<T>(),
            How::TrySpawn => match self.world.try_spawn::<T>() {
                Ok(h) => h,
                Err(e) => {
                    assert!(matches!(e, PoolError::Exhausted { max: 12, .. }), "try_spawn: {e:?}");
                    return;
                }
            },
            How::Insert => self.world.insert(T::new(&self.drops)),
        };
        self.activate(h, value, rooted, None);
    }

    fn spawn_sub<T: Kind>(&mut self, outer: RawHandle) {
        let h = if T::CLASS == Class::Plain {
            let h = self.world.insert(T::new(&self.drops));
            self.world.set_outer(h, Some(outer)).unwrap();
            h
        } else {
            self.world.spawn_sub::<T, ()>(Handle::from_raw(outer)).unwrap()
        };
        self.activate(h, 7, false, Some(outer));
    }

    /// `h` and every object below it through owner links, live or not.
    fn subtree(&self, h: RawHandle) -> Vec<RawHandle> {
        graph::subtree(h, |p| self.objects.iter().filter(move |(_, o)| o.outer == Some(p)).map(|(&k, _)| raw(k)))
    }

    /// The object leaves the model: it must never resolve again.
    fn forget(&mut self, h: RawHandle) {
        let o = self.objects.remove(&h.to_bits()).expect("a model object");
        if o.state == State::Live {
            self.released.push((h, o.class));
        }
    }

    /// A live object stops resolving but stays held, as `state`.
    fn hide(&mut self, h: RawHandle, state: State) {
        let o = self.obj_mut(h);
        debug_assert_eq!(o.state, State::Live);
        o.state = state;
        let class = o.class;
        self.released.push((h, class));
    }

    fn rebuild_live(&mut self) {
        self.live = self.objects.iter().filter(|(_, o)| o.state == State::Live).map(|(&k, _)| k).collect();
    }

    fn destroy(&mut self, h: RawHandle) {
        let class = self.obj(h).class;
        let result = with_class!(class, |T| self.world.destroy(Handle::<T>::from_raw(h)));
        let tree = self.subtree(h);
        if tree.iter().any(|&m| self.obj(m).is_root()) {
            assert!(matches!(result, Err(PoolError::Arena(ArenaError::Rooted))), "destroy {h:?}: {result:?}");
            return;
        }
        result.unwrap_or_else(|e| panic!("destroy {h:?}: {e:?}"));
        for m in tree {
            match (self.obj(m).state, class.ends_at_once()) {
                (State::Live, true) => self.forget(m),
                (State::Live, false) => self.hide(m, State::Garbage),
                // A hidden sub-object ends now or waits for its collection or purge
                // (`Purge` ends it with its owner; `Reuse` leaves it): the world says which.
                (_, true) if self.world.heap().table().resolve_live(m).is_err() => self.forget(m),
                (_, _) => {}
            }
        }
        self.rebuild_live();
    }

    fn link(&mut self, from: RawHandle, to: RawHandle) {
        let class = self.obj(from).class;
        let links = with_class!(class, |T| self.world.get_mut(Handle::<T>::from_raw(from)).map(Kind::links_mut));
        links.expect("live").push(to);
        self.obj_mut(from).links.push(to);
    }

    fn set_outer(&mut self, child: RawHandle, outer: Option<RawHandle>) {
        let r = self.world.set_outer(Handle::<()>::from_raw(child), outer);
        if outer.is_some_and(|o| self.subtree(child).contains(&o)) {
            assert!(matches!(r, Err(PoolError::Arena(ArenaError::OuterCycle))), "set_outer: {r:?}");
            return;
        }
        r.unwrap_or_else(|e| panic!("set_outer({child:?}, {outer:?}): {e:?}"));
        self.obj_mut(child).outer = outer;
    }

    fn guard(&mut self, h: RawHandle) {
        let class = self.obj(h).class;
        let guard: Box<dyn Any> = with_class!(class, |T| Box::new(self.world.root(Handle::<T>::from_raw(h)).unwrap()));
        self.guards.push((h, guard));
        self.obj_mut(h).guards += 1;
    }

    fn unguard(&mut self, i: usize) {
        if self.guards.is_empty() {
            return;
        }
        let (h, guard) = self.guards.remove(i % self.guards.len());
        drop(guard);
        // A guarded object cannot be destroyed or collected: it is still live.
        self.obj_mut(h).guards -= 1;
    }

    /// Live objects reachable from the roots (rooted or guarded objects, and every live
    /// object of an owned class) through links and sub-object → owner edges.
    fn reachable(&self) -> HashSet<u64> {
        let is_live = |k: u64| self.objects.get(&k).is_some_and(|o| o.state == State::Live);
        let kept = |o: &MObj| o.is_root() || !self.collected[o.class as usize];
        let roots = self.objects.iter().filter(|(_, o)| o.state == State::Live && kept(o)).map(|(&k, _)| k);
        let edges = |k: u64| {
            let o = &self.objects[&k];
            o.links.iter().chain(o.outer.iter()).map(|h| h.to_bits())
        };
        graph::distances(roots, is_live, edges).into_keys().collect()
    }

    /// Applies a collection the world ran (`reach` computed just before it): what the
    /// previous collection left pending is gone, then everything unreachable (garbage
    /// included) is gone or, without a full purge, pending.
    fn collected(&mut self, reach: &HashSet<u64>, stats: &GcStats, full_purge: bool) {
        let pending: Vec<u64> =
            self.objects.iter().filter(|(_, o)| o.state == State::Pending).map(|(&k, _)| k).collect();
        for k in pending {
            self.forget(raw(k));
        }
        let unreachable: Vec<u64> = self.objects.keys().filter(|k| !reach.contains(k)).copied().collect();
        assert_eq!(stats.unreachable, unreachable.len(), "unreachable objects: {stats}");
        assert_eq!(stats.purged, if full_purge { unreachable.len() } else { 0 }, "purged objects: {stats}");
        for k in unreachable {
            match (full_purge, self.objects[&k].state) {
                (true, _) => self.forget(raw(k)),
                (false, State::Live) => self.hide(raw(k), State::Pending),
                (false, _) => self.obj_mut(raw(k)).state = State::Pending,
            }
        }
        self.rebuild_live();
        self.since_collection = Duration::ZERO;
        if full_purge {
            assert_eq!(self.world.heap().pending_purge(), 0, "a full purge left work");
        }
    }

    fn collect(&mut self, options: CollectOptions) {
        let reach = self.reachable();
        let stats = self.world.collect_garbage_with(options);
        self.collected(&reach, &stats, options.full_purge);
    }

    /// Pending objects the world still holds.
    fn pending_held(&self) -> Vec<u64> {
        let table = self.world.heap().table();
        self.objects
            .iter()
            .filter(|(&k, o)| o.state == State::Pending && table.resolve_live(raw(k)).is_ok())
            .map(|(&k, _)| k)
            .collect()
    }

    /// Pending objects a purge step ended leave the model; checks the step's counts.
    fn purged(&mut self, before: &[u64], purged: usize, remaining: usize) {
        let after = self.pending_held();
        assert_eq!(purged, before.len() - after.len(), "purge step count");
        for k in before.iter().filter(|k| !after.contains(k)) {
            self.forget(raw(*k));
        }
        assert_eq!(remaining, self.world.heap().pending_purge(), "purge step remaining");
        if remaining == 0 {
            assert!(after.is_empty(), "purge done, yet {after:?} are held");
        }
    }

    fn purge(&mut self, us: u8) {
        let before = self.pending_held();
        let budget = Duration::from_micros(u64::from(us));
        let progress = self.world.purge(budget);
        if budget.is_zero() {
            // One object's destruction is the only overrun a step allows.
            assert_eq!(progress.purged, before.len().min(1), "a zero-budget step: {progress:?}");
        }
        self.purged(&before, progress.purged, progress.remaining);
    }

    fn end_frame(&mut self, ms: u8) {
        let dt = Duration::from_millis(u64::from(ms));
        self.since_collection += dt;
        let due = self.collect_every.is_some_and(|every| self.since_collection >= every);
        let reach = self.reachable();
        let before = self.pending_held();
        let queued = self.world.heap().pending_purge();
        let end = self.world.end_frame_with(dt);
        assert_eq!((end.frame, end.dt), (self.frames, dt));
        self.frames += 1;
        match end.gc {
            GcStep::Collected(stats) => {
                assert!(due, "collected before its time");
                self.collected(&reach, &stats, true);
            }
            GcStep::Purged(p) => {
                assert!(!due && queued > 0, "purged instead of collecting, or with nothing queued");
                assert_eq!(p.remaining, 0, "no purge budget: the step purges everything");
                self.purged(&before, p.purged, p.remaining);
            }
            GcStep::Idle => assert!(!due && queued == 0, "idle with work due: {queued} queued"),
            GcStep::Marked(p) => panic!("the model marks whole, never in slices: {p:?}"),
        }
    }

    fn tick(&mut self, class: Class) {
        let mut visited = 0;
        with_class!(class, |T| self.world.tick::<T>(|t| {
            t.set_value(t.value() + 1);
            visited += 1;
        }));
        let mut expected = 0;
        for o in self.objects.values_mut().filter(|o| o.class == class && o.state == State::Live) {
            o.value += 1;
            expected += 1;
        }
        assert_eq!(visited, expected, "tick::<{class:?}> visits");
    }

    /// A live object resolves under its class only, and is not rooted by a wrong-class
    /// guard.
    fn get_live(&mut self, h: RawHandle) {
        let (class, value) = (self.obj(h).class, self.obj(h).value);
        assert_eq!(with_class!(class, |T| self.world.get(Handle::<T>::from_raw(h)).map(T::value)), Some(value));
        let other = class.other();
        assert!(with_class!(other, |T| self.world.get(Handle::<T>::from_raw(h)).is_none()), "{h:?} as {other:?}");
        assert!(with_class!(other, |T| self.world.root(Handle::<T>::from_raw(h)).is_err()), "root {h:?} as {other:?}");
    }

    /// A released handle resolves under no class, and can be neither rooted nor owned.
    fn get_released(&mut self, h: RawHandle, class: Class) {
        assert!(with_class!(class, |T| !self.world.contains(Handle::<T>::from_raw(h))), "released {h:?} resolves");
        assert!(with_class!(class, |T| self.world.root(Handle::<T>::from_raw(h)).is_err()), "rooted released {h:?}");
        assert!(self.world.add_to_root(Handle::<()>::from_raw(h)).is_err(), "added released {h:?} to the root set");
        if let Some(outer) = self.pick(0) {
            assert!(self.world.set_outer(Handle::<()>::from_raw(h), Some(outer)).is_err(), "owned released {h:?}");
        }
    }

    fn forge(&mut self, base: usize, index: i8, generation: i8, then: Forged) {
        if self.handles.is_empty() {
            return;
        }
        let base = self.handles[base % self.handles.len()];
        let index = base.index().wrapping_add_signed(i32::from(index));
        let generation = base.generation().get().wrapping_add_signed(i32::from(generation));
        let h = RawHandle::new(index, NonZeroU32::new(generation).unwrap_or(NonZeroU32::MIN));
        let live = self.objects.get(&h.to_bits()).is_some_and(|o| o.state == State::Live);
        assert_eq!(self.world.heap().table().resolve(h).is_ok(), live, "forged {h:?} (from {base:?})");
        match then {
            Forged::Get if live => self.get_live(h),
            Forged::Get => {
                for class in Class::ALL {
                    assert!(with_class!(class, |T| self.world.get(Handle::<T>::from_raw(h)).is_none()), "forged {h:?}");
                }
            }
            Forged::Link(from) => {
                if let Some(from) = self.pick(from) {
                    self.link(from, h);
                }
            }
            Forged::Destroy if live => self.destroy(h),
            Forged::Destroy => {
                let r = self.world.destroy(Handle::<Plain>::from_raw(h));
                assert!(matches!(r, Err(PoolError::AlreadyReleased | PoolError::Stale)), "destroy forged {h:?}: {r:?}");
            }
        }
    }

    fn step(&mut self, op: &Op) {
        match *op {
            Op::Spawn { class, how, value, rooted } => {
                with_class!(class, |T| self.spawn::<T>(how, u64::from(value), rooted));
            }
            Op::SpawnSub { class, outer } => {
                if let Some(outer) = self.pick(outer) {
                    with_class!(class, |T| self.spawn_sub::<T>(outer));
                }
            }
            Op::Destroy(i) => {
                if let Some(h) = self.pick(i) {
                    self.destroy(h);
                }
            }
            Op::DestroyAgain(i) => {
                if let Some(&(h, class)) = self.released.get(i % self.released.len().max(1)) {
                    let r = with_class!(class, |T| self.world.destroy(Handle::<T>::from_raw(h)));
                    assert!(
                        matches!(r, Err(PoolError::AlreadyReleased | PoolError::Stale)),
                        "destroy {h:?} again: {r:?}"
                    );
                }
            }
            Op::Get { released: false, index } => {
                if let Some(h) = self.pick(index) {
                    self.get_live(h);
                }
            }
            Op::Get { released: true, index } => {
                if let Some(&(h, class)) = self.released.get(index % self.released.len().max(1)) {
                    self.get_released(h, class);
                }
            }
            Op::Forge { base, index, generation, then } => self.forge(base, index, generation, then),
            Op::Link(a, b) => {
                if let (Some(a), Some(b)) = (self.pick(a), self.pick(b)) {
                    self.link(a, b);
                }
            }
            Op::LinkReleased(a, b) => {
                if let (Some(a), Some(&(b, _))) = (self.pick(a), self.released.get(b % self.released.len().max(1))) {
                    self.link(a, b);
                }
            }
            Op::SetOuter { child, outer } => {
                if let Some(child) = self.pick(child) {
                    let outer = outer.and_then(|o| self.pick(o));
                    self.set_outer(child, outer);
                }
            }
            Op::Root(i) => {
                if let Some(h) = self.pick(i) {
                    self.world.add_to_root(Handle::<()>::from_raw(h)).unwrap();
                    self.obj_mut(h).rooted = true;
                }
            }
            Op::Unroot(i) => {
                if let Some(h) = self.pick(i) {
                    let r = self.world.remove_from_root(Handle::<()>::from_raw(h));
                    assert_eq!(r.is_ok(), self.obj(h).rooted, "remove_from_root {h:?}: {r:?}");
                    self.obj_mut(h).rooted = false;
                }
            }
            Op::Guard(i) => {
                if let Some(h) = self.pick(i) {
                    self.guard(h);
                }
            }
            Op::Unguard(i) => self.unguard(i),
            Op::Tick(class) => self.tick(class),
            Op::Collect => self.collect(CollectOptions::FULL),
            Op::CollectIncremental => self.collect(CollectOptions::INCREMENTAL),
            Op::Purge(us) => self.purge(us),
            Op::EndFrame(ms) => self.end_frame(ms),
        }
    }

    fn check(&self) {
        let world = &self.world;
        let table = world.heap().table();
        for (&bits, o) in &self.objects {
            let h = raw(bits);
            if o.state == State::Live {
                let got = with_class!(o.class, |T| world.get(Handle::<T>::from_raw(h)).map(T::value));
                assert_eq!(got, Some(o.value), "live {h:?} of {:?}", o.class);
                assert_eq!(world.heap().is_rooted(h), o.is_root(), "rooted {h:?}");
                assert!(!self.drops.dropped(o.id), "live {h:?} (object {}) was dropped", o.id);
            } else {
                assert!(table.resolve_live(h).is_ok(), "{:?} {h:?} is no longer held", o.state);
            }
        }
        for &(h, _) in &self.released {
            assert!(table.resolve(h).is_err(), "released {h:?} resolves");
        }
        for class in Class::ALL {
            let live: Vec<u64> = self.live.iter().copied().filter(|k| self.objects[k].class == class).collect();
            let held = self.objects.values().filter(|o| o.class == class).count();
            let mut seen: Vec<u64> = with_class!(class, |T| world.iter::<T>().map(|(h, _)| h.to_bits()).collect());
            seen.sort_unstable();
            assert_eq!(seen, live, "iter::<{class:?}>");
            let len = with_class!(class, |T| world.len::<T>());
            assert_eq!(len, held, "len::<{class:?}> (live {}, held {held})", live.len());
            if let Some(stats) = with_class!(class, |T| world.pool_stats::<T>()) {
                assert_eq!(stats.in_use, len, "{class:?} pool in_use");
                let retired = with_class!(class, |T| world.heap().stats::<T>()).map_or(0, |s| s.retired);
                assert_eq!(stats.retired as usize, retired, "{class:?} pool retired");
            }
        }
        let pending = self.objects.values().filter(|o| o.state == State::Pending).count();
        assert!(world.heap().pending_purge() >= pending, "pending_purge below the {pending} pending");
    }
}
