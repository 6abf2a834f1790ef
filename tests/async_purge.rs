//! `GcSettings::async_purge`: a pooled class's ended objects are dropped by the worker that
//! rebuilds their cell (destroy and rebuild in one pass), never on the game thread, each
//! exactly once — through a collection (`Default`), a `Purge` release, a pool at `max`,
//! a panicking destructor and a shutdown with ended objects still queued.

use std::sync::Arc;
use std::thread;

use respawn::{GcSettings, Handle, Object, Policy, PoolConfig, Poolable, Trace, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::threads::{wait_for, Gate};

/// A pooled object whose destructor records its thread (and panics for a `bomb`).
#[derive(Trace)]
struct Shell {
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    bomb: bool,
    #[trace(skip)]
    log: Drops,
}

impl Object for Shell {}

impl Poolable for Shell {
    fn create() -> Self {
        unreachable!("built by a closure that logs it")
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        self.log.note_drop(self.id);
        assert!(!self.bomb, "a shell's destructor panicked");
    }
}

/// The same, for a class whose `Drop` must run on the game thread.
#[derive(Trace)]
struct Anchored {
    #[trace(skip)]
    id: usize,
    #[trace(skip)]
    log: Drops,
}

impl Object for Anchored {
    const DROP_ON_GAME_THREAD: bool = true;
}

impl Poolable for Anchored {
    fn create() -> Self {
        unreachable!("built by a closure that logs it")
    }
}

impl Drop for Anchored {
    fn drop(&mut self) {
        self.log.note_drop(self.id);
    }
}

fn config(policy: Policy) -> PoolConfig {
    PoolConfig {
        capacity: 32,
        max: 1024,
        low_watermark: 8,
        grow_by: 32,
        policy,
        precreate: true,
        workers: 1,
        idle_trim: None,
    }
}

fn settings(async_purge: bool) -> GcSettings {
    GcSettings { async_purge, ..GcSettings::SINGLE_THREADED }
}

fn world(policy: Policy, async_purge: bool, log: &Drops, gate: &Arc<Gate>) -> World {
    let (l, a, g) = (log.clone(), log.clone(), Arc::clone(gate));
    World::builder()
        .pool_with::<Shell>(config(policy), move || {
            g.pass();
            Shell { id: l.make(), bomb: false, log: l.clone() }
        })
        .pool_with::<Anchored>(config(policy), move || Anchored { id: a.make(), log: a.clone() })
        .gc(settings(async_purge))
        .build()
        .unwrap()
}

fn ids<T: Object>(world: &World, handles: &[Handle<T>], id: impl Fn(&T) -> usize) -> Vec<usize> {
    handles.iter().map(|&h| id(world.get(h).unwrap())).collect()
}

/// Waits until the pool's worker has rebuilt every cell sent to it.
fn settle<T: Poolable>(world: &mut World) {
    wait_for(|| {
        world.pools_mut().maintain();
        world.pool_stats::<T>().unwrap().building == 0
    });
}

#[test]
fn ended_objects_are_dropped_by_the_worker_that_rebuilds_their_cell() {
    for policy in [Policy::Default, Policy::Purge] {
        let (log, gate) = (Drops::default(), Gate::new(true));
        let mut world = world(policy, true, &log, &gate);
        world.wait_until_warm(std::time::Duration::from_secs(20)).unwrap();
        let game = thread::current().id();
        let shells: Vec<Handle<Shell>> = (0..20).map(|_| world.spawn()).collect();
        let anchored: Vec<Handle<Anchored>> = (0..20).map(|_| world.spawn()).collect();
        let (shell_ids, anchored_ids) = (ids(&world, &shells, |s| s.id), ids(&world, &anchored, |a| a.id));
        for &h in &shells {
            world.destroy(h).unwrap();
        }
        for &h in &anchored {
            world.destroy(h).unwrap();
        }
        if policy == Policy::Default {
            world.collect_garbage();
        }
        assert!(shells.iter().all(|&h| world.get(h).is_none()), "{policy:?}: stale at once");
        settle::<Shell>(&mut world);
        settle::<Anchored>(&mut world);
        let on = log.threads(&shell_ids);
        assert!(on.iter().all(|&t| t != game), "{policy:?}: a shell dropped on the game thread: {on:?}");
        let on = log.threads(&anchored_ids);
        assert!(on.iter().all(|&t| t == game), "{policy:?}: DROP_ON_GAME_THREAD dropped elsewhere: {on:?}");
        let stats = world.pool_stats::<Shell>().unwrap();
        assert_eq!(stats.dropped_by_workers, 20, "{policy:?}: {stats:?}");
        assert_eq!(world.pool_stats::<Anchored>().unwrap().dropped_by_workers, 0);
        // The rebuilt cells serve new spawns.
        let again: Vec<Handle<Shell>> = (0..20).map(|_| world.spawn()).collect();
        assert!(again.iter().all(|&h| world.get(h).is_some()));
        drop(world);
        log.assert_each_once();
    }
}

#[test]
fn without_async_purge_the_game_thread_drops() {
    let (log, gate) = (Drops::default(), Gate::new(true));
    let mut world = world(Policy::Purge, false, &log, &gate);
    let game = thread::current().id();
    let shells: Vec<Handle<Shell>> = (0..10).map(|_| world.spawn()).collect();
    let shell_ids = ids(&world, &shells, |s| s.id);
    for &h in &shells {
        world.destroy(h).unwrap();
    }
    assert!(log.threads(&shell_ids).iter().all(|&t| t == game));
    assert_eq!(world.pool_stats::<Shell>().unwrap().dropped_by_workers, 0);
    drop(world);
    log.assert_each_once();
}

#[test]
fn shutdown_drops_ended_objects_still_queued_once() {
    let (log, gate) = (Drops::default(), Gate::new(true));
    let mut world = world(Policy::Purge, true, &log, &gate);
    settle::<Shell>(&mut world);
    // The worker is held in `create` from here: the releases wait in its queue, occupied.
    gate.set(false);
    let _opener = gate.opener();
    let shells: Vec<Handle<Shell>> = (0..40).map(|_| world.spawn()).collect();
    let shell_ids = ids(&world, &shells, |s| s.id);
    for &h in &shells {
        world.destroy(h).unwrap();
    }
    let stats = world.pool_stats::<Shell>().unwrap();
    assert!(stats.building >= 39, "queued for the held worker: {stats:?}");
    // Let the worker go only as the world shuts down: it stops at once, so most cells are
    // still queued with their ended objects in them when the pool drains its queue.
    gate.set(true);
    drop(world);
    log.threads(&shell_ids);
    log.assert_each_once();
}

#[test]
fn a_pool_at_max_drops_the_cells_it_gives_back_on_the_game_thread() {
    let log = Drops::default();
    let l = log.clone();
    let max = PoolConfig { capacity: 8, max: 8, low_watermark: 0, grow_by: 8, ..config(Policy::Purge) };
    let mut world = World::builder()
        .pool_with::<Shell>(max, move || Shell { id: l.make(), bomb: false, log: l.clone() })
        .gc(settings(true))
        .build()
        .unwrap();
    settle::<Shell>(&mut world);
    // 8 ready plus 8 overflow objects beyond `max`: their cells leave the pool as they end.
    let shells: Vec<Handle<Shell>> = (0..16).map(|_| world.spawn()).collect();
    let shell_ids = ids(&world, &shells, |s| s.id);
    for &h in &shells {
        world.destroy(h).unwrap();
    }
    settle::<Shell>(&mut world);
    // The next miss recycles what was given back, dropping the objects in it first.
    let _more: Vec<Handle<Shell>> = (0..16).map(|_| world.spawn()).collect();
    let stats = world.pool_stats::<Shell>().unwrap();
    assert!(stats.returned >= 8, "{stats:?}");
    log.threads(&shell_ids);
    drop(world);
    log.assert_each_once();
}

#[test]
fn a_destructor_that_panics_on_a_worker_is_caught_and_counted() {
    let (log, gate) = (Drops::default(), Gate::new(true));
    let mut world = world(Policy::Purge, true, &log, &gate);
    world.wait_until_warm(std::time::Duration::from_secs(20)).unwrap();
    let bomb = world.spawn_with(|s: &mut Shell| s.bomb = true);
    let bomb_id = world.get(bomb).unwrap().id;
    world.destroy(bomb).unwrap();
    settle::<Shell>(&mut world);
    let stats = world.pool_stats::<Shell>().unwrap();
    assert_eq!((stats.dropped_by_workers, stats.drop_panics), (1, 1), "{stats:?}");
    assert_ne!(log.threads(&[bomb_id])[0], thread::current().id());
    // The worker lives on and the pool still serves.
    let shells: Vec<Handle<Shell>> = (0..40).map(|_| world.spawn()).collect();
    for h in shells {
        world.destroy(h).unwrap();
    }
    settle::<Shell>(&mut world);
    assert_eq!(world.pool_stats::<Shell>().unwrap().dropped_by_workers, 41);
    drop(world);
    log.assert_each_once();
}
