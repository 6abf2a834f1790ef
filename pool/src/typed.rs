//! The typed view of one class's pool: [`PoolMut`], from [`Pools::pool_mut`] (and a
//! `World`'s `pool_mut`).
//!
//! [`Pools::spawn_with`] and [`Pools::destroy`] find the class on every call: one
//! `TypeId` compare against the class used last and an index into the pools. A loop that
//! spawns or retires many objects of one class takes the view once and calls the class's
//! pool directly: the arena's [`ClassStore`](respawn_arena::ClassStore) for a pool.

use std::fmt;

use respawn_arena::Handle;
use respawn_gc::Heap;

use crate::class_pool::{ClassPool, ErasedPool, Typed};
use crate::{PoolConfig, PoolError, PoolStats, Poolable};

/// One class's pool and the heap it serves, borrowed together: spawn and destroy objects
/// of `T` with no class lookup and no indirect call. From [`Pools::pool_mut`](crate::Pools::pool_mut),
/// or a `World`'s `pool_mut` (the same view). A spawn tells the class's spawn listeners
/// once the object is complete, a destroy its end listeners before the hooks run
/// (`Heap::add_spawn_listener` and `add_end_listener`; a World's `on_spawn` and `on_destroy`).
///
/// The view spawns as a `World` does: [`spawn`](Self::spawn) and
/// [`spawn_with`](Self::spawn_with) give a handle (an overflow object past `max`, a panic
/// only when the class's memory is exhausted), [`try_spawn`](Self::try_spawn) and
/// [`try_spawn_with`](Self::try_spawn_with) refuse at `max` with an error. Destroys,
/// policies and counts are the pools' own ([`Pools::destroy`](crate::Pools::destroy)).
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
/// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
/// // A burst: the pool found once for all 100 spawns.
/// let burst: Vec<_> = (0..100).map(|i| sparks.spawn_with(|s| s.heat = i as f32)).collect();
/// assert_eq!(sparks.get(burst[7]).unwrap().heat, 7.0);
/// for &s in &burst {
///     sparks.destroy(s)?; // Reuse: reset, and ready for the next spawn
/// }
/// assert!(sparks.get(burst[0]).is_none());
/// assert_eq!((sparks.stats().spawns, sparks.stats().recycled_reuse), (100, 100));
///
/// // The view borrows the pools; once it is gone, their own calls see the same state.
/// assert!(pools.heap().get(burst[99]).is_none());
/// # Ok::<(), respawn_pool::PoolError>(())
/// ```
pub struct PoolMut<'a, T: Poolable> {
    pool: Typed<'a, T>,
    heap: &'a mut Heap,
}

impl<T: Poolable> fmt::Debug for PoolMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolMut").field("pool", &self.pool.stats(self.heap)).finish_non_exhaustive()
    }
}

/// A failed spawn's panic, out of line so that the spawn stays small enough to inline.
#[cold]
#[inline(never)]
fn spawn_failed(class: &str, e: PoolError) -> ! {
    panic!("PoolMut::spawn::<{class}>: {e}")
}

impl<'a, T: Poolable> PoolMut<'a, T> {
    /// The view of `pool`, if it is `T`'s.
    pub(crate) fn new(pool: &'a mut ClassPool, heap: &'a mut Heap) -> Option<Self> {
        Some(Self { pool: pool.typed()?, heap })
    }

    /// Spawns an object: a ready one popped from the pool, or one built inline when none is
    /// ready (a miss). At `max` with nothing ready, an overflow object, as
    /// [`Pools::spawn_with`](crate::Pools::spawn_with).
    ///
    /// # Panics
    /// When the class's memory is exhausted (its reservation, or the object table).
    #[inline]
    pub fn spawn(&mut self) -> Handle<T> {
        self.spawn_with(|_| {})
    }

    /// Spawns an object and runs `init` on it before its [`on_spawn`](Poolable::on_spawn)
    /// hook.
    ///
    /// # Panics
    /// As [`spawn`](Self::spawn).
    #[inline(always)]
    pub fn spawn_with(&mut self, init: impl FnOnce(&mut T)) -> Handle<T> {
        match self.pool.spawn(self.heap, false, init) {
            Ok(h) => h,
            Err(e) => spawn_failed(T::class_name(), e),
        }
    }

    /// Spawns an object, refusing at the pool's `max` instead of building an overflow
    /// object.
    ///
    /// # Errors
    /// [`PoolError::Exhausted`] when the pool holds `max` objects and none is ready;
    /// [`PoolError::Arena`] when the class's memory is exhausted.
    #[inline]
    pub fn try_spawn(&mut self) -> Result<Handle<T>, PoolError> {
        self.try_spawn_with(|_| {})
    }

    /// [`try_spawn`](Self::try_spawn), running `init` on the object before its
    /// [`on_spawn`](Poolable::on_spawn) hook.
    ///
    /// # Errors
    /// As [`try_spawn`](Self::try_spawn).
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
        self.pool.destroy(self.heap, h)
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
