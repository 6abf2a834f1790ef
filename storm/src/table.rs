//! The terminal table: one column per scenario, one row per figure. The summary rows are
//! the HTML report's summary cells ([`report::summary_row`]), so both show the same strings.

use std::fmt::Write as _;

use crate::figures::{Run, Scenario};
use crate::report::{self, bytes, ns, us, NONE};

/// The row label of each summary figure.
fn label(figure: &str) -> &'static str {
    match figure {
        "spawns" => "spawns",
        "spawn_p50_ns" => "spawn latency p50",
        "spawn_p99_ns" => "spawn latency p99",
        "spawn_max_ns" => "spawn latency max",
        "frame_p50_us" => "frame time p50",
        "frame_p99_us" => "frame time p99",
        "frame_max_us" => "frame time max",
        "gc_collections" => "GC collections",
        "gc_max_pause_us" => "GC longest pause",
        "hit_rate" => "pool hit rate",
        "allocations" => "heap allocations",
        "allocations_per_spawn" => "  per spawn",
        "steady_allocations_per_frame" => "  per frame, 2nd half",
        "peak_bytes" => "peak memory",
        _ => "?",
    }
}

/// A row of the terminal's own: its label and how to format a scenario's figure.
type Extra = (&'static str, fn(&Scenario) -> String);

/// Rows the terminal shows beside the summary, after the summary row named first.
fn extras(after: &str) -> Vec<Extra> {
    match after {
        "spawns" => vec![("  of them rockets", |s| report::count(s.payload_spawns))],
        "spawn_max_ns" => vec![("rocket spawn p99", |s| {
            if s.payload_spawn_ns.count == 0 {
                NONE.into()
            } else {
                ns(s.payload_spawn_ns.p99)
            }
        })],
        "gc_max_pause_us" => {
            vec![(
                "GC longest purge slice",
                |s| {
                    if s.gc.purge_slices == 0 {
                        NONE.into()
                    } else {
                        us(s.gc.max_purge_us)
                    }
                },
            )]
        }
        "peak_bytes" => vec![
            ("  heap", |s| bytes(s.memory.peak_heap_bytes)),
            ("  slabs", |s| if s.pool.is_some() { bytes(s.memory.peak_slab_bytes) } else { NONE.into() }),
        ],
        _ => Vec::new(),
    }
}

/// The table, ready to print.
pub fn render(run: &Run) -> String {
    let columns: Vec<Vec<report::Cell>> = run.scenarios.iter().map(report::summary_row).collect();
    let mut rows: Vec<(&str, Vec<String>)> = Vec::new();
    if let Some(first) = columns.first() {
        for (i, cell) in first.iter().enumerate() {
            rows.push((label(cell.figure), columns.iter().map(|c| c[i].text.clone()).collect()));
            for (name, figure) in extras(cell.figure) {
                rows.push((name, run.scenarios.iter().map(figure).collect()));
            }
        }
    }
    let label_width = rows.iter().map(|(l, _)| l.chars().count()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..run.scenarios.len())
        .map(|i| {
            let head = run.scenarios[i].name.chars().count();
            rows.iter().map(|(_, v)| v[i].chars().count()).max().unwrap_or(0).max(head)
        })
        .collect();
    let mut out = String::new();
    let _ = write!(out, "{:label_width$}", "");
    for (s, w) in run.scenarios.iter().zip(&widths) {
        let _ = write!(out, "  {:>w$}", s.name);
    }
    out.push('\n');
    for (name, values) in &rows {
        let _ = write!(out, "{name:label_width$}");
        for (v, w) in values.iter().zip(&widths) {
            let _ = write!(out, "  {v:>w$}");
        }
        out.push('\n');
    }
    out
}
