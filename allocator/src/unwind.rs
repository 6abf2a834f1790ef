//! Dropping many objects when a destructor may panic.

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};

/// Runs every destructor of a batch even if some of them panic, and re-raises the first
/// panic once the batch is done (when it is dropped).
///
/// A bulk drop — an arena dropping its objects, a pool dropping its ready ones at shutdown —
/// must not stop at the first destructor that panics: every object after it would leak,
/// and a pool's workers might never be joined. Each destructor runs under
/// [`run`](Self::run); the first panic is kept, the rest of the batch runs, and dropping
/// the `DropAll` re-raises it. If the thread is already unwinding (the batch runs inside
/// another panic's cleanup), the kept panic is dropped instead: a second panic out of a
/// destructor would abort the process.
///
/// ```
/// use respawn_allocator::DropAll;
///
/// let mut dropped = 0;
/// let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
///     let mut drops = DropAll::new();
///     for i in 0..3 {
///         drops.run(|| {
///             dropped += 1;
///             assert!(i != 1, "the second destructor panics");
///         });
///     }
/// }));
/// assert!(outcome.is_err());
/// assert_eq!(dropped, 3, "the third ran all the same");
/// ```
#[derive(Default)]
#[must_use = "a DropAll re-raises the first panic it caught when it is dropped: keep it for the whole batch"]
pub struct DropAll {
    first: Option<Box<dyn Any + Send>>,
}

impl DropAll {
    /// An empty batch.
    pub fn new() -> Self {
        Self::default()
    }

    /// Runs one destructor (or any clean-up step); a panic in it is kept, not propagated.
    pub fn run(&mut self, drop: impl FnOnce()) {
        if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(drop)) {
            self.first.get_or_insert(payload);
        }
    }

    /// Whether a step run so far panicked.
    pub fn panicked(&self) -> bool {
        self.first.is_some()
    }
}

impl Drop for DropAll {
    fn drop(&mut self) {
        if let Some(payload) = self.first.take() {
            if !std::thread::panicking() {
                panic::resume_unwind(payload);
            }
        }
    }
}

impl fmt::Debug for DropAll {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DropAll").field("panicked", &self.panicked()).finish()
    }
}
