//! respawn's pools beside their peers on the pool workloads of the targets in
//! `benches/README.md`, one 64-byte projectile per object as in `benches/arena.rs`:
//!
//! - `pool_churn`: 10 000 live objects; each iteration destroys a random live one and
//!   spawns one (slab, slotmap, `Box`, and a `World` under each policy: `Reuse`, `Purge`,
//!   `Default`; a `Purge` pool whose every spawn misses, `purge_inline`, beside `arena`'s
//!   unpooled pairs; `Reuse` again through `World::pool_mut`'s typed view). The same index
//!   sequence and loop as `arena.rs`'s `churn`, so the figures compare.
//! - `pool_miss`: a spawn that misses, alone (a `Purge` pool with nothing ready), beside
//!   an unpooled `Arena` insert of an object built by the same `create`; the destroys run
//!   untimed between rounds of 1 000 spawns.
//! - `pool_construct`: an object whose constructor takes 20 µs, built inline or spawned from
//!   a pool one worker keeps warm; then a paced run (one spawn per 40 µs) prints spawn
//!   latency p50/p99/max and the hit rate.
//!
//! - `pool_purge_drop`: the game thread's time to destroy 10 000 pooled objects under
//!   `Purge` whose destructor frees a heap buffer (as a mesh or a path would), with the
//!   destructors on the game thread (`inline`) or on the pool's worker, in the pass that
//!   rebuilds each cell (`async`, `GcSettings::async_purge`).
//!
//! - `pool_composite`: a tower with three parts (turret, health, radar), each 5 µs to
//!   build, spawned in waves of 256: built inline on the game thread (four constructions,
//!   inserts and links), or popped from a composite pool (`Purge`, one worker rebuilding
//!   each wave before the next; and `Reuse`).
//!
//! Run with `cargo bench --bench pool`; see `benches/LOG.md` for the figures.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use respawn::{Arena, GcSettings, Handle, Object, Policy, PoolConfig, PoolStats, Poolable, Trace, World};

mod common;
use common::{churn_sequence, consume, Projectile, CHURN_LIVE, CHURN_SEQ};

impl Poolable for Projectile {
    fn create() -> Self {
        Projectile::new(0)
    }

    /// The peers' `remove` moves the object out, reading its cache line; `destroy` returns
    /// nothing, so the release hook reads it instead. `reset` stays a no-op: every spawn
    /// below overwrites the whole object in `spawn_with`.
    fn on_release(&mut self) {
        consume(self);
    }
}

/// Collections only when a bench asks for one (the `Default` world, every frame: its
/// price). The world keeps the live projectiles, which nothing references, until they are
/// destroyed.
const GC: GcSettings = GcSettings { time_between_collections: None, purge_budget: None, ..GcSettings::SINGLE_THREADED };

/// Polls the pools (handing cells back, waking the workers) until `T`'s stats satisfy
/// `done`; panics after 30 s. Untimed: it only waits for the workers to warm a pool.
fn wait_for_pool<T: Poolable>(world: &mut World, mut done: impl FnMut(&PoolStats) -> bool) {
    let start = Instant::now();
    loop {
        world.pools_mut().maintain();
        let stats = world.pool_stats::<T>().expect("a pooled class");
        if done(&stats) {
            return;
        }
        assert!(start.elapsed() < Duration::from_secs(30), "the pool did not warm up: {stats:?}");
        std::thread::sleep(Duration::from_micros(200));
    }
}

// ---------------------------------------------------------------------------------------
// pool_churn: 10 000 live, each iteration destroys a random live object and spawns one.
// ---------------------------------------------------------------------------------------

/// Pairs per game frame: the respawn worlds end a frame (and `Default` collects) this often.
const FRAME: usize = 1000;

/// `Reuse`: no workers, nothing precreated (Unity's `ObjectPool`): released objects wait in
/// the game thread's magazines, and each spawn of the churn pops the one just released.
const REUSE: PoolConfig = PoolConfig {
    capacity: 16_384,
    max: 1 << 16,
    low_watermark: 0,
    grow_by: 0,
    policy: Policy::Reuse,
    precreate: false,
    workers: 0,
    idle_trim: None,
};

/// `Purge`: 16 384 precreated on one worker, which rebuilds every released cell.
const PURGE: PoolConfig = PoolConfig {
    capacity: 16_384,
    max: 1 << 16,
    low_watermark: 1024,
    grow_by: 1024,
    policy: Policy::Purge,
    precreate: true,
    workers: 1,
    idle_trim: None,
};

/// `Default`: the `Purge` pool, recycled through the collector.
const DEFAULT: PoolConfig = PoolConfig { policy: Policy::Default, ..PURGE };

/// `Purge` with no workers and nothing precreated: every spawn misses and builds its object
/// inline, as the spawns of a `Purge` pool whose workers cannot keep up do. Beside it,
/// `arena`: the same pairs unpooled (`Arena::remove`, `Arena::insert`).
const INLINE: PoolConfig =
    PoolConfig { capacity: 0, low_watermark: 0, grow_by: 0, precreate: false, workers: 0, ..PURGE };

/// A world churning `CHURN_LIVE` projectiles.
struct ChurnWorld {
    world: World,
    live: Vec<Handle<Projectile>>,
    collect: bool,
    pos: usize,
}

impl ChurnWorld {
    /// Builds the world, spawns the live set, and waits until the pool is warm: for
    /// `Purge`/`Default`, `capacity - live` objects ready; for `Reuse`, a magazine-load of
    /// released objects (2 048) waiting for the next spawns.
    fn new(config: PoolConfig) -> Self {
        let mut world = World::builder().pool::<Projectile>(config).gc(GC).build().expect("a valid pool");
        if config.precreate {
            wait_for_pool::<Projectile>(&mut world, |s| s.available() >= config.capacity);
        }
        let spawn = |world: &mut World, i: u32| {
            let p = Projectile::new(i);
            world.spawn_with(move |q: &mut Projectile| *q = p)
        };
        let live: Vec<_> = (0..CHURN_LIVE as u32).map(|i| spawn(&mut world, i)).collect();
        if config.precreate {
            let warm = config.capacity - CHURN_LIVE;
            wait_for_pool::<Projectile>(&mut world, |s| s.available() >= warm);
        } else {
            let extra: Vec<_> = (0..2048).map(|i| spawn(&mut world, i)).collect();
            for h in extra {
                world.destroy(h).expect("live projectile");
            }
        }
        Self { world, live, collect: config.policy == Policy::Default, pos: 0 }
    }

    /// What a game does once a frame. `Default` also collects, and the collection's cost
    /// is part of the measurement: it is the price of that policy. The world keeps its
    /// 10 000 live projectiles (they are owned until destroyed), so the collection finds
    /// only the released ones unreachable.
    fn end_frame(&mut self) {
        if self.collect {
            self.world.collect_garbage();
        }
        self.world.end_frame();
    }

    /// Times `iters` destroy+spawn pairs on the same sequence as the peers (`churn_loop`),
    /// ending a frame every `FRAME` pairs.
    #[inline(always)]
    fn churn(&mut self, seq: &[u32], iters: u64) -> Duration {
        let start = Instant::now();
        for _ in 0..iters {
            let k = self.pos;
            self.pos = k.wrapping_add(1);
            let i = seq[k & (CHURN_SEQ - 1)] as usize;
            let p = Projectile::new(k as u32);
            self.world.destroy(self.live[i]).expect("live projectile");
            self.live[i] = self.world.spawn_with(move |q: &mut Projectile| *q = p);
            if k % FRAME == FRAME - 1 {
                self.end_frame();
            }
        }
        start.elapsed()
    }

    /// [`churn`](Self::churn) through the typed view (`World::pool_mut`), taken once per
    /// frame: the pool found once for the frame's pairs, as a loop spawning a volley would.
    #[inline(always)]
    fn churn_view(&mut self, seq: &[u32], iters: u64) -> Duration {
        let start = Instant::now();
        let mut done = 0;
        while done < iters {
            let n = ((FRAME - self.pos % FRAME) as u64).min(iters - done);
            let Self { world, live, pos, .. } = self;
            let mut pool = world.pool_mut::<Projectile>().expect("pooled");
            for _ in 0..n {
                let k = *pos;
                *pos = k.wrapping_add(1);
                let i = seq[k & (CHURN_SEQ - 1)] as usize;
                let p = Projectile::new(k as u32);
                pool.destroy(live[i]).expect("live projectile");
                live[i] = pool.spawn_with(move |q| *q = p);
            }
            done += n;
            if self.pos % FRAME == 0 {
                self.end_frame();
            }
        }
        start.elapsed()
    }

    /// One line of the pool's counters after a bench, printed under its figures.
    fn report(&self, name: &str) {
        let s = self.world.pool_stats::<Projectile>().expect("pooled");
        print!(
            "pool_churn/{name}: {} spawns, hit rate {:.4} % ({} misses), {} precreated, {} grown, {} ready",
            s.spawns,
            100.0 * s.hit_rate(),
            s.misses,
            s.precreated,
            s.grown,
            s.ready
        );
        if self.collect {
            let gc = self.world.stats().gc;
            let total = gc.mark_time + gc.reach_time + gc.gather_time + gc.purge_time;
            print!(
                "; last of {} collections: {:?} ({} objects, {} purged; flag {:?}, reach {:?}, gather {:?}, purge {:?})",
                gc.cycles,
                total,
                gc.objects,
                gc.purged,
                gc.mark_time,
                gc.reach_time,
                gc.gather_time,
                gc.purge_time
            );
        }
        println!();
    }
}

fn pool_churn(c: &mut Criterion) {
    let seq = churn_sequence();
    let seq = &seq[..];
    let mut g = c.benchmark_group("pool_churn");
    g.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));

    common::bench_churn_peers(&mut g, seq);

    for (name, config) in [
        ("respawn_reuse", REUSE),
        ("respawn_purge", PURGE),
        ("respawn_default", DEFAULT),
        ("respawn_purge_inline", INLINE),
    ] {
        let mut state: Option<ChurnWorld> = None;
        g.bench_function(name, |b| {
            let world = state.get_or_insert_with(|| ChurnWorld::new(config));
            b.iter_custom(|iters| world.churn(seq, iters));
        });
        if let Some(world) = &state {
            world.report(name);
        }
        // Dropping the world here joins its worker before the next bench starts.
    }
    // The unpooled pairs `respawn_purge_inline`'s misses are measured against.
    g.bench_function("arena", |b| {
        let mut arena = Arena::new();
        let mut live: Vec<_> = (0..CHURN_LIVE as u32).map(|i| arena.insert(Projectile::new(i))).collect();
        let mut pos = 0usize;
        b.iter_custom(|iters| {
            let start = Instant::now();
            for _ in 0..iters {
                let k = pos;
                pos = k.wrapping_add(1);
                let i = seq[k & (CHURN_SEQ - 1)] as usize;
                consume(&arena.remove(live[i]).expect("live projectile"));
                live[i] = arena.insert(Projectile::new(k as u32));
            }
            start.elapsed()
        });
    });
    // The `Reuse` pairs again through the typed view: what the pool lookup per call costs.
    let mut state: Option<ChurnWorld> = None;
    g.bench_function("respawn_reuse_view", |b| {
        let world = state.get_or_insert_with(|| ChurnWorld::new(REUSE));
        b.iter_custom(|iters| world.churn_view(seq, iters));
    });
    if let Some(world) = &state {
        world.report("respawn_reuse_view");
    }

    g.finish();
}

/// Spawns timed per round in `pool_miss`; the round's destroys run untimed after it.
const MISS_ROUND: u64 = 1000;

/// `iters` spawns in rounds of [`MISS_ROUND`]: `spawn(k)` is timed, `retire(handles)` (the
/// destroys, the frame's end) is not.
fn spawn_rounds<H>(iters: u64, mut spawn: impl FnMut(u32) -> H, mut retire: impl FnMut(&mut Vec<H>)) -> Duration {
    let mut handles = Vec::with_capacity(MISS_ROUND as usize);
    let mut timed = Duration::ZERO;
    let mut done = 0;
    while done < iters {
        let n = MISS_ROUND.min(iters - done);
        let start = Instant::now();
        for k in 0..n {
            handles.push(spawn(k as u32));
        }
        timed += start.elapsed();
        retire(&mut handles);
        handles.clear();
        done += n;
    }
    timed
}

/// A spawn that misses, alone: a `Purge` pool with nothing ready (`INLINE`) builds each
/// object on the game thread, against the unpooled `Arena` insert of an object built by
/// the same `create` and `init`. The target: the miss costs no more than the insert. Both
/// keep the churn's 10 000 live objects beside the round's.
fn pool_miss(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_miss");
    g.sample_size(50).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(2));
    let mut state: Option<ChurnWorld> = None;
    g.bench_function("respawn_purge_miss", |b| {
        let ChurnWorld { world, .. } = state.get_or_insert_with(|| ChurnWorld::new(INLINE));
        b.iter_custom(|iters| {
            let world = std::cell::RefCell::new(&mut *world);
            spawn_rounds(
                iters,
                |k| {
                    let p = Projectile::new(k);
                    world.borrow_mut().spawn_with(move |q: &mut Projectile| *q = p)
                },
                |handles| {
                    let mut world = world.borrow_mut();
                    for &h in handles.iter() {
                        world.destroy(h).expect("live projectile");
                    }
                    world.end_frame();
                },
            )
        });
    });
    if let Some(world) = &state {
        world.report("pool_miss/respawn_purge_miss");
    }
    g.bench_function("arena_insert_create", |b| {
        let mut arena = Arena::new();
        let _live: Vec<_> = (0..CHURN_LIVE as u32).map(|i| arena.insert(Projectile::new(i))).collect();
        b.iter_custom(|iters| {
            let arena = std::cell::RefCell::new(&mut arena);
            spawn_rounds(
                iters,
                |k| {
                    let p = Projectile::new(k);
                    let init = move |q: &mut Projectile| *q = p;
                    let mut q = Projectile::create();
                    init(black_box(&mut q));
                    arena.borrow_mut().insert(q)
                },
                |handles| {
                    let mut arena = arena.borrow_mut();
                    for &h in handles.iter() {
                        consume(&arena.remove(h).expect("live projectile"));
                    }
                },
            )
        });
    });
    g.finish();
}

// ---------------------------------------------------------------------------------------
// pool_construct: an object whose constructor takes 20 µs.
// ---------------------------------------------------------------------------------------

/// How long `Expensive::create` takes.
const CONSTRUCT: Duration = Duration::from_micros(20);
/// One spawn per this long in the paced runs (the construct target in `benches/README.md`).
const PACE: Duration = Duration::from_micros(40);
/// Spawns per frame in the paced runs: `end_frame` wakes the worker this often.
const SPAWNS_PER_FRAME: u64 = 16;

/// An object with a costly constructor (loading, baking, building a mesh...), stood in
/// for by 20 µs of arithmetic.
#[derive(Trace, Object)]
struct Expensive {
    data: [u64; 8],
}

impl Poolable for Expensive {
    fn create() -> Self {
        let start = Instant::now();
        let mut data = [0u64; 8];
        let mut n = 0u64;
        while start.elapsed() < CONSTRUCT {
            for (i, d) in data.iter_mut().enumerate() {
                *d = d.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(n ^ i as u64);
            }
            n += 1;
            black_box(&mut data);
        }
        Expensive { data: black_box(data) }
    }
}

/// `Purge`, one worker, 512 precreated: each released object is destroyed at once and its
/// cell rebuilt by the worker.
const EXPENSIVE: PoolConfig = PoolConfig { workers: 1, ..PoolConfig::EXPENSIVE };

/// A world with a warm `Expensive` pool: all `capacity` objects built.
fn expensive_world() -> World {
    let mut world = World::builder().pool::<Expensive>(EXPENSIVE).gc(GC).build().expect("a valid pool");
    wait_for_pool::<Expensive>(&mut world, |s| s.available() >= EXPENSIVE.capacity && s.building == 0);
    world
}

/// A paced spawner: one spawn per `PACE`, ending a frame every `SPAWNS_PER_FRAME`.
struct Paced {
    world: World,
    last: Instant,
    spawns: u64,
}

impl Paced {
    fn new() -> Self {
        Self { world: expensive_world(), last: Instant::now(), spawns: 0 }
    }

    /// Waits (busy) until `PACE` after the previous spawn, spawns, and returns the spawn's
    /// time alone (one `Instant` pair included); then destroys the object (`Purge`: its
    /// cell goes to the worker to be rebuilt).
    fn spawn(&mut self) -> Duration {
        while self.last.elapsed() < PACE {
            std::hint::spin_loop();
        }
        let start = Instant::now();
        self.last = start;
        let h = black_box(self.world.spawn::<Expensive>());
        let took = start.elapsed();
        self.world.destroy(h).expect("live object");
        self.spawns += 1;
        if self.spawns % SPAWNS_PER_FRAME == 0 {
            self.world.end_frame();
        }
        took
    }
}

fn pool_construct(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_construct");
    g.sample_size(50).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));

    g.bench_function("inline", |b| b.iter(|| Box::new(Expensive::create())));

    // Only the spawns are timed; the pacing and the destroys are not, so each sample takes
    // about 40 µs × iterations of wall time, which criterion plans for (its warm-up and
    // sample counts go by wall time under `iter_custom`).
    let mut state: Option<Paced> = None;
    g.bench_function("pooled", |b| {
        let paced = state.get_or_insert_with(Paced::new);
        b.iter_custom(|iters| (0..iters).map(|_| paced.spawn()).sum());
    });
    g.finish();

    // `pooled` filtered out (or `--list`): no latency table either.
    if let Some(paced) = state.take() {
        let s = paced.world.pool_stats::<Expensive>().expect("pooled");
        println!(
            "pool_construct/pooled: {} spawns, hit rate {:.3} % ({} misses); worker create mean {:?}, max {:?}",
            s.spawns,
            100.0 * s.hit_rate(),
            s.misses,
            s.create_mean,
            s.create_max
        );
        drop(paced); // joins its worker before the latency run starts its own
        print_construct_latency();
    }
}

const LATENCY_SPAWNS: usize = 5000;

/// Times `f` alone, `LATENCY_SPAWNS` times, paced as [`Paced::spawn`]; in nanoseconds.
fn paced_samples(mut f: impl FnMut()) -> Vec<u64> {
    let mut last = Instant::now();
    (0..LATENCY_SPAWNS)
        .map(|_| {
            while last.elapsed() < PACE {
                std::hint::spin_loop();
            }
            let start = Instant::now();
            last = start;
            f();
            start.elapsed().as_nanos() as u64
        })
        .collect()
}

/// The p50/p99/max of a paced spawn and the hit rate, inline and pooled, printed as a
/// table (criterion reports a mean per sample, not a tail).
fn print_construct_latency() {
    let timer = paced_samples(|| {});
    let inline = paced_samples(|| drop(black_box(Box::new(Expensive::create()))));

    let mut paced = Paced::new();
    let before = paced.world.pool_stats::<Expensive>().expect("pooled");
    let pooled: Vec<u64> = (0..LATENCY_SPAWNS).map(|_| paced.spawn().as_nanos() as u64).collect();
    let after = paced.world.pool_stats::<Expensive>().expect("pooled");
    let (hits, spawns) = (after.hits - before.hits, after.spawns - before.spawns);

    println!(
        "pool_construct latency: {LATENCY_SPAWNS} spawns, one per {PACE:?} (busy-wait), `end_frame` every \
         {SPAWNS_PER_FRAME}; each figure includes one Instant pair"
    );
    println!("  {:<14} {:>10} {:>10} {:>10} {:>9}", "", "p50", "p99", "max", "hits");
    for (name, samples, hit_rate) in [
        ("empty region", timer, None),
        ("inline", inline, Some(0.0)),
        ("pooled", pooled, Some(100.0 * hits as f64 / spawns as f64)),
    ] {
        let mut ns = samples;
        ns.sort_unstable();
        let pick = |q: f64| ns[((ns.len() - 1) as f64 * q) as usize];
        let hits = hit_rate.map_or_else(|| "-".to_owned(), |h| format!("{h:.2} %"));
        println!(
            "  {name:<14} {:>7} ns {:>7} ns {:>7} ns {hits:>9}",
            pick(0.5),
            pick(0.99),
            ns.last().copied().unwrap_or_default()
        );
    }
    println!(
        "  pooled: {} misses of {spawns}; worker create mean {:?}",
        after.misses - before.misses,
        after.create_mean
    );
}

// ---------------------------------------------------------------------------------------
// pool_purge_drop: destroying 10 000 objects whose destructor frees a buffer, inline or on
// the worker that rebuilds their cells.
// ---------------------------------------------------------------------------------------

/// Objects destroyed per iteration.
const PURGED: usize = 10_000;

/// An object that owns a heap buffer: its destructor frees it, its constructor allocates
/// it (on the worker that builds it).
#[derive(Trace, Object)]
struct Laden {
    #[trace(skip)]
    _path: Vec<u64>,
}

impl Poolable for Laden {
    fn create() -> Self {
        Laden { _path: (0..32).collect() }
    }
}

/// A `Purge` world of `Laden`s, warm, with destructors inline or on the worker.
fn laden_world(async_purge: bool) -> World {
    let config = PoolConfig {
        capacity: PURGED + 1024,
        max: 4 * PURGED,
        low_watermark: 0,
        grow_by: 1024,
        policy: Policy::Purge,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let gc = GcSettings { async_purge, ..GC };
    let mut world = World::builder().pool::<Laden>(config).gc(gc).build().expect("a valid pool");
    wait_for_pool::<Laden>(&mut world, |s| s.available() >= config.capacity && s.building == 0);
    world
}

/// Spawns `PURGED` (untimed), times their destruction alone, then waits (untimed) for the
/// worker to rebuild every cell.
fn purge_round(world: &mut World) -> Duration {
    let handles: Vec<Handle<Laden>> = (0..PURGED).map(|_| world.spawn()).collect();
    let start = Instant::now();
    for h in handles {
        world.destroy(h).expect("live object");
    }
    let took = start.elapsed();
    wait_for_pool::<Laden>(world, |s| s.building == 0 && s.in_use == 0);
    took
}

fn pool_purge_drop(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_purge_drop");
    g.sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    for (name, async_purge) in [("inline", false), ("async", true)] {
        let mut world: Option<World> = None;
        g.bench_function(name, |b| {
            let world = world.get_or_insert_with(|| laden_world(async_purge));
            b.iter_custom(|iters| (0..iters).map(|_| purge_round(world)).sum());
        });
        if let Some(world) = world {
            let s = world.pool_stats::<Laden>().expect("pooled");
            println!(
                "pool_purge_drop/{name}: {} destructors run by the worker, {} misses of {} spawns",
                s.dropped_by_workers, s.misses, s.spawns
            );
        }
    }
    g.finish();
}

// ---------------------------------------------------------------------------------------
// pool_composite: a tower with a turret, a health and a radar part, each 5 µs to build
// (20 µs a set, like `Expensive`), built inline on the game thread or precreated.
// ---------------------------------------------------------------------------------------

/// How long each of the tower's four objects takes to build.
const PART_BUILD: Duration = Duration::from_micros(5);

/// 5 µs of arithmetic, standing in for loading or baking one component.
fn build_work(seed: u64) -> [u64; 4] {
    let start = Instant::now();
    let mut data = [seed; 4];
    let mut n = 0u64;
    while start.elapsed() < PART_BUILD {
        for (i, d) in data.iter_mut().enumerate() {
            *d = d.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(n ^ i as u64);
        }
        n += 1;
        black_box(&mut data);
    }
    black_box(data)
}

macro_rules! tower_part {
    ($name:ident, $seed:literal) => {
        /// One of the tower's parts.
        #[derive(Trace, Object)]
        struct $name {
            data: [u64; 4],
        }

        impl Poolable for $name {
            fn create() -> Self {
                $name { data: build_work($seed) }
            }
        }
    };
}

tower_part!(Turret, 1);
tower_part!(Health, 2);
tower_part!(Radar, 3);

/// The owner: holds its parts' handles, as a game's actor would.
#[derive(Trace, Object)]
struct Tower {
    data: [u64; 4],
    turret: Option<Handle<Turret>>,
    health: Option<Handle<Health>>,
    radar: Option<Handle<Radar>>,
}

impl Poolable for Tower {
    fn create() -> Self {
        Tower { data: build_work(0), turret: None, health: None, radar: None }
    }
}

impl respawn::Composite for Tower {
    type Parts = (Turret, Health, Radar);

    fn assemble() -> (Self, Self::Parts) {
        (Tower::create(), (Turret::create(), Health::create(), Radar::create()))
    }

    fn attach(&mut self, (turret, health, radar): (Handle<Turret>, Handle<Health>, Handle<Radar>)) {
        (self.turret, self.health, self.radar) = (Some(turret), Some(health), Some(radar));
    }
}

/// The tower built on the game thread: four constructions, four inserts, three links.
fn spawn_tower_inline(world: &mut World) -> Handle<Tower> {
    let tower = world.insert(Tower::create());
    let turret = world.insert(Turret::create());
    let health = world.insert(Health::create());
    let radar = world.insert(Radar::create());
    world.set_outer(turret, Some(tower.raw())).expect("live objects");
    world.set_outer(health, Some(tower.raw())).expect("live objects");
    world.set_outer(radar, Some(tower.raw())).expect("live objects");
    let t = world.get_mut(tower).expect("inserted just now");
    (t.turret, t.health, t.radar) = (Some(turret), Some(health), Some(radar));
    tower
}

/// Towers spawned per wave: a level's or a wave's worth, as towers come.
const WAVE: usize = 256;

/// A world whose towers are a composite pool under `policy`, one worker, `WAVE` sets
/// precreated and warm (and no growth between waves: the waves take the stock).
fn tower_world(policy: Policy) -> World {
    let config = PoolConfig {
        capacity: WAVE,
        max: 4 * WAVE,
        low_watermark: 0,
        grow_by: WAVE,
        policy,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let mut world = World::builder().composite::<Tower>(config).gc(GC).build().expect("a valid pool");
    wait_for_pool::<Tower>(&mut world, |s| s.available() >= WAVE && s.building == 0);
    world
}

/// `iters` spawns in waves of up to `WAVE`: each spawn timed alone (one `Instant` pair),
/// then the wave destroyed and a frame ended, untimed. With `refill`, before each wave the
/// pool's worker rebuilds the last wave's sets (untimed: a level load's or a lull's work).
fn tower_waves(world: &mut World, iters: u64, refill: bool, spawn: fn(&mut World) -> Handle<Tower>) -> Duration {
    let mut total = Duration::ZERO;
    let mut wave = Vec::with_capacity(WAVE);
    let mut left = iters as usize;
    while left > 0 {
        if refill {
            wait_for_pool::<Tower>(world, |s| s.available() >= WAVE && s.building == 0);
        }
        for _ in 0..left.min(WAVE) {
            let start = Instant::now();
            wave.push(black_box(spawn(world)));
            total += start.elapsed();
        }
        left -= wave.len();
        for tower in wave.drain(..) {
            world.destroy(tower).expect("live tower");
        }
        world.end_frame();
    }
    total
}

fn pool_composite(c: &mut Criterion) {
    let mut g = c.benchmark_group("pool_composite");
    g.sample_size(30).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    // `inline`: four constructions, inserts and links on the game thread. `precreated`
    // (`Purge`): each destroyed set ends whole, its owner's cell gets new part cells and the
    // worker rebuilds the set before the next wave. `reused` (`Reuse`): the set is reset
    // and spawned again at once.
    let cases: [(&str, Option<Policy>); 3] =
        [("inline", None), ("precreated", Some(Policy::Purge)), ("reused", Some(Policy::Reuse))];
    for (name, policy) in cases {
        let mut world: Option<World> = None;
        g.bench_function(name, |b| {
            let world = world.get_or_insert_with(|| match policy {
                Some(policy) => tower_world(policy),
                None => World::builder().gc(GC).build().expect("a plain world"),
            });
            let spawn: fn(&mut World) -> Handle<Tower> =
                if policy.is_some() { |w| w.spawn_composite::<Tower>().0 } else { spawn_tower_inline };
            b.iter_custom(|iters| tower_waves(world, iters, policy == Some(Policy::Purge), spawn));
        });
        if let Some(stats) = world.as_ref().and_then(|w| w.composite_stats::<Tower>()) {
            let s = &stats.pool;
            println!(
                "pool_composite/{name}: {} spawns, hit rate {:.3} % ({} misses); {} sets reassembled, worker \
                 assemble mean {:?}",
                s.spawns,
                100.0 * s.hit_rate(),
                s.misses,
                stats.reassembled,
                s.create_mean
            );
        }
    }
    g.finish();
}

criterion_group!(benches, pool_churn, pool_miss, pool_construct, pool_purge_drop, pool_composite);
criterion_main!(benches);
