//! Giving a World pool's memory back (Unity's `ObjectPool.Clear`, pool culling): a trim
//! drops ready objects beyond what it keeps, hands their cells back to the arena, and
//! decommits the slabs that leave empty.
//!
//! What a trim reaches: the game thread's magazines, the depot's published magazines and
//! the cells queued for the workers. It keeps the lowest-numbered cells (the front of the
//! class's region: the cells it drops are the ones most likely to empty a slab), built
//! objects before queued cells. Objects a worker holds in its partial magazine, or is
//! building, arrive later and are kept until the next trim.
//!
//! The idle trim closes a window every [`PoolConfig::idle_trim`](crate::PoolConfig) of
//! frame time: `peak` is the most objects in use at once during the window (the spawn path
//! keeps it, in place of the pool's all-time high water, which the window folds in when
//! it closes). Of the objects the pool stocks (ready or queued) and has in use, those
//! beyond `peak` were not needed during the whole window; the trim drops that many, but
//! never the stock below `capacity`.

use std::time::Duration;

use respawn_arena::{CompactCell, DropAll};
use respawn_gc::Heap;

use super::{recycle_spare, ClassPool};
use crate::{depot, PoolError, Poolable};

/// A pool's trim state: the idle window and its tallies.
#[derive(Debug, Default)]
pub(crate) struct TrimState {
    /// Frame time since the idle window opened.
    elapsed: Duration,
    /// The most objects in use at once since the window opened (kept by `count_spawned`).
    pub(super) peak: usize,
    /// Ready objects trims dropped.
    pub(super) trimmed: u64,
}

impl<T: Poolable> ClassPool<T> {
    /// Keeps at most `keep` objects ready or queued for building, and drops the other
    /// ready objects (each once), hands their cells back to the arena and decommits the
    /// class's slabs left empty. Live objects are untouched. Returns how many objects it
    /// dropped.
    ///
    /// # Errors
    /// [`PoolError::Arena`] if the OS refused to decommit a slab: the objects are dropped
    /// and their cells vacant all the same.
    pub(crate) fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError> {
        let mut ready = Vec::with_capacity(self.local());
        let local = self.local();
        ready.extend(std::iter::from_fn(|| self.magazines.loaded.pop()));
        ready.extend(std::iter::from_fn(|| self.magazines.previous.pop()));
        // The magazines' objects leave the game thread's hand (the kept ones come back).
        self.depot.count_in_hand(-(local as isize));
        self.depot.take_published(&mut ready);
        let mut queued = Vec::new();
        self.depot.take_queued(&mut queued);

        let gone = depot::lowest_first(&mut ready, keep, CompactCell::number);
        let gone_queued = depot::lowest_first(&mut queued, keep - ready.len(), CompactCell::number);

        // Kept ready objects back into the hand, the lowest cell on top (popped first).
        self.depot.count_in_hand(ready.len() as isize);
        let mut overflow = Vec::new();
        for cell in ready.into_iter().rev() {
            if let Err(cell) = self.push_ready(cell) {
                self.depot.count_in_hand(-1);
                overflow.push(cell);
            }
        }
        if !queued.is_empty() {
            self.depot.request_growth(queued);
        }

        // A panicking destructor does not stop the others, nor the bookkeeping: the first
        // panic goes on once the cells are back and the slabs decommitted.
        let mut drops = DropAll::new();
        let arena = heap.arena_mut_bypassing_gc();
        let dropped = gone.len() + overflow.len();
        for cell in gone.into_iter().chain(overflow) {
            let object = self.cell(&cell).cast::<T>();
            // SAFETY: a ready cell holds a built `T` the pool alone owns (taken out of the
            // magazines above); the token goes back to the arena right after, so this is
            // the object's one drop.
            drops.run(|| unsafe { std::ptr::drop_in_place(object.as_ptr()) });
            // SAFETY: the pool's map compacted every cell it holds; its heap is alive.
            let back = arena.recycle(unsafe { self.map.expand(cell) });
            debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
        }
        for cell in gone_queued {
            // An ended object still in a queued cell (`async_purge`) is dropped here.
            // SAFETY: a queued cell is the pool's alone (taken from the queue above); an
            // occupied one holds its class's ended object, dropped once as it comes back
            // vacant.
            let (cell, panicked) = unsafe { depot::drop_occupant::<T, CompactCell>(cell, &self.map) };
            self.depot.dropped(panicked, false);
            // SAFETY: as above.
            let back = arena.recycle(unsafe { self.map.expand(cell) });
            debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
        }
        recycle_spare::<T>(&self.depot, &self.map, heap);
        self.trim.trimmed += dropped as u64;
        let decommitted = heap.arena_mut_bypassing_gc().decommit_empty_slabs(self.class);
        drop(drops);
        decommitted.map(|_| dropped).map_err(PoolError::from)
    }

    /// The idle trim, at the frame upkeep: `dt` of frame time passed. See the module docs.
    pub(crate) fn idle_upkeep(&mut self, heap: &mut Heap, dt: Duration) {
        let Some(window) = self.config.idle_trim else { return };
        // Stops at `Duration::MAX`: a caller's clock may hand any `dt`.
        self.trim.elapsed = self.trim.elapsed.saturating_add(dt);
        if self.trim.elapsed < window {
            return;
        }
        let d = self.depot.snapshot();
        let stock = self.local() + d.published + d.lag;
        let unused = (stock + self.live()).saturating_sub(self.trim.peak);
        let excess = stock.saturating_sub(self.config.capacity).min(unused);
        if excess > 0 {
            // Refused advice leaves slabs committed; the next trim tries them again.
            let _ = self.trim(heap, stock - excess);
        }
        self.tally.high_water = self.tally.high_water.max(self.trim.peak);
        self.trim.peak = self.live();
        self.trim.elapsed = Duration::ZERO;
    }
}
