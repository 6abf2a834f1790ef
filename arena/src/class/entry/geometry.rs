//! Where a class's cells and slots are: arithmetic on a cell number.

use std::any::{type_name, TypeId};
use std::ptr::NonNull;

use respawn_allocator::ClassId;

#[cfg(not(miri))]
use crate::table::Addressing;
use crate::table::{Range, Slot};

/// A class's identity and the arithmetic that finds its cells and slots. Set when the
/// class registers; only the slab bases grow after.
pub(crate) struct Geometry {
    pub(super) id: ClassId,
    pub(super) type_id: TypeId,
    pub(super) name: &'static str,
    /// `size_of::<T>()`, for the stats' overhead figure.
    pub(super) object_size: usize,
    pub(super) cell_size: usize,
    /// `log2(cells_per_slab)`: a cell number is `slab << shift | cell`.
    pub(super) shift: u32,
    pub(super) drop_fn: Option<unsafe fn(*mut u8)>,
    /// First cell of each slab the class owns, by the slab's index in its reservation
    /// (address order); null for an index not granted to us yet.
    pub(super) bases: Vec<*mut u8>,
    /// The class's range of the object table: slot `start + n` belongs to cell number `n`.
    pub(super) range: NonNull<Range>,
    /// The range's first slot index.
    pub(super) start: u32,
    /// Slots in the range: cell numbers run below it.
    pub(super) capacity: u32,
    /// The range's geometry, copied here so the typed paths compute a slot and a cell from
    /// the entry alone, without a pointer chase. (Not under Miri, where slabs and slot
    /// blocks are separate allocations and the entry asks its range.)
    #[cfg(not(miri))]
    pub(super) at: Addressing,
    /// The generation ceiling ([`ArenaConfig::max_generation`](crate::ArenaConfig)), copied
    /// here so that the typed paths find everything they test in the entry.
    pub(super) max_generation: u32,
}

impl Geometry {
    /// Class `T`'s geometry, registered as `id`: cells of `cell_size` bytes,
    /// `cells_per_slab` to a slab, in `range` of the object table (which outlives the
    /// entry), `capacity` slots.
    pub(crate) fn new<T: 'static>(
        id: ClassId,
        cell_size: usize,
        cells_per_slab: u32,
        drop_fn: Option<unsafe fn(*mut u8)>,
        range: NonNull<Range>,
        capacity: u32,
        max_generation: u32,
    ) -> Self {
        // SAFETY: the table owns the range until it drops, after the arena and its entries.
        let start = unsafe { range.as_ref().start };
        // SAFETY: as above.
        #[cfg(not(miri))]
        let at = unsafe { range.as_ref().addressing() };
        Self {
            id,
            type_id: TypeId::of::<T>(),
            name: type_name::<T>(),
            object_size: std::mem::size_of::<T>(),
            cell_size,
            shift: cells_per_slab.trailing_zeros(),
            drop_fn,
            bases: Vec::new(),
            range,
            start,
            capacity,
            #[cfg(not(miri))]
            at,
            max_generation,
        }
    }

    /// The generation ceiling: a slot released at it retires.
    #[inline]
    pub(crate) fn max_generation(&self) -> u32 {
        self.max_generation
    }

    /// `size_of::<T>()` of the class's type.
    pub(crate) fn object_size(&self) -> usize {
        self.object_size
    }

    /// Bytes a cell takes (the class's layout padded to its alignment).
    #[inline(always)]
    pub(crate) fn cell_size(&self) -> usize {
        self.cell_size
    }

    /// `log2(cells_per_slab)`.
    #[inline(always)]
    pub(crate) fn shift(&self) -> u32 {
        self.shift
    }

    #[inline]
    pub(crate) fn cells_per_slab(&self) -> usize {
        1 << self.shift
    }

    /// The class's type-erased destructor (`None` for a type without drop glue).
    #[inline(always)]
    pub(crate) fn drop_fn(&self) -> Option<unsafe fn(*mut u8)> {
        self.drop_fn
    }

    /// First cell of each slab, by slab index; null where the class owns none yet.
    #[inline(always)]
    pub(crate) fn bases(&self) -> &[*mut u8] {
        &self.bases
    }

    /// Slabs the class owns.
    pub(crate) fn slabs(&self) -> usize {
        self.bases.iter().filter(|b| !b.is_null()).count()
    }

    /// The range's first slot index.
    #[inline(always)]
    pub(crate) fn start(&self) -> u32 {
        self.start
    }

    /// Slots in the class's range.
    #[inline(always)]
    pub(crate) fn capacity(&self) -> u32 {
        self.capacity
    }

    /// The cell number of slot `index` (wrapping: a slot outside the range gives a number
    /// at or above [`capacity`](Self::capacity)).
    #[inline(always)]
    pub(crate) fn number(&self, index: u32) -> u32 {
        index.wrapping_sub(self.start)
    }

    /// The class's range of the object table.
    #[inline(always)]
    pub(crate) fn range(&self) -> &Range {
        // SAFETY: the range belongs to the arena's table, which outlives the entry.
        unsafe { self.range.as_ref() }
    }

    /// The range's address, for a [`CellMap`](crate::CellMap).
    pub(crate) fn range_ptr(&self) -> NonNull<Range> {
        self.range
    }

    /// The cell numbered `n` (which must lie in a slab the class owns): arithmetic.
    #[inline(always)]
    pub(crate) fn cell_ptr(&self, n: u32) -> *mut u8 {
        self.cell_ptr_sized(n, self.cell_size)
    }

    /// [`cell_ptr`](Self::cell_ptr) for a typed caller, whose `size_of::<T>()` is the cell
    /// size (a cell is the class's layout padded to its alignment, which a Rust type's size
    /// already is): the multiply becomes a constant.
    #[inline(always)]
    pub(crate) fn cell_of<T>(&self, n: u32) -> *mut u8 {
        self.cell_ptr_sized(n, std::mem::size_of::<T>())
    }

    #[inline(always)]
    fn cell_ptr_sized(&self, n: u32, cell_size: usize) -> *mut u8 {
        debug_assert_eq!(cell_size, self.cell_size, "cell size of another class");
        debug_assert!(!self.bases[(n >> self.shift) as usize].is_null(), "cell {n} in a slab the class does not own");
        #[cfg(not(miri))]
        {
            // `slab × stride + i × size` = `n × size + slab × gap`: one mask fewer.
            let slab = (n >> self.shift) as usize;
            self.at.cells.as_ptr().wrapping_add(n as usize * cell_size + slab * self.at.gap)
        }
        #[cfg(miri)]
        {
            self.range().cell(n).expect("a class range has cells").as_ptr()
        }
    }

    /// The slot that belongs to the cell numbered `n`.
    #[inline(always)]
    pub(crate) fn slot_of(&self, n: u32) -> u32 {
        self.start + n
    }

    /// The slot of the cell numbered `n` (in a slab the class owns).
    #[inline(always)]
    pub(crate) fn slot(&self, n: u32) -> &Slot {
        debug_assert!(n < self.capacity, "cell {n} beyond the class's range");
        #[cfg(not(miri))]
        {
            // SAFETY: `n < capacity`: inside the range's side region, zero-filled memory
            // that is a valid `Slot` and lives as long as the table.
            unsafe { &*self.at.slots.as_ptr().add(n as usize) }
        }
        #[cfg(miri)]
        {
            // SAFETY: cell numbers of owned slabs are inside the range, their block set up.
            unsafe { self.range().slot(n) }
        }
    }

    /// The slot of cell number `n` if `n` is inside the range (natively every such slot
    /// reads, as zeros until set up; under Miri its block must be set up too).
    #[inline(always)]
    pub(crate) fn try_slot(&self, n: u32) -> Option<&Slot> {
        if n >= self.capacity {
            return None;
        }
        #[cfg(miri)]
        {
            self.range().try_slot(n)
        }
        #[cfg(not(miri))]
        Some(self.slot(n))
    }
}
