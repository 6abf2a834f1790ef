//! Invariant 3 for composites: on a warm `Reuse` composite pool, 10 000 spawns of a tower
//! with three parts, and their releases, add no heap block — the spawn pops one token,
//! activates four cells and links three parts; the release checks the parts, resets and
//! deactivates all four (dhat in testing mode; one test per binary).

use std::collections::VecDeque;

use respawn::{Composite, GcSettings, Handle, Object, Policy, PoolConfig, Poolable, Trace, World};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// The default settings without the collection every 60 s of wall time: on a machine slow
/// enough for the test to outlast it, a first collection (and the parallel mark's thread
/// pool) would allocate inside the measurement.
const NO_TIMED_COLLECTION: GcSettings = GcSettings { time_between_collections: None, ..GcSettings::DEFAULT };

#[derive(Trace, Object)]
struct Turret {
    angle: f32,
}

#[derive(Trace, Object)]
struct Health {
    hp: u32,
}

#[derive(Trace, Object)]
struct Radar {
    range: f32,
}

#[derive(Trace, Object)]
struct Tower {
    turret: Option<Handle<Turret>>,
    health: Option<Handle<Health>>,
    radar: Option<Handle<Radar>>,
}

impl Poolable for Turret {
    fn create() -> Self {
        Turret { angle: 0.0 }
    }
}

impl Poolable for Health {
    fn create() -> Self {
        Health { hp: 100 }
    }
    fn reset(&mut self) {
        self.hp = 100;
    }
}

impl Poolable for Radar {
    fn create() -> Self {
        Radar { range: 50.0 }
    }
}

impl Poolable for Tower {
    fn create() -> Self {
        Tower { turret: None, health: None, radar: None }
    }
}

impl Composite for Tower {
    type Parts = (Turret, Health, Radar);
    fn assemble() -> (Self, Self::Parts) {
        (Tower::create(), (Turret::create(), Health::create(), Radar::create()))
    }
    fn attach(&mut self, (turret, health, radar): <Self::Parts as respawn::Parts>::Handles) {
        (self.turret, self.health, self.radar) = (Some(turret), Some(health), Some(radar));
    }
}

/// Keeps `live` towers and churns: destroy the oldest, spawn one.
fn churn(world: &mut World, live: &mut VecDeque<Handle<Tower>>, cycles: usize) {
    for i in 0..cycles {
        let h = live.pop_front().expect("live towers");
        world.destroy(h).unwrap();
        let (tower, (_, health, _)) = world.spawn_composite::<Tower>();
        world.get_mut(health).unwrap().hp = i as u32;
        live.push_back(tower);
        if i % 64 == 0 {
            world.end_frame();
        }
    }
}

#[test]
fn warm_composite_cycles_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let config = PoolConfig { capacity: 512, max: 4096, policy: Policy::Reuse, workers: 1, ..PoolConfig::DEFAULT };
    let mut world = World::builder().composite::<Tower>(config).gc(NO_TIMED_COLLECTION).build().unwrap();
    world.wait_until_warm(std::time::Duration::from_secs(30)).unwrap();
    let mut live: VecDeque<_> = (0..256).map(|_| world.spawn_composite::<Tower>().0).collect();
    live.reserve(16);
    churn(&mut world, &mut live, 10_000); // warm

    let before = dhat::HeapStats::get();
    churn(&mut world, &mut live, 10_000);
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks, before.total_blocks);
    let stats = world.composite_stats::<Tower>().unwrap();
    dhat::assert_eq!((stats.pool.misses, stats.broken), (0, 0), "{stats:?}");
    dhat::assert_eq!(stats.pool.recycled_reuse, 20_000);
    dhat::assert_eq!(world.len::<Health>(), 256);
}
