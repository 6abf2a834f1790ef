//! One class's record in the arena, in three private parts:
//!
//! ```text
//!   ClassEntry
//!   ├─ geometry   where the class's cells and slots are: its id and type, cell size,
//!   │             slab bases, range of the object table, generation ceiling
//!   ├─ occupancy  which cells hold what: the live bitmap, the vacant list, the kept
//!   │             objects, and the counts (granted, out, retired, decommitted, permanent)
//!   ├─ reactions  what a spawn or a release must stop for: where ended cells go (and
//!   │             the returned list), spawn and end listeners, dormant objects, the
//!   │             collector's write barrier
//!   └─ collector  the collector's entry points for the class and what it keeps about it
//!                 ([`CollectorEntry`]), once the class registers with a collector
//! ```
//!
//! Nothing outside this module touches a part's fields. The arena resolves a handle to its
//! class and calls the entry; the entry moves cells between states
//! ([`transitions`]): vacant → live (`place`, `activate`), live → vacant,
//! kept, out or retired (`release` and its callers), kept → live (`reuse`), out → vacant
//! (`recycle`). Each cell of a granted slab is, at any time, exactly one of live, vacant,
//! kept, out or retired, so [`len`](ClassEntry::len) is derived and the hot insert and
//! remove count nothing.

use std::any::TypeId;
use std::fmt;
use std::num::NonZeroU32;
use std::ptr::NonNull;

use respawn_allocator::sync::Ordering;
use respawn_allocator::ClassId;

use super::dormancy::Dormancy;
use super::listeners::{ErasedListener, Heard};
use super::{CollectorEntry, EndedCells, Freed};
use crate::arena::BarrierLog;
use crate::{ObjectFlags, RawHandle};

mod geometry;
mod occupancy;
mod reactions;
mod transitions;
mod trim;

pub(crate) use geometry::Geometry;
use occupancy::Occupancy;
use reactions::{Hooks, Reactions};
pub(crate) use transitions::Found;

/// One class's storage. Type-erased; [`ClassStore`](crate::ClassStore) is its typed view.
pub(crate) struct ClassEntry {
    geometry: Geometry,
    occupancy: Occupancy,
    reactions: Reactions,
    collector: Option<CollectorEntry>,
}

impl ClassEntry {
    /// The entry of a class just registered, at `geometry`: no slab granted yet, every
    /// count zero. `barrier` is whether the collector's write barrier is on (a class
    /// registered during an incremental mark is noted like the others, conservatively as
    /// traced).
    pub(crate) fn new(geometry: Geometry, barrier: bool) -> Self {
        Self { geometry, occupancy: Occupancy::default(), reactions: Reactions::new(barrier), collector: None }
    }

    /// The collector's entry for the class, once it registered with a collector.
    #[inline(always)]
    pub(crate) fn collector(&self) -> Option<&CollectorEntry> {
        self.collector.as_ref()
    }

    /// Sets the collector's entry, if it was made for the class's type; returns whether it
    /// was.
    pub(crate) fn set_collector(&mut self, entry: CollectorEntry) -> bool {
        let fits = entry.type_id() == self.geometry.type_id;
        if fits {
            self.collector = Some(entry);
        }
        fits
    }

    /// Where the class's cells and slots are.
    #[inline(always)]
    pub(crate) fn geometry(&self) -> &Geometry {
        &self.geometry
    }

    /// The class's id.
    #[inline(always)]
    pub(crate) fn id(&self) -> ClassId {
        self.geometry.id
    }

    /// The class's name (its Rust type).
    #[inline]
    pub(crate) fn name(&self) -> &'static str {
        self.geometry.name
    }

    /// Whether the class is `T`'s.
    #[inline(always)]
    pub(crate) fn is<T: 'static>(&self) -> bool {
        self.geometry.type_id == TypeId::of::<T>()
    }

    /// Objects in the class's cells whose slots are live (visible or hidden, not vacant).
    #[inline]
    pub(crate) fn len(&self) -> usize {
        self.occupancy.len()
    }

    /// The live bitmap: one bit per cell number, set while the cell's object is visible.
    #[inline(always)]
    pub(crate) fn live(&self) -> &[u64] {
        &self.occupancy.live[..self.occupancy.reach]
    }

    /// Whether cell `n` holds a visible object.
    #[inline]
    pub(crate) fn is_live(&self, n: u32) -> bool {
        self.occupancy.is_live(n)
    }

    /// Sets or clears cell `n`'s live bit, for an object whose lifecycle moved to or from
    /// `Live` in place (garbage revived, an object hidden).
    #[inline]
    pub(crate) fn set_live(&mut self, n: u32, live: bool) {
        self.occupancy.set_live(n, live);
    }

    /// The class's dormancy bitmap.
    #[inline(always)]
    pub(crate) fn dormancy(&self) -> &Dormancy {
        &self.reactions.dormancy
    }

    /// Makes cell `n`'s (visible) object dormant or awake.
    pub(crate) fn set_dormant(&mut self, n: u32, dormant: bool) {
        debug_assert!(self.is_live(n), "a visible object of a class's range has its live bit");
        self.reactions.set_dormant(n, dormant, self.occupancy.live.len());
    }

    /// Vacant cells, ready for the class's next objects.
    #[inline]
    pub(crate) fn vacant(&self) -> usize {
        self.occupancy.vacant()
    }

    /// Room for new objects without a new slab: the vacant cells and the cells of the
    /// decommitted slabs, which `grow` takes back first.
    pub(crate) fn room(&self) -> usize {
        self.occupancy.vacant() + self.occupancy.decommitted.len() * self.geometry.cells_per_slab()
    }

    /// Slots retired for good.
    pub(crate) fn retired(&self) -> usize {
        self.occupancy.retired as usize
    }

    /// Permanent objects of the class (outside its slabs).
    pub(crate) fn permanent(&self) -> usize {
        self.occupancy.permanent as usize
    }

    /// Counts a permanent object of the class, placed just now.
    pub(crate) fn count_permanent(&mut self) {
        self.occupancy.permanent += 1;
    }

    /// Slabs decommitted now.
    pub(crate) fn decommitted(&self) -> usize {
        self.occupancy.decommitted.len()
    }

    /// Whether slab `slab` is decommitted.
    pub(crate) fn is_decommitted(&self, slab: u32) -> bool {
        self.occupancy.decommitted.contains(&slab)
    }

    /// Bytes the entry's own lists take (at their capacity): the live and dormancy
    /// bitmaps, the vacant list, the slab bases.
    pub(crate) fn side_bytes(&self) -> usize {
        self.occupancy.live.capacity() * 8
            + self.reactions.dormancy.bytes()
            + self.occupancy.free.capacity() * 4
            + self.geometry.bases.capacity() * 8
    }

    /// Whether releases keep the class's objects for reuse.
    #[inline(always)]
    pub(crate) fn keeping(&self) -> bool {
        self.occupancy.keeping
    }

    /// Tells the class whether releases keep its objects.
    pub(crate) fn set_keeping(&mut self, on: bool) {
        self.occupancy.keeping = on;
    }

    /// Objects the class keeps for its next spawns.
    #[inline(always)]
    pub(crate) fn kept(&self) -> usize {
        self.occupancy.kept.len()
    }

    /// Objects kept since the class was registered.
    pub(crate) fn kept_total(&self) -> u64 {
        self.occupancy.kept_total
    }

    /// Where the class's cells go when their objects end.
    pub(crate) fn ended_cells(&self) -> EndedCells {
        self.reactions.ended_cells
    }

    /// Sets where the class's cells go when their objects end.
    pub(crate) fn set_ended_cells(&mut self, way: EndedCells) {
        self.reactions.set_ended_cells(way);
    }

    /// The returned list as it stands, oldest first.
    pub(crate) fn returned(&self) -> &[Freed] {
        &self.reactions.returned
    }

    /// Takes the returned list, oldest first (the list keeps its buffer).
    #[inline]
    pub(crate) fn drain_returned(&mut self) -> std::vec::Drain<'_, Freed> {
        self.reactions.returned.drain(..)
    }

    /// Whether the collector's write barrier notes the class's objects.
    #[inline(always)]
    pub(crate) fn barrier(&self) -> bool {
        self.reactions.barrier
    }

    /// Turns the class's part of the write barrier on or off, forgetting what it noted.
    pub(crate) fn set_barrier(&mut self, on: bool) {
        self.reactions.set_barrier(on);
    }

    /// Notes slot `index` for the write barrier (the caller checked that it is on, or that
    /// the note must be taken whatever the class).
    #[inline]
    pub(crate) fn note(&mut self, index: u32) {
        self.reactions.note(index);
    }

    /// Notes every live object of the class, if the barrier is on for it.
    #[inline]
    pub(crate) fn note_all(&mut self) {
        self.reactions.note_all();
    }

    /// Moves what the barrier noted into `into`.
    pub(crate) fn drain_noted(&mut self, into: &mut BarrierLog) {
        into.objects.append(&mut self.reactions.noted);
        if std::mem::take(&mut self.reactions.noted_all) {
            into.classes.push(self.geometry.id);
        }
    }

    /// Adds a listener to the list `heard`; returns its number in the class.
    pub(crate) fn add_listener(&mut self, heard: Heard, listener: ErasedListener) -> u32 {
        self.reactions.add_listener(heard, listener)
    }

    /// Removes listener `n`; `false` if the class has none of that number.
    pub(crate) fn remove_listener(&mut self, n: u32) -> bool {
        self.reactions.remove_listener(n)
    }

    /// How many listeners the list `heard` holds.
    pub(crate) fn listeners(&self, heard: Heard) -> usize {
        self.reactions.listeners.len(heard)
    }

    /// Whether the class has end listeners: one test of the hooks byte.
    #[inline(always)]
    pub(crate) fn listening_to_ends(&self) -> bool {
        self.reactions.hooks & Hooks::LISTENING != 0
    }

    /// Whether the class has spawn listeners: one test of the hooks byte.
    #[inline(always)]
    pub(crate) fn listening_to_spawns(&self) -> bool {
        self.reactions.hooks & Hooks::SPAWNING != 0
    }

    /// Tells the class's end listeners that the object in slot `index` (of `generation`)
    /// is ending, unless they were told already (its `flags` say `END_NOTIFIED`): the
    /// release's call, and [`Arena::notify_end`](crate::Arena::notify_end)'s.
    #[cold]
    #[inline(never)]
    pub(crate) fn tell_end(&mut self, index: u32, flags: ObjectFlags, generation: NonZeroU32) {
        if flags.contains(ObjectFlags::END_NOTIFIED) {
            return;
        }
        let n = index - self.geometry.start;
        // First, so a panicking listener is not called twice for one object.
        self.geometry.slot(n).flags.fetch_or(ObjectFlags::END_NOTIFIED.bits(), Ordering::AcqRel);
        let cell = NonNull::new(self.geometry.cell_ptr(n)).unwrap_or_else(|| unreachable!("cells are non-null"));
        self.reactions.listeners.tell(Heard::End, RawHandle::new(index, generation), cell);
    }

    /// Tells the class's spawn listeners that the visible object `raw` names, in `cell`, is
    /// complete. The caller resolved it.
    #[cold]
    #[inline(never)]
    pub(crate) fn tell_spawn(&mut self, raw: RawHandle, cell: NonNull<u8>) {
        self.reactions.listeners.tell(Heard::Spawn, raw, cell);
    }
}

impl fmt::Debug for ClassEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClassEntry")
            .field("id", &self.geometry.id)
            .field("name", &self.geometry.name)
            .field("len", &self.len())
            .field("free", &self.occupancy.free.len())
            .finish()
    }
}
