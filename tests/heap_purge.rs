//! Invariant 3's second half for `Purge`: 10 000 spawn/destroy cycles on a warm pool add no
//! heap block on any thread — the game thread's spawns pop magazines, the releases return
//! cells to the worker through a fixed-size queue, the worker rebuilds into them (dhat in
//! testing mode; one test per binary).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use respawn::{GcSettings, Handle, Policy, PoolConfig, World};

use respawn_testkit::world::Projectile;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The default settings without the collection every 60 s of wall time: on a machine slow
/// enough for the test to outlast it, a first collection (and the parallel mark's thread
/// pool) would allocate inside the measurement.
const NO_TIMED_COLLECTION: GcSettings = GcSettings { time_between_collections: None, ..GcSettings::DEFAULT };

/// Frames of 32 spawn/destroy pairs; every 16 frames the game thread waits for the worker
/// to catch up, as a frame's remaining time would let it (a worker descheduled on a busy
/// machine must not turn a warm pool cold — that would be a test of the OS scheduler).
fn churn(world: &mut World, live: &mut VecDeque<Handle<Projectile>>, cycles: usize) {
    for i in 0..cycles {
        let h = live.pop_front().expect("live objects");
        world.destroy(h).unwrap();
        live.push_back(world.spawn::<Projectile>());
        if i % 32 == 0 {
            world.end_frame();
        }
        if i % 512 == 0 {
            settle(world);
        }
    }
}

/// Waits (bounded) until the worker has rebuilt everything queued.
fn settle(world: &mut World) {
    let start = Instant::now();
    while world.pool_stats::<Projectile>().unwrap().building > 0 {
        assert!(start.elapsed() < Duration::from_secs(20), "the worker never caught up");
        world.end_frame();
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn warm_purge_cycles_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = PoolConfig {
        capacity: 2048,
        max: 4096,
        low_watermark: 0,
        grow_by: 256,
        policy: Policy::Purge,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder().pool::<Projectile>(config).gc(NO_TIMED_COLLECTION).build().unwrap();
    settle(&mut world);
    let mut live: VecDeque<_> = (0..256).map(|_| world.spawn::<Projectile>()).collect();
    live.reserve(16);
    churn(&mut world, &mut live, 10_000); // warm: magazines in circulation
    settle(&mut world);

    let before = dhat::HeapStats::get();
    churn(&mut world, &mut live, 10_000);
    settle(&mut world);
    let after = dhat::HeapStats::get();
    let stats = world.pool_stats::<Projectile>().unwrap();
    dhat::assert_eq!(stats.misses, 0, "every spawn hit: {:?}", stats);
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
    dhat::assert_eq!(stats.recycled_purge, 20_000);
}
