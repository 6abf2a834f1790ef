//! The object table (UE's `FUObjectArray`): every object's slot, in chunks that never move.

use std::alloc::Layout;
use std::fmt;
use std::ptr::NonNull;

use respawn_allocator::sync::{AtomicPtr, AtomicU16, AtomicU32, Ordering};

use crate::{ArenaError, ObjectFlags, RawHandle};

/// Slots in one chunk (64 Ki).
pub const CHUNK_SLOTS: usize = 1 << 16;
const MAX_CHUNKS: usize = 1 << 16;
/// "No slot": the value of `outer` and `cluster` when unset. Never a slot index.
pub const NONE: u32 = u32::MAX;

/// One object's bookkeeping, 32 bytes.
///
/// Every field is atomic because the table is shared (by [`Root`](crate::Root) guards and by
/// the collector's parallel mark) while the arena mutates it; the arena itself writes only
/// under `&mut Arena`, so plain `Relaxed` stores suffice for everything but the flag word and
/// the root count, which other threads update.
#[repr(C)]
pub struct Slot {
    /// The object's cell. Fixed for the slot's life: each cell keeps its slot.
    pub(crate) cell: AtomicPtr<u8>,
    /// Bumped on every release; a handle resolves only if it carries this generation.
    pub(crate) generation: AtomicU32,
    /// [`ObjectFlags`] bits.
    pub(crate) flags: AtomicU16,
    /// The class (allocator class index).
    pub(crate) class: AtomicU16,
    /// The cell's number within its class (`slab << shift | cell`): finds the live bit.
    pub(crate) cell_number: AtomicU32,
    /// Slot index of the owner (UE's Outer), or [`NONE`].
    pub(crate) outer: AtomicU32,
    /// Index of the cluster the object belongs to, or [`NONE`].
    pub(crate) cluster: AtomicU32,
    /// Live [`Root`](crate::Root) guards.
    pub(crate) root_count: AtomicU32,
}

const _: () = assert!(std::mem::size_of::<Slot>() == 32);

impl Slot {
    /// The current generation.
    #[inline]
    pub fn generation(&self) -> u32 {
        self.generation.load(Ordering::Acquire)
    }

    /// The flag word.
    #[inline]
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

    /// Index of the object's cluster, if it is in one.
    #[inline]
    pub fn cluster(&self) -> Option<u32> {
        Some(self.cluster.load(Ordering::Relaxed)).filter(|&c| c != NONE)
    }

    /// Sets the cluster index ([`NONE`] for none).
    #[inline]
    pub fn set_cluster(&self, cluster: u32) {
        self.cluster.store(cluster, Ordering::Relaxed);
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

    /// The object's cell.
    #[inline]
    pub fn cell(&self) -> NonNull<u8> {
        let cell = self.cell.load(Ordering::Relaxed);
        debug_assert!(!cell.is_null(), "slot read before the arena set it up");
        // SAFETY: the arena sets every slot's cell (non-null, inside a granted slab) in
        // `grow`, before any handle or iterator can name the slot, and never clears it.
        unsafe { NonNull::new_unchecked(cell) }
    }
}

impl fmt::Debug for Slot {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot")
            .field("generation", &self.generation())
            .field("flags", &self.flags())
            .field("class", &self.class())
            .field("outer", &self.outer())
            .field("cluster", &self.cluster())
            .field("root_count", &self.root_count())
            .finish()
    }
}

/// All slots, in chunks of [`CHUNK_SLOTS`] allocated as the table grows and never moved or
/// freed before the table itself, so a `&Slot` stays valid for the table's life and readers
/// need no lock.
///
/// ```text
///   chunks: [ *──┬──*──┬──null … ]        (65 536 chunk pointers, one per 64 Ki slots)
///              ▼     ▼
///           [slot 0 … slot 65535] [slot 65536 …]     32 bytes a slot
/// ```
pub struct ObjectTable {
    chunks: Box<[AtomicPtr<Slot>; MAX_CHUNKS]>,
    /// Slots handed out; `chunks` covers at least this many.
    len: AtomicU32,
}

// The zeroed allocations below are valid: every field of `Slot` and every chunk pointer is
// an atomic integer or pointer, for which all-zero bits are a valid value (0 / null).
fn alloc_zeroed_array<T>(len: usize) -> NonNull<T> {
    let layout = Layout::array::<T>(len).expect("table layout");
    // SAFETY: the layout is non-zero-sized (len > 0, T non-zero-sized).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

impl ObjectTable {
    pub(crate) fn new() -> Self {
        let chunks = alloc_zeroed_array::<AtomicPtr<Slot>>(MAX_CHUNKS).cast::<[AtomicPtr<Slot>; MAX_CHUNKS]>();
        // SAFETY: a fresh allocation of the array's exact layout; all-null is a valid value.
        let chunks = unsafe { Box::from_raw(chunks.as_ptr()) };
        Self { chunks, len: AtomicU32::new(0) }
    }

    /// Slots handed out so far (live, vacant and retired).
    #[inline]
    pub fn len(&self) -> u32 {
        self.len.load(Ordering::Acquire)
    }

    /// Whether no slot was handed out yet.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Slot `index`, if it was handed out.
    #[inline]
    pub fn slot(&self, index: u32) -> Option<&Slot> {
        // SAFETY: checked just now.
        (index < self.len()).then(|| unsafe { self.slot_unchecked(index) })
    }

    /// The slot of the object `raw` names, whatever its flags: in range, same generation,
    /// not vacant.
    ///
    /// # Errors
    /// [`ArenaError::Stale`].
    #[inline]
    pub fn resolve_live(&self, raw: RawHandle) -> Result<&Slot, ArenaError> {
        let slot = self.slot(raw.index()).ok_or(ArenaError::Stale)?;
        if slot.generation.load(Ordering::Relaxed) != raw.generation().get()
            || slot.flags().contains(ObjectFlags::VACANT)
        {
            return Err(ArenaError::Stale);
        }
        Ok(slot)
    }

    /// The slot of the object `raw` names, if a handle may reach it: live and not hidden
    /// (`GARBAGE`, `UNREACHABLE`, `IN_POOL`).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] or [`ArenaError::Hidden`].
    #[inline]
    pub fn resolve(&self, raw: RawHandle) -> Result<&Slot, ArenaError> {
        let slot = self.resolve_live(raw)?;
        let flags = slot.flags();
        if flags.intersects(ObjectFlags::HIDDEN) {
            return Err(ArenaError::Hidden(flags));
        }
        Ok(slot)
    }

    /// Slot `index` without the range check.
    ///
    /// # Safety
    /// `index < self.len()`.
    #[inline]
    pub unsafe fn slot_unchecked(&self, index: u32) -> &Slot {
        debug_assert!(index < self.len(), "slot {index} beyond the table's {} slots", self.len());
        let chunk = self.chunks[(index >> 16) as usize].load(Ordering::Acquire);
        debug_assert!(!chunk.is_null(), "slot {index} in an unallocated chunk");
        // SAFETY: slots below `len` lie in allocated chunks (`alloc_run` allocates before it
        // publishes `len`), and a chunk lives as long as the table.
        unsafe { &*chunk.add(index as usize & (CHUNK_SLOTS - 1)) }
    }

    /// The handed-out slots, chunk by chunk: the unit of parallel marking.
    pub fn chunks(&self) -> impl Iterator<Item = &[Slot]> + '_ {
        let len = self.len() as usize;
        (0..len.div_ceil(CHUNK_SLOTS)).map(move |c| {
            let chunk = self.chunks[c].load(Ordering::Acquire);
            let n = (len - c * CHUNK_SLOTS).min(CHUNK_SLOTS);
            // SAFETY: chunk `c` is allocated (it covers slots below `len`), and its first
            // `n` slots are initialised (zeroed, then set up by the arena).
            unsafe { std::slice::from_raw_parts(chunk, n) }
        })
    }

    /// Hands out `n` consecutive fresh slots (zeroed) and returns the first index. Only the
    /// owning arena calls this, under `&mut Arena`, so there is one writer.
    pub(crate) fn alloc_run(&self, n: u32) -> Option<u32> {
        let start = self.len();
        debug_assert!(n > 0, "an empty run");
        let end = start.checked_add(n).filter(|&e| e < NONE)?;
        for c in start as usize / CHUNK_SLOTS..=(end as usize - 1) / CHUNK_SLOTS {
            if self.chunks[c].load(Ordering::Acquire).is_null() {
                let chunk = alloc_zeroed_array::<Slot>(CHUNK_SLOTS);
                self.chunks[c].store(chunk.as_ptr(), Ordering::Release);
            }
        }
        self.len.store(end, Ordering::Release);
        Some(start)
    }
}

impl Drop for ObjectTable {
    fn drop(&mut self) {
        let layout = Layout::array::<Slot>(CHUNK_SLOTS).expect("chunk layout");
        for chunk in self.chunks.iter() {
            let p = chunk.load(Ordering::Acquire);
            if !p.is_null() {
                // SAFETY: `p` came from `alloc_zeroed_array::<Slot>(CHUNK_SLOTS)` (this
                // layout), and the table is dropped once.
                unsafe { std::alloc::dealloc(p.cast(), layout) };
            }
        }
    }
}

impl fmt::Debug for ObjectTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectTable").field("len", &self.len()).finish()
    }
}
