//! A pooled spawn during an incremental mark: the object a pool hands out (activated from a
//! magazine's compact cell) is noted by the write barrier like any object made live, so
//! the handles its `init` stores are traced before the mark ends.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use respawn::{
    ArenaConfig, CollectOptions, GcSettings, Handle, MarkPhase, MarkStep, Object, Policy, PoolConfig, Poolable,
    SlabConfig, Trace, World,
};

#[derive(Trace)]
struct Node {
    next: Option<Handle<Node>>,
    #[trace(skip)]
    drops: Arc<AtomicU32>,
}

impl Object for Node {}

impl Drop for Node {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

#[derive(Trace, Object)]
struct Seeker {
    target: Option<Handle<Node>>,
}

impl Poolable for Seeker {
    fn create() -> Self {
        Seeker { target: None }
    }
    fn reset(&mut self) {
        self.target = None;
    }
}

/// One mark slice of one clock reading (a visit or so).
fn slice(world: &mut World) -> MarkStep {
    let mut clock = 0;
    world.mark_slice_timed(Duration::from_nanos(1), || {
        clock += 1;
        Duration::from_nanos(clock)
    })
}

#[test]
fn a_handle_stored_by_a_pooled_spawn_during_the_mark_is_traced() {
    for policy in [Policy::Reuse, Policy::Purge, Policy::Default] {
        let drops = Arc::new(AtomicU32::new(0));
        let arena =
            ArenaConfig { slab: SlabConfig { cells_per_slab: 16, ..SlabConfig::SMALL }, ..ArenaConfig::DEFAULT };
        let config = PoolConfig { policy, ..PoolConfig::ON_DEMAND };
        let mut world =
            World::builder().arena(arena).gc(GcSettings::SINGLE_THREADED).pool::<Seeker>(config).build().unwrap();
        // Spawned and ended once before the mark: the next spawn pops a ready cell (Reuse)
        // or builds one inline into a returned cell (Purge, Default: no workers).
        let warm = world.spawn::<Seeker>();
        world.destroy(warm).unwrap();
        world.collect_garbage();

        // Root → a chain of 30 → A → B: B is reached last.
        let node = |world: &mut World, next| world.insert(Node { next, drops: Arc::clone(&drops) });
        let b = node(&mut world, None);
        let a = node(&mut world, Some(b));
        let mut head = a;
        for _ in 0..30 {
            head = node(&mut world, Some(head));
        }
        world.add_to_root(head).unwrap();
        assert!(world.start_incremental_collection(CollectOptions::FULL));
        while !matches!(slice(&mut world), MarkStep::Marking(p) if p.phase == MarkPhase::Reach) {}

        // A seeker spawned now takes B; A lets it go. The seeker is new, so this mark keeps
        // it (nothing roots it: the barrier's note of the spawn is all that traces it), and
        // B is reachable only through it.
        let seeker = world.spawn_with(|s: &mut Seeker| s.target = Some(b));
        world.get_mut(a).unwrap().next = None;
        loop {
            match slice(&mut world) {
                MarkStep::Done(_) => break,
                MarkStep::Marking(_) => {}
                MarkStep::Idle => panic!("no mark running"),
            }
        }
        world.purge(Duration::MAX);
        assert!(world.get(seeker).is_some(), "{policy:?}: made live during the mark: kept by it");
        assert!(world.get(b).is_some(), "{policy:?}: B is reachable through the seeker when the mark ends");
        assert_eq!(drops.load(Ordering::SeqCst), 0, "{policy:?}: every node is reachable");
    }
}

/// The slice that ends an incremental mark hands what the collection ended to the pools at
/// once, as a whole collection does: nothing waits on the class's returned list.
#[test]
fn the_slice_that_ends_the_mark_gives_the_pools_what_it_ended() {
    let config = PoolConfig { policy: Policy::Default, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().gc(GcSettings::SINGLE_THREADED).pool::<Seeker>(config).build().unwrap();
    let seekers: Vec<_> = (0..10).map(|_| world.spawn::<Seeker>()).collect();
    for &s in &seekers[..5] {
        world.destroy(s).unwrap();
    }
    assert!(world.start_incremental_collection(CollectOptions::FULL));
    assert!(world.is_marking());
    let stats = loop {
        if let MarkStep::Done(stats) = slice(&mut world) {
            break stats;
        }
    };
    assert!(!world.is_marking());
    assert_eq!(stats.purged, 5);
    let pool = world.pool_stats::<Seeker>().unwrap();
    assert_eq!((pool.recycled_gc, pool.waiting, pool.in_use), (5, 0, 5), "taken by the pool as the mark ended");
    assert!(seekers[5..].iter().all(|&s| world.contains(s)));
}
