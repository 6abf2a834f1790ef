//! respawn's collector beside a hand-written mark-sweep and rust-gc (the `gc` crate), on the
//! `gc` workload of the targets in `benches/README.md`, plus its scaling over threads and its
//! purge slices.
//!
//! - `gc/100k`: 100 000 nodes, 0–4 edges each to uniformly random nodes, every 10th rooted;
//!   half the roots are dropped, then one full collection (mark + sweep/purge). The graph is
//!   built outside the timing; the timing covers dropping the roots and the collection.
//! - `gc_scaling/1M`: the same shape with 1 000 000 nodes, respawn on 1 and 2 rayon threads.
//! - `gc_purge/100k`: 100 000 garbage objects purged in full, and in 1 ms slices; the
//!   slices' overrun is printed.
//! - `gc_incremental/100k`, `gc_incremental/1M`: the `gc` graph's collection (half the roots
//!   dropped) marked whole on one thread, and marked incrementally in 1 ms and 250 µs
//!   slices back to back (the total time; the purge runs whole after the mark, outside the
//!   timing, in both). Each collection's slice count and longest slice are printed: the
//!   longest pause the game would see.
//! - `gc_async_purge`: the game thread's time to purge garbage objects of a class without a
//!   pool — 10 000 that each own a 256-byte buffer, 1 000 whose destructor takes 2 µs — with
//!   the destructors inline or on the heap's purge thread (`GcSettings::async_purge`). The
//!   collection that finds them and the purge thread's catching up run outside the timing.
//!
//! Run with `cargo bench --bench gc`; `benches/LOG.md` has the figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BatchSize, Criterion};
use respawn::{ArenaConfig, Handle, RawHandle, SlabConfig};
use respawn::{CollectOptions, GcSettings, GcStats, Heap, MarkStep, Object, Trace};

mod common;
use common::XorShift;

/// The graph every peer builds: edges per node, and the roots (every 10th node).
struct Graph {
    edges: Vec<Vec<u32>>,
    roots: Vec<u32>,
}

fn graph(n: usize) -> Graph {
    let mut rng = XorShift::new();
    let edges = (0..n).map(|_| (0..rng.below(5)).map(|_| rng.below(n) as u32).collect()).collect();
    Graph { edges, roots: (0..n as u32).step_by(10).collect() }
}

// ---- respawn ----------------------------------------------------------------------------

#[derive(Trace, Object)]
struct GcNode {
    edges: Vec<Handle<GcNode>>,
    payload: u64,
}

/// Builds the graph in a fresh heap; returns the heap and the rooted handles.
fn respawn_heap(g: &Graph, settings: GcSettings) -> (Heap, Vec<RawHandle>) {
    let config = ArenaConfig { slab: SlabConfig { max_slabs: 1 << 14, ..SlabConfig::DEFAULT }, ..ArenaConfig::DEFAULT };
    let mut heap = Heap::with_config(config, settings).unwrap();
    heap.prefill::<GcNode>(g.edges.len()).unwrap();
    let handles: Vec<Handle<GcNode>> =
        (0..g.edges.len()).map(|i| heap.insert(GcNode { edges: Vec::new(), payload: i as u64 })).collect();
    for (i, edges) in g.edges.iter().enumerate() {
        heap.get_mut(handles[i]).unwrap().edges = edges.iter().map(|&e| handles[e as usize]).collect();
    }
    let roots: Vec<RawHandle> = g.roots.iter().map(|&r| handles[r as usize].raw()).collect();
    for &r in &roots {
        heap.add_to_root(r).unwrap();
    }
    (heap, roots)
}

fn respawn_collect(heap: &mut Heap, roots: &[RawHandle]) -> usize {
    for r in roots.iter().skip(1).step_by(2) {
        heap.remove_from_root(*r).unwrap();
    }
    heap.collect_garbage(CollectOptions::FULL).purged
}

/// One respawn peer: a fresh heap of `g` per iteration, the collection timed, run inside
/// `pool` when one is given.
fn bench_respawn(
    group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>,
    name: &str,
    g: &Graph,
    settings: GcSettings,
    pool: Option<&rayon::ThreadPool>,
) {
    group.bench_function(name, |b| {
        b.iter_batched(
            || respawn_heap(g, settings),
            |(mut heap, roots)| {
                let purged = match pool {
                    Some(pool) => pool.install(|| respawn_collect(&mut heap, &roots)),
                    None => respawn_collect(&mut heap, &roots),
                };
                black_box(purged);
                heap
            },
            BatchSize::PerIteration,
        );
    });
}

/// Where one peer's collection time goes: the median of each phase (flag, reach, gather,
/// purge) over `runs` collections of fresh heaps, printed under the group's figures.
fn report_phases(name: &str, g: &Graph, settings: GcSettings, pool: Option<&rayon::ThreadPool>, runs: usize) {
    let mut phases: [Vec<Duration>; 5] = Default::default();
    for _ in 0..runs {
        let (mut heap, roots) = respawn_heap(g, settings);
        let start = Instant::now();
        match pool {
            Some(pool) => pool.install(|| respawn_collect(&mut heap, &roots)),
            None => respawn_collect(&mut heap, &roots),
        };
        let whole = start.elapsed();
        let s = heap.gc_stats();
        for (phase, time) in phases.iter_mut().zip([whole, s.mark_time, s.reach_time, s.gather_time, s.purge_time]) {
            phase.push(time);
        }
    }
    let [whole, flag, reach, gather, purge] = phases.map(|mut times| {
        times.sort_unstable();
        times[times.len() / 2]
    });
    println!(
        "{name}: {whole:?} in all; flag {flag:?}, reach {reach:?}, gather {gather:?}, purge {purge:?} (medians of {runs})"
    );
}

/// The hand-written peer: a fresh `PlainHeap` per iteration, the collection timed.
fn bench_plain(group: &mut criterion::BenchmarkGroup<'_, criterion::measurement::WallTime>, g: &Graph) {
    group.bench_function("hand-written mark-sweep", |b| {
        b.iter_batched(
            || PlainHeap::new(g),
            |mut heap| {
                black_box(plain_collect(&mut heap));
                heap
            },
            BatchSize::PerIteration,
        );
    });
}

// ---- hand-written mark-sweep over Vec<Node> with index edges ----------------------------

struct PlainNode {
    edges: Vec<u32>,
    payload: u64,
    marked: bool,
    live: bool,
}

struct PlainHeap {
    nodes: Vec<PlainNode>,
    roots: Vec<u32>,
    free: Vec<u32>,
}

impl PlainHeap {
    fn new(g: &Graph) -> Self {
        let nodes = g
            .edges
            .iter()
            .enumerate()
            .map(|(i, e)| PlainNode { edges: e.clone(), payload: i as u64, marked: false, live: true })
            .collect();
        Self { nodes, roots: g.roots.clone(), free: Vec::new() }
    }

    fn collect(&mut self) -> usize {
        let mut stack: Vec<u32> = Vec::new();
        for &r in &self.roots {
            if !self.nodes[r as usize].marked {
                self.nodes[r as usize].marked = true;
                stack.push(r);
            }
        }
        while let Some(i) = stack.pop() {
            for k in 0..self.nodes[i as usize].edges.len() {
                let j = self.nodes[i as usize].edges[k];
                let node = &mut self.nodes[j as usize];
                if node.live && !node.marked {
                    node.marked = true;
                    stack.push(j);
                }
            }
        }
        let mut freed = 0;
        for (i, node) in self.nodes.iter_mut().enumerate() {
            if node.live && !node.marked {
                node.live = false;
                node.edges = Vec::new(); // what a purge does: the node's own heap memory goes
                black_box(node.payload);
                self.free.push(i as u32);
                freed += 1;
            }
            node.marked = false;
        }
        freed
    }
}

fn plain_collect(heap: &mut PlainHeap) -> usize {
    let kept: Vec<u32> = heap.roots.iter().copied().step_by(2).collect();
    heap.roots = kept;
    heap.collect()
}

// ---- rust-gc ----------------------------------------------------------------------------

mod rust_gc_node {
    // gc_derive 0.5 (synstructure) expands its impls inside a `const _`.
    #![allow(non_local_definitions)]

    #[derive(gc::Trace, gc::Finalize)]
    pub struct RustGcNode {
        pub edges: gc::GcCell<Vec<gc::Gc<RustGcNode>>>,
        pub payload: u64,
    }
}
use rust_gc_node::RustGcNode;

fn rust_gc_graph(g: &Graph) -> Vec<gc::Gc<RustGcNode>> {
    let nodes: Vec<gc::Gc<RustGcNode>> = (0..g.edges.len())
        .map(|i| gc::Gc::new(RustGcNode { edges: gc::GcCell::new(Vec::new()), payload: i as u64 }))
        .collect();
    for (i, edges) in g.edges.iter().enumerate() {
        *nodes[i].edges.borrow_mut() = edges.iter().map(|&e| gc::Gc::clone(&nodes[e as usize])).collect();
    }
    let roots = g.roots.iter().map(|&r| gc::Gc::clone(&nodes[r as usize])).collect();
    drop(nodes); // only the roots stay on the stack
    roots
}

// ---- benches ----------------------------------------------------------------------------

/// The parallel collector, purging in full (the bench times one whole collection).
const PARALLEL: GcSettings = GcSettings { purge_budget: None, ..GcSettings::DEFAULT };

fn gc_100k(c: &mut Criterion) {
    let g = graph(100_000);
    let mut group = c.benchmark_group("gc/100k");
    group.sample_size(30);
    bench_respawn(&mut group, "respawn single-thread", &g, GcSettings::SINGLE_THREADED, None);
    report_phases("gc/100k/respawn single-thread", &g, GcSettings::SINGLE_THREADED, None, 11);
    bench_respawn(&mut group, "respawn parallel", &g, PARALLEL, None);
    report_phases("gc/100k/respawn parallel", &g, PARALLEL, None, 11);
    bench_plain(&mut group, &g);
    // rust-gc's heap is thread-local: no automatic collection while the graph is built,
    // and whatever is left from one sample is collected in the next setup, untimed.
    gc::configure(|c| c.threshold = usize::MAX / 2);
    group.bench_function("rust-gc", |b| {
        b.iter_batched(
            || {
                gc::force_collect();
                rust_gc_graph(&g)
            },
            |mut roots| {
                let kept: Vec<_> = roots.drain(..).step_by(2).collect();
                drop(roots);
                gc::force_collect();
                kept
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();
    gc::force_collect();
}

fn gc_scaling(c: &mut Criterion) {
    let g = graph(1_000_000);
    let mut group = c.benchmark_group("gc_scaling/1M");
    group.sample_size(10);
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let name = format!("respawn {threads} thread(s)");
        bench_respawn(&mut group, &name, &g, PARALLEL, Some(&pool));
        report_phases(&format!("gc_scaling/1M/{name}"), &g, PARALLEL, Some(&pool), 5);
    }
    bench_plain(&mut group, &g);
    group.finish();
}

/// 100 000 unrooted objects, found unreachable by an incremental collection.
fn garbage_heap() -> Heap {
    let mut heap = Heap::with_config(ArenaConfig::DEFAULT, GcSettings::SINGLE_THREADED).unwrap();
    for i in 0..100_000u64 {
        heap.insert(GcNode { edges: Vec::with_capacity(2), payload: i });
    }
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    heap
}

fn gc_purge(c: &mut Criterion) {
    let mut group = c.benchmark_group("gc_purge/100k");
    group.sample_size(20);
    group.bench_function("full purge", |b| {
        b.iter_batched(garbage_heap, |mut heap| (heap.purge(None), heap), BatchSize::PerIteration);
    });
    let budget = Duration::from_millis(1);
    group.bench_function("1 ms slices", |b| {
        b.iter_batched(
            garbage_heap,
            |mut heap| {
                while !heap.purge(Some(budget)).is_done() {}
                heap
            },
            BatchSize::PerIteration,
        );
    });
    group.finish();

    // The overrun of each slice past its budget, over a few purges.
    let mut overruns: Vec<Duration> = Vec::new();
    let mut slices = 0;
    for _ in 0..10 {
        let mut heap = garbage_heap();
        loop {
            let start = Instant::now();
            let p = heap.purge(Some(budget));
            let took = start.elapsed();
            slices += 1;
            if !p.is_done() {
                overruns.push(took.saturating_sub(budget)); // the last slice ends early by design
            } else {
                break;
            }
        }
    }
    overruns.sort();
    let pick = |q: f64| overruns[((overruns.len() - 1) as f64 * q) as usize];
    println!(
        "gc_purge/100k 1 ms slices: {slices} slices over 10 purges; overrun median {:?}, p99 {:?}, max {:?}",
        pick(0.5),
        pick(0.99),
        overruns.last().copied().unwrap_or_default()
    );
}

/// One collection of `g` with half its roots dropped, the mark whole (`budget` `None`) or in
/// back-to-back slices of `budget`, purging nothing (the purge is the same either way).
fn respawn_mark(heap: &mut Heap, roots: &[RawHandle], budget: Option<Duration>) -> GcStats {
    for r in roots.iter().skip(1).step_by(2) {
        heap.remove_from_root(*r).unwrap();
    }
    let Some(budget) = budget else { return heap.collect_garbage(CollectOptions::INCREMENTAL) };
    heap.start_incremental_collection(CollectOptions::INCREMENTAL);
    loop {
        if let MarkStep::Done(stats) = heap.mark_slice(budget) {
            return stats;
        }
    }
}

fn gc_incremental(c: &mut Criterion) {
    for (name, n, samples) in [("100k", 100_000, 20), ("1M", 1_000_000, 10)] {
        let g = graph(n);
        let mut group = c.benchmark_group(format!("gc_incremental/{name}"));
        group.sample_size(samples);
        let runs = [
            ("whole mark", None),
            ("1 ms slices", Some(Duration::from_millis(1))),
            ("250 µs slices", Some(Duration::from_micros(250))),
        ];
        for (label, budget) in runs {
            let mut longest: Vec<(Duration, usize)> = Vec::new();
            group.bench_function(label, |b| {
                b.iter_batched(
                    || respawn_heap(&g, GcSettings::SINGLE_THREADED),
                    |(mut heap, roots)| {
                        let stats = respawn_mark(&mut heap, &roots, budget);
                        longest.push((stats.longest_slice, stats.mark_slices));
                        heap
                    },
                    BatchSize::PerIteration,
                );
            });
            if longest.is_empty() {
                continue; // filtered out
            }
            longest.sort();
            let (median, slices) = longest[longest.len() / 2];
            println!(
                "gc_incremental/{name} {label}: longest slice median {median:?} (max {:?}), {slices} slices",
                longest.last().map(|l| l.0).unwrap_or_default()
            );
        }
        group.finish();
    }
}

/// An object whose destructor frees a buffer (a mesh, a path).
#[derive(Trace, Object)]
struct Laden {
    #[trace(skip)]
    _buffer: Vec<u8>,
}

/// An object whose destructor takes 2 µs (a physics body leaving its broadphase, a sound
/// voice stopping): the storm's `--drop-us 2`.
#[derive(Trace, Object)]
struct Heavy {
    #[trace(skip)]
    _id: u64,
}

impl Drop for Heavy {
    fn drop(&mut self) {
        let start = Instant::now();
        while start.elapsed() < Duration::from_micros(2) {
            std::hint::spin_loop();
        }
    }
}

/// One round: `n` garbage objects made by `make` and found by a collection (untimed), then
/// purged in full (timed), then the purge thread's catching up and the cells' return
/// (untimed).
fn async_purge_round<T: Object>(heap: &mut Heap, n: usize, make: impl Fn() -> T) -> Duration {
    for _ in 0..n {
        heap.insert(make());
    }
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    let start = Instant::now();
    let purged = heap.purge(None).purged;
    let spent = start.elapsed();
    assert_eq!(purged, n);
    while heap.purge_thread_stats().dropped < heap.purge_thread_stats().posted {
        std::thread::yield_now();
    }
    heap.update(Duration::ZERO);
    spent
}

fn gc_async_purge(c: &mut Criterion) {
    let mut g = c.benchmark_group("gc_async_purge");
    g.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (name, async_purge) in [("inline", false), ("async", true)] {
        let settings = GcSettings { async_purge, ..GcSettings::SINGLE_THREADED };
        let mut heap = Heap::with_config(ArenaConfig::default(), settings).expect("valid settings");
        g.bench_function(format!("10k_buffers/{name}"), |b| {
            let make = || Laden { _buffer: vec![1; 256] };
            b.iter_custom(|iters| (0..iters).map(|_| async_purge_round(&mut heap, 10_000, make)).sum());
        });
        g.bench_function(format!("1k_2us/{name}"), |b| {
            b.iter_custom(|iters| (0..iters).map(|_| async_purge_round(&mut heap, 1_000, || Heavy { _id: 0 })).sum());
        });
        let s = heap.purge_thread_stats();
        println!("gc_async_purge/{name}: {} destructors on the purge thread", s.dropped);
    }
    g.finish();
}

criterion_group!(benches, gc_100k, gc_scaling, gc_purge, gc_incremental, gc_async_purge);
criterion_main!(benches);
