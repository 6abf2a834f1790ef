//! [`PoolMut`]: the typed view of one class's pool in a [`World`](crate::World), for a loop
//! that spawns or retires many objects of one class.

use std::fmt;

use respawn_arena::Handle;
use respawn_gc::Heap;
use respawn_pool::{ClassPoolMut, PoolConfig, PoolError, PoolStats, Poolable};

use crate::panics::spawn_failed;

/// `T`'s pool in a [`World`](crate::World), borrowed for a run of spawns and destroys:
/// from [`World::pool_mut`](crate::World::pool_mut), as an arena's
/// [`ClassStore`](crate::ClassStore) is for its class.
///
/// [`World::spawn_with`](crate::World::spawn_with) and [`World::destroy`](crate::World::destroy)
/// find `T`'s pool on every call (a `TypeId` compare and an index). The view finds it once
/// and calls it directly. Everything else is the world's: the same policies,
/// counts and errors, and the class's spawn and destroy listeners are told by the pool,
/// as they are for the world's own calls. (The view is the pool's
/// [`ClassPoolMut`] with the world's spawn: a failed spawn panics, as
/// [`World::spawn_with`](crate::World::spawn_with) does.)
///
/// # Examples
///
/// ```
/// use respawn::{Object, Policy, PoolConfig, Poolable, Trace, World};
///
/// #[derive(Trace, Object)]
/// struct Bullet { pos: [f32; 2], vel: [f32; 2] }
/// impl Poolable for Bullet {
///     fn create() -> Self { Bullet { pos: [0.0; 2], vel: [0.0; 2] } }
/// }
///
/// let config = PoolConfig { policy: Policy::Reuse, ..PoolConfig::PROJECTILES };
/// let mut world = World::builder().pool::<Bullet>(config).build()?;
///
/// // A volley: the pool found once for all 64 spawns.
/// let mut bullets = world.pool_mut::<Bullet>().expect("Bullet has a pool");
/// let volley: Vec<_> = (0..64).map(|i| bullets.spawn_with(|b| b.vel = [i as f32, 300.0])).collect();
/// assert_eq!(bullets.get(volley[3]).unwrap().vel, [3.0, 300.0]);
/// for &b in &volley[..32] {
///     bullets.destroy(b)?;
/// }
/// assert_eq!(bullets.stats().recycled_reuse, 32);
///
/// // The view borrows the world; once it is gone, the world's own calls see the same state.
/// assert!(world.get(volley[0]).is_none() && world.get(volley[63]).is_some());
/// # Ok::<(), respawn::PoolError>(())
/// ```
pub struct PoolMut<'w, T: Poolable> {
    pool: ClassPoolMut<'w, T>,
}

impl<T: Poolable> fmt::Debug for PoolMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolMut").field("pool", &self.pool).finish()
    }
}

impl<'w, T: Poolable> PoolMut<'w, T> {
    pub(crate) fn new(pool: ClassPoolMut<'w, T>) -> Self {
        Self { pool }
    }

    /// Spawns an object: a ready one popped from the pool, or one built inline when none is
    /// ready. As [`World::spawn`](crate::World::spawn).
    ///
    /// # Panics
    /// As [`World::spawn`](crate::World::spawn): when the class's memory is exhausted.
    #[inline]
    pub fn spawn(&mut self) -> Handle<T> {
        self.spawn_with(|_| {})
    }

    /// Spawns an object and runs `init` on it before its `on_spawn` hook. As
    /// [`World::spawn_with`](crate::World::spawn_with).
    ///
    /// # Panics
    /// As [`World::spawn`](crate::World::spawn).
    #[inline(always)]
    pub fn spawn_with(&mut self, init: impl FnOnce(&mut T)) -> Handle<T> {
        match self.pool.spawn_with(init) {
            Ok(h) => h,
            Err(e) => spawn_failed(T::class_name(), e),
        }
    }

    /// Spawns an object, refusing at the pool's `max` instead of building an overflow
    /// object. As [`World::try_spawn`](crate::World::try_spawn).
    ///
    /// # Errors
    /// [`PoolError::Exhausted`], or [`PoolError::Arena`] when memory is exhausted.
    pub fn try_spawn(&mut self) -> Result<Handle<T>, PoolError> {
        self.pool.try_spawn_with(|_| {})
    }

    /// Takes the object back by the pool's policy; its handles stop resolving at once. As
    /// [`World::destroy`](crate::World::destroy), destroy listeners included.
    ///
    /// # Errors
    /// As [`World::destroy`](crate::World::destroy); nothing changes on an error.
    #[inline(always)]
    pub fn destroy(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        self.pool.destroy(h)
    }

    /// The object `h` names, if it resolves.
    #[inline]
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.pool.get(h)
    }

    /// The object `h` names, mutably, if it resolves.
    #[inline]
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.pool.get_mut(h)
    }

    /// The pool's counters (as [`World::pool_stats`](crate::World::pool_stats)).
    pub fn stats(&self) -> PoolStats {
        self.pool.stats()
    }

    /// The pool's configuration.
    pub fn config(&self) -> &PoolConfig {
        self.pool.config()
    }

    /// The world's heap.
    pub fn heap(&self) -> &Heap {
        self.pool.heap()
    }
}
