//! The terminal table: one column per scenario, one row per figure, in the strings the
//! HTML report shows.

use std::fmt::Write as _;

use crate::figures::Run;
use crate::report::{bytes, count, ns, percent, us};

/// The table, ready to print.
pub fn render(run: &Run) -> String {
    let rows: Vec<(&str, Vec<String>)> = vec![
        ("spawns", run.scenarios.iter().map(|s| count(s.spawns)).collect()),
        ("  of them rockets", run.scenarios.iter().map(|s| count(s.payload_spawns)).collect()),
        ("spawn latency p50", run.scenarios.iter().map(|s| ns(s.spawn_ns.p50)).collect()),
        ("spawn latency p99", run.scenarios.iter().map(|s| ns(s.spawn_ns.p99)).collect()),
        ("spawn latency max", run.scenarios.iter().map(|s| ns(s.spawn_ns.max)).collect()),
        ("rocket spawn p99", run.scenarios.iter().map(|s| ns(s.payload_spawn_ns.p99)).collect()),
        ("frame time p50", run.scenarios.iter().map(|s| us(s.frame_us.p50)).collect()),
        ("frame time p99", run.scenarios.iter().map(|s| us(s.frame_us.p99)).collect()),
        ("frame time max", run.scenarios.iter().map(|s| us(s.frame_us.max)).collect()),
        (
            "GC collections",
            run.scenarios.iter().map(|s| gc_or_dash(s.pool.is_some(), count(s.gc.collections))).collect(),
        ),
        (
            "GC longest pause",
            run.scenarios.iter().map(|s| gc_or_dash(s.pool.is_some(), us(s.gc.max_collection_us))).collect(),
        ),
        (
            "GC longest purge slice",
            run.scenarios.iter().map(|s| gc_or_dash(s.pool.is_some(), us(s.gc.max_purge_us))).collect(),
        ),
        ("pool hit rate", run.scenarios.iter().map(|s| s.pool.map_or("—".into(), |p| percent(p.hit_rate))).collect()),
        ("heap allocations", run.scenarios.iter().map(|s| count(s.memory.allocations)).collect()),
        ("  per spawn", run.scenarios.iter().map(|s| format!("{:.3}", s.memory.allocations_per_spawn)).collect()),
        (
            "  per frame, 2nd half",
            run.scenarios.iter().map(|s| format!("{:.1}", s.memory.steady_allocations_per_frame)).collect(),
        ),
        ("peak memory", run.scenarios.iter().map(|s| bytes(s.memory.peak_bytes)).collect()),
        ("  heap", run.scenarios.iter().map(|s| bytes(s.memory.peak_heap_bytes)).collect()),
        ("  slabs", run.scenarios.iter().map(|s| bytes(s.memory.peak_slab_bytes)).collect()),
    ];
    let label = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..run.scenarios.len())
        .map(|i| {
            let head = run.scenarios[i].name.chars().count();
            rows.iter().map(|(_, v)| v[i].chars().count()).max().unwrap_or(0).max(head)
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:label$}", "");
    for (s, w) in run.scenarios.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", s.name);
    }
    out.push('\n');
    for (name, values) in &rows {
        let _ = write!(out, "{name:label$}");
        for (v, w) in values.iter().zip(&widths) {
            let _ = write!(out, "  {v:>w$}");
        }
        out.push('\n');
    }
    out
}

fn gc_or_dash(has_gc: bool, figure: String) -> String {
    if has_gc {
        figure
    } else {
        "—".into()
    }
}
