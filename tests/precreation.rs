//! Invariant 3's first half: on a warm pool, a spawn constructs nothing on the calling
//! thread — the ~20 µs constructor runs on the precreation worker.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use respawn::{Object, Policy, PoolConfig, Poolable, Trace, World};
use respawn_testkit::threads::{wait_for, Gate};

/// Where each construction ran.
#[derive(Default)]
struct Constructions {
    threads: Mutex<Vec<ThreadId>>,
    total: AtomicUsize,
}

impl Constructions {
    fn on(&self, thread: ThreadId) -> usize {
        self.threads.lock().iter().filter(|&&t| t == thread).count()
    }
}

/// An object as expensive to build as a weapon blueprint: ~20 µs of work.
#[derive(Trace, Object)]
struct Expensive {
    table: [u64; 4],
}

impl Expensive {
    fn build(log: &Constructions) -> Self {
        let start = Instant::now();
        let mut x = 1u64;
        while start.elapsed() < Duration::from_micros(20) {
            x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
        }
        log.threads.lock().push(thread::current().id());
        log.total.fetch_add(1, Ordering::Relaxed);
        Self { table: [x; 4] }
    }
}

impl Poolable for Expensive {
    fn create() -> Self {
        unreachable!("built through the counting closure")
    }
}

/// `Purge`, one worker, 64 precreated.
const PURGE_ONE_WORKER: PoolConfig = PoolConfig {
    capacity: 64,
    max: 1024,
    low_watermark: 0,
    grow_by: 64,
    policy: Policy::Purge,
    precreate: true,
    workers: 1,
    idle_trim: None,
};

#[test]
fn warm_spawns_construct_nothing_on_the_calling_thread() {
    let log = Arc::new(Constructions::default());
    let l = Arc::clone(&log);
    let config = PURGE_ONE_WORKER;
    let mut world = World::builder().pool_with::<Expensive>(config, move || Expensive::build(&l)).build().unwrap();
    let me = thread::current().id();
    wait_for(|| world.pool_stats::<Expensive>().unwrap().available() == 64);
    assert_eq!(log.on(me), 0);

    for round in 0..5 {
        // Spawn fewer than are ready; release them all (Purge: the worker rebuilds them).
        let shots: Vec<_> = (0..48).map(|_| world.spawn::<Expensive>()).collect();
        assert!(shots.iter().all(|&h| world.get(h).is_some_and(|e| e.table[0] != 0)), "built objects");
        assert_eq!(log.on(me), 0, "round {round}: a spawn constructed on the game thread");
        for h in shots {
            world.destroy(h).unwrap();
        }
        world.end_frame();
        wait_for(|| world.pool_stats::<Expensive>().unwrap().available() == 64);
    }
    let stats = world.pool_stats::<Expensive>().unwrap();
    assert_eq!((stats.spawns, stats.hits, stats.misses), (240, 240, 0));
    assert_eq!(stats.precreated, 64 + 240);
    assert!(stats.create_mean >= Duration::from_micros(20), "{stats:?}");
    assert_eq!(log.total.load(Ordering::Relaxed), 64 + 240);
    assert_eq!(log.on(me), 0);

    // A cold pool's spawn does construct on the calling thread (so the check above can fail).
    let l = Arc::clone(&log);
    let cold = PoolConfig { capacity: 0, ..config };
    let mut cold_world = World::builder().pool_with::<Expensive>(cold, move || Expensive::build(&l)).build().unwrap();
    cold_world.spawn::<Expensive>();
    assert_eq!(log.on(me), 1);
    assert_eq!(cold_world.pool_stats::<Expensive>().unwrap().misses, 1);
}

#[test]
fn misses_while_the_first_objects_are_built_do_not_grow_the_pool() {
    let log = Arc::new(Constructions::default());
    // Shut: the worker is held at its first build; this thread's inline builds pass.
    let gate = Gate::new(false);
    let (l, g) = (Arc::clone(&log), Arc::clone(&gate));
    let config = PoolConfig {
        capacity: 512,
        max: 1 << 16,
        low_watermark: 64,
        grow_by: 1024,
        policy: Policy::Reuse,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder()
        .pool_with::<Expensive>(config, move || {
            g.pass();
            Expensive::build(&l)
        })
        .build()
        .unwrap();
    let _opener = gate.opener();

    // The worker is held at its first build: all 512 are on their way, none is ready.
    let shots: Vec<_> = (0..8).map(|_| world.spawn::<Expensive>()).collect();
    let stats = world.pool_stats::<Expensive>().unwrap();
    assert_eq!((stats.misses, stats.ready), (8, 0), "the first magazine cannot be ready yet: {stats:?}");
    assert_eq!(log.on(thread::current().id()), 8, "each miss built inline");
    assert_eq!(stats.grown, 0, "hundreds of objects are on their way; a miss must not add grow_by more");

    // Once the workers are done, the pool holds its capacity, not capacity + misses × grow_by.
    gate.set(true);
    wait_for(|| world.pool_stats::<Expensive>().unwrap().building == 0);
    let stats = world.pool_stats::<Expensive>().unwrap();
    assert_eq!((stats.precreated, stats.grown), (512, 0), "{stats:?}");
    drop(shots);

    // A miss with nothing on its way does grow (so the check above can fail).
    let l = Arc::clone(&log);
    let empty = PoolConfig { capacity: 0, ..config };
    let mut world = World::builder().pool_with::<Expensive>(empty, move || Expensive::build(&l)).build().unwrap();
    world.spawn::<Expensive>();
    assert_eq!(world.pool_stats::<Expensive>().unwrap().grown, 1024);
}

#[test]
fn an_idle_worker_hands_over_its_partial_magazine() {
    let log = Arc::new(Constructions::default());
    let l = Arc::clone(&log);
    // Two full magazines (128 each) and a partial one of 44. With 256 published the depot
    // is not low, so only the idle flush hands the last 44 over before a spawn misses.
    let config = PoolConfig {
        capacity: 300,
        max: 4096,
        low_watermark: 0,
        grow_by: 64,
        policy: Policy::Reuse,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder().pool_with::<Expensive>(config, move || Expensive::build(&l)).build().unwrap();
    wait_for(|| world.pool_stats::<Expensive>().unwrap().available() == 300);
    let stats = world.pool_stats::<Expensive>().unwrap();
    assert_eq!((stats.ready, stats.held, stats.building), (300, 0, 0), "{stats:?}");

    let shots: Vec<_> = (0..300).map(|_| world.spawn::<Expensive>()).collect();
    let stats = world.pool_stats::<Expensive>().unwrap();
    assert_eq!((stats.hits, stats.misses, stats.ready), (300, 0, 0), "{stats:?}");
    assert_eq!(log.on(thread::current().id()), 0, "nothing built on the spawning thread");
    drop(shots);
}

/// A plain object whose `create` takes well under a microsecond.
#[derive(Trace, Object, Default)]
struct Quick {
    n: u64,
}

impl Poolable for Quick {
    fn create() -> Self {
        Self::default()
    }
}

/// A worker times objects that build in under a microsecond sixteen at a time (a clock read
/// costs about what such a `create` does), and slower ones alone: one slow `create` among
/// hundreds of quick ones still shows in `create_max`, and each object is counted once.
#[test]
fn one_slow_create_among_quick_ones_shows_in_create_max() {
    const SLOW: Duration = Duration::from_millis(3);
    let calls = Arc::new(AtomicUsize::new(0));
    let c = Arc::clone(&calls);
    let config = PoolConfig { capacity: 600, ..PURGE_ONE_WORKER };
    let world = World::builder()
        .pool_with::<Quick>(config, move || {
            if c.fetch_add(1, Ordering::Relaxed) == 300 {
                thread::sleep(SLOW);
            }
            Quick { n: 1 }
        })
        .build()
        .unwrap();
    wait_for(|| {
        let s = world.pool_stats::<Quick>().unwrap();
        s.building == 0 && s.held == 0 && s.precreated == 600
    });
    let stats = world.pool_stats::<Quick>().unwrap();
    assert_eq!(calls.load(Ordering::Relaxed), 600);
    assert_eq!(stats.available(), 600, "{stats:?}");
    assert!(stats.create_max >= SLOW, "{stats:?}");
    // The mean is over all 600: at least the slow one's share.
    assert!(stats.create_mean >= SLOW / 600, "{stats:?}");
}
