//! Sub-object links (UE's Outer chain): which objects each object owns.
//!
//! A slot stores its owner's index in `outer`, which is what the collector reads while it
//! marks in parallel. The way down, owner → sub-objects, lives here, apart from the table,
//! as an intrusive doubly-linked sibling list per owner, indexed by slot:
//!
//! ```text
//!   heads:    owner 7 ──► 12                           (the newest sub-object)
//!   siblings: 12 ◄─► 40 ◄─► 41                         (next / prev, NONE at both ends)
//!   slot 12, 40, 41: outer = 7, flag HAS_OUTER;   slot 7: flag HAS_SUBOBJECTS
//! ```
//!
//! Linking and unlinking are O(1) and allocate only when an object in a page of the index
//! space not touched before gains an owner or a sub-object, so an owner's destruction
//! finds its sub-objects without scanning the table. Both sides are [`Paged`] arrays: a page
//! of [`PAGE`] entries is allocated the first time one of its indices is written, so a
//! class whose objects have owners pays 8 bytes per cell of its pages (the sibling links),
//! and only the classes that own sub-objects pay 4 more (the heads).

use respawn_allocator::sync::Ordering;

use crate::paged::Paged;
use crate::table::{ObjectTable, NONE};
use crate::ObjectFlags;

/// Entries per page of the links: 2 Ki, so a page of sibling links is 16 KiB.
const PAGE: usize = 2048;

#[derive(Clone, Copy, Debug)]
struct Siblings {
    next: u32,
    prev: u32,
}

const UNLINKED: Siblings = Siblings { next: NONE, prev: NONE };

/// The owner → sub-object lists of an arena. Invariants, for every slot `s`:
/// `table[s].outer == p` ⇔ `s` is in `p`'s list ⇔ (for `p ≠ NONE`) `s` has `HAS_OUTER`;
/// `p` has `HAS_SUBOBJECTS` ⇔ its list is non-empty ⇔ `heads[p] ≠ NONE`. Only the arena
/// writes either side, under `&mut Arena`.
#[derive(Debug)]
pub(crate) struct Outers {
    /// Each owner's newest sub-object (the list's head); `NONE` for an object that owns none.
    heads: Paged<u32, PAGE>,
    /// Each sub-object's neighbours in its owner's list.
    siblings: Paged<Siblings, PAGE>,
}

impl Default for Outers {
    fn default() -> Self {
        Self { heads: Paged::new(|| NONE), siblings: Paged::new(|| UNLINKED) }
    }
}

impl Outers {
    /// `parent`'s newest sub-object, `NONE` if it owns none.
    #[inline]
    fn head(&self, parent: u32) -> u32 {
        self.heads.get(parent).copied().unwrap_or(NONE)
    }

    /// `child`'s neighbours in its owner's list.
    #[inline]
    fn siblings_of(&self, child: u32) -> Siblings {
        self.siblings.get(child).copied().unwrap_or(UNLINKED)
    }

    /// Makes `child` a sub-object of `parent` (both live; the caller ruled out cycles).
    pub(crate) fn attach(&mut self, table: &ObjectTable, child: u32, parent: u32) {
        self.detach_from_outer(table, child);
        let head = self.head(parent);
        *self.siblings.get_or_insert(child) = Siblings { next: head, prev: NONE };
        if head != NONE {
            self.siblings.get_or_insert(head).prev = child;
        }
        *self.heads.get_or_insert(parent) = child;
        // SAFETY: the caller resolved `child` through the table.
        let c = unsafe { table.slot_unchecked(child) };
        c.outer.store(parent, Ordering::Relaxed);
        c.flags.fetch_or(ObjectFlags::HAS_OUTER.bits(), Ordering::AcqRel);
        // SAFETY: the caller resolved `parent` through the table.
        let p = unsafe { table.slot_unchecked(parent) };
        p.flags.fetch_or(ObjectFlags::HAS_SUBOBJECTS.bits(), Ordering::AcqRel);
    }

    /// Takes `child` out of its owner's list, if it has an owner.
    pub(crate) fn detach_from_outer(&mut self, table: &ObjectTable, child: u32) {
        // SAFETY: the caller resolved `child` through the table.
        let slot = unsafe { table.slot_unchecked(child) };
        let parent = slot.outer.load(Ordering::Relaxed);
        if parent == NONE {
            return;
        }
        slot.outer.store(NONE, Ordering::Relaxed);
        slot.flags.fetch_and(!ObjectFlags::HAS_OUTER.bits(), Ordering::AcqRel);
        // A linked child's page exists: `attach` wrote it.
        let Siblings { next, prev } = std::mem::replace(self.siblings.get_or_insert(child), UNLINKED);
        if prev == NONE {
            *self.heads.get_or_insert(parent) = next;
        } else {
            self.siblings.get_or_insert(prev).next = next;
        }
        if next != NONE {
            self.siblings.get_or_insert(next).prev = prev;
        }
        if self.head(parent) == NONE {
            // SAFETY: an owner is live while it has sub-objects (its release orphans them).
            let p = unsafe { table.slot_unchecked(parent) };
            p.flags.fetch_and(!ObjectFlags::HAS_SUBOBJECTS.bits(), Ordering::AcqRel);
        }
    }

    /// Cuts every sub-object of `parent` loose (their `outer` becomes `NONE`).
    pub(crate) fn orphan_children(&mut self, table: &ObjectTable, parent: u32) {
        let mut child = self.head(parent);
        while child != NONE {
            let next = std::mem::replace(self.siblings.get_or_insert(child), UNLINKED).next;
            // SAFETY: a listed child is a live slot of the table.
            let c = unsafe { table.slot_unchecked(child) };
            c.outer.store(NONE, Ordering::Relaxed);
            c.flags.fetch_and(!ObjectFlags::HAS_OUTER.bits(), Ordering::AcqRel);
            child = next;
        }
        if self.head(parent) != NONE {
            *self.heads.get_or_insert(parent) = NONE;
        }
        // SAFETY: the caller resolved `parent`.
        let p = unsafe { table.slot_unchecked(parent) };
        p.flags.fetch_and(!ObjectFlags::HAS_SUBOBJECTS.bits(), Ordering::AcqRel);
    }

    /// The direct sub-objects of `parent`, newest first.
    pub(crate) fn children(&self, parent: u32) -> Children<'_> {
        Children { outers: self, next: self.head(parent) }
    }

    /// Heap bytes of the links for indices `start..start + len` (a class's range): the
    /// pages allocated there, both kinds.
    pub(crate) fn bytes_in(&self, start: u32, len: u32) -> usize {
        self.heads.bytes_in(start, len) + self.siblings.bytes_in(start, len)
    }
}

/// Iterator over one owner's direct sub-objects (slot indices).
#[derive(Debug)]
pub(crate) struct Children<'a> {
    outers: &'a Outers,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;

    fn next(&mut self) -> Option<u32> {
        let current = self.next;
        if current == NONE {
            return None;
        }
        self.next = self.outers.siblings_of(current).next;
        Some(current)
    }
}
