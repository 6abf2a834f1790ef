//! The heap's own rayon pool: threads that are joined when the heap drops.

use std::fmt;
use std::thread::JoinHandle;

use respawn_allocator::sync::{Arc, Mutex};

use crate::GcError;

/// Where the heap's parallel work (the mark, `par_tick`) runs: rayon's global pool, whose
/// threads live until the process exits, or a pool of the heap's own
/// ([`GcSettings::threads`](crate::GcSettings::threads)), whose threads are joined when the
/// heap drops (or its settings change), so nothing of the heap outlives it.
pub(crate) struct Threads {
    pool: Option<Arc<rayon::ThreadPool>>,
    /// The pool's threads, spawned through rayon's spawn handler so that they can be
    /// joined: rayon's own `ThreadPool` only signals its threads to end.
    handles: Arc<Mutex<Vec<JoinHandle<()>>>>,
}

impl Threads {
    /// Rayon's global pool.
    pub(crate) fn global() -> Self {
        Self { pool: None, handles: Arc::new(Mutex::new(Vec::new())) }
    }

    /// `threads` of the heap's own, or the global pool for `None`.
    pub(crate) fn new(threads: Option<usize>) -> Result<Self, GcError> {
        let Some(n) = threads else { return Ok(Self::global()) };
        let handles = Arc::new(Mutex::new(Vec::new()));
        let spawned = Arc::clone(&handles);
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(n)
            .thread_name(|i| format!("respawn-gc #{i}"))
            .spawn_handler(move |thread| {
                let mut builder = std::thread::Builder::new();
                if let Some(name) = thread.name() {
                    builder = builder.name(name.to_owned());
                }
                if let Some(size) = thread.stack_size() {
                    builder = builder.stack_size(size);
                }
                spawned.lock().push(builder.spawn(|| thread.run())?);
                Ok(())
            })
            .build()
            .map_err(|_| GcError::Threads)?;
        Ok(Self { pool: Some(Arc::new(pool)), handles })
    }

    /// The heap's own pool, to `install` its parallel work in (so rayon's calls inside use
    /// it); `None` for the global pool.
    pub(crate) fn pool(&self) -> Option<Arc<rayon::ThreadPool>> {
        self.pool.clone()
    }

    /// Whether the heap has a pool of its own.
    pub(crate) fn is_owned(&self) -> bool {
        self.pool.is_some()
    }
}

impl Drop for Threads {
    fn drop(&mut self) {
        // Dropping the last handle to the pool tells its threads to end; joining them waits
        // until they have.
        drop(self.pool.take());
        for thread in std::mem::take(&mut *self.handles.lock()) {
            // A thread that panicked has nothing left to join.
            let _ = thread.join();
        }
    }
}

impl fmt::Debug for Threads {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Threads").field("owned", &self.is_owned()).finish()
    }
}
