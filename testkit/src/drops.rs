//! A drop ledger: objects take a number from it when made and note it when dropped.
//!
//! The ledger's lock is std's, not parking_lot's: drops are noted by workers and the test
//! thread at once, and parking_lot's contended path casts integers to pointers, which Miri's
//! `-Zmiri-strict-provenance` refuses.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::thread::{self, ThreadId};

/// Which objects were made and how often, and on which thread, each was dropped. Clones
/// share one ledger.
#[derive(Clone, Debug, Default)]
pub struct Drops(Arc<Ledger>);

#[derive(Debug, Default)]
struct Ledger {
    /// Numbers handed out by [`Drops::make`]; the next is one more.
    made: AtomicUsize,
    noted: Mutex<Noted>,
}

#[derive(Debug, Default)]
struct Noted {
    /// Drops per object number.
    times: HashMap<usize, u32>,
    /// Every drop in the order noted, with its thread.
    log: Vec<(usize, ThreadId)>,
}

impl Drops {
    fn noted(&self) -> MutexGuard<'_, Noted> {
        // A test that panicked while holding the lock has failed already; go on counting.
        self.0.noted.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Numbers a new object: 1, 2, 3 … (never 0, so a zeroed object shows).
    pub fn make(&self) -> usize {
        self.0.made.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// How many objects [`make`](Self::make) numbered.
    pub fn made(&self) -> usize {
        self.0.made.load(Ordering::Relaxed)
    }

    /// Notes that object `id` was dropped, on the current thread (a test may name its
    /// objects itself instead of calling [`make`](Self::make)).
    pub fn note_drop(&self, id: usize) {
        let mut noted = self.noted();
        *noted.times.entry(id).or_default() += 1;
        noted.log.push((id, thread::current().id()));
    }

    /// How many times object `id` was dropped.
    pub fn times(&self, id: usize) -> u32 {
        self.noted().times.get(&id).copied().unwrap_or(0)
    }

    /// Whether object `id` was dropped.
    pub fn dropped(&self, id: usize) -> bool {
        self.noted().times.contains_key(&id)
    }

    /// Objects dropped so far, each counted once however often it dropped.
    pub fn count(&self) -> usize {
        self.noted().times.len()
    }

    /// Drops noted so far, repeats included.
    pub fn total(&self) -> usize {
        self.noted().log.len()
    }

    /// The numbers of the objects dropped, in the order of their drops, repeats included.
    pub fn ids(&self) -> Vec<usize> {
        self.noted().log.iter().map(|&(id, _)| id).collect()
    }

    /// Every drop, in order, with the thread it ran on.
    pub fn log(&self) -> Vec<(usize, ThreadId)> {
        self.noted().log.clone()
    }

    /// The threads the drops of `ids` ran on; panics if one dropped twice or never.
    pub fn threads(&self, ids: &[usize]) -> Vec<ThreadId> {
        let mut on: HashMap<usize, Vec<ThreadId>> = HashMap::new();
        for &(id, thread) in &self.noted().log {
            on.entry(id).or_default().push(thread);
        }
        ids.iter()
            .map(|id| match on.get(id).map(Vec::as_slice) {
                Some(&[thread]) => thread,
                other => panic!("object {id} dropped on {other:?}"),
            })
            .collect()
    }

    /// Every object [`make`](Self::make) numbered was dropped exactly once, and no other.
    #[track_caller]
    pub fn assert_each_once(&self) {
        let made = self.made();
        let noted = self.noted();
        for id in 1..=made {
            let times = noted.times.get(&id).copied().unwrap_or(0);
            assert_eq!(times, 1, "object {id} dropped {times} times");
        }
        assert_eq!(noted.times.len(), made, "drops of objects never made: made {made}, dropped {:?}", noted.times);
    }
}
