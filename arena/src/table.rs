//! The object table (UE's `FUObjectArray`): every object's slot, in chunks that never move.

#[cfg(not(loom))]
use std::alloc::Layout;
use std::fmt;
use std::num::NonZeroU32;
use std::ptr::NonNull;

use respawn_allocator::sync::{AtomicPtr, AtomicU16, AtomicU32, Ordering};

#[cfg(not(loom))]
use crate::RawHandle;
use crate::{ArenaError, ObjectFlags};

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
///
/// An object's life in its slot, as a reader on another thread sees it:
///
/// ```text
///   writer (the arena)                         reader (check a handle of generation g)
///   occupy:  flags = live          (Release)   flags   (Acquire)  VACANT?         → stale
///   vacate:  flags = VACANT        (Release)   generation         ≠ g?            → stale
///            generation = g + 1    (Release)   else the object of generation g
///   occupy:  flags = live          (Release)
/// ```
///
/// The reader loads the flags first: if it sees the second `occupy`, the generation bump
/// before it is visible too, so a handle of generation `g` cannot pass for the new object.
/// (Generation first would let a stale generation pair with the new object's flags.) The
/// loom model `slot_handoff` in this module checks this.
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

#[cfg(not(loom))] // loom's atomics are larger
const _: () = assert!(std::mem::size_of::<Slot>() == 32);

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
        let flags = self.flags();
        if flags.contains(ObjectFlags::VACANT) || self.generation.load(Ordering::Relaxed) != generation.get() {
            return Err(ArenaError::Stale);
        }
        Ok(flags)
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

    /// Ends the slot's object for every handle: flags it `VACANT` and, unless the slot
    /// retires at its generation ceiling `max_generation`, moves it to the next generation.
    /// Returns whether the slot retired. A cell `routed` to a free route is flagged `ASYNC`
    /// too (it belongs to the route's owner until it comes back through `adopt` or
    /// `recycle`, which a layout picture shows). The flag store comes first, as the reader
    /// in [`check`](Self::check) expects.
    #[inline]
    pub(crate) fn vacate(&self, routed: bool, max_generation: u32) -> bool {
        let generation = self.generation.load(Ordering::Relaxed);
        let retire = generation >= max_generation;
        let vacant = match routed && !retire {
            true => ObjectFlags::VACANT | ObjectFlags::ASYNC,
            false => ObjectFlags::VACANT,
        };
        self.flags.store(vacant.bits(), Ordering::Release);
        if !retire {
            self.generation.store(generation + 1, Ordering::Release);
        }
        retire
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
#[cfg(not(loom))]
pub struct ObjectTable {
    chunks: Box<[AtomicPtr<Slot>; MAX_CHUNKS]>,
    /// Slots handed out; `chunks` covers at least this many.
    len: AtomicU32,
}

// The zeroed allocations below are valid: every field of `Slot` and every chunk pointer is
// an atomic integer or pointer, for which all-zero bits are a valid value (0 / null).
#[cfg(not(loom))]
fn alloc_zeroed_array<T>(len: usize) -> NonNull<T> {
    let layout = Layout::array::<T>(len).expect("table layout");
    // SAFETY: the layout is non-zero-sized (len > 0, T non-zero-sized).
    let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    NonNull::new(ptr).unwrap_or_else(|| std::alloc::handle_alloc_error(layout))
}

#[cfg(not(loom))]
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
        slot.check(raw.generation())?;
        Ok(slot)
    }

    /// The slot of the object `raw` names, if a handle may reach it: live and not hidden
    /// (`GARBAGE`, `UNREACHABLE`, `IN_POOL`).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] or [`ArenaError::Hidden`].
    #[inline]
    pub fn resolve(&self, raw: RawHandle) -> Result<&Slot, ArenaError> {
        let slot = self.slot(raw.index()).ok_or(ArenaError::Stale)?;
        let flags = slot.check(raw.generation())?;
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

#[cfg(not(loom))]
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

#[cfg(not(loom))]
impl fmt::Debug for ObjectTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ObjectTable").field("len", &self.len()).finish()
    }
}

#[cfg(all(test, loom))]
mod loom_model {
    use loom::cell::UnsafeCell;
    use respawn_allocator::sync::{thread, Arc, AtomicPtr, AtomicU16, AtomicU32, Ordering};

    use super::{Slot, NONE};
    use crate::{ArenaError, ObjectFlags};

    /// A live slot at generation 1 whose object's flags are `flags`.
    fn live_slot(flags: ObjectFlags) -> Slot {
        Slot {
            cell: AtomicPtr::new(std::ptr::null_mut()),
            generation: AtomicU32::new(1),
            flags: AtomicU16::new(flags.bits()),
            class: AtomicU16::new(0),
            cell_number: AtomicU32::new(0),
            outer: AtomicU32::new(NONE),
            cluster: AtomicU32::new(NONE),
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
            let marker = ObjectFlags::CLUSTER_ROOT;
            let slot = Arc::new(live_slot(marker));
            let reader = {
                let slot = Arc::clone(&slot);
                thread::spawn(move || match slot.check(G1) {
                    Ok(flags) => assert!(flags.contains(marker), "a stale handle passed as the new object"),
                    Err(e) => assert!(matches!(e, ArenaError::Stale)),
                })
            };
            assert!(!slot.vacate(false, u32::MAX - 1), "retired below the ceiling");
            let generation = slot.occupy();
            assert_eq!(generation.get(), 2);
            assert!(matches!(slot.check(G1), Err(ArenaError::Stale)));
            assert_eq!(slot.check(generation).ok(), Some(ObjectFlags::empty()));
            reader.join().unwrap();
        });
    }

    /// At the generation ceiling the slot retires: vacant for good, and neither the last
    /// generation nor the next resolves, whatever a concurrent reader sees.
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
            assert!(slot.vacate(true, 1), "a slot at the ceiling must retire");
            assert!(matches!(slot.check(G1), Err(ArenaError::Stale)));
            assert_eq!(slot.flags(), ObjectFlags::VACANT, "a retired slot is not routed");
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
