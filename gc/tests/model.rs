//! Model test: random object graphs under random changes, collected again and again, checked
//! against a plain breadth-first search over a model of the graph. Before each collection,
//! `Heap::why_alive` is asked about every object: it finds a chain exactly for the objects
//! the collection keeps, each chain as short as the model's BFS distance, starting at a
//! root the model has and following only edges the model has.

use std::collections::HashMap;
use std::time::Duration;

use proptest::prelude::*;
use respawn_arena::{ArenaConfig, ArenaError, Handle, RawHandle, Root, SlabConfig};
use respawn_gc::{CollectOptions, GcError, GcSettings, Heap, Reference, RootKind};
use respawn_testkit::drops::Drops;
use respawn_testkit::gc::Node;
use respawn_testkit::graph;

#[derive(Clone, Debug)]
enum Op {
    /// A new object with edges to these (indices into the objects made so far).
    Add(Vec<usize>),
    Edge(usize, usize),
    Unedge(usize),
    /// Toggle the manual root.
    ManualRoot(usize),
    /// Take a `Root` guard, or drop the newest one.
    Guard(usize),
    Unguard,
    Garbage(usize),
    Outer(usize, usize),
    Unouter(usize),
    /// Collect: parallel? purge in small steps?
    Collect {
        parallel: bool,
        steps: bool,
    },
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0..64usize;
    prop_oneof![
        4 => prop::collection::vec(0..64usize, 0..4).prop_map(Op::Add),
        4 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Edge(a, b)),
        1 => i.clone().prop_map(Op::Unedge),
        2 => i.clone().prop_map(Op::ManualRoot),
        1 => i.clone().prop_map(Op::Guard),
        1 => Just(Op::Unguard),
        1 => i.clone().prop_map(Op::Garbage),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Outer(a, b)),
        1 => i.prop_map(Op::Unouter),
        2 => (any::<bool>(), any::<bool>()).prop_map(|(parallel, steps)| Op::Collect { parallel, steps }),
    ]
}

/// One object of the model.
#[derive(Debug)]
struct Model {
    handle: Handle<Node>,
    alive: bool,
    edges: Vec<usize>,
    manual_root: bool,
    guards: usize,
    garbage: bool,
    outer: Option<usize>,
}

impl Model {
    fn rooted(&self) -> bool {
        self.manual_root || self.guards > 0
    }
}

/// Live objects at or below `i` in the outer tree (the model's sub-object walk).
fn subtree(model: &[Model], i: usize) -> Vec<usize> {
    graph::subtree(i, |p| (0..model.len()).filter(move |&c| model[c].alive && model[c].outer == Some(p)))
}

/// The reference answer: BFS from the roots over edges and outer links, never through
/// garbage.
fn reachable(model: &[Model]) -> Vec<bool> {
    distances(model).iter().map(Option::is_some).collect()
}

/// Each object's distance from a root in the model's BFS (`None`: unreachable). A rooted
/// garbage object is kept, but keeps nothing.
fn distances(model: &[Model]) -> Vec<Option<usize>> {
    let dist = graph::distances(
        (0..model.len()).filter(|&i| model[i].alive && model[i].rooted()),
        |i| model[i].alive && !model[i].garbage,
        |i| model[i].edges.iter().copied().chain(model[i].outer),
    );
    (0..model.len()).map(|i| dist.get(&i).copied()).collect()
}

/// Asks `why_alive` about every object of the model and checks each answer against it.
fn check_chains(heap: &mut Heap, model: &[Model]) -> Result<(), TestCaseError> {
    let dist = distances(model);
    let id: HashMap<RawHandle, usize> =
        (0..model.len()).filter(|&i| model[i].alive).map(|i| (model[i].handle.raw(), i)).collect();
    for (i, m) in model.iter().enumerate() {
        let result = heap.why_alive(m.handle);
        if !m.alive {
            prop_assert!(matches!(result, Err(GcError::Arena(ArenaError::Stale))), "{:?}", result);
            continue;
        }
        if m.garbage {
            prop_assert!(matches!(result, Err(GcError::Arena(ArenaError::Hidden(_)))), "{:?}", result);
            continue;
        }
        let chain = result.unwrap();
        prop_assert_eq!(chain.is_some(), dist[i].is_some(), "object {}: {:?}", i, chain);
        let Some(chain) = chain else { continue };
        prop_assert_eq!(Some(chain.len()), dist[i], "object {}: a shortest chain: {}", i, chain);
        let ids: Vec<usize> = chain.links.iter().map(|l| id[&l.object.handle]).collect();
        prop_assert_eq!(ids.last(), Some(&i));
        let first = &model[ids[0]];
        match chain.root {
            RootKind::AddToRoot => prop_assert!(first.manual_root),
            RootKind::Guard(n) => prop_assert!(!first.manual_root && first.guards == n as usize),
            other => prop_assert!(false, "the model has no {:?} roots", other),
        }
        for (pair, link) in ids.windows(2).zip(&chain.links[1..]) {
            let (from, to) = (&model[pair[0]], &model[pair[1]]);
            prop_assert!(to.alive && !to.garbage && !from.garbage);
            match link.reference {
                Reference::Traced => prop_assert!(from.edges.contains(&pair[1]), "{}", chain),
                Reference::Outer => prop_assert_eq!(from.outer, Some(pair[1]), "{}", chain),
                other => prop_assert!(false, "the model has no {:?} edges: {}", other, chain),
            }
        }
    }
    Ok(())
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let config = ArenaConfig {
        slab: SlabConfig { cells_per_slab: 16, ..SlabConfig::SMALL },
        max_generation: 3,
        ..ArenaConfig::DEFAULT
    };
    // Three threads of the heap's own, joined when it drops (so Miri needs no leak pass).
    let settings =
        GcSettings { parallel: false, min_objects_per_task: 2, threads: Some(3), ..GcSettings::SINGLE_THREADED };
    let mut heap = Heap::with_config(config, settings).unwrap();
    let drops = Drops::default();
    let mut model: Vec<Model> = Vec::new();
    let mut guards: Vec<(usize, Root<Node>)> = Vec::new();
    let pick = |model: &[Model], i: usize| (!model.is_empty()).then(|| i % model.len());

    for op in ops {
        match op {
            Op::Add(edges) => {
                let id = model.len();
                let mut node = Node::new(id, &drops);
                let targets: Vec<usize> =
                    if model.is_empty() { vec![] } else { edges.iter().map(|e| e % id).collect() };
                node.edges = targets.iter().map(|&t| model[t].handle).collect();
                let handle = heap.insert(node);
                model.push(Model {
                    handle,
                    alive: true,
                    edges: targets,
                    manual_root: false,
                    guards: 0,
                    garbage: false,
                    outer: None,
                });
            }
            Op::Edge(a, b) => {
                let (Some(a), Some(b)) = (pick(&model, a), pick(&model, b)) else { continue };
                let target = model[b].handle;
                match heap.get_mut(model[a].handle) {
                    Some(node) => {
                        node.edges.push(target);
                        model[a].edges.push(b);
                    }
                    None => prop_assert!(!model[a].alive || model[a].garbage),
                }
            }
            Op::Unedge(a) => {
                let Some(a) = pick(&model, a) else { continue };
                if let Some(node) = heap.get_mut(model[a].handle) {
                    if node.edges.pop().is_some() {
                        model[a].edges.pop();
                    }
                }
            }
            Op::ManualRoot(a) => {
                let Some(a) = pick(&model, a) else { continue };
                let raw = model[a].handle.raw();
                if model[a].manual_root {
                    heap.remove_from_root(raw).unwrap();
                    model[a].manual_root = false;
                } else {
                    let visible = model[a].alive && !model[a].garbage;
                    prop_assert_eq!(heap.add_to_root(raw).is_ok(), visible);
                    model[a].manual_root = visible;
                }
            }
            Op::Guard(a) => {
                let Some(a) = pick(&model, a) else { continue };
                let visible = model[a].alive && !model[a].garbage;
                match heap.root(model[a].handle) {
                    Ok(guard) => {
                        prop_assert!(visible);
                        guards.push((a, guard));
                        model[a].guards += 1;
                    }
                    Err(_) => prop_assert!(!visible),
                }
            }
            Op::Unguard => {
                if let Some((a, guard)) = guards.pop() {
                    drop(guard);
                    model[a].guards -= 1;
                }
            }
            Op::Garbage(a) => {
                let Some(a) = pick(&model, a) else { continue };
                let result = heap.mark_as_garbage(model[a].handle.raw());
                if !model[a].alive {
                    prop_assert!(matches!(result, Err(GcError::Arena(ArenaError::Stale))), "{:?}", result);
                } else if model[a].garbage {
                    prop_assert!(matches!(result, Err(GcError::Arena(ArenaError::Hidden(_)))), "{:?}", result);
                } else {
                    let tree = subtree(&model, a);
                    if tree.iter().any(|&i| model[i].rooted()) {
                        prop_assert!(matches!(result, Err(GcError::Arena(ArenaError::Rooted))), "{:?}", result);
                    } else {
                        // Sub-objects marked as garbage already are not counted again.
                        let fresh = tree.iter().filter(|&&i| !model[i].garbage).count();
                        prop_assert_eq!(result.unwrap(), fresh);
                        for i in tree {
                            model[i].garbage = true;
                        }
                    }
                }
            }
            Op::Outer(c, p) => {
                let (Some(c), Some(p)) = (pick(&model, c), pick(&model, p)) else { continue };
                let result = heap.set_outer(model[c].handle.raw(), Some(model[p].handle.raw()));
                let visible = |i: usize| model[i].alive && !model[i].garbage;
                if !visible(c) || !visible(p) {
                    prop_assert!(result.is_err());
                } else if subtree(&model, c).contains(&p) {
                    prop_assert!(matches!(result, Err(ArenaError::OuterCycle)), "{:?}", result);
                } else {
                    result.unwrap();
                    model[c].outer = Some(p);
                }
            }
            Op::Unouter(c) => {
                let Some(c) = pick(&model, c) else { continue };
                if heap.set_outer(model[c].handle.raw(), None).is_ok() {
                    model[c].outer = None;
                } else {
                    prop_assert!(!model[c].alive);
                }
            }
            Op::Collect { parallel, steps } => {
                let expected = reachable(&model);
                check_chains(&mut heap, &model)?;
                let settings = GcSettings { parallel, ..*heap.settings() };
                heap.set_settings(settings).unwrap();
                let options = if steps { CollectOptions::INCREMENTAL } else { CollectOptions::FULL };
                let stats = heap.collect_garbage(options);
                let newly_dead: Vec<usize> = (0..model.len()).filter(|&i| model[i].alive && !expected[i]).collect();
                prop_assert_eq!(stats.unreachable, newly_dead.len());
                if steps {
                    let mut tick = 0u64;
                    while !heap
                        .purge_timed(Duration::from_nanos(3), || {
                            tick += 1;
                            Duration::from_nanos(tick)
                        })
                        .is_done()
                    {}
                }
                prop_assert_eq!(heap.gc_stats().purged, newly_dead.len());
                for i in newly_dead {
                    model[i].alive = false;
                    for m in model.iter_mut() {
                        if m.outer == Some(i) {
                            m.outer = None; // a released owner cuts its sub-objects loose
                        }
                    }
                }
                for (i, m) in model.iter().enumerate() {
                    let resolves = heap.get(m.handle).is_some();
                    prop_assert_eq!(resolves, m.alive && !m.garbage, "object {} after collection", i);
                    prop_assert_eq!(drops.times(i), u32::from(!m.alive), "object {} drop count", i);
                    if m.alive {
                        let outer = heap.table().slot(m.handle.index()).unwrap().outer();
                        prop_assert_eq!(outer, m.outer.map(|o| model[o].handle.index()));
                    }
                }
            }
        }
    }
    drop(guards);
    drop(heap);
    for i in 0..model.len() {
        prop_assert_eq!(drops.times(i), 1, "object {} dropped exactly once by shutdown", i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

    #[test]
    fn collections_match_a_bfs_over_the_model(ops in respawn_testkit::proptest::program(op())) {
        run(ops)?;
    }
}
