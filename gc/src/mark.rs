//! The mark: flag every object unreachable (phase 2), then clear the flag on everything
//! reachable from the roots (phase 3), in parallel.
//!
//! Work moves in rounds. A round hands the current *frontier* (objects claimed but not yet
//! traced) to rayon in chunks; each task traces depth-first from its chunk with a small
//! stack of its own, spilling the older half of that stack to the *next* frontier when it
//! fills, and everything left when it has traced its budget. Rounds go on until a frontier
//! comes back empty. An object enters a frontier only when a task *claims* it, by clearing
//! its `MAYBE_UNREACHABLE` bit, which happens once per collection — so each frontier needs at most
//! one entry per slot of the table (an object a task carries over when its budget ends is
//! in the next frontier once), and the two buffers are sized so, kept from one collection
//! to the next and grown exactly as the table grows.
//!
//! ```text
//!   frontier A ──par_chunks──► task: stack [.. 1024 ..] ──spill / budget──► frontier B
//!        ▲                                                                     │
//!        └──────────────────────────── swap, next round ───────────────────────┘
//! ```

use respawn_allocator::prefetch;
use respawn_allocator::sync::{AtomicU32, Ordering};
use respawn_arena::{CollectorEntries, CollectorEntry, ObjectFlags, ObjectTable};

use crate::cluster::Clusters;
use crate::frontier::Frontier;
use crate::trace::{call_prefetch, call_trace, LocalStack, Tracer};

/// Length of the FIFO between a task's stack and its visits.
const RING: usize = 16;

/// How many visits ahead of its own an object's class is asked to prefetch what its trace
/// will read ([`Trace::prefetch`](crate::Trace::prefetch)): its cell, prefetched when it
/// was claimed, has had `RING - AHEAD` visits to arrive.
const AHEAD: usize = 8;

#[derive(Default)]
struct Ring {
    items: [u32; RING],
    head: usize,
    len: usize,
}

impl Ring {
    #[inline]
    fn push(&mut self, index: u32) {
        debug_assert!(self.len < RING, "ring overfilled");
        self.items[(self.head + self.len) % RING] = index;
        self.len += 1;
    }

    /// The entry `k` places after the next one to pop.
    #[inline]
    fn peek(&self, k: usize) -> Option<u32> {
        (k < self.len).then(|| self.items[(self.head + k) % RING])
    }

    #[inline]
    fn pop(&mut self) -> Option<u32> {
        if self.len == 0 {
            return None;
        }
        let index = self.items[self.head];
        self.head = (self.head + 1) % RING;
        self.len -= 1;
        Some(index)
    }
}

/// What every marking task shares: read-only views of the table, the class records (for
/// their collector entries) and the clusters.
pub(crate) struct Marker<'a> {
    pub(crate) table: &'a ObjectTable,
    pub(crate) classes: CollectorEntries<'a>,
    pub(crate) clusters: &'a Clusters,
    pub(crate) exclusive: bool,
    /// Frontier entries may name objects that ended (or were pooled, or marked as garbage)
    /// since they were claimed: an incremental mark's, across the game's frames. A visit
    /// then checks the slot first. A mark run whole holds the arena throughout and never
    /// needs to.
    pub(crate) checked: bool,
}

/// Flags of a slot whose object a visit must not read, or need not: any lifecycle state but
/// `Live` (no object, one kept by a pool or being built, or one whose references keep
/// nothing: garbage, gathered, being destroyed), or a permanent object (never scanned).
pub(crate) const UNVISITABLE: ObjectFlags = ObjectFlags::LIFECYCLE.union(ObjectFlags::PERMANENT);

/// What [`Marker::drain_until`] did.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Drained {
    /// Objects whose class's `trace` ran.
    pub(crate) traced: usize,
    /// Objects visited (traced, or kept by their flag alone and followed to an owner or a
    /// cluster).
    pub(crate) visited: usize,
    /// Seeds taken: the rest of the seeds are untouched.
    pub(crate) taken: usize,
}

impl Marker<'_> {
    /// Traces from `seeds` (already claimed) depth-first until the local stack is empty or
    /// `budget` objects are scanned; whatever is left goes to `next`. Returns the number of
    /// objects scanned (their class's `trace` called).
    pub(crate) fn drain(&self, seeds: &[AtomicU32], next: &Frontier<'_>, budget: usize) -> usize {
        let drained = self.drain_until(seeds, next, |d| d.traced >= budget);
        spill_seeds(&seeds[drained.taken..], next);
        drained.traced
    }

    /// Traces from `seeds` (already claimed) depth-first until the local stack is empty and
    /// the seeds are all taken, or `stop` (asked after each visit) says so; the objects
    /// claimed and not yet visited then go to `next`, and the seeds not yet taken stay
    /// where they are ([`Drained::taken`] says how many were).
    pub(crate) fn drain_until(
        &self,
        seeds: &[AtomicU32],
        next: &Frontier<'_>,
        mut stop: impl FnMut(&Drained) -> bool,
    ) -> Drained {
        let mut stack = LocalStack::new();
        let mut tracer = Tracer::claiming(self.table, self.classes, &mut stack, next, self.exclusive);
        // Objects leave the stack through a short FIFO, so the prefetch issued when each
        // was claimed has a few visits' time to land before the object is read.
        let mut ring = Ring::default();
        let mut done = Drained::default();
        loop {
            while ring.len < RING {
                if let Some(index) = tracer.stack.pop() {
                    ring.push(index);
                } else if let Some(seed) = seeds.get(done.taken) {
                    done.taken += 1;
                    let index = seed.load(Ordering::Relaxed);
                    // Seeds are indices of set-up slots (phase 2 or a spill): their cells exist.
                    if let Some(cell) = self.table.cell(index) {
                        prefetch(cell.as_ptr());
                    }
                    ring.push(index);
                } else {
                    break;
                }
            }
            let Some(index) = ring.pop() else { return done };
            if let Some(ahead) = ring.peek(AHEAD - 1) {
                self.prefetch_for(ahead, &mut tracer);
            }
            done.traced += usize::from(self.visit(index, &mut tracer));
            done.visited += 1;
            if stop(&done) {
                while let Some(index) = ring.pop() {
                    next.push(&[index]);
                }
                next.push(tracer.stack.as_slice());
                return done;
            }
        }
    }

    /// Asks the class of the claimed object in slot `index` to start loading what its
    /// trace will read (a vector's buffer, the slots of its handles).
    #[inline]
    fn prefetch_for(&self, index: u32, tracer: &mut Tracer<'_>) {
        // SAFETY: only indices of handed-out slots are ever claimed.
        let slot = unsafe { self.table.slot_unchecked(index) };
        if self.checked && slot.flags().intersects(UNVISITABLE) {
            return;
        }
        let Some(trace) = self.classes.get(usize::from(slot.class())).and_then(CollectorEntry::trace) else {
            return;
        };
        let Some(cell) = self.table.cell(index) else { return };
        // SAFETY: as in `visit`: a live object of this class, which nobody mutates during
        // the mark.
        unsafe { call_prefetch(trace, cell.as_ptr(), tracer) };
    }

    /// Traces one claimed object: its owner (an implicit reference, as UE's Outer), its
    /// cluster, and the handles its class's `trace` reports. Returns whether `trace` ran.
    #[inline]
    pub(crate) fn visit(&self, index: u32, tracer: &mut Tracer<'_>) -> bool {
        // SAFETY: only indices of handed-out slots are ever claimed.
        let slot = unsafe { self.table.slot_unchecked(index) };
        if self.checked && slot.flags().intersects(UNVISITABLE) {
            // Ended, pooled or marked as garbage since it was claimed: nothing to follow
            // (and, for an ended object, nothing to read).
            return false;
        }
        if let Some(outer) = slot.outer() {
            tracer.claim_index(outer);
        }
        // A class the collector does not know may have cluster members, and has no trace.
        let (clustered, trace) = match self.classes.get(usize::from(slot.class())) {
            Some(class) => (class.clustered(), class.trace()),
            None => (true, None),
        };
        if clustered {
            if let Some(cluster) = self.clusters.cluster_of(index, slot) {
                self.clusters.reach(cluster, tracer);
            }
        }
        let Some(trace) = trace else { return false };
        // SAFETY: the slot is live (it was claimed this collection, and nothing is released
        // during a mark run whole; an incremental mark checked it just now, and holds the
        // arena for the slice) and of this class; `trace` reads the object only, and every
        // class's objects are `Sync`.
        let cell = self.table.cell(index).expect("a claimed object has a cell");
        // SAFETY: as above.
        unsafe { call_trace(trace, cell.as_ptr(), tracer) };
        true
    }
}

impl Marker<'_> {
    /// Lets `report` claim what it holds, as roots: a [`Tracer`] whose claims go into
    /// `frontier` (the roots' frontier, before phase 3 traces it). Run on one thread, after
    /// phase 2 and before phase 3, when nothing else claims: plain claims suffice. (The
    /// incremental mark also runs its re-traces through it: `report` may visit objects.)
    pub(crate) fn report_roots(&self, frontier: &Frontier<'_>, report: impl FnOnce(&mut Tracer<'_>)) {
        let mut stack = LocalStack::new();
        let mut tracer = Tracer::claiming(self.table, self.classes, &mut stack, frontier, true);
        report(&mut tracer);
        frontier.push(tracer.stack.as_slice());
    }
}

/// What phase 2 keeps besides roots and pooled or permanent objects: the objects carrying a
/// keep flag, and those of owned classes.
#[derive(Clone, Copy)]
pub(crate) struct Keep<'a> {
    pub(crate) classes: CollectorEntries<'a>,
    pub(crate) flags: ObjectFlags,
}

impl Keep<'_> {
    /// Whether the class with this index is [`Lifetime::Owned`](crate::Lifetime::Owned).
    #[inline]
    pub(crate) fn owned(self, class: u16) -> bool {
        self.classes.get(usize::from(class)).is_some_and(CollectorEntry::owned)
    }
}

fn spill_seeds(seeds: &[AtomicU32], next: &Frontier<'_>) {
    let mut buf = [0u32; 256];
    for run in seeds.chunks(buf.len()) {
        for (b, s) in buf.iter_mut().zip(run) {
            *b = s.load(Ordering::Relaxed);
        }
        next.push(&buf[..run.len()]);
    }
}
