//! Composite precreation: a tower precreated with a turret, a health and a radar part on
//! the pool's worker, spawned as one linked set, and released whole by each policy.
//!
//! Each test uses its own `K` (a const parameter of every class), so its classes and
//! counters are its own while the tests run in parallel.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{LazyLock, Mutex};
use std::thread::{self, ThreadId};
use std::time::Duration;

use respawn::{
    Composite, GcSettings, Handle, Object, Policy, PoolConfig, PoolError, Poolable, RawHandle, Trace, World,
};

const TOWER: usize = 0;
const TURRET: usize = 1;
const HEALTH: usize = 2;
const RADAR: usize = 3;

/// What one test's objects did, by class (`TOWER`, `TURRET`, `HEALTH`, `RADAR`).
#[derive(Default)]
struct Log {
    made: [AtomicU64; 4],
    spawned: [AtomicU64; 4],
    released: [AtomicU64; 4],
    resets: [AtomicU64; 4],
    /// How often each object (class, id) was dropped.
    drops: Mutex<HashMap<(usize, u64), u32>>,
    /// The thread that dropped each tower (by id).
    tower_dropped_on: Mutex<HashMap<u64, ThreadId>>,
    /// `Health::new` panics while this is set.
    refuse_health: AtomicBool,
}

impl Log {
    fn make(&self, class: usize) -> u64 {
        self.made[class].fetch_add(1, Ordering::Relaxed)
    }
    fn count(counters: &[AtomicU64; 4], class: usize) -> u64 {
        counters[class].load(Ordering::Relaxed)
    }
    fn dropped(&self, class: usize, id: u64) -> u32 {
        self.drops.lock().unwrap().get(&(class, id)).copied().unwrap_or(0)
    }
    fn drop_count(&self) -> usize {
        self.drops.lock().unwrap().len()
    }
    /// Every object made was dropped exactly once, and nothing else was.
    fn assert_each_dropped_once(&self) {
        let drops = self.drops.lock().unwrap();
        let mut made = 0;
        for class in 0..4 {
            for id in 0..Self::count(&self.made, class) {
                assert_eq!(drops.get(&(class, id)).copied(), Some(1), "object {id} of class {class}");
                made += 1;
            }
        }
        assert_eq!(drops.len(), made, "drops of objects never made");
    }
}

static LOGS: LazyLock<[Log; 12]> = LazyLock::new(Default::default);

fn log<const K: usize>() -> &'static Log {
    &LOGS[K]
}

/// A part of class `C` (`TURRET`, `HEALTH` or `RADAR`) of test `K`.
#[derive(Trace, Object)]
struct Part<const K: usize, const C: usize> {
    #[trace(skip)]
    id: u64,
    #[trace(skip)]
    built_on: ThreadId,
    value: u32,
}

type Turret<const K: usize> = Part<K, TURRET>;
type Health<const K: usize> = Part<K, HEALTH>;
type Radar<const K: usize> = Part<K, RADAR>;

impl<const K: usize, const C: usize> Part<K, C> {
    fn new() -> Self {
        if C == HEALTH && log::<K>().refuse_health.load(Ordering::Relaxed) {
            panic!("health refused (test)");
        }
        Self { id: log::<K>().make(C), built_on: thread::current().id(), value: 7 }
    }
}

impl<const K: usize, const C: usize> Drop for Part<K, C> {
    fn drop(&mut self) {
        *log::<K>().drops.lock().unwrap().entry((C, self.id)).or_default() += 1;
    }
}

impl<const K: usize, const C: usize> Poolable for Part<K, C> {
    fn create() -> Self {
        Self::new()
    }
    fn on_spawn(&mut self) {
        log::<K>().spawned[C].fetch_add(1, Ordering::Relaxed);
    }
    fn on_release(&mut self) {
        log::<K>().released[C].fetch_add(1, Ordering::Relaxed);
    }
    fn reset(&mut self) {
        self.value = 7;
        log::<K>().resets[C].fetch_add(1, Ordering::Relaxed);
    }
}

/// The owner: holds its parts' handles (traced, so a reachable tower keeps its parts).
#[derive(Trace, Object)]
struct Tower<const K: usize> {
    #[trace(skip)]
    id: u64,
    #[trace(skip)]
    built_on: ThreadId,
    level: u32,
    turret: Option<Handle<Turret<K>>>,
    health: Option<Handle<Health<K>>>,
    radar: Option<Handle<Radar<K>>>,
}

impl<const K: usize> Tower<K> {
    fn new() -> Self {
        let id = log::<K>().make(TOWER);
        Self { id, built_on: thread::current().id(), level: 1, turret: None, health: None, radar: None }
    }
}

impl<const K: usize> Drop for Tower<K> {
    fn drop(&mut self) {
        *log::<K>().drops.lock().unwrap().entry((TOWER, self.id)).or_default() += 1;
        log::<K>().tower_dropped_on.lock().unwrap().insert(self.id, thread::current().id());
    }
}

impl<const K: usize> Poolable for Tower<K> {
    fn create() -> Self {
        Self::new()
    }
    fn on_spawn(&mut self) {
        log::<K>().spawned[TOWER].fetch_add(1, Ordering::Relaxed);
    }
    fn on_release(&mut self) {
        log::<K>().released[TOWER].fetch_add(1, Ordering::Relaxed);
    }
    fn reset(&mut self) {
        self.level = 1;
        log::<K>().resets[TOWER].fetch_add(1, Ordering::Relaxed);
    }
}

impl<const K: usize> Composite for Tower<K> {
    type Parts = (Turret<K>, Health<K>, Radar<K>);

    fn assemble() -> (Self, Self::Parts) {
        // Built in this order: a refused health drops the tower and turret made before it.
        let tower = Self::new();
        let turret = Part::new();
        (tower, (turret, Part::new(), Part::new()))
    }

    fn attach(&mut self, (turret, health, radar): (Handle<Turret<K>>, Handle<Health<K>>, Handle<Radar<K>>)) {
        (self.turret, self.health, self.radar) = (Some(turret), Some(health), Some(radar));
    }
}

type Set<const K: usize> = (Handle<Tower<K>>, (Handle<Turret<K>>, Handle<Health<K>>, Handle<Radar<K>>));

fn config(policy: Policy) -> PoolConfig {
    PoolConfig {
        capacity: 8,
        max: 64,
        low_watermark: 2,
        grow_by: 4,
        policy,
        precreate: true,
        workers: 1,
        idle_trim: None,
    }
}

fn world<const K: usize>(policy: Policy) -> World {
    let mut world = World::builder().composite::<Tower<K>>(config(policy)).build().unwrap();
    world.wait_until_warm(Duration::from_secs(30)).unwrap();
    world
}

fn raws<const K: usize>(set: &Set<K>) -> [RawHandle; 4] {
    let (tower, (turret, health, radar)) = *set;
    [tower.raw(), turret.raw(), health.raw(), radar.raw()]
}

/// Every object of the set resolves, each part's outer is the tower, the tower's
/// sub-objects are exactly the three parts, and the tower was given their handles.
fn assert_linked<const K: usize>(world: &World, set: &Set<K>) {
    let (tower, (turret, health, radar)) = *set;
    let t = world.get(tower).expect("tower resolves");
    assert_eq!((t.turret, t.health, t.radar), (Some(turret), Some(health), Some(radar)), "attach");
    assert!(world.get(turret).is_some() && world.get(health).is_some() && world.get(radar).is_some());
    let table = world.heap().table();
    for part in &raws(set)[1..] {
        assert_eq!(table.resolve(*part).unwrap().outer(), Some(tower.index()), "a part's outer is its tower");
    }
    let mut subs: Vec<_> = world.heap().sub_objects(tower.raw()).collect();
    let mut parts = raws(set)[1..].to_vec();
    subs.sort_by_key(|r| r.index());
    parts.sort_by_key(|r| r.index());
    assert_eq!(subs, parts, "the tower's sub-objects are its parts");
}

fn assert_stale<const K: usize>(world: &World, set: &Set<K>) {
    let (tower, (turret, health, radar)) = *set;
    assert!(world.get(tower).is_none() && world.get(turret).is_none());
    assert!(world.get(health).is_none() && world.get(radar).is_none());
}

/// The ids of a set's objects, by class, while they resolve.
fn ids<const K: usize>(world: &World, set: &Set<K>) -> [u64; 4] {
    let (tower, (turret, health, radar)) = *set;
    [
        world.get(tower).unwrap().id,
        world.get(turret).unwrap().id,
        world.get(health).unwrap().id,
        world.get(radar).unwrap().id,
    ]
}

fn assert_dropped<const K: usize>(ids: [u64; 4], times: u32) {
    for (class, id) in ids.into_iter().enumerate() {
        assert_eq!(log::<K>().dropped(class, id), times, "object {id} of class {class}");
    }
}

#[test]
fn a_spawn_hands_out_the_tower_with_its_parts_linked_and_built_on_a_worker() {
    let mut world = world::<0>(Policy::Reuse);
    let me = thread::current().id();
    let set = world.spawn_composite::<Tower<0>>();
    assert_linked(&world, &set);
    let (tower, (turret, health, radar)) = set;
    let built_on = [
        world.get(tower).unwrap().built_on,
        world.get(turret).unwrap().built_on,
        world.get(health).unwrap().built_on,
        world.get(radar).unwrap().built_on,
    ];
    assert!(built_on.iter().all(|&t| t != me), "owner and parts were built on the worker");
    assert!(built_on.iter().all(|&t| t == built_on[0]), "in one pass");
    for class in 0..4 {
        assert_eq!(Log::count(&log::<0>().spawned, class), 1, "on_spawn of class {class}");
    }
    // A plain spawn of the owner's class spawns a whole set too.
    let plain = world.spawn::<Tower<0>>();
    assert_eq!(world.heap().sub_objects(plain.raw()).count(), 3);
    let stats = world.composite_stats::<Tower<0>>().unwrap();
    assert_eq!((stats.parts, stats.pool.spawns, stats.pool.hits, stats.pool.misses), (3, 2, 2, 0));
    assert_eq!(stats.pool.in_use, 2);
    assert!(stats.pool.precreated >= 8);
    assert_eq!(world.pool_stats::<Tower<0>>().unwrap(), stats.pool, "pool_stats names the composite pool");
    drop(world);
    log::<0>().assert_each_dropped_once();
}

#[test]
fn default_lets_the_collector_take_the_tower_and_its_parts_together() {
    let mut world = world::<1>(Policy::Default);
    let kept = world.spawn_composite::<Tower<1>>();
    let gone = world.spawn_composite::<Tower<1>>();
    world.add_to_root(kept.0).unwrap();
    let (kept_ids, gone_ids) = (ids(&world, &kept), ids(&world, &gone));
    let drops = log::<1>().drop_count();

    world.destroy(gone.0).unwrap();
    assert_stale(&world, &gone);
    assert_eq!(log::<1>().drop_count(), drops, "garbage until the collector purges it");
    world.collect_garbage();
    assert_dropped::<1>(gone_ids, 1);
    assert_dropped::<1>(kept_ids, 0);
    assert_linked(&world, &kept); // the rooted tower keeps its parts through its fields
    for class in 0..4 {
        assert_eq!(Log::count(&log::<1>().released, class), 1, "on_release of class {class}");
    }

    // The tower's class returned its cell; the next upkeep pairs it with new
    // part cells for the worker.
    world.end_frame();
    world.wait_until_warm(Duration::from_secs(30)).unwrap();
    let stats = world.composite_stats::<Tower<1>>().unwrap();
    assert_eq!((stats.pool.released, stats.pool.recycled_gc, stats.reassembled, stats.broken), (1, 1, 1, 0));
    assert_eq!(stats.pool.in_use, 1);
    let again = world.spawn_composite::<Tower<1>>();
    assert_linked(&world, &again);
    drop(world);
    log::<1>().assert_each_dropped_once();
}

#[test]
fn purge_destroys_the_tower_and_its_parts_at_once() {
    let mut world = world::<2>(Policy::Purge);
    let kept = world.spawn_composite::<Tower<2>>();
    let gone = world.spawn_composite::<Tower<2>>();
    let (kept_ids, gone_ids) = (ids(&world, &kept), ids(&world, &gone));

    world.destroy(gone.0).unwrap();
    assert_stale(&world, &gone);
    assert_dropped::<2>(gone_ids, 1);
    assert_dropped::<2>(kept_ids, 0);
    assert_linked(&world, &kept);
    assert!(matches!(world.destroy(gone.0), Err(PoolError::AlreadyReleased)));

    world.end_frame();
    world.wait_until_warm(Duration::from_secs(30)).unwrap();
    let stats = world.composite_stats::<Tower<2>>().unwrap();
    assert_eq!((stats.pool.released, stats.pool.recycled_purge, stats.reassembled), (1, 1, 1));
    assert_eq!((stats.pool.in_use, stats.pool.misses), (1, 0));
    drop(world);
    log::<2>().assert_each_dropped_once();
}

#[test]
fn reuse_resets_the_set_and_spawns_it_again_whole() {
    let mut world = world::<3>(Policy::Reuse);
    let first = world.spawn_composite::<Tower<3>>();
    let first_ids = ids(&world, &first);
    world.get_mut(first.0).unwrap().level = 9;
    world.get_mut((first.1).1).unwrap().value = 40;
    let made: Vec<_> = (0..4).map(|c| Log::count(&log::<3>().made, c)).collect();

    world.destroy(first.0).unwrap();
    assert_stale(&world, &first);
    assert_dropped::<3>(first_ids, 0);
    for class in 0..4 {
        assert_eq!(Log::count(&log::<3>().resets, class), 1, "reset of class {class}");
    }

    // The last set deactivated is the next one popped: the same objects, reset, linked anew.
    let second = world.spawn_composite::<Tower<3>>();
    assert_linked(&world, &second);
    assert_eq!(ids(&world, &second), first_ids);
    assert_eq!(world.get(second.0).unwrap().level, 1);
    assert_eq!(world.get((second.1).1).unwrap().value, 7);
    assert!(raws(&first).iter().zip(raws(&second)).all(|(a, b)| a.index() == b.index() && a != &b));
    assert_stale(&world, &first);
    assert_eq!((0..4).map(|c| Log::count(&log::<3>().made, c)).collect::<Vec<_>>(), made, "nothing rebuilt");

    let stats = world.composite_stats::<Tower<3>>().unwrap();
    assert_eq!((stats.pool.released, stats.pool.recycled_reuse, stats.broken, stats.pool.misses), (1, 1, 0, 0));
    drop(world);
    log::<3>().assert_each_dropped_once();
}

#[test]
fn reuse_destroys_a_set_whose_parts_changed_instead_of_reusing_it() {
    let mut world = world::<4>(Policy::Reuse);

    // A part destroyed on its own (its class has no pool: it becomes garbage).
    let a = world.spawn_composite::<Tower<4>>();
    let a_ids = ids(&world, &a);
    world.destroy((a.1).1).unwrap();
    world.destroy(a.0).unwrap();
    assert_stale(&world, &a);
    assert_eq!([a_ids[TOWER], a_ids[TURRET], a_ids[RADAR]].map(|id| id), [a_ids[0], a_ids[1], a_ids[3]]);
    assert_eq!(log::<4>().dropped(TOWER, a_ids[TOWER]), 1, "destroyed at once, as Purge");
    assert_eq!(log::<4>().dropped(TURRET, a_ids[TURRET]), 1);
    assert_eq!(log::<4>().dropped(RADAR, a_ids[RADAR]), 1);
    world.collect_garbage();
    assert_eq!(log::<4>().dropped(HEALTH, a_ids[HEALTH]), 1, "the garbage part, by the collector");

    // A part relinked elsewhere: it stays alive, the rest ends.
    let b = world.spawn_composite::<Tower<4>>();
    let b_ids = ids(&world, &b);
    world.set_outer((b.1).0, None).unwrap();
    world.add_to_root((b.1).0).unwrap();
    world.destroy(b.0).unwrap();
    assert!(world.get((b.1).0).is_some(), "the relinked turret lives on");
    assert_eq!(log::<4>().dropped(TURRET, b_ids[TURRET]), 0);
    assert_eq!(log::<4>().dropped(HEALTH, b_ids[HEALTH]), 1);

    // A sub-object added beside the parts: ends with them.
    let c = world.spawn_composite::<Tower<4>>();
    let c_ids = ids(&world, &c);
    let extra = world.spawn_sub::<Radar<4>, _>(c.0).unwrap();
    let extra_id = world.get(extra).unwrap().id;
    world.destroy(c.0).unwrap();
    assert_dropped::<4>(c_ids, 1);
    assert_eq!(log::<4>().dropped(RADAR, extra_id), 1);

    // An intact one is still reused.
    let d = world.spawn_composite::<Tower<4>>();
    world.destroy(d.0).unwrap();
    let stats = world.composite_stats::<Tower<4>>().unwrap();
    assert_eq!((stats.broken, stats.pool.recycled_reuse, stats.pool.recycled_purge), (3, 1, 3));

    world.remove_from_root((b.1).0).unwrap();
    drop(world);
    log::<4>().assert_each_dropped_once();
}

#[test]
fn a_panicking_part_leaves_nothing_built_or_held() {
    let log = log::<5>();
    log.refuse_health.store(true, Ordering::Relaxed);
    // No growth at a low watermark: the eight failed sets are all the pool asks for.
    let config = PoolConfig { low_watermark: 0, ..config(Policy::Purge) };
    let mut world = World::builder().composite::<Tower<5>>(config).build().unwrap();
    // Every build on the worker panics at the health part.
    while world.composite_stats::<Tower<5>>().unwrap().pool.create_panics < 8 {
        world.end_frame();
        thread::sleep(Duration::from_millis(1));
    }
    world.end_frame(); // the failed sets' cells go back to their classes
    let stats = world.composite_stats::<Tower<5>>().unwrap();
    assert_eq!((stats.pool.create_panics, stats.pool.precreated, stats.pool.ready), (8, 0, 0));
    // The tower and turret each build made before the panic were dropped by the unwind.
    assert_eq!(Log::count(&log.made, HEALTH), 0);
    assert_eq!(log.drop_count() as u64, Log::count(&log.made, TOWER) + Log::count(&log.made, TURRET));
    assert_no_cell_held::<Tower<5>>(&world);
    assert_no_cell_held::<Turret<5>>(&world);
    assert_no_cell_held::<Health<5>>(&world);
    assert_no_cell_held::<Radar<5>>(&world);

    // Inline, on the game thread: the panic takes nothing either.
    let inline = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.prefill::<Tower<5>>(1)));
    assert!(inline.is_err());
    assert_no_cell_held::<Tower<5>>(&world);
    assert_no_cell_held::<Health<5>>(&world);

    log.refuse_health.store(false, Ordering::Relaxed);
    let set = world.spawn_composite::<Tower<5>>();
    assert_linked(&world, &set);
    drop(world);
    log.assert_each_dropped_once();
}

/// Under `async_purge` a tower (a class with a destructor) ends undropped: the worker
/// that rebuilds its set drops it, once, and so does the shutdown for a tower whose set
/// is still waiting to be rebuilt.
fn async_purge_hands_each_ended_tower_over_once<const K: usize>(policy: Policy) {
    let settings = GcSettings { async_purge: true, ..GcSettings::SINGLE_THREADED };
    let mut world = World::builder().composite::<Tower<K>>(config(policy)).gc(settings).build().unwrap();
    world.wait_until_warm(Duration::from_secs(30)).unwrap();
    let game = thread::current().id();
    let sets: Vec<Set<K>> = (0..6).map(|_| world.spawn_composite::<Tower<K>>()).collect();
    let towers: Vec<u64> = sets.iter().map(|set| ids(&world, set)[TOWER]).collect();
    for set in &sets {
        world.destroy(set.0).unwrap();
    }
    if policy == Policy::Default {
        world.collect_garbage();
    }
    for set in &sets {
        assert_stale(&world, set);
    }
    // The next upkeeps queue the towers' cells for the worker, which drops each tower
    // before it builds a new set in its cell.
    let start = std::time::Instant::now();
    while towers.iter().any(|&id| log::<K>().dropped(TOWER, id) == 0) {
        assert!(start.elapsed() < Duration::from_secs(30), "{policy:?}: towers never dropped");
        world.end_frame();
        thread::sleep(Duration::from_millis(1));
    }
    let dropped_on = log::<K>().tower_dropped_on.lock().unwrap().clone();
    assert!(towers.iter().all(|id| dropped_on[id] != game), "{policy:?}: a tower dropped on the game thread");
    assert_dropped_by_workers::<K>(&mut world, 6, policy);
    let again = world.spawn_composite::<Tower<K>>();
    assert_linked(&world, &again);

    // Ended just before the world goes: their towers still wait for the upkeep that pairs
    // them with part cells, and the shutdown drops them.
    let last: Vec<Set<K>> = (0..3).map(|_| world.spawn_composite::<Tower<K>>()).collect();
    for set in &last {
        world.destroy(set.0).unwrap();
    }
    if policy == Policy::Default {
        world.collect_garbage();
    }
    drop(world);
    log::<K>().assert_each_dropped_once();
}

/// Waits until the pool's worker counts `n` objects it dropped.
fn assert_dropped_by_workers<const K: usize>(world: &mut World, n: u64, policy: Policy) {
    let start = std::time::Instant::now();
    while world.composite_stats::<Tower<K>>().unwrap().pool.dropped_by_workers < n {
        assert!(start.elapsed() < Duration::from_secs(30), "{policy:?}: drops not counted");
        world.end_frame();
        thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(world.composite_stats::<Tower<K>>().unwrap().pool.dropped_by_workers, n, "{policy:?}");
}

#[test]
fn async_purge_hands_a_destroyed_tower_to_the_worker_under_purge() {
    async_purge_hands_each_ended_tower_over_once::<9>(Policy::Purge);
}

#[test]
fn async_purge_hands_a_collected_tower_to_the_worker_under_default() {
    async_purge_hands_each_ended_tower_over_once::<10>(Policy::Default);
}

/// Every cell of `T`'s granted slabs is vacant or holds a live object: none is held by a
/// pool, a worker or a lost token.
fn assert_no_cell_held<T: 'static>(world: &World) {
    let Some(stats) = world.heap().stats::<T>() else { return };
    let granted = stats.memory.granted_slabs as usize * stats.memory.cells_per_slab as usize;
    assert_eq!(stats.vacant + stats.len + stats.retired, granted, "{}: cells out", stats.name);
}

#[test]
fn spawn_listeners_hear_of_each_part_then_the_tower() {
    let mut world = world::<7>(Policy::Purge);
    let heard = std::sync::Arc::new(Mutex::new(Vec::new()));
    let h = std::sync::Arc::clone(&heard);
    world.on_spawn(move |_: Handle<Tower<7>>, _: &Tower<7>| h.lock().unwrap().push(TOWER));
    let h = std::sync::Arc::clone(&heard);
    world.on_spawn(move |_: Handle<Turret<7>>, _: &Turret<7>| h.lock().unwrap().push(TURRET));
    let h = std::sync::Arc::clone(&heard);
    world.on_spawn(move |_: Handle<Radar<7>>, t: &Radar<7>| h.lock().unwrap().push(RADAR + 10 * t.value as usize));
    world.spawn_composite::<Tower<7>>();
    world.spawn::<Tower<7>>();
    assert_eq!(*heard.lock().unwrap(), [TURRET, RADAR + 70, TOWER, TURRET, RADAR + 70, TOWER]);
}

#[test]
fn composite_pools_refuse_trims_until_they_are_built() {
    let mut world = world::<7>(Policy::Reuse);
    let ready = world.pool_stats::<Tower<7>>().unwrap().ready;
    assert!(matches!(world.clear_pool::<Tower<7>>(), Err(PoolError::Composite { .. })));
    assert!(matches!(world.shrink_pool::<Tower<7>>(1), Err(PoolError::Composite { .. })));
    assert_eq!(world.pool_stats::<Tower<7>>().unwrap().ready, ready, "nothing dropped");
    let idle = PoolConfig { idle_trim: Some(Duration::from_secs(1)), ..config(Policy::Reuse) };
    let refused = World::builder().composite::<Tower<8>>(idle).build();
    assert!(matches!(refused, Err(PoolError::Composite { .. })));
}

#[test]
fn bad_composites_are_refused_with_a_reason() {
    /// A composite that names its own class among its parts.
    #[derive(Trace, Object)]
    struct Ouroboros(u32);
    impl Poolable for Ouroboros {
        fn create() -> Self {
            Ouroboros(0)
        }
    }
    impl Composite for Ouroboros {
        type Parts = (Ouroboros,);
        fn assemble() -> (Self, Self::Parts) {
            (Ouroboros(0), (Ouroboros(1),))
        }
    }
    let own = World::builder().composite::<Ouroboros>(PoolConfig::DEFAULT).build();
    assert!(matches!(own, Err(PoolError::Composite { class: "Ouroboros", .. })), "{own:?}");

    // A part class with a pool of its own, either way round.
    let pooled_part =
        World::builder().pool::<Turret<6>>(PoolConfig::DEFAULT).composite::<Tower<6>>(PoolConfig::DEFAULT).build();
    assert!(matches!(pooled_part, Err(PoolError::Composite { .. })), "{pooled_part:?}");
    let part_pooled =
        World::builder().composite::<Tower<6>>(PoolConfig::DEFAULT).pool::<Turret<6>>(PoolConfig::DEFAULT).build();
    assert!(matches!(part_pooled, Err(PoolError::Composite { .. })), "{part_pooled:?}");
    let twice =
        World::builder().pool::<Tower<6>>(PoolConfig::DEFAULT).composite::<Tower<6>>(PoolConfig::DEFAULT).build();
    assert!(matches!(twice, Err(PoolError::AlreadyPooled(_))), "{twice:?}");

    // A spawn of a class without a composite pool.
    let mut world = World::new();
    let none = world.try_spawn_composite_with::<Tower<6>>(|_| {});
    assert!(matches!(none, Err(PoolError::NotPooled(_))), "{none:?}");
    let message = PoolError::Composite { class: "Tower", reason: "its own class is one of its parts" }.to_string();
    assert!(message.contains("Tower") && message.contains("its own class"), "{message}");
}
