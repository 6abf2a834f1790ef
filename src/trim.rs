//! Pools that give memory back, on the [`World`]: trims by hand. (The idle trim runs in
//! [`World::end_frame_with`], configured by [`PoolConfig::idle_trim`](respawn_pool::PoolConfig).)

use respawn_pool::PoolError;

use crate::World;

impl World {
    /// Keeps at most `n` of `T`'s objects ready (or queued for its workers) and drops the
    /// others: their cells go back to the class, and its slabs left without an object are
    /// decommitted (`madvise(MADV_DONTNEED)`), so a world whose peak has passed does not
    /// keep the peak's memory (slotmap's `shrink_to_fit`, Unity's pool culling). Live
    /// objects and their handles are untouched; the cells kept are the lowest of the
    /// class's region. Returns how many objects it dropped ([`PoolStats::trimmed`](respawn_pool::PoolStats::trimmed);
    /// [`PoolStats::committed_bytes`](respawn_pool::PoolStats::committed_bytes) shows the
    /// memory fall).
    ///
    /// Objects a worker is building, or holds in its partial magazine, arrive afterwards.
    /// A pool below its `low_watermark` grows back at the next [`end_frame`](Self::end_frame),
    /// as configured.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn::{Object, PoolConfig, Poolable, Trace, World};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: [f32; 8] }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: [0.0; 8] } }
    /// }
    ///
    /// // `ON_DEMAND`: no workers, `Reuse` (released objects stay ready).
    /// let mut world = World::builder().pool::<Spark>(PoolConfig::ON_DEMAND).build()?;
    /// let keep = world.spawn::<Spark>();
    /// let burst: Vec<_> = (0..10_000).map(|_| world.spawn::<Spark>()).collect();
    /// for h in burst {
    ///     world.destroy(h)?;
    /// }
    /// let peak = world.pool_stats::<Spark>().unwrap().committed_bytes;
    ///
    /// assert_eq!(world.shrink_pool::<Spark>(100)?, 9_900);
    /// let stats = world.pool_stats::<Spark>().unwrap();
    /// assert_eq!((stats.ready, stats.in_use, stats.trimmed), (100, 1, 9_900));
    /// assert!(stats.committed_bytes < peak / 4, "the burst's slabs went back");
    /// assert!(world.get(keep).is_some());
    ///
    /// assert_eq!(world.clear_pool::<Spark>()?, 100);
    /// # Ok::<(), respawn::PoolError>(())
    /// ```
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `T` has no pool; [`PoolError::Arena`] if the OS refused
    /// to decommit a slab (the objects are dropped and their cells vacant all the same).
    pub fn shrink_pool<T: 'static>(&mut self, n: usize) -> Result<usize, PoolError> {
        self.pools_mut().shrink_pool::<T>(n)
    }

    /// Drops every ready object of `T`'s pool (Unity's `ObjectPool.Clear`) and gives back
    /// the slabs left empty: [`shrink_pool(0)`](Self::shrink_pool). Live objects are
    /// untouched.
    ///
    /// # Errors
    /// As [`shrink_pool`](Self::shrink_pool).
    pub fn clear_pool<T: 'static>(&mut self) -> Result<usize, PoolError> {
        self.pools_mut().clear_pool::<T>()
    }
}
