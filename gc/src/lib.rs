//! # respawn-gc
//!
//! A mark-sweep garbage collector over the [respawn arena](respawn_arena): UE's
//! `CollectGarbage` in Rust. Objects say which handles they hold through [`Trace`]
//! (`#[derive(Trace)]`), the [`Heap`] marks from the roots in parallel, and the purge ends
//! each unreachable object; a class whose cells are [returned](Heap::set_ended_cells) puts
//! the cell on its returned list, so a pool can take it back and build a fresh object in it.
//!
//! ```text
//!  collect_garbage(options)
//!   1 (no lock: every way into the heap takes &Heap or &mut Heap, so nothing else can run
//!              in it; UE's FGCScopeGuard has no counterpart. The pools' workers never touch the table)
//!   2 mark     table chunks ──rayon──► every Live or Garbage object MAYBE_UNREACHABLE, except
//!              roots (Root guards, ROOT_SET, keep flags, objects of owned classes) and
//!              PERMANENT ones; roots ► frontier A, and what external referencers report
//!   3 reach    frontier A ──rayon tasks, each a 1 Ki DFS stack──► claims (fetch_and on
//!              MAYBE_UNREACHABLE, once per object) ──spill──► frontier B ──► … until empty
//!              only Live objects are claimed; an object's outer is claimed with it
//!   4 clusters claiming one member claims the whole cluster; garbage roots dissolve theirs
//!   5 gather   still MAYBE_UNREACHABLE ──► Unreachable (hidden), purge queue (and out of tick)
//!   6 purge    begin_destroy → is_ready? → finish_destroy → drop → free (vacant or returned)
//!              (all now, or purge(Some(budget)) slices across frames)
//!
//!  frontiers A/B: one u32 per table slot each, kept between cycles (grown, exactly, with the table)
//!
//!  incremental (GcSettings::incremental_mark_budget, Heap::mark_slice): phases 2, 3–4 and 5
//!  in slices across frames, on the calling thread; between slices the arena's write
//!  barrier notes what the game lends mutably or makes live, and each slice traces it again
//! ```
//!
//! Rules that keep it honest:
//! - an object reachable from a root, or of an owned class ([`Lifetime::Owned`]) and not
//!   garbage, survives every collection; any other object is purged by the next full
//!   collection (invariant 5 in ARCHITECTURE.md);
//! - `Garbage` objects are never kept alive by a reference, and their sub-objects go with
//!   them;
//! - a purge step overruns its budget by at most one object's destruction (invariant 6);
//! - an incremental mark keeps every object reachable when it ends, however the game
//!   changed the graph between its slices (the write barrier; proof in `heap/incremental.rs`);
//! - once warm, a collection allocates nothing on the heap (its lists are reused).
//!
//! Handles are generational, so the collector never frees memory a handle could still
//! reach: a handle to a purged object simply stops resolving.

// Under `--cfg loom` (scripts/loom.sh) only the frontier is built, with loom's atomics: the
// arena below does not build under loom, and the frontier is the collector's one lock-free
// structure shared between threads.
#![cfg_attr(loom, allow(dead_code))]

// The derive names this crate `::respawn_gc`; let that path work inside the crate too.
#[cfg(not(loom))]
extern crate self as respawn_gc;

#[cfg(not(loom))]
mod cluster;
#[cfg(not(loom))]
mod error;
mod frontier;
#[cfg(not(loom))]
mod heap;
#[cfg(not(loom))]
mod mark;
mod purger;
#[cfg(not(loom))]
mod referencer;
#[cfg(not(loom))]
mod settings;
#[cfg(not(loom))]
mod threads;
#[cfg(not(loom))]
mod trace;
#[cfg(not(loom))]
mod why;

#[cfg(not(loom))]
pub use cluster::ClusterId;
#[cfg(not(loom))]
pub use error::GcError;
#[cfg(not(loom))]
pub use heap::{Heap, Lifetime, Subtree};
#[cfg(not(loom))]
pub use purger::PurgeThreadStats;
#[cfg(not(loom))]
pub use referencer::Referencer;
#[cfg(not(loom))]
pub use respawn_gc_derive::{Object, Trace};
#[cfg(not(loom))]
pub use settings::{CollectOptions, GcSettings, GcStats, GcStep, MarkPhase, MarkProgress, MarkStep, PurgeProgress};
#[cfg(not(loom))]
pub use trace::{Object, Trace, Tracer};
#[cfg(not(loom))]
pub use why::{ChainLink, GarbageReference, ObjectRef, Reference, ReferenceChain, Referrer, RootKind};
