//! Which of a class's cells hold what, and how many of each.

/// A class's cells by state. Each cell of the slabs granted to the class is, at any time,
/// exactly one of: live (its slot holds an object, visible or hidden), vacant (on `free`,
/// or `fresh`), kept (on `kept`), out (a token for it is on the returned list or held by a
/// pool or a worker) or retired. So the class's object count is derived
/// ([`len`](Self::len)) and the hot insert and remove, which move a cell between live and
/// vacant, count nothing.
#[derive(Default)]
pub(super) struct Occupancy {
    /// One bit per cell number: set while the cell holds an object that is visible
    /// (constructed, not garbage, not in its pool). `tick` and `iter` walk these words, up
    /// to `reach`.
    pub(super) live: Vec<u64>,
    /// Words of `live` that a set bit can be in: every cell ever put on `free` lies below
    /// `reach × 64`, so the words past it are zero and the walks stop there. A class of 20
    /// objects walks one word, not its slab's 16.
    pub(super) reach: usize,
    /// Vacant slots, reused last in first out (the warmest cell first).
    pub(super) free: Vec<u32>,
    /// The newest slab's vacant slots not yet on `free`, `fresh.0..fresh.1`: handed to it
    /// a bitmap word's worth at a time, front to back, when it runs dry (a cold path), so
    /// that `reach` grows with the cells used, not with the slabs taken.
    pub(super) fresh: (u32, u32),
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
        self.granted - self.vacant() - self.kept.len() - self.out - self.retired as usize
    }

    /// Vacant cells: on `free`, or fresh.
    #[inline]
    pub(super) fn vacant(&self) -> usize {
        self.free.len() + (self.fresh.1 - self.fresh.0) as usize
    }

    /// Puts the next word's worth of fresh slots on `free` (reversed, so they are taken front
    /// to back) and extends `reach` over them; `false` if none is left. `start` is the
    /// class's first slot index (cell number 0).
    pub(super) fn hand_out_fresh(&mut self, start: u32) -> bool {
        let (next, end) = self.fresh;
        if next == end {
            return false;
        }
        // To the end of the bitmap word `next` is in (or of the slab).
        let upto = end.min(start + ((next - start + 64) & !63));
        self.free.extend((next..upto).rev());
        self.fresh.0 = upto;
        self.reach_to(upto - start);
        true
    }

    /// Puts every fresh slot on `free`.
    pub(super) fn hand_out_all_fresh(&mut self, start: u32) {
        while self.hand_out_fresh(start) {}
    }

    /// Extends `reach` over the cells numbered below `cells`.
    pub(super) fn reach_to(&mut self, cells: u32) {
        self.reach = self.reach.max((cells as usize).div_ceil(64));
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
