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
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 100.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig { max: 1, ..PoolConfig::ON_DEMAND })?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let a = sparks.spawn();
    /// assert_eq!(sparks.get(a).unwrap().heat, 100.0);
    /// let b = sparks.spawn(); // past `max`: an overflow object, outside the pool
    /// assert!(sparks.get(b).is_some());
    /// assert_eq!((sparks.stats().spawns, sparks.stats().overflow), (2, 1));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    #[inline]
    pub fn spawn(&mut self) -> Handle<T> {
        self.spawn_with(|_| {})
    }

    /// Spawns an object and runs `init` on it before its [`on_spawn`](Poolable::on_spawn)
    /// hook.
    ///
    /// # Panics
    /// As [`spawn`](Self::spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Rocket { fuel: f32, armed: bool }
    /// impl Poolable for Rocket {
    ///     fn create() -> Self { Rocket { fuel: 0.0, armed: false } }
    ///     // Runs after `spawn_with`'s initialiser.
    ///     fn on_spawn(&mut self) { self.armed = self.fuel > 0.0; }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Rocket>(PoolConfig::ON_DEMAND)?;
    /// let mut rockets = pools.pool_mut::<Rocket>().expect("Rocket has a pool");
    /// let fueled = rockets.spawn_with(|r| r.fuel = 30.0);
    /// let empty = rockets.spawn();
    /// assert!(rockets.get(fueled).unwrap().armed);
    /// assert!(!rockets.get(empty).unwrap().armed);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, PoolError, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig { max: 2, ..PoolConfig::ON_DEMAND })?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let first = sparks.try_spawn()?;
    /// sparks.try_spawn()?;
    /// assert!(matches!(sparks.try_spawn(), Err(PoolError::Exhausted { max: 2, .. })));
    ///
    /// sparks.destroy(first)?; // `Reuse`: ready again, so the next one succeeds
    /// assert!(sparks.try_spawn().is_ok());
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline]
    pub fn try_spawn(&mut self) -> Result<Handle<T>, PoolError> {
        self.try_spawn_with(|_| {})
    }

    /// [`try_spawn`](Self::try_spawn), running `init` on the object before its
    /// [`on_spawn`](Poolable::on_spawn) hook.
    ///
    /// # Errors
    /// As [`try_spawn`](Self::try_spawn).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, PoolError, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig { max: 1, ..PoolConfig::ON_DEMAND })?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let spark = sparks.try_spawn_with(|s| s.heat = 5.0)?;
    /// assert_eq!(sparks.get(spark).unwrap().heat, 5.0);
    ///
    /// let mut ran = false;
    /// assert!(sparks.try_spawn_with(|_| ran = true).is_err(), "at `max`");
    /// assert!(!ran, "refused: no object, no `init`");
    /// # Ok::<(), PoolError>(())
    /// ```
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
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, PoolError, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    ///     fn reset(&mut self) { self.heat = 0.0; }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig::ON_DEMAND)?; // `Reuse`
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let spark = sparks.spawn_with(|s| s.heat = 9.0);
    /// sparks.destroy(spark)?; // reset, and ready for the next spawn
    /// assert!(sparks.get(spark).is_none(), "stale at once");
    /// assert!(matches!(sparks.destroy(spark), Err(PoolError::AlreadyReleased)));
    ///
    /// let next = sparks.spawn(); // the same object, reset
    /// assert_eq!(sparks.get(next).unwrap().heat, 0.0);
    /// assert_eq!(sparks.stats().recycled_reuse, 1);
    /// # Ok::<(), PoolError>(())
    /// ```
    #[inline(always)]
    pub fn destroy(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        self.pool.destroy(self.heap, h)
    }

    /// The object `h` names, if it resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig::ON_DEMAND)?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let spark = sparks.spawn_with(|s| s.heat = 40.0);
    /// assert_eq!(sparks.get(spark).map(|s| s.heat), Some(40.0));
    /// sparks.destroy(spark)?;
    /// assert!(sparks.get(spark).is_none(), "a stale handle resolves to nothing");
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    #[inline]
    pub fn get(&self, h: Handle<T>) -> Option<&T> {
        self.heap.get(h)
    }

    /// The object `h` names, mutably, if it resolves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig::ON_DEMAND)?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let spark = sparks.spawn();
    /// if let Some(s) = sparks.get_mut(spark) {
    ///     s.heat += 15.0;
    /// }
    /// assert_eq!(sparks.get(spark).unwrap().heat, 15.0);
    /// sparks.destroy(spark)?;
    /// assert!(sparks.get_mut(spark).is_none());
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    #[inline]
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut T> {
        self.heap.get_mut(h)
    }

    /// The pool's counters.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig::ON_DEMAND)?; // no workers, `Reuse`
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let first = sparks.spawn(); // nothing ready: built inline, a miss
    /// sparks.destroy(first)?; // reset and kept
    /// sparks.spawn(); // the kept one: a hit
    ///
    /// let stats = sparks.stats();
    /// assert_eq!((stats.spawns, stats.hits, stats.misses), (2, 1, 1));
    /// assert_eq!((stats.in_use, stats.recycled_reuse), (1, 1));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn stats(&self) -> PoolStats {
        self.pool.stats(self.heap)
    }

    /// The pool's configuration.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{Policy, PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let config = PoolConfig { max: 64, policy: Policy::Purge, ..PoolConfig::ON_DEMAND };
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(config)?;
    /// let sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// assert_eq!(sparks.config(), &config);
    /// assert_eq!(sparks.config().policy, Policy::Purge);
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn config(&self) -> &PoolConfig {
        self.pool.config()
    }

    /// The heap the pool serves.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    /// use respawn_pool::{PoolConfig, Poolable, Pools};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    /// impl Poolable for Spark {
    ///     fn create() -> Self { Spark { heat: 0.0 } }
    /// }
    ///
    /// let mut pools = Pools::new(Heap::new());
    /// pools.add::<Spark>(PoolConfig::ON_DEMAND)?;
    /// let mut sparks = pools.pool_mut::<Spark>().expect("Spark has a pool");
    /// let spark = sparks.spawn();
    /// // The heap's reads, with the view still held.
    /// assert_eq!(sparks.heap().len::<Spark>(), 1);
    /// assert!(sparks.heap().contains(spark));
    /// # Ok::<(), respawn_pool::PoolError>(())
    /// ```
    pub fn heap(&self) -> &Heap {
        self.heap
    }
}
