//! The collector's diagnostics: why an object is alive (a shortest reference chain from a
//! root, for each kind of root and of reference) and the references still naming garbage.

use std::sync::{Arc, Mutex};

use respawn_arena::{ArenaConfig, ArenaError, Handle, ObjectFlags, RawHandle, SlabConfig};
use respawn_gc::{
    CollectOptions, GarbageReference, GcError, GcSettings, Heap, Object, ObjectRef, Reference, ReferenceChain,
    Referrer, RootKind, Trace,
};
use respawn_testkit::drops::Drops;
use respawn_testkit::gc::Node;

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, max_generation: u32::MAX, ..ArenaConfig::DEFAULT };

/// The object's index among its class's slots, as the chains print it (`Node#3`).
fn n(heap: &Heap, raw: RawHandle) -> u32 {
    heap.arena().index_in_class(raw.index()).expect("an object of the heap")
}

fn heap() -> Heap {
    Heap::with_config(SMALL, GcSettings::SINGLE_THREADED).unwrap()
}

fn node(heap: &mut Heap, drops: &Drops, id: usize) -> Handle<Node> {
    heap.insert(Node::new(id, drops))
}

fn link(heap: &mut Heap, from: Handle<Node>, to: Handle<Node>) {
    heap.get_mut(from).unwrap().edges.push(to);
}

fn chain(heap: &mut Heap, h: Handle<Node>) -> ReferenceChain {
    heap.why_alive(h).unwrap().unwrap_or_else(|| panic!("{h:?} should be alive"))
}

/// The chain's objects and how each is reached.
fn steps(chain: &ReferenceChain) -> Vec<(RawHandle, Reference)> {
    chain.links.iter().map(|l| (l.object.handle, l.reference)).collect()
}

/// Every slot's flags and root count, to show a diagnostic leaves them alone.
fn snapshot(heap: &Heap) -> Vec<(u16, u32, u32)> {
    let mut out = Vec::new();
    for (_, run) in heap.table().runs() {
        out.extend(run.iter().map(|s| (s.flags().bits(), s.root_count(), s.generation())));
    }
    out
}

#[test]
fn add_to_root_and_traced_fields() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    link(&mut heap, b, c);
    heap.add_to_root(a.raw()).unwrap();

    let root = chain(&mut heap, a);
    assert_eq!((root.root, root.len(), root.is_empty()), (RootKind::AddToRoot, 0, true));
    assert_eq!(steps(&root), [(a.raw(), Reference::Root)]);

    let deep = chain(&mut heap, c);
    assert_eq!(deep.root, RootKind::AddToRoot);
    assert_eq!(steps(&deep), [(a.raw(), Reference::Root), (b.raw(), Reference::Traced), (c.raw(), Reference::Traced)]);
    assert_eq!((deep.root_object().handle, deep.target().handle, deep.len()), (a.raw(), c.raw(), 2));
    assert!(deep.links.iter().all(|l| l.object.class == std::any::type_name::<Node>()));
    let (ia, ib, ic) = (n(&heap, a.raw()), n(&heap, b.raw()), n(&heap, c.raw()));
    assert_eq!(deep.to_string(), format!("root (add_to_root) Node#{ia} -> [traced] Node#{ib} -> [traced] Node#{ic}"));
}

#[test]
fn root_guards_are_counted() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b] = [0, 1].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    let first = heap.root(a).unwrap();
    assert_eq!(chain(&mut heap, b).root, RootKind::Guard(1));
    assert_eq!(
        chain(&mut heap, b).to_string(),
        format!("root (Root guard) Node#{} -> [traced] Node#{}", n(&heap, a.raw()), n(&heap, b.raw()))
    );
    let second = first.clone();
    assert_eq!(chain(&mut heap, b).root, RootKind::Guard(2));
    // add_to_root is named first when both hold it.
    heap.add_to_root(a.raw()).unwrap();
    assert_eq!(chain(&mut heap, a).root, RootKind::AddToRoot);
    heap.remove_from_root(a.raw()).unwrap();
    drop((first, second));
    assert_eq!(heap.why_alive(b).unwrap(), None);
}

#[test]
fn referencers_are_roots_numbered_among_the_live_ones() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, b, c);
    let calls = Arc::new(Mutex::new(0));
    let count = Arc::clone(&calls);
    let gone = heap.add_referencer(move |t| t.handle(a.raw()));
    let kept = heap.add_referencer(move |t| {
        *count.lock().unwrap() += 1;
        t.handle(b.raw());
    });
    assert_eq!(chain(&mut heap, c).root, RootKind::Referencer(1));
    assert_eq!(*calls.lock().unwrap(), 1, "each report runs once a search");
    drop(gone);
    let via = chain(&mut heap, c);
    assert_eq!(via.root, RootKind::Referencer(0), "numbered among the referencers still registered");
    assert_eq!(steps(&via), [(b.raw(), Reference::Root), (c.raw(), Reference::Traced)]);
    assert_eq!(
        via.to_string(),
        format!("root (referencer #0) Node#{} -> [traced] Node#{}", n(&heap, b.raw()), n(&heap, c.raw()))
    );
    assert_eq!(heap.why_alive(a).unwrap(), None, "its referencer was dropped");
    drop(kept);
}

#[test]
fn a_reachable_sub_object_keeps_its_outer() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [owner, child, grandchild] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(child.raw(), Some(owner.raw())).unwrap();
    heap.set_outer(grandchild.raw(), Some(child.raw())).unwrap();
    let _root = heap.root(grandchild).unwrap();
    let up = chain(&mut heap, owner);
    assert_eq!(
        steps(&up),
        [(grandchild.raw(), Reference::Root), (child.raw(), Reference::Outer), (owner.raw(), Reference::Outer)]
    );
    assert!(up.to_string().contains(&format!("-> [outer] Node#{}", n(&heap, owner.raw()))));

    // The reverse does not hold: an owner keeps no sub-object.
    let [top, sub] = [3, 4].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(sub.raw(), Some(top.raw())).unwrap();
    heap.add_to_root(top.raw()).unwrap();
    assert_eq!(heap.why_alive(sub).unwrap(), None);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.purged, 1, "and the collector agrees");
    assert!(heap.get(sub).is_none());
}

#[test]
fn a_cluster_keeps_its_members() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [body, wheel, door, loose] = [0, 1, 2, 3].map(|i| node(&mut heap, &drops, i));
    heap.create_cluster(body.raw(), &[wheel.raw(), door.raw()]).unwrap();
    let _root = heap.root(door).unwrap();
    let via = chain(&mut heap, wheel);
    assert_eq!(steps(&via), [(door.raw(), Reference::Root), (wheel.raw(), Reference::Cluster)]);
    assert_eq!(
        via.to_string(),
        format!("root (Root guard) Node#{} -> [cluster] Node#{}", n(&heap, door.raw()), n(&heap, wheel.raw()))
    );
    assert_eq!(heap.why_alive(loose).unwrap(), None);

    // A garbage cluster root dissolves its cluster at the next mark: the members are then
    // judged one by one, and the search says so already.
    let [root2, member2, member3] = [4, 5, 6].map(|i| node(&mut heap, &drops, i));
    heap.create_cluster(root2.raw(), &[member2.raw(), member3.raw()]).unwrap();
    let _member_root = heap.root(member2).unwrap();
    assert_eq!(
        steps(&chain(&mut heap, member3)),
        [(member2.raw(), Reference::Root), (member3.raw(), Reference::Cluster)]
    );
    heap.mark_as_garbage(root2.raw()).unwrap();
    assert_eq!(heap.why_alive(member3).unwrap(), None, "the cluster goes with its root");
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(member2).is_some(), "rooted");
    assert!(heap.get(root2).is_none() && heap.get(member3).is_none());
}

#[test]
fn permanent_objects_are_roots_that_keep_nothing() {
    let (mut heap, drops) = (heap(), Drops::default());
    let held = node(&mut heap, &drops, 0);
    let mut config = Node::new(1, &drops);
    config.edges.push(held);
    let config = heap.insert_permanent(config).map_err(|r| r.error).unwrap();
    let own = chain(&mut heap, config);
    assert_eq!((own.root, own.len()), (RootKind::Permanent, 0));
    assert_eq!(own.to_string(), format!("root (permanent) Node#{}", n(&heap, config.raw())));
    assert_eq!(heap.why_alive(held).unwrap(), None, "a permanent object is never scanned");
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(held).is_none());
}

#[test]
fn keep_flags_count_as_roots_when_asked() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b] = [0, 1].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    let keep = ObjectFlags::STANDALONE;
    // SAFETY: the arena is not replaced, only a flag set.
    unsafe { heap.arena_mut() }.set_flags(a.raw(), keep).unwrap();
    assert_eq!(heap.why_alive(b).unwrap(), None, "no keep flags by default");
    let via = heap.why_alive_with(b, keep).unwrap().unwrap();
    assert_eq!(via.root, RootKind::KeepFlags(keep));
    assert_eq!(steps(&via), [(a.raw(), Reference::Root), (b.raw(), Reference::Traced)]);
    let kept = CollectOptions { keep_flags: keep, ..CollectOptions::FULL };
    heap.collect_garbage(kept);
    assert!(heap.get(b).is_some(), "the collection with those keep flags agrees");
}

#[test]
fn the_shortest_of_two_chains_is_chosen() {
    let (mut heap, drops) = (heap(), Drops::default());
    // root1 -> x -> y -> target, and root2 -> z -> target; root1 comes first in the table
    // and its chain is found first in depth, but the shorter one wins.
    let [root1, x, y, target, root2, z] = [0, 1, 2, 3, 4, 5].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, root1, x);
    link(&mut heap, x, y);
    link(&mut heap, y, target);
    link(&mut heap, root2, z);
    link(&mut heap, z, target);
    heap.add_to_root(root1.raw()).unwrap();
    let _guard = heap.root(root2).unwrap();
    let best = chain(&mut heap, target);
    assert_eq!(best.root, RootKind::Guard(1));
    assert_eq!(
        steps(&best),
        [(root2.raw(), Reference::Root), (z.raw(), Reference::Traced), (target.raw(), Reference::Traced)]
    );
    // A shortcut from the first root takes over.
    link(&mut heap, root1, target);
    assert_eq!(steps(&chain(&mut heap, target)), [(root1.raw(), Reference::Root), (target.raw(), Reference::Traced)]);
}

#[test]
fn unreachable_objects_have_no_chain_and_garbage_breaks_chains() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c, d, e] = [0, 1, 2, 3, 4].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    link(&mut heap, b, c);
    link(&mut heap, d, e);
    link(&mut heap, e, d); // an unrooted cycle
    heap.add_to_root(a.raw()).unwrap();
    assert_eq!(heap.why_alive(d).unwrap(), None);
    assert_eq!(heap.why_alive(e).unwrap(), None);
    heap.mark_as_garbage(b.raw()).unwrap();
    assert_eq!(heap.why_alive(c).unwrap(), None, "garbage keeps nothing alive");
    assert!(matches!(heap.why_alive(b), Err(GcError::Arena(ArenaError::Hidden(_)))), "garbage is hidden");
}

#[test]
fn stale_handles_are_refused() {
    let (mut heap, drops) = (heap(), Drops::default());
    let a = node(&mut heap, &drops, 0);
    heap.collect_garbage(CollectOptions::FULL);
    assert!(matches!(heap.why_alive(a), Err(GcError::Arena(ArenaError::Stale))));
    // And a handle to the object now in its slot resolves as usual.
    let b = node(&mut heap, &drops, 1);
    assert!(matches!(heap.why_alive(a), Err(GcError::Arena(ArenaError::Stale))));
    assert_eq!(heap.why_alive(b).unwrap(), None);
}

#[test]
fn the_search_writes_no_flag_and_changes_no_collection() {
    let (mut heap, drops) = (heap(), Drops::default());
    let nodes: Vec<_> = (0..40).map(|i| node(&mut heap, &drops, i)).collect();
    for i in 0..40 {
        link(&mut heap, nodes[i], nodes[(i * 7 + 3) % 40]);
    }
    heap.add_to_root(nodes[0].raw()).unwrap();
    heap.create_cluster(nodes[5].raw(), &[nodes[6].raw()]).unwrap();
    heap.mark_as_garbage(nodes[9].raw()).unwrap();
    let before = snapshot(&heap);
    let alive: Vec<bool> = nodes.iter().map(|&h| heap.why_alive(h).map(|c| c.is_some()).unwrap_or(false)).collect();
    let _ = heap.find_garbage_references();
    assert_eq!(snapshot(&heap), before, "no flag, root count or generation changed");
    heap.collect_garbage(CollectOptions::FULL);
    for (i, &h) in nodes.iter().enumerate() {
        assert_eq!(heap.get(h).is_some(), alive[i], "node {i}");
    }
}

/// `(holder, garbage)` of each reference, sorted; a referencer holds as `None`.
fn garbage_edges(found: &[GarbageReference]) -> Vec<(Option<RawHandle>, RawHandle)> {
    let mut edges: Vec<_> = found
        .iter()
        .map(|g| {
            let from = match g.from {
                Referrer::Object(o) => Some(o.handle),
                Referrer::Referencer(_) => None,
            };
            (from, g.to.handle)
        })
        .collect();
    edges.sort();
    edges
}

#[test]
fn garbage_references_list_exactly_the_edges_into_garbage() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [squad, other, tank, spare, stray] = [0, 1, 2, 3, 4].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, squad, tank);
    link(&mut heap, squad, spare);
    link(&mut heap, other, tank);
    link(&mut heap, stray, tank); // unreachable itself: its reference keeps nothing, and is not listed
    heap.add_to_root(squad.raw()).unwrap();
    heap.add_to_root(other.raw()).unwrap();
    let _net = heap.add_referencer(move |t| t.handle(tank.raw()));
    assert!(heap.find_garbage_references().is_empty(), "nothing is garbage yet");

    heap.mark_as_garbage(tank.raw()).unwrap();
    let found = heap.find_garbage_references();
    let mut by_hand = vec![(None, tank.raw()), (Some(squad.raw()), tank.raw()), (Some(other.raw()), tank.raw())];
    by_hand.sort();
    assert_eq!(garbage_edges(&found), by_hand);
    let by_squad = found.iter().find(|g| matches!(g.from, Referrer::Object(o) if o.handle == squad.raw())).unwrap();
    let tank_name =
        ObjectRef { handle: tank.raw(), class: std::any::type_name::<Node>(), index_in_class: n(&heap, tank.raw()) };
    assert_eq!(by_squad.to, tank_name);
    assert_eq!(by_squad.to.to_string(), format!("Node#{}", n(&heap, tank.raw())));
    assert_eq!(
        by_squad.to_string(),
        format!("Node#{} -> [traced] Node#{} (garbage)", n(&heap, squad.raw()), n(&heap, tank.raw()))
    );
    let by_net = found.iter().find(|g| matches!(g.from, Referrer::Referencer(0))).unwrap();
    assert_eq!(by_net.to_string(), format!("referencer #0 -> Node#{} (garbage)", n(&heap, tank.raw())));

    // Off (the default), a collection records nothing.
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    assert!(heap.garbage_references().is_empty());
    // Pending its purge, the garbage is still there to be found.
    assert_eq!(heap.find_garbage_references().len(), 3);
    heap.purge(None);
    assert!(heap.find_garbage_references().is_empty(), "purged: the handles are stale now");
}

#[test]
fn a_tracking_collection_records_the_edges_into_garbage_before_its_purge() {
    let (mut heap, drops) = (heap(), Drops::default());
    heap.set_settings(GcSettings { track_garbage_references: true, ..*heap.settings() }).unwrap();
    let [squad, tank, turret] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, squad, tank);
    heap.set_outer(turret.raw(), Some(tank.raw())).unwrap();
    link(&mut heap, squad, turret);
    heap.add_to_root(squad.raw()).unwrap();
    let _net = heap.add_referencer(move |t| t.handle(turret.raw()));
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.garbage_references().is_empty(), "no garbage, no garbage references");

    heap.mark_as_garbage(tank.raw()).unwrap(); // the tank and its turret
    let expected = garbage_edges(&heap.find_garbage_references());
    let mut by_hand = vec![(None, turret.raw()), (Some(squad.raw()), tank.raw()), (Some(squad.raw()), turret.raw())];
    by_hand.sort();
    assert_eq!(expected, by_hand);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.purged, 2, "the tank and its turret, referenced or not");
    assert_eq!(garbage_edges(heap.garbage_references()), expected, "the collection saw what the search saw");
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.garbage_references().is_empty(), "the next collection replaces the record");
}

/// A class that holds a handle of another class, for class names in chains.
#[derive(Trace, Object)]
struct Hangar {
    planes: Vec<Handle<Plane>>,
}

#[derive(Trace, Object)]
struct Plane {
    fuel: u32,
}

#[test]
fn chains_name_each_objects_class() {
    let mut heap = heap();
    let plane = heap.insert(Plane { fuel: 9 });
    let hangar = heap.insert(Hangar { planes: vec![plane] });
    heap.add_to_root(hangar.raw()).unwrap();
    let via = heap.why_alive(plane).unwrap().unwrap();
    assert_eq!(via.links[0].object.class, std::any::type_name::<Hangar>());
    assert_eq!(via.links[1].object.class, std::any::type_name::<Plane>());
    assert_eq!(
        via.to_string(),
        format!("root (add_to_root) Hangar#{} -> [traced] Plane#{}", n(&heap, hangar.raw()), n(&heap, plane.raw()))
    );
    assert_eq!(heap.get(plane).map(|p| p.fuel), Some(9));
}

mod random_graphs {
    //! Random graphs with every kind of root and link (guards, `add_to_root`, referencers,
    //! permanent objects, traced edges, outers, clusters, garbage): `why_alive` finds a chain
    //! exactly for the objects the next collection keeps, and every chain starts at a root of
    //! the kind it names and follows only edges the heap has.

    use std::collections::HashSet;

    use proptest::prelude::*;

    use super::*;

    #[derive(Clone, Debug)]
    struct Graph {
        nodes: usize,
        edges: Vec<(usize, usize)>,
        outers: Vec<(usize, usize)>,
        clusters: Vec<Vec<usize>>,
        manual: Vec<usize>,
        guarded: Vec<usize>,
        reported: Vec<usize>,
        permanent: Vec<usize>,
        garbage: Vec<usize>,
        parallel: bool,
    }

    fn graph() -> impl Strategy<Value = Graph> {
        (2..40usize).prop_flat_map(|n| {
            let i = 0..n;
            let few = |k: usize| prop::collection::vec(0..n, 0..k);
            (
                prop::collection::vec((i.clone(), i.clone()), 0..n * 2),
                prop::collection::vec((i.clone(), i), 0..n / 2 + 1),
                prop::collection::vec(few(5), 0..4),
                (few(4), few(3), few(3), few(3), few(6)),
                any::<bool>(),
            )
                .prop_map(
                    move |(edges, outers, clusters, (manual, guarded, reported, permanent, garbage), parallel)| Graph {
                        nodes: n,
                        edges,
                        outers,
                        clusters,
                        manual,
                        guarded,
                        reported,
                        permanent,
                        garbage,
                        parallel,
                    },
                )
        })
    }

    fn check(g: Graph) -> Result<(), TestCaseError> {
        let settings = GcSettings { parallel: g.parallel, min_objects_per_task: 1, ..GcSettings::SINGLE_THREADED };
        let mut heap = Heap::with_config(SMALL, settings).unwrap();
        let drops = Drops::default();
        let permanent: HashSet<usize> = g.permanent.iter().copied().collect();
        // Permanent nodes first (their edges must name nodes that exist: earlier ones).
        let mut handles: Vec<Handle<Node>> = Vec::with_capacity(g.nodes);
        for i in 0..g.nodes {
            let mut value = Node::new(i, &drops);
            value.edges.extend(g.edges.iter().filter(|&&(a, b)| a == i && b < i).map(|&(_, b)| handles[b]));
            let h = if permanent.contains(&i) {
                heap.insert_permanent(value).map_err(|r| r.error).unwrap()
            } else {
                heap.insert(value)
            };
            handles.push(h);
        }
        for &(a, b) in g.edges.iter().filter(|&&(a, b)| b >= a) {
            if let Some(node) = heap.get_mut(handles[a]) {
                node.edges.push(handles[b]);
            }
        }
        for &(c, p) in &g.outers {
            let _ = heap.set_outer(handles[c].raw(), Some(handles[p].raw())); // cycles refused
        }
        for members in g.clusters.iter().filter(|m| !m.is_empty()) {
            let raws: Vec<RawHandle> = members[1..].iter().map(|&m| handles[m].raw()).collect();
            let _ = heap.create_cluster(handles[members[0]].raw(), &raws); // overlaps refused
        }
        for &i in &g.manual {
            let _ = heap.add_to_root(handles[i].raw());
        }
        let guards: Vec<_> = g.guarded.iter().map(|&i| heap.root(handles[i]).unwrap()).collect();
        for &i in &g.garbage {
            let _ = heap.mark_as_garbage(handles[i].raw()); // rooted or permanent subtrees refused
        }
        let reported: Vec<RawHandle> = g.reported.iter().map(|&i| handles[i].raw()).collect();
        let report = reported.clone();
        let _referencer = heap.add_referencer(move |t| report.iter().for_each(|&h| t.handle(h)));

        let mut answers = Vec::with_capacity(g.nodes);
        for (i, &h) in handles.iter().enumerate() {
            let visible = heap.get(h).is_some();
            let answer = heap.why_alive(h);
            prop_assert_eq!(answer.is_ok(), visible, "node {}: {:?}", i, answer);
            let Ok(answer) = answer else {
                answers.push(false);
                continue;
            };
            if let Some(chain) = &answer {
                prop_assert_eq!(chain.target().handle, h.raw());
                let first = chain.root_object().handle;
                let slot = heap.table().slot(first.index()).unwrap();
                match chain.root {
                    RootKind::AddToRoot => prop_assert!(slot.flags().contains(ObjectFlags::ROOT_SET)),
                    RootKind::Guard(n) => prop_assert_eq!(slot.root_count(), n),
                    RootKind::Referencer(0) => prop_assert!(reported.contains(&first)),
                    RootKind::Permanent => prop_assert!(slot.flags().contains(ObjectFlags::PERMANENT)),
                    other => prop_assert!(false, "no such root here: {:?}", other),
                }
                for pair in chain.links.windows(2) {
                    let (from, to) = (pair[0].object.handle, pair[1].object.handle);
                    let node = heap.get(Handle::<Node>::from_raw(from)).unwrap();
                    match pair[1].reference {
                        Reference::Traced => prop_assert!(node.edges.iter().any(|e| e.raw() == to), "{}", chain),
                        Reference::Outer => {
                            prop_assert_eq!(heap.table().slot(from.index()).unwrap().outer(), Some(to.index()))
                        }
                        Reference::Cluster => {
                            prop_assert!(heap.cluster_of(from).is_some(), "{}", chain);
                            prop_assert_eq!(heap.cluster_of(from), heap.cluster_of(to), "{}", chain);
                        }
                        other => prop_assert!(false, "no such link: {:?}", other),
                    }
                }
            }
            answers.push(answer.is_some());
        }
        heap.collect_garbage(CollectOptions::FULL);
        for (i, &h) in handles.iter().enumerate() {
            prop_assert_eq!(heap.get(h).is_some(), answers[i], "node {} survives iff it had a chain", i);
        }
        drop(guards);
        Ok(())
    }

    proptest! {
        #![proptest_config(respawn_testkit::proptest::scaled(256, 4))]

        #[test]
        fn a_chain_exists_exactly_for_what_the_collection_keeps(g in graph()) {
            check(g)?;
        }
    }
}
