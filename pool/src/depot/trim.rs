//! A trim's steps on the depot (a World pool's `ClassPool::trim`, a standalone
//! [`Pool::shrink_to`](crate::Pool::shrink_to)): the consuming thread takes back what the
//! depot holds for it — published magazines, cells queued for building — so it can drop
//! what it does not keep.
//!
//! No new hand-off: the consuming thread already pops `full` (a spawn's refill) and
//! returns magazines to `empty`; popping `to_build` and the backlog makes it one more
//! consumer of queues whose pop hands over the token (the cell's ownership) to exactly one
//! taker. A worker racing the trim either took a cell first (it builds it, and the object
//! arrives in a magazine after the trim: kept, for the next trim) or finds it gone. The
//! counters move as a worker's would: `ready` down by `take_full`, `building` down for
//! each queued cell taken, so a worker's `built` never decrements for a cell it did not
//! take. The loom model `trim_races_a_worker` checks it.

use super::{Depot, Token};
use crate::sync::Ordering;

impl<C: Token> Depot<C> {
    /// Takes every published magazine's cells (each holding a built object, now the
    /// caller's) into `into`, and returns the magazines to the empty queue. Returns how
    /// many cells it took. A magazine a worker publishes meanwhile may be taken or left.
    pub(crate) fn take_published(&self, into: &mut Vec<C>) -> usize {
        let before = into.len();
        while let Some(mut magazine) = self.take_full() {
            while let Some(cell) = magazine.pop() {
                into.push(cell);
            }
            self.return_empty(magazine);
        }
        into.len() - before
    }

    /// Takes every cell queued for a worker (`to_build`, then the backlog) into `into`:
    /// empty cells (or occupied ones, under `async_purge`), the caller's now, uncounted
    /// from `building`. Cells a worker took already are not among them. Returns how many.
    pub(crate) fn take_queued(&self, into: &mut Vec<C>) -> usize {
        let before = into.len();
        while let Some(cell) = self.to_build.pop() {
            into.push(cell);
            self.building.fetch_sub(1, Ordering::Relaxed);
        }
        if self.backlogged.load(Ordering::Relaxed) > 0 {
            let mut backlog = self.backlog.lock();
            // Only the cells counted so far: one pushed by a `Purge` drop on another thread (a
            // standalone pool's `Purge` drop) is counted just after, and stays queued.
            let n = backlog.len().min(self.backlogged.load(Ordering::Relaxed));
            let from = backlog.len() - n;
            into.extend(backlog.drain(from..));
            self.backlogged.fetch_sub(n, Ordering::Relaxed);
            self.building.fetch_sub(n, Ordering::Relaxed);
            // The growth step's buffer goes too, down to the floor the depot keeps.
            let keep = self.burst.load(Ordering::Relaxed).max(self.backlog_floor());
            if backlog.capacity() > 2 * keep {
                backlog.shrink_to(keep);
            }
        }
        into.len() - before
    }
}

/// Splits `cells` into the `keep` lowest by `key` (left in `cells`, in ascending order) and
/// the rest (returned, in no order). Linear (`select_nth_unstable`) but for a sort of the
/// kept part: a `clear` of 100 000 objects sorts nothing.
pub(crate) fn lowest_first<C, K: Ord>(cells: &mut Vec<C>, keep: usize, key: impl Fn(&C) -> K) -> Vec<C> {
    if keep >= cells.len() {
        cells.sort_unstable_by_key(&key);
        return Vec::new();
    }
    if keep > 0 {
        cells.select_nth_unstable_by_key(keep - 1, &key);
        cells[..keep].sort_unstable_by_key(&key);
    }
    cells.split_off(keep)
}

#[cfg(all(test, loom))]
mod loom_model {
    use std::ptr::NonNull;

    use loom::cell::UnsafeCell;
    use respawn_allocator::sync::thread;
    use respawn_allocator::DropAll;

    use crate::depot::{work_with, Depot, Token, MAGAZINE};
    use crate::sync::{Arc, AtomicUsize, Ordering};

    /// One loom cell per object number, written by the `create` that made the object:
    /// whoever drops an object reads its mark, so loom reports a drop not ordered after
    /// the build (a trim taking an object before it was handed over).
    struct Marks(Vec<UnsafeCell<u32>>);

    // SAFETY: every access goes through loom's cell, which reports any two not ordered.
    unsafe impl Sync for Marks {}

    struct Obj {
        n: usize,
        marks: Arc<Marks>,
        dropped: Arc<AtomicUsize>,
    }

    impl Drop for Obj {
        fn drop(&mut self) {
            // SAFETY: loom checks this read is ordered after `create`'s write.
            let mark = self.marks.0[self.n].with(|m| unsafe { *m });
            assert_eq!(mark, 1, "object {} dropped before it was built", self.n);
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }

    struct Cell(NonNull<u8>);

    // SAFETY: the token is the ownership of its cell.
    unsafe impl Send for Cell {}

    impl Token for Cell {
        type Map = ();

        unsafe fn cell(&self, (): &()) -> NonNull<u8> {
            self.0
        }
    }

    /// Cells a model queues: a whole magazine and one more.
    const N: usize = MAGAZINE + 1;

    /// A trim racing a worker's refill: the game thread queues `N` cells for a worker (as
    /// a growth step, one in `to_build` and the rest in the backlog), then trims while the
    /// worker builds — taking the published magazines (their objects dropped by the trim)
    /// and the queued cells (handed back unbuilt) — and shuts the pool down. In every
    /// interleaving each cell is either built exactly once or given back unbuilt, each
    /// object built is dropped exactly once (by the trim or at shutdown), and no count is
    /// left behind.
    #[test]
    fn trim_races_a_worker() {
        loom::model(|| {
            let marks = Arc::new(Marks((0..N).map(|_| UnsafeCell::new(0)).collect()));
            let (made, dropped) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
            let create: std::sync::Arc<dyn Fn() -> Obj + Send + Sync> = {
                let (marks, made, dropped) = (Arc::clone(&marks), Arc::clone(&made), Arc::clone(&dropped));
                std::sync::Arc::new(move || {
                    let n = made.fetch_add(1, Ordering::Relaxed);
                    // SAFETY: each `create` call writes the mark of its own number, once.
                    marks.0[n].with_mut(|m| unsafe { *m = 1 });
                    Obj { n, marks: Arc::clone(&marks), dropped: Arc::clone(&dropped) }
                })
            };
            let mut memory: Vec<std::mem::MaybeUninit<Obj>> = (0..N).map(|_| std::mem::MaybeUninit::uninit()).collect();
            let cells: Vec<Cell> = memory.iter_mut().map(|m| Cell(NonNull::from(m).cast())).collect();
            let depot = Arc::new(Depot::<Cell>::new(N, 1, 1, ()));
            let create = Arc::from_std(create);
            let worker = {
                let (depot, create) = (Arc::clone(&depot), Arc::clone(&create));
                thread::spawn(move || work_with(depot, create))
            };
            depot.request_growth(cells);

            // The trim, on the game thread, while the worker runs.
            let mut ready = Vec::new();
            depot.take_published(&mut ready);
            let mut queued = Vec::new();
            depot.take_queued(&mut queued);
            for cell in &ready {
                // SAFETY: a published cell holds an object the worker built; the trim took
                // it out of the depot, so it is ours alone, dropped once.
                unsafe { cell.0.cast::<Obj>().as_ptr().drop_in_place() };
            }
            let trimmed = ready.len();

            depot.stop();
            worker.join().unwrap();
            // SAFETY: the worker has returned, and it built with `create`.
            unsafe { depot.drain(&mut DropAll::new(), &*create) };
            let made = made.load(Ordering::Relaxed);
            assert_eq!(made + queued.len(), N, "each cell built once or handed back unbuilt");
            assert_eq!(dropped.load(Ordering::Relaxed), made, "each object built dropped once");
            assert!(trimmed <= made);
            assert_eq!(depot.building.load(Ordering::Relaxed), 0, "queued cells still counted");
            assert_eq!(depot.held.load(Ordering::Relaxed), 0);
            assert_eq!(depot.ready.load(Ordering::Relaxed), 0);
            assert_eq!(depot.backlogged.load(Ordering::Relaxed), 0);
            drop(memory);
        });
    }
}
