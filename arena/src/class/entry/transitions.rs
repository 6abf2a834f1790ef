//! How a class's cells move between states: vacant → live (`place`, `activate`), live →
//! vacant, kept, out or retired (`release` and its callers), kept → live (`reuse`), out →
//! vacant (`recycle`), and how the class takes a slab when it has no vacant cell (`grow`).

use std::any::type_name;
use std::num::NonZeroU32;
use std::ptr::{self, NonNull};

use respawn_allocator::sync::Ordering;
use respawn_allocator::{poison, ChunkAllocator};

use super::reactions::Hooks;
use super::ClassEntry;
use crate::class::{CompactCell, Ended, EndedCells, Freed, FreedCell};
use crate::outer::Outers;
use crate::table::ObjectTable;
use crate::{ArenaError, Handle, Lifecycle, ObjectFlags, RawHandle};

/// A visible object a caller resolved and may release: slot `index`, cell number `n` at
/// `cell`, with the `flags` and `generation` read under `&mut Arena`.
#[derive(Clone, Copy)]
pub(crate) struct Found {
    pub(crate) index: u32,
    pub(crate) n: u32,
    pub(crate) cell: NonNull<u8>,
    pub(crate) flags: ObjectFlags,
    pub(crate) generation: u32,
}

impl ClassEntry {
    /// A vacant slot of the class for the next object or lent cell: the warmest, or the
    /// first of a new slab.
    #[inline(always)]
    pub(crate) fn pop_vacant(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> Result<u32, ArenaError> {
        match self.occupancy.free.pop() {
            Some(index) => Ok(index),
            None => self.grow_for_one(table, alloc),
        }
    }

    /// [`pop_vacant`](Self::pop_vacant) for a `T` insert that panics when the class cannot
    /// grow: no `Result` on the way, the index comes straight off the list.
    #[inline(always)]
    pub(crate) fn pop_vacant_or_fail<T>(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> u32 {
        match self.occupancy.free.pop() {
            Some(index) => index,
            None => self.grow_or_fail::<T>(table, alloc),
        }
    }

    /// Takes a prepared slab (or commits a decommitted one again) and makes its cells
    /// vacant slots: a new slab's become fresh (`Occupancy::fresh`), the first word's worth
    /// of them on the vacant list.
    #[cold]
    pub(crate) fn grow(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> Result<(), ArenaError> {
        // What is left of the last slab goes on the list first: `fresh` holds one slab.
        self.occupancy.hand_out_all_fresh(self.geometry.start);
        if !self.occupancy.decommitted.is_empty() {
            return self.recommit(alloc);
        }
        let geometry = &mut self.geometry;
        let grant = alloc.alloc_slab(geometry.id)?;
        let slab = grant.index as usize;
        if geometry.bases.len() <= slab {
            geometry.bases.resize(slab + 1, ptr::null_mut());
            self.occupancy.live.resize(((slab + 1) << geometry.shift).div_ceil(64), 0);
        }
        geometry.bases[slab] = grant.base.as_ptr();
        #[cfg(miri)]
        geometry.range().cells.as_ref().expect("a class range has cells").bases[slab]
            .store(grant.base.as_ptr(), Ordering::Release);
        debug_assert_eq!(
            geometry.range().cell(grant.index << geometry.shift),
            Some(grant.base),
            "cell arithmetic disagrees"
        );
        let (range, class) = (geometry.range(), geometry.id.index() as u16);
        // SAFETY: the range is this class's, and a slab is granted once, so its block of slots
        // was never set up.
        let first = unsafe { table.set_up_block(range, grant.index, class, Lifecycle::Vacant.flags()) };
        self.occupancy.fresh = (first, first + grant.cells);
        self.occupancy.granted += grant.cells as usize;
        self.occupancy.hand_out_fresh(self.geometry.start);
        Ok(())
    }

    /// The vacant list ran dry: the next word's worth of fresh cells, or [`grow`](Self::grow),
    /// then the vacant slot the caller needs.
    #[cold]
    #[inline(never)]
    fn grow_for_one(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> Result<u32, ArenaError> {
        if !self.occupancy.hand_out_fresh(self.geometry.start) {
            self.grow(table, alloc)?;
        }
        Ok(self.occupancy.free.pop().expect("a granted slab has cells"))
    }

    #[cold]
    #[inline(never)]
    fn grow_or_fail<T>(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> u32 {
        self.grow_for_one(table, alloc)
            .unwrap_or_else(|error| panic!("ClassStore::insert::<{}>: {error}", type_name::<T>()))
    }

    /// Hands out a vacant cell as a token, its slot [`Lent`](Lifecycle::Lent) until the
    /// cell comes back through `activate` or `recycle`.
    #[inline]
    pub(crate) fn take_cell(&mut self, table: &ObjectTable, alloc: &ChunkAllocator) -> Result<FreedCell, ArenaError> {
        let index = self.pop_vacant(table, alloc)?;
        let n = index - self.geometry.start;
        self.geometry.slot(n).flags.store(Lifecycle::Lent.flags().bits(), Ordering::Release);
        let cell = self.geometry.cell_ptr(n);
        // The token's holder writes the cell (a pool worker builds an object in it).
        poison::unpoison(cell, self.geometry.cell_size);
        self.occupancy.out += 1;
        Ok(FreedCell { class: self.geometry.id, slot: index, cell: NonNull::new(cell).expect("cells are non-null") })
    }

    /// Writes `value` into vacant slot `index`'s cell and makes it live.
    ///
    /// # Safety
    /// The class is `T`'s, and `index` came off its vacant list just now.
    #[inline(always)]
    pub(crate) unsafe fn place<T>(&mut self, index: u32, value: T) -> Handle<T> {
        // SAFETY: the caller's contract.
        unsafe { self.place_at(index, value).0 }
    }

    /// [`place`](Self::place), also returning where the object now lives.
    ///
    /// # Safety
    /// As [`place`](Self::place).
    #[inline(always)]
    pub(crate) unsafe fn place_at<T>(&mut self, index: u32, value: T) -> (Handle<T>, NonNull<T>) {
        let n = index - self.geometry.start;
        let cell = self.geometry.cell_of::<T>(n);
        debug_assert!(self.geometry.slot(n).flags().is_vacant(), "vacant list holds occupied slot {index}");
        poison::unpoison(cell, self.geometry.cell_size);
        // SAFETY: a vacant slot's cell is ours, uninitialised, sized and aligned for `T`
        // (the caller's contract).
        unsafe { cell.cast::<T>().write(value) };
        self.made_live(index, n, cell)
    }

    /// The end of a placement: the object written into slot `index`'s `cell` (cell number
    /// `n`) becomes live (its slot occupied, its live bit set, noted if a mark runs), and
    /// its handle.
    #[inline(always)]
    fn made_live<T>(&mut self, index: u32, n: u32, cell: *mut u8) -> (Handle<T>, NonNull<T>) {
        let generation = self.geometry.slot(n).occupy();
        self.occupancy.set_live(n, true);
        if self.reactions.barrier {
            self.reactions.note(index);
        }
        // SAFETY: a slab cell's address is never null.
        (Handle::from_raw(RawHandle::new(index, generation)), unsafe { NonNull::new_unchecked(cell.cast::<T>()) })
    }

    /// [`place_at`](Self::place_at) of the object `create` builds, written straight into
    /// the cell (a value built first and then moved would make a second copy through the
    /// stack). If `create` panics, `index` goes back on the vacant list, its cell as it
    /// was.
    ///
    /// # Safety
    /// As [`place`](Self::place).
    #[inline(always)]
    pub(crate) unsafe fn place_with<T>(&mut self, index: u32, create: impl FnOnce() -> T) -> (Handle<T>, NonNull<T>) {
        /// Puts the slot back on the vacant list if `create` unwinds.
        struct Vacant<'a> {
            free: &'a mut Vec<u32>,
            index: u32,
            cell: *mut u8,
            size: usize,
        }
        impl Drop for Vacant<'_> {
            fn drop(&mut self) {
                poison::poison(self.cell, self.size);
                self.free.push(self.index);
            }
        }
        let n = index - self.geometry.start;
        let cell = self.geometry.cell_of::<T>(n);
        debug_assert!(self.geometry.slot(n).flags().is_vacant(), "vacant list holds occupied slot {index}");
        poison::unpoison(cell, self.geometry.cell_size);
        let vacant = Vacant { free: &mut self.occupancy.free, index, cell, size: self.geometry.cell_size };
        // SAFETY: a vacant slot's cell is ours, uninitialised, sized and aligned for `T`
        // (the caller's contract); nothing else is written before `create` returns.
        unsafe { cell.cast::<T>().write(create()) };
        std::mem::forget(vacant);
        self.made_live(index, n, cell)
    }

    /// Makes the object built in `cell` live in its slot and returns its handle.
    ///
    /// # Safety
    /// The class is `T`'s; `cell` was compacted by its `CellMap` from a token this class
    /// handed out, and holds an initialised `T` that from now on belongs to the arena.
    #[inline(always)]
    pub(crate) unsafe fn activate<T>(&mut self, cell: CompactCell) -> Handle<T> {
        let n = cell.number();
        debug_assert!(n < self.geometry.capacity, "token of another class");
        let slot = self.geometry.slot(n);
        debug_assert!(slot.flags().is_vacant(), "activating occupied slot {}", self.geometry.slot_of(n));
        let generation = slot.occupy();
        self.occupancy.set_live(n, true);
        self.occupancy.out -= 1;
        let index = self.geometry.slot_of(n);
        if self.reactions.barrier {
            // Made live during an incremental mark: traced again before it ends, with the
            // handles the spawn's `init` stores in it.
            self.reactions.note(index);
        }
        Handle::from_raw(RawHandle::new(index, generation))
    }

    /// Makes the most recently kept object live again, in its own cell.
    ///
    /// # Safety
    /// The class is `T`'s.
    #[inline(always)]
    pub(crate) unsafe fn reuse<T>(&mut self) -> Option<(Handle<T>, &mut T)> {
        let n = self.occupancy.kept.pop()?;
        let slot = self.geometry.slot(n);
        debug_assert_eq!(slot.flags().lifecycle(), Lifecycle::InPool, "a kept cell not in the pool");
        let generation = slot.occupy();
        self.occupancy.set_live(n, true);
        let index = self.geometry.slot_of(n);
        if self.reactions.barrier {
            // Made live during an incremental mark: traced again before it ends.
            self.reactions.note(index);
        }
        // SAFETY: a kept cell holds a `T` of this class (`keep`), the arena's; live again
        // now, and `&mut self` makes this the one reference.
        let object = unsafe { &mut *self.geometry.cell_of::<T>(n).cast::<T>() };
        Some((Handle::from_raw(RawHandle::new(index, generation)), object))
    }

    /// Gives a returned (or taken) cell back: its slot becomes vacant for the class's next
    /// object. The caller checked that the token is one of this class's.
    pub(crate) fn recycle(&mut self, token: FreedCell) {
        let n = token.slot - self.geometry.start;
        // A token from `take_cell` or a deactivation is `Lent` / `InPool`: plain vacant again.
        self.geometry.slot(n).flags.store(Lifecycle::Vacant.flags().bits(), Ordering::Release);
        poison::poison(token.cell.as_ptr(), self.geometry.cell_size);
        self.occupancy.free.push(token.slot);
        self.occupancy.out -= 1;
    }

    /// Makes the cells on the returned list vacant again, as [`recycle`](Self::recycle)
    /// does each, showing `seen` every entry it takes first (a retired slot's brings no
    /// cell). Entries whose object came back undropped ([`Freed::Occupied`]) stay on the
    /// list. The list keeps its buffer.
    pub(crate) fn recycle_returned(&mut self, mut seen: impl FnMut(&Freed)) {
        let mut returned = std::mem::take(&mut self.reactions.returned);
        returned.retain(|freed| match *freed {
            Freed::Occupied(..) => true,
            Freed::Cell(ref token, _) => {
                seen(freed);
                // The list's own token, made vacant here: the entry goes with it.
                self.recycle(FreedCell { class: token.class, slot: token.slot, cell: token.cell });
                false
            }
            Freed::Retired { .. } => {
                seen(freed);
                false
            }
        });
        self.reactions.returned = returned;
    }

    /// Releases the visible object `found` to [`Lifecycle::InPool`], its handles stale, and
    /// hands its cell out as a token with the object still in it (a deactivation). `None`: the slot
    /// reached the generation ceiling and retired, and the object was dropped here.
    ///
    /// # Safety
    /// The class is `T`'s, and `found` is a live `T` of it, releasable.
    #[inline(always)]
    pub(crate) unsafe fn deactivate<T>(
        &mut self,
        table: &ObjectTable,
        outers: &mut Outers,
        found: Found,
    ) -> Option<FreedCell> {
        // SAFETY: the caller's contract.
        if !unsafe { self.release_in_pool::<T>(table, outers, found) } {
            return None;
        }
        self.occupancy.out += 1;
        Some(FreedCell { class: self.geometry.id, slot: found.index, cell: found.cell })
    }

    /// Releases the visible object `found` to [`Lifecycle::InPool`] and keeps it, reset by
    /// the caller, in its cell for the class's next spawn. `false`: the slot reached the
    /// generation ceiling and retired, and the object was dropped here.
    ///
    /// # Safety
    /// As [`deactivate`](Self::deactivate).
    #[inline(always)]
    pub(crate) unsafe fn keep<T>(&mut self, table: &ObjectTable, outers: &mut Outers, found: Found) -> bool {
        // SAFETY: the caller's contract.
        if !unsafe { self.release_in_pool::<T>(table, outers, found) } {
            return false;
        }
        self.occupancy.kept.push(found.n);
        self.occupancy.kept_total += 1;
        true
    }

    /// Releases the visible `T` `found` to [`Lifecycle::InPool`], the object left in its
    /// cell for a deactivation or a keep. `false`: the slot reached the generation ceiling and
    /// retired, and the object was dropped here.
    ///
    /// # Safety
    /// As [`deactivate`](Self::deactivate).
    #[inline(always)]
    unsafe fn release_in_pool<T>(&mut self, table: &ObjectTable, outers: &mut Outers, found: Found) -> bool {
        let max_generation = self.geometry.max_generation;
        debug_assert_eq!(found.cell.as_ptr(), self.geometry.cell_of::<T>(found.n), "cell of another slot");
        if self.release(table, outers, found, Lifecycle::InPool, max_generation) {
            // SAFETY: the slot held a `T` until `release` retired it just now; nobody else can
            // reach the cell any more, so this is its one drop.
            unsafe { ptr::drop_in_place(found.cell.cast::<T>().as_ptr()) };
            poison::poison(found.cell.as_ptr(), self.geometry.cell_size);
            return false;
        }
        true
    }

    /// Moves the visible object `found` out and releases its slot, vacant or returned.
    ///
    /// # Safety
    /// The class is `T`'s, and `found` is a live `T` of it, of that generation.
    #[inline(always)]
    pub(crate) unsafe fn take<T>(&mut self, table: &ObjectTable, outers: &mut Outers, found: Found) -> T {
        // The one byte `release` tests says whether the class returns its cells, too.
        let returned = self.reactions.hooks & Hooks::RETURNED != 0;
        let max_generation = self.geometry.max_generation;
        // Released before the object is moved out, so that end listeners see it in its cell.
        let retired = self.release(table, outers, found, vacant_state(returned), max_generation);
        // SAFETY: the caller resolved the slot; the cell holds a `T`, read exactly once here:
        // the slot is released, and the cell is freed (or retired) only after.
        let value = unsafe { found.cell.cast::<T>().read() };
        self.free_cell(found.index, found.cell, returned, retired, Ended::Removed);
        value
    }

    /// Ends the object in slot `index` in place: releases the slot (handles go stale), drops
    /// the object, then frees the cell. Releasing first means a panicking destructor cannot
    /// lead to a second drop; freeing last means nobody gets the cell before the destructor
    /// is done. If the destructor panics, the slot is retired instead (never reused: the
    /// object may be half dropped) and a class that returns its cells returns
    /// [`Freed::Retired`], so a pool counts the object gone. A `max_generation` of 0 retires
    /// the slot whatever its generation.
    ///
    /// # Safety
    /// Slot `index` holds a live object of the class.
    #[inline]
    pub(crate) unsafe fn destroy_at(
        &mut self,
        table: &ObjectTable,
        outers: &mut Outers,
        index: u32,
        max_generation: u32,
        ended: Ended,
    ) {
        let n = index - self.geometry.start;
        // SAFETY: cells are non-null.
        let cell = unsafe { NonNull::new_unchecked(self.geometry.cell_ptr(n)) };
        let slot = self.geometry.slot(n);
        let found = Found { index, n, cell, flags: slot.flags(), generation: slot.generation() };
        let returned = self.reactions.ended_cells != EndedCells::Vacant;
        let retired = self.release(table, outers, found, vacant_state(returned), max_generation);
        let Some(drop_fn) = self.geometry.drop_fn else {
            self.free_cell(index, cell, returned, retired, ended);
            return;
        };
        if self.reactions.ended_cells == EndedCells::ReturnedUndropped && !retired {
            // The class's owner drops it (a pool's worker, as it rebuilds the cell).
            self.occupancy.out += 1;
            let token = FreedCell { class: self.geometry.id, slot: index, cell };
            self.reactions.returned.push(Freed::Occupied(token, ended));
            return;
        }
        let unwinding = RetireOnUnwind { entry: self, index, cell, retired, ended };
        // SAFETY: the cell holds an object of this class, released just now, dropped once.
        unsafe { drop_fn(cell.as_ptr()) };
        unwinding.disarm().free_cell(index, cell, returned, retired, ended);
    }

    /// Begins the end of the visible object in cell `n` (slot `index`): `Destroying`, its
    /// live bit cleared, noted for a running mark (as [`Arena::set_lifecycle`] does).
    ///
    /// [`Arena::set_lifecycle`]: crate::Arena::set_lifecycle
    #[inline]
    pub(crate) fn begin_destroy(&mut self, n: u32, index: u32) {
        self.geometry.slot(n).set_lifecycle(Lifecycle::Destroying);
        self.occupancy.set_live(n, false);
        if self.barrier() {
            self.note(index);
        }
    }

    /// Keeps the visible objects for which `keep` returns `true` and destroys the others,
    /// in one pass in memory order; rooted objects are kept whatever `keep` says.
    ///
    /// # Safety
    /// The class is `T`'s.
    pub(crate) unsafe fn retain<T>(
        &mut self,
        table: &ObjectTable,
        outers: &mut Outers,
        mut keep: impl FnMut(&mut T) -> bool,
    ) {
        self.reactions.note_all();
        for w in 0..self.occupancy.live.len() {
            let mut bits = self.occupancy.live[w];
            while bits != 0 {
                let n = (w * 64) as u32 + bits.trailing_zeros();
                bits &= bits - 1;
                let object = self.geometry.cell_ptr(n).cast::<T>();
                // SAFETY: the live bit says the cell holds a `T` (the caller's contract);
                // `&mut self` makes it ours.
                if keep(unsafe { &mut *object }) {
                    continue;
                }
                if self.geometry.slot(n).is_rooted() {
                    continue;
                }
                let (index, max_generation) = (self.geometry.slot_of(n), self.geometry.max_generation);
                // SAFETY: the live bit says slot `index` holds an object of this class.
                unsafe { self.destroy_at(table, outers, index, max_generation, Ended::Removed) };
            }
        }
    }

    /// The one place a slot is released. Tells the class's end listeners, if it has any (and
    /// `notify_end` did not already), while the object is still in its cell. Marks the
    /// slot `vacant` with the next generation, or retires it at the ceiling; takes it out of
    /// the live bitmap, and out of the sub-object lists when the flags say it is linked (its
    /// own sub-objects are cut loose). Returns whether the slot retired (counted here). What
    /// happens to the cell is the caller's: [`free_cell`](Self::free_cell) it, or keep it
    /// (a deactivation).
    ///
    /// The common case — no listener, no dormant object, no link, below the ceiling — is one
    /// test of the class's hooks byte, one of the flags and one of the generation, then two
    /// stores to the slot and one to the live bitmap; everything else is
    /// [`release_slow`](Self::release_slow)'s.
    #[inline(always)]
    fn release(
        &mut self,
        table: &ObjectTable,
        outers: &mut Outers,
        found: Found,
        vacant: Lifecycle,
        max_generation: u32,
    ) -> bool {
        let Found { index, n, flags, generation, .. } = found;
        debug_assert_eq!(index - self.geometry.start, n, "cell number of another slot");
        debug_assert!(!flags.is_vacant(), "releasing vacant slot {index}");
        debug_assert_eq!(self.reactions.hooks, self.reactions.hooks_now(), "the class's hooks out of step");
        // The flags first: the compiler then keeps three branches rather than folding the
        // tests into one (measured: five instructions fewer a pair).
        if flags.intersects(ObjectFlags::LINKED)
            || self.reactions.hooks & Hooks::RELEASE != 0
            || generation >= max_generation
        {
            return self.release_slow(table, outers, (index, n, flags, generation), vacant, max_generation);
        }
        self.geometry.slot(n).vacate(generation, vacant);
        self.occupancy.set_live(n, false);
        false
    }

    /// [`release`](Self::release) for an object whose class has listeners or dormant
    /// objects, that is linked to an owner or sub-objects, or whose slot is at the
    /// generation ceiling. (The object's slot index, cell number, flags and generation come
    /// as scalars, not a [`Found`]: a struct passed to an outlined call is built in memory
    /// on the hot path before the branch that calls it.)
    #[cold]
    #[inline(never)]
    fn release_slow(
        &mut self,
        table: &ObjectTable,
        outers: &mut Outers,
        (index, n, flags, generation): (u32, u32, ObjectFlags, u32),
        vacant: Lifecycle,
        max_generation: u32,
    ) -> bool {
        if self.reactions.listeners.listening_to_ends() {
            // Before anything changes: the listeners see the object as it was.
            let generation = NonZeroU32::new(generation).unwrap_or_else(|| unreachable!("a live slot's generation"));
            self.tell_end(index, flags, generation);
        }
        if self.reactions.dormancy.any() {
            // Dormancy ends with the object: the cell's next object starts awake.
            self.reactions.wake_ended(n);
        }
        if flags.intersects(ObjectFlags::LINKED) {
            outers.detach_from_outer(table, index);
            outers.orphan_children(table, index);
        }
        if generation >= max_generation {
            // Wrapping would let an old handle alias a new object: the slot retires, vacant
            // for good at its last generation.
            self.geometry.slot(n).retire();
            self.occupancy.set_live(n, false);
            self.occupancy.retired += 1;
            return true;
        }
        self.geometry.slot(n).vacate(generation, vacant);
        self.occupancy.set_live(n, false);
        false
    }

    /// Frees a released cell: by default (not `returned`) onto the class's vacant list, where
    /// it is poisoned for ASan ([`respawn_allocator::poison`]); a class that returns
    /// its cells, or a `retired` slot, takes [`free_cell_slow`](Self::free_cell_slow).
    /// (`returned` is read once by the caller, for the vacant state too.)
    #[inline(always)]
    fn free_cell(&mut self, index: u32, cell: NonNull<u8>, returned: bool, retired: bool, ended: Ended) {
        if !returned && !retired {
            debug_assert!(
                self.reactions.ended_cells == EndedCells::Vacant,
                "a returned class's cell on its vacant list"
            );
            poison::poison(cell.as_ptr(), self.geometry.cell_size);
            self.occupancy.free.push(index);
            return;
        }
        self.free_cell_slow(index, cell, retired, ended);
    }

    /// [`free_cell`](Self::free_cell) for a class that returns its cells, or a `retired`
    /// slot: the returned list takes a [`Freed::Cell`] token, or [`Freed::Retired`] for a
    /// retired slot so that the owner can count the object gone; a retired slot's cell is
    /// poisoned.
    #[inline(never)]
    fn free_cell_slow(&mut self, index: u32, cell: NonNull<u8>, retired: bool, ended: Ended) {
        let class = self.geometry.id;
        if retired {
            poison::poison(cell.as_ptr(), self.geometry.cell_size);
            if self.reactions.ended_cells != EndedCells::Vacant {
                self.reactions.returned.push(Freed::Retired { class, slot: index, ended });
            }
            return;
        }
        debug_assert!(self.reactions.ended_cells != EndedCells::Vacant, "a vacant list's cell takes the fast path");
        self.occupancy.out += 1;
        self.reactions.returned.push(Freed::Cell(FreedCell { class, slot: index, cell }, ended));
    }
}

/// The state a released slot takes when it is not retired: `Vacant` for the class's
/// vacant list, `Lent` for a cell the class returns (`returned`: it belongs to the class's
/// owner until it comes back through `activate` or `recycle`, which a layout picture shows).
#[inline(always)]
fn vacant_state(returned: bool) -> Lifecycle {
    match returned {
        true => Lifecycle::Lent,
        false => Lifecycle::Vacant,
    }
}

/// Retires a released slot whose object's destructor panicked, and returns it as retired:
/// armed around the destructor in [`ClassEntry::destroy_at`], disarmed once it returns.
struct RetireOnUnwind<'a> {
    entry: &'a mut ClassEntry,
    index: u32,
    cell: NonNull<u8>,
    retired: bool,
    ended: Ended,
}

impl<'a> RetireOnUnwind<'a> {
    /// The destructor returned: the entry back, nothing done.
    #[inline(always)]
    fn disarm(self) -> &'a mut ClassEntry {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so the reference read out of it is the only one.
        unsafe { ptr::read(&this.entry) }
    }
}

impl Drop for RetireOnUnwind<'_> {
    #[cold]
    fn drop(&mut self) {
        if !self.retired {
            // The slot is vacant and on no list: no handle resolves to it, no insert takes
            // it. Counted with the ceiling's retirements.
            self.entry.occupancy.retired += 1;
        }
        self.entry.free_cell_slow(self.index, self.cell, true, self.ended);
    }
}
