//! The typed view of one class's pool: [`ClassPoolMut`], from [`Pools::class_pool_mut`].
//!
//! [`Pools::spawn_with`] and [`Pools::destroy`] find the class on every call: one
//! `TypeId` compare against the class used last and an index into the pools. A loop that
//! spawns or retires many objects of one class takes the view once and calls the class's
//! pool directly: the arena's [`ClassStore`](respawn_arena::ClassStore) for a pool.

use std::fmt;

use respawn_arena::Handle;
use respawn_gc::Heap;

use crate::class_pool::{ByType, ClassPool, ErasedPool, Typed};
use crate::{PoolConfig, PoolError, PoolStats, Poolable};

/// One class's pool and the heap it serves, borrowed together: spawn and destroy objects
/// of `T` with no class lookup and no indirect call. From [`Pools::class_pool_mut`](crate::Pools::class_pool_mut);
/// a `World` hands out the same view with its own spawn (`World::pool_mut`). A spawn tells
/// the class's spawn listeners once the object is complete, a destroy its end listeners
/// before the hooks run (`Arena::add_spawn_listener`, `Arena::add_end_listener`).
///
/// The operations are the pools' own ([`Pools::spawn_with`](crate::Pools::spawn_with),
/// [`Pools::destroy`](crate::Pools::destroy)), with the same counts, errors and policies.
///
/// # Examples
///
/// ```
/// use respawn_gc::{Heap, Object, Trace};
/// use respawn_pool::{PoolConfig, Poolable, Pools, Policy};
///
/// #[derive(Trace, Object)]
/// struct Spark { heat: f32 }
/// impl Poolable for Spark {
///     fn create() -> Self { Spark { heat: 0.0 } }
///     fn reset(&mut self) { self.heat = 0.0; }
/// }
///
/// let mut pools = Pools::new(Heap::new());
/// pools.add::<Spark>(PoolConfig { policy: Policy::Reuse, ..PoolConfig::ON_DEMAND })?;
/// let mut sparks = pools.class_pool_mut::<Spark>().expect("Spark has a pool");
/// let burst: Vec<_> = (0..100).map(|i| sparks.spawn_with(|s| s.heat = i as f32)).collect::<Result<_, _>>()?;
/// for &s in &burst {
///     sparks.destroy(s)?; // Reuse: reset, and ready for the next spawn
/// }
/// assert!(sparks.get(burst[0]).is_none());
/// assert_eq!((sparks.stats().spawns, sparks.stats().recycled_reuse), (100, 100));
/// # Ok::<(), respawn_pool::PoolError>(())
/// ```
pub struct ClassPoolMut<'a, T: Poolable> {
    pool: Typed<'a, T>,
    heap: &'a mut Heap,
}

impl<T: Poolable> fmt::Debug for ClassPoolMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassPoolMut").field("pool", &self.pool.stats(self.heap)).finish_non_exhaustive()
    }
}

impl<'a, T: Poolable> ClassPoolMut<'a, T> {
    /// The view of `pool`, if it is `T`'s.
    pub(crate) fn new(pool: &'a mut ClassPool, heap: &'a mut Heap) -> Option<Self> {
        Some(Self { pool: pool.typed()?, heap })
    }

    /// Spawns an object: a ready one popped from the pool, or one built inline when none is
    /// ready. `init` runs on it before [`on_spawn`](Poolable::on_spawn). As
    /// [`Pools::spawn_with`](crate::Pools::spawn_with).
    ///
    /// # Errors
    /// [`PoolError::Arena`] when the class's memory is exhausted.
    #[inline(always)]
    pub fn spawn_with(&mut self, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        self.pool.spawn(self.heap, false, init)
    }

    /// [`spawn_with`](Self::spawn_with), refusing at the pool's `max` instead of building
    /// an overflow object. As [`Pools::try_spawn_with`](crate::Pools::try_spawn_with).
    ///
    /// # Errors
    /// [`PoolError::Exhausted`], or [`PoolError::Arena`] when memory is exhausted.
    #[inline]
    pub fn try_spawn_with(&mut self, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        self.pool.spawn(self.heap, true, init)
    }

    /// Takes the object back by the pool's policy; its handles stop resolving at once. As
    /// [`Pools::destroy`](crate::Pools::destroy): an object that owns sub-objects is
    /// released with them, by the one walk the collector makes.
    ///
    /// # Errors
    /// As [`Pools::destroy`](crate::Pools::destroy); nothing changes on an error.
    #[inline(always)]
    pub fn destroy(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        self.pool.destroy::<ByType>(self.heap, h)
    }

    /// The object `h` names, if it resolves.
    #[inline]
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.heap.get(h)
    }

    /// The object `h` names, mutably, if it resolves.
    #[inline]
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.heap.get_mut(h)
    }

    /// The pool's counters.
    pub fn stats(&self) -> PoolStats {
        self.pool.stats(self.heap)
    }

    /// The pool's configuration.
    pub fn config(&self) -> &PoolConfig {
        self.pool.config()
    }

    /// The heap the pool serves.
    pub fn heap(&self) -> &Heap {
        self.heap
    }
}
