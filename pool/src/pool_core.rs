//! The game-thread side every World pool shares: [`PoolCore`] owns the pool's [`Crew`]
//! (its depot, workers, recipe and config), the game thread's two magazines, the tallies and
//! the trim window, and is the only code that moves the count of objects checked out to the
//! game thread. A class's pool and a composite pool are adapters over it: each says only
//! how its cells are taken from the arena, activated into the world and given back. (A
//! standalone [`Pool`](crate::Pool) shares the crew, with a pair of magazines per thread.)
//!
//! ```text
//!   adapter (ClassPool, CompositePool)          PoolCore
//!   ──────────────────────────────────          ────────
//!   spawn:   pop ─► activate, hooks                pop / refill (depot) ─► spawned
//!   miss:    take cells, build inline           spawned_inline (checked out)
//!   Reuse:   reset ─► put back                  put_back (magazines; dropped when full)
//!   growth:  take cells from the arena          grow (within max) ─► depot's build queue
//!   upkeep:  cells back to the arena            drain_spare (ended objects dropped first)
//!   stats, cold, trim, shutdown                 all of it, by the recipe's types
//! ```

use std::ptr::NonNull;
use std::time::{Duration, Instant};

use respawn_allocator::DropAll;

use crate::crew::{Crew, Stopped};
use crate::depot::{Depot, Magazines, Recipe, Refilled, Returned, Token};
use crate::sync::Arc;
use crate::{PoolConfig, PoolError, PoolStats};

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
    /// The most objects in use at once before the current idle window (`peak` keeps the
    /// window's).
    high_water: usize,
}

/// The idle window (see `ClassPool`'s trim) and what trims dropped.
#[derive(Debug, Default)]
struct Window {
    /// Frame time since the window opened.
    elapsed: Duration,
    /// The most objects in use at once since the window opened (kept by every spawn).
    peak: usize,
    /// Ready objects trims dropped.
    trimmed: u64,
}

/// What a class keeps for reuse beside its pool's magazines (a World pool under `Reuse`:
/// see `ClassStore::reuse`): checked out to the game thread, and ready.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Kept {
    /// Objects kept now.
    pub(crate) now: usize,
    /// Objects kept since the class was registered: each a release and a `Reuse` recycle.
    pub(crate) total: u64,
}

/// A pool still warming up: [`PoolCore::cold`] (and `ErasedPool::cold`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Cold {
    /// Objects a spawn can pop now.
    pub(crate) ready: usize,
    /// Objects queued, being built, or held in a worker's partial magazine.
    pub(crate) on_the_way: usize,
}

/// One World pool's game-thread side over tokens `C`, whose objects its workers build by
/// recipe `R`. See the module docs.
pub(crate) struct PoolCore<C: Token, R: Recipe<C> + ?Sized> {
    /// The depot, the workers and their recipe (which the adapter builds inline with too: a
    /// miss, a prefill).
    crew: Crew<C, R>,
    /// A copy of the depot's map: the hot paths place cells without reaching through the
    /// `Arc`.
    map: C::Map,
    magazines: Magazines<C>,
    tally: Tally,
    /// Set once the first `capacity` cells are queued: growth after that counts as `grown`.
    built: bool,
    /// The pool may own more than `max` cells: set by the only ways past it (a spawn that
    /// overflows at `max`, a plain insert), cleared by [`above_max`](Self::above_max) once
    /// the pool is back within `max`. While it is clear a `Reuse` release skips counting
    /// the cells the pool owns (four shared counters).
    over_max: bool,
    window: Window,
}

impl<C: Token, R: Recipe<C> + ?Sized + 'static> PoolCore<C, R> {
    /// The game-thread side of a pool named `name`: its depot (placing cells by `map`) and
    /// `config.workers` workers building by `recipe`. Nothing is queued yet: the adapter
    /// grows the pool once it takes its class's ended cells, then calls [`built`](Self::built).
    pub(crate) fn start(name: &'static str, config: PoolConfig, map: C::Map, recipe: Arc<R>) -> Self {
        Self {
            crew: Crew::start(name, config, map, recipe),
            map,
            magazines: Magazines::new(),
            tally: Tally::default(),
            built: false,
            over_max: false,
            window: Window::default(),
        }
    }
}

impl<C: Token, R: Recipe<C> + ?Sized> PoolCore<C, R> {
    /// The first `capacity` cells are queued: growth from here on counts as `grown`.
    pub(crate) fn built(&mut self) {
        self.built = true;
    }

    /// The recipe the workers build with.
    pub(crate) fn recipe(&self) -> &R {
        self.crew.recipe()
    }

    /// The depot, for the adapter's returned cells.
    #[inline(always)]
    pub(crate) fn depot(&self) -> &Arc<Depot<C>> {
        self.crew.depot()
    }

    #[inline]
    pub(crate) fn config(&self) -> &PoolConfig {
        self.crew.config()
    }

    /// The class's name in stats and errors.
    pub(crate) fn name(&self) -> &'static str {
        self.crew.name()
    }

    /// What places the pool's cells.
    #[inline(always)]
    pub(crate) fn map(&self) -> &C::Map {
        &self.map
    }

    /// The address of `cell`'s (first) object.
    #[inline(always)]
    pub(crate) fn cell(&self, cell: &C) -> NonNull<u8> {
        // SAFETY: every token the pool holds was made for its map, and the arena the map
        // reads outlives the pool (the `Pools` that owns both drops the pools first).
        unsafe { cell.cell(&self.map) }
    }

    /// Objects ready in the game thread's magazines.
    #[inline]
    pub(crate) fn local(&self) -> usize {
        self.magazines.len()
    }

    /// Objects of the class alive in the world: those checked out less the magazines' and
    /// the `kept` ones (objects the class keeps for reuse: checked out, and ready).
    #[inline]
    pub(crate) fn live(&self, kept: usize) -> usize {
        self.depot().checked_out().saturating_sub(self.local() + kept)
    }

    /// Objects ready or being built, this thread's magazines and the class's `kept` objects
    /// counted directly (the depot's mirror lags while a spawn is under way). Cells still
    /// being built count: growing past them would balloon the pool whenever the workers
    /// fall behind.
    pub(crate) fn available(&self, kept: usize) -> usize {
        self.depot().on_the_way() + self.local() + kept
    }

    /// Cells the pool owns: objects alive in the world, ready, being built.
    #[inline]
    pub(crate) fn owned(&self) -> usize {
        self.depot().owned()
    }

    /// Whether the pool owns `max` cells or more.
    pub(crate) fn at_max(&self) -> bool {
        self.owned() >= self.config().max
    }

    /// A spawn found nothing ready: whether it may build inline. `Ok(true)`: the pool is at
    /// `max`, so the object is an overflow one; `Err` there when `strict`.
    pub(crate) fn admit_miss(&self, strict: bool) -> Result<bool, PoolError> {
        let at_max = self.at_max();
        if at_max && strict {
            return Err(PoolError::Exhausted { class: self.name(), max: self.config().max });
        }
        Ok(at_max)
    }

    /// How many cells a miss grows the pool by (none `at_max` or without workers): only
    /// when too little is on its way, so that a miss while the first magazines are still
    /// being built does not add `grow_by` cells per miss.
    pub(crate) fn miss_growth(&self, at_max: bool) -> usize {
        let config = self.config();
        // A miss: nothing is kept.
        let short = !at_max && config.workers > 0 && self.available(0) < config.low_watermark.max(1);
        if short {
            config.grow_by.max(1)
        } else {
            0
        }
    }

    /// Whether the pool owns more than `max` cells, told by the `over_max` flag without
    /// counting while the pool cannot have got there; the flag clears once it is back.
    #[inline]
    pub(crate) fn above_max(&mut self) -> bool {
        if !self.over_max {
            return false;
        }
        self.over_max = self.owned() > self.config().max;
        self.over_max
    }

    /// Whether the stock on its way (with the class's `kept` objects) is below the low
    /// watermark (with precreation on): time to [`grow`](Self::grow) by `grow_by`.
    pub(crate) fn wants_growth(&self, kept: usize) -> bool {
        self.config().precreate && self.available(kept) < self.config().low_watermark
    }

    /// Whether the stock on its way is within one growth step of the low watermark (with
    /// precreation on and room below `max`): time to have that step's memory prepared, so
    /// the growth to come takes no page fault.
    pub(crate) fn nears_growth(&self, kept: usize) -> bool {
        let config = self.config();
        config.precreate
            && config.grow_by > 0
            && self.owned() < config.max
            && self.available(kept) < config.low_watermark + config.grow_by
    }

    /// A ready object's token from the loaded magazine, if it has one.
    #[inline(always)]
    pub(crate) fn pop(&mut self) -> Option<C> {
        self.magazines.pop()
    }

    /// Whether a [`refill`](Self::refill) could find a ready object or has workers to ask
    /// for one. `false`: the loaded magazine's last pop was the pool's last ready object.
    #[inline(always)]
    pub(crate) fn may_refill(&self) -> bool {
        self.config().workers > 0 || self.magazines.can_refill(self.depot())
    }

    /// The token the next [`pop`](Self::pop) returns.
    #[inline(always)]
    pub(crate) fn next_ready(&self) -> Option<&C> {
        self.magazines.loaded.last()
    }

    /// A ready object when the loaded magazine ran dry: from the previous magazine, else
    /// from a full one the depot holds (`true`: it came from the depot, the moment to top
    /// the stock up); `None` when there is none, and the workers are told to hand over what
    /// they hold.
    #[cold]
    #[inline(never)]
    pub(crate) fn refill(&mut self) -> Option<(C, bool)> {
        let from_depot = match self.magazines.refill(self.crew.depot()) {
            Refilled::Previous => false,
            Refilled::Depot => {
                // The depot's magazine was checked out to the game thread (`loaded` was empty).
                self.depot().count_checked_out(self.magazines.loaded.len() as isize);
                true
            }
            Refilled::Nothing => {
                self.depot().request_flush();
                return None;
            }
        };
        self.magazines.pop().map(|cell| (cell, from_depot))
    }

    /// A ready object (popped, or one of the class's `kept` ones) entered the world.
    #[inline(always)]
    pub(crate) fn spawned(&mut self, kept: usize) {
        self.tally.spawns += 1;
        self.window.peak = self.window.peak.max(self.live(kept));
    }

    /// An object built inline entered the world: a miss (`at_max`: an overflow object,
    /// beyond `max`).
    pub(crate) fn spawned_inline(&mut self, at_max: bool) {
        self.tally.spawns += 1;
        self.tally.misses += 1;
        self.tally.overflow += u64::from(at_max);
        self.over_max |= at_max;
        // A miss: nothing is kept.
        self.entered(0);
    }

    /// An object of the class entered the world without a spawn (a plain insert), which
    /// keeps `kept` objects: the pool may be past `max` from now on.
    pub(crate) fn note_inserted(&mut self, kept: usize) {
        self.over_max = true;
        self.entered(kept);
    }

    fn entered(&mut self, kept: usize) {
        self.depot().count_checked_out(1);
        self.window.peak = self.window.peak.max(self.live(kept));
    }

    /// A release was accepted (whatever becomes of the object).
    #[inline(always)]
    pub(crate) fn released(&mut self) {
        self.tally.released += 1;
    }

    /// Puts a reset object back among the ready ones (`Reuse`). With the magazines and the
    /// depot full, the object is dropped and its cell given back.
    #[inline(always)]
    pub(crate) fn put_back(&mut self, cell: C) {
        self.tally.recycled_reuse += 1;
        if let Err(cell) = self.push_ready(cell) {
            self.discard(cell);
        }
    }

    /// A `Reuse` release whose slot retired at the generation ceiling: the object was
    /// dropped, and no cell comes back.
    #[cold]
    #[inline(never)]
    pub(crate) fn retired(&mut self) {
        self.depot().count_checked_out(-1);
        self.depot().count_retired();
    }

    /// Puts a built object among the ready ones; `Err` (the token back, nothing changed)
    /// only if the magazines and the depot are full. Checked out already, so uncounted, unless
    /// a full magazine goes to the depot.
    #[inline(always)]
    fn push_ready(&mut self, cell: C) -> Result<(), C> {
        if !self.magazines.loaded.is_full() {
            self.magazines.loaded.push(cell);
            return Ok(());
        }
        self.push_ready_slow(cell)
    }

    #[cold]
    #[inline(never)]
    fn push_ready_slow(&mut self, cell: C) -> Result<(), C> {
        let before = self.local();
        let pushed = self.magazines.push(self.crew.depot(), cell);
        // A full magazine published to the depot leaves the checked-out count.
        let published = (before + usize::from(pushed.is_ok())).saturating_sub(self.local());
        self.depot().count_checked_out(-(published as isize));
        pushed
    }

    /// Drops the built object(s) in a checked-out token nobody will spawn, and gives its
    /// cells back (to the arena at the next [`drain_spare`](Self::drain_spare)).
    #[cold]
    #[inline(never)]
    fn discard(&mut self, cell: C) {
        // SAFETY: a checked-out token holds what the recipe built (a worker, an inline
        // build, a `Reuse` deactivation), the pool's alone; it goes to the spare list right after,
        // vacant, so this is its one drop.
        unsafe { self.crew.recipe().drop_built(&cell, &self.map) };
        self.depot().give_back(cell);
        self.depot().count_checked_out(-1);
    }

    /// Queues up to `n` cells for the workers (within `max`; none without workers), each
    /// from `take` (the adapter's arena cells). Stops at `take`'s first error, which it
    /// returns once the cells taken so far are queued. No growth (`n` 0: a miss while
    /// enough is on its way) costs one test.
    #[inline(always)]
    pub(crate) fn grow<E>(&mut self, n: usize, take: impl FnMut(&Self) -> Result<C, E>) -> Result<(), E> {
        if n == 0 {
            return Ok(());
        }
        self.grow_now(n, take)
    }

    /// [`grow`](Self::grow) by `n` > 0.
    fn grow_now<E>(&mut self, n: usize, mut take: impl FnMut(&Self) -> Result<C, E>) -> Result<(), E> {
        let n = n.min(self.config().max.saturating_sub(self.owned()));
        let this = &*self;
        let (taken, failed) = this.crew.grow(n, || take(this).map(Some));
        if self.built {
            self.tally.grown += taken as u64;
        }
        failed
    }

    /// Sends one cell to the workers (or back, at `max`, without workers or at shutdown:
    /// the depot decides).
    pub(crate) fn request(&self, cell: C) {
        self.depot().request(cell);
    }

    /// Builds up to `n` objects on the calling thread (within `max`) into the magazines,
    /// each by `build` (a token holding what the recipe builds). Returns how many it built.
    pub(crate) fn prefill<E>(&mut self, n: usize, mut build: impl FnMut(&Self) -> Result<C, E>) -> Result<usize, E> {
        let mut built = 0;
        while built < n && self.owned() < self.config().max {
            let start = Instant::now();
            let cell = build(self)?;
            let nanos = start.elapsed().as_nanos() as u64;
            self.depot().count_checked_out(1);
            if let Err(cell) = self.push_ready(cell) {
                // The depot is full (the pool holds `max` already): the object goes.
                self.discard(cell);
                break;
            }
            self.depot().prefilled(nanos);
            built += 1;
        }
        Ok(built)
    }

    /// A token as the pool may give it back or build in it again: an ended object its
    /// cell still holds (`async_purge`) is dropped here, on the game thread, and counted
    /// (a panicking destructor is caught: the memory is a cell all the same).
    pub(crate) fn vacate(&self, cell: C) -> C {
        if !cell.occupied() {
            return cell;
        }
        // SAFETY: an occupied token the pool holds came back from its class with the ended
        // object in it, the pool's alone; it comes back vacant, so the object is dropped once.
        let (cell, panicked) = unsafe { self.crew.recipe().drop_occupant(cell, &self.map) };
        self.depot().dropped(panicked, false);
        cell
    }

    /// Hands every cell the pool gave up to `recycle` (back to the arena), vacated.
    pub(crate) fn drain_spare(&self, mut recycle: impl FnMut(&Self, C)) {
        self.depot().drain_spare(|cell| recycle(self, self.vacate(cell)));
    }

    /// Game-thread upkeep after the adapter's: wakes the workers if cells wait for them or
    /// a spawn requested a flush.
    pub(crate) fn wake_if_needed(&self) {
        self.depot().wake_if_needed();
    }

    /// The pool's figures; `adapter_bytes` is the size of the adapter that holds the core,
    /// `kept` what its class keeps for reuse, `returned` what ended and waits on the class's
    /// returned list.
    pub(crate) fn stats(&self, adapter_bytes: usize, kept: Kept, returned: Returned) -> PoolStats {
        let (d, t) = (self.depot().snapshot(), &self.tally);
        let local = self.local() + kept.now + returned.total();
        PoolStats {
            class: self.name(),
            policy: self.config().policy,
            spawns: t.spawns,
            hits: t.spawns - t.misses,
            misses: t.misses,
            overflow: t.overflow,
            ready: d.published + d.held + self.local() + kept.now,
            in_use: d.checked_out.saturating_sub(local),
            high_water: t.high_water.max(self.window.peak),
            // Every kept object was a release, and a `Reuse` recycle.
            released: t.released + kept.total,
            recycled_reuse: t.recycled_reuse + kept.total,
            recycled_purge: d.ended_purge + returned.purge,
            recycled_gc: d.ended_gc + returned.gc,
            returned: d.returned,
            retired: d.retired + returned.retired,
            waiting: returned.cells(),
            grown: t.grown,
            // The game thread's magazines are one consumer's pair.
            side_bytes: self.depot().side_bytes(1) + adapter_bytes,
            trimmed: self.window.trimmed,
            // The class's memory is the heap's: `Pools` fills it in.
            committed_bytes: 0,
            ..d.pool_stats()
        }
    }

    /// What the workers still owe before every precreated object can be popped, or `None`
    /// once the pool is warm; a cold pool's workers are asked to hand over partial
    /// magazines at once. `kept`: objects the class keeps for reuse, ready too.
    pub(crate) fn cold(&self, kept: usize) -> Option<Cold> {
        if self.depot().is_warm() {
            return None;
        }
        self.depot().request_flush();
        let d = self.depot().snapshot();
        Some(Cold { ready: d.published + self.local() + kept, on_the_way: d.building + d.held })
    }

    /// Takes every ready and queued token out of the pool for a trim: the class's `kept`
    /// objects, the magazines' and the depot's published objects (uncounted from
    /// `checked_out`), then the cells queued for the workers.
    pub(crate) fn take_stock(&mut self, kept: Vec<C>) -> (Vec<C>, Vec<C>) {
        // The class's kept objects (taken out of it as tokens) are checked out like the
        // magazines', and ready.
        let local = self.local() + kept.len();
        let mut ready = kept;
        ready.reserve(self.local());
        ready.extend(std::iter::from_fn(|| self.magazines.loaded.pop()));
        ready.extend(std::iter::from_fn(|| self.magazines.previous.pop()));
        self.depot().count_checked_out(-(local as isize));
        self.depot().take_published(&mut ready);
        let mut queued = Vec::new();
        self.depot().take_queued(&mut queued);
        (ready, queued)
    }

    /// Puts back what a trim kept: `ready` checked out again (the last pushed on top, popped
    /// first), `queued` to the workers. Returns the ready ones that found no room.
    pub(crate) fn restock(&mut self, ready: Vec<C>, queued: Vec<C>) -> Vec<C> {
        self.depot().count_checked_out(ready.len() as isize);
        let mut overflow = Vec::new();
        for cell in ready {
            if let Err(cell) = self.push_ready(cell) {
                self.depot().count_checked_out(-1);
                overflow.push(cell);
            }
        }
        if !queued.is_empty() {
            self.depot().request_growth(queued);
        }
        overflow
    }

    /// `n` checked-out objects were dropped outside the magazines (those the class kept,
    /// at shutdown): uncounted from `checked_out`.
    pub(crate) fn uncount(&mut self, n: usize) {
        self.depot().count_checked_out(-(n as isize));
    }

    /// A trim dropped `n` ready objects.
    pub(crate) fn trimmed(&mut self, n: usize) {
        self.window.trimmed += n as u64;
    }

    /// `dt` of frame time passed (with `idle_trim` set): at the end of an idle window,
    /// how many ready or queued objects to keep, if some were not needed during the whole
    /// window — the stock beyond the window's peak use, but never below `capacity`. The
    /// window restarts.
    pub(crate) fn idle_window(&mut self, dt: Duration, kept: usize) -> Option<usize> {
        let window = self.config().idle_trim?;
        // Stops at `Duration::MAX`: a caller's clock may hand any `dt`.
        self.window.elapsed = self.window.elapsed.saturating_add(dt);
        if self.window.elapsed < window {
            return None;
        }
        let d = self.depot().snapshot();
        let stock = self.local() + kept + d.published + d.lag;
        let unused = (stock + self.live(kept)).saturating_sub(self.window.peak);
        let excess = stock.saturating_sub(self.config().capacity).min(unused);
        self.tally.high_water = self.tally.high_water.max(self.window.peak);
        self.window.peak = self.live(kept);
        self.window.elapsed = Duration::ZERO;
        (excess > 0).then(|| stock - excess)
    }

    /// Joins the workers and drops every ready object, and the ended objects still in
    /// cells queued or given back; the cells are forgotten (their memory goes with the
    /// arena). Idempotent.
    pub(crate) fn shutdown(&mut self) {
        // A panicking destructor in one step does not skip the others.
        let mut drops = DropAll::new();
        if self.crew.shutdown(&mut drops) == Stopped::OnAWorker {
            // Dropped inside a `create` on one of the pool's workers, which is still building:
            // leak what is ready rather than drop what a worker may touch.
            return;
        }
        let local = self.local();
        self.depot().count_checked_out(-(local as isize));
        // SAFETY: a ready token holds what the recipe built, the pool's alone, and the workers
        // are joined: each drop here is the objects' one.
        unsafe { self.magazines.drop_built(&mut drops, self.crew.recipe(), &self.map) };
    }
}

impl<C: Token, R: Recipe<C> + ?Sized> Drop for PoolCore<C, R> {
    fn drop(&mut self) {
        self.shutdown();
    }
}
