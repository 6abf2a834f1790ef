//! One class's pool, game-thread side: magazines, policies, growth, its workers.
//!
//! A [`ClassPool`] has no type parameter: its class's type shows only in how a cell
//! becomes an object ([`Build`], what the workers run) and in the release hooks, which the
//! pool keeps as data. So every class's pool is the same type, kept inline in the
//! [`Pools`](crate::Pools)' table by class index, and a destroy that knows only `T: 'static`
//! reaches its class's pool, and the pool's policy, with one index and no indirect call.

use std::any::TypeId;
use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::ptr::NonNull;
use std::time::Duration;

use respawn_arena::{
    ArenaError, CellMap, ClassId, ClassStore, CompactCell, EndedCells, FreedCell, Handle, ObjectFlags, RawHandle,
    Releasable,
};
use respawn_gc::Heap;

use crate::depot::{self, DropFn, Recipe, Returned, Token};
use crate::error::refusal;
use crate::pool_core::{Cold, Kept, PoolCore};
use crate::sync::Arc;
use crate::{Policy, PoolConfig, PoolError, PoolStats, Poolable};

mod trim;

/// The closure given to `Pools::add_with`: a pool's constructor other than `T::create`.
pub(crate) type Create<T> = Box<dyn Fn() -> T + Send + Sync>;

/// How a class's cell becomes an object, its type erased: what a class pool's workers run.
pub(crate) trait Build: Send + Sync {
    /// Builds an object in `cell`.
    ///
    /// # Safety
    /// `cell` is uninitialised memory of the class's layout, the caller's alone.
    unsafe fn build_in(&self, cell: NonNull<u8>);
    /// Drops an object of the class in a cell.
    fn drop_fn(&self) -> DropFn;
}

/// Class `T`'s [`Build`]: its constructor, `None` for `T::create` (called directly, so a
/// miss can inline it, not through a pointer).
pub(crate) struct Creator<T>(Option<Create<T>>);

impl<T: Poolable> Creator<T> {
    /// A new object of `T`, by the pool's constructor.
    #[inline(always)]
    fn create(&self) -> T {
        match &self.0 {
            None => T::create(),
            Some(create) => create(),
        }
    }

    /// Inserts a new object into `store`, built in its cell by the pool's constructor
    /// (each constructor inlined into its own insert, so neither goes through the stack).
    #[inline(always)]
    fn insert_new<'s>(&self, store: &'s mut ClassStore<'_, T>) -> Result<(Handle<T>, &'s mut T), ArenaError> {
        match &self.0 {
            None => store.try_insert_with(T::create),
            Some(create) => store.try_insert_with(create),
        }
    }
}

impl<T: Poolable> Build for Creator<T> {
    unsafe fn build_in(&self, cell: NonNull<u8>) {
        let value = self.create();
        // SAFETY: the caller's contract: uninitialised memory of `T`'s layout (the class's
        // cell), written once here before anyone else sees it.
        unsafe { cell.cast::<T>().as_ptr().write(value) };
    }

    fn drop_fn(&self) -> DropFn {
        depot::drop_as::<T>
    }
}

impl Recipe<CompactCell> for dyn Build {
    #[inline]
    unsafe fn build(&self, cell: &CompactCell, map: &CellMap) {
        // SAFETY: the caller's contract: the token owns its cell, uninitialised.
        unsafe { self.build_in(cell.cell(map)) };
    }

    unsafe fn drop_built(&self, cell: &CompactCell, map: &CellMap) {
        // SAFETY: the caller's contract: `build` made the cell's object, the caller's alone.
        unsafe { (self.drop_fn())(cell.cell(map)) };
    }

    fn drop_ended(&self) -> DropFn {
        self.drop_fn()
    }
}

/// A release of an object of the pool's class, monomorphised for it when the pool is made:
/// [`Pools`](crate::Pools), which knows the object's type only as `T: 'static`, calls the
/// class's own code through it, hooks and all, in one indirect call
/// ([`ClassPool::destroy_erased`], [`ClassPool::release_erased`]).
///
/// # Safety
/// `pool` is the pool that holds the function (so the function is for its class). `raw`
/// may be any handle: the release resolves it in the class and refuses what is not there.
type ReleaseFn = unsafe fn(pool: &mut ClassPool, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError>;

/// [`ReleaseFn`] for `T`: [`Typed::destroy`].
///
/// # Safety
/// As [`ReleaseFn`].
unsafe fn destroy_as<T: Poolable>(pool: &mut ClassPool, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
    // SAFETY: the caller's contract: `pool` is `T`'s.
    unsafe { pool.typed_unchecked::<T>() }.destroy(heap, Handle::from_raw(raw))
}

/// [`ReleaseFn`] for `T`: [`Typed::release`], the checked release of an owner.
///
/// # Safety
/// As [`ReleaseFn`].
unsafe fn release_as<T: Poolable>(pool: &mut ClassPool, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
    // SAFETY: the caller's contract: `pool` is `T`'s.
    unsafe { pool.typed_unchecked::<T>() }.release(heap, raw)
}

/// What [`Pools`](crate::Pools) needs of a pool whatever its class, for the per-frame
/// upkeep, the stats and shutdown: a class's pool and a composite pool alike.
pub(crate) trait ErasedPool: Send {
    /// An object of the class entered the world without `spawn` (a plain insert).
    fn note_inserted(&mut self, heap: &mut Heap);
    /// Game-thread upkeep: returned cells taken, cells back to the arena, workers woken,
    /// growth.
    fn maintain(&mut self, heap: &mut Heap);
    /// Keeps at most `keep` objects ready or queued, drops the rest, decommits the slabs
    /// left empty ([`ClassPool::trim`]); returns how many it dropped.
    fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError>;
    /// The idle trim's clock: `dt` of frame time passed ([`ClassPool::idle_upkeep`]).
    fn idle_upkeep(&mut self, heap: &mut Heap, dt: Duration);
    fn stats(&self, heap: &Heap) -> PoolStats;
    fn config(&self) -> &PoolConfig;
    /// What the workers still owe before every precreated object can be popped, or `None`
    /// once the pool is warm; a cold pool's workers are asked to hand over partial
    /// magazines at once.
    fn cold(&self, heap: &Heap) -> Option<Cold>;
    /// The class's name in stats and errors.
    fn name(&self) -> &'static str;
    /// Joins the workers and drops every ready object (and those the class keeps).
    /// Idempotent.
    fn shutdown(&mut self, heap: &mut Heap);
}

/// One class's pool: the shared game-thread side ([`PoolCore`]) over the class's cells,
/// which its workers build by the class's [`Build`], and the class's releases.
pub(crate) struct ClassPool {
    core: PoolCore<CompactCell, dyn Build>,
    class: ClassId,
    /// The class's type: a typed call checks it (debug builds) or a caller vouches for it.
    type_id: TypeId,
    /// [`destroy_as`] for the class's type.
    destroy: ReleaseFn,
    /// [`release_as`] for the class's type.
    release: ReleaseFn,
}

impl fmt::Debug for ClassPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassPool").field("class", &self.core.name()).field("config", self.core.config()).finish()
    }
}

impl ClassPool {
    /// Builds the pool of class `T`: starts its workers, takes the class's ended cells and,
    /// with `precreate`, queues `capacity` cells for them.
    pub(crate) fn new<T: Poolable>(
        heap: &mut Heap,
        class: ClassId,
        config: PoolConfig,
        create: Option<Create<T>>,
    ) -> Result<Self, PoolError> {
        // The one check of `class` for the pool's life (`store` relies on it).
        heap.store_of::<T>(class)?;
        let map = heap.arena().cell_map(class).expect("the class was checked just now");
        let recipe: Arc<dyn Build> = Arc::new(Creator(create));
        let core = PoolCore::start(T::class_name(), config, map, recipe);
        // Destroy and rebuild in one pass on a worker: ended objects come back undropped.
        // Not without workers (the give-back drain would drop them on the game thread
        // anyway, one step later).
        let async_drop = heap.settings().async_purge && !T::DROP_ON_GAME_THREAD && config.workers > 0;
        heap.set_ended_cells(class, if async_drop { EndedCells::ReturnedUndropped } else { EndedCells::Returned })?;
        // `Reuse`: a released object stays in its cell, kept by the class for the next spawn.
        heap.set_keeping(class, config.policy == Policy::Reuse)?;
        let mut pool =
            Self { core, class, type_id: TypeId::of::<T>(), destroy: destroy_as::<T>, release: release_as::<T> };
        if config.precreate {
            pool.grow(heap, config.capacity)?;
        }
        pool.core.built();
        Ok(pool)
    }

    /// Whether this is class `T`'s pool.
    #[inline(always)]
    pub(crate) fn is<T: 'static>(&self) -> bool {
        self.type_id == TypeId::of::<T>()
    }

    /// Takes back the object `raw` names, by the pool's policy, as [`Typed::destroy`] does,
    /// for a caller that found the pool by the object's type but knows it only as
    /// `'static`: the class's own code, its hooks called statically, in one indirect call.
    /// `raw` lies in the class's range or the release refuses it.
    #[inline(always)]
    pub(crate) fn destroy_erased(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        // SAFETY: the function is this pool's own, for its class; the release checks `raw`.
        unsafe { (self.destroy)(self, heap, raw) }
    }

    /// [`Typed::release`] through the class's own code: the checked release of an object
    /// the caller resolved as one of the pool's class.
    pub(crate) fn release_erased(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        // SAFETY: the function is this pool's own, for its class.
        unsafe { (self.release)(self, heap, raw) }
    }

    /// Takes up to `n` cells from the arena (within `max`) and queues them for the workers.
    #[inline]
    fn grow(&mut self, heap: &mut Heap, n: usize) -> Result<(), PoolError> {
        let class = self.class;
        self.core.grow(n, |core| heap.take_cell(class).map(|cell| compact(core.map(), cell))).map_err(PoolError::from)
    }

    /// What the class keeps for reuse beside the magazines.
    fn kept(&self, heap: &Heap) -> Kept {
        let arena = heap.arena();
        Kept { now: arena.kept(self.class), total: arena.kept_total(self.class) }
    }

    /// A ready cell when the loaded magazine ran dry (topping the stock up when a magazine
    /// came from the depot), if there is one.
    #[cold]
    #[inline(never)]
    fn restock(&mut self, heap: &mut Heap) -> Option<CompactCell> {
        let (cell, from_depot) = self.core.refill()?;
        // Nothing is kept: a spawn takes a kept object before it looks at the magazines.
        if from_depot && self.core.wants_growth(0) {
            let _ = self.grow(heap, self.core.config().grow_by);
        }
        Some(cell)
    }

    /// The end of a leaf's release the class does not keep, once `on_release` ran, under
    /// `Default` (garbage for the next collection) or `Reuse` above `max`. (`Purge` ends a
    /// leaf from the release's own resolve: `Typed::purge_leaf`.)
    #[inline]
    fn end_released(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        match self.core.config().policy {
            Policy::Default => {
                self.core.released();
                heap.mark_as_garbage(raw).map(drop).map_err(refusal)
            }
            Policy::Reuse => self.release_overflow(heap, raw),
            Policy::Purge => unreachable!("a `Purge` release of a leaf ends in `Typed::purge_leaf`"),
        }
    }

    /// A release kept by the class found the slot at the generation ceiling: it retired,
    /// and the object was dropped. A release all the same, though nothing was kept.
    fn kept_retired(&mut self) {
        self.core.released();
        self.core.retired();
    }

    /// `Purge`: the collector's destroy pipeline without a mark; the class returns the
    /// cells (`Ended::DestroyedNow`: counted as recycled by `Purge`), handed to the workers
    /// a batch at a time.
    fn purge(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        heap.destroy_now(raw).map_err(refusal)?;
        self.take_returned_batch(heap);
        Ok(())
    }

    /// A `Reuse` release above `max`: overflow objects are out, so it ends the object as
    /// `Purge` and its cell leaves the pool at once: the pool shrinks back to `max`.
    #[cold]
    #[inline(never)]
    fn release_overflow(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        self.core.released();
        self.purge(heap, raw)?;
        self.take_returned(heap);
        Ok(())
    }

    /// Takes the class's returned cells once [`depot::BATCH`] wait: one hand-off to the
    /// workers per batch of `Purge` releases rather than per release. (The stats count
    /// what waits; `maintain`, and a miss that finds the pool at `max`, take everything.)
    #[inline]
    fn take_returned_batch(&mut self, heap: &mut Heap) {
        if heap.arena().returned(self.class) >= depot::BATCH {
            self.take_returned(heap);
        }
    }

    /// Takes the cells the class returned (its objects that ended: a collection's purge, a
    /// `Purge` release, a sub-object's end): each object counted out of `in_use`, each cell
    /// queued for the workers to rebuild (or handed back to the arena at `max`, or made
    /// vacant at once without workers).
    #[inline(always)]
    fn take_returned(&mut self, heap: &mut Heap) {
        if heap.arena().returned(self.class) != 0 {
            self.take_returned_now(heap);
        }
    }

    /// [`take_returned`](Self::take_returned) of a class that returned something.
    #[inline(never)]
    fn take_returned_now(&mut self, heap: &mut Heap) {
        if self.core.config().workers == 0 {
            // No worker would rebuild the cells: the class makes them vacant at once, in one
            // pass, and the depot counts them as given back.
            let mut tally = Returned::default();
            let recycled = heap.recycle_returned(self.class, |freed| tally.count(freed));
            debug_assert!(recycled.is_ok(), "the pool's own class");
            self.core.depot().recycled(tally);
            return;
        }
        match heap.drain_returned(self.class) {
            Ok(returned) => self.core.depot().returned(returned),
            Err(_) => debug_assert!(false, "the pool's own class"),
        }
    }

    /// Hands the cells the pool gave up back to the arena, as vacant slots.
    #[inline]
    fn recycle_spare(&self, heap: &mut Heap) {
        self.core.drain_spare(|core, cell| {
            // SAFETY: the pool's map compacted every cell it trades; its heap is alive.
            let back = heap.recycle(unsafe { core.map().expand(cell) });
            debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
        });
    }
}

/// A class pool known to be `T`'s ([`ClassPool::typed`]): the receiver of the calls that
/// need the class's type — spawn, destroy, and the release of an owner of sub-objects.
pub(crate) struct Typed<'p, T> {
    pool: &'p mut ClassPool,
    _class: PhantomData<fn() -> T>,
}

impl ClassPool {
    /// The pool as class `T`'s, if it is.
    #[inline]
    pub(crate) fn typed<T: 'static>(&mut self) -> Option<Typed<'_, T>> {
        // SAFETY: checked just now.
        self.is::<T>().then(|| unsafe { self.typed_unchecked() })
    }

    /// The pool as class `T`'s, unchecked (debug builds check).
    ///
    /// # Safety
    /// The pool is `T`'s ([`is`](Self::is)).
    #[inline(always)]
    pub(crate) unsafe fn typed_unchecked<T: 'static>(&mut self) -> Typed<'_, T> {
        debug_assert!(self.is::<T>(), "the pool of another class");
        Typed { pool: self, _class: PhantomData }
    }
}

impl<T> std::ops::Deref for Typed<'_, T> {
    type Target = ClassPool;

    fn deref(&self) -> &ClassPool {
        self.pool
    }
}

impl<T: 'static> Typed<'_, T> {
    /// The class's typed store. The pool owns its class's lifecycle: it activates, keeps and
    /// takes back cells beside the collector, and counts each itself.
    #[inline(always)]
    fn store<'h>(&self, heap: &'h mut Heap) -> ClassStore<'h, T> {
        // SAFETY: the pool's `new` checked that its class is its class in this heap's arena
        // (`store_of`), `Typed` that the class is `T`, and a pool never leaves the heap it
        // was made for (its `Pools` owns both).
        unsafe { heap.store_of_unchecked::<T>(self.pool.class) }
    }

    /// The same view for a shorter borrow: the calls take the view by value (a cold call
    /// then takes the pool's address, not the view's).
    #[inline(always)]
    pub(crate) fn reborrow(&mut self) -> Typed<'_, T> {
        Typed { pool: self.pool, _class: PhantomData }
    }
}

impl<T: Poolable> Typed<'_, T> {
    /// Spawns an object: one the class kept (`Reuse`, the most recently released: its
    /// cell is the warmest), else a ready one from the magazines, else one built inline.
    /// `strict`: refuse at `max` instead of overflowing. Always inlined: each caller's
    /// `init` makes its own copy anyway, and a call would cost a spawn a fifth of its
    /// instructions (the frame of a function that holds the whole hit path).
    #[inline(always)]
    pub(crate) fn spawn(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: impl FnOnce(&mut T),
    ) -> Result<Handle<T>, PoolError> {
        match self.reuse(heap, init) {
            Ok(handle) => Ok(handle),
            Err(init) => self.spawn_ready(heap, strict, init),
        }
    }

    /// Spawns the object the class kept most recently (`Reuse`), if it keeps one; gives
    /// `init` back if not. Calls nothing but `init` and `on_spawn`: a caller that inlines
    /// it and calls out for the rest pays no frame for a spawn the class keeps.
    #[inline(always)]
    pub(crate) fn reuse<F: FnOnce(&mut T)>(&mut self, heap: &mut Heap, init: F) -> Result<Handle<T>, F> {
        let mut store = self.store(heap);
        let Some((handle, object)) = store.reuse() else {
            return Err(init);
        };
        init(object);
        object.on_spawn();
        store.notify_spawn(handle);
        let kept = store.kept();
        self.pool.core.spawned(kept);
        Ok(handle)
    }

    /// [`spawn`](Self::spawn) once the class kept nothing: a ready object from the
    /// magazines, else one built inline.
    #[inline(always)]
    pub(crate) fn spawn_ready(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: impl FnOnce(&mut T),
    ) -> Result<Handle<T>, PoolError> {
        let cell = match self.pool.core.pop() {
            Some(cell) => cell,
            None if !self.pool.core.may_refill() => return self.reborrow().miss(heap, strict, init),
            None => match self.pool.restock(heap) {
                Some(cell) => cell,
                None => return self.reborrow().miss(heap, strict, init),
            },
        };
        // The store places cells by `T`'s size, a constant (the map by the class's, read).
        let mut store = self.store(heap);
        if let Some(next) = self.pool.core.next_ready() {
            // The next spawn's object was most likely built on a worker's core: start
            // bringing it over now, so that spawn does not wait for the transfer.
            respawn_allocator::prefetch(store.compact_cell(next).as_ptr().cast());
        }
        let object = store.compact_cell(&cell);
        // SAFETY: every cell in the magazines came from this class's arena (take_cell, the
        // returned list, deactivate, compacted by its map) and holds an object a worker built or
        // `Reuse` reset.
        let handle = unsafe { store.activate(cell) };
        // The class kept nothing: a kept object is taken first.
        self.pool.core.spawned(0);
        // SAFETY: activated just now; `&mut Heap` makes it ours for the call.
        let object = unsafe { &mut *object.as_ptr() };
        init(object);
        object.on_spawn();
        store.notify_spawn(handle);
        Ok(handle)
    }

    /// Builds up to `n` objects of `T` on the calling thread (within `max`) into the game
    /// thread's magazines, ready for the next spawns. Returns how many it built.
    pub(crate) fn prefill(self, heap: &mut Heap, n: usize) -> Result<usize, PoolError> {
        let class = self.pool.class;
        self.pool.core.prefill(n, |core| {
            // Built before its cell is taken: a panicking `create` takes nothing.
            // SAFETY: the pool, and so its recipe, is `T`'s (`Typed`).
            let value = unsafe { creator_unchecked::<T>(core.recipe()) }.create();
            let cell = heap.take_cell(class)?;
            // SAFETY: `take_cell` hands over an uninitialised cell of the class, `T`'s
            // (`Typed`), ours alone until it is activated; written once, here.
            unsafe { cell.cell().cast::<T>().as_ptr().write(value) };
            Ok(compact(core.map(), cell))
        })
    }

    /// A spawn with nothing ready: builds the object inline (a miss), growing the pool.
    #[cold]
    #[inline(never)]
    fn miss(&mut self, heap: &mut Heap, strict: bool, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        // At `max` by the pool's count: the objects that ended since its last call leave
        // the count first (their cells go to the workers), then it is judged again.
        let at_max = self.pool.core.at_max() && {
            self.pool.take_returned(heap);
            self.pool.core.admit_miss(strict)?
        };
        self.pool.grow(heap, self.pool.core.miss_growth(at_max))?;
        self.pool.recycle_spare(heap);
        // SAFETY: the pool, and so its recipe, is `T`'s (`Typed`).
        let creator = unsafe { creator_unchecked::<T>(self.pool.core.recipe()) };
        let mut store = self.store(heap);
        if at_max {
            // An overflow object: releases stop keeping until the pool is back within `max`
            // (which the first release judges, if `create` panics and none comes).
            store.set_keeping(false);
        }
        // Built in its cell; counted once it exists: a panicking `create` spawned nothing.
        let (handle, object) = creator.insert_new(&mut store).map_err(PoolError::Arena)?;
        self.pool.core.spawned_inline(at_max);
        init(object);
        object.on_spawn();
        store.notify_spawn(handle);
        Ok(handle)
    }
}

impl<T: Poolable> Typed<'_, T> {
    /// Takes back the object `h` names by the pool's policy: one resolve for the checks,
    /// the hooks and the keep; no error value on the way to success. An
    /// owner of sub-objects takes the checked release ([`release`](Self::release)): its
    /// sub-objects must be checked before anything changes.
    #[inline(always)]
    pub(crate) fn destroy(&mut self, heap: &mut Heap, h: Handle<T>) -> Result<(), PoolError> {
        let mut store = self.store(heap);
        let keeping = store.keeping();
        let mut found = match store.releasable(h) {
            Ok(found) => found,
            Err(e) => return Err(refused(heap, h.raw(), e)),
        };
        if found.flags().contains(ObjectFlags::HAS_SUBOBJECTS) {
            return self.reborrow().destroy_owner(heap, h.raw());
        }
        // The class's end listeners hear first, whatever the policy: before the hooks.
        found.notify_end();
        // `Reuse` within `max`: the class keeps the object. A class that keeps already takes
        // the first branch, alone (one test on the hot path); the second starts keeping (the
        // first release, or back within `max` after an overflow: the flag says so without
        // counting).
        if keeping {
            if !reset_and_keep(found) {
                self.pool.kept_retired();
            }
            return Ok(());
        }
        if self.pool.core.config().policy == Policy::Reuse && !self.pool.core.above_max() {
            let kept = reset_and_keep(found);
            self.store(heap).set_keeping(true);
            if !kept {
                self.pool.kept_retired();
            }
            return Ok(());
        }
        found.object().on_release();
        if self.pool.core.config().policy == Policy::Purge {
            // `found`'s borrow ends here: handed on, it would live in memory on every path.
            return self.reborrow().purge_leaf(heap, h);
        }
        // `found`'s borrow of the heap ends with its last use above.
        self.pool.end_released(heap, h.raw())
    }

    /// `Purge` of a leaf that [`destroy`](Self::destroy) found releasable and ran
    /// `on_release` on: the collector's end of it ([`Heap::destroy_found`]: its hooks, the
    /// drop, the cell returned), then a batch of returned cells to the workers. Out of line,
    /// resolving the handle once more: handed the `Releasable`, the release would keep it in
    /// memory on its `Reuse` path too (measured: benches/LOG.md).
    #[inline(never)]
    fn purge_leaf(self, heap: &mut Heap, h: Handle<T>) -> Result<(), PoolError> {
        let mut store = self.store(heap);
        let found = store.releasable(h).unwrap_or_else(|_| unreachable!("found releasable just now"));
        let ended = Heap::destroy_found(found);
        self.pool.core.released();
        if let Err(raw) = ended {
            heap.wait_to_finish(raw);
        }
        self.pool.take_returned_batch(heap);
        Ok(())
    }

    /// [`destroy`](Self::destroy) of an owner of sub-objects, which `destroy` found
    /// releasable in the pool's class: the pool's checked release.
    #[cold]
    #[inline(never)]
    fn destroy_owner(self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        self.release(heap, raw)
    }

    /// Takes back the object `raw` names, by the pool's policy, with its sub-objects: one
    /// walk down them ([`Heap::subtree`]) checks them all before anything changes, and each
    /// policy ends what it walked without walking again. The caller resolved `raw` as an
    /// object of the pool's class, `T`.
    pub(crate) fn release(self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        let mut subtree = heap.subtree(raw).map_err(refusal)?;
        if subtree.root_mut::<T>().is_none() {
            return Err(PoolError::Stale);
        }
        // Checked: the whole subtree may end. Its end listeners hear first.
        subtree.notify_ends();
        let root = subtree.root_mut::<T>().unwrap_or_else(|| unreachable!("checked just now"));
        root.on_release();
        match self.pool.core.config().policy {
            Policy::Default => {
                self.pool.core.released();
                subtree.mark_as_garbage();
            }
            Policy::Purge => {
                self.pool.core.released();
                subtree.destroy_now();
                self.pool.take_returned_batch(heap);
            }
            Policy::Reuse => {
                // The sub-objects end now (their cells go to their own pools); the owner is
                // reset and kept — or, above `max`, ends too, so the pool shrinks back.
                subtree.destroy_sub_objects();
                self.pool.take_returned(heap);
                if self.pool.core.owned() > self.pool.core.config().max {
                    return self.pool.release_overflow(heap, raw);
                }
                let mut store = self.store(heap);
                let mut found = store.releasable(Handle::<T>::from_raw(raw))?;
                found.object().reset();
                // Counted as a release by the class's keep tally.
                if !found.keep() {
                    self.pool.kept_retired();
                }
            }
        }
        Ok(())
    }
}

/// A `Reuse` release the class keeps: `on_release` and `reset` on the object (lent once for
/// both: one barrier test), then the keep. `false`: the slot retired instead (the object
/// dropped).
#[inline(always)]
fn reset_and_keep<T: Poolable>(mut found: Releasable<'_, T>) -> bool {
    let object = found.object();
    object.on_release();
    object.reset();
    found.keep()
}

/// Class `T`'s constructor, from its pool's recipe, for a build on the game thread (a miss,
/// a prefill). The caller knows the recipe's class (`Typed`, which debug builds check).
///
/// # Safety
/// `recipe` is a `Creator<T>`.
#[inline(always)]
unsafe fn creator_unchecked<T: 'static>(recipe: &dyn Build) -> &Creator<T> {
    // SAFETY: the caller's contract; the thin cast keeps the address of the `Creator<T>`.
    unsafe { &*(recipe as *const dyn Build).cast::<Creator<T>>() }
}

/// `cell`, a cell of one of a pool's own classes, compacted by that class's `map`: the form a
/// pool keeps it in.
#[inline(always)]
pub(crate) fn compact(map: &CellMap, cell: FreedCell) -> CompactCell {
    map.compact(cell).unwrap_or_else(|_| unreachable!("a cell of another class in a pool"))
}

/// The error for a release the arena refused: a handle whose own object was released
/// already (hidden as garbage, or its slot one generation on) is told apart from a stale
/// or foreign one by the arena's rule.
#[cold]
#[inline(never)]
pub(crate) fn refused(heap: &Heap, raw: RawHandle, error: ArenaError) -> PoolError {
    match error {
        ArenaError::Hidden(_) => PoolError::AlreadyReleased,
        ArenaError::Stale if heap.table().was_released(raw) => PoolError::AlreadyReleased,
        ArenaError::Stale => PoolError::Stale,
        e => PoolError::Arena(e),
    }
}

impl ErasedPool for ClassPool {
    fn note_inserted(&mut self, heap: &mut Heap) {
        self.take_returned(heap);
        let kept = heap.arena().kept(self.class);
        // The pool may be past `max` now: releases stop keeping until it is back within.
        let off = heap.set_keeping(self.class, false);
        debug_assert!(off.is_ok(), "the pool's own class");
        self.core.note_inserted(kept);
    }

    fn maintain(&mut self, heap: &mut Heap) {
        self.take_returned(heap);
        self.recycle_spare(heap);
        let kept = heap.arena().kept(self.class);
        if self.core.wants_growth(kept) {
            let _ = self.grow(heap, self.core.config().grow_by);
        }
        if self.core.nears_growth(kept) {
            let _ = heap.arena().prepare_ahead(self.class, self.core.config().grow_by);
        }
        self.core.wake_if_needed();
    }

    fn stats(&self, heap: &Heap) -> PoolStats {
        let returned = Returned::of(heap.arena().returned_cells(self.class));
        self.core.stats(mem::size_of::<Self>(), self.kept(heap), returned)
    }

    fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError> {
        ClassPool::trim(self, heap, keep)
    }

    fn idle_upkeep(&mut self, heap: &mut Heap, dt: Duration) {
        let kept = heap.arena().kept(self.class);
        if let Some(keep) = self.core.idle_window(dt, kept) {
            // Refused advice leaves slabs committed; the next trim tries them again.
            let _ = self.trim(heap, keep);
        }
    }

    fn config(&self) -> &PoolConfig {
        self.core.config()
    }

    fn name(&self) -> &'static str {
        self.core.name()
    }

    fn cold(&self, heap: &Heap) -> Option<Cold> {
        self.core.cold(heap.arena().kept(self.class))
    }

    fn shutdown(&mut self, heap: &mut Heap) {
        // The class's ends go back to its vacant list from now on; what it returned so far
        // goes to the depot before it stops, and the shutdown drops the objects still in
        // those cells.
        let vacant = heap.set_ended_cells(self.class, EndedCells::Vacant);
        debug_assert!(vacant.is_ok(), "the pool's own class");
        self.take_returned(heap);
        self.core.shutdown();
        // The objects the class keeps are ready ones too (checked out, as the magazines').
        let dropped = heap.drop_kept(self.class);
        self.core.uncount(dropped);
    }
}
