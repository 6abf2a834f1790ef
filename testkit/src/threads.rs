//! Holding worker threads at a gate, and waiting for them. No test depends on a clock's
//! speed: the workers are held by a gate and released by it, and a wait is bounded only so
//! that a hung test fails instead of hanging the run.

use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

/// How long a wait may take before the test fails.
const WAIT_LIMIT: Duration = Duration::from_secs(30);

/// Polls `done` until it holds; panics after 30 s, naming `what` it waited for.
#[track_caller]
pub fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < WAIT_LIMIT, "timed out waiting for {what}");
        thread::sleep(Duration::from_millis(1));
    }
}

/// [`wait_until`] the workers have done what `done` checks.
#[track_caller]
pub fn wait_for(done: impl FnMut() -> bool) {
    wait_until("the workers", done);
}

/// Holds a pool's workers in their `create` while shut; the thread that made it (the test's
/// game thread, whose misses build inline) always passes.
#[derive(Debug)]
pub struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    caller: ThreadId,
}

impl Gate {
    /// A gate, open or shut, that lets the current thread pass.
    pub fn new(open: bool) -> Arc<Self> {
        Arc::new(Self { open: Mutex::new(open), opened: Condvar::new(), caller: thread::current().id() })
    }

    /// Called in `create`: waits while the gate is shut, unless on the gate's own thread.
    pub fn pass(&self) {
        if thread::current().id() == self.caller {
            return;
        }
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        while !*open {
            open = self.opened.wait(open).unwrap_or_else(PoisonError::into_inner);
        }
    }

    /// Opens or shuts the gate.
    pub fn set(&self, open: bool) {
        *self.open.lock().unwrap_or_else(PoisonError::into_inner) = open;
        self.opened.notify_all();
    }

    /// A guard that opens the gate when dropped: declared after the pool or world, it lets
    /// the workers go before a failed assertion's unwinding joins them.
    pub fn opener(self: &Arc<Self>) -> OpenOnDrop {
        OpenOnDrop(Arc::clone(self))
    }
}

/// Opens its gate when dropped.
#[derive(Debug)]
pub struct OpenOnDrop(Arc<Gate>);

impl Drop for OpenOnDrop {
    fn drop(&mut self) {
        self.0.set(true);
    }
}
