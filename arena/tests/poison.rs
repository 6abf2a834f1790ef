//! Slab poisoning works: under `RUSTFLAGS="-Zsanitizer=address --cfg respawn_poison"`
//! (`scripts/sanitizers.sh`), a pointer kept past its object's end and read inside the
//! slab is reported by AddressSanitizer, while the same read of a live object is not.
//!
//! ASan aborts the process it catches, so each case runs in a child process (this test
//! binary again, with `RESPAWN_POISON_CHILD` set) and the parent reads the child's report.
#![cfg(respawn_poison)]

use std::process::Command;

use respawn_arena::{Arena, ArenaConfig, SlabConfig};

const CHILD: &str = "RESPAWN_POISON_CHILD";

#[derive(Debug)]
#[repr(C)]
struct Projectile {
    pos: [f32; 4],
    id: u64,
}

/// Runs `test` in a child process with the child flag set; returns (success, stderr).
fn in_child(test: &str) -> (bool, String) {
    let out = Command::new(std::env::current_exe().unwrap())
        .args([test, "--exact", "--nocapture", "--test-threads=1"])
        .env(CHILD, "1")
        .output()
        .unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

/// In the child: keeps a pointer to an object, optionally destroys it, reads through it.
fn read_through_kept_pointer(destroy: bool) {
    let mut arena = Arena::with_config(ArenaConfig { slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT });
    let keep = arena.insert(Projectile { pos: [1.0; 4], id: 1 });
    let neighbour = arena.insert(Projectile { pos: [2.0; 4], id: 2 });
    let kept: *const Projectile = arena.get(keep).unwrap();
    if destroy {
        arena.destroy(keep.raw()).unwrap();
    }
    // SAFETY: deliberately none when `destroy`: this is the use-after-free ASan must catch.
    let id = unsafe { std::ptr::addr_of!((*kept).id).read_volatile() };
    assert_eq!(arena.get(neighbour).unwrap().id, 2, "the neighbouring cell stays readable");
    println!("read id {id}");
}

#[test]
fn use_after_destroy_inside_a_slab_is_reported() {
    if std::env::var_os(CHILD).is_some() {
        return read_through_kept_pointer(true);
    }
    let (ok, stderr) = in_child("use_after_destroy_inside_a_slab_is_reported");
    assert!(!ok, "the use-after-free went unreported:\n{stderr}");
    assert!(stderr.contains("AddressSanitizer: use-after-poison"), "not ASan's poison report:\n{stderr}");
}

#[test]
fn reading_a_live_object_is_not_reported() {
    if std::env::var_os(CHILD).is_some() {
        return read_through_kept_pointer(false);
    }
    let (ok, stderr) = in_child("reading_a_live_object_is_not_reported");
    assert!(ok, "a live object's cell was reported:\n{stderr}");
}

#[test]
fn a_cell_handed_out_again_is_readable() {
    // Destroy, then insert: the vacant cell is reused (last in, first out) and must be
    // unpoisoned for its new object.
    let mut arena = Arena::with_config(ArenaConfig { slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT });
    let first = arena.insert(Projectile { pos: [1.0; 4], id: 1 });
    let at: *const Projectile = arena.get(first).unwrap();
    arena.destroy(first.raw()).unwrap();
    let second = arena.insert(Projectile { pos: [3.0; 4], id: 3 });
    assert!(std::ptr::eq(at, arena.get(second).unwrap()), "the vacant cell was not reused");
    assert_eq!(arena.get(second).unwrap().id, 3);
}

/// In the child: keeps a pointer into a slab that a trim decommits, then reads it.
fn read_into_a_decommitted_slab() {
    let slab = SlabConfig { spare_slabs: 0, ..SlabConfig::SMALL };
    let mut arena = Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT });
    let class = arena.register::<Projectile>().unwrap();
    let spike: Vec<_> = (0..64).map(|i| arena.insert(Projectile { pos: [0.0; 4], id: i })).collect();
    let kept: *const Projectile = arena.get(spike[5]).unwrap();
    spike.into_iter().for_each(|h| arena.destroy(h.raw()).unwrap());
    assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 1);
    // SAFETY: deliberately none: a read of a decommitted slab's cell, which ASan must catch.
    let id = unsafe { std::ptr::addr_of!((*kept).id).read_volatile() };
    println!("read id {id}");
}

#[test]
fn a_read_into_a_decommitted_slab_is_reported() {
    if std::env::var_os(CHILD).is_some() {
        return read_into_a_decommitted_slab();
    }
    let (ok, stderr) = in_child("a_read_into_a_decommitted_slab_is_reported");
    assert!(!ok, "the read went unreported:\n{stderr}");
    assert!(stderr.contains("AddressSanitizer: use-after-poison"), "not ASan's poison report:\n{stderr}");
}

#[test]
fn a_recommitted_slab_serves_readable_cells() {
    // Decommit, then insert: the slab is committed again, its cell unpoisoned for the new
    // object.
    let slab = SlabConfig { spare_slabs: 0, ..SlabConfig::SMALL };
    let mut arena = Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT });
    let class = arena.register::<Projectile>().unwrap();
    let spike: Vec<_> = (0..64).map(|i| arena.insert(Projectile { pos: [0.0; 4], id: i })).collect();
    spike.into_iter().for_each(|h| arena.destroy(h.raw()).unwrap());
    assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 1);
    let again: Vec<_> = (0..64).map(|i| arena.insert(Projectile { pos: [1.0; 4], id: 100 + i })).collect();
    assert!(again.iter().enumerate().all(|(i, &h)| arena.get(h).unwrap().id == 100 + i as u64));
}
