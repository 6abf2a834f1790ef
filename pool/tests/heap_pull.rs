//! A warm standalone pool allocates nothing: 10 000 pull/drop cycles (borrowed and owned
//! guards) and 10 000 `Shared` make/clone/downgrade/drop cycles add no heap block (dhat in
//! testing mode, which counts every thread's allocations, the workers' too). One test per
//! binary: dhat allows one profiler per process.

use std::sync::Arc;
use std::time::{Duration, Instant};

use respawn_pool::{Pool, Shared};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

#[derive(Debug)]
struct Buffer {
    bytes: [u8; 48],
    len: usize,
}

fn cycles(pool: &Arc<Pool<Buffer>>, n: usize) {
    for i in 0..n {
        let mut b = pool.pull();
        b.bytes[i % 48] = i as u8;
        b.len += 1;
        let held = pool.pull_owned(); // two out at once: the magazines trade both ways
        drop(b);
        drop(held);
        let s: Shared<Buffer> = Shared::pull(pool);
        let t = s.clone();
        let w = Shared::downgrade(&t);
        drop(s);
        assert!(w.upgrade().is_some());
        // The weak reference goes first, so the last strong one hands the object back
        // whole (Reuse). Were it to outlive them, the object would be dropped and rebuilt
        // by a worker: a rebuild, and a miss if the worker lags, which is not this test.
        drop(w);
        drop(t);
    }
}

#[test]
fn warm_pull_and_shared_cycles_allocate_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let pool = Arc::new(
        Pool::builder()
            .capacity(256)
            .max(1024)
            .workers(1)
            .create(|| Buffer { bytes: [0; 48], len: 0 })
            .reset(|b: &mut Buffer| b.len = 0)
            .build()
            .unwrap(),
    );
    let start = Instant::now();
    while pool.stats().available() < 256 {
        assert!(start.elapsed() < Duration::from_secs(30), "the workers did not warm the pool");
        std::thread::sleep(Duration::from_millis(1));
    }
    cycles(&pool, 10_000); // warm: this thread's magazines and its thread-local entry

    let before = dhat::HeapStats::get();
    cycles(&pool, 10_000);
    let after = dhat::HeapStats::get();
    dhat::assert_eq!(after.total_blocks, before.total_blocks, "a warm pull allocated");
    let stats = pool.stats();
    dhat::assert_eq!(stats.misses, 0, "every pull was served by a ready object: {:?}", stats);
    dhat::assert_eq!(stats.spawns, 60_000);
    dhat::assert_eq!(stats.in_use, 0);
}
