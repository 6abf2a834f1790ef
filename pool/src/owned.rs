//! A value its thread uses freely, which two other steps may take at the end: a standalone
//! pool's per-thread magazines ([`Pool`](crate::Pool)).
//!
//! The thread the value belongs to reaches it with no atomic operation: nobody else touches
//! it while that thread uses the pool. Two steps may then meet, each on its own thread:
//!
//! | step | who | state |
//! |---|---|---|
//! | [`give_up`](Owned::give_up) | the value's thread, as it exits (its thread-local destructor) | `OPEN` → `BUSY` → `OPEN`; nothing once `RETIRED` |
//! | [`retire`](Owned::retire) | the pool's drop, when no thread uses the pool any more | `OPEN` → `RETIRED` for good (waits out `BUSY`) |
//!
//! A compare-and-swap on the state decides which goes first, and the other waits
//! (`retire`) or finds nothing to do (`give_up`): the value is never reached by both.

use crate::sync::{spin_wait, AtomicU32, Ordering};

#[cfg(not(loom))]
use std::cell::UnsafeCell;

#[cfg(loom)]
use loom::cell::UnsafeCell;

/// The value's thread uses it; a hand-back or the retire may take it.
const OPEN: u32 = 0;
/// Its thread is handing it back: the retire waits.
const BUSY: u32 = 1;
/// Taken for good by the retire.
const RETIRED: u32 = 2;

/// A value of one thread, handed back at its exit or retired (see the [module](self)).
pub(crate) struct Owned<T> {
    state: AtomicU32,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached by its thread while it uses it, then by at most one of
// `give_up` and `retire` at a time (the state's compare-and-swap); sharing an `Owned` shares
// no `&T` between threads at once: moving the value between threads needs `T: Send` alone.
unsafe impl<T: Send> Sync for Owned<T> {}

impl<T> Owned<T> {
    /// A value for the calling thread.
    pub(crate) fn new(value: T) -> Self {
        Self { state: AtomicU32::new(OPEN), value: UnsafeCell::new(value) }
    }

    /// Runs `f` on the value, for the thread it belongs to.
    ///
    /// # Safety
    /// The calling thread is the value's, it is not exiting (its `give_up` has not begun),
    /// the value is not retired, and `f` does not reach this value again (no re-entry).
    #[inline(always)]
    pub(crate) unsafe fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller's contract: nothing else reaches the value during `f`.
        with_mut(&self.value, |value| f(unsafe { &mut *value }))
    }

    /// Hands the value back as its thread exits: runs `f` on it alone, unless the value was
    /// retired first. Returns whether `f` ran.
    pub(crate) fn give_up(&self, f: impl FnOnce(&mut T)) -> bool {
        if self.state.compare_exchange(OPEN, BUSY, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return false;
        }
        // SAFETY: `BUSY` keeps the retire away until the store below, and the value's
        // thread is this one, exiting.
        unsafe { self.with(f) };
        // Release: a retire after this sees what `f` wrote.
        self.state.store(OPEN, Ordering::Release);
        true
    }

    /// Takes the value for good (the pool's drop), waiting while its thread hands it back:
    /// runs `f` on it alone; no hand-back reaches it afterwards.
    ///
    /// # Safety
    /// The value's thread no longer uses it but to hand it back ([`give_up`](Self::give_up)).
    pub(crate) unsafe fn retire(&self, f: impl FnOnce(&mut T)) {
        loop {
            match self.state.compare_exchange(OPEN, RETIRED, Ordering::Acquire, Ordering::Acquire) {
                Ok(_) => break,
                Err(BUSY) => spin_wait(),
                Err(_) => return, // retired already
            }
        }
        // SAFETY: `RETIRED` keeps every hand-back away, and the caller says the value's
        // thread no longer uses it otherwise.
        unsafe { self.with(f) };
    }
}

/// `f` with the cell's pointer (loom tracks the access for as long as `f` runs).
#[cfg(not(loom))]
#[inline(always)]
fn with_mut<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*mut T) -> R) -> R {
    f(cell.get())
}

#[cfg(loom)]
fn with_mut<T, R>(cell: &UnsafeCell<T>, f: impl FnOnce(*mut T) -> R) -> R {
    cell.with_mut(f)
}

#[cfg(all(test, loom))]
mod loom_model {
    use super::*;
    use crate::sync::{thread, Arc, Mutex};

    /// A thread's objects, handed back to a shared store as it exits.
    type Objects = Owned<Vec<u32>>;

    /// The pool drops while a thread that used it exits: the thread's last use happens
    /// before the drop begins (a guard borrows the pool), its hand-back runs at the same
    /// time as the retire. The retire waits out the hand-back, or the hand-back finds the
    /// value retired: nobody reaches the value at the same time as another (loom's cell
    /// checks), and each object goes once, to the store or to the retire's drop.
    #[test]
    fn loom_a_hand_back_during_the_retire() {
        loom::model(|| {
            let objects: Arc<Objects> = Arc::new(Owned::new(Vec::new()));
            let store = Arc::new(Mutex::new(Vec::new()));
            let o = Arc::clone(&objects);
            // The thread's use, over before the drop begins (a guard borrows the pool).
            let used = thread::spawn(move || {
                // SAFETY: this thread's value, not retired.
                unsafe { o.with(|v| v.push(7)) };
                o
            });
            let o = used.join().unwrap();
            // Its exit, racing the drop (the exit's hand-back stands on another model thread:
            // what matters is that it runs after the last use, at the same time as the retire).
            let s = Arc::clone(&store);
            let exiting = thread::spawn(move || o.give_up(|v| s.lock().append(v)));
            let mut dropped = Vec::new();
            // SAFETY: the thread only hands back now.
            unsafe { objects.retire(|v| dropped.append(v)) };
            let handed = exiting.join().unwrap();
            let mut all = store.lock().clone();
            all.extend(dropped);
            assert_eq!(all, [7], "once, by the hand-back ({handed}) or the retire");
            assert!(!objects.give_up(|_| unreachable!("retired")), "nothing after the retire");
        });
    }
}
