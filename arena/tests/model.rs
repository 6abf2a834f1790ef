//! Random operation programs against a `HashMap` model (slotmap's `qc_slotmap_equiv_hashmap`
//! is the pattern). Over two classes, with tiny slabs and a low generation ceiling so that
//! slot reuse and retirement happen often, it checks after every step that:
//! - every live handle resolves to exactly the model's value, and stale ones never resolve;
//! - no handle value is ever issued twice;
//! - `len`, `tick` and `iter` agree with the model;
//! - decommitting the empty slabs (`Trim`, after a spike and a mass removal) leaves every
//!   object and handle as it was, the decommitted slabs serve again, and the committed
//!   memory is the carved slabs less the decommitted ones;
//! - every object is dropped exactly once by the end.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use respawn_arena::{Arena, ArenaConfig, Handle, SlabConfig};

#[derive(Debug)]
struct Big {
    value: u64,
    _pad: [u64; 5],
    drops: Arc<AtomicUsize>,
}
impl Drop for Big {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Debug, Clone)]
enum Op {
    Insert {
        big: bool,
        value: u64,
    },
    Remove {
        big: bool,
        pick: usize,
    },
    Destroy {
        big: bool,
        pick: usize,
    },
    GetMut {
        big: bool,
        pick: usize,
        value: u64,
    },
    Tick {
        big: bool,
    },
    Stale {
        pick: usize,
    },
    /// A spike of `n` small objects, then all small objects but the first `keep` removed.
    Spike {
        n: usize,
        keep: usize,
    },
    Trim,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<bool>(), any::<u64>()).prop_map(|(big, value)| Op::Insert { big, value }),
        2 => (any::<bool>(), any::<usize>()).prop_map(|(big, pick)| Op::Remove { big, pick }),
        1 => (any::<bool>(), any::<usize>()).prop_map(|(big, pick)| Op::Destroy { big, pick }),
        1 => (any::<bool>(), any::<usize>(), any::<u64>()).prop_map(|(big, pick, value)| Op::GetMut { big, pick, value }),
        1 => any::<bool>().prop_map(|big| Op::Tick { big }),
        1 => any::<usize>().prop_map(|pick| Op::Stale { pick }),
        1 => (0..100usize, 0..20usize).prop_map(|(n, keep)| Op::Spike { n, keep }),
        1 => Just(Op::Trim),
    ]
}

#[derive(Default)]
struct Model {
    big: HashMap<Handle<Big>, u64>,
    small: HashMap<Handle<u32>, u32>,
    stale_big: Vec<Handle<Big>>,
    stale_small: Vec<Handle<u32>>,
    issued: HashSet<u64>,
}

fn pick<K: Copy + Ord, V>(map: &HashMap<K, V>, pick: usize) -> Option<K> {
    let mut keys: Vec<K> = map.keys().copied().collect();
    keys.sort();
    (!keys.is_empty()).then(|| keys[pick % keys.len()])
}

fn run(ops: Vec<Op>, trims: &mut usize) -> Result<(), TestCaseError> {
    let drops = Arc::new(AtomicUsize::new(0));
    let slab = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 1024, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab, max_generation: 4, ..ArenaConfig::DEFAULT });
    let mut m = Model::default();
    let mut inserted_big = 0usize;

    for op in ops {
        match op {
            Op::Insert { big: true, value } => {
                let h = arena.insert(Big { value, _pad: [0; 5], drops: Arc::clone(&drops) });
                prop_assert!(m.issued.insert(h.to_bits()), "handle {h:?} issued twice");
                m.big.insert(h, value);
                inserted_big += 1;
            }
            Op::Insert { big: false, value } => {
                let h = arena.insert(value as u32);
                prop_assert!(m.issued.insert(h.to_bits()), "handle {h:?} issued twice");
                m.small.insert(h, value as u32);
            }
            Op::Remove { big: true, pick: p } => {
                if let Some(h) = pick(&m.big, p) {
                    let got = arena.remove(h).map(|b| b.value);
                    prop_assert_eq!(got, m.big.remove(&h));
                    m.stale_big.push(h);
                }
            }
            Op::Remove { big: false, pick: p } => {
                if let Some(h) = pick(&m.small, p) {
                    prop_assert_eq!(arena.remove(h), m.small.remove(&h));
                    m.stale_small.push(h);
                }
            }
            Op::Destroy { big: true, pick: p } => {
                if let Some(h) = pick(&m.big, p) {
                    prop_assert!(arena.destroy(h.raw()).is_ok());
                    m.big.remove(&h);
                    m.stale_big.push(h);
                }
            }
            Op::Destroy { big: false, pick: p } => {
                if let Some(h) = pick(&m.small, p) {
                    prop_assert!(arena.destroy(h.raw()).is_ok());
                    m.small.remove(&h);
                    m.stale_small.push(h);
                }
            }
            Op::GetMut { big: true, pick: p, value } => {
                if let Some(h) = pick(&m.big, p) {
                    arena.get_mut(h).expect("live handle resolves").value = value;
                    m.big.insert(h, value);
                }
            }
            Op::GetMut { big: false, pick: p, value } => {
                if let Some(h) = pick(&m.small, p) {
                    *arena.get_mut(h).expect("live handle resolves") = value as u32;
                    m.small.insert(h, value as u32);
                }
            }
            Op::Tick { big: true } => {
                arena.tick::<Big>(|b| b.value = b.value.wrapping_add(1));
                m.big.values_mut().for_each(|v| *v = v.wrapping_add(1));
            }
            Op::Tick { big: false } => {
                arena.tick::<u32>(|v| *v = v.wrapping_mul(3));
                m.small.values_mut().for_each(|v| *v = v.wrapping_mul(3));
            }
            Op::Spike { n, keep } => {
                for i in 0..n {
                    let h = arena.insert(i as u32);
                    prop_assert!(m.issued.insert(h.to_bits()), "handle {h:?} issued twice");
                    m.small.insert(h, i as u32);
                }
                let mut all: Vec<Handle<u32>> = m.small.keys().copied().collect();
                all.sort();
                for h in all.into_iter().skip(keep) {
                    prop_assert!(arena.destroy(h.raw()).is_ok());
                    m.small.remove(&h);
                    m.stale_small.push(h);
                }
            }
            Op::Trim => {
                for class in [arena.class_of::<Big>(), arena.class_of::<u32>()].into_iter().flatten() {
                    let trimmed = arena.decommit_empty_slabs(class).unwrap();
                    *trims += trimmed;
                    prop_assert_eq!(arena.decommit_empty_slabs(class).unwrap(), 0, "a second trim finds nothing");
                    let layout = arena.layout(class).unwrap();
                    let memory = arena.allocator().stats(class).unwrap();
                    prop_assert_eq!(
                        memory.committed_bytes,
                        (memory.carved_slabs - memory.decommitted_slabs) as usize * memory.slab_bytes
                    );
                    prop_assert!(layout.slabs.len() <= (memory.carved_slabs - memory.decommitted_slabs) as usize);
                    prop_assert_eq!(memory.decommitted_slabs as usize, arena.decommitted_slabs(class));
                }
            }
            Op::Stale { pick: p } => {
                if !m.stale_big.is_empty() {
                    let h = m.stale_big[p % m.stale_big.len()];
                    prop_assert!(arena.remove(h).is_none(), "stale {h:?} removed something");
                }
                if !m.stale_small.is_empty() {
                    let h = m.stale_small[p % m.stale_small.len()];
                    prop_assert!(arena.destroy(h.raw()).is_err(), "stale {h:?} destroyed something");
                }
            }
        }

        // The whole state, after every step.
        prop_assert_eq!(arena.len::<Big>(), m.big.len());
        prop_assert_eq!(arena.len::<u32>(), m.small.len());
        for (h, v) in &m.big {
            prop_assert_eq!(arena.get(*h).map(|b| b.value), Some(*v));
        }
        for (h, v) in &m.small {
            prop_assert_eq!(arena.get(*h), Some(v));
        }
        for h in &m.stale_big {
            prop_assert!(arena.get(*h).is_none(), "stale {h:?} resolved");
        }
        for h in &m.stale_small {
            prop_assert!(arena.get(*h).is_none(), "stale {h:?} resolved");
        }
        let listed: HashMap<Handle<u32>, u32> = arena.iter::<u32>().map(|(h, v)| (h, *v)).collect();
        prop_assert_eq!(&listed, &m.small);
        let mut ticked = 0;
        arena.tick::<Big>(|_| ticked += 1);
        prop_assert_eq!(ticked, m.big.len());
    }

    let removed_or_destroyed = inserted_big - m.big.len();
    prop_assert_eq!(drops.load(Ordering::SeqCst), removed_or_destroyed);
    drop(arena);
    prop_assert_eq!(drops.load(Ordering::SeqCst), inserted_big, "every object dropped exactly once");
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    #[test]
    fn arena_matches_a_hashmap_model(ops in respawn_testkit::proptest::program(op())) {
        run(ops, &mut 0)?;
    }
}

/// The `Trim` steps do give slabs back (a model that never decommitted would test
/// nothing): a fixed program of spikes and trims.
#[test]
fn the_model_decommits_and_reuses_slabs() {
    let mut trims = 0;
    let ops =
        [Op::Spike { n: 90, keep: 3 }, Op::Trim, Op::Spike { n: 90, keep: 0 }, Op::Trim, Op::Spike { n: 40, keep: 40 }];
    run(ops.to_vec(), &mut trims).unwrap();
    assert!(trims >= 8, "{trims} slabs decommitted");
}
