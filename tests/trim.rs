//! Pools that give memory back: after a spike and a trim, committed memory falls back to
//! within a slab of what the live objects need, under every policy; survivors keep their
//! handles, stale handles stay stale, every trimmed object is dropped exactly once, the
//! idle trim keeps to its (frame) time, and a trim racing the workers loses nothing.

use std::time::Duration;

use respawn::{ArenaConfig, ConfigError, GcSettings, Handle, Policy, PoolConfig, PoolError, SlabConfig, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::threads::wait_for;
use respawn_testkit::world::Shot;

/// Small slabs and none prepared ahead: what is committed is what the cells need.
const SLAB: SlabConfig = SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 4096, huge_pages: false };

fn spike_len() -> usize {
    if cfg!(miri) {
        200
    } else {
        5000
    }
}

fn world(config: PoolConfig, drops: &Drops) -> World {
    let d = drops.clone();
    World::builder()
        .arena(ArenaConfig { slab: SLAB, ..ArenaConfig::DEFAULT })
        .pool_with::<Shot>(config, move || Shot::new(&d))
        .gc(GcSettings { time_between_collections: None, ..GcSettings::SINGLE_THREADED })
        .build()
        .unwrap()
}

/// A pool of `policy`: with two workers (they rebuild what `Purge` and `Default` release),
/// or none for `Reuse` (what it releases stays ready), and a stock large enough to keep
/// the whole spike.
fn config(policy: Policy) -> PoolConfig {
    let workers = if policy == Policy::Reuse { 0 } else { 2 };
    PoolConfig {
        capacity: if workers > 0 { 64 } else { 0 },
        max: 1 << 16,
        low_watermark: 0,
        grow_by: 64,
        policy,
        precreate: workers > 0,
        workers,
        idle_trim: None,
    }
}

/// Waits until every cell the workers were given is built and published, and every cell
/// given back is recycled.
fn settle(world: &mut World) {
    wait_for(|| {
        world.pools_mut().maintain();
        let s = world.pool_stats::<Shot>().unwrap();
        s.building == 0 && s.held == 0
    });
}

fn slab_bytes(world: &World) -> usize {
    world.heap().arena().stats::<Shot>().unwrap().memory.slab_bytes
}

#[test]
fn after_a_spike_and_a_trim_committed_bytes_fall_to_within_a_slab_of_the_live_need() {
    for policy in Policy::ALL {
        let drops = Drops::default();
        let mut world = world(config(policy), &drops);
        settle(&mut world);
        // Survivors first, so they sit at the front of the class's region.
        let survivors: Vec<Handle<Shot>> = (0..100).map(|_| world.spawn_with(|s: &mut Shot| s.damage = 7)).collect();
        // Rooted, so the collection `Default` needs keeps them.
        survivors.iter().for_each(|&h| world.add_to_root(h).unwrap());
        let spike: Vec<Handle<Shot>> = (0..spike_len()).map(|_| world.spawn::<Shot>()).collect();
        let peak = world.pool_stats::<Shot>().unwrap().committed_bytes;
        for &h in &spike {
            world.destroy(h).unwrap();
        }
        if policy == Policy::Default {
            world.collect_garbage();
            while !world.purge(Duration::from_secs(1)).is_done() {}
        }
        settle(&mut world);
        let before = world.pool_stats::<Shot>().unwrap();
        assert!(before.ready > 0, "{policy}: the spike left objects ready");
        let dropped_before = drops.count();

        let trimmed = world.clear_pool::<Shot>().unwrap();
        let after = world.pool_stats::<Shot>().unwrap();
        assert_eq!(trimmed, before.ready, "{policy}: every ready object trimmed");
        assert_eq!(after.trimmed, trimmed as u64);
        assert_eq!((after.ready, after.in_use), (0, survivors.len()), "{policy}");
        assert_eq!(drops.count(), dropped_before + trimmed, "{policy}: each trimmed object dropped");
        let slab = slab_bytes(&world);
        let need = survivors.len().div_ceil(64) * slab;
        assert!(
            after.committed_bytes <= need + slab,
            "{policy}: {} bytes committed for a need of {need} (peak {peak})",
            after.committed_bytes
        );
        assert!(after.committed_bytes < peak);
        assert_eq!(world.stats().committed_bytes, after.committed_bytes, "one class in the world");
        // Survivors resolve, intact; the spike's handles do not.
        assert!(survivors.iter().all(|&h| world.get(h).is_some_and(|s| s.damage == 7)), "{policy}");
        assert!(spike.iter().all(|&h| world.get(h).is_none()), "{policy}: a stale handle resolved");

        // The memory serves again (committed anew), and old handles stay stale.
        let again: Vec<Handle<Shot>> =
            (0..spike_len()).map(|_| world.spawn_with(|s: &mut Shot| s.damage = 9)).collect();
        assert!(again.iter().all(|&h| world.get(h).is_some_and(|s| s.damage == 9)), "{policy}");
        assert!(spike.iter().all(|&h| world.get(h).is_none()), "{policy}: a stale handle resolved after reuse");
        assert!(world.pool_stats::<Shot>().unwrap().committed_bytes <= peak + slab);
        drop(world);
        drops.assert_each_once();
    }
}

#[test]
fn shrink_keeps_the_lowest_cells_and_counts_what_it_drops() {
    let drops = Drops::default();
    let mut world = world(config(Policy::Reuse), &drops);
    let spike: Vec<Handle<Shot>> = (0..640).map(|_| world.spawn::<Shot>()).collect();
    for &h in &spike {
        world.destroy(h).unwrap();
    }
    assert_eq!(world.shrink_pool::<Shot>(64).unwrap(), 576);
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.ready, stats.trimmed), (64, 576));
    assert_eq!(stats.committed_bytes, slab_bytes(&world), "the kept 64 fill the first slab");
    assert_eq!(world.shrink_pool::<Shot>(100).unwrap(), 0, "nothing beyond 100");
    // The kept objects are ready: spawns hit.
    let before = world.pool_stats::<Shot>().unwrap().misses;
    let kept: Vec<Handle<Shot>> = (0..64).map(|_| world.spawn::<Shot>()).collect();
    assert_eq!(world.pool_stats::<Shot>().unwrap().misses, before);
    assert_eq!(world.clear_pool::<Shot>().unwrap(), 0, "all of them live");
    assert_eq!(kept.len(), 64);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn trims_of_a_class_without_a_pool_are_refused() {
    let mut world = World::new();
    assert!(matches!(world.clear_pool::<Shot>(), Err(PoolError::NotPooled(_))));
    assert!(matches!(world.shrink_pool::<String>(3), Err(PoolError::NotPooled(_))));
}

#[test]
fn the_idle_trim_drops_what_a_whole_window_did_not_need() {
    let drops = Drops::default();
    let config = PoolConfig { capacity: 16, idle_trim: Some(Duration::from_secs(3)), ..config(Policy::Reuse) };
    let mut world = world(config, &drops);
    let second = Duration::from_secs(1);
    let burst = |world: &mut World, n| {
        let handles: Vec<Handle<Shot>> = (0..n).map(|_| world.spawn::<Shot>()).collect();
        for h in handles {
            world.destroy(h).unwrap();
        }
    };
    // t = 0: a burst of 1000, all ready again by the frame's end.
    burst(&mut world, 1000);
    for t in 1..=5 {
        world.end_frame_with(second);
        // The first window (0–3 s) needed all 1000; the second has not closed yet.
        assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 1000, "trimmed early, at {t} s");
    }
    world.end_frame_with(second); // 6 s: a whole window needed none of them
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!((stats.ready, stats.trimmed), (16, 984), "all but `capacity` dropped");
    assert_eq!(drops.count(), 984, "each once");

    // A pool in steady use keeps what it uses: 200 a frame.
    burst(&mut world, 200);
    for _ in 0..12 {
        burst(&mut world, 200);
        world.end_frame_with(second);
    }
    assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 200, "what each window needed stays");
    // Idle again: back to `capacity` within two windows.
    for _ in 0..6 {
        world.end_frame_with(second);
    }
    assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 16);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn time_passed_in_small_frames_adds_up() {
    let drops = Drops::default();
    let config = PoolConfig { idle_trim: Some(Duration::from_millis(100)), ..config(Policy::Reuse) };
    let mut world = world(config, &drops);
    let h: Vec<Handle<Shot>> = (0..10).map(|_| world.spawn::<Shot>()).collect();
    h.into_iter().for_each(|h| world.destroy(h).unwrap());
    let frame = Duration::from_millis(10);
    // Window one (10 frames) saw the 10 in use; window two is idle.
    for _ in 0..19 {
        world.end_frame_with(frame);
    }
    assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 10);
    world.end_frame_with(frame);
    assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 0, "capacity 0: all dropped at 200 ms");
    // `end_frame_with(0)` never closes a window.
    let h = world.spawn::<Shot>();
    world.destroy(h).unwrap();
    for _ in 0..100 {
        world.end_frame_with(Duration::ZERO);
    }
    assert_eq!(world.pool_stats::<Shot>().unwrap().ready, 1);
    drop(world);
    drops.assert_each_once();
}

#[test]
fn a_bad_idle_trim_is_refused_with_the_fix() {
    for idle in [Duration::ZERO, Duration::from_micros(999)] {
        let config = PoolConfig { idle_trim: Some(idle), ..PoolConfig::PROJECTILES };
        let error = config.validate().unwrap_err();
        let ConfigError::Invalid { key, message, .. } = &error else { panic!("{error}") };
        assert_eq!(*key, "idle_trim");
        assert!(message.contains("None") && message.contains("below a millisecond"), "{message}");
        let built = World::builder().pool::<respawn_testkit::world::Projectile>(config).build();
        assert!(matches!(built, Err(PoolError::Config(_))), "the World refuses it too");
    }
    assert!(PoolConfig { idle_trim: Some(Duration::from_millis(1)), ..PoolConfig::DEFAULT }.validate().is_ok());
}

#[test]
fn a_trim_racing_the_workers_loses_nothing() {
    // `Purge` with two workers rebuilding every released cell while trims take the ready
    // objects and the queued cells: every object built is dropped exactly once, and the
    // counts balance.
    let drops = Drops::default();
    let config = PoolConfig { capacity: 256, low_watermark: 64, ..config(Policy::Purge) };
    let mut world = world(config, &drops);
    let rounds = if cfg!(miri) { 3 } else { 200 };
    let mut live: Vec<Handle<Shot>> = Vec::new();
    for round in 0..rounds {
        for _ in 0..(round % 7) * 40 {
            live.push(world.spawn::<Shot>());
        }
        for h in live.drain(..live.len() / 2) {
            world.destroy(h).unwrap();
        }
        match round % 3 {
            0 => drop(world.clear_pool::<Shot>().unwrap()),
            1 => drop(world.shrink_pool::<Shot>(round % 50).unwrap()),
            _ => drop(world.end_frame()),
        }
        assert!(live.iter().all(|&h| world.get(h).is_some()));
        let stats = world.pool_stats::<Shot>().unwrap();
        assert_eq!(stats.in_use, live.len(), "round {round}");
    }
    settle(&mut world);
    let stats = world.pool_stats::<Shot>().unwrap();
    assert_eq!(
        drops.made(),
        drops.count() + stats.in_use + stats.ready,
        "every object built is live, ready or dropped"
    );
    drop(world);
    drops.assert_each_once();
}

mod model {
    //! Random programs of spawns, destroys, trims and frames against a `HashMap` model,
    //! under each policy: live handles resolve to their values, stale ones never, the pool
    //! counts what is in use, a trim to `n` leaves at most `n` ready, and every object is
    //! dropped exactly once.

    use std::collections::HashMap;
    use std::time::Duration;

    use proptest::prelude::*;

    use super::{config, world, Drops, Shot};
    use respawn::{Handle, Policy, PoolConfig, World};

    #[derive(Clone, Debug)]
    enum Op {
        Spawn { n: usize, damage: u32 },
        Destroy { pick: usize, n: usize },
        Shrink { keep: usize },
        Clear,
        Frame { ms: u64 },
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (1..80usize, any::<u32>()).prop_map(|(n, damage)| Op::Spawn { n, damage }),
            3 => (any::<usize>(), 1..80usize).prop_map(|(pick, n)| Op::Destroy { pick, n }),
            1 => (0..100usize).prop_map(|keep| Op::Shrink { keep }),
            1 => Just(Op::Clear),
            2 => (0..400u64).prop_map(|ms| Op::Frame { ms }),
        ]
    }

    fn run(policy: Policy, ops: Vec<Op>) -> Result<(), TestCaseError> {
        let drops = Drops::default();
        let config = PoolConfig { idle_trim: Some(Duration::from_millis(500)), ..config(policy) };
        let mut world: World = world(config, &drops);
        let mut live: HashMap<Handle<Shot>, u32> = HashMap::new();
        let mut stale: Vec<Handle<Shot>> = Vec::new();
        for op in ops {
            match op {
                Op::Spawn { n, damage } => {
                    for _ in 0..n {
                        let h = world.spawn_with(|s: &mut Shot| s.damage = damage);
                        // Rooted while alive, so `Default`'s collections keep it.
                        world.add_to_root(h).unwrap();
                        live.insert(h, damage);
                    }
                }
                Op::Destroy { pick, n } => {
                    let mut handles: Vec<Handle<Shot>> = live.keys().copied().collect();
                    handles.sort();
                    for h in handles.into_iter().cycle().skip(pick % live.len().max(1)).take(n.min(live.len())) {
                        world.remove_from_root(h).unwrap();
                        world.destroy(h).unwrap();
                        live.remove(&h);
                        stale.push(h);
                    }
                }
                Op::Shrink { keep } => {
                    // Only the game thread queues work: what the workers hold or build can
                    // only move on to `ready`, so it bounds what arrives after the trim.
                    let before = world.pool_stats::<Shot>().unwrap();
                    world.shrink_pool::<Shot>(keep).unwrap();
                    let s = world.pool_stats::<Shot>().unwrap();
                    prop_assert!(s.ready + s.building <= keep + before.held + before.building, "{before:?} {s:?}");
                    if policy == Policy::Reuse {
                        prop_assert!(s.ready == keep.min(before.ready), "{before:?} {s:?}");
                    }
                }
                Op::Clear => {
                    world.clear_pool::<Shot>().unwrap();
                }
                Op::Frame { ms } => {
                    if policy == Policy::Default {
                        world.collect_garbage();
                    }
                    world.end_frame_with(Duration::from_millis(ms));
                }
            }
            for (h, damage) in &live {
                prop_assert_eq!(world.get(*h).map(|s| s.damage), Some(*damage));
            }
            for h in &stale {
                prop_assert!(world.get(*h).is_none(), "stale {h:?} resolved");
            }
            let stats = world.pool_stats::<Shot>().unwrap();
            if policy != Policy::Default {
                // (`Default`'s garbage counts in use until its purge.)
                prop_assert_eq!(stats.in_use, live.len());
            }
            prop_assert_eq!(world.len::<Shot>() >= live.len(), true);
        }
        drop(world);
        drops.assert_each_once();
        Ok(())
    }

    proptest! {
        #![proptest_config(respawn_testkit::proptest::scaled(24, 2))]

        #[test]
        fn trims_match_a_hashmap_model(
            policy in prop::sample::select(Policy::ALL.to_vec()),
            ops in prop::collection::vec(op(), 1..if cfg!(miri) { 8 } else { 60 }),
        ) {
            run(policy, ops)?;
        }
    }
}
