//! Behaviour of the collector: roots, garbage, clusters, permanent objects, destroy_now,
//! lifecycle hooks, incremental purge, returned cells, settings.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use respawn_arena::{
    Arena, ArenaConfig, ArenaError, Ended, EndedCells, Freed, FreedCell, Handle, Lifecycle, ObjectFlags, RawHandle,
    SlabConfig,
};
use respawn_gc::{CollectOptions, GcError, GcSettings, GcStep, Heap, Object, Trace};
use respawn_testkit::drops::Drops;
use respawn_testkit::gc::Node;

const SMALL: ArenaConfig = ArenaConfig { slab: SlabConfig::SMALL, max_generation: u32::MAX, ..ArenaConfig::DEFAULT };

fn heap() -> Heap {
    Heap::with_config(SMALL, GcSettings::SINGLE_THREADED).unwrap()
}

fn parallel_heap() -> Heap {
    Heap::with_config(SMALL, GcSettings { parallel: true, min_objects_per_task: 1, ..GcSettings::SINGLE_THREADED })
        .unwrap()
}

fn node(heap: &mut Heap, drops: &Drops, id: usize) -> Handle<Node> {
    heap.insert(Node::new(id, drops))
}

fn link(heap: &mut Heap, from: Handle<Node>, to: Handle<Node>) {
    heap.get_mut(from).unwrap().edges.push(to);
}

#[test]
fn reachable_objects_survive_and_cycles_without_roots_are_purged() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c, d, e] = [0, 1, 2, 3, 4].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    link(&mut heap, b, c);
    link(&mut heap, c, a); // a rooted cycle
    link(&mut heap, d, e);
    link(&mut heap, e, d); // an unrooted cycle
    let root = heap.root(a).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.objects, stats.roots, stats.kept, stats.unreachable, stats.purged), (5, 1, 3, 2, 2));
    assert_eq!(stats.scanned, 3);
    for h in [a, b, c] {
        assert!(heap.get(h).is_some());
    }
    for (h, id) in [(d, 3), (e, 4)] {
        assert!(heap.get(h).is_none());
        assert_eq!(drops.times(id), 1);
    }
    // Dropping the guard makes the rest unreachable.
    drop(root);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.kept, stats.purged), (0, 3));
    assert_eq!(drops.total(), 5);
    assert_eq!(heap.len::<Node>(), 0);
}

/// An object found unreachable and rooted before its purge is kept (still hidden: the
/// verdict stands until the next collection), then revived by the next collection: it
/// resolves again and is ticked again.
#[test]
fn an_object_rooted_before_its_purge_is_revived_by_the_next_collection() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b] = [0, 1].map(|i| node(&mut heap, &drops, i));
    heap.add_to_root(b.raw()).unwrap();
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    assert_eq!(heap.arena().lifecycle(a.raw()).unwrap(), Lifecycle::Unreachable);
    // A root taken behind the handles' back (a hook could): the purge keeps the object.
    heap.table().slot(a.index()).unwrap().insert_flags(ObjectFlags::ROOT_SET);
    heap.purge(None);
    assert_eq!(drops.total(), 0);
    assert!(heap.get(a).is_none(), "the verdict stands until the next collection");
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(heap.arena().lifecycle(a.raw()).unwrap(), Lifecycle::Live);
    let mut ticked = 0;
    heap.tick::<Node>(|_| ticked += 1);
    assert_eq!(ticked, 2, "the revived object is ticked again");
    heap.remove_from_root(a.raw()).unwrap();
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(a).is_none() && heap.get(b).is_some());
    assert_eq!(drops.total(), 1);
}

#[test]
fn manual_roots_and_keep_flags_keep_objects() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, c, b);
    heap.add_to_root(a.raw()).unwrap();
    arena(&mut heap).set_flags(c.raw(), ObjectFlags::PERMANENT).unwrap(); // kept, but not scanned
    let keep = CollectOptions { keep_flags: ObjectFlags::STANDALONE, ..CollectOptions::FULL };
    heap.collect_garbage(keep);
    assert!(heap.get(a).is_some());
    assert!(heap.get(c).is_some());
    assert!(heap.get(b).is_none(), "an unscanned keeper keeps nothing alive");
    // A keep flag makes a root that is traced.
    arena(&mut heap).clear_flags(c.raw(), ObjectFlags::PERMANENT).unwrap();
    let d = node(&mut heap, &drops, 3);
    link(&mut heap, c, d);
    arena(&mut heap).set_flags(c.raw(), ObjectFlags::STANDALONE).unwrap();
    heap.collect_garbage(keep);
    assert!(heap.get(c).is_some() && heap.get(d).is_some());
    heap.remove_from_root(a.raw()).unwrap();
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(a).is_none());
}

#[test]
fn garbage_is_purged_even_when_referenced_and_keeps_nothing_alive() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [a, b, c] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, a, b);
    link(&mut heap, b, c);
    let _root = heap.root(a).unwrap();
    assert_eq!(heap.mark_as_garbage(b.raw()).unwrap(), 1);
    assert!(heap.get(b).is_none(), "handles stop resolving at once");
    let mut ticked = 0;
    heap.tick::<Node>(|_| ticked += 1);
    assert_eq!(ticked, 2, "garbage leaves tick at once");
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((drops.times(1), drops.times(2)), (1, 1), "b is garbage, c was only reachable through b");
    assert!(heap.get(a).is_some());
    // Bad input: stale, hidden, rooted.
    assert!(matches!(heap.mark_as_garbage(b.raw()), Err(GcError::Arena(ArenaError::Stale))));
    assert!(matches!(heap.mark_as_garbage(a.raw()), Err(GcError::Arena(ArenaError::Rooted))));
    let d = node(&mut heap, &drops, 3);
    heap.mark_as_garbage(d.raw()).unwrap();
    assert!(matches!(heap.mark_as_garbage(d.raw()), Err(GcError::Arena(ArenaError::Hidden(_)))));
}

#[test]
fn sub_objects_keep_their_owner_and_die_with_it() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [owner, part, bit, other] = [0, 1, 2, 3].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(part.raw(), Some(owner.raw())).unwrap();
    heap.set_outer(bit.raw(), Some(part.raw())).unwrap();
    link(&mut heap, other, bit);
    let root = heap.root(other).unwrap();
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(owner).is_some() && heap.get(part).is_some(), "the outer chain is a reference");
    // Marking the owner as garbage takes its sub-objects along, though `other` points at one.
    assert_eq!(heap.mark_as_garbage(owner.raw()).unwrap(), 3);
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!([drops.times(0), drops.times(1), drops.times(2), drops.times(3)], [1, 1, 1, 0]);
    // A rooted sub-object refuses the whole marking, and nothing changes.
    let owner = node(&mut heap, &drops, 4);
    let part = node(&mut heap, &drops, 5);
    heap.set_outer(part.raw(), Some(owner.raw())).unwrap();
    let _part_root = heap.root(part).unwrap();
    assert!(matches!(heap.mark_as_garbage(owner.raw()), Err(GcError::Arena(ArenaError::Rooted))));
    assert!(heap.get(owner).is_some());
    drop(root);
}

#[test]
fn mark_as_garbage_counts_only_the_objects_it_marks() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [owner, part, _unrooted] = [0, 1, 2].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(part.raw(), Some(owner.raw())).unwrap();
    // The part first, then its owner: the part is garbage already, so only the owner is new.
    assert_eq!(heap.mark_as_garbage(part.raw()).unwrap(), 1);
    assert_eq!(heap.mark_as_garbage(owner.raw()).unwrap(), 1);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.purged, 3, "the two, and the unrooted third");
    assert_eq!([drops.times(0), drops.times(1), drops.times(2)], [1, 1, 1]);

    // A part the last mark found unreachable waits in the purge queue: marking its owner
    // counts the owner alone and does not queue the part again.
    let [owner, part, keeper] = [3, 4, 5].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(part.raw(), Some(owner.raw())).unwrap();
    link(&mut heap, keeper, owner);
    let root = heap.root(keeper).unwrap();
    let stats = heap.collect_garbage(CollectOptions::INCREMENTAL);
    assert_eq!((stats.unreachable, heap.pending_purge()), (1, 1), "the part, queued");
    assert_eq!(heap.mark_as_garbage(owner.raw()).unwrap(), 1);
    assert_eq!(heap.pending_purge(), 1, "queued once");
    assert_eq!(heap.purge(None).purged, 1);
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!([drops.times(3), drops.times(4), drops.times(5)], [1, 1, 0]);
    drop(root);
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(drops.total(), 6);
}

#[test]
fn mark_as_garbage_skips_a_sub_object_already_waiting_for_finish_destroy() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let owner = heap.insert(Hooked::new("owner", &log, 1));
    let slow = heap.insert(Hooked::new("slow", &log, 3));
    heap.set_outer(slow.raw(), Some(owner.raw())).unwrap();
    assert_eq!(heap.subtree(owner.raw()).unwrap().destroy_sub_objects(), 0, "the sub-object waits");
    assert_eq!(take_log(&log), ["begin slow", "ready? slow"]);
    assert_eq!(heap.pending_purge(), 1);
    assert_eq!(heap.mark_as_garbage(owner.raw()).unwrap(), 1, "the owner alone");
    assert_eq!(heap.pending_purge(), 1, "the waiting one, once");
    heap.collect_garbage(CollectOptions::FULL);
    heap.purge(None);
    let log = take_log(&log);
    assert_eq!(log.iter().filter(|l| *l == "begin slow").count(), 0, "never begun twice: {log:?}");
    assert_eq!(log.iter().filter(|l| *l == "drop slow").count(), 1, "{log:?}");
    assert_eq!(log.iter().filter(|l| *l == "drop owner").count(), 1, "{log:?}");
    assert_eq!(heap.pending_purge(), 0);
}

/// Records the lifecycle of each object in one shared log.
#[derive(Trace)]
struct Hooked {
    name: &'static str,
    #[trace(skip)]
    log: Arc<Mutex<Vec<String>>>,
    /// `is_ready_for_finish_destroy` says no this many times.
    #[trace(skip)]
    not_ready: usize,
}

impl Hooked {
    fn new(name: &'static str, log: &Arc<Mutex<Vec<String>>>, not_ready: usize) -> Self {
        Self { name, log: Arc::clone(log), not_ready }
    }
    fn note(&self, what: &str) {
        self.log.lock().unwrap().push(format!("{what} {}", self.name));
    }
}

impl Object for Hooked {
    fn begin_destroy(&mut self) {
        self.note("begin");
    }
    fn is_ready_for_finish_destroy(&mut self) -> bool {
        self.note("ready?");
        self.not_ready = self.not_ready.saturating_sub(1);
        self.not_ready == 0
    }
    fn finish_destroy(&mut self) {
        self.note("finish");
    }
}

impl Drop for Hooked {
    fn drop(&mut self) {
        self.note("drop");
    }
}

fn take_log(log: &Arc<Mutex<Vec<String>>>) -> Vec<String> {
    std::mem::take(&mut *log.lock().unwrap())
}

#[test]
fn destroy_now_ends_nested_sub_objects_first_with_hooks_in_order() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let actor = heap.insert(Hooked::new("actor", &log, 1));
    let mesh = heap.insert(Hooked::new("mesh", &log, 1));
    let bone = heap.insert(Hooked::new("bone", &log, 1));
    heap.set_outer(mesh.raw(), Some(actor.raw())).unwrap();
    heap.set_outer(bone.raw(), Some(mesh.raw())).unwrap();
    heap.set_ended_cells(heap.class_of::<Hooked>().unwrap(), EndedCells::Returned).unwrap();
    assert_eq!(heap.destroy_now(actor.raw()).unwrap(), 3);
    assert_eq!(
        take_log(&log),
        [
            "begin bone",
            "ready? bone",
            "finish bone",
            "drop bone",
            "begin mesh",
            "ready? mesh",
            "finish mesh",
            "drop mesh",
            "begin actor",
            "ready? actor",
            "finish actor",
            "drop actor",
        ]
    );
    for h in [actor.raw(), mesh.raw(), bone.raw()] {
        assert!(matches!(heap.flags(h), Err(ArenaError::Stale)));
    }
    let freed: Vec<Freed> = heap.drain_returned(heap.class_of::<Hooked>().unwrap()).unwrap().collect();
    assert!(freed.iter().all(|f| f.ended() == Ended::DestroyedNow));
    let mut slots: Vec<u32> = freed.into_iter().map(|f| f.into_cell().unwrap().slot()).collect();
    slots.sort();
    assert_eq!(slots, {
        let mut v = vec![actor.index(), mesh.index(), bone.index()];
        v.sort();
        v
    });
    assert!(matches!(heap.destroy_now(actor.raw()), Err(GcError::Arena(ArenaError::Stale))), "double destroy");
}

#[test]
fn an_object_not_ready_waits_hidden_until_a_later_purge() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let slow = heap.insert(Hooked::new("slow", &log, 3));
    assert_eq!(heap.destroy_now(slow.raw()).unwrap(), 0);
    assert!(heap.get(slow).is_none(), "hidden while it waits");
    assert_eq!(heap.pending_purge(), 1);
    assert_eq!(take_log(&log), ["begin slow", "ready? slow"]);
    // A collection in between neither resurrects nor begins it again.
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    assert_eq!(take_log(&log), ["ready? slow"]);
    let progress = heap.purge(None);
    assert_eq!((progress.purged, progress.remaining), (1, 0));
    assert_eq!(take_log(&log), ["ready? slow", "finish slow", "drop slow"]);
}

#[test]
fn a_subtree_is_walked_once_checked_whole_and_ends_by_its_operations() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let tower = heap.insert(Hooked::new("tower", &log, 1));
    let gun = heap.insert(Hooked::new("gun", &log, 1));
    let barrel = heap.insert(Hooked::new("barrel", &log, 1));
    heap.set_outer(gun.raw(), Some(tower.raw())).unwrap();
    heap.set_outer(barrel.raw(), Some(gun.raw())).unwrap();

    // A rooted object anywhere below refuses the whole walk; nothing changes.
    heap.add_to_root(barrel.raw()).unwrap();
    assert!(matches!(heap.subtree(tower.raw()), Err(GcError::Arena(ArenaError::Rooted))));
    heap.remove_from_root(barrel.raw()).unwrap();

    // Owners before their sub-objects; a subtree dropped unused changes nothing.
    let subtree = heap.subtree(tower.raw()).unwrap();
    assert_eq!(subtree.objects(), [tower.raw(), gun.raw(), barrel.raw()]);
    assert_eq!(subtree.root(), tower.raw());
    assert!(subtree.has_sub_objects());
    drop(subtree);
    assert!(heap.get(tower).is_some() && heap.get(gun).is_some() && heap.get(barrel).is_some());
    assert!(take_log(&log).is_empty());

    // `destroy_sub_objects` ends what lies below, deepest first, and keeps the owner, which
    // then owns nothing (a `Reuse` pool resets and deactivates it).
    let mut subtree = heap.subtree(tower.raw()).unwrap();
    assert_eq!(subtree.root_mut::<Hooked>().unwrap().name, "tower");
    assert!(subtree.root_mut::<Node>().is_none(), "the root is not a Node");
    assert_eq!(subtree.destroy_sub_objects(), 2);
    assert_eq!(
        take_log(&log),
        [
            "begin barrel",
            "ready? barrel",
            "finish barrel",
            "drop barrel",
            "begin gun",
            "ready? gun",
            "finish gun",
            "drop gun"
        ]
    );
    assert!(heap.get(tower).is_some() && heap.get(gun).is_none() && heap.get(barrel).is_none());
    assert_eq!(heap.sub_objects(tower.raw()).count(), 0);
    assert!(!heap.flags(tower.raw()).unwrap().contains(ObjectFlags::HAS_SUBOBJECTS));

    // A leaf's subtree is the leaf alone; `mark_as_garbage` hides it for the collector.
    let subtree = heap.subtree(tower.raw()).unwrap();
    assert!(!subtree.has_sub_objects());
    assert_eq!(subtree.mark_as_garbage(), 1);
    assert!(heap.get(tower).is_none());
    assert!(matches!(heap.subtree(tower.raw()), Err(GcError::Arena(ArenaError::Hidden(_)))));
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(take_log(&log), ["begin tower", "ready? tower", "finish tower", "drop tower"]);
}

#[test]
fn destroying_an_owner_never_begins_a_waiting_sub_object_twice() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    let owner = heap.insert(Hooked::new("owner", &log, 1));
    let slow = heap.insert(Hooked::new("slow", &log, 2));
    heap.set_outer(slow.raw(), Some(owner.raw())).unwrap();
    let subtree = heap.subtree(owner.raw()).unwrap();
    assert_eq!(subtree.destroy_sub_objects(), 0, "the sub-object waits");
    assert_eq!(take_log(&log), ["begin slow", "ready? slow"]);
    // The owner ends now; the walk finds its waiting sub-object and leaves it waiting.
    assert_eq!(heap.destroy_now(owner.raw()).unwrap(), 1);
    assert_eq!(take_log(&log), ["begin owner", "ready? owner", "finish owner", "drop owner"]);
    let progress = heap.purge(None);
    assert_eq!(progress.remaining, 0);
    assert_eq!(take_log(&log), ["ready? slow", "finish slow", "drop slow"]);
}

#[test]
fn collected_objects_get_the_same_hooks() {
    let mut heap = heap();
    let log = Arc::new(Mutex::new(Vec::new()));
    heap.insert(Hooked::new("lost", &log, 1));
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(take_log(&log), ["begin lost", "ready? lost", "finish lost", "drop lost"]);
}

#[test]
fn destroy_now_refuses_rooted_and_permanent_objects_and_changes_nothing() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [owner, part] = [0, 1].map(|i| node(&mut heap, &drops, i));
    heap.set_outer(part.raw(), Some(owner.raw())).unwrap();
    heap.add_to_root(part.raw()).unwrap();
    assert!(matches!(heap.destroy_now(owner.raw()), Err(GcError::Arena(ArenaError::Rooted))));
    heap.remove_from_root(part.raw()).unwrap();
    arena(&mut heap).set_flags(owner.raw(), ObjectFlags::PERMANENT).unwrap();
    assert!(matches!(heap.destroy_now(owner.raw()), Err(GcError::Permanent)));
    assert!(matches!(heap.mark_as_garbage(owner.raw()), Err(GcError::Permanent)));
    assert!(heap.get(owner).is_some() && heap.get(part).is_some());
    assert_eq!(drops.total(), 0);
}

#[test]
fn permanent_objects_are_kept_and_never_scanned() {
    let (mut heap, drops) = (heap(), Drops::default());
    let [forever, target] = [0, 1].map(|i| node(&mut heap, &drops, i));
    link(&mut heap, forever, target);
    arena(&mut heap).set_flags(forever.raw(), ObjectFlags::PERMANENT).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.scanned, stats.kept, stats.purged), (0, 1, 1));
    assert!(heap.get(forever).is_some());
    assert_eq!(drops.times(1), 1, "what a permanent object points at must be kept some other way");
}

#[test]
fn clusters_live_and_die_whole() {
    let (mut heap, drops) = (heap(), Drops::default());
    let hs: Vec<_> = (0..5).map(|i| node(&mut heap, &drops, i)).collect();
    let outside = node(&mut heap, &drops, 5);
    link(&mut heap, hs[4], outside); // a member's reference leaves the cluster
    let raws: Vec<RawHandle> = hs.iter().map(|h| h.raw()).collect();
    let id = heap.create_cluster(raws[0], &raws[1..]).unwrap();
    assert_eq!(heap.cluster_of(raws[3]), Some(id));
    assert!(matches!(heap.create_cluster(raws[1], &[]), Err(GcError::InCluster)));
    // Reaching one member (not the root) keeps the whole cluster and what it references.
    let root = heap.root(hs[2]).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.clusters_kept, stats.purged), (1, 0));
    assert!(hs.iter().all(|&h| heap.get(h).is_some()) && heap.get(outside).is_some());
    // Unreached, the whole cluster goes, and its entry with it.
    drop(root);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.clusters_dissolved, stats.purged), (1, 6));
    assert_eq!(drops.total(), 6);
    assert!(matches!(heap.dissolve_cluster(id), Err(GcError::UnknownCluster)));
}

#[test]
fn a_cluster_whose_root_is_garbage_is_dissolved_and_judged_one_by_one() {
    let (mut heap, drops) = (heap(), Drops::default());
    let hs: Vec<_> = (0..4).map(|i| node(&mut heap, &drops, i)).collect();
    let raws: Vec<RawHandle> = hs.iter().map(|h| h.raw()).collect();
    heap.create_cluster(raws[0], &raws[1..]).unwrap();
    let _root = heap.root(hs[1]).unwrap();
    heap.mark_as_garbage(raws[0]).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.clusters_dissolved, 1);
    // The root is purged; member 1 is rooted; 2 and 3 are no longer kept by the cluster.
    assert_eq!([drops.times(0), drops.times(1), drops.times(2), drops.times(3)], [1, 0, 1, 1]);
    assert_eq!(heap.cluster_of(raws[1]), None);
}

#[test]
fn a_garbage_member_leaves_its_cluster_and_is_purged() {
    let (mut heap, drops) = (heap(), Drops::default());
    let hs: Vec<_> = (0..3).map(|i| node(&mut heap, &drops, i)).collect();
    let raws: Vec<RawHandle> = hs.iter().map(|h| h.raw()).collect();
    let id = heap.create_cluster(raws[0], &raws[1..]).unwrap();
    let _root = heap.root(hs[0]).unwrap();
    heap.mark_as_garbage(raws[2]).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.clusters_kept, stats.purged), (1, 1));
    assert_eq!(drops.times(2), 1);
    assert_eq!(heap.cluster_objects(id).unwrap().count(), 2);
}

/// A leaf: nothing to trace (`NEEDS_TRACE` is false).
#[derive(Trace, Object)]
struct Pebble(#[allow(dead_code)] u32);

/// Reaching one member of a cluster of leaf objects keeps the whole cluster: the mark
/// visits a claimed leaf whose class has cluster members, on one thread and on many.
#[test]
fn a_cluster_of_leaf_objects_is_reached_whole() {
    for mut heap in [heap(), parallel_heap()] {
        let drops = Drops::default();
        let holder = node(&mut heap, &drops, 0);
        let pebbles: Vec<Handle<Pebble>> = (0..3).map(|i| heap.insert(Pebble(i))).collect();
        let raws: Vec<RawHandle> = pebbles.iter().map(|h| h.raw()).collect();
        heap.create_cluster(raws[2], &raws[..2]).unwrap();
        // The holder reaches one member, through a referencer (a `Node` holds only nodes).
        let reached = raws[0];
        let _net = heap.add_referencer(move |t| t.handle(reached));
        let _root = heap.root(holder).unwrap();
        let stats = heap.collect_garbage(CollectOptions::FULL);
        assert_eq!((stats.clusters_kept, stats.purged), (1, 0));
        assert!(pebbles.iter().all(|&p| heap.get(p).is_some()));
    }
}

/// A member destroyed by hand leaves no membership behind: the object born in its slot is
/// in no cluster, is judged on its own, and may found a cluster of its own.
#[test]
fn a_slot_reused_after_a_member_ends_is_in_no_cluster() {
    let (mut heap, drops) = (heap(), Drops::default());
    let hs: Vec<_> = (0..3).map(|i| node(&mut heap, &drops, i)).collect();
    let raws: Vec<RawHandle> = hs.iter().map(|h| h.raw()).collect();
    let id = heap.create_cluster(raws[0], &raws[1..]).unwrap();
    let _root = heap.root(hs[0]).unwrap();
    heap.destroy_now(raws[2]).unwrap();
    let newcomer = node(&mut heap, &drops, 3);
    assert_eq!(newcomer.index(), raws[2].index(), "the freed slot is reused");
    assert_eq!(heap.cluster_of(newcomer.raw()), None);
    assert_eq!(heap.cluster_of(raws[1]), Some(id));
    heap.collect_garbage(CollectOptions::FULL);
    assert!(heap.get(newcomer).is_none(), "not kept by the cluster it never joined");
    assert!(heap.get(hs[1]).is_some(), "kept whole by its cluster");
    let again = node(&mut heap, &drops, 4);
    let own = heap.create_cluster(again.raw(), &[]).unwrap();
    assert_eq!(heap.cluster_of(again.raw()), Some(own));
    heap.dissolve_cluster(id).unwrap();
    assert_eq!(heap.cluster_of(again.raw()), Some(own), "another cluster's entry is not touched");
}

#[test]
fn parallel_and_single_threaded_collections_keep_the_same_objects() {
    // A random graph, collected twice: once on one thread, once on four with tiny tasks
    // (so work is split and spilled constantly).
    let build = |heap: &mut Heap, drops: &Drops| -> Vec<Handle<Node>> {
        let mut rng = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            rng
        };
        let n = if cfg!(miri) { 60 } else { 3_000 };
        let hs: Vec<_> = (0..n).map(|i| node(heap, drops, i)).collect();
        for &h in &hs {
            for _ in 0..next() % 4 {
                let to = hs[(next() % n as u64) as usize];
                link(heap, h, to);
            }
        }
        for h in hs.iter().step_by(37) {
            heap.add_to_root(h.raw()).unwrap();
        }
        hs
    };
    let survivors = |heap: &mut Heap, hs: &[Handle<Node>]| -> Vec<bool> {
        heap.collect_garbage(CollectOptions::FULL);
        hs.iter().map(|&h| heap.get(h).is_some()).collect()
    };
    let (mut single, d1) = (heap(), Drops::default());
    let hs = build(&mut single, &d1);
    let expected = survivors(&mut single, &hs);
    // The heap's own four threads (`GcSettings::threads`), joined when it drops: no thread
    // outlives the test, so Miri runs it without ignoring leaks.
    let settings = GcSettings { threads: Some(4), ..*parallel_heap().settings() };
    let (mut par, d2) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    let hs = build(&mut par, &d2);
    let got = survivors(&mut par, &hs);
    assert_eq!(par.gc_stats().threads, 4);
    assert_eq!(got, expected);
    assert_eq!(par.gc_stats().kept, single.gc_stats().kept);
    assert_eq!(par.gc_stats().scanned, single.gc_stats().scanned);
    assert!(expected.iter().any(|&k| k) && expected.iter().any(|&k| !k), "the graph tests both outcomes");
}

#[test]
fn incremental_purge_in_small_steps_ends_like_one_full_purge() {
    let run = |steps: bool| {
        let (mut heap, drops) = (heap(), Drops::default());
        let hs: Vec<_> = (0..300).map(|i| node(&mut heap, &drops, i)).collect();
        for w in hs.windows(2).step_by(3) {
            link(&mut heap, w[0], w[1]);
        }
        for h in hs.iter().step_by(7) {
            heap.add_to_root(h.raw()).unwrap();
        }
        let before = heap.collect_garbage(CollectOptions::INCREMENTAL);
        assert_eq!(before.purged, 0);
        assert!(hs.iter().filter(|&&h| heap.get(h).is_none()).count() >= before.unreachable);
        let mut calls = 0;
        if steps {
            // A clock that advances one tick per reading: budget 2 → about two objects a step.
            let tick = std::cell::Cell::new(0u64);
            loop {
                calls += 1;
                let p = heap.purge_timed(Duration::from_nanos(2), || {
                    tick.set(tick.get() + 1);
                    Duration::from_nanos(tick.get())
                });
                if p.is_done() {
                    break;
                }
            }
        } else {
            heap.purge(None);
        }
        let live: Vec<bool> = hs.iter().map(|&h| heap.get(h).is_some()).collect();
        let dropped: Vec<u32> = (0..300).map(|i| drops.times(i)).collect();
        (live, dropped, heap.gc_stats().purged, calls)
    };
    let (live_a, dropped_a, purged_a, _) = run(false);
    let (live_b, dropped_b, purged_b, calls) = run(true);
    assert_eq!((live_a, dropped_a, purged_a), (live_b, dropped_b, purged_b));
    assert!(calls > 50, "the purge really was split ({calls} steps)");
}

/// Advances a shared fake clock by one unit when dropped.
#[derive(Trace)]
struct Costly(#[trace(skip)] Arc<AtomicUsize>);
impl Object for Costly {}
impl Drop for Costly {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_purge_step_overruns_its_budget_by_at_most_one_destruction() {
    let mut heap = heap();
    let clock = Arc::new(AtomicUsize::new(0));
    for _ in 0..20 {
        heap.insert(Costly(Arc::clone(&clock)));
    }
    heap.collect_garbage(CollectOptions::INCREMENTAL);
    let now = || Duration::from_millis(clock.load(Ordering::SeqCst) as u64);
    // Each destruction costs 1 ms of fake time; a 3.5 ms budget is spent during the 4th.
    for expected in [4, 4, 4, 4, 4] {
        let before = clock.load(Ordering::SeqCst);
        let p = heap.purge_timed(Duration::from_micros(3500), now);
        let spent = clock.load(Ordering::SeqCst) - before;
        assert_eq!(p.purged, expected);
        assert!(spent <= 4, "3.5 units of budget, one unit of overrun at most: spent {spent}");
    }
    assert_eq!(heap.pending_purge(), 0);
}

#[test]
fn a_returned_class_gets_each_purged_cell_back_once() {
    let (mut heap, drops) = (heap(), Drops::default());
    let class = heap.register::<Node>().unwrap();
    heap.set_ended_cells(heap.class_of::<Node>().unwrap(), EndedCells::Returned).unwrap();
    let hs: Vec<_> = (0..100).map(|i| node(&mut heap, &drops, i)).collect();
    for h in hs.iter().step_by(2) {
        heap.add_to_root(h.raw()).unwrap();
    }
    heap.collect_garbage(CollectOptions::FULL);
    let freed: Vec<Freed> = heap.drain_returned(class).unwrap().collect();
    assert_eq!(freed.len(), 50);
    assert!(freed.iter().all(|f| f.ended() == Ended::Collected));
    let tokens: Vec<FreedCell> = freed.into_iter().filter_map(Freed::into_cell).collect();
    assert_eq!(heap.drain_returned(class).unwrap().count(), 0, "each returned once");
    let mut slots: Vec<u32> = tokens.iter().map(FreedCell::slot).collect();
    slots.sort();
    // Slot numbers follow the class's slab runs, not insertion order: compare as sets.
    let mut expected: Vec<u32> = hs.iter().skip(1).step_by(2).map(|h| h.index()).collect();
    expected.sort();
    assert_eq!(slots, expected);
    // The owner owns the cells until it recycles them.
    let vacant = heap.stats::<Node>().unwrap().vacant;
    for t in tokens {
        heap.recycle(t).unwrap();
    }
    assert_eq!(heap.stats::<Node>().unwrap().vacant, vacant + 50);
}

#[test]
fn settings_are_validated_with_a_message() {
    let bad = [
        GcSettings { min_objects_per_task: 0, ..GcSettings::DEFAULT },
        GcSettings { purge_budget: Some(Duration::ZERO), ..GcSettings::DEFAULT },
        GcSettings { time_between_collections: Some(Duration::ZERO), ..GcSettings::DEFAULT },
        GcSettings { early_purge_percent: Some(0), ..GcSettings::DEFAULT },
        GcSettings { early_purge_percent: Some(101), ..GcSettings::DEFAULT },
    ];
    for settings in bad {
        let err = Heap::with_config(SMALL, settings).unwrap_err();
        assert!(matches!(err, GcError::BadSettings(_)));
        assert!(err.to_string().contains("use"), "the message says what to change: {err}");
    }
    for good in [GcSettings::DEFAULT, GcSettings::SINGLE_THREADED, GcSettings::LOW_LATENCY] {
        good.validate().unwrap();
    }
    let mut heap = heap();
    assert!(heap.set_settings(bad[0]).is_err());
    assert_eq!(heap.settings(), &GcSettings::SINGLE_THREADED);
}

#[test]
fn update_collects_on_schedule_and_purges_within_budget_between() {
    let settings = GcSettings {
        time_between_collections: Some(Duration::from_secs(1)),
        purge_budget: Some(Duration::from_secs(3600)),
        ..GcSettings::SINGLE_THREADED
    };
    let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    for i in 0..10 {
        node(&mut heap, &drops, i);
    }
    assert_eq!(heap.update(Duration::from_millis(600)), GcStep::Idle);
    let GcStep::Collected(stats) = heap.update(Duration::from_millis(600)) else { panic!("a collection was due") };
    assert_eq!((stats.unreachable, stats.purged), (10, 0), "with a budget the purge waits for the next frames");
    let GcStep::Purged(p) = heap.update(Duration::from_millis(16)) else { panic!("purge work was pending") };
    assert_eq!((p.purged, p.remaining), (10, 0));
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle);
    assert!(matches!(heap.update(Duration::from_secs(2)), GcStep::Collected(_)));
}

/// Garbage is purged between collections once it holds `early_purge_percent` of the
/// heap's cells, without a mark: each object once, rooted garbage left to the collection,
/// and the collection after it finds only what it has to judge.
#[test]
fn update_purges_garbage_between_collections_once_it_passes_its_share() {
    let settings = GcSettings { early_purge_percent: Some(25), ..GcSettings::SINGLE_THREADED };
    let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    let hs: Vec<_> = (0..128).map(|i| node(&mut heap, &drops, i)).collect();
    let slots = heap.table().len() as usize;
    let share = (slots * 25).div_ceil(100);
    assert!(share + 2 < hs.len(), "{slots} slots");
    // A garbage object a root still holds on to (taken behind the handles' back, as a hook
    // could): the collection's to judge, not the early purge's.
    heap.mark_as_garbage(hs[0].raw()).unwrap();
    heap.table().slot(hs[0].index()).unwrap().insert_flags(ObjectFlags::ROOT_SET);
    for h in &hs[1..share - 1] {
        heap.mark_as_garbage(h.raw()).unwrap();
    }
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle, "below the share: nothing to do");
    assert_eq!((drops.total(), heap.pending_purge()), (0, 0));
    heap.mark_as_garbage(hs[share - 1].raw()).unwrap();
    let GcStep::Purged(p) = heap.update(Duration::from_millis(16)) else { panic!("the share was reached") };
    assert_eq!((p.purged, p.remaining), (share - 1, 0), "every garbage object but the rooted one");
    assert_eq!(heap.gc_stats().gathered_early, share - 1);
    assert_eq!(drops.total(), share - 1);
    assert!((1..share).all(|i| drops.times(i) == 1 && heap.get(hs[i]).is_none()));
    assert_eq!(heap.arena().lifecycle(hs[0].raw()).unwrap(), Lifecycle::Garbage, "rooted garbage waits");
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle, "the count starts again");
    // The collection judges the rest (no root but the garbage one): each object ends once.
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(stats.unreachable, hs.len() - share, "the live objects, not the purged ones");
    assert_eq!(stats.gathered_early, 0, "counted per collection");
    assert_eq!(drops.total(), hs.len() - 1);
    assert!(drops.times(0) == 0 && (1..hs.len()).all(|i| drops.times(i) == 1));
}

/// A collection takes the garbage marked before it: the early purge's count starts again
/// after it, and never sees those objects again.
#[test]
fn a_collection_starts_the_early_purge_count_again() {
    let settings = GcSettings { early_purge_percent: Some(25), ..GcSettings::SINGLE_THREADED };
    let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    let hs: Vec<_> = (0..128).map(|i| node(&mut heap, &drops, i)).collect();
    let roots: Vec<_> = hs.iter().map(|&h| heap.add_to_root(h.raw())).collect();
    assert!(roots.iter().all(Result::is_ok));
    let share = (heap.table().len() as usize * 25).div_ceil(100);
    let unroot_and_mark = |heap: &mut Heap, range: std::ops::Range<usize>| {
        for h in &hs[range] {
            heap.remove_from_root(h.raw()).unwrap();
            heap.mark_as_garbage(h.raw()).unwrap();
        }
    };
    unroot_and_mark(&mut heap, 0..share - 1);
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.purged, drops.total()), (share - 1, share - 1));
    // One more is far below the share counted from the collection on.
    unroot_and_mark(&mut heap, share - 1..share);
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle);
    assert_eq!((drops.total(), heap.gc_stats().gathered_early), (share - 1, 0));
    unroot_and_mark(&mut heap, share..2 * share - 1);
    let GcStep::Purged(p) = heap.update(Duration::from_millis(16)) else { panic!("the share was reached") };
    assert_eq!((p.purged, heap.gc_stats().gathered_early), (share, share));
    assert!(drops.total() == 2 * share - 1 && (0..2 * share - 1).all(|i| drops.times(i) == 1));
}

/// No early purge while an incremental mark runs (its gather takes the garbage) or while
/// the collection tracks references to garbage (it reports them).
#[test]
fn garbage_waits_for_the_collection_while_a_mark_runs_or_references_to_it_are_tracked() {
    for tracked in [false, true] {
        let settings = GcSettings {
            early_purge_percent: Some(1),
            track_garbage_references: tracked,
            purge_budget: Some(Duration::from_secs(3600)),
            ..GcSettings::SINGLE_THREADED
        };
        let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
        let hs: Vec<_> = (0..64).map(|i| node(&mut heap, &drops, i)).collect();
        if !tracked {
            assert!(heap.start_incremental_collection(CollectOptions::FULL));
        }
        for h in &hs[..8] {
            heap.mark_as_garbage(h.raw()).unwrap();
        }
        let stats = if tracked {
            assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle, "tracked: no early purge");
            heap.collect_garbage(CollectOptions::FULL)
        } else {
            // The mark runs to its end in this frame (no slice budget set).
            let GcStep::Collected(stats) = heap.update(Duration::from_millis(16)) else { panic!("the mark ends") };
            stats
        };
        assert_eq!((stats.unreachable, stats.gathered_early), (64, 0), "tracked: {tracked}");
        heap.purge(None);
        assert!(drops.total() == 64 && (0..64).all(|i| drops.times(i) == 1), "tracked: {tracked}");
    }
}

#[test]
fn update_with_the_longest_duration_saturates_the_collection_clock() {
    // No schedule: the clock only runs, and stops at its ceiling.
    let mut heap = heap();
    assert_eq!(heap.update(Duration::MAX), GcStep::Idle);
    assert_eq!(heap.update(Duration::MAX), GcStep::Idle);
    // On a schedule, after a frame already counted: each longest frame is due.
    let settings = GcSettings { time_between_collections: Some(Duration::from_secs(1)), ..GcSettings::SINGLE_THREADED };
    let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    node(&mut heap, &drops, 0);
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle);
    assert!(matches!(heap.update(Duration::MAX), GcStep::Collected(_)));
    assert_eq!(heap.update(Duration::from_millis(16)), GcStep::Idle);
    assert!(matches!(heap.update(Duration::MAX), GcStep::Collected(_)));
    assert_eq!(drops.times(0), 1);
}

#[test]
fn classes_unknown_to_the_collector_are_leaves() {
    let (mut heap, drops) = (heap(), Drops::default());
    let target = node(&mut heap, &drops, 0);
    // Inserted through the arena: the collector never scans it.
    let holder = heap.arena_mut_insert(vec![target]);
    heap.add_to_root(holder.raw()).unwrap();
    heap.collect_garbage(CollectOptions::FULL);
    assert_eq!(drops.times(0), 1);
}

/// The heap's arena, for what only the arena does: keep flags set by hand, a class the
/// collector never scans.
fn arena(heap: &mut Heap) -> &mut Arena {
    // SAFETY: the tests call the arena's methods through it and never replace it.
    unsafe { heap.arena_mut() }
}

trait ArenaInsert {
    fn arena_mut_insert(&mut self, v: Vec<Handle<Node>>) -> Handle<Vec<Handle<Node>>>;
}
impl ArenaInsert for Heap {
    fn arena_mut_insert(&mut self, v: Vec<Handle<Node>>) -> Handle<Vec<Handle<Node>>> {
        arena(self).insert(v)
    }
}

/// Every derive shape, each holding one handle that must keep its target alive.
mod shapes {
    use super::*;

    #[derive(Trace, Object)]
    pub struct Named {
        pub a: Handle<Node>,
        #[trace(skip)]
        pub weak: Option<Handle<Node>>,
    }
    #[derive(Trace, Object)]
    pub struct Tuple(pub u32, pub Option<Handle<Node>>);
    #[derive(Trace, Object)]
    pub struct Unit;
    #[derive(Trace, Object)]
    pub enum Either {
        Nothing,
        One(Handle<Node>),
        Many { list: VecDeque<Handle<Node>>, map: HashMap<u32, Handle<Node>> },
    }
    #[derive(Trace, Object)]
    pub struct Generic<T> {
        pub inner: T,
    }
    #[derive(Trace, Object)]
    pub struct Containers {
        pub boxed: Box<[Handle<Node>]>,
        pub array: [Option<Handle<Node>>; 2],
        pub tuple: (u8, Handle<Node>),
        pub tree: BTreeMap<String, Vec<Handle<Node>>>,
    }
    #[derive(Trace, Object)]
    pub struct Leaf {
        pub pos: [f32; 3],
        pub name: String,
    }
}

#[test]
fn derive_traces_every_shape_and_skips_what_it_is_told() {
    use shapes::*;
    const {
        assert!(!<Leaf as Trace>::NEEDS_TRACE, "a leaf class is never scanned");
        assert!(!<Unit as Trace>::NEEDS_TRACE);
        assert!(!<Generic<u32> as Trace>::NEEDS_TRACE);
        assert!(<Generic<Handle<Node>> as Trace>::NEEDS_TRACE);
        assert!(<Named as Trace>::NEEDS_TRACE && <Either as Trace>::NEEDS_TRACE);
    }

    let (mut heap, drops) = (heap(), Drops::default());
    let t: Vec<_> = (0..12).map(|i| node(&mut heap, &drops, i)).collect();
    let named = heap.insert(Named { a: t[0], weak: Some(t[1]) });
    let holders: Vec<RawHandle> = vec![
        named.raw(),
        heap.insert(Tuple(7, Some(t[2]))).raw(),
        heap.insert(Either::One(t[3])).raw(),
        heap.insert(Either::Many { list: VecDeque::from([t[4]]), map: HashMap::from([(1, t[5])]) }).raw(),
        heap.insert(Either::Nothing).raw(),
        heap.insert(Generic { inner: t[6] }).raw(),
        heap.insert(Containers {
            boxed: vec![t[7]].into_boxed_slice(),
            array: [None, Some(t[8])],
            tuple: (1, t[9]),
            tree: BTreeMap::from([("x".to_string(), vec![t[10]])]),
        })
        .raw(),
        heap.insert(Leaf { pos: [0.0; 3], name: "leaf".into() }).raw(),
    ];
    for &h in &holders {
        heap.add_to_root(h).unwrap();
    }
    let stats = heap.collect_garbage(CollectOptions::FULL);
    // Everything but the skipped field's target and the untouched node 11 survives.
    let survived: Vec<bool> = t.iter().map(|&h| heap.get(h).is_some()).collect();
    let mut expected = vec![true; 12];
    expected[1] = false;
    expected[11] = false;
    assert_eq!(survived, expected);
    // The leaf was kept without a scan; every other holder was scanned.
    assert_eq!(stats.scanned, holders.len() - 1 + 10);
    let weak = heap.get(named).unwrap().weak.unwrap();
    assert!(heap.get(weak).is_none(), "a skipped handle is weak");
}

/// Waits until no thread named `prefix…` is left and says whether that happened (a joined
/// thread may linger in `/proc` for a moment while the kernel tears it down: this bounds
/// the wait, it times nothing).
fn gone(prefix: &str) -> bool {
    let start = std::time::Instant::now();
    while threads_named(prefix).unwrap_or(0) > 0 {
        if start.elapsed() > Duration::from_secs(10) {
            return false;
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    true
}

/// Threads of this test binary whose name starts with `prefix` (Linux: each thread's
/// `comm`); `None` elsewhere.
fn threads_named(prefix: &str) -> Option<usize> {
    let tasks = std::fs::read_dir("/proc/self/task").ok()?;
    Some(
        tasks
            .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
            .filter(|name| name.starts_with(prefix))
            .count(),
    )
}

/// Threads that ran a `par_tick` task of the threads test, and those of them that have
/// exited (their thread-locals' destructors run before a join returns).
static TOUCHED: AtomicUsize = AtomicUsize::new(0);
static EXITED: AtomicUsize = AtomicUsize::new(0);

struct ExitNote;
impl Drop for ExitNote {
    fn drop(&mut self) {
        EXITED.fetch_add(1, Ordering::SeqCst);
    }
}

thread_local! {
    static EXIT_NOTE: ExitNote = {
        TOUCHED.fetch_add(1, Ordering::SeqCst);
        ExitNote
    };
}

/// `GcSettings::threads`: the mark and `par_tick` run on the heap's own threads, and those
/// are joined when the heap drops (or its settings change): every thread that worked has
/// exited by then, its thread-locals dropped. (No other test in this binary gives a heap
/// threads of its own, so the thread names and counts are this test's.)
#[test]
fn a_heap_with_threads_of_its_own_works_on_them_and_joins_them() {
    let settings =
        GcSettings { parallel: true, min_objects_per_task: 1, threads: Some(2), ..GcSettings::SINGLE_THREADED };
    let (mut heap, drops) = (Heap::with_config(SMALL, settings).unwrap(), Drops::default());
    let nodes: Vec<_> = (0..2000).map(|i| node(&mut heap, &drops, i)).collect();
    for pair in nodes.windows(2) {
        link(&mut heap, pair[0], pair[1]);
    }
    let _root = heap.root(nodes[1000]).unwrap();
    let stats = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((stats.threads, stats.purged), (2, 1000), "marked on the heap's two threads: {stats:?}");
    let tick = |heap: &mut Heap| {
        let names = Mutex::new(std::collections::HashSet::new());
        heap.par_tick::<Node>(|_| {
            EXIT_NOTE.with(|_| {});
            names.lock().unwrap().insert(std::thread::current().name().map(str::to_owned));
        });
        let names = names.into_inner().unwrap();
        assert!(
            names.iter().all(|n| n.as_deref().is_some_and(|n| n.starts_with("respawn-gc #"))),
            "par_tick ran on the heap's threads only: {names:?}"
        );
    };
    tick(&mut heap);
    assert!(TOUCHED.load(Ordering::SeqCst) >= 1);
    // New settings without threads of its own: the old ones are joined.
    heap.set_settings(GcSettings { threads: None, ..settings }).unwrap();
    assert_eq!(EXITED.load(Ordering::SeqCst), TOUCHED.load(Ordering::SeqCst), "joined when the settings changed");
    heap.set_settings(settings).unwrap();
    assert_eq!(heap.collect_garbage(CollectOptions::FULL).threads, 2, "a new pool of two");
    tick(&mut heap);
    drop(heap);
    assert_eq!(EXITED.load(Ordering::SeqCst), TOUCHED.load(Ordering::SeqCst), "joined when the heap dropped");
    assert!(gone("respawn-gc #"), "no thread of the heap is left");
    assert!(GcSettings { threads: Some(0), ..settings }.validate().is_err());
}

/// An external referencer keeps what it reports (and what that references) through every
/// collection, serial or parallel; once its registration drops, the next collection purges
/// them. Stale handles and garbage it reports keep nothing.
#[test]
fn an_object_kept_only_by_a_referencer_survives_until_the_referencer_goes() {
    for mut heap in [heap(), parallel_heap()] {
        let drops = Drops::default();
        let [a, b, c, d] = [0, 1, 2, 3].map(|i| node(&mut heap, &drops, i));
        link(&mut heap, a, b); // b is kept through a
        let stale = node(&mut heap, &drops, 4);
        heap.destroy_now(stale.raw()).unwrap();
        assert_eq!(drops.times(4), 1);
        heap.mark_as_garbage(d.raw()).unwrap();
        // The referencer's own data: handles in a map outside the heap.
        let held = Arc::new(Mutex::new(vec![a.raw(), stale.raw(), d.raw()]));
        let seen = Arc::clone(&held);
        let registration = heap.add_referencer(move |t| seen.lock().unwrap().iter().for_each(|&h| t.handle(h)));
        assert_eq!(heap.referencers(), 1);
        for _ in 0..2 {
            let stats = heap.collect_garbage(CollectOptions::FULL);
            assert!(heap.get(a).is_some() && heap.get(b).is_some(), "kept by the referencer: {stats:?}");
            assert!(heap.get(c).is_none() && heap.get(d).is_none(), "nothing kept c; garbage is never kept");
            assert_eq!([0, 1, 2, 3].map(|i| drops.times(i)), [0, 0, 1, 1]);
        }
        // What the referencer reports changes with its data: b alone now (a goes).
        *held.lock().unwrap() = vec![b.raw()];
        heap.collect_garbage(CollectOptions::FULL);
        assert!(heap.get(a).is_none() && heap.get(b).is_some());
        drop(registration);
        heap.collect_garbage(CollectOptions::FULL);
        assert!(heap.get(b).is_none(), "purged once the referencer is gone");
        assert_eq!(heap.referencers(), 0);
        assert_eq!([0, 1, 2, 3, 4].map(|i| drops.times(i)), [1; 5], "each dropped once");
    }
}
