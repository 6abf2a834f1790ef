//! Double frees and wrong-class frees are caught in release builds too (jemalloc's
//! `double_free` test is the model: free twice, expect the allocator to notice, not to
//! corrupt itself). CI runs this file with `cargo test --release --test misuse`, where no
//! `debug_assert!` runs, and with the rest of the tests in debug.
//!
//! Each case checks the error and that nothing was lost: the object or cell that the bad
//! call named is still there (or still gone), its neighbours are intact, and at the end
//! every object was dropped exactly once.

use std::alloc::Layout;
use std::num::NonZeroU32;
use std::time::Duration;

use respawn::allocator::{AllocError, ChunkAllocator};
use respawn::{Arena, ArenaError, Handle, Policy, PoolConfig, PoolError, RawHandle, SlabConfig, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::world::{Counted, Shot};

#[test]
fn allocator_double_and_wrong_class_free() {
    let a = ChunkAllocator::new();
    let small = a.register_class(Layout::new::<u64>(), SlabConfig::SMALL).unwrap();
    let big = a.register_class(Layout::new::<[u64; 8]>(), SlabConfig::SMALL).unwrap();
    let p = a.alloc_cell(small);
    let q = a.alloc_cell(small);
    assert!(matches!(a.free_cell(big, p), Err(AllocError::WrongClass { .. })));
    a.free_cell(small, p).unwrap();
    assert!(matches!(a.free_cell(small, p), Err(AllocError::DoubleFree)));
    // The freed cell is handed out once, not twice; the neighbour was never freed.
    assert_eq!(a.alloc_cell(small), p);
    assert_ne!(a.alloc_cell(small), p);
    assert_eq!(a.stats(small).unwrap().live_cells, 3);
    a.free_cell(small, q).unwrap();
    assert!(matches!(a.free_cell(small, q), Err(AllocError::DoubleFree)));
}

#[test]
fn arena_double_destroy_and_wrong_class() {
    let drops = Drops::default();
    let mut arena = Arena::new();
    let a = arena.insert(Counted::new(&drops));
    let b = arena.insert(Counted::new(&drops));
    // Wrong class: a handle of another type over `a`'s slot.
    let forged: Handle<u64> = Handle::from_raw(a.raw());
    assert!(matches!(arena.try_remove(forged), Err(ArenaError::WrongClass { .. })));
    assert!(arena.contains(a), "a wrong-class remove took the object");
    arena.destroy(a.raw()).unwrap();
    assert!(matches!(arena.destroy(a.raw()), Err(ArenaError::Stale)));
    // The slot is reused by the next object: the old handle still names nothing.
    let c = arena.insert(Counted::new(&drops));
    assert_eq!(c.index(), a.index(), "the vacant slot was not reused");
    assert!(matches!(arena.destroy(a.raw()), Err(ArenaError::Stale)));
    assert!(arena.contains(c) && arena.contains(b), "a stale destroy ended another object");
    assert_eq!(drops.count(), 1);
    drop(arena);
    drops.assert_each_once();
}

#[test]
fn world_double_destroy_under_every_policy() {
    for policy in [Policy::Default, Policy::Purge, Policy::Reuse] {
        let drops = Drops::default();
        let d = drops.clone();
        let config = PoolConfig {
            capacity: 4,
            max: 64,
            low_watermark: 0,
            grow_by: 4,
            policy,
            workers: 0,
            precreate: false,
            idle_trim: None,
        };
        let mut world = World::builder().pool_with::<Shot>(config, move || Shot::new(&d)).build().unwrap();
        let a = world.spawn::<Shot>();
        let keep = world.spawn::<Shot>();
        world.add_to_root(keep).unwrap();
        world.destroy(a).unwrap();
        // Released, not yet collected or reused: recognised as a second destroy.
        assert!(matches!(world.destroy(a), Err(PoolError::AlreadyReleased)), "{policy}");
        world.collect_garbage();
        world.purge(Duration::MAX);
        // Its cell is handed out again (a new object, or the same one reset for `Reuse`):
        // the old handle must not reach the new occupant.
        let mut spawned = Vec::new();
        for _ in 0..8 {
            let s = world.spawn::<Shot>();
            world.add_to_root(s).unwrap();
            spawned.push(s);
        }
        let r = world.destroy(a);
        assert!(matches!(r, Err(PoolError::AlreadyReleased | PoolError::Stale)), "{policy}: {r:?}");
        // Wrong class over a live object: refused, the object stays.
        let forged: Handle<Counted> = Handle::from_raw(keep.raw());
        assert!(matches!(world.destroy(forged), Err(PoolError::Arena(ArenaError::WrongClass { .. }))), "{policy}");
        assert!(world.contains(keep), "{policy}: a refused destroy took the object");
        assert!(spawned.iter().all(|&s| world.contains(s)), "{policy}: a stale destroy ended a new object");
        drop(world);
        drops.assert_each_once();
    }
}

/// A destroy with a handle at the last generation over a vacant slot (found by the fuzzer:
/// the "released already?" check computed `generation + 1` and overflowed in debug builds).
#[test]
fn destroy_at_the_last_generation_is_an_error_not_an_overflow() {
    let drops = Drops::default();
    let d = drops.clone();
    let mut world = World::builder().pool_with::<Shot>(PoolConfig::ON_DEMAND, move || Shot::new(&d)).build().unwrap();
    let a = world.spawn::<Shot>();
    world.destroy(a).unwrap();
    world.collect_garbage();
    let last = Handle::<Shot>::from_raw(RawHandle::new(a.index(), NonZeroU32::MAX));
    let r = world.destroy(last);
    assert!(matches!(r, Err(PoolError::Stale | PoolError::AlreadyReleased)), "{r:?}");
    drop(world);
    drops.assert_each_once();
}
