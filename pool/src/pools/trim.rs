//! Pools that give memory back: trims by hand and the frame upkeep's idle trim.

use std::any::type_name;
use std::time::Duration;

use super::Pools;
use crate::class_pool::ErasedPool;
use crate::{PoolError, PoolStats};

impl Pools {
    /// Keeps at most `n` of `T`'s objects ready (or queued for its workers), drops the
    /// others, hands their cells back to the arena and decommits the class's slabs left
    /// empty (`madvise(MADV_DONTNEED)`): slotmap's `shrink_to_fit`, Unity's pool culling.
    /// Live objects are untouched; the cells kept are the lowest in the class's region, so
    /// the dropped ones empty as many slabs as they can. Returns how many objects it
    /// dropped (also counted in [`PoolStats::trimmed`]).
    ///
    /// Objects a worker is building or holds in its partial magazine are not reached: they
    /// arrive afterwards. A pool below its `low_watermark` grows back at the next
    /// [`maintain`](Self::maintain), as configured.
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `T` has no pool; [`PoolError::Arena`] if the OS refused
    /// to decommit a slab (the objects are dropped and their cells vacant all the same);
    /// [`PoolError::Composite`] for a composite pool, whose trim is not built yet.
    pub fn shrink_pool<T: 'static>(&mut self, n: usize) -> Result<usize, PoolError> {
        let class = self.heap.class_of::<T>().map(|id| id.index());
        let Self { pools, heap, .. } = self;
        let Some(class) = class else { return Err(PoolError::NotPooled(type_name::<T>())) };
        if let Some(Some(pool)) = pools.get_mut(class) {
            return pool.trim(heap, n);
        }
        match self.composites.get_mut(class) {
            // Refused with the reason: composite trims are not built yet.
            Some(composite) => composite.erased_mut().trim(&mut self.heap, n),
            None => Err(PoolError::NotPooled(type_name::<T>())),
        }
    }

    /// Drops every ready object of `T`'s pool (Unity's `ObjectPool.Clear`):
    /// [`shrink_pool(0)`](Self::shrink_pool). Live objects are untouched.
    ///
    /// # Errors
    /// As [`shrink_pool`](Self::shrink_pool).
    pub fn clear_pool<T: 'static>(&mut self) -> Result<usize, PoolError> {
        self.shrink_pool::<T>(0)
    }

    /// [`maintain`](Self::maintain) at the end of a frame of `dt`: the idle trim's clocks
    /// advance by `dt`, and a pool with [`PoolConfig::idle_trim`](crate::PoolConfig) whose
    /// window closed drops the objects it did not need (respawn's `World::end_frame_with`
    /// calls it).
    pub fn maintain_for(&mut self, dt: Duration) {
        self.maintain();
        for pool in self.pools.iter_mut().flatten() {
            pool.idle_upkeep(&mut self.heap, dt);
        }
    }

    /// Fills in the figures a pool's stats take from the heap: its class's committed bytes.
    pub(crate) fn with_memory(&self, mut stats: PoolStats, class: usize) -> PoolStats {
        let alloc = self.heap.arena().allocator();
        let id = respawn_arena::ClassId::from_index(class as u16);
        stats.committed_bytes = alloc.stats(id).map_or(0, |m| m.committed_bytes);
        stats
    }
}
