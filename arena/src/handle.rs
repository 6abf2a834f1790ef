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
    #[inline]
    pub const fn new(index: u32, generation: NonZeroU32) -> Self {
        Self { index, generation }
    }

    /// The slot index.
    #[inline]
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The generation the slot had when the object was placed in it.
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.generation
    }

    /// Packs the handle into 64 bits: generation high, index low.
    #[inline]
    pub const fn to_bits(self) -> u64 {
        (self.generation.get() as u64) << 32 | self.index as u64
    }

    /// Unpacks [`to_bits`](Self::to_bits); `None` if the generation half is zero.
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
    #[inline]
    pub const fn from_raw(raw: RawHandle) -> Self {
        Self { raw, _class: PhantomData }
    }

    /// The untyped handle.
    #[inline]
    pub const fn raw(self) -> RawHandle {
        self.raw
    }

    /// The slot index.
    #[inline]
    pub const fn index(self) -> u32 {
        self.raw.index
    }

    /// The generation.
    #[inline]
    pub const fn generation(self) -> NonZeroU32 {
        self.raw.generation
    }

    /// See [`RawHandle::to_bits`].
    #[inline]
    pub const fn to_bits(self) -> u64 {
        self.raw.to_bits()
    }

    /// See [`RawHandle::from_bits`].
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
/// `Enemy#4194431v1`: the class (its type without the module path), the slot's index in
/// the object table, and the generation. (The index is the table's: a class's slots lie in
/// a range of their own, so it reads large; a [`RawHandle`] prints `4194431v1`.)
impl<T> fmt::Debug for Handle<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}#{:?}", crate::short_type_name(std::any::type_name::<T>()), self.raw)
    }
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
