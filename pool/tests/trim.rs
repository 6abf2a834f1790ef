//! The standalone `Pool<T>` gives memory back: `shrink_to` and `clear` drop ready objects
//! (each once), free their cells and decommit the slabs left empty, which serve again
//! before new ones; an `idle_trim` is refused (no frame upkeep); a trim racing the workers
//! loses nothing.

use std::sync::Arc;
use std::time::Duration;

use respawn_allocator::SlabConfig;
use respawn_pool::{ConfigError, Policy, Pool, PoolConfig, PoolError};
use respawn_testkit::drops::Drops;

struct Obj {
    id: usize,
    drops: Drops,
}

impl Obj {
    /// A new object, numbered by `drops`.
    fn new(drops: &Drops) -> Self {
        Obj { id: drops.make(), drops: drops.clone() }
    }
}

impl Drop for Obj {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

const SLAB: SlabConfig = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 1024, huge_pages: false };

fn burst_len() -> usize {
    if cfg!(miri) {
        300
    } else {
        4000
    }
}

fn pool(drops: &Drops, workers: usize, policy: Policy) -> Pool<Obj> {
    let d = drops.clone();
    Pool::builder()
        .capacity(if workers > 0 { 32 } else { 0 })
        .max(1 << 16)
        .low_watermark(0)
        .grow_by(32)
        .workers(workers)
        .policy(policy)
        .slab(SLAB)
        .create(move || Obj::new(&d))
        .build()
        .unwrap()
}

#[test]
fn after_a_burst_a_trim_gives_the_slabs_back_and_they_serve_again() {
    let drops = Drops::default();
    let pool = pool(&drops, 0, Policy::Reuse);
    let held: Vec<_> = (0..100).map(|_| pool.pull()).collect();
    let burst: Vec<_> = (0..burst_len()).map(|_| pool.pull()).collect();
    let peak = pool.stats().committed_bytes;
    drop(burst);
    assert_eq!(pool.stats().ready, burst_len());

    assert_eq!(pool.shrink_to(10).unwrap(), burst_len() - 10);
    let stats = pool.stats();
    assert_eq!((stats.ready, stats.trimmed, stats.in_use), (10, (burst_len() - 10) as u64, 100));
    assert_eq!(drops.total(), burst_len() - 10, "each trimmed object dropped");
    // The held 100 and the kept 10 are the lowest cells: two slabs of 64.
    let slab = peak / (100 + burst_len()).div_ceil(64);
    assert!(stats.committed_bytes <= 2 * slab, "{} committed, peak {peak}", stats.committed_bytes);
    assert!(stats.committed_bytes < peak);

    // Pull a burst again: the decommitted slabs serve first, objects are whole.
    let again: Vec<_> = (0..burst_len()).map(|_| pool.pull()).collect();
    assert!(again.iter().chain(&held).all(|o| o.id > 0));
    assert!(pool.stats().committed_bytes <= peak + slab);
    drop(again);
    assert_eq!(pool.clear().unwrap(), burst_len());
    drop(held);
    drop(pool);
    drops.assert_each_once();
}

#[test]
fn a_trim_racing_the_workers_loses_nothing() {
    let drops = Drops::default();
    let pool = pool(&drops, 2, Policy::Purge);
    let rounds = if cfg!(miri) { 3 } else { 300 };
    for round in 0..rounds {
        let pulled: Vec<_> = (0..(round % 5) * 30).map(|_| pool.pull()).collect();
        drop(pulled); // `Purge`: dropped, the cells queued for the workers
        let _ = pool.shrink_to(round % 40).unwrap();
    }
    pool.wait_until_warm(Duration::from_secs(30)).unwrap();
    let stats = pool.stats();
    assert_eq!(stats.in_use, 0);
    assert_eq!(drops.made(), drops.total() + stats.ready, "every object built is ready or dropped");
    drop(pool);
    drops.assert_each_once();
}

#[test]
fn a_trim_reaches_other_threads_magazines_only_through_the_depot() {
    let drops = Drops::default();
    let pool = Arc::new(pool(&drops, 0, Policy::Reuse));
    let (returned, go) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
    let other = {
        let (pool, returned, go) = (Arc::clone(&pool), returned.0, go.1);
        std::thread::spawn(move || {
            // 10 objects returned on another thread stay in its magazines (under 128)…
            let objects: Vec<_> = (0..10).map(|_| pool.pull()).collect();
            drop(objects);
            returned.send(()).unwrap();
            // … while it lives (a thread that exits leaves its entry to the next one).
            go.recv().unwrap();
        })
    };
    returned.1.recv().unwrap();
    assert_eq!(pool.clear().unwrap(), 0, "this thread and the depot hold none");
    assert_eq!(pool.stats().ready, 10);
    go.0.send(()).unwrap();
    other.join().unwrap();
    drop(pool);
    drops.assert_each_once();
}

#[test]
fn an_idle_trim_is_refused_without_a_world() {
    let config = PoolConfig { idle_trim: Some(Duration::from_secs(5)), policy: Policy::Reuse, ..PoolConfig::DEFAULT };
    let e = Pool::<u32>::builder().config(config).create(|| 1).build().unwrap_err();
    assert!(matches!(&e, PoolError::Config(ConfigError::Invalid { key: "idle_trim", .. })), "{e}");
    assert!(e.to_string().contains("Pool::shrink_to"), "the error says what to do instead: {e}");
}
