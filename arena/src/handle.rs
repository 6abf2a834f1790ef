//! Generational handles and root guards.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::marker::PhantomData;
use std::num::NonZeroU32;

#[cfg(not(loom))]
use respawn_allocator::sync::Arc;

#[cfg(not(loom))]
use crate::table::ObjectTable;

/// An untyped handle: a slot index and the generation the slot had when the object was
/// placed in it. 8 bytes, and `Option<RawHandle>` is 8 bytes too (the generation is never
/// zero).
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(C)]
pub struct RawHandle {
    index: u32,
    generation: NonZeroU32,
}

impl RawHandle {
    /// A handle from its parts. Any value is safe: one that names no live object just does
    /// not resolve.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use respawn_arena::{Arena, Handle, RawHandle};
    ///
    /// let mut arena = Arena::new();
    /// let h = arena.insert(42u32);
    /// let raw = RawHandle::new(h.index(), h.generation());
    /// assert_eq!(raw, h.raw());
    /// assert_eq!(arena.get(Handle::<u32>::from_raw(raw)), Some(&42));
    ///
    /// // Any value is safe: one that names no live object does not resolve.
    /// let later = NonZeroU32::new(h.generation().get() + 1).unwrap();
    /// assert_eq!(arena.get(Handle::<u32>::from_raw(RawHandle::new(h.index(), later))), None);
    /// ```
    #[inline]
    pub const fn new(index: u32, generation: NonZeroU32) -> Self {
        Self { index, generation }
    }

    /// The slot index.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let a = arena.insert(1u32).raw();
    /// let b = arena.insert(2u32).raw();
    /// assert_ne!(a.index(), b.index(), "a slot each");
    /// assert_eq!(arena.handle_at(a.index()), Some(a));
    /// ```
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation the slot had when the object was placed in it.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let old = arena.insert(1u32);
    /// arena.remove(old);
    /// let new = arena.insert(2u32); // the freed slot, with the next generation
    /// assert_eq!(new.raw().index(), old.raw().index());
    /// assert!(new.raw().generation() > old.raw().generation());
    /// assert!(arena.get(old).is_none(), "the old handle never resolves again");
    /// ```
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.generation
    }

    /// Packs the handle into 64 bits: generation high, index low.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use respawn_arena::RawHandle;
    ///
    /// let raw = RawHandle::new(5, NonZeroU32::new(3).unwrap());
    /// assert_eq!(raw.to_bits(), 3 << 32 | 5);
    /// // One `u64`, for a network message or a save file.
    /// assert_eq!(RawHandle::from_bits(raw.to_bits()), Some(raw));
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        (self.generation.get() as u64) << 32 | self.index as u64
    }

    /// Unpacks [`to_bits`](Self::to_bits); `None` if the generation half is zero.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::num::NonZeroU32;
    /// use respawn_arena::RawHandle;
    ///
    /// let raw = RawHandle::from_bits(3 << 32 | 5).expect("generation 3");
    /// assert_eq!((raw.index(), raw.generation()), (5, NonZeroU32::new(3).unwrap()));
    /// assert_eq!(RawHandle::from_bits(5), None, "generation 0 is never a handle's");
    /// ```
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Self> {
        match NonZeroU32::new((bits >> 32) as u32) {
            Some(generation) => Some(Self { index: bits as u32, generation }),
            None => None,
        }
    }
}

impl fmt::Debug for RawHandle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}v{}", self.index, self.generation)
    }
}

/// A typed, weak, generational handle to an object of class `T` (UE's `TWeakObjectPtr`).
///
/// `Copy`, 8 bytes, and `Option<Handle<T>>` is 8 bytes. It resolves through the arena only
/// while the object it was made for is alive and visible: the generation in the slot still
/// matches, and the object's [`Lifecycle`](crate::Lifecycle) is `Live`. The arena bumps a slot's
/// generation every time its object is released and retires a slot rather than let the
/// generation wrap, so a handle never resolves to an object other than its own.
///
/// A handle does not keep its object alive; see [`Root`].
pub struct Handle<T> {
    raw: RawHandle,
    _class: PhantomData<fn() -> T>,
}

impl<T> Handle<T> {
    /// A typed handle from an untyped one. Safe: the arena checks the class on every use.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, Handle, RawHandle};
    ///
    /// let mut arena = Arena::new();
    /// // Untyped handles of several classes, kept in one list.
    /// let mixed: Vec<RawHandle> = vec![arena.insert(7u32).raw(), arena.insert(0.5f32).raw()];
    /// assert_eq!(arena.get(Handle::<u32>::from_raw(mixed[0])), Some(&7));
    /// assert_eq!(arena.get(Handle::<f32>::from_raw(mixed[1])), Some(&0.5));
    /// // The wrong class: the arena checks it, and the handle does not resolve.
    /// assert_eq!(arena.get(Handle::<u32>::from_raw(mixed[1])), None);
    /// ```
    #[inline]
    pub const fn from_raw(raw: RawHandle) -> Self {
        Self { raw, _class: PhantomData }
    }

    /// The untyped handle.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, RawHandle};
    ///
    /// struct Ship { hull: u32 }
    /// struct Cargo { mass: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let ship = arena.insert(Ship { hull: 100 });
    /// let cargo = arena.insert(Cargo { mass: 5 });
    /// // Calls that take objects of any class take their untyped handles.
    /// arena.set_outer(cargo.raw(), Some(ship.raw()))?;
    /// assert_eq!(arena.sub_objects(ship.raw()).collect::<Vec<RawHandle>>(), [cargo.raw()]);
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    #[inline]
    pub const fn raw(self) -> RawHandle {
        self.raw
    }

    /// The slot index.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let a = arena.insert(1u32);
    /// let b = arena.insert(2u32);
    /// assert_ne!(a.index(), b.index(), "a slot each");
    /// assert_eq!(a.index(), a.raw().index());
    /// ```
    #[inline]
    pub const fn index(self) -> u32 {
        self.raw.index
    }

    /// The generation.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let old = arena.insert(1u32);
    /// arena.remove(old);
    /// let new = arena.insert(2u32); // the freed slot, with the next generation
    /// assert_eq!(new.index(), old.index());
    /// assert!(new.generation() > old.generation());
    /// assert_ne!(new, old);
    /// ```
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.raw.generation
    }

    /// See [`RawHandle::to_bits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let h = arena.insert(7u32);
    /// let bits: u64 = h.to_bits(); // generation high, index low
    /// assert_eq!(bits >> 32, u64::from(h.generation().get()));
    /// assert_eq!(bits as u32, h.index());
    /// ```
    #[inline]
    pub const fn to_bits(self) -> u64 {
        self.raw.to_bits()
    }

    /// See [`RawHandle::from_bits`].
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, Handle};
    ///
    /// let mut arena = Arena::new();
    /// let h = arena.insert(7u32);
    /// // Back from a `u64` (a network message, a save file).
    /// let back = Handle::<u32>::from_bits(h.to_bits()).expect("a nonzero generation");
    /// assert_eq!(back, h);
    /// assert_eq!(arena.get(back), Some(&7));
    /// assert!(Handle::<u32>::from_bits(0).is_none());
    /// ```
    #[inline]
    pub const fn from_bits(bits: u64) -> Option<Self> {
        match RawHandle::from_bits(bits) {
            Some(raw) => Some(Self::from_raw(raw)),
            None => None,
        }
    }
}

// Written by hand: derives would demand `T: Clone` etc., but a handle is plain data for any T.
impl<T> Clone for Handle<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Handle<T> {}
impl<T> PartialEq for Handle<T> {
    fn eq(&self, other: &Self) -> bool {
        self.raw == other.raw
    }
}
impl<T> Eq for Handle<T> {}
impl<T> PartialOrd for Handle<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for Handle<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.raw.cmp(&other.raw)
    }
}
impl<T> Hash for Handle<T> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.raw.hash(state);
    }
}
/// `Enemy#127v1`: the class (its type without the module path), the object's index among
/// its class's slots, and the generation (a [`RawHandle`], which knows no class, prints the
/// object table's index: `4194431v1`).
/// Prints `Enemy#127v1`: the class without its module path, the object's index among its
/// class's slots ([`class_local_index`]), its generation. When the class's slots begin at
/// different places in different arenas, the index is the object table's, after an `@`:
/// `Enemy@4194431v1`.
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let class = std::any::type_name::<T>();
        let short = crate::short_type_name(class);
        match class_local_index(class, self.raw.index) {
            Some(local) => write!(f, "{short}#{local}v{}", self.raw.generation),
            None => write!(f, "{short}@{:?}", self.raw),
        }
    }
}

/// Where each class's slots begin in the object table, by the class's type name: recorded
/// when an arena registers the class. `None` once arenas registered it at different places.
type Starts = std::sync::RwLock<std::collections::HashMap<&'static str, Option<u32>>>;

fn starts() -> &'static Starts {
    static STARTS: std::sync::OnceLock<Starts> = std::sync::OnceLock::new();
    STARTS.get_or_init(Default::default)
}

/// Records that an arena gave `class` the slots from `start` on.
pub(crate) fn record_class_start(class: &'static str, start: u32) {
    let mut starts = starts().write().unwrap_or_else(std::sync::PoisonError::into_inner);
    starts.entry(class).and_modify(|known| *known = known.filter(|&s| s == start)).or_insert(Some(start));
}

/// The object in slot `index` counted among its class's slots: `0` for the class's first.
/// What a handle's debug form and the collector's reference chains print, so that an
/// object reads `Enemy#127`, not by its place in the object table (whose classes each
/// begin a block of a million slots on). `None` for a class no arena registered, or one
/// that arenas registered at different places (its objects' table indices then say nothing
/// about their class alone).
///
/// # Examples
///
/// ```
/// use respawn_arena::{class_local_index, Arena};
///
/// struct Enemy { hp: u32 }
///
/// let mut arena = Arena::new();
/// let enemy = arena.insert(Enemy { hp: 3 });
/// let local = class_local_index(std::any::type_name::<Enemy>(), enemy.index()).unwrap();
/// // Among the class's slots: 4 Mi of them by default.
/// assert!(local < 4 << 20);
/// assert_eq!(format!("{enemy:?}"), format!("Enemy#{local}v1"));
/// ```
pub fn class_local_index(class: &str, index: u32) -> Option<u32> {
    let starts = starts().read().unwrap_or_else(std::sync::PoisonError::into_inner);
    let start = (*starts.get(class)?)?;
    index.checked_sub(start)
}
impl<T> From<Handle<T>> for RawHandle {
    fn from(h: Handle<T>) -> Self {
        h.raw
    }
}

/// An RAII root: while any `Root` of an object lives, the object is in the root set and the
/// collector keeps it, and the arena refuses to remove it (UE's `TStrongObjectPtr`).
///
/// Made by [`Arena::root`](crate::Arena::root). Cloning adds a root, dropping takes one
/// away; both are one atomic operation on the object's slot and work from any thread. A
/// `Root` that outlives its arena is harmless: it keeps the object table's memory alive and
/// its drop changes nothing that anyone reads.
#[cfg(not(loom))]
pub struct Root<T> {
    table: Arc<ObjectTable>,
    handle: Handle<T>,
}

#[cfg(not(loom))]
impl<T> Root<T> {
    /// Roots `handle`'s object. The caller (the arena) has checked that it resolves.
    pub(crate) fn new(table: Arc<ObjectTable>, handle: Handle<T>) -> Self {
        table.slot(handle.index()).expect("a resolved handle's slot exists").add_root();
        Self { table, handle }
    }

    /// The handle of the rooted object.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, ArenaError};
    ///
    /// let mut arena = Arena::new();
    /// let h = arena.insert(7u32);
    /// let root = arena.root(h)?;
    /// assert_eq!(root.handle(), h);
    /// assert!(matches!(arena.try_remove(root.handle()), Err(ArenaError::Rooted)));
    /// drop(root);
    /// assert_eq!(arena.remove(h), Some(7));
    /// # Ok::<(), ArenaError>(())
    /// ```
    pub fn handle(&self) -> Handle<T> {
        self.handle
    }
}

#[cfg(not(loom))]
impl<T> Clone for Root<T> {
    fn clone(&self) -> Self {
        Self::new(Arc::clone(&self.table), self.handle)
    }
}

#[cfg(not(loom))]
impl<T> Drop for Root<T> {
    fn drop(&mut self) {
        if let Some(slot) = self.table.slot(self.handle.index()) {
            let before = slot.drop_root();
            debug_assert!(before > 0, "root count of {:?} underflowed", self.handle);
        }
    }
}

#[cfg(not(loom))]
impl<T> fmt::Debug for Root<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Root").field(&self.handle).finish()
    }
}
