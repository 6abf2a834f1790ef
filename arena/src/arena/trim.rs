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

use respawn_allocator::sync::Ordering;
use respawn_allocator::{poison, ChunkAllocator, ClassId};

use super::Arena;
use crate::class::ClassEntry;
use crate::{ArenaError, DropAll, Lifecycle};

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
        let entry = self.classes.get_mut(class.index()).ok_or(ArenaError::Unregistered("an unknown class"))?;
        decommit_empty(entry, &self.alloc)
    }

    /// Objects class `class` keeps for reuse ([`Releasable::keep`](crate::Releasable::keep));
    /// 0 for an unknown class.
    pub fn kept(&self, class: ClassId) -> usize {
        self.classes.get(class.index()).map_or(0, |entry| entry.kept.len())
    }

    /// Objects class `class` kept since it was registered; 0 for an unknown class.
    pub fn kept_total(&self, class: ClassId) -> u64 {
        self.classes.get(class.index()).map_or(0, |entry| entry.kept_total)
    }

    /// Tells class `class` whether releases keep its objects
    /// ([`ClassStore::set_keeping`](crate::ClassStore::set_keeping)).
    ///
    /// # Errors
    /// [`ArenaError::Unregistered`] for a class this arena does not know.
    pub fn set_keeping(&mut self, class: ClassId, on: bool) -> Result<(), ArenaError> {
        self.classes.get_mut(class.index()).ok_or(ArenaError::Unregistered("an unknown class"))?.keeping = on;
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
        let entry = self.classes.get_mut(class.index()).ok_or(ArenaError::Unregistered("an unknown class"))?;
        super::take_cell(&self.table, entry, &self.alloc)
    }

    /// Drops every object class `class` keeps for reuse (each once; a panicking destructor
    /// does not stop the others, and the first panic goes on after) and makes their slots
    /// vacant, for the class's next objects or a trim. Returns how many it dropped; 0 for
    /// an unknown class.
    pub fn drop_kept(&mut self, class: ClassId) -> usize {
        let Some(entry) = self.classes.get_mut(class.index()) else { return 0 };
        let kept = std::mem::take(&mut entry.kept);
        let mut drops = DropAll::new();
        for &n in &kept {
            let slot = entry.slot(n);
            debug_assert_eq!(slot.flags().lifecycle(), Lifecycle::InPool, "a kept cell not in the pool");
            slot.flags.store(Lifecycle::Vacant.flags().bits(), Ordering::Release);
            let cell = entry.cell_ptr(n);
            if let Some(drop_fn) = entry.drop_fn {
                // SAFETY: a kept cell holds an object of the class, the arena's; off the
                // list and vacant already, so this is its one drop.
                drops.run(|| unsafe { drop_fn(cell) });
            }
            poison::poison(cell, entry.cell_size);
            entry.free.push(entry.slot_of(n));
        }
        drop(drops);
        kept.len()
    }

    /// Slabs of class `class` decommitted now (see
    /// [`decommit_empty_slabs`](Self::decommit_empty_slabs)); 0 for an unknown class.
    pub fn decommitted_slabs(&self, class: ClassId) -> usize {
        self.classes.get(class.index()).map_or(0, |entry| entry.decommitted.len())
    }
}

/// [`Arena::decommit_empty_slabs`] on one class's entry.
fn decommit_empty(entry: &mut ClassEntry, alloc: &ChunkAllocator) -> Result<usize, ArenaError> {
    let per_slab = entry.cells_per_slab();
    let mut vacant = vec![0u32; entry.bases.len()];
    for &index in &entry.free {
        vacant[((index - entry.start) >> entry.shift) as usize] += 1;
    }
    let mut gone = vec![false; entry.bases.len()];
    let mut refused = None;
    for (slab, &count) in vacant.iter().enumerate() {
        if count as usize != per_slab {
            continue;
        }
        debug_assert!(!entry.bases[slab].is_null(), "vacant cells in slab {slab}, which the class does not own");
        debug_assert!(
            entry.live[(slab << entry.shift) / 64..((slab + 1) << entry.shift).div_ceil(64)].iter().all(|&w| w == 0)
                || per_slab < 64,
            "a live bit in slab {slab}, whose every cell is vacant"
        );
        // SAFETY: slab `slab` was granted to this class (`grow`), and every one of its cells
        // is on the vacant list: no object lives in it and no token for one of its cells is
        // out, so nothing reads or writes it until `recommit` takes it back.
        match unsafe { alloc.decommit_slab(entry.id, slab as u32) } {
            Ok(()) => gone[slab] = true,
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let slabs: Vec<u32> = (0..gone.len() as u32).filter(|&s| gone[s as usize]).collect();
    if !slabs.is_empty() {
        let (start, shift) = (entry.start, entry.shift);
        entry.free.retain(|&index| !gone[((index - start) >> shift) as usize]);
        // The spike's vacant list need not keep its buffer either (4 bytes a cell).
        if entry.free.capacity() > 4 * entry.free.len().max(per_slab) {
            entry.free.shrink_to(2 * entry.free.len().max(per_slab));
        }
        entry.granted -= slabs.len() * per_slab;
        entry.decommitted.extend(&slabs);
        // Highest first: `recommit` pops the lowest, so the class refills its front.
        entry.decommitted.sort_unstable_by(|a, b| b.cmp(a));
    }
    match refused {
        Some(e) => Err(e.into()),
        None => Ok(slabs.len()),
    }
}

/// The class's vacant list ran dry and it has decommitted slabs: the lowest is committed
/// again (its pages faulted in on this thread, as an inline preparation is) and its cells
/// become vacant slots again, front to back. Their slots were never released: each keeps
/// its generation, so no handle to an earlier object of the cell resolves.
#[cold]
pub(super) fn recommit(entry: &mut ClassEntry, alloc: &ChunkAllocator) -> Result<(), ArenaError> {
    let slab = *entry.decommitted.last().expect("a decommitted slab to recommit");
    // SAFETY: the slab is the class's (decommitted by `decommit_empty`), every cell of it
    // vacant and off the vacant list, so nobody holds anything in it.
    unsafe { alloc.recommit_slab(entry.id, slab) }?;
    entry.decommitted.pop();
    let per_slab = entry.cells_per_slab() as u32;
    let first = entry.start + (slab << entry.shift);
    // Reversed, so the slab fills front to back (as a new slab does).
    entry.free.extend((first..first + per_slab).rev());
    entry.granted += per_slab as usize;
    Ok(())
}
