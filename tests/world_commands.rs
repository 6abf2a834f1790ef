//! Commands from inside `tick_with` and `par_tick_with`, and a standalone `CommandBuffer`:
//! a random-program model test against a plain map of which objects exist, the apply point
//! (stale from then on, not before), refused commands (a second destroy, a wrong class, a
//! stale outer) reported and changing nothing, `par_tick_with` equal to `tick_with` down to
//! the handles, and panics in the tick or in a command leaving the world consistent.

use std::collections::{BTreeMap, BTreeSet};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use proptest::prelude::*;
use respawn::{
    ArenaConfig, ArenaError, CommandBuffer, CommandKind, GcSettings, Handle, Object, Policy, PoolConfig, PoolError,
    Poolable, SlabConfig, Trace, World,
};

/// A ticked object. `id` names it for the model (a `Reuse` pool resets it to `u64::MAX`).
#[derive(Trace, Object)]
struct Unit {
    #[trace(skip)]
    id: u64,
    hp: u32,
}

impl Poolable for Unit {
    fn create() -> Self {
        Unit { id: u64::MAX, hp: 0 }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// What a unit leaves behind: another class, spawned by commands as a unit's sub-object.
#[derive(Trace, Object)]
struct Impact {
    #[trace(skip)]
    id: u64,
}

impl Poolable for Impact {
    fn create() -> Self {
        Impact { id: u64::MAX }
    }
    fn reset(&mut self) {
        *self = Self::create();
    }
}

/// A world of units and impacts under `policy`, with small slabs (so `par_tick_with` has
/// many chunks) and no scheduled collection (nothing roots the units). Deterministic: no
/// workers, and no slab prepared ahead (a slab the background thread prepares may be
/// granted out of address order, which would move objects and handles between runs).
fn world(policy: Policy) -> World {
    let pool = PoolConfig { policy, ..PoolConfig::ON_DEMAND };
    let slab = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 512, huge_pages: false };
    World::builder()
        .pool::<Unit>(pool)
        .pool::<Impact>(pool)
        .arena(ArenaConfig { slab, ..ArenaConfig::DEFAULT })
        // No timed collections, and early purges whole: a purge within a budget stops by
        // the clock, and two worlds compared object for object must get the same cells back.
        .gc(GcSettings { time_between_collections: None, purge_budget: None, ..GcSettings::DEFAULT })
        .build()
        .unwrap()
}

fn mix(mut x: u64) -> u64 {
    // splitmix64's finaliser.
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// What a unit does in a tick of `seed`: a pure function of the seed and its id, so the
/// model can replay it.
#[derive(Clone, Copy, Debug)]
struct Decision {
    impact: Option<u64>,
    target: Option<usize>,
    spawn: Option<u64>,
    destroy_self: bool,
}

fn decide(seed: u64, id: u64, targets: usize) -> Decision {
    let h = mix(seed ^ mix(id));
    Decision {
        impact: (h % 5 == 0).then(|| mix(h ^ 1)),
        target: ((h >> 8) % 4 == 0 && targets > 0).then(|| (h >> 16) as usize % targets),
        spawn: ((h >> 24) % 6 == 0).then(|| mix(h ^ 2)),
        destroy_self: (h >> 32) % 5 == 0,
    }
}

/// Records a unit's decision as commands, in a fixed order.
fn record(d: Decision, me: Handle<Unit>, targets: &[Handle<Unit>], commands: &mut CommandBuffer) {
    if let Some(id) = d.impact {
        commands.spawn_sub_with(me, move |i: &mut Impact| i.id = id);
    }
    if let Some(k) = d.target {
        commands.destroy(targets[k]);
    }
    if let Some(id) = d.spawn {
        commands.spawn_with(move |u: &mut Unit| u.id = id);
    }
    if d.destroy_self {
        commands.destroy(me);
    }
}

/// The reference: which units and impacts exist, and the handles known dead.
#[derive(Default)]
struct Model {
    units: BTreeMap<u64, Handle<Unit>>,
    /// Impact id → its owner's id.
    impacts: BTreeMap<u64, u64>,
    dead: Vec<Handle<Unit>>,
    /// Units spawned by commands, whose handles the model learns from the world.
    unborn: BTreeSet<u64>,
}

/// A command as the model replays it.
enum Step {
    Impact { owner: u64, id: u64 },
    Destroy(Handle<Unit>),
    Spawn(u64),
}

impl Model {
    fn id_of(&self, h: Handle<Unit>) -> Option<u64> {
        self.units.iter().find(|(_, &u)| u == h).map(|(&id, _)| id)
    }

    fn kill(&mut self, id: u64) {
        let h = self.units.remove(&id).expect("a live unit");
        self.dead.push(h);
        self.impacts.retain(|_, owner| *owner != id);
    }

    /// Replays `steps` in order; returns the indices of the ones the world must refuse.
    fn replay(&mut self, steps: Vec<Step>) -> Vec<usize> {
        let mut refused = Vec::new();
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Step::Impact { owner, id } => {
                    if self.units.contains_key(&owner) {
                        self.impacts.insert(id, owner);
                    } else {
                        refused.push(i);
                    }
                }
                Step::Destroy(h) => match self.id_of(h) {
                    Some(id) => self.kill(id),
                    None => refused.push(i),
                },
                Step::Spawn(id) => {
                    self.unborn.insert(id);
                }
            }
        }
        refused
    }

    /// Learns the handles of the units spawned by commands, and checks the world against
    /// the model.
    fn check(&mut self, world: &World) -> Result<(), TestCaseError> {
        let seen: BTreeMap<u64, Handle<Unit>> = world.iter::<Unit>().map(|(h, u)| (u.id, h)).collect();
        prop_assert_eq!(seen.len(), world.iter::<Unit>().count(), "unit ids are unique");
        for id in std::mem::take(&mut self.unborn) {
            let h = *seen.get(&id).ok_or_else(|| TestCaseError::fail(format!("spawned unit {id} missing")))?;
            self.units.insert(id, h);
        }
        prop_assert_eq!(&seen, &self.units);
        for &h in &self.dead {
            prop_assert!(!world.contains(h), "a destroyed unit's handle {:?} resolves", h);
        }
        let impacts: BTreeSet<u64> = world.iter::<Impact>().map(|(_, i)| i.id).collect();
        prop_assert_eq!(impacts, self.impacts.keys().copied().collect::<BTreeSet<_>>());
        Ok(())
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A `tick_with` (or `par_tick_with`) in which units act by `decide`, with `stale` dead
    /// handles among the targets.
    Tick {
        seed: u64,
        parallel: bool,
        stale: usize,
    },
    /// A standalone buffer: destroys of some targets, spawns.
    Apply {
        seed: u64,
        n: usize,
    },
    /// A plain `World::destroy` of the `k`th live unit.
    Destroy(usize),
    /// A plain `World::spawn_with`.
    Spawn(u64),
    EndFrame,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (any::<u64>(), any::<bool>(), 0..4usize).prop_map(|(seed, parallel, stale)| Op::Tick { seed, parallel, stale }),
        2 => (any::<u64>(), 0..8usize).prop_map(|(seed, n)| Op::Apply { seed, n }),
        1 => any::<usize>().prop_map(Op::Destroy),
        3 => any::<u64>().prop_map(Op::Spawn),
        1 => Just(Op::EndFrame),
    ]
}

fn run(policy: Policy, initial: usize, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut world = world(policy);
    let mut model = Model::default();
    for i in 0..initial as u64 {
        let id = mix(i ^ 0xfeed);
        model.units.insert(id, world.spawn_with(|u: &mut Unit| u.id = id));
    }
    for op in ops {
        match op {
            Op::Tick { seed, parallel, stale } => {
                // Targets: every live unit and a few dead ones.
                let mut targets: Vec<Handle<Unit>> = model.units.values().copied().collect();
                targets.extend(model.dead.iter().rev().take(stale));
                // The tick visits in memory order, the order `iter` walks.
                let order: Vec<(Handle<Unit>, u64)> = world.iter::<Unit>().map(|(h, u)| (h, u.id)).collect();
                let mut steps = Vec::new();
                for &(h, id) in &order {
                    let d = decide(seed, id, targets.len());
                    if let Some(impact) = d.impact {
                        steps.push(Step::Impact { owner: id, id: impact });
                    }
                    if let Some(k) = d.target {
                        steps.push(Step::Destroy(targets[k]));
                    }
                    if let Some(spawn) = d.spawn {
                        steps.push(Step::Spawn(spawn));
                    }
                    if d.destroy_self {
                        steps.push(Step::Destroy(h));
                    }
                }
                let total = steps.len();
                let refused = model.replay(steps);
                let applied = if parallel {
                    world.par_tick_with::<Unit>(|h, u, commands| {
                        u.hp += 1;
                        record(decide(seed, u.id, targets.len()), h, &targets, commands);
                    })
                } else {
                    world.tick_with::<Unit>(|h, u, commands| {
                        u.hp += 1;
                        record(decide(seed, u.id, targets.len()), h, &targets, commands);
                    })
                };
                prop_assert_eq!((applied.applied, applied.failed), (total - refused.len(), refused.len()));
                let indices: Vec<usize> = world.command_failures().iter().map(|f| f.index).collect();
                prop_assert_eq!(indices, refused);
            }
            Op::Apply { seed, n } => {
                let mut targets: Vec<Handle<Unit>> = model.units.values().copied().collect();
                targets.extend(model.dead.iter().rev().take(2));
                let mut commands = CommandBuffer::new();
                let mut steps = Vec::new();
                for k in 0..n as u64 {
                    let h = mix(seed ^ k);
                    if h % 3 == 0 || targets.is_empty() {
                        let id = mix(h);
                        commands.spawn_with(move |u: &mut Unit| u.id = id);
                        steps.push(Step::Spawn(id));
                    } else {
                        let target = targets[(h >> 8) as usize % targets.len()];
                        commands.destroy(target);
                        steps.push(Step::Destroy(target));
                    }
                }
                let refused = model.replay(steps);
                let applied = world.apply(&mut commands);
                prop_assert!(commands.is_empty());
                prop_assert_eq!((applied.applied, applied.failed), (n - refused.len(), refused.len()));
            }
            Op::Destroy(k) => {
                if !model.units.is_empty() {
                    let id = *model.units.keys().nth(k % model.units.len()).unwrap();
                    world.destroy(model.units[&id]).unwrap();
                    model.kill(id);
                }
            }
            Op::Spawn(id) => {
                model.units.insert(id, world.spawn_with(|u: &mut Unit| u.id = id));
            }
            Op::EndFrame => {
                world.end_frame();
            }
        }
        model.check(&world)?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(respawn_testkit::proptest::scaled(64, 2))]

    /// Random ticks (serial and parallel) issuing random destroys, spawns and sub-object
    /// spawns, standalone buffers and plain calls between them, under each policy: after
    /// each step the world holds exactly the model's units and impacts, every handle the
    /// model knows dead is stale, and the world refused exactly the commands the model
    /// replay refused, at the same places in the order applied.
    #[test]
    fn commands_match_a_model(
        policy in prop::sample::select(Policy::ALL.to_vec()),
        initial in 0..300usize,
        ops in prop::collection::vec(op(), 1..24),
    ) {
        run(policy, initial, ops)?;
    }
}

#[test]
fn destroyed_objects_are_visited_and_resolve_until_the_tick_ends_and_are_stale_after() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let a = world.spawn_with(|u: &mut Unit| u.id = 1);
        let b = world.spawn_with(|u: &mut Unit| u.id = 2);
        let mut visited = Vec::new();
        // `a`, visited first, destroys `b`; `b` is visited all the same, and destroys `a`.
        let applied = world.tick_with::<Unit>(|h, u, commands| {
            visited.push(u.id);
            commands.destroy(if h == a { b } else { a });
        });
        assert_eq!(visited, [1, 2], "{policy:?}");
        assert_eq!((applied.applied, applied.failed), (2, 0), "{policy:?}");
        assert!(!world.contains(a) && !world.contains(b), "{policy:?}: stale from the apply point");
        assert_eq!(world.iter::<Unit>().count(), 0);
        // A later destroy of either is refused, as it would be without commands.
        assert!(world.destroy(a).is_err());
    }
}

#[test]
fn a_second_destroy_in_one_buffer_is_reported_and_changes_nothing() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let a = world.spawn_with(|u: &mut Unit| u.id = 1);
        let keep = world.spawn_with(|u: &mut Unit| u.id = 2);
        let applied = world.tick_with::<Unit>(|h, _, commands| {
            if h == a {
                commands.destroy(a);
                commands.destroy(a);
            }
        });
        assert_eq!((applied.applied, applied.failed), (1, 1), "{policy:?}");
        let [failure] = world.command_failures() else { panic!("one failure") };
        assert_eq!((failure.index, failure.kind, failure.handle), (1, CommandKind::Destroy, Some(a.raw())));
        assert!(matches!(failure.error, PoolError::AlreadyReleased | PoolError::Stale), "{policy:?}: {failure}");
        let message = failure.to_string();
        assert!(message.starts_with("command 1 (destroy of ") && message.contains("Unit"), "{message}");
        assert!(!world.contains(a) && world.contains(keep));
        // The failures are the last batch's: an empty batch has none.
        assert!(world.tick_with::<Unit>(|_, _, _| {}).is_ok());
        assert!(world.command_failures().is_empty());
    }
}

#[test]
fn refused_commands_are_reported_with_their_reason() {
    let mut world = world(Policy::Reuse);
    let unit = world.spawn_with(|u: &mut Unit| u.id = 1);
    let gone = world.spawn_with(|u: &mut Unit| u.id = 2);
    world.destroy(gone).unwrap();
    let rooted = world.spawn_with(|u: &mut Unit| u.id = 3);
    world.add_to_root(rooted).unwrap();

    let dropped = Arc::new(());
    let mut commands = CommandBuffer::new();
    // A handle of the wrong class (forged from a unit's).
    commands.destroy(Handle::<Impact>::from_raw(unit.raw()));
    // A stale handle, for each command that takes one.
    commands.destroy(gone);
    commands.set_outer(gone, Some(unit.raw()));
    commands.remove_from_root(gone);
    // A sub-object of a stale outer: nothing is spawned, and the closure is dropped unrun.
    let token = Arc::clone(&dropped);
    commands.spawn_sub_with(gone, move |i: &mut Impact| {
        let _keep = &token;
        i.id = 9;
    });
    // A rooted object cannot be destroyed ...
    commands.destroy(rooted);
    // ... until it is taken out of the root set, by an earlier command of the same batch.
    commands.remove_from_root(rooted);
    commands.destroy(rooted);

    let applied = world.apply(&mut commands);
    assert_eq!((applied.applied, applied.failed), (2, 6));
    let failures = world.command_failures();
    let kinds: Vec<_> = failures.iter().map(|f| (f.index, f.kind)).collect();
    assert_eq!(
        kinds,
        [
            (0, CommandKind::Destroy),
            (1, CommandKind::Destroy),
            (2, CommandKind::SetOuter),
            (3, CommandKind::RemoveFromRoot),
            (4, CommandKind::SpawnSub),
            (5, CommandKind::Destroy),
        ]
    );
    assert!(matches!(failures[0].error, PoolError::Arena(ArenaError::WrongClass { .. })), "{}", failures[0]);
    assert!(failures[0].class.ends_with("Impact"));
    for f in &failures[1..5] {
        assert_eq!(f.handle, Some(gone.raw()));
        assert!(matches!(f.error, PoolError::Stale | PoolError::AlreadyReleased | PoolError::Arena(_)), "{f}");
    }
    assert!(matches!(failures[5].error, PoolError::Arena(ArenaError::Rooted)), "{}", failures[5]);
    assert!(std::error::Error::source(&failures[5]).is_some());
    assert!(world.contains(unit), "the wrong-class destroy changed nothing");
    assert!(!world.contains(rooted));
    assert_eq!(world.iter::<Impact>().count(), 0);
    assert_eq!(Arc::strong_count(&dropped), 1, "the refused spawn's closure was dropped");
}

/// A world of `n` units with holes, and impacts owned by some: the same in every call.
fn populated(policy: Policy, n: u64) -> (World, Vec<Handle<Unit>>) {
    let mut world = world(policy);
    let units: Vec<_> = (0..n).map(|id| world.spawn_with(|u: &mut Unit| u.id = id)).collect();
    for &h in units.iter().step_by(7) {
        world.destroy(h).unwrap();
    }
    (world, units)
}

/// A tick that uses every command, depends on each object and its handle, and refuses
/// some (double and stale destroys).
fn busy(
    frame: u64,
    targets: &[Handle<Unit>],
) -> impl Fn(Handle<Unit>, &mut Unit, &mut CommandBuffer) + Sync + Send + '_ {
    move |h, u, commands| {
        u.hp += 1;
        let x = mix(u.id ^ frame);
        match x % 8 {
            0 => commands.destroy(h),
            1 => {
                let id = u.id;
                commands.spawn_sub_with(h, move |i: &mut Impact| i.id = id);
            }
            2 => commands.destroy(targets[(x >> 8) as usize % targets.len()]),
            3 => {
                let id = x;
                commands.spawn_with(move |n: &mut Unit| n.id = id);
                commands.destroy(h);
            }
            4 => commands.set_outer(h, Some(targets[(x >> 8) as usize % targets.len()].raw())),
            _ => {}
        }
    }
}

#[test]
fn par_tick_with_applies_what_tick_with_would_in_the_same_order() {
    for policy in Policy::ALL {
        let n = if cfg!(miri) { 300 } else { 16_000 };
        let (mut serial, targets) = populated(policy, n);
        let (mut parallel, same) = populated(policy, n);
        assert!(targets == same, "built alike");
        for frame in 0..4 {
            let a = serial.tick_with(busy(frame, &targets));
            let b = parallel.par_tick_with(busy(frame, &targets));
            assert_eq!(a, b, "{policy:?} frame {frame}");
            assert!(a.failed > 0 && a.applied > 0, "the tick exercises both");
            let failures = |w: &World| -> Vec<String> { w.command_failures().iter().map(|f| f.to_string()).collect() };
            assert!(failures(&serial) == failures(&parallel), "{policy:?} frame {frame}: the same failures");
            let units = |w: &World| -> Vec<(Handle<Unit>, u64, u32)> {
                w.iter::<Unit>().map(|(h, u)| (h, u.id, u.hp)).collect()
            };
            assert!(
                units(&serial) == units(&parallel),
                "{policy:?} frame {frame}: the same objects at the same handles"
            );
            let impacts =
                |w: &World| -> Vec<(Handle<Impact>, u64)> { w.iter::<Impact>().map(|(h, i)| (h, i.id)).collect() };
            assert!(impacts(&serial) == impacts(&parallel), "{policy:?} frame {frame}: the same impacts");
            serial.end_frame();
            parallel.end_frame();
        }
    }
}

#[test]
fn a_projectile_destroys_itself_and_leaves_an_impact_of_another_class() {
    let mut world = world(Policy::Reuse);
    let target = world.spawn_with(|u: &mut Unit| u.id = 1_000);
    let shots: Vec<_> = (0..10).map(|i| world.spawn_with(|u: &mut Unit| (u.id, u.hp) = (i, i as u32))).collect();
    for frame in 0..10 {
        let applied = world.tick_with::<Unit>(|h, shot, commands| {
            if shot.id >= 1_000 {
                return; // the target
            }
            shot.hp += 1;
            if shot.hp >= 10 {
                // A hit: the shot goes, an impact stays, stuck to the target.
                commands.destroy(h);
                let id = shot.id;
                commands.spawn_sub_with(target, move |i: &mut Impact| i.id = id);
            }
        });
        // Shot `9 - frame` reaches 10 this frame: one destroy and one spawn.
        assert_eq!((applied.applied, applied.failed), (2, 0), "frame {frame}");
    }
    assert!(shots.iter().all(|&h| !world.contains(h)));
    let impacts: BTreeSet<u64> = world.iter::<Impact>().map(|(_, i)| i.id).collect();
    assert_eq!(impacts, (0..10).collect());
    let stats = world.pool_stats::<Unit>().unwrap();
    assert_eq!(stats.recycled_reuse, 10, "each shot went back to its pool");
    // The impacts are the target's sub-objects: they go with it.
    world.destroy(target).unwrap();
    assert_eq!(world.iter::<Impact>().count(), 0);
}

/// Counts the init closures dropped (run or not).
struct Token(Arc<AtomicUsize>);

impl Drop for Token {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

#[test]
fn a_panic_in_the_tick_drops_the_commands_recorded_and_leaves_the_world_consistent() {
    for parallel in [false, true] {
        let n = if cfg!(miri) { 200 } else { 5_000 };
        let (mut world, units) = populated(Policy::Purge, n);
        let live = world.len::<Unit>();
        let dropped = Arc::new(AtomicUsize::new(0));
        let recorded = AtomicUsize::new(0);
        let f = |h: Handle<Unit>, u: &mut Unit, commands: &mut CommandBuffer| {
            if u.id == n / 2 {
                panic!("a unit's tick panics");
            }
            u.hp += 1;
            commands.destroy(h);
            let token = Token(Arc::clone(&dropped));
            commands.spawn_with(move |i: &mut Impact| {
                let _token = &token;
                i.id = 1;
            });
            recorded.fetch_add(1, Ordering::Relaxed);
        };
        let result = if parallel {
            catch_unwind(AssertUnwindSafe(|| world.par_tick_with(f)))
        } else {
            catch_unwind(AssertUnwindSafe(|| world.tick_with(f)))
        };
        assert!(result.is_err(), "the panic goes on");
        let recorded = recorded.into_inner();
        assert!(recorded > 0, "some commands were recorded before the panic");
        assert_eq!(dropped.load(Ordering::Relaxed), recorded, "parallel {parallel}: every closure dropped unrun");
        assert_eq!(world.len::<Unit>(), live, "no destroy applied");
        assert_eq!(world.iter::<Impact>().count(), 0, "no spawn applied");
        assert!(units.iter().step_by(7).all(|&h| !world.contains(h)));

        // The world goes on: the next tick's commands apply.
        let evens = world.iter::<Unit>().filter(|(_, u)| u.id % 2 == 0).count();
        let applied = world.tick_with::<Unit>(|h, u, commands| {
            if u.id % 2 == 0 {
                commands.destroy(h);
            }
        });
        assert_eq!((applied.applied, applied.failed), (evens, 0));
        assert!(world.iter::<Unit>().all(|(_, u)| u.id % 2 == 1));
    }
}

#[test]
fn a_panic_while_applying_keeps_the_commands_before_it_and_drops_the_rest() {
    let mut world = world(Policy::Reuse);
    let a = world.spawn_with(|u: &mut Unit| u.id = 1);
    let b = world.spawn_with(|u: &mut Unit| u.id = 2);
    let dropped = Arc::new(AtomicUsize::new(0));
    let mut commands = CommandBuffer::new();
    commands.destroy(a);
    commands.spawn_with(|_: &mut Impact| panic!("an init closure panics"));
    commands.destroy(b);
    let token = Token(Arc::clone(&dropped));
    commands.spawn_with(move |i: &mut Impact| {
        let _token = &token;
        i.id = 7;
    });
    let result = catch_unwind(AssertUnwindSafe(|| world.apply(&mut commands)));
    assert!(result.is_err());
    assert!(!world.contains(a), "applied before the panic");
    assert!(world.contains(b), "after the panic: dropped");
    assert_eq!(dropped.load(Ordering::Relaxed), 1, "the last spawn's closure dropped unrun");
    assert!(commands.is_empty(), "the buffer is emptied whatever happens");
    // (The panicking spawn's object is left as `World::spawn_with` leaves it.)
    assert!(world.iter::<Impact>().all(|(_, i)| i.id != 7));
    // The buffer and the world go on.
    commands.destroy(b);
    assert!(world.apply(&mut commands).is_ok());
    assert!(!world.contains(b));
}

#[test]
fn a_buffer_dropped_or_cleared_drops_each_closure_once() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let spawn = |commands: &mut CommandBuffer| {
        let token = Token(Arc::clone(&dropped));
        commands.spawn_with(move |i: &mut Impact| {
            let _token = &token;
            i.id = 3;
        });
    };
    let mut commands = CommandBuffer::new();
    for _ in 0..3 {
        spawn(&mut commands);
    }
    commands.clear();
    assert_eq!((dropped.load(Ordering::Relaxed), commands.len()), (3, 0));
    for _ in 0..2 {
        spawn(&mut commands);
    }
    drop(commands);
    assert_eq!(dropped.load(Ordering::Relaxed), 5);

    // Applied: each run once, and dropped once.
    let mut world = world(Policy::Purge);
    let mut commands = CommandBuffer::new();
    for _ in 0..4 {
        spawn(&mut commands);
    }
    assert!(world.apply(&mut commands).is_ok());
    assert_eq!(dropped.load(Ordering::Relaxed), 9);
    assert_eq!(world.iter::<Impact>().filter(|(_, i)| i.id == 3).count(), 4);
}

#[test]
fn commands_tell_the_listeners() {
    let mut world = world(Policy::Default);
    let spawned = Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = Arc::clone(&spawned);
    world.on_spawn(move |h, _: &Impact| log.lock().unwrap().push(h));
    let ended = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&ended);
    world.on_destroy(move |_, _: &Unit| _ = count.fetch_add(1, Ordering::Relaxed));
    for id in 0..5 {
        world.spawn_with(|u: &mut Unit| u.id = id);
    }
    let applied = world.tick_with::<Unit>(|h, u, commands| {
        if u.id < 3 {
            commands.destroy(h);
            commands.spawn::<Impact>();
        }
    });
    assert!(applied.is_ok());
    assert_eq!(ended.load(Ordering::Relaxed), 3);
    // The handles of the command-spawned objects, learnt by the spawn listener.
    let handles = spawned.lock().unwrap().clone();
    assert_eq!(handles.len(), 3);
    assert!(handles.iter().all(|&h| world.contains(h)));
}
