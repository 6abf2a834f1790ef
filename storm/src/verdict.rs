//! The verdict: the figures that decide between the scenarios, each as a ratio to the `Box`
//! scenario (or to the first scenario run when `Box` was left out), the best of each row
//! marked, and what pooling costs said in plain sentences. The terminal prints it first and
//! the HTML report opens with it.

use serde::Serialize;

use crate::figures::{Run, Scenario, Settings};
use crate::report::{amount, bytes, count, ns, us, NONE};

/// The verdict of a run.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The key of the scenario the ratios are against (`box` when it ran).
    pub baseline: &'static str,
    /// One row per deciding figure.
    pub rows: Vec<Row>,
    /// What each scenario pays for what it gains, one sentence each (none for the baseline).
    pub costs: Vec<String>,
}

/// One deciding figure across the scenarios: lower is better in every row.
#[derive(Clone, Debug, Serialize)]
pub struct Row {
    /// The figure's machine name: `steady_allocations_per_frame`, `rocket_spawn_p99_ns`,
    /// `frame_p50_us`, `frame_p99_us`, `frames_over_budget`, `peak_bytes`.
    pub figure: &'static str,
    /// The row's label.
    pub label: String,
    /// The figure per scenario, in run order (`None`: it does not apply).
    pub values: Vec<Option<f64>>,
    /// The ratio to the baseline's figure per scenario (`None` where either is missing or
    /// the baseline's is 0). Counts (frames over budget) have no ratio.
    pub ratios: Vec<Option<f64>>,
    /// The figure with its ratio, as shown: `2.9 MiB (2.1 ×)`.
    pub texts: Vec<String>,
    /// Whether the scenario has the row's best (lowest) figure; ties are all marked.
    pub best: Vec<bool>,
}

/// The frame budget in microseconds: one frame at the paced rate, or none unpaced.
pub fn frame_budget_us(settings: &Settings) -> Option<f64> {
    (settings.fps > 0).then(|| 1e6 / f64::from(settings.fps))
}

/// Frames of `s` whose work took longer than `budget_us`.
pub fn frames_over(s: &Scenario, budget_us: f64) -> u64 {
    s.series.frame_us.iter().filter(|&&t| f64::from(t) > budget_us).count() as u64
}

/// The verdict of `run`'s scenarios.
pub fn of(run: &Run) -> Verdict {
    let scenarios = &run.scenarios;
    let base = scenarios.iter().position(|s| s.key == "box").unwrap_or(0);
    let baseline = scenarios.get(base).map_or("box", |s| s.key);
    let mut rows = Vec::new();
    let mut row = |figure, label: String, value: fn(&Scenario) -> Option<f64>, show: fn(f64) -> String| {
        let values: Vec<Option<f64>> = scenarios.iter().map(value).collect();
        if values.iter().all(Option::is_none) {
            return;
        }
        rows.push(Row::new(figure, label, values, base, show));
    };
    row(
        "steady_allocations_per_frame",
        "heap allocations / frame (2nd half)".into(),
        |s| Some(s.memory.steady_allocations_per_frame),
        amount,
    );
    row(
        "rocket_spawn_p99_ns",
        "rocket spawn p99".into(),
        |s| (s.payload_spawn_ns.count > 0).then_some(s.payload_spawn_ns.p99),
        ns,
    );
    row("frame_p50_us", "frame time p50".into(), |s| (s.frame_us.count > 0).then_some(s.frame_us.p50), us);
    row("frame_p99_us", "frame time p99".into(), |s| (s.frame_us.count > 0).then_some(s.frame_us.p99), us);
    row("peak_bytes", "peak memory".into(), |s| Some(s.memory.peak_bytes as f64), |b| bytes(b as u64));
    if let Some(budget) = frame_budget_us(&run.settings) {
        let values = scenarios.iter().map(|s| Some(frames_over(s, budget) as f64)).collect();
        let label = format!("frames over the {} budget", us(budget));
        let mut r = Row::new("frames_over_budget", label, values, base, |n| count(n as u64));
        // A count's ratio says little (0 against 0); the count itself is the figure.
        r.ratios.fill(None);
        r.texts = r.values.iter().map(|v| v.map_or(NONE.into(), |n| count(n as u64))).collect();
        rows.push(r);
    }
    let costs = scenarios
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != base)
        .filter_map(|(_, s)| cost(run, &scenarios[base], s))
        .collect();
    Verdict { baseline, rows, costs }
}

impl Row {
    fn new(
        figure: &'static str,
        label: String,
        values: Vec<Option<f64>>,
        base: usize,
        show: fn(f64) -> String,
    ) -> Self {
        let reference = values.get(base).copied().flatten();
        let ratios: Vec<Option<f64>> =
            values.iter().map(|v| v.zip(reference).filter(|&(_, r)| r > 0.0).map(|(v, r)| v / r)).collect();
        let texts = values
            .iter()
            .zip(&ratios)
            .map(|(v, ratio)| match (v, ratio) {
                (None, _) => NONE.to_owned(),
                (Some(v), None) => show(*v),
                (Some(v), Some(r)) => format!("{} ({})", show(*v), times(*r)),
            })
            .collect();
        let low = values.iter().flatten().copied().fold(f64::INFINITY, f64::min);
        let best = values.iter().map(|v| v.is_some_and(|v| v <= low * (1.0 + 1e-9))).collect();
        Row { figure, label, values, ratios, texts, best }
    }
}

/// A ratio: `1 ×`, `0.05 ×`, `2.1 ×`, `12 ×`; `0 ×` for nothing, `<0.01 ×` for a sliver.
pub fn times(r: f64) -> String {
    match r {
        0.0 => "0 ×".to_owned(),
        r if r < 0.005 => "<0.01 ×".to_owned(),
        r if (r - 1.0).abs() < 0.005 => "1 ×".to_owned(),
        r if r >= 9.95 => format!("{r:.0} ×"),
        r if r >= 0.995 => format!("{r:.1} ×"),
        r => format!("{r:.2} ×"),
    }
}

/// What scenario `s` pays against `base`, in one sentence, or `None` if it pays nothing
/// worth saying.
fn cost(run: &Run, base: &Scenario, s: &Scenario) -> Option<String> {
    let mut parts = Vec::new();
    let (mem, base_mem) = (s.memory.peak_bytes, base.memory.peak_bytes);
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
        parts.push(format!(
            "{} collection{} paused the game thread for up to {}",
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

#[cfg(test)]
mod tests {
    use super::times;

    #[test]
    fn ratios_read_as_their_size() {
        assert_eq!(times(1.0), "1 ×");
        assert_eq!(times(1.004), "1 ×");
        assert_eq!(times(2.14), "2.1 ×");
        assert_eq!(times(0.05), "0.05 ×");
        assert_eq!(times(0.0), "0 ×");
        assert_eq!(times(0.001), "<0.01 ×");
        assert_eq!(times(12.3), "12 ×");
    }
}
