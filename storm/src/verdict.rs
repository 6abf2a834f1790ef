//! The verdict: the figures that decide between the scenarios (their medians over the
//! `--repeat` runs, with the spread), each as a ratio to the `Box` scenario (or to the first
//! scenario run when `Box` was left out), the best of each row marked, and what pooling
//! costs said in plain sentences. The terminal prints it first, the HTML report opens with
//! it, and `--json` writes it beside the run's figures ([`json`]).

use serde::Serialize;

use crate::figures::{Run, Scenario, ScenarioSpread, Settings, Spread};
use crate::format::{amount, bytes, count, ns, times, us, NONE};

/// The verdict of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The key of the scenario the ratios are against (`box` when it ran).
    pub baseline: &'static str,
    /// Runs of the whole storm the figures are the medians of (`--repeat`).
    pub repeats: u32,
    /// One row per deciding figure.
    pub rows: Vec<Row>,
    /// What each scenario pays for what it gains, one sentence each (none for the baseline).
    pub costs: Vec<String>,
}

/// One deciding figure across the scenarios: lower is better in every row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The figure's machine name: `steady_allocations_per_frame`, `rocket_spawn_p99_ns`,
    /// `frame_p50_us`, `frame_p99_us`, `peak_bytes`, `frames_over_budget`.
    pub figure: &'static str,
    /// The row's label.
    pub label: String,
    /// The figure per scenario, in run order: the median over the repeats (`None`: it does
    /// not apply).
    pub values: Vec<Option<f64>>,
    /// The smallest and largest figure over the repeats, per scenario.
    pub spreads: Vec<Option<[f64; 2]>>,
    /// The ratio to the baseline's figure per scenario (`None` where either is missing or
    /// the baseline's is 0). Counts (frames over budget) have no ratio.
    pub ratios: Vec<Option<f64>>,
    /// The figure with its ratio, as shown: `2.9 MiB (2.1 ×)`.
    pub texts: Vec<String>,
    /// The spread as shown, `2.8 MiB–3.0 MiB` (a single figure when the repeats agree).
    pub spread_texts: Vec<String>,
    /// Whether the scenario has the row's best (lowest) figure; ties are all marked.
    pub best: Vec<bool>,
}

/// A deciding figure: how to name it, read it from one run of a scenario, and show it.
pub struct Deciding {
    /// The machine name, as [`Row::figure`].
    pub figure: &'static str,
    /// The row's label (the frame budget's names the budget).
    pub label: fn(&Settings) -> String,
    /// The figure of one run of a scenario, or `None` where it does not apply.
    pub value: fn(&Settings, &Scenario) -> Option<f64>,
    /// How the figure is written.
    pub show: fn(f64) -> String,
    /// Whether a ratio means something (not for a count that is often 0).
    pub ratio: bool,
}

/// The deciding figures, in the verdict's order.
pub const DECIDING: [Deciding; 6] = [
    Deciding {
        figure: "steady_allocations_per_frame",
        label: |_| "heap allocations / frame (2nd half)".into(),
        value: |_, s| Some(s.memory.steady_allocations_per_frame),
        show: amount,
        ratio: true,
    },
    Deciding {
        figure: "rocket_spawn_p99_ns",
        label: |_| "rocket spawn p99".into(),
        value: |_, s| (s.payload_spawn_ns.count > 0).then_some(s.payload_spawn_ns.p99),
        show: ns,
        ratio: true,
    },
    Deciding {
        figure: "frame_p50_us",
        label: |_| "frame time p50".into(),
        value: |_, s| (s.frame_us.count > 0).then_some(s.frame_us.p50),
        show: us,
        ratio: true,
    },
    Deciding {
        figure: "frame_p99_us",
        label: |_| "frame time p99".into(),
        value: |_, s| (s.frame_us.count > 0).then_some(s.frame_us.p99),
        show: us,
        ratio: true,
    },
    Deciding {
        figure: "peak_bytes",
        label: |_| "peak memory".into(),
        value: |_, s| Some(s.memory.peak_bytes as f64),
        show: |b| bytes(b as u64),
        ratio: true,
    },
    Deciding {
        figure: "frames_over_budget",
        label: |settings| format!("frames over the {} budget", us(frame_budget_us(settings).unwrap_or(0.0))),
        value: |settings, s| frame_budget_us(settings).map(|budget| frames_over(s, budget) as f64),
        show: |n| count(n as u64),
        ratio: false,
    },
];

/// The deciding figure named `figure`.
pub fn deciding(figure: &str) -> Option<&'static Deciding> {
    DECIDING.iter().find(|d| d.figure == figure)
}

/// One figure's values so far: its name and one value per repeat.
type Values = (&'static str, Vec<f64>);

/// Collects the deciding figures of each repeat, scenario by scenario, for their spreads.
#[derive(Debug, Default)]
pub struct Tally {
    /// Per scenario key, per figure, the values so far.
    seen: Vec<(&'static str, Vec<Values>)>,
}

impl Tally {
    /// Adds one run of scenario `s`.
    pub fn add(&mut self, settings: &Settings, s: &Scenario) {
        let at = match self.seen.iter().position(|(k, _)| *k == s.key) {
            Some(at) => at,
            None => {
                self.seen.push((s.key, Vec::new()));
                self.seen.len() - 1
            }
        };
        let figures = &mut self.seen[at].1;
        for d in &DECIDING {
            let Some(v) = (d.value)(settings, s) else { continue };
            match figures.iter_mut().find(|(f, _)| *f == d.figure) {
                Some((_, values)) => values.push(v),
                None => figures.push((d.figure, vec![v])),
            }
        }
    }

    /// The spreads, one per scenario in the order they first ran.
    pub fn spreads(&self) -> Vec<ScenarioSpread> {
        self.seen
            .iter()
            .map(|(key, figures)| ScenarioSpread {
                key,
                figures: figures.iter().map(|(f, values)| Spread::of(f, values.clone())).collect(),
            })
            .collect()
    }
}

/// The frame budget in microseconds: one frame at the paced rate, or none unpaced.
pub fn frame_budget_us(settings: &Settings) -> Option<f64> {
    (settings.fps > 0).then(|| 1e6 / f64::from(settings.fps))
}

/// Frames of `s` whose work took longer than `budget_us`.
pub fn frames_over(s: &Scenario, budget_us: f64) -> u64 {
    s.series.frame_us.iter().filter(|&&t| f64::from(t) > budget_us).count() as u64
}

/// The verdict of `run`'s scenarios: each deciding figure's median over the repeats.
pub fn of(run: &Run) -> Verdict {
    let scenarios = &run.scenarios;
    let base = scenarios.iter().position(|s| s.key == "box").unwrap_or(0);
    let baseline = scenarios.get(base).map_or("box", |s| s.key);
    let mut rows = Vec::new();
    for d in &DECIDING {
        let spreads: Vec<Option<Spread>> = scenarios.iter().map(|s| spread(run, s, d.figure)).collect();
        if spreads.iter().all(Option::is_none) {
            continue;
        }
        rows.push(Row::new(d, (d.label)(&run.settings), &spreads, base));
    }
    let costs = scenarios
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != base)
        .filter_map(|(_, s)| cost(run, &scenarios[base], s))
        .collect();
    Verdict { baseline, repeats: run.repeats, rows, costs }
}

/// The run's figures as JSON, with its verdict beside them (`pretty`: indented): what
/// `--json` prints and the report embeds.
pub fn json(run: &Run, pretty: bool) -> String {
    #[derive(Serialize)]
    struct WithVerdict<'a> {
        #[serde(flatten)]
        run: &'a Run,
        verdict: Verdict,
        command_line: String,
    }
    let out = WithVerdict { run, verdict: of(run), command_line: run.command_line() };
    let json = if pretty { serde_json::to_string_pretty(&out) } else { serde_json::to_string(&out) };
    json.expect("figures serialise")
}

/// Scenario `s`'s spread of `figure` over the run's repeats, or, for a run put together
/// without spreads, its one figure.
pub fn spread(run: &Run, s: &Scenario, figure: &str) -> Option<Spread> {
    match run.spreads.iter().find(|sp| sp.key == s.key) {
        Some(sp) => sp.get(figure).cloned(),
        None => {
            let d = deciding(figure)?;
            (d.value)(&run.settings, s).map(|v| Spread::of(figure, vec![v]))
        }
    }
}

impl Row {
    fn new(d: &Deciding, label: String, spreads: &[Option<Spread>], base: usize) -> Self {
        let values: Vec<Option<f64>> = spreads.iter().map(|s| s.as_ref().map(|s| s.median)).collect();
        let reference = values.get(base).copied().flatten();
        let ratios: Vec<Option<f64>> =
            values.iter().map(|v| v.zip(reference).filter(|&(_, r)| d.ratio && r > 0.0).map(|(v, r)| v / r)).collect();
        let texts = values
            .iter()
            .zip(&ratios)
            .map(|(v, ratio)| match (v, ratio) {
                (None, _) => NONE.to_owned(),
                (Some(v), None) => (d.show)(*v),
                (Some(v), Some(r)) => format!("{} ({})", (d.show)(*v), times(*r)),
            })
            .collect();
        let low = values.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let best = values.iter().map(|v| v.is_some_and(|v| v <= low * (1.0 + 1e-9))).collect();
        Row {
            figure: d.figure,
            label,
            values,
            spreads: spreads.iter().map(|s| s.as_ref().map(|s| [s.min, s.max])).collect(),
            ratios,
            texts,
            spread_texts: spreads.iter().map(|s| s.as_ref().map_or(NONE.to_owned(), |s| s.text(d.show))).collect(),
            best,
        }
    }
}

/// What scenario `s` pays against `base`, in one sentence, or `None` if it pays nothing
/// worth saying.
fn cost(run: &Run, base: &Scenario, s: &Scenario) -> Option<String> {
    let mut parts = Vec::new();
    let peak = |s: &Scenario| spread(run, s, "peak_bytes").map_or(s.memory.peak_bytes, |p| p.median as u64);
    let (mem, base_mem) = (peak(s), peak(base));
    if base_mem > 0 && mem > base_mem {
        parts.push(format!(
            "{} {} × {}'s peak memory ({} against {})",
            if s.pool.is_some() { "pooling costs" } else { "it costs" },
            times(mem as f64 / base_mem as f64).trim_end_matches(" ×"),
            base.name,
            bytes(mem),
            bytes(base_mem)
        ));
    }
    if s.gc.purge_slices > 0 {
        let budget = f64::from(run.settings.purge_budget_us);
        let over = if s.gc.max_purge_us > budget { ", over" } else { ", within" };
        parts.push(format!(
            "its collector adds purge slices of up to {} ({} slices{over} the {} budget)",
            us(s.gc.max_purge_us),
            count(s.gc.purge_slices),
            us(budget)
        ));
    }
    if s.gc.collections > 0 && base.gc.collections == 0 {
        let marked = match s.gc.mark_slices {
            0 => String::new(),
            n => {
                format!(", marked over {} slices of {} budget", count(n), us(f64::from(run.settings.incremental_gc_us)))
            }
        };
        parts.push(format!(
            "{} collection{}{marked} paused the game thread for up to {}",
            count(s.gc.collections),
            if s.gc.collections == 1 { "" } else { "s" },
            us(s.gc.max_collection_us)
        ));
    }
    if let Some(pool) = s.pool.filter(|p| p.misses > 0) {
        parts.push(format!("{} spawns missed the pool and were built inline", count(pool.misses)));
    }
    if parts.is_empty() {
        return None;
    }
    Some(format!("{}: {}.", s.name, parts.join("; ")))
}
