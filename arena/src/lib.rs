//! # respawn-arena
//!
//! Objects of many classes in one [`Arena`]: each class in its own contiguous region of the
//! [chunk allocator](respawn_allocator), each object reached through a generational
//! [`Handle`] that can never resolve to an object other than the one it was made for.
//!
//! ```text
//!  ObjectTable (UE's FUObjectArray): one index space, a range per class
//!   directory (1 Mi indices an entry) ─► range of Projectile: start, capacity
//!        slots (side region, 16 B each)         cells (class region, respawn-allocator)
//!        ┌──────┬──────┬──────┬───┐             ┌─────┬─────┬─────┬───┐
//!        │slot 0│slot 1│slot 2│ … │  n ◄──────► │cell0│cell1│cell2│ … │   slab 0
//!        └──────┴──────┴──────┴───┘             └─────┴─────┴─────┴───┘
//!        slot: generation · flags · class · outer · root count
//!
//!  Handle<T> = slot index (u32) + generation (NonZeroU32)  — 8 bytes, Option too
//!    n = index − start:  slot = slots + 16 n,  cell = base + (n >> shift) stride + (n & mask) size
//!    both computed, so the slot and the object are fetched in parallel (one miss, not two)
//!  ClassEntry: its range · slab bases (address order) · live bitmap (1 bit/cell) · vacant slots
//! ```
//!
//! Invariants:
//! - each cell keeps its slot for life: cell number `n` of a class is slot `start + n` of
//!   the class's range, so a class's vacant slots are its free cells;
//! - a slot's generation grows by one on every release and never wraps (the slot is retired
//!   at the ceiling), so `(index, generation)` is never issued twice;
//! - a handle resolves only if its generation matches and the object's [`Lifecycle`] is
//!   `Live` (one state of eight; the others are hidden or vacant);
//! - a cell's live bit is set exactly while its object is `Live`; `tick` visits exactly those whose dormancy bit
//!   is clear ([`Arena::set_dormant`]; the release clears it), in address order
//!   (the collector's mark bit, `MAYBE_UNREACHABLE`, hides nothing, so a mark spread over
//!   frames leaves every object usable);
//! - while the collector's write barrier is on ([`Arena::set_barrier`]), every object made
//!   live or lent mutably in a traced class, and every object rooted, given an owner or
//!   re-flagged, is noted for the collector's incremental mark;
//! - a slot's `outer` names a live owner, and the owner's sub-object list holds the slot;
//!   releasing an owner cuts its sub-objects loose;
//! - every object is dropped once: when removed or destroyed, or when the arena drops.
//! - every end of an object (a release of its slot) is told to its class's end listeners
//!   once, with the object intact: at the release, or earlier through `notify_end`, which
//!   flags it `END_NOTIFIED` so the release stays silent;
//! - a [`SideTable`] entry answers only the handle it was written for (index and
//!   generation), never another generation of the slot.

// Under `--cfg loom` (scripts/loom.sh) only the slot, the handles' types, the flags and the
// freed-cell token are built, with loom's atomics: the models check the slot's generation
// hand-off and its root count, and the pool's models pass tokens around. The arena proper
// does not build under loom (its allocator does not).
#![cfg_attr(loom, allow(dead_code, unused_imports))]

#[cfg(not(loom))]
mod arena;
mod class;
mod error;
mod flags;
mod handle;
#[cfg(not(loom))]
mod layout;
#[cfg(not(loom))]
mod outer;
#[cfg(not(loom))]
mod paged;
#[cfg(not(loom))]
mod side_table;
mod table;

#[cfg(not(loom))]
pub use arena::{
    Arena, ArenaClassStats, ArenaConfig, BarrierLog, ClassStore, CollectorEntries, Iter, IterMut, ListenerId,
    LiveIndices, Releasable, TickCursor, View,
};
#[cfg(not(loom))]
pub use class::{CellMap, CollectorEntry, CompactCell, ObjectFn, ReadyFn, TraceFn};
pub use class::{Ended, EndedCells, Freed, FreedCell};
pub use error::{short_type_name, ArenaError};
pub use flags::{Lifecycle, ObjectFlags};
#[cfg(not(loom))]
pub use handle::Root;
pub use handle::{class_local_index, Handle, RawHandle};
#[cfg(not(loom))]
pub use layout::{CellState, ClassLayout, SlabLayout};
#[cfg(not(loom))]
pub use paged::Paged;
#[cfg(not(loom))]
pub use respawn_allocator::Rejected;
pub use respawn_allocator::{ClassId, SlabConfig};
#[cfg(not(loom))]
pub use side_table::{SideTable, SideTableIter, SideTableIterMut};
#[cfg(not(loom))]
pub use table::ObjectTable;
pub use table::{Slot, BLOCK_SLOTS, NONE};
// Moved to the allocator, so that the standalone pools have it without the arena; kept
// here under its old path.
pub use respawn_allocator::DropAll;
