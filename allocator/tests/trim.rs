//! Giving memory back at the allocator: empty single-cell slabs are trimmed and serve again
//! before new ones; a granted slab is decommitted and recommitted by its owner; the
//! committed-bytes figure follows.

use std::alloc::Layout;

use respawn_allocator::{AllocError, ChunkAllocator, SlabConfig};

const SLAB: SlabConfig = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 64, huge_pages: false };

#[test]
fn empty_cell_slabs_are_trimmed_and_serve_again_first() {
    let alloc = ChunkAllocator::new();
    let class = alloc.register_class(Layout::new::<u64>(), SLAB).unwrap();
    let cells: Vec<_> = (0..64 * 5).map(|_| alloc.alloc_cell(class)).collect();
    for (i, c) in cells.iter().enumerate() {
        // SAFETY: a fresh cell of `u64` layout, ours.
        unsafe { c.cast::<u64>().as_ptr().write(i as u64) };
    }
    let peak = alloc.stats(class).unwrap();
    assert_eq!(peak.committed_bytes, 5 * peak.slab_bytes);
    // Free all but one cell of slab 0 and one of slab 3.
    let keep = [cells[3], cells[3 * 64 + 7]];
    for &c in cells.iter().filter(|c| !keep.contains(c)) {
        alloc.free_cell(class, c).unwrap();
    }
    assert_eq!(alloc.trim_cells(class).unwrap(), 3, "slabs 1, 2 and 4 (the bump's) are empty");
    let trimmed = alloc.stats(class).unwrap();
    assert_eq!((trimmed.decommitted_slabs, trimmed.committed_bytes), (3, 2 * peak.slab_bytes));
    assert_eq!(trimmed.free_cells, 2 * 64 - 2, "the trimmed slabs' cells left the free list");
    assert_eq!(alloc.trim_cells(class).unwrap(), 0);
    // SAFETY: the kept cells are still allocated and were written above.
    assert_eq!(unsafe { keep.map(|c| c.cast::<u64>().as_ptr().read()) }, [3, 3 * 64 + 7]);
    // A freed cell is not handed out twice, and a trimmed slab's cell is not "allocated".
    assert!(matches!(alloc.free_cell(class, cells[64]), Err(AllocError::DoubleFree)));

    // 2 × 64 − 2 free cells, then the three parked slabs, lowest first; nothing new carved.
    let again: Vec<_> = (0..2 * 64 - 2 + 3 * 64).map(|_| alloc.alloc_cell(class)).collect();
    let stats = alloc.stats(class).unwrap();
    assert_eq!((stats.carved_slabs, stats.decommitted_slabs), (5, 0), "parked slabs reused before new ones");
    assert_eq!(stats.committed_bytes, peak.committed_bytes);
    for (i, c) in again.iter().enumerate() {
        // SAFETY: fresh cells, ours; recommitted memory is writable.
        unsafe { c.cast::<u64>().as_ptr().write(i as u64) };
    }
    let mut all: Vec<usize> = again.iter().chain(&keep).map(|c| c.as_ptr() as usize).collect();
    all.sort_unstable();
    all.dedup();
    assert_eq!(all.len(), 5 * 64, "no cell handed out twice");
}

#[test]
fn a_granted_slab_is_decommitted_and_recommitted_by_its_owner() {
    let alloc = ChunkAllocator::new();
    let class = alloc.register_class(Layout::new::<[u64; 8]>(), SLAB).unwrap();
    let grants: Vec<_> = (0..3).map(|_| alloc.alloc_slab(class).unwrap()).collect();
    let bytes = alloc.stats(class).unwrap().slab_bytes;
    // SAFETY: slab 1 is ours, granted whole; nothing lives in it.
    unsafe { alloc.decommit_slab(class, grants[1].index) }.unwrap();
    // SAFETY: as above; a second decommit does nothing.
    unsafe { alloc.decommit_slab(class, grants[1].index) }.unwrap();
    assert_eq!(alloc.stats(class).unwrap().committed_bytes, 2 * bytes);
    // SAFETY: as above.
    unsafe { alloc.recommit_slab(class, grants[1].index) }.unwrap();
    let stats = alloc.stats(class).unwrap();
    assert_eq!((stats.decommitted_slabs, stats.committed_bytes), (0, 3 * bytes));
    // Its cells are free (poisoned) again until the owner hands one out, as the arena does.
    respawn_allocator::poison::unpoison(grants[1].base.as_ptr(), grants[1].cell_size);
    // SAFETY: the slab is ours and committed again: writable.
    unsafe { grants[1].base.as_ptr().write_bytes(7, grants[1].cell_size) };

    // A slab never carved, or an unknown class, is refused.
    // SAFETY: refused before anything is touched.
    assert!(matches!(unsafe { alloc.decommit_slab(class, 60) }, Err(AllocError::Exhausted { .. })));
    let other = ChunkAllocator::new();
    let foreign = other.register_class(Layout::new::<u8>(), SLAB).unwrap();
    let _ = other.register_class(Layout::new::<u16>(), SLAB).unwrap();
    let unknown = other.register_class(Layout::new::<u32>(), SLAB).unwrap();
    assert_eq!(foreign.index(), 0);
    // SAFETY: refused before anything is touched.
    assert!(matches!(unsafe { alloc.recommit_slab(unknown, 0) }, Err(AllocError::UnknownClass(_))));
    assert!(matches!(alloc.trim_cells(unknown), Err(AllocError::UnknownClass(_))));
}
