//! The frontier: object indices handed from one marking round to the next, written by
//! many tasks at once. Kept apart from the rest of the mark so that loom can check it alone
//! (`scripts/loom.sh`): it needs nothing but the `sync` shim.

use respawn_allocator::sync::{AtomicU32, AtomicUsize, Ordering};

/// Object indices shared between tasks: a fixed buffer and an atomic cursor. Writers
/// reserve a run with one `fetch_add` and fill it; readers read after the round's join.
pub(crate) struct Frontier<'b> {
    items: &'b [AtomicU32],
    len: AtomicUsize,
}

impl<'b> Frontier<'b> {
    pub(crate) fn new(items: &'b [AtomicU32]) -> Self {
        Self::with_len(items, 0)
    }

    /// A frontier whose first `len` entries were written before (an incremental mark's,
    /// kept between its slices).
    pub(crate) fn with_len(items: &'b [AtomicU32], len: usize) -> Self {
        debug_assert!(len <= items.len(), "a frontier longer than its buffer");
        Self { items, len: AtomicUsize::new(len) }
    }

    /// Appends `indices`. Panics (never writes out of bounds) if the buffer is full, which
    /// the claim-once rule rules out.
    pub(crate) fn push(&self, indices: &[u32]) {
        if indices.is_empty() {
            return;
        }
        let at = self.len.fetch_add(indices.len(), Ordering::Relaxed);
        let run = &self.items[at..at + indices.len()];
        for (cell, &index) in run.iter().zip(indices) {
            cell.store(index, Ordering::Relaxed);
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.len.load(Ordering::Relaxed).min(self.items.len())
    }

    /// The entries written so far. Call between rounds (after the join that ends one).
    pub(crate) fn entries(&self) -> &'b [AtomicU32] {
        &self.items[..self.len()]
    }

    pub(crate) fn clear(&self) {
        self.len.store(0, Ordering::Relaxed);
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use respawn_allocator::sync::thread;

    /// Two tasks spill runs into one frontier at once: after the join, the frontier holds
    /// exactly the union of the runs — no entry lost, none written twice.
    #[test]
    fn loom_concurrent_spills_lose_nothing() {
        loom::model(|| {
            let items: Vec<AtomicU32> = (0..4).map(|_| AtomicU32::new(u32::MAX)).collect();
            let frontier: &'static Frontier<'static> = Box::leak(Box::new(Frontier::new(Box::leak(items.into()))));
            let a = thread::spawn(move || frontier.push(&[1, 2]));
            let b = thread::spawn(move || frontier.push(&[3]));
            frontier.push(&[4]);
            a.join().unwrap();
            b.join().unwrap();
            let mut got: Vec<u32> = frontier.entries().iter().map(|e| e.load(Ordering::Relaxed)).collect();
            got.sort_unstable();
            assert_eq!(got, [1, 2, 3, 4]);
        });
    }
}
