//! `cargo run --release`: the projectile storm on the arena, beside the same storm on
//! `Vec<Box<Projectile>>`.
//!
//! Every frame, turrets fire `--rate` projectiles; each lives a random 20–60 frames, is
//! moved by one aggregated tick a frame, and is retired when its life runs out (`retain`).
//! Both scenarios run the same seeded storm and do the same work per frame: spawn, tick,
//! retire. The arena is prefilled for the expected peak first, as a loading screen would.

use std::fmt::Write as _;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use respawn::Arena;

/// A 64-byte projectile, the size DESIGN.md's targets are stated for.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
struct Projectile {
    pos: [f32; 3],
    vel: [f32; 3],
    life: f32,
    damage: f32,
    owner: u32,
    _pad: [u32; 7],
}

const _: () = assert!(std::mem::size_of::<Projectile>() == 64);
const DT: f32 = 1.0 / 60.0;

/// Run settings, from the command line.
struct Settings {
    frames: u32,
    rate: u32,
    seed: u64,
}

fn usage() -> &'static str {
    "usage: respawn [--frames N (default 600)] [--rate SPAWNS_PER_FRAME (default 2000)] [--seed N]"
}

fn parse_args() -> Result<Settings, String> {
    let mut s = Settings { frames: 600, rate: 2000, seed: 0x5eed };
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        if flag == "--help" || flag == "-h" {
            return Err(usage().to_string());
        }
        let value = args.next().ok_or_else(|| format!("{flag} needs a value\n{}", usage()))?;
        let number = |min: u64| -> Result<u64, String> {
            let n: u64 = value.parse().map_err(|_| format!("{flag} takes a whole number, not {value:?}"))?;
            if n < min {
                return Err(format!("{flag} must be at least {min}"));
            }
            Ok(n)
        };
        match flag.as_str() {
            "--frames" => s.frames = number(1)?.try_into().map_err(|_| "--frames is too large".to_string())?,
            "--rate" => s.rate = number(1)?.try_into().map_err(|_| "--rate is too large".to_string())?,
            "--seed" => s.seed = number(0)?,
            _ => return Err(format!("unknown flag {flag}\n{}", usage())),
        }
    }
    Ok(s)
}

/// xorshift64*: the same storm for every scenario.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    fn projectile(&mut self, owner: u32) -> Projectile {
        let life = (20.0 + 40.0 * self.unit()) * DT;
        let vel = [self.unit() * 40.0 - 20.0, self.unit() * 5.0, self.unit() * 40.0 - 20.0];
        Projectile { pos: [0.0; 3], vel, life, damage: 10.0, owner, _pad: [0; 7] }
    }
}

/// What one scenario measured.
#[derive(Default)]
struct Report {
    spawned: u64,
    peak_live: usize,
    spawn: Duration,
    tick: Duration,
    ticked: u64,
    retire: Duration,
    retired: u64,
    frames: Vec<Duration>,
    checksum: f64,
}

impl Report {
    fn frame_percentile(&self, p: f64) -> Duration {
        let mut f = self.frames.clone();
        f.sort();
        f[((f.len() - 1) as f64 * p).round() as usize]
    }
}

fn step(p: &mut Projectile) {
    p.pos[0] += p.vel[0] * DT;
    p.pos[1] += p.vel[1] * DT;
    p.pos[2] += p.vel[2] * DT;
    p.life -= DT;
}

/// One way of holding the storm's projectiles. The driver times each phase the same way
/// for every scenario; a scenario only says how it spawns, ticks and retires.
trait Storm {
    /// Spawns `n` projectiles drawn from `rng`.
    fn spawn(&mut self, rng: &mut Rng, n: u32);
    /// Steps every live projectile; returns how many.
    fn tick(&mut self) -> u64;
    /// Drops the projectiles whose life ran out; returns how many.
    fn retire(&mut self) -> u64;
    /// Projectiles alive.
    fn live(&self) -> usize;
    /// Sum of x positions, to check that every scenario ran the same storm.
    fn checksum(&self) -> f64;
}

impl Storm for Vec<Box<Projectile>> {
    fn spawn(&mut self, rng: &mut Rng, n: u32) {
        for turret in 0..n {
            self.push(Box::new(rng.projectile(turret % 64)));
        }
    }
    fn tick(&mut self) -> u64 {
        self.iter_mut().for_each(|p| step(p));
        self.len() as u64
    }
    fn retire(&mut self) -> u64 {
        let before = self.len();
        self.retain(|p| p.life > 0.0);
        (before - self.len()) as u64
    }
    fn live(&self) -> usize {
        self.len()
    }
    fn checksum(&self) -> f64 {
        self.iter().map(|p| f64::from(p.pos[0])).sum()
    }
}

impl Storm for Arena {
    fn spawn(&mut self, rng: &mut Rng, n: u32) {
        let mut store = self.store_mut::<Projectile>().expect("64-byte projectiles are a valid class");
        for turret in 0..n {
            store.insert(rng.projectile(turret % 64));
        }
    }
    fn tick(&mut self) -> u64 {
        let mut ticked = 0u64;
        Arena::tick::<Projectile>(self, |p| {
            step(p);
            ticked += 1;
        });
        ticked
    }
    fn retire(&mut self) -> u64 {
        let before = self.len::<Projectile>();
        self.retain::<Projectile>(|p| p.life > 0.0);
        (before - self.len::<Projectile>()) as u64
    }
    fn live(&self) -> usize {
        self.len::<Projectile>()
    }
    fn checksum(&self) -> f64 {
        self.iter::<Projectile>().map(|(_, p)| f64::from(p.pos[0])).sum()
    }
}

/// Runs the seeded storm on `storm`, timing spawn, tick and retire each frame.
fn run(s: &Settings, storm: &mut impl Storm) -> Report {
    let mut rng = Rng(s.seed);
    let mut r = Report::default();
    for _ in 0..s.frames {
        let frame = Instant::now();
        let t = Instant::now();
        storm.spawn(&mut rng, s.rate);
        r.spawn += t.elapsed();
        r.spawned += u64::from(s.rate);
        r.peak_live = r.peak_live.max(storm.live());

        let t = Instant::now();
        r.ticked += storm.tick();
        r.tick += t.elapsed();

        let t = Instant::now();
        r.retired += storm.retire();
        r.retire += t.elapsed();
        r.frames.push(frame.elapsed());
    }
    r.checksum = storm.checksum();
    r
}

/// Nanoseconds per item; NaN (printed as "NaN", read "none") when there were no items.
fn ns_per(d: Duration, n: u64) -> f64 {
    if n == 0 {
        return f64::NAN;
    }
    d.as_nanos() as f64 / n as f64
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn row(name: &str, r: &Report, frames: u32) -> String {
    format!(
        "{name:<22} {:>10} {:>9} {:>12.0} {:>13.1} {:>9.2} {:>11.2} {:>10.1} {:>8.3} {:>8.3}",
        r.spawned,
        r.peak_live,
        r.spawned as f64 / r.spawn.as_secs_f64() / 1e6,
        ns_per(r.spawn, r.spawned),
        ms(r.tick) / f64::from(frames),
        ns_per(r.tick, r.ticked),
        ns_per(r.retire, r.retired),
        ms(r.frame_percentile(0.5)),
        ms(r.frame_percentile(0.99)),
    )
}

fn main() -> ExitCode {
    let s = match parse_args() {
        Ok(s) => s,
        Err(msg) => {
            eprintln!("respawn: {msg}");
            return ExitCode::from(2);
        }
    };
    println!(
        "respawn — projectile storm on the arena: {} frames, {} spawns a frame, lifetimes 20–60 frames, seed {}",
        s.frames, s.rate, s.seed
    );

    let boxed = run(&s, &mut Vec::<Box<Projectile>>::new());
    let mut arena = Arena::new();
    // What a loading screen does: room for the expected peak (60 frames of fire), now.
    arena.prefill::<Projectile>(s.rate as usize * 60).expect("the default reservation holds the storm");
    let inline_at_load = arena.stats::<Projectile>().expect("registered").memory.inline_preparations;
    let arena_report = run(&s, &mut arena);
    assert_eq!(boxed.retired, arena_report.retired, "both scenarios ran the same storm");

    let mut out = String::new();
    let _ = writeln!(
        out,
        "\n{:<22} {:>10} {:>9} {:>12} {:>13} {:>9} {:>11} {:>10} {:>8} {:>8}",
        "scenario",
        "spawned",
        "peak live",
        "spawns M/s",
        "spawn ns/obj",
        "tick ms",
        "tick ns/obj",
        "retire ns",
        "frame p50",
        "p99 ms"
    );
    let _ = writeln!(out, "{}", row("Vec<Box<Projectile>>", &boxed, s.frames));
    let _ = writeln!(out, "{}", row("respawn Arena", &arena_report, s.frames));
    print!("{out}");

    let stats = arena.stats::<Projectile>().expect("registered");
    let m = &stats.memory;
    println!(
        "\narena memory: {} slabs of {} cells ({} KiB each) in one {} MiB reservation; {} objects live, {} vacant \
         cells; high-water {} cells; {} slabs prepared on the game thread during the storm (worker lagged), {} spare",
        m.granted_slabs,
        m.cells_per_slab,
        m.slab_bytes / 1024,
        m.reserved_bytes >> 20,
        stats.len,
        stats.vacant,
        m.high_water,
        m.inline_preparations - inline_at_load,
        m.prepared_slabs,
    );
    println!(
        "tick speed-up over boxes: {:.2}×; checksums {:.3} / {:.3} (same storm, same result)",
        ns_per(boxed.tick, boxed.ticked) / ns_per(arena_report.tick, arena_report.ticked).max(1e-9),
        boxed.checksum,
        arena_report.checksum
    );
    ExitCode::SUCCESS
}
