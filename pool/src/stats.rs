//! Per-class pool counters.

use std::time::Duration;

use crate::Policy;

/// Counters of one class's pool, from [`Pools::stats`](crate::Pools::stats).
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
    /// Cells routed back by a `Purge` release (the object and its sub-objects).
    pub recycled_purge: u64,
    /// Cells routed back by the collector's purge (`Default` releases and unreachable
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
    /// Mean time a worker spent in `create`.
    pub create_mean: Duration,
    /// Longest time a worker spent in `create`.
    pub create_max: Duration,
}

impl PoolStats {
    /// Ready objects a spawn can take now without a miss: `ready - held`. Wait for this,
    /// not `ready`, to know a pool is warm. (For a standalone [`Pool`](crate::Pool) it
    /// includes other threads' magazines, which only their own thread pulls from.)
    pub fn available(&self) -> usize {
        self.ready.saturating_sub(self.held)
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
