//! The World: each policy's full cycle with handle staleness checked at every step,
//! objects referenced from other objects (the GC path), bad input, stats, the frame rhythm.

use std::sync::Arc;
use std::time::Duration;

use respawn::arena::ObjectFlags;
use respawn::{
    ArenaConfig, ArenaError, GcSettings, Handle, Lifetime, Object, Policy, PoolConfig, PoolError, Poolable, Trace,
    World,
};
use respawn_testkit::drops::Drops;
use respawn_testkit::threads::{wait_for, Gate};
use respawn_testkit::world::{Counted, Projectile, Ship, Shot};

fn world_with(policy: Policy, workers: usize) -> (World, Drops) {
    world_of(policy, workers, Lifetime::Owned)
}

/// A world whose `Shot`s live only while referenced ([`Lifetime::Collected`]).
fn collected_world_with(policy: Policy, workers: usize) -> (World, Drops) {
    world_of(policy, workers, Lifetime::Collected)
}

fn world_of(policy: Policy, workers: usize, lifetime: Lifetime) -> (World, Drops) {
    let drops = Drops::default();
    let config = PoolConfig {
        capacity: 64,
        max: 1024,
        low_watermark: if workers > 0 { 16 } else { 0 },
        grow_by: 64,
        policy,
        precreate: workers > 0,
        workers,
        idle_trim: None,
    };
    let d = drops.clone();
    let mut builder = World::builder()
        .pool_with::<Shot>(config, move || Shot::new(&d))
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED });
    if lifetime == Lifetime::Collected {
        builder = builder.collected::<Shot>();
    }
    let world = builder.build().unwrap();
    assert_eq!(world.lifetime::<Shot>(), lifetime);
    (world, drops)
}

/// Waits until the workers have built everything queued.
fn settle(world: &mut World) {
    wait_for(|| {
        world.pools_mut().maintain();
        world.pool_stats::<Shot>().unwrap().building == 0
    });
}

#[test]
fn reuse_cycle_resets_and_hands_the_same_cell_back_with_a_new_handle() {
    let (mut world, drops) = world_with(Policy::Reuse, 1);
    settle(&mut world);
    // A worker publishing a magazine moves its count between two counters: wait for the
    // exact figures rather than read them mid-move.
    wait_for(|| {
        let s = world.pool_stats::<Shot>().unwrap();
        (s.available(), s.precreated) == (64, 64)
    });

    let a = world.spawn_with(|s: &mut Shot| s.damage = 7);
    assert_eq!(world.get(a).unwrap().damage, 7);
    assert_eq!(world.get(a).unwrap().spawned, 1, "on_spawn ran");
    let cell = std::ptr::from_ref(world.get(a).unwrap());

    world.destroy(a).unwrap();
    assert!(world.get(a).is_none(), "stale at once");
    assert!(matches!(world.destroy(a), Err(PoolError::AlreadyReleased)));
    assert_eq!(drops.count(), 0, "Reuse drops nothing");

    let b = world.spawn::<Shot>();
    assert_eq!(std::ptr::from_ref(world.get(b).unwrap()), cell, "the released object came back first (LIFO)");
    assert_ne!(a.raw(), b.raw(), "with a new handle");
    let s = world.get(b).unwrap();
    assert_eq!((s.damage, s.resets, s.releases), (0, 1, 1), "reset cleared it; hooks counted");
    assert!(world.get(a).is_none(), "the old handle still does not resolve");
    assert!(matches!(world.destroy(a), Err(PoolError::Stale)), "its slot is reused now: plainly stale");

    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.spawns, stats.hits, stats.misses), (2, 2, 0));
    assert_eq!((stats.released, stats.recycled_reuse, stats.in_use, stats.ready), (1, 1, 1, 63));
    drop(world);
    assert_eq!(drops.count(), 64, "every object dropped once at shutdown");
    drops.assert_each_once();
}

#[test]
fn purge_cycle_destroys_now_and_workers_rebuild_the_cell() {
    let (mut world, drops) = world_with(Policy::Purge, 1);
    settle(&mut world);
    let a = world.spawn::<Shot>();
    let id = world.get(a).unwrap().id;
    world.destroy(a).unwrap();
    assert!(world.get(a).is_none(), "stale at once");
    assert!(drops.dropped(id), "destroyed now");
    assert!(matches!(world.destroy(a), Err(PoolError::AlreadyReleased)));
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.recycled_purge, stats.in_use), (1, 0));
    // The cell is rebuilt asynchronously (end_frame wakes the worker).
    world.end_frame();
    wait_for(|| world.pool_stats::<Shot>().unwrap().precreated == 65);
    settle(&mut world);
    wait_for(|| world.pool_stats::<Shot>().unwrap().available() == 64);
    assert!(world.get(a).is_none());
    drop(world);
    assert_eq!(drops.count(), 65);
    drops.assert_each_once();
}

#[test]
fn default_cycle_goes_through_the_collector() {
    let (mut world, drops) = world_with(Policy::Default, 1);
    settle(&mut world);
    let a = world.spawn::<Shot>();
    let id = world.get(a).unwrap().id;
    world.destroy(a).unwrap();
    assert!(world.get(a).is_none(), "stale at once");
    assert!(matches!(world.destroy(a), Err(PoolError::AlreadyReleased)), "garbage, not yet purged");
    assert!(!drops.dropped(id), "waits for the collector");
    let gc = world.collect_garbage();
    assert_eq!(gc.purged, 1);
    assert!(drops.dropped(id));
    assert!(matches!(world.destroy(a), Err(PoolError::AlreadyReleased)), "purged: still known as released");
    wait_for(|| world.pool_stats::<Shot>().unwrap().precreated == 65);
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.recycled_gc, stats.recycled_purge, stats.released), (1, 0, 1));
    drop(world);
    drops.assert_each_once();
    assert_eq!(drops.count(), 65);
}

#[test]
fn pooled_objects_referenced_from_others_follow_the_collector() {
    for policy in Policy::ALL {
        let (mut world, drops) = collected_world_with(policy, 1);
        settle(&mut world);
        let ship = world.insert(Ship { shots: Vec::new() });
        let _root = world.root(ship).unwrap();
        let kept: Vec<Handle<Shot>> = (0..4).map(|_| world.spawn()).collect();
        let lost: Vec<Handle<Shot>> = (0..3).map(|_| world.spawn()).collect();
        world.get_mut(ship).unwrap().shots = kept.clone();

        let gc = world.collect_garbage();
        assert_eq!(gc.purged, 3, "{policy}: unreferenced pooled objects are collected");
        assert!(kept.iter().all(|&h| world.get(h).is_some()), "{policy}: referenced ones survive");
        assert!(lost.iter().all(|&h| world.get(h).is_none()), "{policy}");
        // Unreachable pooled objects come back like Default releases.
        assert_eq!(world.pool_stats::<Shot>().unwrap().recycled_gc, 3, "{policy}");

        // Releasing a referenced object: its handle in the ship goes stale, whatever the policy.
        world.destroy(kept[0]).unwrap();
        assert!(world.get(world.get(ship).unwrap().shots[0]).is_none(), "{policy}");
        world.collect_garbage();
        assert!(kept[1..].iter().all(|&h| world.get(h).is_some()), "{policy}");
        drop(_root);
        drop(world);
        drops.assert_each_once();
    }
}

#[test]
fn sub_objects_go_with_their_owner_in_every_policy() {
    for policy in Policy::ALL {
        let (mut world, drops) = world_with(policy, 0);
        let owner = world.spawn::<Shot>();
        let part = world.spawn_sub::<Shot, _>(owner).unwrap();
        let bolt = world.spawn_sub::<Shot, _>(part).unwrap();
        let (part_id, bolt_id) = (world.get(part).unwrap().id, world.get(bolt).unwrap().id);
        world.destroy(owner).unwrap();
        assert!(
            world.get(owner).is_none() && world.get(part).is_none() && world.get(bolt).is_none(),
            "{policy}: all stale at once"
        );
        world.collect_garbage();
        assert!(drops.dropped(part_id) && drops.dropped(bolt_id), "{policy}: the parts are destroyed, not kept");
        // One walk ended the whole tree, each object by its policy's way: `Reuse` keeps
        // the owner (reset, ready again) and destroys its parts now.
        let stats = world.pool_stats::<Shot>().unwrap();
        let ended = (stats.recycled_reuse, stats.recycled_purge, stats.recycled_gc);
        let expected = match policy {
            Policy::Default => (0, 0, 3),
            Policy::Purge => (0, 3, 0),
            Policy::Reuse => (1, 2, 0),
        };
        assert_eq!(ended, expected, "{policy}: {stats:?}");
        assert_eq!((stats.released, stats.in_use), (1, 0), "{policy}: {stats:?}");
        drop(world);
        drops.assert_each_once();
    }
}

#[test]
fn bad_handles_get_clear_errors_and_change_nothing() {
    let (mut world, drops) = world_with(Policy::Reuse, 0);
    let a = world.spawn::<Shot>();
    // Wrong class.
    let wrong: Handle<Ship> = Handle::from_raw(a.raw());
    assert!(matches!(world.destroy(wrong), Err(PoolError::Arena(ArenaError::WrongClass { .. }))));
    // Rooted.
    let root = world.root(a).unwrap();
    assert!(matches!(world.destroy(a), Err(PoolError::Arena(ArenaError::Rooted))));
    drop(root);
    // A rooted sub-object refuses the owner's release, and nothing is released.
    let part = world.spawn_sub::<Shot, _>(a).unwrap();
    world.add_to_root(part).unwrap();
    assert!(matches!(world.destroy(a), Err(PoolError::Arena(ArenaError::Rooted))));
    assert!(world.get(a).is_some() && world.get(part).is_some());
    assert_eq!(world.get(a).unwrap().releases, 0, "on_release did not run");
    world.remove_from_root(part).unwrap();
    world.destroy(a).unwrap();
    // Never issued.
    let never: Handle<Shot> =
        Handle::from_raw(respawn::RawHandle::new(a.index(), a.raw().generation().checked_add(5).unwrap()));
    assert!(matches!(world.destroy(never), Err(PoolError::Stale)));
    assert!(matches!(world.spawn_sub::<Shot, _>(never), Err(PoolError::Stale)));
    // Permanent.
    let p = world.spawn_permanent(Counted::new(&drops)).unwrap();
    assert!(matches!(world.destroy(p), Err(PoolError::Arena(ArenaError::Permanent))));
    world.collect_garbage();
    assert!(world.get(p).is_some(), "never collected");
    assert!(world.heap().flags(p.raw()).unwrap().contains(ObjectFlags::PERMANENT));
    assert!(world.get(a).is_none(), "unreachable, so collected");
    drop(world);
    drops.assert_each_once();
}

/// A `Purge` pool without workers has nothing to rebuild its ended objects' cells with:
/// its class makes them vacant at once, counted as returned, and its misses reuse them
/// without growing the class; `max` counts only the objects alive.
#[test]
fn a_purge_pool_without_workers_hands_ended_cells_straight_back() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig { capacity: 0, max: 100, policy: Policy::Purge, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
    let mut first_cells = 0;
    for round in 0..3u64 {
        let shots: Vec<Handle<Shot>> = (0..100).map(|_| world.try_spawn().unwrap()).collect();
        if round == 0 {
            assert!(matches!(world.try_spawn::<Shot>(), Err(PoolError::Exhausted { max: 100, .. })));
        }
        for h in shots {
            world.destroy(h).unwrap();
        }
        world.end_frame();
        let stats = world.pool_stats::<Shot>().unwrap();
        let ended = 100 * (round + 1);
        assert_eq!((stats.in_use, stats.ready, stats.waiting), (0, 0, 0), "{stats:?}");
        assert_eq!((stats.misses, stats.recycled_purge, stats.returned), (ended, ended, ended), "{stats:?}");
        assert_eq!(drops.count(), ended as usize);
        // The class holds no more cells than the first round took: each round's misses
        // took the cells the one before made vacant.
        let class = world.heap().stats::<Shot>().unwrap();
        let cells = class.len + class.vacant;
        if round == 0 {
            first_cells = cells;
        }
        assert_eq!((class.len, cells), (0, first_cells), "round {round}");
    }
    drop(world);
    drops.assert_each_once();
}

/// A `Default` pool gets its destroyed objects' cells back a frame later, without a
/// collection, once its garbage holds `early_purge_percent` of the heap's cells: the next
/// spawns reuse them instead of growing the class.
#[test]
fn a_default_pool_gets_its_garbage_back_before_the_next_collection() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig { capacity: 0, max: 1000, policy: Policy::Default, ..PoolConfig::ON_DEMAND };
    let gc = GcSettings {
        time_between_collections: None,
        purge_budget: None,
        early_purge_percent: Some(20),
        ..GcSettings::DEFAULT
    };
    let slab = respawn::SlabConfig { cells_per_slab: 64, ..respawn::SlabConfig::DEFAULT };
    let mut world = World::builder()
        .pool_with::<Shot>(config, move || Shot::new(&d))
        .arena(ArenaConfig { slab, ..ArenaConfig::DEFAULT })
        .gc(gc)
        .build()
        .unwrap();
    let mut shots: Vec<Handle<Shot>> = (0..256).map(|_| world.spawn()).collect();
    let cells = |w: &World| w.heap().stats::<Shot>().map(|c| c.len + c.vacant).unwrap();
    let before = cells(&world);
    for round in 1..=4 {
        // A fifth of the heap's cells (and then some) destroyed: garbage.
        let ended: Vec<_> = shots.drain(..64).collect();
        for h in ended {
            world.destroy(h).unwrap();
        }
        world.end_frame();
        assert_eq!(drops.count(), 64 * round, "round {round}: purged without a collection");
        assert_eq!(world.heap().gc_stats().cycles, 0);
        shots.extend((0..64).map(|_| world.spawn::<Shot>()));
        assert_eq!(cells(&world), before, "round {round}: the spawns took the purged cells");
    }
    assert_eq!(world.heap().gc_stats().gathered_early, 256);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn try_spawn_refuses_at_max_and_spawn_overflows_then_shrinks_back() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig { capacity: 0, max: 4, low_watermark: 0, grow_by: 0, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
    let held: Vec<Handle<Shot>> = (0..4).map(|_| world.try_spawn().unwrap()).collect();
    assert!(matches!(world.try_spawn::<Shot>(), Err(PoolError::Exhausted { max: 4, .. })));
    let extra = world.spawn::<Shot>();
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.spawns, stats.misses, stats.overflow, stats.in_use), (5, 5, 1, 5));
    // Released above max: dropped, the cell goes back to the arena, not to the pool.
    world.destroy(extra).unwrap();
    for h in held {
        world.destroy(h).unwrap();
    }
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.ready, stats.in_use, stats.returned), (4, 0, 1));
    assert_eq!(drops.count(), 1);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn a_miss_builds_inline_and_asks_the_workers_to_grow() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig {
        capacity: 0,
        max: 256,
        low_watermark: 8,
        grow_by: 32,
        policy: Policy::Purge,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
    let a = world.spawn::<Shot>();
    assert!(world.get(a).is_some());
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.misses, stats.hits), (1, 0));
    assert!(stats.grown >= 32, "{stats:?}");
    settle(&mut world);
    // Exactly one growth step: 32 ready, once no publish is mid-move (a worker publishing
    // moves its count from `held` to `ready`, and a read in between counts it twice).
    wait_for(|| {
        world.pools_mut().maintain();
        world.pool_stats::<Shot>().unwrap().available() == 32
    });
    // The worker publishes its partial magazine just after its last build (or when a miss
    // makes the game thread hungry): a spawn that comes first still misses. Once it is
    // published, spawns hit.
    wait_for(|| {
        let b = world.spawn::<Shot>();
        world.destroy(b).unwrap();
        world.pools_mut().maintain();
        world.pool_stats::<Shot>().unwrap().hits >= 1
    });
    drop(world);
    drops.assert_each_once();
}

#[test]
fn a_panicking_create_loses_nothing() {
    let drops = Drops::default();
    let d = drops.clone();
    let calls = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let c = calls.clone();
    let config = PoolConfig {
        capacity: 8,
        max: 64,
        low_watermark: 0,
        grow_by: 8,
        policy: Policy::Reuse,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder()
        .pool_with::<Shot>(config, move || {
            if c.fetch_add(1, std::sync::atomic::Ordering::Relaxed) % 2 == 0 {
                panic!("create failed");
            }
            Shot::new(&d)
        })
        .build()
        .unwrap();
    wait_for(|| {
        let s = world.pool_stats::<Shot>().unwrap();
        s.building == 0 && (s.create_panics, s.precreated, s.available()) == (4, 4, 4)
    });
    world.end_frame();
    assert_eq!(world.pool_stats::<Shot>().unwrap().returned, 4);
    drop(world);
    assert_eq!(drops.count(), 4);
    drops.assert_each_once();
}

#[test]
fn end_frame_purges_within_budget_collects_on_schedule_and_resets_the_frame_arena() {
    let drops = Drops::default();
    let d = drops.clone();
    let settings = GcSettings {
        time_between_collections: Some(Duration::from_millis(100)),
        purge_budget: Some(Duration::from_secs(1)),
        ..GcSettings::SINGLE_THREADED
    };
    let config = PoolConfig { policy: Policy::Default, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).gc(settings).build().unwrap();
    for _ in 0..10 {
        let h = world.spawn::<Shot>();
        world.destroy(h).unwrap();
    }
    let scratch = world.frame_arena().alloc_slice_fill_copy(100, 0u32);
    assert_eq!(scratch.len(), 100);
    let end = world.end_frame_with(Duration::from_millis(50));
    assert_eq!(end.gc, respawn::GcStep::Idle);
    assert!(end.frame_bytes >= 400);
    let end = world.end_frame_with(Duration::from_millis(50));
    assert!(matches!(end.gc, respawn::GcStep::Collected(s) if s.unreachable == 10), "{end:?}");
    assert_eq!(end.frame, 1);
    assert_eq!(end.frame_bytes, 0, "reset by the previous end_frame");
    // Purged in full within the (generous) budget, on the next frame.
    let end = world.end_frame_with(Duration::from_millis(10));
    assert!(matches!(end.gc, respawn::GcStep::Purged(p) if p.purged == 10 && p.remaining == 0), "{end:?}");
    assert_eq!(drops.count(), 10);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn spawn_sub_with_initialises_links_and_shows_in_the_layout() {
    for policy in Policy::ALL {
        let (mut world, drops) = collected_world_with(policy, 0);
        let owner = world.spawn::<Shot>();
        world.add_to_root(owner).unwrap();
        let part = world.spawn_sub_with(owner, |s: &mut Shot| s.damage = 7).unwrap();
        assert_eq!(world.get(part).unwrap().damage, 7, "{policy}: init ran");
        assert_eq!(world.get(part).unwrap().spawned, 1, "{policy}: on_spawn ran after init");
        assert!(world.heap().flags(owner.raw()).unwrap().contains(ObjectFlags::HAS_SUBOBJECTS), "{policy}");
        // The owner does not keep its part alive (UE's outer): an unreferenced part of a
        // collected class is collected.
        world.collect_garbage();
        assert!(world.get(owner).is_some() && world.get(part).is_none(), "{policy}");
        // A stale owner is refused and nothing is spawned.
        let spawns = world.pool_stats::<Shot>().unwrap().spawns;
        let stale: Handle<Shot> = part;
        assert!(matches!(world.spawn_sub_with(stale, |_: &mut Shot| ()), Err(PoolError::Stale)), "{policy}");
        assert_eq!(world.pool_stats::<Shot>().unwrap().spawns, spawns, "{policy}");

        // The layout: one live cell (the owner); the part's cell is pooled or free by policy.
        let layouts = world.layouts();
        let shots = layouts.iter().find(|l| l.name.ends_with("Shot")).unwrap();
        assert_eq!(shots.count(respawn::CellState::Live), 1, "{policy}");
        assert_eq!(shots.count(respawn::CellState::Garbage), 0, "{policy}: purged by the full collection");
        world.remove_from_root(owner).unwrap();
        drop(world);
        drops.assert_each_once();
    }
}

/// A slot retired at the generation ceiling takes its object out of the pool's `in_use` on
/// every path (the fuzzer found `Purge` and `Default` leaking it, so a pool at `max`
/// refused spawns while empty; reproducer `fuzz/artifacts/world/retired-slot-in-use-leak`).
/// A pool of at most `max` objects, none built ahead and no workers: each spawn builds its
/// object inline, each release ends by `policy` on this thread.
fn inline_pool(policy: Policy, max: usize) -> PoolConfig {
    PoolConfig { capacity: 0, max, low_watermark: 0, grow_by: 0, policy, precreate: false, workers: 0, idle_trim: None }
}

/// Collections only when a test asks, on this thread.
const ON_REQUEST: GcSettings = GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED };

/// With `max_generation: 1` every release retires its slot.
#[test]
fn a_retired_slot_leaves_the_pool_in_use_count() {
    for policy in Policy::ALL {
        let drops = Drops::default();
        let d = drops.clone();
        let mut world = World::builder()
            .arena(ArenaConfig { max_generation: 1, ..ArenaConfig::DEFAULT })
            .pool_with::<Shot>(inline_pool(policy, 1), move || Shot::new(&d))
            .gc(ON_REQUEST)
            .build()
            .unwrap();
        for round in 0..5 {
            let h = world.try_spawn::<Shot>().unwrap_or_else(|e| panic!("{policy:?}, round {round}: {e}"));
            world.destroy(h).unwrap();
            world.collect_garbage();
            assert!(world.get(h).is_none());
        }
        let stats = world.pool_stats::<Shot>().unwrap();
        assert_eq!((stats.in_use, stats.retired, stats.ready), (0, 5, 0), "{policy:?}: {stats:?}");
        assert_eq!(world.heap().arena().stats::<Shot>().unwrap().retired, 5, "{policy:?}");
        drop(world);
        drops.assert_each_once();
    }
}

/// Panics in its destructor while `armed`.
#[derive(Trace, Object)]
struct Fragile {
    armed: bool,
}

impl Drop for Fragile {
    fn drop(&mut self) {
        assert!(!self.armed, "a destructor panicked");
    }
}

impl Poolable for Fragile {
    fn create() -> Self {
        Self { armed: false }
    }
}

/// An object whose end panics (`arm` makes it panic: its destructor, its `begin_destroy`)
/// under `Purge` and `Default`: the panic reaches the caller, the handle is stale, the slot
/// retired, and the pool no longer counts the object in use.
fn a_panicking_end_leaves_the_pool_in_use_count<T: Poolable>(arm: impl Fn(&mut T)) {
    for policy in [Policy::Purge, Policy::Default] {
        let mut world = World::builder().pool::<T>(inline_pool(policy, 1)).gc(ON_REQUEST).build().unwrap();
        let h = world.try_spawn::<T>().unwrap();
        arm(world.get_mut(h).unwrap());
        let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            world.destroy(h).unwrap();
            world.collect_garbage();
        }));
        assert!(ended.is_err(), "{policy:?}: the panic reaches the caller");
        assert!(world.get(h).is_none(), "{policy:?}");
        let stats = world.pool_stats::<T>().unwrap();
        assert_eq!((stats.in_use, stats.retired), (0, 1), "{policy:?}: {stats:?}");
        assert_eq!(world.heap().stats::<T>().map(|s| s.retired), Some(1), "{policy:?}: the slot retired");
        // The pool is at its max (1) only if the object still counted: it does not.
        let next = world.try_spawn::<T>().unwrap_or_else(|e| panic!("{policy:?}: {e}"));
        world.destroy(next).unwrap();
        world.collect_garbage();
        assert_eq!(world.pool_stats::<T>().unwrap().in_use, 0, "{policy:?}");
    }
}

#[test]
fn a_panicking_destructor_leaves_the_pool_in_use_count() {
    a_panicking_end_leaves_the_pool_in_use_count(|f: &mut Fragile| f.armed = true);
}

/// A second class for the cause test: a plain `Default`-pooled object.
#[derive(Trace, Object)]
struct Crate {
    _weight: u32,
}

impl Poolable for Crate {
    fn create() -> Self {
        Self { _weight: 1 }
    }
}

#[test]
fn a_destructor_panicking_in_a_purge_does_not_change_how_later_frees_are_counted() {
    // The reason an object ended travels with its cell to its class's owner: after a
    // destructor panics in a `Purge` release, a collector purge still counts as
    // `recycled_gc`, in every pool.
    let config = |policy| PoolConfig {
        capacity: 0,
        max: 4,
        low_watermark: 0,
        grow_by: 0,
        policy,
        precreate: false,
        workers: 0,
        idle_trim: None,
    };
    let mut world = World::builder()
        .pool::<Fragile>(config(Policy::Purge))
        .pool::<Crate>(config(Policy::Default))
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED })
        .build()
        .unwrap();
    let bomb = world.try_spawn::<Fragile>().unwrap();
    world.get_mut(bomb).unwrap().armed = true;
    let ended = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.destroy(bomb)));
    assert!(ended.is_err(), "the destructor's panic reaches the caller");
    let box_ = world.try_spawn::<Crate>().unwrap();
    world.destroy(box_).unwrap();
    world.collect_garbage();
    let crates = world.pool_stats::<Crate>().unwrap();
    assert_eq!((crates.recycled_gc, crates.recycled_purge), (1, 0), "{crates:?}");
    let calm = world.try_spawn::<Fragile>().unwrap();
    world.destroy(calm).unwrap();
    let fragile = world.pool_stats::<Fragile>().unwrap();
    assert_eq!((fragile.recycled_purge, fragile.recycled_gc, fragile.retired), (1, 0, 1), "{fragile:?}");
}

/// A class whose constructor panics while `FAIL` is set.
#[derive(Trace, Object)]
struct Flaky {
    _id: u32,
}

static FAIL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

impl Poolable for Flaky {
    fn create() -> Self {
        assert!(!FAIL.load(std::sync::atomic::Ordering::Relaxed), "create failed");
        Flaky { _id: 0 }
    }
}

#[test]
fn a_spawn_whose_inline_create_panics_is_not_counted() {
    let config = PoolConfig {
        capacity: 0,
        max: 4,
        low_watermark: 0,
        grow_by: 0,
        policy: Policy::Purge,
        precreate: false,
        workers: 0,
        idle_trim: None,
    };
    let mut world = World::builder().pool::<Flaky>(config).build().unwrap();
    FAIL.store(true, std::sync::atomic::Ordering::Relaxed);
    let spawned = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.spawn::<Flaky>()));
    FAIL.store(false, std::sync::atomic::Ordering::Relaxed);
    assert!(spawned.is_err(), "the constructor's panic reaches the caller");
    let stats = world.pool_stats::<Flaky>().unwrap();
    assert_eq!((stats.spawns, stats.misses, stats.in_use), (0, 0, 0), "{stats:?}");
    let h = world.try_spawn::<Flaky>().unwrap();
    let stats = world.pool_stats::<Flaky>().unwrap();
    assert_eq!((stats.spawns, stats.misses, stats.in_use), (1, 1, 1), "{stats:?}");
    world.destroy(h).unwrap();
}

#[test]
fn a_release_burst_larger_than_the_build_queue_goes_back_to_the_arena() {
    // The queue of cells to build holds max(capacity, grow_by, 128 × (workers + 1)) = 256
    // here, not `max`: a burst of 2000 Purge releases queues 256 and hands the rest back.
    let drops = Drops::default();
    let d = drops.clone();
    let gate = Gate::new(true);
    let g = Arc::clone(&gate);
    let config = PoolConfig {
        capacity: 64,
        max: 1 << 16,
        low_watermark: 0,
        grow_by: 64,
        policy: Policy::Purge,
        ..PoolConfig::DEFAULT
    };
    let mut world = World::builder()
        .pool_with::<Shot>(config, move || {
            g.pass();
            Shot::new(&d)
        })
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED })
        .build()
        .unwrap();
    settle(&mut world);
    // The worker is held from here; the test thread's inline builds pass.
    gate.set(false);
    let _opener = gate.opener();

    let shots: Vec<_> = (0..2000).map(|_| world.spawn::<Shot>()).collect();
    for h in shots {
        world.destroy(h).unwrap();
    }
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!(stats.in_use, 0, "{stats:?}");
    assert_eq!(stats.build_queue, 256, "{stats:?}");
    assert_eq!(stats.lag_high_water, 256, "the burst filled the queue: {stats:?}");
    // The queue's 256, and the batch the held worker took out of it (returned cells go to
    // the workers a quarter magazine, 32, at a time).
    assert!(stats.building <= 256 + 32, "the queue holds 256: {stats:?}");
    assert!(stats.waiting < 32, "a Purge release hands its cells over a batch at a time: {stats:?}");
    assert!(stats.returned as usize + stats.waiting >= 2000 - 256, "the rest went back to the arena: {stats:?}");
    let accounted = stats.building + stats.waiting + stats.returned as usize;
    assert_eq!(accounted as u64, 2000 + stats.grown, "no cell lost: {stats:?}");

    gate.set(true);
    settle(&mut world);
    let s = world.spawn::<Shot>();
    assert!(world.get(s).is_some());
    drop(world);
    drops.assert_each_once();
}

/// A class with a drop counter whose destructor panics for the objects marked `bomb`.
#[derive(Trace, Object)]
struct Brittle {
    #[trace(skip)]
    bomb: bool,
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    drops: Option<Drops>,
}

impl Poolable for Brittle {
    fn create() -> Self {
        Self { bomb: false, id: usize::MAX, drops: None }
    }
}

impl Drop for Brittle {
    fn drop(&mut self) {
        if let Some(drops) = &self.drops {
            drops.note_drop(self.id);
        }
        assert!(!self.bomb, "a destructor panics while the world drops");
    }
}

#[test]
fn a_destructor_panicking_while_the_world_drops_still_drops_every_other_object() {
    // Live objects (dropped with the arena) and ready ones in a `Reuse` pool's magazines
    // (dropped by the pool's shutdown), with a panicking destructor among each: every
    // other object is dropped all the same, and the first panic reaches the caller.
    let drops = Drops::default();
    let config = PoolConfig {
        capacity: 0,
        max: 256,
        low_watermark: 0,
        grow_by: 0,
        precreate: false,
        workers: 0,
        ..PoolConfig::ON_DEMAND
    };
    assert_eq!(config.policy, Policy::Reuse);
    let mut world = World::builder().pool::<Brittle>(config).build().unwrap();
    let spawn = |world: &mut World, bomb: bool| {
        let (id, drops) = (drops.make(), drops.clone());
        world.spawn_with(move |b: &mut Brittle| (b.bomb, b.id, b.drops) = (bomb, id, Some(drops)))
    };
    let live: Vec<_> = (0..60).map(|i| spawn(&mut world, [10, 30, 50].contains(&i))).collect();
    // Twenty of them (bomb 30 among them) go back to the pool, ready (`reset` keeps them as
    // they are); bombs 10 and 50 stay alive.
    for &h in &live[20..40] {
        world.destroy(h).unwrap();
    }
    assert_eq!(world.pool_stats::<Brittle>().unwrap().ready, 20);
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(world)));
    assert!(dropped.is_err(), "the first destructor's panic reaches the caller");
    assert_eq!((drops.made(), drops.count()), (60, 60), "every object dropped, the panicking ones included");
    drops.assert_each_once();
}

/// Panics in its `begin_destroy` hook while `armed`.
#[derive(Trace)]
struct Stubborn {
    #[trace(skip)]
    armed: bool,
}

impl Object for Stubborn {
    fn begin_destroy(&mut self) {
        assert!(!self.armed, "begin_destroy panicked");
    }
}

impl Poolable for Stubborn {
    fn create() -> Self {
        Self { armed: false }
    }
}

#[test]
fn an_object_whose_begin_destroy_panics_is_retired_and_leaves_the_pool_in_use_count() {
    a_panicking_end_leaves_the_pool_in_use_count(|s: &mut Stubborn| s.armed = true);
}

#[test]
fn a_pooled_class_keeps_slabs_prepared_ahead_only_as_its_pool_needs_them() {
    let drops = Drops::default();
    let config = |grow_by| PoolConfig {
        capacity: 0,
        max: 1 << 16,
        low_watermark: 0,
        grow_by,
        precreate: false,
        workers: 0,
        ..PoolConfig::PROJECTILES
    };
    let arena = ArenaConfig::DEFAULT;
    assert_eq!(arena.slab.spare_slabs, 2, "the test assumes the arena keeps two slabs ahead");
    let cells = arena.slab.cells_per_slab as usize;
    let d = drops.clone();
    let mut world = World::builder()
        .pool_with::<Shot>(config(16), move || Shot::new(&d))
        .pool::<Projectile>(config(cells + 1))
        .pool::<Crate>(PoolConfig {
            capacity: 100,
            max: 400,
            low_watermark: 10,
            grow_by: 20,
            ..PoolConfig::PROJECTILES
        })
        .arena(arena)
        .build()
        .unwrap();
    world.insert(Ship { shots: Vec::new() });
    let spare = |stats: Option<respawn::ArenaClassStats>| stats.unwrap().memory.spare_slabs;
    let arena = world.heap().arena();
    // A step of 16 cells fits one slab: one is prepared ahead, not the arena's two, which
    // would sit empty behind the pool's own ready objects.
    assert_eq!(spare(arena.stats::<Shot>()), 1);
    // A step of a slab and a cell takes two.
    assert_eq!(spare(arena.stats::<Projectile>()), 2);
    // An unpooled class keeps the arena's setting.
    assert_eq!(spare(arena.stats::<Ship>()), 2);
    // A precreating pool is its own buffer: no spare slab, and slabs sized to its capacity.
    let crates = arena.stats::<Crate>().unwrap().memory;
    assert_eq!((crates.spare_slabs, crates.cells_per_slab), (0, 128));
    assert_eq!(arena.stats::<Ship>().unwrap().memory.cells_per_slab, arena.config().slab.cells_per_slab);
}

/// A precreating pool asks for its next growth step's memory when its stock comes within a
/// step of the low watermark, so the growth finds a slab prepared; until then its class
/// keeps none.
#[test]
fn a_precreating_pool_has_memory_prepared_for_its_growth_before_it_grows() {
    let drops = Drops::default();
    let d = drops.clone();
    // The pool of 128 fills one 128-cell slab; a growth step of 64 takes half of the next.
    let config =
        PoolConfig { capacity: 128, max: 1024, low_watermark: 8, grow_by: 64, workers: 1, ..PoolConfig::PROJECTILES };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
    let memory = |w: &World| w.heap().arena().stats::<Shot>().unwrap().memory;
    wait_for(|| world.pool_stats::<Shot>().unwrap().ready == 128);
    world.end_frame();
    assert_eq!((memory(&world).cells_per_slab, memory(&world).prepared_slabs), (128, 0), "full: nothing ahead");
    // Within a step of the watermark (64 + 8): the next frame asks for a slab.
    let mut shots: Vec<Handle<Shot>> = (0..60).map(|_| world.spawn()).collect();
    assert_eq!(memory(&world).prepared_slabs, 0);
    world.end_frame();
    wait_for(|| memory(&world).prepared_slabs == 1);
    let inline = memory(&world).inline_preparations;
    // Below the watermark: the growth takes the prepared slab, not one prepared inline.
    shots.extend((0..64).map(|_| world.spawn::<Shot>()));
    world.end_frame();
    settle(&mut world);
    assert_eq!(memory(&world).inline_preparations, inline, "the growth found its slab prepared");
    assert!(world.pool_stats::<Shot>().unwrap().grown >= 64);
    for h in shots {
        world.destroy(h).unwrap();
    }
    drop(world);
    drops.assert_each_once();
}

#[test]
fn end_frame_marks_over_frames_while_the_game_spawns_stores_and_destroys() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig { policy: Policy::Default, ..PoolConfig::ON_DEMAND };
    let settings = GcSettings {
        time_between_collections: Some(Duration::from_secs(1)),
        purge_budget: None,
        incremental_mark_budget: Some(Duration::from_micros(20)),
        ..GcSettings::SINGLE_THREADED
    };
    let mut world = World::builder()
        .pool_with::<Shot>(config, move || Shot::new(&d))
        .collected::<Shot>()
        .gc(settings)
        .build()
        .unwrap();
    let ship = world.insert(Ship { shots: Vec::new() });
    world.add_to_root(ship).unwrap();
    let mut loose = Vec::new();
    for i in 0..4000 {
        let shot = world.spawn::<Shot>();
        if i % 2 == 0 {
            world.get_mut(ship).unwrap().shots.push(shot);
        } else {
            loose.push(shot);
        }
    }
    let step = Duration::from_millis(16);
    assert!(matches!(world.end_frame_with(Duration::from_secs(1)).gc, respawn::GcStep::Marked(_)));
    let (mut frames, mut rescued) = (0, Vec::new());
    let stats = loop {
        // The game, between slices: a new shot stored in the ship, a loose one rescued while
        // it still resolves (the gather has not reached it), one of the ship's destroyed.
        let born = world.spawn::<Shot>();
        world.get_mut(ship).unwrap().shots.push(born);
        if let Some(shot) = loose.pop().filter(|&s| world.contains(s)) {
            world.get_mut(ship).unwrap().shots.push(shot);
            rescued.push(shot);
        }
        let gone = world.get_mut(ship).unwrap().shots.remove(0);
        world.destroy(gone).unwrap();
        frames += 1;
        match world.end_frame_with(step).gc {
            respawn::GcStep::Marked(p) => assert_eq!(p.slices, frames + 1),
            respawn::GcStep::Collected(stats) => break stats,
            other => panic!("{other:?}"),
        }
    };
    assert!(frames > 3 && stats.mark_slices == frames + 1, "{frames} frames: {stats}");
    assert!(!rescued.is_empty(), "some loose shots were rescued before the gather hid them");
    let kept = world.get(ship).unwrap().shots.clone();
    assert!(kept.iter().all(|&s| world.contains(s)), "every shot the ship holds survives");
    assert!(loose.iter().all(|&s| !world.contains(s)), "the loose ones are gone");
    // Shots destroyed after the gather passed their slots wait, as garbage, for the next.
    world.collect_garbage();
    assert_eq!(world.len::<Shot>(), kept.len(), "{stats}");
    drop(world);
    drops.assert_each_once();
}

#[test]
fn spawns_of_a_class_without_a_pool_are_counted() {
    let (mut world, _drops) = world_with(Policy::Reuse, 0);
    assert_eq!(world.stats().unpooled_spawns, 0);
    let owner = world.spawn::<Projectile>();
    world.spawn_with(|p: &mut Projectile| p.life = 1.0);
    world.try_spawn::<Projectile>().unwrap();
    world.spawn_sub::<Projectile, _>(owner).unwrap();
    assert_eq!(world.stats().unpooled_spawns, 4);
    // A pooled class's spawns are the pool's, not counted here.
    world.spawn_with(|s: &mut Shot| s.damage = 1);
    assert_eq!(world.stats().unpooled_spawns, 4);
    assert_eq!(world.pool_stats::<Shot>().unwrap().spawns, 1);
}

#[test]
fn a_world_that_requires_pools_refuses_to_spawn_a_class_without_one() {
    let drops = Drops::default();
    let d = drops.clone();
    let mut world = World::builder()
        .pool_with::<Shot>(PoolConfig::ON_DEMAND, move || Shot::new(&d))
        .require_pools(true)
        .build()
        .unwrap();
    let refused = world.try_spawn::<Projectile>();
    assert!(matches!(refused, Err(PoolError::NotPooled("Projectile"))), "{refused:?}");
    let message = refused.unwrap_err().to_string();
    assert!(message.contains("Projectile") && message.contains(".pool::<Projectile>("), "{message}");
    let refused = world.pools_mut().try_spawn_with(|p: &mut Projectile| p.life = 1.0);
    assert!(matches!(refused, Err(PoolError::NotPooled(_))), "{refused:?}");

    // Pooled classes spawn as before, and a refused sub-object leaves its owner alone.
    let shot = world.spawn::<Shot>();
    let sub = world.spawn_sub::<Projectile, _>(shot);
    assert!(matches!(sub, Err(PoolError::NotPooled(_))), "{sub:?}");
    assert!(world.heap().sub_objects(shot.raw()).next().is_none());
    assert_eq!(world.spawn_sub::<Shot, _>(shot).map(|s| world.contains(s)).ok(), Some(true));
    assert_eq!(world.len::<Projectile>(), 0, "nothing built");
    assert_eq!(world.stats().unpooled_spawns, 0);

    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.spawn::<Projectile>()));
    let payload = panicked.expect_err("spawn panics");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("World::spawn::<Projectile>") && message.contains(".pool::<Projectile>("), "{message}");
    drop(world);
    drops.assert_each_once();
}

/// Under `Reuse` a released object stays in its cell, kept by its class: `destroy` runs
/// its hooks and it counts as ready, not in use; the next spawn takes the most recently
/// released back (through `World` and through the typed view alike); `shutdown` drops the
/// kept ones, each once, and the stats say nothing is left.
#[test]
fn reuse_keeps_released_objects_in_their_class_until_spawned_or_shut_down() {
    let (mut world, drops) = world_with(Policy::Reuse, 0);
    let hs: Vec<Handle<Shot>> = (0..8).map(|_| world.spawn::<Shot>()).collect();
    let last = world.get(hs[7]).unwrap().id;
    for &h in &hs {
        world.destroy(h).unwrap();
        assert!(world.get(h).is_none(), "stale at once");
        assert!(matches!(world.destroy(h), Err(PoolError::AlreadyReleased)));
    }
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.in_use, stats.ready, stats.released, stats.recycled_reuse), (0, 8, 8, 8));
    assert_eq!(drops.count(), 0, "kept, not dropped");

    let again = world.spawn::<Shot>();
    let shot = world.get(again).unwrap();
    assert_eq!(shot.id, last, "the most recently released first");
    assert_eq!((shot.releases, shot.resets, shot.spawned), (1, 1, 2), "hooks ran once per release");
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.in_use, stats.ready, stats.spawns, stats.misses), (1, 7, 9, 8));

    let mut shots = world.pool_mut::<Shot>().unwrap();
    shots.destroy(again).unwrap();
    let next = shots.spawn();
    assert_eq!(shots.get(next).unwrap().id, last, "the typed view keeps and takes back the same way");
    assert_eq!(shots.stats().recycled_reuse, 9);

    world.pools_mut().shutdown();
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.in_use, stats.ready), (1, 0), "the kept seven dropped at shutdown");
    assert_eq!(drops.count(), 7);
    drop(world);
    drops.assert_each_once();
}

/// What the `Slow` objects' hooks and drops did, in order.
static SLOW_LOG: std::sync::Mutex<Vec<&str>> = std::sync::Mutex::new(Vec::new());
/// Whether `Slow` objects are ready for `finish_destroy`.
static SLOW_READY: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Not ready for `finish_destroy` until `SLOW_READY`; logs its hooks and, once spawned, its
/// drop.
#[derive(Trace)]
struct Slow {
    #[trace(skip)]
    spawned: bool,
}

impl Object for Slow {
    fn begin_destroy(&mut self) {
        SLOW_LOG.lock().unwrap().push("begin_destroy");
    }
    fn is_ready_for_finish_destroy(&mut self) -> bool {
        SLOW_READY.load(std::sync::atomic::Ordering::Relaxed)
    }
    fn finish_destroy(&mut self) {
        SLOW_LOG.lock().unwrap().push("finish_destroy");
    }
}

impl Drop for Slow {
    fn drop(&mut self) {
        if self.spawned {
            SLOW_LOG.lock().unwrap().push("drop");
        }
    }
}

impl Poolable for Slow {
    fn create() -> Self {
        Self { spawned: false }
    }
}

#[test]
fn a_purged_object_not_ready_to_finish_waits_hidden_and_ends_once_it_is() {
    let mut world = World::builder().pool::<Slow>(inline_pool(Policy::Purge, 8)).gc(ON_REQUEST).build().unwrap();
    let h = world.spawn_with(|s: &mut Slow| s.spawned = true);
    world.destroy(h).unwrap();
    // Its end began: hidden at once, the handle refused, and nothing dropped yet.
    assert!(world.get(h).is_none());
    assert!(matches!(world.destroy(h), Err(PoolError::Stale | PoolError::AlreadyReleased)));
    assert_eq!(*SLOW_LOG.lock().unwrap(), ["begin_destroy"]);
    assert_eq!(world.pool_stats::<Slow>().unwrap().in_use, 1, "its cell has not come back");
    world.collect_garbage();
    assert_eq!(*SLOW_LOG.lock().unwrap(), ["begin_destroy"], "still not ready: it waits");
    SLOW_READY.store(true, std::sync::atomic::Ordering::Relaxed);
    world.collect_garbage();
    assert_eq!(*SLOW_LOG.lock().unwrap(), ["begin_destroy", "finish_destroy", "drop"], "each hook once, then the drop");
    world.pools_mut().maintain();
    assert_eq!(world.pool_stats::<Slow>().unwrap().in_use, 0, "its cell came back");
    // Its cell came back to the pool: the next spawn takes it, and ends at once.
    let next = world.spawn_with(|s: &mut Slow| s.spawned = true);
    world.destroy(next).unwrap();
    assert_eq!(SLOW_LOG.lock().unwrap().len(), 6);
    assert_eq!(world.heap().stats::<Slow>().map(|s| (s.len, s.retired)), Some((0, 0)));
}
