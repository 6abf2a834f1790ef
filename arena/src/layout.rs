//! A picture of a class's memory: what every cell of every slab holds (UE's memory-layout
//! view), for reports and debugging tools. Taken under `&Arena`, so it is a consistent
//! snapshot on the game thread; pool workers never change the table.

use respawn_allocator::ClassId;

use crate::class::ClassEntry;
use crate::{Lifecycle, ObjectFlags};

/// What one cell holds, judged from its slot's flags.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CellState {
    /// A visible object: handles resolve, `tick` visits it.
    Live,
    /// Owned by the class's pool: deactivated for reuse ([`Lifecycle::InPool`]), taken or returned
    /// for a worker to build into ([`Lifecycle::Lent`]), or holding a ready object the pool
    /// will hand out.
    Pooled,
    /// An object on its way out: marked garbage, found unreachable, or being destroyed
    /// ([`Lifecycle::is_ending`]).
    Garbage,
    /// Vacant and on the class's free list: the next insert may take it.
    Free,
    /// Vacant for good: its generation reached the ceiling.
    Retired,
}

impl CellState {
    /// Every state, in the order reports list them.
    pub const ALL: [CellState; 5] =
        [CellState::Live, CellState::Pooled, CellState::Garbage, CellState::Free, CellState::Retired];

    /// A lower-case name for legends and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            CellState::Live => "live",
            CellState::Pooled => "in pool",
            CellState::Garbage => "garbage",
            CellState::Free => "free",
            CellState::Retired => "retired",
        }
    }

    fn of(flags: ObjectFlags) -> Self {
        match flags.lifecycle() {
            Lifecycle::Live => CellState::Live,
            Lifecycle::Garbage | Lifecycle::Unreachable | Lifecycle::Destroying => CellState::Garbage,
            Lifecycle::Vacant => CellState::Free,
            Lifecycle::InPool | Lifecycle::Lent => CellState::Pooled,
            Lifecycle::Retired => CellState::Retired,
        }
    }
}

/// One slab of a class: its cells in address order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SlabLayout {
    /// The slab's index in the class's reservation (address order).
    pub index: u32,
    /// The address of its first cell.
    pub address: usize,
    /// Every cell, in address order.
    pub cells: Vec<CellState>,
}

/// Every slab a class owns, cell by cell (see [`Arena::layout`](crate::Arena::layout)).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClassLayout {
    /// The class's id.
    pub class: ClassId,
    /// The class's name (its Rust type).
    pub name: &'static str,
    /// Bytes per cell.
    pub cell_size: usize,
    /// Cells per slab.
    pub cells_per_slab: usize,
    /// The slabs the class owns, in address order.
    pub slabs: Vec<SlabLayout>,
}

impl ClassLayout {
    /// Cells in `state`, over every slab.
    pub fn count(&self, state: CellState) -> usize {
        self.slabs.iter().map(|s| s.cells.iter().filter(|&&c| c == state).count()).sum()
    }

    /// Cells over every slab.
    pub fn cells(&self) -> usize {
        self.slabs.len() * self.cells_per_slab
    }
}

pub(crate) fn class_layout(entry: &ClassEntry) -> ClassLayout {
    let geometry = entry.geometry();
    let per_slab = geometry.cells_per_slab();
    let slabs = (geometry.bases().iter().enumerate())
        // A decommitted slab holds nothing and takes no memory: not shown.
        .filter(|&(index, base)| !base.is_null() && !entry.is_decommitted(index as u32))
        .map(|(index, &base)| {
            let first = (index as u32) << geometry.shift();
            SlabLayout {
                index: index as u32,
                address: base as usize,
                cells: (first..first + per_slab as u32).map(|n| CellState::of(geometry.slot(n).flags())).collect(),
            }
        })
        .collect();
    ClassLayout {
        class: entry.id(),
        name: entry.name(),
        cell_size: geometry.cell_size(),
        cells_per_slab: per_slab,
        slabs,
    }
}
