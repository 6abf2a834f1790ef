//! Access beyond one object at a time: several objects of a class mutably at once, and a
//! class's objects with their handles, mutably.

use std::fmt;
use std::marker::PhantomData;
use std::num::NonZeroU32;
use std::ptr::NonNull;

use super::{Arena, LiveCells};
use crate::class::ClassEntry;
use crate::{Handle, RawHandle};

impl Arena {
    /// The objects `handles` name, mutably and all at once (two ships trading cargo), or
    /// `None` if any of them does not resolve or two of them name the same object. Compares
    /// every pair: meant for a few handles.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// struct Ship { cargo: u32 }
    ///
    /// let mut arena = Arena::new();
    /// let a = arena.insert(Ship { cargo: 10 });
    /// let b = arena.insert(Ship { cargo: 0 });
    ///
    /// let [from, to] = arena.get_disjoint_mut([a, b]).unwrap();
    /// to.cargo += std::mem::take(&mut from.cargo);
    /// assert_eq!((arena.get(a).unwrap().cargo, arena.get(b).unwrap().cargo), (0, 10));
    ///
    /// assert!(arena.get_disjoint_mut([a, a]).is_none(), "the same object twice");
    /// arena.remove(b);
    /// assert!(arena.get_disjoint_mut([a, b]).is_none(), "a stale handle");
    /// ```
    pub fn get_disjoint_mut<T: 'static, const N: usize>(&mut self, handles: [Handle<T>; N]) -> Option<[&mut T; N]> {
        let mut cells = [NonNull::<T>::dangling(); N];
        for (i, &h) in handles.iter().enumerate() {
            // Two handles of one slot: the same object, or one of them stale.
            if handles[..i].iter().any(|other| other.index() == h.index()) {
                return None;
            }
            cells[i] = self.locate(h)?.cast();
        }
        if self.barrier {
            // Lent mutably: a handle stored through them during an incremental mark must
            // be traced again, as `get_mut`'s are.
            for h in handles {
                self.note(h.index(), false);
            }
        }
        // SAFETY: each cell holds a live, visible `T` (`locate` checked the generation, the
        // flags and the class), no two are the same slot, and a slot has one cell, so the
        // references are disjoint; `&mut self` keeps every other access out while they live.
        Some(cells.map(|cell| unsafe { &mut *cell.as_ptr() }))
    }

    /// Every visible object of class `T` with its handle, mutably, in memory order (as
    /// [`iter`](Self::iter): dormant ones too).
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::Arena;
    ///
    /// let mut arena = Arena::new();
    /// let a = arena.insert(1u32);
    /// let b = arena.insert(2u32);
    /// for (h, v) in arena.iter_mut::<u32>() {
    ///     *v += if h == a { 10 } else { 20 };
    /// }
    /// assert_eq!((arena.get(a), arena.get(b)), (Some(&11), Some(&22)));
    /// ```
    pub fn iter_mut<T: 'static>(&mut self) -> IterMut<'_, T> {
        let id = self.class_of::<T>();
        if let Some(id) = id {
            // Every object of the class is lent mutably, as by `tick`: the write barrier
            // notes the class whole.
            self.classes[id.index()].note_all();
        }
        let entry = id.map(|id| &self.classes[id.index()]);
        IterMut { entry, cells: LiveCells::of(entry), _class: PhantomData }
    }
}

/// Iterator over the visible objects of one class with their handles, mutably, in memory
/// order: [`Arena::iter_mut`].
pub struct IterMut<'a, T> {
    entry: Option<&'a ClassEntry>,
    cells: LiveCells<'a>,
    _class: PhantomData<&'a mut T>,
}

impl<'a, T: 'static> Iterator for IterMut<'a, T> {
    type Item = (Handle<T>, &'a mut T);

    fn next(&mut self) -> Option<Self::Item> {
        let geometry = self.entry?.geometry();
        let n = self.cells.next()?;
        let generation = NonZeroU32::new(geometry.slot(n).generation()).expect("live slots have a generation");
        // SAFETY: the live bit says the cell holds a `T`; the iterator borrows the arena
        // mutably for `'a`, and visits each live bit once, so each object is lent once.
        let object = unsafe { &mut *geometry.cell_ptr(n).cast::<T>() };
        Some((Handle::from_raw(RawHandle::new(geometry.slot_of(n), generation)), object))
    }
}

impl<T> fmt::Debug for IterMut<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("IterMut").field("word", &self.cells.word).finish()
    }
}
