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
//! frame time (`PoolCore::idle_window`): of the objects the pool stocks (ready or queued)
//! and has in use, those beyond the most in use at once during the window were not needed
//! during the whole window; the trim drops that many, but never the stock below
//! `capacity`.

use respawn_arena::{CompactCell, DropAll};
use respawn_gc::Heap;

use super::ClassPool;
use crate::{depot, PoolError};

impl ClassPool {
    /// Keeps at most `keep` objects ready or queued for building, and drops the other
    /// ready objects (each once), hands their cells back to the arena and decommits the
    /// class's slabs left empty. Live objects are untouched. Returns how many objects it
    /// dropped.
    ///
    /// # Errors
    /// [`PoolError::Arena`] if the OS refused to decommit a slab: the objects are dropped
    /// and their cells vacant all the same.
    pub(crate) fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError> {
        // The objects the class keeps are ready ones too: out of the class, into the stock.
        let kept = heap.take_kept(self.class);
        let (mut ready, mut queued) = self.core.take_stock(kept);
        let gone = depot::lowest_first(&mut ready, keep, CompactCell::number);
        let gone_queued = depot::lowest_first(&mut queued, keep - ready.len(), CompactCell::number);
        // Kept ready objects checked out again, the lowest cell on top (popped first).
        ready.reverse();
        let overflow = self.core.restock(ready, queued);

        // A panicking destructor does not stop the others, nor the bookkeeping: the first
        // panic goes on once the cells are back and the slabs decommitted.
        let mut drops = DropAll::new();
        let dropped = gone.len() + overflow.len();
        let drop_object = self.core.recipe().drop_fn();
        for cell in gone.into_iter().chain(overflow) {
            let object = self.core.cell(&cell);
            // SAFETY: a ready cell holds a built object of the class the pool alone owns
            // (taken out of the magazines above); the token goes back to the arena right
            // after, so this is the object's one drop.
            drops.run(|| unsafe { drop_object(object) });
            // SAFETY: the pool's map compacted every cell it holds; its heap is alive.
            let back = heap.recycle(unsafe { self.core.map().expand(cell) });
            debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
        }
        for cell in gone_queued {
            // An ended object still in a queued cell (`async_purge`) is dropped first.
            let cell = self.core.vacate(cell);
            // SAFETY: as above.
            let back = heap.recycle(unsafe { self.core.map().expand(cell) });
            debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
        }
        self.recycle_spare(heap);
        self.core.trimmed(dropped);
        let decommitted = heap.decommit_empty_slabs(self.class);
        drop(drops);
        decommitted.map(|_| dropped).map_err(PoolError::from)
    }
}
