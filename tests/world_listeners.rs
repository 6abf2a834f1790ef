//! The World's lifecycle listeners: a spawn listener hears every way the world spawns,
//! after `init` and `on_spawn`; a destroy listener hears every way an object ends, once,
//! with the object intact — at `destroy` under every policy (before `on_release`, `reset`
//! or the drop), with its sub-objects, in the collector's purge, through the heap and the
//! arena directly — and a refused destroy tells nobody; removed listeners are not called.
//! The pools tell the listeners themselves, so `Pools` and its `PoolMut` used without
//! a World tell them as the World does, whichever path a spawn takes. A proptest checks
//! "once per object" over random programs of each policy, with and without async purge.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use respawn::{
    ArenaError, CollectOptions, GcSettings, Handle, Heap, Object, Policy, PoolConfig, PoolError, Poolable, Pools, Root,
    Trace, World,
};

#[derive(Trace, Object)]
struct Ship {
    id: u32,
    spawned: bool,
    released: bool,
}

impl Poolable for Ship {
    fn create() -> Self {
        Ship { id: 0, spawned: false, released: false }
    }
    fn on_spawn(&mut self) {
        self.spawned = true;
    }
    fn on_release(&mut self) {
        self.released = true;
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

#[derive(Trace, Object)]
struct Barrel {
    id: u32,
}

impl Poolable for Barrel {
    fn create() -> Self {
        Barrel { id: 0 }
    }
    fn reset(&mut self) {
        self.id = 0;
    }
}

/// An unpooled class whose collector hook leaves a mark.
#[derive(Trace)]
struct Husk {
    id: u32,
    begun: bool,
}

impl Object for Husk {
    fn begin_destroy(&mut self) {
        self.begun = true;
    }
}

fn pooled(policy: Policy) -> PoolConfig {
    PoolConfig { policy, ..PoolConfig::ON_DEMAND }
}

fn world(policy: Policy) -> World {
    World::builder().pool::<Ship>(pooled(policy)).pool::<Barrel>(pooled(policy)).build().unwrap()
}

/// What listeners heard, in order: a tag, the handle's bits, and what they read.
type Log = Arc<Mutex<Vec<(&'static str, u64, u32, bool)>>>;

fn taken(log: &Log) -> Vec<(&'static str, u64, u32, bool)> {
    std::mem::take(&mut *log.lock().unwrap())
}

/// Destroy listeners on `Ship` (reading `released`) and `Barrel`, into one log.
fn listen_destroy(world: &mut World) -> Log {
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    world.on_destroy(move |h, s: &Ship| l.lock().unwrap().push(("ship", h.to_bits(), s.id, s.released)));
    let l = Arc::clone(&log);
    world.on_destroy(move |h, b: &Barrel| l.lock().unwrap().push(("barrel", h.to_bits(), b.id, false)));
    log
}

#[test]
fn spawn_listeners_hear_every_way_the_world_spawns_once_the_object_is_complete() {
    let mut world = world(Policy::Reuse);
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    world.on_spawn(move |h, s: &Ship| l.lock().unwrap().push(("ship", h.to_bits(), s.id, s.spawned)));
    let l = Arc::clone(&log);
    world.on_spawn(move |h, b: &Barrel| l.lock().unwrap().push(("barrel", h.to_bits(), b.id, false)));

    let a = world.spawn::<Ship>();
    let b = world.spawn_with(|s: &mut Ship| s.id = 2);
    let c = world.try_spawn::<Ship>().unwrap();
    let batch: Vec<Handle<Ship>> = world.spawn_batch(2, |i, s: &mut Ship| s.id = 10 + i as u32).collect();
    let sub = world.spawn_sub_with(a, |barrel: &mut Barrel| barrel.id = 3).unwrap();
    let inserted = world.insert(Ship { id: 4, spawned: false, released: false });
    let permanent = world.spawn_permanent(Ship { id: 5, spawned: false, released: false }).unwrap();

    assert_eq!(
        taken(&log),
        [
            ("ship", a.to_bits(), 0, true), // after `on_spawn`
            ("ship", b.to_bits(), 2, true), // after `init`
            ("ship", c.to_bits(), 0, true),
            ("ship", batch[0].to_bits(), 10, true),
            ("ship", batch[1].to_bits(), 11, true),
            ("barrel", sub.to_bits(), 3, false),
            ("ship", inserted.to_bits(), 4, false), // inserted as is: no hook
            ("ship", permanent.to_bits(), 5, false),
        ]
    );
    assert_eq!(world.heap().sub_objects(a.raw()).collect::<Vec<_>>(), [sub.raw()]);

    // A refused spawn tells nobody.
    assert!(world.spawn_sub::<Barrel, _>(c).is_ok());
    world.destroy(c).unwrap();
    assert!(matches!(world.spawn_sub::<Barrel, _>(c), Err(PoolError::Stale | PoolError::Arena(_))));
    assert_eq!(taken(&log).len(), 1, "only the first sub-object");
}

#[test]
fn destroy_listeners_hear_each_policy_at_destroy_before_it_runs_and_never_again() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let log = listen_destroy(&mut world);
        let a = world.spawn_with(|s: &mut Ship| s.id = 1);
        let keep = world.spawn_with(|s: &mut Ship| s.id = 2);
        let _guard = world.root(keep).unwrap();

        world.destroy(a).unwrap();
        // Heard inside `destroy`, before `on_release` and (`Reuse`) `reset`.
        assert_eq!(taken(&log), [("ship", a.to_bits(), 1, false)], "{policy:?}");
        if policy == Policy::Default {
            assert_eq!(world.len::<Ship>(), 2, "garbage waits for its purge, told already");
        }
        world.collect_garbage();
        world.end_frame_with(Duration::from_millis(16));
        assert_eq!(taken(&log), [], "{policy:?}: told once");

        // The cell's next object is a new one: told in its turn.
        let b = world.spawn_with(|s: &mut Ship| s.id = 3);
        world.destroy(b).unwrap();
        assert_eq!(taken(&log), [("ship", b.to_bits(), 3, false)], "{policy:?}");
    }
}

#[test]
fn sub_objects_are_told_with_their_owner_before_it() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let log = listen_destroy(&mut world);
        let owner = world.spawn_with(|s: &mut Ship| s.id = 1);
        let b1 = world.spawn_sub_with(owner, |b: &mut Barrel| b.id = 10).unwrap();
        let b2 = world.spawn_sub_with(owner, |b: &mut Barrel| b.id = 11).unwrap();
        let nested = world.spawn_sub_with(b1, |s: &mut Ship| s.id = 100).unwrap();

        world.destroy(owner).unwrap();
        let heard = taken(&log);
        assert_eq!(heard.len(), 4, "{policy:?}: {heard:?}");
        assert_eq!(heard.last(), Some(&("ship", owner.to_bits(), 1, false)), "{policy:?}: the owner last");
        let at = |bits: u64| heard.iter().position(|e| e.1 == bits).unwrap();
        assert!(at(nested.to_bits()) < at(b1.to_bits()), "{policy:?}: a sub-object before its owner");
        assert!(heard.contains(&("barrel", b2.to_bits(), 11, false)));

        world.collect_garbage();
        assert_eq!(taken(&log), [], "{policy:?}: told once");
    }
}

#[test]
fn objects_the_collector_purges_are_told_in_the_purge_after_their_hooks() {
    let mut world = World::builder().collected::<Husk>().build().unwrap();
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    world.on_destroy(move |h, husk: &Husk| l.lock().unwrap().push(("husk", h.to_bits(), husk.id, husk.begun)));
    let husks: Vec<Handle<Husk>> = (0..3).map(|id| world.insert(Husk { id, begun: false })).collect();
    let guard: Root<Husk> = world.root(husks[1]).unwrap();

    world.collect_garbage_with(CollectOptions::INCREMENTAL);
    assert_eq!(taken(&log), [], "found, not purged yet");
    assert!(world.get(husks[0]).is_none(), "hidden already");
    world.purge(Duration::from_secs(1));
    let mut heard = taken(&log);
    heard.sort();
    assert_eq!(heard, [("husk", husks[0].to_bits(), 0, true), ("husk", husks[2].to_bits(), 2, true)]);

    drop(guard);
    world.collect_garbage();
    assert_eq!(taken(&log), [("husk", husks[1].to_bits(), 1, true)]);
}

#[test]
fn ends_through_the_heap_and_the_arena_are_told_at_the_release() {
    let mut world = world(Policy::Reuse);
    let log = listen_destroy(&mut world);
    let [a, b, c] = [1, 2, 3].map(|id| world.spawn_with(|s: &mut Ship| s.id = id));

    heap_of(&mut world).destroy_now(a.raw()).unwrap();
    assert_eq!(taken(&log), [("ship", a.to_bits(), 1, false)]);

    heap_of(&mut world).mark_as_garbage(b.raw()).unwrap();
    assert_eq!(taken(&log), [], "garbage marked behind the world's back: told at its purge");
    let guard = world.root(c).unwrap();
    world.collect_garbage();
    assert_eq!(taken(&log), [("ship", b.to_bits(), 2, false)]);
    drop(guard);

    // SAFETY: neither the heap nor its arena is replaced, one object removed.
    let ship = unsafe { heap_of(&mut world).arena_mut() }.remove(c).unwrap();
    assert_eq!((ship.id, taken(&log)), (3, vec![("ship", c.to_bits(), 3, false)]));
}

#[test]
fn under_async_purge_destroy_listeners_still_hear_on_the_game_thread_with_the_object_intact() {
    for policy in [Policy::Purge, Policy::Default] {
        let gc = GcSettings { async_purge: true, ..GcSettings::DEFAULT };
        let config = PoolConfig { policy, workers: 1, ..PoolConfig::ON_DEMAND };
        let mut world = World::builder().pool::<Ship>(config).collected::<Ship>().gc(gc).build().unwrap();
        let game = std::thread::current().id();
        let log: Arc<Mutex<Vec<(u32, bool)>>> = Arc::default();
        let l = Arc::clone(&log);
        world.on_destroy(move |_, s: &Ship| l.lock().unwrap().push((s.id, std::thread::current().id() == game)));
        let a = world.spawn_with(|s: &mut Ship| s.id = 1);
        let _b = world.spawn_with(|s: &mut Ship| s.id = 2);
        world.destroy(a).unwrap();
        world.collect_garbage(); // `_b`: nothing roots it
        let mut heard = std::mem::take(&mut *log.lock().unwrap());
        heard.sort();
        assert_eq!(heard, [(1, true), (2, true)], "{policy:?}");
    }
}

#[test]
fn a_refused_destroy_tells_nobody() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let log = listen_destroy(&mut world);
        let owner = world.spawn::<Ship>();
        let free = world.spawn_sub::<Barrel, _>(owner).unwrap();
        let held = world.spawn_sub::<Barrel, _>(owner).unwrap();
        let _guard = world.root(held).unwrap();
        assert!(matches!(world.destroy(owner), Err(PoolError::Arena(ArenaError::Rooted))));
        assert!(matches!(world.destroy(held), Err(PoolError::Arena(ArenaError::Rooted))));
        let permanent = world.spawn_permanent(Ship::create()).unwrap();
        assert!(world.destroy(permanent).is_err());
        let wrong: Handle<Ship> = Handle::from_raw(free.raw());
        assert!(world.destroy(wrong).is_err());
        assert_eq!(taken(&log), [], "{policy:?}");

        world.destroy(free).unwrap();
        assert!(matches!(world.destroy(free), Err(PoolError::AlreadyReleased | PoolError::Stale)));
        assert_eq!(taken(&log).len(), 1, "{policy:?}: the first destroy only");
    }
}

#[test]
fn removed_listeners_are_not_called() {
    let mut world = world(Policy::Default);
    let log: Log = Arc::default();
    let l = Arc::clone(&log);
    let spawned = world.on_spawn(move |h, _: &Ship| l.lock().unwrap().push(("spawn", h.to_bits(), 0, false)));
    let l = Arc::clone(&log);
    let ended = world.on_destroy(move |h, _: &Ship| l.lock().unwrap().push(("end", h.to_bits(), 0, false)));
    let a = world.spawn::<Ship>();
    let b = world.spawn::<Ship>();
    heap_of(&mut world).mark_as_garbage(b.raw()).unwrap();
    assert_eq!(taken(&log).len(), 2);

    assert!(world.remove_listener(spawned));
    assert!(world.remove_listener(ended));
    assert!(!world.remove_listener(spawned) && !world.remove_listener(ended), "removed already");
    let c = world.spawn::<Ship>();
    world.destroy(a).unwrap();
    world.destroy(c).unwrap();
    world.collect_garbage(); // `b`'s purge: its end had begun, and nobody listens now
    assert_eq!(taken(&log), []);
    let arena = world.heap().arena();
    assert_eq!((arena.spawn_listeners::<Ship>(), arena.end_listeners::<Ship>()), (0, 0), "the class's record is empty");
}

// ---- The pools tell, without a World ----

/// Pools with `Ship` pooled by `policy` and `Barrel` unpooled, each class's spawn and end
/// listeners logging the object's id and its hooks' flag (`spawned`, then `released`).
fn pools(policy: Policy) -> (Pools, Log) {
    let mut pools = Pools::new(Heap::new());
    pools.add::<Ship>(pooled(policy)).unwrap();
    let log: Log = Arc::default();
    // SAFETY: the heap is only given listeners, never replaced.
    let heap = unsafe { pools.heap_mut() };
    let l = Arc::clone(&log);
    heap.add_spawn_listener(move |h, s: &Ship| l.lock().unwrap().push(("spawn", h.to_bits(), s.id, s.spawned)))
        .unwrap();
    let l = Arc::clone(&log);
    heap.add_end_listener(move |h, s: &Ship| l.lock().unwrap().push(("end", h.to_bits(), s.id, s.released))).unwrap();
    let l = Arc::clone(&log);
    heap.add_spawn_listener(move |h, b: &Barrel| l.lock().unwrap().push(("spawn barrel", h.to_bits(), b.id, false)))
        .unwrap();
    let l = Arc::clone(&log);
    heap.add_end_listener(move |h, b: &Barrel| l.lock().unwrap().push(("end barrel", h.to_bits(), b.id, false)))
        .unwrap();
    (pools, log)
}

/// What the listeners heard, without the handles.
fn heard(log: &Log) -> Vec<(&'static str, u32, bool)> {
    taken(log).into_iter().map(|(tag, _, id, flag)| (tag, id, flag)).collect()
}

#[test]
fn the_pools_tell_every_spawn_path_once_the_object_is_complete() {
    let (mut pools, log) = pools(Policy::Reuse);
    // An inline build (nothing ready, nothing kept), then a kept object (`Reuse`).
    let a = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
    pools.destroy(a).unwrap();
    heard(&log);
    let b = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
    // Ready ones (prefilled), through the typed view.
    pools.prefill::<Ship>(2).unwrap();
    let mut view = pools.pool_mut::<Ship>().unwrap();
    let c = view.spawn_with(|s| s.id = 3);
    let d = view.try_spawn_with(|s| s.id = 4).unwrap();
    // A class without a pool, and an insert.
    let barrel = pools.spawn_with(|b: &mut Barrel| b.id = 5).unwrap();
    let e = pools.insert(Ship { id: 6, spawned: false, released: false }).unwrap();
    assert_eq!(
        heard(&log),
        [
            ("spawn", 2, true), // after `init` and `on_spawn`
            ("spawn", 3, true),
            ("spawn", 4, true),
            ("spawn barrel", 5, false),
            ("spawn", 6, false), // inserted as is: no hook
        ]
    );
    assert!([b, c, d, e].iter().all(|&h| pools.heap().get(h).is_some()) && pools.heap().get(barrel).is_some());
}

#[test]
fn the_pools_tell_each_policy_at_destroy_before_the_hooks_and_never_again() {
    for policy in Policy::ALL {
        let (mut pools, log) = pools(policy);
        let a = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
        let b = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
        let barrel = pools.spawn_with(|b: &mut Barrel| b.id = 3).unwrap();
        heard(&log);

        pools.destroy(a).unwrap();
        pools.pool_mut::<Ship>().unwrap().destroy(b).unwrap();
        pools.destroy(barrel).unwrap(); // no pool: garbage now, told now
        assert_eq!(
            heard(&log),
            [("end", 1, false), ("end", 2, false), ("end barrel", 3, false)],
            "{policy:?}: before `on_release` and `reset`"
        );
        // SAFETY: the heap is collected, never replaced.
        unsafe { pools.heap_mut() }.collect_garbage(CollectOptions::default());
        pools.maintain();
        assert_eq!(heard(&log), [], "{policy:?}: not again at the release or the purge");
        assert!(pools.destroy(a).is_err());
        assert_eq!(heard(&log), [], "{policy:?}: a refused destroy tells nobody");
    }
}

#[test]
fn the_pools_tell_an_owner_after_its_sub_objects() {
    for policy in Policy::ALL {
        let (mut pools, log) = pools(policy);
        let owner = pools.spawn_with(|s: &mut Ship| s.id = 1).unwrap();
        let sub = pools.spawn_with(|s: &mut Ship| s.id = 2).unwrap();
        let barrel = pools.spawn_with(|b: &mut Barrel| b.id = 3).unwrap();
        // SAFETY: the heap is given links, never replaced.
        let heap = unsafe { pools.heap_mut() };
        heap.set_outer(sub.raw(), Some(owner.raw())).unwrap();
        heap.set_outer(barrel.raw(), Some(sub.raw())).unwrap();
        heard(&log);

        pools.destroy(owner).unwrap();
        assert_eq!(
            heard(&log),
            [("end barrel", 3, false), ("end", 2, false), ("end", 1, false)],
            "{policy:?}: deepest first, each before its hooks"
        );
        // SAFETY: as above.
        unsafe { pools.heap_mut() }.collect_garbage(CollectOptions::default());
        assert_eq!(heard(&log), [], "{policy:?}: once");
    }
}

// ---- Once per object, over random programs ----

#[derive(Debug, Clone)]
enum Op {
    Spawn,
    SpawnSub(usize),
    Insert,
    Destroy(usize),
    Guard(usize),
    Unguard(usize),
    Collect,
    CollectIncremental,
    Purge,
    EndFrame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Spawn),
        2 => any::<usize>().prop_map(Op::SpawnSub),
        1 => Just(Op::Insert),
        4 => any::<usize>().prop_map(Op::Destroy),
        1 => any::<usize>().prop_map(Op::Guard),
        1 => any::<usize>().prop_map(Op::Unguard),
        1 => Just(Op::Collect),
        1 => Just(Op::CollectIncremental),
        1 => Just(Op::Purge),
        1 => Just(Op::EndFrame),
    ]
}

#[derive(Default)]
struct Heard {
    /// By handle bits: the id each object had when spawned.
    spawned: HashMap<u64, u32>,
    /// By handle bits: the ids each end listener call read.
    ended: HashMap<u64, Vec<u32>>,
}

fn run(policy: Policy, async_purge: bool, collected: bool, ops: Vec<Op>) -> Result<(), TestCaseError> {
    // Async purge hands ended objects to the pool's worker undropped: a worker it needs.
    let config = PoolConfig { workers: usize::from(async_purge), ..pooled(policy) };
    let gc = GcSettings { async_purge, ..GcSettings::DEFAULT };
    let mut builder = World::builder().pool::<Ship>(config).gc(gc);
    if collected {
        builder = builder.collected::<Ship>();
    }
    let mut world = builder.build().unwrap();
    let heard: Arc<Mutex<Heard>> = Arc::default();
    let h = Arc::clone(&heard);
    world.on_spawn(move |handle, s: &Ship| {
        let mut heard = h.lock().unwrap();
        assert!(heard.spawned.insert(handle.to_bits(), s.id).is_none(), "{handle:?} spawned twice");
    });
    let h = Arc::clone(&heard);
    world.on_destroy(move |handle, s: &Ship| h.lock().unwrap().ended.entry(handle.to_bits()).or_default().push(s.id));

    let mut next_id = 1u32;
    let mut all: Vec<Handle<Ship>> = Vec::new();
    let mut subs: HashMap<u64, Vec<Handle<Ship>>> = HashMap::new();
    let mut guards: Vec<Root<Ship>> = Vec::new();
    let pick = |all: &[Handle<Ship>], i: usize| (!all.is_empty()).then(|| all[i % all.len()]);

    for op in ops {
        match op {
            Op::Spawn => {
                let id = next_id;
                all.push(world.spawn_with(|s: &mut Ship| s.id = id));
                next_id += 1;
            }
            Op::SpawnSub(i) => {
                if let Some(outer) = pick(&all, i).filter(|&o| world.contains(o)) {
                    let id = next_id;
                    let sub = world.spawn_sub_with(outer, |s: &mut Ship| s.id = id).unwrap();
                    subs.entry(outer.to_bits()).or_default().push(sub);
                    all.push(sub);
                    next_id += 1;
                }
            }
            Op::Insert => {
                all.push(world.insert(Ship { id: next_id, spawned: false, released: false }));
                next_id += 1;
            }
            Op::Destroy(i) => {
                if let Some(target) = pick(&all, i) {
                    let before = heard.lock().unwrap().ended.len();
                    match world.destroy(target) {
                        Ok(()) => {
                            // It and every sub-object below it: told inside the destroy.
                            let mut stack = vec![target];
                            while let Some(h) = stack.pop() {
                                let told = heard.lock().unwrap().ended.get(&h.to_bits()).map(Vec::len);
                                prop_assert_eq!(told, Some(1), "{:?} below {:?}", h, target);
                                if let Some(children) = subs.get(&h.to_bits()) {
                                    stack.extend(children.iter().copied());
                                }
                            }
                        }
                        Err(_) => prop_assert_eq!(heard.lock().unwrap().ended.len(), before, "a refused destroy told"),
                    }
                }
            }
            Op::Guard(i) => {
                if let Some(target) = pick(&all, i) {
                    if let Ok(guard) = world.root(target) {
                        guards.push(guard);
                    }
                }
            }
            Op::Unguard(i) => {
                if !guards.is_empty() {
                    guards.swap_remove(i % guards.len());
                }
            }
            Op::Collect => _ = world.collect_garbage(),
            Op::CollectIncremental => _ = world.collect_garbage_with(CollectOptions::INCREMENTAL),
            Op::Purge => _ = world.purge(Duration::from_millis(1)),
            Op::EndFrame => _ = world.end_frame_with(Duration::from_millis(16)),
        }

        // After every step: each object told at most once, with the id it was spawned
        // with (never a reset one), and only once it no longer resolves.
        let heard = heard.lock().unwrap();
        for (bits, ids) in &heard.ended {
            prop_assert_eq!(ids.len(), 1, "{:x} told {} times", bits, ids.len());
            prop_assert_eq!(Some(&ids[0]), heard.spawned.get(bits), "{:x} seen changed", bits);
            prop_assert!(!world.contains(Handle::<Ship>::from_bits(*bits).unwrap()));
        }
    }

    // Everything ends: every object spawned was told of its end exactly once. Owned objects
    // end when destroyed (a sub-object may have gone with its owner already).
    guards.clear();
    if !collected {
        for &h in &all {
            let _ = world.destroy(h);
        }
    }
    world.collect_garbage();
    world.purge(Duration::from_secs(10));
    let heard = heard.lock().unwrap();
    prop_assert_eq!(heard.spawned.len(), all.len());
    let mut ended: Vec<u64> = heard.ended.keys().copied().collect();
    let mut spawned: Vec<u64> = heard.spawned.keys().copied().collect();
    ended.sort();
    spawned.sort();
    prop_assert_eq!(ended, spawned);
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::config(64))]

    #[test]
    fn every_object_is_told_of_its_end_exactly_once(
        policy in prop::sample::select(Policy::ALL.to_vec()),
        async_purge in any::<bool>(),
        collected in any::<bool>(),
        ops in prop::collection::vec(op(), 1..120),
    ) {
        run(policy, async_purge, collected, ops)?;
    }
}

/// The world's heap, for what a test does behind the world's back.
fn heap_of(world: &mut World) -> &mut Heap {
    // SAFETY: the callers call the heap's methods through it and never replace it.
    unsafe { world.pools_mut().heap_mut() }
}
