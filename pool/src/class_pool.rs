//! One class's pool, game-thread side: magazines, policies, growth, its workers.

use std::fmt;
use std::mem;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use respawn_allocator::sync::spawn_running;
use respawn_arena::{
    ArenaError, CellMap, ClassId, ClassStore, CompactCell, DropAll, Freed, FreedCell, Handle, ObjectFlags, RawHandle,
};
use respawn_gc::Heap;

use crate::depot::{self, Depot, Magazines, Refilled};
use crate::error::refusal;
use crate::sync::{background_priority, Arc};
use crate::{Policy, PoolConfig, PoolError, PoolStats, Poolable};

mod trim;

/// A pool's constructor: `T::create`, or the closure given to `Pools::add_with`.
pub(crate) type Create<T> = Arc<dyn Fn() -> T + Send + Sync>;

/// What [`Pools`](crate::Pools) needs of a pool whatever its class.
pub(crate) trait ErasedPool: Send {
    /// Takes back the object `raw` names, by the pool's policy. The caller resolved it
    /// (visible, this class, with `flags`) and checked that it and its sub-objects may be
    /// released.
    fn release(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError>;
    /// An object of the class entered the world without `spawn` (a plain insert).
    fn note_inserted(&mut self);
    /// Game-thread upkeep: cells back to the arena, workers woken, growth.
    fn maintain(&mut self, heap: &mut Heap);
    /// Keeps at most `keep` objects ready or queued, drops the rest, decommits the slabs
    /// left empty ([`ClassPool::trim`]); returns how many it dropped.
    fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError>;
    /// The idle trim's clock: `dt` of frame time passed ([`ClassPool::idle_upkeep`]).
    fn idle_upkeep(&mut self, heap: &mut Heap, dt: Duration);
    fn stats(&self) -> PoolStats;
    fn config(&self) -> &PoolConfig;
    /// What the workers still owe before every precreated object can be popped, or `None`
    /// once the pool is warm; a cold pool's workers are asked to hand over partial
    /// magazines at once.
    fn cold(&self) -> Option<Cold>;
    /// The class's name in stats and errors.
    fn name(&self) -> &'static str;
    /// Joins the workers and drops every ready object. Idempotent.
    fn shutdown(&mut self);
}

/// A pool still warming up: [`ErasedPool::cold`].
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cold {
    /// Objects a spawn can pop now.
    pub(crate) ready: usize,
    /// Objects queued, being built, or held in a worker's partial magazine.
    pub(crate) on_the_way: usize,
}

/// Tallies only the game thread writes.
#[derive(Debug, Default)]
struct Tally {
    /// Spawns; the hits are the spawns less the misses.
    spawns: u64,
    misses: u64,
    overflow: u64,
    released: u64,
    recycled_reuse: u64,
    grown: u64,
    high_water: usize,
}

/// One class's pool.
pub(crate) struct ClassPool<T: Poolable> {
    class: ClassId,
    name: &'static str,
    config: PoolConfig,
    depot: Arc<Depot<CompactCell>>,
    /// The game thread's two magazines.
    magazines: Magazines<CompactCell>,
    /// Places the class's cells: the pool holds them as four-byte [`CompactCell`]s.
    map: CellMap,
    workers: Vec<JoinHandle<()>>,
    create: Create<T>,
    tally: Tally,
    /// Set once `new` has queued the first `capacity` cells: growth after that counts as
    /// `grown`.
    built: bool,
    /// The pool may own more than `max` cells: set by the only ways past it (a spawn that
    /// overflows at `max`, a plain insert counted in `in_use`), cleared by the first
    /// `Reuse` release that finds the pool back within `max`. While it is clear a `Reuse`
    /// release skips counting the cells the pool owns (four shared counters).
    over_max: bool,
    /// The idle window and what trims dropped.
    trim: trim::TrimState,
}

impl<T: Poolable> fmt::Debug for ClassPool<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassPool").field("class", &self.name).field("config", &self.config).finish()
    }
}

impl<T: Poolable> ClassPool<T> {
    /// Builds the pool of `T`: installs its free route, starts its workers and, with
    /// `precreate`, queues `capacity` cells for them.
    pub(crate) fn new(
        heap: &mut Heap,
        class: ClassId,
        config: PoolConfig,
        create: Create<T>,
    ) -> Result<Self, PoolError> {
        // The one check of `class` for the pool's life (`store` relies on it).
        heap.arena_mut_bypassing_gc().store_of::<T>(class)?;
        let map = heap.arena().cell_map(class).expect("the class was checked just now");
        let depot = Arc::new(Depot::for_config(&config, map));
        let route_depot = Arc::clone(&depot);
        // Destroy and rebuild in one pass on a worker: the route takes ended objects
        // undropped. Not without workers (the give-back drain would drop them on the game
        // thread anyway, one step later).
        let async_drop = heap.settings().async_purge && !T::DROP_ON_GAME_THREAD && config.workers > 0;
        let arena = heap.arena_mut_bypassing_gc();
        arena.set_free_route::<T>(Some(Box::new(move |cell| route(&route_depot, cell))))?;
        arena.set_route_drops::<T>(async_drop)?;
        let mut workers = Vec::with_capacity(config.workers);
        for i in 0..config.workers {
            let (depot, create) = (Arc::clone(&depot), Arc::clone(&create));
            let spawned = spawn_running(format!("respawn-pool {} #{i}", T::class_name()), move || {
                background_priority();
                depot::work::<T, CompactCell>(depot, create)
            });
            match spawned {
                Ok(handle) => workers.push(handle),
                Err(e) => panic!("cannot start a precreation thread for {}: {e}", T::class_name()),
            }
        }
        let mut pool = Self {
            class,
            name: T::class_name(),
            config,
            depot,
            magazines: Magazines::new(),
            map,
            workers,
            create,
            tally: Tally::default(),
            built: false,
            over_max: false,
            trim: trim::TrimState::default(),
        };
        if config.precreate {
            pool.grow(heap, config.capacity)?;
        }
        pool.built = true;
        Ok(pool)
    }

    /// The address of one of the pool's cells.
    #[inline(always)]
    fn cell(&self, cell: &CompactCell) -> std::ptr::NonNull<u8> {
        // SAFETY: the pool's map compacted every cell it holds, and the heap it was made
        // for outlives it (its `Pools` owns both).
        unsafe { self.map.cell(cell) }
    }

    /// Objects ready in the game thread's magazines.
    #[inline]
    fn local(&self) -> usize {
        self.magazines.len()
    }

    /// The class's typed store. The pool owns its class's lifecycle: it adopts, stows and
    /// routes cells beside the collector, and counts each itself.
    #[inline(always)]
    fn store<'h>(&self, heap: &'h mut Heap) -> ClassStore<'h, T> {
        // SAFETY: `new` checked that `class` is `T`'s in this heap's arena (`store_of`), and
        // a pool never leaves the heap it was made for (its `Pools` owns both).
        unsafe { heap.arena_mut_bypassing_gc().store_of_unchecked::<T>(self.class) }
    }

    /// Objects of the class alive in the world: the game thread's hand less its magazines.
    #[inline]
    fn live(&self) -> usize {
        self.depot.in_hand().saturating_sub(self.local())
    }

    /// Objects ready or being built, with this thread's magazines counted directly (the
    /// depot mirror lags while a spawn is under way). Cells still being built count:
    /// growing past them would balloon the pool whenever the workers fall behind.
    fn available(&self) -> usize {
        self.depot.on_the_way() + self.local()
    }

    /// Cells the pool owns: objects alive in the world, ready, being built.
    #[inline]
    fn owned(&self) -> usize {
        self.depot.owned()
    }

    /// One more object of the class alive in the world: taken from a magazine (`from_hand`,
    /// already counted in the hand) or entered from outside (an inline build, a plain
    /// insert).
    #[inline]
    fn count_spawned(&mut self, from_hand: bool) {
        if !from_hand {
            self.depot.count_in_hand(1);
        }
        // The idle window's peak; the all-time high water folds it in (`idle_upkeep`, stats).
        self.trim.peak = self.trim.peak.max(self.live());
    }

    /// Puts a ready object in the game thread's magazines; `Err` (the cell back, nothing
    /// changed) only if they and the depot are full. Within the hand, so uncounted, unless a
    /// full magazine goes to the depot.
    #[inline]
    fn push_ready(&mut self, cell: CompactCell) -> Result<(), CompactCell> {
        if !self.magazines.loaded.is_full() {
            self.magazines.loaded.push(cell);
            return Ok(());
        }
        self.push_ready_slow(cell)
    }

    #[cold]
    #[inline(never)]
    fn push_ready_slow(&mut self, cell: CompactCell) -> Result<(), CompactCell> {
        let before = self.local();
        let pushed = self.magazines.push(&self.depot, cell);
        // A full magazine published to the depot left the game thread's hand.
        let published = (before + usize::from(pushed.is_ok())).saturating_sub(self.local());
        self.depot.count_in_hand(-(published as isize));
        pushed
    }

    /// Whether the pool owns more than `max` cells, told by [`over_max`](Self::over_max)
    /// without counting while the pool cannot have got there; cleared once it is back.
    #[inline]
    fn above_max(&mut self) -> bool {
        if !self.over_max {
            return false;
        }
        self.over_max = self.owned() > self.config.max;
        self.over_max
    }

    /// Takes up to `n` cells from the arena (within `max`) and queues them for the workers.
    fn grow(&mut self, heap: &mut Heap, n: usize) -> Result<(), PoolError> {
        let n = n.min(self.config.max.saturating_sub(self.owned()));
        if n == 0 || self.config.workers == 0 {
            return Ok(());
        }
        let map = self.map;
        let mut store = self.store(heap);
        let mut taken = 0;
        let mut failed = None;
        self.depot.request_growth(std::iter::from_fn(|| {
            if taken == n || failed.is_some() {
                return None;
            }
            match store.take_cell() {
                Ok(cell) => {
                    taken += 1;
                    Some(compact(&map, cell))
                }
                Err(e) => {
                    failed = Some(e);
                    None
                }
            }
        }));
        if self.built {
            self.tally.grown += taken as u64;
        }
        failed.map_or(Ok(()), |e| Err(e.into()))
    }

    /// Builds up to `n` objects on the calling thread (within `max`) into the game thread's
    /// magazines, ready for the next spawns. Returns how many it built.
    pub(crate) fn prefill(&mut self, heap: &mut Heap, n: usize) -> Result<usize, PoolError> {
        let mut built = 0;
        while built < n && self.owned() < self.config.max {
            // Built before its cell is taken: a panicking `create` takes nothing.
            let start = Instant::now();
            let value = (self.create)();
            let nanos = start.elapsed().as_nanos() as u64;
            let cell = self.store(heap).take_cell()?;
            // SAFETY: `take_cell` hands over an uninitialised cell of `T`'s class, ours
            // alone until it is adopted; written once, here.
            unsafe { cell.cell().cast::<T>().as_ptr().write(value) };
            self.depot.count_in_hand(1);
            if let Err(cell) = self.push_ready(compact(&self.map, cell)) {
                // The depot is full (the pool holds `max` already): the object goes.
                // SAFETY: written just above; nobody else has seen the cell.
                unsafe { std::ptr::drop_in_place(self.cell(&cell).cast::<T>().as_ptr()) };
                self.depot.give_back(cell);
                self.depot.count_in_hand(-1);
                break;
            }
            self.depot.prefilled(nanos);
            built += 1;
        }
        Ok(built)
    }

    /// A ready cell, if any: `loaded`, then `previous`, then a full magazine from the depot.
    #[inline]
    fn pop(&mut self, heap: &mut Heap) -> Option<CompactCell> {
        match self.magazines.pop() {
            Some(cell) => Some(cell),
            None => self.refill(heap),
        }
    }

    #[cold]
    #[inline(never)]
    fn refill(&mut self, heap: &mut Heap) -> Option<CompactCell> {
        match self.magazines.refill(&self.depot) {
            Refilled::Previous => {}
            Refilled::Depot => {
                // The depot's magazine came into the game thread's hand (`loaded` was empty).
                self.depot.count_in_hand(self.magazines.loaded.len() as isize);
                if self.config.precreate && self.available() < self.config.low_watermark {
                    let _ = self.grow(heap, self.config.grow_by);
                }
            }
            Refilled::Nothing => {
                // Nothing published: let workers hand over what they hold, and grow.
                self.depot.go_hungry();
                return None;
            }
        }
        self.magazines.pop()
    }

    /// Spawns an object: a ready one if there is one, else one built inline. `strict`:
    /// refuse at `max` instead of overflowing. Always inlined: each caller's `init` makes
    /// its own copy anyway, and a call would cost a spawn a fifth of its instructions
    /// (the frame of a function that holds the whole hit path).
    #[inline(always)]
    pub(crate) fn spawn(
        &mut self,
        heap: &mut Heap,
        strict: bool,
        init: impl FnOnce(&mut T),
    ) -> Result<Handle<T>, PoolError> {
        let Some(cell) = self.pop(heap) else { return self.miss(heap, strict, init) };
        let mut store = self.store(heap);
        if let Some(next) = self.magazines.loaded.last() {
            // The next spawn's object was most likely built on a worker's core: start
            // bringing it over now, so that spawn does not wait for the transfer.
            respawn_allocator::prefetch(store.compact_cell(next).as_ptr().cast());
        }
        let object = store.compact_cell(&cell);
        // SAFETY: every cell in the magazines came from this class's arena (take_cell, the
        // free route, stow, compacted by its map) and holds an object a worker built or
        // `Reuse` reset.
        let handle = unsafe { store.adopt_compact(cell) };
        self.tally.spawns += 1;
        self.count_spawned(true);
        // SAFETY: adopted just now; `&mut Heap` makes it ours for the call.
        let object = unsafe { &mut *object.as_ptr() };
        init(object);
        object.on_spawn();
        Ok(handle)
    }

    #[cold]
    #[inline(never)]
    fn miss(&mut self, heap: &mut Heap, strict: bool, init: impl FnOnce(&mut T)) -> Result<Handle<T>, PoolError> {
        let at_max = self.owned() >= self.config.max;
        if at_max && strict {
            return Err(PoolError::Exhausted { class: self.name, max: self.config.max });
        }
        if !at_max && self.config.workers > 0 && self.available() < self.config.low_watermark.max(1) {
            // Grow only when too little is on its way: a miss while the first magazines
            // are still being built must not add `grow_by` cells per miss.
            self.grow(heap, self.config.grow_by.max(1))?;
        }
        recycle_spare::<T>(&self.depot, &self.map, heap);
        // Counted once the object exists: a panicking `create` spawned nothing.
        let value = (self.create)();
        let mut store = self.store(heap);
        let handle = store.try_insert(value).map_err(|r| PoolError::Arena(r.error))?;
        self.tally.spawns += 1;
        self.tally.misses += 1;
        self.tally.overflow += u64::from(at_max);
        self.over_max |= at_max;
        self.count_spawned(false);
        let object = store.get_mut(handle).expect("inserted just now");
        init(object);
        object.on_spawn();
        Ok(handle)
    }

    /// Puts a stowed (reset) object among the ready ones: the cell as
    /// [`Releasable::stow_compact`](respawn_arena::Releasable::stow_compact) hands it over.
    #[inline(always)]
    fn shelve(&mut self, stowed: Option<CompactCell>) {
        let Some(cell) = stowed else { return self.shelve_retired() };
        self.tally.recycled_reuse += 1;
        if let Err(cell) = self.push_ready(cell) {
            self.shelve_failed(cell);
        }
    }

    /// [`shelve`](Self::shelve) of a slot that retired: `stow` dropped the object, which
    /// leaves the hand.
    #[cold]
    #[inline(never)]
    fn shelve_retired(&mut self) {
        self.depot.count_in_hand(-1);
        self.depot.count_retired();
    }

    /// [`shelve`](Self::shelve) with the depot full: the object goes.
    #[cold]
    #[inline(never)]
    fn shelve_failed(&mut self, cell: CompactCell) {
        // SAFETY: `stow` left the reset object in the cell, ours alone; dropped once.
        unsafe { std::ptr::drop_in_place(self.cell(&cell).cast::<T>().as_ptr()) };
        self.depot.give_back(cell);
        self.depot.count_in_hand(-1);
    }

    /// `Purge`: the collector's destroy pipeline without a mark; cells come back through
    /// the free route.
    fn purge(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        // `destroy_now` routes the cells as `Ended::DestroyedNow`: counted as recycled by
        // `Purge`.
        heap.destroy_now(raw).map_err(refusal)?;
        Ok(())
    }
}

/// The class's free route: [`Depot::route`].
fn route(depot: &Depot<CompactCell>, freed: Freed) {
    depot.route(freed);
}

/// Hands the cells the pool gave up back to the arena, as vacant slots.
fn recycle_spare<T>(depot: &Depot<CompactCell>, map: &CellMap, heap: &mut Heap) {
    depot.drain_spare(|cell| {
        // A cell given back with its ended object still in it (`async_purge`, the pool at
        // `max`) has it dropped here, on the game thread. A panicking destructor is caught
        // and counted (`drop_panics`): the memory is a cell all the same.
        let cell = if cell.is_occupied() {
            // SAFETY: an occupied cell given back holds its class's ended object, the
            // pool's alone; the token comes back vacant, so it is dropped once.
            let (cell, panicked) = unsafe { depot::drop_occupant::<T, CompactCell>(cell, map) };
            depot.dropped(panicked, false);
            cell
        } else {
            cell
        };
        // SAFETY: the pool's map compacted every cell it trades; its heap is alive.
        let cell = unsafe { map.expand(cell) };
        let back = heap.arena_mut_bypassing_gc().recycle(cell);
        debug_assert!(back.is_ok(), "a pool's cell belongs to its arena");
    });
}

/// `cell` (a cell of the pool's class) in the form the pool keeps it.
#[inline(always)]
fn compact(map: &CellMap, cell: FreedCell) -> CompactCell {
    map.compact(cell).unwrap_or_else(|_| unreachable!("a cell of another class in a pool"))
}

impl<T: Poolable> ClassPool<T> {
    /// The typed release of `h`: one resolve for the checks, the hooks and the stow; no
    /// error value on the way to success, and the result written once, into the caller's.
    /// An owner of sub-objects takes the checked release ([`destroy_owner`](Self::destroy_owner)):
    /// its sub-objects must be checked before anything changes.
    #[inline(always)]
    pub(crate) fn destroy(&mut self, heap: &mut Heap, h: Handle<T>) -> Result<(), PoolError> {
        let mut store = self.store(heap);
        let mut found = match store.releasable(h) {
            Ok(found) => found,
            Err(e) => return Err(refused(heap, h.raw(), e)),
        };
        if found.flags().contains(ObjectFlags::HAS_SUBOBJECTS) {
            return self.destroy_owner(heap, h.raw());
        }
        // Lent once for both hooks: one barrier test.
        let object = found.object();
        object.on_release();
        self.tally.released += 1;
        let policy = self.config.policy;
        match policy {
            // Within `max` (the flag says so without counting): reset and ready again.
            Policy::Reuse if !self.above_max() => {
                object.reset();
                let stowed = found.stow_compact();
                self.shelve(stowed);
                Ok(())
            }
            // `found`'s borrow of the heap ends with its last use above.
            Policy::Default => heap.mark_as_garbage(h.raw()).map(drop).map_err(refusal),
            // `Purge`, and `Reuse` above `max`: overflow objects are out, so the release
            // ends the object and the pool shrinks back to `max`.
            Policy::Purge | Policy::Reuse => self.purge(heap, h.raw()),
        }
    }

    /// [`destroy`](Self::destroy) of an owner of sub-objects, which `destroy` found
    /// releasable in the pool's class: the pool's checked release, one walk down its
    /// sub-objects ([`ErasedPool::release`]).
    #[cold]
    #[inline(never)]
    fn destroy_owner(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        ErasedPool::release(self, heap, raw)
    }
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

impl<T: Poolable> ErasedPool for ClassPool<T> {
    fn release(&mut self, heap: &mut Heap, raw: RawHandle) -> Result<(), PoolError> {
        // The one walk down the object's sub-objects: it checks them all before anything
        // changes, and each policy below ends what it walked without walking again.
        let mut subtree = heap.subtree(raw).map_err(refusal)?;
        subtree.root_mut::<T>().ok_or(PoolError::Stale)?.on_release();
        self.tally.released += 1;
        match self.config.policy {
            Policy::Default => {
                subtree.mark_as_garbage();
            }
            Policy::Purge => {
                subtree.destroy_now();
            }
            Policy::Reuse => {
                // The sub-objects end now (their cells go to their own pools); the owner is
                // reset and put back — or, above `max`, ends too, so the pool shrinks back.
                subtree.destroy_sub_objects();
                if self.owned() > self.config.max {
                    return self.purge(heap, raw);
                }
                let mut store = self.store(heap);
                let mut found = store.releasable(Handle::<T>::from_raw(raw))?;
                found.object().reset();
                let stowed = found.stow_compact();
                self.shelve(stowed);
            }
        }
        Ok(())
    }

    fn note_inserted(&mut self) {
        self.count_spawned(false);
        self.over_max = true;
    }

    fn maintain(&mut self, heap: &mut Heap) {
        recycle_spare::<T>(&self.depot, &self.map, heap);
        if self.config.precreate && self.available() < self.config.low_watermark {
            let _ = self.grow(heap, self.config.grow_by);
        }
        self.depot.nudge();
    }

    fn stats(&self) -> PoolStats {
        let (d, t) = (self.depot.snapshot(), &self.tally);
        // The game thread's own magazines are one consumer's pair; the pool's struct and
        // its `Reuse` sub-object buffer are its own too.
        let side_bytes = self.depot.side_bytes(1) + mem::size_of::<Self>();
        PoolStats {
            class: self.name,
            policy: self.config.policy,
            spawns: t.spawns,
            hits: t.spawns - t.misses,
            misses: t.misses,
            overflow: t.overflow,
            ready: d.published + d.held + self.local(),
            in_use: d.in_hand.saturating_sub(self.local()),
            high_water: t.high_water.max(self.trim.peak),
            released: t.released,
            recycled_reuse: t.recycled_reuse,
            recycled_purge: d.routed_purge,
            recycled_gc: d.routed_gc,
            returned: d.returned,
            retired: d.retired,
            grown: t.grown,
            side_bytes,
            trimmed: self.trim.trimmed,
            // The class's memory is the heap's: `Pools` fills it in.
            committed_bytes: 0,
            ..d.pool_stats()
        }
    }

    fn trim(&mut self, heap: &mut Heap, keep: usize) -> Result<usize, PoolError> {
        ClassPool::trim(self, heap, keep)
    }

    fn idle_upkeep(&mut self, heap: &mut Heap, dt: Duration) {
        ClassPool::idle_upkeep(self, heap, dt);
    }

    fn config(&self) -> &PoolConfig {
        &self.config
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn cold(&self) -> Option<Cold> {
        if self.depot.is_warm() {
            return None;
        }
        // Out of cells to build, a worker publishes its partial magazine at once instead
        // of after an idle spell.
        self.depot.go_hungry();
        let d = self.depot.snapshot();
        Some(Cold { ready: d.published + self.local(), on_the_way: d.building + d.held })
    }

    fn shutdown(&mut self) {
        self.depot.stop();
        for worker in self.workers.drain(..) {
            // A worker that panicked outside `create` has nothing left to clean up here.
            let _ = worker.join();
        }
        let local = self.local();
        self.depot.count_in_hand(-(local as isize));
        // A panicking destructor in one step does not skip the other.
        let mut drops = DropAll::new();
        // SAFETY: every cell in the game thread's magazines holds a ready object the pool
        // alone owns, and the workers are joined, so each drop here is the object's one.
        drops.run(|| unsafe { self.magazines.drop_objects::<T>(&self.map) });
        // SAFETY: as above, for the depot's published magazines.
        drops.run(|| unsafe { self.depot.drain_published::<T>() });
    }
}

impl<T: Poolable> Drop for ClassPool<T> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
