//! A trim's steps on the depot ([`ClassPool::trim`](crate::class_pool), a standalone
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
            // Only the cells counted so far: one pushed by a route on another thread (a
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
