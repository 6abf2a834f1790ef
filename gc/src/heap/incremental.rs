//! The incremental mark (UE 5.4's incremental reachability): a collection's mark spread
//! over slices, one a frame, each within a time budget, while the game runs between them.
//!
//! ```text
//!  start_incremental_collection(options)          (or Heap::update, when a collection is due)
//!   slice 1   purge the last collection's leftovers · clusters · write barrier ON
//!   Flag      runs of the table from a cursor, 64 slots a piece: white = MAYBE_UNREACHABLE,
//!             roots ► frontier                                  ─── budget spent: return
//!   Reach     (each slice) barrier notes ► trace again (outside the budget)
//!             frontier ► drain, a few objects between clock checks ─── budget spent: return
//!             frontier empty in the slice that traced the notes: external referencers
//!             report again, drained whole: the mark is done
//!   Gather    (each slice) notes ► trace again · referencers report · drain whole, then
//!             runs of the table: white (or late garbage) ► UNREACHABLE + purge queue
//!                                                                ─── budget spent: return
//!   end       barrier OFF · clusters nobody reached dissolved · full purge if asked
//!  between slices the game may spawn, store handles, root, unroot, mark as garbage, destroy
//! ```
//!
//! # The rule: an insertion barrier on mutable loans, and a last slice with nothing grey
//!
//! A field write in Rust is a plain store the collector cannot intercept. But every
//! object's `&mut` comes from the arena (`get_mut`, a class store's `get_mut`, `tick`,
//! `par_tick`, `retain`, a `Releasable`'s object), and handles change only through `&mut`
//! ([`Trace`](crate::Trace) rule 5). So while a mark runs the arena's *write barrier*
//! ([`Arena::set_barrier`](respawn_arena::Arena::set_barrier)) notes every object lent
//! mutably, every object made live (`insert`, `activate`: born non-white, their fields written
//! by the game), and every object rooted, given an owner or re-flagged; the heap notes the
//! members of clusters made during the mark. A slice begins by visiting each noted object
//! again: its borrow has ended (the slice holds `&mut Heap`), so the visit reads what the
//! game wrote. This is Dijkstra's insertion barrier at object granularity, applied late:
//! an object lent out stays grey until the next slice traces it again. A snapshot
//! (Yuasa's deletion barrier) would not do here: handles in locals are not roots, so the
//! game may hold a handle to an object that was unreachable when the mark began and store
//! it in a live object; the snapshot would purge it.
//!
//! Colours, for a live object of the table:
//!
//! - **white**: `MAYBE_UNREACHABLE` set (flagged by this mark, not reached);
//! - **grey**: not white, and still to be visited: in the frontier or a tracer's stack, or
//!   noted by the barrier (or, if its class was ticked, any object of the class) since the
//!   last slice, or — during the flag phase — a root pushed but not visited;
//! - **black**: not white, not grey: visited since its last change, or kept unscanned by
//!   rule (permanent, pooled, being built: the mark run whole never scans those either).
//!
//! Edges are what the mark run whole follows: traced handles whose generation matches a
//! live object that is neither garbage nor being destroyed, `outer` links, and cluster
//! membership. Garbage keeps nothing alive, in both marks.
//!
//! **Invariant (the strong tri-colour invariant), from the end of the flag phase on:** no
//! black object has an edge to a white object. Proof, by what can change it:
//!
//! 1. *The flag phase* walks the runs set up when the mark began (one set up since holds
//!    only objects born during the mark: non-white, and noted). It scans nothing, so nothing is black but the kept-unscanned and the
//!    objects born non-white (each of those noted, hence grey). Flagging a slot white can
//!    make a new white object only out of one that has no visit behind it. Why wait for the
//!    notes until the flag phase is over: a note processed before a slot is flagged would
//!    make its object black while a later flag whitens what it points to.
//! 2. *A visit* claims every edge target of the object as the object is now: after it, no
//!    target is white. (A claim clears the white bit and pushes the object: grey.)
//! 3. *The game, between slices*, can add an edge only by writing a field (a mutable loan:
//!    the object is noted, grey), by `set_outer` (noted), or by making a cluster (members
//!    noted). A new object is born non-white and noted. None of these leaves a black object
//!    with a new edge. Removing edges, marking as garbage, destroying, unrooting cannot
//!    break the invariant (they only take edges away, or retire objects from the graph).
//!    A slot index reused by a new object between slices starts non-white and noted.
//! 4. *A noted object* is visited again at the next slice if it is not white (rule 2). A
//!    white one is left white: its fields are read when something reaches it; but if it
//!    became a root (rooted, or given a keep flag: both noted) it is claimed.
//!
//! **No grey, at the start of every gather step.** The reach ends in a slice that traced
//! the notes at its start and then drained the frontier to empty: nothing was noted since
//! (the game did not run), so nothing is grey. The external referencers, whose sets change
//! outside the heap's view, report again, and what they add is drained whole in that same
//! slice. Each later (gather) slice does the same before it hides anything: traces the
//! notes, lets the referencers report, drains to empty. At those moments every root is
//! non-white: it was a root when its slot was flagged (pushed then), or was rooted since
//! (`add_to_root`, `root`, a keep flag: noted, claimed at rule 4); a `Root` guard made on
//! another thread is a clone of one that already kept the object. So take any object
//! reachable from a root then, and a path to it from that root: if some object on it were
//! white, the first white one would follow a non-white, hence black, one — an edge from
//! black to white, which the invariant rules out. **Every white object is unreachable
//! whenever the gather looks at it.**
//!
//! **The gather** walks the table's runs (those set up when it begins: a run set up since
//! the mark began holds only objects born non-white, but one of them may have been marked as
//! garbage since), a piece at a time within the budget, and hides each white or garbage
//! object it meets: `UNREACHABLE` (no handle resolves to it any more, no
//! claim takes it, no visit reads it) and queued for the purge, with its whole cluster if
//! it is in one (nobody reached the cluster, or its members would all be non-white). The
//! barrier stays on between gather slices, so an object the game reaches again (through a
//! handle it kept in a local) before the gather gets to it is claimed and traced like any
//! other. Once hidden, an object is decided, as after a collection run whole: a handle to
//! it stored later is stale as soon as the purge runs (it no longer resolves as it is
//! stored). **Every object reachable when the collection ends, through objects whose
//! handles resolve, survives it.**
//!
//! **What else survives** (floating garbage, collected by the next collection): objects
//! reached during the mark and cut loose before its end, objects born during it and
//! dropped before its end (born non-white), what those point to, and the members of a
//! cluster whose root was marked as garbage during the mark (the mark run whole dissolves
//! such a cluster first). Objects marked as garbage during the mark are purged like those
//! marked before it, even after the mark reached them — the gather takes garbage that is
//! not rooted — unless the gather had passed them already: then they wait, hidden, for the
//! next collection.
//!
//! **Termination.** Each slice flags, visits or gathers at least one unit of work before it
//! looks at the clock. Each object enters the frontier at most once per mark (a claim
//! clears its white bit, and only the flag phase sets it, once per slot), so the frontier
//! empties after finitely many slices, whatever the game does between them; the notes are
//! traced at the start of every slice, outside its budget, so they never stop the drain
//! from advancing; the flag and gather cursors only move forward.
//!
//! **Cost when no mark runs:** one well-predicted branch in `get_mut`, a store's `get_mut`,
//! `insert`, `activate`, `tick`: a flag in the arena or the class entry, in cache. During a
//! mark, a note is a `Vec` push (leaf classes are not noted at all: a value with no handle
//! cannot store one), and the next slice visits the object again; a `tick` of a traced
//! class notes the class, and the next slice visits its non-white objects again.

use std::time::{Duration, Instant};

use respawn_allocator::sync::AtomicU32;
use respawn_arena::{Arena, BarrierLog, Lifecycle, ObjectFlags, ObjectTable, RawHandle, Slot};

use super::{flag_run, sized, Heap, UNTRACED_KEEP};
use crate::cluster::{ClusterId, Clusters};
use crate::frontier::Frontier;
use crate::mark::{Keep, Marker, UNVISITABLE};
use crate::settings::{CollectOptions, GcStats, MarkPhase, MarkProgress, MarkStep};
use crate::trace::Tracer;
use crate::why::Graph;

/// Slots flagged between two looks at the pacer: a piece of a run.
const FLAG_PIECE: usize = 64;
/// At most this many pieces between two looks at the clock (1024 slots).
const FLAG_STRIDE: usize = 16;
/// At most this many visits between two looks at the clock.
const DRAIN_STRIDE: usize = 16;

/// Where a running incremental mark is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Phase {
    /// Started; the first slice sets it up.
    Begin,
    /// Flagging, from slot index `next` on.
    Flag { next: u32 },
    /// Tracing.
    Reach,
    /// Gathering the unreachable, from offset `at` of run `run` of the runs noted when the
    /// reach ended.
    Gather { run: usize, at: u32 },
}

/// An incremental mark's state between its slices. Its lists are kept between marks for
/// their capacity.
#[derive(Debug, Default)]
pub(super) struct Marking {
    /// `None` outside an incremental mark.
    pub(super) phase: Option<Phase>,
    options: CollectOptions,
    frontier: Cursor,
    /// The arena's barrier notes, drained at each slice.
    log: BarrierLog,
    /// The heap's own notes: members of clusters made during the mark.
    pub(super) notes: Vec<u32>,
    /// The table's runs (first index, slots) when the mark began: what the flag phase and
    /// the gather walk. A run set up since holds only objects born non-white (and noted),
    /// so walking it would add nothing — and chasing the runs a growing pool sets up frame
    /// after frame could keep the flag phase from ever ending.
    runs: Vec<(u32, u32)>,
    /// Entries of each frontier buffer this mark may use: the table's slots when it began,
    /// which bound what the flag phase can flag, hence what can ever be claimed.
    slots: usize,
}

/// The two frontier buffers as an incremental mark leaves them between slices: the
/// entries of `current` from `taken` to `current_len` and the first `next_len` of the other
/// are claimed and waiting for their visit, each once.
#[derive(Clone, Copy, Debug, Default)]
struct Cursor {
    /// Which of the heap's two buffers is the current one.
    current: usize,
    current_len: usize,
    taken: usize,
    next_len: usize,
}

impl Cursor {
    fn pending(&self) -> usize {
        self.current_len - self.taken + self.next_len
    }
}

/// Says when to look at the clock: after 1 unit of work, then 2, 4, … up to `max`, so a
/// tiny budget stops after a tiny step while a large one looks rarely.
struct Pacer {
    stride: usize,
    since: usize,
    max: usize,
}

impl Pacer {
    fn new(max: usize) -> Self {
        Self { stride: 1, since: 0, max }
    }

    /// Counts `work` units done; whether it is time to look at the clock.
    fn due(&mut self, work: usize) -> bool {
        self.since += work;
        if self.since < self.stride {
            return false;
        }
        self.since = 0;
        self.stride = (self.stride * 2).min(self.max);
        true
    }
}

/// A slice's clock: the caller's `now`, the budget, when the slice began, and the time
/// the budget does not cover (tracing the barrier's notes).
struct Clock<F> {
    now: F,
    begin: Duration,
    excluded: Duration,
    budget: Duration,
}

impl<F: FnMut() -> Duration> Clock<F> {
    fn new(mut now: F, budget: Duration) -> Self {
        let begin = now();
        Self { now, begin, excluded: Duration::ZERO, budget }
    }

    fn read(&mut self) -> Duration {
        (self.now)()
    }

    /// Leaves the time since `since` (a reading) out of the budget.
    fn exclude(&mut self, since: Duration) {
        let now = self.read();
        // Saturating: a caller's clock (`mark_slice_timed`) may jump anywhere.
        self.excluded = self.excluded.saturating_add(now.saturating_sub(since));
    }

    /// Whether the budget is spent.
    fn spent(&mut self) -> bool {
        self.read().saturating_sub(self.begin).saturating_sub(self.excluded) >= self.budget
    }
}

/// The marker of an incremental mark: one thread (plain claims), checked visits.
fn marker<'a>(arena: &'a Arena, clusters: &'a Clusters) -> Marker<'a> {
    Marker { table: arena.table(), classes: arena.collector_entries(), clusters, exclusive: true, checked: true }
}

impl Heap {
    /// Starts an incremental collection (UE 5.4's incremental reachability): the mark is
    /// then spread over [`mark_slice`](Self::mark_slice) calls, one a frame, each within
    /// its budget, while the game goes on between them; the slice that finishes the mark
    /// gathers what is unreachable (and purges it whole if `options.full_purge`; otherwise
    /// [`purge`](Self::purge) takes it in slices as after any collection). Nothing happens
    /// until the first slice, which begins by purging what the previous collection left.
    /// Returns `false`, changing nothing, if an incremental mark is running already.
    ///
    /// [`update`](Self::update) does all this by itself when
    /// [`GcSettings::incremental_mark_budget`](crate::GcSettings::incremental_mark_budget)
    /// is set.
    ///
    /// **What it keeps.** Every object reachable when the collection ends survives it —
    /// stored in a traced field, rooted or reported by a referencer between slices
    /// included — and what was reachable only earlier in the mark, or born during it, may
    /// survive it too, for the next collection to take. While the mark runs, the arena's
    /// write barrier notes each object lent mutably or made live in a traced class (and
    /// each object rooted, given an owner or re-flagged), and the next slice traces those
    /// again; the proof is in the module `heap/incremental.rs`. Objects are all usable
    /// between slices (the mark's flag hides nothing) until the gather, which is sliced
    /// too, finds one unreachable and hides it, as a collection run whole hides what it
    /// finds unreachable until the purge.
    ///
    /// [`collect_garbage`](Self::collect_garbage) during an incremental mark drops the mark
    /// and collects whole, from scratch.
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_arena::Handle;
    /// use respawn_gc::{CollectOptions, Heap, MarkStep, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Node { next: Option<Handle<Node>> }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Node { next: None });
    /// let b = heap.insert(Node { next: None });
    /// let c = heap.insert(Node { next: None });
    /// heap.add_to_root(a.raw())?;
    /// heap.add_to_root(c.raw())?;
    /// heap.get_mut(a).unwrap().next = Some(b);
    ///
    /// assert!(heap.start_incremental_collection(CollectOptions::FULL));
    /// let mut frames = 0;
    /// let stats = loop {
    ///     match heap.mark_slice(Duration::from_micros(50)) {
    ///         MarkStep::Done(stats) => break stats,
    ///         _ if frames == 0 => {
    ///             // The game, between two slices: b moves from a to c, which the mark
    ///             // may have traced already. The barrier sees the store.
    ///             heap.get_mut(c).unwrap().next = Some(b);
    ///             heap.get_mut(a).unwrap().next = None;
    ///         }
    ///         _ => {}
    ///     }
    ///     frames += 1;
    /// };
    /// assert!(heap.get(b).is_some(), "reachable when the mark ended");
    /// assert!(stats.mark_slices >= 1);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn start_incremental_collection(&mut self, options: CollectOptions) -> bool {
        if self.marking.phase.is_some() {
            return false;
        }
        self.marking.phase = Some(Phase::Begin);
        self.marking.options = options;
        true
    }

    /// Whether an incremental mark is running (started and not finished).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{CollectOptions, Heap};
    ///
    /// let mut heap = Heap::new();
    /// assert!(!heap.is_marking());
    /// heap.start_incremental_collection(CollectOptions::FULL);
    /// assert!(heap.is_marking(), "started, even before its first slice");
    /// heap.finish_mark();
    /// assert!(!heap.is_marking());
    /// ```
    pub fn is_marking(&self) -> bool {
        self.marking.phase.is_some()
    }

    /// Runs one slice of the incremental mark: first the objects the game changed since
    /// the last slice are traced again (outside the budget: that work follows the game's
    /// changes, not the heap's size), then the mark flags, traces or gathers
    /// ([`MarkPhase`](crate::MarkPhase)) until `budget` is spent — it looks at the clock
    /// every few objects, so it overruns by at most a few visits or 64 slots — and the
    /// slice that gathers the last run of the table ends the collection (and purges whole
    /// if its options said so). A gather slice first traces to the end whatever the game
    /// made reachable since the last slice, and lets the external referencers report. See
    /// [`start_incremental_collection`](Self::start_incremental_collection).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{CollectOptions, Heap, MarkStep, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..10_000 {
    ///     heap.insert(Spark { heat: 1.0 });
    /// }
    /// heap.start_incremental_collection(CollectOptions::FULL);
    /// let mut frames = 0;
    /// let stats = loop {
    ///     frames += 1; // one slice a frame; the game runs between them
    ///     if let MarkStep::Done(stats) = heap.mark_slice(Duration::from_micros(100)) {
    ///         break stats;
    ///     }
    /// };
    /// assert_eq!((stats.mark_slices, stats.purged), (frames, 10_000));
    /// assert_eq!(heap.mark_slice(Duration::from_micros(100)), MarkStep::Idle, "no mark running");
    /// ```
    pub fn mark_slice(&mut self, budget: Duration) -> MarkStep {
        let origin = Instant::now();
        self.slice(budget, move || origin.elapsed())
    }

    /// [`mark_slice`](Self::mark_slice) against your own clock (a frame clock, or a
    /// simulated one): stops once `now()` has advanced by `budget` since the slice's
    /// budgeted work began, the re-tracing of what the game changed aside. The clock is
    /// read after 1 unit of work, then 2, 4 … (a unit: 64 slots flagged, or an object
    /// visited), so a clock that ticks once a reading makes slices of a few objects.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{CollectOptions, Heap, MarkStep, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// for _ in 0..1000 {
    ///     heap.insert(Spark { heat: 1.0 });
    /// }
    /// // A simulated clock that moves 1 µs a reading: each slice does a few units of work.
    /// let mut now = Duration::ZERO;
    /// let mut clock = || {
    ///     now += Duration::from_micros(1);
    ///     now
    /// };
    /// heap.start_incremental_collection(CollectOptions::FULL);
    /// let mut slices = 0;
    /// loop {
    ///     slices += 1;
    ///     let step = heap.mark_slice_timed(Duration::from_micros(4), &mut clock);
    ///     if matches!(step, MarkStep::Done(_)) {
    ///         break;
    ///     }
    /// }
    /// assert!(slices > 1, "the mark was spread over slices");
    /// assert!(heap.is_empty::<Spark>());
    /// ```
    pub fn mark_slice_timed(&mut self, budget: Duration, now: impl FnMut() -> Duration) -> MarkStep {
        self.slice(budget, now)
    }

    /// Runs the rest of the incremental mark in one slice, to its end. `None` if no
    /// incremental mark is running.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::time::Duration;
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let kept = heap.insert(Spark { heat: 1.0 });
    /// heap.add_to_root(kept.raw())?;
    /// heap.insert(Spark { heat: 0.0 });
    /// assert_eq!(heap.finish_mark(), None, "no mark running");
    /// heap.start_incremental_collection(CollectOptions::FULL);
    /// let stats = heap.finish_mark().unwrap(); // a loading screen: no frame to spread it over
    /// assert_eq!((stats.kept, stats.purged), (1, 1));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn finish_mark(&mut self) -> Option<GcStats> {
        match self.mark_slice(Duration::MAX) {
            MarkStep::Done(stats) => Some(stats),
            MarkStep::Idle => None,
            MarkStep::Marking(p) => unreachable!("an unbounded slice stopped: {p:?}"),
        }
    }

    /// Drops a running incremental mark (a whole collection is about to decide from
    /// scratch: its flag phase rewrites every slot's mark bit).
    pub(super) fn abandon_mark(&mut self) {
        match self.marking.phase.take() {
            None => {}
            // Not begun: nothing to undo.
            Some(Phase::Begin) => {}
            Some(_) => {
                self.arena.set_barrier(false, |_, _| false);
                self.marking.notes.clear();
                self.marking.log.clear();
                // The collection about to run counts itself.
                self.stats.cycles -= 1;
            }
        }
    }

    fn slice(&mut self, budget: Duration, now: impl FnMut() -> Duration) -> MarkStep {
        let mut clock = Clock::new(now, budget);
        let Some(mut phase) = self.marking.phase else { return MarkStep::Idle };
        let wall = Instant::now();
        if phase == Phase::Begin {
            self.begin_mark();
            phase = Phase::Flag { next: 0 };
        }
        self.stats.mark_slices += 1;

        if let Phase::Flag { next } = phase {
            match self.flag_some(next, &mut clock) {
                Some(next) => {
                    self.marking.phase = Some(Phase::Flag { next });
                    return self.slice_done(MarkPhase::Flag, 0, wall);
                }
                None => phase = Phase::Reach,
            }
        }

        // Reach and gather: the notes first (rule 4 of the module docs), outside the budget.
        let t = Instant::now();
        let before = clock.read();
        let retraced = self.trace_notes();
        clock.exclude(before);

        if phase == Phase::Reach {
            if !self.drain_some(&mut clock) {
                self.marking.phase = Some(Phase::Reach);
                self.stats.reach_time += t.elapsed();
                return self.slice_done(MarkPhase::Reach, retraced, wall);
            }
            // Nothing grey, and nothing noted since this slice began (the game did not
            // run): the referencers report again, and what they add is traced to the end.
            self.report_and_drain();
            self.stats.reach_time += t.elapsed();
            self.begin_gather();
        } else {
            // A later gather slice: the game ran since the last one. The referencers report
            // again, and everything grey is traced to the end before anything is hidden.
            self.report_and_drain();
            self.stats.reach_time += t.elapsed();
        }

        let t = Instant::now();
        let done = self.gather_some(&mut clock);
        self.stats.gather_time += t.elapsed();
        if !done {
            return self.slice_done(MarkPhase::Gather, retraced, wall);
        }
        self.end_incremental();
        let elapsed = wall.elapsed();
        self.stats.last_slice = elapsed;
        self.stats.longest_slice = self.stats.longest_slice.max(elapsed);
        MarkStep::Done(self.stats)
    }

    /// Flags from slot `next` on, within the budget: `Some(index)` to go on from, or
    /// `None` when the whole table is flagged (the referencers have reported, then).
    fn flag_some<F: FnMut() -> Duration>(&mut self, next: u32, clock: &mut Clock<F>) -> Option<u32> {
        let t = Instant::now();
        let slots = self.marking.slots;
        let table = self.arena.table();
        let cursor = &mut self.marking.frontier;
        let roots = Frontier::with_len(&self.frontiers[cursor.current][..slots], cursor.current_len);
        let mut objects = 0;
        let keep = Keep { classes: self.arena.collector_entries(), flags: self.marking.options.keep_flags };
        let runs = &self.marking.runs;
        let left = flag_from(table, runs, next, keep, &roots, &mut objects, || clock.spent());
        self.stats.objects += objects;
        if left.is_none() {
            // The external referencers report now, as after phase 2 of a whole mark.
            let marker = marker(&self.arena, &self.clusters);
            let referencers = &mut self.referencers;
            marker.report_roots(&roots, |tracer| referencers.report_all(tracer));
        }
        cursor.current_len = roots.len();
        self.stats.roots = cursor.current_len;
        self.stats.mark_time += t.elapsed();
        left
    }

    /// Traces again what the barrier noted since the last slice (rule 4); returns how many.
    fn trace_notes(&mut self) -> usize {
        self.arena.drain_barrier(&mut self.marking.log);
        self.marking.log.objects.append(&mut self.marking.notes);
        // A run of get_mut on one object notes it again and again; once is enough.
        self.marking.log.objects.dedup();
        let slots = self.marking.slots;
        let marker = marker(&self.arena, &self.clusters);
        let cursor = &mut self.marking.frontier;
        let next = Frontier::with_len(&self.frontiers[cursor.current ^ 1][..slots], cursor.next_len);
        let keep = self.marking.options.keep_flags;
        let retraced = retrace_notes(&marker, &self.arena, &self.marking.log, keep, &next);
        cursor.next_len = next.len();
        self.marking.log.clear();
        self.stats.retraced += retraced;
        retraced
    }

    /// Drains the frontier within the budget; whether it is empty.
    fn drain_some<F: FnMut() -> Duration>(&mut self, clock: &mut Clock<F>) -> bool {
        let slots = self.marking.slots;
        let marker = marker(&self.arena, &self.clusters);
        let bufs: [&[AtomicU32]; 2] = [&self.frontiers[0][..slots], &self.frontiers[1][..slots]];
        let mut scanned = 0;
        let empty = drain(&marker, bufs, &mut self.marking.frontier, &mut scanned, || clock.spent());
        self.stats.scanned += scanned;
        empty
    }

    /// Lets the referencers report, and drains the frontier to empty.
    fn report_and_drain(&mut self) {
        let slots = self.marking.slots;
        let marker = marker(&self.arena, &self.clusters);
        let bufs: [&[AtomicU32]; 2] = [&self.frontiers[0][..slots], &self.frontiers[1][..slots]];
        let cursor = &mut self.marking.frontier;
        let next = Frontier::with_len(bufs[cursor.current ^ 1], cursor.next_len);
        let referencers = &mut self.referencers;
        marker.report_roots(&next, |tracer| referencers.report_all(tracer));
        cursor.next_len = next.len();
        let mut scanned = 0;
        drain(&marker, bufs, cursor, &mut scanned, || false);
        self.stats.scanned += scanned;
    }

    /// The mark is done (nothing grey): the gather begins, over the runs set up now.
    fn begin_gather(&mut self) {
        self.garbage_references.clear();
        if self.settings.track_garbage_references {
            // A diagnostic, off by default: while the garbage is still in its slots.
            let graph = Graph::new(&self.arena, &self.clusters);
            graph.garbage_after_mark(&mut self.referencers, &mut self.garbage_references);
        }
        self.purge_queue.clear();
        self.purge_cursor = 0;
        // The gather takes every garbage object there is when it walks the object's run.
        self.garbage.clear();
        // The runs set up now, not when the mark began: a run set up since holds only
        // objects born non-white, but one of them marked as garbage during the mark is the
        // gather's to take, as an older object marked so is.
        let table = self.arena.table();
        self.marking.runs.clear();
        self.marking.runs.extend(table.runs().map(|(first, run)| (first, run.len() as u32)));
        self.marking.phase = Some(Phase::Gather { run: 0, at: 0 });
    }

    /// Hides and queues the unreachable, a piece of a run at a time, within the budget;
    /// whether the gather is done.
    fn gather_some<F: FnMut() -> Duration>(&mut self, clock: &mut Clock<F>) -> bool {
        let Some(Phase::Gather { mut run, mut at }) = self.marking.phase else { unreachable!("gathering") };
        let mut pacer = Pacer::new(FLAG_STRIDE);
        let mut done = true;
        while let Some(&(first, len)) = self.marking.runs.get(run) {
            let end = (at + FLAG_PIECE as u32).min(len);
            for index in first + at..first + end {
                self.gather_one(index);
            }
            (run, at) = if end == len { (run + 1, 0) } else { (run, end) };
            if pacer.due(1) && clock.spent() {
                done = self.marking.runs.get(run).is_none();
                break;
            }
        }
        self.marking.phase = Some(Phase::Gather { run, at });
        // What the barrier noted since the slice's notes were traced is the gather's own
        // `set_flags`: nothing to trace.
        self.arena.drain_barrier(&mut self.marking.log);
        self.marking.log.clear();
        done
    }

    /// Gathers the object in slot `index` if the mark left it unreachable: queued for the
    /// purge and `Unreachable` (hidden: no handle resolves to it, no claim takes it, no
    /// visit reads it), with its whole cluster if it is in one nobody reached.
    fn gather_one(&mut self, index: u32) {
        let Some(slot) = self.arena.table().slot(index) else { return };
        let Some(white) = doomed(slot) else { return };
        let raw = super::raw_at(index, slot);
        if white {
            if let Some(cluster) = self.clusters.cluster_of(index, slot) {
                let mut members = std::mem::take(&mut self.walk);
                members.clear();
                members.extend(self.clusters.objects(ClusterId(cluster)).into_iter().flatten());
                for &member in &members {
                    let Ok(slot) = self.arena.table().resolve_live(member) else { continue };
                    if doomed(slot).is_some() {
                        self.hide(member);
                    }
                }
                self.walk = members;
                return;
            }
        }
        self.hide(raw);
    }

    fn hide(&mut self, raw: RawHandle) {
        self.purge_queue.push(raw);
        self.stats.unreachable += 1;
        let hidden = self.arena.set_lifecycle(raw, Lifecycle::Unreachable);
        debug_assert!(hidden.is_ok(), "gathered from a live slot");
    }

    /// The last slice's end: the barrier off, clusters nobody reached dissolved, the
    /// figures, and the purge whole if the options asked for it.
    fn end_incremental(&mut self) {
        self.marking.phase = None;
        self.arena.set_barrier(false, |_, _| false);
        let (kept, dissolved) = self.clusters.end_cycle();
        self.stats.clusters_kept = kept;
        self.stats.clusters_dissolved += dissolved;
        self.stats.kept = self.stats.objects.saturating_sub(self.stats.unreachable);
        if self.marking.options.full_purge {
            self.purge(None);
        }
    }

    /// The slice's figures, for a slice that did not finish the mark.
    fn slice_done(&mut self, phase: MarkPhase, retraced: usize, wall: Instant) -> MarkStep {
        let elapsed = wall.elapsed();
        self.stats.last_slice = elapsed;
        self.stats.longest_slice = self.stats.longest_slice.max(elapsed);
        MarkStep::Marking(MarkProgress {
            phase,
            slices: self.stats.mark_slices,
            retraced,
            pending: self.marking.frontier.pending(),
            elapsed,
        })
    }

    /// The first slice's set-up: the last collection's leftovers purged, the figures reset,
    /// clusters readied, the frontiers emptied, the barrier on.
    fn begin_mark(&mut self) {
        if self.pending_purge() > 0 {
            self.purge(None);
        }
        self.revive_standing();
        self.since_collection = Duration::ZERO;
        self.stats = GcStats { cycles: self.stats.cycles + 1, threads: 1, ..GcStats::default() };
        self.stats.clusters_dissolved = self.clusters.begin_cycle(self.arena.table());
        self.marking.frontier = Cursor::default();
        self.marking.log.clear();
        self.marking.notes.clear();
        let table = self.arena.table();
        self.marking.runs.clear();
        self.marking.runs.extend(table.runs().map(|(first, run)| (first, run.len() as u32)));
        // Sized once, for the mark: growing them between slices would copy them each time
        // a pool sets up a slab.
        self.marking.slots = table.len() as usize;
        sized(&mut self.frontiers[0], self.marking.slots);
        sized(&mut self.frontiers[1], self.marking.slots);
        // A class's objects are scanned when its entry has a trace function.
        self.arena.set_barrier(true, |_, entry| entry.is_some_and(|entry| entry.trace().is_some()));
    }
}

/// Flags the runs of `snapshot` (the table's when the mark began) from slot index `cursor`
/// on, a piece of [`FLAG_PIECE`] slots at a time (roots into `roots`), until it is done
/// (`None`) or `spent` says stop: then the index to go on from. Runs set up since are
/// skipped, which is sound: their slots were vacant when they were set up, and an object
/// born there since is non-white and noted.
fn flag_from(
    table: &ObjectTable,
    snapshot: &[(u32, u32)],
    cursor: u32,
    keep: Keep<'_>,
    roots: &Frontier<'_>,
    objects: &mut usize,
    mut spent: impl FnMut() -> bool,
) -> Option<u32> {
    let mut pacer = Pacer::new(FLAG_STRIDE);
    // Both lists ascend by first index: walk them side by side.
    let mut snapshot = snapshot.iter().copied().filter(|&(first, len)| first as usize + len as usize > cursor as usize);
    let mut want = snapshot.next();
    for (first, run) in table.runs() {
        let Some((next_first, len)) = want else { break };
        if first < next_first {
            continue; // set up since the mark began
        }
        debug_assert_eq!(first, next_first, "a run of the snapshot is gone");
        want = snapshot.next();
        let run = &run[..(len as usize).min(run.len())];
        let mut k = cursor.saturating_sub(first) as usize;
        while k < run.len() {
            let end = (k + FLAG_PIECE).min(run.len());
            *objects += flag_run(first + k as u32, &run[k..end], keep, roots);
            k = end;
            if pacer.due(1) && spent() {
                return Some(first + k as u32);
            }
        }
    }
    None
}

/// Visits again every object the barrier noted (rule 4 of the module docs), with a tracer
/// whose claims go to `next`. Returns how many it visited or claimed.
fn retrace_notes(
    marker: &Marker<'_>,
    arena: &Arena,
    log: &BarrierLog,
    keep: ObjectFlags,
    next: &Frontier<'_>,
) -> usize {
    let mut retraced = 0;
    marker.report_roots(next, |tracer| {
        for &index in &log.objects {
            retraced += retrace(marker, tracer, index, keep);
        }
        for &class in &log.classes {
            for index in arena.live_indices(class) {
                retraced += retrace(marker, tracer, index, keep);
            }
        }
    });
    retraced
}

/// Rule 4 for one noted slot: a non-white object is visited again; a white one is claimed
/// if it is a root now, and otherwise left for whatever reaches it. Returns 1 if it did
/// either.
fn retrace(marker: &Marker<'_>, tracer: &mut Tracer<'_>, index: u32, keep: ObjectFlags) -> usize {
    let Some(slot) = marker.table.slot(index) else { return 0 };
    let flags = slot.flags();
    if flags.intersects(UNVISITABLE) {
        return 0;
    }
    if flags.contains(ObjectFlags::MAYBE_UNREACHABLE) {
        let root = slot.is_rooted() || flags.intersects(keep);
        return usize::from(root && tracer.claim(index, slot));
    }
    marker.visit(index, tracer);
    1
}

/// Drains the frontiers `cursor` describes until they are empty (`true`) or `spent` says
/// stop (`false`); then what is left is described by `cursor` again. Visits at least one
/// object before it asks.
fn drain(
    marker: &Marker<'_>,
    bufs: [&[AtomicU32]; 2],
    cursor: &mut Cursor,
    scanned: &mut usize,
    mut spent: impl FnMut() -> bool,
) -> bool {
    let mut pacer = Pacer::new(DRAIN_STRIDE);
    loop {
        if cursor.taken == cursor.current_len {
            if cursor.next_len == 0 {
                *cursor = Cursor { current: cursor.current, ..Cursor::default() };
                return true;
            }
            *cursor = Cursor { current: cursor.current ^ 1, current_len: cursor.next_len, taken: 0, next_len: 0 };
        }
        let seeds = &bufs[cursor.current][cursor.taken..cursor.current_len];
        let next = Frontier::with_len(bufs[cursor.current ^ 1], cursor.next_len);
        // The clock is read inside the walk, between visits: a walk that stopped only to
        // look would hand its stack and its prefetch FIFO back to the frontier each time.
        let (mut seen, mut stopped) = (0, false);
        let drained = marker.drain_until(seeds, &next, |d| {
            let work = d.visited - seen;
            seen = d.visited;
            stopped = pacer.due(work) && spent();
            stopped
        });
        cursor.taken += drained.taken;
        cursor.next_len = next.len();
        *scanned += drained.traced;
        if stopped {
            return false;
        }
    }
}

/// Whether the gather takes the object in `slot`: `Some(white)` if the mark did not reach
/// it (`white`), or it was marked as garbage after the mark reached it (the mark run whole
/// would not have kept it: garbage keeps nothing, and nothing but a root keeps it). Not if
/// it is gathered already, kept by rule (permanent, pooled), being destroyed, or rooted (a
/// white root cannot be, by the module's proof; it would stay).
#[inline]
fn doomed(slot: &Slot) -> Option<bool> {
    let flags = slot.flags();
    let white = flags.contains(ObjectFlags::MAYBE_UNREACHABLE);
    let garbage = match flags.lifecycle() {
        Lifecycle::Live => false,
        Lifecycle::Garbage => true,
        _ => return None, // gathered already, being destroyed, or no object
    };
    if flags.intersects(UNTRACED_KEEP) || !(white || garbage) {
        return None;
    }
    if slot.is_rooted() {
        debug_assert!(garbage || !white, "a root left white by an incremental mark");
        return None;
    }
    Some(white)
}
