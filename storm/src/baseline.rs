//! Saved baselines, as criterion keeps them: `--save-baseline NAME` writes a run's deciding
//! figures (each scenario's median, spread and every repeat's value) to `NAME.json` in the
//! baselines directory; `--baseline NAME` reads one back before the storm, refuses it if it
//! was made with other settings, and compares the run against it, figure by figure.
//!
//! The directory is `--baseline-dir`, or else `respawn-storm/baselines` in the Cargo target
//! directory the binary was built in (`target/respawn-storm/baselines` for `cargo run`), or
//! else `target/respawn-storm/baselines` under the current directory.

use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::figures::{Change, Comparison, Run, Settings, Spread};
use crate::format::{times, NONE};
use crate::verdict;

/// Changes smaller than this share of the baseline's median read as noise, whatever the
/// spreads say (criterion's default noise threshold).
pub const NOISE: f64 = 0.01;

/// What a baseline file's `format` field holds.
pub const FORMAT: &str = "respawn-storm baseline 1";

/// A saved run's deciding figures and everything needed to judge whether a later run is
/// comparable.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Baseline {
    /// [`FORMAT`].
    pub format: String,
    /// The name it was saved under.
    pub name: String,
    /// When it was saved, in seconds since 1970 (UTC).
    pub saved_at: u64,
    /// The `respawn` package's version.
    pub version: String,
    /// The commit the storm was built from.
    pub commit: String,
    /// The machine, as [`Machine::line`](crate::figures::Machine::line) writes it.
    pub machine: String,
    /// What counted the heap (`counting allocator`, or with dhat under it).
    pub heap_counter: String,
    /// `release` or `debug`.
    pub profile: String,
    /// The storm's settings.
    pub settings: Settings,
    /// Times the storm ran.
    pub repeats: u32,
    /// Each scenario's deciding figures, in the order they ran.
    pub scenarios: Vec<SavedScenario>,
}

/// One scenario of a baseline.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SavedScenario {
    /// The scenario's key (`box`, `default`, …).
    pub key: String,
    /// Its display name.
    pub name: String,
    /// Its deciding figures over the baseline's repeats.
    pub figures: Vec<Spread>,
}

/// The directory baselines live in: `flag`, else `respawn-storm/baselines` in the Cargo
/// target directory the binary sits in (recognised by its `CACHEDIR.TAG`), else
/// `target/respawn-storm/baselines` under the current directory.
pub fn dir(flag: Option<&Path>) -> PathBuf {
    if let Some(dir) = flag {
        return dir.to_path_buf();
    }
    let target = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent()?.parent().map(Path::to_path_buf))
        .filter(|target| target.join("CACHEDIR.TAG").is_file())
        .unwrap_or_else(|| PathBuf::from("target"));
    target.join("respawn-storm").join("baselines")
}

/// The file of baseline `name` in `dir`; an error for a name that is not a plain file name.
pub fn path(dir: &Path, name: &str) -> Result<PathBuf, String> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if !ok {
        return Err(format!(
            "'{name}' is not a baseline name; use up to 64 letters, digits, '.', '_' or '-', not starting with '.'"
        ));
    }
    Ok(dir.join(format!("{name}.json")))
}

/// The names of the baselines saved in `dir`, sorted.
fn saved(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.strip_suffix(".json").map(str::to_owned))
        .collect();
    names.sort();
    names
}

/// Reads baseline `name` from `dir`.
///
/// # Errors
/// A bad name, a missing or unreadable file, or one that is not a baseline this storm
/// wrote; each says what to do.
pub fn load(dir: &Path, name: &str) -> Result<Baseline, String> {
    let file = path(dir, name)?;
    let text = match std::fs::read_to_string(&file) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let names = saved(dir);
            let have = if names.is_empty() {
                "none is saved there yet".to_owned()
            } else {
                format!("saved ones: {}", names.join(", "))
            };
            return Err(format!(
                "no baseline named '{name}' in {} ({have}); save one with --save-baseline {name}",
                dir.display()
            ));
        }
        Err(e) => return Err(format!("cannot read baseline '{name}' from {}: {e}", file.display())),
    };
    let corrupt = |why: String| {
        format!(
            "baseline '{name}' ({}) is not a storm baseline: {why}; save it again with --save-baseline {name}",
            file.display()
        )
    };
    let value: serde_json::Value = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    match value.get("format").and_then(|f| f.as_str()) {
        Some(FORMAT) => {}
        Some(other) => return Err(corrupt(format!("its format is '{other}', this storm reads '{FORMAT}'"))),
        None => return Err(corrupt("it has no format field".to_owned())),
    }
    serde_json::from_value(value).map_err(|e| corrupt(e.to_string()))
}

/// The settings that must agree for two runs to be compared, each as its flag and value.
fn settings_list(s: &Settings, heap_counter: &str, profile: &str) -> Vec<(&'static str, String)> {
    vec![
        ("--frames", s.frames.to_string()),
        ("--rate", s.rate.to_string()),
        ("--turrets", s.turrets.to_string()),
        ("--lifetime", s.lifetime.to_string()),
        ("--payload-share", s.payload_share.to_string()),
        ("--payload-us", s.payload_us.to_string()),
        ("--fps", s.fps.to_string()),
        ("--gc-every", s.gc_every.to_string()),
        ("--purge-budget-us", s.purge_budget_us.to_string()),
        ("--drop-us", s.drop_us.to_string()),
        ("--async-purge", s.async_purge.to_string()),
        ("--incremental-gc-us", s.incremental_gc_us.to_string()),
        ("--early-purge-percent", s.early_purge_percent.to_string()),
        ("--seed", s.seed.to_string()),
        ("--config", s.config.clone().unwrap_or_else(|| "(none)".to_owned())),
        ("heap counter", heap_counter.to_owned()),
        ("build", profile.to_owned()),
    ]
}

/// Checks that `baseline` was made with `run`'s settings, heap counter and build profile.
///
/// # Errors
/// The settings that differ, the baseline's and this run's.
pub fn check(baseline: &Baseline, settings: &Settings, heap_counter: &str, profile: &str) -> Result<(), String> {
    let theirs = settings_list(&baseline.settings, &baseline.heap_counter, &baseline.profile);
    let ours = settings_list(settings, heap_counter, profile);
    let (mut then, mut now) = (Vec::new(), Vec::new());
    for ((flag, a), (_, b)) in theirs.into_iter().zip(ours) {
        if a != b {
            then.push(format!("{flag} {a}"));
            now.push(format!("{flag} {b}"));
        }
    }
    if then.is_empty() {
        return Ok(());
    }
    Err(format!(
        "baseline '{}' was made with other settings ({}; this run: {}); run with the baseline's settings or save a \
         new baseline under another name",
        baseline.name,
        then.join(", "),
        now.join(", "),
    ))
}

/// `run`'s deciding figures as baseline `name`.
pub fn of(run: &Run, name: &str) -> Baseline {
    Baseline {
        format: FORMAT.to_owned(),
        name: name.to_owned(),
        saved_at: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
        version: run.version.to_owned(),
        commit: run.machine.commit.to_owned(),
        machine: run.machine.line(),
        heap_counter: run.heap_counter.to_owned(),
        profile: run.machine.profile.to_owned(),
        settings: run.settings.clone(),
        repeats: run.repeats,
        scenarios: run
            .scenarios
            .iter()
            .map(|s| SavedScenario {
                key: s.key.to_owned(),
                name: s.name.to_owned(),
                figures: verdict::DECIDING.iter().filter_map(|d| verdict::spread(run, s, d.figure)).collect(),
            })
            .collect(),
    }
}

/// Writes `run`'s figures as baseline `name` in `dir` (made if missing) and returns the
/// file. Written beside and renamed over, so a failed write leaves the old one whole.
///
/// # Errors
/// A bad name, or a directory or file that cannot be written.
pub fn save(run: &Run, dir: &Path, name: &str) -> Result<PathBuf, String> {
    let file = path(dir, name)?;
    let json = serde_json::to_string_pretty(&of(run, name)).expect("a baseline serialises");
    let partial = file.with_extension("json.partial");
    std::fs::write(&partial, json + "\n")
        .and_then(|()| std::fs::rename(&partial, &file))
        .map_err(|e| format!("cannot save baseline '{name}' to {}: {e}", file.display()))?;
    Ok(file)
}

/// Makes the baselines directory, so that a run that cannot save its baseline stops before
/// the storm rather than after.
///
/// # Errors
/// A directory that cannot be made.
pub fn prepare_dir(dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot make the baselines directory {}: {e}", dir.display()))
}

/// `run` against `baseline`.
pub fn compare(run: &Run, baseline: &Baseline) -> Comparison {
    let mut changes = Vec::new();
    let mut missing = Vec::new();
    for s in &run.scenarios {
        let Some(saved) = baseline.scenarios.iter().find(|b| b.key == s.key) else {
            missing.push(s.key.to_owned());
            continue;
        };
        for d in &verdict::DECIDING {
            let (Some(after), Some(before)) =
                (verdict::spread(run, s, d.figure), saved.figures.iter().find(|f| f.figure == d.figure))
            else {
                continue;
            };
            changes.push(change(s.key, d, before, &after));
        }
    }
    Comparison {
        baseline: baseline.name.clone(),
        saved_at: baseline.saved_at,
        commit: baseline.commit.clone(),
        repeats: baseline.repeats,
        missing,
        changes,
    }
}

/// How `after` moved from `before`.
fn change(key: &str, d: &verdict::Deciding, before: &Spread, after: &Spread) -> Change {
    let (b, a) = (before.median, after.median);
    let ratio = (b > 0.0).then(|| a / b);
    let spreads = before.values.len() > 1 && after.values.len() > 1;
    let judgement = if a == b {
        "same"
    } else if ratio.is_some_and(|r| (r - 1.0).abs() < NOISE) {
        "noise"
    } else if !spreads {
        if a > b {
            "higher"
        } else {
            "lower"
        }
    } else if after.min > before.max {
        "worse"
    } else if after.max < before.min {
        "better"
    } else {
        "noise"
    };
    let text = match ratio {
        Some(r) => format!("{:+.1}% ({})", (r - 1.0) * 100.0, times(r)),
        None => format!("{} → {}", (d.show)(b), (d.show)(a)),
    };
    Change { key: key.to_owned(), figure: d.figure.to_owned(), before: b, after: a, ratio, judgement, text }
}

/// What a judgement reads as beside a change.
pub fn judgement_text(judgement: &str) -> &'static str {
    match judgement {
        "better" => "better",
        "worse" => "worse",
        "noise" => "within noise",
        "higher" => "higher (one run: no spread)",
        "lower" => "lower (one run: no spread)",
        "same" => "unchanged",
        _ => NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_file_names() {
        let dir = Path::new("/b");
        assert_eq!(path(dir, "main-1.2_x").unwrap(), Path::new("/b/main-1.2_x.json"));
        for bad in ["", "../x", "a/b", ".hidden", "a b", &"x".repeat(65)] {
            assert!(path(dir, bad).is_err(), "{bad:?}");
        }
    }

    fn spread(values: &[f64]) -> Spread {
        Spread::of("frame_p50_us", values.to_vec())
    }

    #[test]
    fn a_change_is_judged_by_the_spreads() {
        let d = verdict::deciding("frame_p50_us").unwrap();
        let judge = |before: &[f64], after: &[f64]| change("box", d, &spread(before), &spread(after)).judgement;
        assert_eq!(judge(&[100.0, 110.0], &[120.0, 130.0]), "worse");
        assert_eq!(judge(&[100.0, 110.0], &[80.0, 90.0]), "better");
        assert_eq!(judge(&[100.0, 110.0], &[105.0, 125.0]), "noise");
        assert_eq!(judge(&[100.0], &[120.0, 130.0]), "higher");
        assert_eq!(judge(&[100.0, 110.0], &[90.0]), "lower");
        assert_eq!(judge(&[100.0, 110.0], &[110.0, 100.0]), "same");
        assert_eq!(judge(&[100.0, 100.2], &[100.9, 101.0]), "noise", "under the 1% threshold");
        assert_eq!(judge(&[100.0], &[100.5]), "noise");
        let c = change("box", d, &spread(&[100.0, 100.0]), &spread(&[112.3, 112.3]));
        assert_eq!(c.text, "+12.3% (1.1 ×)");
        let c = change("box", d, &spread(&[0.0]), &spread(&[4.0]));
        assert_eq!((c.ratio, c.text.as_str()), (None, "0 ns → 4.0 µs"));
    }
}
