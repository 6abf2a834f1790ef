//! The World's access beyond one object: `get_disjoint_mut` (None for stale, hidden or
//! repeated handles), `iter_mut` with handles, and `spawn_batch` (lazy like hecs' and
//! bevy's, finished when dropped).

use std::panic::{catch_unwind, AssertUnwindSafe};

use respawn::{Handle, Object, Policy, PoolConfig, Poolable, Trace, World};

#[derive(Trace, Object)]
struct Ship {
    cargo: u32,
}

impl Poolable for Ship {
    fn create() -> Self {
        Ship { cargo: 0 }
    }
    fn reset(&mut self) {
        self.cargo = 0;
    }
}

fn world(policy: Policy) -> World {
    World::builder().pool::<Ship>(PoolConfig { policy, ..PoolConfig::ON_DEMAND }).build().unwrap()
}

#[test]
fn get_disjoint_mut_lends_distinct_live_objects_and_refuses_the_rest() {
    for policy in Policy::ALL {
        let mut world = world(policy);
        let [a, b, c] = [1, 2, 3].map(|cargo| world.spawn_with(|s: &mut Ship| s.cargo = cargo));
        let permanent = world.spawn_permanent(Ship { cargo: 4 }).unwrap();

        let [x, y, z, p] = world.get_disjoint_mut([a, b, c, permanent]).unwrap();
        (x.cargo, y.cargo, z.cargo, p.cargo) = (p.cargo, x.cargo, y.cargo, z.cargo);
        let cargo = |w: &World, h: Handle<Ship>| w.get(h).unwrap().cargo;
        assert_eq!([a, b, c, permanent].map(|h| cargo(&world, h)), [4, 1, 2, 3]);

        assert!(world.get_disjoint_mut([a, b, a]).is_none(), "{policy:?}: a handle twice");
        world.destroy(b).unwrap();
        assert!(world.get_disjoint_mut([a, b]).is_none(), "{policy:?}: destroyed (stale, garbage or in its pool)");
        let again = world.spawn::<Ship>();
        assert!(world.get_disjoint_mut([b, again]).is_none(), "{policy:?}: never the old handle");
        assert!(world.get_disjoint_mut([a, again]).is_some());
    }
}

#[test]
fn iter_mut_lends_every_live_object_with_its_handle_once() {
    let mut world = world(Policy::Default);
    let ships: Vec<Handle<Ship>> = (0..100).map(|i| world.spawn_with(|s: &mut Ship| s.cargo = i)).collect();
    for h in ships.iter().step_by(4) {
        world.destroy(*h).unwrap(); // garbage: hidden at once
    }
    let mut seen = Vec::new();
    for (h, s) in world.iter_mut::<Ship>() {
        s.cargo += 1000;
        seen.push(h);
    }
    assert_eq!(seen.len(), 75);
    assert_eq!(seen, world.iter::<Ship>().map(|(h, _)| h).collect::<Vec<_>>());
    for (i, h) in ships.iter().enumerate() {
        assert_eq!(world.get(*h).map(|s| s.cargo), (i % 4 != 0).then_some(i as u32 + 1000));
    }
}

#[test]
fn spawn_batch_spawns_all_n_whether_collected_partly_iterated_or_dropped() {
    let mut world = world(Policy::Reuse);
    let batch = world.spawn_batch(5, |i, s: &mut Ship| s.cargo = i as u32);
    assert_eq!(batch.len(), 5);
    let all: Vec<Handle<Ship>> = batch.collect();
    assert_eq!(all.iter().map(|&h| world.get(h).unwrap().cargo).collect::<Vec<_>>(), [0, 1, 2, 3, 4]);

    let mut partly = world.spawn_batch(4, |_, s: &mut Ship| s.cargo = 7);
    let first = partly.next().unwrap();
    assert_eq!(partly.len(), 3);
    drop(partly);
    assert_eq!(world.len::<Ship>(), 9, "the rest spawned when the batch dropped");
    assert_eq!(world.get(first).unwrap().cargo, 7);

    world.spawn_batch(3, |_, _: &mut Ship| {});
    assert_eq!(world.len::<Ship>(), 12);
    assert_eq!(world.spawn_batch(0, |_, _: &mut Ship| {}).count(), 0);

    // From the pool: the destroyed ones come back first.
    for h in all {
        world.destroy(h).unwrap();
    }
    let before = world.pool_stats::<Ship>().unwrap();
    world.spawn_batch(5, |_, _: &mut Ship| {});
    let after = world.pool_stats::<Ship>().unwrap();
    assert_eq!((after.hits - before.hits, after.misses - before.misses), (5, 0));
}

#[test]
fn a_panicking_init_stops_the_batch() {
    let mut world = world(Policy::Reuse);
    let result = catch_unwind(AssertUnwindSafe(|| {
        for _ in world.spawn_batch(10, |i, s: &mut Ship| {
            assert!(i < 2, "init fails at 2");
            s.cargo = i as u32;
        }) {}
    }));
    assert!(result.is_err());
    // Objects 0 and 1, and the one whose `init` panicked (spawned as `spawn_with` would
    // leave it); none after it.
    assert_eq!(world.len::<Ship>(), 3);
}

#[test]
fn a_world_with_listeners_and_its_side_tables_can_move_to_another_thread() {
    fn assert_send<X: Send>(_: &X) {}
    let mut world = world(Policy::Reuse);
    world.on_spawn(|_, _: &Ship| {});
    world.on_destroy(|_, _: &Ship| {});
    let table: respawn::SideTable<Ship, u32> = respawn::SideTable::new();
    assert_send(&world);
    assert_send(&table);
    let world = std::thread::spawn(move || {
        let h = world.spawn::<Ship>();
        (world, h)
    })
    .join()
    .unwrap();
    assert!(world.0.contains(world.1));
}
