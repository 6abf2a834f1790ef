//! Every class's pool over one heap.

use std::any::type_name;
use std::fmt;
use std::time::{Duration, Instant};

use respawn_arena::{ArenaError, ClassId, DropAll, Handle, RawHandle};
use respawn_gc::{Heap, Object};

use crate::class_pool::{ClassPool, Create, ErasedPool};
use crate::composite::Composites;
use crate::error::refusal;
use crate::{Policy, PoolConfig, PoolError, PoolMut, PoolStats, Poolable};

mod trim;

/// A [`Heap`] with a pool per pooled class: the engine under respawn's `World`.
///
/// - [`add`](Self::add) gives a class a pool (validated [`PoolConfig`], its class's ended cells,
///   its workers, precreation of `capacity` objects).
/// - [`spawn_with`](Self::spawn_with) pops a ready object (a hit: no construction, no allocation on
///   this thread), or builds one inline (a miss, counted, and the workers are asked to
///   grow the pool).
/// - [`destroy`](Self::destroy) takes an object back by its class's [`Policy`]; handles to
///   it stop resolving at once whatever the policy.
/// - [`maintain`](Self::maintain) once a frame hands cells back and wakes the workers.
///
/// Classes without a pool work too: `insert`ed objects live in the heap, are collected, and
/// `destroy` marks them as garbage (the `Default` policy).
///
/// The pools own the heap: dropping them joins every worker and drops every ready object
/// before the heap (and its memory) goes.
///
/// Needs the `world` feature (on by default).
pub struct Pools {
    /// By class index; `None` for classes without a pool.
    /// A typed call (`spawn`, `destroy`) finds `T`'s class in the arena's class cache
    /// ([`cached_class`](respawn_arena::Arena::cached_class); a pool's spawn or destroy
    /// caches it): one `TypeId` compare. That is always `T`'s own class, so the pool at its
    /// index, if any, is `T`'s; classes are never unregistered, so it never goes stale.
    pools: Vec<Option<ClassPool>>,
    /// The composite pools ([`add_composite`](Self::add_composite)), by owner class: apart
    /// from `pools`, so a typed call that finds a pool there never meets a composite.
    pub(crate) composites: Composites,
    pub(crate) heap: Heap,
    /// Spawns of a class without a pool refuse ([`set_require_pools`](Self::set_require_pools)).
    require_pools: bool,
    /// Spawns of a class without a pool, each built on the calling thread.
    unpooled_spawns: u64,
}

/// Why [`Pools::reuse`] did not spawn, with the initialiser it gives back.
enum NotReused<F> {
    /// `T`'s pool is the cached class's (at this index), and its class keeps nothing.
    NothingKept(F, usize),
    /// `T`'s class is not in the arena's cache, or has no pool.
    NotCached(F),
}

impl fmt::Debug for Pools {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Pools").field("pools", &self.stats()).field("heap", &self.heap).finish()
    }
}

impl Pools {
    /// Pools over `heap` (none yet).
    pub fn new(heap: Heap) -> Self {
        Self { pools: Vec::new(), composites: Composites::default(), heap, require_pools: false, unpooled_spawns: 0 }
    }

    /// Whether a spawn of a class without a pool ([`spawn_with`](Self::spawn_with),
    /// [`try_spawn_with`](Self::try_spawn_with)) is refused with [`PoolError::NotPooled`]
    /// (`true`) or builds the object on the calling thread with `T::create` (`false`, the
    /// default). Turn it on to make sure every class a game spawns has its pool: a missing
    /// one otherwise shows only as [`unpooled_spawns`](Self::unpooled_spawns) and as
    /// construction on the game thread.
    pub fn set_require_pools(&mut self, on: bool) {
        self.require_pools = on;
    }

    /// Whether spawns of classes without a pool are refused (see
    /// [`set_require_pools`](Self::set_require_pools)).
    pub fn requires_pools(&self) -> bool {
        self.require_pools
    }

    /// How many objects were spawned of classes without a pool: each built on the calling
    /// thread by `T::create`, none precreated. Nonzero in a game that means to pool
    /// everything it spawns names a class missing its pool.
    pub fn unpooled_spawns(&self) -> u64 {
        self.unpooled_spawns
    }

    /// The heap.
    pub fn heap(&self) -> &Heap {
        &self.heap
    }

    /// The heap, mutably. Objects of pooled classes must still be created and ended
    /// through the pools (`spawn`, `insert`, `destroy`) for the pools' counts to hold;
    /// anything else is sound but uncounted.
    ///
    /// # Safety
    /// The caller must not replace the heap (`mem::swap`, `mem::replace`, `mem::take`, an
    /// assignment through the reference): the pools' cells, and the objects their workers
    /// are building in them, belong to this heap's arena, and the pools activate them into it
    /// unchecked.
    ///
    /// ```compile_fail
    /// # use respawn_pool::Pools;
    /// # use respawn_gc::Heap;
    /// fn replace(pools: &mut Pools) {
    ///     // error[E0133]: call to unsafe function
    ///     *pools.heap_mut() = Heap::new();
    /// }
    /// ```
    pub unsafe fn heap_mut(&mut self) -> &mut Heap {
        &mut self.heap
    }

    /// Gives `T` a pool built by `T::create`.
    ///
    /// # Errors
    /// [`PoolError::Config`] for an invalid configuration, [`PoolError::AlreadyPooled`], or
    /// the heap's refusal to register `T`.
    pub fn add<T: Poolable>(&mut self, config: PoolConfig) -> Result<(), PoolError> {
        self.add_pool::<T>(config, None)
    }

    /// Gives `T` a pool whose objects `create` builds (on the workers and on misses).
    ///
    /// # Errors
    /// As [`add`](Self::add).
    pub fn add_with<T: Poolable>(
        &mut self,
        config: PoolConfig,
        create: impl Fn() -> T + Send + Sync + 'static,
    ) -> Result<(), PoolError> {
        self.add_pool::<T>(config, Some(Box::new(create)))
    }

    /// [`add_with`](Self::add_with), the constructor `None` for `T::create`.
    fn add_pool<T: Poolable>(&mut self, config: PoolConfig, create: Option<Create<T>>) -> Result<(), PoolError> {
        config.validate().map_err(|e| PoolError::Config(e.in_class(T::class_name())))?;
        if self.heap.class_of::<T>().is_none() {
            let slab = crate::config::pooled_slabs(self.heap.arena().config().slab, &config);
            self.heap.register_with::<T>(slab)?;
        }
        let class = self.class_id::<T>()?;
        if self.class_pooled(class.index()) {
            return Err(PoolError::AlreadyPooled(T::class_name()));
        }
        if self.composites.is_part(class) {
            let reason = "it is a part of a composite: parts take cells from their class's store, not a pool";
            return Err(PoolError::Composite { class: T::class_name(), reason });
        }
        let pool = ClassPool::new::<T>(&mut self.heap, class, config, create)?;
        if self.pools.len() <= class.index() {
            self.pools.resize_with(class.index() + 1, || None);
        }
        self.pools[class.index()] = Some(pool);
        Ok(())
    }

    /// `T`'s class id, registering `T` with the collector if needed (with the arena's slab
    /// configuration: a class the pools register has [`pooled_slabs`](crate::config::pooled_slabs)).
    fn class_id<T: Object>(&mut self) -> Result<ClassId, PoolError> {
        Ok(self.heap.class_id::<T>()?)
    }

    /// The typed view of `T`'s pool, if it has one: [`spawn_with`](PoolMut::spawn_with)
    /// and [`destroy`](PoolMut::destroy) for a run of calls on one class, with the
    /// class found once, here, instead of on every call.
    #[inline]
    pub fn pool_mut<T: Poolable>(&mut self) -> Option<PoolMut<'_, T>> {
        let class = self.class_index::<T>();
        let Self { pools, heap, .. } = self;
        PoolMut::new(pools.get_mut(class)?.as_mut()?, heap)
    }

    /// Whether `T` has a pool (a composite pool included).
    pub fn is_pooled<T: 'static>(&self) -> bool {
        self.heap.class_of::<T>().is_some_and(|id| self.class_pooled(id.index()))
    }

    /// Whether the class at `class` has a pool or a composite pool.
    pub(crate) fn class_pooled(&self, class: usize) -> bool {
        self.pools.get(class).is_some_and(Option::is_some) || self.composites.get(class).is_some()
    }

    /// The pool of the class at `class`, plain or composite.
    fn erased_of(&self, class: usize) -> Option<&dyn ErasedPool> {
        match self.pools.get(class) {
            Some(Some(pool)) => Some(pool),
            _ => self.composites.get(class).map(|c| c.erased() as &dyn ErasedPool),
        }
    }

    /// Every pool, plain and composite, type-erased.
    fn erased_all(&self) -> impl Iterator<Item = &dyn ErasedPool> {
        let composites = self.composites.iter().map(|c| c.erased() as &dyn ErasedPool);
        self.pools.iter().flatten().map(|p| p as &dyn ErasedPool).chain(composites)
    }

    /// `T`'s pool configuration, if it has a pool.
    pub fn config<T: 'static>(&self) -> Option<&PoolConfig> {
        let id = self.heap.class_of::<T>()?;
        self.erased_of(id.index()).map(|p| p.config())
    }

    /// Spawns an object of `T`: pops a ready one from its pool, or builds one inline with
    /// `T::create` when none is ready (a miss) or `T` has no pool (counted in
    /// [`unpooled_spawns`](Self::unpooled_spawns)). `init` runs on it before
    /// [`on_spawn`](Poolable::on_spawn).
    ///
    /// At `max` with nothing ready, the object is built anyway (an *overflow* object,
    /// counted in [`PoolStats::overflow`]) and its cell leaves the pool when it is released,
    /// so the pool shrinks back to `max`: a game keeps running when a pool is undersized.
    /// Use [`try_spawn_with`](Self::try_spawn_with) to be refused instead.
    ///
    /// # Errors
    /// [`PoolError::Arena`] when the class's memory is exhausted (its reservation, or the
    /// object table); [`PoolError::NotPooled`] if `T` has no pool and the pools are
    /// [required](Self::set_require_pools).
    #[inline(always)]
    pub fn spawn_with<T: Poolable>(&mut self, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        match self.reuse(init) {
            Ok(h) => Ok(h),
            Err(NotReused::NothingKept(init, class)) => self.spawn_ready(class, init),
            Err(NotReused::NotCached(init)) => self.spawn_in(false, init),
        }
    }

    /// Like [`spawn_with`](Self::spawn_with), but refuses at `max`.
    ///
    /// # Errors
    /// [`PoolError::Exhausted`] when the pool holds `max` objects and none is ready;
    /// otherwise as `spawn_with`.
    pub fn try_spawn_with<T: Poolable>(&mut self, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        self.spawn_in(true, init)
    }

    /// The spawn of an object of `T`'s class, cached, that keeps one (`Reuse`):
    /// one `TypeId` compare, one index, and no call but `init` and `on_spawn`, so the
    /// caller pays no frame for it. Gives `init` back for every other spawn, with what it
    /// found.
    #[inline(always)]
    fn reuse<T: Poolable, F: FnOnce(&mut T)>(&mut self, init: F) -> Result<Handle<T>, NotReused<F>> {
        let Some(class) = self.heap.arena().cached_class::<T>() else {
            return Err(NotReused::NotCached(init));
        };
        let Self { pools, heap, .. } = self;
        let Some(Some(pool)) = pools.get_mut(class.index()) else {
            return Err(NotReused::NotCached(init));
        };
        // SAFETY: `cached_class` names `T`'s class, and the pool at a class's index is that class's.
        let mut pool = unsafe { pool.typed_unchecked::<T>() };
        pool.reuse(heap, init).map_err(|init| NotReused::NothingKept(init, class.index()))
    }

    /// A spawn from `T`'s pool, the cached class's, which kept nothing: a ready object,
    /// else one built inline.
    #[inline(never)]
    fn spawn_ready<T: Poolable>(&mut self, class: usize, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        let Self { pools, heap, .. } = self;
        match pools.get_mut(class) {
            // SAFETY: `class` is `T`'s, as in `reuse`, which found this pool there.
            Some(Some(pool)) => unsafe { pool.typed_unchecked::<T>() }.spawn_ready(heap, false, init),
            _ => unreachable!("`reuse` found the cached class's pool"),
        }
    }

    /// A spawn neither [`reuse`](Self::reuse) nor [`spawn_ready`](Self::spawn_ready) takes:
    /// `T`'s class is not cached, has no pool or a composite one, or the spawn is strict.
    #[inline(never)]
    fn spawn_in<T: Poolable>(&mut self, strict: bool, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        let class = self.class_index::<T>();
        // Split borrows: the pool and the heap are distinct fields.
        let Self { pools, heap, .. } = self;
        if let Some(Some(pool)) = pools.get_mut(class) {
            // SAFETY: `class` is `T`'s (`class_index` names `T`'s class), and the
            // pool at a class's index is that class's.
            return unsafe { pool.typed_unchecked::<T>() }.spawn(heap, strict, init);
        }
        if let Some(composite) = self.composites.get_mut(class) {
            return composite.spawn_as(&mut self.heap, strict, init);
        }
        self.spawn_unpooled(init)
    }

    /// A spawn of a class without a pool: built here by `T::create` and counted, or
    /// refused if the pools are required. Out of line, as the composite's spawn: the pooled
    /// spawn inlined into its callers keeps only its own path.
    #[cold]
    #[inline(never)]
    fn spawn_unpooled<T: Poolable>(&mut self, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        if self.require_pools {
            return Err(PoolError::NotPooled(T::class_name()));
        }
        let mut value = T::create();
        init(&mut value);
        value.on_spawn();
        let h = self.heap.try_insert(value).map_err(|r| PoolError::Arena(r.error))?;
        self.unpooled_spawns += 1;
        self.heap.notify_spawn(h.raw())?;
        Ok(h)
    }

    /// `T`'s class index, or `usize::MAX` if `T` is not registered yet: one compare when
    /// the arena's class cache holds `T`'s class, else the directory.
    #[inline(always)]
    fn class_index<T: 'static>(&self) -> usize {
        match self.heap.arena().cached_class::<T>() {
            Some(id) => id.index(),
            None => self.find_class::<T>(),
        }
    }

    /// [`class_index`](Self::class_index) through the directory: `T`'s class is not
    /// cached. (The pool's call that follows caches it.)
    #[cold]
    #[inline(never)]
    fn find_class<T: 'static>(&self) -> usize {
        self.heap.class_of::<T>().map_or(usize::MAX, ClassId::index)
    }

    /// Places `value` in the heap as a plain object (counted in its pool's `in_use` if its
    /// class has one; its cell joins the pool when it ends), and tells its class's spawn
    /// listeners.
    ///
    /// # Errors
    /// [`PoolError::Arena`] when the class's memory is exhausted.
    pub fn insert<T: Object>(&mut self, value: T) -> Result<Handle<T>, PoolError> {
        let h = self.heap.try_insert(value).map_err(|r| PoolError::Arena(r.error))?;
        let class = usize::from(self.heap.table().resolve_live(h.raw())?.class());
        if let Some(Some(pool)) = self.pools.get_mut(class) {
            pool.note_inserted(&mut self.heap);
        } else if let Some(composite) = self.composites.get_mut(class) {
            composite.erased_mut().note_inserted(&mut self.heap);
        }
        self.heap.notify_spawn(h.raw())?;
        Ok(h)
    }

    /// Takes the object back by its class's policy (classes without a pool: `Default`):
    ///
    /// | policy | now | later |
    /// |---|---|---|
    /// | `Default` | `on_release`; it and its sub-objects made `Garbage` | the next GC purges them; their cells go back to their pools and are rebuilt by workers |
    /// | `Purge` | `on_release`; it and its sub-objects destroyed (`destroy_now`); cells back to the pools | workers rebuild them |
    /// | `Reuse` | `on_release`, its sub-objects destroyed, `reset`; back among the ready objects | — |
    ///
    /// Handles to the object stop resolving at once in every case.
    ///
    /// # Errors
    /// Nothing changes on: [`PoolError::Stale`]; [`PoolError::AlreadyReleased`] for a
    /// handle whose object was released already (flags and generation tell, in O(1));
    /// [`PoolError::Arena`] with [`ArenaError::WrongClass`], [`ArenaError::Rooted`] or
    /// [`ArenaError::Permanent`] (for the object or one of its sub-objects).
    #[inline]
    pub fn destroy<T: 'static>(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        // The typed path: `T`'s class is cached (one compare), or the handle's index
        // names it (the table's directory); the class's pool, if it is `T`'s, releases the
        // object with one resolve, which also checks that the handle lies in the class.
        let class = match self.heap.arena().cached_class::<T>() {
            Some(id) => Some(id.index()),
            None => self.pooled_class_of(h),
        };
        if let Some(Some(pool)) = class.and_then(|class| self.pools.get_mut(class)) {
            // `cached_class` and `pooled_class_of` name `T`'s class, whose pool this is: its
            // destroy is `T`'s own code, hooks inlined.
            return pool.destroy_erased(&mut self.heap, h.raw());
        }
        self.destroy_checked(h)
    }

    /// `T`'s class when the cache does not hold it: the one whose range holds `h`, if its
    /// pool is `T`'s (the pool's destroy then caches it).
    #[inline(never)]
    fn pooled_class_of<T: 'static>(&self, h: Handle<T>) -> Option<usize> {
        let class = usize::from(self.heap.table().class_at(h.index())?);
        let pool = self.pools.get(class)?.as_ref()?;
        pool.is::<T>().then_some(class)
    }

    /// The checked release: a class without a pool (a composite's, or none), or a handle
    /// that is not of `T`'s pooled class. Resolves the handle to tell the errors apart,
    /// then leaves the one walk down the object's sub-objects to the collector
    /// ([`Heap::subtree`](respawn_gc::Heap::subtree)), inside the pool's release. (An
    /// owner of sub-objects in `T`'s pool takes the pool's own checked release.)
    #[cold]
    #[inline(never)]
    fn destroy_checked<T: 'static>(&mut self, h: Handle<T>) -> Result<(), PoolError> {
        let raw = h.raw();
        let class = self.check_class::<T>(raw)?;
        match self.pools.get_mut(class) {
            Some(Some(pool)) => {
                debug_assert!(pool.is::<T>(), "`check_class` found `T`'s class, whose pool this is");
                pool.release_erased(&mut self.heap, raw)
            }
            _ if self.composites.get(class).is_some() => {
                let composite = self.composites.get_mut(class).expect("looked up just now");
                composite.erased_mut().release(&mut self.heap, raw)
            }
            _ => {
                // Garbage from now on: the end listeners hear now, not at the purge.
                let mut subtree = self.heap.subtree(raw).map_err(refusal)?;
                subtree.notify_ends();
                subtree.mark_as_garbage();
                Ok(())
            }
        }
    }

    /// Resolves `raw` for `destroy` and checks it names a `T`; returns its class index.
    fn check_class<T: 'static>(&self, raw: RawHandle) -> Result<usize, PoolError> {
        let table = self.heap.table();
        let slot = match table.resolve(raw) {
            Ok(slot) => slot,
            // Garbage or being destroyed: released, not yet purged.
            Err(ArenaError::Hidden(_)) => return Err(PoolError::AlreadyReleased),
            // The arena's rule tells a second release of the same handle from a stale one.
            Err(_) if table.was_released(raw) => return Err(PoolError::AlreadyReleased),
            Err(_) => return Err(PoolError::Stale),
        };
        let class = usize::from(slot.class());
        let expected = self.heap.class_of::<T>();
        if expected.is_none_or(|id| id.index() != class) {
            return Err(PoolError::Arena(ArenaError::WrongClass {
                expected: type_name::<T>(),
                found: "another class",
            }));
        }
        Ok(class)
    }

    /// Game-thread upkeep, once a frame (respawn's `World::end_frame` calls it): the cells
    /// the classes returned are taken, cells the pools gave up go back to the arena, pools
    /// below their low watermark grow, workers with queued cells are woken.
    pub fn maintain(&mut self) {
        for pool in self.pools.iter_mut().flatten() {
            pool.maintain(&mut self.heap);
        }
        for composite in self.composites.iter_mut() {
            composite.erased_mut().maintain(&mut self.heap);
        }
    }

    /// Builds up to `n` objects of `T` on the calling thread (within the pool's `max`) and
    /// puts them among the ready ones: a pool warmed now, before the first frame, whether
    /// or not it has workers. Returns how many it built (fewer than `n` at `max`).
    ///
    /// # Errors
    /// [`PoolError::NotPooled`] if `T` has no pool; [`PoolError::Arena`] when the class's
    /// memory is exhausted (the objects built until then stay ready).
    pub fn prefill<T: Poolable>(&mut self, n: usize) -> Result<usize, PoolError> {
        let class = self.find_class::<T>();
        let Self { pools, heap, .. } = self;
        match pools.get_mut(class).and_then(Option::as_mut).and_then(ClassPool::typed::<T>) {
            Some(pool) => pool.prefill(heap, n),
            None => match self.composites.get_mut(class) {
                Some(composite) => composite.erased_mut().prefill_erased(heap, n),
                None => Err(PoolError::NotPooled(type_name::<T>())),
            },
        }
    }

    /// Waits until every pool's precreation is ready to pop — nothing queued or being built,
    /// nothing held back in a worker's partial magazine — so that the first frames' spawns
    /// are hits. Pools without precreation are warm at once. Polls every 100 µs, running
    /// [`maintain`](Self::maintain) between looks.
    ///
    /// # Errors
    /// [`PoolError::NotWarm`] naming the first pool still cold when `timeout` ran out
    /// (its workers starved of a core, or `create` slower than expected); the pools keep
    /// warming in the background.
    pub fn wait_until_warm(&mut self, timeout: Duration) -> Result<(), PoolError> {
        let start = Instant::now();
        loop {
            self.maintain();
            let Some((class, cold)) = self.erased_all().find_map(|p| p.cold(&self.heap).map(|c| (p.name(), c))) else {
                return Ok(());
            };
            let waited = start.elapsed();
            if waited >= timeout {
                return Err(PoolError::NotWarm { class, ready: cold.ready, on_the_way: cold.on_the_way, waited });
            }
            std::thread::sleep(Duration::from_micros(100));
        }
    }

    /// `T`'s pool counters, if it has a pool.
    pub fn stats_of<T: 'static>(&self) -> Option<PoolStats> {
        let id = self.heap.class_of::<T>()?;
        self.erased_of(id.index()).map(|p| self.with_memory(p.stats(&self.heap), id.index()))
    }

    /// Every pool's counters, in class registration order (composite pools after the
    /// others).
    pub fn stats(&self) -> Vec<PoolStats> {
        let plain =
            self.pools.iter().enumerate().filter_map(|(class, p)| p.as_ref().map(|p| (class, p as &dyn ErasedPool)));
        let composites = self.composites.iter_classes().map(|(class, c)| (class, c.erased() as &dyn ErasedPool));
        plain.chain(composites).map(|(class, p)| self.with_memory(p.stats(&self.heap), class)).collect()
    }

    /// `T`'s policy: its pool's, or `Default` for a class without one.
    pub fn policy<T: 'static>(&self) -> Policy {
        self.config::<T>().map_or(Policy::Default, |c| c.policy)
    }

    /// Joins every pool's workers and drops every ready object. Also done on drop.
    pub fn shutdown(&mut self) {
        // Every pool shuts down (its workers joined, its objects dropped) even if a
        // destructor in another panics; the first panic goes on after.
        let mut drops = DropAll::new();
        for pool in self.pools.iter_mut().flatten() {
            drops.run(|| pool.shutdown(&mut self.heap));
        }
        for composite in self.composites.iter_mut() {
            drops.run(|| composite.erased_mut().shutdown(&mut self.heap));
        }
    }
}

impl Drop for Pools {
    fn drop(&mut self) {
        // Ready objects live in the heap's memory: end them before the heap goes.
        self.shutdown();
    }
}
