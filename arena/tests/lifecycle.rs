//! The lifecycle field against a trivially correct model: random programs of inserts,
//! removes, destroys and lifecycle moves (every state asked of every object, allowed or
//! not), with tiny slabs so cells are reused often. After each step every handle the model
//! knows reads the model's state, resolves exactly when the model says `Live`, and a
//! refused move changed nothing; `tick`, `iter` and `len` agree with the model; and the
//! handles of ended objects stay stale.

use std::collections::HashMap;

use proptest::prelude::*;
use respawn_arena::{Arena, ArenaConfig, ArenaError, Handle, Lifecycle, SlabConfig};

#[derive(Debug)]
struct Obj(u64);

const STATES: [Lifecycle; 8] = [
    Lifecycle::Live,
    Lifecycle::Garbage,
    Lifecycle::Unreachable,
    Lifecycle::Destroying,
    Lifecycle::Vacant,
    Lifecycle::InPool,
    Lifecycle::Lent,
    Lifecycle::Retired,
];

/// The moves the lifecycle has, written out independently of `Lifecycle::may_become`.
fn allowed(from: Lifecycle, to: Lifecycle) -> bool {
    use Lifecycle::*;
    from == to
        || matches!(
            (from, to),
            (Live, Garbage)
                | (Garbage, Live)
                | (Live, Unreachable)
                | (Garbage, Unreachable)
                | (Unreachable, Live)
                | (Live, Destroying)
                | (Garbage, Destroying)
                | (Unreachable, Destroying)
        )
}

#[derive(Debug, Clone)]
enum Op {
    Insert,
    Remove(usize),
    Destroy(usize),
    Move(usize, usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => Just(Op::Insert),
        1 => any::<usize>().prop_map(Op::Remove),
        1 => any::<usize>().prop_map(Op::Destroy),
        6 => (any::<usize>(), 0..STATES.len()).prop_map(|(p, s)| Op::Move(p, s)),
    ]
}

fn run(ops: &[Op]) -> Result<(), TestCaseError> {
    let slab = SlabConfig { cells_per_slab: 16, spare_slabs: 1, max_slabs: 1024, huge_pages: false };
    let mut arena = Arena::with_config(ArenaConfig { slab, ..ArenaConfig::DEFAULT });
    let mut model: HashMap<Handle<Obj>, (u64, Lifecycle)> = HashMap::new();
    let mut ended: Vec<Handle<Obj>> = Vec::new();
    let mut next = 0;
    let pick = |model: &HashMap<Handle<Obj>, (u64, Lifecycle)>, p: usize| {
        let mut keys: Vec<_> = model.keys().copied().collect();
        keys.sort_by_key(|h| h.index());
        (!keys.is_empty()).then(|| keys[p % keys.len()])
    };
    for op in ops {
        match *op {
            Op::Insert => {
                let h = arena.insert(Obj(next));
                model.insert(h, (next, Lifecycle::Live));
                next += 1;
            }
            Op::Remove(p) => {
                let Some(h) = pick(&model, p) else { continue };
                let state = model[&h].1;
                match arena.try_remove(h) {
                    Ok(obj) => {
                        prop_assert_eq!(state, Lifecycle::Live);
                        prop_assert_eq!(obj.0, model[&h].0);
                        model.remove(&h);
                        ended.push(h);
                    }
                    Err(e) => prop_assert!(state != Lifecycle::Live && matches!(e, ArenaError::Hidden(_)), "{e:?}"),
                }
            }
            Op::Destroy(p) => {
                let Some(h) = pick(&model, p) else { continue };
                // Type-erased code ends any occupied object, hidden ones too.
                arena.destroy(h.raw()).unwrap();
                model.remove(&h);
                ended.push(h);
            }
            Op::Move(p, s) => {
                let Some(h) = pick(&model, p) else { continue };
                let (from, to) = (model[&h].1, STATES[s]);
                match arena.set_lifecycle(h.raw(), to) {
                    Ok(before) => {
                        prop_assert!(allowed(from, to), "{from:?} -> {to:?} was taken");
                        prop_assert_eq!(before, from);
                        model.get_mut(&h).unwrap().1 = to;
                    }
                    Err(ArenaError::Transition { from: f, to: t }) => {
                        prop_assert!(!allowed(from, to), "{from:?} -> {to:?} was refused");
                        prop_assert_eq!((f, t), (from, to));
                    }
                    Err(e) => prop_assert!(false, "{e:?}"),
                }
            }
        }
        for (&h, &(id, state)) in &model {
            prop_assert_eq!(arena.lifecycle(h.raw()).unwrap(), state);
            prop_assert_eq!(arena.get(h).map(|o| o.0), (state == Lifecycle::Live).then_some(id));
        }
        for &h in &ended {
            prop_assert!(matches!(arena.lifecycle(h.raw()), Err(ArenaError::Stale)));
        }
        let mut ticked = Vec::new();
        arena.tick::<Obj>(|o| ticked.push(o.0));
        ticked.sort_unstable();
        let mut live: Vec<u64> = model.values().filter(|(_, s)| *s == Lifecycle::Live).map(|(id, _)| *id).collect();
        live.sort_unstable();
        prop_assert_eq!(&ticked, &live, "tick visits exactly the Live objects");
        prop_assert_eq!(arena.iter::<Obj>().count(), live.len());
        prop_assert_eq!(arena.len::<Obj>(), model.len(), "len counts hidden objects too");
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    #[test]
    fn the_lifecycle_moves_only_as_its_table_says(ops in respawn_testkit::proptest::program(op())) {
        run(&ops)?;
    }
}
