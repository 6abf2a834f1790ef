//! The one place that names the synchronisation primitives.
//!
//! Everything in respawn that needs an atomic, a lock or a thread imports it from here, so
//! that `RUSTFLAGS="--cfg loom"` swaps the whole crate over to [loom]'s checked versions
//! (`scripts/loom.sh`). Outside loom these are `std`'s atomics and `parking_lot`'s locks.
//!
//! [loom]: https://docs.rs/loom

#[cfg(not(loom))]
pub use std::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(not(loom))]
pub use std::sync::Arc;
#[cfg(not(loom))]
pub use std::thread;

#[cfg(loom)]
pub use loom::sync::atomic::{
    fence, AtomicBool, AtomicPtr, AtomicU16, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering,
};
#[cfg(loom)]
pub use loom::sync::Arc;
#[cfg(loom)]
pub use loom::thread;

/// A mutual-exclusion lock: `parking_lot::Mutex`, or loom's under `cfg(loom)`.
///
/// The two have different `lock` signatures (loom's returns a `LockResult`), so the shim
/// wraps both behind one `lock()` that returns the guard.
#[derive(Debug, Default)]
pub struct Mutex<T> {
    #[cfg(not(any(loom, miri)))]
    inner: parking_lot::Mutex<T>,
    #[cfg(all(miri, not(loom)))]
    inner: std::sync::Mutex<T>,
    #[cfg(loom)]
    inner: loom::sync::Mutex<T>,
}

/// The guard returned by [`Mutex::lock`].
#[cfg(not(any(loom, miri)))]
pub type MutexGuard<'a, T> = parking_lot::MutexGuard<'a, T>;
/// The guard returned by [`Mutex::lock`].
#[cfg(all(miri, not(loom)))]
pub type MutexGuard<'a, T> = std::sync::MutexGuard<'a, T>;
/// The guard returned by [`Mutex::lock`].
#[cfg(loom)]
pub type MutexGuard<'a, T> = loom::sync::MutexGuard<'a, T>;

impl<T> Mutex<T> {
    /// A new unlocked mutex holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            #[cfg(not(any(loom, miri)))]
            inner: parking_lot::Mutex::new(value),
            #[cfg(all(miri, not(loom)))]
            inner: std::sync::Mutex::new(value),
            #[cfg(loom)]
            inner: loom::sync::Mutex::new(value),
        }
    }

    /// Blocks until the lock is held.
    pub fn lock(&self) -> MutexGuard<'_, T> {
        #[cfg(not(any(loom, miri)))]
        {
            self.inner.lock()
        }
        // A poisoned lock only means another thread panicked while holding it; the data
        // under these locks stays consistent at every unlock, so carry on.
        #[cfg(all(miri, not(loom)))]
        {
            self.inner.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        #[cfg(loom)]
        {
            // A poisoned loom mutex means a model thread panicked: the model has failed anyway.
            self.inner.lock().expect("loom mutex poisoned")
        }
    }

    /// The lock if it is free now, else `None` (poisoning ignored, as in [`lock`](Self::lock)).
    /// A thread that only ever takes a lock this way never waits in the lock's queue, so an
    /// unlock never hands the lock to it while it is not running (`parking_lot`'s fair
    /// unlock hands a contended lock straight to a parked waiter).
    pub fn try_lock(&self) -> Option<MutexGuard<'_, T>> {
        #[cfg(not(any(loom, miri)))]
        {
            self.inner.try_lock()
        }
        #[cfg(all(miri, not(loom)))]
        {
            match self.inner.try_lock() {
                Ok(guard) => Some(guard),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        }
        #[cfg(loom)]
        {
            self.inner.try_lock().ok()
        }
    }
}

/// A reader-writer lock: `parking_lot::RwLock`, std's under Miri, loom's under `cfg(loom)`,
/// behind one `read`/`write`/`try_write` signature (as [`Mutex`]).
#[derive(Debug, Default)]
pub struct RwLock<T> {
    #[cfg(not(any(loom, miri)))]
    inner: parking_lot::RwLock<T>,
    #[cfg(all(miri, not(loom)))]
    inner: std::sync::RwLock<T>,
    #[cfg(loom)]
    inner: loom::sync::RwLock<T>,
}

/// The shared guard returned by [`RwLock::read`].
#[cfg(not(any(loom, miri)))]
pub type RwLockReadGuard<'a, T> = parking_lot::RwLockReadGuard<'a, T>;
/// The shared guard returned by [`RwLock::read`].
#[cfg(all(miri, not(loom)))]
pub type RwLockReadGuard<'a, T> = std::sync::RwLockReadGuard<'a, T>;
/// The shared guard returned by [`RwLock::read`].
#[cfg(loom)]
pub type RwLockReadGuard<'a, T> = loom::sync::RwLockReadGuard<'a, T>;

/// The exclusive guard returned by [`RwLock::write`].
#[cfg(not(any(loom, miri)))]
pub type RwLockWriteGuard<'a, T> = parking_lot::RwLockWriteGuard<'a, T>;
/// The exclusive guard returned by [`RwLock::write`].
#[cfg(all(miri, not(loom)))]
pub type RwLockWriteGuard<'a, T> = std::sync::RwLockWriteGuard<'a, T>;
/// The exclusive guard returned by [`RwLock::write`].
#[cfg(loom)]
pub type RwLockWriteGuard<'a, T> = loom::sync::RwLockWriteGuard<'a, T>;

impl<T> RwLock<T> {
    /// A new unlocked lock holding `value`.
    pub fn new(value: T) -> Self {
        Self {
            #[cfg(not(any(loom, miri)))]
            inner: parking_lot::RwLock::new(value),
            #[cfg(all(miri, not(loom)))]
            inner: std::sync::RwLock::new(value),
            #[cfg(loom)]
            inner: loom::sync::RwLock::new(value),
        }
    }

    /// Blocks until a shared hold is granted. Poisoning is ignored, as in [`Mutex::lock`].
    pub fn read(&self) -> RwLockReadGuard<'_, T> {
        #[cfg(not(any(loom, miri)))]
        {
            self.inner.read()
        }
        #[cfg(all(miri, not(loom)))]
        {
            self.inner.read().unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        #[cfg(loom)]
        {
            self.inner.read().expect("loom rwlock poisoned")
        }
    }

    /// Blocks until the exclusive hold is granted.
    pub fn write(&self) -> RwLockWriteGuard<'_, T> {
        #[cfg(not(any(loom, miri)))]
        {
            self.inner.write()
        }
        #[cfg(all(miri, not(loom)))]
        {
            self.inner.write().unwrap_or_else(std::sync::PoisonError::into_inner)
        }
        #[cfg(loom)]
        {
            self.inner.write().expect("loom rwlock poisoned")
        }
    }

    /// The exclusive hold if it is free now, else `None`.
    pub fn try_write(&self) -> Option<RwLockWriteGuard<'_, T>> {
        #[cfg(not(any(loom, miri)))]
        {
            self.inner.try_write()
        }
        #[cfg(all(miri, not(loom)))]
        {
            match self.inner.try_write() {
                Ok(guard) => Some(guard),
                Err(std::sync::TryLockError::Poisoned(p)) => Some(p.into_inner()),
                Err(std::sync::TryLockError::WouldBlock) => None,
            }
        }
        #[cfg(loom)]
        {
            self.inner.try_write().ok()
        }
    }
}

/// A condition variable for [`Mutex`]: `parking_lot`'s, std's under Miri, loom's under
/// `cfg(loom)`.
#[derive(Debug, Default)]
pub struct Condvar {
    #[cfg(not(any(loom, miri)))]
    inner: parking_lot::Condvar,
    #[cfg(all(miri, not(loom)))]
    inner: std::sync::Condvar,
    #[cfg(loom)]
    inner: loom::sync::Condvar,
}

impl Condvar {
    /// A condition variable nobody waits on.
    pub fn new() -> Self {
        Self {
            #[cfg(not(any(loom, miri)))]
            inner: parking_lot::Condvar::new(),
            #[cfg(all(miri, not(loom)))]
            inner: std::sync::Condvar::new(),
            #[cfg(loom)]
            inner: loom::sync::Condvar::new(),
        }
    }

    /// Releases `guard`'s lock, waits for a notification or `timeout`, and locks again.
    ///
    /// Under loom the timeout is ignored: the thread waits for a notification only, so a
    /// wake-up the protocol loses shows up as a deadlock in the model instead of being
    /// covered by the timeout.
    pub fn wait_for<'a, T>(&self, guard: MutexGuard<'a, T>, timeout: std::time::Duration) -> MutexGuard<'a, T> {
        #[cfg(not(any(loom, miri)))]
        {
            let mut guard = guard;
            self.inner.wait_for(&mut guard, timeout);
            guard
        }
        #[cfg(all(miri, not(loom)))]
        {
            match self.inner.wait_timeout(guard, timeout) {
                Ok((guard, _)) => guard,
                Err(poisoned) => poisoned.into_inner().0,
            }
        }
        #[cfg(loom)]
        {
            let _ = timeout;
            self.inner.wait(guard).expect("loom mutex poisoned")
        }
    }

    /// Wakes every waiting thread.
    pub fn notify_all(&self) {
        self.inner.notify_all();
    }
}

/// Blocks the calling thread until its park token is made available
/// ([`thread::Thread::unpark`]) or `timeout` passes, as `std::thread::park_timeout`; it may
/// also return spuriously, so callers re-check their condition in a loop. A token made
/// available before the call makes it return at once: an unpark is never lost.
///
/// Under loom the timeout is ignored (loom has no clock, and no `park_timeout`): the thread
/// parks until it is unparked, so a wake-up the protocol loses shows up as a deadlock in the
/// model instead of being covered by the timeout.
pub fn park_timeout(timeout: std::time::Duration) {
    #[cfg(not(loom))]
    std::thread::park_timeout(timeout);
    #[cfg(loom)]
    {
        let _ = timeout;
        loom::thread::park();
    }
}

/// Sleeps a little: `thread::sleep` outside loom, a yield to the model checker under it
/// (loom has no clock).
pub fn back_off(duration: std::time::Duration) {
    #[cfg(not(loom))]
    std::thread::sleep(duration);
    #[cfg(loom)]
    {
        let _ = duration;
        loom::thread::yield_now();
    }
}

/// Spins politely: a CPU hint outside loom, a yield to the model checker under it.
pub fn spin_wait() {
    #[cfg(not(loom))]
    std::hint::spin_loop();
    #[cfg(loom)]
    loom::thread::yield_now();
}

/// Starts a named background thread and returns once it is running.
///
/// A thread's own start-up allocates (std keeps a copy of its name for the stack-overflow
/// handler) and maps its signal stack. On a busy machine the scheduler can start a new
/// thread many milliseconds late, and that start-up would then land in the middle of the
/// caller's frames, where a warm pool promises no allocation. Waiting for it here keeps
/// the whole cost in the constructor that asked for the thread.
///
/// Always a `std` thread, under loom too: the long-lived background threads (slab
/// preparation, pool workers) are not part of any loom model; the models spawn their own.
///
/// # Errors
/// Whatever the OS reports when it cannot start a thread.
pub fn spawn_running<F>(name: String, f: F) -> std::io::Result<std::thread::JoinHandle<()>>
where
    F: FnOnce() + Send + 'static,
{
    let started = std::sync::Arc::new(std::sync::Barrier::new(2));
    let theirs = std::sync::Arc::clone(&started);
    let handle = std::thread::Builder::new().name(name).spawn(move || {
        theirs.wait();
        drop(theirs);
        f();
    })?;
    started.wait();
    Ok(handle)
}
