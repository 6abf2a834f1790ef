//! Shutdown with objects in every state — live, rooted, ready in magazines and in the depot,
//! garbage awaiting its purge, unreachable after an incremental collection, queued for a
//! worker and mid-precreation — drops each exactly once and leaves no worker running.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use respawn::{CollectOptions, GcSettings, Policy, PoolConfig, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::threads::wait_for;
use respawn_testkit::world::{Counted, Shot};

#[test]
fn every_object_in_every_state_is_dropped_once_and_workers_are_joined() {
    let drops = Drops::default();
    let gate = Arc::new(AtomicBool::new(false));
    let building = Arc::new(AtomicBool::new(false));
    // Purge pool whose constructor blocks on the gate once precreation is done: at shutdown
    // one worker is mid-`create` and more cells wait in its queue.
    let (d, g, b) = (drops.clone(), gate.clone(), building.clone());
    let slow = move || {
        if g.load(Ordering::Acquire) {
            b.store(true, Ordering::Release);
            std::thread::sleep(Duration::from_millis(30));
        }
        Shot::new(&d)
    };
    let purge = PoolConfig {
        capacity: 40,
        max: 256,
        low_watermark: 0,
        grow_by: 8,
        policy: Policy::Purge,
        precreate: true,
        workers: 2,
        idle_trim: None,
    };
    let settings = GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED };
    let mut world =
        World::builder().pool_with::<Shot>(purge, slow).collected::<Counted>().gc(settings).build().unwrap();
    // Built, not necessarily published: nothing below needs a spawn to hit. (Under Miri's
    // scheduler the workers can publish dozens of tiny magazines, fill the depot's queue and
    // keep the last few objects `held` until a spawn takes a magazine; see the note.)
    wait_for(|| world.pool_stats::<Shot>().unwrap().ready == 40);

    // Live, rooted, and a sub-object.
    let live: Vec<_> = (0..5).map(|_| world.spawn::<Shot>()).collect();
    let _root = world.root(live[0]).unwrap();
    world.spawn_sub::<Shot, _>(live[1]).unwrap();
    // Plain objects: one live (rooted), some unreachable after an incremental collection.
    let plain = world.insert(Counted::new(&drops));
    world.add_to_root(plain).unwrap();
    for _ in 0..3 {
        world.insert(Counted::new(&drops));
    }
    world.add_to_root(live[2]).unwrap();
    world.add_to_root(live[3]).unwrap();
    world.add_to_root(live[4]).unwrap();
    let stats = world.collect_garbage_with(CollectOptions::INCREMENTAL);
    assert!(stats.unreachable >= 3, "{stats:?}");
    assert!(world.stats().pending_purge >= 3, "unreachable objects wait for their purge");

    // Released cells queued for the (now slow) workers, one of them mid-create.
    gate.store(true, Ordering::Release);
    world.remove_from_root(live[4]).unwrap();
    world.destroy(live[4]).unwrap();
    world.remove_from_root(live[3]).unwrap();
    world.destroy(live[3]).unwrap();
    world.end_frame();
    wait_for(|| building.load(Ordering::Acquire));

    let stats = world.pool_stats::<Shot>().unwrap();
    assert!(stats.ready > 0 && stats.in_use > 0, "{stats:?}");
    drop(_root);
    drop(world);
    // Every worker is joined: nothing but this test holds the constructor's captures now.
    assert_eq!(Arc::strong_count(&gate), 1, "a worker (or the pool) still holds the constructor");
    drops.assert_each_once();
    assert!(drops.count() >= 40 + 1 + 4, "{} dropped", drops.count());
}

#[test]
fn a_default_pool_shuts_down_with_garbage_pending() {
    let drops = Drops::default();
    let d = drops.clone();
    let config = PoolConfig { capacity: 16, low_watermark: 0, policy: Policy::Default, ..PoolConfig::DEFAULT };
    let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
    wait_for(|| world.pool_stats::<Shot>().unwrap().available() == 16);
    let shots: Vec<_> = (0..10).map(|_| world.spawn::<Shot>()).collect();
    for &h in &shots[..6] {
        world.destroy(h).unwrap(); // garbage, never collected
    }
    drop(world);
    drops.assert_each_once();
    assert_eq!(drops.count(), 16);
}
