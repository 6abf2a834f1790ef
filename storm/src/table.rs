//! What the terminal prints: the verdict (as the report opens with it), the machine and the
//! command line that runs the storm again, then the table of every figure, one column per
//! scenario. The table's summary rows are the HTML report's summary cells
//! ([`report::summary_row`]), so both show the same strings.

use std::fmt::Write as _;

use crate::baseline;
use crate::figures::{Comparison, Run, Scenario};
use crate::format::{bytes, count, ns, us, utc, NONE};
use crate::report;
use crate::verdict;

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

/// A part of a World scenario's peak memory (`—` for Box, which has only its heap).
fn part(s: &Scenario, pick: fn(&crate::figures::PeakParts) -> u64) -> String {
    s.memory.peak_parts.as_ref().map_or(NONE.into(), |p| bytes(pick(p)))
}

/// Rows the terminal shows beside the summary, after the summary row named first.
fn extras(after: &str) -> Vec<Extra> {
    match after {
        "spawns" => vec![("  of them rockets", |s| count(s.payload_spawns))],
        "spawn_max_ns" => vec![("rocket spawn p99", |s| {
            if s.payload_spawn_ns.count == 0 {
                NONE.into()
            } else {
                ns(s.payload_spawn_ns.p99)
            }
        })],
        // A steady-state frame's mean time, phase by phase (the report draws it as bars).
        "frame_max_us" => vec![
            ("  mean fire + spawn", |s| us(s.phases.spawn_us)),
            ("    tick", |s| us(s.phases.tick_us)),
            ("    retire", |s| us(s.phases.retire_us)),
            ("    collector", |s| us(s.phases.collector_us)),
            ("    pool upkeep", |s| us(s.phases.upkeep_us)),
            ("tick per projectile", |s| ns(s.phases.tick_ns_per_object)),
        ],
        "gc_max_pause_us" => {
            vec![
                ("GC incremental mark slices", |s| {
                    if s.gc.mark_slices == 0 {
                        NONE.into()
                    } else {
                        format!("{} (longest {})", count(s.gc.mark_slices), us(s.gc.max_mark_slice_us))
                    }
                }),
                (
                    "GC longest purge slice",
                    |s| {
                        if s.gc.purge_slices == 0 {
                            NONE.into()
                        } else {
                            us(s.gc.max_purge_us)
                        }
                    },
                ),
                ("  slices past budget", |s| {
                    if s.gc.purge_slices == 0 {
                        NONE.into()
                    } else {
                        let (over, preempted) = (s.gc.purge_slices_over_budget, s.gc.purge_overruns_preempted);
                        format!("{} ({} preempted)", count(over), count(preempted))
                    }
                }),
                // The collector's diagnosis at the end (the report shows its chains).
                ("references to garbage at end", |s| {
                    s.diagnosis.as_ref().map_or(NONE.into(), |d| count(d.garbage_references))
                }),
            ]
        }
        "peak_bytes" => vec![
            ("  heap", |s| bytes(s.memory.peak_heap_bytes)),
            ("    pool queues + magazines", |s| part(s, |p| p.pool_side)),
            ("    class side tables", |s| part(s, |p| p.class_side)),
            ("    rest of the heap", |s| part(s, |p| p.other_heap)),
            ("  mapped: slabs + table", |s| part(s, |p| p.slab_cells + p.table_slots)),
            ("    slab cells", |s| part(s, |p| p.slab_cells)),
            ("    object table slots", |s| part(s, |p| p.table_slots)),
        ],
        _ => Vec::new(),
    }
}

/// What the terminal prints: the verdict, the comparison with a baseline if one was named,
/// the settings and machine with the command line that runs the storm again, then the table
/// of every figure.
pub fn render(run: &Run) -> String {
    let mut out = String::new();
    if !run.scenarios.is_empty() {
        out.push_str(&verdict(run));
        out.push('\n');
    }
    if let Some(comparison) = &run.comparison {
        out.push_str(&compared(run, comparison));
        out.push('\n');
    }
    let _ = writeln!(out, "machine: {}", run.machine.line());
    let _ = writeln!(out, "again:   {}", run.command_line());
    out.push('\n');
    if run.repeats > 1 {
        let _ = writeln!(out, "every figure of the last of the {} runs:", run.repeats);
    }
    out.push_str(&table(run));
    out
}

/// The comparison with a baseline, scenario by scenario: each figure's median then and now,
/// the change, and what it amounts to.
fn compared(run: &Run, c: &Comparison) -> String {
    let mut out = format!(
        "against baseline '{}' ({} run{} of {}, saved {}), lower is better:\n",
        c.baseline,
        c.repeats,
        if c.repeats == 1 { "" } else { "s" },
        c.commit,
        utc(c.saved_at)
    );
    let mut rows: Vec<[String; 4]> = Vec::new();
    for s in &run.scenarios {
        let changes: Vec<_> = c.changes.iter().filter(|ch| ch.key == s.key).collect();
        if changes.is_empty() {
            continue;
        }
        rows.push([format!("  {}", s.name), String::new(), String::new(), String::new()]);
        for ch in changes {
            let Some(d) = verdict::deciding(&ch.figure) else { continue };
            rows.push([
                format!("    {}", (d.label)(&run.settings)),
                format!("{} → {}", (d.show)(ch.before), (d.show)(ch.after)),
                ch.text.clone(),
                baseline::judgement_text(ch.judgement).to_owned(),
            ]);
        }
    }
    let width = |i: usize| rows.iter().filter(|r| !r[1].is_empty()).map(|r| r[i].chars().count()).max().unwrap_or(0);
    let (w0, w1, w2) = (width(0), width(1), width(2));
    for r in &rows {
        if r[1].is_empty() {
            let _ = writeln!(out, "{}", r[0]);
        } else {
            let _ = writeln!(out, "{:w0$}  {:>w1$}  {:>w2$}  {}", r[0], r[1], r[2], r[3]);
        }
    }
    if !c.missing.is_empty() {
        let _ = writeln!(out, "  not in the baseline: {}", c.missing.join(", "));
    }
    out
}

/// The verdict block: each deciding figure with its ratio to the baseline's, the best of
/// each row starred, then what each scenario pays.
fn verdict(run: &Run) -> String {
    let v = verdict::of(run);
    let base = run.scenarios.iter().find(|s| s.key == v.baseline).map_or(v.baseline, |s| s.name);
    let rows: Vec<(String, Vec<String>)> = v
        .rows
        .iter()
        .map(|row| {
            let cells = row
                .texts
                .iter()
                .zip(&row.best)
                .map(|(t, &best)| if best { format!("{t} *") } else { format!("{t}  ") });
            (row.label.clone(), cells.collect())
        })
        .collect();
    let mut rows = rows;
    let mut out = format!("verdict: against {base}, lower is better, * the best of each row\n");
    if v.repeats > 1 {
        // Each row's spread beneath it.
        let label = format!("  min–max of {} runs", v.repeats);
        for (i, row) in v.rows.iter().enumerate().rev() {
            let cells = row.spread_texts.iter().map(|t| format!("{t}  ")).collect();
            rows.insert(i + 1, (label.clone(), cells));
        }
        out =
            format!("verdict: medians of {} runs against {base}, lower is better, * the best of each row\n", v.repeats);
    }
    out.push_str(&grid(run, &rows));
    for cost in &v.costs {
        let _ = writeln!(out, "- {cost}");
    }
    out
}

/// The table of every figure: one column per scenario, one row per figure.
fn table(run: &Run) -> String {
    let columns: Vec<Vec<report::Cell>> = run.scenarios.iter().map(report::summary_row).collect();
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    if let Some(first) = columns.first() {
        for (i, cell) in first.iter().enumerate() {
            rows.push((label(cell.figure).to_owned(), columns.iter().map(|c| c[i].text.clone()).collect()));
            for (name, figure) in extras(cell.figure) {
                rows.push((name.to_owned(), run.scenarios.iter().map(figure).collect()));
            }
        }
    }
    grid(run, &rows)
}

/// Rows under a header of the scenarios' names, each column right-aligned to its widest.
fn grid(run: &Run, rows: &[(String, Vec<String>)]) -> String {
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
    for (name, values) in rows {
        let _ = write!(out, "{name:label_width$}");
        for (v, w) in values.iter().zip(&widths) {
            let _ = write!(out, "  {v:>w$}");
        }
        out.push('\n');
    }
    out
}
