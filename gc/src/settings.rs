//! Settings, options and statistics of the collector.

use std::fmt;
use std::time::Duration;

use respawn_arena::ObjectFlags;

use crate::GcError;

/// How the collector runs (UE's `gc.*` console variables). Public fields, named presets,
/// and [`validate`](Self::validate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GcSettings {
    /// Mark and reach on rayon's threads (`false`: the calling thread alone).
    pub parallel: bool,
    /// The least work worth a rayon task: the table slice one task flags in phase 2 (at
    /// least 1024 slots), and the number of objects a marking task scans before it hands
    /// the rest of its work to the next round.
    pub min_objects_per_task: usize,
    /// The time [`Heap::update`](crate::Heap::update) spends purging per frame; `None`
    /// purges everything right after each automatic collection.
    pub purge_budget: Option<Duration>,
    /// The time between automatic collections in [`Heap::update`](crate::Heap::update);
    /// `None` collects only when asked.
    pub time_between_collections: Option<Duration>,
    /// Threads of the heap's own rayon pool, for the parallel mark and `par_tick`: started
    /// with the heap and joined when it drops, so no thread of the heap outlives it.
    /// `None` (the presets) uses rayon's global pool, whose threads live until the process
    /// exits and are shared with the rest of the program.
    pub threads: Option<usize>,
    /// Record, in each collection, the references that the objects it keeps (and the
    /// external referencers) still hold to objects marked as garbage, for
    /// [`Heap::garbage_references`](crate::Heap::garbage_references) (UE's
    /// `gc.GarbageReferenceTrackingEnabled`). A diagnostic: when on, each collection scans
    /// every kept object once more after its mark, on one thread, and allocates (the time
    /// counts in [`GcStats::gather_time`]). Off in every preset; off, the collection only
    /// tests this `bool`.
    pub track_garbage_references: bool,
    /// Destructors run off the game thread (UE's `FAsyncPurge`). An object a purge (or
    /// `destroy_now`, or a `Purge` release) ends has its hooks run and its slot released on
    /// the game thread — its handles are stale at once — and its class returns it
    /// undropped: for a pooled class, the worker that rebuilds its cell drops it in the same
    /// pass (destroy and rebuild); for a class without a pool, the heap's purge thread drops
    /// it and hands the cell back, and the heap recycles it on its next purge or
    /// [`update`](crate::Heap::update) ([`Heap::purge_thread_stats`](crate::Heap::purge_thread_stats)
    /// counts them). The game thread pays the hooks, the slot's release and a queue push,
    /// not the destructor. `begin_destroy` and `finish_destroy` stay on the game thread; a
    /// class whose `Drop` must too says so with
    /// [`Object::DROP_ON_GAME_THREAD`](crate::Object::DROP_ON_GAME_THREAD), and a class with
    /// nothing to drop is never handed over. Read when a class is registered with the heap
    /// (or its pool built). Off in every preset.
    pub async_purge: bool,
    /// Spread each automatic collection's mark over frames (UE 5.4's incremental
    /// reachability, `gc.AllowIncrementalReachability` with `gc.IncrementalReachabilityTimeLimit`):
    /// [`Heap::update`](crate::Heap::update) then marks for about this long per frame —
    /// [`Heap::mark_slice`](crate::Heap::mark_slice) — instead of marking the whole heap in
    /// the frame the collection falls due, so a large heap never pauses the game for its
    /// whole mark. While the mark runs, a write barrier notes the objects the game changes,
    /// and each slice traces them again first (outside the budget: that work follows the
    /// game's changes, not the heap's size). An incremental mark runs on the calling thread
    /// (`parallel` and `threads` do not apply to it). `None` (every preset) marks whole.
    pub incremental_mark_budget: Option<Duration>,
    /// Purge objects marked as garbage between collections once they hold this percentage
    /// of the heap's cells (1 to 100). Their handles are stale from the moment they are
    /// marked and garbage keeps nothing alive, so no mark has to judge them: when
    /// [`Heap::update`](crate::Heap::update) finds the threshold passed (and no incremental
    /// mark running), it takes them from the list of objects marked since the last
    /// collection (8 bytes each: no walk over the table, so the work follows the garbage,
    /// not the heap's size) and purges them within [`purge_budget`](Self::purge_budget), as
    /// it purges a collection's finds. A pool under `Policy::Default` so gets its cells back
    /// a few frames after its objects are destroyed instead of at the next collection, and
    /// holds that much less memory.
    /// Rooted garbage waits for a collection. Not while
    /// [`track_garbage_references`](Self::track_garbage_references) is on: the collection
    /// reports those references. `None` waits for the collection (UE's behaviour). 10 in
    /// [`DEFAULT`](Self::DEFAULT) and [`LOW_LATENCY`](Self::LOW_LATENCY); `None` in
    /// [`SINGLE_THREADED`](Self::SINGLE_THREADED), which changes nothing unasked.
    pub early_purge_percent: Option<u8>,
}

impl GcSettings {
    /// Parallel mark, 2 ms of purge per frame, a collection every 60 s (UE's defaults are
    /// close: 61.1 s, 2 ms).
    pub const DEFAULT: Self = Self {
        parallel: true,
        min_objects_per_task: 4096,
        purge_budget: Some(Duration::from_millis(2)),
        time_between_collections: Some(Duration::from_secs(60)),
        threads: None,
        track_garbage_references: false,
        async_purge: false,
        incremental_mark_budget: None,
        early_purge_percent: Some(10),
    };
    /// Everything on the calling thread, full purges, collections only when asked: the
    /// deterministic setting for tests and tools.
    pub const SINGLE_THREADED: Self = Self {
        parallel: false,
        min_objects_per_task: 4096,
        purge_budget: None,
        time_between_collections: None,
        threads: None,
        track_garbage_references: false,
        async_purge: false,
        incremental_mark_budget: None,
        early_purge_percent: None,
    };
    /// For frame-bound games that churn objects: frequent collections (every 10 s), short
    /// purge slices (1 ms).
    pub const LOW_LATENCY: Self = Self {
        parallel: true,
        min_objects_per_task: 4096,
        purge_budget: Some(Duration::from_millis(1)),
        time_between_collections: Some(Duration::from_secs(10)),
        threads: None,
        track_garbage_references: false,
        async_purge: false,
        incremental_mark_budget: None,
        early_purge_percent: Some(10),
    };

    /// Checks the settings.
    ///
    /// # Errors
    /// [`GcError::BadSettings`] naming the field and what to change.
    pub fn validate(&self) -> Result<(), GcError> {
        if self.min_objects_per_task == 0 {
            return Err(GcError::BadSettings("min_objects_per_task is 0; use at least 1 (4096 is a good start)"));
        }
        if self.purge_budget == Some(Duration::ZERO) {
            return Err(GcError::BadSettings(
                "purge_budget is zero, so no purge step could end on time; use None for full purges",
            ));
        }
        if self.threads == Some(0) {
            return Err(GcError::BadSettings("threads is 0; use None for rayon's global pool, or at least 1"));
        }
        if self.time_between_collections == Some(Duration::ZERO) {
            return Err(GcError::BadSettings("time_between_collections is zero; use None to collect only when asked"));
        }
        if self.incremental_mark_budget == Some(Duration::ZERO) {
            return Err(GcError::BadSettings(
                "incremental_mark_budget is zero, so no mark slice could end on time; use None to mark whole",
            ));
        }
        if self.early_purge_percent.is_some_and(|p| p == 0 || p > 100) {
            return Err(GcError::BadSettings(
                "early_purge_percent must be from 1 to 100; use None to purge garbage only after collections",
            ));
        }
        Ok(())
    }
}

impl Default for GcSettings {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// Options of one collection (UE's `CollectGarbage(KeepFlags, bPerformFullPurge)`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CollectOptions {
    /// Objects carrying any of these flags are kept, and traced, as if rooted.
    pub keep_flags: ObjectFlags,
    /// Purge everything found unreachable before returning; `false` leaves the purge to
    /// [`Heap::purge`](crate::Heap::purge) calls (incremental).
    pub full_purge: bool,
}

impl CollectOptions {
    /// No keep flags, purge everything now.
    pub const FULL: Self = Self { keep_flags: ObjectFlags::empty(), full_purge: true };
    /// No keep flags, purge later in budgeted steps.
    pub const INCREMENTAL: Self = Self { keep_flags: ObjectFlags::empty(), full_purge: false };
}

impl Default for CollectOptions {
    fn default() -> Self {
        Self::FULL
    }
}

/// Figures of the last collection. Purge figures grow as incremental steps run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcStats {
    /// Collections run so far.
    pub cycles: u64,
    /// rayon threads the mark ran on (1 when not parallel).
    pub threads: usize,
    /// Objects the mark considered (every object not already being destroyed).
    pub objects: usize,
    /// Roots: rooted objects and objects carrying a keep flag.
    pub roots: usize,
    /// Objects scanned: traced for the handles they hold.
    pub scanned: usize,
    /// Objects kept (reached, rooted, permanent, pooled).
    pub kept: usize,
    /// Objects found unreachable (garbage included), handed to the purge.
    pub unreachable: usize,
    /// Of those, purged so far (dropped and freed).
    pub purged: usize,
    /// Clusters kept whole.
    pub clusters_kept: usize,
    /// Clusters dissolved (root garbage, or nothing reached).
    pub clusters_dissolved: usize,
    /// Phase 2: flagging every object unreachable and gathering roots.
    pub mark_time: Duration,
    /// Phases 3–4: reachability from the roots, clusters included.
    pub reach_time: Duration,
    /// Phase 5: gathering the unreachable.
    pub gather_time: Duration,
    /// Phase 6: purging, summed over the steps so far.
    pub purge_time: Duration,
    /// Slices the mark ran in: 1 for a collection run whole; one per
    /// [`mark_slice`](crate::Heap::mark_slice) for an incremental one (so far, while it
    /// runs).
    pub mark_slices: usize,
    /// The longest of those slices: how long the collection held the calling thread at
    /// most. A collection run whole is one slice (mark,
    /// reach and gather, and its purge when it purged whole); an incremental one's slices
    /// each flag or trace within the budget (after re-tracing what the game changed), and
    /// the last one gathers (and purges whole, if asked to).
    pub longest_slice: Duration,
    /// The slice that finished the collection (a collection run whole: all of it, as
    /// [`longest_slice`](Self::longest_slice) counts it): the collection's share of the
    /// frame that ended it.
    pub last_slice: Duration,
    /// Objects an incremental mark traced again because the game changed them (the write
    /// barrier's work: stores, new objects, roots, owners), or claimed because the game
    /// rooted them, while the mark ran. 0 for a collection run whole.
    pub retraced: usize,
    /// Objects marked as garbage that [`early_purge_percent`](GcSettings::early_purge_percent)
    /// sent to the purge between this collection and the next (their purges count in
    /// [`purged`](Self::purged), not in [`unreachable`](Self::unreachable)).
    pub gathered_early: usize,
}

/// Where an incremental mark stands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkPhase {
    /// Flagging the table, a run of slots at a time: every object the mark may collect
    /// becomes `MAYBE_UNREACHABLE`, the roots go into the frontier. (It begins with the
    /// first slice: purging what the previous collection left, and setting up clusters.)
    Flag,
    /// Tracing from the frontier, and again from what the game changed between slices,
    /// until nothing is left to trace.
    Reach,
    /// Gathering what the mark did not reach, a run of slots at a time: hidden
    /// (`UNREACHABLE`) and queued for the purge. Each gather slice first traces to the end
    /// what the game made reachable since the last one.
    Gather,
}

/// What an unfinished slice of an incremental mark did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MarkProgress {
    /// Where the mark stands now.
    pub phase: MarkPhase,
    /// Slices run so far, this one included.
    pub slices: usize,
    /// Objects traced again in this slice because the game changed them since the last
    /// one (see [`GcStats::retraced`]).
    pub retraced: usize,
    /// Objects claimed and waiting to be traced (the frontier).
    pub pending: usize,
    /// Time the slice took.
    pub elapsed: Duration,
}

/// What a slice of an incremental mark did ([`Heap::mark_slice`](crate::Heap::mark_slice)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MarkStep {
    /// No incremental mark is running.
    Idle,
    /// The slice ran out of budget: the mark goes on at the next slice.
    Marking(MarkProgress),
    /// The slice finished the mark: the unreachable are gathered (and purged, if the
    /// collection's options asked for a full purge). The collection's figures.
    Done(GcStats),
}

/// What a purge step did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PurgeProgress {
    /// Objects destroyed by this step.
    pub purged: usize,
    /// Objects still waiting: not reached yet, or not ready for `finish_destroy`.
    pub remaining: usize,
    /// Time the step took.
    pub elapsed: Duration,
}

impl PurgeProgress {
    /// Whether nothing is left to purge.
    pub fn is_done(&self) -> bool {
        self.remaining == 0
    }
}

/// What [`Heap::update`](crate::Heap::update) did this frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GcStep {
    /// Nothing was due.
    Idle,
    /// A purge step ran.
    Purged(PurgeProgress),
    /// A collection ran (and, without a purge budget, a full purge): a whole one, or the
    /// last slice of an incremental mark.
    Collected(GcStats),
    /// A slice of an incremental mark ran ([`GcSettings::incremental_mark_budget`]); the
    /// mark goes on next frame.
    Marked(MarkProgress),
}

impl fmt::Display for GcStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "gc #{}: {} objects, {} roots, {} scanned, {} kept, {} unreachable ({} purged) on {} thread(s); \
             mark {:?}, reach {:?}, gather {:?}, purge {:?}; {} slice(s), longest {:?}, {} retraced",
            self.cycles,
            self.objects,
            self.roots,
            self.scanned,
            self.kept,
            self.unreachable,
            self.purged,
            self.threads,
            self.mark_time,
            self.reach_time,
            self.gather_time,
            self.purge_time,
            self.mark_slices,
            self.longest_slice,
            self.retraced
        )
    }
}
