//! Sub-object links (UE's Outer chain): which objects each object owns.
//!
//! A slot stores its owner's index in `outer`, which is what the collector reads while it
//! marks in parallel. The way down, owner → sub-objects, lives here, apart from the table,
//! as an intrusive doubly-linked sibling list per owner, indexed by slot:
//!
//! ```text
//!   owner 7 ── first_child ──► 12 ◄─► 40 ◄─► 41        (next / prev, NONE at both ends)
//!   slot 12, 40, 41: outer = 7, flag HAS_OUTER;   slot 7: flag HAS_SUBOBJECTS
//! ```
//!
//! Linking and unlinking are O(1) and allocate only when a range's objects reach cells not
//! linked before, so an owner's destruction finds its sub-objects without scanning the
//! table. Links are kept per 1 Mi-index block of the table (a class's range is a whole
//! number of blocks, filled front to back), so they stay as dense as the classes' cells.

use respawn_allocator::sync::Ordering;

use crate::table::{ObjectTable, BLOCK_SLOTS, NONE};
use crate::ObjectFlags;

#[derive(Clone, Copy, Debug)]
struct Link {
    first_child: u32,
    next: u32,
    prev: u32,
}

const UNLINKED: Link = Link { first_child: NONE, next: NONE, prev: NONE };

/// The owner → sub-object lists of an arena. Invariants, for every slot `s`:
/// `table[s].outer == p` ⇔ `s` is in `p`'s list ⇔ (for `p ≠ NONE`) `s` has `HAS_OUTER`;
/// `p` has `HAS_SUBOBJECTS` ⇔ its list is non-empty. Only the arena writes either side, under `&mut Arena`.
#[derive(Debug, Default)]
pub(crate) struct Outers {
    /// By block of the index space, then by index within the block.
    links: Vec<Vec<Link>>,
}

impl Outers {
    fn link_mut(&mut self, index: u32) -> &mut Link {
        let (block, i) = ((index as usize) / BLOCK_SLOTS, (index as usize) % BLOCK_SLOTS);
        if block >= self.links.len() {
            self.links.resize_with(block + 1, Vec::new);
        }
        let links = &mut self.links[block];
        if i >= links.len() {
            links.resize(i + 1, UNLINKED);
        }
        &mut links[i]
    }

    fn link(&self, index: u32) -> Link {
        let (block, i) = ((index as usize) / BLOCK_SLOTS, (index as usize) % BLOCK_SLOTS);
        self.links.get(block).and_then(|l| l.get(i)).copied().unwrap_or(UNLINKED)
    }

    /// Makes `child` a sub-object of `parent` (both live; the caller ruled out cycles).
    pub(crate) fn attach(&mut self, table: &ObjectTable, child: u32, parent: u32) {
        self.detach_from_outer(table, child);
        let head = self.link(parent).first_child;
        *self.link_mut(child) = Link { first_child: self.link(child).first_child, next: head, prev: NONE };
        if head != NONE {
            self.link_mut(head).prev = child;
        }
        self.link_mut(parent).first_child = child;
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
        let Link { next, prev, .. } = self.link(child);
        if prev == NONE {
            self.link_mut(parent).first_child = next;
        } else {
            self.link_mut(prev).next = next;
        }
        if next != NONE {
            self.link_mut(next).prev = prev;
        }
        let link = self.link_mut(child);
        (link.next, link.prev) = (NONE, NONE);
        if self.link(parent).first_child == NONE {
            // SAFETY: an owner is live while it has sub-objects (its release orphans them).
            let p = unsafe { table.slot_unchecked(parent) };
            p.flags.fetch_and(!ObjectFlags::HAS_SUBOBJECTS.bits(), Ordering::AcqRel);
        }
    }

    /// Cuts every sub-object of `parent` loose (their `outer` becomes `NONE`).
    pub(crate) fn orphan_children(&mut self, table: &ObjectTable, parent: u32) {
        let mut child = self.link(parent).first_child;
        while child != NONE {
            let link = self.link_mut(child);
            let next = link.next;
            (link.next, link.prev) = (NONE, NONE);
            // SAFETY: a listed child is a live slot of the table.
            let c = unsafe { table.slot_unchecked(child) };
            c.outer.store(NONE, Ordering::Relaxed);
            c.flags.fetch_and(!ObjectFlags::HAS_OUTER.bits(), Ordering::AcqRel);
            child = next;
        }
        self.link_mut(parent).first_child = NONE;
        // SAFETY: the caller resolved `parent`.
        let p = unsafe { table.slot_unchecked(parent) };
        p.flags.fetch_and(!ObjectFlags::HAS_SUBOBJECTS.bits(), Ordering::AcqRel);
    }

    /// The direct sub-objects of `parent`, newest first.
    pub(crate) fn children(&self, parent: u32) -> Children<'_> {
        Children { outers: self, next: self.link(parent).first_child }
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
        self.next = self.outers.link(current).next;
        Some(current)
    }
}
