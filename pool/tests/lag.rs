//! The pools' lag and memory figures: `lag` rises while the workers are held and falls back
//! to 0 once they run (a World's pool and a standalone `Pool`); the build queue is sized by
//! what can be in flight (`build_queue`), takes a whole initial `capacity`, and a release
//! burst beyond its room goes back to the arena; `side_bytes` is non-zero and follows the
//! config; `wait_until_warm` reports `NotWarm` while the workers are held and returns once
//! every precreated object can be popped; `prefill` warms a pool without workers. No test
//! depends on a clock's speed: the workers are held by a gate, and released by it. The
//! tests of a World's pool (and those of both kinds) need the `world` feature.

use std::sync::Arc;
#[cfg(feature = "world")]
use std::thread;
use std::time::Duration;
#[cfg(feature = "world")]
use std::time::Instant;

#[cfg(feature = "world")]
use respawn_gc::{Heap, Object, Trace};
use respawn_pool::{Policy, Pool, PoolConfig, PoolError};
#[cfg(feature = "world")]
use respawn_pool::{PoolStats, Poolable, Pools};
use respawn_testkit::threads::{wait_for, Gate};

/// Waits (bounded) until `done` holds of the pool's stats; shows the last ones if not.
#[cfg(feature = "world")]
fn wait_for_stats(stats: impl Fn() -> PoolStats, done: impl Fn(&PoolStats) -> bool) {
    let start = Instant::now();
    loop {
        let s = stats();
        if done(&s) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "timed out waiting for the workers: {s:?}");
        thread::sleep(Duration::from_millis(1));
    }
}

#[cfg(feature = "world")]
#[derive(Trace, Object)]
struct Shot {
    damage: u32,
}

#[cfg(feature = "world")]
impl Poolable for Shot {
    fn create() -> Self {
        Shot { damage: 1 }
    }
}

#[cfg(feature = "world")]
fn stats(pools: &Pools) -> PoolStats {
    pools.stats_of::<Shot>().expect("Shot has a pool")
}

/// A World's pool of `Shot`s whose workers build through `gate`.
#[cfg(feature = "world")]
fn world_pool(config: PoolConfig, gate: &Arc<Gate>) -> Pools {
    let mut pools = Pools::new(Heap::new());
    let g = Arc::clone(gate);
    pools
        .add_with::<Shot>(config, move || {
            g.pass();
            Shot::create()
        })
        .unwrap();
    pools
}

/// Waits until the workers have built everything queued, doing the game thread's upkeep.
#[cfg(feature = "world")]
fn settle(pools: &mut Pools) {
    wait_for(|| {
        pools.maintain();
        stats(pools).building == 0
    });
}

const SMALL: PoolConfig = PoolConfig {
    capacity: 64,
    max: 1 << 16,
    low_watermark: 0,
    grow_by: 64,
    policy: Policy::Purge,
    precreate: true,
    workers: 1,
    idle_trim: None,
};

#[cfg(feature = "world")]
#[test]
fn a_world_pools_lag_rises_while_its_worker_is_held_and_falls_to_zero_once_it_runs() {
    let gate = Gate::new(true);
    let mut pools = world_pool(SMALL, &gate);
    settle(&mut pools);
    let s = stats(&pools);
    assert_eq!((s.lag, s.building, s.precreated), (0, 0, 64), "warm and caught up: {s:?}");

    gate.set(false);
    let _opener = gate.opener();
    // Fewer releases than the queue's room: every cell is queued, none goes back.
    let handles: Vec<_> = (0..100).map(|_| pools.spawn_with::<Shot>(|_| {}).unwrap()).collect();
    for h in handles {
        pools.destroy(h).unwrap();
    }
    pools.maintain();
    let held = stats(&pools);
    assert!(held.lag > 0, "released cells wait for the held worker: {held:?}");
    // The worker may have taken one cell out and be held building it.
    assert!(held.lag >= 100 - 1 && held.lag <= held.building, "{held:?}");
    assert!(held.lag_high_water >= held.lag, "{held:?}");
    assert!(held.lag_high_water < held.build_queue, "the queue never filled: {held:?}");
    assert_eq!(held.returned, 0, "{held:?}");

    gate.set(true);
    settle(&mut pools);
    let after = stats(&pools);
    assert_eq!((after.lag, after.building), (0, 0), "the worker caught up: {after:?}");
    assert_eq!(after.lag_high_water, held.lag_high_water, "the high water stays: {after:?}");
    assert_eq!(after.recycled_purge, 100, "{after:?}");
}

#[test]
fn a_standalone_pools_lag_rises_while_its_worker_is_held_and_falls_to_zero_once_it_runs() {
    let gate = Gate::new(true);
    let g = Arc::clone(&gate);
    let pool = Pool::builder()
        .config(PoolConfig { max: 4096, ..SMALL })
        .create(move || {
            g.pass();
            vec![0u8; 16]
        })
        .build()
        .unwrap();
    wait_for(|| pool.stats().available() == 64);
    assert_eq!(pool.stats().lag, 0);

    gate.set(false);
    let _opener = gate.opener();
    let objects: Vec<_> = (0..100).map(|_| pool.pull()).collect();
    drop(objects); // Purge: each cell goes to the (held) worker to rebuild
    let held = pool.stats();
    assert!(held.lag >= 100 - 1 && held.lag <= held.building, "{held:?}");
    assert!(held.lag_high_water >= held.lag, "{held:?}");
    assert_eq!(held.returned, 0, "{held:?}");

    gate.set(true);
    wait_for(|| pool.stats().building == 0);
    let after = pool.stats();
    assert_eq!(after.lag, 0, "the worker caught up: {after:?}");
    assert_eq!(after.recycled_purge, 100, "{after:?}");
}

#[cfg(feature = "world")]
#[test]
fn the_build_queue_is_sized_by_what_can_be_in_flight() {
    // The larger of grow_by and a magazine (128) per worker plus one; at most max. Not
    // capacity: the first precreation waits in the backlog where it does not fit.
    let cases = [
        (PoolConfig::PROJECTILES, 1024),
        (PoolConfig::DEFAULT, 256),
        (PoolConfig::EXPENSIVE, 384),
        (PoolConfig::ON_DEMAND, 1),
        (PoolConfig { capacity: 0, grow_by: 64, low_watermark: 0, workers: 3, ..PoolConfig::DEFAULT }, 512),
        (PoolConfig { capacity: 100, grow_by: 2000, ..PoolConfig::DEFAULT }, 2000),
        (PoolConfig { capacity: 10, max: 20, low_watermark: 0, grow_by: 8, ..PoolConfig::DEFAULT }, 20),
        (PoolConfig { capacity: 5000, max: 8000, grow_by: 8, ..PoolConfig::DEFAULT }, 256),
    ];
    for (config, room) in cases {
        let mut pools = Pools::new(Heap::new());
        pools.add::<Shot>(config).unwrap_or_else(|e| panic!("{config:?}: {e}"));
        assert_eq!(stats(&pools).build_queue, room, "{config:?}");
    }
}

#[cfg(feature = "world")]
#[test]
fn the_whole_initial_capacity_is_built_even_when_it_is_larger_than_a_growth_step() {
    // capacity > grow_by and > 2 magazines: the queue (256) takes what it can, the backlog
    // the rest; nothing goes back. Nobody spawns while it warms up, so the depot fills with no one taking magazines:
    // the partial ones a worker publishes while the depot is low (it can outrun the
    // thread queueing the cells) must leave room for the whole ones, or the worker waits
    // forever to publish (1 run in about 25 hung before `full` was sized for them).
    let config = PoolConfig { capacity: 1000, max: 4096, low_watermark: 0, grow_by: 16, ..SMALL };
    let gate = Gate::new(true);
    let mut pools = world_pool(config, &gate);
    settle(&mut pools);
    let s = stats(&pools);
    assert_eq!((s.precreated, s.returned, s.build_queue, s.grown, s.lag), (1000, 0, 256, 0, 0), "{s:?}");
    wait_for_stats(|| stats(&pools), |s| s.available() == 1000);

    let pool = Pool::builder().config(config).create(|| 7u64).build().unwrap();
    wait_for_stats(|| pool.stats(), |s| s.available() == 1000);
    let s = pool.stats();
    assert_eq!((s.precreated, s.returned, s.build_queue, s.lag), (1000, 0, 256, 0), "{s:?}");

    // With the worker held, the 1000 wait: 256 in the queue, the rest in the backlog, all
    // counted in the lag; released, the worker drains both.
    let held = Gate::new(false);
    let _opener = held.opener();
    let mut pools = world_pool(config, &held);
    let s = stats(&pools);
    assert!(s.lag >= 999 && s.lag_high_water == 256 && s.building == 1000, "{s:?}");
    held.set(true);
    settle(&mut pools);
    wait_for_stats(|| stats(&pools), |s| s.available() == 1000 && s.lag == 0);
}

#[test]
fn a_release_burst_beyond_the_queues_room_goes_back_to_the_allocator() {
    // Room for 256 (two magazines: one worker plus one); 1000 Purge drops while the worker
    // is held queue 256 and hand the rest back.
    let gate = Gate::new(true);
    let g = Arc::clone(&gate);
    let pool = Pool::builder()
        .config(PoolConfig { max: 4096, ..SMALL })
        .create(move || {
            g.pass();
            0u64
        })
        .build()
        .unwrap();
    wait_for(|| pool.stats().available() == 64);
    assert_eq!(pool.stats().build_queue, 256);

    gate.set(false);
    let _opener = gate.opener();
    let objects: Vec<_> = (0..1000).map(|_| pool.pull()).collect();
    let before = pool.stats();
    drop(objects);
    let s = pool.stats();
    // Queued: what the queue had room for (less the cells growth queued before the
    // burst); the worker may hold one more, taken out of the queue.
    assert!(s.lag <= 256 && s.building <= 256 + 1, "{s:?}");
    assert_eq!(s.lag_high_water, 256, "the queue filled: {s:?}");
    assert!(s.returned >= 1000 - 256, "the rest went back: {s:?}");
    let queued_by_burst = s.building - before.building;
    assert_eq!(queued_by_burst as u64 + (s.returned - before.returned), 1000, "no cell lost: {s:?}");

    gate.set(true);
    wait_for(|| pool.stats().building == 0);
    assert_eq!(pool.stats().lag, 0);
}

#[cfg(feature = "world")]
#[test]
fn side_bytes_are_counted_and_follow_the_config() {
    let gate = Gate::new(true);
    let big = world_pool(PoolConfig::PROJECTILES, &gate);
    let small = world_pool(PoolConfig { capacity: 32, max: 256, low_watermark: 0, grow_by: 32, ..SMALL }, &gate);
    let (big, small) = (stats(&big), stats(&small));
    assert!(small.side_bytes > 0, "{small:?}");
    assert!(small.side_bytes < big.side_bytes, "small {} ≥ big {}", small.side_bytes, big.side_bytes);
    // PROJECTILES' build queue alone is 4096 slots of a 16-byte token and a stamp word.
    assert!(big.side_bytes >= 4096 * 24, "{big:?}");
    assert!(big.side_bytes_per_object() > 0.0);

    let standalone = |max: usize| {
        Pool::builder()
            .config(PoolConfig { capacity: 0, max, low_watermark: 0, grow_by: 0, ..SMALL })
            .create(|| 0u32)
            .build()
            .unwrap()
    };
    let (big, small) = (standalone(1 << 20), standalone(64));
    let (big, small) = (big.stats().side_bytes, small.stats().side_bytes);
    assert!(0 < small && small < big, "small {small}, big {big}");
}

#[cfg(feature = "world")]
#[test]
fn a_world_pool_is_not_warm_while_its_worker_is_held_and_every_precreated_spawn_hits_once_it_is() {
    let gate = Gate::new(false);
    let _opener = gate.opener();
    let mut pools = world_pool(SMALL, &gate);
    match pools.wait_until_warm(Duration::from_millis(5)) {
        Err(PoolError::NotWarm { class, ready, on_the_way, waited }) => {
            assert_eq!(class, "Shot");
            assert_eq!((ready, on_the_way), (0, 64), "the held worker has built nothing");
            assert!(waited >= Duration::from_millis(5));
        }
        other => panic!("a held worker's pool is not warm: {other:?}"),
    }
    gate.set(true);
    // 64 objects are less than a magazine: warm only once the worker hands over the
    // partial one it holds, which `wait_until_warm` asks for.
    pools.wait_until_warm(Duration::from_secs(30)).expect("the released worker warms the pool");
    let s = stats(&pools);
    assert_eq!((s.building, s.held, s.lag), (0, 0, 0), "{s:?}");
    for _ in 0..64 {
        pools.spawn_with::<Shot>(|_| {}).unwrap();
    }
    let s = stats(&pools);
    assert_eq!((s.hits, s.misses), (64, 0), "{s:?}");
}

#[cfg(feature = "world")]
#[test]
fn prefill_warms_a_pool_without_workers_up_to_its_max() {
    #[derive(Trace, Object)]
    struct Unpooled;
    impl Poolable for Unpooled {
        fn create() -> Self {
            Unpooled
        }
    }

    let config =
        PoolConfig { capacity: 0, max: 40, low_watermark: 0, grow_by: 0, precreate: false, workers: 0, ..SMALL };
    let mut pools = Pools::new(Heap::new());
    pools.add::<Shot>(config).unwrap();
    pools.wait_until_warm(Duration::ZERO).expect("nothing to wait for without workers");
    assert_eq!(pools.prefill::<Shot>(100).unwrap(), 40, "stops at max");
    let s = stats(&pools);
    assert_eq!((s.precreated, s.ready, s.in_use), (40, 40, 0), "{s:?}");
    for _ in 0..40 {
        pools.spawn_with::<Shot>(|_| {}).unwrap();
    }
    let s = stats(&pools);
    assert_eq!((s.hits, s.misses), (40, 0), "{s:?}");
    assert_eq!(pools.prefill::<Shot>(1).unwrap(), 0, "40 live: the pool is at max");
    assert!(matches!(pools.prefill::<Unpooled>(1), Err(PoolError::NotPooled(_))));
}

#[test]
fn a_standalone_pool_is_not_warm_while_its_worker_is_held() {
    let gate = Gate::new(false);
    let _opener = gate.opener();
    let g = Arc::clone(&gate);
    let pool = Pool::builder()
        .config(PoolConfig { max: 4096, ..SMALL })
        .create(move || {
            g.pass();
            0u64
        })
        .build()
        .unwrap();
    let error = pool.wait_until_warm(Duration::from_millis(5)).expect_err("the worker is held");
    assert!(matches!(error, PoolError::NotWarm { ready: 0, on_the_way: 64, .. }), "{error:?}");
    assert!(error.to_string().contains("still warming up"), "{error}");
    gate.set(true);
    pool.wait_until_warm(Duration::from_secs(30)).expect("the released worker warms the pool");
    let objects: Vec<_> = (0..64).map(|_| pool.pull()).collect();
    let s = pool.stats();
    assert_eq!((s.hits, s.misses), (64, 0), "{s:?}");
    drop(objects);
}
