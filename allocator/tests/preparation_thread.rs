//! The preparation thread starts with the first class and is joined when the allocator
//! drops. Alone in its test binary, so no other test's allocator runs beside it.

#![cfg(all(target_os = "linux", not(miri)))]

use std::alloc::Layout;

use respawn_allocator::{ChunkAllocator, SlabConfig};

/// The threads of this process named `respawn-prepare`.
fn preparation_threads() -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("Linux lists a process's threads")
        .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
        .filter(|name| name.trim_end() == "respawn-prepare")
        .count()
}

#[test]
fn the_thread_starts_with_the_first_class_and_is_joined_at_drop() {
    assert_eq!(preparation_threads(), 0);
    let alloc = ChunkAllocator::new();
    assert_eq!(preparation_threads(), 0, "an allocator without classes starts no thread");
    let first = alloc.register_class(Layout::new::<[u64; 8]>(), SlabConfig::SMALL).expect("a class");
    assert_eq!(preparation_threads(), 1, "the first class starts it, and it is running");
    alloc.register_class(Layout::new::<u32>(), SlabConfig::SMALL).expect("a second class");
    assert_eq!(preparation_threads(), 1, "one thread for every class");
    // It prepares ahead of demand: the first class's spare slab is made ready.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while alloc.stats(first).expect("registered").prepared_slabs == 0 {
        assert!(std::time::Instant::now() < deadline, "the thread prepared nothing");
        std::thread::yield_now();
    }
    drop(alloc);
    assert_eq!(preparation_threads(), 0, "dropping the allocator joins it");
    // Many allocators without a class, made and dropped, start none.
    for _ in 0..100 {
        drop(ChunkAllocator::new());
    }
    assert_eq!(preparation_threads(), 0);
}
