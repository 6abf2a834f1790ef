//! Invariant 3's second half: 10 000 spawn/destroy cycles on a warm `Reuse` pool add no
//! heap block (dhat in testing mode). One test per binary: dhat allows one profiler per
//! process.

use respawn::{GcSettings, Policy, PoolConfig, World};

use respawn_testkit::world::Projectile;

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The default settings without the collection every 60 s of wall time: on a machine slow
/// enough for the test to outlast it, a first collection (and the parallel mark's thread
/// pool) would allocate inside the measurement.
const NO_TIMED_COLLECTION: GcSettings = GcSettings { time_between_collections: None, ..GcSettings::DEFAULT };

/// Keeps `live` objects alive and churns: destroy the oldest, spawn one.
fn churn(world: &mut World, live: &mut std::collections::VecDeque<respawn::Handle<Projectile>>, cycles: usize) {
    for i in 0..cycles {
        let h = live.pop_front().expect("live objects");
        world.destroy(h).unwrap();
        live.push_back(world.spawn_with(|p: &mut Projectile| p.life = i as f32));
        if i % 64 == 0 {
            world.end_frame();
        }
    }
}

#[test]
fn warm_reuse_cycles_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = PoolConfig { capacity: 0, max: 4096, policy: Policy::Reuse, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool::<Projectile>(config).gc(NO_TIMED_COLLECTION).build().unwrap();
    let mut live: std::collections::VecDeque<_> = (0..1000).map(|_| world.spawn::<Projectile>()).collect();
    live.reserve(16);
    churn(&mut world, &mut live, 10_000); // warm

    let before = dhat::HeapStats::get();
    churn(&mut world, &mut live, 10_000);
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
    let stats = world.pool_stats::<Projectile>().unwrap();
    dhat::assert_eq!(stats.misses, 1000, "only the first 1000 spawns built objects");
    dhat::assert_eq!(stats.recycled_reuse, 20_000);
}
