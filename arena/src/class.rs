//! Per-class storage: the class's slabs, live bitmap, vacant slots, kept objects and
//! returned cells.

use std::any::TypeId;
use std::fmt;
use std::ptr::NonNull;

use respawn_allocator::ClassId;

#[cfg(not(loom))]
pub(crate) mod dormancy;
#[cfg(not(loom))]
pub(crate) mod listeners;

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
    /// with `recycle` or `adopt` when it is done with the cell. The slot is
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

/// One class's storage. Type-erased; [`ClassStore`](crate::ClassStore) is its typed view.
pub(crate) struct ClassEntry {
    pub(crate) id: ClassId,
    pub(crate) type_id: TypeId,
    pub(crate) name: &'static str,
    /// `size_of::<T>()`, for the stats' overhead figure.
    pub(crate) object_size: usize,
    pub(crate) cell_size: usize,
    /// `log2(cells_per_slab)`: a cell number is `slab << shift | cell`.
    pub(crate) shift: u32,
    pub(crate) drop_fn: Option<unsafe fn(*mut u8)>,
    /// First cell of each slab the class owns, by the slab's index in its reservation
    /// (address order); null for an index not granted to us yet.
    pub(crate) bases: Vec<*mut u8>,
    /// The class's range of the object table: slot `start + n` belongs to cell number `n`.
    #[cfg(not(loom))]
    pub(crate) range: NonNull<crate::table::Range>,
    /// The range's first slot index.
    pub(crate) start: u32,
    /// Slots in the range: cell numbers run below it.
    pub(crate) capacity: u32,
    /// The range's geometry, copied here so the typed paths compute a slot and a cell from
    /// the entry alone, without a pointer chase.
    #[cfg(not(loom))]
    pub(crate) at: crate::table::Addressing,
    /// One bit per cell number: set while the cell holds an object that is visible
    /// (constructed, not garbage, not in its pool). `tick` and `iter` walk these words.
    pub(crate) live: Vec<u64>,
    /// One bit per cell number, set while the cell's object is dormant: `tick` walks
    /// `live & !dormant` ([`Arena::set_dormant`](crate::Arena::set_dormant)).
    #[cfg(not(loom))]
    pub(crate) dormancy: dormancy::Dormancy,
    /// Vacant slots, reused last in first out (the warmest cell first).
    pub(crate) free: Vec<u32>,
    /// Released objects the class keeps for its next spawns, reset and still in their cells
    /// (a `Reuse` pool's stock): their cell numbers, the most recent last, each slot
    /// [`InPool`](crate::Lifecycle::InPool) and a generation on, so no handle reaches them.
    /// The arena owns them: [`ClassStore::reuse`](crate::ClassStore::reuse) makes one live
    /// again, and the arena drops those nobody took.
    pub(crate) kept: Vec<u32>,
    /// Whether a release may keep its object ([`Releasable::keep`](crate::Releasable::keep)):
    /// set by the class's pool while its policy is `Reuse` and it is within `max`.
    pub(crate) keeping: bool,
    /// Objects kept since the class was registered.
    pub(crate) kept_total: u64,
    /// Cells of the slabs granted to the class. Each is, at any time, exactly one of: live
    /// (its slot holds an object, visible or hidden), vacant (on `free`), kept (on `kept`),
    /// out (a token for it is on the returned list or held by a pool or a worker: `out`) or retired —
    /// so the class's
    /// object count is derived ([`len`](Self::len)) and the hot insert and remove, which
    /// move a cell between live and vacant, count nothing.
    pub(crate) granted: usize,
    /// Cells whose tokens are out: taken (`take_cell`), stowed, or returned,
    /// and not yet adopted or recycled (a dropped token stays out for good).
    pub(crate) out: usize,
    /// Slots retired: the generation ceiling, or a panicking destructor. (A count of slots
    /// fits a `u32`, as a slot index does.)
    pub(crate) retired: u32,
    /// Slabs whose pages a trim gave back ([`Arena::decommit_empty_slabs`](crate::Arena::decommit_empty_slabs)),
    /// highest index first: still the class's (bases, slots and generations kept), but
    /// their cells are off `free` and out of `granted`. `grow` commits the last one (the
    /// lowest) again before it takes a new slab.
    pub(crate) decommitted: Vec<u32>,
    /// Permanent objects of the class (outside its slabs).
    pub(crate) permanent: u32,
    /// Where the class's cells go when their objects end.
    pub(crate) ended_cells: EndedCells,
    /// Cells whose objects ended, waiting for the class's owner
    /// ([`Arena::drain_returned`](crate::Arena::drain_returned)); empty unless the class's
    /// cells are [`EndedCells::Returned`] or `ReturnedUndropped`.
    pub(crate) returned: Vec<Freed>,
    /// What a release must stop for beyond the object's own flags and generation, as
    /// [`Hooks`] bits: returned cells, end listeners, dormant objects. Kept in step with
    /// them by [`sync_hooks`](Self::sync_hooks), so that a release of a class with none —
    /// nearly every release — tests one byte instead of three fields.
    pub(crate) hooks: u8,
    /// The generation ceiling ([`ArenaConfig::max_generation`](crate::ArenaConfig)), copied
    /// here so that the typed paths find everything they test in the entry.
    pub(crate) max_generation: u32,
    /// Closures told of each object's end ([`Arena::add_end_listener`](crate::Arena::add_end_listener));
    /// empty for most classes, and then a release tests it and goes on.
    #[cfg(not(loom))]
    pub(crate) ends: listeners::EndListeners,
    /// Whether the collector's write barrier notes this class's objects when they are made
    /// live or lent mutably (an incremental mark is running and the class is traced): see
    /// [`Arena::set_barrier`](crate::Arena::set_barrier).
    pub(crate) barrier: bool,
    /// What the barrier noted since the collector last drained it, as slot indices: each
    /// an object made live, lent mutably, rooted, re-flagged or given an owner.
    pub(crate) noted: Vec<u32>,
    /// Every live object of the class was lent mutably (`tick`, `par_tick`, `retain`)
    /// since the collector last drained the barrier.
    pub(crate) noted_all: bool,
}

/// The bits of [`ClassEntry::hooks`].
pub(crate) struct Hooks;

impl Hooks {
    /// The class's ended cells are returned to its owner, not put on the vacant list.
    pub(crate) const RETURNED: u8 = 1;
    /// The class has end listeners, told before a release changes anything.
    pub(crate) const LISTENING: u8 = 2;
    /// Some object of the class is dormant: a release wakes its cell.
    pub(crate) const DORMANT: u8 = 4;
    /// What a release in place ([`stow`](crate::ClassStore::stow), a destroy) stops for.
    pub(crate) const RELEASE: u8 = Self::LISTENING | Self::DORMANT;
}

impl ClassEntry {
    /// The [`hooks`](Self::hooks) the class's returned cells, listeners and dormancy call
    /// for now.
    pub(crate) fn hooks_now(&self) -> u8 {
        let mut hooks = 0;
        if self.ended_cells != EndedCells::Vacant {
            hooks |= Hooks::RETURNED;
        }
        #[cfg(not(loom))]
        if self.ends.listening() {
            hooks |= Hooks::LISTENING;
        }
        #[cfg(not(loom))]
        if self.dormancy.any() {
            hooks |= Hooks::DORMANT;
        }
        hooks
    }

    /// Hands every kept object out as a compact token ([`ClassStore::take_kept`](crate::ClassStore::take_kept)).
    #[cfg(not(loom))]
    pub(crate) fn take_kept(&mut self) -> Vec<crate::CompactCell> {
        self.out += self.kept.len();
        self.kept.drain(..).map(crate::CompactCell::from_number).collect()
    }

    /// Brings [`hooks`](Self::hooks) in step: called wherever the ended cells' way, an end listener or a
    /// dormant object comes or goes.
    pub(crate) fn sync_hooks(&mut self) {
        self.hooks = self.hooks_now();
    }

    #[inline]
    pub(crate) fn cells_per_slab(&self) -> usize {
        1 << self.shift
    }

    /// The class's range of the object table.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn range(&self) -> &crate::table::Range {
        // SAFETY: the range belongs to the arena's table, which outlives the entry.
        unsafe { self.range.as_ref() }
    }

    /// The cell numbered `n` (which must lie in a slab the class owns): arithmetic.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn cell_ptr(&self, n: u32) -> *mut u8 {
        self.cell_ptr_sized(n, self.cell_size)
    }

    /// [`cell_ptr`](Self::cell_ptr) for a typed caller, whose `size_of::<T>()` is the cell
    /// size (a cell is the class's layout padded to its alignment, which a Rust type's size
    /// already is): the multiply becomes a constant.
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn cell_of<T>(&self, n: u32) -> *mut u8 {
        self.cell_ptr_sized(n, std::mem::size_of::<T>())
    }

    #[cfg(not(loom))]
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
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn slot(&self, n: u32) -> &crate::table::Slot {
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
    #[cfg(not(loom))]
    #[inline(always)]
    pub(crate) fn try_slot(&self, n: u32) -> Option<&crate::table::Slot> {
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

    /// Objects in the class's cells whose slots are live (visible or hidden, not vacant).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.granted - self.free.len() - self.kept.len() - self.out - self.retired as usize
    }

    #[inline]
    pub(crate) fn is_live(&self, n: u32) -> bool {
        self.live[(n >> 6) as usize] & (1u64 << (n & 63)) != 0
    }

    /// Notes slot `index` for the collector's write barrier (the caller checked that it
    /// is on, or that the note must be taken whatever the class: a root, an owner, flags).
    #[cold]
    #[inline(never)]
    pub(crate) fn note(&mut self, index: u32) {
        self.noted.push(index);
    }

    /// Notes every live object of the class, if the barrier is on for it: a `tick` lends
    /// them all at once, and one flag says so more cheaply than a note each.
    #[inline]
    pub(crate) fn note_all(&mut self) {
        if self.barrier {
            self.noted_all = true;
        }
    }

    /// Sets or clears cell `n`'s live bit. `n` lies in a slab the class owns, whose words
    /// `grow` added to the bitmap.
    #[inline(always)]
    pub(crate) fn set_live(&mut self, n: u32, live: bool) {
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

impl fmt::Debug for ClassEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassEntry")
            .field("id", &self.id)
            .field("name", &self.name)
            .field("len", &self.len())
            .field("free", &self.free.len())
            .finish()
    }
}
