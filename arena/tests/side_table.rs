//! `SideTable` against a `HashMap<(index, generation), V>` model (slotmap's
//! `qc_secondarymap_equiv_hashmap` is the pattern), over an arena with tiny slabs and a low
//! generation ceiling, so that slots are reused and retired often; and its memory: pages
//! only where handles fall.

use std::collections::HashMap;

use proptest::prelude::*;
use respawn_arena::{Arena, ArenaConfig, Handle, SideTable, SlabConfig};

#[derive(Debug, Clone)]
enum Op {
    /// A new object (a permanent one: its handle lies in another block of the table).
    Spawn {
        permanent: bool,
    },
    /// An object ends: its slot moves on to the next generation.
    Destroy {
        pick: usize,
    },
    Insert {
        pick: usize,
        value: u32,
    },
    TryInsert {
        pick: usize,
        value: u32,
    },
    Remove {
        pick: usize,
    },
    GetMut {
        pick: usize,
        value: u32,
    },
    Retain {
        modulus: u32,
    },
    Prune,
    Clear,
    Shrink,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::bool::weighted(0.05).prop_map(|permanent| Op::Spawn { permanent }),
        3 => any::<usize>().prop_map(|pick| Op::Destroy { pick }),
        6 => (any::<usize>(), any::<u32>()).prop_map(|(pick, value)| Op::Insert { pick, value }),
        2 => (any::<usize>(), any::<u32>()).prop_map(|(pick, value)| Op::TryInsert { pick, value }),
        2 => any::<usize>().prop_map(|pick| Op::Remove { pick }),
        2 => (any::<usize>(), any::<u32>()).prop_map(|(pick, value)| Op::GetMut { pick, value }),
        1 => (1..5u32).prop_map(|modulus| Op::Retain { modulus }),
        1 => Just(Op::Prune),
        1 => prop::bool::weighted(0.1).prop_map(|_| Op::Clear),
        1 => Just(Op::Shrink),
    ]
}

/// The model: at most one entry per slot index, keyed with the generation it was written for.
#[derive(Default)]
struct Model {
    entries: HashMap<(u32, u32), u32>,
}

impl Model {
    fn key(h: Handle<u64>) -> (u32, u32) {
        (h.index(), h.generation().get())
    }

    /// The generation of the entry at `h`'s slot index, if any.
    fn at(&self, index: u32) -> Option<u32> {
        self.entries.keys().find(|(i, _)| *i == index).map(|&(_, g)| g)
    }

    /// slotmap's `SecondaryMap::insert`, told apart by the generation: `Err` for an older handle.
    fn insert(&mut self, h: Handle<u64>, value: u32) -> Result<Option<u32>, u32> {
        let (index, generation) = Self::key(h);
        match self.at(index) {
            Some(g) if g == generation => Ok(self.entries.insert((index, g), value)),
            Some(g) if g > generation => Err(value),
            Some(g) => {
                self.entries.remove(&(index, g));
                self.entries.insert((index, generation), value);
                Ok(None)
            }
            None => {
                self.entries.insert((index, generation), value);
                Ok(None)
            }
        }
    }
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let slab = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 1024, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab, max_generation: 4, ..ArenaConfig::DEFAULT });
    let mut table: SideTable<u64, u32> = SideTable::new();
    let mut model = Model::default();
    // Every handle ever issued (live or stale), and the live ones.
    let mut issued: Vec<Handle<u64>> = Vec::new();
    let mut live: Vec<Handle<u64>> = Vec::new();

    for op in ops {
        match op {
            Op::Spawn { permanent } => {
                let h = if permanent {
                    arena.insert_permanent(issued.len() as u64).map_err(|r| r.error).expect("room")
                } else {
                    arena.insert(issued.len() as u64)
                };
                issued.push(h);
                if !permanent {
                    live.push(h);
                }
            }
            Op::Destroy { pick } => {
                if !live.is_empty() {
                    let h = live.swap_remove(pick % live.len());
                    prop_assert!(arena.remove(h).is_some());
                }
            }
            Op::Insert { pick, value } => {
                if let Some(&h) = issued.get(pick % issued.len().max(1)) {
                    let expected = model.insert(h, value).unwrap_or(None);
                    prop_assert_eq!(table.insert(h, value), expected, "insert {:?}", h);
                }
            }
            Op::TryInsert { pick, value } => {
                if let Some(&h) = issued.get(pick % issued.len().max(1)) {
                    prop_assert_eq!(table.try_insert(h, value), model.insert(h, value), "try_insert {:?}", h);
                }
            }
            Op::Remove { pick } => {
                if let Some(&h) = issued.get(pick % issued.len().max(1)) {
                    prop_assert_eq!(table.remove(h), model.entries.remove(&Model::key(h)));
                }
            }
            Op::GetMut { pick, value } => {
                if let Some(&h) = issued.get(pick % issued.len().max(1)) {
                    let got = table.get_mut(h).map(|v| std::mem::replace(v, value));
                    let expected = model.entries.get_mut(&Model::key(h)).map(|v| std::mem::replace(v, value));
                    prop_assert_eq!(got, expected);
                }
            }
            Op::Retain { modulus } => {
                table.retain(|h, v| {
                    *v = v.wrapping_add(h.index());
                    *v % modulus != 0
                });
                model.entries.retain(|&(index, _), v| {
                    *v = v.wrapping_add(index);
                    *v % modulus != 0
                });
            }
            Op::Prune => {
                let before = model.entries.len();
                model.entries.retain(|&(index, generation), _| {
                    issued.iter().any(|h| Model::key(*h) == (index, generation) && arena.contains(*h))
                });
                prop_assert_eq!(table.prune(&arena), before - model.entries.len());
            }
            Op::Clear => {
                table.clear();
                model.entries.clear();
            }
            Op::Shrink => table.shrink_to_fit(),
        }

        // The whole table, after every step.
        prop_assert_eq!(table.len(), model.entries.len());
        for &h in &issued {
            prop_assert_eq!(table.get(h), model.entries.get(&Model::key(h)), "get {:?}", h);
            prop_assert_eq!(table.contains(h), model.entries.contains_key(&Model::key(h)));
        }
        let listed: Vec<((u32, u32), u32)> = table.iter().map(|(h, v)| (Model::key(h), *v)).collect();
        let mut expected: Vec<((u32, u32), u32)> = model.entries.iter().map(|(k, v)| (*k, *v)).collect();
        expected.sort();
        prop_assert_eq!(&listed, &expected, "iter: every entry once, in index order");
        prop_assert_eq!(table.iter().len(), table.len());
        prop_assert_eq!(table.iter_mut().count(), table.len());
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    #[test]
    fn side_table_matches_a_hashmap_model(ops in respawn_testkit::proptest::program(op())) {
        run(ops)?;
    }
}

#[test]
fn a_stale_handle_never_reads_the_value_of_the_object_that_reused_its_slot() {
    let mut arena = Arena::new();
    let mut table = SideTable::new();
    let old = arena.insert(1u32);
    table.insert(old, "old");
    arena.remove(old);
    let new = arena.insert(2u32);
    assert_eq!(new.index(), old.index(), "the warmest cell is reused");

    assert_eq!(table.get(new), None, "the new object has no entry yet");
    assert_eq!(table.get(old), Some(&"old"), "the old handle still names its own entry");
    assert_eq!(table.insert(new, "new"), None);
    assert_eq!(table.get(old), None, "replaced by the newer generation");
    assert_eq!(table.remove(old), None);
    assert_eq!(table.try_insert(old, "again"), Err("again"), "an older handle is refused");
    assert_eq!(table.insert(old, "again"), None);
    assert_eq!((table.get(new), table.len()), (Some(&"new"), 1));
}

#[test]
fn a_few_objects_of_a_class_far_into_the_table_take_one_page() {
    let mut arena = Arena::new();
    // Two classes of 4 Mi cells each come first: the third class's range starts at 8 Mi.
    arena.register::<[u64; 1]>().unwrap();
    arena.register::<[u64; 2]>().unwrap();
    let handles: Vec<Handle<u32>> = (0..3).map(|i| arena.insert(i)).collect();
    assert!(handles[0].index() >= 8 << 20, "{:?}", handles[0]);

    let mut table = SideTable::new();
    for &h in &handles {
        table.insert(h, [0u64; 4]);
    }
    // One page of 256 entries of 40 bytes, a one-entry directory, one block.
    let bytes = table.heap_bytes();
    assert!(bytes < 12 << 10, "{bytes} bytes for three entries");
    assert_eq!(table.len(), 3);

    // A permanent object lies in another block: one more page, not a directory spanning
    // the blocks between.
    let permanent = arena.insert_permanent(9u32).map_err(|r| r.error).unwrap();
    table.insert(permanent, [1; 4]);
    assert!(table.heap_bytes() < 2 * bytes + 64, "{} bytes", table.heap_bytes());
    assert_eq!(table.iter().count(), 4);

    table.clear();
    assert!(table.is_empty() && table.heap_bytes() > 0, "clear keeps the pages");
    table.shrink_to_fit();
    assert_eq!(table.heap_bytes(), 0, "shrink_to_fit frees empty pages and blocks");
}

#[test]
fn prune_drops_the_entries_of_ended_and_hidden_objects() {
    let mut arena = Arena::new();
    let handles: Vec<Handle<u32>> = (0..10).map(|i| arena.insert(i)).collect();
    let mut table: SideTable<u32, u32> = handles.iter().map(|&h| (h, h.index())).collect();
    arena.remove(handles[3]);
    arena.destroy(handles[4].raw()).unwrap();
    arena.set_lifecycle(handles[5].raw(), respawn_arena::Lifecycle::Garbage).unwrap();
    assert_eq!(table.prune(&arena), 3);
    assert_eq!(table.len(), 7);
    assert!(table.iter().all(|(h, _)| arena.contains(h)));
    assert_eq!(table[handles[0]], handles[0].index());
}

#[test]
fn side_tables_are_send_and_sync_whatever_the_class() {
    fn assert_send_sync<X: Send + Sync>() {}
    // `*const u8` is neither: the class is only a type tag.
    assert_send_sync::<SideTable<*const u8, u32>>();
}
