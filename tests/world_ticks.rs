//! Tick control in the World (src/schedule.rs): dormant objects under every policy and
//! through the collector, and tick functions run every N frames, in a budgeted
//! round-robin and in declared groups.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use respawn::{
    GcSettings, Handle, Object, Policy, PoolConfig, PoolError, Poolable, TickContext, TickError, TickFunction,
    TickGroup, Trace, World,
};

#[derive(Trace, Object)]
struct Npc {
    id: u64,
    ticks: u32,
}

impl Poolable for Npc {
    fn create() -> Self {
        Npc { id: u64::MAX, ticks: 0 }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// Holds handles, so the collector keeps what it lists.
#[derive(Trace, Object)]
struct Town {
    npcs: Vec<Handle<Npc>>,
}

fn world(policy: Policy) -> World {
    World::builder().pool::<Npc>(PoolConfig { policy, ..PoolConfig::ON_DEMAND }).build().unwrap()
}

fn spawn(world: &mut World, id: u64) -> Handle<Npc> {
    world.spawn_with(|n: &mut Npc| n.id = id)
}

fn ticked_ids(world: &mut World) -> Vec<u64> {
    let mut ids = Vec::new();
    world.tick::<Npc>(|n| ids.push(n.id));
    ids.sort_unstable();
    ids
}

#[test]
fn dormant_objects_are_skipped_by_tick_and_par_tick_and_seen_by_iter() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let handles: Vec<_> = (0..100).map(|id| spawn(&mut world, id)).collect();
        for h in handles.iter().step_by(2) {
            world.set_dormant(*h, true).unwrap();
        }
        let odd: Vec<u64> = (0..100).filter(|i| i % 2 == 1).collect();
        assert_eq!(ticked_ids(&mut world), odd, "{policy}");
        let seen = Mutex::new(Vec::new());
        world.par_tick::<Npc>(|n| seen.lock().unwrap().push(n.id));
        let mut seen = seen.into_inner().unwrap();
        seen.sort_unstable();
        assert_eq!(seen, odd, "{policy}");
        assert_eq!(world.iter::<Npc>().count(), 100, "{policy}: alive, so iterated");
        assert_eq!(world.iter_mut::<Npc>().count(), 100, "{policy}");
        assert!(handles.iter().all(|&h| world.get(h).is_some()), "{policy}: alive, so resolved");
        assert_eq!(world.heap().stats::<Npc>().unwrap().dormant, 50, "{policy}");
        assert!(world.is_dormant(handles[0]) && !world.is_dormant(handles[1]), "{policy}");
    }
}

#[test]
fn dormant_objects_live_and_die_by_the_collector_like_any_other() {
    for policy in Policy::ALL {
        let config = PoolConfig { policy, ..PoolConfig::ON_DEMAND };
        let mut world = World::builder().pool::<Npc>(config).collected::<Npc>().build().unwrap();
        let kept: Vec<_> = (0..10).map(|id| spawn(&mut world, id)).collect();
        let lost: Vec<_> = (10..20).map(|id| spawn(&mut world, id)).collect();
        let town = world.insert(Town { npcs: kept.clone() });
        let _root = world.root(town).unwrap();
        for &h in kept.iter().chain(&lost) {
            world.set_dormant(h, true).unwrap();
        }

        let gc = world.collect_garbage();
        assert_eq!(gc.purged, 10, "{policy}: the unreachable dormant ones are purged");
        assert!(kept.iter().all(|&h| world.get(h).is_some() && world.is_dormant(h)), "{policy}: kept, still dormant");
        assert!(lost.iter().all(|&h| world.get(h).is_none()), "{policy}");
        assert_eq!(world.heap().stats::<Npc>().unwrap().dormant, 10, "{policy}: the purged ones' dormancy ended");
        assert!(ticked_ids(&mut world).is_empty(), "{policy}");
        world.set_dormant(kept[3], false).unwrap();
        assert_eq!(ticked_ids(&mut world), [3], "{policy}");
    }
}

#[test]
fn a_destroyed_dormant_objects_cell_is_reissued_awake_under_every_policy() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let first: Vec<_> = (0..64).map(|id| spawn(&mut world, id)).collect();
        for &h in &first {
            world.set_dormant(h, true).unwrap();
        }
        for &h in &first {
            world.destroy(h).unwrap();
            assert!(matches!(world.set_dormant(h, false), Err(PoolError::Stale | PoolError::Arena(_))), "{policy}");
            assert!(!world.is_dormant(h), "{policy}: a stale handle is never dormant");
        }
        world.collect_garbage();
        world.end_frame();
        assert_eq!(world.heap().stats::<Npc>().unwrap().dormant, 0, "{policy}");

        let cells: HashSet<u32> = first.iter().map(|h| h.index()).collect();
        let second: Vec<_> = (100..164).map(|id| spawn(&mut world, id)).collect();
        let reused = second.iter().filter(|h| cells.contains(&h.index())).count();
        if policy == Policy::Reuse {
            assert_eq!(reused, 64, "Reuse: the same objects, in the same cells");
        }
        assert!(second.iter().all(|&h| !world.is_dormant(h)), "{policy}: {reused} cells reused, all awake");
        assert_eq!(ticked_ids(&mut world), (100..164).collect::<Vec<_>>(), "{policy}");
    }
}

#[test]
fn bad_handles_are_refused_with_a_clear_error() {
    let mut world = world(Policy::Default);
    let h = spawn(&mut world, 0);
    world.destroy(h).unwrap();
    // Garbage awaiting its purge: hidden.
    let err = world.set_dormant(h, true).unwrap_err();
    assert!(matches!(err, PoolError::Arena(respawn::ArenaError::Hidden(_))), "{err}");
    world.collect_garbage();
    assert!(matches!(world.set_dormant(h, true), Err(PoolError::Stale)));
    let permanent = world.spawn_permanent(Npc { id: 1, ticks: 0 }).unwrap();
    let err = world.set_dormant(permanent, true).unwrap_err();
    assert!(matches!(err, PoolError::Arena(respawn::ArenaError::Permanent)), "{err}");
}

/// A tick function that logs `(name, frame)` each time it runs (once per run, not per
/// object), and the log.
/// Which function ran in which frame.
type RunLog = Arc<Mutex<Vec<(&'static str, u64)>>>;

fn logging(name: &'static str) -> (RunLog, impl FnMut(&mut Npc, &TickContext) + Send) {
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&log);
    let f = move |_: &mut Npc, cx: &TickContext| {
        let mut log = writer.lock().unwrap();
        if log.last() != Some(&(name, cx.frame)) {
            log.push((name, cx.frame));
        }
    };
    (log, f)
}

#[test]
fn every_n_ticks_on_the_frames_its_offset_names() {
    let mut world = world(Policy::Reuse);
    spawn(&mut world, 0);
    let (every3, f) = logging("every 3, offset 1");
    world.add_tick(TickFunction::new(f).every(3).offset(1)).unwrap();
    let (every1, f) = logging("every frame");
    world.add_tick(TickFunction::new(f)).unwrap();
    let dts = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&dts);
    world
        .add_tick(TickFunction::new(move |_: &mut Npc, cx: &TickContext| writer.lock().unwrap().push(cx.dt)).every(4))
        .unwrap();
    for frame in 0..12 {
        assert_eq!(world.frame(), frame);
        world.run_ticks();
        world.run_ticks(); // a second call in a frame runs nothing again
        world.end_frame_with(Duration::from_millis(10 * (frame + 1)));
    }
    let frames = |log: &Mutex<Vec<(&str, u64)>>| log.lock().unwrap().iter().map(|&(_, f)| f).collect::<Vec<_>>();
    assert_eq!(frames(&every3), [1, 4, 7, 10]);
    assert_eq!(frames(&every1), (0..12).collect::<Vec<_>>());
    // Runs at frames 0, 4, 8: the first is told the last frame's length (none yet), then the
    // four frames since: 10+20+30+40 ms, then 50+60+70+80 ms.
    let ms = |d: &Duration| d.as_millis();
    assert_eq!(dts.lock().unwrap().iter().map(ms).collect::<Vec<_>>(), [0, 100, 260]);
}

#[test]
fn frames_of_the_longest_duration_saturate_every_clock_and_later_frames_go_on() {
    // Every clock a frame's length feeds: the tick functions', the collector's (no
    // collection is scheduled, so it never restarts) and the idle trim's.
    let config = PoolConfig { idle_trim: Some(Duration::from_secs(3600)), ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool::<Npc>(config).gc(GcSettings::SINGLE_THREADED).build().unwrap();
    let npc = spawn(&mut world, 0);
    let dts = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&dts);
    world
        .add_tick(TickFunction::new(move |_: &mut Npc, cx: &TickContext| writer.lock().unwrap().push(cx.dt)).every(2))
        .unwrap();
    let frames = [16, u64::MAX, u64::MAX, u64::MAX, 16, 16, 16];
    for ms in frames {
        world.run_ticks();
        let dt = if ms == u64::MAX { Duration::MAX } else { Duration::from_millis(ms) };
        assert_eq!(world.end_frame_with(dt).dt, dt);
    }
    assert_eq!(world.frame(), frames.len() as u64);
    // Frames 0, 2, 4, 6: none yet, then 16 ms and the longest (saturated), then nothing the
    // saturated clock can tell apart.
    assert_eq!(*dts.lock().unwrap(), [Duration::ZERO, Duration::MAX, Duration::ZERO, Duration::ZERO]);
    assert_eq!(ticked_ids(&mut world), [0]);
    world.destroy(npc).unwrap();
    world.end_frame();
    assert_eq!(ticked_ids(&mut world), Vec::<u64>::new());
}

#[test]
fn a_round_robin_ticks_each_object_once_a_cycle_across_spawns_and_destroys() {
    let mut world = world(Policy::Reuse);
    let log = Arc::new(Mutex::new(Vec::new()));
    let writer = Arc::clone(&log);
    world
        .add_tick(
            TickFunction::new(move |n: &mut Npc, cx: &TickContext| writer.lock().unwrap().push((n.id, cx.cycle)))
                .budget(4),
        )
        .unwrap();
    let mut live: Vec<Handle<Npc>> = (0..10).map(|id| spawn(&mut world, id)).collect();

    // A static set: 4 + 4 + 2, three frames a cycle, each object once.
    let mut per_frame = Vec::new();
    for _ in 0..6 {
        world.run_ticks();
        world.end_frame();
        per_frame.push(std::mem::take(&mut *log.lock().unwrap()));
    }
    assert_eq!(per_frame.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 2, 4, 4, 2]);
    for (c, cycle) in per_frame.chunks(3).enumerate() {
        assert!(cycle.concat().iter().all(|&(_, of)| of == c as u64));
        let mut ids: Vec<u64> = cycle.concat().iter().map(|&(id, _)| id).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..10).collect::<Vec<_>>());
    }

    // Changes between frames: ticked at most once a cycle, and whoever stays awake for a
    // whole cycle is ticked in it.
    let mut next_id = 10;
    let mut cycle = 2;
    let mut ticked: HashSet<u64> = HashSet::new();
    let ids = |world: &World, live: &[Handle<Npc>]| -> HashSet<u64> {
        live.iter().filter(|&&h| !world.is_dormant(h)).map(|&h| world.get(h).unwrap().id).collect()
    };
    let mut steady = ids(&world, &live);
    for frame in 0..90 {
        if frame % 3 == 0 {
            let gone = live.remove(frame % live.len());
            world.destroy(gone).unwrap();
        }
        if frame % 2 == 0 {
            live.push(spawn(&mut world, next_id));
            next_id += 1;
        }
        if frame % 5 == 0 {
            let h = live[frame % live.len()];
            world.set_dormant(h, !world.is_dormant(h)).unwrap();
        }
        let awake = ids(&world, &live);
        steady.retain(|id| awake.contains(id));
        world.run_ticks();
        world.end_frame();
        for (id, c) in std::mem::take(&mut *log.lock().unwrap()) {
            if c != cycle {
                assert_eq!(c, cycle + 1, "frame {frame}: cycles follow one another");
                assert!(steady.is_subset(&ticked), "frame {frame}: awake all cycle {cycle} but not ticked");
                (cycle, ticked, steady) = (c, HashSet::new(), awake.clone());
            }
            assert!(awake.contains(&id), "frame {frame}: {id} is not awake");
            assert!(ticked.insert(id), "frame {frame}: {id} ticked twice in cycle {cycle}");
        }
    }
    assert!(cycle >= 12, "{cycle} cycles in 90 frames");
}

#[test]
fn groups_run_in_order_and_a_group_in_the_order_added() {
    let mut world = world(Policy::Reuse);
    spawn(&mut world, 0);
    let log = Arc::new(Mutex::new(Vec::new()));
    let add = |world: &mut World, name: &'static str, group: TickGroup| {
        let log = Arc::clone(&log);
        let f = move |_: &mut Npc, _: &TickContext| log.lock().unwrap().push(name);
        world.add_tick(TickFunction::new(f).group(group)).unwrap()
    };
    add(&mut world, "post A", TickGroup::PostPhysics);
    add(&mut world, "last", TickGroup::PostUpdateWork);
    add(&mut world, "pre A", TickGroup::PrePhysics);
    let during = add(&mut world, "during", TickGroup::DuringPhysics);
    add(&mut world, "pre B", TickGroup::PrePhysics);
    add(&mut world, "post B", TickGroup::PostPhysics);

    world.run_ticks();
    assert_eq!(*log.lock().unwrap(), ["pre A", "pre B", "during", "post A", "post B", "last"]);
    world.end_frame();

    log.lock().unwrap().clear();
    assert!(world.remove_tick(during));
    assert!(!world.remove_tick(during), "removed already");
    world.run_tick_group(TickGroup::PostPhysics);
    log.lock().unwrap().push("physics? no: after PostPhysics, by hand");
    world.run_ticks(); // the groups not run yet this frame
    assert_eq!(
        *log.lock().unwrap(),
        ["post A", "post B", "physics? no: after PostPhysics, by hand", "pre A", "pre B", "last"]
    );
}

#[test]
fn parallel_tick_functions_skip_dormant_objects_too() {
    let mut world = world(Policy::Reuse);
    let handles: Vec<_> = (0..1000).map(|id| spawn(&mut world, id)).collect();
    for h in handles.iter().step_by(10) {
        world.set_dormant(*h, true).unwrap();
    }
    world.add_tick(TickFunction::parallel(|n: &mut Npc, _: &TickContext| n.ticks += 1)).unwrap();
    world.add_tick(TickFunction::parallel(|n: &mut Npc, _: &TickContext| n.ticks += 10).budget(300)).unwrap();
    for _ in 0..3 {
        world.run_ticks();
        world.end_frame();
    }
    // 900 awake: the budgeted one covers them once in three frames.
    for (i, &h) in handles.iter().enumerate() {
        let expected = if i % 10 == 0 { 0 } else { 13 };
        assert_eq!(world.get(h).unwrap().ticks, expected, "{i}");
    }
}

#[test]
fn bad_tick_functions_are_refused_with_the_fix() {
    let mut world = world(Policy::Reuse);
    let noop = |_: &mut Npc, _: &TickContext| {};
    let err = world.add_tick(TickFunction::new(noop).every(0)).unwrap_err();
    assert_eq!(err, TickError::ZeroInterval);
    assert!(err.to_string().contains("every(1)"), "{err}");
    let err = world.add_tick(TickFunction::new(noop).every(4).offset(4)).unwrap_err();
    assert_eq!(err, TickError::OffsetBeyondInterval { every: 4, offset: 4 });
    assert!(err.to_string().contains("0..4"), "{err}");
    let err = world.add_tick(TickFunction::new(noop).budget(0)).unwrap_err();
    assert_eq!(err, TickError::ZeroBudget);
    assert!(err.to_string().contains("budget(1)"), "{err}");
}

#[test]
fn a_panicking_tick_function_leaves_the_schedule_in_place() {
    let mut world = world(Policy::Reuse);
    let h = spawn(&mut world, 0);
    let mut first = true;
    world
        .add_tick(TickFunction::new(move |_: &mut Npc, _: &TickContext| {
            if std::mem::take(&mut first) {
                panic!("first run");
            }
        }))
        .unwrap();
    world.add_tick(TickFunction::new(|n: &mut Npc, _: &TickContext| n.ticks += 1)).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| world.run_ticks()));
    assert!(caught.is_err());
    assert_eq!(world.get(h).unwrap().ticks, 0, "the panic stopped the frame's ticks");
    world.end_frame();
    world.run_ticks();
    assert_eq!(world.get(h).unwrap().ticks, 1, "both functions are still there");
}

mod model {
    //! Random programs of spawns, destroys, dormancy toggles, ticks, collections and frames
    //! under each policy, against a `HashMap` of the live objects: after every step the
    //! objects `tick` and `par_tick` visit are exactly the live, awake ones, and `is_dormant`
    //! and the dormant count agree with the model. Live objects stay reachable (a rooted
    //! `Town` lists them), so a collection purges only what was destroyed, and the pools'
    //! cells are reused (`Reuse` and `Purge` at once, `Default` after a collection).

    use std::collections::HashMap;
    use std::sync::Mutex;

    use proptest::prelude::*;

    use super::*;

    #[derive(Debug, Clone)]
    enum Op {
        Spawn,
        Destroy(usize),
        Dormant(usize, bool),
        Tick,
        ParTick,
        Collect,
        EndFrame,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            5 => Just(Op::Spawn),
            3 => any::<usize>().prop_map(Op::Destroy),
            4 => (any::<usize>(), any::<bool>()).prop_map(|(p, d)| Op::Dormant(p, d)),
            2 => Just(Op::Tick),
            1 => Just(Op::ParTick),
            1 => Just(Op::Collect),
            1 => Just(Op::EndFrame),
        ]
    }

    fn run(policy: Policy, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let mut world = world(policy);
        let town = world.insert(Town { npcs: Vec::new() });
        let _root = world.root(town).unwrap();
        let mut live: HashMap<Handle<Npc>, (u64, bool)> = HashMap::new();
        // `Default`: destroyed dormant objects, garbage until the next collection purges
        // them, and counted dormant until then (as `len` counts them).
        let mut pending = 0;
        let mut next_id = 0;
        for op in ops {
            match op {
                Op::Spawn => {
                    let h = spawn(&mut world, next_id);
                    prop_assert!(!world.is_dormant(h), "{policy}: a spawn starts awake");
                    live.insert(h, (next_id, false));
                    world.get_mut(town).unwrap().npcs.push(h);
                    next_id += 1;
                }
                Op::Destroy(p) | Op::Dormant(p, _) if !live.is_empty() => {
                    let mut keys: Vec<_> = live.keys().copied().collect();
                    keys.sort();
                    let h = keys[p % keys.len()];
                    if let Op::Dormant(_, dormant) = op {
                        world.set_dormant(h, dormant).unwrap();
                        live.get_mut(&h).unwrap().1 = dormant;
                    } else {
                        world.destroy(h).unwrap();
                        let (_, dormant) = live.remove(&h).unwrap();
                        pending += usize::from(dormant && policy == Policy::Default);
                        world.get_mut(town).unwrap().npcs.retain(|&n| n != h);
                        prop_assert!(world.set_dormant(h, true).is_err(), "{policy}: stale at once");
                    }
                }
                Op::Destroy(_) | Op::Dormant(..) => {}
                Op::Tick | Op::ParTick => {
                    let seen = Mutex::new(Vec::new());
                    if matches!(op, Op::Tick) {
                        world.tick::<Npc>(|n| seen.lock().unwrap().push(n.id));
                    } else {
                        world.par_tick::<Npc>(|n| seen.lock().unwrap().push(n.id));
                    }
                    let mut seen = seen.into_inner().unwrap();
                    seen.sort_unstable();
                    let mut awake: Vec<u64> = live.values().filter(|(_, d)| !d).map(|&(id, _)| id).collect();
                    awake.sort_unstable();
                    prop_assert_eq!(seen, awake, "{}", policy);
                }
                Op::Collect => {
                    world.collect_garbage();
                    pending = 0;
                }
                Op::EndFrame => {
                    world.end_frame();
                }
            }
            for (&h, &(_, dormant)) in &live {
                prop_assert_eq!(world.is_dormant(h), dormant, "{}", policy);
            }
            let dormant = live.values().filter(|(_, d)| *d).count() + pending;
            prop_assert_eq!(world.heap().stats::<Npc>().unwrap().dormant, dormant, "{}", policy);
        }
        Ok(())
    }

    proptest! {
        #![proptest_config(respawn_testkit::proptest::config(64))]

        #[test]
        fn ticks_visit_exactly_the_live_awake_objects_under_every_policy(
            ops in prop::collection::vec(op(), 1..200),
            policy in prop::sample::select(Policy::ALL.to_vec()),
        ) {
            run(policy, ops)?;
        }
    }
}

#[test]
fn tick_with_and_par_tick_with_skip_dormant_objects() {
    let mut world = world(Policy::Reuse);
    let mobs: Vec<_> = (0..300).map(|i| spawn(&mut world, i)).collect();
    for &m in mobs.iter().step_by(3) {
        world.set_dormant(m, true).unwrap();
    }
    let applied = world.tick_with(|h, _: &mut Npc, cmds| cmds.destroy(h));
    assert_eq!(applied.applied, 200, "the awake two thirds destroyed");
    assert!(mobs.iter().step_by(3).all(|&m| world.get(m).is_some()), "dormant ones untouched");
    let applied = world.par_tick_with(|h, _: &mut Npc, cmds| cmds.destroy(h));
    assert_eq!(applied.applied, 0, "only dormant ones are left");
    for &m in mobs.iter().step_by(3) {
        world.set_dormant(m, false).unwrap();
    }
    assert_eq!(world.par_tick_with(|h, _: &mut Npc, cmds| cmds.destroy(h)).applied, 100);
}

/// A missile homing on an `Npc`: reads its target through the tick's view of the world.
#[derive(Trace, Object)]
struct Homing {
    target: Option<Handle<Npc>>,
    /// The target's id when last seen; `u64::MAX` once it is gone.
    seen: u64,
}

impl Poolable for Homing {
    fn create() -> Self {
        Homing { target: None, seen: 0 }
    }
}

#[test]
fn tick_reading_follows_targets_across_every_policy_s_destroy() {
    for policy in [Policy::Reuse, Policy::Purge, Policy::Default] {
        let mut world = World::builder()
            .pool::<Npc>(PoolConfig { policy, ..PoolConfig::ON_DEMAND })
            .pool::<Homing>(PoolConfig::ON_DEMAND)
            .build()
            .unwrap();
        let npcs: Vec<_> = (0..4).map(|id| spawn(&mut world, id)).collect();
        let missiles: Vec<_> =
            npcs.iter().map(|&n| world.spawn_with(move |m: &mut Homing| m.target = Some(n))).collect();
        let look = |world: &mut World| {
            world.tick_reading::<Homing>(|m, rest| {
                m.seen = m.target.and_then(|h| rest.get(h)).map_or(u64::MAX, |n| n.id);
            });
            missiles.iter().map(|&m| world.get(m).unwrap().seen).collect::<Vec<_>>()
        };
        assert_eq!(look(&mut world), [0, 1, 2, 3], "{policy:?}");
        // A destroyed target is gone for its missile at once, whatever its pool does with
        // the object, and stays gone when its cell is spawned again.
        world.destroy(npcs[1]).unwrap();
        world.end_frame();
        let again = spawn(&mut world, 9);
        assert_eq!(look(&mut world), [0, u64::MAX, 2, 3], "{policy:?}");
        world.collect_garbage();
        assert_eq!(look(&mut world), [0, u64::MAX, 2, 3], "{policy:?}");
        assert_eq!(world.get(again).unwrap().id, 9);
        // The parallel tick reads the same.
        world.par_tick_reading::<Homing>(|m, rest| m.seen = m.target.and_then(|h| rest.get(h)).map_or(7, |n| n.id));
        let seen: Vec<_> = missiles.iter().map(|&m| world.get(m).unwrap().seen).collect();
        assert_eq!(seen, [0, 7, 2, 3], "{policy:?}");
    }
}

#[test]
fn tick_reading_skips_dormant_objects_and_refuses_its_own_class() {
    let mut world = World::builder().pool::<Npc>(PoolConfig::ON_DEMAND).build().unwrap();
    let a = spawn(&mut world, 1);
    let b = spawn(&mut world, 2);
    world.set_dormant(b, true).unwrap();
    let mut refused = Vec::new();
    world.tick_reading::<Npc>(|n, rest| {
        n.ticks += 1;
        refused.push(matches!(rest.try_get(b), Err(respawn::ArenaError::Ticking(_))));
    });
    assert_eq!(refused, [true], "one awake Npc ticked; the view lends no Npc");
    assert_eq!((world.get(a).unwrap().ticks, world.get(b).unwrap().ticks), (1, 0));
}
