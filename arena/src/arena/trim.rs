//! Giving memory back: a class's slabs that hold nothing are decommitted, and committed
//! again before the class takes a new slab.
//!
//! ```text
//!   slabs of a class:  [ live, vacant… ][ all vacant ][ live… ][ all vacant ]
//!   decommit_empty_slabs:                ^ DONTNEED                ^ DONTNEED
//!     their cells leave the vacant list and `granted`; bases, slots and generations stay
//!   grow (the vacant list ran dry): the lowest decommitted slab is committed again and
//!     its cells rejoin the vacant list, before the allocator is asked for a new slab
//! ```
//!
//! Any empty slab may go, not only trailing ones: a cell's address and its slot are
//! arithmetic on its number, so a slab in the middle of the region can lose its pages
//! while its neighbours stay, and `tick` walks the live bitmap, whose words for an empty
//! slab are zero, so it never touches the slab's memory. A slab counts as empty when every
//! one of its cells is on the vacant list: none live, none held by a pool or a worker
//! (out), none retired (a retired slot keeps its slab committed; they are rare). The slots
//! stay committed: they hold the generations that keep old handles stale.

use respawn_allocator::ClassId;

use super::Arena;
use crate::class::ClassEntry;
use crate::ArenaError;

impl Arena {
    /// Gives back the memory of every slab of class `class` that holds nothing — each of
    /// its cells vacant, on the class's vacant list — with `madvise(MADV_DONTNEED)`, so a
    /// class whose peak has passed does not keep the peak's memory. Handles are not
    /// affected (slots and their generations stay), and the class takes the lowest such
    /// slab back, committing its pages again, before it asks the allocator for a new one.
    /// Returns how many slabs it decommitted.
    ///
    /// A cold call: it walks the class's vacant list. A pool calls it after dropping its
    /// idle objects and handing their cells back ([`recycle`](Self::recycle)); cells a pool
    /// or a worker still holds keep their slab committed.
    ///
    /// # Examples
    ///
    /// ```
    /// use respawn_arena::{Arena, SlabConfig};
    ///
    /// struct Spark(#[allow(dead_code)] u64);
    ///
    /// let mut arena = Arena::new();
    /// let class = arena.register_with::<Spark>(SlabConfig { spare_slabs: 0, ..SlabConfig::SMALL })?;
    /// let keep = arena.insert(Spark(0));
    /// let spike: Vec<_> = (0..1000).map(|i| arena.insert(Spark(i))).collect();
    /// for h in spike {
    ///     arena.remove(h);
    /// }
    /// let before = arena.stats::<Spark>().unwrap().memory.committed_bytes;
    /// assert_eq!(arena.decommit_empty_slabs(class)?, 15, "16 slabs of 64 cells; the first keeps `keep`");
    /// let after = arena.stats::<Spark>().unwrap().memory;
    /// assert_eq!(after.committed_bytes, before - 15 * after.slab_bytes);
    /// assert!(arena.get(keep).is_some());
    /// # Ok::<(), respawn_arena::ArenaError>(())
    /// ```
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for a class this arena does not know;
    /// [`ArenaError::Alloc`] if the OS refuses the advice (the slabs decommitted before
    /// stay so, the others are left as they were).
    pub fn decommit_empty_slabs(&mut self, class: ClassId) -> Result<usize, ArenaError> {
        let Some(entry) = self.classes.get_mut(class.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        entry.decommit_empty(&self.alloc)
    }

    /// Objects class `class` keeps for reuse ([`Releasable::keep`](crate::Releasable::keep));
    /// 0 for an unknown class.
    pub fn kept(&self, class: ClassId) -> usize {
        self.classes.get(class.index()).map_or(0, ClassEntry::kept)
    }

    /// Objects class `class` kept since it was registered; 0 for an unknown class.
    pub fn kept_total(&self, class: ClassId) -> u64 {
        self.classes.get(class.index()).map_or(0, ClassEntry::kept_total)
    }

    /// Tells class `class` whether releases keep its objects
    /// ([`ClassStore::set_keeping`](crate::ClassStore::set_keeping)).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for a class this arena does not know.
    pub fn set_keeping(&mut self, class: ClassId, on: bool) -> Result<(), ArenaError> {
        let Some(entry) = self.classes.get_mut(class.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        entry.set_keeping(on);
        Ok(())
    }

    /// Hands every object class `class` keeps out as a compact token
    /// ([`ClassStore::take_kept`](crate::ClassStore::take_kept)); none for an unknown class.
    pub fn take_kept(&mut self, class: ClassId) -> Vec<crate::CompactCell> {
        self.classes.get_mut(class.index()).map_or_else(Vec::new, ClassEntry::take_kept)
    }

    /// A vacant cell of class `class`, lent out ([`ClassStore::take_cell`](crate::ClassStore::take_cell)).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for a class this arena does not know; otherwise as
    /// `ClassStore::take_cell`.
    pub fn take_cell(&mut self, class: ClassId) -> Result<crate::FreedCell, ArenaError> {
        let Some(entry) = self.classes.get_mut(class.index()) else {
            return Err(ArenaError::Unregistered("an unknown class"));
        };
        entry.take_cell(&self.table, &self.alloc)
    }

    /// Drops every object class `class` keeps for reuse (each once; a panicking destructor
    /// does not stop the others, and the first panic goes on after) and makes their slots
    /// vacant, for the class's next objects or a trim. Returns how many it dropped; 0 for
    /// an unknown class.
    pub fn drop_kept(&mut self, class: ClassId) -> usize {
        self.classes.get_mut(class.index()).map_or(0, ClassEntry::drop_kept)
    }

    /// Slabs of class `class` decommitted now (see
    /// [`decommit_empty_slabs`](Self::decommit_empty_slabs)); 0 for an unknown class.
    pub fn decommitted_slabs(&self, class: ClassId) -> usize {
        self.classes.get(class.index()).map_or(0, ClassEntry::decommitted)
    }
}
