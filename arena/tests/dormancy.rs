//! Tick control in the arena: dormant objects and the budgeted round-robin tick.
//!
//! Two random-program tests against trivially correct models:
//! - `tick_visits_exactly_the_awake_objects`: inserts, removes, destroys, dormancy toggles,
//!   hides (garbage) and reveals, with tiny slabs so cells are reused often; after each
//!   `tick`/`par_tick` the visited set is exactly the model's live, visible, awake set, and
//!   `is_dormant`, the dormant count and `iter` agree with the model at every step;
//! - `round_robin_covers_each_object_once_a_cycle`: the same changes between budgeted ticks;
//!   within a cycle no object is ticked twice, and every object alive and awake for the
//!   whole cycle is ticked in it.

use std::collections::{HashMap, HashSet};
use std::sync::Mutex;

use proptest::prelude::*;
use respawn_arena::{Arena, ArenaConfig, ArenaError, Handle, Lifecycle, SlabConfig, TickCursor};

/// An object that knows its own name, so a tick can say whom it visited.
#[derive(Debug)]
struct Obj {
    id: u64,
    ticks: u32,
}

fn tiny_arena() -> Arena {
    let slab = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 1024, huge_pages: false };
    Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT })
}

#[derive(Debug, Clone)]
enum Op {
    Insert,
    Remove(usize),
    Destroy(usize),
    Dormant(usize, bool),
    Hide(usize),
    Reveal(usize),
    Tick,
    ParTick,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => Just(Op::Insert),
        2 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::Destroy),
        4 => (any::<usize>(), any::<bool>()).prop_map(|(p, d)| Op::Dormant(p, d)),
        1 => any::<usize>().prop_map(Op::Hide),
        1 => any::<usize>().prop_map(Op::Reveal),
        1 => Just(Op::Tick),
        1 => Just(Op::ParTick),
    ]
}

/// What the model knows of a live object.
#[derive(Clone, Copy, Debug)]
struct Entry {
    id: u64,
    dormant: bool,
    hidden: bool,
}

#[derive(Default)]
struct Model {
    live: HashMap<Handle<Obj>, Entry>,
    gone: Vec<Handle<Obj>>,
    next_id: u64,
}

impl Model {
    fn pick(&self, pick: usize) -> Option<Handle<Obj>> {
        let mut keys: Vec<_> = self.live.keys().copied().collect();
        keys.sort();
        (!keys.is_empty()).then(|| keys[pick % keys.len()])
    }

    fn awake(&self) -> Vec<u64> {
        let mut ids: Vec<u64> = self.live.values().filter(|e| !e.dormant && !e.hidden).map(|e| e.id).collect();
        ids.sort_unstable();
        ids
    }
}

/// Applies one change that is not a tick to both the arena and the model, checking the
/// arena's answers.
fn change(arena: &mut Arena, m: &mut Model, op: &Op) -> Result<(), TestCaseError> {
    match *op {
        Op::Insert => {
            let id = m.next_id;
            m.next_id += 1;
            let h = arena.insert(Obj { id, ticks: 0 });
            prop_assert!(!arena.is_dormant(h.raw()), "a new object starts awake, whatever its cell held");
            m.live.insert(h, Entry { id, dormant: false, hidden: false });
        }
        Op::Remove(p) | Op::Destroy(p) => {
            let Some(h) = m.pick(p) else { return Ok(()) };
            let e = m.live[&h];
            if matches!(op, Op::Remove(_)) {
                // A hidden object does not resolve for `remove`; `destroy` takes it.
                let removed = arena.remove(h);
                prop_assert_eq!(removed.map(|o| o.id), (!e.hidden).then_some(e.id));
                if e.hidden {
                    return Ok(());
                }
            } else {
                arena.destroy(h.raw()).unwrap();
            }
            m.live.remove(&h);
            m.gone.push(h);
        }
        Op::Dormant(p, dormant) => {
            if p % 5 == 0 {
                // A stale handle: refused, and nothing changes.
                if let Some(&h) = m.gone.get(p % m.gone.len().max(1)) {
                    prop_assert!(matches!(arena.set_dormant(h.raw(), dormant), Err(ArenaError::Stale)));
                    prop_assert!(!arena.is_dormant(h.raw()));
                }
                return Ok(());
            }
            let Some(h) = m.pick(p) else { return Ok(()) };
            let e = m.live.get_mut(&h).unwrap();
            let result = arena.set_dormant(h.raw(), dormant);
            if e.hidden {
                prop_assert!(matches!(result, Err(ArenaError::Hidden(_))), "{result:?}");
            } else {
                prop_assert!(result.is_ok(), "{result:?}");
                e.dormant = dormant;
            }
        }
        Op::Hide(p) | Op::Reveal(p) => {
            let Some(h) = m.pick(p) else { return Ok(()) };
            let hide = matches!(op, Op::Hide(_));
            if hide {
                arena.set_lifecycle(h.raw(), Lifecycle::Garbage).unwrap();
            } else {
                arena.set_lifecycle(h.raw(), Lifecycle::Live).unwrap();
            }
            m.live.get_mut(&h).unwrap().hidden = hide;
        }
        Op::Tick | Op::ParTick => unreachable!("ticks are the callers'"),
    }
    Ok(())
}

/// Checks what the arena says of every object against the model.
fn check(arena: &Arena, m: &Model) -> Result<(), TestCaseError> {
    for (&h, e) in &m.live {
        prop_assert_eq!(arena.is_dormant(h.raw()), e.dormant && !e.hidden, "{:?}", h);
    }
    let dormant = m.live.values().filter(|e| e.dormant).count();
    prop_assert_eq!(arena.stats::<Obj>().map_or(0, |s| s.dormant), dormant, "dormant count, hidden ones included");
    let visible = m.live.values().filter(|e| !e.hidden).count();
    prop_assert_eq!(arena.iter::<Obj>().count(), visible, "iter sees dormant objects");
    Ok(())
}

fn run_tick_model(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut arena = tiny_arena();
    let mut m = Model::default();
    for op in &ops {
        match op {
            // Miri runs rayon in a pass of its own (scripts/miri.sh); here the plain tick.
            Op::ParTick if !cfg!(miri) => {
                let seen = Mutex::new(Vec::new());
                arena.par_tick::<Obj>(|o| seen.lock().unwrap().push(o.id));
                let mut seen = seen.into_inner().unwrap();
                seen.sort_unstable();
                prop_assert_eq!(seen, m.awake());
            }
            Op::Tick | Op::ParTick => {
                let mut seen = Vec::new();
                arena.tick::<Obj>(|o| {
                    o.ticks += 1;
                    seen.push(o.id);
                });
                seen.sort_unstable();
                prop_assert_eq!(seen, m.awake());
            }
            op => change(&mut arena, &mut m, op)?,
        }
        check(&arena, &m)?;
    }
    Ok(())
}

fn run_round_robin_model(ops: Vec<Op>, budget: usize) -> Result<(), TestCaseError> {
    let mut arena = tiny_arena();
    let mut m = Model::default();
    let mut cursor = TickCursor::new();
    // This cycle's ticks, and the objects alive and awake since it began.
    let mut ticked: HashSet<u64> = HashSet::new();
    let mut steady: HashSet<u64> = HashSet::new();
    for op in &ops {
        match op {
            Op::Tick | Op::ParTick => {
                let cycles = cursor.cycles();
                let mut seen = Vec::new();
                let n = arena.tick_budgeted::<Obj>(&mut cursor, budget, |o| seen.push(o.id));
                prop_assert_eq!(n, seen.len());
                prop_assert!(n <= budget);
                let awake: HashSet<u64> = m.awake().into_iter().collect();
                for id in seen {
                    prop_assert!(awake.contains(&id), "ticked {id}, which is not alive and awake");
                    prop_assert!(ticked.insert(id), "ticked {id} twice in one cycle");
                }
                match cursor.cycles() - cycles {
                    0 => prop_assert_eq!(n, budget, "a call that ends no cycle spends its budget"),
                    1 => {
                        let missed: Vec<_> = steady.difference(&ticked).collect();
                        prop_assert!(missed.is_empty(), "alive and awake all cycle, never ticked: {missed:?}");
                        ticked.clear();
                        steady = awake;
                    }
                    more => prop_assert!(false, "{more} cycles in one call"),
                }
            }
            op => {
                change(&mut arena, &mut m, op)?;
                // Whoever left the awake set during the cycle is owed nothing in it.
                let awake: HashSet<u64> = m.awake().into_iter().collect();
                steady.retain(|id| awake.contains(id));
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    #[test]
    fn tick_visits_exactly_the_awake_objects(ops in respawn_testkit::proptest::program(op())) {
        run_tick_model(ops)?;
    }

    #[test]
    fn round_robin_covers_each_object_once_a_cycle(
        ops in respawn_testkit::proptest::program(op()),
        budget in 1usize..12,
    ) {
        run_round_robin_model(ops, budget)?;
    }
}

#[test]
fn a_static_class_takes_ceil_awake_over_budget_calls_a_cycle() {
    let (lives, budgets): (&[usize], &[usize]) =
        if cfg!(miri) { (&[0, 7, 33, 70], &[1, 16, 200]) } else { (&[0, 1, 7, 16, 33, 64, 100], &[1, 3, 16, 64, 200]) };
    for &live in lives {
        for &budget in budgets {
            let mut arena = tiny_arena();
            let handles: Vec<_> = (0..live as u64).map(|id| arena.insert(Obj { id, ticks: 0 })).collect();
            // Every third object asleep: the budget counts awake objects only.
            for h in handles.iter().step_by(3) {
                arena.set_dormant(h.raw(), true).unwrap();
            }
            let awake = live - live.div_ceil(3);
            let mut cursor = TickCursor::new();
            for cycle in 0..3 {
                let mut calls = 0;
                while cursor.cycles() == cycle {
                    arena.tick_budgeted::<Obj>(&mut cursor, budget, |o| o.ticks += 1);
                    calls += 1;
                }
                assert_eq!(calls, awake.div_ceil(budget).max(1), "{live} live, budget {budget}");
            }
            for (i, h) in handles.iter().enumerate() {
                let expected = if i % 3 == 0 { 0 } else { 3 };
                assert_eq!(arena.get(*h).unwrap().ticks, expected, "each awake object once a cycle");
            }
        }
    }
}

#[test]
fn a_reused_cell_starts_awake() {
    let mut arena = tiny_arena();
    let a = arena.insert(Obj { id: 0, ticks: 0 });
    let keep = arena.insert(Obj { id: 1, ticks: 0 });
    arena.set_dormant(a.raw(), true).unwrap();
    arena.set_dormant(keep.raw(), true).unwrap();
    arena.remove(a).unwrap();
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 1, "the removed object's dormancy ended with it");
    let b = arena.insert(Obj { id: 2, ticks: 0 });
    assert_eq!(b.index(), a.index(), "the vacant list is LIFO: the same cell");
    assert!(!arena.is_dormant(b.raw()));
    assert!(!arena.is_dormant(a.raw()), "a stale handle is never dormant");
    let mut seen = Vec::new();
    arena.tick::<Obj>(|o| seen.push(o.id));
    assert_eq!(seen, [2]);

    // Destroyed (the collector's way) rather than removed: the same.
    arena.set_dormant(b.raw(), true).unwrap();
    arena.destroy(b.raw()).unwrap();
    let c = arena.insert(Obj { id: 3, ticks: 0 });
    assert_eq!(c.index(), b.index());
    assert!(!arena.is_dormant(c.raw()));
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 1);
}

#[test]
fn dormancy_survives_being_hidden_and_revealed() {
    let mut arena = tiny_arena();
    let h = arena.insert(Obj { id: 0, ticks: 0 });
    arena.set_dormant(h.raw(), true).unwrap();
    arena.set_lifecycle(h.raw(), Lifecycle::Garbage).unwrap();
    assert!(matches!(arena.set_dormant(h.raw(), false), Err(ArenaError::Hidden(_))));
    arena.set_lifecycle(h.raw(), Lifecycle::Live).unwrap();
    assert!(arena.is_dormant(h.raw()), "revived garbage is as dormant as it was");
    let mut visits = 0;
    arena.tick::<Obj>(|_| visits += 1);
    assert_eq!(visits, 0);
}

#[test]
fn bad_handles_get_clear_errors() {
    let mut arena = tiny_arena();
    let h = arena.insert(Obj { id: 0, ticks: 0 });
    arena.remove(h).unwrap();
    assert!(matches!(arena.set_dormant(h.raw(), true), Err(ArenaError::Stale)));
    let permanent = arena.insert_permanent(Obj { id: 1, ticks: 0 }).unwrap();
    assert!(matches!(arena.set_dormant(permanent.raw(), true), Err(ArenaError::Permanent)));
    assert!(!arena.is_dormant(permanent.raw()));
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 0);
    // Setting what is set already changes nothing (counted once).
    let h = arena.insert(Obj { id: 2, ticks: 0 });
    arena.set_dormant(h.raw(), true).unwrap();
    arena.set_dormant(h.raw(), true).unwrap();
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 1);
    arena.set_dormant(h.raw(), false).unwrap();
    arena.set_dormant(h.raw(), false).unwrap();
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 0);
}

#[test]
fn a_budget_of_zero_ticks_nothing_and_an_unknown_class_ends_a_cycle() {
    let mut arena = tiny_arena();
    arena.insert(Obj { id: 0, ticks: 0 });
    let mut cursor = TickCursor::new();
    assert_eq!(arena.tick_budgeted::<Obj>(&mut cursor, 0, |_| panic!("budget 0")), 0);
    assert_eq!(cursor, TickCursor::new());
    assert_eq!(arena.tick_budgeted::<u8>(&mut cursor, 4, |_| unreachable!()), 0);
    assert_eq!(cursor.cycles(), 1, "no object: the walk reached the end");
}

#[test]
fn dormant_objects_cost_the_tick_no_visit_in_a_full_or_empty_word() {
    // 1024 objects (16 full words at 64 a slab word): every other word asleep.
    let slab = SlabConfig { cells_per_slab: 256, spare_slabs: 1, max_slabs: 64, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT });
    let handles: Vec<_> = (0..1024u64).map(|id| arena.insert(Obj { id, ticks: 0 })).collect();
    for (i, h) in handles.iter().enumerate() {
        if (i / 64) % 2 == 1 {
            arena.set_dormant(h.raw(), true).unwrap();
        }
    }
    // Memory order is the slabs' order in the class's reservation, which need not be the
    // order the arena was granted them in (the allocator prepares them in the background):
    // the addresses rise, and the ids are the awake ones.
    let mut seen = Vec::new();
    arena.tick::<Obj>(|o| seen.push(((o as *const Obj).addr(), o.id)));
    assert!(seen.windows(2).all(|w| w[0].0 < w[1].0), "in memory order");
    let mut seen: Vec<u64> = seen.into_iter().map(|(_, id)| id).collect();
    seen.sort_unstable();
    let expected: Vec<u64> = (0..1024).filter(|i| (i / 64) % 2 == 0).collect();
    assert_eq!(seen, expected, "the awake objects, each once");
    assert_eq!(arena.stats::<Obj>().unwrap().dormant, 512);
    if cfg!(miri) {
        return; // rayon runs in a Miri pass of its own (scripts/miri.sh)
    }
    // par_tick's chunks (a slab, 4 words, each) take their own dormancy words.
    let seen = Mutex::new(Vec::new());
    arena.par_tick::<Obj>(|o| seen.lock().unwrap().push(o.id));
    let mut seen = seen.into_inner().unwrap();
    seen.sort_unstable();
    assert_eq!(seen, expected);
}
