//! Once warm, a collection cycle — mark, reach, gather, purge — makes no heap allocation:
//! its worklists come from the collector's bump arena and reused lists (checked with dhat).
//!
//! One test in this binary: dhat allows one profiler per process.
//!
//! The parallel run is called from outside rayon's pool, as a game thread would: the
//! collector enters the pool once per cycle. rayon's injector queue allocates a block per 63
//! such entries, so about one cycle in 63 sees one allocation that is rayon's, not ours;
//! the rounds measured here do not cross a block boundary.

use respawn_arena::{ArenaConfig, Handle};
use respawn_gc::{CollectOptions, GcSettings, Heap, Object, Trace};

#[global_allocator]
static ALLOC: dhat::Alloc = dhat::Alloc;

/// A node whose edges live inline, so building the graph allocates nothing either.
#[derive(Trace, Object)]
struct Node {
    edges: [Option<Handle<Node>>; 4],
}

/// Takes the previous graph's roots out of the root set and builds a new graph of `n`
/// nodes in chains of 50, every 3rd node left out of its chain, each chain rooted at its
/// end: the old graph and the left-out nodes are garbage for the next collection.
fn populate(heap: &mut Heap, roots: &mut Vec<Handle<Node>>, n: usize) {
    for h in roots.drain(..) {
        heap.remove_from_root(h.raw()).unwrap();
    }
    let mut previous: Option<Handle<Node>> = None;
    for i in 1..=n {
        let h = heap.insert(Node { edges: [previous, None, None, None] });
        if i % 50 == 0 {
            heap.add_to_root(h.raw()).unwrap();
            roots.push(h);
            previous = None;
        } else if i % 3 != 0 {
            previous = Some(h);
        }
    }
}

fn blocks() -> u64 {
    dhat::HeapStats::get().total_blocks
}

#[test]
fn a_warm_collection_allocates_nothing() {
    let _profiler = dhat::Profiler::builder().testing().build();
    let n = if cfg!(miri) { 200 } else { 20_000 };
    for settings in [GcSettings::SINGLE_THREADED, GcSettings { min_objects_per_task: 64, ..GcSettings::DEFAULT }] {
        let mut heap = Heap::with_config(ArenaConfig::DEFAULT, settings).unwrap();
        heap.register::<Node>().unwrap();
        heap.prefill::<Node>(2 * n).unwrap();
        // Warm-up: the bump arena and the purge lists reach their size.
        let mut roots = Vec::with_capacity(n);
        for _ in 0..2 {
            populate(&mut heap, &mut roots, n);
            heap.collect_garbage(CollectOptions::FULL);
        }
        for round in 0..3 {
            populate(&mut heap, &mut roots, n);
            let before = blocks();
            let stats = heap.collect_garbage(CollectOptions::FULL);
            let after = blocks();
            assert!(stats.purged >= n / 2 && stats.scanned >= n / 2, "the cycle did real work: {stats}");
            assert_eq!(
                after - before,
                0,
                "round {round} ({settings:?}): {} allocations in a warm cycle",
                after - before
            );
        }
    }
}
