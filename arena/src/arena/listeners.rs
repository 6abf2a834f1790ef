//! Lifecycle listeners (UE's `FUObjectCreateListener` and `FUObjectDeleteListener`):
//! closures a class's record keeps, told of its objects' beginnings and ends.
//!
//! ```text
//!   class entry's reactions: spawns [(1, listener)]  ends [(2, listener), (3, listener)]
//!                            empty lists: a spawn or a release pays one test of a byte
//!
//!   notify_spawn(raw) ──► tell_spawn ──► each spawn listener (handle, &object)
//!   notify_end(raw)   ──► tell_end ──► END_NOTIFIED set, each end listener (handle, &object)
//!   release(slot)     ──► END_NOTIFIED? ── no ──► tell_end      (then the slot is released,
//!                                       └─ yes ─► silent          which clears the flag)
//! ```
//!
//! An end's seam is the class entry's `release`, the one place a slot is released: a
//! remove, a destroy (the collector's purge and `destroy_now` end there), a deactivation, a
//! retirement. Each end listener hears of each object at most once: [`Arena::notify_end`]
//! tells them early (a pool's destroy, before it resets or deactivates the object) and flags the
//! slot, and the release that follows stays silent.
//!
//! A spawn has no such seam: an object is complete when whoever made it says so (a pool
//! after `init` and `on_spawn`, a composite once its parts are linked). So spawn listeners
//! hear of an object when that caller calls [`Arena::notify_spawn`] (or
//! [`ClassStore::notify_spawn`](crate::ClassStore::notify_spawn)), once.

use respawn_allocator::ClassId;

use super::{check_releasable, Arena};
use crate::class::listeners::{ErasedListener, Heard};
use crate::class::ClassEntry;
use crate::{ArenaError, Handle, ObjectFlags, RawHandle};

/// Names a spawn or an end listener, to remove it with [`Arena::remove_listener`]: its
/// class and its number within the class (never reused).
///
/// ```
/// use respawn_arena::Arena;
///
/// let mut arena = Arena::new();
/// let ids = [arena.add_spawn_listener(|_, _: &u32| {})?, arena.add_end_listener(|_, _: &u32| {})?];
/// assert_ne!(ids[0], ids[1]);
/// assert!(ids.iter().all(|id| Some(id.class()) == arena.class_of::<u32>()));
/// # Ok::<(), respawn_arena::ArenaError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ListenerId {
    class: ClassId,
    n: u32,
}

impl ListenerId {
    /// The class whose objects the listener hears of.
    pub fn class(self) -> ClassId {
        self.class
    }
}

impl Arena {
    /// Adds `listener` to class `T`'s end listeners (UE's `FUObjectDeleteListener`): it is
    /// called with the handle and the object, still intact, whenever an object of `T` ends
    /// — removed, destroyed, deactivated by a pool, purged or destroyed at once by a collector,
    /// retired — just before its slot is released, or earlier through
    /// [`notify_end`](Self::notify_end); once per object either way. A class may have
    /// several; they run in the order they were added. Registers `T` if needed.
    ///
    /// Objects still in the arena when it drops end without a word. The listener runs
    /// inside the call that ends the object and must not panic: a panic goes on out of that
    /// call and leaves the object where it was (it is then dropped with the arena).
    ///
    /// # Errors
    /// As [`register`](Self::register), when `T` was not registered yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_arena::Arena;
    ///
    /// #[derive(Debug)]
    /// struct Ship { net_id: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let gone = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&gone);
    /// let id = arena.add_end_listener(move |_, ship: &Ship| log.lock().unwrap().push(ship.net_id))?;
    ///
    /// let a = arena.insert(Ship { net_id: 7 });
    /// let b = arena.insert(Ship { net_id: 8 });
    /// arena.remove(a);
    /// arena.destroy(b.raw())?;
    /// assert_eq!(*gone.lock().unwrap(), [7, 8]);
    ///
    /// assert!(arena.remove_listener(id));
    /// let c = arena.insert(Ship { net_id: 9 });
    /// arena.remove(c);
    /// assert_eq!(gone.lock().unwrap().len(), 2, "no longer told");
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    pub fn add_end_listener<T: Send + Sync + 'static>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.add_listener(Heard::End, listener)
    }

    /// Adds `listener` to class `T`'s spawn listeners (UE's `FUObjectCreateListener`): it
    /// is called with the handle and the object of every `T` whose maker says it is
    /// complete, through [`notify_spawn`](Self::notify_spawn) or
    /// [`ClassStore::notify_spawn`](crate::ClassStore::notify_spawn): respawn's pools after
    /// `init` and `on_spawn`, its World for each object it places. The arena's own
    /// [`insert`](Self::insert) tells nobody: its caller may not be done with the object.
    /// A class may have several; they run in the order they were added. Registers `T` if
    /// needed.
    ///
    /// # Errors
    /// As [`register`](Self::register), when `T` was not registered yet.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::{Arc, Mutex};
    /// use respawn_arena::Arena;
    ///
    /// struct Ship { net_id: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let seen = Arc::new(Mutex::new(Vec::new()));
    /// let log = Arc::clone(&seen);
    /// arena.add_spawn_listener(move |_, ship: &Ship| log.lock().unwrap().push(ship.net_id))?;
    ///
    /// let a = arena.insert(Ship { net_id: 0 });
    /// arena.get_mut(a).unwrap().net_id = 7;
    /// arena.notify_spawn(a.raw())?; // complete now
    /// assert_eq!(*seen.lock().unwrap(), [7]);
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    pub fn add_spawn_listener<T: Send + Sync + 'static>(
        &mut self,
        listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        self.add_listener(Heard::Spawn, listener)
    }

    fn add_listener<T: Send + Sync + 'static>(
        &mut self,
        heard: Heard,
        mut listener: impl FnMut(Handle<T>, &T) + Send + 'static,
    ) -> Result<ListenerId, ArenaError> {
        let class = self.find_or_register::<T>()?;
        let erased: ErasedListener = Box::new(move |raw, cell| {
            // SAFETY: the listener sits in class `T`'s entry, which calls it only with the
            // cell of a live object of its class (`tell_end`, `tell_spawn`), under
            // `&mut Arena`.
            listener(Handle::from_raw(raw), unsafe { cell.cast::<T>().as_ref() })
        });
        let n = self.classes[class.index()].add_listener(heard, erased);
        Ok(ListenerId { class, n })
    }

    /// Removes a spawn or an end listener; `false` if it was removed already (or is not
    /// this arena's).
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let id = arena.add_end_listener(|_, _: &u32| {})?;
    /// assert!(arena.remove_listener(id));
    /// assert!(!arena.remove_listener(id));
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    pub fn remove_listener(&mut self, id: ListenerId) -> bool {
        self.classes.get_mut(id.class.index()).is_some_and(|entry| entry.remove_listener(id.n))
    }

    /// How many end listeners class `T` has (0 for a class this arena does not know).
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// assert_eq!(arena.end_listeners::<u32>(), 0);
    /// arena.add_end_listener(|_, _: &u32| {})?;
    /// arena.add_end_listener(|_, _: &u32| {})?;
    /// arena.add_spawn_listener(|_, _: &u32| {})?;
    /// assert_eq!((arena.end_listeners::<u32>(), arena.spawn_listeners::<u32>()), (2, 1));
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    pub fn end_listeners<T: 'static>(&self) -> usize {
        self.class_of::<T>().map_or(0, |id| self.classes[id.index()].listeners(Heard::End))
    }

    /// How many spawn listeners class `T` has (0 for a class this arena does not know).
    pub fn spawn_listeners<T: 'static>(&self) -> usize {
        self.class_of::<T>().map_or(0, |id| self.classes[id.index()].listeners(Heard::Spawn))
    }

    /// Whether any class of the arena has end listeners: a caller about to end a whole
    /// subtree of objects, of several classes, tests it once before telling each.
    pub fn any_end_listeners(&self) -> bool {
        self.classes.iter().any(ClassEntry::listening_to_ends)
    }

    /// Tells the spawn listeners of the class of the visible object `raw` names that it is
    /// complete: its maker's call, once per object (a second call tells them again).
    ///
    /// # Errors
    /// [`ArenaError::Stale`], or [`ArenaError::Hidden`] for an object that is garbage or
    /// ending; nothing is told.
    pub fn notify_spawn(&mut self, raw: RawHandle) -> Result<(), ArenaError> {
        let slot = self.table.resolve(raw)?;
        let entry = &mut self.classes[usize::from(slot.class())];
        if entry.listening_to_spawns() {
            // The table knows every cell, a permanent object's too.
            let cell = self.table.cell(raw.index()).unwrap_or_else(|| unreachable!("a visible object has a cell"));
            entry.tell_spawn(raw, cell);
        }
        Ok(())
    }

    /// Tells the class's end listeners now that the object `raw` names is ending (visible
    /// or hidden), for a caller that ends objects in steps and wants them told before the
    /// first step changes the object: respawn's pools call it before `on_release` and
    /// `reset`, and before garbage waits for its purge. The object's
    /// release later tells them nothing more. Returns `false` if they were told already.
    ///
    /// # Errors
    /// [`ArenaError::Stale`], [`ArenaError::Rooted`] or [`ArenaError::Permanent`] (objects
    /// that cannot end now); nothing is told.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::sync::atomic::{AtomicU32, Ordering};
    /// use std::sync::Arc;
    /// use respawn_arena::{Arena, ObjectFlags};
    ///
    /// let mut arena = Arena::new();
    /// let told = Arc::new(AtomicU32::new(0));
    /// let count = Arc::clone(&told);
    /// arena.add_end_listener(move |_, _: &u64| { count.fetch_add(1, Ordering::Relaxed); })?;
    ///
    /// let h = arena.insert(5u64);
    /// assert!(arena.notify_end(h.raw())?); // told now …
    /// assert!(!arena.notify_end(h.raw())?);
    /// assert!(arena.flags(h.raw())?.contains(ObjectFlags::END_NOTIFIED));
    /// arena.remove(h); // … and not again at the release
    /// assert_eq!(told.load(Ordering::Relaxed), 1);
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    pub fn notify_end(&mut self, raw: RawHandle) -> Result<bool, ArenaError> {
        let slot = self.table.resolve_live(raw)?;
        check_releasable(&self.table, raw.index(), slot)?;
        if slot.flags().contains(ObjectFlags::END_NOTIFIED) {
            return Ok(false);
        }
        let entry = &mut self.classes[usize::from(slot.class())];
        let geometry = entry.geometry();
        debug_assert!(
            geometry.number(raw.index()) < geometry.capacity(),
            "a releasable object lies in its class's range"
        );
        entry.tell_end(raw.index(), slot.flags(), raw.generation());
        Ok(true)
    }
}
