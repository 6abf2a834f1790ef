//! `cargo run --release`: the projectile storm, run side by side as `Box` per projectile
//! and as respawn's World under each pool policy, with a table on the terminal and an HTML
//! report (charts, slab occupancy maps) written beside it.
//!
//! Turrets fire `--rate` projectiles a frame for `--frames` frames; each flies, falls and
//! ages in one aggregated pass a frame, and is retired when it hits a target or its life
//! runs out. A `--payload-share` of them are rockets whose constructor takes `--payload-us`
//! (a weapon blueprint's construction script), which is what precreation takes off the
//! game thread. Every scenario fires the same seeded storm.

mod baseline;
mod cpu;
mod figures;
mod format;
mod heap;
mod report;
mod storm;
mod table;
mod verdict;

use std::fs::File;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use indicatif::{ProgressBar, ProgressStyle};

use crate::figures::{Machine, Run, Settings};
use crate::storm::Kind;
use crate::verdict::Tally;

/// The projectile storm: Box per projectile against respawn's pooled World, side by side.
#[derive(Debug, Parser)]
#[command(name = "respawn", version, allow_negative_numbers = true)]
struct Cli {
    /// Frames per scenario.
    #[arg(long, default_value_t = 300, value_name = "N", value_parser = whole(1, 100_000))]
    frames: u32,
    /// Projectiles fired per frame, over all turrets.
    #[arg(long, default_value_t = 400, value_name = "N", value_parser = whole(1, 100_000))]
    rate: u32,
    /// Mean projectile lifetime in frames (each lives 50–150 % of it, unless it hits).
    #[arg(long, default_value_t = 45, value_name = "FRAMES", value_parser = whole(1, 100_000))]
    lifetime: u32,
    /// Microseconds a rocket's constructor takes (its expensive payload).
    #[arg(long, default_value_t = 20, value_name = "µS", value_parser = whole(0, 1_000_000))]
    payload_us: u32,
    /// Share of projectiles that are rockets, from 0 to 1.
    #[arg(long, default_value_t = 0.02, value_name = "SHARE", value_parser = share)]
    payload_share: f64,
    /// Turrets firing (the rate is split between them).
    #[arg(long, default_value_t = 8, value_name = "N", value_parser = whole(1, 4096))]
    turrets: u32,
    /// Frames per second to pace the game loop to, as vsync would; 0 runs flat out.
    #[arg(long, default_value_t = 60, value_name = "FPS", value_parser = whole(0, 10_000))]
    fps: u32,
    /// Frames between garbage collections.
    #[arg(long, default_value_t = 60, value_name = "FRAMES", value_parser = whole(1, 1_000_000))]
    gc_every: u32,
    /// Microseconds of incremental purge per frame.
    #[arg(long, default_value_t = 1000, value_name = "µS", value_parser = whole(1, 1_000_000))]
    purge_budget_us: u32,
    /// Microseconds each projectile's destructor takes (tearing its state down); paid where
    /// it is dropped: the game thread, or with `--async-purge` a pool's worker.
    #[arg(long, default_value_t = 0, value_name = "µS", value_parser = whole(0, 1_000_000))]
    drop_us: u32,
    /// Pooled projectiles that a purge or a `Purge` release ends are dropped by the worker
    /// that rebuilds their cell, not on the game thread (`GcSettings::async_purge`).
    #[arg(long)]
    async_purge: bool,
    /// Microseconds of incremental mark per frame: each collection is marked over frames,
    /// a slice of about this long each (UE 5.4's incremental reachability); 0 marks each
    /// collection whole in the frame it falls due.
    #[arg(long, default_value_t = 0, value_name = "µS", value_parser = whole(0, 1_000_000))]
    incremental_gc_us: u32,
    /// Purge destroyed (`Default`) projectiles between collections once they hold this
    /// percentage of the World's cells (`GcSettings::early_purge_percent`); 0 waits for
    /// each collection.
    #[arg(long, default_value_t = 10, value_name = "PERCENT", value_parser = whole(0, 100))]
    early_purge_percent: u32,
    /// Scenarios to run, in order, comma-separated.
    #[arg(long, value_enum, value_delimiter = ',', default_values_t = [Kind::Box, Kind::Default, Kind::Purge, Kind::Reuse])]
    scenarios: Vec<Kind>,
    /// Pool settings for the `Bullet` and `Rocket` classes, in respawn's TOML format (see
    /// the README); each scenario's policy overrides the file's.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed of the storm (every scenario fires the same one).
    #[arg(long, default_value_t = 0x5eed)]
    seed: u64,
    /// Where to write the HTML report.
    #[arg(long, value_name = "PATH", default_value = "respawn-report.html")]
    report: PathBuf,
    /// Write no HTML report.
    #[arg(long, conflicts_with = "report")]
    no_report: bool,
    /// Print the figures as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Run the whole storm N times; the verdict shows each deciding figure's median and
    /// its spread (min–max), the table and charts the last run.
    #[arg(long, default_value_t = 1, value_name = "N", value_parser = whole(1, 1000))]
    repeat: u32,
    /// Save the run's deciding figures as baseline NAME (NAME.json in the baselines
    /// directory).
    #[arg(long, value_name = "NAME")]
    save_baseline: Option<String>,
    /// Compare the run against saved baseline NAME, figure by figure; it must have been made
    /// with the same settings.
    #[arg(long, value_name = "NAME")]
    baseline: Option<String>,
    /// Where baselines are kept [default: target/respawn-storm/baselines in the Cargo target
    /// directory the binary was built in]
    #[arg(long, value_name = "DIR")]
    baseline_dir: Option<PathBuf>,
}

/// A whole number from `min` to `max`, with a message saying which range to use.
fn whole(min: u32, max: u32) -> impl Fn(&str) -> Result<u32, String> + Clone + Send + Sync + 'static {
    move |s| {
        let n: i128 =
            s.trim().parse().map_err(|_| format!("'{s}' is not a whole number; use one from {min} to {max}"))?;
        u32::try_from(n)
            .ok()
            .filter(|n| (min..=max).contains(n))
            .ok_or_else(|| format!("{n} is out of range; use a whole number from {min} to {max}"))
    }
}

/// A share from 0 to 1.
fn share(s: &str) -> Result<f64, String> {
    let x: f64 = s.trim().parse().map_err(|_| format!("'{s}' is not a number; use a share from 0 to 1, like 0.05"))?;
    if (0.0..=1.0).contains(&x) {
        Ok(x)
    } else {
        Err(format!("{x} is out of range; use a share from 0 to 1, like 0.05"))
    }
}

/// The most spawns a scenario may record (8 bytes each, held until the scenario ends).
const MAX_SPAWNS: u64 = 50_000_000;

fn main() -> ExitCode {
    #[cfg(feature = "dhat-heap")]
    let profiler = dhat::Profiler::new_heap();
    let outcome = match Cli::try_parse() {
        Ok(cli) => run(cli).map_err(|message| fail(&message)),
        Err(e) if !e.use_stderr() => {
            // --help, --version
            let _ = e.print();
            Err(ExitCode::SUCCESS)
        }
        Err(e) => Err(fail(&clap_line(&e))),
    };
    match outcome {
        // The profile is written (and summed up on stderr) as the profiler drops.
        Ok(()) => {
            #[cfg(feature = "dhat-heap")]
            drop(profiler);
            ExitCode::SUCCESS
        }
        // No storm ran: no profile, and stderr keeps its one line.
        Err(code) => {
            #[cfg(feature = "dhat-heap")]
            std::mem::forget(profiler);
            code
        }
    }
}

/// Prints `message` as one line on stderr and exits with 2.
fn fail(message: &str) -> ExitCode {
    eprintln!("respawn: {}", one_line(message));
    ExitCode::from(2)
}

/// clap's error, first line only, without its `error: ` prefix.
fn clap_line(e: &clap::Error) -> String {
    let text = e.render().to_string();
    let first = text.lines().next().unwrap_or("").trim_start_matches("error: ");
    // A bad choice: say which are good.
    let choices = text.lines().find_map(|l| l.trim().strip_prefix("[possible values: ")?.strip_suffix(']'));
    match choices {
        Some(choices) => format!("{first}; use one of: {choices} (see respawn --help)"),
        None => format!("{first} (see respawn --help)"),
    }
}

/// A multi-line message (toml's parse errors draw the line they point at) as one line.
fn one_line(message: &str) -> String {
    let parts: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('|') && !l.chars().next().is_some_and(|c| c.is_ascii_digit()))
        .collect();
    parts.join(": ").replace(":: ", ": ").replace(": :", ":")
}

fn run(cli: Cli) -> Result<(), String> {
    let settings = Settings {
        frames: cli.frames,
        rate: cli.rate,
        turrets: cli.turrets,
        lifetime: cli.lifetime,
        payload_share: cli.payload_share,
        payload_us: cli.payload_us,
        fps: cli.fps,
        gc_every: cli.gc_every,
        purge_budget_us: cli.purge_budget_us,
        drop_us: cli.drop_us,
        async_purge: cli.async_purge,
        incremental_gc_us: cli.incremental_gc_us,
        early_purge_percent: cli.early_purge_percent,
        seed: cli.seed,
        config: cli.config.as_ref().map(|p| p.display().to_string()),
    };
    let spawns = u64::from(settings.frames) * u64::from(settings.rate);
    if spawns > MAX_SPAWNS {
        return Err(format!(
            "--frames {} × --rate {} is {spawns} spawns per scenario; keep the product at most {MAX_SPAWNS}",
            settings.frames, settings.rate
        ));
    }
    let mut kinds = cli.scenarios.clone();
    kinds.dedup();
    let layers = storm::prepare(&settings, &kinds).map_err(|e| e.to_string())?;
    // Read the baseline and check the paths now, so that a bad one is refused before the
    // storm rather than after.
    let baselines = baseline::dir(cli.baseline_dir.as_deref());
    let against = match &cli.baseline {
        Some(name) => {
            let saved = baseline::load(&baselines, name)?;
            let profile = Machine::this().profile;
            baseline::check(&saved, &settings, heap::COUNTER, profile)?;
            Some(saved)
        }
        None => None,
    };
    if let Some(name) = &cli.save_baseline {
        baseline::path(&baselines, name)?;
        baseline::prepare_dir(&baselines)?;
    }
    let report = match cli.no_report {
        true => None,
        false => Some(
            File::create(&cli.report)
                .map_err(|e| format!("cannot write the report to {}: {e}", cli.report.display()))?,
        ),
    };

    let bar = if std::io::stderr().is_terminal() {
        let total = u64::from(settings.frames) * kinds.len() as u64 * u64::from(cli.repeat);
        let bar = ProgressBar::new(total);
        bar.set_style(
            ProgressStyle::with_template("{msg:>11} [{bar:30}] {pos}/{len} frames, {eta} left")
                .expect("a valid template")
                .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    // Every repeat runs every scenario in order; the last repeat's figures are kept whole,
    // the others' deciding figures only.
    let mut tally = Tally::default();
    let mut scenarios = Vec::with_capacity(kinds.len());
    for repeat in 1..=cli.repeat {
        scenarios.clear();
        for &kind in &kinds {
            match cli.repeat {
                1 => bar.set_message(kind.key()),
                n => bar.set_message(format!("{} {repeat}/{n}", kind.key())),
            }
            let scenario = storm::run(kind, &settings, &layers, || bar.inc(1)).map_err(|e| e.to_string())?;
            tally.add(&settings, &scenario);
            scenarios.push(scenario);
        }
    }
    bar.finish_and_clear();

    let mut run = Run::new(settings, Machine::this(), cli.repeat, scenarios, tally.spreads());
    run.comparison = against.as_ref().map(|saved| baseline::compare(&run, saved));
    let out = |text: &str| writeln!(std::io::stdout(), "{text}").map_err(|e| format!("cannot write to stdout: {e}"));
    // With --json, stdout holds the JSON alone and the paths written go to stderr.
    let note = |line: String| -> Result<(), String> {
        if cli.json {
            eprintln!("{line}");
            Ok(())
        } else {
            out(&line)
        }
    };
    if cli.json {
        out(&verdict::json(&run, true))?;
    } else {
        note(table::render(&run).trim_end().to_owned())?;
    }
    if let Some(mut file) = report {
        file.write_all(report::render(&run).as_bytes())
            .map_err(|e| format!("cannot write the report to {}: {e}", cli.report.display()))?;
        let path = std::fs::canonicalize(&cli.report).unwrap_or(cli.report.clone());
        note(format!("{}report: {}", if cli.json { "" } else { "\n" }, path.display()))?;
    }
    if let Some(name) = &cli.save_baseline {
        let file = baseline::save(&run, &baselines, name)?;
        note(format!("baseline saved: {}", file.display()))?;
    }
    #[cfg(feature = "dhat-heap")]
    eprintln!("dhat: the profile goes to dhat-heap.json as the program exits");
    Ok(())
}
