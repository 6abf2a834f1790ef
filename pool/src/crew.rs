//! The workers' side every pool shares: [`Crew`] owns a pool's depot, its precreation
//! workers and the recipe they build with. It starts the workers, queues cells for them,
//! and at shutdown stops and joins them and drops every object they published or left
//! queued. A World pool's [`PoolCore`](crate::pool_core) adds the game thread's magazines
//! and tallies to it; a standalone [`Pool`](crate::Pool) adds each thread's.
//!
//! ```text
//!   start:     depot ◄── workers (config.workers, each running depot::work_with(recipe))
//!   grow:      cells from the pool's memory ──► depot's build queue ──► workers
//!   shutdown:  stop ─► join ─► published magazines and queued cells dropped
//! ```

use std::fmt;
use std::thread::JoinHandle;

use respawn_allocator::sync::spawn_running;
use respawn_allocator::DropAll;

use crate::depot::{self, Depot, Recipe, Token};
use crate::sync::{background_priority, Arc};
use crate::PoolConfig;

/// One pool's depot, its workers and their recipe. See the module docs.
pub(crate) struct Crew<C: Token, R: Recipe<C> + ?Sized> {
    name: &'static str,
    config: PoolConfig,
    depot: Arc<Depot<C>>,
    /// What the workers build with; the pool builds inline with it too (a miss, a prefill).
    recipe: Arc<R>,
    workers: Vec<JoinHandle<()>>,
}

/// How a [`Crew::shutdown`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stopped {
    /// Every worker returned; the objects the crew held are dropped. `panicked`: a worker
    /// panicked outside a `create` (whose panics it catches).
    Joined { panicked: bool },
    /// The pool went away on one of its own workers, inside a `create`: that worker is still
    /// building into a cell, so nothing was dropped. The caller leaks what it holds too.
    OnAWorker,
}

impl<C: Token, R: Recipe<C> + ?Sized> fmt::Debug for Crew<C, R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crew").field("name", &self.name).field("workers", &self.workers.len()).finish_non_exhaustive()
    }
}

impl<C: Token, R: Recipe<C> + ?Sized + 'static> Crew<C, R> {
    /// The crew of a pool named `name`: its depot (placing cells by `map`) and
    /// `config.workers` workers building by `recipe`, parked until cells are queued.
    ///
    /// # Panics
    /// If the OS cannot start a thread.
    pub(crate) fn start(name: &'static str, config: PoolConfig, map: C::Map, recipe: Arc<R>) -> Self {
        let depot = Arc::new(Depot::for_config(&config, map));
        let workers = (0..config.workers)
            .map(|i| {
                let (depot, recipe) = (Arc::clone(&depot), Arc::clone(&recipe));
                spawn_running(format!("respawn-pool {name} #{i}"), move || {
                    background_priority();
                    depot::work_with(depot, recipe)
                })
                .unwrap_or_else(|e| panic!("cannot start a precreation thread for {name}: {e}"))
            })
            .collect();
        Self { name, config, depot, recipe, workers }
    }
}

impl<C: Token, R: Recipe<C> + ?Sized> Crew<C, R> {
    /// The pool's name in stats and errors.
    #[inline]
    pub(crate) fn name(&self) -> &'static str {
        self.name
    }

    #[inline]
    pub(crate) fn config(&self) -> &PoolConfig {
        &self.config
    }

    #[inline(always)]
    pub(crate) fn depot(&self) -> &Arc<Depot<C>> {
        &self.depot
    }

    #[inline]
    pub(crate) fn recipe(&self) -> &R {
        &self.recipe
    }

    /// Queues up to `n` cells for the workers, each from `take` (none without workers).
    /// Stops at `take`'s first `None` or error; returns how many it queued and the error.
    pub(crate) fn grow<E>(&self, n: usize, mut take: impl FnMut() -> Result<Option<C>, E>) -> (usize, Result<(), E>) {
        if n == 0 || self.config.workers == 0 {
            return (0, Ok(()));
        }
        let (mut queued, mut failed) = (0, Ok(()));
        self.depot.request_growth(std::iter::from_fn(|| {
            if queued == n || failed.is_err() {
                return None;
            }
            match take() {
                Ok(Some(cell)) => {
                    queued += 1;
                    Some(cell)
                }
                Ok(None) => None,
                Err(e) => {
                    failed = Err(e);
                    None
                }
            }
        }));
        (queued, failed)
    }

    /// Stops and joins the workers, then drops the objects in the depot's published
    /// magazines and the ended objects still in cells queued for building or given back;
    /// those cells are forgotten (their memory goes with the pool's). Each drop runs in
    /// `drops`, so a panicking destructor skips none of the others (nor the caller's). The
    /// objects in the pool's own magazines are the caller's to drop, once this returns
    /// `Joined`. Idempotent.
    pub(crate) fn shutdown(&mut self, drops: &mut DropAll) -> Stopped {
        self.depot.stop();
        let me = std::thread::current().id();
        let (mut panicked, mut on_a_worker) = (false, false);
        for worker in self.workers.drain(..) {
            if worker.thread().id() == me {
                on_a_worker = true;
            } else {
                panicked |= worker.join().is_err();
            }
        }
        if on_a_worker {
            return Stopped::OnAWorker;
        }
        // SAFETY: the workers are joined, and they built with `recipe`, the class's.
        unsafe { self.depot.drain(drops, &*self.recipe) };
        Stopped::Joined { panicked }
    }
}
