//! The object table (UE's `FUObjectArray`): every object's slot, in one index space split
//! into a range per class, so that a handle gives its slot *and* its cell by arithmetic.

use std::fmt;
use std::num::NonZeroU32;
#[cfg(not(loom))]
use std::ptr::NonNull;

#[cfg(not(loom))]
use respawn_allocator::sync::{AtomicPtr, AtomicU64};
use respawn_allocator::sync::{AtomicU16, AtomicU32, Ordering};
#[cfg(not(loom))]
use respawn_allocator::SideRegion;

#[cfg(not(loom))]
use crate::RawHandle;
use crate::{ArenaError, Lifecycle, ObjectFlags};

/// The index space is handed out in blocks of this many slots (1 Mi): a class's range is a
/// whole number of blocks, and the table's directory has one entry per block.
pub const BLOCK_SLOTS: usize = 1 << BLOCK_SHIFT;
const BLOCK_SHIFT: u32 = 20;
#[cfg(not(loom))]
const MAX_BLOCKS: usize = 1 << (32 - BLOCK_SHIFT);
/// "No slot": the value of `outer` when unset. Never a slot index.
pub const NONE: u32 = u32::MAX;
/// Slots of the permanent pool's range (one block): objects that live until the arena drops.
#[cfg(not(loom))]
pub(crate) const PERMANENT_SLOTS: u32 = BLOCK_SLOTS as u32;

/// One object's hot bookkeeping: 16 bytes, a quarter of a cache line.
///
/// Every field is atomic because the table is shared (by [`Root`](crate::Root) guards and by
/// the collector's parallel mark) while the arena mutates it; the arena itself writes only
/// under `&mut Arena`, so plain `Relaxed` stores suffice for everything but the flag word and
/// the root count, which other threads update.
///
/// | field | written by | ordering | read by |
/// |---|---|---|---|
/// | `generation` | the arena (`occupy`, `vacate`) | Release | handle checks, after the flags |
/// | `flags` | the arena (the [`Lifecycle`] field); the collector's mark (`MAYBE_UNREACHABLE`, one task a slot); `insert_flags` from any thread | Release / AcqRel | everyone, Acquire |
/// | `class` | the arena, when the slot is set up | Relaxed | the collector, type checks |
/// | `outer` | the arena (`set_outer`, release) | Relaxed | the mark (a child reaches its owner) |
/// | `root_count` | [`Root`](crate::Root) guards, any thread | AcqRel | release checks, the mark |
///
/// The cell is not stored: it is computed from the slot's index (see [`ObjectTable`]).
/// Cold data lives apart: sub-object lists in the arena, cluster membership in the
/// collector.
///
/// An object's life in its slot, as a reader on another thread sees it:
///
/// ```text
///   writer (the arena)                         reader (check a handle of generation g)
///   occupy:  flags = Live          (Release)   flags   (Acquire)  vacant?         → stale
///   vacate:  flags = Vacant        (Release)   generation         ≠ g?            → stale
///            generation = g + 1    (Release)   else the object of generation g
///   occupy:  flags = Live          (Release)
/// ```
///
/// The reader loads the flags first: if it sees the second `occupy`, the generation bump
/// before it is visible too, so a handle of generation `g` cannot pass for the new object.
/// (Generation first would let a stale generation pair with the new object's flags.) The
/// loom model `slot_handoff` in this module checks this. A slot never set up reads as all
/// zeros: generation 0, which no handle carries.
#[repr(C, align(16))]
pub struct Slot {
    /// Bumped on every release; a handle resolves only if it carries this generation.
    pub(crate) generation: AtomicU32,
    /// [`ObjectFlags`] bits.
    pub(crate) flags: AtomicU16,
    /// The class (allocator class index).
    pub(crate) class: AtomicU16,
    /// Slot index of the owner (UE's Outer), or [`NONE`].
    pub(crate) outer: AtomicU32,
    /// Live [`Root`](crate::Root) guards.
    pub(crate) root_count: AtomicU32,
}

#[cfg(not(loom))] // loom's atomics are larger
const _: () = assert!(std::mem::size_of::<Slot>() == 16);

impl Slot {
    /// The current generation.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation.load(Ordering::Acquire)
    }

    /// The object's flags if a handle of `generation` names the object in the slot now
    /// (not vacant), else [`ArenaError::Stale`]. Reads the flags before the generation (see
    /// the type's docs), so it is exact even while the arena moves the slot on.
    #[inline]
    pub fn check(&self, generation: NonZeroU32) -> Result<ObjectFlags, ArenaError> {
        match self.check_flags(generation) {
            Some(flags) => Ok(flags),
            None => Err(ArenaError::Stale),
        }
    }

    /// [`check`](Self::check) without an error value: `None` for a stale handle.
    #[inline(always)]
    pub fn check_flags(&self, generation: NonZeroU32) -> Option<ObjectFlags> {
        self.check_without(generation, ObjectFlags::VACANT)
    }

    /// The object's flags if a handle of `generation` names it and it has none of `refused`
    /// (which holds `VACANT`): one flag test and one generation compare, in the order
    /// [`check`](Self::check) explains. The typed paths refuse `HIDDEN`, and a release
    /// `ROOT_SET` with it.
    #[inline(always)]
    pub fn check_without(&self, generation: NonZeroU32, refused: ObjectFlags) -> Option<ObjectFlags> {
        debug_assert!(refused.contains(ObjectFlags::VACANT), "a vacant slot's generation names no object");
        let flags = self.flags();
        if flags.intersects(refused) || self.generation.load(Ordering::Relaxed) != generation.get() {
            return None;
        }
        Some(flags)
    }

    /// Makes the object just placed in the slot visible (flags cleared) and returns the
    /// generation its handles carry. The arena calls this under `&mut Arena`.
    #[inline]
    pub(crate) fn occupy(&self) -> NonZeroU32 {
        self.flags.store(0, Ordering::Release);
        // Only the writer changes the generation, so its own last store is what it reads.
        let generation = self.generation.load(Ordering::Relaxed);
        debug_assert!(generation != 0, "slot occupied before the arena set it up");
        // SAFETY: generations start at 1 and only grow (a slot retires at the ceiling).
        unsafe { NonZeroU32::new_unchecked(generation) }
    }

    /// Ends the slot's object of `generation` (the generation its handle carried, which the
    /// caller checked) for every handle: puts it in the vacant `state` (`Vacant`, `Lent` for
    /// a returned cell, `InPool` for a deactivated one) and moves it to the next
    /// generation. The flag store comes first, as the reader in [`check`](Self::check)
    /// expects. Below the generation ceiling only: at it, the arena [`retire`](Self::retire)s
    /// the slot instead.
    #[inline(always)]
    pub(crate) fn vacate(&self, generation: u32, state: Lifecycle) {
        debug_assert_eq!(generation, self.generation.load(Ordering::Relaxed), "vacating another generation");
        debug_assert!(state.is_vacant() && state != Lifecycle::Retired, "vacate to {state:?}");
        debug_assert!(generation < u32::MAX, "vacating a slot at the generation ceiling");
        self.flags.store(state.flags().bits(), Ordering::Release);
        self.generation.store(generation + 1, Ordering::Release);
    }

    /// Ends the slot's object for every handle and for good: `Retired` (no owner or pool
    /// owns its cell) at the generation it has, which no later handle carries. The arena
    /// does this at the generation ceiling, where the next generation would wrap.
    #[cold]
    pub(crate) fn retire(&self) {
        self.flags.store(Lifecycle::Retired.flags().bits(), Ordering::Release);
    }

    /// Moves the object's lifecycle to `state`, keeping its other flags. The arena calls
    /// this under `&mut Arena` (no other thread writes the field).
    #[inline]
    pub(crate) fn set_lifecycle(&self, state: Lifecycle) {
        let flags = self.flags().with_lifecycle(state);
        self.flags.store(flags.bits(), Ordering::Release);
    }

    /// Sets the slot up for its cell's first object: vacant, generation 1, no owner.
    #[inline]
    pub(crate) fn set_up(&self, class: u16, flags: ObjectFlags) {
        self.generation.store(1, Ordering::Relaxed);
        self.class.store(class, Ordering::Relaxed);
        self.outer.store(NONE, Ordering::Relaxed);
        self.flags.store(flags.bits(), Ordering::Release);
    }

    /// Adds a [`Root`](crate::Root) guard's count. Any thread.
    #[inline]
    pub(crate) fn add_root(&self) {
        self.root_count.fetch_add(1, Ordering::AcqRel);
    }

    /// Takes a guard's count away; returns the count before. Any thread. The arena may
    /// release the object once it reads zero, so this is the guard's last touch of the slot.
    #[inline]
    pub(crate) fn drop_root(&self) -> u32 {
        self.root_count.fetch_sub(1, Ordering::AcqRel)
    }

    /// The flag word.
    #[inline(always)]
    pub fn flags(&self) -> ObjectFlags {
        ObjectFlags::from_bits_retain(self.flags.load(Ordering::Acquire))
    }

    /// Atomically sets `flags` and returns the flags before. The arena's own flags
    /// ([`ObjectFlags::MEMBERSHIP`]) cannot be set here: they go through
    /// [`Arena::set_flags`](crate::Arena::set_flags), which keeps the live bitmaps in step.
    #[inline]
    pub fn insert_flags(&self, flags: ObjectFlags) -> ObjectFlags {
        debug_assert!(!flags.intersects(ObjectFlags::MEMBERSHIP), "membership flags need &mut Arena");
        let bits = flags.difference(ObjectFlags::MEMBERSHIP).bits();
        ObjectFlags::from_bits_retain(self.flags.fetch_or(bits, Ordering::AcqRel))
    }

    /// Atomically clears `flags` and returns the flags before; membership flags are left
    /// alone, as in [`insert_flags`](Self::insert_flags).
    #[inline]
    pub fn remove_flags(&self, flags: ObjectFlags) -> ObjectFlags {
        debug_assert!(!flags.intersects(ObjectFlags::MEMBERSHIP), "membership flags need &mut Arena");
        let bits = flags.difference(ObjectFlags::MEMBERSHIP).bits();
        ObjectFlags::from_bits_retain(self.flags.fetch_and(!bits, Ordering::AcqRel))
    }

    /// Replaces the caller's flags with `flags` by a plain load and store, leaving the
    /// arena's own ([`ObjectFlags::MEMBERSHIP`]) as they are. For a caller that is the only
    /// writer of this slot's flags for the time being (the collector's mark, which holds
    /// `&mut Arena` and gives each slot to one task) and wants to spare the atomic
    /// read-modify-write. With another writer about, an update could be lost (never a
    /// memory error).
    #[inline]
    pub fn overwrite_flags(&self, flags: ObjectFlags) {
        let current = self.flags.load(Ordering::Relaxed);
        let kept = current & ObjectFlags::MEMBERSHIP.bits();
        self.flags.store(kept | flags.difference(ObjectFlags::MEMBERSHIP).bits(), Ordering::Release);
    }

    /// The class index of the object in the slot (or of the last one).
    #[inline]
    pub fn class(&self) -> u16 {
        self.class.load(Ordering::Relaxed)
    }

    /// Slot index of the object's owner, if it has one.
    #[inline]
    pub fn outer(&self) -> Option<u32> {
        Some(self.outer.load(Ordering::Relaxed)).filter(|&o| o != NONE)
    }

    /// Live [`Root`](crate::Root) guards of the object.
    #[inline]
    pub fn root_count(&self) -> u32 {
        self.root_count.load(Ordering::Acquire)
    }

    /// Whether the object is a root: manually ([`ObjectFlags::ROOT_SET`]) or by a guard.
    #[inline]
    pub fn is_rooted(&self) -> bool {
        self.flags().contains(ObjectFlags::ROOT_SET) || self.root_count() > 0
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("generation", &self.generation())
            .field("flags", &self.flags())
            .field("class", &self.class())
            .field("outer", &self.outer())
            .field("root_count", &self.root_count())
            .finish()
    }
}

/// Where a class's cells are: a cell number `n` is cell `n & mask` of slab `n >> shift`.
#[cfg(not(loom))]
pub(crate) struct Cells {
    pub(crate) cell_size: usize,
    /// Bytes from one slab to the next (under Miri, slabs are apart).
    #[cfg(not(miri))]
    pub(crate) stride: usize,
    /// The class's reservation: slab `s` starts at `base + s × stride`.
    #[cfg(not(miri))]
    pub(crate) base: NonNull<u8>,
    /// Under Miri each slab is its own allocation: its base, null until granted.
    #[cfg(miri)]
    pub(crate) bases: Box<[AtomicPtr<u8>]>,
}

/// One range of the index space: a class's slots (slot `start + n` belongs to the class's
/// cell number `n`, for life), or the permanent pool's.
///
/// ```text
///   index:  start ─────────────── start + n ──────────────── start + capacity
///   slots:  side region, 16 B each: slots + n × 16          (committed as slabs are granted)
///   cells:  class reservation:      base + (n >> shift) × stride + (n & mask) × cell_size
/// ```
#[cfg(not(loom))]
pub(crate) struct Range {
    /// First slot index.
    pub(crate) start: u32,
    /// Slots in the range (the class's `max_slabs × cells_per_slab`).
    pub(crate) capacity: u32,
    /// `log2` of the slots per block (the class's cells per slab).
    pub(crate) shift: u32,
    /// The slots, committed block by block.
    slots: SideRegion,
    /// Native: the first slot (`slots + n` is slot `n`).
    #[cfg(not(miri))]
    slot_base: NonNull<Slot>,
    /// The class's cells; `None` for the permanent range.
    pub(crate) cells: Option<Cells>,
    /// The permanent range's cells, one pointer per slot (they live in the permanent pool,
    /// wherever its bump cursor put them); `None` for a class range.
    pinned: Option<SideRegion>,
    /// The class of a class range; `u16::MAX` for the permanent range (its slots say).
    pub(crate) class: u16,
    /// One bit per block: set once the block's slots are set up. Read by the collector's
    /// walks and the arena's drop.
    set_up: Box<[AtomicU64]>,
    /// Slots set up in the range (the permanent range fills front to back).
    len: AtomicU32,
}

// SAFETY: the pointers are addresses inside memory the range (or its arena's allocator)
// owns; they are only used to compute addresses.
#[cfg(not(loom))]
unsafe impl Send for Range {}
// SAFETY: as above; shared access only reads the pointers.
#[cfg(not(loom))]
unsafe impl Sync for Range {}

#[cfg(not(loom))]
impl Range {
    /// Slot `n` of the range (`n < capacity`). Native: arithmetic only.
    ///
    /// # Safety
    /// `n < capacity`, and under Miri `n`'s block is committed.
    #[inline(always)]
    pub(crate) unsafe fn slot(&self, n: u32) -> &Slot {
        // SAFETY: the caller's `n` is in the range (and committed): a valid, live `Slot`.
        unsafe { &*self.slot_ptr(n) }
    }

    /// A raw pointer to slot `n`, with the provenance of its whole block (a slice of a
    /// block's slots is built from it).
    ///
    /// # Safety
    /// As [`slot`](Self::slot).
    #[inline(always)]
    unsafe fn slot_ptr(&self, n: u32) -> *const Slot {
        debug_assert!(n < self.capacity, "slot {n} beyond a range of {}", self.capacity);
        #[cfg(not(miri))]
        {
            // SAFETY: `n < capacity` keeps it inside the side region, zero-filled memory that
            // is a valid `Slot` (all atomics) and lives as long as the range.
            unsafe { self.slot_base.as_ptr().add(n as usize) }
        }
        #[cfg(miri)]
        {
            let block = self.slots.block_ptr((n >> self.shift) as usize).expect("slot block committed");
            let i = n as usize & ((1 << self.shift) - 1);
            // SAFETY: a committed block of zeroed, 16-byte-aligned slots; `i` is inside it.
            unsafe { block.cast::<Slot>().as_ptr().add(i) }
        }
    }

    /// Slot `n`, if `n` is in the range and its block was set up.
    #[inline]
    pub(crate) fn try_slot(&self, n: u32) -> Option<&Slot> {
        if n >= self.capacity {
            return None;
        }
        #[cfg(miri)]
        if !self.is_set_up(n >> self.shift) {
            return None;
        }
        // SAFETY: checked just now (natively any slot of the range reads as zeros or real).
        Some(unsafe { self.slot(n) })
    }

    /// Cell number `n`'s address (a class range's; `n < capacity`). Native: arithmetic only.
    #[inline(always)]
    pub(crate) fn cell(&self, n: u32) -> Option<NonNull<u8>> {
        let Some(cells) = self.cells.as_ref() else { return self.pinned_cell(n) };
        let (slab, i) = ((n >> self.shift) as usize, n as usize & ((1 << self.shift) - 1));
        #[cfg(not(miri))]
        {
            Some(cells.base.as_ptr().wrapping_add(slab * cells.stride + i * cells.cell_size))
                // SAFETY: the reservation's base is non-null and the offset stays inside it.
                .map(|p| unsafe { NonNull::new_unchecked(p) })
        }
        #[cfg(miri)]
        {
            let base = NonNull::new(cells.bases.get(slab)?.load(Ordering::Acquire))?;
            // SAFETY: `i < cells_per_slab`, inside the slab's allocation.
            Some(unsafe { base.add(i * cells.cell_size) })
        }
    }

    #[cold]
    fn pinned_cell(&self, n: u32) -> Option<NonNull<u8>> {
        let block = self.pinned.as_ref()?.block_ptr((n >> self.shift) as usize)?;
        let i = n as usize & ((1 << self.shift) - 1);
        // SAFETY: a committed block of zeroed pointer-sized atomics; `i` is inside it.
        let p = unsafe { &*block.cast::<AtomicPtr<u8>>().as_ptr().add(i) };
        NonNull::new(p.load(Ordering::Acquire))
    }

    fn is_set_up(&self, block: u32) -> bool {
        self.set_up[(block / 64) as usize].load(Ordering::Acquire) & (1 << (block % 64)) != 0
    }

    /// Slots per block.
    #[inline]
    pub(crate) fn block_slots(&self) -> u32 {
        1 << self.shift
    }

    /// The range's addressing, for its class's entry.
    #[cfg(not(miri))]
    pub(crate) fn addressing(&self) -> Addressing {
        let cells = self.cells.as_ref().expect("a class range has cells");
        Addressing { slots: self.slot_base, cells: cells.base, gap: cells.stride - (cells.cell_size << self.shift) }
    }
}

/// Where cell number `n`'s slot and cell are, natively: `slots + n` and
/// `cells + (n >> shift) × stride + (n & mask) × cell_size`, computed as
/// `cells + n × cell_size + (n >> shift) × gap`. (Under Miri slabs and slot
/// blocks are separate allocations, and the entry asks its range.)
#[cfg(not(any(loom, miri)))]
#[derive(Clone, Copy, Debug)]
pub(crate) struct Addressing {
    pub(crate) slots: NonNull<Slot>,
    pub(crate) cells: NonNull<u8>,
    /// Bytes a slab spans beyond its cells (`stride − cells_per_slab × cell_size`: the
    /// rounding up to a page; zero for a 64-byte class).
    pub(crate) gap: usize,
}

/// Every object's slot, in one index space of 2³² − 1 slots split into ranges: one per
/// class, reserved when the class registers (its `max_slabs × cells_per_slab` cells), and
/// one for the permanent pool. Slot memory is a zero-filled reservation per range whose
/// pages the OS commits as the class's slabs are granted; nothing ever moves, so a
/// `&Slot` stays valid for the table's life and readers need no lock.
///
/// ```text
///   directory: [range*] one per 1 Mi indices      ranges (one per class, + permanent)
///               ├─ 0..4   ──► Projectile ──► slots ┌──┬──┬──┬─ 16 B each ─┐
///               ├─ 4..8   ──► Turret               └──┴──┴──┴─────────────┘
///               └─ 8      ──► permanent     cells  base + slab × stride + i × size
///
///   Handle { index, generation }:  range = directory[index >> 20],  n = index − start
///     slot = slots + n × 16   and   cell = base + (n >> shift) × stride + (n & mask) × size
///     — two independent loads: the slot and the object are fetched in parallel.
/// ```
///
/// A typed caller that knows its class (a [`ClassStore`](crate::ClassStore), a pool) skips
/// the directory: its range is at hand.
#[cfg(not(loom))]
pub struct ObjectTable {
    /// The range of each block of the index space, null for blocks not handed out.
    directory: Box<[AtomicPtr<Range>]>,
    /// Blocks handed out (front to back).
    blocks: AtomicU32,
    /// Slots set up over every range.
    issued: AtomicU32,
}

#[cfg(not(loom))]
impl ObjectTable {
    pub(crate) fn new() -> Self {
        Self {
            directory: (0..MAX_BLOCKS).map(|_| AtomicPtr::new(std::ptr::null_mut())).collect(),
            blocks: AtomicU32::new(0),
            issued: AtomicU32::new(0),
        }
    }

    /// Whether a range of `capacity` slots still fits in the index space.
    pub(crate) fn has_room(&self, capacity: u32) -> bool {
        let first = u64::from(self.blocks.load(Ordering::Relaxed));
        let blocks = u64::from(capacity.div_ceil(BLOCK_SLOTS as u32));
        first + blocks <= MAX_BLOCKS as u64 && (first << BLOCK_SHIFT) + u64::from(capacity) <= u64::from(NONE)
    }

    /// Reserves a range of `capacity` slots in blocks of `block_slots` (a power of two),
    /// for a class's `cells` (or, `None`, for the permanent pool). Only the owning arena
    /// calls this, under `&mut Arena`.
    pub(crate) fn add_range(
        &self,
        capacity: u32,
        block_slots: u32,
        class: u16,
        cells: Option<Cells>,
    ) -> Result<NonNull<Range>, ArenaError> {
        debug_assert!(block_slots.is_power_of_two() && capacity % block_slots == 0, "range geometry");
        let first = self.blocks.load(Ordering::Relaxed);
        let blocks = capacity.div_ceil(BLOCK_SLOTS as u32);
        let Some(end) = first.checked_add(blocks).filter(|&e| e as usize <= MAX_BLOCKS) else {
            return Err(ArenaError::TableFull);
        };
        let start = first << BLOCK_SHIFT;
        // The last index of the last block is NONE: a range may not reach it.
        if u64::from(start) + u64::from(capacity) > u64::from(NONE) {
            return Err(ArenaError::TableFull);
        }
        let block_bytes = block_slots as usize * std::mem::size_of::<Slot>();
        let os = |e| ArenaError::Alloc(respawn_allocator::AllocError::Os(e));
        let slots = SideRegion::reserve(block_bytes, (capacity / block_slots) as usize).map_err(os)?;
        let pinned = match cells {
            Some(_) => None,
            None => {
                let bytes = block_slots as usize * std::mem::size_of::<AtomicPtr<u8>>();
                Some(SideRegion::reserve(bytes, (capacity / block_slots) as usize).map_err(os)?)
            }
        };
        #[cfg(not(miri))]
        let slot_base = slots.base().expect("native side regions are contiguous").cast::<Slot>();
        let words = (capacity / block_slots).div_ceil(64) as usize;
        let range = Box::new(Range {
            start,
            capacity,
            shift: block_slots.trailing_zeros(),
            slots,
            #[cfg(not(miri))]
            slot_base,
            cells,
            pinned,
            class,
            set_up: (0..words).map(|_| AtomicU64::new(0)).collect(),
            len: AtomicU32::new(0),
        });
        let range = NonNull::from(Box::leak(range));
        for b in first..end {
            self.directory[b as usize].store(range.as_ptr(), Ordering::Release);
        }
        self.blocks.store(end, Ordering::Release);
        Ok(range)
    }

    /// Sets up block `block` of `range` (one slab's slots): commits it and gives every slot
    /// generation 1, `class` and `flags`. Returns the block's first slot index.
    ///
    /// # Safety
    /// `range` is one of this table's, the block was not set up before, and the caller is
    /// the owning arena (under `&mut Arena`).
    pub(crate) unsafe fn set_up_block(&self, range: &Range, block: u32, class: u16, flags: ObjectFlags) -> u32 {
        range.slots.commit(block as usize);
        let first = block << range.shift;
        for n in first..first + range.block_slots() {
            // SAFETY: `n` is inside the block just committed.
            unsafe { range.slot(n) }.set_up(class, flags);
        }
        range.set_up[(block / 64) as usize].fetch_or(1 << (block % 64), Ordering::Release);
        range.len.fetch_add(range.block_slots(), Ordering::Relaxed);
        self.issued.fetch_add(range.block_slots(), Ordering::Release);
        range.start + first
    }

    /// The range holding slot `index`, if handed out.
    #[inline(always)]
    pub(crate) fn range(&self, index: u32) -> Option<&Range> {
        let range = self.directory[(index >> BLOCK_SHIFT) as usize].load(Ordering::Acquire);
        // SAFETY: non-null directory entries point to ranges the table owns until it drops.
        unsafe { range.as_ref() }
    }

    /// Slots set up so far (live, vacant and retired), over every range.
    #[inline]
    pub fn len(&self) -> u32 {
        self.issued.load(Ordering::Acquire)
    }

    /// Whether no slot was set up yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slot `index`, if it lies in a range handed out. (A slot of a range whose block was
    /// never set up reads as generation 0: no handle names it.)
    #[inline]
    pub fn slot(&self, index: u32) -> Option<&Slot> {
        let range = self.range(index)?;
        range.try_slot(index.wrapping_sub(range.start))
    }

    /// The cell of slot `index`: where its object lives (or will). `None` for an index
    /// outside the class ranges (the permanent pool's objects live elsewhere).
    #[inline]
    pub fn cell(&self, index: u32) -> Option<NonNull<u8>> {
        let range = self.range(index)?;
        let n = index.wrapping_sub(range.start);
        if n >= range.capacity {
            return None;
        }
        range.cell(n)
    }

    /// Starts loading slot `index` and its cell, without waiting for either: for a caller
    /// that will read the object there a few steps on (a purge ending a queue of objects
    /// spread over the table). A hint: nothing for an index outside the ranges.
    #[inline]
    pub fn prefetch(&self, index: u32) {
        let Some(range) = self.range(index) else { return };
        let n = index.wrapping_sub(range.start);
        if let Some(slot) = range.try_slot(n) {
            respawn_allocator::prefetch(std::ptr::from_ref(slot).cast());
            if let Some(cell) = range.cell(n) {
                respawn_allocator::prefetch(cell.as_ptr());
            }
        }
    }

    /// The class of the object in slot `index`, by the range it lies in (no slot load); `None`
    /// outside the class ranges (the permanent pool's slots say their class themselves).
    #[inline]
    pub fn class_at(&self, index: u32) -> Option<u16> {
        let range = self.range(index)?;
        (range.cells.is_some() && index.wrapping_sub(range.start) < range.capacity).then_some(range.class)
    }

    /// Whether `raw`'s own object was released and its slot not reused since: the slot is
    /// vacant one generation on (or retired at `raw`'s). The arena's rule for telling a
    /// second release of the same handle ("released already") from a handle that never
    /// named a live object here.
    pub fn was_released(&self, raw: RawHandle) -> bool {
        self.slot(raw.index()).is_some_and(|s| {
            let g = raw.generation().get();
            s.flags().is_vacant() && (s.generation() == g.saturating_add(1) || s.generation() == g)
        })
    }

    /// The slot of the object `raw` names, whatever its flags: in range, same generation,
    /// not vacant.
    ///
    /// # Errors
    /// [`ArenaError::Stale`].
    #[inline]
    pub fn resolve_live(&self, raw: RawHandle) -> Result<&Slot, ArenaError> {
        // Not `ok_or(ArenaError::Stale)`: the error has drop glue (an I/O error inside
        // `Alloc`), so an eager one costs a call to its drop on every success. The same
        // holds for every error of the workspace built on the way to success.
        let Some(slot) = self.slot(raw.index()) else {
            return Err(ArenaError::Stale);
        };
        slot.check(raw.generation())?;
        Ok(slot)
    }

    /// The slot of the object `raw` names, if a handle may reach it: its lifecycle is
    /// [`Live`](Lifecycle::Live).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] or [`ArenaError::Hidden`].
    #[inline]
    pub fn resolve(&self, raw: RawHandle) -> Result<&Slot, ArenaError> {
        let Some(slot) = self.slot(raw.index()) else {
            return Err(ArenaError::Stale);
        };
        let flags = slot.check(raw.generation())?;
        if flags.intersects(ObjectFlags::HIDDEN) {
            return Err(ArenaError::Hidden(flags));
        }
        Ok(slot)
    }

    /// Slot `index` without the checks.
    ///
    /// # Safety
    /// `index` names a slot that was set up (a handle or token of this table's arena that
    /// resolved, or an index found in a set-up run).
    #[inline]
    pub unsafe fn slot_unchecked(&self, index: u32) -> &Slot {
        let range = self.range(index);
        debug_assert!(range.is_some(), "slot {index} outside every range");
        // SAFETY: the caller's index lies in a range handed out.
        let range = unsafe { range.unwrap_unchecked() };
        // SAFETY: and in a block set up, so inside the range (and committed).
        unsafe { range.slot(index - range.start) }
    }

    /// Every run of set-up slots with the index of its first: one slab's slots for a class,
    /// the filled prefix for the permanent pool. The unit of the collector's walks.
    pub fn runs(&self) -> impl Iterator<Item = (u32, &[Slot])> + '_ {
        let blocks = self.blocks.load(Ordering::Acquire) as usize;
        let mut last: *const Range = std::ptr::null();
        let ranges = self.directory[..blocks].iter().filter_map(move |r| {
            let r = r.load(Ordering::Acquire).cast_const();
            (r != last).then(|| {
                last = r;
                // SAFETY: a directory entry below `blocks` points to a live range.
                unsafe { &*r }
            })
        });
        ranges.flat_map(|range| {
            let per = range.block_slots();
            let n_blocks = range.capacity / per;
            let permanent = range.cells.is_none();
            let filled = range.len.load(Ordering::Acquire);
            (0..n_blocks).filter(move |&b| range.is_set_up(b)).map(move |b| {
                let first = b << range.shift;
                let n = if permanent { filled.saturating_sub(first).min(per) } else { per };
                // SAFETY: block `b` is set up: `per` consecutive slots in one committed block.
                let run = unsafe { std::slice::from_raw_parts(range.slot_ptr(first), n as usize) };
                (range.start + first, run)
            })
        })
    }
}

#[cfg(not(loom))]
impl ObjectTable {
    /// Adds one slot to the permanent `range` (which fills front to back) for the object at
    /// `cell` and returns its index, or `None` when the range is full. Under `&mut Arena`.
    pub(crate) fn push_permanent(&self, range: &Range, cell: NonNull<u8>) -> Option<u32> {
        let n = range.len.load(Ordering::Relaxed);
        let pinned = range.pinned.as_ref().filter(|_| n < range.capacity)?;
        let block = n >> range.shift;
        if !range.is_set_up(block) {
            range.slots.commit(block as usize);
            pinned.commit(block as usize);
            range.set_up[(block / 64) as usize].fetch_or(1 << (block % 64), Ordering::Release);
        }
        let at = pinned.block_ptr(block as usize).expect("committed just now").cast::<AtomicPtr<u8>>();
        let i = n as usize & ((1 << range.shift) - 1);
        // SAFETY: a committed block of zeroed pointer-sized atomics; `i` is inside it.
        unsafe { &*at.as_ptr().add(i) }.store(cell.as_ptr(), Ordering::Release);
        range.len.store(n + 1, Ordering::Release);
        self.issued.fetch_add(1, Ordering::Release);
        Some(range.start + n)
    }
}

#[cfg(not(loom))]
impl Drop for ObjectTable {
    fn drop(&mut self) {
        let mut last = std::ptr::null_mut();
        for entry in self.directory.iter() {
            let r = entry.load(Ordering::Acquire);
            if !r.is_null() && r != last {
                last = r;
                // SAFETY: each range was leaked from a `Box` in `add_range` and appears in
                // consecutive directory entries, so it is freed once, here.
                drop(unsafe { Box::from_raw(r) });
            }
        }
    }
}

#[cfg(not(loom))]
impl fmt::Debug for ObjectTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectTable").field("len", &self.len()).finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use loom::cell::UnsafeCell;
    use respawn_allocator::sync::{thread, Arc, AtomicU16, AtomicU32, Ordering};

    use super::{Slot, NONE};
    use crate::{ArenaError, Lifecycle, ObjectFlags};

    /// A live slot at generation 1 whose object's flags are `flags`.
    fn live_slot(flags: ObjectFlags) -> Slot {
        Slot {
            generation: AtomicU32::new(1),
            flags: AtomicU16::new(flags.bits()),
            class: AtomicU16::new(0),
            outer: AtomicU32::new(NONE),
            root_count: AtomicU32::new(0),
        }
    }

    const G1: std::num::NonZeroU32 = std::num::NonZeroU32::MIN;

    /// The arena releases a slot's object and places a new one while another thread checks
    /// a handle of the old generation. The first object carries a marker flag the second
    /// lacks: whenever the old handle passes the check, the flags it passes with must be
    /// the first object's. (With the generation read before the flags, loom finds the
    /// interleaving where a stale generation pairs with the new object's flags.)
    #[test]
    fn slot_handoff() {
        loom::model(|| {
            let marker = ObjectFlags::PERMANENT;
            let slot = Arc::new(live_slot(marker));
            let reader = {
                let slot = Arc::clone(&slot);
                thread::spawn(move || match slot.check(G1) {
                    Ok(flags) => assert!(flags.contains(marker), "a stale handle passed as the new object"),
                    Err(e) => assert!(matches!(e, ArenaError::Stale)),
                })
            };
            slot.vacate(1, Lifecycle::Vacant);
            let generation = slot.occupy();
            assert_eq!(generation.get(), 2);
            assert!(matches!(slot.check(G1), Err(ArenaError::Stale)));
            assert_eq!(slot.check(generation).ok(), Some(ObjectFlags::empty()));
            reader.join().unwrap();
        });
    }

    /// At the generation ceiling the arena retires the slot: vacant for good, and neither
    /// the last generation nor the next resolves, whatever a concurrent reader sees.
    #[test]
    fn slot_retires_at_the_ceiling() {
        loom::model(|| {
            let slot = Arc::new(live_slot(ObjectFlags::empty()));
            let reader = {
                let slot = Arc::clone(&slot);
                thread::spawn(move || {
                    let _ = slot.check(G1);
                    slot.check(G1.saturating_add(1))
                })
            };
            slot.retire();
            assert!(matches!(slot.check(G1), Err(ArenaError::Stale)));
            assert_eq!(slot.flags().lifecycle(), Lifecycle::Retired, "a retired slot is not returned");
            assert!(matches!(reader.join().unwrap(), Err(ArenaError::Stale)), "generation 2 was never issued");
        });
    }

    /// `Root` guards are cloned and dropped on another thread while the game thread asks
    /// whether the object may be released. While any guard lives the answer is no; once the
    /// game thread reads "not rooted", every guard's last touch of the slot is behind it
    /// (the object's data, written by the guard's thread, is visible; no decrement comes
    /// late to spoil the next object's count).
    #[test]
    fn root_count_guards_across_threads() {
        loom::model(|| {
            let slot = Arc::new(live_slot(ObjectFlags::empty()));
            let data = Arc::new(UnsafeCell::new(0u32));
            slot.add_root(); // the guard the other thread holds
            slot.add_root(); // the game thread's own
            let other = {
                let (slot, data) = (Arc::clone(&slot), Arc::clone(&data));
                thread::spawn(move || {
                    slot.add_root(); // clone
                                     // SAFETY: the object is rooted by this thread's guards; the game thread
                                     // touches it only after it sees the count at zero (checked by loom).
                    data.with_mut(|d| unsafe { *d = 7 });
                    assert!(slot.drop_root() > 1);
                    assert!(slot.drop_root() >= 1, "the last guard dropped twice");
                })
            };
            assert!(slot.is_rooted(), "the game thread's own guard is alive");
            assert!(slot.drop_root() >= 1);
            while slot.is_rooted() {
                thread::yield_now();
            }
            // Released: the object is the game thread's alone.
            // SAFETY: the count read zero after the other thread's last decrement (AcqRel).
            assert_eq!(data.with(|d| unsafe { *d }), 7);
            slot.add_root(); // the next object's first guard
            assert_eq!(slot.root_count.load(Ordering::Relaxed), 1, "a late decrement");
            other.join().unwrap();
        });
    }
}
