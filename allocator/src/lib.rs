//! # respawn-allocator
//!
//! Memory for respawn's objects, and nothing about objects. Each class of object gets one
//! contiguous reservation of address space, carved front to back into slabs of fixed-size
//! cells, so the objects of a class sit side by side in slab order and a pass over them is a
//! pass over contiguous memory. A background thread prepares each class's next slabs (pages
//! faulted in) ahead of demand; the caller's hot path takes no page fault and no system
//! call.
//!
//! ```text
//!  ChunkAllocator
//!   ├─ class 0 ─ Region: one MAP_NORESERVE reservation, max_slabs × stride bytes
//!   │            ┌────────────┬────────────┬────────────┬────────────┬──────────────┐
//!   │            │ slab 0     │ slab 1     │ slab 2     │ slab 3     │ uncarved …   │
//!   │            │ granted    │ granted    │ prepared   │ prepared   │ (no memory   │
//!   │            └────────────┴────────────┴────────────┴────────────┤  committed)  │
//!   │             slab = cells_per_slab cells of cell_size bytes      └──────────────┘
//!   │            ┌──────┬──────┬──────┬─────┬──────┐
//!   │            │cell 0│cell 1│cell 2│ ... │cell n│  cell_size = size rounded up to align
//!   │            └──────┴──────┴──────┴─────┴──────┘
//!   ├─ class 1 ─ Region …
//!   └─ preparation thread: keeps `spare_slabs` (+ reserved) slabs per class prepared
//!
//!  PermanentPool: one block, lock-free bump allocation, O(1) `contains`
//! ```
//!
//! Invariants, each relied on above this crate:
//! - a slab index is handed out at most once, whole ([`ChunkAllocator::alloc_slab`]) or
//!   cell by cell ([`ChunkAllocator::alloc_cell`]);
//! - cell `i` of slab `s` of a class is at `region.start + s × stride + i × cell_size`, so
//!   address order is slab order (except under Miri, where each slab is its own allocation);
//! - memory stays mapped until the allocator drops, which first joins the preparation thread.
//!
//! Beside the memory, one helper every layer above uses for its bulk drops: [`DropAll`] runs
//! each destructor of a batch though one of them panics, then re-raises the first panic.
//!
//! ```
//! use std::alloc::Layout;
//! use respawn_allocator::{ChunkAllocator, SlabConfig};
//!
//! let alloc = ChunkAllocator::new();
//! let class = alloc.register_class(Layout::new::<[u64; 8]>(), SlabConfig::SMALL).unwrap();
//! let cell = alloc.alloc_cell(class);
//! assert!(alloc.contains(cell.as_ptr()));
//! alloc.free_cell(class, cell).unwrap();
//! assert!(alloc.free_cell(class, cell).is_err()); // a double free is an error, not UB
//! ```

mod config;
mod error;
#[cfg_attr(loom, allow(dead_code, reason = "the allocator that calls these is not built under loom"))]
mod ledger;
#[cfg_attr(loom, allow(dead_code, reason = "the loom build models the ledger only; os serves the allocator"))]
mod os;
pub mod poison;
pub mod sync;
mod unwind;

#[cfg(not(loom))]
mod chunk;
#[cfg(not(loom))]
mod permanent;

#[cfg(not(loom))]
pub use chunk::{ChunkAllocator, ClassStats, SlabGrant, MAX_ALIGN, MAX_CLASSES};
pub use config::SlabConfig;
pub use error::AllocError;
pub use os::{SideRegion, PAGE};
#[cfg(not(loom))]
pub use permanent::{PermanentPool, Rejected};
pub use unwind::DropAll;

/// A class registered with a `ChunkAllocator`: an index into its class table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ClassId(u16);

impl ClassId {
    /// The class's index, dense from 0 in registration order.
    pub const fn index(self) -> usize {
        self.0 as usize
    }

    /// The class id with index `index`. Ids are only meaningful for the allocator that
    /// issued them; one it never issued is answered with [`AllocError::UnknownClass`].
    pub const fn from_index(index: u16) -> Self {
        Self(index)
    }
}

/// Asks the CPU to bring the cache line at `p` in, without waiting for it: for callers who
/// know which object they will touch next (the collector's mark, a pool's next spawn).
#[inline(always)]
pub fn prefetch(p: *const u8) {
    #[cfg(all(target_arch = "x86_64", not(miri)))]
    // SAFETY: a prefetch is a hint: it never faults and has no effect on memory, whatever
    // the address (SSE, which provides it, is part of the x86-64 baseline).
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri))))]
    let _ = p;
}
