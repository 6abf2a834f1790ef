//! End-to-end: the `respawn` binary runs a tiny storm in every scenario, prints the table
//! or JSON, writes an HTML report holding the run's charts and figures; and refuses bad
//! input with a one-line message and exit code 2, never a panic.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

fn respawn(args: &[&str]) -> Output {
    // In the temporary directory: a build with `--features dhat-heap` writes its profile to
    // the current one.
    Command::new(env!("CARGO_BIN_EXE_respawn"))
        .args(args)
        .current_dir(std::env::temp_dir())
        .output()
        .expect("the binary runs")
}

/// A scratch directory of this test's own (tests run in parallel).
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("respawn-cli-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A tiny, unpaced storm: every scenario, a few frames.
const TINY: [&str; 10] = ["--frames", "12", "--rate", "40", "--lifetime", "4", "--fps", "0", "--payload-us", "5"];

fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

#[test]
fn a_tiny_storm_reports_every_scenario_in_json_and_html() {
    let dir = scratch("json");
    let report = dir.join("storm.html");
    let mut args = TINY.to_vec();
    args.extend(["--json", "--report", path_str(&report), "--seed", "7", "--gc-every", "4"]);
    let out = respawn(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("report: "), "the report's path goes to stderr with --json: {stderr}");

    // stdout is the JSON alone.
    let run: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    let scenarios = run["scenarios"].as_array().unwrap();
    let keys: Vec<_> = scenarios.iter().map(|s| s["key"].as_str().unwrap()).collect();
    assert_eq!(keys, ["box", "default", "purge", "reuse"]);
    for s in scenarios {
        let key = s["key"].as_str().unwrap();
        // The same seeded storm everywhere: 12 frames × 40 shots, and the same fates.
        assert_eq!(s["spawns"], 480, "{key}");
        assert_eq!(s["hits"], scenarios[0]["hits"], "{key}");
        assert_eq!(s["expired"], scenarios[0]["expired"], "{key}");
        assert_eq!(s["live_at_end"], scenarios[0]["live_at_end"], "{key}");
        assert_eq!(s["series"]["frame_us"].as_array().unwrap().len(), 12, "{key}");
        let p50 = s["spawn_ns"]["p50"].as_f64().unwrap();
        let p99 = s["spawn_ns"]["p99"].as_f64().unwrap();
        let max = s["spawn_ns"]["max"].as_f64().unwrap();
        assert!(0.0 < p50 && p50 <= p99 && p99 <= max, "{key}: {p50} {p99} {max}");
        if key == "box" {
            assert!(s["pool"].is_null());
            assert!(s["layout"].as_array().unwrap().is_empty());
            // One allocation per Box at least.
            assert!(s["memory"]["allocations"].as_u64().unwrap() >= 480, "{key}");
        } else {
            let pool = &s["pool"];
            assert_eq!(pool["hits"].as_u64().unwrap() + pool["misses"].as_u64().unwrap(), 480, "{key}");
            let layout = s["layout"].as_array().unwrap();
            let names: Vec<_> = layout.iter().map(|c| c["name"].as_str().unwrap()).collect();
            assert_eq!(names, ["Bullet", "Rocket"], "{key}");
            assert!(s["gc"]["collections"].as_u64().unwrap() >= 2, "{key}: a collection every 4 frames");
            // The collector's diagnosis at the end: the world keeps each projectile until it
            // is destroyed, and it is its turret's sub-object; nothing references a retired one.
            let d = &s["diagnosis"];
            assert!(s["live_at_end"].as_u64().unwrap() > 0, "{key}: projectiles in flight at the end");
            let object = d["object"].as_str().expect("a sample projectile");
            assert!(object.starts_with("Bullet#") || object.starts_with("Rocket#"), "{key}: {object}");
            assert_eq!(d["chain"].as_str().unwrap(), format!("root (owned until destroyed) {object}"), "{key}");
            let outer = d["outer"].as_str().expect("its turret");
            assert!(outer.starts_with("Turret#"), "{key}: {outer}");
            assert_eq!(d["outer_chain"].as_str().unwrap(), format!("root (owned until destroyed) {outer}"), "{key}");
            assert_eq!(d["garbage_references"], 0, "{key}");
            assert!(d["first_garbage_references"].as_array().unwrap().is_empty(), "{key}");
        }
    }
    assert!(scenarios[0].get("diagnosis").is_none(), "Box has no collector to ask");

    // The HTML report: self-contained, with the charts and this run's figures.
    let html = std::fs::read_to_string(&report).expect("the report was written");
    assert!(html.starts_with("<!DOCTYPE html>") || html.starts_with("<!doctype html>"), "{}", &html[..80]);
    assert!(html.trim_end().ends_with("</html>"));
    assert!(html.matches("<svg").count() >= 5, "charts as inline SVG");
    for needle in ["src=\"http", "href=\"http", "<link", "@import"] {
        assert!(!html.contains(needle), "no network: found {needle}");
    }
    for s in scenarios {
        assert!(html.contains(s["name"].as_str().unwrap().replace('<', "&lt;").as_str()));
        let key = s["key"].as_str().unwrap();
        let cell = format!("data-key=\"{key}\" data-figure=\"spawns\" data-value=\"480\"");
        assert!(html.contains(&cell), "the summary table holds {key}'s spawns");
    }
    // The verdict opens the page, before the settings; the machine and the command line
    // that runs the storm again are in its header.
    let verdict = html.find("<section class=\"verdict\">").expect("a verdict section");
    assert!(verdict < html.find("<h2>Summary</h2>").unwrap(), "the verdict comes first");
    assert!(html.contains("<tr data-figure=\"peak_bytes\">") && html.contains(" class=\"best\">"));
    assert!(html.contains("Run it again: <code class=\"command\">cargo run --release -- --frames 12 "));
    let why = html.find("<h2>Why is it alive</h2>").expect("the diagnosis section");
    for s in &scenarios[1..] {
        let key = s["key"].as_str().unwrap();
        let section = html[why..].find(&format!("<section class=\"diagnosis\" data-key=\"{key}\">")).expect(key);
        let section = &html[why + section..];
        let object = s["diagnosis"]["object"].as_str().unwrap();
        assert!(
            section.contains(&format!("<li>{object}: <code>root (owned until destroyed) {object}</code></li>")),
            "{key}"
        );
    }
    assert!(html.contains(run["machine"]["commit"].as_str().unwrap()));
    // The embedded figures are this run's.
    let start = html.find("<script type=\"application/json\" id=\"figures\">").expect("embedded figures");
    let body = &html[start..];
    let json = &body[body.find('>').unwrap() + 1..body.find("</script>").unwrap()];
    let embedded: Value = serde_json::from_str(&json.replace("<\\/", "</")).unwrap();
    assert_eq!(embedded, run, "the report embeds exactly the figures printed");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn the_table_names_every_figure_and_the_report_path() {
    let dir = scratch("table");
    let report = dir.join("r.html");
    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "box,reuse", "--report", path_str(&report)]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    // The verdict first, then the machine and the command line, then the table.
    assert!(text.starts_with("verdict: against Box"), "{text}");
    let again = text.lines().position(|l| l.starts_with("again:")).expect("the command line");
    assert!(text.lines().any(|l| l.starts_with("machine: ")), "{text}");
    let header = text.lines().nth(again + 2).unwrap();
    assert!(header.contains("Box") && header.contains("World · Reuse") && !header.contains("Purge"), "{header}");
    for row in [
        "spawns",
        "spawn latency p50",
        "spawn latency p99",
        "spawn latency max",
        "frame time p50",
        "frame time p99",
        "frame time max",
        "  mean fire + spawn",
        "    tick",
        "    retire",
        "    collector",
        "    pool upkeep",
        "tick per projectile",
        "GC collections",
        "GC longest pause",
        "pool hit rate",
        "heap allocations",
        "peak memory",
    ] {
        let line = text
            .lines()
            .skip(again + 2)
            .find(|l| l.starts_with(row))
            .unwrap_or_else(|| panic!("no row {row}:\n{text}"));
        assert_eq!(line[row.len()..].split("  ").filter(|c| !c.trim().is_empty()).count(), 2, "{line}");
    }
    for row in ["heap allocations / frame (2nd half)", "rocket spawn p99", "frame time p50", "peak memory"] {
        let line = text.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no verdict row {row}:\n{text}"));
        assert!(line.contains("(1 ×)"), "Box's own ratio is 1: {line}");
    }
    assert!(text.contains("- World · Reuse: pooling costs"), "the cost said plainly:\n{text}");
    let spawns = text.lines().find(|l| l.starts_with("spawns")).unwrap();
    assert_eq!(spawns.split_whitespace().skip(1).collect::<Vec<_>>(), ["480", "480"], "{spawns}");
    let canonical = std::fs::canonicalize(&report).unwrap();
    assert!(text.contains(&format!("report: {}", canonical.display())), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_pool_file_configures_the_world_scenarios() {
    let dir = scratch("config");
    let file = dir.join("pools.toml");
    std::fs::write(&file, "[Bullet]\ncapacity = 0\nlow_watermark = 0\nprecreate = false\nworkers = 0\n").unwrap();
    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "purge", "--no-report", "--json", "--config", path_str(&file)]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let pool = &run["scenarios"][0]["pool"];
    // Bullets are no longer precreated: most spawns construct inline.
    assert!(pool["misses"].as_u64().unwrap() > 300, "{pool}");
    assert_eq!(run["settings"]["config"], path_str(&file));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn bad_input_gets_one_line_saying_what_to_change_and_exit_code_2() {
    let dir = scratch("bad");
    let unknown = dir.join("unknown.toml");
    std::fs::write(&unknown, "[Missile]\ncapacity = 10\n").unwrap();
    let invalid = dir.join("invalid.toml");
    std::fs::write(&invalid, "[Bullet]\ncapacity = 100\nmax = 10\n").unwrap();
    let broken = dir.join("broken.toml");
    std::fs::write(&broken, "[Bullet\ncapacity = 1\n").unwrap();
    let missing = dir.join("missing.toml");
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["--frames".into(), "0".into()], "0 is out of range; use a whole number from 1 to"),
        (vec!["--rate".into(), "-5".into()], "-5 is out of range; use a whole number from 1 to"),
        (vec!["--rate".into(), "lots".into()], "'lots' is not a whole number"),
        (vec!["--payload-share".into(), "1.5".into()], "use a share from 0 to 1"),
        (vec!["--incremental-gc-us".into(), "-1".into()], "-1 is out of range; use a whole number from 0 to"),
        (vec!["--bogus".into()], "unexpected argument '--bogus'"),
        (vec!["--frames".into()], "a value is required for '--frames <N>'"),
        (
            vec!["--scenarios".into(), "box,gc".into()],
            "invalid value 'gc' for '--scenarios <SCENARIOS>'; use one of: box, default, purge, reuse",
        ),
        (vec!["--frames".into(), "100000".into(), "--rate".into(), "100000".into()], "keep the product at most"),
        (vec!["--config".into(), missing.display().to_string()], "missing.toml"),
        (vec!["--config".into(), unknown.display().to_string()], "Missile"),
        (vec!["--config".into(), invalid.display().to_string()], "max"),
        (vec!["--config".into(), broken.display().to_string()], "broken.toml"),
        (
            vec!["--report".into(), "/nonexistent-dir/r.html".into()],
            "cannot write the report to /nonexistent-dir/r.html",
        ),
    ];
    for (args, says) in cases {
        let out = respawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(err.starts_with("respawn: "), "{args:?}: {err}");
        assert!(!err.contains("panicked") && !err.contains("RUST_BACKTRACE"), "{args:?}: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn incremental_gc_marks_over_frames_and_the_run_says_so() {
    let dir = scratch("incremental");
    let report = dir.join("storm.html");
    // Longer than TINY, so that marks spread over frames get to finish: a table of some
    // 9 000 slots, flagged and gathered in slices of 20 µs — a few slices in a release
    // build, some 70 in a debug one.
    let storm = ["--frames", "300", "--rate", "100", "--lifetime", "10", "--fps", "0", "--payload-us", "5"];
    let budget = ["--incremental-gc-us", "20", "--gc-every", "10", "--scenarios", "default,purge"];
    let mut args = storm.to_vec();
    args.extend(budget);
    args.extend(["--json", "--report", path_str(&report)]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(run["settings"]["incremental_gc_us"], 20);
    assert!(run["command_line"].as_str().unwrap().contains(" --incremental-gc-us 20 "), "{}", run["command_line"]);
    for s in run["scenarios"].as_array().unwrap() {
        let (key, gc) = (s["key"].as_str().unwrap(), &s["gc"]);
        assert_eq!(s["spawns"], 30_000, "{key}: the same storm");
        let slices = gc["mark_slices"].as_u64().unwrap();
        assert!(slices > 0 && gc["collections"].as_u64().unwrap() >= 1, "{key}: {gc}");
        let longest = gc["max_mark_slice_us"].as_f64().unwrap();
        assert!(longest > 0.0 && longest <= gc["max_collection_us"].as_f64().unwrap(), "{key}: {gc}");
        // Kind 3 in the per-frame series: the frames that ran a mark slice.
        let kinds = s["series"]["gc_kind"].as_array().unwrap();
        assert_eq!(kinds.iter().filter(|k| k.as_u64() == Some(3)).count() as u64, slices, "{key}");
    }
    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("marking over frames in slices of"), "the settings paragraph says so");
    assert!(html.contains("incremental mark slices"), "the collector's figures list them");
    // The table on the terminal, and the command line it prints, say it too.
    let mut args = storm.to_vec();
    args.extend(budget);
    args.push("--no-report");
    let out = respawn(&args);
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.contains("GC incremental mark slices"), "{table}");
    assert!(table.contains("--incremental-gc-us 20 "), "{table}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn help_lists_the_flags_and_exits_0() {
    let out = respawn(&["--help"]);
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for flag in [
        "--frames",
        "--rate",
        "--lifetime",
        "--payload-us",
        "--scenarios",
        "--config",
        "--seed",
        "--report",
        "--json",
        "--incremental-gc-us",
    ] {
        assert!(text.contains(flag), "{flag}: {text}");
    }
}

#[test]
fn the_verdict_marks_the_best_and_the_printed_command_runs_the_same_storm() {
    // TINY, paced at 500 fps instead of unpaced.
    let mut args: Vec<&str> = TINY.chunks(2).filter(|kv| kv[0] != "--fps").flatten().copied().collect();
    args.extend(["--json", "--no-report", "--seed", "11", "--fps", "500", "--scenarios", "reuse,box"]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");

    // Ratios are against Box even when it ran second; each row's best is its lowest value.
    let verdict = &run["verdict"];
    assert_eq!(verdict["baseline"], "box");
    let rows = verdict["rows"].as_array().unwrap();
    let figures: Vec<_> = rows.iter().map(|r| r["figure"].as_str().unwrap()).collect();
    for figure in
        ["steady_allocations_per_frame", "rocket_spawn_p99_ns", "frame_p50_us", "peak_bytes", "frames_over_budget"]
    {
        assert!(figures.contains(&figure), "{figure} missing: {figures:?}");
    }
    for row in rows {
        let values: Vec<f64> = row["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap()).collect();
        let best: Vec<bool> = row["best"].as_array().unwrap().iter().map(|b| b.as_bool().unwrap()).collect();
        let low = values.iter().copied().fold(f64::INFINITY, f64::min);
        for (v, b) in values.iter().zip(&best) {
            assert_eq!(*b, *v <= low * (1.0 + 1e-9), "{row}");
        }
        if row["figure"] != "frames_over_budget" {
            let ratio = row["ratios"][1].as_f64().expect("Box's ratio");
            assert!((ratio - 1.0).abs() < 1e-12, "Box against itself: {row}");
        }
    }
    // Frames over a 2 ms budget (500 fps): counted from the frame series.
    let over = rows.iter().find(|r| r["figure"] == "frames_over_budget").unwrap();
    for (i, s) in run["scenarios"].as_array().unwrap().iter().enumerate() {
        let frames = s["series"]["frame_us"].as_array().unwrap();
        let expected = frames.iter().filter(|t| t.as_f64().unwrap() > 2000.0).count() as f64;
        assert_eq!(over["values"][i].as_f64().unwrap(), expected);
    }
    let machine = &run["machine"];
    assert!(machine["cpus"].as_u64().unwrap() >= 1 && !machine["commit"].as_str().unwrap().is_empty(), "{machine}");

    // The command line it prints runs the same storm: the same settings, the same fates.
    let line = run["command_line"].as_str().unwrap();
    let again: Vec<&str> = line.strip_prefix("cargo run --release -- ").expect("a cargo command").split(' ').collect();
    let mut again_args = again.clone();
    again_args.extend(["--json", "--no-report"]);
    let rerun: Value = serde_json::from_slice(&respawn(&again_args).stdout).expect("the command runs");
    assert_eq!(rerun["settings"], run["settings"]);
    assert_eq!(rerun["command_line"], run["command_line"]);
    for (a, b) in rerun["scenarios"].as_array().unwrap().iter().zip(run["scenarios"].as_array().unwrap()) {
        assert_eq!((&a["key"], &a["hits"], &a["expired"]), (&b["key"], &b["hits"], &b["expired"]));
    }
}

/// The numbers of a JSON array.
fn numbers(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn repeats_give_medians_and_spreads_in_the_table_json_and_report() {
    let dir = scratch("repeat");
    let report = dir.join("r.html");
    let mut args = TINY.to_vec();
    args.extend(["--repeat", "2", "--scenarios", "box,reuse", "--json", "--report", path_str(&report)]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["repeats"], 2);
    assert!(run["command_line"].as_str().unwrap().contains(" --repeat 2 "), "{}", run["command_line"]);
    let spreads = run["spreads"].as_array().unwrap();
    assert_eq!(spreads.iter().map(|s| s["key"].as_str().unwrap()).collect::<Vec<_>>(), ["box", "reuse"]);
    let rows = run["verdict"]["rows"].as_array().unwrap();
    assert_eq!(run["verdict"]["repeats"], 2);
    for (i, spread) in spreads.iter().enumerate() {
        let figures = spread["figures"].as_array().unwrap();
        let names: Vec<_> = figures.iter().map(|f| f["figure"].as_str().unwrap()).collect();
        assert_eq!(
            names,
            ["steady_allocations_per_frame", "rocket_spawn_p99_ns", "frame_p50_us", "frame_p99_us", "peak_bytes"],
            "unpaced: no frame budget"
        );
        for f in figures {
            let values = numbers(&f["values"]);
            assert_eq!(values.len(), 2, "one value per repeat: {f}");
            let (lo, hi) = (values[0].min(values[1]), values[0].max(values[1]));
            assert_eq!((f["min"].as_f64().unwrap(), f["max"].as_f64().unwrap()), (lo, hi), "{f}");
            let median = f["median"].as_f64().unwrap();
            assert!((median - (values[0] + values[1]) / 2.0).abs() <= 1e-9 * median.abs(), "{f}");
            // The verdict shows the median, and the spread beside it.
            let row = rows.iter().find(|r| r["figure"] == f["figure"]).unwrap();
            assert_eq!(row["values"][i].as_f64().unwrap(), f["median"].as_f64().unwrap(), "{row}");
            assert_eq!(numbers(&row["spreads"][i]), [lo, hi], "{row}");
        }
        // The same storm twice: the same fates, so the same allocations per frame.
        let allocations = figures.iter().find(|f| f["figure"] == "steady_allocations_per_frame").unwrap();
        if spread["key"] == "box" {
            assert_eq!(allocations["min"], allocations["max"], "{allocations}");
        }
    }
    // The table and charts show the last run: its figures are one of the repeats'.
    let last_p50 = run["scenarios"][0]["frame_us"]["p50"].as_f64().unwrap();
    assert_eq!(numbers(&spreads[0]["figures"][2]["values"])[1], last_p50);

    let html = std::fs::read_to_string(&report).unwrap();
    assert!(html.contains("The storm ran 2 times: each figure is the median"), "the report says so");
    assert_eq!(html.matches("<br><span class=\"spread\">").count(), 2 * rows.len(), "a spread under every cell");

    let mut args = TINY.to_vec();
    args.extend(["--repeat", "2", "--scenarios", "box,reuse", "--no-report"]);
    let text = String::from_utf8(respawn(&args).stdout).unwrap();
    assert!(text.starts_with("verdict: medians of 2 runs against Box"), "{text}");
    assert_eq!(text.lines().filter(|l| l.starts_with("  min–max of 2 runs")).count(), rows.len(), "{text}");
    assert!(text.contains("every figure of the last of the 2 runs:"), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_saved_baseline_is_compared_figure_by_figure() {
    let dir = scratch("baseline");
    let baselines = dir.join("baselines");
    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "box,purge", "--no-report", "--json", "--repeat", "2"]);
    args.extend(["--baseline-dir", path_str(&baselines), "--save-baseline", "before"]);
    let out = respawn(&args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let file = baselines.join("before.json");
    assert!(stderr.contains(&format!("baseline saved: {}", file.display())), "{stderr}");
    let saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let first: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(saved["format"], "respawn-storm baseline 1");
    assert_eq!(
        (&saved["name"], &saved["repeats"], &saved["settings"]),
        (&"before".into(), &2.into(), &first["settings"])
    );
    for (s, spread) in saved["scenarios"].as_array().unwrap().iter().zip(first["spreads"].as_array().unwrap()) {
        assert_eq!(s["key"], spread["key"]);
        assert_eq!(s["figures"], spread["figures"], "the run's figures, every repeat's value");
    }

    // The same storm again, with a third scenario, compared in JSON and on the terminal.
    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "box,purge,reuse", "--no-report", "--json"]);
    args.extend(["--baseline-dir", path_str(&baselines), "--baseline", "before"]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let c = &run["comparison"];
    assert_eq!((&c["baseline"], &c["repeats"], &c["commit"]), (&"before".into(), &2.into(), &saved["commit"]));
    assert_eq!(c["missing"], serde_json::json!(["reuse"]));
    let changes = c["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 2 * 5, "two scenarios × five figures (unpaced: no budget row)");
    for ch in changes {
        let key = ch["key"].as_str().unwrap();
        let figure = ch["figure"].as_str().unwrap();
        let saved_scenario = saved["scenarios"].as_array().unwrap().iter().find(|s| s["key"] == key).unwrap();
        let before = saved_scenario["figures"].as_array().unwrap().iter().find(|f| f["figure"] == figure).unwrap();
        assert_eq!(ch["before"], before["median"], "{ch}");
        let spread = run["spreads"].as_array().unwrap().iter().find(|s| s["key"] == key).unwrap();
        let after = spread["figures"].as_array().unwrap().iter().find(|f| f["figure"] == figure).unwrap();
        assert_eq!(ch["after"], after["median"], "{ch}");
        let (b, a) = (ch["before"].as_f64().unwrap(), ch["after"].as_f64().unwrap());
        if b > 0.0 {
            let ratio = ch["ratio"].as_f64().unwrap();
            assert!((ratio - a / b).abs() <= 1e-12 * ratio, "{ch}");
            let sign = if a >= b { '+' } else { '-' };
            assert!(ch["text"].as_str().unwrap().starts_with(sign), "the change's sign: {ch}");
        }
        // One run now against two then: no spread on this side to judge by.
        let judgement = ch["judgement"].as_str().unwrap();
        let expected = if a == b {
            "same"
        } else if b > 0.0 && (a / b - 1.0).abs() < 0.01 {
            "noise"
        } else if a > b {
            "higher"
        } else {
            "lower"
        };
        assert_eq!(judgement, expected, "{ch}");
    }
    // Box allocates one box per shot in both runs: the same storm, the same figure.
    let allocations = changes.iter().find(|c| c["key"] == "box" && c["figure"] == "steady_allocations_per_frame");
    assert_eq!(allocations.unwrap()["judgement"], "same");

    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "box,purge", "--no-report"]);
    args.extend(["--baseline-dir", path_str(&baselines), "--baseline", "before"]);
    let out = respawn(&args);
    let text = String::from_utf8(out.stdout).unwrap();
    let at = text.find("against baseline 'before' (2 runs of ").expect("the comparison is printed");
    assert!(at > text.find("verdict:").unwrap() && at < text.find("machine:").unwrap(), "after the verdict:\n{text}");
    let block: Vec<&str> = text[at..].lines().take_while(|l| !l.is_empty()).collect();
    assert_eq!(block.len(), 1 + 2 * (1 + 5), "{text}");
    assert!(block.contains(&"  World · Purge"), "{text}");
    let line = block.iter().find(|l| l.trim_start().starts_with("frame time p50")).unwrap();
    assert!(line.contains(" → ") && line.contains("% (") && line.contains(" ×)"), "{line}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_bad_baseline_is_refused_before_the_storm_saying_why() {
    let dir = scratch("bad-baseline");
    let baselines = dir.join("b");
    let dir_args = ["--baseline-dir", path_str(&baselines)];
    // Save one, with TINY's settings.
    let mut args = TINY.to_vec();
    args.extend(["--scenarios", "reuse", "--no-report", "--save-baseline", "tiny"]);
    args.extend(dir_args);
    assert!(respawn(&args).status.success());
    std::fs::write(baselines.join("broken.json"), "{ \"format\": \"respawn-storm baseline 1\", \"name\": ").unwrap();
    std::fs::write(baselines.join("alien.json"), "{ \"format\": \"criterion 0.5\" }").unwrap();
    let file_not_dir = dir.join("file");
    std::fs::write(&file_not_dir, "").unwrap();

    let with = |extra: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = TINY.iter().map(|s| s.to_string()).collect();
        args.extend(["--scenarios", "reuse", "--no-report"].map(String::from));
        args.extend(dir_args.map(String::from));
        args.extend(extra.iter().map(|s| s.to_string()));
        args
    };
    let cases: Vec<(Vec<String>, &str)> = vec![
        (with(&["--baseline", "nope"]), "no baseline named 'nope' in "),
        (with(&["--baseline", "nope"]), "saved ones: alien, broken, tiny"),
        (with(&["--baseline", "broken"]), "baseline 'broken' ("),
        (with(&["--baseline", "broken"]), "is not a storm baseline: EOF while parsing"),
        (with(&["--baseline", "alien"]), "its format is 'criterion 0.5'"),
        (with(&["--baseline", "../tiny"]), "'../tiny' is not a baseline name"),
        (with(&["--save-baseline", "a/b"]), "'a/b' is not a baseline name"),
        (with(&["--repeat", "0"]), "0 is out of range; use a whole number from 1 to 1000"),
        (
            with(&["--baseline", "tiny", "--turrets", "3", "--seed", "9"]),
            "baseline 'tiny' was made with other settings (--turrets 8, --seed 24301; this run: --turrets 3, --seed 9)",
        ),
        (
            {
                let mut args = with(&["--save-baseline", "x"]);
                let at = args.iter().position(|a| a == "--baseline-dir").unwrap();
                args[at + 1] = file_not_dir.join("sub").display().to_string();
                args
            },
            "cannot make the baselines directory",
        ),
    ];
    for (args, says) in cases {
        let out = respawn(&args.iter().map(String::as_str).collect::<Vec<_>>());
        let err = String::from_utf8(out.stderr).unwrap();
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(says), "{args:?} should say {says:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: one line: {err}");
        assert!(out.stdout.is_empty(), "{args:?}: refused before the storm, nothing on stdout");
    }
    // Another build's heap counter or profile is a setting too.
    let file = baselines.join("tiny.json");
    let mut saved: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    saved["heap_counter"] = "an abacus".into();
    std::fs::write(&file, saved.to_string()).unwrap();
    let out = respawn(&with(&["--baseline", "tiny"]).iter().map(String::as_str).collect::<Vec<_>>());
    let err = String::from_utf8(out.stderr).unwrap();
    assert!(err.contains("(heap counter an abacus; this run: heap counter counting allocator"), "{err}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn each_world_scenario_breaks_its_peak_memory_into_parts_that_add_up() {
    let dir = scratch("parts");
    let report = dir.join("r.html");
    let mut args = TINY.to_vec();
    args.extend(["--json", "--report", path_str(&report)]);
    let out = respawn(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    let html = std::fs::read_to_string(&report).unwrap();
    for s in run["scenarios"].as_array().unwrap() {
        let key = s["key"].as_str().unwrap();
        let memory = &s["memory"];
        let n = |v: &Value| v.as_u64().unwrap_or_else(|| panic!("{key}: {v} in {memory}"));
        let (heap, mapped, peak) =
            (n(&memory["peak_heap_bytes"]), n(&memory["peak_slab_bytes"]), n(&memory["peak_bytes"]));
        assert_eq!(heap + mapped, peak, "{key}: {memory}");
        assert!(heap > 0, "{key}: the scenario's own heap: {memory}");
        if key == "box" {
            assert!(memory["peak_parts"].is_null(), "Box has no World: {memory}");
            assert_eq!(mapped, 0);
            // At least the boxes alive at the end (64-byte bullets and larger rockets).
            assert!(heap >= 64 * n(&s["live_at_end"]), "{memory}");
            continue;
        }
        let p = &memory["peak_parts"];
        let part = |name: &str| n(&p[name]);
        for name in ["slab_cells", "table_slots", "pool_side", "class_side", "other_heap"] {
            assert!(part(name) > 0, "{key}: {name} is measured: {p}");
        }
        // As documented: the mapped parts are the slabs' peak, the heap parts the heap's,
        // and the side structures (on the heap) fit inside the heap's peak.
        assert_eq!(part("slab_cells") + part("table_slots"), mapped, "{key}: {p}");
        assert!(part("pool_side") + part("class_side") <= heap, "{key}: {p}");
        assert_eq!(part("pool_side") + part("class_side") + part("other_heap"), heap, "{key}: {p}");
        // 16 bytes of slot per cell: less than the cells, the projectiles' 64 bytes or more
        // each (the few turrets' cells are smaller, and their slab is mostly empty).
        assert_eq!(part("table_slots") % 16, 0, "{key}: {p}");
        assert!(part("table_slots") <= part("slab_cells"), "{key}: {p}");
        // The report's memory table shows the same bytes.
        for name in ["slab_cells", "table_slots", "pool_side", "class_side", "other_heap"] {
            let cell = format!("<td data-key=\"{key}\" data-value=\"{}\">", part(name));
            let row = html.find(&format!("<tr class=\"{name}\">")).unwrap_or_else(|| panic!("a row for {name}"));
            let end = row + html[row..].find("</tr>").unwrap();
            assert!(html[row..end].contains(&cell), "{name} of {key} in the report");
        }
    }
    // The terminal's table breaks the peak down the same way.
    let mut args = TINY.to_vec();
    args.extend(["--no-report", "--scenarios", "box,purge"]);
    let text = String::from_utf8(respawn(&args).stdout).unwrap();
    for row in [
        "  heap ",
        "    pool queues + magazines ",
        "    class side tables ",
        "    rest of the heap ",
        "  mapped: slabs + table ",
        "    slab cells ",
        "    object table slots ",
    ] {
        let line = text.lines().find(|l| l.starts_with(row)).unwrap_or_else(|| panic!("no row {row:?}:\n{text}"));
        let cells: Vec<&str> = line[row.len()..].split("  ").map(str::trim).filter(|c| !c.is_empty()).collect();
        assert_eq!(cells.len(), 2, "{line}");
        assert!(cells[1].ends_with('B'), "Purge's part in bytes: {line}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Under `--features dhat-heap` the counting wrapper sits over dhat's allocator: each
/// scenario still gets its own heap peak (dhat keeps one for the whole process), and dhat's
/// own bookkeeping is not counted as the storm's allocations.
#[cfg(feature = "dhat-heap")]
#[test]
fn under_dhat_each_scenario_has_its_own_heap_peak() {
    let dir = scratch("dhat");
    let mut args = TINY.to_vec();
    args.extend(["--json", "--no-report", "--scenarios", "default,reuse,box"]);
    // dhat writes its profile to the current directory.
    let out = Command::new(env!("CARGO_BIN_EXE_respawn")).args(&args).current_dir(&dir).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(dir.join("dhat-heap.json").is_file(), "dhat wrote its profile");
    let run: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(run["heap_counter"], "counting allocator over dhat");
    let memory = |i: usize| &run["scenarios"][i]["memory"];
    let peak = |i: usize| memory(i)["peak_heap_bytes"].as_u64().unwrap();
    // Default holds a collection interval of garbage, so its pools are the largest: with one
    // peak for the whole run, Reuse and Box would show Default's.
    assert!(peak(1) < peak(0), "Reuse's own peak: {} against Default's {}", memory(1), memory(0));
    assert!(peak(2) < peak(1), "Box's own peak: {} against Reuse's {}", memory(2), memory(1));
    // Box allocates one block per shot, 40 a frame: dhat's bookkeeping is not among them.
    let steady = memory(2)["steady_allocations_per_frame"].as_f64().unwrap();
    assert!((40.0..41.0).contains(&steady), "{}", memory(2));
    std::fs::remove_dir_all(dir).unwrap();
}
