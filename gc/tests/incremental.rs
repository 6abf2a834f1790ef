//! The incremental mark: random programs of the game's changes (spawns, stores and
//! removals of handles through `get_mut` and `tick`, roots, guards, referencers, outers,
//! garbage, destruction) interleaved with mark slices of tiny budgets, checked against a
//! plain BFS over a model of the graph; and the classic cases by hand.
//!
//! What an incremental mark keeps, exactly: **every object reachable when it finishes**
//! (the BFS over the model at that moment), and besides those **only** objects reachable
//! at some point since it started, or made while it ran (floating garbage) — never an
//! object marked as garbage. A whole collection right after keeps exactly the reachable.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use proptest::prelude::*;
use respawn_arena::{ArenaConfig, Handle, RawHandle, Root, SlabConfig};
use respawn_gc::{CollectOptions, GcSettings, GcStats, GcStep, Heap, MarkPhase, MarkStep, Object, Trace};
use respawn_testkit::drops::Drops;
use respawn_testkit::graph;

/// A graph node: `edges` are traced; `stash` is weak (not traced), and a `tick` moves it
/// into `edges` — a store the barrier sees only as "the whole class was lent".
#[derive(Trace, Debug)]
struct Link {
    edges: Vec<Handle<Link>>,
    #[trace(skip)]
    stash: Vec<Handle<Link>>,
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    drops: Drops,
}

impl Object for Link {}

impl Drop for Link {
    fn drop(&mut self) {
        self.drops.note_drop(self.id);
    }
}

impl Link {
    fn new(drops: &Drops, id: usize, edges: Vec<Handle<Link>>) -> Self {
        Link { edges, stash: Vec::new(), id, drops: drops.clone() }
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A new object with edges to these (indices into the objects made so far), stored
    /// into the first object's edges if `under` (the game links what it spawns).
    Add(Vec<usize>, bool),
    Edge(usize, usize),
    Unedge(usize),
    /// A weak handle, for a later `Tick` to make strong.
    Stash(usize, usize),
    Tick,
    ManualRoot(usize),
    Guard(usize),
    Unguard,
    /// The external referencer takes a handle, or lets its newest go.
    Refer(usize),
    Unrefer,
    Garbage(usize),
    Destroy(usize),
    Outer(usize, usize),
    Unouter(usize),
    /// Start an incremental collection (if none runs); after it finishes, `verify` runs a
    /// whole collection at once and checks it keeps exactly the reachable.
    Start {
        verify: bool,
    },
    /// One slice, `ticks` readings of a clock that ticks once a reading.
    Slice(u64),
    /// A whole collection (which drops a running incremental mark).
    Collect,
}

fn op() -> impl Strategy<Value = Op> {
    let i = 0..64usize;
    prop_oneof![
        5 => (prop::collection::vec(0..64usize, 0..4), any::<bool>()).prop_map(|(e, under)| Op::Add(e, under)),
        5 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Edge(a, b)),
        2 => i.clone().prop_map(Op::Unedge),
        3 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Stash(a, b)),
        3 => Just(Op::Tick),
        2 => i.clone().prop_map(Op::ManualRoot),
        1 => i.clone().prop_map(Op::Guard),
        1 => Just(Op::Unguard),
        1 => i.clone().prop_map(Op::Refer),
        1 => Just(Op::Unrefer),
        1 => i.clone().prop_map(Op::Garbage),
        1 => i.clone().prop_map(Op::Destroy),
        1 => (i.clone(), i.clone()).prop_map(|(a, b)| Op::Outer(a, b)),
        1 => i.prop_map(Op::Unouter),
        2 => any::<bool>().prop_map(|verify| Op::Start { verify }),
        8 => (1..6u64).prop_map(Op::Slice),
        1 => Just(Op::Collect),
    ]
}

/// One object of the model.
#[derive(Debug)]
struct Model {
    handle: Handle<Link>,
    alive: bool,
    edges: Vec<usize>,
    stash: Vec<usize>,
    manual_root: bool,
    guards: usize,
    referenced: usize,
    garbage: bool,
    /// Marked as garbage while the mark was gathering: the gather may have passed it.
    late_garbage: bool,
    /// Gathered by the running collection: hidden, to be purged.
    doomed: bool,
    outer: Option<usize>,
}

impl Model {
    /// A root in the arena's sense (`mark_as_garbage` refuses it).
    fn rooted(&self) -> bool {
        self.manual_root || self.guards > 0
    }

    fn visible(&self) -> bool {
        self.alive && !self.garbage && !self.doomed
    }

    /// Neither garbage nor gathered: a reference to it keeps it.
    fn keepable(&self) -> bool {
        !self.garbage && !self.doomed
    }
}

/// Live objects at or below `i` in the outer tree.
fn subtree(model: &[Model], i: usize) -> Vec<usize> {
    graph::subtree(i, |p| (0..model.len()).filter(move |&c| model[c].alive && model[c].outer == Some(p)))
}

/// The reference answer: BFS from the roots (rooted, or held by the referencer and not
/// garbage) over edges and outer links, never through garbage.
fn reachable(model: &[Model]) -> Vec<bool> {
    reachable_from(model, &[])
}

/// [`reachable`], with the objects `also` marks as more roots (unless garbage).
fn reachable_from(model: &[Model], also: &[bool]) -> Vec<bool> {
    let root = |i: usize| {
        let m = &model[i];
        m.alive && (m.rooted() || (m.keepable() && (m.referenced > 0 || also.get(i).copied().unwrap_or(false))))
    };
    // A rooted garbage object is kept, but keeps nothing.
    let dist = graph::distances(
        (0..model.len()).filter(|&i| root(i)),
        |i| model[i].alive && model[i].keepable(),
        |i| model[i].edges.iter().copied().chain(model[i].outer),
    );
    (0..model.len()).map(|i| dist.contains_key(&i)).collect()
}

/// What one incremental mark may keep beyond what is reachable at its end: floating
/// garbage. An object the mark reached stays reached, and what it points to when the mark
/// visits it (again) is reached too; an object made during the mark is born reached. So:
/// the objects reachable, at some point since the mark started, from the roots of that
/// moment, from objects made during the mark, or from objects already in the allowance.
#[derive(Default)]
struct Allowance {
    ever: Vec<bool>,
    verify: bool,
}

impl Allowance {
    fn widen(&mut self, model: &[Model]) {
        self.ever.resize(model.len(), true); // made during the mark
        let now = reachable_from(model, &self.ever);
        for (e, r) in self.ever.iter_mut().zip(now) {
            *e |= r;
        }
    }
}

/// Ends the objects the last collection purged in the model, and checks the heap: each
/// survivor resolves (unless garbage), each object dropped exactly when it ended.
fn settle(model: &mut [Model], drops: &Drops) -> Result<(), TestCaseError> {
    for i in 0..model.len() {
        if model[i].alive && drops.times(i) == 1 {
            model[i].alive = false;
            for m in model.iter_mut() {
                if m.outer == Some(i) {
                    m.outer = None; // a released owner cuts its sub-objects loose
                }
            }
        }
    }
    for (i, m) in model.iter().enumerate() {
        prop_assert_eq!(drops.times(i), u32::from(!m.alive), "object {} drop count", i);
    }
    Ok(())
}

/// Checks a finished incremental mark (full purge) against the model.
fn check_mark(
    heap: &mut Heap,
    model: &mut [Model],
    drops: &Drops,
    allowance: &Allowance,
    stats: &GcStats,
) -> Result<(), TestCaseError> {
    let expected = reachable(model);
    prop_assert!(stats.mark_slices >= 1);
    for i in 0..model.len() {
        if !model[i].alive {
            continue;
        }
        let survived = drops.times(i) == 0;
        prop_assert!(!expected[i] || survived, "object {} was reachable when the mark ended, and was purged", i);
        if survived {
            prop_assert!(!model[i].garbage || model[i].late_garbage, "object {} is garbage and survived", i);
            prop_assert!(!model[i].doomed, "object {} was gathered and survived", i);
            prop_assert!(
                expected[i] || allowance.ever.get(i).copied().unwrap_or(true),
                "object {} was never reachable during the mark (nor from what it reached), and survived",
                i
            );
            // Late garbage survives hidden, for the next collection.
            prop_assert_eq!(
                heap.get(model[i].handle).is_some(),
                !model[i].garbage,
                "object {} survived: it resolves unless garbage",
                i
            );
        }
    }
    settle(model, drops)?;
    if allowance.verify {
        collect_exactly(heap, model, drops)?;
    }
    Ok(())
}

/// A whole collection keeps exactly the reachable.
fn collect_exactly(heap: &mut Heap, model: &mut [Model], drops: &Drops) -> Result<(), TestCaseError> {
    let expected = reachable(model);
    heap.collect_garbage(CollectOptions::FULL);
    prop_assert!(!heap.is_marking());
    for i in 0..model.len() {
        if model[i].alive {
            prop_assert_eq!(drops.times(i) == 0, expected[i], "object {} after a whole collection", i);
        }
    }
    settle(model, drops)
}

fn run(ops: Vec<Op>) -> Result<(), TestCaseError> {
    let config = ArenaConfig {
        slab: SlabConfig { cells_per_slab: 16, ..SlabConfig::SMALL },
        max_generation: 4,
        ..ArenaConfig::DEFAULT
    };
    let mut heap = Heap::with_config(config, GcSettings::SINGLE_THREADED).unwrap();
    let drops = Drops::default();
    let mut model: Vec<Model> = Vec::new();
    let mut guards: Vec<(usize, Root<Link>)> = Vec::new();
    let held: Arc<Mutex<Vec<RawHandle>>> = Arc::default();
    let mut referenced: Vec<usize> = Vec::new();
    let report = Arc::clone(&held);
    let _referencer = heap.add_referencer(move |t| report.lock().unwrap().iter().for_each(|&h| t.handle(h)));
    let mut allowance: Option<Allowance> = None;
    // The last slice left the mark gathering.
    let mut gathering = false;
    let mut clock = 0u64;
    let pick = |model: &[Model], i: usize| (!model.is_empty()).then(|| i % model.len());

    for op in ops.into_iter().chain([Op::Slice(u64::MAX)]) {
        match op {
            Op::Add(edges, under) => {
                let id = model.len();
                let targets: Vec<usize> = if id == 0 { vec![] } else { edges.iter().map(|e| e % id).collect() };
                let handles = targets.iter().map(|&t| model[t].handle).collect();
                let handle = heap.insert(Link::new(&drops, id, handles));
                let parent = targets.first().copied().filter(|_| under);
                if let Some(p) = parent {
                    if let Some(link) = heap.get_mut(model[p].handle) {
                        link.edges.push(handle);
                        model[p].edges.push(id);
                    }
                }
                model.push(Model {
                    handle,
                    alive: true,
                    edges: targets,
                    stash: Vec::new(),
                    manual_root: false,
                    guards: 0,
                    referenced: 0,
                    garbage: false,
                    late_garbage: false,
                    doomed: false,
                    outer: None,
                });
            }
            Op::Edge(a, b) => {
                let (Some(a), Some(b)) = (pick(&model, a), pick(&model, b)) else { continue };
                let target = model[b].handle;
                match heap.get_mut(model[a].handle) {
                    Some(link) => {
                        link.edges.push(target);
                        model[a].edges.push(b);
                    }
                    None => prop_assert!(!model[a].visible()),
                }
            }
            Op::Unedge(a) => {
                let Some(a) = pick(&model, a) else { continue };
                if let Some(link) = heap.get_mut(model[a].handle) {
                    if link.edges.pop().is_some() {
                        model[a].edges.pop();
                    }
                }
            }
            Op::Stash(a, b) => {
                let (Some(a), Some(b)) = (pick(&model, a), pick(&model, b)) else { continue };
                let target = model[b].handle;
                if let Some(link) = heap.get_mut(model[a].handle) {
                    link.stash.push(target);
                    model[a].stash.push(b);
                }
            }
            Op::Tick => {
                heap.tick::<Link>(|link| {
                    let mut stash = std::mem::take(&mut link.stash);
                    link.edges.append(&mut stash);
                });
                for m in model.iter_mut().filter(|m| m.visible()) {
                    let mut stash = std::mem::take(&mut m.stash);
                    m.edges.append(&mut stash);
                }
            }
            Op::ManualRoot(a) => {
                let Some(a) = pick(&model, a) else { continue };
                let raw = model[a].handle.raw();
                if model[a].manual_root {
                    heap.remove_from_root(raw).unwrap();
                    model[a].manual_root = false;
                } else {
                    let visible = model[a].visible();
                    prop_assert_eq!(heap.add_to_root(raw).is_ok(), visible);
                    model[a].manual_root = visible;
                }
            }
            Op::Guard(a) => {
                let Some(a) = pick(&model, a) else { continue };
                match heap.root(model[a].handle) {
                    Ok(guard) => {
                        prop_assert!(model[a].visible());
                        guards.push((a, guard));
                        model[a].guards += 1;
                    }
                    Err(_) => prop_assert!(!model[a].visible()),
                }
            }
            Op::Unguard => {
                if let Some((a, guard)) = guards.pop() {
                    drop(guard);
                    model[a].guards -= 1;
                }
            }
            Op::Refer(a) => {
                let Some(a) = pick(&model, a) else { continue };
                held.lock().unwrap().push(model[a].handle.raw());
                referenced.push(a);
                model[a].referenced += 1;
            }
            Op::Unrefer => {
                if let Some(a) = referenced.pop() {
                    held.lock().unwrap().pop();
                    model[a].referenced -= 1;
                }
            }
            Op::Garbage(a) | Op::Destroy(a) => {
                let Some(a) = pick(&model, a) else { continue };
                let destroy = matches!(op, Op::Destroy(_));
                let raw = model[a].handle.raw();
                let result = if destroy { heap.destroy_now(raw) } else { heap.mark_as_garbage(raw) };
                let tree = subtree(&model, a);
                if !model[a].visible() || tree.iter().any(|&i| model[i].rooted()) {
                    prop_assert!(result.is_err(), "{:?}", result);
                    continue;
                }
                // A destroy ends the whole subtree; a mark counts only what it newly marks
                // (not what is garbage already, nor what the gather took).
                let expected = if destroy { tree.len() } else { tree.iter().filter(|&&i| model[i].keepable()).count() };
                prop_assert_eq!(result.unwrap(), expected);
                for &i in &tree {
                    model[i].garbage = true;
                    model[i].late_garbage = gathering;
                }
                if destroy {
                    settle(&mut model, &drops)?;
                }
            }
            Op::Outer(c, p) => {
                let (Some(c), Some(p)) = (pick(&model, c), pick(&model, p)) else { continue };
                let result = heap.set_outer(model[c].handle.raw(), Some(model[p].handle.raw()));
                if !model[c].visible() || !model[p].visible() || subtree(&model, c).contains(&p) {
                    prop_assert!(result.is_err());
                } else {
                    result.unwrap();
                    model[c].outer = Some(p);
                }
            }
            Op::Unouter(c) => {
                let Some(c) = pick(&model, c) else { continue };
                if heap.set_outer(model[c].handle.raw(), None).is_ok() {
                    model[c].outer = None;
                }
            }
            Op::Start { verify } => {
                if heap.start_incremental_collection(CollectOptions::FULL) {
                    prop_assert!(allowance.is_none());
                    model.iter_mut().for_each(|m| m.late_garbage = false);
                    allowance = Some(Allowance { ever: vec![false; model.len()], verify });
                } else {
                    prop_assert!(allowance.is_some());
                }
            }
            Op::Slice(ticks) => {
                let Some(mut allowed) = allowance.take() else { continue };
                let start = clock;
                let step = heap.mark_slice_timed(Duration::from_nanos(ticks), || {
                    clock += 1;
                    Duration::from_nanos(clock - start)
                });
                match step {
                    MarkStep::Done(stats) => {
                        prop_assert!(!heap.is_marking());
                        gathering = false;
                        check_mark(&mut heap, &mut model, &drops, &allowed, &stats)?;
                    }
                    MarkStep::Marking(progress) => {
                        prop_assert!(heap.is_marking() && ticks != u64::MAX, "{:?}", progress);
                        gathering = progress.phase == MarkPhase::Gather;
                        // The gather hides only what is unreachable now.
                        let now = reachable(&model);
                        for (i, m) in model.iter_mut().enumerate() {
                            if m.visible() && heap.get(m.handle).is_none() {
                                prop_assert!(gathering, "object {} hidden before the gather", i);
                                prop_assert!(!now[i], "object {} gathered while reachable", i);
                                m.doomed = true;
                            }
                        }
                        allowed.widen(&model);
                        allowance = Some(allowed);
                    }
                    MarkStep::Idle => prop_assert!(false, "idle while a mark runs"),
                }
            }
            Op::Collect => {
                allowance = None;
                gathering = false;
                collect_exactly(&mut heap, &mut model, &drops)?;
            }
        }
        if let Some(allowed) = &mut allowance {
            allowed.widen(&model);
        }
        // Between slices every visible object resolves: the mark's flag hides nothing.
        for m in &model {
            prop_assert_eq!(heap.get(m.handle).is_some(), m.visible());
        }
    }
    prop_assert!(!heap.is_marking());
    collect_exactly(&mut heap, &mut model, &drops)?;
    drop(guards);
    drop(heap);
    for i in 0..model.len() {
        prop_assert_eq!(drops.times(i), 1, "object {} dropped exactly once by shutdown", i);
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(512, 4))]

    #[test]
    fn an_incremental_mark_keeps_what_is_reachable_when_it_ends(
        ops in respawn_testkit::proptest::program(op())
    ) {
        run(ops)?;
    }
}

/// The heap and a clock that ticks once a reading, for slices of a few objects.
struct Slow {
    heap: Heap,
    clock: u64,
}

impl Slow {
    fn new() -> Self {
        let config =
            ArenaConfig { slab: SlabConfig { cells_per_slab: 16, ..SlabConfig::SMALL }, ..ArenaConfig::DEFAULT };
        Slow { heap: Heap::with_config(config, GcSettings::SINGLE_THREADED).unwrap(), clock: 0 }
    }

    /// A slice of `ticks` clock readings.
    fn slice(&mut self, ticks: u64) -> MarkStep {
        let (start, clock) = (self.clock, &mut self.clock);
        self.heap.mark_slice_timed(Duration::from_nanos(ticks), || {
            *clock += 1;
            Duration::from_nanos(*clock - start)
        })
    }

    /// Slices until the mark is in `phase` (or done: `false`).
    fn until(&mut self, phase: MarkPhase) -> bool {
        loop {
            match self.slice(1) {
                MarkStep::Marking(p) if p.phase == phase => return true,
                MarkStep::Marking(_) => {}
                _ => return false,
            }
        }
    }

    fn finish(&mut self) -> GcStats {
        loop {
            match self.slice(1) {
                MarkStep::Done(stats) => return stats,
                MarkStep::Marking(_) => {}
                MarkStep::Idle => panic!("no mark running"),
            }
        }
    }
}

/// Root C; root R → a chain of 30 → A → B. C is traced first (the first root in the
/// table), A only after the chain. Returns (C, B, A).
fn c_and_a_far_behind(s: &mut Slow, drops: &Drops) -> (Handle<Link>, Handle<Link>, Handle<Link>) {
    let c = s.heap.insert(Link::new(drops, 0, vec![]));
    let (b, a) = a_far_behind(s, drops, c);
    (c, b, a)
}

/// Root `first` (which must be the table's first object); root R → a chain of 30 → A → B;
/// the mark started and a few slices in: `first` traced, A not yet. Returns (B, A).
fn a_far_behind(s: &mut Slow, drops: &Drops, first: Handle<Link>) -> (Handle<Link>, Handle<Link>) {
    let b = s.heap.insert(Link::new(drops, 1, vec![]));
    let a = s.heap.insert(Link::new(drops, 2, vec![b]));
    let mut head = a;
    for id in 3..33 {
        head = s.heap.insert(Link::new(drops, id, vec![head]));
    }
    s.heap.add_to_root(first.raw()).unwrap();
    s.heap.add_to_root(head.raw()).unwrap();
    assert!(s.heap.start_incremental_collection(CollectOptions::FULL));
    assert!(s.until(MarkPhase::Reach));
    // A few one-visit slices: C is traced, A is still far down the chain.
    for _ in 0..3 {
        assert!(matches!(s.slice(1), MarkStep::Marking(_)));
    }
    (b, a)
}

#[test]
fn a_handle_moved_behind_the_mark_survives() {
    // The classic lost object: A → B, C traced already (black), A not yet. The game stores
    // B into C and removes it from A. Without a barrier B would be white with only a black
    // object pointing at it, and purged.
    let drops = Drops::default();
    let mut s = Slow::new();
    let (c, b, a) = c_and_a_far_behind(&mut s, &drops);
    s.heap.get_mut(c).unwrap().edges.push(b);
    s.heap.get_mut(a).unwrap().edges.clear();
    let stats = s.finish();
    assert!(stats.mark_slices > 5, "{stats}");
    assert!(stats.retraced >= 1, "C traced again (A was still white): {stats}");
    assert!(s.heap.get(b).is_some(), "B is reachable through C when the mark ends");
    assert_eq!(drops.total(), 0, "everything is reachable");
}

#[test]
fn a_store_made_by_a_tick_behind_the_mark_is_seen() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let (c, b, a) = c_and_a_far_behind(&mut s, &drops);
    // B leaves A for C's weak stash; a tick then makes the stash C's edges.
    s.heap.get_mut(c).unwrap().stash.push(b);
    s.heap.get_mut(a).unwrap().edges.clear();
    s.slice(1); // the notes of C and A traced: B is in neither's edges
    s.heap.tick::<Link>(|l| {
        let mut stash = std::mem::take(&mut l.stash);
        l.edges.append(&mut stash);
    });
    s.finish();
    assert!(s.heap.get(b).is_some() && drops.times(1) == 0, "stored by the tick into C");
}

#[test]
fn a_store_made_through_iter_mut_behind_the_mark_is_seen() {
    // As the tick above, through the arena's `iter_mut` (what `World::iter_mut` lends).
    let drops = Drops::default();
    let mut s = Slow::new();
    let (c, b, a) = c_and_a_far_behind(&mut s, &drops);
    s.heap.get_mut(c).unwrap().stash.push(b);
    s.heap.get_mut(a).unwrap().edges.clear();
    s.slice(1);
    for (_, l) in s.heap.iter_mut::<Link>() {
        let mut stash = std::mem::take(&mut l.stash);
        l.edges.append(&mut stash);
    }
    s.finish();
    assert!(s.heap.get(b).is_some() && drops.times(1) == 0, "stored through iter_mut into C");
}

#[test]
fn a_store_made_through_get_disjoint_mut_behind_the_mark_is_seen() {
    // C takes B from A, both lent at once (what `World::get_disjoint_mut` lends).
    let drops = Drops::default();
    let mut s = Slow::new();
    let (c, b, a) = c_and_a_far_behind(&mut s, &drops);
    s.slice(1);
    let [c_link, a_link] = s.heap.get_disjoint_mut([c, a]).unwrap();
    c_link.edges.push(b);
    a_link.edges.clear();
    s.finish();
    assert!(s.heap.get(b).is_some() && drops.times(1) == 0, "stored through get_disjoint_mut into C");
}

#[test]
fn a_whole_collection_drops_a_running_mark_and_decides_anew() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let (c, b, a) = c_and_a_far_behind(&mut s, &drops);
    s.heap.get_mut(c).unwrap().stash.push(b); // weak
    s.heap.get_mut(a).unwrap().edges.clear();
    let stats = s.heap.collect_garbage(CollectOptions::FULL);
    assert!(!s.heap.is_marking());
    assert_eq!((stats.cycles, stats.mark_slices, stats.purged), (1, 1, 1), "{stats}");
    assert_eq!(drops.times(1), 1, "B is reachable from nothing");
    assert_eq!(s.slice(1), MarkStep::Idle);
}

#[test]
fn objects_made_rooted_or_referenced_during_the_mark_survive() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let held: Arc<Mutex<Vec<RawHandle>>> = Arc::default();
    let report = Arc::clone(&held);
    let _referencer = s.heap.add_referencer(move |t| report.lock().unwrap().iter().for_each(|&h| t.handle(h)));
    let loose: Vec<Handle<Link>> = (0..40).map(|id| s.heap.insert(Link::new(&drops, id, vec![]))).collect();
    let root = s.heap.insert(Link::new(&drops, 40, vec![]));
    s.heap.add_to_root(root.raw()).unwrap();
    assert!(s.heap.start_incremental_collection(CollectOptions::FULL));
    assert!(s.until(MarkPhase::Flag));
    // Mid-flag and mid-reach: a guard, a manual root, a referencer's handle, a new object
    // stored in the (by then traced) root.
    let guard = s.heap.root(loose[0]).unwrap();
    s.heap.add_to_root(loose[39].raw()).unwrap();
    assert!(s.until(MarkPhase::Reach));
    held.lock().unwrap().push(loose[20].raw());
    let born = s.heap.insert(Link::new(&drops, 41, vec![loose[30]]));
    s.heap.get_mut(root).unwrap().edges.push(born);
    let stats = s.finish();
    for (i, h) in loose.iter().enumerate() {
        let kept = [0, 20, 30, 39].contains(&i);
        assert_eq!(s.heap.get(*h).is_some(), kept, "object {i}: {stats}");
    }
    assert!(s.heap.get(born).is_some());
    drop(guard);
}

#[test]
fn a_big_heap_marks_in_many_slices_and_keeps_the_same_objects_as_a_whole_mark() {
    let n = if cfg!(miri) { 500 } else { 100_000 };
    let mut heap = Heap::with_config(ArenaConfig::DEFAULT, GcSettings::SINGLE_THREADED).unwrap();
    let drops = Drops::default();
    // A long list from a root, and an unreachable half.
    let mut prev: Option<Handle<Link>> = None;
    let mut kept = Vec::new();
    for id in 0..n {
        let h = heap.insert(Link::new(&drops, 0, prev.into_iter().collect()));
        if id % 2 == 0 {
            prev = Some(h);
            kept.push(h);
        }
    }
    heap.add_to_root(prev.unwrap().raw()).unwrap();
    let in_slices = |heap: &mut Heap| {
        assert!(heap.start_incremental_collection(CollectOptions::INCREMENTAL));
        let mut slices = 0;
        loop {
            slices += 1;
            if let MarkStep::Done(stats) = heap.mark_slice(Duration::from_micros(20)) {
                break (stats, slices);
            }
        }
    };
    let (stats, slices) = in_slices(&mut heap);
    assert!(stats.mark_slices > 1 && stats.mark_slices == slices, "{stats}");
    assert_eq!(stats.unreachable, n / 2, "{stats}");
    heap.purge(None);
    assert!(kept.iter().all(|&h| heap.get(h).is_some()));
    let mut whole = heap.collect_garbage(CollectOptions::FULL);
    assert_eq!((whole.purged, whole.mark_slices), (0, 1));
    // Wall-clock times: on a busy machine one slice can be descheduled for longer than the
    // whole mark takes undisturbed, so the comparison gets a few tries (the same marks
    // again over the kept half). Slices that were never shorter fail every one.
    let mut incremental = stats;
    for _ in 0..4 {
        if whole.longest_slice > incremental.longest_slice {
            break;
        }
        incremental = in_slices(&mut heap).0;
        whole = heap.collect_garbage(CollectOptions::FULL);
    }
    assert!(whole.longest_slice > incremental.longest_slice, "whole {whole}\nincremental {incremental}");
}

#[test]
fn a_cluster_made_during_the_mark_is_reached_whole() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let first = s.heap.insert(Link::new(&drops, 100, vec![]));
    let parts: Vec<Handle<Link>> = (101..120).map(|id| s.heap.insert(Link::new(&drops, id, vec![]))).collect();
    a_far_behind(&mut s, &drops, first);
    // `first` is traced by now; the cluster makes it keep the rest.
    let members: Vec<RawHandle> = parts.iter().map(|h| h.raw()).collect();
    s.heap.create_cluster(first.raw(), &members).unwrap();
    let stats = s.finish();
    assert!(parts.iter().all(|&h| s.heap.get(h).is_some()), "{stats}");
    assert_eq!((drops.total(), stats.clusters_kept), (0, 1));
}

#[test]
fn garbage_marked_during_the_mark_is_purged_even_if_reached() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let first = s.heap.insert(Link::new(&drops, 100, vec![]));
    let c = s.heap.insert(Link::new(&drops, 101, vec![]));
    s.heap.get_mut(first).unwrap().edges.push(c);
    a_far_behind(&mut s, &drops, first);
    s.slice(1); // `first` traced, `c` claimed
    s.heap.mark_as_garbage(c.raw()).unwrap();
    let stats = s.finish();
    assert_eq!((stats.purged, drops.times(101)), (1, 1), "{stats}");
    assert!(s.heap.get(first).is_some());
}

#[test]
fn update_marks_in_slices_over_frames_then_collects() {
    let settings = GcSettings {
        time_between_collections: Some(Duration::from_secs(1)),
        purge_budget: None,
        incremental_mark_budget: Some(Duration::from_micros(10)),
        ..GcSettings::SINGLE_THREADED
    };
    let mut heap = Heap::with_config(ArenaConfig::DEFAULT, settings).unwrap();
    let drops = Drops::default();
    let mut prev = None;
    for id in 0..50_000 {
        prev = Some(heap.insert(Link::new(&drops, id % 7, prev.into_iter().collect())));
    }
    heap.add_to_root(prev.unwrap().raw()).unwrap();
    for _ in 0..1000 {
        heap.insert(Link::new(&drops, 8, vec![])); // garbage
    }
    assert_eq!(heap.update(Duration::from_millis(500)), GcStep::Idle);
    let mut marked = 0;
    let mut dt = Duration::from_millis(500);
    let stats = loop {
        match heap.update(std::mem::replace(&mut dt, Duration::from_micros(100))) {
            GcStep::Marked(p) => {
                marked += 1;
                assert_eq!(p.slices, marked);
            }
            GcStep::Collected(stats) => break stats,
            other => panic!("{other:?}"),
        }
    };
    assert!(marked > 0);
    assert_eq!((stats.mark_slices, stats.purged), (marked + 1, 1000), "{stats}");
    assert_eq!(heap.update(Duration::from_millis(100)), GcStep::Idle, "the clock starts over");
    assert!(GcSettings { incremental_mark_budget: Some(Duration::ZERO), ..settings }.validate().is_err());
}

#[test]
fn the_gather_hides_an_unreached_cluster_whole() {
    let drops = Drops::default();
    let mut s = Slow::new();
    let objects: Vec<Handle<Link>> = (0..64).map(|id| s.heap.insert(Link::new(&drops, id, vec![]))).collect();
    // A cluster spread over four runs of the table, nobody reaching it.
    let members: Vec<RawHandle> = [5, 20, 40, 63].iter().map(|&i| objects[i].raw()).collect();
    s.heap.create_cluster(objects[0].raw(), &members).unwrap();
    assert!(s.heap.start_incremental_collection(CollectOptions::FULL));
    let mut gather_slices = 0;
    let stats = loop {
        match s.slice(1) {
            MarkStep::Marking(p) if p.phase == MarkPhase::Gather => {
                gather_slices += 1;
                let hidden = [0, 5, 20, 40, 63].map(|i| s.heap.get(objects[i]).is_none());
                assert!(hidden.iter().all(|&h| h == hidden[0]), "the cluster whole: {hidden:?}");
                assert!(hidden[0], "the first run, hidden in the gather's first slice");
            }
            MarkStep::Marking(_) => {}
            MarkStep::Done(stats) => break stats,
            MarkStep::Idle => unreachable!(),
        }
    };
    assert!(gather_slices > 1, "the gather took {gather_slices} slices");
    assert_eq!((stats.purged, stats.clusters_dissolved), (64, 1), "{stats}");
}

/// Found by the model test (it failed now and then: a rare program): an object made during
/// the mark, in a slab set up after it began, and marked as garbage before the gather, was
/// left out of the gather (it walked only the runs of the mark's start) and survived.
#[test]
fn garbage_made_during_the_mark_is_gathered() {
    use Op::*;
    let add = || Add(vec![], false);
    let mut ops = vec![add(), ManualRoot(0), ManualRoot(0), add(), add(), Unrefer, add(), add(), add(), Refer(0)];
    ops.extend([Collect, add(), Edge(0, 0)]);
    ops.extend((0..8).map(|_| add()));
    ops.push(Start { verify: false });
    ops.extend((0..6).map(|_| add()));
    ops.push(Slice(1));
    ops.extend((0..3).map(|_| add()));
    ops.push(Garbage(21));
    run(ops).unwrap();
}
