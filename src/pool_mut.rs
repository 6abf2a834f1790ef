//! [`PoolMut`]: the typed view of one class's pool in a [`World`](crate::World), for a loop
//! that spawns or retires many objects of one class.

use std::fmt;

use respawn_arena::Handle;
use respawn_gc::Heap;
use respawn_pool::{ClassPoolMut, PoolConfig, PoolError, PoolStats, Poolable};

use crate::listeners::{notify_ends, Listeners};
use crate::panics::spawn_failed;

/// `T`'s pool in a [`World`](crate::World), borrowed for a run of spawns and destroys:
/// from [`World::pool_mut`](crate::World::pool_mut), as an arena's
/// [`ClassStore`](crate::ClassStore) is for its class.
///
/// [`World::spawn_with`](crate::World::spawn_with) and [`World::destroy`](crate::World::destroy)
/// find `T`'s pool on every call (a `TypeId` compare and an index). The view finds it once
/// and calls it directly. Everything else is the world's: the same policies,
/// counts and errors, and the world's spawn and destroy listeners are told as they are by
/// the world's own calls.
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
    listeners: &'w mut Listeners,
}

impl<T: Poolable> fmt::Debug for PoolMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolMut").field("pool", &self.pool).field("listeners", &self.listeners).finish()
    }
}

impl<'w, T: Poolable> PoolMut<'w, T> {
    pub(crate) fn new(pool: ClassPoolMut<'w, T>, listeners: &'w mut Listeners) -> Self {
        Self { pool, listeners }
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
        let h = match self.pool.spawn_with(init) {
            Ok(h) => h,
            Err(e) => spawn_failed(T::class_name(), e),
        };
        if self.listeners.spawning() {
            self.tell_spawned(h);
        }
        h
    }

    /// Spawns an object, refusing at the pool's `max` instead of building an overflow
    /// object. As [`World::try_spawn`](crate::World::try_spawn).
    ///
    /// # Errors
    /// [`PoolError::Exhausted`], or [`PoolError::Arena`] when memory is exhausted.
    pub fn try_spawn(&mut self) -> Result<Handle<T>, PoolError> {
        let h = self.pool.try_spawn_with(|_| {})?;
        if self.listeners.spawning() {
            self.tell_spawned(h);
        }
        Ok(h)
    }

    #[cold]
    #[inline(never)]
    fn tell_spawned(&mut self, h: Handle<T>) {
        if let Some(object) = self.pool.heap().get(h) {
            self.listeners.spawned(h, object);
        }
    }

    /// Takes the object back by the pool's policy; its handles stop resolving at once. As
    /// [`World::destroy`](crate::World::destroy), destroy listeners included.
    ///
    /// # Errors
    /// As [`World::destroy`](crate::World::destroy); nothing changes on an error.
    #[inline(always)]
    pub fn destroy(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        if self.listeners.destroying() {
            return self.destroy_notifying(h);
        }
        self.pool.destroy(h)
    }

    #[cold]
    #[inline(never)]
    fn destroy_notifying(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        // SAFETY: `notify_ends` calls the heap's methods, and never replaces it.
        notify_ends(self.listeners, unsafe { self.pool.heap_mut() }, h);
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
