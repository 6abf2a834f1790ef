//! # respawn-pool
//!
//! Object pools over respawn's collector ([`respawn_gc::Heap`]): spawning becomes a pop of
//! an object a worker built ahead of time, and every way an object can end brings its cell
//! back for asynchronous rebuilding.
//!
//! ```text
//!             spawn ──► pop loaded magazine ──► activate cell → Handle      (hit: no construction)
//!                          │ empty: previous, then a full magazine from the depot
//!                          │ nothing ready: construct inline (miss), ask workers to grow
//!   destroy by policy:
//!     Default ─► Garbage ─► next GC purge ─┐
//!     Purge   ─► destroy_now (+ sub-objects)┼─► returned ──► batches ──► workers create()
//!     Reuse   ─► reset, kept by its class (ready at once)                └─► full magazines
//! ```
//!
//! Cells wait for the workers in a build queue of fixed room, sized by what can be in
//! flight: the larger of `grow_by` and a magazine per worker plus one, at most `max`
//! ([`PoolStats::build_queue`]). What does not fit waits in a backlog whose buffer is freed
//! once the workers drain it: the first `capacity` cells, and a burst of releases (a
//! collection's purge) while fewer than `capacity` objects are ready or being built.
//! Beyond that stock, a release that finds the queue full hands its cell back to the arena
//! ([`PoolStats::returned`]), so a mass release shrinks the pool instead of growing it. A worker that cannot keep up shows in [`PoolStats::lag`] (cells waiting now)
//! before spawns start missing; [`PoolStats::side_bytes`] is the memory the pool's own
//! queues and magazines take.
//!
//! - [`PoolConfig`] per class (presets, [`validate`](PoolConfig::validate)), overridable
//!   from TOML files in layers ([`ConfigLayers`]).
//! - [`Poolable`]: `create` (run by workers), `on_spawn`, `on_release`, `reset`.
//! - [`Composite`]: an owner precreated with its parts (sub-objects of other classes) on
//!   the workers, spawned as one pop ([`Pools::add_composite`], [`Pools::spawn_composite`]).
//! - [`Pools`]: the heap and its pools; [`PoolStats`] per class.
//! - Without a World: [`Pool<T>`](Pool) on its own allocator class, the same depot and
//!   workers, a pair of magazines per thread; [`Pooled`] / [`OwnedPooled`] guards; and
//!   [`Shared`] / [`WeakShared`], reference counts in the object's cell with the pool as
//!   deleter ([`ThreadSafe`] or [`NotThreadSafe`] counts).
//!
//! ```text
//!   Pool<T> cell:   [ T ................................ | strong u32 | weak u32 ]
//!   pull ─► this thread's loaded magazine ─► Pooled<T> / Shared<T>
//!   last Pooled / last strong Shared ─► reset, back to a magazine (Reuse)
//!                                     └► drop, cell to the workers (Purge)
//!   last strong with WeakShareds left ─► drop in place; the last WeakShared returns the cell
//! ```
//!
//! Invariants (each has a test):
//! - a handle stops resolving the moment its object is released, whatever the policy, and
//!   no handle value is issued twice (the arena's generations);
//! - a spawn that hits constructs nothing and allocates nothing on the calling thread;
//! - workers touch only cells the pool owns (tokens out of the class's returned list or
//!   `take_cell`), never the object table, so they need no lock against the collector;
//! - every object — live, garbage, ready, in a magazine, mid-precreation — is dropped
//!   exactly once by shutdown, and every worker is joined.
//!
//! ## Features
//!
//! - `world` (on by default): the World's pools — [`Pools`], [`Poolable`], and the
//!   [`PoolError`] variants about handles, classes, the arena and the collector — over
//!   respawn-arena and respawn-gc (and rayon through them). The `respawn` crate's `World`
//!   is built on it.
//!
//! Without it the crate is the standalone pools alone — [`Pool`] with its [`Pooled`] and
//! [`OwnedPooled`] guards, [`Shared`] / [`WeakShared`] (and their [`LocalShared`] flavour),
//! [`PoolConfig`] and its TOML layers, [`PoolStats`] — over respawn-allocator and a few small
//! crates (crossbeam-queue, crossbeam-utils, parking_lot, serde, toml):
//!
//! ```toml
//! [dependencies]
//! respawn-pool = { version = "0.1", default-features = false }
//! ```

// Under `--cfg loom` (scripts/loom.sh) only the shared state and the workers' loop are
// built, with loom's primitives: the models drive them with tokens over memory of their
// own, as a pool's game-thread side would (the arena and collector are not built there).
#![cfg_attr(loom, allow(dead_code, unused_imports))]
// Without `world`, the docs above still name the World's pools, which are not built then.
#![cfg_attr(not(feature = "world"), allow(rustdoc::broken_intra_doc_links))]

#[cfg(all(feature = "world", not(loom)))]
mod class_pool;
#[cfg(all(feature = "world", not(loom)))]
mod composite;
#[cfg(not(loom))]
mod config;
#[cfg(not(loom))]
mod crew;
#[cfg_attr(
    not(feature = "world"),
    expect(dead_code, reason = "the World's pools alone use some of the depot's steps and counters")
)]
mod depot;
#[cfg(not(loom))]
mod error;
#[cfg_attr(loom, allow(dead_code, reason = "the standalone pools, its one user, are not built under loom"))]
mod owned;
#[cfg(all(feature = "world", not(loom)))]
mod pool_core;
#[cfg(all(feature = "world", not(loom)))]
mod poolable;
#[cfg(all(feature = "world", not(loom)))]
mod pools;
mod rc;
#[cfg(not(loom))]
mod shared_ptr;
#[cfg(not(loom))]
mod standalone;
#[cfg(not(loom))]
mod stats;
mod sync;
#[cfg(all(feature = "world", not(loom)))]
mod typed;

#[cfg(all(feature = "world", not(loom)))]
pub use composite::{Composite, CompositeStats, PartClass, Parts, MAX_PARTS};
#[cfg(not(loom))]
pub use config::*;
#[cfg(not(loom))]
pub use error::PoolError;
#[cfg(all(feature = "world", not(loom)))]
pub use poolable::Poolable;
#[cfg(all(feature = "world", not(loom)))]
pub use pools::Pools;
pub use rc::{Mode, NotThreadSafe, ThreadSafe};
#[cfg(not(loom))]
pub use shared_ptr::{LocalShared, LocalWeakShared, Shared, WeakShared};
#[cfg(not(loom))]
pub use standalone::{OwnedPooled, Pool, PoolBuilder, Pooled};
#[cfg(not(loom))]
pub use stats::PoolStats;
#[cfg(all(feature = "world", not(loom)))]
pub use typed::PoolMut;
