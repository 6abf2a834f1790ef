//! Giving a class's memory back: its kept objects dropped or handed out, its empty slabs
//! decommitted, and committed again when the class needs a slab.

use respawn_allocator::sync::Ordering;
use respawn_allocator::{poison, ChunkAllocator, DropAll};

use super::ClassEntry;
use crate::class::{CompactCell, Freed};
use crate::{ArenaError, Lifecycle};

impl ClassEntry {
    /// Hands every kept object out as a compact token (its cell number; the slot stays
    /// `InPool`), the most recently kept last.
    pub(crate) fn take_kept(&mut self) -> Vec<CompactCell> {
        self.occupancy.out += self.occupancy.kept.len();
        self.occupancy.kept.drain(..).map(CompactCell::from_number).collect()
    }

    /// Drops every kept object (each once; a panicking destructor does not stop the others,
    /// and the first panic goes on after) and makes their slots vacant. Returns how many.
    pub(crate) fn drop_kept(&mut self) -> usize {
        let kept = std::mem::take(&mut self.occupancy.kept);
        let mut drops = DropAll::new();
        for &n in &kept {
            let slot = self.geometry.slot(n);
            debug_assert_eq!(slot.flags().lifecycle(), Lifecycle::InPool, "a kept cell not in the pool");
            slot.flags.store(Lifecycle::Vacant.flags().bits(), Ordering::Release);
            let cell = self.geometry.cell_ptr(n);
            if let Some(drop_fn) = self.geometry.drop_fn {
                // SAFETY: a kept cell holds an object of the class, the arena's; off the
                // list and vacant already, so this is its one drop.
                drops.run(|| unsafe { drop_fn(cell) });
            }
            poison::poison(cell, self.geometry.cell_size);
            self.occupancy.free.push(self.geometry.slot_of(n));
        }
        drop(drops);
        kept.len()
    }

    /// Drops the objects of the `Occupied` tokens on the returned list (nobody took them)
    /// and empties it, each drop in `drops`.
    pub(crate) fn drop_returned(&mut self, drops: &mut DropAll) {
        for freed in std::mem::take(&mut self.reactions.returned) {
            if let (Freed::Occupied(cell, _), Some(drop_fn)) = (freed, self.geometry.drop_fn) {
                // SAFETY: an `Occupied` token's cell still holds its class's object,
                // released and undropped; the token is consumed here, so it drops once.
                drops.run(|| unsafe { drop_fn(cell.cell.as_ptr()) });
            }
        }
    }

    /// Decommits every slab whose cells are all on the vacant list; returns how many.
    pub(crate) fn decommit_empty(&mut self, alloc: &ChunkAllocator) -> Result<usize, ArenaError> {
        let (geometry, occupancy) = (&self.geometry, &mut self.occupancy);
        let per_slab = geometry.cells_per_slab();
        let mut vacant = vec![0u32; geometry.bases.len()];
        for index in occupancy.free.iter().copied().chain(occupancy.fresh.0..occupancy.fresh.1) {
            vacant[((index - geometry.start) >> geometry.shift) as usize] += 1;
        }
        let mut gone = vec![false; geometry.bases.len()];
        let mut refused = None;
        for (slab, &count) in vacant.iter().enumerate() {
            if count as usize != per_slab {
                continue;
            }
            debug_assert!(!geometry.bases[slab].is_null(), "vacant cells in slab {slab}, which the class does not own");
            debug_assert!(
                occupancy.live[(slab << geometry.shift) / 64..((slab + 1) << geometry.shift).div_ceil(64)]
                    .iter()
                    .all(|&w| w == 0)
                    || per_slab < 64,
                "a live bit in slab {slab}, whose every cell is vacant"
            );
            // SAFETY: slab `slab` was granted to this class (`grow`), and every one of its
            // cells is on the vacant list: no object lives in it and no token for one of its
            // cells is out, so nothing reads or writes it until `recommit` takes it back.
            match unsafe { alloc.decommit_slab(geometry.id, slab as u32) } {
                Ok(()) => gone[slab] = true,
                Err(e) => {
                    refused = Some(e);
                    break;
                }
            }
        }
        let slabs: Vec<u32> = (0..gone.len() as u32).filter(|&s| gone[s as usize]).collect();
        if !slabs.is_empty() {
            let (start, shift) = (geometry.start, geometry.shift);
            occupancy.free.retain(|&index| !gone[((index - start) >> shift) as usize]);
            let (next, end) = occupancy.fresh;
            if next < end && gone[((next - start) >> shift) as usize] {
                occupancy.fresh = (end, end);
            }
            // The spike's vacant list need not keep its buffer either (4 bytes a cell).
            if occupancy.free.capacity() > 4 * occupancy.free.len().max(per_slab) {
                occupancy.free.shrink_to(2 * occupancy.free.len().max(per_slab));
            }
            occupancy.granted -= slabs.len() * per_slab;
            occupancy.decommitted.extend(&slabs);
            // Highest first: `recommit` pops the lowest, so the class refills its front.
            occupancy.decommitted.sort_unstable_by(|a, b| b.cmp(a));
        }
        match refused {
            Some(e) => Err(e.into()),
            None => Ok(slabs.len()),
        }
    }

    /// The class's vacant list ran dry and it has decommitted slabs: the lowest is committed
    /// again (its pages faulted in on this thread, as an inline preparation is) and its
    /// cells become vacant slots again, front to back. Their slots were never released: each
    /// keeps its generation, so no handle to an earlier object of the cell resolves.
    #[cold]
    pub(super) fn recommit(&mut self, alloc: &ChunkAllocator) -> Result<(), ArenaError> {
        let slab = *self.occupancy.decommitted.last().expect("a decommitted slab to recommit");
        // SAFETY: the slab is the class's (decommitted by `decommit_empty`), every cell of it
        // vacant and off the vacant list, so nobody holds anything in it.
        unsafe { alloc.recommit_slab(self.geometry.id, slab) }?;
        self.occupancy.decommitted.pop();
        let per_slab = self.geometry.cells_per_slab() as u32;
        let first = self.geometry.start + (slab << self.geometry.shift);
        // Reversed, so the slab fills front to back (as a new slab does).
        self.occupancy.free.extend((first..first + per_slab).rev());
        self.occupancy.reach_to(first + per_slab - self.geometry.start);
        self.occupancy.granted += per_slab as usize;
        Ok(())
    }
}
