//! What a pool's game-thread side, its free route and its precreation workers share (the
//! [`Depot`]): the queues of cells to build and of full and empty magazines, the counters,
//! the parking lot. The World's pools trade arena cells ([`FreedCell`]); a standalone
//! [`Pool`](crate::Pool) trades cells of its own allocator class ([`Token`] covers both).
//!
//! ```text
//!   game thread                         workers (N threads)
//!   ───────────                         ───────────────────
//!   free route ── FreedCell ──► to_build ──► create() into the cell
//!   grow()     ── FreedCell ──►    │            │ push into its own magazine
//!                                  │            ▼
//!   loaded/previous ◄── whole magazine ── full ◄── publish when full (or when hungry)
//!   magazines       ── empty magazine ──► empty ──► next magazine to fill
//! ```
//!
//! Every cell in these queues is owned by the queue (the token is the ownership); a cell in
//! a magazine holds a constructed object, a cell in `to_build` does not. Only the game
//! thread touches the object table.

use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use respawn_arena::FreedCell;

use crate::sync::{back_off, fence, Arc, ArrayQueue, AtomicBool, AtomicU64, AtomicUsize, Condvar, Mutex, Ordering};

/// Cells per magazine: one trade with the depot per this many spawns.
#[cfg(not(loom))]
pub(crate) const MAGAZINE: usize = 128;
/// Two under loom, so a model fills, publishes and starts a partial magazine in a few steps.
#[cfg(loom)]
pub(crate) const MAGAZINE: usize = 2;

/// A worker out of work publishes its partial magazine while the depot holds fewer ready
/// objects than this (or the game thread is hungry). Zero under loom, so the models reach
/// a partial magazine only through the hungry hand-shake.
#[cfg(not(loom))]
const LOW_DEPOT: usize = 2 * MAGAZINE;
#[cfg(loom)]
const LOW_DEPOT: usize = 0;

/// A worker that holds a partial magazine and has had no work for this long publishes it,
/// so an idle pool (warm-up done, a lull in releases) has every object it built where a
/// spawn can take it. Longer than a frame, so steady per-frame rebuilds still fill whole
/// magazines. None under loom, whose condition variables ignore time.
#[cfg(not(loom))]
const IDLE_FLUSH: Option<Duration> = Some(Duration::from_millis(20));
#[cfg(loom)]
const IDLE_FLUSH: Option<Duration> = None;

/// Ownership of one cell a pool trades: uninitialised memory for one object, or a built
/// object (in a magazine).
pub(crate) trait Token: Send + 'static {
    /// The cell's memory.
    fn cell(&self) -> NonNull<u8>;
}

impl Token for FreedCell {
    #[inline]
    fn cell(&self) -> NonNull<u8> {
        FreedCell::cell(self)
    }
}

/// A small array of cells holding ready objects (Bonwick's magazine). Its capacity is fixed
/// at [`MAGAZINE`], so pushing never allocates.
#[derive(Debug)]
pub(crate) struct Magazine<C = FreedCell>(Vec<C>);

impl<C: Token> Magazine<C> {
    pub(crate) fn new() -> Self {
        Self(Vec::with_capacity(MAGAZINE))
    }
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.0.len() == MAGAZINE
    }
    #[inline]
    pub(crate) fn pop(&mut self) -> Option<C> {
        self.0.pop()
    }
    /// The cell the next `pop` returns.
    #[inline]
    pub(crate) fn last(&self) -> Option<&C> {
        self.0.last()
    }
    #[inline]
    pub(crate) fn push(&mut self, cell: C) {
        debug_assert!(!self.is_full(), "pushing into a full magazine");
        self.0.push(cell);
    }
    /// Drops the object in each of the magazine's cells and empties it.
    ///
    /// # Safety
    /// Every cell holds an initialised `T` that the caller owns alone (nobody else drops it).
    pub(crate) unsafe fn drop_objects<T>(&mut self) {
        for cell in self.0.drain(..) {
            // SAFETY: the caller's contract; each cell leaves the magazine as it is dropped.
            unsafe { std::ptr::drop_in_place(cell.cell().cast::<T>().as_ptr()) };
        }
    }
}

/// Where [`Magazines::refill`] found ready objects.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Refilled {
    /// The `previous` magazine, swapped in.
    Previous,
    /// A full magazine from the depot (which now has our empty one).
    Depot,
    /// Nowhere: both magazines and the depot are empty.
    Nothing,
}

/// The two magazines a consumer (the World's game thread, or one thread of a standalone
/// pool) pops from and pushes to: Bonwick's `loaded` and `previous`. Spawns pop `loaded`;
/// `previous` is swapped in when `loaded` runs dry (or over, on a return) before the depot
/// is touched, so the depot sees one trade per magazine, not one per object.
#[derive(Debug)]
pub(crate) struct Magazines<C = FreedCell> {
    pub(crate) loaded: Magazine<C>,
    pub(crate) previous: Magazine<C>,
}

impl<C: Token> Magazines<C> {
    pub(crate) fn new() -> Self {
        Self { loaded: Magazine::new(), previous: Magazine::new() }
    }

    /// Ready objects in both magazines.
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.loaded.len() + self.previous.len()
    }

    #[inline]
    pub(crate) fn pop(&mut self) -> Option<C> {
        self.loaded.pop()
    }

    /// Makes `loaded` non-empty if it can: `previous`, else a full magazine from the depot.
    pub(crate) fn refill(&mut self, depot: &Depot<C>) -> Refilled {
        if !self.previous.is_empty() {
            mem::swap(&mut self.loaded, &mut self.previous);
            return Refilled::Previous;
        }
        let Some(full) = depot.take_full() else { return Refilled::Nothing };
        depot.hungry.store(false, Ordering::Relaxed);
        depot.return_empty(mem::replace(&mut self.loaded, full));
        Refilled::Depot
    }

    /// Puts a returned object among the ready ones (Bonwick's free path): `loaded`, else
    /// `previous` after a swap, else `previous` goes to the depot as a full magazine. `Err`
    /// (the cell back, nothing changed) only if the depot is full too.
    #[inline]
    pub(crate) fn push(&mut self, depot: &Depot<C>, cell: C) -> Result<(), C> {
        if !self.loaded.is_full() {
            self.loaded.push(cell);
            return Ok(());
        }
        self.push_slow(depot, cell)
    }

    #[cold]
    fn push_slow(&mut self, depot: &Depot<C>, cell: C) -> Result<(), C> {
        if self.previous.is_empty() {
            mem::swap(&mut self.loaded, &mut self.previous);
        } else {
            let empty = depot.empty.pop().unwrap_or_else(Magazine::new);
            let full = mem::replace(&mut self.previous, mem::replace(&mut self.loaded, empty));
            if let Err(full) = depot.publish_local(full) {
                // The depot is full: put both magazines back as they were.
                let empty = mem::replace(&mut self.loaded, mem::replace(&mut self.previous, full));
                depot.return_empty(empty);
                return Err(cell);
            }
        }
        self.loaded.push(cell);
        Ok(())
    }

    /// Drops the object in each cell of both magazines and empties them.
    ///
    /// # Safety
    /// As [`Magazine::drop_objects`].
    pub(crate) unsafe fn drop_objects<T>(&mut self) {
        // SAFETY: the caller's contract, for both magazines.
        unsafe {
            self.loaded.drop_objects::<T>();
            self.previous.drop_objects::<T>();
        }
    }
}

/// Counters written by one side and read by anyone (stats). Relaxed: each is a tally.
#[derive(Debug, Default)]
pub(crate) struct Counters {
    /// Objects built by workers.
    pub(crate) precreated: AtomicU64,
    /// Nanoseconds workers spent in `create`, summed, and the longest one.
    pub(crate) create_nanos: AtomicU64,
    pub(crate) create_max_nanos: AtomicU64,
    /// `create` calls that panicked (their cells go back to the arena).
    pub(crate) create_panics: AtomicU64,
    /// Cells the free route received during a `Purge` release, and otherwise (the GC's
    /// purge: `Default` releases and unreachable objects).
    pub(crate) routed_purge: AtomicU64,
    pub(crate) routed_gc: AtomicU64,
    /// Routed cells sent back to the arena because the pool was at `max` (or has no
    /// workers to rebuild them).
    pub(crate) returned: AtomicU64,
    /// Objects whose slot retired at the generation ceiling (no cell comes back).
    pub(crate) retired: AtomicU64,
}

/// State shared by a pool's game-thread side, its free route and its workers.
#[derive(Debug)]
pub(crate) struct Depot<C = FreedCell> {
    /// Cells waiting for a worker to build an object in them.
    pub(crate) to_build: ArrayQueue<C>,
    /// Magazines of ready objects, for the game thread.
    pub(crate) full: ArrayQueue<Magazine<C>>,
    /// Empty magazines, for the workers.
    pub(crate) empty: ArrayQueue<Magazine<C>>,
    /// Cells the game thread must hand back to the arena (pool above `max`, no workers, a
    /// failed `create`). Behind a lock: rare, and drained by the game thread alone.
    pub(crate) spare: Mutex<Vec<C>>,
    /// Objects in `full`. Counted after the push that publishes them and uncounted after
    /// the pop that takes them, so it never counts a magazine not yet in `full`, and dips
    /// below zero (wrapping) while a pop overtakes its publish's count: read it through
    /// [`published`](Self::published) or in wrapping sums.
    pub(crate) ready: AtomicUsize,
    /// Cells sent to `to_build` whose object is not built yet (queued, being built).
    pub(crate) building: AtomicUsize,
    /// Objects built and waiting in a worker's magazine until it fills (or the depot runs
    /// low).
    pub(crate) held: AtomicUsize,
    /// Objects of the class alive in the world (spawned and not yet released or routed
    /// back). Written by the game thread only, on every spawn: on a cache line of its own,
    /// away from the counters workers write, so a spawn never waits for a worker's core.
    pub(crate) live: CachePadded<AtomicUsize>,
    /// The pool's ceiling on cells it owns (`live + ready + building` and the game
    /// thread's magazines).
    pub(crate) max: usize,
    /// Ready objects in the game thread's magazines (mirrored for the route's `max` check);
    /// padded like `live`.
    pub(crate) local: CachePadded<AtomicUsize>,
    /// Number of worker threads (0: routed cells go straight back to the arena).
    pub(crate) workers: usize,
    /// The game thread found no full magazine: workers publish partial ones.
    pub(crate) hungry: AtomicBool,
    pub(crate) shutdown: AtomicBool,
    /// Workers parked or about to park.
    sleepers: AtomicUsize,
    lock: Mutex<()>,
    wake: Condvar,
    /// Set by the world around `Purge` releases; shared by every pool of a world.
    pub(crate) counters: CachePadded<Counters>,
}

/// Cells a pool's `to_build` queue holds: four times its biggest planned batch (its
/// capacity, a growth step, a magazine) in flight at once, and never more than `max`.
/// `ArrayQueue` commits its whole buffer up front, 24 bytes a cell; sized by `max`, the
/// `PROJECTILES` preset's queue alone took 24 MiB a pool. A released cell that finds the
/// queue full goes back to the arena (counted in `returned`), so a mass release shrinks the
/// pool rather than the queue growing; growth steps stop at the queue's room.
#[cfg(not(loom))]
fn build_queue_len(config: &crate::PoolConfig) -> usize {
    config.capacity.max(config.grow_by).max(MAGAZINE).saturating_mul(4).min(config.max).max(1)
}

impl<C: Token> Depot<C> {
    /// The depot of a pool configured by `config`: its `max`, its workers, and a `to_build`
    /// queue sized by [`build_queue_len`].
    #[cfg(not(loom))]
    pub(crate) fn for_config(config: &crate::PoolConfig) -> Self {
        Self::new(config.max, build_queue_len(config), config.workers)
    }

    /// A depot for a pool of at most `max` cells whose `to_build` queue holds `queue`.
    pub(crate) fn new(max: usize, queue: usize, workers: usize) -> Self {
        // Every magazine in `full` holds at least one object, so `full` does not overflow
        // while the pool stays within `max` (the game thread's and workers' own magazines
        // are outside the queues).
        let magazines = max.div_ceil(MAGAZINE) + 2 * workers + 8;
        let empty = ArrayQueue::new(magazines);
        // Enough empty magazines for the workers and the game thread to start trading
        // without allocating.
        for _ in 0..(2 * workers + 4).min(magazines) {
            let _ = empty.push(Magazine::new());
        }
        Self {
            to_build: ArrayQueue::new(queue.max(1)),
            full: ArrayQueue::new(magazines.min(max.max(1))),
            empty,
            spare: Mutex::new(Vec::new()),
            ready: AtomicUsize::new(0),
            building: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            live: CachePadded::new(AtomicUsize::new(0)),
            max,
            local: CachePadded::new(AtomicUsize::new(0)),
            workers,
            hungry: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            sleepers: AtomicUsize::new(0),
            lock: Mutex::new(()),
            wake: Condvar::new(),
            counters: CachePadded::new(Counters::default()),
        }
    }

    /// Objects on their way or ready, as growth decisions need them: read upstream first
    /// (`building` → `held` → `ready`, the way objects move, each move ordered by a Release
    /// on the counter it leaves), so an object moving during the reads is counted twice,
    /// never missed. Read the other way, a move between two reads hid it, and the pool
    /// grew by a whole `grow_by` more than it needed (seen under Miri's scheduler).
    #[inline]
    pub(crate) fn on_the_way(&self) -> usize {
        let building = self.building.load(Ordering::Acquire);
        let held = self.held.load(Ordering::Acquire);
        settled(building.wrapping_add(held).wrapping_add(self.ready.load(Ordering::Relaxed)))
    }

    /// Objects in published magazines: a pull that sees this many can take them. (A
    /// magazine is counted only once it is in `full`; see `ready`.)
    #[inline]
    pub(crate) fn published(&self) -> usize {
        settled(self.ready.load(Ordering::Acquire))
    }

    /// Cells the pool owns outside the world: ready (the depot's, the workers' and the game
    /// thread's) and being built.
    #[inline]
    pub(crate) fn pooled(&self) -> usize {
        let ready = self.ready.load(Ordering::Relaxed).wrapping_add(self.held.load(Ordering::Relaxed));
        settled(
            ready.wrapping_add(self.local.load(Ordering::Relaxed)).wrapping_add(self.building.load(Ordering::Relaxed)),
        )
    }

    /// `(published, held)` for a stats snapshot. Published first, then held: a magazine
    /// published between the reads is missed, never counted twice, so `ready - held` never
    /// exceeds what a spawn can take.
    pub(crate) fn published_and_held(&self) -> (usize, usize) {
        let published = self.published();
        (published, self.held.load(Ordering::Acquire))
    }

    /// Cells a growth step can queue now: the room left in `to_build`.
    #[inline]
    pub(crate) fn build_room(&self) -> usize {
        self.to_build.capacity() - self.to_build.len()
    }

    /// Sends a cell to the workers, or back to the arena when the pool has no workers.
    /// Wakes a worker once a magazine's worth is waiting.
    pub(crate) fn request(&self, cell: C) {
        if self.workers == 0 {
            self.give_back(cell);
            return;
        }
        self.building.fetch_add(1, Ordering::Relaxed);
        if let Err(cell) = self.to_build.push(cell) {
            // A release burst larger than the queue: the cell goes back to the arena.
            self.building.fetch_sub(1, Ordering::Relaxed);
            self.give_back(cell);
            return;
        }
        if self.to_build.len() >= MAGAZINE {
            self.kick();
        }
    }

    /// Hands a cell back to the arena (at the game thread's next maintenance).
    pub(crate) fn give_back(&self, cell: C) {
        self.counters.returned.fetch_add(1, Ordering::Relaxed);
        self.spare.lock().push(cell);
    }

    /// Wakes the workers if any is parked. Cheap when none is: one fence and one load.
    pub(crate) fn kick(&self) {
        // Pairs with the fence in `park`: either the worker sees the work, or we see it
        // parking and notify under the lock it waits with (loom model `park_and_kick`).
        fence(Ordering::SeqCst);
        if self.sleepers.load(Ordering::Relaxed) > 0 {
            let _guard = self.lock.lock();
            self.wake.notify_all();
        }
    }

    /// Tells the workers to return, waking any that is parked. The caller joins them.
    pub(crate) fn stop(&self) {
        self.shutdown.store(true, Ordering::Release);
        self.kick();
    }

    /// A worker with nothing to do waits here until there is work, the game thread is
    /// hungry for the partial magazine it holds, or the pool shuts down; or, holding one,
    /// until it has been idle for [`IDLE_FLUSH`]. Returns whether that idle time ran out.
    fn park(&self, holding: bool) -> bool {
        let flush_at = IDLE_FLUSH.filter(|_| holding).map(|idle| Instant::now() + idle);
        let mut idle = false;
        let mut guard = self.lock.lock();
        self.sleepers.fetch_add(1, Ordering::Relaxed);
        fence(Ordering::SeqCst);
        while !self.shutdown.load(Ordering::Relaxed)
            && self.to_build.is_empty()
            && !(holding && self.hungry.load(Ordering::Relaxed))
        {
            // The 50 ms timeout is a safety net only; wake-ups come from `kick`. (Loom
            // ignores it, so a lost wake-up would deadlock the models.)
            let mut wait = Duration::from_millis(50);
            if let Some(at) = flush_at {
                let now = Instant::now();
                if now >= at {
                    idle = true;
                    break;
                }
                wait = wait.min(at - now);
            }
            guard = self.wake.wait_for(guard, wait);
        }
        self.sleepers.fetch_sub(1, Ordering::Relaxed);
        drop(guard);
        idle
    }

    /// An empty magazine for a worker (a new one only until enough circulate).
    fn take_empty(&self) -> Magazine<C> {
        self.empty.pop().unwrap_or_else(Magazine::new)
    }

    /// Gives the game thread a worker's magazine of ready objects.
    fn publish(&self, magazine: Magazine<C>) -> Result<(), Magazine<C>> {
        let n = magazine.len();
        self.publish_local(magazine)?;
        // Release: whoever sees the objects leave `held` sees them in `ready` (`on_the_way`).
        self.held.fetch_sub(n, Ordering::Release);
        Ok(())
    }

    /// Takes a full magazine for the game thread.
    #[inline]
    pub(crate) fn take_full(&self) -> Option<Magazine<C>> {
        let magazine = self.full.pop()?;
        self.ready.fetch_sub(magazine.len(), Ordering::Relaxed);
        Some(magazine)
    }

    /// Returns an empty magazine to the workers (dropped if enough are circulating).
    #[inline]
    pub(crate) fn return_empty(&self, magazine: Magazine<C>) {
        debug_assert!(magazine.is_empty());
        let _ = self.empty.push(magazine);
    }

    /// At shutdown, once the workers are joined: drops the objects in the published
    /// magazines and forgets the cells queued for building (they hold nothing; their
    /// memory goes with the arena).
    ///
    /// # Safety
    /// Every worker has returned, and `T` is the class the workers built.
    pub(crate) unsafe fn drain_published<T>(&self) {
        while let Some(mut magazine) = self.take_full() {
            // SAFETY: a published magazine's cells hold objects the workers built; with the
            // workers gone, the pool alone owns them.
            unsafe { magazine.drop_objects::<T>() };
        }
        while self.to_build.pop().is_some() {
            self.building.fetch_sub(1, Ordering::Relaxed);
        }
    }

    /// Publishes a full magazine from the game thread (the `Reuse` path when both of its
    /// magazines are full).
    pub(crate) fn publish_local(&self, magazine: Magazine<C>) -> Result<(), Magazine<C>> {
        let n = magazine.len();
        self.full.push(magazine)?;
        // Counted after the push (Release, paired with `published`'s Acquire): whoever reads
        // the count can pop the magazine. A pop may overtake this and subtract first.
        self.ready.fetch_add(n, Ordering::Release);
        Ok(())
    }
}

/// A counter sum read while other threads move objects between counters: a transient dip
/// below zero (see [`Depot::ready`]) reads as zero.
#[inline]
fn settled(sum: usize) -> usize {
    usize::try_from(sum as isize).unwrap_or(0)
}

/// A precreation worker: builds an object in each cell from `to_build`, fills magazines,
/// publishes them; parks when there is nothing to do; returns at shutdown.
pub(crate) fn work<T: Send + 'static, C: Token>(depot: Arc<Depot<C>>, create: Arc<dyn Fn() -> T + Send + Sync>) {
    let mut current: Option<Magazine<C>> = None;
    // Parked holding a partial magazine and woke with no work for `IDLE_FLUSH`.
    let mut idle = false;
    loop {
        if depot.shutdown.load(Ordering::Acquire) {
            break;
        }
        let Some(cell) = depot.to_build.pop() else {
            // Out of work. A partial magazine is handed over only when the game thread may
            // soon need it (the depot is low, or it found the depot empty): publishing every
            // partial one would spread the ready objects over ever more magazines. An idle
            // worker hands it over too.
            #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))] // LOW_DEPOT is 0 there
            let low = depot.published() < LOW_DEPOT || depot.hungry.load(Ordering::Relaxed);
            if (low || idle) && current.as_ref().is_some_and(|m| !m.is_empty()) {
                idle = false;
                match depot.publish(current.take().expect("holding")) {
                    Ok(()) => continue,
                    Err(magazine) => current = Some(magazine),
                }
            }
            idle = depot.park(current.as_ref().is_some_and(|m| !m.is_empty()));
            continue;
        };
        idle = false;
        let start = Instant::now();
        match panic::catch_unwind(AssertUnwindSafe(&*create)) {
            Ok(value) => {
                // SAFETY: the token owns its cell: uninitialised memory of `T`'s layout
                // (the class's cell), written once here before anyone else sees it.
                unsafe { cell.cell().cast::<T>().as_ptr().write(value) };
                let nanos = start.elapsed().as_nanos() as u64;
                // Counted as built before it stops counting as building, so whoever sees
                // `building` drop sees the object (Release pairs with stats' Acquire).
                let c = &depot.counters;
                c.precreated.fetch_add(1, Ordering::Relaxed);
                c.create_nanos.fetch_add(nanos, Ordering::Relaxed);
                c.create_max_nanos.fetch_max(nanos, Ordering::Relaxed);
                depot.held.fetch_add(1, Ordering::Relaxed);
                depot.building.fetch_sub(1, Ordering::Release);
                let magazine = current.get_or_insert_with(|| depot.take_empty());
                magazine.push(cell);
                if magazine.is_full() {
                    let mut full = current.take().expect("just filled");
                    while let Err(back) = depot.publish(full) {
                        // The depot is full only while the game thread is behind; wait for it.
                        if depot.shutdown.load(Ordering::Acquire) {
                            current = Some(back);
                            break;
                        }
                        full = back;
                        back_off(Duration::from_micros(100));
                    }
                }
            }
            Err(_) => {
                depot.counters.create_panics.fetch_add(1, Ordering::Relaxed);
                depot.building.fetch_sub(1, Ordering::Relaxed);
                depot.give_back(cell);
            }
        }
    }
    // Shutdown: the objects this worker holds are dropped here (the game thread drops the
    // published ones); their cells simply go with the arena.
    if let Some(mut magazine) = current {
        depot.held.fetch_sub(magazine.len(), Ordering::Relaxed);
        // SAFETY: every cell in a worker's magazine holds an object it built; the worker is
        // its only owner and drops it once.
        unsafe { magazine.drop_objects::<T>() };
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use std::ptr::NonNull;

    use loom::cell::UnsafeCell;
    use respawn_arena::FreedCell;

    use super::{work, Depot, MAGAZINE};
    use respawn_allocator::sync::thread;

    use crate::sync::{Arc, AtomicUsize, Ordering};

    /// What a model's worker builds: the number of the `create` call, whose loom cell
    /// `create` wrote. Whoever reads an object reads its cell too, so loom reports a read
    /// that is not ordered after the build (a missing happens-before in the hand-off).
    /// One loom cell per object number.
    struct Marks(Vec<UnsafeCell<u32>>);

    // SAFETY: the marks are shared on purpose: every access goes through loom's cell, which
    // reports any two that are not ordered.
    unsafe impl Sync for Marks {}

    struct Built {
        marks: Arc<Marks>,
        made: Arc<AtomicUsize>,
        dropped: Arc<AtomicUsize>,
    }

    struct Obj {
        n: usize,
        dropped: Arc<AtomicUsize>,
    }

    impl Drop for Obj {
        fn drop(&mut self) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    impl Built {
        fn new(objects: usize) -> Self {
            Self {
                marks: Arc::new(Marks((0..objects).map(|_| UnsafeCell::new(0)).collect())),
                made: Arc::new(AtomicUsize::new(0)),
                dropped: Arc::new(AtomicUsize::new(0)),
            }
        }

        fn create(&self) -> Arc<dyn Fn() -> Obj + Send + Sync> {
            let (marks, made, dropped) = (Arc::clone(&self.marks), Arc::clone(&self.made), Arc::clone(&self.dropped));
            // loom's `Arc` cannot coerce to `dyn`; std's can, and loom adopts it.
            let create: std::sync::Arc<dyn Fn() -> Obj + Send + Sync> = std::sync::Arc::new(move || {
                let n = made.fetch_add(1, Ordering::Relaxed);
                // SAFETY: each `create` call writes the mark of its own number, once.
                marks.0[n].with_mut(|m| unsafe { *m = 1 });
                Obj { n, dropped: Arc::clone(&dropped) }
            });
            Arc::from_std(create)
        }

        /// Takes the object out of a cell the game thread received, checking its build is
        /// visible.
        fn take(&self, cell: &FreedCell) -> usize {
            // SAFETY: a cell out of a published magazine holds an object a worker built;
            // the game thread owns it now and moves it out once.
            let obj = unsafe { cell.cell().cast::<Obj>().as_ptr().read() };
            // SAFETY: loom checks this read is ordered after `create`'s write.
            let mark = self.marks.0[obj.n].with(|m| unsafe { *m });
            assert_eq!(mark, 1, "object {} handed over before it was built", obj.n);
            obj.n
        }
    }

    /// Memory for `n` cells of `Obj`, and a token for each.
    fn cells(n: usize) -> (Vec<std::mem::MaybeUninit<Obj>>, Vec<FreedCell>) {
        let mut memory: Vec<std::mem::MaybeUninit<Obj>> = (0..n).map(|_| std::mem::MaybeUninit::uninit()).collect();
        let tokens = memory
            .iter_mut()
            .enumerate()
            .map(|(i, m)| FreedCell::for_model(i as u32, NonNull::from(m).cast()))
            .collect();
        (memory, tokens)
    }

    /// Objects a model queues: a full magazine and one more, so one is left partial.
    const N: usize = MAGAZINE + 1;

    /// A pool with one worker running, and `N` cells queued for it as `grow` queues them.
    struct Model {
        built: Built,
        depot: Arc<Depot>,
        worker: thread::JoinHandle<()>,
        /// The cells' memory; outlives the worker (joined before the model drops).
        _memory: Vec<std::mem::MaybeUninit<Obj>>,
    }

    impl Model {
        fn start() -> Self {
            let built = Built::new(N);
            let (memory, tokens) = cells(N);
            let depot = Arc::new(Depot::new(N, N, 1));
            let worker = {
                let (depot, create) = (Arc::clone(&depot), built.create());
                thread::spawn(move || work::<Obj, FreedCell>(depot, create))
            };
            for token in tokens {
                depot.request(token);
            }
            depot.kick();
            Self { built, depot, worker, _memory: memory }
        }

        /// Shuts the pool down as `ClassPool::shutdown` does and checks nothing stays counted.
        fn stop(self) -> Built {
            self.depot.stop();
            self.worker.join().unwrap();
            // SAFETY: the worker has returned, and it built `Obj`s.
            unsafe { self.depot.drain_published::<Obj>() };
            assert_eq!(self.depot.ready.load(Ordering::Relaxed), 0);
            assert_eq!(self.depot.held.load(Ordering::Relaxed), 0);
            assert_eq!(self.depot.building.load(Ordering::Relaxed), 0, "queued cells still counted");
            self.built
        }
    }

    /// The ready queue and magazine exchange, and the hungry hand-shake: the game thread
    /// queues three cells for a worker (which may already be parked), takes the full
    /// magazine the worker publishes, finds the depot empty, says it is hungry, and must
    /// get the worker's partial magazine. Every object arrives once, built, and the
    /// counters balance. A lost wake-up deadlocks the model (loom ignores the timeout).
    #[test]
    fn magazine_exchange() {
        loom::model(|| {
            let model = Model::start();
            let (depot, built) = (&model.depot, &model.built);
            let mut got = Vec::new();
            while got.len() < N {
                match depot.take_full() {
                    Some(mut magazine) => {
                        depot.hungry.store(false, Ordering::Relaxed);
                        while let Some(cell) = magazine.pop() {
                            got.push(built.take(&cell));
                        }
                        depot.return_empty(magazine);
                    }
                    None => {
                        depot.hungry.store(true, Ordering::Relaxed);
                        depot.kick();
                        thread::yield_now();
                    }
                }
            }
            got.sort_unstable();
            assert_eq!(got, (0..N).collect::<Vec<_>>(), "an object lost or handed out twice");
            assert_eq!(depot.counters.precreated.load(Ordering::Relaxed), N as u64);

            let built = model.stop();
            assert_eq!(built.dropped.load(Ordering::Relaxed), N, "the game thread drops what it took");
        });
    }

    /// Park and kick at shutdown: the pool shuts down while the worker is building, holding
    /// a partial magazine, or parked. The kick must reach it (no timeout under loom), and
    /// every object built is dropped exactly once — by the worker (its own magazine) or by
    /// the pool (published ones, `drain_published`) — and nothing stays counted.
    #[test]
    fn shutdown_drops_each_object_once() {
        loom::model(|| {
            let built = Model::start().stop();
            let made = built.made.load(Ordering::Relaxed);
            assert_eq!(built.dropped.load(Ordering::Relaxed), made, "built {made}, dropped otherwise");
        });
    }
}
