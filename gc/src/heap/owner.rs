//! The calls of a class's owner — a pool that takes the class's cells, builds its objects
//! and keeps them for reuse — and the arena's mutable loans the heap lends as they are.
//!
//! The heap lends its arena's class records one class at a time ([`Heap::store_of`]) or by
//! class id, never the arena whole: a `&mut Arena` could be replaced (`mem::swap`), and the
//! collector's per-class entries (each class's trace and destroy hooks, by class id) and
//! the purge thread's cells belong to the arena the heap was made with.

use respawn_arena::{
    ArenaError, ClassId, ClassStore, CompactCell, Freed, FreedCell, Handle, IterMut, ListenerId, RawHandle,
};

use super::Heap;
use crate::Object;

impl Heap {
    /// The typed view of class `id` ([`Arena::store_of`](respawn_arena::Arena::store_of)),
    /// for the owner of the class's objects: it inserts, removes, lends and keeps them
    /// itself, so its removals skip the collector's `begin_destroy` and `finish_destroy`.
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `id` is not a class of this heap, or
    /// [`ArenaError::WrongClass`] if it is another type's.
    #[inline]
    pub fn store_of<T: Send + Sync + 'static>(&mut self, id: ClassId) -> Result<ClassStore<'_, T>, ArenaError> {
        self.arena.store_of(id)
    }

    /// [`store_of`](Self::store_of) with no check, for an owner that checked `id` once
    /// ([`Arena::store_of_unchecked`](respawn_arena::Arena::store_of_unchecked)).
    ///
    /// # Safety
    /// `id` is class `T`'s in this heap.
    #[inline(always)]
    pub unsafe fn store_of_unchecked<T: 'static>(&mut self, id: ClassId) -> ClassStore<'_, T> {
        // SAFETY: the caller's contract, which is the arena's.
        unsafe { self.arena.store_of_unchecked(id) }
    }

    /// A vacant cell of class `class`, lent to its owner
    /// ([`Arena::take_cell`](respawn_arena::Arena::take_cell)).
    ///
    /// # Errors
    /// As `Arena::take_cell`.
    #[inline]
    pub fn take_cell(&mut self, class: ClassId) -> Result<FreedCell, ArenaError> {
        self.arena.take_cell(class)
    }

    /// Gives a lent or returned cell back: vacant for the class's next object
    /// ([`Arena::recycle`](respawn_arena::Arena::recycle)).
    ///
    /// # Errors
    /// [`ArenaError::Stale`] if the token is not this heap's.
    #[inline]
    pub fn recycle(&mut self, token: FreedCell) -> Result<(), ArenaError> {
        self.arena.recycle(token)
    }

    /// Makes class `class`'s returned cells vacant again in one pass, showing `seen` each
    /// entry ([`Arena::recycle_returned`](respawn_arena::Arena::recycle_returned)).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] if `class` is not a class of this heap.
    #[inline]
    pub fn recycle_returned(&mut self, class: ClassId, seen: impl FnMut(&Freed)) -> Result<(), ArenaError> {
        self.arena.recycle_returned(class, seen)
    }

    /// Whether releases keep class `class`'s objects for reuse
    /// ([`Arena::set_keeping`](respawn_arena::Arena::set_keeping)).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for a class this heap does not know.
    pub fn set_keeping(&mut self, class: ClassId, on: bool) -> Result<(), ArenaError> {
        self.arena.set_keeping(class, on)
    }

    /// Hands every object class `class` keeps out as a compact token
    /// ([`Arena::take_kept`](respawn_arena::Arena::take_kept)).
    pub fn take_kept(&mut self, class: ClassId) -> Vec<CompactCell> {
        self.arena.take_kept(class)
    }

    /// Drops every object class `class` keeps for reuse; how many
    /// ([`Arena::drop_kept`](respawn_arena::Arena::drop_kept)).
    pub fn drop_kept(&mut self, class: ClassId) -> usize {
        self.arena.drop_kept(class)
    }

    /// Gives the memory of class `class`'s empty slabs back to the OS; how many slabs
    /// ([`Arena::decommit_empty_slabs`](respawn_arena::Arena::decommit_empty_slabs)).
    ///
    /// # Errors
    /// As `Arena::decommit_empty_slabs`.
    pub fn decommit_empty_slabs(&mut self, class: ClassId) -> Result<usize, ArenaError> {
        self.arena.decommit_empty_slabs(class)
    }

    /// The objects `handles` name, mutably, if each resolves and no two are the same
    /// ([`Arena::get_disjoint_mut`](respawn_arena::Arena::get_disjoint_mut)).
    #[inline]
    pub fn get_disjoint_mut<T: 'static, const N: usize>(&mut self, handles: [Handle<T>; N]) -> Option<[&mut T; N]> {
        self.arena.get_disjoint_mut(handles)
    }

    /// Every visible object of class `T` with its handle, mutably, in memory order
    /// ([`Arena::iter_mut`](respawn_arena::Arena::iter_mut)).
    pub fn iter_mut<T: 'static>(&mut self) -> IterMut<'_, T> {
        self.arena.iter_mut()
    }

    /// Calls `listener` with each object of class `T` as it ends, however it ends
    /// ([`Arena::add_end_listener`](respawn_arena::Arena::add_end_listener)); registers
    /// `T` with the collector first if it is new.
    ///
    /// # Errors
    /// As [`Arena::register`](respawn_arena::Arena::register).
    pub fn add_end_listener<T: Object>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.add_end_listener(listener)
    }

    /// Calls `listener` with each object of class `T` its maker says is complete
    /// ([`Arena::add_spawn_listener`](respawn_arena::Arena::add_spawn_listener)); registers
    /// `T` with the collector first if it is new.
    ///
    /// # Errors
    /// As [`Arena::register`](respawn_arena::Arena::register).
    pub fn add_spawn_listener<T: Object>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.add_spawn_listener(listener)
    }

    /// Removes a spawn or an end listener; `false` if it was removed already
    /// ([`Arena::remove_listener`](respawn_arena::Arena::remove_listener)).
    pub fn remove_listener(&mut self, id: ListenerId) -> bool {
        self.arena.remove_listener(id)
    }

    /// Tells the spawn listeners of the visible object `raw` names that it is complete
    /// ([`Arena::notify_spawn`](respawn_arena::Arena::notify_spawn)).
    ///
    /// # Errors
    /// As `Arena::notify_spawn`.
    pub fn notify_spawn(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.arena.notify_spawn(raw)
    }

    /// Tells the end listeners of the object `raw` names that it ends, unless they were
    /// told already; whether they were told now
    /// ([`Arena::notify_end`](respawn_arena::Arena::notify_end)).
    ///
    /// # Errors
    /// As `Arena::notify_end`.
    pub fn notify_end(&mut self, raw: RawHandle) -> Result<bool, ArenaError> {
        self.arena.notify_end(raw)
    }
}
