//! The reference counts of a [`Shared`](crate::Shared) object, kept in its cell beside the
//! object (UE's `MakeShared`: one allocation, here one pool cell):
//!
//! ```text
//!   cell:  [ value: T ........................ | strong: u32 | weak: u32 ]
//!            built by the pool's create()        set when the object becomes Shared
//! ```
//!
//! The counting follows `std::sync::Arc`: `weak` counts the `WeakShared`s plus one for all
//! the strong references together, so the cell goes back to the pool exactly once, by
//! whoever takes `weak` to zero:
//!
//! - the last strong reference to go ends the object's life in the world: with no
//!   `WeakShared` left it hands the object back whole (the pool's policy: reset, or drop and
//!   rebuild); otherwise it drops the object in place and gives up the strong side's weak;
//! - the last `WeakShared` to go, after that, hands the empty cell back.
//!
//! `upgrade` increments `strong` only from a non-zero value, so once the strong count has
//! reached zero nothing revives the object, and a `WeakShared` never reaches an object that
//! reused its cell: the cell is not reused while any `WeakShared` exists.
//!
//! How the counts are updated is the pointer's [`Mode`]: atomic read-modify-writes
//! ([`ThreadSafe`]), or a plain load and store ([`NotThreadSafe`], for pointers that never
//! leave their thread), as UE's `ESPMode` chooses. The loom model `last_strong_and_last_weak`
//! below checks the thread-safe protocol.

use std::marker::PhantomData;

use crate::sync::{fence, AtomicU32, Ordering};

/// The counts in a shared object's cell.
#[derive(Debug)]
pub(crate) struct Counts {
    strong: AtomicU32,
    weak: AtomicU32,
}

/// What dropping a strong reference leaves the caller to do.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum StrongDropped {
    /// Other strong references remain.
    Others,
    /// This was the last, and no `WeakShared` exists: the caller owns the object and its
    /// cell alone (hand both back to the pool).
    Alone,
    /// This was the last, but `WeakShared`s exist: the caller must drop the object in place
    /// and then call [`Counts::drop_weak`] for the strong side's weak.
    Watched,
}

/// UE's `ESPMode`: how a [`Shared`](crate::Shared)'s counts are updated. Sealed: the two
/// modes are [`ThreadSafe`] and [`NotThreadSafe`].
pub trait Mode: sealed::Sealed + 'static {
    #[doc(hidden)]
    /// `count + 1`; returns the old value.
    fn increment(count: &AtomicU32) -> u32;
    #[doc(hidden)]
    /// `count - 1`; returns the old value (Release in the thread-safe mode).
    fn decrement(count: &AtomicU32) -> u32;
    #[doc(hidden)]
    /// `count + 1` unless it is 0; whether it was incremented.
    fn increment_from_nonzero(count: &AtomicU32) -> bool;
    #[doc(hidden)]
    /// After a decrement reached zero: see every other holder's accesses (Acquire).
    fn acquire();
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for super::ThreadSafe {}
    impl Sealed for super::NotThreadSafe {}
}

/// Atomic counts: [`Shared`](crate::Shared) is `Send + Sync` when `T` is (UE's
/// `ESPMode::ThreadSafe`, and `std::sync::Arc`).
#[derive(Debug)]
pub enum ThreadSafe {}

/// Plain counts, for pointers that stay on one thread: [`Shared`](crate::Shared) is neither
/// `Send` nor `Sync` (UE's `ESPMode::NotThreadSafe`, and `std::rc::Rc`). The cell still comes
/// from the (thread-safe) pool, and goes back to it.
#[derive(Debug)]
pub struct NotThreadSafe {
    _not_send: PhantomData<*const ()>,
}

/// A count above this is refused (a leak of `Shared` clones), as `Arc` aborts at
/// `isize::MAX`: far below `u32::MAX`, so racing increments cannot wrap it first.
const MAX_COUNT: u32 = u32::MAX / 2;

#[cold]
#[inline(never)]
fn too_many() -> ! {
    // Unwinding with the count past the limit would leave it there; `Arc` aborts too.
    eprintln!("respawn: a Shared object's reference count passed {MAX_COUNT}; aborting");
    std::process::abort()
}

impl Mode for ThreadSafe {
    #[inline]
    fn increment(count: &AtomicU32) -> u32 {
        // Relaxed, as `Arc::clone`: a new reference is made from an existing one, whose
        // holder already sees the object.
        let old = count.fetch_add(1, Ordering::Relaxed);
        if old > MAX_COUNT {
            too_many();
        }
        old
    }

    #[inline]
    fn decrement(count: &AtomicU32) -> u32 {
        // Release: this holder's uses of the object happen before whoever ends it.
        count.fetch_sub(1, Ordering::Release)
    }

    #[inline]
    fn increment_from_nonzero(count: &AtomicU32) -> bool {
        let mut n = count.load(Ordering::Relaxed);
        loop {
            if n == 0 {
                return false;
            }
            if n > MAX_COUNT {
                too_many();
            }
            // Acquire on success: the object as the strong holders left it is visible.
            match count.compare_exchange_weak(n, n + 1, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(seen) => n = seen,
            }
        }
    }

    #[inline]
    fn acquire() {
        fence(Ordering::Acquire);
    }
}

impl Mode for NotThreadSafe {
    #[inline]
    fn increment(count: &AtomicU32) -> u32 {
        // One thread only: a plain load and store (no read-modify-write).
        let old = count.load(Ordering::Relaxed);
        if old > MAX_COUNT {
            too_many();
        }
        count.store(old + 1, Ordering::Relaxed);
        old
    }

    #[inline]
    fn decrement(count: &AtomicU32) -> u32 {
        let old = count.load(Ordering::Relaxed);
        count.store(old - 1, Ordering::Relaxed);
        old
    }

    #[inline]
    fn increment_from_nonzero(count: &AtomicU32) -> bool {
        let n = count.load(Ordering::Relaxed);
        if n == 0 {
            return false;
        }
        if n > MAX_COUNT {
            too_many();
        }
        count.store(n + 1, Ordering::Relaxed);
        true
    }

    #[inline]
    fn acquire() {}
}

impl Counts {
    /// Counts for a new shared object: `strong` references (1, or 0 while the cyclic
    /// constructor runs) and the strong side's weak one. Written into the cell by its owner,
    /// and published with the pointer.
    pub(crate) fn new(strong: u32) -> Self {
        Self { strong: AtomicU32::new(strong), weak: AtomicU32::new(1) }
    }

    /// Sets the strong count of an object made with [`new(0)`](Self::new) (the cyclic
    /// constructor) once it is ready: Release, so an `upgrade` that sees it sees the object.
    pub(crate) fn publish(&self) {
        self.strong.store(1, Ordering::Release);
    }

    pub(crate) fn strong(&self) -> u32 {
        self.strong.load(Ordering::Relaxed)
    }

    /// `WeakShared`s, without the strong side's one.
    pub(crate) fn weak(&self) -> u32 {
        let weak = self.weak.load(Ordering::Relaxed);
        if self.strong.load(Ordering::Relaxed) > 0 {
            weak.saturating_sub(1)
        } else {
            weak
        }
    }

    #[inline]
    pub(crate) fn clone_strong<M: Mode>(&self) {
        M::increment(&self.strong);
    }

    #[inline]
    pub(crate) fn clone_weak<M: Mode>(&self) {
        M::increment(&self.weak);
    }

    /// A new strong reference from a weak one, if the object is still alive (UE's `Pin`).
    #[inline]
    pub(crate) fn upgrade<M: Mode>(&self) -> bool {
        M::increment_from_nonzero(&self.strong)
    }

    #[inline]
    pub(crate) fn drop_strong<M: Mode>(&self) -> StrongDropped {
        if M::decrement(&self.strong) != 1 {
            return StrongDropped::Others;
        }
        M::acquire();
        // With the strong count at zero no new `WeakShared` can appear (`downgrade` needs a
        // strong reference, and cloning one needs one to exist), so `weak == 1` (ours
        // alone) cannot change under us. Acquire: see the last `WeakShared`'s release.
        if self.weak.load(Ordering::Acquire) == 1 {
            StrongDropped::Alone
        } else {
            StrongDropped::Watched
        }
    }

    /// Drops a weak count; `true` when it was the last, and the cell is the caller's.
    #[inline]
    pub(crate) fn drop_weak<M: Mode>(&self) -> bool {
        if M::decrement(&self.weak) != 1 {
            return false;
        }
        M::acquire();
        true
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use loom::cell::UnsafeCell;

    use super::{Counts, StrongDropped, ThreadSafe};
    use respawn_allocator::sync::thread;

    use crate::sync::{Arc, AtomicUsize, Ordering};

    /// A shared object and its cell, as a pool hands them out: `value` is the object (a
    /// loom cell, so loom reports an access that races with its reset or reuse), `reused`
    /// counts the times the cell went back to the pool.
    struct Cell {
        value: UnsafeCell<u32>,
        counts: Counts,
        reused: AtomicUsize,
        dropped: AtomicUsize,
    }

    // SAFETY: `value` is shared on purpose; loom checks every access through it.
    unsafe impl Sync for Cell {}

    impl Cell {
        /// An object with one strong reference (and the strong side's weak count).
        fn new() -> Arc<Self> {
            Arc::new(Cell {
                value: UnsafeCell::new(7),
                counts: Counts::new(1),
                reused: AtomicUsize::new(0),
                dropped: AtomicUsize::new(0),
            })
        }

        fn end(&self) {
            // The pool's deleter: resets (writes) the object and reuses the cell.
            // SAFETY: loom checks this write is ordered after every other access.
            self.value.with_mut(|v| unsafe { *v = 0 });
            self.reused.fetch_add(1, Ordering::Relaxed);
        }

        fn drop_strong(&self) {
            match self.counts.drop_strong::<ThreadSafe>() {
                StrongDropped::Others => {}
                StrongDropped::Alone => self.end(),
                StrongDropped::Watched => {
                    // Drop the object in place (a write), then give up the strong side's weak.
                    // SAFETY: as in `end`.
                    self.value.with_mut(|v| unsafe { *v = 0 });
                    self.dropped.fetch_add(1, Ordering::Relaxed);
                    if self.counts.drop_weak::<ThreadSafe>() {
                        self.reused.fetch_add(1, Ordering::Relaxed);
                    }
                }
            }
        }

        fn drop_weak(&self) {
            if self.counts.drop_weak::<ThreadSafe>() {
                // The cell alone comes back: write it, as the pool's worker rebuilds it.
                // SAFETY: as in `end`.
                self.value.with_mut(|v| unsafe { *v = 0 });
                self.reused.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The last strong reference and the last weak one go on two threads while a third
    /// strong holder reads the object and a weak holder tries to upgrade and read it. The
    /// cell must go back exactly once, after every read (loom reports a write that races
    /// with a read), and an upgrade that succeeds must see the object whole.
    #[test]
    fn last_strong_and_last_weak() {
        loom::model(|| {
            let cell = Cell::new();
            cell.counts.clone_strong::<ThreadSafe>(); // a second strong holder
            cell.counts.clone_weak::<ThreadSafe>(); // a weak holder

            let strong = {
                let cell = Arc::clone(&cell);
                thread::spawn(move || {
                    // SAFETY: a strong holder reads the live object.
                    let v = cell.value.with(|v| unsafe { *v });
                    assert_eq!(v, 7);
                    cell.drop_strong();
                })
            };
            let weak = {
                let cell = Arc::clone(&cell);
                thread::spawn(move || {
                    if cell.counts.upgrade::<ThreadSafe>() {
                        // SAFETY: the upgrade made us a strong holder.
                        let v = cell.value.with(|v| unsafe { *v });
                        assert_eq!(v, 7, "an upgrade reached a reset object");
                        cell.drop_strong();
                    }
                    cell.drop_weak();
                })
            };
            cell.drop_strong();
            strong.join().unwrap();
            weak.join().unwrap();
            assert_eq!(cell.reused.load(Ordering::Relaxed), 1, "the cell went back other than once");
            assert_eq!(cell.counts.strong(), 0);
            assert!(cell.dropped.load(Ordering::Relaxed) <= 1);
        });
    }

    /// An upgrade racing the last strong drop with no other weak holder around the drop:
    /// either the upgrade wins (and the object lives on until it drops it) or it fails;
    /// the cell goes back once either way.
    #[test]
    fn upgrade_against_the_last_strong() {
        loom::model(|| {
            let cell = Cell::new();
            cell.counts.clone_weak::<ThreadSafe>();
            let other = {
                let cell = Arc::clone(&cell);
                thread::spawn(move || cell.drop_strong())
            };
            if cell.counts.upgrade::<ThreadSafe>() {
                // SAFETY: a strong holder now.
                assert_eq!(cell.value.with(|v| unsafe { *v }), 7);
                cell.drop_strong();
            }
            cell.drop_weak();
            other.join().unwrap();
            assert_eq!(cell.reused.load(Ordering::Relaxed), 1);
        });
    }
}
