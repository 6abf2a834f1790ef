//! What a pool's game-thread side, its returned cells and its precreation workers share (the
//! [`Depot`]): the queues of cells to build and of full and empty magazines, the counters,
//! the parking lot. The World's pools trade arena cells (in four bytes each:
//! [`CompactCell`], placed by the class's [`CellMap`]); a standalone [`Pool`](crate::Pool)
//! trades cells of its own allocator class ([`Token`] covers both).
//!
//! ```text
//!   game thread                         workers (N threads)
//!   ───────────                         ───────────────────
//!   returned ── a batch of cells ──► batches ──┐
//!   grow()   ── CompactCell ──────► to_build ──┴► create() into each cell
//!                                                 │ push into its own magazine
//!                                                 ▼
//!   loaded/previous ◄── whole magazine ──── full ◄── publish when full (or on a flush request)
//!   magazines       ── empty magazine ────► empty ──► next magazine to fill
//! ```
//!
//! Every cell in these queues is owned by the queue (the token is the ownership); a cell in
//! a magazine holds a constructed object, a cell in `to_build` or a batch does not. Only the game
//! thread touches the object table.
//!
//! The depot's fields are private: the pool's sides reach them only through the steps of
//! the protocol, one method each.
//!
//! | side | steps |
//! |---|---|
//! | game thread: spawn | [`Magazines::pop`], [`Magazines::refill`] ([`take_full`](Depot::take_full), [`return_empty`](Depot::return_empty)), [`request_flush`](Depot::request_flush), [`count_checked_out`](Depot::count_checked_out) (a miss, a refill) |
//! | game thread: `Reuse` release | [`owned`](Depot::owned) (after an overflow), [`Magazines::push`] (`take_empty`, [`publish_local`](Depot::publish_local)), [`count_checked_out`](Depot::count_checked_out) (a publish, a retirement), [`count_retired`](Depot::count_retired) |
//! | game thread: growth and upkeep | [`on_the_way`](Depot::on_the_way), [`request_growth`](Depot::request_growth), [`request`](Depot::request), [`wake_workers`](Depot::wake_workers), [`drain_spare`](Depot::drain_spare), [`wake_if_needed`](Depot::wake_if_needed), [`snapshot`](Depot::snapshot), [`side_bytes`](Depot::side_bytes) |
//! | game thread: shutdown | [`stop`](Depot::stop), then (workers joined) [`drain`](Depot::drain) |
//! | returned cells | [`returned`](Depot::returned) (a World's pool), [`purged`](Depot::purged) (a standalone pool's `Purge` drop), [`give_back`](Depot::give_back), [`count_returned`](Depot::count_returned) |
//! | worker ([`work_with`]) | `enlist` (once, at start), `stopping`, `take_to_build`, `build_failed`, `built` (once a run), `take_empty`, `publish`, `wants_partial`, `park`, `abandon_held` |
//!
//! (A standalone pool has no single game thread: any thread that pulls and returns plays
//! that part with its own magazines, and the pool counts its cells itself, so `checked_out`
//! stays zero.)
//!
//! Who writes each field, and with which ordering (in the manner of the arena's `Slot`):
//!
//! | field | written by | ordering | why |
//! |---|---|---|---|
//! | `to_build` | growth, and returned cells `batches` has no room for, push (the game thread; any thread for a standalone `Purge` drop); workers pop; `drain` after the join | the queue's own: a push happens before the pop that takes the cell | the token is the cell's ownership: a worker writes the object only after its pop |
//! | `batches`, `batched`, `free_batches` | the game thread fills a free batch buffer with a World pool's returned cells (`BATCH` at most; with no buffer free, a cell goes alone to `to_build`) and pushes it, counting `batched` before the push; a worker pops a batch, uncounts it, and builds in its cells one by one (its `input`), returning the buffer to `free_batches`; `drain` after the join; at shutdown a worker uncounts from `building` what its batch still holds | the queues' own; `batched` Relaxed (stats, the wake-up threshold) | as `to_build`: the batch carries its cells' ownership. The two queues share `to_build`'s room (`queued`), so what is in flight stays within [`build_queue_len`]; the buffers are all made with the depot, so a warm pool allocates nothing |
//! | `backlog`, `backlogged`, `burst` | growth (`request_growth`: what `to_build` has no room for) and `request` (a burst beyond `to_build` while the stock is short) push under the lock, then count (Relaxed) before their `wake_workers`; workers pop under the lock after `to_build` is empty (taken by `worker_lock`: a pop and a count; the buffer's trim allocates and frees outside it); `drain` after the join | the lock; `backlogged` is a hint read before taking it | the lock hands the token over; the count rises before the wake-up's fence, so a parking worker sees it (the same Dekker as `to_build`) |
//! | `full` | workers and the game thread push (`publish`, `publish_local`); the game thread pops (`take_full`) | the queue's own | a worker's writes into the magazine's cells happen before its push, so whoever pops sees built objects (loom model `magazine_exchange`) |
//! | `empty` | the game thread pushes (`return_empty`); workers and the game thread pop | the queue's own | only buffers move; no object |
//! | `spare`, `spared` | returned cells (`give_back`) and workers (`build_failed`, by `worker_lock`: one push) push and raise `spared`; the game thread's drain lowers it and drains, all under the lock | the lock; `spared` is a hint read before taking it | rare; the lock also keeps the vector's buffer between drains. A drain that misses a raised `spared` finds the cell at the next one (a failed `create`'s is counted after it, Release, so a reader of the count sees the flag) |
//! | `ready` | `publish_local` (+n after the push, Release); `take_full` (−n after the pop, Relaxed) | Release / Acquire in `published` | whoever reads a count can pop the magazine it counts; a pop overtaking its publish's count dips the sum below zero, read through `non_negative` |
//! | `building` | `request` (+1 before the push, Relaxed); a worker (−n at the end of a run of n builds, after `held` +n, Release; −1 on a failed `create`, after its cell is on the spare list and counted, Release; −1 at shutdown, Relaxed) | Release / Acquire in `on_the_way` and `snapshot` | an object moves downstream (`building` → `held` → `ready`), each move Released on the counter it leaves and read upstream first: a moving object is counted twice, never missed |
//! | `held` | a worker (+n Relaxed per run of n builds; −n Release in `publish`, Relaxed at exit) | as `building` | as `building` |
//! | `deepest` | `request` (Relaxed `fetch_max`, only when exceeded) | Relaxed | a high-water tally; nothing is ordered by it |
//! | `checked_out` | the game thread alone (`count_checked_out`, `arrived`: load and store, no read-modify-write) | Relaxed | one writer; its readers (`returned`'s `max` check, growth, stats) run on the game thread too. A spawn from a magazine and a `Reuse` release into one leave it alone. On a cache line of its own, so the game thread never waits for a worker's core |
//! | `flush_requested` | the game thread (`request_flush` sets, `take_full` clears); workers read | Relaxed | a hint: the wake-up it needs travels with the [`wake_workers`](Depot::wake_workers) that follows it (SeqCst fence) |
//! | `shutdown` | `stop` (Release) | Acquire in the worker loop; Relaxed in `park` (after its fence, or after the unpark that `stop`'s wake-up sends) and `returned` | a worker that sees it returns with everything done before `stop` visible; `returned` only sends cells back instead of queueing them |
//! | `sleepers[i].parked` | worker `i` alone: `park` raises it (Release) before its SeqCst fence and lowers it (Relaxed) once it stops parking; `wake_workers` reads every worker's (Acquire) after its SeqCst fence | Release / Acquire, between SeqCst fences | Dekker with `wake_workers`: either the kicker sees the flag and unparks the worker, or the worker sees the work; an unpark before the worker's `park_timeout` makes it return at once, and the unpark orders the work before the worker's next look (loom models `magazine_exchange`, `shutdown_drops_each_object_once`: a lost wake-up deadlocks them). No lock: the game thread never waits for a worker here |
//! | `sleepers[i].thread` | worker `i` (`enlist`, once, at start, before its first `park`) | `OnceLock`, and the flag's Release / Acquire | `wake_workers` reads it only after seeing the flag the worker raised after setting it |
//! | `enlisted` | each worker once (`enlist`: `fetch_add`) | Relaxed | hands each worker its own slot; nothing else is ordered by it |
//! | `counters` | their owning side (worker, game thread) | Relaxed | tallies for stats; nothing is ordered by them |
//! | `map`, `max`, `stock`, `workers`, the number of `sleepers` | set at creation | — | immutable |
//!
//! **No waiting on a worker.** Workers run at a lower priority than the game thread (see
//! `background_priority`), so on a busy machine a worker that holds a lock may not run
//! again for milliseconds; the game thread must not wait for one as it hands cells over. A parked
//! worker holds nothing: it parks its thread (`park_timeout`) and `wake_workers` unparks it,
//! lock-free. The two locks the game thread's hand-over can take (`backlog` on a burst beyond `to_build`,
//! `spare` on a give-back) are held by a worker only for a few instructions: a pop from the
//! backlog (its buffer is trimmed outside the lock), or a push onto the spare list after a
//! `create` panicked. A worker takes them without queueing (`worker_lock`), so no unlock
//! hands one to a worker that is not running; what remains is a preemption inside those
//! few instructions, which the game thread may wait out (see `worker_lock`).
//!
//! Growth takes cells on the consuming thread (a World's arena is the game thread's alone)
//! and queues them ([`request_growth`](Depot::request_growth)); the initial `capacity` is
//! one such step, and what does not fit the queue waits in the backlog (see
//! [`build_queue_len`]).

use std::fmt;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::ptr::NonNull;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use respawn_allocator::DropAll;
#[cfg(all(feature = "world", not(loom)))]
use respawn_arena::{CellMap, CompactCell, Ended, Freed};

mod trim;
pub(crate) use trim::lowest_first;

use crate::sync::{
    back_off, fence, park_timeout, spin_wait, thread, Arc, ArrayQueue, AtomicBool, AtomicU64, AtomicUsize, Mutex,
    MutexGuard, Ordering,
};

/// Cells per magazine: one trade with the depot per this many spawns.
#[cfg(not(loom))]
pub(crate) const MAGAZINE: usize = 128;
/// Two under loom, so a model fills, publishes and starts a partial magazine in a few steps.
#[cfg(loom)]
pub(crate) const MAGAZINE: usize = 2;

/// The cells a World pool's release lets wait before it hands them to the workers, as one
/// batch: a quarter magazine.
pub(crate) const BATCH: usize = MAGAZINE.div_ceil(4);

/// A worker out of work publishes its partial magazine while the depot holds fewer ready
/// objects than this (or the game thread has requested a flush). Zero under loom, so the models reach
/// a partial magazine only through the flush hand-shake.
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
    /// What places a token's cell: nothing for a token that holds the address (a
    /// standalone pool's), the class's [`CellMap`] for a World pool's [`CompactCell`] —
    /// four bytes in the queues and magazines instead of sixteen, its address arithmetic.
    type Map: Copy + Send + Sync + fmt::Debug + 'static;

    /// The cell's memory.
    ///
    /// # Safety
    /// `map` is the depot's (the one every token in it was made for), and whatever the
    /// map reads (a World pool's arena) is alive.
    unsafe fn cell(&self, map: &Self::Map) -> NonNull<u8>;

    /// Whether the cell still holds an ended object that its holder must drop before the
    /// cell is built in or given back (a World pool's returned cell under `async_purge`).
    #[inline(always)]
    fn occupied(&self) -> bool {
        false
    }

    /// The token once the object an occupied cell held has been dropped.
    #[inline(always)]
    fn vacated(self) -> Self
    where
        Self: Sized,
    {
        self
    }
}

/// Drops the object of one class in a cell: [`drop_as`] for the class's type.
pub(crate) type DropFn = unsafe fn(NonNull<u8>);

/// [`DropFn`] for `T`.
///
/// # Safety
/// `cell` holds an initialised `T` the caller owns alone and does not touch again.
pub(crate) unsafe fn drop_as<T>(cell: NonNull<u8>) {
    // SAFETY: the caller's contract.
    unsafe { std::ptr::drop_in_place(cell.cast::<T>().as_ptr()) };
}

/// [`drop_occupant`] where the cell is forgotten after (shutdown): a panicking destructor
/// goes on to the caller.
///
/// # Safety
/// As [`drop_occupant`].
unsafe fn drop_occupied<C: Token>(cell: C, map: &C::Map, drop: DropFn) {
    if cell.occupied() {
        // SAFETY: the caller's contract.
        unsafe { drop(cell.cell(map)) };
    }
}

/// Drops the ended object `cell` still holds, if it is [occupied](Token::occupied), and
/// returns the token vacant. Returns whether the destructor panicked (caught: the cell's
/// memory is the holder's all the same).
///
/// # Safety
/// An occupied `cell` holds an initialised object its holder owns alone, of the type
/// `drop` drops; `map` places it.
pub(crate) unsafe fn drop_occupant<C: Token>(cell: C, map: &C::Map, drop: DropFn) -> (C, bool) {
    if !cell.occupied() {
        return (cell, false);
    }
    // SAFETY: the caller's contract: `map` places the token's cell.
    let object = unsafe { cell.cell(map) };
    // SAFETY: the caller's contract: an initialised object, the holder's alone; the token
    // says vacant from here on, so it is dropped once (a panicking drop still counts as the
    // drop: the value is not touched again).
    let dropped = panic::catch_unwind(AssertUnwindSafe(|| unsafe { drop(object) }));
    (cell.vacated(), dropped.is_err())
}

#[cfg(all(feature = "world", not(loom)))]
impl Token for CompactCell {
    type Map = CellMap;

    #[inline(always)]
    unsafe fn cell(&self, map: &CellMap) -> NonNull<u8> {
        // SAFETY: the caller's contract: the depot's tokens are compacted by its map, and
        // the arena outlives the pool (its `Pools` joins the workers before the heap goes).
        unsafe { map.cell(self) }
    }

    #[inline(always)]
    fn occupied(&self) -> bool {
        self.is_occupied()
    }

    #[inline(always)]
    fn vacated(self) -> Self {
        CompactCell::vacated(self)
    }
}

/// A small array of cells holding ready objects (Bonwick's magazine). Its capacity is fixed
/// at [`MAGAZINE`], so pushing never allocates.
#[derive(Debug)]
pub(crate) struct Magazine<C>(Vec<C>);

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
    /// Drops what `recipe` built in each of the magazine's cells, each in `drops`, and
    /// empties it.
    ///
    /// # Safety
    /// Every cell holds what `recipe` built, which the caller owns alone (nobody else drops
    /// it), and `map` places the cells ([`Token::cell`]).
    pub(crate) unsafe fn drop_built<R: Recipe<C> + ?Sized>(&mut self, drops: &mut DropAll, recipe: &R, map: &C::Map) {
        for cell in self.0.drain(..) {
            // SAFETY: the caller's contract; each cell leaves the magazine as it is dropped.
            drops.run(|| unsafe { recipe.drop_built(&cell, map) });
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
pub(crate) struct Magazines<C> {
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

    /// Whether [`refill`](Self::refill) would find anything: `previous`, or a magazine
    /// counted as published.
    #[inline(always)]
    pub(crate) fn can_refill(&self, depot: &Depot<C>) -> bool {
        !self.previous.is_empty() || depot.published() != 0
    }

    /// Makes `loaded` non-empty if it can: `previous`, else a full magazine from the depot.
    pub(crate) fn refill(&mut self, depot: &Depot<C>) -> Refilled {
        if !self.previous.is_empty() {
            mem::swap(&mut self.loaded, &mut self.previous);
            return Refilled::Previous;
        }
        // Nothing counted as published: no pop (a magazine whose count is still on its way
        // is found at the next refill).
        if depot.published() == 0 {
            return Refilled::Nothing;
        }
        let Some(full) = depot.take_full() else { return Refilled::Nothing };
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
            let empty = depot.take_empty();
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

    /// [`Magazine::drop_built`] for both magazines.
    ///
    /// # Safety
    /// As [`Magazine::drop_built`].
    pub(crate) unsafe fn drop_built<R: Recipe<C> + ?Sized>(&mut self, drops: &mut DropAll, recipe: &R, map: &C::Map) {
        for magazine in [&mut self.loaded, &mut self.previous] {
            // SAFETY: the caller's contract, for both magazines.
            unsafe { magazine.drop_built(drops, recipe, map) };
        }
    }
}

/// Counters written by one side and read by anyone (stats). Relaxed: each is a tally.
#[derive(Debug, Default)]
struct Counters {
    /// Objects built by workers.
    precreated: AtomicU64,
    /// Nanoseconds workers spent in `create`, summed, and the longest one.
    create_nanos: AtomicU64,
    create_max_nanos: AtomicU64,
    /// `create` calls that panicked (their cells go back to the arena). Counted after the
    /// cell is on the spare list (Release; `snapshot` loads it Acquire), so a reader that
    /// sees the count finds the cell there.
    create_panics: AtomicU64,
    /// Ended objects a worker dropped before rebuilding their cell, and of them the
    /// destructors that panicked.
    dropped: AtomicU64,
    drop_panics: AtomicU64,
    /// Cells whose objects ended by a `Purge` release, and otherwise (the GC's
    /// purge: `Default` releases and unreachable objects).
    ended_purge: AtomicU64,
    ended_gc: AtomicU64,
    /// Cells sent back to the arena (or the standalone pool's allocator) instead of being
    /// rebuilt: the pool was at `max`, has no workers or is shutting down, the build queue
    /// was full, or `create` panicked.
    returned: AtomicU64,
    /// Objects whose slot retired at the generation ceiling (no cell comes back).
    retired: AtomicU64,
}

/// A worker's place in the depot's parking: where [`wake_workers`](Depot::wake_workers) finds it.
#[derive(Debug, Default)]
struct Sleeper {
    /// The worker's thread, to unpark. Set once, when the worker starts, before it first
    /// raises `parked`.
    thread: OnceLock<thread::Thread>,
    /// Raised (Release) before the worker's last look for work in [`park`](Depot::park) and
    /// lowered once it stops parking.
    parked: AtomicBool,
}

/// State shared by a pool's game-thread side and its workers. Every field
/// is private: the module docs list the protocol steps that reach them, and who writes
/// each field with which ordering.
#[derive(Debug)]
pub(crate) struct Depot<C: Token> {
    /// Places the tokens' cells (a World pool's class map; nothing for a standalone pool).
    map: C::Map,
    /// Cells waiting for a worker to build an object in them. Fixed room
    /// ([`build_queue_len`]); a released cell that finds it full goes back to the arena.
    to_build: ArrayQueue<C>,
    /// Returned cells waiting for a worker, up to [`BATCH`] a buffer: one push and one pop
    /// a batch, not one a cell (the queue's slots are lines both threads write). A batch
    /// that finds it full goes to `to_build` a cell at a time.
    batches: ArrayQueue<Vec<C>>,
    /// The batches' buffers not in use, all made with the depot (as many as `batches`
    /// holds): a batch never allocates. With none free, returned cells go a cell at a time.
    free_batches: ArrayQueue<Vec<C>>,
    /// Cells in `batches` (for the stats and the wake-up; the queue orders the cells).
    batched: AtomicUsize,
    /// Cells of a growth step beyond `to_build`'s room (the initial `capacity`, mostly):
    /// workers take them once `to_build` is empty. Its buffer is freed when it drains, so
    /// a warm-up's backlog costs memory only while it lasts.
    backlog: Mutex<Vec<C>>,
    /// Cells in `backlog` (a hint read without the lock; the lock orders the cells).
    backlogged: AtomicUsize,
    /// The pool's `capacity`: a released cell that finds `to_build` full still goes to the
    /// backlog while fewer than this are ready or being built (a collection's burst of
    /// returned cells refills the stock instead of shrinking it); beyond, it goes back. Also
    /// sizes the empty magazines kept ([`return_empty`](Self::return_empty)).
    stock: usize,
    /// The most cells a burst of releases has put in the backlog: the room it keeps.
    burst: AtomicUsize,
    /// Magazines of ready objects, for the game thread. Room for every whole magazine a
    /// pool of `max` fills and for the partial ones published while the depot is low (see
    /// [`new`](Self::new)): a worker with a whole magazine waits for room.
    full: ArrayQueue<Magazine<C>>,
    /// Empty magazines, for the workers (and a `Reuse` release publishing a full one). A
    /// few are kept; one returned to a full queue is freed.
    empty: ArrayQueue<Magazine<C>>,
    /// Cells the game thread must hand back to the arena (pool above `max`, no workers, a
    /// full build queue, a failed `create`). Behind a lock: rare, and drained by the game
    /// thread alone.
    spare: Mutex<Vec<C>>,
    /// Whether `spare` may hold cells: set with each push, cleared by the drain, both
    /// under the lock, so a drain with nothing given back takes no lock.
    spared: AtomicBool,
    /// Objects in `full`. Counted after the push that publishes them and uncounted after
    /// the pop that takes them, so it never counts a magazine not yet in `full`, and dips
    /// below zero (wrapping) while a pop overtakes its publish's count: read it through
    /// [`published`](Self::published) or in wrapping sums.
    ready: AtomicUsize,
    /// Cells sent to `to_build` whose object is not built yet (queued, being built).
    building: AtomicUsize,
    /// Objects built and waiting in a worker's magazine until it fills (or the depot runs
    /// low).
    held: AtomicUsize,
    /// The most cells `to_build` has held at once (the stats' `lag_high_water`).
    deepest: AtomicUsize,
    /// Objects of the class checked out to the game thread: alive in the world (spawned and not
    /// yet released or returned) or ready in its two magazines. A spawn that pops a
    /// magazine and a `Reuse` release that pushes one move an object within what is checked out, so
    /// neither touches this; it moves when an object enters or leaves the world from
    /// outside the magazines (an inline build, a plain insert, a returned cell) and when whole
    /// magazines are traded with the depot. Written by the game thread only: on a cache line
    /// of its own, away from the counters workers write. (A standalone pool counts its cells
    /// itself and leaves this at zero.)
    checked_out: CachePadded<AtomicUsize>,
    /// The pool's ceiling on cells it owns (`checked_out + ready + held + building`).
    max: usize,
    /// Number of worker threads (0: returned cells go straight back to the arena).
    workers: usize,
    /// The game thread found no full magazine: workers publish partial ones.
    flush_requested: AtomicBool,
    /// Set once by [`stop`](Self::stop): workers return, returned cells go back to the arena.
    shutdown: AtomicBool,
    /// One per worker: its thread (set when it starts, see [`enlist`](Self::enlist)) and
    /// whether it is parked or about to park. `wake_workers` unparks the raised ones, taking no lock.
    sleepers: Box<[Sleeper]>,
    /// Slots of `sleepers` the workers started so far have taken.
    enlisted: AtomicUsize,
    /// Tallies for stats, written by whichever side the event happens on.
    counters: CachePadded<Counters>,
}

/// What a pool's depot reports for its [`PoolStats`](crate::PoolStats): the counters, read
/// in the orders the depot's docs give (published before held; building by Acquire).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct DepotStats {
    pub(crate) precreated: u64,
    pub(crate) create_nanos: u64,
    pub(crate) create_max_nanos: u64,
    pub(crate) create_panics: u64,
    pub(crate) dropped: u64,
    pub(crate) drop_panics: u64,
    pub(crate) ended_purge: u64,
    pub(crate) ended_gc: u64,
    pub(crate) returned: u64,
    pub(crate) retired: u64,
    /// Objects in published magazines.
    pub(crate) published: usize,
    /// Objects in workers' partial magazines.
    pub(crate) held: usize,
    /// Cells queued or being built.
    pub(crate) building: usize,
    /// Objects alive in the world or in the game thread's magazines (the World's pools
    /// only): less the magazines' objects, the pool's `in_use`.
    pub(crate) checked_out: usize,
    /// Cells queued in `to_build` now, not yet taken by a worker.
    pub(crate) lag: usize,
    /// The most cells `to_build` has held at once.
    pub(crate) lag_high_water: usize,
    /// `to_build`'s room.
    pub(crate) build_queue: usize,
}

#[cfg(not(loom))]
impl DepotStats {
    /// The [`PoolStats`](crate::PoolStats) fields the depot alone decides (its workers'
    /// figures and its queue's), the rest default: each pool kind fills in its own with
    /// `..depot.pool_stats()`.
    pub(crate) fn pool_stats(&self) -> crate::PoolStats {
        crate::PoolStats {
            held: self.held,
            building: self.building,
            precreated: self.precreated,
            create_panics: self.create_panics,
            dropped_by_workers: self.dropped,
            drop_panics: self.drop_panics,
            create_mean: std::time::Duration::from_nanos(self.create_nanos.checked_div(self.precreated).unwrap_or(0)),
            create_max: std::time::Duration::from_nanos(self.create_max_nanos),
            lag: self.lag,
            lag_high_water: self.lag_high_water,
            build_queue: self.build_queue,
            ..crate::PoolStats::default()
        }
    }
}

/// Cells a pool's `to_build` queue holds: what can be in flight at once, which is the
/// larger of
///
/// - **a growth step at the low watermark**: `grow_by` cells, queued together;
/// - **the releases of one hand-off while the workers keep up**: the game thread wakes the
///   workers once a magazine's worth waits, and each worker drains a magazine's worth
///   before it publishes, so `MAGAZINE × (workers + 1)` — one magazine per worker being
///   built and one gathering towards the next wake-up;
///
/// and never more than `max`; one cell for a pool without workers (returned cells go straight
/// back). Not `capacity`: the first precreation (and any growth step larger than the room
/// left) sends what does not fit to the depot's backlog, which the workers drain after the
/// queue and whose buffer is freed once empty — a loading screen's burst, not a standing
/// cost. A released cell that finds the queue full goes back to the arena (counted in
/// `returned`): a mass release or a lasting lag (the workers behind by more than the queue,
/// [`PoolStats::lag`](crate::PoolStats::lag)) shrinks the pool, which then grows again by
/// `grow_by` at the low watermark, rather than the queue growing.
///
/// Memory: `ArrayQueue` commits its whole buffer up front, one slot per cell (the token and
/// a stamp word: 24 bytes for a World's pool, 16 for a standalone one). For the
/// `PROJECTILES` preset that is 1024 slots, 24 KiB a pool (`capacity` before: 96 KiB;
/// 4 × capacity before that: 384 KiB; sized by `max` at first: 24 MiB); `DEFAULT` 256
/// slots, 6 KiB; `EXPENSIVE` 384 slots; `ON_DEMAND` one slot.
#[cfg(not(loom))]
pub(crate) fn build_queue_len(config: &crate::PoolConfig) -> usize {
    if config.workers == 0 {
        return 1;
    }
    let handoff = MAGAZINE.saturating_mul(config.workers.saturating_add(1));
    config.grow_by.max(handoff).min(config.max).max(1)
}

impl<C: Token> Depot<C> {
    /// The depot of a pool configured by `config`: its `max`, its workers, and a `to_build`
    /// queue sized by [`build_queue_len`].
    #[cfg(not(loom))]
    pub(crate) fn for_config(config: &crate::PoolConfig, map: C::Map) -> Self {
        let mut depot = Self::new(config.max, build_queue_len(config), config.workers, map);
        depot.stock = config.capacity;
        let floor = depot.backlog_floor().min(config.capacity);
        depot.backlog.lock().reserve_exact(floor);
        depot
    }

    /// A depot for a pool of at most `max` cells whose `to_build` queue holds `queue`, and
    /// whose tokens `map` places.
    pub(crate) fn new(max: usize, queue: usize, workers: usize, map: C::Map) -> Self {
        // Magazines in circulation: the whole ones a pool of `max` can fill, and slack for
        // the workers' and the consumers' own (outside the queues).
        let magazines = max.div_ceil(MAGAZINE) + 2 * workers + 8;
        // `full` holds those, and the partial ones workers publish while the depot is low:
        // each holds at least one object and adds it to `published`, so fewer than
        // `LOW_DEPOT` (and a few racing workers, in the slack) are published before the
        // depot is no longer low — if nobody takes them. (Hungry and idle publishes are
        // met by spawns taking magazines, or are one per worker.) Sized for whole
        // magazines only, a pool nobody spawns from yet filled `full` with small partial
        // magazines while warming up, and its worker waited forever to publish a whole
        // one. Never more than `max`: every magazine in it holds an object.
        let partial = if workers > 0 { LOW_DEPOT } else { 0 };
        let full = (magazines + partial).min(max.max(1));
        // Batches of a quarter magazine (`BATCH`) filling the room `to_build` has, their
        // buffers made now (none without workers: returned cells go straight back).
        let batches = queue.div_ceil(BATCH).max(1);
        let free_batches = ArrayQueue::new(batches);
        for _ in 0..if workers > 0 { batches } else { 0 } {
            let _ = free_batches.push(Vec::with_capacity(BATCH));
        }
        let empty = ArrayQueue::new(magazines);
        // Enough empty magazines for the workers and the game thread to start trading
        // without allocating.
        for _ in 0..(2 * workers + 4).min(magazines) {
            let _ = empty.push(Magazine::new());
        }
        Self {
            map,
            to_build: ArrayQueue::new(queue.max(1)),
            batches: ArrayQueue::new(batches),
            free_batches,
            batched: AtomicUsize::new(0),
            backlog: Mutex::new(Vec::new()),
            backlogged: AtomicUsize::new(0),
            stock: 0,
            burst: AtomicUsize::new(0),
            full: ArrayQueue::new(full),
            empty,
            spare: Mutex::new(Vec::new()),
            spared: AtomicBool::new(false),
            ready: AtomicUsize::new(0),
            building: AtomicUsize::new(0),
            held: AtomicUsize::new(0),
            deepest: AtomicUsize::new(0),
            checked_out: CachePadded::new(AtomicUsize::new(0)),
            max,
            workers,
            flush_requested: AtomicBool::new(false),
            shutdown: AtomicBool::new(false),
            sleepers: (0..workers).map(|_| Sleeper::default()).collect(),
            enlisted: AtomicUsize::new(0),
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
        non_negative(building.wrapping_add(held).wrapping_add(self.ready.load(Ordering::Relaxed)))
    }

    /// Objects in published magazines: a pull that sees this many can take them. (A
    /// magazine is counted only once it is in `full`; see `ready`.)
    #[inline]
    fn published(&self) -> usize {
        non_negative(self.ready.load(Ordering::Acquire))
    }

    /// Cells the pool owns that are not checked out to the game thread: ready in the depot or a
    /// worker's magazine, and being built.
    #[inline]
    fn pooled(&self) -> usize {
        let ready = self.ready.load(Ordering::Relaxed).wrapping_add(self.held.load(Ordering::Relaxed));
        non_negative(ready.wrapping_add(self.building.load(Ordering::Relaxed)))
    }

    /// Cells a World's pool owns: objects alive in the world, ready, being built.
    #[inline]
    pub(crate) fn owned(&self) -> usize {
        self.checked_out() + self.pooled()
    }

    /// Objects checked out to the game thread: alive in the world or in its magazines.
    #[inline]
    pub(crate) fn checked_out(&self) -> usize {
        self.checked_out.load(Ordering::Relaxed)
    }

    /// Objects were checked out to the game thread (`delta > 0`: an inline build, a plain
    /// insert, a prefill, a magazine from the depot) or left it (an object returned, a
    /// retired slot, a cell given back, a magazine published): moves the count and returns
    /// it. Game thread only, so a load and a store, no read-modify-write.
    #[inline]
    pub(crate) fn count_checked_out(&self, delta: isize) -> usize {
        let checked_out = self.checked_out().saturating_add_signed(delta);
        self.checked_out.store(checked_out, Ordering::Relaxed);
        checked_out
    }

    /// A spawn found nothing published: the workers hand over the partial magazines they
    /// hold. The wake-up call carries the wake-up; the flag itself is a hint. Nothing
    /// without workers.
    pub(crate) fn request_flush(&self) {
        if self.workers == 0 {
            return;
        }
        self.flush_requested.store(true, Ordering::Relaxed);
        self.wake_workers();
    }

    /// Game-thread upkeep: wakes the workers if cells wait for them or a spawn has requested a flush.
    pub(crate) fn wake_if_needed(&self) {
        if self.has_work() || self.flush_requested.load(Ordering::Relaxed) {
            self.wake_workers();
        }
    }

    /// A `Reuse` release whose slot retired at the generation ceiling: the object is gone
    /// and no cell comes back.
    #[inline]
    pub(crate) fn count_retired(&self) {
        self.counters.retired.fetch_add(1, Ordering::Relaxed);
    }

    /// A cell a standalone pool freed to its allocator instead of keeping it.
    #[inline]
    pub(crate) fn count_returned(&self) {
        self.counters.returned.fetch_add(1, Ordering::Relaxed);
    }

    /// Hands every cell given up (see [`give_back`](Self::give_back)) to `recycle`. Under
    /// the lock, so the vector keeps its buffer: a later give-back does not allocate.
    /// `recycle` must not give a cell back itself.
    #[inline(always)]
    pub(crate) fn drain_spare(&self, recycle: impl FnMut(C)) {
        if self.spared.load(Ordering::Relaxed) {
            self.drain_spare_now(recycle);
        }
    }

    /// [`drain_spare`](Self::drain_spare) once something was given up.
    #[cold]
    #[inline(never)]
    fn drain_spare_now(&self, mut recycle: impl FnMut(C)) {
        let mut spare = self.spare.lock();
        self.spared.store(false, Ordering::Relaxed);
        for cell in spare.drain(..) {
            recycle(cell);
        }
    }

    /// A standalone pool's `Purge` drop offers the emptied cell back: counted in
    /// `ended_purge` and queued for the workers (or given back if the queue is full);
    /// `Err` with the cell, uncounted, once the pool is shutting down.
    pub(crate) fn purged(&self, cell: C) -> Result<(), C> {
        if self.shutdown.load(Ordering::Relaxed) {
            return Err(cell);
        }
        self.counters.ended_purge.fetch_add(1, Ordering::Relaxed);
        self.request(cell);
        Ok(())
    }

    /// The counters for a stats snapshot. Published first, then held: a magazine published
    /// between the reads is missed, never counted twice, so `ready - held` never exceeds
    /// what a spawn can take; `building` after them, by Acquire.
    pub(crate) fn snapshot(&self) -> DepotStats {
        let c = &self.counters;
        let precreated = c.precreated.load(Ordering::Relaxed);
        let create_nanos = c.create_nanos.load(Ordering::Relaxed);
        let published = self.published();
        let held = self.held.load(Ordering::Acquire);
        DepotStats {
            precreated,
            create_nanos,
            create_max_nanos: c.create_max_nanos.load(Ordering::Relaxed),
            create_panics: c.create_panics.load(Ordering::Acquire),
            dropped: c.dropped.load(Ordering::Relaxed),
            drop_panics: c.drop_panics.load(Ordering::Relaxed),
            ended_purge: c.ended_purge.load(Ordering::Relaxed),
            ended_gc: c.ended_gc.load(Ordering::Relaxed),
            returned: c.returned.load(Ordering::Relaxed),
            retired: c.retired.load(Ordering::Relaxed),
            published,
            held,
            building: self.building.load(Ordering::Acquire),
            checked_out: self.checked_out(),
            lag: self.queued() + self.backlogged.load(Ordering::Relaxed),
            lag_high_water: self.deepest.load(Ordering::Relaxed),
            build_queue: self.to_build.capacity(),
        }
    }

    /// Bytes the pool's side structures take: the depot itself, the three queues' buffers
    /// (`ArrayQueue` commits them up front: one slot per entry, the entry beside a stamp
    /// word), the spare list's and the growth backlog's buffers, and one magazine buffer (`MAGAZINE` tokens) for each
    /// magazine in `full` and `empty`, each worker (the one it fills) and each of the
    /// `consumers` threads' two. Objects and the cells they live in are not counted: those
    /// are the arena's (or the allocator's) slabs.
    pub(crate) fn side_bytes(&self, consumers: usize) -> usize {
        fn slot<T>() -> usize {
            mem::size_of::<(usize, T)>()
        }
        let queues = slot::<C>() * self.to_build.capacity()
            + slot::<Magazine<C>>() * (self.full.capacity() + self.empty.capacity())
            + slot::<Vec<C>>() * 2 * self.batches.capacity();
        let magazines = self.full.len() + self.empty.len() + self.workers + 2 * consumers;
        let batches = if self.workers > 0 { self.batches.capacity() * BATCH } else { 0 };
        let spare = self.spare.lock().capacity() + self.backlog.lock().capacity();
        mem::size_of::<Self>() + queues + (magazines * MAGAZINE + batches + spare) * mem::size_of::<C>()
    }

    /// Sends a cell to the workers, or back to the arena when the pool has no workers.
    /// Wakes a worker once a magazine's worth is waiting. A cell that finds `to_build` full
    /// waits in the backlog while the pool's stock (ready and being built) is below its
    /// `capacity`, and goes back to the arena beyond.
    pub(crate) fn request(&self, cell: C) {
        if self.workers == 0 {
            self.give_back(cell);
            return;
        }
        self.building.fetch_add(1, Ordering::Relaxed);
        if self.enqueue(cell, 0) {
            self.note_queued();
        }
    }

    /// Sends a batch of counted cells to the workers: onto `batches`, else (the queue
    /// full) each as [`enqueue`](Self::enqueue) sends it; `pending`: the returned batch's
    /// counted cells not in this one. Returns whether any cell was queued.
    fn send_batch(&self, batch: Vec<C>, pending: usize) -> bool {
        if batch.is_empty() {
            self.free_batch(batch);
            return false;
        }
        let n = batch.len();
        // Within `to_build`'s room, which the two queues share (`build_queue_len`).
        let mut batch = if self.queued() + n <= self.to_build.capacity() {
            // Counted before the push: a worker that pops the batch uncounts it.
            self.batched.fetch_add(n, Ordering::Relaxed);
            let Err(batch) = self.batches.push(batch) else { return true };
            self.batched.fetch_sub(n, Ordering::Relaxed);
            batch
        } else {
            batch
        };
        let mut queued = false;
        while let Some(cell) = batch.pop() {
            queued |= self.enqueue(cell, pending + batch.len());
        }
        self.free_batch(batch);
        queued
    }

    /// A free buffer for a batch of returned cells, if one is.
    fn take_batch(&self) -> Option<Vec<C>> {
        self.free_batches.pop()
    }

    /// A batch's buffer, emptied, back among the free ones.
    fn free_batch(&self, batch: Vec<C>) {
        debug_assert!(batch.is_empty(), "a batch freed with cells in it");
        let _ = self.free_batches.push(batch);
    }

    /// Pushes a cell `building` already counts onto `to_build`; `pending`: cells of the same
    /// batch counted too, not pushed yet. A cell that finds the queues full (`to_build`'s
    /// room, which `batches` shares) waits in the backlog while the pool's stock is short
    /// (waking the workers), else goes back to the arena. Returns whether it went onto
    /// `to_build`.
    #[inline]
    fn enqueue(&self, cell: C, pending: usize) -> bool {
        let pushed = if self.queued() < self.to_build.capacity() { self.to_build.push(cell) } else { Err(cell) };
        let Err(cell) = pushed else { return true };
        self.deepest.fetch_max(self.to_build.capacity(), Ordering::Relaxed);
        // (`building` counts this cell, and the batch's pending ones, already.)
        if self.pooled().saturating_sub(pending) <= self.stock {
            // A burst (a collection's purge) while the stock is short: rebuild it all.
            let mut backlog = self.backlog.lock();
            backlog.push(cell);
            self.burst.fetch_max(backlog.len(), Ordering::Relaxed);
            drop(backlog);
            self.backlogged.fetch_add(1, Ordering::Relaxed);
            self.wake_workers();
            return false;
        }
        // A release burst beyond the queue and the stock: back to the arena.
        self.building.fetch_sub(1, Ordering::Relaxed);
        self.give_back(cell);
        false
    }

    /// Cells went onto `to_build`: the high-water mark, and a worker woken once a
    /// magazine's worth waits.
    #[inline]
    fn note_queued(&self) {
        let queued = self.queued();
        if queued > self.deepest.load(Ordering::Relaxed) {
            self.deepest.fetch_max(queued, Ordering::Relaxed);
        }
        if queued >= MAGAZINE {
            self.wake_workers();
        }
    }

    /// Sends the cells of a growth step to the workers: into `to_build` while it has room,
    /// the rest into the backlog the workers drain after it (never back to the arena: the
    /// pool asked for them), then wakes them.
    pub(crate) fn request_growth(&self, cells: impl IntoIterator<Item = C>) {
        let mut backlog = None;
        for cell in cells {
            self.building.fetch_add(1, Ordering::Relaxed);
            if let Err(cell) = self.to_build.push(cell) {
                backlog.get_or_insert_with(|| self.backlog.lock()).push(cell);
                self.backlogged.fetch_add(1, Ordering::Relaxed);
            }
        }
        let queued = self.to_build.len();
        if queued > self.deepest.load(Ordering::Relaxed) {
            self.deepest.fetch_max(queued, Ordering::Relaxed);
        }
        drop(backlog);
        self.wake_workers();
    }

    /// Hands a cell back to the arena (at the game thread's next maintenance).
    pub(crate) fn give_back(&self, cell: C) {
        self.counters.returned.fetch_add(1, Ordering::Relaxed);
        let mut spare = self.spare.lock();
        spare.push(cell);
        self.spared.store(true, Ordering::Relaxed);
    }

    /// Wakes the workers that are parked. Cheap when none is: one fence and a load per
    /// worker. Takes no lock: the game thread never waits here for a worker, which runs at a
    /// lower priority and may not be scheduled for milliseconds (the lock and condition
    /// variable this replaced made a purge slice wait up to 1.7 ms for a parking worker).
    pub(crate) fn wake_workers(&self) {
        // Pairs with the fence in `park`: either the worker sees the work, or we see its flag
        // raised and unpark it; an unpark before its `park_timeout` makes that return at once
        // (loom models `magazine_exchange` and `shutdown_drops_each_object_once`: a lost
        // wake-up deadlocks them).
        fence(Ordering::SeqCst);
        for sleeper in self.sleepers.iter() {
            // Acquire, paired with the Release that raised the flag: the thread is set.
            if sleeper.parked.load(Ordering::Acquire) {
                if let Some(thread) = sleeper.thread.get() {
                    thread.unpark();
                }
            }
        }
    }

    /// Tells the workers to return, waking any that is parked. The caller joins them.
    pub(crate) fn stop(&self) {
        self.shutdown.store(true, Ordering::Release);
        self.wake_workers();
    }

    /// A worker starting takes a slot in `sleepers` and puts its thread there, so that
    /// [`wake_workers`](Self::wake_workers) can unpark it. Once per worker, before its first
    /// [`park`](Self::park); returns the slot.
    fn enlist(&self) -> usize {
        let me = self.enlisted.fetch_add(1, Ordering::Relaxed);
        let sleeper = self.sleepers.get(me).expect("more workers started than the depot was made for");
        if sleeper.thread.set(thread::current()).is_err() {
            unreachable!("sleeper slot {me} taken twice");
        }
        me
    }

    /// A worker with nothing to do (the one in slot `me`) waits here until there is work,
    /// the game thread requests a flush of the partial magazine it holds, or the pool shuts down;
    /// or, holding one, until it has been idle for [`IDLE_FLUSH`]. Returns whether that idle
    /// time ran out. Holds no lock while it waits: `wake_workers` finds it by its flag.
    fn park(&self, me: usize, holding: bool) -> bool {
        let flush_at = IDLE_FLUSH.filter(|_| holding).map(|idle| Instant::now() + idle);
        let mut idle = false;
        let sleeper = &self.sleepers[me];
        // Release: `wake_workers` that sees the flag sees the thread `enlist` set.
        sleeper.parked.store(true, Ordering::Release);
        // Pairs with the fence in `wake_workers` (Dekker): the flag is raised before each look for
        // work below, and stays raised until the loop ends, so a wake-up either comes after the
        // look and sees the flag (and unparks), or before it and its work is seen.
        fence(Ordering::SeqCst);
        while !(self.shutdown.load(Ordering::Relaxed)
            || self.has_work()
            || (holding && self.flush_requested.load(Ordering::Relaxed)))
        {
            // The 50 ms timeout is a safety net only; wake-ups come from `wake_workers`. (Loom
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
            // Returns at an unpark (one made since the flag went up included), at the
            // timeout, or spuriously: the loop looks again. The unpark orders the kicker's
            // work before the look.
            park_timeout(wait);
        }
        // A wake-up that still sees the flag leaves a spare unpark: the next park returns at
        // once and looks again.
        sleeper.parked.store(false, Ordering::Relaxed);
        idle
    }

    /// An empty magazine for a worker or the game thread (a new one only until enough
    /// circulate).
    pub(crate) fn take_empty(&self) -> Magazine<C> {
        self.empty.pop().unwrap_or_else(Magazine::new)
    }

    /// A worker's check at the top of its loop: has the pool been stopped? (Acquire, paired
    /// with `stop`'s Release.)
    #[inline]
    fn stopping(&self) -> bool {
        self.shutdown.load(Ordering::Acquire)
    }

    /// Whether every cell the workers were asked to build holds a published object: none
    /// queued or being built (`building`, read first: objects move downstream), none held
    /// in a worker's partial magazine. What `wait_until_warm` waits for.
    pub(crate) fn is_warm(&self) -> bool {
        self.building.load(Ordering::Acquire) == 0 && self.held.load(Ordering::Acquire) == 0 && !self.has_work()
    }

    /// An object built on the game thread by `prefill`, `nanos` spent in `create`:
    /// counted as precreated, and in the `create` times, as a worker's build is.
    pub(crate) fn prefilled(&self, nanos: u64) {
        let c = &self.counters;
        c.precreated.fetch_add(1, Ordering::Relaxed);
        c.create_nanos.fetch_add(nanos, Ordering::Relaxed);
        c.create_max_nanos.fetch_max(nanos, Ordering::Relaxed);
    }

    /// Whether cells wait for a worker (in `to_build` or the backlog).
    #[inline]
    fn has_work(&self) -> bool {
        !self.to_build.is_empty() || !self.batches.is_empty() || self.backlogged.load(Ordering::Relaxed) > 0
    }

    /// Cells waiting in `to_build` and `batches`.
    fn queued(&self) -> usize {
        self.to_build.len() + self.batched.load(Ordering::Relaxed)
    }

    /// A worker takes a cell to build an object in: from the batch it took last (`input`),
    /// else the next batch, else `to_build`, else the backlog. A batch emptied goes back
    /// among the empty magazines.
    #[inline]
    fn take_to_build(&self, input: &mut Option<Vec<C>>) -> Option<C> {
        loop {
            if let Some(batch) = input {
                if let Some(cell) = batch.pop() {
                    return Some(cell);
                }
                self.free_batch(input.take().expect("checked just now"));
            }
            match self.batches.pop() {
                Some(batch) => {
                    self.batched.fetch_sub(batch.len(), Ordering::Relaxed);
                    *input = Some(batch);
                }
                None => return self.to_build.pop().or_else(|| self.take_backlog()),
            }
        }
    }

    /// The backlog's room kept at least: twice the build queue's, so the releases of a lag
    /// up to that deep wait without allocating (reserved when the depot is made).
    fn backlog_floor(&self) -> usize {
        if self.workers == 0 {
            0
        } else {
            2 * self.to_build.capacity()
        }
    }

    /// The backlog's next cell (a worker's step); trims its buffer once it is empty.
    #[cold]
    fn take_backlog(&self) -> Option<C> {
        if self.backlogged.load(Ordering::Relaxed) == 0 {
            return None;
        }
        let mut backlog = worker_lock(&self.backlog);
        let cell = backlog.pop()?;
        self.backlogged.fetch_sub(1, Ordering::Relaxed);
        // Keep room for the deepest burst of releases (they recur with each collection: no
        // allocation each time), not for the warm-up's precreation. (Within twice the burst,
        // left as it is: trimming to the exact burst would reallocate each time.)
        let keep = self.burst.load(Ordering::Relaxed).max(self.backlog_floor());
        let oversized = backlog.is_empty() && backlog.capacity() > 2 * keep;
        drop(backlog);
        if oversized {
            self.trim_backlog(keep);
        }
        Some(cell)
    }

    /// Swaps the empty backlog's oversized buffer for one of `keep` cells. Both the new
    /// buffer's allocation and the old one's release happen outside the lock, which the
    /// hand-over may be waiting for: under it, only the swap.
    #[cold]
    fn trim_backlog(&self, keep: usize) {
        let mut buffer = Vec::with_capacity(keep);
        let mut backlog = worker_lock(&self.backlog);
        // Still empty and oversized: a release may have refilled it meanwhile.
        if backlog.is_empty() && backlog.capacity() > 2 * keep {
            mem::swap(&mut *backlog, &mut buffer);
        }
        drop(backlog);
        drop(buffer);
    }

    /// A worker out of work asks whether to hand over its partial magazine: only when the
    /// game thread may soon need it (the depot is low, or a spawn found it empty).
    /// Publishing every partial one would spread the ready objects over ever more
    /// magazines.
    #[inline]
    fn wants_partial(&self) -> bool {
        #[cfg_attr(loom, allow(clippy::absurd_extreme_comparisons))] // LOW_DEPOT is 0 there
        let low = self.published() < LOW_DEPOT;
        low || self.flush_requested.load(Ordering::Relaxed)
    }

    /// A worker finished a run of builds (the objects are in its magazine). Counted as
    /// held before they stop counting as building, so whoever sees `building` drop sees
    /// the objects (Release, paired with the Acquire of `on_the_way` and `snapshot`).
    #[inline]
    fn built(&self, run: &Run) {
        if run.objects == 0 {
            return;
        }
        let c = &self.counters;
        c.precreated.fetch_add(run.objects as u64, Ordering::Relaxed);
        c.create_nanos.fetch_add(run.nanos, Ordering::Relaxed);
        c.create_max_nanos.fetch_max(run.max_nanos, Ordering::Relaxed);
        self.held.fetch_add(run.objects, Ordering::Relaxed);
        self.building.fetch_sub(run.objects, Ordering::Release);
    }

    /// A worker's `create` panicked: the cell, still empty, goes back to the arena (as
    /// [`give_back`](Self::give_back), taking the lock the worker's way). The cell is on
    /// the spare list before it is counted (Release, paired with the Acquire of
    /// `snapshot`), so whoever sees the panic counted, or `building` drop, and then runs
    /// the upkeep finds the cell there.
    fn build_failed(&self, cell: C) {
        let mut spare = worker_lock(&self.spare);
        spare.push(cell);
        self.spared.store(true, Ordering::Relaxed);
        drop(spare);
        self.counters.returned.fetch_add(1, Ordering::Relaxed);
        self.counters.create_panics.fetch_add(1, Ordering::Release);
        self.building.fetch_sub(1, Ordering::Release);
    }

    /// An ended object in an occupied cell was dropped: by a worker before it rebuilt the
    /// cell (`by_worker`), or by the game thread's drain of cells given back. `panicked`:
    /// its destructor did (caught).
    pub(crate) fn dropped(&self, panicked: bool, by_worker: bool) {
        if by_worker {
            self.counters.dropped.fetch_add(1, Ordering::Relaxed);
        }
        if panicked {
            self.counters.drop_panics.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A worker returning at shutdown drops the `n` objects of its partial magazine.
    fn abandon_held(&self, n: usize) {
        self.held.fetch_sub(n, Ordering::Relaxed);
    }

    /// Gives the game thread a worker's magazine of ready objects.
    fn publish(&self, magazine: Magazine<C>) -> Result<(), Magazine<C>> {
        let n = magazine.len();
        self.publish_local(magazine)?;
        // Release: whoever sees the objects leave `held` sees them in `ready` (`on_the_way`).
        self.held.fetch_sub(n, Ordering::Release);
        Ok(())
    }

    /// Takes a full magazine for the game thread, whose flush request is met.
    #[inline]
    pub(crate) fn take_full(&self) -> Option<Magazine<C>> {
        let magazine = self.full.pop()?;
        self.ready.fetch_sub(magazine.len(), Ordering::Relaxed);
        self.flush_requested.store(false, Ordering::Relaxed);
        Some(magazine)
    }

    /// Returns an empty magazine to the workers (dropped if enough are circulating).
    #[inline]
    pub(crate) fn return_empty(&self, magazine: Magazine<C>) {
        debug_assert!(magazine.is_empty());
        // Kept for trading: enough to hold the pool's whole stock (`capacity` objects ready
        // at rest, the build queue's and the deepest release burst's rebuilds) plus a pair
        // per worker and consumer, so a warm pool trades magazines without allocating on
        // any thread, whatever partial magazines idle workers publish (dhat tests
        // `warm_purge_cycles_allocate_nothing` and the storm's steady state). One returned
        // beyond that is freed: a pool that overflowed its `capacity` (a spike up to `max`)
        // does not keep the spike's magazines.
        let room = self.stock + self.to_build.capacity() + self.burst.load(Ordering::Relaxed);
        let keep = 2 * self.workers + 8 + room.div_ceil(MAGAZINE);
        if self.empty.len() < keep {
            let _ = self.empty.push(magazine);
        }
    }

    /// At shutdown, once the workers are joined: drops what `recipe` built in the
    /// published magazines and the ended objects still in cells queued for building or
    /// given back (occupied ones), each in `drops`, and forgets those cells (their memory
    /// goes with the pool's).
    ///
    /// # Safety
    /// Every worker has returned, and they built with `recipe`, whose class an occupied
    /// token's ended object is.
    pub(crate) unsafe fn drain<R: Recipe<C> + ?Sized>(&self, drops: &mut DropAll, recipe: &R) {
        while let Some(mut magazine) = self.take_full() {
            // SAFETY: a published magazine's cells hold what the workers built; with the
            // workers gone, the pool alone owns them.
            unsafe { magazine.drop_built(drops, recipe, &self.map) };
            self.return_empty(magazine);
        }
        // SAFETY: the caller's contract.
        unsafe { self.drain_queued(drops, recipe.drop_ended()) };
    }

    /// The part of [`drain`](Self::drain) that drops no built object:
    /// the ended objects still in occupied cells queued for building or given back, once
    /// the workers are joined, each in `drops`; forgets those cells. For a pool whose
    /// published tokens hold more than a `T` (a composite's sets), which drops those itself.
    ///
    /// # Safety
    /// Every worker has returned, and an occupied token's cell holds an ended object that
    /// `drop` drops.
    pub(crate) unsafe fn drain_queued(&self, drops: &mut DropAll, drop: DropFn) {
        let mut input = None;
        while let Some(cell) = self.take_to_build(&mut input) {
            self.building.fetch_sub(1, Ordering::Relaxed);
            // SAFETY: a queued occupied cell's object is the depot's alone, the workers gone.
            drops.run(|| unsafe { drop_occupied(cell, &self.map, drop) });
        }
        // Cells given back and not yet recycled (the pool is going, and the arena's memory
        // with it): only an occupied one has something to drop.
        // SAFETY: as above; the spare list's cells are the depot's alone.
        self.drain_spare(|cell| drops.run(|| unsafe { drop_occupied(cell, &self.map, drop) }));
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

/// Objects of a World pool's class that ended and came back on the class's returned list,
/// counted by why they ended: a batch the pool takes ([`Depot::arrived`]), or what still
/// waits there for its stats.
#[cfg(all(feature = "world", not(loom)))]
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Returned {
    /// Ended by a `Purge` release (`destroy_now`).
    pub(crate) purge: u64,
    /// Ended some other way: purged by the collector, or removed by hand.
    pub(crate) gc: u64,
    /// Slots retired (the generation ceiling, a panicking end): no cell.
    pub(crate) retired: u64,
}

#[cfg(all(feature = "world", not(loom)))]
impl Returned {
    /// What waits on `list`.
    pub(crate) fn of(list: &[Freed]) -> Self {
        let mut returned = Self::default();
        list.iter().for_each(|freed| returned.count(freed));
        returned
    }

    /// One entry of a returned list.
    pub(crate) fn count(&mut self, freed: &Freed) {
        match freed {
            Freed::Retired { .. } => self.retired += 1,
            _ => self.ended(freed.ended()),
        }
    }

    /// One object that came back with its cell, having ended for `why`.
    #[inline(always)]
    fn ended(&mut self, why: Ended) {
        match why {
            Ended::DestroyedNow => self.purge += 1,
            Ended::Removed | Ended::Collected => self.gc += 1,
        }
    }

    /// Objects in all.
    pub(crate) fn total(&self) -> usize {
        (self.purge + self.gc + self.retired) as usize
    }

    /// Of them, those that came with a cell (all but the retired slots').
    pub(crate) fn cells(&self) -> usize {
        (self.purge + self.gc) as usize
    }
}

#[cfg(all(feature = "world", not(loom)))]
impl<C: Token> Depot<C> {
    /// Cells whose objects ended, taken by a World pool from its class's returned list as
    /// one batch (on the game thread): the objects leave the checked-out count at once and
    /// are tallied by why they ended (one store and one add per tally, not per cell); each
    /// cell, compacted by `map` (the class's), goes to `place`. A retired slot brings no
    /// cell, but its object is gone all the same. Under `async_purge` a cell comes
    /// occupied: whoever takes it next (a worker, or the game thread's drain of cells given
    /// back) drops the object first.
    #[inline(always)]
    pub(crate) fn arrived(
        &self,
        freed: impl ExactSizeIterator<Item = Freed>,
        map: &CellMap,
        mut place: impl FnMut(CompactCell),
    ) {
        // Only the game thread writes `checked_out` (the pool takes returned cells there).
        self.count_checked_out(-(freed.len() as isize));
        let mut tally = Returned::default();
        for freed in freed {
            let (cell, why) = match freed {
                Freed::Cell(cell, why) => (map.compact(cell), why),
                Freed::Occupied(cell, why) => (map.compact_occupied(cell), why),
                Freed::Retired { .. } => {
                    tally.retired += 1;
                    continue;
                }
            };
            tally.ended(why);
            // The list is the class's own: its cells are the map's.
            place(cell.unwrap_or_else(|_| unreachable!("a cell of another class on a pool's returned list")));
        }
        self.count_ended(tally);
    }

    /// Cells whose objects ended, which the pool's class made vacant again itself, as one
    /// batch (a pool without workers: nothing would rebuild them, see
    /// `Arena::recycle_returned`): the objects leave the checked-out count and are tallied
    /// as [`arrived`](Self::arrived) tallies them, and their cells count as given back.
    pub(crate) fn recycled(&self, tally: Returned) {
        self.count_checked_out(-(tally.total() as isize));
        self.counters.returned.fetch_add(tally.cells() as u64, Ordering::Relaxed);
        self.count_ended(tally);
    }

    /// Adds a batch's tally to the counters: one add per kind, not per object.
    fn count_ended(&self, tally: Returned) {
        let c = &self.counters;
        for (counter, n) in [(&c.ended_purge, tally.purge), (&c.ended_gc, tally.gc), (&c.retired, tally.retired)] {
            if n > 0 {
                counter.fetch_add(n, Ordering::Relaxed);
            }
        }
    }
}

#[cfg(all(feature = "world", not(loom)))]
impl Depot<CompactCell> {
    /// A batch a class pool took from its class's returned list: it
    /// [arrives](Self::arrived), and each cell goes to the workers for rebuilding — or back
    /// to the arena when the pool is at `max` or shutting down (or has no workers).
    pub(crate) fn returned(&self, freed: impl ExactSizeIterator<Item = Freed>) {
        // The room within `max` once the batch's objects leave the checked-out count (as
        // `arrived` counts them): that many cells go to the workers, the rest back. They
        // are counted as building at once, before the first push (a worker may build one
        // and uncount it as soon as it is pushed), and what the batch did not queue (a
        // retired slot brings no cell) is uncounted at its end: one add to the counter the
        // workers write, not one per cell.
        let n = freed.len();
        let stopping = self.shutdown.load(Ordering::Relaxed);
        let counted = if stopping || self.workers == 0 {
            0
        } else {
            let owned = self.checked_out().saturating_sub(n) + self.pooled();
            self.max.saturating_sub(owned).min(n)
        };
        if counted > 0 {
            self.building.fetch_add(counted, Ordering::Relaxed);
        }
        // The queued cells go `BATCH` at a time (`send_batch`): `pending` counts the
        // batch's counted cells not sent yet, those in `batch` included.
        let (mut pending, mut queued) = (counted, false);
        let mut batch: Option<Vec<CompactCell>> = None;
        self.arrived(freed, &self.map, |cell| {
            if pending == batch.as_ref().map_or(0, Vec::len) {
                self.give_back(cell);
                return;
            }
            if batch.is_none() {
                batch = self.take_batch();
            }
            let Some(filling) = &mut batch else {
                // Every batch buffer is in use (the workers are behind): this cell goes
                // alone, as a batch would need a new buffer.
                pending -= 1;
                queued |= self.enqueue(cell, pending);
                return;
            };
            filling.push(cell);
            if filling.len() == BATCH {
                let full = batch.take().expect("filled just now");
                pending -= full.len();
                queued |= self.send_batch(full, pending);
            }
        });
        if let Some(last) = batch {
            pending -= last.len();
            queued |= self.send_batch(last, pending);
        }
        if pending > 0 {
            self.building.fetch_sub(pending, Ordering::Relaxed);
        }
        if queued {
            self.note_queued();
        }
    }
}

/// How a worker takes a lock the game thread's hand-over also takes (`backlog`, `spare`): by
/// trying until it is free, never by waiting in the lock's queue. A contended
/// `parking_lot` unlock may hand the lock straight to a parked waiter (its fair unlock),
/// and a worker runs at a lower priority (see `background_priority`): handed to a worker
/// that is not yet running, the lock would keep the game thread waiting until the worker is
/// scheduled, milliseconds on a busy machine. Taken this way, a worker holds such a lock
/// only while it runs its few instructions under it (a pop from the backlog; a push onto
/// the spare list, which allocates only if the list outgrew its buffer, after a `create`
/// panicked), and the game thread waits at most for those — or for a preemption inside
/// them, which the short section makes rare, and which the core the blocked game thread
/// frees makes short.
fn worker_lock<T>(lock: &Mutex<T>) -> MutexGuard<'_, T> {
    let mut tries = 0u32;
    loop {
        if let Some(guard) = lock.try_lock() {
            return guard;
        }
        // The game thread holds it for a push or a drain: spin a little, then sleep briefly
        // (a drain of the spare list or a growth step can take a while).
        tries += 1;
        if tries < 64 {
            spin_wait();
        } else {
            back_off(Duration::from_micros(20));
        }
    }
}

/// A counter sum read while other threads move objects between counters: a transient dip
/// below zero (see [`Depot::ready`]) reads as zero.
#[inline]
fn non_negative(sum: usize) -> usize {
    usize::try_from(sum as isize).unwrap_or(0)
}

/// What a precreation worker makes in the cells a token owns, and how it drops what it
/// made: one object (`dyn Fn() -> T`, a class's pool) or an owner with its parts, each in
/// a cell of its own class (a composite pool, `crate::composite`).
pub(crate) trait Recipe<C: Token>: Send + Sync {
    /// Builds in `cell`'s cells. A panic (a panicking constructor) leaves nothing built
    /// in them: the worker hands the token back as it came.
    ///
    /// # Safety
    /// The token owns its cells, uninitialised (vacated, if it was occupied); `map` places
    /// them ([`Token::cell`]).
    unsafe fn build(&self, cell: &C, map: &C::Map);

    /// Drops what [`build`](Self::build) made in `cell`'s cells.
    ///
    /// # Safety
    /// `build` made them with this recipe's type, the caller owns them alone, and they are
    /// not touched again.
    unsafe fn drop_built(&self, cell: &C, map: &C::Map);

    /// How to drop what an [occupied](Token::occupied) token's cell holds: the ended object
    /// of the class (a composite's owner) returned undropped.
    fn drop_ended(&self) -> DropFn;

    /// [`drop_occupant`] for this recipe's class.
    ///
    /// # Safety
    /// As [`drop_occupant`].
    unsafe fn drop_occupant(&self, cell: C, map: &C::Map) -> (C, bool) {
        // SAFETY: the caller's contract.
        unsafe { drop_occupant(cell, map, self.drop_ended()) }
    }
}

impl<T: Send + 'static, C: Token> Recipe<C> for dyn Fn() -> T + Send + Sync {
    #[inline]
    unsafe fn build(&self, cell: &C, map: &C::Map) {
        let value = self();
        // SAFETY: the caller's contract: the token owns its cell, uninitialised memory of
        // `T`'s layout (the class's cell), written once here before anyone else sees it.
        unsafe { cell.cell(map).cast::<T>().as_ptr().write(value) };
    }

    unsafe fn drop_built(&self, cell: &C, map: &C::Map) {
        // SAFETY: the caller's contract: `build` wrote a `T` there, the caller's alone.
        unsafe { drop_as::<T>(cell.cell(map)) };
    }

    fn drop_ended(&self) -> DropFn {
        drop_as::<T>
    }
}

/// What a worker built in one run (see [`work_with`]), counted into the depot at its end.
#[derive(Debug, Default)]
struct Run {
    /// Objects built.
    objects: usize,
    /// Nanoseconds their `create` calls took, summed, and the longest one.
    nanos: u64,
    max_nanos: u64,
}

/// A `create` taking this long or longer is timed alone: a clock read beside it is
/// negligible.
const TIME_ALONE_NANOS: u64 = 1_000;

/// Faster objects are timed this many together.
const TIMED_TOGETHER: usize = 16;

/// A worker's timing of its builds: each object alone while they take
/// [`TIME_ALONE_NANOS`] or more, else [`TIMED_TOGETHER`] at a time, each group's total
/// taken as its longest `create` (an upper bound: a slow one among fast ones shows as
/// itself plus a few fast ones). A group a panicking `create` ends counts that call's time
/// too.
#[derive(Debug)]
struct Clock {
    since: Instant,
    /// Objects built since `since`.
    objects: usize,
    /// Objects to time together.
    group: usize,
}

impl Clock {
    fn start() -> Self {
        Self { since: Instant::now(), objects: 0, group: 1 }
    }

    /// One more object built: the group's time is read once it is complete.
    #[inline]
    fn built(&mut self, run: &mut Run) {
        self.objects += 1;
        if self.objects == self.group {
            let nanos = self.stop(run);
            self.group = if nanos >= TIME_ALONE_NANOS * self.group as u64 { 1 } else { TIMED_TOGETHER };
        }
    }

    /// Reads the clock for the objects built since it was last read, if any, and counts
    /// them into `run`; returns the nanoseconds they took.
    fn stop(&mut self, run: &mut Run) -> u64 {
        if self.objects == 0 {
            return 0;
        }
        let now = Instant::now();
        let nanos = now.saturating_duration_since(self.since).as_nanos() as u64;
        run.objects += self.objects;
        run.nanos += nanos;
        run.max_nanos = run.max_nanos.max(nanos);
        self.since = now;
        self.objects = 0;
        nanos
    }
}

/// A precreation worker, the loop every pool's workers run: builds by `recipe` in each cell
/// from `to_build`, fills magazines, publishes them; parks when there is nothing to do;
/// returns at shutdown.
pub(crate) fn work_with<C: Token, R: Recipe<C> + ?Sized>(depot: Arc<Depot<C>>, recipe: Arc<R>) {
    let me = depot.enlist();
    let mut current: Option<Magazine<C>> = None;
    // The batch of returned cells this worker is building in (`take_to_build`).
    let mut input: Option<Vec<C>> = None;
    // Parked holding a partial magazine and woke with no work for `IDLE_FLUSH`.
    let mut idle = false;
    loop {
        if depot.stopping() {
            break;
        }
        let Some(cell) = depot.take_to_build(&mut input) else {
            // Out of work: hand the partial magazine over if the game thread may soon need
            // it, or if this worker has been idle.
            if (depot.wants_partial() || idle) && current.as_ref().is_some_and(|m| !m.is_empty()) {
                idle = false;
                match depot.publish(current.take().expect("holding")) {
                    Ok(()) => continue,
                    Err(magazine) => current = Some(magazine),
                }
            }
            idle = depot.park(me, current.as_ref().is_some_and(|m| !m.is_empty()));
            continue;
        };
        idle = false;
        // A run: this cell and the next ones queued, built into one magazine until it is
        // full or the queue is empty, counted into the depot once at the run's end (the
        // counters share a cache line with the game thread's hand-over: per object, the
        // worker spent more on them than on building). Objects are timed in groups
        // ([`Clock`]): a clock read costs about what a small object's `create` does.
        let magazine = current.get_or_insert_with(|| depot.take_empty());
        let mut run = Run::default();
        let mut clock = Clock::start();
        let mut next = Some(cell);
        while let Some(cell) = next {
            // An ended object still in the cell (`async_purge`): its destructor runs here,
            // in the pass that rebuilds the cell, not on the game thread (and not timed
            // as a `create`).
            let cell = if cell.occupied() {
                clock.stop(&mut run);
                // SAFETY: the class returned the object with the cell; it is this worker's
                // alone now (the token is), and dropped once.
                let (cell, panicked) = unsafe { recipe.drop_occupant(cell, &depot.map) };
                depot.dropped(panicked, true);
                clock = Clock::start();
                cell
            } else {
                cell
            };
            // SAFETY: the token owns its cells, uninitialised (an occupied one was vacated
            // above); the recipe builds in them once, before anyone else sees them.
            match panic::catch_unwind(AssertUnwindSafe(|| unsafe { recipe.build(&cell, &depot.map) })) {
                Ok(()) => {
                    clock.built(&mut run);
                    magazine.push(cell);
                }
                Err(_) => {
                    clock.stop(&mut run);
                    depot.build_failed(cell);
                    clock = Clock::start();
                }
            }
            if magazine.is_full() || depot.stopping() {
                break;
            }
            next = depot.take_to_build(&mut input);
        }
        clock.stop(&mut run);
        depot.built(&run);
        if magazine.is_full() {
            let mut full = current.take().expect("just filled");
            while let Err(back) = depot.publish(full) {
                // The depot is full only while the game thread is behind; wait for it.
                if depot.stopping() {
                    current = Some(back);
                    break;
                }
                full = back;
                back_off(Duration::from_micros(100));
            }
        }
    }
    // Shutdown: the cells of its batch it had not built in yet leave the count; an ended
    // object still in one is dropped here, as its rebuild would have (the cells go with
    // the arena).
    if let Some(mut batch) = input {
        depot.building.fetch_sub(batch.len(), Ordering::Relaxed);
        while let Some(cell) = batch.pop() {
            if cell.occupied() {
                // SAFETY: as in the run above: the token, and so the object, is this
                // worker's alone, and dropped once.
                let (_, panicked) = unsafe { recipe.drop_occupant(cell, &depot.map) };
                depot.dropped(panicked, true);
            }
        }
    }
    // The objects this worker holds are dropped here (the game thread drops the published
    // ones); their cells simply go with the arena.
    if let Some(mut magazine) = current {
        depot.abandon_held(magazine.len());
        let mut drops = DropAll::new();
        for cell in magazine.0.drain(..) {
            // SAFETY: every cell in a worker's magazine holds what it built; the worker is
            // its only owner and drops it once (the cell leaves the magazine here).
            drops.run(|| unsafe { recipe.drop_built(&cell, &depot.map) });
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::ptr::NonNull;
    use std::sync::mpsc;
    use std::time::Duration;

    use super::{Depot, Token, MAGAZINE};
    use crate::sync::{Arc, Ordering};

    /// A cell nobody builds in: no worker runs here.
    struct Cell;

    impl Token for Cell {
        type Map = ();

        unsafe fn cell(&self, (): &()) -> NonNull<u8> {
            NonNull::dangling()
        }
    }

    /// The priority inversion the depot's parking had: a worker inside `park`, descheduled
    /// (it runs at a lower priority), held the lock `wake_workers` took, so a purge slice's hand-over
    /// waited until the worker was scheduled again (1.7 ms in the storm). Here the test
    /// thread stands in for a worker stalled inside `park` for good — enlisted, its flag
    /// raised, never reaching `park_timeout` — while another thread plays the game thread:
    /// a magazine's worth of releases (the last one wakes the workers), a burst beyond the build queue
    /// into the backlog (each one wakes the workers), a spawn's flush request and the upkeep's conditional wake-up. All of it
    /// must return though the worker never moves; the channel's timeout only turns a hang
    /// into a failure, nothing is timed. (Against the lock and condition variable this
    /// replaced — the worker holding the depot's lock with itself counted in `sleepers` —
    /// the first wake-up never returns.)
    #[test]
    fn a_worker_stalled_in_park_never_blocks_the_hand_over() {
        let mut depot = Depot::<Cell>::new(4 * MAGAZINE, MAGAZINE, 1, ());
        // Below its stock, so the burst beyond `to_build` waits in the backlog.
        depot.stock = 4 * MAGAZINE;
        let depot = Arc::new(depot);
        let me = depot.enlist();
        depot.sleepers[me].parked.store(true, Ordering::Release);
        let (done, finished) = mpsc::channel();
        let game = {
            let depot = Arc::clone(&depot);
            std::thread::spawn(move || {
                for _ in 0..3 * MAGAZINE {
                    depot.request(Cell);
                }
                depot.request_flush();
                depot.wake_if_needed();
                done.send(()).unwrap();
            })
        };
        let returned = finished.recv_timeout(Duration::from_secs(120));
        assert!(returned.is_ok(), "the hand-over waited for a worker stalled in park");
        game.join().unwrap();
        assert_eq!(depot.to_build.len(), MAGAZINE);
        assert_eq!(depot.backlogged.load(Ordering::Relaxed), 2 * MAGAZINE);
        // The worker resuming finds the work (and a spare unpark), and lowers its flag.
        assert!(!depot.park(me, false), "parked with work waiting");
        assert!(!depot.sleepers[me].parked.load(Ordering::Relaxed));
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use std::ptr::NonNull;

    use loom::cell::UnsafeCell;
    use respawn_allocator::sync::thread;
    use respawn_allocator::DropAll;

    use super::{work_with, Depot, Token, MAGAZINE};

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

    /// A model's cell: its memory, and whether it still holds an ended object (the
    /// returned `async_purge` cells).
    struct ModelCell {
        cell: NonNull<u8>,
        occupied: bool,
    }

    // SAFETY: the token is the ownership of its cell, as the pools' own tokens.
    unsafe impl Send for ModelCell {}

    impl Token for ModelCell {
        type Map = ();

        unsafe fn cell(&self, (): &()) -> NonNull<u8> {
            self.cell
        }

        fn occupied(&self) -> bool {
            self.occupied
        }

        fn vacated(self) -> Self {
            Self { occupied: false, ..self }
        }
    }

    struct Obj {
        n: usize,
        dropped: Arc<AtomicUsize>,
        /// An ended object's: its destructor checks the game thread's write of its mark
        /// is visible (the worker that drops it received it through the queue).
        check: Option<Arc<Marks>>,
    }

    impl Drop for Obj {
        fn drop(&mut self) {
            if let Some(marks) = &self.check {
                // SAFETY: loom checks this read is ordered after the game thread's write.
                let mark = marks.0[self.n].with(|m| unsafe { *m });
                assert_eq!(mark, 1, "ended object {} dropped before it was handed over", self.n);
            }
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
                Obj { n, dropped: Arc::clone(&dropped), check: None }
            });
            Arc::from_std(create)
        }

        /// Takes the object out of a cell the game thread received, checking its build is
        /// visible.
        fn take(&self, cell: &ModelCell) -> usize {
            // SAFETY: a cell out of a published magazine holds an object a worker built;
            // the game thread owns it now and moves it out once.
            let obj = unsafe { cell.cell.cast::<Obj>().as_ptr().read() };
            // SAFETY: loom checks this read is ordered after `create`'s write.
            let mark = self.marks.0[obj.n].with(|m| unsafe { *m });
            assert_eq!(mark, 1, "object {} handed over before it was built", obj.n);
            obj.n
        }
    }

    /// Memory for `n` cells of `Obj`, and a token for each.
    fn cells(n: usize) -> (Vec<std::mem::MaybeUninit<Obj>>, Vec<ModelCell>) {
        let mut memory: Vec<std::mem::MaybeUninit<Obj>> = (0..n).map(|_| std::mem::MaybeUninit::uninit()).collect();
        let tokens = memory.iter_mut().map(|m| ModelCell { cell: NonNull::from(m).cast(), occupied: false }).collect();
        (memory, tokens)
    }

    /// Sends `tokens` to the workers as a World pool's returned cells go: counted as
    /// building at once, then `BATCH` at a time in the depot's batch buffers (`send_batch`),
    /// and a wake-up.
    fn send_in_batches(depot: &Depot<ModelCell>, tokens: Vec<ModelCell>) {
        depot.building.fetch_add(tokens.len(), Ordering::Relaxed);
        let mut pending = tokens.len();
        for token in tokens {
            let mut batch = depot.take_batch().expect("a free batch buffer");
            batch.push(token);
            pending -= batch.len();
            depot.send_batch(batch, pending);
        }
        depot.wake_workers();
    }

    /// Objects a model queues: a full magazine and one more, so one is left partial.
    const N: usize = MAGAZINE + 1;

    /// A pool with one worker running, and `N` cells queued for it as `grow` queues them.
    struct Model {
        built: Built,
        depot: Arc<Depot<ModelCell>>,
        /// Drops of the ended objects the cells held (`start_occupied`).
        ended_dropped: Arc<AtomicUsize>,
        worker: thread::JoinHandle<()>,
        /// The cells' memory; outlives the worker (joined before the model drops).
        _memory: Vec<std::mem::MaybeUninit<Obj>>,
    }

    impl Model {
        fn start() -> Self {
            Self::start_with(N, |depot, _, tokens| {
                for token in tokens {
                    depot.request(token);
                }
                depot.wake_workers();
            })
        }

        /// The same with the `N` cells sent as returned cells are, a batch (a magazine) at a
        /// time: the worker takes each batch whole and builds in its cells one by one.
        fn start_batched() -> Self {
            Self::start_with(N, |depot, _, tokens| send_in_batches(depot, tokens))
        }

        /// [`start_occupied`](Self::start_occupied)'s cells, sent a batch at a time.
        fn start_occupied_batched() -> Self {
            Self::start_occupied_with(send_in_batches)
        }

        /// The same with a build queue of one cell, the `N` cells sent as one growth step:
        /// one in the queue, the rest in the backlog the worker drains after it.
        fn start_backlogged() -> Self {
            Self::start_with(1, |depot, _, tokens| depot.request_growth(tokens))
        }

        /// The same with cells that still hold an ended object each (`async_purge`): the
        /// game thread wrote them; the worker must drop each before it builds in the cell,
        /// or the shutdown drain if the worker never takes it.
        fn start_occupied() -> Self {
            Self::start_occupied_with(|depot, tokens| {
                for token in tokens {
                    depot.request(token);
                }
                depot.wake_workers();
            })
        }

        fn start_occupied_with(send: impl FnOnce(&Depot<ModelCell>, Vec<ModelCell>)) -> Self {
            let ended_dropped = Arc::new(AtomicUsize::new(0));
            let dropped = Arc::clone(&ended_dropped);
            let mut model = Self::start_with(N, move |depot, built, tokens| {
                let mut occupied = Vec::new();
                for (i, mut token) in tokens.into_iter().enumerate() {
                    let n = N + i;
                    // SAFETY: the game thread's own mark, written once before the hand-off.
                    built.marks.0[n].with_mut(|m| unsafe { *m = 1 });
                    let ended = Obj { n, dropped: Arc::clone(&dropped), check: Some(Arc::clone(&built.marks)) };
                    // SAFETY: the token's cell is uninitialised memory of `Obj`, ours.
                    unsafe { token.cell.cast::<Obj>().as_ptr().write(ended) };
                    token.occupied = true;
                    occupied.push(token);
                }
                send(depot, occupied);
            });
            model.ended_dropped = ended_dropped;
            model
        }

        fn start_with(queue: usize, send: impl FnOnce(&Depot<ModelCell>, &Built, Vec<ModelCell>)) -> Self {
            // Marks for the objects built, and for the ended ones (`start_occupied`).
            let built = Built::new(2 * N);
            let (memory, tokens) = cells(N);
            let depot = Arc::new(Depot::new(N, queue, 1, ()));
            let worker = {
                let (depot, create) = (Arc::clone(&depot), built.create());
                thread::spawn(move || work_with(depot, create))
            };
            send(&depot, &built, tokens);
            Self { built, depot, ended_dropped: Arc::new(AtomicUsize::new(0)), worker, _memory: memory }
        }

        /// Shuts the pool down as `ClassPool::shutdown` does and checks nothing stays counted.
        /// Returns the built objects' counters and the ended objects' drops.
        fn stop(self) -> (Built, usize) {
            self.depot.stop();
            self.worker.join().unwrap();
            // SAFETY: the worker has returned, and it built with this recipe.
            unsafe { self.depot.drain(&mut DropAll::new(), &*self.built.create()) };
            // The module's own test reads the counters raw: exact, not `non_negative`.
            assert_eq!(self.depot.ready.load(Ordering::Relaxed), 0);
            assert_eq!(self.depot.held.load(Ordering::Relaxed), 0);
            assert_eq!(self.depot.building.load(Ordering::Relaxed), 0, "queued cells still counted");
            (self.built, self.ended_dropped.load(Ordering::Relaxed))
        }
    }

    /// The ready queue and magazine exchange, and the flush hand-shake: the game thread
    /// queues three cells for a worker (which may already be parked), takes the full
    /// magazine the worker publishes, finds the depot empty, says it has requested a flush, and must
    /// get the worker's partial magazine. Every object arrives once, built, and the
    /// counters balance. A lost wake-up deadlocks the model (loom ignores the timeout).
    #[test]
    fn magazine_exchange() {
        loom::model(|| exchange(Model::start()));
    }

    /// The same through the growth backlog: the worker, perhaps parked already, must be
    /// woken for cells that are only in the backlog (its count rises before the wake-up's
    /// fence), take them under its lock, and hand every object over built.
    #[test]
    fn backlog_exchange() {
        loom::model(|| exchange(Model::start_backlogged()));
    }

    fn exchange(model: Model) {
        {
            let (depot, built) = (&model.depot, &model.built);
            let mut got = Vec::new();
            while got.len() < N {
                match depot.take_full() {
                    Some(mut magazine) => {
                        while let Some(cell) = magazine.pop() {
                            got.push(built.take(&cell));
                        }
                        depot.return_empty(magazine);
                    }
                    None => {
                        depot.request_flush();
                        thread::yield_now();
                    }
                }
            }
            got.sort_unstable();
            assert_eq!(got, (0..N).collect::<Vec<_>>(), "an object lost or handed out twice");
            assert_eq!(depot.counters.precreated.load(Ordering::Relaxed), N as u64);
        }
        let (built, _) = model.stop();
        assert_eq!(built.dropped.load(Ordering::Relaxed), N, "the game thread drops what it took");
    }

    /// Parking and waking at shutdown: the pool shuts down while the worker is building, holding
    /// a partial magazine, or parked. The wake-up must reach it (no timeout under loom), and
    /// every object built is dropped exactly once — by the worker (its own magazine) or by
    /// the pool (published ones, `drain`) — and nothing stays counted.
    #[test]
    fn shutdown_drops_each_object_once() {
        loom::model(|| {
            let (built, _) = Model::start().stop();
            let made = built.made.load(Ordering::Relaxed);
            assert_eq!(built.dropped.load(Ordering::Relaxed), made, "built {made}, dropped otherwise");
        });
    }

    /// Shutdown with cells still in the backlog: they are uncounted once (nothing built in
    /// them is dropped twice, nothing stays counted).
    #[test]
    fn shutdown_with_a_backlog() {
        loom::model(|| {
            let (built, _) = Model::start_backlogged().stop();
            let made = built.made.load(Ordering::Relaxed);
            assert_eq!(built.dropped.load(Ordering::Relaxed), made, "built {made}, dropped otherwise");
        });
    }

    /// Destroy and rebuild (`async_purge`): every cell arrives with an ended object in it.
    /// The worker drops each before it builds in the cell (its destructor sees the game
    /// thread's writes: the queue orders them), and the game thread receives every new
    /// object built; each ended object is dropped exactly once.
    #[test]
    fn occupied_exchange() {
        loom::model(|| exchange_occupied(Model::start_occupied()));
    }

    /// [`exchange`] of a model whose cells held ended objects: each dropped once, before
    /// its rebuild.
    fn exchange_occupied(model: Model) {
        let ended = Arc::clone(&model.ended_dropped);
        exchange(model);
        assert_eq!(ended.load(Ordering::Relaxed), N, "each ended object dropped once, before its rebuild");
    }

    /// [`magazine_exchange`] with the cells sent a batch at a time, as a World pool's
    /// returned cells are: every object handed over built, once.
    #[test]
    fn batch_exchange() {
        loom::model(|| exchange(Model::start_batched()));
    }

    /// Occupied cells sent in batches: each ended object dropped once, before its rebuild,
    /// and every object handed over built.
    #[test]
    fn occupied_batch_exchange() {
        loom::model(|| exchange_occupied(Model::start_occupied_batched()));
    }

    /// Shutdown with occupied cells still queued: whichever the worker took it dropped
    /// before building; the rest the pool's drain drops. Each ended object once, in every
    /// interleaving, and every object built once.
    #[test]
    fn shutdown_drops_each_ended_object_once() {
        loom::model(|| stop_occupied(Model::start_occupied()));
    }

    /// Stops a model whose cells held ended objects: each of those dropped once, and each
    /// object built dropped once.
    fn stop_occupied(model: Model) {
        let (built, ended) = model.stop();
        assert_eq!(ended, N, "each ended object dropped once");
        let made = built.made.load(Ordering::Relaxed);
        assert_eq!(built.dropped.load(Ordering::Relaxed), made, "built {made}, dropped otherwise");
    }

    /// The same with the cells sent in batches: an ended object in the batch a worker holds
    /// when the pool stops is dropped by that worker (the rest by the drain), once.
    #[test]
    fn shutdown_drops_each_ended_object_of_a_batch_once() {
        loom::model(|| stop_occupied(Model::start_occupied_batched()));
    }
}
