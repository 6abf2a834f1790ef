//! Class lifetimes: a heap's classes are collected unless told otherwise; an owned class's
//! objects survive every collection — whole, parallel or incremental — until they are marked
//! as garbage or destroyed, and keep (and trace) what they hold; `why_alive` names them.

use respawn_arena::{ArenaConfig, Handle, SlabConfig};
use respawn_gc::{CollectOptions, GcSettings, Heap, Lifetime, MarkStep, Object, RootKind, Trace};
use respawn_testkit::drops::Drops;
use respawn_testkit::gc::Node;

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, max_generation: u32::MAX, ..ArenaConfig::DEFAULT };

/// An owned class: holds nodes, which are collected.
#[derive(Trace, Object)]
struct Actor {
    holds: Vec<Handle<Node>>,
}

fn heap(settings: GcSettings) -> Heap {
    let mut heap = Heap::with_config(SMALL, settings).unwrap();
    heap.set_lifetime::<Actor>(Lifetime::Owned).unwrap();
    heap
}

#[test]
fn a_heap_collects_every_class_unless_told_otherwise() {
    let mut heap = Heap::new();
    assert_eq!(heap.default_lifetime(), Lifetime::Collected);
    assert_eq!(heap.lifetime::<Actor>(), Lifetime::Collected, "not registered: the default it would get");
    let actor = heap.insert(Actor { holds: Vec::new() });
    heap.collect_garbage(CollectOptions::FULL);
    assert!(!heap.contains(actor));

    // The default applies to classes registered after it is set; one set already keeps its own.
    heap.set_default_lifetime(Lifetime::Owned);
    assert_eq!(heap.lifetime::<Actor>(), Lifetime::Collected);
    let drops = Drops::default();
    let node = heap.insert(Node::new(0, &drops));
    assert_eq!(heap.lifetime::<Node>(), Lifetime::Owned);
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.contains(node));
}

#[test]
fn owned_objects_survive_and_keep_what_they_hold_until_marked_as_garbage() {
    for settings in [GcSettings::SINGLE_THREADED, GcSettings { min_objects_per_task: 1, ..GcSettings::DEFAULT }] {
        let drops = Drops::default();
        let mut heap = heap(settings);
        // Enough objects for several slabs, so the parallel mark splits them.
        let held: Vec<_> = (0..600).map(|i| heap.insert(Node::new(i, &drops))).collect();
        let loose: Vec<_> = (600..900).map(|i| heap.insert(Node::new(i, &drops))).collect();
        // A held node's own edge is traced too.
        let deep = heap.insert(Node::new(900, &drops));
        heap.get_mut(held[0]).unwrap().edges.push(deep);
        let actors: Vec<_> =
            held.chunks(100).map(|c| heap.insert(Actor { holds: c.to_vec() })).collect::<Vec<Handle<Actor>>>();

        let stats = heap.collect_garbage(CollectOptions::FULL);
        assert_eq!(stats.purged, loose.len(), "{settings:?}");
        assert!(actors.iter().all(|&a| heap.contains(a)), "owned: kept with nothing referencing them");
        assert!(held.iter().all(|&n| heap.contains(n)) && heap.contains(deep), "what they hold is kept");
        assert!(loose.iter().all(|&n| !heap.contains(n)));

        // Marked as garbage: purged with the next collection, and what it alone held with it.
        assert_eq!(heap.mark_as_garbage(actors[0].raw()).unwrap(), 1);
        let stats = heap.collect_garbage(CollectOptions::FULL);
        assert_eq!(stats.purged, 1 + 100 + 1, "{settings:?}: the actor, its nodes, the deep one");
        assert!(!heap.contains(actors[0]) && !heap.contains(held[0]) && !heap.contains(deep));
        assert!(actors[1..].iter().all(|&a| heap.contains(a)));

        // Destroyed now: gone at once.
        heap.destroy_now(actors[1].raw()).unwrap();
        assert!(!heap.contains(actors[1]));
        drop(heap);
        assert!((0..=900).all(|id| drops.times(id) == 1), "each node dropped once");
    }
}

#[test]
fn an_incremental_mark_keeps_owned_objects_including_those_born_during_it() {
    let drops = Drops::default();
    let mut heap = heap(GcSettings::SINGLE_THREADED);
    let mut actors: Vec<Handle<Actor>> = (0..500).map(|_| heap.insert(Actor { holds: Vec::new() })).collect();
    let lost: Vec<_> = (0..200).map(|i| heap.insert(Node::new(i, &drops))).collect();
    assert!(heap.start_incremental_collection(CollectOptions::FULL));
    let mut clock = std::time::Duration::ZERO;
    let mut slices = 0;
    let stats = loop {
        // Born between slices, holding a node also born during the mark.
        let node = heap.insert(Node::new(1000 + slices, &drops));
        actors.push(heap.insert(Actor { holds: vec![node] }));
        slices += 1;
        let step = heap.mark_slice_timed(std::time::Duration::from_micros(3), || {
            clock += std::time::Duration::from_micros(1);
            clock
        });
        match step {
            MarkStep::Marking(_) => {}
            MarkStep::Done(stats) => break stats,
            MarkStep::Idle => panic!("the mark stopped"),
        }
    };
    assert!(slices > 10, "{slices} slices");
    assert_eq!(stats.purged, lost.len());
    assert!(actors.iter().all(|&a| heap.contains(a)));
    for &a in &actors {
        let holds = heap.get(a).unwrap().holds.clone();
        assert!(holds.iter().all(|&n| heap.contains(n)));
    }
    drop(heap);
    assert!((0..200).chain(1000..1000 + slices).all(|id| drops.times(id) == 1), "each node dropped once");
}

#[test]
fn why_alive_names_the_owned_class_as_the_root() {
    let drops = Drops::default();
    let mut heap = heap(GcSettings::SINGLE_THREADED);
    let node = heap.insert(Node::new(0, &drops));
    let actor = heap.insert(Actor { holds: vec![node] });
    let chain = heap.why_alive(node).unwrap().expect("held by an owned actor");
    assert_eq!(chain.root, RootKind::Owned);
    assert_eq!(chain.len(), 1, "one reference from the root");
    assert_eq!(chain.links[0].object.handle, actor.raw());
    // A root named by hand comes first.
    heap.add_to_root(actor.raw()).unwrap();
    assert_eq!(heap.why_alive(actor).unwrap().unwrap().root, RootKind::AddToRoot);
    heap.remove_from_root(actor.raw()).unwrap();
    // Garbage keeps nothing alive, owned or not.
    heap.mark_as_garbage(actor.raw()).unwrap();
    assert_eq!(heap.why_alive(node).unwrap(), None);

    // Back to collected: from the next collection on, nothing keeps an unreferenced actor.
    let other = heap.insert(Actor { holds: Vec::new() });
    heap.set_lifetime::<Actor>(Lifetime::Collected).unwrap();
    assert_eq!(heap.why_alive(other).unwrap(), None);
    heap.collect_garbage(CollectOptions::FULL);
    assert!(!heap.contains(other));
}
