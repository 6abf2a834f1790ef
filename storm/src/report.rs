//! The storm's self-contained HTML report.
//!
//! The report is one HTML5 document with nothing to fetch: one inline `<style>`, the plots
//! as inline SVG drawn by plotters' SVG backend, the slab occupancy maps and the bytes by
//! cell state as hand-written SVG rects (a map cell by cell, or one stacked bar per slab for
//! a class with many), and the [`Run`] itself as JSON in a `<script type="application/json">`
//! block.
//!
//! ```text
//! verdict ─ against a baseline ─ intro ─ summary table ─ where the peak memory goes
//!         ─ details ─ frame time ─ frame time by phase ─ spawn latency ─ GC pauses
//!         ─ heap allocations ─ memory over the storm ─ live projectiles
//!         ─ bytes by cell state ─ slab occupancy ─ why is it alive (collapsed) ─ figures JSON
//! ```

use std::error::Error;
use std::fmt::{self, Write as _};
use std::ops::Range;

use plotters::coord::combinators::WithKeyPoints;
use plotters::coord::ranged1d::{KeyPointHint, NoDefaultFormatting, ValueFormatter};
use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::baseline;
use crate::figures::{ClassMap, Comparison, Phases, Run, Scenario, CELL_STATES};
use crate::format::{amount, bytes, count, ns, percent, us, utc, NONE};
use crate::verdict;

// ---------------------------------------------------------------------------------------
// The summary table's figures.
// ---------------------------------------------------------------------------------------

/// One figure of the summary table, as the terminal and the HTML table both show it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The figure's machine name (the HTML `data-figure`): `spawns`, `spawn_p99_ns`, …
    pub figure: &'static str,
    /// The heading of the column group (`Spawn latency`); a one-column group has an empty
    /// `label`.
    pub group: &'static str,
    /// The column's heading within its group (`p99`), or empty.
    pub label: &'static str,
    /// The figure, formatted.
    pub text: String,
    /// The exact value as the HTML `data-value` carries it (`f64` and `u64` `Display`);
    /// `None` where the figure does not apply or is not finite.
    pub raw: Option<String>,
}

impl Cell {
    /// A cell for a whole-number figure.
    fn whole(figure: &'static str, group: &'static str, label: &'static str, text: String, v: u64) -> Self {
        Cell { figure, group, label, text, raw: Some(v.to_string()) }
    }

    /// A cell for a real-valued figure (`raw` is `None` when `v` is not finite).
    fn real(figure: &'static str, group: &'static str, label: &'static str, text: String, v: f64) -> Self {
        Cell { figure, group, label, text, raw: v.is_finite().then(|| v.to_string()) }
    }

    /// A cell for a statistic of `samples` samples, formatted by `format`; absent when
    /// nothing was sampled.
    fn sampled(
        figure: &'static str,
        group: &'static str,
        label: &'static str,
        format: fn(f64) -> String,
        samples: u64,
        v: f64,
    ) -> Self {
        if samples == 0 {
            Self::absent(figure, group, label)
        } else {
            Self::real(figure, group, label, format(v), v)
        }
    }

    /// A cell for a figure that does not apply to this scenario.
    fn absent(figure: &'static str, group: &'static str, label: &'static str) -> Self {
        Cell { figure, group, label, text: NONE.to_owned(), raw: None }
    }
}

/// The summary table's row for one scenario, in column order: spawns; spawn latency p50,
/// p99, max; frame time p50, p99, max; GC collections and longest pause; pool hit rate;
/// heap allocations in total, per spawn and per steady-state frame; peak memory.
pub fn summary_row(s: &Scenario) -> Vec<Cell> {
    let (spawn, frame) = (&s.spawn_ns, &s.frame_us);
    let hit_rate = s.pool.map(|p| p.hit_rate).filter(|r| r.is_finite());
    let mem = &s.memory;
    vec![
        Cell::whole("spawns", "Spawns", "", count(s.spawns), s.spawns),
        Cell::sampled("spawn_p50_ns", "Spawn latency", "p50", ns, spawn.count, spawn.p50),
        Cell::sampled("spawn_p99_ns", "Spawn latency", "p99", ns, spawn.count, spawn.p99),
        Cell::sampled("spawn_max_ns", "Spawn latency", "max", ns, spawn.count, spawn.max),
        Cell::sampled("frame_p50_us", "Frame time", "p50", us, frame.count, frame.p50),
        Cell::sampled("frame_p99_us", "Frame time", "p99", us, frame.count, frame.p99),
        Cell::sampled("frame_max_us", "Frame time", "max", us, frame.count, frame.max),
        Cell::whole("gc_collections", "GC", "runs", count(s.gc.collections), s.gc.collections),
        if s.gc.collections > 0 {
            let pause = s.gc.max_collection_us;
            Cell::real("gc_max_pause_us", "GC", "max pause", us(pause), pause)
        } else {
            Cell::absent("gc_max_pause_us", "GC", "max pause")
        },
        match hit_rate {
            Some(r) => Cell::real("hit_rate", "Pool", "hit rate", percent(r), r),
            None => Cell::absent("hit_rate", "Pool", "hit rate"),
        },
        Cell::whole("allocations", "Heap allocations", "total", count(mem.allocations), mem.allocations),
        Cell::real(
            "allocations_per_spawn",
            "Heap allocations",
            "/ spawn",
            amount(mem.allocations_per_spawn),
            mem.allocations_per_spawn,
        ),
        Cell::real(
            "steady_allocations_per_frame",
            "Heap allocations",
            "/ frame",
            amount(mem.steady_allocations_per_frame),
            mem.steady_allocations_per_frame,
        ),
        Cell::whole("peak_bytes", "Peak memory", "", bytes(mem.peak_bytes), mem.peak_bytes),
    ]
}

// ---------------------------------------------------------------------------------------
// The document.
// ---------------------------------------------------------------------------------------

/// The whole report for `run`: one self-contained HTML5 document.
pub fn render(run: &Run) -> String {
    let mut out = String::with_capacity(512 * 1024);
    document(&mut out, run).expect("writing to a String cannot fail");
    out
}

/// Writes the document, section by section.
fn document(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>respawn — projectile storm</title>\n<style>");
    out.push_str(STYLE);
    out.push_str("</style>\n</head>\n<body>\n<main>\n<h1>respawn — projectile storm</h1>\n");
    if !run.scenarios.is_empty() {
        verdict_section(out, run)?;
    }
    if let Some(c) = &run.comparison {
        comparison_section(out, run, c)?;
    }
    intro(out, run)?;
    if run.scenarios.is_empty() {
        out.push_str("<p class=\"note\">No scenarios ran, so there is nothing to compare.</p>\n");
    } else {
        summary_table(out, run)?;
        memory_table(out, run)?;
        details_table(out, run)?;
        out.push_str("<h2>Over the storm</h2>\n");
        frame_figure(out, run)?;
        phases_figure(out, run)?;
        spawn_figure(out, run)?;
        gc_figure(out, run)?;
        allocations_figure(out, run)?;
        memory_figure(out, run)?;
        live_figure(out, run)?;
        occupancy_section(out, run)?;
        diagnosis_section(out, run)?;
    }
    embedded_json(out, run)?;
    out.push_str("</main>\n</body>\n</html>\n");
    Ok(())
}

/// The page's stylesheet: system fonts, a light background, ~960 px of content.
const STYLE: &str = r#"
:root { color-scheme: light; }
body { margin: 0; background: #f6f6f3; color: #1f2328;
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans", sans-serif; }
main { max-width: 1000px; margin: 0 auto; padding: 28px 20px 64px; }
h1 { font-size: 28px; margin: 0 0 12px; }
h2 { font-size: 20px; margin: 36px 0 10px; border-bottom: 1px solid #d8d8d2; padding-bottom: 4px; }
h3 { font-size: 16px; margin: 0 0 6px; }
h4 { font-size: 14px; margin: 16px 0 2px; font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
p { margin: 8px 0; }
code { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size: 13px; }
.meta { color: #555; font-size: 13px; margin: 0 0 6px; }
.note { color: #555; font-style: italic; }
ul.scenarios { padding-left: 0; list-style: none; }
ul.scenarios li { margin: 4px 0; }
.swatch { display: inline-block; width: 11px; height: 11px; border-radius: 2px; margin-right: 6px;
  vertical-align: -1px; border: 1px solid rgba(0,0,0,.15); }
.table-wrap { overflow-x: auto; background: #fff; border: 1px solid #e0e0da; border-radius: 6px; }
table { border-collapse: collapse; width: 100%; font-size: 12px; font-variant-numeric: tabular-nums; }
th, td { padding: 4px 5px; text-align: right; white-space: nowrap; border-bottom: 1px solid #ececE6; }
thead th { background: #f0f0eb; font-weight: 600; border-bottom: 1px solid #d8d8d2; }
thead tr:first-child th { text-align: center; }
tbody th { text-align: left; font-weight: 600; }
tbody tr:last-child th, tbody tr:last-child td { border-bottom: 0; }
td.na { color: #999; }
table.details tbody th { font-weight: 400; color: #333; }
table.details tr.group th { font-weight: 600; background: #f7f7f3; }
details { margin: 10px 0; }
summary { cursor: pointer; margin-bottom: 6px; }
details.why > summary h2 { display: inline; }
dl.chain-legend { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; font-size: 14px; }
dl.chain-legend dd { margin: 0; color: #444; }
figure { margin: 22px 0; background: #fff; border: 1px solid #e0e0da; border-radius: 6px; padding: 14px 14px 10px; }
figure svg { display: block; max-width: 100%; height: auto; }
figure svg text { font-family: inherit; }
figcaption { font-size: 13.5px; color: #444; margin-top: 8px; }
ul.legend { list-style: none; padding: 0; margin: 4px 0 8px; font-size: 13px; display: flex; flex-wrap: wrap; gap: 4px 18px; }
ul.legend b { font-weight: 600; font-variant-numeric: tabular-nums; }
ul.states-explained { display: block; font-size: 14px; }
ul.states-explained li { margin: 3px 0; }
.legend .stem { display: inline-block; width: 0; height: 12px; margin: 0 8px 0 4px; vertical-align: -1px; }
.classmap { margin-bottom: 14px; }
table.verdict td.best { font-weight: 700; }
.spread { color: #666; font-size: 11px; font-weight: 400; }
table.comparison td.worse { background: #fbe9e7; }
table.comparison td.better { background: #e8f5e9; }
table.memory tr.group th, table.memory tr.total th { font-weight: 600; }
table.memory tbody tr:not(.group):not(.total) th { font-weight: 400; padding-left: 18px; }
table.memory tr.total td { font-weight: 600; }
ul.parts { font-size: 13px; color: #444; margin: 6px 0; padding-left: 20px; }
table.verdict tbody th { white-space: normal; }
ul.costs { margin: 8px 0 0; padding-left: 20px; font-size: 14px; }
code.command { white-space: pre-wrap; word-break: break-all; }
section.diagnosis ul { margin: 6px 0; padding-left: 20px; }
section.diagnosis code { white-space: pre-wrap; word-break: break-word; }
"#;

/// What ran, for a newcomer: the storm's settings in one paragraph, then the scenarios.
fn intro(out: &mut String, run: &Run) -> fmt::Result {
    let s = &run.settings;
    let pacing = if s.fps == 0 {
        "The game loop ran unpaced, as fast as it could".to_owned()
    } else {
        format!("The game loop was paced to {} fps (a frame budget of {})", s.fps, us(1e6 / f64::from(s.fps)))
    };
    let gc = if s.gc_every == 0 {
        "the garbage collector was never scheduled".to_owned()
    } else if s.incremental_gc_us > 0 {
        format!(
            "the garbage collector ran every {}, marking over frames in slices of {}              (incremental reachability)",
            frames(s.gc_every),
            us(f64::from(s.incremental_gc_us))
        )
    } else {
        format!("the garbage collector ran every {}, marking each collection whole", frames(s.gc_every))
    };
    let gc = match s.early_purge_percent {
        0 => gc,
        p => format!("{gc}; destroyed projectiles of <code>Default</code> pools were purged without waiting for a collection once they held {p} % of the cells"),
    };
    let config = match &s.config {
        Some(path) => format!("came from <code>{}</code>", esc(path)),
        None => "were the built-in defaults".to_owned(),
    };
    let drops = match (s.drop_us, s.async_purge) {
        (0, false) => String::new(),
        (0, true) => " Pooled projectiles were dropped on the pools' workers (async purge).".to_owned(),
        (d, false) => format!(" Each projectile's destructor spent {}, on the game thread.", us(f64::from(d))),
        (d, true) => format!(
            " Each projectile's destructor spent {}: pooled ones on the pools' workers, in the pass \
             that rebuilds their cell (async purge).",
            us(f64::from(d))
        ),
    };
    writeln!(
        out,
        "<p>Every scenario below ran the same storm, drawn from seed {seed}: for {frames}, \
         {turrets} turrets fired {rate} projectiles per frame between them, and each projectile \
         lived about {lifetime} (50–150 % of that) until it hit a target or expired. \
         {share} of the projectiles were rockets, whose constructor spends {payload} building an \
         expensive payload: cheap to take from a pool that workers filled in advance, expensive \
         to build on the spot. {pacing}; {gc}, and an incremental purge got {budget} per frame. \
         Pool settings {config}.{drops} The scenarios differ only in how projectiles are \
         allocated and recycled:</p>",
        seed = s.seed,
        frames = frames(s.frames),
        turrets = count(u64::from(s.turrets)),
        rate = count(u64::from(s.rate)),
        lifetime = frames(s.lifetime),
        share = percent(s.payload_share),
        payload = us(f64::from(s.payload_us)),
        budget = us(f64::from(s.purge_budget_us)),
    )?;
    out.push_str("<ul class=\"scenarios\">\n");
    for (i, sc) in run.scenarios.iter().enumerate() {
        writeln!(out, "<li>{}<b>{}</b> — {}</li>", swatch(sc, i), esc(sc.name), esc(sc.about))?;
    }
    out.push_str("</ul>\n");
    writeln!(
        out,
        "<p class=\"meta\">respawn {} · {} · heap figures from the {}.</p>",
        esc(run.version),
        esc(&run.machine.line()),
        esc(run.heap_counter)
    )?;
    writeln!(out, "<p class=\"meta\">Run it again: <code class=\"command\">{}</code></p>", esc(&run.command_line()))
}

/// The verdict first: each deciding figure against the baseline's, the best of each row in
/// bold, and what each scenario pays, in sentences.
fn verdict_section(out: &mut String, run: &Run) -> fmt::Result {
    let v = verdict::of(run);
    let base = run.scenarios.iter().find(|s| s.key == v.baseline).map_or(v.baseline, |s| s.name);
    out.push_str("<section class=\"verdict\">\n<h2>Verdict</h2>\n");
    let medians = if v.repeats > 1 {
        format!(
            "The storm ran {} times: each figure is the median of the runs, with the smallest and \
             largest beneath it, and ",
            v.repeats
        )
    } else {
        "Each figure is from one run of the storm (<code>--repeat N</code> runs it N times and \
         shows medians and spreads), with "
            .to_owned()
    };
    writeln!(
        out,
        "<p class=\"meta\">{medians}its ratio to {}'s; lower is better in every row, and the best of \
         each row is in bold.</p>",
        esc(base)
    )?;
    out.push_str("<div class=\"table-wrap\"><table class=\"verdict\">\n<thead><tr><th></th>");
    for (i, sc) in run.scenarios.iter().enumerate() {
        write!(out, "<th>{}{}</th>", swatch(sc, i), esc(sc.name))?;
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in &v.rows {
        write!(out, "<tr data-figure=\"{}\"><th scope=\"row\">{}</th>", row.figure, esc(&row.label))?;
        for (i, sc) in run.scenarios.iter().enumerate() {
            write!(out, "<td data-key=\"{}\"", esc(sc.key))?;
            if let Some(value) = row.values[i] {
                write!(out, " data-value=\"{value}\"")?;
            }
            if let Some(ratio) = row.ratios[i] {
                write!(out, " data-ratio=\"{ratio}\"")?;
            }
            if let Some([lo, hi]) = row.spreads[i] {
                write!(out, " data-min=\"{lo}\" data-max=\"{hi}\"")?;
            }
            if row.best[i] {
                out.push_str(" class=\"best\"");
            }
            write!(out, ">{}", esc(&row.texts[i]))?;
            if v.repeats > 1 && row.spreads[i].is_some() {
                write!(out, "<br><span class=\"spread\">{}</span>", esc(&row.spread_texts[i]))?;
            }
            out.push_str("</td>");
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    if !v.costs.is_empty() {
        out.push_str("<ul class=\"costs\">\n");
        for cost in &v.costs {
            writeln!(out, "<li>{}</li>", esc(cost))?;
        }
        out.push_str("</ul>\n");
    }
    out.push_str("</section>\n");
    Ok(())
}

/// The run against a saved baseline: per figure and scenario, the medians then and now, the
/// change, and what it amounts to.
fn comparison_section(out: &mut String, run: &Run, c: &Comparison) -> fmt::Result {
    out.push_str("<section class=\"comparison\">\n");
    writeln!(out, "<h2>Against baseline <code>{}</code></h2>", esc(&c.baseline))?;
    writeln!(
        out,
        "<p class=\"meta\">Saved {} from {} run{} of commit {}. Each cell is the baseline's median → \
         this run's, and the change; lower is better. A change is <b>better</b> or <b>worse</b> \
         when the two runs' spreads (smallest to largest) do not overlap, and <b>within noise</b> \
         when they do or when the medians differ by less than 1 %; with one run on either side \
         there is no spread to judge by.</p>",
        esc(&utc(c.saved_at)),
        c.repeats,
        if c.repeats == 1 { "" } else { "s" },
        esc(&c.commit)
    )?;
    out.push_str("<div class=\"table-wrap\"><table class=\"comparison\">\n<thead><tr><th></th>");
    for (i, sc) in run.scenarios.iter().enumerate() {
        write!(out, "<th>{}{}</th>", swatch(sc, i), esc(sc.name))?;
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for d in &verdict::DECIDING {
        if !c.changes.iter().any(|ch| ch.figure == d.figure) {
            continue;
        }
        write!(out, "<tr data-figure=\"{}\"><th scope=\"row\">{}</th>", d.figure, esc(&(d.label)(&run.settings)))?;
        for sc in &run.scenarios {
            match c.changes.iter().find(|ch| ch.figure == d.figure && ch.key == sc.key) {
                Some(ch) => write!(
                    out,
                    "<td data-key=\"{}\" data-judgement=\"{}\" class=\"{}\">{} → {}<br>{} <span \
                     class=\"spread\">{}</span></td>",
                    esc(sc.key),
                    ch.judgement,
                    ch.judgement,
                    esc(&(d.show)(ch.before)),
                    esc(&(d.show)(ch.after)),
                    esc(&ch.text),
                    esc(baseline::judgement_text(ch.judgement)),
                )?,
                None => out.push_str("<td class=\"na\">—</td>"),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    if !c.missing.is_empty() {
        writeln!(out, "<p class=\"note\">Not in the baseline: {}.</p>", esc(&c.missing.join(", ")))?;
    }
    out.push_str("</section>\n");
    Ok(())
}

/// `n frames`, or `1 frame`.
fn frames(n: u32) -> String {
    if n == 1 {
        "1 frame".to_owned()
    } else {
        format!("{} frames", count(u64::from(n)))
    }
}

/// The summary table: one row per scenario, the figures [`summary_row`] gives.
fn summary_table(out: &mut String, run: &Run) -> fmt::Result {
    let rows: Vec<Vec<Cell>> = run.scenarios.iter().map(summary_row).collect();
    out.push_str("<h2>Summary</h2>\n<div class=\"table-wrap\"><table class=\"summary\">\n<thead>\n<tr>");
    out.push_str("<th rowspan=\"2\" style=\"text-align:left\">Scenario</th>");
    // Column groups: runs of cells with the same group heading.
    let header = &rows[0];
    let mut i = 0;
    while i < header.len() {
        let span = header[i..].iter().take_while(|c| c.group == header[i].group).count();
        if span == 1 && header[i].label.is_empty() {
            write!(out, "<th rowspan=\"2\">{}</th>", esc(header[i].group))?;
        } else {
            write!(out, "<th colspan=\"{span}\">{}</th>", esc(header[i].group))?;
        }
        i += span;
    }
    out.push_str("</tr>\n<tr>");
    for c in header.iter().filter(|c| !c.label.is_empty()) {
        write!(out, "<th>{}</th>", esc(c.label))?;
    }
    out.push_str("</tr>\n</thead>\n<tbody>\n");
    for (i, (sc, row)) in run.scenarios.iter().zip(&rows).enumerate() {
        write!(out, "<tr><th scope=\"row\">{}{}</th>", swatch(sc, i), esc(sc.name))?;
        for c in row {
            write!(out, "<td data-key=\"{}\" data-figure=\"{}\"", esc(sc.key), c.figure)?;
            match &c.raw {
                Some(raw) => write!(out, " data-value=\"{}\">", esc(raw))?,
                None => out.push_str(" class=\"na\">"),
            }
            write!(out, "{}</td>", esc(&c.text))?;
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    writeln!(
        out,
        "<p class=\"meta\">Spawn latency is one spawn call; frame time is the game thread's work \
         in a frame (spawn, tick, retire, end of frame) without the pacing sleep, over the steady \
         state ({}, the storm's second half); the GC pause is the longest collection; heap \
         allocations count every thread, pool workers included (“/ frame” is over the steady \
         state too); peak memory is the heap's peak plus what the World mapped (slabs and object \
         table), broken down below.</p>",
        steady_frames(run)
    )?;
    Ok(())
}

/// What each part of the peak memory is, for the memory table: its key in the JSON's
/// `peak_parts`, its label, and what it holds.
const PARTS: [(&str, &str, &str); 5] = [
    (
        "pool_side",
        "pool queues + magazines",
        "the pools' build and magazine queues and the magazines they pass around \
         (<code>PoolStats::side_bytes</code>); on the heap",
    ),
    (
        "class_side",
        "class side tables",
        "each class's live bitmap, vacant list and slab bases (<code>ArenaClassStats::side_bytes</code>); \
         on the heap",
    ),
    (
        "other_heap",
        "rest of the heap",
        "everything else the scenario held on the heap at its peak: the arena's outer links (each \
         projectile is its turret's sub-object), the collector's worklists, the frame arena, the \
         allocator's and the World's own structures",
    ),
    (
        "slab_cells",
        "slab cells",
        "the slabs carved for the World's classes (projectiles and turrets), granted to the arena or \
         prepared ahead with their pages faulted in; mapped by the chunk allocator, outside the heap",
    ),
    (
        "table_slots",
        "object table slots",
        "the object table's 16-byte slot per cell of a granted slab (<code>ArenaClassStats::slot_bytes</code>); \
         a committed side region, outside the heap",
    ),
];

/// The value of part `key` of `parts`.
fn part_bytes(parts: &crate::figures::PeakParts, key: &str) -> u64 {
    match key {
        "pool_side" => parts.pool_side,
        "class_side" => parts.class_side,
        "other_heap" => parts.other_heap,
        "slab_cells" => parts.slab_cells,
        _ => parts.table_slots,
    }
}

/// Where each scenario's peak memory goes, part by part, with the parts explained.
fn memory_table(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<h2>Where the peak memory goes</h2>\n<div class=\"table-wrap\"><table class=\"memory\">\n");
    out.push_str("<thead><tr><th></th>");
    for (i, sc) in run.scenarios.iter().enumerate() {
        write!(out, "<th>{}{}</th>", swatch(sc, i), esc(sc.name))?;
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    let row = |out: &mut String, class: &str, label: &str, value: &dyn Fn(&Scenario) -> Option<u64>| -> fmt::Result {
        write!(out, "<tr class=\"{class}\"><th scope=\"row\">{label}</th>")?;
        for sc in &run.scenarios {
            match value(sc) {
                Some(b) => write!(out, "<td data-key=\"{}\" data-value=\"{b}\">{}</td>", esc(sc.key), bytes(b))?,
                None => out.push_str("<td class=\"na\">—</td>"),
            }
        }
        out.push_str("</tr>\n");
        Ok(())
    };
    row(out, "total", "peak memory", &|s| Some(s.memory.peak_bytes))?;
    row(out, "group", "heap", &|s| Some(s.memory.peak_heap_bytes))?;
    for (key, label, _) in &PARTS[..3] {
        row(out, key, label, &|s| s.memory.peak_parts.map(|p| part_bytes(&p, key)))?;
    }
    row(out, "group", "mapped: slabs and table", &|s| s.memory.peak_parts.map(|_| s.memory.peak_slab_bytes))?;
    for (key, label, _) in &PARTS[3..] {
        row(out, key, label, &|s| s.memory.peak_parts.map(|p| part_bytes(&p, key)))?;
    }
    out.push_str("</tbody>\n</table></div>\n<ul class=\"parts\">\n");
    for (_, label, meaning) in &PARTS {
        writeln!(out, "<li><b>{label}</b>: {meaning}.</li>")?;
    }
    out.push_str("</ul>\n");
    out.push_str(
        "<p class=\"meta\">The heap is counted by the binary's counting allocator: its peak is the \
         most bytes live at once during the storm, less what the process held before the scenario \
         was set up and the harness's sample buffers. The World's parts come from its own \
         statistics, read at every frame's end; the side structures are on the heap, so they are \
         part of its peak, and the rest of the heap is the peak less them. The parts add up to the \
         peak exactly. Box has no World: all its memory is heap, mostly one allocation per \
         projectile. Thread stacks and the address space the allocator reserves but has not \
         touched are not counted.</p>\n",
    );
    Ok(())
}

/// A figure of the details table: its heading and how to format it for a scenario.
type Detail = (&'static str, fn(&Scenario) -> String);

/// The details table's sections and rows: every figure the summary leaves out.
const DETAILS: &[(&str, &[Detail])] = &[
    (
        "Projectiles",
        &[
            ("rockets spawned", |s| count(s.payload_spawns)),
            ("retired by a hit", |s| count(s.hits)),
            ("retired at end of life", |s| count(s.expired)),
            ("alive at the end", |s| count(s.live_at_end)),
        ],
    ),
    (
        "Latency",
        &[
            ("spawn, mean", |s| ns(s.spawn_ns.mean)),
            ("rocket spawn, p50", |s| ns(s.payload_spawn_ns.p50)),
            ("rocket spawn, p99", |s| ns(s.payload_spawn_ns.p99)),
            ("rocket spawn, max", |s| ns(s.payload_spawn_ns.max)),
            ("frame time, mean", |s| us(s.frame_us.mean)),
        ],
    ),
    (
        "Collector",
        &[
            ("incremental mark slices", |s| count(s.gc.mark_slices)),
            ("longest mark slice", |s| if s.gc.mark_slices > 0 { us(s.gc.max_mark_slice_us) } else { NONE.to_owned() }),
            ("purge slices", |s| count(s.gc.purge_slices)),
            ("longest purge slice", |s| if s.gc.purge_slices > 0 { us(s.gc.max_purge_us) } else { NONE.to_owned() }),
            ("collector time, total", |s| us(s.gc.total_ms * 1e3)),
            ("objects purged", |s| count(s.gc.purged)),
        ],
    ),
    (
        "Pools",
        &[
            ("hits / misses", |s| {
                s.pool.map_or(NONE.to_owned(), |p| format!("{} / {}", count(p.hits), count(p.misses)))
            }),
            ("built by workers", |s| s.pool.map_or(NONE.to_owned(), |p| count(p.precreated))),
            ("times a pool grew", |s| s.pool.map_or(NONE.to_owned(), |p| count(p.grows))),
            ("ready at the end", |s| s.pool.map_or(NONE.to_owned(), |p| count(p.ready_at_end))),
            ("warm-up before the storm", |s| s.pool.map_or(NONE.to_owned(), |p| us(p.warmup_ms * 1e3))),
        ],
    ),
    (
        "Memory",
        &[
            ("heap bytes allocated", |s| bytes(s.memory.allocated_bytes)),
            ("peak heap", |s| bytes(s.memory.peak_heap_bytes)),
            ("peak slabs and table slots", |s| bytes(s.memory.peak_slab_bytes)),
        ],
    ),
];

/// The details table: the remaining figures, one column per scenario.
fn details_table(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<details><summary>All other figures</summary>\n");
    out.push_str("<div class=\"table-wrap\"><table class=\"details\">\n<thead><tr><th></th>");
    for (i, sc) in run.scenarios.iter().enumerate() {
        write!(out, "<th>{}{}</th>", swatch(sc, i), esc(sc.name))?;
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (section, rows) in DETAILS {
        writeln!(out, "<tr class=\"group\"><th colspan=\"{}\">{section}</th></tr>", run.scenarios.len() + 1)?;
        for (label, value) in rows.iter() {
            write!(out, "<tr><th scope=\"row\">{label}</th>")?;
            for sc in &run.scenarios {
                write!(out, "<td>{}</td>", esc(&value(sc)))?;
            }
            out.push_str("</tr>\n");
        }
    }
    out.push_str("</tbody>\n</table></div>\n</details>\n");
    Ok(())
}

/// The figures as JSON, for tools: `</` is written `<\/` (and `<!--` `<\u0021--`) so no
/// string in the data can end the script element early.
fn embedded_json(out: &mut String, run: &Run) -> fmt::Result {
    let json = verdict::json(run, false);
    let json = json.replace("</", "<\\/").replace("<!--", "<\\u0021--");
    writeln!(out, "<script type=\"application/json\" id=\"figures\">{json}</script>")
}

// ---------------------------------------------------------------------------------------
// Charts.
// ---------------------------------------------------------------------------------------

/// Width of every chart, in SVG pixels.
const CHART_W: u32 = 920;
/// Plotters' font size for tick labels and axis names (its SVG writes `size / 1.24` px).
const LABEL_SIZE: u32 = 15;
/// Columns the decimated series keep: about one per horizontal pixel of the plot area.
const TRACE_COLUMNS: usize = 820;
/// The font family plotters writes; the page's CSS replaces it with the system stack.
const FONT: &str = "sans-serif";

/// A plotted chart, or why it could not be drawn.
type Svg = Result<String, Box<dyn Error>>;

/// Writes one `<figure>`: heading, legend, the chart (or a note saying why there is none),
/// caption.
fn figure(out: &mut String, id: &str, title: &str, legend: &str, chart: Svg, caption: &str) -> fmt::Result {
    write!(out, "<figure id=\"{id}\">\n<h3>{}</h3>\n{legend}", esc(title))?;
    match chart {
        Ok(svg) => out.push_str(&svg),
        Err(e) => write!(out, "<p class=\"note\">{}</p>", esc(&e.to_string()))?,
    }
    write!(out, "\n<figcaption>{caption}</figcaption>\n</figure>\n")
}

/// A legend of every scenario's colour, with a note (HTML) after each name.
fn scenario_legend<'a>(
    scenarios: impl Iterator<Item = (usize, &'a Scenario)>,
    note: impl Fn(&Scenario) -> String,
) -> String {
    let mut legend = String::from("<ul class=\"legend\">");
    for (i, sc) in scenarios {
        let _ = write!(legend, "<li>{}{}{}</li>", swatch(sc, i), esc(sc.name), note(sc));
    }
    legend.push_str("</ul>\n");
    legend
}

/// Frames in the rolling median of the frame-time chart (a quarter second at 60 fps).
const ROLLING: usize = 15;

/// Frame time over frames: one panel per scenario on a shared log axis, each frame pale and
/// the rolling median bold.
fn frame_figure(out: &mut String, run: &Run) -> fmt::Result {
    let mut legend = scenario_legend(run.scenarios.iter().enumerate(), |s| {
        format!(
            " — p50 <b>{}</b>, p99 <b>{}</b>, max <b>{}</b>",
            us(s.frame_us.p50),
            us(s.frame_us.p99),
            us(s.frame_us.max)
        )
    });
    legend.insert_str(
        legend.len() - "</ul>\n".len(),
        &format!(
            "<li><span class=\"stem\" style=\"border-left:10px solid #999;height:3px;vertical-align:3px\"></span>\
             rolling median of {ROLLING} frames <span class=\"stem\" style=\"border-left:10px solid #bbb;\
             height:1px;vertical-align:4px\"></span>each frame</li>"
        ),
    );
    let caption = format!(
        "One panel per scenario, all on the same log scale so that one long frame does not flatten \
         the rest: the pale line is each frame's game-thread work, the bold one its rolling median \
         over {ROLLING} frames, which is the level a scenario settles at once frame-to-frame noise \
         is set aside. Spikes above it are collections, pools growing or rockets built inline; \
         compare the bold lines across panels for the typical frame, the pale spikes for the \
         worst. Long storms are drawn at one column per pixel, keeping each column's fastest and \
         slowest frame. The shaded band is the steady state ({}): the p50, p99 and max above, \
         and the phases below, are taken over it, once the population has levelled off and the \
         pools are warm.",
        steady_frames(run)
    );
    figure(out, "frame-time", "Frame time", &legend, frame_chart(run), &caption)
}

/// The median of each frame's window of `window` frames centred on it (shorter at the ends).
fn rolling_median(values: &[f64], window: usize) -> Vec<f64> {
    let half = window / 2;
    let mut scratch = Vec::with_capacity(window);
    (0..values.len())
        .map(|i| {
            scratch.clear();
            scratch.extend_from_slice(&values[i.saturating_sub(half)..(i + half + 1).min(values.len())]);
            scratch.sort_unstable_by(f64::total_cmp);
            let n = scratch.len();
            if n % 2 == 1 {
                scratch[n / 2]
            } else {
                (scratch[n / 2 - 1] + scratch[n / 2]) / 2.0
            }
        })
        .collect()
}

/// Height of one scenario's panel in the frame-time chart.
const FRAME_PANEL_H: u32 = 150;

/// The frame-time chart: stacked panels sharing both axes.
fn frame_chart(run: &Run) -> Svg {
    let series: Vec<Vec<f64>> =
        run.scenarios.iter().map(|s| s.series.frame_us.iter().map(|&v| f64::from(v)).collect()).collect();
    let budget = (run.settings.fps > 0).then(|| 1e6 / f64::from(run.settings.fps));
    let (lo, hi) =
        positive_range(series.iter().flatten().copied().chain(budget)).ok_or("No frame times were recorded.")?;
    let (lo, hi) = log_bounds(lo, hi);
    let frames = longest(series.iter().map(Vec::len));
    let mut svg = String::new();
    {
        // Equal plots; the last panel also carries the frame axis.
        const AXIS_H: u32 = 40;
        let n = run.scenarios.len() as u32;
        let height = FRAME_PANEL_H * n + AXIS_H + 8;
        let root = SVGBackend::with_string(&mut svg, (CHART_W, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut rest = root.margin(4, 4, 4, 12);
        for (i, (sc, values)) in run.scenarios.iter().zip(&series).enumerate() {
            let last = i + 1 == run.scenarios.len();
            let (panel, below) = if last { (rest.clone(), rest.clone()) } else { rest.split_vertically(FRAME_PANEL_H) };
            rest = below;
            let c = colour(sc, i);
            let mut chart = ChartBuilder::on(&panel)
                .caption(sc.name, (FONT, 15).into_font().color(&c))
                .margin_right(20)
                .x_label_area_size(if last { AXIS_H } else { 0 })
                .y_label_area_size(74)
                .build_cartesian_2d(0f64..frames, log_axis(lo, hi))?;
            let mut mesh = chart.configure_mesh();
            mesh.y_label_formatter(&|v| tick(us(*v)))
                .x_label_formatter(&frame_label)
                .label_style((FONT, 14))
                .axis_desc_style((FONT, 14))
                .bold_line_style(BLACK.mix(0.08))
                .light_line_style(TRANSPARENT);
            if last {
                mesh.x_desc("frame");
            } else {
                mesh.x_labels(0);
            }
            mesh.draw()?;
            if let Some(from) = steady_from(run).filter(|&f| f < frames) {
                chart.draw_series(std::iter::once(Rectangle::new([(from, lo), (frames, hi)], steady_shade())))?;
            }
            if let Some(b) = budget {
                let style = ShapeStyle::from(BLACK.mix(0.45)).stroke_width(1);
                chart.draw_series(DashedLineSeries::new([(0.0, b), (frames, b)], 6, 4, style))?;
                if i == 0 {
                    let label = format!("frame budget at {} fps: {}", run.settings.fps, us(b));
                    let anchor = Pos::new(HPos::Right, VPos::Bottom);
                    let font = (FONT, 13).into_font().color(&BLACK.mix(0.6)).pos(anchor);
                    chart.draw_series(std::iter::once(Text::new(label, (frames, b), font)))?;
                }
            }
            let raw: Vec<(f64, f64)> = trace(values, TRACE_COLUMNS).into_iter().map(|(x, y)| (x, y.max(lo))).collect();
            draw_line(&mut chart, &raw, pale(c, 0.35), 1)?;
            let median = rolling_median(values, ROLLING);
            let smooth: Vec<(f64, f64)> =
                trace(&median, TRACE_COLUMNS).into_iter().map(|(x, y)| (x, y.max(lo))).collect();
            draw_line(&mut chart, &smooth, c, 2)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// The spawn-latency distribution, every scenario on one chart with the tail stretched.
fn spawn_figure(out: &mut String, run: &Run) -> fmt::Result {
    let legend = scenario_legend(run.scenarios.iter().enumerate(), |s| {
        if s.spawn_ns.count == 0 {
            " — no spawns".to_owned()
        } else {
            format!(
                " — p50 <b>{}</b>, p99 <b>{}</b>, max <b>{}</b>",
                ns(s.spawn_ns.p50),
                ns(s.spawn_ns.p99),
                ns(s.spawn_ns.max)
            )
        }
    });
    let caption = "Read a curve left to right to see how long spawns took up to a percentile: the \
                   vertical scale stretches the tail (each step up, p90 → p99 → p99.9, is ten \
                   times rarer) and the horizontal one is logarithmic. Dots mark p50 and p99. \
                   A curve that stays left all the way up served spawns from ready objects; a \
                   curve that bends far right near the top built rockets on the spot.";
    figure(out, "spawn-latency", "Spawn latency distribution", &legend, spawn_chart(run), caption)
}

/// How far up the tail a quantile is: `-log10(1 - q)` (p90 → 1, p99 → 2).
fn nines(q: f64) -> f64 {
    -(1.0 - q).max(1e-12).log10()
}

/// The spawn chart's vertical axis: quantiles as [`nines`] from 0 to `top`, ticks at p0,
/// p50, p90, p99, … and `max` at the top.
#[derive(Clone, Copy, Debug)]
struct PercentileAxis {
    /// The top of the axis, in nines (a whole number ≥ 2); the maximum sits here.
    top: f64,
}

impl Ranged for PercentileAxis {
    type FormatOption = NoDefaultFormatting;
    type ValueType = f64;

    fn range(&self) -> Range<f64> {
        0.0..self.top
    }

    /// Linear in nines: p90 → p99 takes as much height as p99 → p99.9.
    fn map(&self, value: &f64, limit: (i32, i32)) -> i32 {
        let span = f64::from(limit.1 - limit.0);
        limit.0 + (value / self.top * span).round() as i32
    }

    /// The named percentiles, whatever the hint asks for; no light lines.
    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if hint.weight().allow_light_points() {
            return Vec::new();
        }
        let mut ticks = vec![0.0, 2f64.log10()];
        ticks.extend((1..self.top as u32).map(f64::from));
        ticks.push(self.top);
        ticks
    }
}

impl ValueFormatter<f64> for PercentileAxis {
    fn format_ext(&self, value: &f64) -> String {
        match *value {
            v if v >= self.top => "max".to_owned(),
            v if v <= 0.0 => "p0".to_owned(),
            v if (v - 2f64.log10()).abs() < 1e-9 => "p50".to_owned(),
            v => format!("p{}", trimmed(100.0 - 100.0 * 10f64.powf(-v), 4)),
        }
    }
}

/// The spawn-latency chart.
fn spawn_chart(run: &Run) -> Svg {
    let cdfs: Vec<&[[f64; 2]]> = run.scenarios.iter().map(|s| s.series.spawn_cdf.as_slice()).collect();
    let values = cdfs.iter().flat_map(|c| c.iter().map(|p| p[1]));
    let (lo, hi) = positive_range(values).ok_or("No spawn latencies were recorded.")?;
    let (lo, hi) = log_bounds(lo, hi);
    // The top of the axis is one step above the deepest quantile short of 1; the samples at
    // quantile 1 (the max) sit there.
    let deepest = cdfs.iter().flat_map(|c| c.iter()).filter(|p| p[0] < 1.0).map(|p| nines(p[0])).fold(0.0, f64::max);
    let axis = PercentileAxis { top: (deepest.floor() + 1.0).clamp(2.0, 5.0) };
    let top = axis.top;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_W, 400)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(62)
            .build_cartesian_2d(log_axis(lo, hi), axis)?;
        chart
            .configure_mesh()
            .x_desc("spawn latency (log scale)")
            .y_desc("percentile")
            .x_label_formatter(&|v| tick(ns(*v)))
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .bold_line_style(BLACK.mix(0.09))
            .light_line_style(TRANSPARENT)
            .draw()?;
        for (i, (sc, cdf)) in run.scenarios.iter().zip(&cdfs).enumerate() {
            let c = colour(sc, i);
            let points: Vec<(f64, f64)> = cdf.iter().map(|p| (p[1].clamp(lo, hi), nines(p[0]).min(top))).collect();
            draw_line(&mut chart, &points, c, 2)?;
            if sc.spawn_ns.count > 0 {
                let marks = [(sc.spawn_ns.p50, 2f64.log10()), (sc.spawn_ns.p99, 2.0)];
                let marks = marks
                    .into_iter()
                    .filter(|(x, _)| x.is_finite())
                    .map(|(x, y)| Circle::new((x.clamp(lo, hi), y), 4, c.filled()));
                chart.draw_series(marks)?;
            }
        }
        root.present()?;
    }
    Ok(svg)
}

/// Whether the collector did anything during `s`.
fn collected(s: &Scenario) -> bool {
    s.series.gc_kind.iter().any(|&k| k != 0) || s.series.gc_us.iter().any(|&v| v > 0.0) || s.gc.collections > 0
}

/// The collector's pauses by frame, one panel per scenario that collected.
fn gc_figure(out: &mut String, run: &Run) -> fmt::Result {
    let with_gc: Vec<(usize, &Scenario)> = run.scenarios.iter().enumerate().filter(|(_, s)| collected(s)).collect();
    let mut legend = scenario_legend(with_gc.iter().copied(), |s| {
        format!(
            " — {} collections{} (longest pause <b>{}</b>), {} purge slices (longest <b>{}</b>)",
            count(s.gc.collections),
            match s.gc.mark_slices {
                0 => String::new(),
                n => format!(" marked in {} more slices", count(n)),
            },
            if s.gc.collections > 0 { us(s.gc.max_collection_us) } else { NONE.to_owned() },
            count(s.gc.purge_slices),
            if s.gc.purge_slices > 0 { us(s.gc.max_purge_us) } else { NONE.to_owned() },
        )
    });
    if !with_gc.is_empty() {
        legend.insert_str(
            legend.len() - "</ul>\n".len(),
            "<li><span class=\"stem\" style=\"border-left:3px solid #555\"></span>collection or mark slice \
         <span class=\"stem\" style=\"border-left:1px solid #aaa\"></span>purge slice</li>",
        );
    }
    let mut caption = String::from(
        "Each stem is one frame's time in the collector on the game thread, on one log scale \
         for all panels: dark stems are collections (mark, find unreachable, gather) — or, \
         with <code>--incremental-gc-us</code>, the slices of a mark spread over frames — pale \
         ones are slices of the incremental purge that destroys what a collection found. \
         Compare the heights across panels: a policy that leaves released objects to the \
         collector pays for them here.",
    );
    let without = |pooled: bool| -> Vec<String> {
        run.scenarios.iter().filter(|s| !collected(s) && s.pool.is_some() == pooled).map(|s| esc(s.name)).collect()
    };
    let (unpooled, idle) = (without(false), without(true));
    if !unpooled.is_empty() {
        let _ = write!(
            caption,
            " No panel for {}: without a World, each projectile is freed the moment it dies, so \
             there is no collector.",
            unpooled.join(", ")
        );
    }
    if !idle.is_empty() {
        let _ = write!(caption, " {} did no collector work.", idle.join(", "));
    }
    caption.push_str(&purge_overruns(run));
    let chart =
        if with_gc.is_empty() { Err("No scenario ran the garbage collector.".into()) } else { gc_chart(run, &with_gc) };
    figure(out, "gc-pauses", "Collector pauses", &legend, chart, &caption)
}

/// Whether the purge slices that ran past their budget did so on their own or because the
/// game thread was preempted during them, scenario by scenario (a caption's sentences).
fn purge_overruns(run: &Run) -> String {
    let budget = f64::from(run.settings.purge_budget_us);
    let mut text = String::new();
    for s in run.scenarios.iter().filter(|s| s.gc.purge_slices > 0) {
        let gc = &s.gc;
        let _ = write!(
            text,
            " {}: {} of {} purge slices ran past the {} budget",
            esc(s.name),
            count(gc.purge_slices_over_budget),
            count(gc.purge_slices),
            us(budget)
        );
        let Some(longest) = gc.longest_purge else {
            text.push_str(" (this platform has no per-thread processor clock to tell why).");
            continue;
        };
        if gc.purge_slices_over_budget > 0 {
            let own = gc.purge_slices_over_budget - gc.purge_overruns_preempted;
            let _ = write!(
                text,
                "; {} of them because the game thread was preempted (their own processor time \
                 stayed within the budget), {} on their own",
                count(gc.purge_overruns_preempted),
                count(own)
            );
        }
        let switches = longest
            .involuntary_switches
            .map_or(String::new(), |n| format!(", preempted {} time{}", count(n), if n == 1 { "" } else { "s" }));
        let _ = write!(
            text,
            ". The longest, {}, was {} of its own work and {} off the processor{}.",
            us(longest.wall_us),
            us(longest.cpu_us),
            us(longest.off_cpu_us),
            switches
        );
    }
    text
}

/// Height of one scenario's panel in the GC chart.
const GC_PANEL_H: u32 = 150;

/// The GC chart: stacked panels sharing both axes.
fn gc_chart(run: &Run, with_gc: &[(usize, &Scenario)]) -> Svg {
    let pauses = with_gc.iter().flat_map(|(_, s)| s.series.gc_us.iter()).map(|&v| f64::from(v));
    let (lo, hi) = positive_range(pauses).map_or((1.0, 10.0), |(lo, hi)| log_bounds(lo, hi));
    let frames = longest(run.scenarios.iter().map(|s| s.series.gc_us.len()));
    let mut svg = String::new();
    {
        let height = GC_PANEL_H * with_gc.len() as u32 + 20;
        let root = SVGBackend::with_string(&mut svg, (CHART_W, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let panels = root.margin(4, 16, 4, 12).split_evenly((with_gc.len(), 1));
        for (panel, &(i, sc)) in panels.iter().zip(with_gc) {
            gc_panel(panel, sc, colour(sc, i), frames, (lo, hi))?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// One scenario's panel of the GC chart, pauses on a log axis over `(lo, hi)` µs.
fn gc_panel(
    area: &DrawingArea<SVGBackend<'_>, Shift>,
    sc: &Scenario,
    c: RGBColor,
    frames: f64,
    (lo, hi): (f64, f64),
) -> Result<(), Box<dyn Error>> {
    let mut chart = ChartBuilder::on(area)
        .caption(sc.name, (FONT, 15).into_font().color(&c))
        .x_label_area_size(26)
        .y_label_area_size(74)
        .build_cartesian_2d(0f64..frames, log_axis(lo, hi))?;
    chart
        .configure_mesh()
        .x_label_formatter(&frame_label)
        .y_label_formatter(&|v| tick(us(*v)))
        .label_style((FONT, 14))
        .bold_line_style(BLACK.mix(0.08))
        .light_line_style(TRANSPARENT)
        .draw()?;
    let s = &sc.series;
    let of_kind = |kind: u8| -> Vec<(usize, f64)> {
        s.gc_us
            .iter()
            .zip(&s.gc_kind)
            .enumerate()
            .filter(|(_, (&v, &k))| k == kind && v > 0.0)
            .map(|(f, (&v, _))| (f, f64::from(v)))
            .collect()
    };
    let slices = peaks(&of_kind(1), TRACE_COLUMNS);
    // Frames with time but no kind are drawn as collections: something paused the game.
    let mut collections = of_kind(2);
    collections.extend(of_kind(0));
    collections.extend(of_kind(3)); // slices of an incremental mark: collection work too
    collections.sort_unstable_by_key(|p| p.0);
    let collections = peaks(&collections, TRACE_COLUMNS);
    let stem = |(x, y): (f64, f64), style: ShapeStyle| PathElement::new(vec![(x, lo), (x, y.clamp(lo, hi))], style);
    let pale = c.mix(0.5);
    chart.draw_series(slices.iter().map(|&p| stem(p, ShapeStyle::from(pale).stroke_width(1))))?;
    chart.draw_series(slices.iter().map(|&(x, y)| Circle::new((x, y.clamp(lo, hi)), 2, pale.filled())))?;
    chart.draw_series(collections.iter().map(|&p| stem(p, ShapeStyle::from(c).stroke_width(2))))?;
    chart.draw_series(collections.iter().map(|&(x, y)| Circle::new((x, y.clamp(lo, hi)), 3, c.filled())))?;
    Ok(())
}

/// Heap allocations per frame.
fn allocations_figure(out: &mut String, run: &Run) -> fmt::Result {
    let legend = scenario_legend(run.scenarios.iter().enumerate(), |s| {
        format!(" — <b>{}</b> per frame in the steady state", amount(s.memory.steady_allocations_per_frame))
    });
    let caption = "Heap allocations made during each frame, by every thread: a scenario that \
                   builds each projectile with its own allocation climbs with the fire rate, while \
                   one that hands out slab cells from pools stays near zero once the pools are \
                   warm. Bumps in a pooled scenario are pools growing or workers refilling them.";
    let series: Vec<Vec<f64>> =
        run.scenarios.iter().map(|s| s.series.allocations.iter().map(|&v| f64::from(v)).collect()).collect();
    let chart = count_chart(run, &series, "heap allocations in the frame", false, whole_or_amount);
    figure(out, "allocations", "Heap allocations per frame", &legend, chart, caption)
}

/// Projectiles alive per frame.
fn live_figure(out: &mut String, run: &Run) -> fmt::Result {
    let legend =
        scenario_legend(run.scenarios.iter().enumerate(), |s| format!(" — <b>{}</b> at the end", count(s.live_at_end)));
    let caption = "Projectiles alive at the end of each frame. Every scenario fires the same \
                   seeded storm, so the lines should lie on top of each other (later scenarios are \
                   drawn thinner, over the earlier ones): the population climbs while the first \
                   projectiles live out their lifetime, then levels off. A line that parts from the \
                   others means that scenario played a different game.";
    let series: Vec<Vec<f64>> =
        run.scenarios.iter().map(|s| s.series.live.iter().map(|&v| f64::from(v)).collect()).collect();
    let chart = count_chart(run, &series, "projectiles alive", true, whole_or_amount);
    figure(out, "live", "Projectiles alive", &legend, chart, caption)
}

/// A frame's phases in the order it runs them: label, colour, what the phase does. The
/// colours are none of the scenarios'.
const PHASES: [(&str, &str, &str); 5] = [
    ("fire + spawn", "#7e8c3a", "the turrets' shots, and a spawn for each"),
    ("tick", "#3d4556", "one pass over every projectile: move it, judge whether it hit or expired"),
    ("retire", "#b07aa1", "Box drops the dead boxes; a World applies the destroys its tick recorded"),
    ("collector", "#9c755f", "the collector's work at the frame's end: purge and mark slices, collections"),
    ("pool upkeep", "#bab0ac", "the rest of the frame's end: waking workers, handing cells back, growth"),
];

/// A steady-state frame's mean time by phase, in [`PHASES`] order.
fn phase_values(p: &Phases) -> [f64; 5] {
    [p.spawn_us, p.tick_us, p.retire_us, p.collector_us, p.upkeep_us]
}

/// Where a steady-state frame's time goes: one stacked bar per scenario on one scale, then
/// the figures in a table with the tick's time per projectile.
fn phases_figure(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<figure id=\"phases\">\n<h3>Where a frame's time goes</h3>\n<ul class=\"legend\">");
    for (label, colour, _) in PHASES {
        write!(out, "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{label}</li>")?;
    }
    out.push_str("</ul>\n");
    let totals: Vec<f64> = run.scenarios.iter().map(|s| phase_values(&s.phases).iter().sum()).collect();
    let widest = totals.iter().copied().fold(0.0, f64::max);
    if widest > 0.0 && widest.is_finite() {
        out.push_str(&phase_bars(run, widest));
    } else {
        out.push_str("<p class=\"note\">No frame phases were recorded.</p>");
    }
    out.push_str(
        "\n<div class=\"table-wrap\"><table class=\"phases\">\n<thead><tr><th style=\"text-align:left\">Scenario</th>",
    );
    for (label, _, _) in PHASES {
        write!(out, "<th>{label}</th>")?;
    }
    out.push_str("<th>frame</th><th>tick per projectile</th></tr></thead>\n<tbody>\n");
    for (i, (sc, total)) in run.scenarios.iter().zip(&totals).enumerate() {
        write!(out, "<tr><th scope=\"row\">{}{}</th>", swatch(sc, i), esc(sc.name))?;
        for v in phase_values(&sc.phases) {
            write!(out, "<td>{}</td>", us(v))?;
        }
        let per = sc.phases.tick_ns_per_object;
        writeln!(
            out,
            "<td>{}</td><td data-key=\"{}\" data-figure=\"tick_ns_per_object\">{}</td></tr>",
            us(*total),
            esc(sc.key),
            ns(per)
        )?;
    }
    out.push_str("</tbody>\n</table></div>\n");
    let mut caption = format!(
        "Each bar is a frame of the steady state ({}), phase by phase: the mean of each phase's \
         time over those frames, all bars on one scale. ",
        steady_frames(run)
    );
    for (label, _, what) in PHASES {
        let _ = write!(caption, "<b>{label}</b>: {what}. ");
    }
    caption.push_str(
        "The tick is the claim “one pass over contiguous memory” measured: a World ticks each \
         class over its slabs in address order, Box chases a pointer per projectile; “tick per \
         projectile” divides it by the projectiles alive.",
    );
    write!(out, "<figcaption>{caption}</figcaption>\n</figure>\n")
}

/// The phase bars (SVG): a row per scenario, its name, its phases side by side at
/// `widest` µs to the full width, its total after them.
fn phase_bars(run: &Run, widest: f64) -> String {
    const ROW_H: f64 = 30.0;
    const BAR_H: f64 = 20.0;
    const NAME_W: f64 = 170.0;
    const TOTAL_W: f64 = 90.0;
    let plot_w = f64::from(CHART_W) - NAME_W - TOTAL_W;
    let height = ROW_H * run.scenarios.len() as f64 + 8.0;
    let mut svg = format!(
        "<svg class=\"phases\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{CHART_W}\" height=\"{}\" \
         viewBox=\"0 0 {CHART_W} {}\" role=\"img\" aria-label=\"frame time by phase\">",
        px(height),
        px(height)
    );
    for (row, (i, sc)) in run.scenarios.iter().enumerate().enumerate() {
        let y = 4.0 + ROW_H * row as f64;
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"13\" fill=\"{}\">{}</text>",
            px(NAME_W - 8.0),
            px(y + BAR_H * 0.72),
            hex(colour(sc, i)),
            esc(sc.name)
        );
        let mut x = NAME_W;
        let values = phase_values(&sc.phases);
        for ((label, fill, _), v) in PHASES.iter().zip(values) {
            let w = (v.max(0.0) / widest * plot_w).max(0.0);
            if w <= 0.0 {
                continue;
            }
            let _ = write!(
                svg,
                "<rect data-phase=\"{label}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{BAR_H}\" fill=\"{fill}\">\
                 <title>{}: {label} {}</title></rect>",
                px(x),
                px(y),
                px(w),
                esc(sc.name),
                us(v)
            );
            if w >= 52.0 {
                let ink = if *label == "tick" { "#fff" } else { "#111" };
                let _ = write!(
                    svg,
                    "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"11\" fill=\"{ink}\">{}</text>",
                    px(x + w / 2.0),
                    px(y + BAR_H * 0.7),
                    us(v)
                );
            }
            x += w;
        }
        let _ = write!(
            svg,
            "<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"#333\">{}</text>",
            px(x + 6.0),
            px(y + BAR_H * 0.72),
            us(values.iter().sum())
        );
    }
    svg.push_str("</svg>");
    svg
}

/// Memory over the storm: the heap and what a World mapped outside it, per frame.
fn memory_figure(out: &mut String, run: &Run) -> fmt::Result {
    let last = |v: &[u64]| v.last().copied().unwrap_or(0);
    let legend = scenario_legend(run.scenarios.iter().enumerate(), |s| {
        format!(
            " — at the end: heap <b>{}</b>, mapped <b>{}</b>",
            bytes(last(&s.series.heap_bytes)),
            bytes(last(&s.series.mapped_bytes))
        )
    });
    let as_f64 = |pick: fn(&Scenario) -> &Vec<u64>| -> Vec<Vec<f64>> {
        run.scenarios.iter().map(|s| pick(s).iter().map(|&v| v as f64).collect()).collect()
    };
    let heap = count_chart(run, &as_f64(|s| &s.series.heap_bytes), "heap bytes live", false, byte_label);
    let mapped = count_chart(run, &as_f64(|s| &s.series.mapped_bytes), "slab + table bytes", false, byte_label);
    let chart = match (heap, mapped) {
        (Ok(heap), Ok(mapped)) => Ok(format!("{heap}\n{mapped}")),
        (Err(e), _) | (_, Err(e)) => Err(e),
    };
    let caption = format!(
        "Memory at the end of each frame, in two charts. Above, the heap: the scenario's live \
         bytes (what the process held before it, and the harness's buffers, left out): Box's \
         boxes, or a World's pools (queues, magazines), class side tables and the rest of its \
         structures. Below, what a World maps outside the heap: the slabs its classes were \
         granted or prepared ahead, and the object table's slots (Box maps nothing). The \
         shaded band is the steady state ({}). A line that still climbs there is memory that \
         keeps growing; the summary's peak memory is the highest point of the two together.",
        steady_frames(run)
    );
    figure(out, "memory-over-time", "Memory over the storm", &legend, chart, &caption)
}

/// A count's axis label: whole numbers grouped (`12,000`), fractions as amounts.
fn whole_or_amount(v: f64) -> String {
    if v.fract() == 0.0 {
        count(v as u64)
    } else {
        amount(v)
    }
}

/// A byte count's axis label (`2.3 MiB`).
fn byte_label(v: f64) -> String {
    bytes(v.max(0.0) as u64)
}

/// The first frame of the steady state, as the charts shade it (`None` with no scenario).
fn steady_from(run: &Run) -> Option<f64> {
    run.scenarios.first().map(|s| f64::from(s.steady_from))
}

/// The steady state's frames, for a caption: `frames 301–600`.
fn steady_frames(run: &Run) -> String {
    let from = run.scenarios.first().map_or(0, |s| s.steady_from);
    let to = run.scenarios.iter().map(|s| s.series.frame_us.len()).max().unwrap_or(0);
    format!("frames {}–{}", count(u64::from(from) + 1), count(to as u64))
}

/// The steady state's shade behind a chart's lines.
fn steady_shade() -> ShapeStyle {
    BLACK.mix(0.05).filled()
}

/// A line chart of a per-frame count, every scenario on one linear axis from zero, the
/// steady state shaded. With `stacked`, lines are drawn thinner as they go, so series that
/// coincide stay visible. `label` writes the vertical axis's values.
fn count_chart(run: &Run, series: &[Vec<f64>], y_desc: &str, stacked: bool, label: fn(f64) -> String) -> Svg {
    if series.iter().all(Vec::is_empty) {
        return Err("No per-frame series were recorded.".into());
    }
    let max = series.iter().flatten().copied().filter(|v| v.is_finite()).fold(0.0, f64::max);
    // At least 5, so that small counts get whole-number ticks.
    let y_max = (max * 1.08).max(5.0);
    let frames = longest(series.iter().map(Vec::len));
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (CHART_W, 320)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .margin(12)
            .margin_right(24)
            .x_label_area_size(44)
            .y_label_area_size(78)
            .build_cartesian_2d(0f64..frames, 0f64..y_max)?;
        chart
            .configure_mesh()
            .x_desc("frame")
            .y_desc(y_desc)
            .y_labels(6)
            .x_label_formatter(&frame_label)
            .y_label_formatter(&|v| label(*v))
            .label_style((FONT, LABEL_SIZE))
            .axis_desc_style((FONT, LABEL_SIZE))
            .bold_line_style(BLACK.mix(0.09))
            .light_line_style(TRANSPARENT)
            .draw()?;
        if let Some(from) = steady_from(run).filter(|&f| f < frames) {
            chart.draw_series(std::iter::once(Rectangle::new([(from, 0.0), (frames, y_max)], steady_shade())))?;
        }
        let n = run.scenarios.len() as u32;
        for (i, (sc, values)) in run.scenarios.iter().zip(series).enumerate() {
            let width = if stacked { 1 + 2 * (n - 1 - i as u32).min(2) } else { 1 };
            draw_line(&mut chart, &trace(values, TRACE_COLUMNS), colour(sc, i), width)?;
        }
        root.present()?;
    }
    Ok(svg)
}

/// Draws `points` as a line `width` px wide, or as a dot when there is only one.
fn draw_line<X, Y>(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Cartesian2d<X, Y>>,
    points: &[(f64, f64)],
    c: RGBColor,
    width: u32,
) -> Result<(), Box<dyn Error>>
where
    X: Ranged<ValueType = f64>,
    Y: Ranged<ValueType = f64>,
{
    if points.len() == 1 {
        chart.draw_series(points.iter().map(|&p| Circle::new(p, 3, c.filled())))?;
    } else {
        chart.draw_series(LineSeries::new(points.iter().copied(), ShapeStyle::from(c).stroke_width(width)))?;
    }
    Ok(())
}

/// `c` mixed with white, keeping `keep` of it: a solid pale shade.
fn pale(c: RGBColor, keep: f64) -> RGBColor {
    let mix = |v: u8| (255.0 - (255.0 - f64::from(v)) * keep).round() as u8;
    RGBColor(mix(c.0), mix(c.1), mix(c.2))
}

/// The x extent of charts over frames: the longest series, at least one frame wide.
fn longest(lengths: impl Iterator<Item = usize>) -> f64 {
    (lengths.max().unwrap_or(0).saturating_sub(1)).max(1) as f64
}

/// The smallest and largest positive finite value, if any.
fn positive_range(values: impl Iterator<Item = f64>) -> Option<(f64, f64)> {
    values.filter(|v| v.is_finite() && *v > 0.0).fold(None, |acc, v| match acc {
        None => Some((v, v)),
        Some((lo, hi)) => Some((f64::min(lo, v), f64::max(hi, v))),
    })
}

/// Bounds for a log axis around `[lo, hi]`: some room either side, a decade at least.
fn log_bounds(lo: f64, hi: f64) -> (f64, f64) {
    let (mut lo, hi) = (lo / 1.3, hi * 1.3);
    if hi / lo < 10.0 {
        lo = hi / 10.0;
    }
    (lo, hi)
}

/// A log axis over `[lo, hi]` with ticks at 1-2-5 steps (only powers of ten when those are
/// too many to label).
fn log_axis(lo: f64, hi: f64) -> WithKeyPoints<LogCoord<f64>> {
    let mut all = Vec::new();
    let mut decades = Vec::new();
    let mut exp = lo.log10().floor() as i32;
    while 10f64.powi(exp) <= hi {
        for m in [1.0, 2.0, 5.0] {
            let v = m * 10f64.powi(exp);
            if (lo..=hi).contains(&v) {
                all.push(v);
                if m == 1.0 {
                    decades.push(v);
                }
            }
        }
        exp += 1;
    }
    let ticks = if all.len() <= 12 { all } else { decades };
    (lo..hi).log_scale().with_key_points(ticks)
}

/// A frame number for an axis tick; empty between frames (a storm of a frame or two gets
/// ticks at fractions).
fn frame_label(v: &f64) -> String {
    if v.fract() == 0.0 && *v >= 0.0 {
        count(*v as u64)
    } else {
        String::new()
    }
}

/// A duration label for an axis tick: `1 ms` rather than `1.0 ms`.
fn tick(label: String) -> String {
    label.replace(".0 ", " ")
}

/// At most two points per column tracing `values` at the resolution of `columns`: each
/// column's smallest and largest value, in frame order, so spikes survive decimation.
fn trace(values: &[f64], columns: usize) -> Vec<(f64, f64)> {
    let finite = |v: f64| if v.is_finite() { v } else { 0.0 };
    if values.len() <= 2 * columns {
        return values.iter().enumerate().map(|(i, &v)| (i as f64, finite(v))).collect();
    }
    let per = values.len().div_ceil(columns);
    let mut out = Vec::with_capacity(2 * columns);
    for (b, chunk) in values.chunks(per).enumerate() {
        let (mut lo, mut hi) = (0, 0);
        for (i, &v) in chunk.iter().enumerate() {
            if v < chunk[lo] {
                lo = i;
            }
            if v > chunk[hi] {
                hi = i;
            }
        }
        let (first, second) = (lo.min(hi), lo.max(hi));
        out.push(((b * per + first) as f64, finite(chunk[first])));
        if second != first {
            out.push(((b * per + second) as f64, finite(chunk[second])));
        }
    }
    out
}

/// `(frame, value)` points (in frame order) thinned to the largest value per column when
/// there are more than `columns` of them.
fn peaks(points: &[(usize, f64)], columns: usize) -> Vec<(f64, f64)> {
    let last = points.last().map_or(0, |p| p.0);
    if points.len() <= columns || last == 0 {
        return points.iter().map(|&(f, v)| (f as f64, v)).collect();
    }
    let per = (last + 1).div_ceil(columns);
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(columns);
    // The column being gathered: its index, and the frame and value of its largest point.
    let mut current: Option<(usize, usize, f64)> = None;
    for &(f, v) in points {
        match current {
            Some((col, _, best)) if col == f / per => {
                if v > best {
                    current = Some((col, f, v));
                }
            }
            _ => {
                if let Some((_, bf, bv)) = current {
                    out.push((bf as f64, bv));
                }
                current = Some((f / per, f, v));
            }
        }
    }
    if let Some((_, bf, bv)) = current {
        out.push((bf as f64, bv));
    }
    out
}

// ---------------------------------------------------------------------------------------
// The slab occupancy map.
// ---------------------------------------------------------------------------------------

/// Each cell state's colour, in [`CELL_STATES`] order: live violet, in pool pale violet (a
/// live object's colour, paler: ready to be one), garbage pink, free light grey, retired dark
/// grey. None is near a scenario's colour ([`colour`]): a map is not read as a scenario.
const STATE_COLOURS: [&str; 5] = ["#7b3f9e", "#c4a8e0", "#e84393", "#d3d7dc", "#3c3c3c"];
/// What each cell state means, in [`CELL_STATES`] order, for the maps' legend (as
/// `respawn::CellState` judges a cell from its slot's flags).
const STATE_MEANINGS: [&str; 5] = [
    "a projectile the game can see.",
    "owned by the class's pool: a ready object (built by a worker, or reset for reuse) that the \
     next spawn takes without constructing anything, or a cell handed to the workers to build \
     into. A destroyed (Purge) or purged (Default) projectile's cell lands here, not in free.",
    "a released object waiting for the collector to find and purge it. A policy that hands \
     its releases to the GC accumulates these between collections.",
    "vacant, on the class's free list and owned by no pool: the rest of a slab the arena granted \
     when a pool took fewer cells than a slab holds, and cells given back to the arena (beyond \
     the pool's <code>max</code>, or finding the workers' queue full).",
    "used up its generations; never handed out again.",
];
/// The colour of a letter [`CELL_STATES`] does not know.
const UNKNOWN_COLOUR: &str = "#00c8c8";
/// Width of the cell area of a map, in SVG pixels.
const MAP_W: usize = 860;
/// Width of the slab-number column left of a map.
const MAP_LABEL_W: usize = 40;
/// Space between two slabs.
const SLAB_GAP: f64 = 3.0;
/// Height a map aims to stay under (it wraps slabs over wider rows beyond this).
const MAP_MAX_H: f64 = 640.0;
/// Most slabs a map draws cell by cell; beyond, or when a cell would be narrower than
/// [`MIN_CELL`], it draws one stacked bar per slab.
const MAP_MAX_SLABS: usize = 32;
/// The narrowest cell drawn one by one, in SVG pixels.
const MIN_CELL: f64 = 2.0;
/// Height of the bars of a map drawn as bars.
const BAR_H: f64 = 150.0;
/// Most bars a map draws: adjacent slabs share a bar beyond this (5 px a bar at least).
const MAX_BARS: usize = MAP_W / 5;
/// Room above and below a map for its labels.
const MAP_PAD: f64 = 6.0;

/// The occupancy maps of every World scenario.
fn occupancy_section(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<h2>Slab occupancy at the end of the storm</h2>\n");
    out.push_str(
        "<p>Like Unreal's memory-layout view: each class keeps its objects in slabs, contiguous \
         blocks of equal cells, and the maps below show every cell of every slab when the storm \
         ended, in address order. A slab wraps over several rows; slabs are numbered on the \
         left (hover one for its counts). A class with more than a few dozen slabs is drawn as \
         one stacked bar per slab instead. Each cell is</p>\n<ul class=\"legend states-explained\">\n",
    );
    for ((_, name), (colour, meaning)) in CELL_STATES.iter().zip(STATE_COLOURS.iter().zip(STATE_MEANINGS)) {
        writeln!(out, "<li><span class=\"swatch\" style=\"background:{colour}\"></span><b>{name}</b>: {meaning}</li>")?;
    }
    out.push_str("</ul>\n");
    let names = |pooled: bool| -> Vec<String> {
        run.scenarios
            .iter()
            .filter(|s| s.layout.is_empty() && s.pool.is_some() == pooled)
            .map(|s| esc(s.name))
            .collect()
    };
    let (unpooled, unrecorded) = (names(false), names(true));
    if !unpooled.is_empty() {
        writeln!(
            out,
            "<p class=\"note\">No map for {}: each projectile is allocated on its own from the \
             heap, so there are no slabs to draw.</p>",
            unpooled.join(", ")
        )?;
    }
    if !unrecorded.is_empty() {
        writeln!(out, "<p class=\"note\">No slab layout was recorded for {}.</p>", unrecorded.join(", "))?;
    }
    bytes_by_state(out, run)?;
    for (i, sc) in run.scenarios.iter().enumerate().filter(|(_, s)| !s.layout.is_empty()) {
        write!(
            out,
            "<figure class=\"occupancy\" data-key=\"{}\">\n<h3>{}{}</h3>\n",
            esc(sc.key),
            swatch(sc, i),
            esc(sc.name)
        )?;
        writeln!(out, "<p class=\"meta\">{}</p>", esc(sc.about))?;
        for map in &sc.layout {
            class_map(out, map)?;
        }
        write!(out, "<figcaption>{}</figcaption>\n</figure>\n", occupancy_caption(sc))?;
    }
    Ok(())
}

/// The collector's diagnostics at the end of each World scenario: why a projectile still
/// flying was alive, why its turret was, and what still referenced garbage.
fn diagnosis_section(out: &mut String, run: &Run) -> fmt::Result {
    out.push_str("<details class=\"why\">\n<summary><h2>Why is it alive</h2></summary>\n");
    out.push_str(
        "<p>When each World scenario's storm ended (after its figures were taken), the collector \
         was asked why a projectile still flying was alive: <code>World::why_alive</code> finds a \
         shortest chain of references from a root by the rules the next collection marks by \
         (roots: <code>add_to_root</code>, <code>Root</code> guards, external referencers, \
         permanent objects, and every object the world spawned and the game has not destroyed \
         yet; links: traced fields, outers, clusters), like Unreal's <code>obj refs</code>. \
         Nothing references a projectile in flight: the world keeps it until it is destroyed, \
         as a level keeps its actors. Each is a sub-object of the turret that fired it, and a \
         live sub-object keeps its owner, but a turret is kept by the world too, so its \
         shortest chain is itself. Then \
         <code>World::find_garbage_references</code> listed the references that kept objects \
         still held to objects marked as garbage and not yet purged (Unreal's garbage reference \
         tracking): the storm keeps no handle to a retired projectile, so there should be \
         none.</p>\n",
    );
    out.push_str(
        "<dl class=\"chain-legend\">\
         <dt><code>Bullet#127</code></dt><dd>an object: its class, and its index among the \
         objects of its class</dd>\
         <dt><code>root (owned until destroyed)</code></dt><dd>where a chain starts, and what keeps \
         its first object: spawned and not destroyed yet, <code>add_to_root</code>, a \
         <code>Root</code> guard, an external referencer, permanent</dd>\
         <dt><code>-&gt; [traced]</code></dt><dd>a handle in the previous object's traced \
         fields</dd>\
         <dt><code>-&gt; [outer]</code></dt><dd>a sub-object keeps its owner (Unreal's \
         Outer)</dd>\
         <dt><code>-&gt; [cluster]</code></dt><dd>objects of one cluster keep each other</dd>\
         </dl>\n",
    );
    let (with, without): (Vec<_>, Vec<_>) = run.scenarios.iter().enumerate().partition(|(_, s)| s.diagnosis.is_some());
    if !without.is_empty() {
        let names: Vec<String> = without.iter().map(|(_, s)| esc(s.name)).collect();
        writeln!(out, "<p class=\"note\">No diagnosis for {}: it has no collector.</p>", names.join(", "))?;
    }
    for (i, sc) in with {
        let d = sc.diagnosis.as_ref().expect("partitioned on it");
        writeln!(out, "<section class=\"diagnosis\" data-key=\"{}\">", esc(sc.key))?;
        writeln!(out, "<h3>{}{}</h3>\n<ul>", swatch(sc, i), esc(sc.name))?;
        match (&d.object, &d.chain) {
            (Some(object), Some(chain)) => {
                writeln!(out, "<li>{}: <code>{}</code></li>", esc(object), esc(chain))?;
            }
            (Some(object), None) => {
                writeln!(out, "<li>{}: not reachable; the next collection purges it</li>", esc(object))?
            }
            (None, _) => out.push_str("<li>No projectile was alive at the end.</li>\n"),
        }
        if let (Some(outer), Some(chain)) = (&d.outer, &d.outer_chain) {
            writeln!(out, "<li>its outer, {}: <code>{}</code></li>", esc(outer), esc(chain))?;
        }
        writeln!(
            out,
            "<li data-figure=\"garbage_references\">{} marked as garbage and not yet purged; {} to {}</li>",
            plural(d.garbage_objects, "object"),
            plural(d.garbage_references, "reference"),
            if d.garbage_objects == 1 { "it" } else { "them" }
        )?;
        out.push_str("</ul>\n");
        if !d.first_garbage_references.is_empty() {
            let shown = d.first_garbage_references.len() as u64;
            let first = if shown < d.garbage_references { format!("the first {shown}") } else { "each".to_owned() };
            writeln!(out, "<p class=\"meta\">{first}:</p>\n<ul class=\"garbage-references\">")?;
            for line in &d.first_garbage_references {
                writeln!(out, "<li><code>{}</code></li>", esc(line))?;
            }
            out.push_str("</ul>\n");
        }
        out.push_str("</section>\n");
    }
    out.push_str("</details>\n");
    Ok(())
}

/// `1 object`, `3 objects` (counts grouped as [`count`] groups them).
fn plural(n: u64, noun: &str) -> String {
    format!("{} {noun}{}", count(n), if n == 1 { "" } else { "s" })
}

/// What a scenario's maps add up to, state by state, for its caption.
fn occupancy_caption(sc: &Scenario) -> String {
    let mut totals = [0usize; 5];
    for map in &sc.layout {
        for (t, c) in totals.iter_mut().zip(map.counts) {
            *t += c;
        }
    }
    let all: usize = totals.iter().sum();
    let parts: Vec<String> = CELL_STATES
        .iter()
        .zip(totals)
        .filter(|(_, n)| *n > 0)
        .map(|((_, name), n)| format!("{name} {}", percent(n as f64 / all as f64)))
        .collect();
    if parts.is_empty() {
        format!("{}: the classes own no cells.", esc(sc.name))
    } else {
        format!("Over all of {}'s classes: {} of {} cells.", esc(sc.name), parts.join(", "), count(all as u64))
    }
}

/// One class's heading, legend with counts, and map.
fn class_map(out: &mut String, map: &ClassMap) -> fmt::Result {
    let slab_bytes = (map.cells_per_slab * map.cell_size * map.slabs.len()) as u64;
    write!(
        out,
        "<div class=\"classmap\">\n<h4>{}</h4>\n<p class=\"meta\">{} cells of {} · {} per slab · {} slab{} · {}</p>\n",
        esc(&map.name),
        count(map.counts.iter().sum::<usize>() as u64),
        bytes(map.cell_size as u64),
        count(map.cells_per_slab as u64),
        count(map.slabs.len() as u64),
        if map.slabs.len() == 1 { "" } else { "s" },
        bytes(slab_bytes),
    )?;
    out.push_str("<ul class=\"legend states\">");
    for (((_, name), colour), n) in CELL_STATES.iter().zip(STATE_COLOURS).zip(map.counts) {
        write!(
            out,
            "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{name} <b>{}</b></li>",
            count(n as u64)
        )?;
    }
    out.push_str("</ul>\n");
    if map.slabs.is_empty() {
        out.push_str("<p class=\"note\">This class owns no slabs.</p>\n");
    } else if cell_by_cell(map) {
        out.push_str(&slab_svg(map));
    } else {
        let per_bar = map.slabs.len().div_ceil(MAX_BARS);
        writeln!(
            out,
            "<p class=\"meta\">Too many slabs to draw cell by cell: each bar is {}, its cells by state \
             from the bottom (live, in pool, garbage, free, retired) as a share of its cells; hover a bar \
             for its counts.</p>",
            if per_bar == 1 { "one slab".to_owned() } else { format!("{per_bar} adjacent slabs") }
        )?;
        out.push_str(&slab_bars(map));
    }
    out.push_str("</div>\n");
    Ok(())
}

/// The index in [`CELL_STATES`] of a cell letter (5: unknown).
fn state_index(letter: char) -> usize {
    CELL_STATES.iter().position(|(l, _)| *l == letter).unwrap_or(CELL_STATES.len())
}

/// How a map is laid out: cells per row and the side of a cell.
#[derive(Clone, Copy, Debug)]
struct Grid {
    /// Cells per row (a slab wraps over several rows).
    columns: usize,
    /// Side of one cell, in SVG pixels.
    cell: f64,
    /// Rows one slab takes.
    rows_per_slab: usize,
}

impl Grid {
    /// The widest-celled grid that keeps `slabs` slabs of `cells` cells under
    /// [`MAP_MAX_H`]: 128 cells per row to start, doubling while the map is too tall.
    fn fit(slabs: usize, cells: usize) -> Grid {
        let cells = cells.max(1);
        let mut columns = cells.min(128);
        loop {
            let cell = (MAP_W as f64 / columns as f64).min(14.0);
            let cell = if cell >= 2.0 { cell.floor() } else { cell };
            let rows_per_slab = cells.div_ceil(columns);
            let height = slabs as f64 * (rows_per_slab as f64 * cell + SLAB_GAP);
            if height <= MAP_MAX_H || columns >= cells {
                return Grid { columns, cell, rows_per_slab };
            }
            columns = (columns * 2).min(cells);
        }
    }

    /// Height of one slab's block of rows.
    fn slab_height(self) -> f64 {
        self.rows_per_slab as f64 * self.cell
    }
}

/// `v` with at most `decimals` decimals and no trailing zeros (`99.9`, `6`).
fn trimmed(v: f64, decimals: usize) -> String {
    let s = format!("{v:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_owned()
    } else {
        s
    }
}

/// A number for an SVG attribute: at most two decimals.
fn px(v: f64) -> String {
    trimmed(v, 2)
}

/// The colour of a state index from [`state_index`].
fn state_colour(state: usize) -> &'static str {
    STATE_COLOURS.get(state).copied().unwrap_or(UNKNOWN_COLOUR)
}

/// The map of one class as SVG. Cells are drawn in cell units under one `scale`, so the
/// coordinates stay short: each slab is first filled with its most common state (one or
/// two rects), then every run of adjacent cells in another state becomes one rect, in one
/// group per state. A transparent rect per slab carries its hover title.
fn slab_svg(map: &ClassMap) -> String {
    let slabs: Vec<Vec<usize>> = map.slabs.iter().map(|s| s.chars().map(state_index).collect()).collect();
    let widest = slabs.iter().map(Vec::len).max().unwrap_or(0);
    let grid = Grid::fit(slabs.len(), widest);
    let columns = grid.columns;
    // One slab and the gap after it, in cell units.
    let gap = SLAB_GAP / grid.cell;
    let pitch = grid.rows_per_slab as f64 + gap;
    let width = MAP_LABEL_W as f64 + columns as f64 * grid.cell;
    let height = (slabs.len() as f64 * pitch - gap) * grid.cell;
    let mut backgrounds = String::new();
    // One buffer of rects per state (the last is for unknown letters), and its cell count.
    let mut groups: Vec<(String, usize)> = vec![(String::new(), 0); CELL_STATES.len() + 1];
    let mut labels = String::new();
    let mut titles = String::new();
    let label_every = (12.0 / (pitch * grid.cell)).ceil().max(1.0) as usize;
    for (s, cells) in slabs.iter().enumerate() {
        let top = s as f64 * pitch;
        let mut tally = [0usize; CELL_STATES.len() + 1];
        for &c in cells {
            tally[c] += 1;
        }
        for ((_, n), t) in groups.iter_mut().zip(tally) {
            *n += t;
        }
        let dominant = (0..tally.len()).max_by_key(|&i| tally[i]).unwrap_or(0);
        let (full, rest) = (cells.len() / columns, cells.len() % columns);
        let fill = state_colour(dominant);
        if full > 0 {
            let _ =
                write!(backgrounds, "<rect y=\"{}\" width=\"{columns}\" height=\"{full}\" fill=\"{fill}\"/>", px(top));
        }
        if rest > 0 {
            let _ = write!(
                backgrounds,
                "<rect y=\"{}\" width=\"{rest}\" height=\"1\" fill=\"{fill}\"/>",
                px(top + full as f64)
            );
        }
        for (r, row) in cells.chunks(columns).enumerate() {
            let y = px(top + r as f64);
            let mut start = 0;
            while start < row.len() {
                let state = row[start];
                let run = row[start..].iter().take_while(|&&c| c == state).count();
                if state != dominant {
                    let _ = write!(groups[state].0, "<rect x=\"{start}\" y=\"{y}\" width=\"{run}\" height=\"1\"/>");
                }
                start += run;
            }
        }
        let (top_px, slab_px) = (top * grid.cell, grid.slab_height());
        if s % label_every == 0 {
            let _ = write!(
                labels,
                "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"central\">{s}</text>",
                MAP_LABEL_W - 6,
                px(top_px + slab_px / 2.0)
            );
        }
        let parts: Vec<String> = CELL_STATES
            .iter()
            .zip(tally)
            .filter(|(_, n)| *n > 0)
            .map(|((_, name), n)| format!("{} {name}", count(n as u64)))
            .collect();
        let _ = write!(
            titles,
            "<rect x=\"{MAP_LABEL_W}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>slab {s}: {}</title></rect>",
            px(top_px),
            px(columns as f64 * grid.cell),
            px(slab_px),
            parts.join(", ")
        );
    }
    let mut svg = format!(
        "<svg class=\"slabs\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 -{pad} {w} {h}\" role=\"img\" aria-label=\"slab occupancy of {name}\" data-form=\"cells\" data-columns=\"{columns}\">\n\
         <g transform=\"translate({MAP_LABEL_W} 0) scale({scale})\">\n<g data-background=\"\">{backgrounds}</g>\n",
        w = px(width),
        h = px(height.max(1.0) + 2.0 * MAP_PAD),
        pad = px(MAP_PAD),
        name = esc(&map.name),
        scale = trimmed(grid.cell, 4),
    );
    let letters = CELL_STATES.iter().map(|(l, _)| *l).chain(std::iter::once('?'));
    for (state, (letter, (rects, n))) in letters.zip(&groups).enumerate() {
        if *n > 0 {
            let _ = writeln!(
                svg,
                "<g data-state=\"{letter}\" data-cells=\"{n}\" fill=\"{}\">{rects}</g>",
                state_colour(state)
            );
        }
    }
    let _ = writeln!(svg, "</g>\n<g font-size=\"10\" fill=\"#666\">{labels}</g>");
    let _ = writeln!(svg, "<g fill=\"transparent\">{titles}</g>\n</svg>");
    svg
}

/// Whether `map` is drawn cell by cell: a few dozen slabs at most, each cell wide enough to
/// see.
fn cell_by_cell(map: &ClassMap) -> bool {
    let widest = map.slabs.iter().map(String::len).max().unwrap_or(0);
    map.slabs.len() <= MAP_MAX_SLABS && Grid::fit(map.slabs.len(), widest).cell >= MIN_CELL
}

/// The map of a class with many slabs: one stacked bar per slab (or per run of adjacent
/// slabs, past [`MAX_BARS`]) in address order, its cells by state from the bottom in
/// [`CELL_STATES`] order, each bar its cells' full height. One group of rects per state,
/// carrying the state's cell count as the cell-by-cell map does; a transparent rect per bar
/// carries its hover title.
fn slab_bars(map: &ClassMap) -> String {
    let per_bar = map.slabs.len().div_ceil(MAX_BARS).max(1);
    let bars: Vec<(usize, [usize; CELL_STATES.len() + 1])> = map
        .slabs
        .chunks(per_bar)
        .enumerate()
        .map(|(b, group)| {
            let mut tally = [0usize; CELL_STATES.len() + 1];
            for c in group.iter().flat_map(|slab| slab.chars()) {
                tally[state_index(c)] += 1;
            }
            (b * per_bar, tally)
        })
        .collect();
    let pitch = MAP_W as f64 / bars.len() as f64;
    let gap = if pitch >= 4.0 { 1.0 } else { 0.0 };
    let axis_h = 30.0;
    let (width, height) = ((MAP_LABEL_W + MAP_W) as f64, MAP_PAD + BAR_H + axis_h);
    let mut groups: Vec<(String, usize)> = vec![(String::new(), 0); CELL_STATES.len() + 1];
    let mut titles = String::new();
    for (b, (first, tally)) in bars.iter().enumerate() {
        let total: usize = tally.iter().sum();
        let x = MAP_LABEL_W as f64 + b as f64 * pitch;
        let mut bottom = MAP_PAD + BAR_H;
        for (state, &n) in tally.iter().enumerate() {
            groups[state].1 += n;
            if n == 0 {
                continue;
            }
            let h = BAR_H * n as f64 / total as f64;
            bottom -= h;
            let _ = write!(
                groups[state].0,
                "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/>",
                px(x),
                px(bottom),
                px(pitch - gap),
                px(h)
            );
        }
        let last = (first + per_bar).min(map.slabs.len()) - 1;
        let which = if last == *first { format!("slab {first}") } else { format!("slabs {first}–{last}") };
        let parts: Vec<String> = CELL_STATES
            .iter()
            .zip(tally)
            .filter(|(_, n)| **n > 0)
            .map(|((_, name), n)| format!("{} {name}", count(*n as u64)))
            .collect();
        let _ = write!(
            titles,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{which}: {}</title></rect>",
            px(x),
            px(MAP_PAD),
            px(pitch),
            px(BAR_H),
            parts.join(", ")
        );
    }
    let mut svg = format!(
        "<svg class=\"slabs\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"slab occupancy of {name}, one bar per {unit}\" data-form=\"bars\" data-slabs-per-bar=\"{per_bar}\" data-bars=\"{bars}\">\n",
        w = px(width),
        h = px(height),
        name = esc(&map.name),
        unit = if per_bar == 1 { "slab".to_owned() } else { format!("{per_bar} slabs") },
        bars = bars.len(),
    );
    let letters = CELL_STATES.iter().map(|(l, _)| *l).chain(std::iter::once('?'));
    for (state, (letter, (rects, n))) in letters.zip(&groups).enumerate() {
        if *n > 0 {
            let _ = writeln!(
                svg,
                "<g data-state=\"{letter}\" data-cells=\"{n}\" fill=\"{}\">{rects}</g>",
                state_colour(state)
            );
        }
    }
    // The share axis on the left, the slab numbers below.
    let mut labels = String::new();
    for (share, label) in [(0.0, "0%"), (0.5, "50%"), (1.0, "100%")] {
        let _ = write!(
            labels,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"central\">{label}</text>",
            MAP_LABEL_W - 6,
            px(MAP_PAD + BAR_H * (1.0 - share))
        );
    }
    let every = (bars.len() as f64 / 10.0).ceil().max(1.0) as usize;
    for (b, (first, _)) in bars.iter().enumerate().step_by(every) {
        let _ = write!(
            labels,
            "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{first}</text>",
            px(MAP_LABEL_W as f64 + (b as f64 + 0.5) * pitch),
            px(MAP_PAD + BAR_H + 13.0)
        );
    }
    let _ = write!(
        labels,
        "<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">slab (address order)</text>",
        px(MAP_LABEL_W as f64 + MAP_W as f64 / 2.0),
        px(MAP_PAD + BAR_H + 27.0)
    );
    let _ = writeln!(svg, "<g font-size=\"11\" fill=\"#666\">{labels}</g>");
    let _ = writeln!(svg, "<g fill=\"transparent\">{titles}</g>\n</svg>");
    svg
}

/// The bytes of the projectile classes' cells at the storm's end, by state, per scenario:
/// the World's from its maps (cells × cell size), Box's live boxes (`size_of` each) as live.
fn state_bytes(sc: &Scenario) -> [u64; 5] {
    let mut b = [0u64; 5];
    if sc.layout.is_empty() {
        b[0] = sc.live_bytes_at_end;
    }
    for map in &sc.layout {
        for (t, n) in b.iter_mut().zip(map.counts) {
            *t += (n * map.cell_size) as u64;
        }
    }
    b
}

/// One stacked bar per scenario: the bytes of the projectile classes' cells at the storm's
/// end by state, Box's live boxes beside them on the same scale.
fn bytes_by_state(out: &mut String, run: &Run) -> fmt::Result {
    let rows: Vec<(usize, &Scenario, [u64; 5])> =
        run.scenarios.iter().enumerate().map(|(i, s)| (i, s, state_bytes(s))).collect();
    let largest = rows.iter().map(|(_, _, b)| b.iter().sum::<u64>()).max().unwrap_or(0);
    if largest == 0 {
        return Ok(());
    }
    let mut drawn = [0u64; 5];
    for (_, _, b) in &rows {
        for (d, v) in drawn.iter_mut().zip(b) {
            *d += v;
        }
    }
    out.push_str("<figure id=\"bytes-by-state\">\n<h3>Projectile memory by cell state at the end</h3>\n");
    out.push_str("<ul class=\"legend states\">");
    for (((_, name), colour), _) in CELL_STATES.iter().zip(STATE_COLOURS).zip(drawn).filter(|(_, d)| *d > 0) {
        write!(out, "<li><span class=\"swatch\" style=\"background:{colour}\"></span>{name}</li>")?;
    }
    out.push_str("</ul>\n");
    let (label_w, bar_w, row_h, gap) = (150.0, 640.0, 24.0, 12.0);
    let height = rows.len() as f64 * (row_h + gap);
    writeln!(
        out,
        "<svg class=\"bytes\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\" role=\"img\" aria-label=\"projectile memory by cell state\">",
        w = px(label_w + bar_w + 130.0),
        h = px(height),
    )?;
    for (r, (i, sc, b)) in rows.iter().enumerate() {
        let y = r as f64 * (row_h + gap) + gap / 2.0;
        let total: u64 = b.iter().sum();
        write!(
            out,
            "<g data-key=\"{}\" data-bytes=\"{total}\"><text x=\"{}\" y=\"{}\" text-anchor=\"end\" dominant-baseline=\"central\" font-size=\"13\" fill=\"{}\">{}</text>",
            esc(sc.key),
            px(label_w - 8.0),
            px(y + row_h / 2.0),
            hex(colour(sc, *i)),
            esc(sc.name)
        )?;
        let mut x = label_w;
        for (state, &v) in b.iter().enumerate().filter(|(_, v)| **v > 0) {
            let w = bar_w * v as f64 / largest as f64;
            write!(
                out,
                "<rect data-state=\"{}\" data-bytes=\"{v}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{row_h}\" fill=\"{}\"><title>{}: {}</title></rect>",
                CELL_STATES[state].0,
                px(x),
                px(y),
                px(w),
                STATE_COLOURS[state],
                CELL_STATES[state].1,
                bytes(v)
            )?;
            x += w;
        }
        writeln!(
            out,
            "<text x=\"{}\" y=\"{}\" dominant-baseline=\"central\" font-size=\"13\" fill=\"#333\">{}</text></g>",
            px(x + 6.0),
            px(y + row_h / 2.0),
            bytes(total)
        )?;
    }
    out.push_str("</svg>\n");
    out.push_str(
        "<figcaption>The bytes of every cell of the projectile classes' slabs when the storm ended, by \
         the state the maps below draw, one bar per scenario on one scale; Box's bar is its live \
         projectiles' boxes (<code>size_of</code> each, without the allocator's per-block overhead), \
         all it holds for them. What a pool holds beyond the live projectiles is the price of \
         spawning without constructing. Slabs the allocator prepared ahead but has not granted, \
         the object table and the side structures are not in these bars: see “Where the peak \
         memory goes”.</figcaption>\n</figure>\n",
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Small helpers.
// ---------------------------------------------------------------------------------------

/// Colours for scenarios with keys the report does not know.
const SPARE_COLOURS: [RGBColor; 4] =
    [RGBColor(0x7a, 0x51, 0x95), RGBColor(0x8c, 0x6d, 0x31), RGBColor(0x1f, 0x9e, 0xb8), RGBColor(0xd6, 0x4f, 0x9a)];

/// The colour a scenario has in every chart: Box brick red, Default blue, Purge amber,
/// Reuse green.
fn colour(sc: &Scenario, index: usize) -> RGBColor {
    match sc.key {
        "box" => RGBColor(0xb0, 0x4a, 0x45),
        "default" => RGBColor(0x2f, 0x6d, 0xb5),
        "purge" => RGBColor(0xd9, 0x8a, 0x1c),
        "reuse" => RGBColor(0x2a, 0x9d, 0x6f),
        _ => SPARE_COLOURS[index % SPARE_COLOURS.len()],
    }
}

/// A small square of the scenario's colour (HTML).
fn swatch(sc: &Scenario, index: usize) -> String {
    format!("<span class=\"swatch\" style=\"background:{}\"></span>", hex(colour(sc, index)))
}

/// A colour as CSS writes it: `#b04a45`.
fn hex(RGBColor(r, g, b): RGBColor) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

/// `text` escaped for HTML text and attribute values.
fn esc(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The report against a synthetic run of all four scenarios, and its edge cases.
#[cfg(test)]
mod tests {
    use super::*;
    use crate::figures::{Diagnosis, GcFigures, MemoryFigures, PoolFigures, Series, Settings, Summary};

    /// A small deterministic generator (xorshift64*), so the sample run is the same every time.
    struct Rng(u64);

    impl Rng {
        /// A number in `[0, 1)`.
        fn next(&mut self) -> f64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
        }
    }

    /// The storm's settings for the sample run.
    fn settings(frames: u32) -> Settings {
        Settings {
            frames,
            rate: 240,
            turrets: 16,
            lifetime: 90,
            payload_share: 0.1,
            payload_us: 20,
            fps: 60,
            gc_every: 60,
            purge_budget_us: 200,
            drop_us: 0,
            async_purge: false,
            incremental_gc_us: 0,
            early_purge_percent: 10,
            seed: 42,
            config: Some("configs/storm <fast>.toml".to_owned()),
        }
    }

    /// A slab string of `cells` letters drawn in runs from `weights` (per [`CELL_STATES`]).
    fn slab(rng: &mut Rng, cells: usize, weights: [f64; 5]) -> String {
        let total: f64 = weights.iter().sum();
        let mut s = String::with_capacity(cells);
        while s.len() < cells {
            let mut pick = rng.next() * total;
            let mut state = 0;
            while state < 4 && pick >= weights[state] {
                pick -= weights[state];
                state += 1;
            }
            let run = 1 + (rng.next() * 14.0) as usize;
            for _ in 0..run.min(cells - s.len()) {
                s.push(CELL_STATES[state].0);
            }
        }
        s
    }

    /// A class map of `slabs` slabs drawn from `weights`.
    fn class(
        rng: &mut Rng,
        name: &str,
        cell_size: usize,
        cells_per_slab: usize,
        slabs: usize,
        weights: [f64; 5],
    ) -> ClassMap {
        let slabs: Vec<String> = (0..slabs).map(|_| slab(rng, cells_per_slab, weights)).collect();
        let mut counts = [0; 5];
        for c in slabs.iter().flat_map(|s| s.chars()) {
            counts[state_index(c)] += 1;
        }
        ClassMap { name: name.to_owned(), cell_size, cells_per_slab, counts, slabs }
    }

    /// A plausible scenario: `key` picks the profile (Box builds inline, Default collects,
    /// Purge purges in slices, Reuse recycles).
    fn scenario(key: &'static str, frames: usize) -> Scenario {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (key.len() as u64 * 7919) ^ u64::from(key.as_bytes()[0]));
        let (name, about, base_us, alloc_per_frame, miss) = match key {
            "box" => {
                ("Box", "Vec<Box<Projectile>>: each projectile constructed and boxed on the spot", 480.0, 260.0, 1.0)
            }
            "default" => {
                ("World · Default", "released projectiles become garbage; the GC purges them", 140.0, 0.4, 0.01)
            }
            "purge" => (
                "World · Purge",
                "released projectiles are destroyed at once and rebuilt by workers",
                150.0,
                0.2,
                0.004,
            ),
            _ => ("World · Reuse", "released projectiles are reset and reused at once", 110.0, 0.0, 0.001),
        };
        let pooled = key != "box";
        let mut s = Series::default();
        for f in 0..frames {
            let ramp = (f as f64 / 90.0).min(1.0);
            let mut work = base_us * (0.85 + 0.3 * rng.next()) * (0.3 + 0.7 * ramp);
            let (mut gc, mut kind) = (0.0, 0u8);
            if pooled && f > 0 && f % 60 == 0 {
                gc = if key == "default" { 2500.0 + 1500.0 * rng.next() } else { 600.0 + 300.0 * rng.next() };
                kind = 2;
            } else if key == "purge" && f % 60 < 6 && f > 60 {
                gc = 150.0 + 50.0 * rng.next();
                kind = 1;
            } else if key == "default" && f % 60 < 3 && f > 60 {
                gc = 180.0 + 20.0 * rng.next();
                kind = 1;
            }
            if rng.next() < 0.004 {
                work *= 12.0;
            }
            // The work splits as a World's frame does: a quarter firing, half the tick, the
            // rest retiring and pool upkeep.
            s.spawn_us.push((work * 0.25) as f32);
            s.tick_us.push((work * 0.5) as f32);
            s.retire_us.push((work * 0.15) as f32);
            s.upkeep_us.push((work * 0.1) as f32);
            work += gc;
            s.frame_us.push(work as f32);
            s.gc_us.push(gc as f32);
            s.gc_kind.push(kind);
            // The same storm in every scenario: the same population.
            s.live.push((21_600.0 * ramp * (0.985 + 0.015 * (f as f64 / 7.0).sin())) as u32);
            let a = alloc_per_frame * (0.9 + 0.2 * rng.next()) + if pooled && rng.next() < 0.02 { 40.0 } else { 0.0 };
            s.allocations.push(a as u32);
            let heap = if pooled { (2 << 20) as f64 + 4e5 * ramp } else { 9e6 * ramp };
            s.heap_bytes.push(heap as u64);
            s.mapped_bytes.push(if pooled { ((8 << 20) as f64 + 4e6 * ramp) as u64 } else { 0 });
        }
        // A CDF sampled at 200 points weighted toward the tail.
        let spawn_at = |q: f64| -> f64 {
            let fast = match key {
                "box" => 90.0 + 300.0 * q,
                "default" => 42.0 + 45.0 * q,
                "purge" => 38.0 + 60.0 * q,
                _ => 30.0 + 30.0 * q,
            };
            if q > 1.0 - 0.1 * miss {
                21_000.0 + 9_000.0 * (q - (1.0 - 0.1 * miss)) / (0.1 * miss)
            } else if q > 0.995 {
                fast * 8.0
            } else {
                fast
            }
        };
        s.spawn_cdf = (0..200).map(|i| 1.0 - (1.0 - f64::from(i) / 199.0).powi(3)).map(|q| [q, spawn_at(q)]).collect();
        let spawns = 240 * frames as u64;
        let mut frame_samples: Vec<f64> = s.frame_us.iter().map(|&v| f64::from(v)).collect();
        let layout = if pooled {
            let weights = match key {
                "default" => [45.0, 15.0, 20.0, 20.0, 0.0],
                "purge" => [45.0, 25.0, 0.0, 30.0, 0.0],
                _ => [50.0, 46.0, 0.0, 3.0, 1.0],
            };
            let mut classes = vec![
                class(&mut rng, "storm::Bullet", 96, 512, 5, weights),
                class(&mut rng, "storm::Rocket<Payload>", 320, 256, 2, weights),
            ];
            if key == "reuse" {
                // A class with big slabs, to see a map wrap.
                classes.push(class(&mut rng, "storm::Spark", 48, 4096, 24, weights));
            }
            classes
        } else {
            Vec::new()
        };
        let total_allocations: u64 = s.allocations.iter().map(|&a| u64::from(a)).sum();
        Scenario {
            key,
            name,
            about,
            spawns,
            payload_spawns: spawns / 10,
            hits: spawns / 3,
            expired: spawns / 2,
            live_at_end: u64::from(*s.live.last().unwrap_or(&0)),
            live_bytes_at_end: 64 * u64::from(*s.live.last().unwrap_or(&0)),
            spawn_ns: Summary { count: spawns, p50: spawn_at(0.5), p99: spawn_at(0.99), max: 30_000.0, mean: 400.0 },
            payload_spawn_ns: Summary {
                count: spawns / 10,
                p50: if pooled { 60.0 } else { 21_000.0 },
                p99: 22_000.0,
                max: 31_000.0,
                mean: 2_000.0,
            },
            frame_us: Summary::of(&mut frame_samples),
            steady_from: (frames / 2) as u32,
            phases: crate::figures::Phases {
                spawn_us: base_us * 0.25,
                tick_us: base_us * 0.5,
                retire_us: base_us * 0.15,
                collector_us: if pooled { 60.0 } else { 0.0 },
                upkeep_us: if pooled { base_us * 0.1 } else { 0.0 },
                tick_ns_per_object: base_us * 500.0 / 21_600.0,
            },
            gc: if pooled {
                GcFigures {
                    collections: frames as u64 / 60,
                    max_collection_us: 3_900.0,
                    mark_slices: 0,
                    max_mark_slice_us: 0.0,
                    purge_slices: 40,
                    max_purge_us: 1_500.0,
                    purge_slices_over_budget: 2,
                    purge_overruns_preempted: 2,
                    longest_purge: Some(crate::figures::SliceTiming {
                        wall_us: 1_500.0,
                        off_cpu_us: 1_300.0,
                        cpu_us: 150.0,
                        involuntary_switches: Some(1),
                    }),
                    total_ms: 55.0,
                    purged: 12_000,
                }
            } else {
                GcFigures::default()
            },
            pool: pooled.then(|| PoolFigures {
                hits: spawns - (spawns as f64 * miss) as u64,
                misses: (spawns as f64 * miss) as u64,
                hit_rate: 1.0 - miss,
                precreated: spawns / 2,
                grows: 3,
                ready_at_end: 900,
                warmup_ms: 35.0,
            }),
            memory: MemoryFigures {
                allocations: total_allocations,
                allocations_per_spawn: total_allocations as f64 / spawns as f64,
                steady_allocations_per_frame: alloc_per_frame,
                allocated_bytes: total_allocations * 320,
                peak_heap_bytes: if pooled { 3 << 20 } else { 9 << 20 },
                peak_slab_bytes: if pooled { 12 << 20 } else { 0 },
                peak_bytes: if pooled { 15 << 20 } else { 9 << 20 },
                peak_parts: pooled.then_some(crate::figures::PeakParts {
                    slab_cells: (11 << 20) + (1 << 19),
                    table_slots: 1 << 19,
                    pool_side: 1 << 20,
                    class_side: 1 << 18,
                    other_heap: (2 << 20) - (1 << 18),
                }),
            },
            series: s,
            layout,
            diagnosis: pooled.then(|| Diagnosis {
                object: Some("Bullet#1048577".to_owned()),
                chain: Some("root (owned until destroyed) Bullet#1048577".to_owned()),
                outer: Some("Turret#3145728".to_owned()),
                outer_chain: Some("root (owned until destroyed) Turret#3145728".to_owned()),
                garbage_objects: if key == "default" { 1_200 } else { 0 },
                garbage_references: if key == "default" { 7 } else { 0 },
                first_garbage_references: if key == "default" {
                    (0..5).map(|i| format!("Turret#3145728 -> [traced] Bullet#{} (garbage)", 1048600 + i)).collect()
                } else {
                    Vec::new()
                },
            }),
        }
    }

    /// A run of all four scenarios over `frames` frames.
    fn sample(frames: usize) -> Run {
        Run {
            version: "0.1.0",
            settings: settings(frames as u32),
            machine: crate::figures::Machine {
                cpu: "Test CPU".to_owned(),
                cpus: 2,
                os: "linux",
                commit: "0123456789ab",
                profile: "release",
            },
            heap_counter: "counting allocator",
            repeats: 1,
            scenarios: ["box", "default", "purge", "reuse"].into_iter().map(|k| scenario(k, frames)).collect(),
            spreads: Vec::new(),
            comparison: None,
        }
    }

    /// The text of the embedded JSON block.
    fn embedded(html: &str) -> &str {
        let open = "<script type=\"application/json\" id=\"figures\">";
        let start = html.find(open).expect("the JSON block") + open.len();
        let len = html[start..].find("</script>").expect("the JSON block's end");
        &html[start..start + len]
    }

    #[test]
    fn trims_numbers() {
        assert_eq!(trimmed(99.9000, 4), "99.9");
        assert_eq!(trimmed(6.0, 2), "6");
        assert_eq!(trimmed(120.0, 0), "120");
    }

    /// One HTML document, nothing fetched, every chart present with its labels.
    #[test]
    fn is_one_self_contained_document() {
        let html = render(&sample(300));
        assert!(html.starts_with("<!DOCTYPE html>\n<html"));
        assert_eq!(html.matches("<html").count(), 1);
        assert_eq!(html.matches("</html>").count(), 1);
        assert!(html.trim_end().ends_with("</html>"));
        let outside = html.replace("xmlns=\"http://www.w3.org/2000/svg\"", "");
        assert!(!outside.contains("http://") && !outside.contains("https://"), "the report references the network");
        assert!(!html.contains("<link") && !html.contains("src="), "the report loads something");
        assert!(html.matches("<svg").count() >= 5, "{} charts", html.matches("<svg").count());
        assert!(!html.contains("NaN") && !html.contains("inf<"), "a number did not format");
        // Plotters wrote its axis labels (text renders without a font feature).
        assert!(html.contains(">\np99\n</text>") && html.contains(">\nspawn latency (log scale)\n</text>"));
    }

    /// Every scenario's name, description and summary figures, with their exact values.
    #[test]
    fn shows_every_scenario_and_its_figures() {
        let run = sample(300);
        let html = render(&run);
        for s in &run.scenarios {
            assert!(html.contains(&esc(s.name)), "{}", s.name);
            assert!(html.contains(&esc(s.about)), "{}", s.about);
            for cell in summary_row(s) {
                let Some(raw) = cell.raw else { continue };
                let td = format!(
                    "<td data-key=\"{}\" data-figure=\"{}\" data-value=\"{raw}\">{}</td>",
                    s.key,
                    cell.figure,
                    esc(&cell.text)
                );
                assert!(html.contains(&td), "missing {td}");
            }
            let spawns = format!("data-figure=\"spawns\" data-value=\"{}\">{}</td>", s.spawns, count(s.spawns));
            assert!(html.contains(&spawns), "{spawns}");
            assert!(html.contains(&format!(">{}</td>", ns(s.spawn_ns.p99))));
        }
        // Box has no pool: its hit rate is a dash with no value.
        assert!(html.contains("<td data-key=\"box\" data-figure=\"hit_rate\" class=\"na\">—</td>"));
        assert!(html.contains("data-key=\"reuse\" data-figure=\"hit_rate\" data-value=\"0.999\">99.9%</td>"));
        // The introduction says how garbage was purged: early past 10 % of the cells, or not.
        assert!(html.contains("purged without waiting for a collection once they held 10 % of the cells"));
        let mut late = run.clone();
        late.settings.early_purge_percent = 0;
        assert!(!render(&late).contains("without waiting for a collection"));
    }

    /// The embedded JSON parses back into the run's figures.
    #[test]
    fn embeds_the_figures_as_json() {
        let run = sample(120);
        let html = render(&run);
        let value: serde_json::Value = serde_json::from_str(embedded(&html)).expect("the embedded JSON parses");
        let scenarios = value["scenarios"].as_array().expect("scenarios");
        assert_eq!(scenarios.len(), 4);
        let keys: Vec<&str> = scenarios.iter().map(|s| s["key"].as_str().unwrap()).collect();
        assert_eq!(keys, ["box", "default", "purge", "reuse"]);
        assert_eq!(scenarios[3]["spawns"].as_u64(), Some(run.scenarios[3].spawns));
        assert_eq!(value["settings"]["config"].as_str(), Some("configs/storm <fast>.toml"));
    }

    /// A string in the data cannot end the JSON's script element or start another.
    #[test]
    fn json_cannot_close_its_script() {
        let mut run = sample(10);
        run.settings.config = Some("evil</script><script>alert(1)</script><!--".to_owned());
        let html = render(&run);
        let json = embedded(&html);
        assert!(!json.contains("</") && !json.contains("<!--"), "{json}");
        let value: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(value["settings"]["config"].as_str(), run.settings.config.as_deref());
        assert!(html.contains("evil&lt;/script&gt;&lt;script&gt;alert(1)"));
        assert_eq!(html.replace(json, "").matches("<script").count(), 1);
    }

    /// Every state present in a class is drawn and counted, and absent ones are not.
    #[test]
    fn maps_every_cell_of_every_slab() {
        let run = sample(60);
        let html = render(&run);
        for s in run.scenarios.iter().filter(|s| !s.layout.is_empty()) {
            let start =
                html.find(&format!("<figure class=\"occupancy\" data-key=\"{}\">", s.key)).expect("the scenario's map");
            let section = &html[start..start + html[start..].find("</figure>").unwrap()];
            for map in &s.layout {
                let at = section.find(&format!("<h4>{}</h4>", esc(&map.name))).expect("the class's map");
                let svg = &section[at..at + section[at..].find("</svg>").unwrap()];
                for (((letter, name), colour), n) in CELL_STATES.iter().zip(STATE_COLOURS).zip(map.counts) {
                    let drawn = map.slabs.iter().flat_map(|s| s.chars()).filter(|c| c == letter).count();
                    assert_eq!(drawn, n, "the sample's counts");
                    let legend = format!(
                        "<span class=\"swatch\" style=\"background:{colour}\"></span>{name} <b>{}</b>",
                        count(n as u64)
                    );
                    assert!(svg.contains(&legend), "legend {legend}");
                    let group = format!("<g data-state=\"{letter}\" data-cells=\"{n}\" fill=\"{colour}\">");
                    assert_eq!(svg.contains(&group), n > 0, "{} {name} in {}", s.key, map.name);
                    // Drawn as runs in its group, or as the background of a slab it fills most.
                    let drawn =
                        svg.contains(&format!("{group}<rect ")) || svg.contains(&format!("fill=\"{colour}\"/>"));
                    assert_eq!(drawn, n > 0, "a rect of {name} in {}", map.name);
                }
            }
        }
        assert!(html.contains("No map for Box: each projectile"));
    }

    /// The sum of a map's `data-cells` counts.
    fn cells_drawn(svg: &str) -> usize {
        svg.split("data-cells=\"").skip(1).map(|s| s[..s.find('"').unwrap()].parse::<usize>().unwrap()).sum()
    }

    /// Twelve slabs of 4096 cells fit the height budget cell by cell, every cell drawn, runs
    /// merged.
    #[test]
    fn wraps_large_slabs_to_a_sane_size() {
        let mut rng = Rng(7);
        let map = class(&mut rng, "Big", 64, 4096, 12, [50.0, 30.0, 5.0, 15.0, 0.0]);
        assert!(cell_by_cell(&map));
        let svg = slab_svg(&map);
        assert!(svg.contains("data-form=\"cells\""));
        let grid = Grid::fit(12, 4096);
        let height = 12.0 * (grid.slab_height() + SLAB_GAP);
        assert!(height <= MAP_MAX_H, "{height}");
        assert!(grid.cell >= MIN_CELL, "cells wide enough to see: {grid:?}");
        assert!(grid.columns * grid.rows_per_slab >= 4096);
        assert_eq!(cells_drawn(&svg), 12 * 4096);
        assert!(svg.matches("<rect").count() < 12 * 4096 / 2, "runs are merged");
    }

    /// Past a few dozen slabs (or cells too small to see) a class is one stacked bar per
    /// slab, and past the bars that fit, adjacent slabs share one: the map's size stays the
    /// same however many slabs there are, and every cell is still counted.
    #[test]
    fn draws_many_slabs_as_bars_at_any_size() {
        let mut rng = Rng(11);
        let weights = [50.0, 30.0, 5.0, 15.0, 0.0];
        // Forty slabs: too many to draw cell by cell.
        let forty = class(&mut rng, "Forty", 64, 4096, 40, weights);
        assert!(!cell_by_cell(&forty));
        // Six slabs, but of cells too many to stay 2 px wide within the height budget.
        let wide = class(&mut rng, "Wide", 64, 65_536, 6, weights);
        assert!(!cell_by_cell(&wide), "{:?}", Grid::fit(6, 65_536));
        // Nine hundred slabs: six to a bar.
        let many = class(&mut rng, "Many", 48, 1024, 900, weights);
        let mut heights = Vec::new();
        for (map, per_bar, bars) in [(&forty, 1, 40), (&wide, 1, 6), (&many, 6, 150)] {
            let svg = slab_bars(map);
            let head = &svg[..svg.find('>').unwrap()];
            assert!(head.contains("data-form=\"bars\""), "{head}");
            assert!(head.contains(&format!("data-slabs-per-bar=\"{per_bar}\" data-bars=\"{bars}\"")), "{head}");
            assert_eq!(cells_drawn(&svg), map.slabs.iter().map(String::len).sum::<usize>(), "{}", map.name);
            // One rect per state present in a bar, one hover rect per bar.
            assert!(svg.matches("<rect").count() <= bars * (CELL_STATES.len() + 1), "{}", map.name);
            assert_eq!(svg.matches("<title>").count(), bars);
            heights.push(head.split("height=\"").nth(1).unwrap().split('"').next().unwrap().to_owned());
            // Each bar's states fill its full height.
            let first_bar: f64 = svg
                .split("<rect ")
                .filter(|r| r.contains(&format!("x=\"{MAP_LABEL_W}\" ")) && !r.contains("<title>"))
                .map(|r| r.split("height=\"").nth(1).unwrap().split('"').next().unwrap().parse::<f64>().unwrap())
                .sum();
            assert!((first_bar - BAR_H).abs() < 0.1, "{}: {first_bar}", map.name);
        }
        assert!(heights.iter().all(|h| *h == heights[0]), "the same size at any count: {heights:?}");
        assert!(many.slabs.len() * many.cells_per_slab > 900_000 && slab_bars(&many).len() < 60_000);
        assert!(slab_bars(&many).contains("<title>slabs 894–899: "), "the last bar names its slabs");

        // In the report, the class's map takes the bar form and says what a bar is.
        let mut run = sample(30);
        run.scenarios[1].layout[0] = many;
        let html = render(&run);
        let start = html.find("<figure class=\"occupancy\" data-key=\"default\">").unwrap();
        let section = &html[start..start + html[start..].find("</figure>").unwrap()];
        assert!(section.contains("each bar is 6 adjacent slabs"), "{section}");
        assert_eq!(section.matches("data-form=\"bars\"").count(), 1);
        assert_eq!(section.matches("data-form=\"cells\"").count(), 1, "the small Rocket class stays cell by cell");
    }

    /// The page opens with the verdict: every deciding figure, each scenario's median with
    /// its ratio to Box's and, over repeats, its spread, the best of each row marked.
    #[test]
    fn opens_with_the_verdict_and_its_spreads() {
        let mut run = sample(120);
        run.repeats = 3;
        let mut tally = crate::verdict::Tally::default();
        for r in 0..3 {
            for s in &run.scenarios {
                let mut s = s.clone();
                s.memory.peak_bytes += r << 20;
                s.frame_us.p50 *= 1.0 + r as f64 / 10.0;
                tally.add(&run.settings, &s);
            }
        }
        run.spreads = tally.spreads();
        let html = render(&run);
        let verdict = html.find("<section class=\"verdict\">").expect("a verdict");
        assert!(verdict < html.find("<h2>Summary</h2>").unwrap() && verdict < html.find("<p>Every scenario").unwrap());
        let section = &html[verdict..verdict + html[verdict..].find("</section>").unwrap()];
        assert!(section.contains("The storm ran 3 times: each figure is the median"));
        let v = crate::verdict::of(&run);
        let figures: Vec<&str> = v.rows.iter().map(|r| r.figure).collect();
        assert_eq!(
            figures,
            [
                "steady_allocations_per_frame",
                "rocket_spawn_p99_ns",
                "frame_p50_us",
                "frame_p99_us",
                "peak_bytes",
                "frames_over_budget"
            ]
        );
        for row in &v.rows {
            let tr = section.find(&format!("<tr data-figure=\"{}\">", row.figure)).expect("a row per figure");
            let tr = &section[tr..tr + section[tr..].find("</tr>").unwrap()];
            for (i, s) in run.scenarios.iter().enumerate() {
                let median = row.values[i].unwrap();
                let spread = run.spreads[i].get(row.figure).unwrap();
                assert_eq!(median, spread.median);
                let td = format!("<td data-key=\"{}\" data-value=\"{median}\"", s.key);
                assert!(tr.contains(&td), "{td} in {tr}");
                let shown =
                    format!("{}<br><span class=\"spread\">{}</span>", esc(&row.texts[i]), esc(&row.spread_texts[i]));
                assert!(tr.contains(&shown), "{shown} in {tr}");
                assert_eq!(tr.matches(" class=\"best\"").count(), row.best.iter().filter(|&&b| b).count());
            }
        }
        // Peak memory: the median of +0, +1 and +2 MiB; Box's own ratio is 1.
        let peak = v.rows.iter().find(|r| r.figure == "peak_bytes").unwrap();
        assert_eq!(peak.values[0], Some(((9u64 << 20) + (1 << 20)) as f64));
        assert_eq!(peak.spread_texts[0], "9.0 MiB–11.0 MiB");
        assert_eq!(peak.ratios[0], Some(1.0));
    }

    /// The rolling median follows the level and drops single spikes.
    #[test]
    fn the_rolling_median_drops_spikes() {
        let mut frames = vec![100.0; 40];
        frames[10] = 5_000.0;
        frames.extend(vec![300.0; 40]);
        let m = rolling_median(&frames, 15);
        assert_eq!(m.len(), 80);
        assert_eq!(m[10], 100.0, "a lone spike is not the level");
        assert_eq!((m[0], m[79]), (100.0, 300.0));
        assert!(m.windows(2).skip(20).all(|w| w[0] <= w[1]), "a step rises once: {m:?}");
        assert_eq!(rolling_median(&[], 15), Vec::<f64>::new());
    }

    /// One bar per scenario of the projectile classes' bytes by state; Box's is its live
    /// boxes, on the same scale.
    #[test]
    fn sets_each_scenarios_bytes_by_state_beside_boxs() {
        let run = sample(60);
        let html = render(&run);
        let start = html.find("<figure id=\"bytes-by-state\">").expect("the chart");
        let chart = &html[start..start + html[start..].find("</figure>").unwrap()];
        for s in &run.scenarios {
            let b = state_bytes(s);
            let total: u64 = b.iter().sum();
            assert!(chart.contains(&format!("<g data-key=\"{}\" data-bytes=\"{total}\">", s.key)), "{}", s.key);
            if s.key == "box" {
                assert_eq!(b, [s.live_bytes_at_end, 0, 0, 0, 0]);
            } else {
                let cells: usize = s.layout.iter().map(|m| m.counts.iter().sum::<usize>() * m.cell_size).sum();
                assert_eq!(total as usize, cells);
            }
            for (state, v) in b.iter().enumerate().filter(|(_, v)| **v > 0) {
                let rect = format!("<rect data-state=\"{}\" data-bytes=\"{v}\"", CELL_STATES[state].0);
                assert!(chart.contains(&rect), "{rect}");
            }
        }
        // The legend lists exactly the states drawn.
        for (letter, name) in CELL_STATES {
            let drawn = chart.contains(&format!("<rect data-state=\"{letter}\""));
            assert_eq!(chart.contains(&format!("</span>{name}</li>")), drawn, "{name}");
        }
    }

    /// Each World scenario's diagnosis: the sample's chain, its outer's, the garbage count and
    /// the first references; Box is named as having none.
    #[test]
    fn shows_why_a_sample_projectile_is_alive_and_the_references_to_garbage() {
        let mut run = sample(30);
        run.scenarios[2].diagnosis.as_mut().unwrap().chain = None;
        run.scenarios[3].diagnosis.as_mut().unwrap().first_garbage_references = vec!["a <b> & c".to_owned()];
        run.scenarios[3].diagnosis.as_mut().unwrap().garbage_references = 1;
        let html = render(&run);
        let start = html.find("<h2>Why is it alive</h2>").expect("the section");
        assert!(start > html.find("<h2>Slab occupancy at the end of the storm</h2>").unwrap(), "after the maps");
        // Collapsed, with a legend of the chains' notation.
        assert!(html[..start].ends_with("<details class=\"why\">\n<summary>"), "collapsed");
        assert!(html[start..].find("</details>").unwrap() < html[start..].find("<script").unwrap());
        for notation in ["<code>Bullet#127</code>", "<code>-&gt; [traced]</code>", "<code>-&gt; [outer]</code>"] {
            assert!(html[start..].contains(notation), "the legend explains {notation}");
        }
        let part = &html[start..html.find("<script type=\"application/json\"").unwrap()];
        assert!(part.contains("No diagnosis for Box: it has no collector."));
        let section = |key: &str| {
            let at = part.find(&format!("<section class=\"diagnosis\" data-key=\"{key}\">")).expect(key);
            &part[at..at + part[at..].find("</section>").unwrap()]
        };
        let default = section("default");
        assert!(default.contains("<li>Bullet#1048577: <code>root (owned until destroyed) Bullet#1048577</code></li>"));
        assert!(default
            .contains("<li>its outer, Turret#3145728: <code>root (owned until destroyed) Turret#3145728</code></li>"));
        assert!(
            default.contains("1,200 objects marked as garbage and not yet purged; 7 references to them"),
            "{default}"
        );
        assert!(default.contains("the first 5:"));
        assert_eq!(default.matches("(garbage)</code></li>").count(), 5);
        assert!(section("purge").contains("<li>Bullet#1048577: not reachable; the next collection purges it</li>"));
        assert!(section("purge").contains("0 objects marked as garbage and not yet purged; 0 references to them"));
        let reuse = section("reuse");
        assert!(reuse.contains("each:") && reuse.contains("<li><code>a &lt;b&gt; &amp; c</code></li>"), "{reuse}");
    }

    /// The tick's time on its own: a stacked bar per scenario, phase by phase on one scale,
    /// and a table with the tick per projectile.
    #[test]
    fn shows_where_a_frames_time_goes() {
        let run = sample(300);
        let html = render(&run);
        let start = html.find("<figure id=\"phases\">").expect("the phases figure");
        assert!(start > html.find("<figure id=\"frame-time\">").unwrap(), "after the frame times");
        let part = &html[start..start + html[start..].find("</figure>").unwrap()];
        let bars = &part[part.find("<svg class=\"phases\"").expect("the bars")..part.find("</svg>").unwrap()];
        // Every scenario's bar has each of its phases, and the widths keep their ratio.
        let widths = |phase: &str| -> Vec<f64> {
            let key = format!("<rect data-phase=\"{phase}\" x=\"");
            bars.match_indices(&key)
                .map(|(at, _)| {
                    let rest = &bars[at..];
                    let w = &rest[rest.find("width=\"").unwrap() + 7..];
                    w[..w.find('"').unwrap()].parse().unwrap()
                })
                .collect()
        };
        let (tick, spawn) = (widths("tick"), widths("fire + spawn"));
        assert_eq!(tick.len(), run.scenarios.len());
        for ((t, s), sc) in tick.iter().zip(&spawn).zip(&run.scenarios) {
            let want = sc.phases.tick_us / sc.phases.spawn_us;
            assert!((t / s - want).abs() < 0.01 * want, "{}: tick {t} px, spawn {s} px", sc.name);
        }
        assert_eq!(widths("collector").len(), 3, "Box has no collector: no segment");
        // The widest bar spans the plot, the rest scaled to it: all segments together are
        // the totals' share of the widest, in plot widths.
        let total = |sc: &Scenario| phase_values(&sc.phases).iter().sum::<f64>();
        let widest = run.scenarios.iter().map(total).fold(0.0, f64::max);
        let drawn: f64 = PHASES.iter().flat_map(|(p, _, _)| widths(p)).sum();
        let plot = f64::from(CHART_W) - 170.0 - 90.0;
        let want = run.scenarios.iter().map(total).sum::<f64>() / widest * plot;
        assert!((drawn - want).abs() < 1.0, "{drawn} px drawn, {want} px wanted");
        for sc in &run.scenarios {
            let cell = format!(
                "<td data-key=\"{}\" data-figure=\"tick_ns_per_object\">{}</td>",
                sc.key,
                ns(sc.phases.tick_ns_per_object)
            );
            assert!(part.contains(&cell), "{cell}");
        }
        assert!(part.contains("the steady state (frames 151–300)"), "the window named");
    }

    /// Memory over the storm: the heap and the mapped bytes, a line per scenario, per frame.
    #[test]
    fn draws_memory_over_the_storm() {
        let run = sample(300);
        let html = render(&run);
        let start = html.find("<figure id=\"memory-over-time\">").expect("the memory figure");
        let part = &html[start..start + html[start..].find("</figure>").unwrap()];
        assert_eq!(part.matches("<svg").count(), 2, "heap, then mapped");
        assert!(part.contains("heap bytes live") && part.contains("slab + table bytes"));
        for (i, sc) in run.scenarios.iter().enumerate() {
            let line = format!("stroke=\"{}\"", hex(colour(sc, i)));
            assert!(part.to_lowercase().contains(&line), "{} drawn", sc.name);
            let end = format!("heap <b>{}</b>", bytes(*sc.series.heap_bytes.last().unwrap()));
            assert!(part.contains(&end), "{end}");
        }
        // Box maps nothing; each World ends with 12 MB mapped in the sample.
        assert!(part.contains(&format!("mapped <b>{}</b>", bytes(0))));
        assert!(part.contains("MiB"), "byte labels on the axes");
        let empty = Run { scenarios: Vec::new(), ..run.clone() };
        let _ = render(&empty);
    }

    /// The cell states' colours are not the scenarios': a map is not read as a scenario.
    #[test]
    fn cell_state_colours_are_far_from_scenario_colours() {
        let rgb = |hex: &str| -> [f64; 3] {
            let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap();
            [f64::from((v >> 16) as u8), f64::from((v >> 8) as u8), f64::from(v as u8)]
        };
        let run = sample(10);
        let scenarios: Vec<[f64; 3]> =
            run.scenarios.iter().enumerate().map(|(i, sc)| rgb(&hex(colour(sc, i)))).collect();
        for state in STATE_COLOURS.iter().chain([&UNKNOWN_COLOUR]) {
            for scenario in &scenarios {
                let d = rgb(state).iter().zip(scenario).map(|(a, b)| (a - b).powi(2)).sum::<f64>().sqrt();
                assert!(d > 80.0, "state colour {state} is {d:.0} from a scenario's {scenario:?}");
            }
        }
    }

    /// Each scenario's purge slices past their budget are told apart: preempted, or long on
    /// their own.
    #[test]
    fn says_why_purge_slices_overran() {
        let mut run = sample(60);
        let html = render(&run);
        assert!(
            html.contains(
                "2 of 40 purge slices ran past the 200 µs budget; 2 of them because the game thread was preempted"
            ),
            "{}",
            purge_overruns(&run)
        );
        let said = purge_overruns(&run);
        assert!(
            said.contains(
                "The longest, 1.5 ms, was 150 µs of its own work and 1.3 ms off the processor, preempted 1 time."
            ),
            "{said}"
        );
        let purge = run.scenarios.iter_mut().find(|s| s.key == "purge").unwrap();
        purge.gc.purge_overruns_preempted = 0;
        purge.gc.longest_purge = None;
        let text = purge_overruns(&run);
        assert!(text.contains("World · Purge: 2 of 40 purge slices ran past the 200 µs budget (this platform has no per-thread processor clock to tell why)."), "{text}");
    }

    /// Class names and paths are escaped wherever they land in the HTML.
    #[test]
    fn escapes_what_it_inserts() {
        let mut run = sample(30);
        run.scenarios[1].layout[0].name = "Foo<Bar>".to_owned();
        let html = render(&run);
        assert!(html.contains("<h4>Foo&lt;Bar&gt;</h4>"));
        assert!(html.contains("aria-label=\"slab occupancy of Foo&lt;Bar&gt;\""));
        assert!(!html.replace(embedded(&html), "").contains("Foo<Bar>"), "unescaped outside the JSON");
        assert!(html.contains("<code>configs/storm &lt;fast&gt;.toml</code>"));
    }

    /// A one-frame run with the awkward cases: no series, an empty CDF, no layout, a class
    /// without slabs, an empty slab and an unknown letter, a NaN hit rate, no spawns.
    fn odd_run() -> Run {
        let mut odd = sample(1);
        odd.settings.fps = 0;
        odd.settings.config = None;
        odd.scenarios[0].series = Series::default();
        odd.scenarios[1].series.spawn_cdf.clear();
        odd.scenarios[1].layout.clear();
        odd.scenarios[2].layout[0].slabs.clear();
        odd.scenarios[2].layout[1].slabs = vec![String::new(), "LXF".to_owned()];
        let pool = odd.scenarios[3].pool.as_mut().unwrap();
        (pool.hits, pool.misses, pool.hit_rate) = (0, 0, f64::NAN);
        odd.scenarios[3].spawn_ns = Summary::default();
        odd
    }

    /// No scenarios, one frame, empty series and layouts render without a panic or a NaN.
    #[test]
    fn survives_edge_cases() {
        let empty = Run { scenarios: Vec::new(), ..sample(1) };
        let html = render(&empty);
        assert!(html.contains("No scenarios ran") && html.ends_with("</html>\n"));
        serde_json::from_str::<serde_json::Value>(embedded(&html)).unwrap();

        let html = render(&odd_run());
        assert!(html.contains("</html>") && !html.contains("NaN"));
        assert!(html.contains("data-state=\"?\""), "an unknown letter is drawn, not dropped");
        assert!(html.contains("No slab layout was recorded for World · Default."));
        assert!(html.contains("<td data-key=\"reuse\" data-figure=\"spawn_p99_ns\" class=\"na\">—</td>"));
        assert!(html.contains("for 1 frame, "));
        assert!(html.contains("This class owns no slabs."));

        let mut zeros = sample(50);
        zeros.settings.fps = 0;
        for s in &mut zeros.scenarios {
            let n = s.series.frame_us.len();
            s.series = Series {
                frame_us: vec![0.0; n],
                gc_us: vec![0.0; n],
                gc_kind: vec![0; n],
                live: vec![0; n],
                allocations: vec![0; n],
                spawn_cdf: Vec::new(),
                ..Series::default()
            };
            s.gc = GcFigures::default();
        }
        let html = render(&zeros);
        assert!(
            html.contains("No frame times were recorded.") && html.contains("No scenario ran the garbage collector.")
        );
        assert!(html.contains("No spawn latencies were recorded."));
        assert!(!html.contains("NaN"));
    }

    /// Writes the sample report for a look in a browser:
    /// `cargo test --bin respawn write_sample -- --ignored`.
    #[test]
    #[ignore = "writes a file for a person to look at"]
    fn write_sample() {
        let path = std::env::temp_dir().join("report.html");
        std::fs::write(&path, render(&sample(1200))).unwrap();
        std::fs::write(path.with_file_name("report-odd.html"), render(&odd_run())).unwrap();
        println!("wrote {} and report-odd.html beside it", path.display());
    }
}
