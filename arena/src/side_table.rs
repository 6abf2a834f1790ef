//! Side tables: a value per object of a class, kept beside the arena and keyed by handle
//! (slotmap's `SecondaryMap`).
//!
//! ```text
//!   Handle<T> { index, generation }
//!     block = index >> 20          blocks: [(block 4, pages), (block 9, pages)]   (a class's
//!     page  = (index % 1 Mi) / 256     pages:  [None, Some(page), None, …]         range, and
//!     i     = index % 256                page:  256 × Option<(generation, V)>      the
//!                                                                                  permanent one)
//! ```
//!
//! Entries are dense by slot index, as the arena's cells are by cell number: a class's
//! objects fill its range front to back, so its entries fill few pages. A page is allocated
//! the first time one of its indices is written, and only the blocks of the table a handle
//! was written for have a directory, so a table for a few objects of a class whose range
//! starts at index 4 Mi holds one page, not 4 Mi entries.
//!
//! Each entry keeps the generation of the handle it was written for. A slot's generation
//! only grows (the arena retires a slot rather than let it wrap), so the newer of two
//! handles of one slot is the one with the higher generation: an entry resolves only for
//! its own handle, a newer handle's insert replaces it, and an older handle's is refused.

use std::fmt;
use std::marker::PhantomData;
use std::mem;
use std::num::NonZeroU32;
use std::slice;

use crate::paged::{Block, Entries, Paged};
use crate::{Arena, Handle, RawHandle};

/// Entries per page: 256, a few KiB for small values, and four pages to a 1 Ki-cell slab.
const PAGE: usize = 256;

/// A value and the generation of the handle it was written for.
#[derive(Clone)]
struct Entry<V> {
    generation: NonZeroU32,
    value: V,
}

/// An index's entry: none, or a value and its handle's generation.
type Held<V> = Option<Entry<V>>;

/// The fill of a new page: no entry.
const fn vacant<V>() -> Held<V> {
    None
}

/// A value per object of class `T`, keyed by [`Handle<T>`] (slotmap's `SecondaryMap`): a
/// spatial hash's cell per ship, a network id, a cached path, kept beside the arena
/// instead of in the object.
///
/// An entry belongs to the handle it was written for, generation included: `get` with any
/// other handle of the slot — an older, stale one, or a newer one for the object that
/// reused the cell — returns `None`. Inserting with a newer handle replaces the entry (its
/// object has ended, so its value is dropped); inserting with an older one is refused.
/// The table does not watch the arena, so the entry of an object that ended stays until
/// it is replaced, removed, or [`prune`](Self::prune)d (or a `World`'s destroy listener
/// removes it).
///
/// Memory: dense by slot index, in pages of 256 entries allocated on first write (see the
/// module's picture): a `SideTable<T, V>` costs about `size_of::<(u32, V)>()` per slot of
/// the pages its handles fall in.
///
/// ```
/// use respawn_arena::{Arena, SideTable};
///
/// struct Ship { hull: u32 }
///
/// let mut arena = Arena::new();
/// let a = arena.insert(Ship { hull: 100 });
/// let b = arena.insert(Ship { hull: 80 });
///
/// let mut net_ids = SideTable::new();
/// net_ids.insert(a, 7001u32);
/// net_ids.insert(b, 7002);
/// assert_eq!(net_ids.get(a), Some(&7001));
///
/// // `b` ends; a new ship takes its cell, with a new generation.
/// arena.remove(b);
/// let c = arena.insert(Ship { hull: 60 });
/// assert_eq!(c.index(), b.index());
/// assert_eq!(net_ids.get(c), None, "never the old ship's value");
/// assert_eq!(net_ids.insert(c, 7003), None); // replaces the old ship's entry
/// assert_eq!(net_ids.get(b), None, "nor the new one's for the old handle");
/// assert_eq!(net_ids.len(), 2);
///
/// // Entries of objects that ended without being replaced: pruned against the arena.
/// arena.remove(a);
/// assert_eq!(net_ids.prune(&arena), 1);
/// assert_eq!(net_ids.iter().map(|(h, id)| (h, *id)).collect::<Vec<_>>(), [(c, 7003)]);
/// ```
pub struct SideTable<T, V> {
    /// By slot index, in pages.
    entries: Paged<Held<V>, PAGE>,
    len: usize,
    _class: PhantomData<fn() -> T>,
}

impl<T, V> Default for SideTable<T, V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, V: Clone> Clone for SideTable<T, V> {
    fn clone(&self) -> Self {
        Self { entries: self.entries.clone(), len: self.len, _class: PhantomData }
    }
}

impl<T, V: fmt::Debug> fmt::Debug for SideTable<T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl<T, V> SideTable<T, V> {
    /// An empty table; allocates nothing until the first insert.
    ///
    /// ```
    /// use respawn_arena::SideTable;
    ///
    /// struct Ship;
    /// // What a spatial hash keeps per ship: its grid cell.
    /// let cells: SideTable<Ship, (i32, i32)> = SideTable::new();
    /// assert!(cells.is_empty() && cells.heap_bytes() == 0);
    /// ```
    pub const fn new() -> Self {
        Self { entries: Paged::new(vacant), len: 0, _class: PhantomData }
    }

    /// Entries in the table.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let mut table = SideTable::new();
    /// assert!(table.is_empty());
    /// table.insert(arena.insert(1u8), "one");
    /// assert_eq!(table.len(), 1);
    /// ```
    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the table has no entry.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entry slot of `index`, if its page was ever written.
    #[inline]
    fn entry(&self, index: u32) -> Option<&Held<V>> {
        self.entries.get(index)
    }

    /// The entry slot of `index`, mutably, if its page was ever written.
    #[inline]
    fn entry_mut(&mut self, index: u32) -> Option<&mut Held<V>> {
        self.entries.get_mut(index)
    }

    /// Writes `value` for `h`: returns the value `h` had, if any. An entry of an older
    /// handle of the same slot is replaced (its object ended: its value is dropped); for a
    /// handle older than the slot's entry, nothing is written, and the value is dropped —
    /// see [`try_insert`](Self::try_insert) to have it back.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut table = SideTable::new();
    /// assert_eq!(table.insert(h, 'a'), None);
    /// assert_eq!(table.insert(h, 'b'), Some('a'));
    /// assert_eq!(table[h], 'b');
    /// ```
    pub fn insert(&mut self, h: Handle<T>, value: V) -> Option<V> {
        self.try_insert(h, value).unwrap_or(None)
    }

    /// [`insert`](Self::insert), handing `value` back when `h` is older than the slot's
    /// entry (a stale handle: its slot has moved on to another object).
    ///
    /// # Errors
    /// `Err(value)` for a stale `h`; the table is unchanged.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let old = arena.insert(1u32);
    /// arena.remove(old);
    /// let new = arena.insert(2u32); // the same slot, a newer generation
    /// let mut table = SideTable::new();
    /// table.insert(new, "new");
    /// assert_eq!(table.try_insert(old, "old"), Err("old"));
    /// assert_eq!(table.get(new), Some(&"new"));
    /// ```
    pub fn try_insert(&mut self, h: Handle<T>, value: V) -> Result<Option<V>, V> {
        let generation = h.generation();
        if let Some(Some(entry)) = self.entry(h.index()) {
            if entry.generation > generation {
                return Err(value);
            }
        }
        let slot = self.entries.get_or_insert(h.index());
        match slot {
            Some(entry) if entry.generation == generation => Ok(Some(mem::replace(&mut entry.value, value))),
            Some(_) => {
                *slot = Some(Entry { generation, value });
                Ok(None)
            }
            None => {
                *slot = Some(Entry { generation, value });
                self.len += 1;
                Ok(None)
            }
        }
    }

    /// The value written for `h`, if any (for `h` itself, not another generation of its
    /// slot).
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut table = SideTable::new();
    /// assert_eq!(table.get(h), None);
    /// table.insert(h, "hp bar");
    /// assert_eq!(table.get(h), Some(&"hp bar"));
    /// ```
    #[inline]
    pub fn get(&self, h: Handle<T>) -> Option<&V> {
        match self.entry(h.index())? {
            Some(entry) if entry.generation == h.generation() => Some(&entry.value),
            _ => None,
        }
    }

    /// The value written for `h`, mutably.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut hits = SideTable::new();
    /// hits.insert(h, 0u32);
    /// *hits.get_mut(h).unwrap() += 1;
    /// assert_eq!(hits.get(h), Some(&1));
    /// ```
    #[inline]
    pub fn get_mut(&mut self, h: Handle<T>) -> Option<&mut V> {
        match self.entry_mut(h.index())? {
            Some(entry) if entry.generation == h.generation() => Some(&mut entry.value),
            _ => None,
        }
    }

    /// Whether the table has a value for `h`.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let (a, b) = (arena.insert(1u32), arena.insert(2u32));
    /// let selected: SideTable<u32, ()> = [(a, ())].into_iter().collect();
    /// assert!(selected.contains(a) && !selected.contains(b));
    /// ```
    #[inline]
    pub fn contains(&self, h: Handle<T>) -> bool {
        self.get(h).is_some()
    }

    /// Takes `h`'s value out, if it has one (an entry of another generation stays).
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut table = SideTable::new();
    /// table.insert(h, 5);
    /// assert_eq!(table.remove(h), Some(5));
    /// assert_eq!(table.remove(h), None);
    /// assert!(!table.contains(h));
    /// ```
    pub fn remove(&mut self, h: Handle<T>) -> Option<V> {
        let slot = self.entry_mut(h.index())?;
        if slot.as_ref()?.generation != h.generation() {
            return None;
        }
        let entry = slot.take()?;
        self.len -= 1;
        Some(entry.value)
    }

    /// Keeps the entries for which `keep` returns `true`, in index order.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let mut table = SideTable::new();
    /// for v in 0..10u32 {
    ///     table.insert(arena.insert(v), v);
    /// }
    /// table.retain(|_, v| *v % 2 == 0);
    /// assert_eq!(table.len(), 5);
    /// ```
    pub fn retain(&mut self, mut keep: impl FnMut(Handle<T>, &mut V) -> bool) {
        let mut removed = 0;
        for (index, slot) in self.entries.iter_mut() {
            let Some(entry) = slot else { continue };
            if !keep(Handle::from_raw(RawHandle::new(index, entry.generation)), &mut entry.value) {
                *slot = None;
                removed += 1;
            }
        }
        self.len -= removed;
    }

    /// Removes every entry; the pages stay allocated for the next inserts (see
    /// [`shrink_to_fit`](Self::shrink_to_fit)).
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut table = SideTable::new();
    /// table.insert(h, 1u8);
    /// table.clear();
    /// assert!(table.is_empty() && table.get(h).is_none());
    /// assert!(table.heap_bytes() > 0, "the page stays");
    /// ```
    pub fn clear(&mut self) {
        self.entries.refill();
        self.len = 0;
    }

    /// Frees the pages that hold no entry (and the blocks left with none).
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let h = arena.insert(0u32);
    /// let mut table = SideTable::new();
    /// table.insert(h, 1u8);
    /// table.remove(h);
    /// table.shrink_to_fit();
    /// assert_eq!(table.heap_bytes(), 0);
    /// ```
    pub fn shrink_to_fit(&mut self) {
        self.entries.free_unused(Option::is_none);
    }

    /// Bytes the table holds on the heap: its pages, their directories and its block list.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let mut table = SideTable::new();
    /// assert_eq!(table.heap_bytes(), 0);
    /// table.insert(arena.insert(0u32), 0u64);
    /// assert!(table.heap_bytes() < 8 << 10, "one page of 256 entries");
    /// ```
    pub fn heap_bytes(&self) -> usize {
        self.entries.heap_bytes()
    }

    /// Every entry with its handle, in index order (which, within a class's range, is the
    /// objects' memory order).
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let (a, b) = (arena.insert(1u32), arena.insert(2u32));
    /// let mut names = SideTable::new();
    /// names.insert(b, "b");
    /// names.insert(a, "a");
    /// assert_eq!(names.iter().collect::<Vec<_>>(), [(a, &"a"), (b, &"b")]);
    /// ```
    pub fn iter(&self) -> SideTableIter<'_, T, V> {
        SideTableIter { entries: self.entries.iter(), left: self.len, _class: PhantomData }
    }

    /// Every entry with its handle, the values mutably, in index order.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let mut table = SideTable::new();
    /// for v in 0..3u32 {
    ///     table.insert(arena.insert(v), v);
    /// }
    /// for (_, v) in table.iter_mut() {
    ///     *v *= 10;
    /// }
    /// assert_eq!(table.iter().map(|(_, v)| *v).sum::<u32>(), 30);
    /// ```
    pub fn iter_mut(&mut self) -> SideTableIterMut<'_, T, V> {
        SideTableIterMut { entries: self.entries.iter_mut(), left: self.len, _class: PhantomData }
    }
}

impl<T: 'static, V> SideTable<T, V> {
    /// Removes the entries whose handles no longer resolve in `arena` — their objects
    /// ended, or are hidden (garbage awaiting its purge, back in a pool) — and returns how
    /// many. One pass over the table's pages.
    ///
    /// ```
    /// # use respawn_arena::{Arena, SideTable};
    /// let mut arena = Arena::new();
    /// let (a, b) = (arena.insert(1u32), arena.insert(2u32));
    /// let mut table: SideTable<u32, u32> = [(a, 10), (b, 20)].into_iter().collect();
    /// arena.remove(a);
    /// assert_eq!(table.prune(&arena), 1);
    /// assert_eq!(table.iter().collect::<Vec<_>>(), [(b, &20)]);
    /// ```
    pub fn prune(&mut self, arena: &Arena) -> usize {
        let before = self.len;
        self.retain(|h, _| arena.contains(h));
        before - self.len
    }
}

impl<T, V> std::ops::Index<Handle<T>> for SideTable<T, V> {
    type Output = V;

    /// # Panics
    /// If the table has no value for the handle.
    fn index(&self, h: Handle<T>) -> &V {
        match self.get(h) {
            Some(value) => value,
            None => panic!("SideTable has no value for {h:?}"),
        }
    }
}

impl<T, V> std::ops::IndexMut<Handle<T>> for SideTable<T, V> {
    /// # Panics
    /// If the table has no value for the handle.
    fn index_mut(&mut self, h: Handle<T>) -> &mut V {
        match self.get_mut(h) {
            Some(value) => value,
            None => panic!("SideTable has no value for {h:?}"),
        }
    }
}

impl<T, V> Extend<(Handle<T>, V)> for SideTable<T, V> {
    fn extend<I: IntoIterator<Item = (Handle<T>, V)>>(&mut self, entries: I) {
        for (h, value) in entries {
            self.insert(h, value);
        }
    }
}

impl<T, V> FromIterator<(Handle<T>, V)> for SideTable<T, V> {
    fn from_iter<I: IntoIterator<Item = (Handle<T>, V)>>(entries: I) -> Self {
        let mut table = Self::new();
        table.extend(entries);
        table
    }
}

impl<'a, T, V> IntoIterator for &'a SideTable<T, V> {
    type Item = (Handle<T>, &'a V);
    type IntoIter = SideTableIter<'a, T, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

impl<'a, T, V> IntoIterator for &'a mut SideTable<T, V> {
    type Item = (Handle<T>, &'a mut V);
    type IntoIter = SideTableIterMut<'a, T, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter_mut()
    }
}

/// Iterator over a [`SideTable`]'s entries with their handles, in index order:
/// [`SideTable::iter`].
pub struct SideTableIter<'a, T, V> {
    entries: Entries<slice::Iter<'a, Block<Held<V>, PAGE>>>,
    left: usize,
    _class: PhantomData<fn() -> T>,
}

impl<'a, T, V> Iterator for SideTableIter<'a, T, V> {
    type Item = (Handle<T>, &'a V);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let (index, entry) = self.entries.find_map(|(index, slot)| slot.as_ref().map(|entry| (index, entry)))?;
        self.left -= 1;
        Some((Handle::from_raw(RawHandle::new(index, entry.generation)), &entry.value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, V> ExactSizeIterator for SideTableIter<'_, T, V> {}
impl<T, V> std::iter::FusedIterator for SideTableIter<'_, T, V> {}

impl<T, V> fmt::Debug for SideTableIter<'_, T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SideTableIter").field("left", &self.left).finish()
    }
}

/// Iterator over a [`SideTable`]'s entries with their handles, the values mutably, in
/// index order: [`SideTable::iter_mut`].
pub struct SideTableIterMut<'a, T, V> {
    entries: Entries<slice::IterMut<'a, Block<Held<V>, PAGE>>>,
    left: usize,
    _class: PhantomData<fn() -> T>,
}

impl<'a, T, V> Iterator for SideTableIterMut<'a, T, V> {
    type Item = (Handle<T>, &'a mut V);

    fn next(&mut self) -> Option<Self::Item> {
        if self.left == 0 {
            return None;
        }
        let (index, entry) = self.entries.find_map(|(index, slot)| slot.as_mut().map(|entry| (index, entry)))?;
        self.left -= 1;
        Some((Handle::from_raw(RawHandle::new(index, entry.generation)), &mut entry.value))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl<T, V> ExactSizeIterator for SideTableIterMut<'_, T, V> {}
impl<T, V> std::iter::FusedIterator for SideTableIterMut<'_, T, V> {}

impl<T, V> fmt::Debug for SideTableIterMut<'_, T, V> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SideTableIterMut").field("left", &self.left).finish()
    }
}
