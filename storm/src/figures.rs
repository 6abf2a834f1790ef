//! What a run measured: the figures the table prints, `--json` serialises and the HTML
//! report draws. Plain data; every number here was measured during the run, or read from
//! the saved baseline it is compared against.

use respawn::CellState;
use serde::{Deserialize, Serialize};

/// A whole invocation: the settings, the machine, one entry per scenario in the order they
/// ran (the last repeat's), and the deciding figures of every repeat.
#[derive(Clone, Debug, Serialize)]
pub struct Run {
    /// The `respawn` package's version.
    pub version: &'static str,
    /// The settings every scenario ran with.
    pub settings: Settings,
    /// The machine and build the run came from.
    pub machine: Machine,
    /// The heap figures come from this counter: `"counting allocator"` or `"dhat"`.
    pub heap_counter: &'static str,
    /// Times the whole storm ran (`--repeat`).
    pub repeats: u32,
    /// One entry per scenario: the last repeat's figures (the table and the charts).
    pub scenarios: Vec<Scenario>,
    /// Each scenario's deciding figures over every repeat: the verdict shows their medians
    /// and spreads.
    pub spreads: Vec<ScenarioSpread>,
    /// The run against a saved baseline (`--baseline`), when one was named.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub comparison: Option<Comparison>,
}

/// The machine and build a run came from, for the report's header.
#[derive(Clone, Debug, Serialize)]
pub struct Machine {
    /// The CPU's model name (`/proc/cpuinfo` on Linux), or `unknown`.
    pub cpu: String,
    /// Logical CPUs the process may use.
    pub cpus: usize,
    /// The operating system (`std::env::consts::OS`).
    pub os: &'static str,
    /// The commit the binary was built from (`git rev-parse --short=12 HEAD` at build
    /// time), or `unknown` outside a git checkout.
    pub commit: &'static str,
    /// `release` or `debug` (whether debug assertions are on).
    pub profile: &'static str,
}

impl Machine {
    /// This machine and this binary.
    pub fn this() -> Self {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|info| {
                info.lines().find_map(|l| {
                    l.strip_prefix("model name").map(|rest| rest.trim_start_matches([' ', '\t', ':']).trim().to_owned())
                })
            })
            .filter(|name| !name.is_empty())
            .unwrap_or_else(|| "unknown".to_owned());
        Machine {
            cpu,
            cpus: std::thread::available_parallelism().map_or(1, |n| n.get()),
            os: std::env::consts::OS,
            commit: env!("RESPAWN_COMMIT"),
            profile: if cfg!(debug_assertions) { "debug" } else { "release" },
        }
    }

    /// One line: `AMD EPYC 7B13 · 2 logical CPUs · linux · release build of 9d0eb2b0c1a2`.
    pub fn line(&self) -> String {
        format!(
            "{} · {} logical CPU{} · {} · {} build of {}",
            self.cpu,
            self.cpus,
            if self.cpus == 1 { "" } else { "s" },
            self.os,
            self.profile,
            self.commit
        )
    }
}

impl Run {
    /// A run of `repeats` repeats: `scenarios` is the last one's figures, `spreads` the
    /// deciding figures of all of them.
    pub fn new(
        settings: Settings,
        machine: Machine,
        repeats: u32,
        scenarios: Vec<Scenario>,
        spreads: Vec<ScenarioSpread>,
    ) -> Self {
        Run {
            version: env!("CARGO_PKG_VERSION"),
            settings,
            machine,
            heap_counter: crate::heap::COUNTER,
            repeats,
            scenarios,
            spreads,
            comparison: None,
        }
    }

    /// The command line that runs this storm again: every setting spelt out, the scenarios
    /// in the order they ran.
    pub fn command_line(&self) -> String {
        let s = &self.settings;
        let mut line = format!(
            "cargo run --release -- --frames {} --rate {} --lifetime {} --payload-us {} --payload-share {} \
             --turrets {} --fps {} --gc-every {} --purge-budget-us {} --incremental-gc-us {} --early-purge-percent {} --seed {}",
            s.frames,
            s.rate,
            s.lifetime,
            s.payload_us,
            s.payload_share,
            s.turrets,
            s.fps,
            s.gc_every,
            s.purge_budget_us,
            s.incremental_gc_us,
            s.early_purge_percent,
            s.seed
        );
        if s.drop_us > 0 {
            line.push_str(&format!(" --drop-us {}", s.drop_us));
        }
        if s.async_purge {
            line.push_str(" --async-purge");
        }
        if self.repeats > 1 {
            line.push_str(&format!(" --repeat {}", self.repeats));
        }
        if !self.scenarios.is_empty() {
            let keys: Vec<&str> = self.scenarios.iter().map(|s| s.key).collect();
            line.push_str(&format!(" --scenarios {}", keys.join(",")));
        }
        if let Some(config) = &s.config {
            line.push_str(&format!(" --config '{}'", config.replace('\'', "'\\''")));
        }
        line
    }
}

/// The storm's settings, as the command line gave them (defaults filled in).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Settings {
    /// Frames per scenario.
    pub frames: u32,
    /// Projectiles fired per frame, over all turrets.
    pub rate: u32,
    /// Turrets firing.
    pub turrets: u32,
    /// Mean projectile lifetime in frames (each lives 50–150 % of it).
    pub lifetime: u32,
    /// Share of projectiles that carry the expensive payload (a `Rocket`), 0–1.
    pub payload_share: f64,
    /// Microseconds a `Rocket`'s constructor spends building its payload.
    pub payload_us: u32,
    /// Frames per second the game loop is paced to (0: as fast as it can).
    pub fps: u32,
    /// Frames between garbage collections (simulated time).
    pub gc_every: u32,
    /// Microseconds of incremental purge per frame.
    pub purge_budget_us: u32,
    /// Microseconds each projectile's destructor spends (0 in runs saved before the flag).
    #[serde(default)]
    pub drop_us: u32,
    /// Pooled projectiles dropped on the pools' workers (`GcSettings::async_purge`).
    #[serde(default)]
    pub async_purge: bool,
    /// Microseconds of incremental mark per frame; 0 marks each collection whole. (Absent
    /// from baselines saved before it existed: 0.)
    #[serde(default)]
    pub incremental_gc_us: u32,
    /// Percentage of the World's cells that garbage may hold before it is purged without
    /// a collection; 0 waits for each collection. (Absent from baselines saved before it
    /// existed: 0.)
    #[serde(default)]
    pub early_purge_percent: u32,
    /// The random seed: every scenario fires the same storm.
    pub seed: u64,
    /// The pool configuration file given with `--config`, if any.
    pub config: Option<String>,
}

/// One scenario's figures.
#[derive(Clone, Debug, Serialize)]
pub struct Scenario {
    /// Short key, as `--scenarios` takes it: `box`, `default`, `purge`, `reuse`.
    pub key: &'static str,
    /// Display name: `Box`, `World · Default`, …
    pub name: &'static str,
    /// One line saying what the scenario does.
    pub about: &'static str,
    /// Projectiles spawned (bullets and rockets).
    pub spawns: u64,
    /// Of those, rockets (the expensive payload).
    pub payload_spawns: u64,
    /// Projectiles retired by hitting a target.
    pub hits: u64,
    /// Projectiles retired at the end of their life.
    pub expired: u64,
    /// Projectiles alive at the end (the storm's last frame).
    pub live_at_end: u64,
    /// Bytes of the projectiles alive at the end, `size_of` each: Box's boxes (without the
    /// allocator's per-block overhead), or the World's live objects.
    pub live_bytes_at_end: u64,
    /// Latency of one spawn call, every spawn, in nanoseconds.
    pub spawn_ns: Summary,
    /// Latency of the rocket spawns alone, in nanoseconds.
    pub payload_spawn_ns: Summary,
    /// Time of one frame's work (spawn, tick, retire, end of frame; not the pacing sleep),
    /// in microseconds, over the steady state (the frames from
    /// [`steady_from`](Self::steady_from) on).
    pub frame_us: Summary,
    /// The first frame (counting from 0) of the steady state, the window the frame-time
    /// and phase figures and the steady allocation count are taken over: the storm's second
    /// half, when the population has levelled off and the pools are warm.
    pub steady_from: u32,
    /// Where a steady-state frame's time goes, phase by phase.
    pub phases: Phases,
    /// The collector's work.
    pub gc: GcFigures,
    /// The pools' figures; `None` for the Box scenario.
    pub pool: Option<PoolFigures>,
    /// Heap and memory figures.
    pub memory: MemoryFigures,
    /// Per-frame and distribution series for the charts.
    pub series: Series,
    /// The slab occupancy map of each pooled class at the end of the storm (empty for Box).
    pub layout: Vec<ClassMap>,
    /// The collector's diagnostics at the end of the storm (a World scenario's; `None` for
    /// Box): why a sample projectile was alive, and what still referenced garbage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnosis: Option<Diagnosis>,
}

/// What the collector's diagnostics said when a World scenario's storm ended, after its
/// figures were taken: [`World::why_alive`](respawn::World::why_alive) about one projectile
/// still flying and about its outer (the turret that fired it), and
/// [`World::find_garbage_references`](respawn::World::find_garbage_references).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Diagnosis {
    /// The sample: the first projectile alive at the end, as the chains name objects
    /// (`Bullet#127`); `None` if none was alive.
    pub object: Option<String>,
    /// Its chain of references from a root, as `ReferenceChain` prints it; `None` when
    /// there is no sample or the next collection would purge it.
    pub chain: Option<String>,
    /// The sample's outer: the turret that fired it (`Turret#3`).
    pub outer: Option<String>,
    /// The outer's chain of references from a root.
    pub outer_chain: Option<String>,
    /// Objects marked as garbage (retired under `Policy::Default`) and not purged yet.
    pub garbage_objects: u64,
    /// References that kept objects and external referencers held to those.
    pub garbage_references: u64,
    /// The first few of them, printed (`Turret#3 -> [traced] Bullet#40 (garbage)`).
    pub first_garbage_references: Vec<String>,
}

/// p50 / p99 / max of a sample, and its mean.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Summary {
    /// Samples taken.
    pub count: u64,
    /// Median.
    pub p50: f64,
    /// 99th percentile.
    pub p99: f64,
    /// Largest sample.
    pub max: f64,
    /// Arithmetic mean.
    pub mean: f64,
}

/// A steady-state frame's time by phase: means over the frames from
/// [`Scenario::steady_from`] on, in microseconds. They add up to the mean frame time, less
/// the few reads of the clock between them.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Phases {
    /// Firing: the turrets' shots and a spawn for each.
    pub spawn_us: f64,
    /// The tick: one pass over every projectile, moving it and judging whether it hit or
    /// expired (a World scenario records the destroys of those that did).
    pub tick_us: f64,
    /// Retiring the dead: Box drops its boxes; a World applies the recorded destroys.
    pub retire_us: f64,
    /// The collector's work at the frame's end (a purge slice, a mark slice, a collection).
    pub collector_us: f64,
    /// The rest of the frame's end: pool upkeep (waking workers, handing back cells,
    /// growing), the frame arena's reset.
    pub upkeep_us: f64,
    /// The tick's time per projectile alive, in nanoseconds: the headline "one pass over
    /// contiguous memory" figure.
    pub tick_ns_per_object: f64,
}

/// How the longest purge slice's time divides between the game thread's own work and time
/// it spent off the processor (preempted), to tell a slice that overruns its budget on its
/// own from one that was interrupted. Read from the thread's processor clock and its count
/// of involuntary context switches around the frame's end.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct SliceTiming {
    /// The slice's wall-clock time, as the collector measured it, in microseconds.
    pub wall_us: f64,
    /// Time the game thread was off the processor during the frame's end (its wall time
    /// less its processor time), in microseconds.
    pub off_cpu_us: f64,
    /// The slice's own processor time: its wall time less the time off the processor.
    pub cpu_us: f64,
    /// Involuntary context switches of the game thread during the frame's end (`None` where
    /// the platform does not count them per thread).
    pub involuntary_switches: Option<u64>,
}

/// What the collector did during a scenario.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct GcFigures {
    /// Collections run.
    pub collections: u64,
    /// Longest pause a collection caused, in microseconds: a whole collection's (lock, mark,
    /// reach, gather; plus the purge when it ran whole), or, marked incrementally, its
    /// longest slice (the last one, which ends it, included).
    pub max_collection_us: f64,
    /// Slices of incremental marks run (`--incremental-gc-us`), the ones that ended a
    /// collection aside (those count as collections).
    pub mark_slices: u64,
    /// Longest of those slices, in microseconds.
    pub max_mark_slice_us: f64,
    /// Incremental purge slices run.
    pub purge_slices: u64,
    /// Longest purge slice, in microseconds.
    pub max_purge_us: f64,
    /// Purge slices that ran past the purge budget.
    pub purge_slices_over_budget: u64,
    /// Of those, the ones whose own processor time stayed within the budget: the thread
    /// was preempted during them. The rest overran on their own.
    pub purge_overruns_preempted: u64,
    /// The longest purge slice's time, split into its own work and time off the processor
    /// (`None` without purge slices, or where the platform has no per-thread clock).
    pub longest_purge: Option<SliceTiming>,
    /// Everything the collector spent on the game thread, in milliseconds.
    pub total_ms: f64,
    /// Objects the collections found unreachable (and purged).
    pub purged: u64,
}

/// The pools' counters, summed over the scenario's classes.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PoolFigures {
    /// Spawns served by a ready object.
    pub hits: u64,
    /// Spawns that had to construct inline.
    pub misses: u64,
    /// `hits / (hits + misses)`.
    pub hit_rate: f64,
    /// Objects the workers built.
    pub precreated: u64,
    /// Times a pool grew.
    pub grows: u64,
    /// Ready objects when the storm ended.
    pub ready_at_end: u64,
    /// Frames waited before the storm for the pools to fill (the loading screen).
    pub warmup_ms: f64,
}

/// Heap allocations and memory: the heap from the counting global allocator, the slabs and
/// side structures from the World's own statistics.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct MemoryFigures {
    /// Heap allocations during the storm, on every thread (pool workers included).
    pub allocations: u64,
    /// Heap allocations per spawn.
    pub allocations_per_spawn: f64,
    /// Heap allocations per frame over the second half of the storm (steady state).
    pub steady_allocations_per_frame: f64,
    /// Bytes allocated on the heap during the storm.
    pub allocated_bytes: u64,
    /// Most heap bytes live at once during the storm (process-wide), less what the process
    /// held before the scenario was set up (earlier scenarios' figures, the command line) and
    /// the harness's sample buffers: the scenario's own, its World included.
    pub peak_heap_bytes: u64,
    /// Most bytes the World's classes held outside the heap, read at frame ends: their slabs
    /// (mapped by the chunk allocator) and object-table slots; 0 for Box.
    pub peak_slab_bytes: u64,
    /// `peak_heap_bytes + peak_slab_bytes`.
    pub peak_bytes: u64,
    /// `peak_bytes` by part, for a World scenario (`None` for Box, all heap).
    pub peak_parts: Option<PeakParts>,
}

/// A World scenario's peak memory by part. The parts add up to `peak_bytes` exactly:
/// `slab_cells + table_slots` is `peak_slab_bytes` (read at the frame end where their sum
/// was largest), and `pool_side + class_side + other_heap` is `peak_heap_bytes` (the side
/// structures read at the frame end where their sum was largest; they live on the heap, so
/// they are part of its peak and `other_heap` is the rest of it).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct PeakParts {
    /// The slabs carved for the World's classes (projectiles and turrets): granted to the
    /// arena, or prepared ahead by the allocator's thread with their pages faulted in.
    /// Mapped, outside the heap.
    pub slab_cells: u64,
    /// The object table's slots for the granted slabs (16 bytes per cell), in a committed
    /// side region outside the heap (`ArenaClassStats::slot_bytes`).
    pub table_slots: u64,
    /// The pools' build and magazine queues and their magazines (`PoolStats::side_bytes`),
    /// on the heap.
    pub pool_side: u64,
    /// The classes' own bookkeeping: live bitmaps, vacant lists, slab bases
    /// (`ArenaClassStats::side_bytes`), on the heap.
    pub class_side: u64,
    /// The rest of the heap's peak: the arena's outer links (each projectile is its turret's
    /// sub-object), the collector's worklists, the frame arena, the allocator's and the
    /// World's own structures.
    pub other_heap: u64,
}

/// Series for the charts.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Series {
    /// Each frame's work time, in microseconds.
    pub frame_us: Vec<f32>,
    /// Each frame's collector time on the game thread, in microseconds (0: none).
    pub gc_us: Vec<f32>,
    /// What the collector did each frame: 0 nothing, 1 purge slice, 2 collection (whole, or
    /// the slice that ended an incremental one), 3 slice of an incremental mark.
    pub gc_kind: Vec<u8>,
    /// Projectiles alive at each frame's end.
    pub live: Vec<u32>,
    /// Heap allocations during each frame.
    pub allocations: Vec<u32>,
    /// Each frame's firing (the shots and their spawns), in microseconds.
    pub spawn_us: Vec<f32>,
    /// Each frame's tick of every projectile, in microseconds.
    pub tick_us: Vec<f32>,
    /// Each frame's retiring of the dead, in microseconds.
    pub retire_us: Vec<f32>,
    /// Each frame's end less the collector's share of it (pool upkeep), in microseconds.
    pub upkeep_us: Vec<f32>,
    /// Heap bytes live at each frame's end: the scenario's own, without what the process
    /// held before it and the harness's buffers.
    pub heap_bytes: Vec<u64>,
    /// Bytes mapped outside the heap at each frame's end: the World's slabs and object
    /// table (0 for Box).
    pub mapped_bytes: Vec<u64>,
    /// The spawn-latency distribution: `[quantile, nanoseconds]` pairs, quantile ascending
    /// from 0 to 1 (a CDF, sampled at 200 points weighted toward the tail).
    pub spawn_cdf: Vec<[f64; 2]>,
}

/// One class's slab occupancy at the end of the storm.
#[derive(Clone, Debug, Serialize)]
pub struct ClassMap {
    /// The class's name.
    pub name: String,
    /// Bytes per cell.
    pub cell_size: usize,
    /// Cells per slab.
    pub cells_per_slab: usize,
    /// Cells in each state, in [`CELL_STATES`] order.
    pub counts: [usize; 5],
    /// One string per slab in address order, one letter per cell: see [`CELL_STATES`].
    #[serde(skip)]
    pub slabs: Vec<String>,
}

/// The letter a cell state is written as in [`ClassMap::slabs`], with its name.
pub const CELL_STATES: [(char, &str); 5] = [
    ('L', CellState::Live.name()),
    ('P', CellState::Pooled.name()),
    ('G', CellState::Garbage.name()),
    ('F', CellState::Free.name()),
    ('R', CellState::Retired.name()),
];

impl Summary {
    /// The summary of `samples` (sorted in place).
    pub fn of(samples: &mut [f64]) -> Self {
        if samples.is_empty() {
            return Self::default();
        }
        samples.sort_unstable_by(f64::total_cmp);
        let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
        Summary {
            count: samples.len() as u64,
            p50: at(0.5),
            p99: at(0.99),
            max: samples[samples.len() - 1],
            mean: samples.iter().sum::<f64>() / samples.len() as f64,
        }
    }
}

/// One deciding figure of one scenario over the repeats.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The figure's machine name (see [`Row::figure`](crate::verdict::Row::figure)).
    pub figure: String,
    /// The median over the repeats (the mean of the middle two for an even count).
    pub median: f64,
    /// The smallest.
    pub min: f64,
    /// The largest.
    pub max: f64,
    /// Every repeat's figure, in the order they ran.
    pub values: Vec<f64>,
}

impl Spread {
    /// The spread of `values` (at least one).
    pub fn of(figure: &str, values: Vec<f64>) -> Self {
        let mut sorted = values.clone();
        sorted.sort_unstable_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 { sorted[n / 2] } else { (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0 };
        Spread { figure: figure.to_owned(), median, min: sorted[0], max: sorted[n - 1], values }
    }

    /// `min–max` as `show` writes them, or the one figure when they agree.
    pub fn text(&self, show: fn(f64) -> String) -> String {
        let (lo, hi) = (show(self.min), show(self.max));
        if lo == hi {
            lo
        } else {
            format!("{lo}–{hi}")
        }
    }
}

/// One scenario's deciding figures over every repeat.
#[derive(Clone, Debug, Serialize)]
pub struct ScenarioSpread {
    /// The scenario's key.
    pub key: &'static str,
    /// The figures that apply to it, in [`DECIDING`](crate::verdict::DECIDING) order.
    pub figures: Vec<Spread>,
}

impl ScenarioSpread {
    /// The spread of `figure`, if it applies.
    pub fn get(&self, figure: &str) -> Option<&Spread> {
        self.figures.iter().find(|f| f.figure == figure)
    }
}

/// A run against a baseline: one [`Change`] per scenario both ran and figure both have.
#[derive(Clone, Debug, Serialize)]
pub struct Comparison {
    /// The baseline's name.
    pub baseline: String,
    /// When it was saved, in seconds since 1970 (UTC).
    pub saved_at: u64,
    /// The commit it was built from.
    pub commit: String,
    /// Times its storm ran.
    pub repeats: u32,
    /// Keys of this run's scenarios the baseline does not have.
    pub missing: Vec<String>,
    /// The changes, scenario by scenario in this run's order, figure by figure in the
    /// verdict's.
    pub changes: Vec<Change>,
}

/// How one figure of one scenario moved against the baseline. Lower is better.
#[derive(Clone, Debug, Serialize)]
pub struct Change {
    /// The scenario's key.
    pub key: String,
    /// The figure's machine name (as the verdict's rows).
    pub figure: String,
    /// The baseline's median.
    pub before: f64,
    /// This run's median.
    pub after: f64,
    /// `after / before`; `None` when `before` is 0.
    pub ratio: Option<f64>,
    /// What the change amounts to: `same` when the medians are equal; `noise` when they
    /// differ by less than [`NOISE`](crate::baseline::NOISE), or when both sides ran more than once and their
    /// spreads (min to max) overlap; `better` or `worse` when the spreads do not overlap;
    /// `lower` or `higher` when either side ran once, so there is no spread to judge by.
    pub judgement: &'static str,
    /// The change as shown: `+12.3% (1.1 ×)`, or `0 → 4` from a zero.
    pub text: String,
}
