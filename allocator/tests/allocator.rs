//! Behaviour of the chunk allocator and the permanent pool, bad input included.
#![cfg(not(loom))]

use std::alloc::Layout;
use std::collections::HashSet;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use respawn_allocator::{AllocError, ChunkAllocator, ClassId, PermanentPool, SlabConfig, MAX_ALIGN};
use respawn_testkit::threads::wait_until;

const TINY: SlabConfig = SlabConfig { cells_per_slab: 64, spare_slabs: 1, max_slabs: 4, huge_pages: false };

#[test]
fn zero_sized_layout_is_refused() {
    let a = ChunkAllocator::new();
    let err = a.register_class(Layout::new::<()>(), TINY).unwrap_err();
    assert!(matches!(err, AllocError::ZeroSized), "{err}");
    assert!(err.to_string().contains("zero-sized"));
}

#[test]
fn over_aligned_layout_is_refused() {
    let a = ChunkAllocator::new();
    let layout = Layout::from_size_align(64, MAX_ALIGN * 2).unwrap();
    let err = a.register_class(layout, TINY).unwrap_err();
    assert!(matches!(err, AllocError::OverAligned { align, max } if align == MAX_ALIGN * 2 && max == MAX_ALIGN));
    // The largest supported alignment is fine.
    let c = a.register_class(Layout::from_size_align(64, MAX_ALIGN).unwrap(), TINY).unwrap();
    let p = a.alloc_cell(c);
    assert_eq!(p.as_ptr() as usize % MAX_ALIGN, 0);
}

#[test]
fn bad_configs_say_what_to_change() {
    let a = ChunkAllocator::new();
    let l = Layout::new::<u64>();
    for (cfg, words) in [
        (SlabConfig { cells_per_slab: 100, ..TINY }, "power of two"),
        (SlabConfig { cells_per_slab: 0, ..TINY }, "power of two"),
        (SlabConfig { max_slabs: 0, ..TINY }, "max_slabs"),
        (SlabConfig { spare_slabs: 5, ..TINY }, "spare_slabs"),
        (SlabConfig { cells_per_slab: 1 << 20, max_slabs: 1 << 13, ..TINY }, "32 bits"),
    ] {
        let err = a.register_class(l, cfg).unwrap_err();
        assert!(matches!(err, AllocError::BadConfig(_)), "{cfg:?}: {err}");
        assert!(err.to_string().contains(words), "{cfg:?}: {err}");
    }
    assert_eq!(a.class_count(), 0, "a refused class must not be registered");
}

#[test]
fn unknown_class_is_an_error() {
    let a = ChunkAllocator::new();
    let ghost = ClassId::from_index(7);
    assert!(matches!(a.try_alloc_cell(ghost), Err(AllocError::UnknownClass(c)) if c == ghost));
    assert!(matches!(a.alloc_slab(ghost), Err(AllocError::UnknownClass(_))));
    assert!(matches!(a.stats(ghost), Err(AllocError::UnknownClass(_))));
}

#[test]
fn cells_are_distinct_aligned_and_reused_after_free() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<[u64; 3]>(), TINY).unwrap();
    let n = 150; // spans three slabs
    let cells: Vec<NonNull<u8>> = (0..n).map(|_| a.alloc_cell(c)).collect();
    let distinct: HashSet<usize> = cells.iter().map(|p| p.as_ptr() as usize).collect();
    assert_eq!(distinct.len(), n);
    for p in &cells {
        assert_eq!(p.as_ptr() as usize % 8, 0);
        // SAFETY: the cell is ours and 24 bytes.
        unsafe { p.cast::<[u64; 3]>().as_ptr().write([1, 2, 3]) };
    }
    let s = a.stats(c).unwrap();
    assert_eq!((s.cell_size, s.live_cells, s.cells_in_use), (24, n, n));
    a.free_cell(c, cells[10]).unwrap();
    assert_eq!(a.alloc_cell(c), cells[10], "the freed cell comes back first");
    for p in cells {
        a.free_cell(c, p).unwrap();
    }
    let s = a.stats(c).unwrap();
    assert_eq!(s.live_cells, 0);
    assert_eq!(s.high_water, n);
}

#[test]
fn double_free_is_caught() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), TINY).unwrap();
    let p = a.alloc_cell(c);
    a.free_cell(c, p).unwrap();
    let err = a.free_cell(c, p).unwrap_err();
    assert!(matches!(err, AllocError::DoubleFree), "{err}");
    // The failed free changed nothing: one allocation gives the cell back, the next a new one.
    assert_eq!(a.alloc_cell(c), p);
    assert_ne!(a.alloc_cell(c), p);
}

#[test]
fn wrong_class_and_foreign_pointers_are_caught() {
    let a = ChunkAllocator::new();
    let small = a.register_class(Layout::new::<u64>(), TINY).unwrap();
    let big = a.register_class(Layout::new::<[u64; 4]>(), TINY).unwrap();
    let p = a.alloc_cell(small);
    let err = a.free_cell(big, p).unwrap_err();
    assert!(matches!(err, AllocError::WrongClass { expected, found } if expected == big && found == small), "{err}");
    let mut local = 0u64;
    let err = a.free_cell(small, NonNull::from(&mut local).cast()).unwrap_err();
    assert!(matches!(err, AllocError::ForeignPointer), "{err}");
    // Inside a cell, not at its start.
    // SAFETY: one byte into an 8-byte cell stays inside it.
    let inside = unsafe { p.add(1) };
    assert!(matches!(a.free_cell(small, inside), Err(AllocError::Misaligned)));
    a.free_cell(small, p).unwrap();
}

#[test]
fn cells_of_granted_slabs_cannot_be_freed_as_cells() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), TINY).unwrap();
    let g = a.alloc_slab(c).unwrap();
    assert_eq!(g.cells, 64);
    assert!(matches!(a.free_cell(c, g.base), Err(AllocError::DoubleFree)));
}

#[test]
fn exhausted_reservation_is_an_error_not_a_crash() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), TINY).unwrap();
    let cells: Vec<_> = (0..4 * 64).map(|_| a.try_alloc_cell(c).unwrap()).collect();
    let err = a.try_alloc_cell(c).unwrap_err();
    assert!(matches!(err, AllocError::Exhausted { class, max_slabs: 4 } if class == c), "{err}");
    assert!(err.to_string().contains("max_slabs"));
    assert!(matches!(a.alloc_slab(c), Err(AllocError::Exhausted { .. })));
    assert!(matches!(a.reserve(c, 1), Err(AllocError::Exhausted { .. })));
    // Freeing makes room again.
    a.free_cell(c, cells[0]).unwrap();
    assert_eq!(a.try_alloc_cell(c).unwrap(), cells[0]);
}

#[test]
#[should_panic(expected = "max_slabs")]
fn alloc_cell_panics_with_the_reason() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), SlabConfig { max_slabs: 1, spare_slabs: 0, ..TINY }).unwrap();
    for _ in 0..=64 {
        a.alloc_cell(c);
    }
}

#[test]
fn background_thread_prepares_spares_ahead_of_demand() {
    let a = ChunkAllocator::new();
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 3, max_slabs: 64, huge_pages: false };
    let c = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    wait_until("three spare slabs", || a.stats(c).unwrap().prepared_slabs == 3);
    let g = a.alloc_slab(c).unwrap();
    assert!(!g.inline, "a prepared slab was waiting");
    // The worker tops the spares up again.
    wait_until("the spares topped up", || a.stats(c).unwrap().prepared_slabs == 3);
    let s = a.stats(c).unwrap();
    assert_eq!(s.carved_slabs, 4);
    assert_eq!(s.inline_preparations, 0);
    assert_eq!(s.granted_slabs, 1);
}

#[test]
fn caller_prepares_inline_when_no_spare_is_kept() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), SlabConfig { spare_slabs: 0, ..TINY }).unwrap();
    let g = a.alloc_slab(c).unwrap();
    assert!(g.inline);
    assert_eq!(a.stats(c).unwrap().inline_preparations, 1);
}

#[test]
fn reserve_returns_at_once_and_prepares_in_the_background() {
    let a = ChunkAllocator::new();
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 64, huge_pages: false };
    let c = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    a.reserve(c, 64 * 5 - 3).unwrap(); // five slabs' worth
    wait_until("five reserved slabs", || a.stats(c).unwrap().prepared_slabs == 5);
    for _ in 0..5 {
        assert!(!a.alloc_slab(c).unwrap().inline);
    }
    // The reservation is used up; with no spares the next one is inline.
    assert!(a.alloc_slab(c).unwrap().inline);
    assert_eq!(a.stats(c).unwrap().inline_preparations, 1);
}

/// `prepare_ahead` asks for room, not for more room each call: asked every frame for the
/// same cells, it prepares them once; it counts a `reserve` not taken yet, and asks for no
/// more than the reservation has left.
#[test]
fn prepare_ahead_asked_again_for_the_same_cells_prepares_nothing_more() {
    let a = ChunkAllocator::new();
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 4, huge_pages: false };
    let c = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    for _ in 0..10 {
        a.prepare_ahead(c, 100).unwrap(); // two slabs' worth, asked each frame
    }
    wait_until("two slabs prepared", || a.stats(c).unwrap().prepared_slabs == 2);
    a.prepare_ahead(c, 64).unwrap();
    assert_eq!(a.stats(c).unwrap().carved_slabs, 2, "already there");
    // Taken: the next ask prepares again, within what the reservation has left (4 slabs).
    for _ in 0..2 {
        assert!(!a.alloc_slab(c).unwrap().inline);
    }
    a.prepare_ahead(c, 64 * 10).unwrap();
    wait_until("the rest of the reservation", || a.stats(c).unwrap().prepared_slabs == 2);
    assert_eq!(a.stats(c).unwrap().carved_slabs, 4);
    assert!(matches!(a.prepare_ahead(ClassId::from_index(7), 1), Err(AllocError::UnknownClass(_))));
}

/// The preparation thread carves while the caller reads the stats: each figure of one
/// snapshot agrees with the others, whatever it carved between them.
#[test]
fn stats_are_one_snapshot_while_the_worker_carves() {
    let a = ChunkAllocator::new();
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 4096, huge_pages: false };
    let c = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    for _ in 0..rounds {
        a.reserve(c, 64).unwrap();
        let s = a.stats(c).unwrap();
        assert_eq!(s.committed_bytes, s.carved_slabs as usize * s.slab_bytes, "{s:?}");
    }
}

#[test]
fn prepare_now_warms_on_the_calling_thread() {
    let a = ChunkAllocator::new();
    let c = a.register_class(Layout::new::<u64>(), SlabConfig { spare_slabs: 2, ..TINY }).unwrap();
    a.prepare_now(c).unwrap();
    assert!(a.stats(c).unwrap().prepared_slabs >= 2);
}

#[cfg(not(miri))] // under Miri each slab is its own allocation
#[test]
fn slabs_of_a_class_are_contiguous_and_in_order() {
    let a = ChunkAllocator::new();
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 2, max_slabs: 32, huge_pages: false };
    let c = a.register_class(Layout::new::<[u8; 48]>(), cfg).unwrap();
    let region = a.region(c).unwrap();
    let stride = a.stats(c).unwrap().slab_bytes;
    let mut grants: Vec<_> = (0..20).map(|_| a.alloc_slab(c).unwrap()).collect();
    grants.sort_by_key(|g| g.index);
    // Indices need not be dense (the worker may hold a carved slab in flight while the caller
    // carves the next one inline), but each slab sits at its index's offset, so slab order is
    // address order, and no index is handed out twice.
    for w in grants.windows(2) {
        assert!(w[0].index < w[1].index, "slab {} handed out twice", w[0].index);
    }
    for g in &grants {
        let i = g.index as usize;
        assert_eq!(g.base.as_ptr() as usize, region.start + i * stride, "slab {i} sits at its offset");
        assert!(region.contains(&(g.base.as_ptr() as usize + 64 * 48 - 1)));
    }
    let other = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    let o = a.alloc_cell(other);
    assert!(!region.contains(&(o.as_ptr() as usize)), "another class lives in another region");
    assert_eq!(a.class_of(o.as_ptr()), Some(other));
    assert_eq!(a.class_of(grants[3].base.as_ptr()), Some(c));
}

#[test]
fn many_threads_allocate_distinct_cells() {
    let a = Arc::new(ChunkAllocator::new());
    let cfg = SlabConfig { cells_per_slab: 64, spare_slabs: 1, max_slabs: 256, huge_pages: false };
    let c = a.register_class(Layout::new::<u64>(), cfg).unwrap();
    let per = if cfg!(miri) { 20 } else { 2000 };
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let a = Arc::clone(&a);
            std::thread::spawn(move || (0..per).map(|_| a.alloc_cell(c).as_ptr() as usize).collect::<Vec<_>>())
        })
        .collect();
    let all: Vec<usize> = handles.into_iter().flat_map(|h| h.join().unwrap()).collect();
    let distinct: HashSet<_> = all.iter().collect();
    assert_eq!(distinct.len(), 4 * per);
    assert_eq!(a.stats(c).unwrap().live_cells, 4 * per);
}

// ---- permanent pool ----

struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn permanent_pool_drops_what_it_holds_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    {
        let pool = PermanentPool::new(16 * 1024).unwrap();
        for _ in 0..50 {
            pool.alloc(Counted(Arc::clone(&drops)));
        }
        let s = pool.alloc(String::from("lives as long as the pool"));
        assert_eq!(s, "lives as long as the pool");
        assert_eq!(drops.load(Ordering::SeqCst), 0);
    }
    assert_eq!(drops.load(Ordering::SeqCst), 50);
}

#[test]
fn permanent_pool_contains_is_an_address_check() {
    let pool = PermanentPool::new(4096).unwrap();
    let x = pool.alloc(7u32);
    assert!(pool.contains((x as *const u32).cast()));
    let y = Box::new(7u32);
    assert!(!pool.contains((&*y as *const u32).cast()));
    let raw = pool.try_alloc_layout(Layout::from_size_align(100, 64).unwrap()).unwrap();
    assert_eq!(raw.as_ptr() as usize % 64, 0);
    assert!(pool.contains(raw.as_ptr()));
}

#[test]
fn permanent_pool_full_hands_the_value_back() {
    let drops = Arc::new(AtomicUsize::new(0));
    let pool = PermanentPool::new(1).unwrap(); // rounded up to a page
    assert_eq!(pool.capacity(), 4096);
    let big = [7u8; 5000];
    let rejected = pool.try_alloc(big).unwrap_err();
    assert!(matches!(rejected.error, AllocError::Full { capacity: 4096 }));
    assert_eq!(rejected.value[4999], 7, "the value comes back intact");
    let r = pool.try_alloc(Counted(Arc::clone(&drops)));
    assert!(r.is_ok());
    drop(pool);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    assert!(matches!(PermanentPool::new(0), Err(AllocError::BadConfig(_))));
}

#[test]
fn permanent_pool_bump_is_lock_free_across_threads() {
    let pool = Arc::new(PermanentPool::new(1 << 20).unwrap());
    let drops = Arc::new(AtomicUsize::new(0));
    let per = if cfg!(miri) { 10 } else { 1000 };
    let addrs: Vec<usize> = (0..4)
        .map(|t| {
            let (pool, drops) = (Arc::clone(&pool), Arc::clone(&drops));
            std::thread::spawn(move || {
                (0..per)
                    .map(|i| {
                        let v = pool.alloc((t, i, Counted(Arc::clone(&drops))));
                        assert_eq!((v.0, v.1), (t, i));
                        &*v as *const _ as usize
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect::<Vec<_>>()
        .into_iter()
        .flat_map(|h| h.join().unwrap())
        .collect();
    assert_eq!(addrs.iter().collect::<HashSet<_>>().len(), 4 * per);
    drop(pool);
    assert_eq!(drops.load(Ordering::SeqCst), 4 * per);
}
