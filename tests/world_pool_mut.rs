//! `World::pool_mut`'s typed view against the world's own calls: the same random run of
//! spawns, destroys (live, stale, twice, rooted, permanent, owners of sub-objects) and
//! frames, driven once through `World::spawn_with`/`destroy` and once through `PoolMut`,
//! gives the same handles, the same results, the same hook and listener calls and the same
//! counts, under every policy.

use std::cell::Cell;
use std::sync::{Arc, Mutex};

use respawn::{Handle, Object, Policy, PoolConfig, PoolError, PoolMut, PoolStats, Poolable, Trace, World};
use respawn_testkit::rng::Rng;

#[derive(Trace, Object)]
struct Shell {
    n: u32,
}

thread_local! {
    /// `Shell`'s `on_release` and `reset` calls on this thread (the game thread of a run).
    static HOOKS: Cell<(u32, u32)> = const { Cell::new((0, 0)) };
}

impl Poolable for Shell {
    fn create() -> Self {
        Shell { n: 0 }
    }
    fn on_release(&mut self) {
        HOOKS.set((HOOKS.get().0 + 1, HOOKS.get().1));
    }
    fn reset(&mut self) {
        self.n = 0;
        HOOKS.set((HOOKS.get().0, HOOKS.get().1 + 1));
    }
}

type Events = Arc<Mutex<Vec<String>>>;

fn world(policy: Policy, events: &Events) -> World {
    let config = PoolConfig { policy, max: 256, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool::<Shell>(config).build().unwrap();
    let e = Arc::clone(events);
    world.on_spawn(move |h, s: &Shell| e.lock().unwrap().push(format!("spawn {:?} {}", h.raw(), s.n)));
    let e = Arc::clone(events);
    world.on_destroy(move |h, s: &Shell| e.lock().unwrap().push(format!("end {:?} {}", h.raw(), s.n)));
    world
}

/// What one step did, for comparison.
fn outcome(result: Result<(), PoolError>) -> String {
    match result {
        Ok(()) => "ok".into(),
        Err(e) => format!("{e:?}"),
    }
}

/// The way in: the world's own calls, or the view.
enum Via<'w> {
    World(&'w mut World),
    View(PoolMut<'w, Shell>),
}

impl Via<'_> {
    fn spawn(&mut self, n: u32) -> Handle<Shell> {
        match self {
            Via::World(world) => world.spawn_with(|s: &mut Shell| s.n = n),
            Via::View(pool) => pool.spawn_with(|s| s.n = n),
        }
    }
    fn destroy(&mut self, h: Handle<Shell>) -> Result<(), PoolError> {
        match self {
            Via::World(world) => world.destroy(h),
            Via::View(pool) => pool.destroy(h),
        }
    }
}

/// Runs 40 rounds of random steps, through the view (`view`) or the world's own calls, and
/// returns everything observable.
fn run(policy: Policy, seed: u64, view: bool) -> (Vec<String>, Vec<String>, String) {
    HOOKS.set((0, 0));
    let events = Events::default();
    let mut world = world(policy, &events);
    let mut rng = Rng(seed);
    let mut handles: Vec<Handle<Shell>> = vec![world.spawn_permanent(Shell { n: 9999 }).unwrap()];
    let mut log = Vec::new();
    let mut roots = Vec::new();
    for round in 0..40u32 {
        // World-level steps between the view's runs: an owner with a sub-object, a root, a frame.
        let owner = handles[rng.below(handles.len())];
        log.push(format!(
            "sub {:?}",
            world.spawn_sub_with(owner, |s: &mut Shell| s.n = round).map(|h| handles.push(h))
        ));
        let rooted = handles[rng.below(handles.len())];
        if world.root(rooted).map(|r| roots.push(r)).is_ok() {
            log.push(format!("rooted {:?}", rooted.raw()));
        }
        if round % 5 == 4 {
            roots.clear();
            world.end_frame();
        }
        let mut via = match view {
            true => Via::View(world.pool_mut::<Shell>().expect("a pooled class")),
            false => Via::World(&mut world),
        };
        for k in 0..20u32 {
            if rng.below(3) == 0 || handles.len() < 2 {
                let h = via.spawn(round * 100 + k);
                handles.push(h);
                log.push(format!("spawned {:?}", h.raw()));
            } else {
                let h = handles[rng.below(handles.len())];
                let result = outcome(via.destroy(h));
                let (released, reset) = HOOKS.get();
                log.push(format!("destroy {:?}: {result} (on_release {released}, reset {reset})", h.raw()));
            }
        }
    }
    // Committed bytes follow the allocator's background preparation, not the program.
    let stats = format!("{:?}", PoolStats { committed_bytes: 0, ..world.pool_stats::<Shell>().unwrap() });
    let events = events.lock().unwrap().clone();
    (canonical(log), canonical(events), stats)
}

/// `lines` with each handle's slot index (`1025v3`) replaced by the order in which its index
/// first appears (`#0v3`): which slot indices a world's classes get depends on the order its
/// background thread prepares slabs, not on the program.
fn canonical(lines: Vec<String>) -> Vec<String> {
    let mut seen: Vec<String> = Vec::new();
    lines
        .into_iter()
        .map(|line| {
            line.split(' ')
                .map(|word| {
                    let Some((index, generation)) = word.trim_end_matches(':').split_once('v') else {
                        return word.to_owned();
                    };
                    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
                    if !numeric(index) || !numeric(generation) {
                        return word.to_owned();
                    }
                    let k = seen.iter().position(|s| s == index).unwrap_or_else(|| {
                        seen.push(index.to_owned());
                        seen.len() - 1
                    });
                    let colon = if word.ends_with(':') { ":" } else { "" };
                    format!("#{k}v{generation}{colon}")
                })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

#[test]
fn the_view_does_what_the_world_does_under_every_policy() {
    for policy in Policy::ALL {
        for seed in [1, 0x9e37_79b9, 0xdead_beef] {
            let (world_log, world_events, world_stats) = run(policy, seed, false);
            let (view_log, view_events, view_stats) = run(policy, seed, true);
            assert_eq!(world_log, view_log, "{policy:?}, seed {seed}: handles and results");
            assert_eq!(world_events, view_events, "{policy:?}, seed {seed}: listener calls");
            assert_eq!(world_stats, view_stats, "{policy:?}, seed {seed}: pool counts");
            // The run exercised the refusals, not only the happy path.
            for refusal in ["AlreadyReleased", "Rooted", "Permanent"] {
                assert!(view_log.iter().any(|l| l.contains(refusal)), "{policy:?}, seed {seed}: no {refusal}");
            }
            assert!(view_events.iter().any(|e| e.starts_with("end")), "{policy:?}: nobody told of an end");
            // The hooks ran: `on_release` on every policy, `reset` under `Reuse`.
            let last = view_log.iter().rev().find(|l| l.starts_with("destroy")).expect("a destroy");
            assert!(!last.contains("on_release 0,"), "{policy:?}, seed {seed}: no on_release: {last}");
            assert_eq!(!last.contains("reset 0)"), policy == Policy::Reuse, "{policy:?}, seed {seed}: {last}");
        }
    }
}

#[test]
fn errors_through_the_view_change_nothing() {
    let events = Events::default();
    let mut world = world(Policy::Reuse, &events);
    let permanent = world.spawn_permanent(Shell { n: 1 }).unwrap();
    let kept = world.spawn::<Shell>();
    let _root = world.root(kept).unwrap();
    let mut pool = world.pool_mut::<Shell>().unwrap();
    let gone = pool.spawn();
    pool.destroy(gone).unwrap();
    assert!(matches!(pool.destroy(gone), Err(PoolError::AlreadyReleased)));
    assert!(matches!(pool.destroy(kept), Err(PoolError::Arena(respawn::ArenaError::Rooted))));
    assert!(matches!(pool.destroy(permanent), Err(PoolError::Arena(respawn::ArenaError::Permanent))));
    assert!(pool.get(kept).is_some() && pool.get(permanent).is_some() && pool.get(gone).is_none());
    let stats = pool.stats();
    assert_eq!((stats.spawns, stats.released, stats.recycled_reuse), (2, 1, 1));
}

#[test]
fn a_class_without_a_pool_has_no_view() {
    #[derive(Trace, Object)]
    struct Rock {
        mass: u32,
    }
    impl Poolable for Rock {
        fn create() -> Self {
            Rock { mass: 1 }
        }
    }
    let mut world = World::new();
    let rock = world.spawn::<Rock>();
    assert!(world.pool_mut::<Rock>().is_none());
    assert_eq!(world.get(rock).unwrap().mass, 1);
}

/// The view spawns as the world does: `try_spawn` refuses at `max` and changes nothing,
/// `spawn` overflows past it; once the class's memory is exhausted, `try_spawn` says so
/// and `spawn` panics naming the class, with the view's objects all still there.
#[test]
fn the_view_refuses_at_max_overflows_past_it_and_panics_only_when_memory_runs_out() {
    let config = PoolConfig { capacity: 0, max: 4, low_watermark: 0, grow_by: 0, ..PoolConfig::ON_DEMAND };
    let mut world = World::builder().pool::<Shell>(config).build().unwrap();
    let mut shells = world.pool_mut::<Shell>().unwrap();
    let held: Vec<_> = (0..4).map(|n| shells.try_spawn_with(|s| s.n = n).unwrap()).collect();
    let refused = shells.try_spawn();
    assert!(matches!(refused, Err(PoolError::Exhausted { max: 4, .. })), "{refused:?}");
    assert_eq!(shells.stats().spawns, 4, "a refusal spawns nothing");
    let extra = shells.spawn();
    assert_eq!((shells.stats().overflow, shells.stats().in_use), (1, 5));
    assert!(held.iter().chain([&extra]).all(|&h| shells.get(h).is_some()));

    // One slab of 64 cells and no more: the 65th object has nowhere to go.
    let mut heap = respawn::Heap::new();
    let slab = respawn::SlabConfig { cells_per_slab: 64, spare_slabs: 0, max_slabs: 1, huge_pages: false };
    heap.register_with::<Shell>(slab).unwrap();
    let mut pools = respawn::Pools::new(heap);
    pools.add::<Shell>(PoolConfig { capacity: 0, max: 1000, ..PoolConfig::ON_DEMAND }).unwrap();
    let mut shells = pools.pool_mut::<Shell>().unwrap();
    let all: Vec<_> = (0..64).map(|n| shells.spawn_with(|s| s.n = n)).collect();
    let refused = shells.try_spawn();
    assert!(matches!(refused, Err(PoolError::Arena(respawn::ArenaError::Alloc(_)))), "{refused:?}");
    let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| shells.spawn()));
    let payload = panicked.expect_err("spawn panics when memory is exhausted");
    let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(message.contains("PoolMut::spawn::<") && message.contains("Shell"), "{message}");
    assert!(all.iter().enumerate().all(|(n, &h)| shells.get(h).map(|s| s.n) == Some(n as u32)), "nothing lost");
    assert_eq!(shells.stats().in_use, 64);
}
