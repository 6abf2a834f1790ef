//! Ticks that read the rest of the arena through a `View`: what the view lends (objects of
//! every other class, permanent ones too), what it refuses (the ticking class's objects,
//! stale, hidden and foreign handles), and the parallel tick reading through one view.
//! Run under Miri (scripts/miri.sh): the tick's `&mut` objects and the view's `&` objects
//! must never overlap.

use respawn_arena::{Arena, ArenaConfig, ArenaError, Handle, Lifecycle, RawHandle, SlabConfig};

#[derive(Debug, PartialEq)]
struct Target {
    x: f32,
}

#[derive(Debug)]
struct Missile {
    target: Handle<Target>,
    x: f32,
    /// What the last tick could not read, if anything.
    lost: Option<String>,
}

fn missile(target: Handle<Target>) -> Missile {
    Missile { target, x: 0.0, lost: None }
}

/// Each missile closes half the distance to its target, or says why it cannot see it.
fn steer(arena: &mut Arena) {
    arena.tick_reading::<Missile>(|m, rest| match rest.try_get(m.target) {
        Ok(t) => {
            m.x += (t.x - m.x) * 0.5;
            m.lost = None;
        }
        Err(e) => m.lost = Some(e.to_string()),
    });
}

#[test]
fn a_tick_reads_objects_of_other_classes_by_handle() {
    let mut arena = Arena::new();
    let near = arena.insert(Target { x: 10.0 });
    let far = arena.insert(Target { x: 100.0 });
    let a = arena.insert(missile(near));
    let b = arena.insert(missile(far));
    steer(&mut arena);
    steer(&mut arena);
    assert_eq!(arena.get(a).unwrap().x, 7.5);
    assert_eq!(arena.get(b).unwrap().x, 75.0);
    // The view read the targets; nothing moved them.
    assert_eq!(arena.get(near), Some(&Target { x: 10.0 }));
}

#[test]
fn a_target_that_ended_reads_as_stale_and_a_hidden_one_as_hidden() {
    let mut arena = Arena::new();
    let gone = arena.insert(Target { x: 1.0 });
    let hidden = arena.insert(Target { x: 2.0 });
    let a = arena.insert(missile(gone));
    let b = arena.insert(missile(hidden));
    arena.remove(gone).expect("live target");
    arena.set_lifecycle(hidden.raw(), Lifecycle::Garbage).expect("live target");
    steer(&mut arena);
    let stale = ArenaError::Stale.to_string();
    assert_eq!(arena.get(a).unwrap().lost.as_deref(), Some(stale.as_str()));
    let lost = arena.get(b).unwrap().lost.clone().expect("a hidden target is not lent");
    assert!(lost.contains("Garbage"), "{lost}");
    // A slot reused by a new target does not bring the old handle back.
    let newer = arena.insert(Target { x: 3.0 });
    assert_eq!(newer.index(), gone.index(), "the freed slot is reused");
    steer(&mut arena);
    assert_eq!(arena.get(a).unwrap().lost.as_deref(), Some(stale.as_str()));
}

#[test]
fn the_ticking_class_is_refused_by_the_view() {
    let mut arena = Arena::new();
    let t = arena.insert(Target { x: 1.0 });
    let first = arena.insert(missile(t));
    let second = arena.insert(missile(t));
    let mut seen = Vec::new();
    arena.tick_reading::<Missile>(|m, rest| {
        // Another missile, and the one being ticked: both are the tick's.
        for h in [first, second] {
            assert!(rest.get(h).is_none());
            assert!(!rest.contains(h));
            match rest.try_get(h) {
                Err(ArenaError::Ticking(name)) => assert!(name.ends_with("Missile"), "{name}"),
                other => panic!("expected Ticking, got {other:?}"),
            }
        }
        assert_eq!(rest.iter::<Missile>().count(), 0);
        assert_eq!(rest.len::<Missile>(), 0);
        assert!(rest.is_empty::<Missile>());
        // The other class is whole.
        assert_eq!(rest.len::<Target>(), 1);
        assert_eq!(rest.iter::<Target>().map(|(h, _)| h).collect::<Vec<_>>(), [t]);
        m.x += 1.0;
        seen.push(m.x);
    });
    assert_eq!(seen, [1.0, 1.0]);
    let ticking = arena.class_of::<Missile>().expect("registered");
    arena.tick_reading::<Missile>(|_, rest| assert_eq!(rest.ticking(), ticking));
}

#[test]
fn a_foreign_handle_is_a_wrong_class_and_an_unregistered_class_is_empty() {
    let mut arena = Arena::new();
    let t = arena.insert(Target { x: 1.0 });
    let m = arena.insert(missile(t));
    // A handle of `u64` forged from the target's raw handle.
    let forged: Handle<u64> = Handle::from_raw(t.raw());
    arena.tick_reading::<Missile>(|_, rest| {
        assert!(rest.get(forged).is_none());
        assert!(matches!(rest.try_get(forged), Err(ArenaError::WrongClass { .. })));
        assert_eq!(rest.iter::<u64>().count(), 0);
        assert_eq!(rest.len::<u64>(), 0);
        let never: Handle<Target> = Handle::from_raw(RawHandle::new(m.index() + 1_000_000, t.generation()));
        assert!(matches!(rest.try_get(never), Err(ArenaError::Stale)));
    });
}

#[test]
fn permanent_objects_are_lent_unless_they_are_the_tick_s() {
    let mut arena = Arena::new();
    let beacon = arena.insert_permanent(Target { x: 40.0 }).expect("room in the permanent pool");
    let a = arena.insert(missile(beacon));
    arena.insert_permanent(missile(beacon)).expect("room in the permanent pool");
    steer(&mut arena);
    assert_eq!(arena.get(a).unwrap().x, 20.0);
    // A permanent missile is not ticked, but it is of the ticking class: refused.
    let permanent_missile = arena.insert_permanent(missile(beacon)).expect("room in the permanent pool");
    arena.tick_reading::<Missile>(|_, rest| {
        assert!(matches!(rest.try_get(permanent_missile), Err(ArenaError::Ticking(_))));
    });
    arena.tick_reading::<Target>(|_, rest| {
        assert_eq!(rest.get(permanent_missile).map(|m| m.target), Some(beacon));
    });
}

#[test]
fn dormant_objects_are_skipped_by_the_tick_and_lent_by_the_view() {
    let mut arena = Arena::new();
    let t = arena.insert(Target { x: 8.0 });
    let awake = arena.insert(missile(t));
    let asleep = arena.insert(missile(t));
    arena.set_dormant(asleep.raw(), true).expect("live missile");
    arena.set_dormant(t.raw(), true).expect("live target");
    steer(&mut arena);
    assert_eq!(arena.get(awake).unwrap().x, 4.0, "a dormant target is alive: the view lends it");
    assert_eq!(arena.get(asleep).unwrap().x, 0.0, "a dormant missile is not ticked");
}

#[test]
fn no_tick_for_an_unregistered_class() {
    let mut arena = Arena::new();
    arena.insert(Target { x: 1.0 });
    let mut calls = 0;
    arena.tick_reading::<Missile>(|_, _| calls += 1);
    assert_eq!(calls, 0);
}

/// Many missiles over several small slabs, each reading one of many targets: the parallel
/// tick reads through one view from every thread, and agrees with the sequential one.
#[test]
fn par_tick_reading_agrees_with_the_sequential_tick() {
    let config = ArenaConfig { slab: SlabConfig::SMALL, ..ArenaConfig::DEFAULT };
    let n = if cfg!(miri) { 300 } else { 5000 };
    let build = || {
        let mut arena = Arena::with_config(config);
        let targets: Vec<_> = (0..64).map(|i| arena.insert(Target { x: i as f32 })).collect();
        let missiles: Vec<_> = (0..n).map(|i| arena.insert(missile(targets[i % targets.len()]))).collect();
        // Some targets gone: those missiles stay put.
        for t in targets.iter().step_by(7) {
            arena.remove(*t).expect("live target");
        }
        (arena, missiles)
    };
    // Each arena's handles are its own (where its classes' ranges lie is not fixed).
    let (mut serial, serial_missiles) = build();
    let (mut parallel, parallel_missiles) = build();
    serial.tick_reading::<Missile>(|m, rest| m.x = rest.get(m.target).map_or(-1.0, |t| t.x * 2.0));
    parallel.par_tick_reading::<Missile>(|m, rest| m.x = rest.get(m.target).map_or(-1.0, |t| t.x * 2.0));
    let xs = |arena: &Arena, missiles: &[Handle<Missile>]| {
        missiles.iter().map(|h| arena.get(*h).unwrap().x).collect::<Vec<_>>()
    };
    let serial_xs = xs(&serial, &serial_missiles);
    assert_eq!(serial_xs, xs(&parallel, &parallel_missiles));
    assert!(serial_xs.contains(&-1.0) && serial_xs.contains(&124.0));
}
