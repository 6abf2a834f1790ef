//! The hand-off of slabs between the preparation thread and the allocating caller.
//!
//! ```text
//!   reservation:  [ taken | taken | prepared | prepared | carving… | uncarved … ]
//!                                                       ^ carved (cursor)
//!   worker:  carve → prepare (touch pages) → publish ──┐
//!                                                      ▼
//!   caller:  take ◄──────────────── prepared (FIFO, behind a lock)
//!            └─ nothing prepared? carve → prepare inline (counted) → use
//! ```
//!
//! A slab index is handed out exactly once: the cursor's `fetch_update` gives each carver a
//! distinct index, and a published index leaves the queue exactly once. The queue's lock is
//! the happens-before edge that makes the worker's page writes visible to the taker. The
//! lock is taken once per slab (hundreds or thousands of cells), never per cell.
//! The loom model `slab_handoff_between_worker_and_caller` below checks these claims under
//! every interleaving loom explores (`scripts/loom.sh`).

use std::collections::VecDeque;

use crate::sync::{spin_wait, AtomicU32, Mutex, Ordering};

/// How a caller came by its slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Acquired {
    /// Taken ready from the prepared queue.
    Prepared(u32),
    /// Nothing was prepared: the caller carved and prepared this slab itself.
    Inline(u32),
    /// The reservation is used up and nothing is in flight.
    Exhausted,
}

/// The per-class slab cursor and prepared queue.
#[derive(Debug)]
pub struct SlabLedger {
    /// Next slab index to carve; never exceeds `max`.
    carved: AtomicU32,
    /// Slabs carved by the worker but not yet published.
    in_flight: AtomicU32,
    /// Slabs in the reservation.
    max: u32,
    /// Prepared slabs in publication order.
    prepared: Mutex<VecDeque<u32>>,
    /// Slabs to prepare beyond the spare count (asked for by `reserve`).
    wanted: AtomicU32,
}

impl SlabLedger {
    /// A ledger over `max` slabs, none carved.
    pub fn new(max: u32, spare: u32) -> Self {
        Self {
            carved: AtomicU32::new(0),
            in_flight: AtomicU32::new(0),
            max,
            prepared: Mutex::new(VecDeque::with_capacity(spare as usize * 2 + 2)),
            wanted: AtomicU32::new(0),
        }
    }

    /// Slabs carved so far (prepared, in flight or taken).
    pub fn carved(&self) -> u32 {
        self.carved.load(Ordering::Acquire)
    }

    /// Slabs prepared and waiting to be taken.
    pub fn prepared_len(&self) -> u32 {
        self.prepared.lock().len() as u32
    }

    /// Slabs asked for by `reserve` and not yet taken.
    pub fn wanted(&self) -> u32 {
        self.wanted.load(Ordering::Relaxed)
    }

    /// Slabs still uncarved.
    pub fn remaining(&self) -> u32 {
        self.max - self.carved()
    }

    /// Asks for `slabs` more to be prepared beyond the spares.
    pub fn want(&self, slabs: u32) {
        self.wanted.fetch_add(slabs, Ordering::Relaxed);
    }

    /// Asks for at least `slabs` prepared beyond the spares, counting what was asked for
    /// and not taken yet. Returns whether that raised the ask.
    pub fn want_at_least(&self, slabs: u32) -> bool {
        self.wanted.fetch_max(slabs, Ordering::Relaxed) < slabs
    }

    fn carve(&self) -> Option<u32> {
        self.carved.fetch_update(Ordering::AcqRel, Ordering::Acquire, |c| (c < self.max).then_some(c + 1)).ok()
    }

    /// Worker side: carves one slab for preparation, or `None` if the reservation is used up.
    /// Every `Some` must be followed by [`publish`](Self::publish).
    pub fn carve_for_worker(&self) -> Option<u32> {
        // Counted before the carve, so a caller that sees the cursor at `max` and
        // `in_flight == 0` knows that no slab is still on its way to the queue.
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let slab = self.carve();
        if slab.is_none() {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        slab
    }

    /// Worker side: makes a prepared slab available to callers.
    pub fn publish(&self, slab: u32) {
        self.prepared.lock().push_back(slab);
        self.in_flight.fetch_sub(1, Ordering::AcqRel);
    }

    /// Caller side: a prepared slab, or else one carved and prepared by `prepare` on this
    /// thread. Waits only in one case: the reservation is carved to the end but the worker
    /// still has a slab in flight.
    pub fn acquire(&self, prepare: impl FnOnce(u32)) -> Acquired {
        loop {
            let mut prepared = self.prepared.lock();
            if let Some(slab) = prepared.pop_front() {
                // Saturating: `reserve`'s extra target decays as its slabs are used. Under the
                // lock, so a worker that sees the queue one shorter also sees the target one
                // lower, and never prepares a slab beyond it.
                let _ = self.wanted.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |w| w.checked_sub(1));
                return Acquired::Prepared(slab);
            }
            drop(prepared);
            if let Some(slab) = self.carve() {
                prepare(slab);
                return Acquired::Inline(slab);
            }
            if self.in_flight.load(Ordering::Acquire) == 0 && self.prepared.lock().is_empty() {
                return Acquired::Exhausted;
            }
            spin_wait();
        }
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use loom::cell::UnsafeCell;

    use super::{Acquired, SlabLedger};
    use crate::sync::{thread, Arc};

    /// The worker and a caller race for a two-slab reservation. Each slab's "pages" are a
    /// loom cell: loom reports a data race if both sides ever prepare the same slab, and the
    /// caller's read after `acquire` must see the preparation, whoever did it.
    #[test]
    fn slab_handoff_between_worker_and_caller() {
        loom::model(|| {
            let pages: Arc<[UnsafeCell<u8>; 2]> = Arc::new([UnsafeCell::new(0), UnsafeCell::new(0)]);
            let ledger = Arc::new(SlabLedger::new(2, 1));
            let prepare = |pages: &[UnsafeCell<u8>; 2], slab: u32| {
                // SAFETY: the ledger gives each slab index to exactly one preparer; loom
                // checks exactly that claim here.
                pages[slab as usize].with_mut(|p| unsafe { *p = 1 });
            };

            let worker = {
                let (ledger, pages) = (Arc::clone(&ledger), Arc::clone(&pages));
                thread::spawn(move || {
                    if let Some(slab) = ledger.carve_for_worker() {
                        prepare(&pages, slab);
                        ledger.publish(slab);
                    }
                })
            };

            let mut got = Vec::new();
            for _ in 0..2 {
                let slab = match ledger.acquire(|s| prepare(&pages, s)) {
                    Acquired::Prepared(s) | Acquired::Inline(s) => s,
                    Acquired::Exhausted => panic!("a two-slab reservation ran out after {} slabs", got.len()),
                };
                // SAFETY: the slab is ours now; the ledger's lock orders the preparer's write
                // before this read.
                let touched = pages[slab as usize].with(|p| unsafe { *p });
                assert_eq!(touched, 1, "slab {slab} handed out before it was prepared");
                got.push(slab);
            }
            assert_ne!(got[0], got[1], "one slab handed out twice");
            assert_eq!(ledger.acquire(|_| panic!("carved past the end")), Acquired::Exhausted);
            worker.join().unwrap();
        });
    }
}
