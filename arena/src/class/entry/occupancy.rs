//! Which of a class's cells hold what, and how many of each.

/// A class's cells by state. Each cell of the slabs granted to the class is, at any time,
/// exactly one of: live (its slot holds an object, visible or hidden), vacant (on `free`),
/// kept (on `kept`), out (a token for it is on the returned list or held by a pool or a
/// worker) or retired. So the class's object count is derived ([`len`](Self::len)) and
/// the hot insert and remove, which move a cell between live and vacant, count nothing.
#[derive(Default)]
pub(super) struct Occupancy {
    /// One bit per cell number: set while the cell holds an object that is visible
    /// (constructed, not garbage, not in its pool). `tick` and `iter` walk these words.
    pub(super) live: Vec<u64>,
    /// Vacant slots, reused last in first out (the warmest cell first).
    pub(super) free: Vec<u32>,
    /// Released objects the class keeps for its next spawns, reset and still in their cells
    /// (a `Reuse` pool's stock): their cell numbers, the most recent last, each slot
    /// [`InPool`](crate::Lifecycle::InPool) and a generation on, so no handle reaches them.
    /// The arena owns them: `reuse` makes one live again, and the arena drops those nobody
    /// took.
    pub(super) kept: Vec<u32>,
    /// Whether a release may keep its object ([`Releasable::keep`](crate::Releasable::keep)):
    /// set by the class's pool while its policy is `Reuse` and it is within `max`.
    pub(super) keeping: bool,
    /// Objects kept since the class was registered.
    pub(super) kept_total: u64,
    /// Cells of the slabs granted to the class (and not decommitted).
    pub(super) granted: usize,
    /// Cells whose tokens are out: taken (`take_cell`), deactivated, or returned, and not yet
    /// activated or recycled (a dropped token stays out for good).
    pub(super) out: usize,
    /// Slots retired: the generation ceiling, or a panicking destructor. (A count of slots
    /// fits a `u32`, as a slot index does.)
    pub(super) retired: u32,
    /// Slabs whose pages a trim gave back ([`Arena::decommit_empty_slabs`](crate::Arena::decommit_empty_slabs)),
    /// highest index first: still the class's (bases, slots and generations kept), but
    /// their cells are off `free` and out of `granted`. `grow` commits the last one (the
    /// lowest) again before it takes a new slab.
    pub(super) decommitted: Vec<u32>,
    /// Permanent objects of the class (outside its slabs).
    pub(super) permanent: u32,
}

impl Occupancy {
    /// Objects in the class's cells whose slots are live (visible or hidden, not vacant).
    #[inline]
    pub(super) fn len(&self) -> usize {
        self.granted - self.free.len() - self.kept.len() - self.out - self.retired as usize
    }

    #[inline]
    pub(super) fn is_live(&self, n: u32) -> bool {
        self.live[(n >> 6) as usize] & (1u64 << (n & 63)) != 0
    }

    /// Sets or clears cell `n`'s live bit. `n` lies in a slab the class owns, whose words
    /// `grow` added to the bitmap.
    #[inline(always)]
    pub(super) fn set_live(&mut self, n: u32, live: bool) {
        let (word, bit) = ((n >> 6) as usize, 1u64 << (n & 63));
        debug_assert!(word < self.live.len(), "cell {n} beyond the live bitmap");
        // SAFETY: `grow` sizes the bitmap for every slab the class owns, and `n` is in one.
        let word = unsafe { self.live.get_unchecked_mut(word) };
        if live {
            *word |= bit;
        } else {
            *word &= !bit;
        }
    }
}
