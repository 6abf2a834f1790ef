//! The pool's synchronisation primitives: respawn-allocator's [shim](respawn_allocator::sync)
//! (loom's atomics, locks, threads and parking under `cfg(loom)`, std's locks under Miri) and the
//! bounded queue the workers and the game thread trade through.
//!
//! The queue is crossbeam's `ArrayQueue` except under loom, where a locked `VecDeque` with
//! the same methods stands in: crossbeam's queue is not built for loom, and what the pool's
//! protocol needs of it is exactly what a lock gives (a push happens before the pop that
//! takes the item; a full queue refuses the push). The models check the pool's protocol
//! around the queue, not the queue.
//!
//! Also the one OS call of the pool: its workers' lower priority ([`background_priority`]).

pub(crate) use respawn_allocator::sync::{
    back_off, fence, park_timeout, spin_wait, thread, Arc, AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Mutex,
    MutexGuard, Ordering,
};

#[cfg(not(loom))]
pub(crate) use crossbeam_queue::ArrayQueue;

#[cfg(loom)]
pub(crate) use model_queue::ArrayQueue;

/// Lowers the calling thread's priority below the game thread's (nice +10), as UE runs its
/// background work: when every core is busy, a precreation worker yields to the frame
/// instead of taking a whole scheduler slice from it. Idle cores still run it at full
/// speed. Best effort: a refusal leaves the priority as it was.
pub(crate) fn background_priority() {
    #[cfg(all(target_os = "linux", not(miri)))]
    {
        // SAFETY: `setpriority` takes plain integers and touches no memory of ours; on Linux
        // `who == 0` names the calling thread alone (each thread has its own nice value).
        let _ = unsafe { libc::setpriority(libc::PRIO_PROCESS, 0, 10) };
    }
}

#[cfg(loom)]
mod model_queue {
    use std::collections::VecDeque;

    use super::Mutex;

    /// `crossbeam_queue::ArrayQueue`'s methods over a locked `VecDeque`, for loom.
    #[derive(Debug)]
    pub(crate) struct ArrayQueue<T> {
        items: Mutex<VecDeque<T>>,
        capacity: usize,
    }

    impl<T> ArrayQueue<T> {
        pub(crate) fn new(capacity: usize) -> Self {
            assert!(capacity > 0, "capacity must be non-zero");
            Self { items: Mutex::new(VecDeque::with_capacity(capacity)), capacity }
        }
        pub(crate) fn push(&self, value: T) -> Result<(), T> {
            let mut items = self.items.lock();
            if items.len() == self.capacity {
                return Err(value);
            }
            items.push_back(value);
            Ok(())
        }
        pub(crate) fn pop(&self) -> Option<T> {
            self.items.lock().pop_front()
        }
        pub(crate) fn len(&self) -> usize {
            self.items.lock().len()
        }
        pub(crate) fn capacity(&self) -> usize {
            self.capacity
        }
        pub(crate) fn is_empty(&self) -> bool {
            self.items.lock().is_empty()
        }
    }
}
