//! A class's record ([`ClassEntry`], in `entry`: its geometry, occupancy and reactions, and
//! the collector's [`CollectorEntry`]) and
//! the tokens that carry its cells out of the arena and back: [`FreedCell`],
//! [`CompactCell`] and its [`CellMap`], [`Freed`].

use std::ptr::NonNull;

use respawn_allocator::ClassId;

#[cfg(not(loom))]
mod collector;
#[cfg(not(loom))]
pub(crate) mod dormancy;
#[cfg(not(loom))]
mod entry;
#[cfg(not(loom))]
pub(crate) mod listeners;

#[cfg(not(loom))]
pub use collector::{CollectorEntry, ObjectFn, ReadyFn, TraceFn};
#[cfg(not(loom))]
pub(crate) use entry::{ClassEntry, Found, Geometry};

/// A cell whose object has ended, and the slot that comes with it: the token a class's
/// [returned list](crate::Arena::drain_returned) holds for its owner.
///
/// Whoever holds the token owns the cell (uninitialised memory) and its vacant slot. Hand it
/// back with [`Arena::recycle`](crate::Arena::recycle) to make the slot available for new
/// objects; a dropped token just leaves the slot unused (never reused, never unsafe).
#[derive(Debug)]
#[must_use = "a dropped FreedCell is never reused; hand it to Arena::recycle"]
pub struct FreedCell {
    pub(crate) class: ClassId,
    pub(crate) slot: u32,
    pub(crate) cell: NonNull<u8>,
}

// SAFETY: the token carries the address of memory whose ownership it represents; sending
// it to another thread (a precreation worker) moves that ownership.
unsafe impl Send for FreedCell {}

impl FreedCell {
    /// The class the cell belongs to.
    #[inline]
    pub fn class(&self) -> ClassId {
        self.class
    }

    /// The slot index that belongs to the cell.
    #[inline]
    pub fn slot(&self) -> u32 {
        self.slot
    }

    /// The cell: uninitialised memory of the class's layout, owned by the token's holder.
    #[inline]
    pub fn cell(&self) -> NonNull<u8> {
        self.cell
    }
}

#[cfg(loom)]
impl FreedCell {
    /// A token over memory of the caller's own, for the loom models of the pools (the
    /// arena that hands out real tokens is not built under loom).
    #[doc(hidden)]
    pub fn for_model(slot: u32, cell: NonNull<u8>) -> Self {
        Self { class: ClassId::from_index(0), slot, cell }
    }
}

/// A [`FreedCell`] in four bytes: the cell's number in its class. The cell's address and
/// its slot are arithmetic on that number (a class's cells and slots are laid out in step),
/// so a holder of thousands of cells — a pool's ready objects, in its magazines — keeps
/// them this way and asks the class's [`CellMap`] for the address or the full token.
///
/// Like a `FreedCell`, the token is the ownership of its cell (and the cell's object, in a
/// pool's magazine): it is neither `Copy` nor `Clone`.
#[cfg(not(loom))]
#[derive(Debug, PartialEq, Eq)]
#[must_use = "a dropped CompactCell is never reused; expand it and hand it to Arena::recycle"]
pub struct CompactCell(u32);

#[cfg(not(loom))]
impl CompactCell {
    /// The top bit: the cell still holds an ended object (a [`Freed::Occupied`] cell).
    const OCCUPIED: u32 = 1 << 31;

    /// The token of cell number `n` (below 2³¹: a class of a [`CellMap`]).
    #[inline(always)]
    pub(crate) fn from_number(n: u32) -> Self {
        debug_assert!(n & Self::OCCUPIED == 0, "cell number {n} beyond a compact token's range");
        Self(n)
    }

    /// The cell's number in its class (cell `n` of the class's `n / cells_per_slab`th slab
    /// in address order).
    #[inline]
    pub fn number(&self) -> u32 {
        self.0 & !Self::OCCUPIED
    }

    /// Whether the cell still holds an object that ended undropped ([`Freed::Occupied`],
    /// compacted by [`CellMap::compact_occupied`]): its holder drops it before reusing the
    /// cell.
    #[inline]
    pub fn is_occupied(&self) -> bool {
        self.0 & Self::OCCUPIED != 0
    }

    /// The token once its holder has dropped the object an occupied cell held (a no-op
    /// for a vacant one). Called without that drop, it leaks the object, never more.
    #[inline]
    pub fn vacated(self) -> Self {
        Self(self.number())
    }
}

/// Where one class's cells and slots are: turns [`CompactCell`]s into addresses and back
/// into [`FreedCell`]s, on any thread (a pool's workers build objects by it). Made by
/// [`Arena::cell_map`](crate::Arena::cell_map); a plain copyable value that stays valid as
/// long as the arena that made it.
#[cfg(not(loom))]
#[derive(Clone, Copy, Debug)]
pub struct CellMap {
    range: NonNull<crate::table::Range>,
    class: ClassId,
}

// SAFETY: the map reads its range (boxed by the arena's table, never moved or written after
// set-up but for atomics) only to compute addresses; it owns nothing.
#[cfg(not(loom))]
unsafe impl Send for CellMap {}
// SAFETY: as above.
#[cfg(not(loom))]
unsafe impl Sync for CellMap {}

#[cfg(not(loom))]
impl CellMap {
    pub(crate) fn new(range: NonNull<crate::table::Range>, class: ClassId) -> Self {
        Self { range, class }
    }

    /// The class whose cells the map places.
    #[inline]
    pub fn class(&self) -> ClassId {
        self.class
    }

    /// `token` in four bytes. Gives the token back if its cell is not one of this map's
    /// class.
    #[inline]
    pub fn compact(&self, token: FreedCell) -> Result<CompactCell, FreedCell> {
        // SAFETY: the map is only made for a live arena's range; reading `start` is plain.
        let start = unsafe { self.range.as_ref() }.start;
        match token.slot.checked_sub(start) {
            // `Arena::cell_map` maps only classes of fewer than 2³¹ cells.
            Some(n) if token.class == self.class => Ok(CompactCell(n)),
            _ => Err(token),
        }
    }

    /// [`compact`](Self::compact) for the token of a [`Freed::Occupied`] cell, which still
    /// holds its ended object: the compact token says so ([`CompactCell::is_occupied`]).
    #[inline]
    pub fn compact_occupied(&self, token: FreedCell) -> Result<CompactCell, FreedCell> {
        self.compact(token).map(|cell| CompactCell(cell.0 | CompactCell::OCCUPIED))
    }

    /// The address of `cell`.
    ///
    /// # Safety
    /// The arena that made this map is alive, and `cell` came from this map's (or a copy's)
    /// [`compact`](Self::compact).
    #[inline]
    pub unsafe fn cell(&self, cell: &CompactCell) -> NonNull<u8> {
        // SAFETY: the caller's contract: the range is alive, and the number is a cell of a
        // slab the class was granted (it came from a token of the class), so it has an
        // address.
        unsafe { self.range.as_ref().cell(cell.number()).unwrap_unchecked() }
    }

    /// The full token again (of a vacant cell: drop an occupied cell's object and
    /// [`vacated`](CompactCell::vacated) it first).
    ///
    /// # Safety
    /// As [`cell`](Self::cell).
    #[inline]
    pub unsafe fn expand(&self, cell: CompactCell) -> FreedCell {
        debug_assert!(!cell.is_occupied(), "expanding a cell that still holds its object");
        // SAFETY: the caller's contract.
        let (address, range) = unsafe { (self.cell(&cell), self.range.as_ref()) };
        FreedCell { class: self.class, slot: range.start + cell.number(), cell: address }
    }
}

/// A class's ended object, as its [returned list](crate::Arena::drain_returned) holds it
/// for the class's owner.
///
/// Nearly always [`Freed::Cell`]: the cell and its slot, to rebuild or recycle. A slot
/// whose generation reached the ceiling ([`ArenaConfig::max_generation`](crate::ArenaConfig))
/// is retired instead — no handle may resolve to it again — and the list holds
/// [`Freed::Retired`], so whoever counts the class's objects (a pool's `in_use`) still sees
/// the object go. So is the slot of an object whose destructor panicked.
#[derive(Debug)]
#[must_use = "a dropped Freed::Cell is never reused; hand it to Arena::recycle"]
pub enum Freed {
    /// The object ended (for the reason given) and its cell is the owner's to rebuild or
    /// [recycle](crate::Arena::recycle).
    Cell(FreedCell, Ended),
    /// The object ended (for the reason given) but was not dropped: the cell still holds
    /// it. Only a class whose cells are [`EndedCells::ReturnedUndropped`] returns this: the
    /// owner must drop the object — as the class's type, exactly once, on any thread —
    /// before it reuses or recycles the cell (a pool's worker does it in the pass that
    /// rebuilds the cell). A token dropped without that leaks the object, never more.
    Occupied(FreedCell, Ended),
    /// The object ended and its slot was retired for good: there is no cell to take back.
    Retired {
        /// The object's class.
        class: ClassId,
        /// The retired slot.
        slot: u32,
        /// Why the object ended.
        ended: Ended,
    },
}

/// Where a class's cells go when their objects end ([`Arena::set_ended_cells`](crate::Arena::set_ended_cells)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum EndedCells {
    /// Vacant, on the class's vacant list, for its next insert: the default.
    #[default]
    Vacant,
    /// Onto the class's returned list, each as a [`Freed`], for the class's owner (a pool)
    /// to take with [`Arena::drain_returned`](crate::Arena::drain_returned) and give back
    /// with `recycle` or `activate` when it is done with the cell. The slot is
    /// [`Lent`](crate::Lifecycle::Lent) meanwhile.
    Returned,
    /// As `Returned`, but the object is not dropped: it comes back [`Freed::Occupied`] and
    /// its owner drops it, on any thread (a pool's worker as it rebuilds the cell, the
    /// collector's purge thread). A slot retired at the ceiling drops its object here all
    /// the same.
    ReturnedUndropped,
}

/// Why an object ended: returned with the cell, so that whoever
/// counts (a pool's `recycled_purge` and `recycled_gc`) needs no state of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Ended {
    /// Moved out or ended by hand through the arena ([`Arena::remove`](crate::Arena::remove),
    /// [`Arena::destroy`](crate::Arena::destroy)).
    Removed,
    /// Destroyed at once, without a mark (the collector's `destroy_now`: a pool's `Purge`).
    DestroyedNow,
    /// Purged by the collector after a mark found it unreachable or garbage.
    Collected,
}

impl Freed {
    /// Why the object ended.
    #[inline]
    pub fn ended(&self) -> Ended {
        match self {
            Freed::Cell(_, ended) | Freed::Occupied(_, ended) | Freed::Retired { ended, .. } => *ended,
        }
    }

    /// The class of the object that ended.
    #[inline]
    pub fn class(&self) -> ClassId {
        match self {
            Freed::Cell(cell, _) | Freed::Occupied(cell, _) => cell.class,
            Freed::Retired { class, .. } => *class,
        }
    }

    /// The freed cell, if the slot was not retired and the cell holds no object (a
    /// [`Freed::Occupied`] cell's object must be dropped first: match on it).
    #[inline]
    pub fn into_cell(self) -> Option<FreedCell> {
        match self {
            Freed::Cell(cell, _) => Some(cell),
            Freed::Occupied(..) | Freed::Retired { .. } => None,
        }
    }
}
