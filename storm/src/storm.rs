//! The projectile storm: turrets fire for N frames; every projectile moves, falls, ages and
//! may hit one of a few targets, in one aggregated pass a frame; the dead are retired. The
//! same seeded storm runs once per scenario: `Box` per projectile, and the World under each
//! pool policy.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use respawn::bumpalo::collections::Vec as FrameVec;
use respawn::bumpalo::Bump;
use respawn::{
    CellState, CommandBuffer, ConfigError, ConfigLayers, GcSettings, GcStep, Handle, Object, Policy, PoolConfig,
    PoolError, Poolable, Trace, World,
};

use crate::cpu::ThreadClock;
use crate::figures::{
    ClassMap, Diagnosis, GcFigures, MemoryFigures, PeakParts, Phases, PoolFigures, Scenario, Series, Settings,
    SliceTiming, Summary, CELL_STATES,
};
use crate::heap;

/// The simulated frame length: the storm runs on a fixed 60 Hz step.
pub const DT: f32 = 1.0 / 60.0;

/// Where the targets stand: `[x, y, z, radius]`.
const TARGETS: [[f32; 4]; 4] =
    [[60.0, 2.0, 0.0, 4.0], [-50.0, 2.0, 40.0, 4.0], [0.0, 2.0, -70.0, 5.0], [35.0, 8.0, 55.0, 3.0]];

/// A projectile's motion and fate, shared by both classes (32 bytes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Trace)]
#[repr(C)]
pub struct Motion {
    pos: [f32; 3],
    vel: [f32; 3],
    /// Frames left to live.
    life: u32,
    #[trace(skip)]
    fate: Fate,
}

/// How a projectile's flight ended, if it has.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(u32)]
enum Fate {
    #[default]
    Flying,
    Hit,
    Expired,
}

impl Motion {
    /// One frame: move, fall, age, test the targets. The same float operations in the
    /// same order in every scenario, so every scenario retires the same projectiles.
    #[inline]
    fn step(&mut self) {
        for (p, v) in self.pos.iter_mut().zip(self.vel) {
            *p += v * DT;
        }
        self.vel[1] -= 9.8 * DT;
        self.life -= 1;
        let hit = TARGETS.iter().any(|&[x, y, z, r]| {
            let (dx, dy, dz) = (self.pos[0] - x, self.pos[1] - y, self.pos[2] - z);
            dx * dx + dy * dy + dz * dz < r * r
        });
        self.fate = if hit {
            Fate::Hit
        } else if self.life == 0 || self.pos[1] < 0.0 {
            Fate::Expired
        } else {
            Fate::Flying
        };
    }
}

/// What a turret decides when it fires: where from, how fast, for how long, and which
/// class.
#[derive(Clone, Copy, Debug)]
pub struct Shot {
    turret: u32,
    motion: Motion,
    rocket: bool,
}

/// A cheap projectile (64 bytes, the size the targets in `benches/README.md` are stated for).
#[derive(Trace, Object)]
#[repr(C)]
pub struct Bullet {
    motion: Motion,
    damage: f32,
    owner: u32,
    _pad: [u32; 6],
}

impl Drop for Bullet {
    fn drop(&mut self) {
        tear_down(&mut self._pad[0]);
    }
}

impl Poolable for Bullet {
    fn create() -> Self {
        Bullet { motion: Motion::default(), damage: 0.0, owner: 0, _pad: [0; 6] }
    }
    fn reset(&mut self) {
        self.motion = Motion::default();
    }
}

/// A projectile with an expensive payload: its constructor spends `--payload-us` building
/// it, as a weapon blueprint's construction script would.
#[derive(Trace, Object)]
#[repr(C)]
pub struct Rocket {
    motion: Motion,
    owner: u32,
    /// Built by the constructor; kept by `reset`, which is what makes reuse cheap.
    payload: [u64; 12],
}

/// Nanoseconds a `Rocket`'s constructor spends (set once per run, read by the workers).
static PAYLOAD_NS: AtomicU64 = AtomicU64::new(0);
/// Nanoseconds each projectile's destructor spends (`--drop-us`; set once per run).
static DROP_NS: AtomicU64 = AtomicU64::new(0);

/// Works for `budget` on `payload` (xorshift rounds, the clock read every 64), as a real
/// constructor or destructor would spend it.
fn spend(budget: Duration, payload: &mut [u64]) {
    let start = Instant::now();
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let n = payload.len() as u64;
    while start.elapsed() < budget {
        for _ in 0..64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            payload[(x % n) as usize] = payload[(x % n) as usize].wrapping_add(x);
        }
    }
}

/// A projectile's destructor: `--drop-us` of work (nothing at the default of 0).
fn tear_down(state: &mut u32) {
    let budget = DROP_NS.load(Ordering::Relaxed);
    if budget > 0 {
        let mut scratch = [u64::from(*state); 4];
        spend(Duration::from_nanos(budget), &mut scratch);
        *state = std::hint::black_box(scratch[0]) as u32;
    }
}

impl Drop for Rocket {
    fn drop(&mut self) {
        tear_down(&mut self.owner);
    }
}

impl Poolable for Rocket {
    fn create() -> Self {
        let mut payload = [0u64; 12];
        spend(Duration::from_nanos(PAYLOAD_NS.load(Ordering::Relaxed)), &mut payload);
        Rocket { motion: Motion::default(), owner: 0, payload }
    }
    fn reset(&mut self) {
        self.motion = Motion::default();
    }
}

/// The turrets and the random stream that aims them.
pub struct Turrets {
    rng: u64,
    muzzles: Vec<[f32; 3]>,
    rate: u32,
    lifetime: u32,
    payload_share: f64,
}

impl Turrets {
    /// `settings.turrets` turrets in a ring, aimed by the seeded stream.
    pub fn new(settings: &Settings) -> Self {
        let n = settings.turrets.max(1);
        let muzzles = (0..n)
            .map(|i| {
                let a = i as f32 / n as f32 * std::f32::consts::TAU;
                [a.cos() * 20.0, 1.5, a.sin() * 20.0]
            })
            .collect();
        Turrets {
            rng: settings.seed.wrapping_mul(0x2545_f491_4f6c_dd1d) | 1,
            muzzles,
            rate: settings.rate,
            lifetime: settings.lifetime,
            payload_share: settings.payload_share,
        }
    }

    fn next(&mut self) -> u64 {
        self.rng ^= self.rng >> 12;
        self.rng ^= self.rng << 25;
        self.rng ^= self.rng >> 27;
        self.rng.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }

    /// This frame's shots, `rate` of them, round-robin over the turrets.
    fn fire(&mut self, out: &mut FrameVec<'_, Shot>) {
        for i in 0..self.rate {
            let turret = i % self.muzzles.len() as u32;
            let pos = self.muzzles[turret as usize];
            let (yaw, pitch) = (self.unit() * std::f32::consts::TAU, 0.05 + self.unit() * 0.5);
            let speed = 30.0 + self.unit() * 40.0;
            let vel = [yaw.cos() * pitch.cos() * speed, pitch.sin() * speed, yaw.sin() * pitch.cos() * speed];
            let life = (self.lifetime as f32 * (0.5 + self.unit())).max(1.0) as u32;
            let rocket = f64::from(self.unit()) < self.payload_share;
            out.push(Shot { turret, motion: Motion { pos, vel, life, fate: Fate::Flying }, rocket });
        }
    }
}

/// Which scenario to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Kind {
    /// `Vec<Box<_>>` per class, constructed on the spot, dropped when retired.
    Box,
    /// The World, released projectiles become garbage for the collector.
    Default,
    /// The World, released projectiles are destroyed at once and rebuilt by the workers.
    Purge,
    /// The World, released projectiles are reset and ready again at once.
    Reuse,
}

impl Kind {
    /// The scenario's key, as `--scenarios` takes it and the JSON writes it.
    pub fn key(self) -> &'static str {
        match self {
            Kind::Box => "box",
            Kind::Default => "default",
            Kind::Purge => "purge",
            Kind::Reuse => "reuse",
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Box => "Box",
            Kind::Default => "World · Default",
            Kind::Purge => "World · Purge",
            Kind::Reuse => "World · Reuse",
        }
    }

    fn about(self) -> &'static str {
        match self {
            Kind::Box => "Vec<Box<_>> per class: each projectile built on the spot on the game thread, dropped when retired; no pool, no collector.",
            Kind::Default => "World, Policy::Default: a retired projectile is marked garbage; the collector finds it, purges it in per-frame slices, and its cell goes back to the pool's workers to rebuild.",
            Kind::Purge => "World, Policy::Purge: a retired projectile is dropped at once and its cell handed to the pool's workers to rebuild in the background.",
            Kind::Reuse => "World, Policy::Reuse: a retired projectile is reset and goes straight back among the ready ones; nothing is dropped or rebuilt.",
        }
    }

    fn policy(self) -> Option<Policy> {
        match self {
            Kind::Box => None,
            Kind::Default => Some(Policy::Default),
            Kind::Purge => Some(Policy::Purge),
            Kind::Reuse => Some(Policy::Reuse),
        }
    }
}

/// What one frame's end did, for the GC figures.
#[derive(Clone, Copy, Default)]
struct GcSample {
    micros: f32,
    kind: u8,
    purged: u64,
}

/// Where the frame loop's figures accumulate. Sized before the storm, so recording never
/// allocates inside it.
struct Recorder {
    spawn_ns: Vec<f64>,
    rocket_ns: Vec<f64>,
    series: Series,
    hits: u64,
    expired: u64,
}

impl Recorder {
    fn new(settings: &Settings) -> Self {
        let frames = settings.frames as usize;
        let spawns = frames * settings.rate as usize;
        let rockets = (spawns as f64 * settings.payload_share * 1.2) as usize + 64;
        Recorder {
            spawn_ns: Vec::with_capacity(spawns),
            rocket_ns: Vec::with_capacity(rockets),
            series: Series {
                frame_us: Vec::with_capacity(frames),
                gc_us: Vec::with_capacity(frames),
                gc_kind: Vec::with_capacity(frames),
                live: Vec::with_capacity(frames),
                allocations: Vec::with_capacity(frames),
                spawn_us: Vec::with_capacity(frames),
                tick_us: Vec::with_capacity(frames),
                retire_us: Vec::with_capacity(frames),
                upkeep_us: Vec::with_capacity(frames),
                heap_bytes: Vec::with_capacity(frames),
                mapped_bytes: Vec::with_capacity(frames),
                spawn_cdf: Vec::new(),
            },
            hits: 0,
            expired: 0,
        }
    }

    #[inline]
    fn spawned(&mut self, took: Duration, rocket: bool) {
        let ns = took.as_nanos() as f64;
        self.spawn_ns.push(ns);
        if rocket {
            self.rocket_ns.push(ns);
        }
    }

    /// Projectiles fired and not yet retired.
    fn alive(&self) -> u64 {
        self.spawn_ns.len() as u64 - self.hits - self.expired
    }

    #[inline]
    fn retired(&mut self, fate: Fate) {
        match fate {
            Fate::Hit => self.hits += 1,
            Fate::Expired => self.expired += 1,
            Fate::Flying => {}
        }
    }
}

/// How long a frame's phases before its end took.
#[derive(Clone, Copy, Default)]
struct Phased {
    spawn: Duration,
    tick: Duration,
    retire: Duration,
}

/// One scenario's game: what differs between Box and the World.
trait Game {
    /// Fires this frame's shots, ticks every projectile, retires the dead; says how long
    /// each took.
    fn frame(&mut self, turrets: &mut Turrets, rec: &mut Recorder) -> Phased;
    /// The frame's end: the collector's slice, pool upkeep.
    fn end_frame(&mut self) -> GcSample;
    /// The memory the World's structures hold now, by part (`None` without a World).
    fn memory(&self) -> Option<MemoryNow>;
    /// Bytes of the projectiles alive now, `size_of` each.
    fn live_bytes(&self) -> u64;
}

/// The World's memory at one moment, by part, from its own statistics.
#[derive(Clone, Copy, Debug, Default)]
struct MemoryNow {
    /// Slabs carved for its classes (granted to the arena, or prepared ahead with their
    /// pages faulted in), mapped by the chunk allocator outside the heap.
    slab_cells: u64,
    /// Object-table slots set up for the granted slabs (a side region, outside the heap).
    table_slots: u64,
    /// The pools' queues and magazines (`PoolStats::side_bytes`), on the heap.
    pool_side: u64,
    /// The classes' live bitmaps, vacant lists and slab bases (`ArenaClassStats::side_bytes`),
    /// on the heap.
    class_side: u64,
}

impl MemoryNow {
    /// Outside the heap: the slabs and the table.
    fn mapped(self) -> u64 {
        self.slab_cells + self.table_slots
    }

    /// On the heap: the pools' and the classes' side structures.
    fn side(self) -> u64 {
        self.pool_side + self.class_side
    }
}

/// The Box scenario: a vector of boxes per class (the boxes are the point: one heap object
/// per projectile, as `Box<dyn Actor>` or an engine without pools would have).
#[allow(clippy::vec_box)]
struct Boxes {
    bullets: Vec<Box<Bullet>>,
    rockets: Vec<Box<Rocket>>,
    frame: Bump,
}

impl Game for Boxes {
    fn frame(&mut self, turrets: &mut Turrets, rec: &mut Recorder) -> Phased {
        let start = Instant::now();
        let mut shots = FrameVec::new_in(&self.frame);
        turrets.fire(&mut shots);
        for s in &shots {
            let t = Instant::now();
            if s.rocket {
                let mut r = Box::new(Rocket::create());
                (r.motion, r.owner) = (s.motion, s.turret);
                self.rockets.push(r);
            } else {
                let mut b = Box::new(Bullet::create());
                (b.motion, b.owner, b.damage) = (s.motion, s.turret, 10.0);
                self.bullets.push(b);
            }
            rec.spawned(t.elapsed(), s.rocket);
        }
        drop(shots);
        let ticked = Instant::now();
        self.bullets.iter_mut().for_each(|b| b.motion.step());
        self.rockets.iter_mut().for_each(|r| r.motion.step());
        let retired = Instant::now();
        self.bullets.retain(|b| {
            rec.retired(b.motion.fate);
            b.motion.fate == Fate::Flying
        });
        self.rockets.retain(|r| {
            rec.retired(r.motion.fate);
            r.motion.fate == Fate::Flying
        });
        Phased { spawn: ticked - start, tick: retired - ticked, retire: retired.elapsed() }
    }

    fn end_frame(&mut self) -> GcSample {
        self.frame.reset();
        GcSample::default()
    }

    fn memory(&self) -> Option<MemoryNow> {
        None
    }

    fn live_bytes(&self) -> u64 {
        (self.bullets.len() * size_of::<Bullet>() + self.rockets.len() * size_of::<Rocket>()) as u64
    }
}

/// A World scenario.
struct Pooled {
    world: World,
    turrets: Vec<Handle<Turret>>,
    /// The tick's destroys, applied after it (kept between frames for its room).
    commands: CommandBuffer,
}

/// A turret: an object that owns (is the `outer` of) the projectiles it fires.
///
/// The world keeps what it spawns until the game destroys it, as a level keeps its actors:
/// nothing references a flying projectile, and no collection takes one all the same; a
/// retired one is destroyed, and under `Policy::Default` is garbage at once.
#[derive(Trace, Object)]
pub struct Turret {
    index: u32,
}

/// Ticks `T`'s projectiles: one whose flight ended records its destroy in `commands`, which
/// the frame applies once every class has ticked.
fn tick<T: Poolable>(
    world: &mut World,
    commands: &mut CommandBuffer,
    rec: &mut Recorder,
    motion: impl Fn(&mut T) -> &mut Motion,
) {
    world.tick_recording::<T>(commands, |h, p, commands| {
        let motion = motion(p);
        motion.step();
        if motion.fate != Fate::Flying {
            commands.destroy(h);
            rec.retired(motion.fate);
        }
    });
}

impl Game for Pooled {
    fn frame(&mut self, turrets: &mut Turrets, rec: &mut Recorder) -> Phased {
        let (owners, commands) = (&self.turrets, &mut self.commands);
        self.world.with_frame_arena(|world, frame| {
            let start = Instant::now();
            let mut shots = FrameVec::new_in(frame);
            turrets.fire(&mut shots);
            for s in &shots {
                let owner = owners[s.turret as usize];
                let t = Instant::now();
                let spawned = if s.rocket {
                    world.spawn_sub_with(owner, |r: &mut Rocket| (r.motion, r.owner) = (s.motion, s.turret)).map(drop)
                } else {
                    world
                        .spawn_sub_with(owner, |b: &mut Bullet| {
                            (b.motion, b.owner, b.damage) = (s.motion, s.turret, 10.0)
                        })
                        .map(drop)
                };
                rec.spawned(t.elapsed(), s.rocket);
                spawned.expect("turrets are live");
            }
            let ticked = Instant::now();
            tick::<Bullet>(world, commands, rec, |b| &mut b.motion);
            tick::<Rocket>(world, commands, rec, |r| &mut r.motion);
            let retired = Instant::now();
            let applied = world.apply(commands);
            if let Some(failure) = world.command_failures().first() {
                panic!("a projectile found alive this frame can be destroyed: {failure} ({applied:?})");
            }
            Phased { spawn: ticked - start, tick: retired - ticked, retire: retired.elapsed() }
        })
    }

    fn end_frame(&mut self) -> GcSample {
        let end = self.world.end_frame_with(Duration::from_secs_f32(DT));
        match end.gc {
            GcStep::Idle => GcSample::default(),
            GcStep::Purged(p) => GcSample { micros: p.elapsed.as_secs_f32() * 1e6, kind: 1, purged: 0 },
            // A whole collection, or the last slice of an incremental one: this frame's
            // share.
            GcStep::Collected(s) => {
                GcSample { micros: s.last_slice.as_secs_f32() * 1e6, kind: 2, purged: s.unreachable as u64 }
            }
            GcStep::Marked(p) => GcSample { micros: p.elapsed.as_secs_f32() * 1e6, kind: 3, purged: 0 },
        }
    }

    fn memory(&self) -> Option<MemoryNow> {
        let arena = self.world.heap().arena();
        let mut now = MemoryNow::default();
        let mut class = |stats: Option<respawn::ArenaClassStats>| {
            if let Some(s) = stats {
                now.slab_cells += u64::from(s.memory.carved_slabs) * s.memory.slab_bytes as u64;
                now.table_slots += s.slot_bytes as u64;
                now.class_side += s.side_bytes as u64;
            }
        };
        class(arena.stats::<Bullet>());
        class(arena.stats::<Rocket>());
        class(arena.stats::<Turret>());
        for pool in [self.world.pool_stats::<Bullet>(), self.world.pool_stats::<Rocket>()].into_iter().flatten() {
            now.pool_side += pool.side_bytes as u64;
        }
        Some(now)
    }

    fn live_bytes(&self) -> u64 {
        let bullets = self.world.iter::<Bullet>().count() * size_of::<Bullet>();
        (bullets + self.world.iter::<Rocket>().count() * size_of::<Rocket>()) as u64
    }
}

/// Problems that stop a scenario before its storm starts.
#[derive(Debug)]
pub enum StormError {
    /// The pool configuration file.
    Config(ConfigError),
    /// Building the World.
    World(PoolError),
}

impl std::fmt::Display for StormError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StormError::Config(e) => write!(f, "{e}"),
            StormError::World(e) => write!(f, "{e}"),
        }
    }
}

/// Reads `--config` (if any) and checks it against the pools of every World scenario in
/// `kinds`, so a bad file stops the run before any scenario starts.
pub fn prepare(settings: &Settings, kinds: &[Kind]) -> Result<ConfigLayers, StormError> {
    let mut layers = ConfigLayers::new();
    if let Some(path) = &settings.config {
        layers.push_file(path).map_err(StormError::Config)?;
        layers.check_classes([Bullet::class_name(), Rocket::class_name()]).map_err(StormError::Config)?;
    }
    for &kind in kinds.iter().filter(|k| k.policy().is_some()) {
        pool_configs(kind, settings, &layers)?;
    }
    Ok(layers)
}

/// The pools' configurations for a World scenario: sized from the storm (peak alive plus
/// four frames of spawns ready), the file's layers over them, the scenario's policy last.
fn pool_configs(kind: Kind, s: &Settings, layers: &ConfigLayers) -> Result<[PoolConfig; 2], StormError> {
    let policy = kind.policy().expect("a World scenario");
    let sized = |per_frame: f64| {
        let per_frame = per_frame.ceil().max(1.0) as usize;
        // Alive at once: a shot lives 50–150 % of the mean lifetime, so in a steady storm
        // about `per_frame × lifetime` are in flight (fewer: some hit); `Default` also holds
        // one collection interval's garbage until it is purged. The reserve (four frames of
        // spawns ready) covers the rest: the swing around the mean, and the frames a purge
        // takes. Sized for the mean, not the longest lifetime: a pool that runs short
        // grows by `grow_by` at its low watermark, and the storm's hit rate shows it.
        let held = per_frame * (s.lifetime as usize + 1);
        let reserve = per_frame * 4;
        // `Default` garbage waits for the collection, or until it holds
        // `early_purge_percent` of the cells: then a share p of a pool of `held + reserve`
        // live and ready cells plus its garbage, p / (100 - p) of those, plus a frame's
        // destroys on their way back to the workers.
        let interval = per_frame * s.gc_every as usize;
        let early = match s.early_purge_percent {
            0 => interval,
            p => ((held + reserve) * p as usize).div_ceil(100 - (p as usize).min(99)) + per_frame,
        };
        let garbage = if policy == Policy::Default { interval.min(early) } else { 0 };
        PoolConfig {
            capacity: held + garbage + reserve,
            max: (held + garbage + reserve) * 4,
            low_watermark: reserve,
            grow_by: per_frame * 2,
            policy,
            precreate: true,
            workers: 1,
            idle_trim: None,
        }
    };
    let rate = f64::from(s.rate);
    let mut bullet = sized(rate * (1.0 - s.payload_share));
    let mut rocket = sized(rate * s.payload_share);
    layers.apply(Bullet::class_name(), &mut bullet).map_err(StormError::Config)?;
    layers.apply(Rocket::class_name(), &mut rocket).map_err(StormError::Config)?;
    bullet.policy = policy;
    rocket.policy = policy;
    Ok([bullet, rocket])
}

/// Builds a World scenario's world and its turrets, and waits (at most 10 s) for the
/// workers to fill the pools, as a loading screen would. Returns the game and the wait.
fn build_world(kind: Kind, settings: &Settings, layers: &ConfigLayers) -> Result<(Pooled, Duration), StormError> {
    let start = Instant::now();
    let [bullet, rocket] = pool_configs(kind, settings, layers)?;
    let gc = GcSettings {
        purge_budget: Some(Duration::from_micros(u64::from(settings.purge_budget_us))),
        time_between_collections: Some(Duration::from_secs_f32(DT * settings.gc_every as f32)),
        async_purge: settings.async_purge,
        incremental_mark_budget: (settings.incremental_gc_us > 0)
            .then(|| Duration::from_micros(u64::from(settings.incremental_gc_us))),
        early_purge_percent: u8::try_from(settings.early_purge_percent).ok().filter(|&p| p > 0),
        ..GcSettings::DEFAULT
    };
    let mut world =
        World::builder().pool::<Bullet>(bullet).pool::<Rocket>(rocket).gc(gc).build().map_err(StormError::World)?;
    let turrets = (0..settings.turrets.max(1)).map(|index| world.insert(Turret { index })).collect();
    let filled = |w: &World| {
        let full = |p: Option<respawn::PoolStats>, c: &PoolConfig| p.is_some_and(|p| p.available() >= c.capacity);
        full(w.pool_stats::<Bullet>(), &bullet) && full(w.pool_stats::<Rocket>(), &rocket)
    };
    while !filled(&world) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(2));
    }
    Ok((Pooled { world, turrets, commands: CommandBuffer::new() }, start.elapsed()))
}

/// What the frame loop measured.
struct Measured {
    rec: Recorder,
    gc: GcFigures,
    before: heap::HeapReading,
    after: heap::HeapReading,
    /// The most heap bytes live at once, less what the process held before the scenario
    /// and the harness's buffers.
    peak_heap: u64,
    /// The World's memory at the frame end its slabs and table were largest.
    peak_mapped: Option<MemoryNow>,
    /// The World's memory at the frame end its side structures were largest.
    peak_side: Option<MemoryNow>,
    /// Bytes of the projectiles alive at the end.
    live_bytes: u64,
}

/// The frame loop: `settings.frames` frames of fire, tick, retire and end of frame, paced
/// to `settings.fps`. `floor` is what the heap held before the scenario was set up (the
/// process, earlier scenarios' figures): not the scenario's, and left out of its peak.
fn storm(game: &mut impl Game, settings: &Settings, floor: u64, mut progress: impl FnMut()) -> Measured {
    // The harness's own buffers (the samples, sized for the whole run up front) are live
    // through the run but are not the scenario's memory: measured here and left out of its
    // peak.
    let unrecorded = heap::read().live_bytes;
    let mut rec = Recorder::new(settings);
    let mut turrets = Turrets::new(settings);
    let harness = heap::read().live_bytes.saturating_sub(unrecorded);
    let pace = (settings.fps > 0).then(|| Duration::from_secs_f64(1.0 / f64::from(settings.fps)));
    let mut gc = GcFigures::default();
    heap::reset_peak();
    let before = heap::read();
    let (mut peak_mapped, mut peak_side) = (game.memory(), game.memory());
    let purge_budget_us = f64::from(settings.purge_budget_us);
    let mut next_frame = Instant::now();
    for _ in 0..settings.frames {
        let allocations = heap::read().allocations;
        let start = Instant::now();
        let phased = game.frame(&mut turrets, &mut rec);
        let ended = Instant::now();
        // The thread's clocks around the frame's end, read outside its time: they tell a
        // purge slice that ran long from one whose thread was preempted.
        let clock = ThreadClock::now();
        let end_start = Instant::now();
        let sample = game.end_frame();
        let end = end_start.elapsed();
        let clock_after = ThreadClock::now();
        let took = (ended - start) + end;
        let alive = rec.alive() as u32;
        let series = &mut rec.series;
        let micros = |d: Duration| d.as_secs_f32() * 1e6;
        series.frame_us.push(micros(took));
        series.spawn_us.push(micros(phased.spawn));
        series.tick_us.push(micros(phased.tick));
        series.retire_us.push(micros(phased.retire));
        series.upkeep_us.push((micros(end) - sample.micros).max(0.0));
        series.gc_us.push(sample.micros);
        series.gc_kind.push(sample.kind);
        series.live.push(alive);
        series.allocations.push((heap::read().allocations - allocations) as u32);
        match sample.kind {
            1 => {
                gc.purge_slices += 1;
                let wall = f64::from(sample.micros);
                let timing = clock.cpu.zip(clock_after.cpu).map(|(before, after)| {
                    let off_cpu_us = (end.as_secs_f64() - (after - before).as_secs_f64()).max(0.0) * 1e6;
                    let switches = clock.switches.zip(clock_after.switches).map(|(b, a)| a - b);
                    SliceTiming {
                        wall_us: wall,
                        off_cpu_us,
                        cpu_us: (wall - off_cpu_us).max(0.0),
                        involuntary_switches: switches,
                    }
                });
                if wall > purge_budget_us {
                    gc.purge_slices_over_budget += 1;
                    if timing.is_some_and(|t| t.cpu_us <= purge_budget_us) {
                        gc.purge_overruns_preempted += 1;
                    }
                }
                if wall > gc.max_purge_us {
                    gc.max_purge_us = wall;
                    gc.longest_purge = timing;
                }
            }
            2 => {
                gc.collections += 1;
                gc.max_collection_us = gc.max_collection_us.max(f64::from(sample.micros));
                gc.purged += sample.purged;
            }
            3 => {
                gc.mark_slices += 1;
                gc.max_mark_slice_us = gc.max_mark_slice_us.max(f64::from(sample.micros));
                // A collection's pause is its longest slice.
                gc.max_collection_us = gc.max_collection_us.max(f64::from(sample.micros));
            }
            _ => {}
        }
        gc.total_ms += f64::from(sample.micros) / 1000.0;
        // Read after the frame's allocation count and outside its time.
        let harnessed = heap::read().live_bytes.saturating_sub(harness).saturating_sub(floor);
        rec.series.heap_bytes.push(harnessed);
        let memory = game.memory();
        rec.series.mapped_bytes.push(memory.map_or(0, MemoryNow::mapped));
        if let Some(now) = memory {
            if peak_mapped.is_none_or(|p| now.mapped() > p.mapped()) {
                peak_mapped = Some(now);
            }
            if peak_side.is_none_or(|p| now.side() > p.side()) {
                peak_side = Some(now);
            }
        }
        progress();
        if let Some(pace) = pace {
            next_frame += pace;
            match next_frame.checked_duration_since(Instant::now()) {
                Some(wait) => std::thread::sleep(wait),
                None => next_frame = Instant::now(), // late: no catching up in a burst
            }
        }
    }
    let after = heap::read();
    let peak_heap = heap::peak().saturating_sub(harness).saturating_sub(floor);
    Measured { rec, gc, before, after, peak_heap, peak_mapped, peak_side, live_bytes: game.live_bytes() }
}

/// Runs one scenario's storm and returns its figures. `progress` is called after every
/// frame.
///
/// # Errors
/// A World that cannot be built from the configuration.
pub fn run(
    kind: Kind,
    settings: &Settings,
    layers: &ConfigLayers,
    progress: impl FnMut(),
) -> Result<Scenario, StormError> {
    PAYLOAD_NS.store(u64::from(settings.payload_us) * 1000, Ordering::Relaxed);
    DROP_NS.store(u64::from(settings.drop_us) * 1000, Ordering::Relaxed);
    let floor = heap::read().live_bytes;
    let (measured, pool, layout, diagnosis) = match kind {
        Kind::Box => {
            let mut game = Boxes { bullets: Vec::new(), rockets: Vec::new(), frame: Bump::new() };
            let measured = storm(&mut game, settings, floor, progress);
            (measured, None, Vec::new(), None)
        }
        _ => {
            let (mut game, warmup) = build_world(kind, settings, layers)?;
            let measured = storm(&mut game, settings, floor, progress);
            // The figures first: the diagnosis is a cold walk of its own, outside them.
            let (pool, layout) = (Some(game.pool_figures(warmup)), game.class_maps());
            (measured, pool, layout, Some(game.diagnosis()))
        }
    };
    let mut scenario = measured.into_scenario(kind, pool, layout);
    scenario.diagnosis = diagnosis;
    Ok(scenario)
}

impl Measured {
    fn into_scenario(mut self, kind: Kind, pool: Option<PoolFigures>, layout: Vec<ClassMap>) -> Scenario {
        let rec = &mut self.rec;
        let live_at_end = rec.alive();
        let spawns = rec.spawn_ns.len() as u64;
        let allocations = self.after.allocations - self.before.allocations;
        let series = &rec.series;
        let steady_from = series.frame_us.len() / 2;
        let per = |n: f64, d: usize| if d == 0 { 0.0 } else { n / d as f64 };
        /// The mean of a per-frame series over the steady state (0 for none).
        fn steady_mean<T: Copy + Into<f64>>(values: &[T], from: usize) -> f64 {
            let steady = &values[from.min(values.len())..];
            if steady.is_empty() {
                0.0
            } else {
                steady.iter().map(|&v| v.into()).sum::<f64>() / steady.len() as f64
            }
        }
        let mean = |values: &[f32]| steady_mean(values, steady_from);
        let steady_allocations_per_frame = steady_mean(&series.allocations, steady_from);
        let tick_us = mean(&series.tick_us);
        let phases = Phases {
            spawn_us: mean(&series.spawn_us),
            tick_us,
            retire_us: mean(&series.retire_us),
            collector_us: mean(&series.gc_us),
            upkeep_us: mean(&series.upkeep_us),
            tick_ns_per_object: tick_us * 1e3 / steady_mean(&series.live, steady_from).max(1.0),
        };
        let mut frame_us: Vec<f64> = series.frame_us[steady_from..].iter().map(|&x| f64::from(x)).collect();
        rec.series.spawn_cdf = cdf(&mut rec.spawn_ns);
        Scenario {
            key: kind.key(),
            name: kind.name(),
            about: kind.about(),
            spawns,
            payload_spawns: rec.rocket_ns.len() as u64,
            hits: rec.hits,
            expired: rec.expired,
            live_at_end,
            live_bytes_at_end: self.live_bytes,
            spawn_ns: Summary::of(&mut rec.spawn_ns),
            payload_spawn_ns: Summary::of(&mut rec.rocket_ns),
            frame_us: Summary::of(&mut frame_us),
            steady_from: steady_from as u32,
            phases,
            gc: self.gc,
            pool,
            memory: MemoryFigures {
                allocations,
                allocations_per_spawn: per(allocations as f64, spawns as usize),
                steady_allocations_per_frame,
                allocated_bytes: self.after.allocated_bytes - self.before.allocated_bytes,
                peak_heap_bytes: self.peak_heap,
                peak_slab_bytes: self.peak_mapped.map_or(0, MemoryNow::mapped),
                peak_bytes: self.peak_heap + self.peak_mapped.map_or(0, MemoryNow::mapped),
                peak_parts: self.peak_mapped.zip(self.peak_side).map(|(mapped, side)| PeakParts {
                    slab_cells: mapped.slab_cells,
                    table_slots: mapped.table_slots,
                    pool_side: side.pool_side,
                    class_side: side.class_side,
                    other_heap: self.peak_heap.saturating_sub(side.side()),
                }),
            },
            series: std::mem::take(&mut rec.series),
            layout,
            diagnosis: None,
        }
    }
}

impl Pooled {
    /// The two pools' counters, summed.
    fn pool_figures(&self, warmup: Duration) -> PoolFigures {
        let stats = [self.world.pool_stats::<Bullet>(), self.world.pool_stats::<Rocket>()];
        let mut f = PoolFigures { warmup_ms: warmup.as_secs_f64() * 1e3, ..PoolFigures::default() };
        for s in stats.iter().flatten() {
            f.hits += s.hits;
            f.misses += s.misses;
            f.precreated += s.precreated;
            f.grows += s.grown;
            f.ready_at_end += s.ready as u64;
        }
        let spawns = f.hits + f.misses;
        f.hit_rate = if spawns == 0 { 0.0 } else { f.hits as f64 / spawns as f64 };
        f
    }

    /// Why the first projectile still flying is alive, and its turret (its outer); what
    /// references garbage now. The collector's diagnostics, read after the storm.
    fn diagnosis(&mut self) -> Diagnosis {
        /// Keeps the report's list short.
        const SHOWN: usize = 5;
        let world = &mut self.world;
        let bullet = world.iter::<Bullet>().next().map(|(h, _)| h);
        let sample = match bullet {
            Some(h) => Some((h.raw(), world.why_alive(h))),
            None => world.iter::<Rocket>().next().map(|(h, _)| h).map(|h| (h.raw(), world.why_alive(h))),
        };
        let mut d = Diagnosis::default();
        if let Some((raw, chain)) = sample {
            let chain = chain.expect("a projectile just found alive resolves");
            d.object = chain.as_ref().map(|c| c.target().to_string());
            d.chain = chain.map(|c| c.to_string());
            let outer = world.heap().table().slot(raw.index()).and_then(|slot| slot.outer());
            if let Some(turret) = outer.and_then(|index| world.heap().arena().handle_at(index)) {
                let chain = world.why_alive(Handle::<Turret>::from_raw(turret)).expect("a projectile's outer is live");
                d.outer = chain.as_ref().map(|c| c.target().to_string());
                d.outer_chain = chain.map(|c| c.to_string());
            }
        }
        let garbage = |slot: &respawn::arena::Slot| slot.flags().lifecycle().is_ending();
        d.garbage_objects =
            world.heap().table().runs().map(|(_, run)| run.iter().filter(|s| garbage(s)).count() as u64).sum();
        let found = world.find_garbage_references();
        d.garbage_references = found.len() as u64;
        d.first_garbage_references = found.iter().take(SHOWN).map(ToString::to_string).collect();
        d
    }

    /// The slab occupancy of the projectile classes, as the report draws it.
    fn class_maps(&self) -> Vec<ClassMap> {
        let arena = self.world.heap().arena();
        [arena.class_of::<Bullet>(), arena.class_of::<Rocket>()]
            .into_iter()
            .flatten()
            .filter_map(|id| arena.layout(id))
            .map(|layout| ClassMap {
                name: layout.name.rsplit("::").next().unwrap_or(layout.name).to_string(),
                cell_size: layout.cell_size,
                cells_per_slab: layout.cells_per_slab,
                counts: CellState::ALL.map(|s| layout.count(s)),
                slabs: layout.slabs.iter().map(|slab| slab.cells.iter().map(|&c| letter(c)).collect()).collect(),
            })
            .collect()
    }
}

/// The letter [`CELL_STATES`] writes a state as.
fn letter(state: CellState) -> char {
    let i = CellState::ALL.iter().position(|&s| s == state).expect("ALL lists every state");
    CELL_STATES[i].0
}

/// The spawn-latency CDF: 200 `[quantile, ns]` points, denser toward the tail (half of
/// them above p90). Sorts `samples`.
fn cdf(samples: &mut [f64]) -> Vec<[f64; 2]> {
    if samples.is_empty() {
        return Vec::new();
    }
    samples.sort_unstable_by(f64::total_cmp);
    let last = samples.len() - 1;
    (0..=200)
        .map(|i| {
            let t = f64::from(i) / 200.0;
            // 0..0.9 over the first half, 0.9..1 over the second, the last 1 % stretched.
            let q = if t <= 0.5 { t * 1.8 } else { 1.0 - 0.1 * (1.0 - (t - 0.5) * 2.0).powi(3) };
            [q, samples[(last as f64 * q).round() as usize]]
        })
        .collect()
}
