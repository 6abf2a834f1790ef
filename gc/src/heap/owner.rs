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
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::SlabConfig;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Spark { heat: f32 }
    ///
    /// let mut heap = Heap::new();
    /// let no_spare = SlabConfig { spare_slabs: 0, ..SlabConfig::SMALL }; // 64 cells a slab
    /// let class = heap.register_with::<Spark>(no_spare)?;
    /// let keep = heap.insert(Spark { heat: 0.0 });
    /// let burst: Vec<_> = (0..1000).map(|_| heap.insert(Spark { heat: 1.0 })).collect();
    /// for spark in burst {
    ///     heap.destroy_now(spark.raw())?;
    /// }
    /// let before = heap.stats::<Spark>().unwrap().memory.committed_bytes;
    /// assert_eq!(heap.decommit_empty_slabs(class)?, 15, "16 slabs of 64; the first keeps `keep`");
    /// assert!(heap.stats::<Spark>().unwrap().memory.committed_bytes < before);
    /// assert!(heap.contains(keep));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn decommit_empty_slabs(&mut self, class: ClassId) -> Result<usize, ArenaError> {
        self.arena.decommit_empty_slabs(class)
    }

    /// The objects `handles` name, mutably, if each resolves and no two are the same
    /// ([`Arena::get_disjoint_mut`](respawn_arena::Arena::get_disjoint_mut)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Fighter { hp: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Fighter { hp: 100 });
    /// let b = heap.insert(Fighter { hp: 100 });
    /// let [attacker, target] = heap.get_disjoint_mut([a, b]).unwrap();
    /// target.hp -= 30;
    /// attacker.hp += 10; // drains the hit
    /// assert_eq!((heap.get(a).unwrap().hp, heap.get(b).unwrap().hp), (110, 70));
    /// assert!(heap.get_disjoint_mut([a, a]).is_none(), "the same object twice");
    /// ```
    #[inline]
    pub fn get_disjoint_mut<T: 'static, const N: usize>(&mut self, handles: [Handle<T>; N]) -> Option<[&mut T; N]> {
        self.arena.get_disjoint_mut(handles)
    }

    /// Every visible object of class `T` with its handle, mutably, in memory order
    /// ([`Arena::iter_mut`](respawn_arena::Arena::iter_mut)).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Coin { value: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let a = heap.insert(Coin { value: 5 });
    /// let b = heap.insert(Coin { value: 7 });
    /// heap.set_dormant(b.raw(), true)?;
    /// for (_, coin) in heap.iter_mut::<Coin>() {
    ///     coin.value *= 2; // dormant ones too: only ticks skip them
    /// }
    /// assert_eq!((heap.get(a).unwrap().value, heap.get(b).unwrap().value), (10, 14));
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn iter_mut<T: 'static>(&mut self) -> IterMut<'_, T> {
        self.arena.iter_mut()
    }

    /// Calls `listener` with each object of class `T` as it ends, however it ends
    /// ([`Arena::add_end_listener`](respawn_arena::Arena::add_end_listener)); registers
    /// `T` with the collector first if it is new.
    ///
    /// # Errors
    /// As [`Arena::register`](respawn_arena::Arena::register).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_gc::{CollectOptions, Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let gone = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&gone);
    /// heap.add_end_listener(move |_, ship: &Ship| log.lock().unwrap().push(ship.net_id))?;
    /// let a = heap.insert(Ship { net_id: 7 });
    /// heap.insert(Ship { net_id: 8 });
    /// heap.destroy_now(a.raw())?;
    /// heap.collect_garbage(CollectOptions::FULL); // nothing roots the other
    /// assert_eq!(*gone.lock().unwrap(), [7, 8], "however it ends");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn add_end_listener<T: Object>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.add_end_listener(listener)
    }

    /// Calls `listener` with each object of class `T` its maker says is complete
    /// ([`Arena::add_spawn_listener`](respawn_arena::Arena::add_spawn_listener)); registers
    /// `T` with the collector first if it is new. On a `Heap` the maker is the game:
    /// [`insert`](Self::insert) tells nobody, so call [`notify_spawn`](Self::notify_spawn)
    /// once the object is complete (a `World`'s pools call it for each spawn).
    ///
    /// # Errors
    /// As [`Arena::register`](respawn_arena::Arena::register).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// heap.add_spawn_listener(move |_, ship: &Ship| log.lock().unwrap().push(ship.net_id))?;
    /// let ship = heap.insert(Ship { net_id: 0 });
    /// heap.get_mut(ship).unwrap().net_id = 7;
    /// assert!(seen.lock().unwrap().is_empty(), "`insert` tells nobody");
    /// heap.notify_spawn(ship.raw())?; // complete now
    /// assert_eq!(*seen.lock().unwrap(), [7]);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn add_spawn_listener<T: Object>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.ensure_class::<T>()?;
        self.arena.add_spawn_listener(listener)
    }

    /// Removes a spawn or an end listener; `false` if it was removed already
    /// ([`Arena::remove_listener`](respawn_arena::Arena::remove_listener)).
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let told = Arc::new(AtomicU32::new(0));
    /// let count = Arc::clone(&told);
    /// let id = heap.add_end_listener(move |_, _: &Ship| {
    ///     count.fetch_add(1, Ordering::Relaxed);
    /// })?;
    /// assert!(heap.remove_listener(id));
    /// let ship = heap.insert(Ship { net_id: 1 });
    /// heap.destroy_now(ship.raw())?;
    /// assert_eq!(told.load(Ordering::Relaxed), 0, "no longer told");
    /// assert!(!heap.remove_listener(id), "removed already");
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn remove_listener(&mut self, id: ListenerId) -> bool {
        self.arena.remove_listener(id)
    }

    /// Tells the spawn listeners of the visible object `raw` names that it is complete
    /// ([`Arena::notify_spawn`](respawn_arena::Arena::notify_spawn)).
    ///
    /// # Errors
    /// As `Arena::notify_spawn`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let told = Arc::new(AtomicU32::new(0));
    /// let count = Arc::clone(&told);
    /// heap.add_spawn_listener(move |_, _: &Ship| {
    ///     count.fetch_add(1, Ordering::Relaxed);
    /// })?;
    /// let ship = heap.insert(Ship { net_id: 7 });
    /// heap.notify_spawn(ship.raw())?;
    /// assert_eq!(told.load(Ordering::Relaxed), 1);
    /// heap.destroy_now(ship.raw())?;
    /// assert!(heap.notify_spawn(ship.raw()).is_err(), "a stale handle: nobody is told");
    /// assert_eq!(told.load(Ordering::Relaxed), 1);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn notify_spawn(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        self.arena.notify_spawn(raw)
    }

    /// Tells the end listeners of the object `raw` names that it ends, unless they were
    /// told already; whether they were told now
    /// ([`Arena::notify_end`](respawn_arena::Arena::notify_end)).
    ///
    /// # Errors
    /// As `Arena::notify_end`.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use respawn_gc::{Heap, Object, Trace};
    ///
    /// #[derive(Trace, Object)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut heap = Heap::new();
    /// let told = Arc::new(AtomicU32::new(0));
    /// let count = Arc::clone(&told);
    /// heap.add_end_listener(move |_, _: &Ship| {
    ///     count.fetch_add(1, Ordering::Relaxed);
    /// })?;
    /// let ship = heap.insert(Ship { net_id: 7 });
    /// assert!(heap.notify_end(ship.raw())?); // told now, before the object is torn down …
    /// assert!(!heap.notify_end(ship.raw())?);
    /// heap.destroy_now(ship.raw())?; // … and not again as it ends
    /// assert_eq!(told.load(Ordering::Relaxed), 1);
    /// # Ok::<(), respawn_gc::GcError>(())
    /// ```
    pub fn notify_end(&mut self, raw: RawHandle) -> Result<bool, ArenaError> {
        self.arena.notify_end(raw)
    }
}
