//! Decommitting a class's empty slabs: memory falls back after a spike, handles to the
//! survivors keep resolving, stale handles never do, and a decommitted slab serves again.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use respawn_arena::{Arena, ArenaConfig, CellState, Handle, SlabConfig};

/// A value that counts its drops, and checks it was not clobbered (a decommitted page
/// reads as zeros).
struct Counted {
    id: u64,
    check: u64,
    drops: Arc<AtomicUsize>,
}

impl Counted {
    fn new(id: u64, drops: &Arc<AtomicUsize>) -> Self {
        Self { id, check: !id, drops: Arc::clone(drops) }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        assert_eq!(self.check, !self.id, "object {} clobbered", self.id);
        self.drops.fetch_add(1, Ordering::Relaxed);
    }
}

const SLAB: SlabConfig = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 256, huge_pages: false };

fn spike_len() -> usize {
    if cfg!(miri) {
        300
    } else {
        5000
    }
}

#[test]
fn after_a_spike_committed_memory_falls_back_to_the_live_need() {
    let drops = Arc::new(AtomicUsize::new(0));
    let mut arena = Arena::new();
    let class = arena.register_with::<Counted>(SLAB).unwrap();
    // Survivors first: they fill the front slabs.
    let survivors: Vec<Handle<Counted>> = (0..100).map(|i| arena.insert(Counted::new(i, &drops))).collect();
    let spike: Vec<Handle<Counted>> =
        (0..spike_len() as u64).map(|i| arena.insert(Counted::new(1000 + i, &drops))).collect();
    let peak = arena.stats::<Counted>().unwrap().memory;
    for &h in &spike {
        assert!(arena.remove(h).is_some());
    }
    assert_eq!(drops.load(Ordering::Relaxed), spike.len());
    assert_eq!(peak.committed_bytes, peak.carved_slabs as usize * peak.slab_bytes);

    let trimmed = arena.decommit_empty_slabs(class).unwrap();
    let memory = arena.stats::<Counted>().unwrap().memory;
    let need = survivors.len().div_ceil(64) * memory.slab_bytes;
    assert!(trimmed > 0);
    assert_eq!(memory.decommitted_slabs as usize, trimmed);
    assert_eq!(arena.decommitted_slabs(class), trimmed);
    assert!(
        memory.committed_bytes <= need + memory.slab_bytes,
        "committed {} for a need of {need}",
        memory.committed_bytes
    );
    assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 0, "nothing left to give back");
    // Survivors resolve and are intact; the spike's handles do not.
    for (i, &h) in survivors.iter().enumerate() {
        assert_eq!(arena.get(h).map(|c| c.id), Some(i as u64));
    }
    assert!(spike.iter().all(|&h| arena.get(h).is_none()));
    assert_eq!(arena.len::<Counted>(), survivors.len());
    // The layout shows only committed slabs.
    let layout = arena.layout(class).unwrap();
    assert_eq!(layout.slabs.len() * memory.slab_bytes, memory.committed_bytes);
    assert_eq!(layout.count(CellState::Live), survivors.len());

    // Grow again: the decommitted slabs serve first (no new slab is carved), and a reused
    // cell's old handles stay stale.
    let again: Vec<Handle<Counted>> =
        (0..spike_len() as u64).map(|i| arena.insert(Counted::new(100_000 + i, &drops))).collect();
    let memory = arena.stats::<Counted>().unwrap().memory;
    assert_eq!(memory.carved_slabs, peak.carved_slabs, "decommitted slabs reused before new ones");
    assert_eq!(memory.decommitted_slabs, 0);
    assert!(spike.iter().all(|&h| arena.get(h).is_none()), "a stale handle resolved after reuse");
    for (i, &h) in again.iter().enumerate() {
        assert_eq!(arena.get(h).map(|c| c.id), Some(100_000 + i as u64));
    }
    assert_eq!(arena.len::<Counted>(), survivors.len() + again.len());
    drop(arena);
    assert_eq!(drops.load(Ordering::Relaxed), 2 * spike_len() + survivors.len(), "every object dropped once");
}

#[test]
fn slabs_with_a_live_held_or_retired_cell_stay_committed() {
    let mut arena = Arena::with_config(ArenaConfig { max_generation: 2, ..ArenaConfig::DEFAULT });
    let class = arena.register_with::<u64>(SLAB).unwrap();
    // Slab 0: a live object. Slab 1: a cell held out (a pool's token). Slab 2: a retired
    // slot. Slab 3: empty.
    let all: Vec<Handle<u64>> = (0..4 * 64).map(|i| arena.insert(i)).collect();
    // Vacant lists are last in, first out: slab 2's first cell, then slab 1's, removed last.
    for &h in all[65..128].iter().chain(&all[129..]) {
        arena.remove(h).unwrap();
    }
    arena.remove(all[128]).unwrap();
    arena.remove(all[64]).unwrap();
    let token = arena.store_mut::<u64>().unwrap().take_cell().unwrap();
    assert_eq!(token.slot(), all[64].index(), "the warmest vacant cell is slab 1's first");
    // Retire slab 2's first slot: reuse its cell until its generation reaches the ceiling.
    for _ in 0..4 {
        let h = arena.insert(7u64);
        assert_eq!(h.index(), all[128].index());
        arena.remove(h).unwrap();
        if arena.stats::<u64>().unwrap().retired == 1 {
            break;
        }
    }
    assert_eq!(arena.stats::<u64>().unwrap().retired, 1);
    assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 1, "only slab 3 is empty");
    // The token's cell is still ours to give back, and its slab stays.
    arena.recycle(token).unwrap();
    assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 1, "slab 1, once its cell came back");
    assert_eq!(arena.get(all[0]), Some(&0));
    assert_eq!(arena.len::<u64>(), 64, "slab 0 untouched");
}

#[test]
fn an_unknown_class_is_refused() {
    let mut arena = Arena::new();
    let mut other = Arena::new();
    let class = other.register::<u32>().unwrap();
    assert!(arena.decommit_empty_slabs(class).is_err());
    assert_eq!(arena.decommitted_slabs(class), 0);
}
