//! A value one thread owns at a time, passed between threads by an owner token: a
//! standalone pool's per-thread magazines ([`Pool`](crate::Pool)).
//!
//! The owner reaches the value with no atomic read-modify-write: one relaxed load tells it
//! the value is still its own. Three hand-overs change the owner, each by a compare-and-swap
//! on the token, so no two threads ever hold the value at once:
//!
//! | step | who | from → to |
//! |---|---|---|
//! | [`claim`](Owned::claim) | a thread the value was handed to (first use, or the entry of a thread that exited) | anyone's token or `FREE` → its own (waits out `BUSY`) |
//! | [`give_up`](Owned::give_up) | the owner, as it exits | its token → `BUSY` → `FREE` (nothing if it no longer owns it) |
//! | [`retire`](Owned::retire) | the value's last user (the pool's drop) | anyone's token or `FREE` → `BUSY` for good (waits out `BUSY`) |
//!
//! `claim` takes the value from a token that is not `FREE` only because the caller knows
//! that token's thread is gone or going: `thread_local` hands a thread's entry to a new
//! thread only after the old one exited, through a lock that orders the old thread's last
//! use before the new thread's first. The exiting thread's `give_up` may still run then
//! (thread-local destructors run in no set order): the compare-and-swap decides which of
//! the two gets the value, and the other waits (`claim`) or leaves it (`give_up`).

use crate::sync::{spin_wait, AtomicU64, Ordering};

#[cfg(not(loom))]
use std::cell::UnsafeCell;

#[cfg(loom)]
use loom::cell::UnsafeCell;

/// No thread owns the value: the next [`claim`](Owned::claim) takes it.
const FREE: u64 = 0;
/// A thread is handing the value back, or it is retired: wait.
const BUSY: u64 = u64::MAX;

/// A value of one owner thread at a time (see the [module](self)).
pub(crate) struct Owned<T> {
    owner: AtomicU64,
    value: UnsafeCell<T>,
}

// SAFETY: the value is reached only by its owner, one thread at a time (the owner token,
// changed by compare-and-swap; see the module), so sharing an `Owned` shares no `&T` or
// `&mut T` between threads: moving the value between threads needs `T: Send` alone.
unsafe impl<T: Send> Sync for Owned<T> {}

impl<T> Owned<T> {
    /// A value no thread owns yet.
    pub(crate) fn new(value: T) -> Self {
        Self { owner: AtomicU64::new(FREE), value: UnsafeCell::new(value) }
    }

    /// Whether the thread with token `me` owns the value: the owner's every access asks
    /// this first (one relaxed load: only the owner's own `claim` set it to `me`, and only
    /// the owner's own `give_up` or a `retire` with no owner left takes it away).
    #[inline(always)]
    pub(crate) fn is_owned_by(&self, me: u64) -> bool {
        self.owner.load(Ordering::Relaxed) == me
    }

    /// Makes the thread with token `me` the owner: waits while a thread hands it back, then
    /// takes it from nobody or from a thread that is gone (see the module). Returns whether
    /// it changed hands (`false`: `me` owned it already).
    ///
    /// # Safety
    /// Any other owner's thread has exited or is exiting: past its last use of the value,
    /// which happens before this call.
    #[cold]
    pub(crate) unsafe fn claim(&self, me: u64) -> bool {
        debug_assert!(me != FREE && me != BUSY, "a token names a thread");
        loop {
            let owner = self.owner.load(Ordering::Acquire);
            if owner == me {
                return false;
            }
            if owner == BUSY {
                spin_wait();
                continue;
            }
            // Acquire: a hand-back's writes (`give_up`'s Release) are seen before ours.
            if self.owner.compare_exchange(owner, me, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                return true;
            }
        }
    }

    /// Runs `f` on the value, for its owner.
    ///
    /// # Safety
    /// The calling thread owns the value ([`is_owned_by`](Self::is_owned_by) its token), and
    /// `f` does not reach this value again (no re-entry).
    #[inline(always)]
    pub(crate) unsafe fn with<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
        // SAFETY: the caller owns the value, and nothing else reaches it during `f`.
        with_mut(&self.value, |value| f(unsafe { &mut *value }))
    }

    /// Hands the value back as its owner (token `me`) exits: runs `f` on it alone, then
    /// leaves it to the next [`claim`](Self::claim). Returns whether `f` ran (`false`: `me`
    /// no longer owned it, because a claim or a retire took it).
    pub(crate) fn give_up(&self, me: u64, f: impl FnOnce(&mut T)) -> bool {
        if self.owner.compare_exchange(me, BUSY, Ordering::Acquire, Ordering::Relaxed).is_err() {
            return false;
        }
        // SAFETY: `BUSY` keeps every other thread away until the store below.
        unsafe { self.with(f) };
        // Release: the next claim sees what `f` wrote.
        self.owner.store(FREE, Ordering::Release);
        true
    }

    /// Takes the value for good (its last user: the pool's drop), waiting while a thread
    /// hands it back: runs `f` on it alone; no claim or hand-back reaches it afterwards.
    ///
    /// # Safety
    /// No thread uses the value any more but to hand it back ([`give_up`](Self::give_up)),
    /// and none will claim it.
    pub(crate) unsafe fn retire(&self, f: impl FnOnce(&mut T)) {
        loop {
            let owner = self.owner.load(Ordering::Acquire);
            if owner == BUSY {
                spin_wait();
                continue;
            }
            if self.owner.compare_exchange(owner, BUSY, Ordering::AcqRel, Ordering::Acquire).is_ok() {
                break;
            }
        }
        // SAFETY: `BUSY` for good: no hand-back or claim reaches the value again, and the
        // caller says no owner uses it.
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

    /// Thread 1 uses the value and exits; its hand-back races a new thread (2) that was
    /// given the value after thread 1's last use (as `thread_local` hands an exited
    /// thread's entry on). Whichever wins, nobody reaches the value at the same time as
    /// another (loom's cell checks), and every object is either handed back to the store
    /// or still in the value for thread 2: none lost, none counted twice.
    #[test]
    fn loom_a_hand_back_races_the_next_owner() {
        loom::model(|| {
            let objects: Arc<Objects> = Arc::new(Owned::new(Vec::new()));
            let store = Arc::new(Mutex::new(Vec::new()));
            let (o, s) = (Arc::clone(&objects), Arc::clone(&store));
            let first = thread::spawn(move || {
                // SAFETY: nobody owned it.
                assert!(unsafe { o.claim(1) });
                assert!(o.is_owned_by(1));
                // SAFETY: owned by this thread.
                unsafe { o.with(|v| v.extend([10, 11])) };
                // The last use: the new thread starts after it, then the exit's hand-back.
                let o2 = Arc::clone(&o);
                let next = thread::spawn(move || {
                    // SAFETY: thread 1 is past its last use.
                    unsafe { o2.claim(2) };
                    // SAFETY: owned now.
                    unsafe {
                        o2.with(|v| {
                            v.push(20);
                            v.len()
                        })
                    }
                });
                let handed = o.give_up(1, |v| s.lock().extend(v.drain(..)));
                (handed, next.join().unwrap())
            });
            let (handed, seen_by_next) = first.join().unwrap();
            assert!(objects.is_owned_by(2));
            let mut all: Vec<u32> = store.lock().clone();
            // SAFETY: both threads are done; nobody claims it again.
            unsafe { objects.retire(|v| all.extend(v.iter().copied())) };
            all.sort_unstable();
            assert_eq!(all, [10, 11, 20], "each object once");
            // Handed back first: the next owner found it empty; else it found thread 1's.
            assert_eq!(seen_by_next, if handed { 1 } else { 3 });
        });
    }

    /// The pool drops while a thread that used it exits: the retire waits out the
    /// hand-back, or the hand-back finds the value retired; each object is dropped once,
    /// by one of them.
    #[test]
    fn loom_a_retire_races_a_hand_back() {
        loom::model(|| {
            let objects: Arc<Objects> = Arc::new(Owned::new(Vec::new()));
            let store = Arc::new(Mutex::new(Vec::new()));
            let o = Arc::clone(&objects);
            thread::spawn(move || {
                // SAFETY: nobody owned it.
                unsafe { o.claim(1) };
                // SAFETY: owned by this thread.
                unsafe { o.with(|v| v.push(7)) };
            })
            .join()
            .unwrap();
            let (o, s) = (Arc::clone(&objects), Arc::clone(&store));
            let exiting = thread::spawn(move || o.give_up(1, |v| s.lock().extend(v.drain(..))));
            let mut dropped = Vec::new();
            // SAFETY: thread 1 only hands back now; nobody claims.
            unsafe { objects.retire(|v| dropped.append(v)) };
            let handed = exiting.join().unwrap();
            let mut all = store.lock().clone();
            all.extend(dropped);
            assert_eq!(all, [7], "once, by the hand-back ({handed}) or the retire");
        });
    }
}
