//! `GcSettings::async_purge` for classes without a pool: the purge thread (UE's
//! `FAsyncPurge`). Handles go stale on the game thread at once; destructors run on the purge
//! thread, each exactly once (a panicking one caught and counted); the cells come back and
//! are reused; a class that must drop on the game thread, or has nothing to drop, stays
//! inline; the heap's drop joins the thread with every object handed over dropped.

use std::thread;
use std::time::{Duration, Instant};

use respawn_arena::Handle;
use respawn_gc::{CollectOptions, GcSettings, Heap, Object, Trace};
use respawn_testkit::drops::Drops;

#[derive(Trace)]
struct Mesh {
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    drops: Drops,
    #[trace(skip)]
    panic_on_drop: bool,
}

impl Object for Mesh {}

impl Drop for Mesh {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
        if self.panic_on_drop {
            panic!("mesh {} fails to drop", self.id);
        }
    }
}

/// The same, but its `Drop` must run on the game thread.
#[derive(Trace)]
struct GlTexture {
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    drops: Drops,
}

impl Object for GlTexture {
    const DROP_ON_GAME_THREAD: bool = true;
}

impl Drop for GlTexture {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

/// Nothing to drop.
#[derive(Trace, Object)]
struct Plain {
    #[trace(skip)]
    n: u32,
}

/// Objects per round: scaled down under Miri.
const N: u32 = if cfg!(miri) { 24 } else { 1000 };

fn heap() -> Heap {
    Heap::with_config(Default::default(), GcSettings { async_purge: true, ..GcSettings::SINGLE_THREADED }).unwrap()
}

fn mesh(heap: &mut Heap, id: usize, drops: &Drops) -> Handle<Mesh> {
    heap.insert(Mesh { id, drops: drops.clone(), panic_on_drop: false })
}

/// Runs heap steps until `drops` holds `n` entries (the purge thread is asynchronous).
fn wait_for_drops(heap: &mut Heap, drops: &Drops, n: usize) {
    let start = Instant::now();
    while drops.total() < n {
        assert!(start.elapsed() < Duration::from_secs(10), "the purge thread dropped {} of {n}", drops.total());
        heap.update(Duration::ZERO);
        thread::sleep(Duration::from_millis(1));
    }
}

/// Waits until the purge thread has handed back every cell it was given (a destructor's
/// record comes before its batch's cells are handed back), then takes them back.
fn settle(heap: &mut Heap) {
    let start = Instant::now();
    while heap.purge_thread_stats().dropped < heap.purge_thread_stats().posted {
        assert!(start.elapsed() < Duration::from_secs(10), "the purge thread does not finish");
        thread::sleep(Duration::from_millis(1));
    }
    heap.update(Duration::ZERO);
}

#[test]
fn destructors_run_on_the_purge_thread_once_each_and_handles_go_stale_at_once() {
    let drops = Drops::default();
    let mut heap = heap();
    let kept = mesh(&mut heap, 0, &drops);
    let _root = heap.root(kept).unwrap();
    let doomed: Vec<_> = (1..=N as usize).map(|id| mesh(&mut heap, id, &drops)).collect();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.purged, N as usize);
    assert!(doomed.iter().all(|&h| heap.get(h).is_none()), "stale at once, whatever the thread does");
    assert!(heap.get(kept).is_some());
    wait_for_drops(&mut heap, &drops, N as usize);
    settle(&mut heap);

    let game = thread::current().id();
    let drops_now = drops.log();
    let mut ids = drops.ids();
    ids.sort_unstable();
    assert_eq!(ids, (1..=N as usize).collect::<Vec<_>>(), "each doomed mesh dropped exactly once, the kept one not");
    assert!(drops_now.iter().all(|&(_, t)| t != game), "every destructor off the game thread");
    let s = heap.purge_thread_stats();
    assert_eq!((s.posted, s.dropped, s.panics, s.running), (N as u64, N as u64, 0, true));
}

#[test]
fn the_cells_come_back_and_are_reused() {
    let drops = Drops::default();
    let mut heap = heap();
    let mut total = 0;
    let rounds = if cfg!(miri) { 3 } else { 20 };
    for round in 0..rounds {
        for id in 0..N {
            mesh(&mut heap, (round * N + id) as usize, &drops);
        }
        heap.collect_garbage(CollectOptions::FULL);
        total += N as usize;
        wait_for_drops(&mut heap, &drops, total);
        settle(&mut heap);
    }
    // Rounds of N: the class never held more than about one round's cells (those in
    // flight at a round's start come back before its inserts need a new slab).
    let stats = heap.stats::<Mesh>().unwrap();
    let granted = stats.memory.granted_slabs as usize * stats.memory.cells_per_slab as usize;
    assert_eq!((stats.len, stats.vacant), (0, granted), "every cell back and vacant");
    let slab = stats.memory.cells_per_slab as usize;
    assert!(
        granted <= (N as usize).next_multiple_of(slab) + slab,
        "cells were not reused: {granted} granted for {N} live at most"
    );
}

#[test]
fn a_panicking_destructor_is_caught_and_counted_on_the_purge_thread() {
    let drops = Drops::default();
    let mut heap = heap();
    for id in 0..10 {
        heap.insert(Mesh { id, drops: drops.clone(), panic_on_drop: id % 3 == 0 });
    }
    heap.collect_garbage(CollectOptions::FULL);
    wait_for_drops(&mut heap, &drops, 10);
    settle(&mut heap);
    let s = heap.purge_thread_stats();
    assert_eq!((s.dropped, s.panics), (10, 4), "ids 0, 3, 6, 9 panicked; the others dropped all the same");
    // The heap goes on: new objects take the cells.
    let again = mesh(&mut heap, 100, &drops);
    assert_eq!(heap.get(again).unwrap().id, 100);
}

#[test]
fn game_thread_classes_and_classes_without_drop_stay_inline() {
    let drops = Drops::default();
    let mut heap = heap();
    for id in 0..10 {
        heap.insert(GlTexture { id: id as usize, drops: drops.clone() });
        let plain = heap.insert(Plain { n: id });
        assert_eq!(heap.get(plain).unwrap().n, id);
    }
    heap.collect_garbage(CollectOptions::FULL);
    // Dropped during the collection itself, on this thread.
    let drops_now = drops.log();
    assert_eq!(drops_now.len(), 10);
    assert!(drops_now.iter().all(|&(_, t)| t == thread::current().id()));
    let s = heap.purge_thread_stats();
    assert_eq!((s.posted, s.running), (0, false), "no object handed over, no thread started");
}

#[test]
fn destroy_now_hands_the_destructor_over_too() {
    let drops = Drops::default();
    let mut heap = heap();
    let m = mesh(&mut heap, 7, &drops);
    assert_eq!(heap.destroy_now(m.raw()).unwrap(), 1);
    assert!(heap.get(m).is_none());
    wait_for_drops(&mut heap, &drops, 1);
    assert_ne!(drops.log()[0].1, thread::current().id());
}

#[test]
fn dropping_the_heap_drops_every_object_handed_over_exactly_once() {
    for _ in 0..if cfg!(miri) { 2 } else { 20 } {
        let drops = Drops::default();
        let mut heap = heap();
        for id in 0..N as usize {
            mesh(&mut heap, id, &drops);
        }
        let kept = mesh(&mut heap, 1000, &drops); // ids below 1000: N ≤ 1000
        let _root = heap.root(kept).unwrap();
        heap.collect_garbage(CollectOptions::FULL);
        // No waiting: the heap drops with the purge thread mid-way (or not yet woken).
        drop(_root);
        drop(heap);
        let mut ids = drops.ids();
        ids.sort_unstable();
        let expected: Vec<usize> = (0..N as usize).chain([1000]).collect();
        assert_eq!(ids, expected, "every mesh dropped once: N by the purge thread, the kept one by the arena");
    }
}

#[test]
fn async_purge_is_read_when_a_class_is_registered() {
    let drops = Drops::default();
    // Registered before the setting is turned on: inline.
    let mut heap = Heap::with_config(Default::default(), GcSettings::SINGLE_THREADED).unwrap();
    heap.register::<Mesh>().unwrap();
    let mut settings = *heap.settings();
    settings.async_purge = true;
    heap.set_settings(settings).unwrap();
    mesh(&mut heap, 1, &drops);
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(drops.total(), 1, "dropped in the collection");
    assert_eq!(heap.purge_thread_stats().posted, 0);
}
