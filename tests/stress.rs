//! Stress: four precreation workers over three pools (`Purge` with two, `Default` and
//! `Reuse` with one each) rebuild cells while the game thread spawns, destroys, collects
//! and purges at a high rate, and a second thread holds `Root` guards of random objects
//! and drops them whenever it likes. Bounded in count and in time: `FRAMES` frames, or
//! fewer if `BUDGET` runs out first (the bound keeps CI short; nothing is timed).
//!
//! Afterwards every object ever constructed was dropped exactly once, and each pool's
//! stats balance: spawns = hits + misses, releases as counted here, nothing in use, and
//! every construction is either a worker's precreation or a miss built inline.

use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use respawn::{ArenaError, Handle, Object, Policy, PoolConfig, PoolError, Poolable, RawHandle, Trace, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::rng::Rng;

const FRAMES: usize = if cfg!(miri) { 4 } else { 4000 };
const SPAWNS_PER_FRAME: usize = if cfg!(miri) { 8 } else { 128 };
const BUDGET: Duration = Duration::from_secs(4);

macro_rules! bolt {
    ($name:ident) => {
        #[derive(Trace, Object)]
        struct $name {
            #[trace(skip)]
            id: usize,
            hp: u32,
            #[trace(skip)]
            drops: Drops,
        }
        impl Drop for $name {
            fn drop(&mut self) {
                self.drops.note_drop(self.id);
            }
        }
        impl Poolable for $name {
            fn create() -> Self {
                unreachable!("built by the counting closure")
            }
            fn reset(&mut self) {
                self.hp = 0;
            }
        }
        impl $name {
            fn new(drops: &Drops) -> Self {
                Self { id: drops.make(), hp: 0, drops: drops.clone() }
            }
        }
    };
}

bolt!(Purged);
bolt!(Collected);
bolt!(Reused);

fn config(policy: Policy, workers: usize) -> PoolConfig {
    PoolConfig {
        capacity: 128,
        max: 8192,
        low_watermark: 64,
        grow_by: 128,
        policy,
        precreate: true,
        workers,
        idle_trim: None,
    }
}

fn world(drops: &Drops) -> World {
    let (a, b, c) = (drops.clone(), drops.clone(), drops.clone());
    World::builder()
        .pool_with::<Purged>(config(Policy::Purge, 2), move || Purged::new(&a))
        .pool_with::<Collected>(config(Policy::Default, 1), move || Collected::new(&b))
        .pool_with::<Reused>(config(Policy::Reuse, 1), move || Reused::new(&c))
        .build()
        .unwrap()
}

/// Destroys the object of class `kind`; `Rooted` is the one refusal expected here.
fn destroy(world: &mut World, kind: usize, raw: RawHandle) -> Result<(), PoolError> {
    match kind {
        0 => world.destroy(Handle::<Purged>::from_raw(raw)),
        1 => world.destroy(Handle::<Collected>::from_raw(raw)),
        _ => world.destroy(Handle::<Reused>::from_raw(raw)),
    }
}

fn hp(world: &World, kind: usize, raw: RawHandle) -> Option<u32> {
    match kind {
        0 => world.get(Handle::<Purged>::from_raw(raw)).map(|o| o.hp),
        1 => world.get(Handle::<Collected>::from_raw(raw)).map(|o| o.hp),
        _ => world.get(Handle::<Reused>::from_raw(raw)).map(|o| o.hp),
    }
}

#[test]
fn workers_and_game_thread_under_load_lose_and_double_nothing() {
    let drops = Drops::default();
    let mut world = world(&drops);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    // The root holder: keeps each guard for a while, drops the oldest as new ones come.
    let (send, recv) = mpsc::channel::<Box<dyn Send>>();
    let holder = thread::spawn(move || {
        let mut held: Vec<Box<dyn Send>> = Vec::new();
        for root in recv {
            held.push(root);
            if held.len() > 16 {
                held.drain(..8);
            }
        }
    });

    // (class, handle, hp) of every object alive in the world.
    let mut live: Vec<(usize, RawHandle, u32)> = Vec::new();
    let mut released = [0u64; 3];
    let mut refused_rooted = 0u64;
    let start = Instant::now();
    let mut frames = 0;
    while frames < FRAMES && start.elapsed() < BUDGET {
        for _ in 0..SPAWNS_PER_FRAME {
            let kind = rng.below(3);
            let hp = rng.below(1000) as u32 + 1;
            let raw = match kind {
                0 => world.spawn_with(|o: &mut Purged| o.hp = hp).raw(),
                1 => world.spawn_with(|o: &mut Collected| o.hp = hp).raw(),
                _ => world.spawn_with(|o: &mut Reused| o.hp = hp).raw(),
            };
            // Spawned objects are collected unless referenced: keep them in the root set.
            world.add_to_root(Handle::<()>::from_raw(raw)).unwrap();
            live.push((kind, raw, hp));
        }
        if frames % 4 == 0 {
            for _ in 0..4 {
                let (kind, raw, _) = live[rng.below(live.len())];
                let root: Box<dyn Send> = match kind {
                    0 => Box::new(world.root(Handle::<Purged>::from_raw(raw)).unwrap()),
                    1 => Box::new(world.root(Handle::<Collected>::from_raw(raw)).unwrap()),
                    _ => Box::new(world.root(Handle::<Reused>::from_raw(raw)).unwrap()),
                };
                send.send(root).unwrap();
            }
        }
        // Destroy about as many as were spawned, so the population stays level.
        for _ in 0..SPAWNS_PER_FRAME.min(live.len()) {
            let i = rng.below(live.len());
            let (kind, raw, _) = live[i];
            world.remove_from_root(Handle::<()>::from_raw(raw)).unwrap();
            match destroy(&mut world, kind, raw) {
                Ok(()) => {
                    live.swap_remove(i);
                    released[kind] += 1;
                    assert!(hp(&world, kind, raw).is_none(), "a destroyed object still resolves");
                }
                Err(PoolError::Arena(ArenaError::Rooted)) => {
                    // A guard on the other thread holds it: put it back in the root set.
                    world.add_to_root(Handle::<()>::from_raw(raw)).unwrap();
                    refused_rooted += 1;
                }
                Err(e) => panic!("destroy {raw:?}: {e}"),
            }
        }
        if frames % 16 == 15 {
            world.collect_garbage();
        } else {
            world.purge(Duration::from_micros(100));
        }
        world.end_frame();
        for &(kind, raw, want) in &live {
            assert_eq!(hp(&world, kind, raw), Some(want), "object {raw:?} of class {kind} changed or vanished");
        }
        frames += 1;
    }

    // Let the holder drop every guard, then end everything.
    drop(send);
    holder.join().unwrap();
    for (kind, raw, _) in live.drain(..) {
        world.remove_from_root(Handle::<()>::from_raw(raw)).unwrap();
        destroy(&mut world, kind, raw).unwrap();
        released[kind] += 1;
    }
    world.collect_garbage();
    world.pools_mut().shutdown();

    let stats = [
        world.pool_stats::<Purged>().unwrap(),
        world.pool_stats::<Collected>().unwrap(),
        world.pool_stats::<Reused>().unwrap(),
    ];
    let mut constructed = 0;
    for (kind, s) in stats.iter().enumerate() {
        assert_eq!(s.spawns, s.hits + s.misses, "{}: every spawn hits or misses", s.class);
        assert_eq!(s.released, released[kind], "{}: releases", s.class);
        assert_eq!(s.in_use, 0, "{}: objects still in use after every destroy", s.class);
        assert_eq!((s.ready, s.building), (0, 0), "{}: ready or building after shutdown", s.class);
        assert_eq!(s.create_panics, 0);
        constructed += s.precreated + s.misses;
    }
    assert_eq!(drops.made() as u64, constructed, "constructions other than precreation and misses");
    assert!(stats.iter().map(|s| s.hits).sum::<u64>() > 0, "no spawn was served by the workers");
    eprintln!(
        "stress: {frames} frames in {:?}, {} spawns, {refused_rooted} destroys refused (rooted elsewhere), {:?}",
        start.elapsed(),
        stats.iter().map(|s| s.spawns).sum::<u64>(),
        stats.iter().map(|s| (s.class, s.hits, s.misses, s.precreated)).collect::<Vec<_>>()
    );
    drop(world);
    drops.assert_each_once();
}
