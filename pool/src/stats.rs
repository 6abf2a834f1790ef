//! Per-class pool counters.

use std::fmt;
use std::time::Duration;

use crate::Policy;

/// Counters of one class's pool, from [`Pools::stats`](crate::Pools::stats) or a standalone
/// [`Pool::stats`](crate::Pool::stats).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PoolStats {
    /// The class's configuration name.
    pub class: &'static str,
    /// Its recycling policy.
    pub policy: Policy,
    /// Objects handed out by `spawn` (hits + misses).
    pub spawns: u64,
    /// Spawns served by a ready object: no construction on the calling thread.
    pub hits: u64,
    /// Spawns that found nothing ready and constructed inline.
    pub misses: u64,
    /// Misses beyond `max` (`spawn`'s overflow objects; their cells leave the pool when
    /// released).
    pub overflow: u64,
    /// Objects built and not yet spawned: in the spawning threads' own magazines (for a
    /// standalone [`Pool`](crate::Pool), each thread's are its own), in published
    /// magazines, and `held` by the workers.
    pub ready: usize,
    /// Of `ready`, the objects a worker still holds in its partial magazine. It publishes
    /// the magazine when it fills, when it runs out of work while the depot is low, when a
    /// spawn found nothing ready, or after 20 ms without work; until then a spawn cannot
    /// take them. On a World's pool, `ready - held` objects can be spawned now without a
    /// miss.
    pub held: usize,
    /// Cells queued for a worker or being built.
    pub building: usize,
    /// Cells of ended objects (a `Purge` release, a collection's purge) that wait in their
    /// class for the pool to take them: a `Purge` release hands them to the workers a batch
    /// at a time, and the pool's next miss or `maintain` (`end_frame`) takes the rest.
    /// Their objects are out of `in_use` already. Always 0 on a standalone pool.
    pub waiting: usize,
    /// Objects of the class alive in the world (garbage not yet purged included).
    pub in_use: usize,
    /// The most objects in use at once.
    pub high_water: usize,
    /// Objects built by workers.
    pub precreated: u64,
    /// `destroy` calls that took an object back.
    pub released: u64,
    /// Objects reset and put back at once (`Reuse`).
    pub recycled_reuse: u64,
    /// Cells back from a `Purge` release (the object and its sub-objects).
    pub recycled_purge: u64,
    /// Cells back from the collector's purge (`Default` releases and unreachable
    /// objects).
    pub recycled_gc: u64,
    /// Cells handed back to the arena instead of the pool (above `max`, no workers, a
    /// failed `create`).
    pub returned: u64,
    /// Objects whose slot reached the generation ceiling and was retired: the object was
    /// dropped and no cell came back (`ArenaConfig::max_generation`).
    pub retired: u64,
    /// Cells the pool took from the arena after it was built, to grow.
    pub grown: u64,
    /// `create` calls that panicked on a worker (the cell went back to the arena).
    pub create_panics: u64,
    /// Ended objects whose destructor a worker ran, in the pass that rebuilt their cell
    /// (`GcSettings::async_purge`: a purge then costs the game thread no destructor).
    pub dropped_by_workers: u64,
    /// Destructors of such ended objects that panicked (caught where they ran, on a worker
    /// or in the game thread's drain of cells the pool gave back; the cell was reused).
    pub drop_panics: u64,
    /// Mean time a worker spent in `create`.
    pub create_mean: Duration,
    /// Longest time a worker spent in `create`. Objects that take under a microsecond are
    /// timed 16 at a time (a clock read costs about as much as such a `create`), and a
    /// group's total counts as its longest: an upper bound.
    pub create_max: Duration,
    /// Cells waiting in the build queue now for a worker to take them (`building` less the
    /// cells being built this moment): how far behind the workers are. It returns to 0
    /// whenever they catch up; a `lag` that stays up from one read to the next means they
    /// cannot keep up — spawns will start missing once the ready objects run out, and
    /// releases that find the queue full go back to the arena (`returned`).
    pub lag: usize,
    /// The most cells the build queue has held at once since the pool was built. Equal to
    /// `build_queue` when the queue has been full: releases (or growth) then found no room.
    pub lag_high_water: usize,
    /// The build queue's room: cells it can hold before releases go back to the arena. The
    /// larger of `grow_by` and a magazine (128) per worker plus one, at most `max` (1 for a
    /// pool without workers); fixed when the pool is built. (The first `capacity` cells,
    /// and any growth step beyond the room, wait in a backlog the workers drain next.)
    pub build_queue: usize,
    /// Bytes the pool's own structures take, beside its objects: the build queue's and the
    /// magazine queues' buffers (committed when the pool is built, so they scale with
    /// `build_queue` and `max`), the magazines' buffers (128 cell tokens each: two per
    /// spawning thread, one per worker, and those in the queues), and the pool's own
    /// struct. The objects and their cells are not counted (the arena's or the allocator's
    /// slabs). See [`side_bytes_per_object`](Self::side_bytes_per_object).
    pub side_bytes: usize,
    /// Ready objects dropped by trims (`shrink_to`, `clear`, the idle trim): each dropped
    /// once, its cell handed back.
    pub trimmed: u64,
    /// Bytes of the class's slabs committed now (the allocator's
    /// [`ClassStats::committed_bytes`](respawn_allocator::ClassStats::committed_bytes)):
    /// carved slabs less those a trim decommitted. Falls after a spike once the pool is
    /// trimmed. (Slots of the object table not included.)
    pub committed_bytes: usize,
}

impl PoolStats {
    /// Ready objects a spawn can take now without a miss: `ready - held`. Wait for this,
    /// not `ready`, to know a pool is warm. (For a standalone [`Pool`](crate::Pool) it
    /// includes other threads' magazines, which only their own thread pulls from.)
    pub fn available(&self) -> usize {
        self.ready.saturating_sub(self.held)
    }

    /// The pool's overhead per object it holds: `side_bytes` over the objects in use,
    /// ready and being built (over 1 for an empty pool).
    pub fn side_bytes_per_object(&self) -> f64 {
        let objects = self.in_use + self.ready + self.building;
        self.side_bytes as f64 / objects.max(1) as f64
    }

    /// Hits over spawns (1.0 before the first spawn).
    pub fn hit_rate(&self) -> f64 {
        if self.spawns == 0 {
            1.0
        } else {
            self.hits as f64 / self.spawns as f64
        }
    }
}

/// One line for a log or an overlay: the class and policy, spawns and how many the pool
/// served, the objects in use, ready and being built, and the memory (the class's committed
/// slabs and the pool's own structures). `{:?}` shows every counter.
///
/// ```
/// use respawn_pool::{Policy, PoolStats};
///
/// let stats = PoolStats {
///     class: "Bullet",
///     policy: Policy::Purge,
///     spawns: 12_000,
///     hits: 11_988,
///     misses: 12,
///     in_use: 1_500,
///     ready: 480,
///     building: 20,
///     committed_bytes: 3 << 20,
///     side_bytes: 40_960,
///     ..PoolStats::default()
/// };
/// assert_eq!(
///     stats.to_string(),
///     "Bullet (Purge): 12000 spawns, 99.9 % hits (12 missed); 1500 in use, 480 ready, \
///      20 building; 3.0 MiB of slabs, 40.0 KiB of pool"
/// );
/// ```
impl fmt::Display for PoolStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} ({:?}): {} spawns, {:.1} % hits ({} missed); {} in use, {} ready, {} building; {} of slabs, {} of pool",
            self.class,
            self.policy,
            self.spawns,
            // Rounded down, so a pool that missed once never reads 100 %.
            (self.hit_rate() * 1000.0).floor() / 10.0,
            self.misses,
            self.in_use,
            self.ready,
            self.building,
            Bytes(self.committed_bytes),
            Bytes(self.side_bytes),
        )
    }
}

/// Bytes in binary units, one decimal.
struct Bytes(usize);

impl fmt::Display for Bytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const UNITS: [&str; 4] = ["bytes", "KiB", "MiB", "GiB"];
        let mut value = self.0 as f64;
        let mut unit = 0;
        while value >= 1024.0 && unit + 1 < UNITS.len() {
            value /= 1024.0;
            unit += 1;
        }
        if unit == 0 {
            write!(f, "{} bytes", self.0)
        } else {
            write!(f, "{value:.1} {}", UNITS[unit])
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Bytes, PoolStats};
    use crate::Policy;

    #[test]
    fn bytes_read_in_binary_units() {
        let shown: Vec<String> = [0, 1023, 1024, 1536, 5 << 20, 3 << 30, 5 << 40].map(|b| Bytes(b).to_string()).into();
        assert_eq!(shown, ["0 bytes", "1023 bytes", "1.0 KiB", "1.5 KiB", "5.0 MiB", "3.0 GiB", "5120.0 GiB"]);
    }

    #[test]
    fn a_pool_that_missed_once_never_reads_a_full_hit_rate() {
        let stats = |spawns, misses| PoolStats {
            class: "Shot",
            policy: Policy::Reuse,
            spawns,
            hits: spawns - misses,
            misses,
            ..PoolStats::default()
        };
        assert!(stats(100_000, 1).to_string().contains("99.9 % hits (1 missed)"), "{}", stats(100_000, 1));
        assert!(stats(100_000, 0).to_string().contains("100.0 % hits"));
        assert!(stats(0, 0).to_string().starts_with("Shot (Reuse): 0 spawns, 100.0 % hits"));
    }
}
