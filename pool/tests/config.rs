//! Pool configuration: presets, validation rules, TOML layers and their error messages.

use std::error::Error as _;
use std::path::Path;

use respawn_pool::{ConfigError, ConfigFile, ConfigLayers, Policy, PoolConfig, PoolConfigPatch};
use respawn_testkit::fs::TempDir;

const PRESETS: [(&str, PoolConfig); 4] = [
    ("DEFAULT", PoolConfig::DEFAULT),
    ("PROJECTILES", PoolConfig::PROJECTILES),
    ("EXPENSIVE", PoolConfig::EXPENSIVE),
    ("ON_DEMAND", PoolConfig::ON_DEMAND),
];

/// Validates `config`, expecting an `Invalid` error without file or class; returns its key
/// and its Display.
fn invalid(config: PoolConfig) -> (&'static str, String) {
    let error = config.validate().expect_err("config should be invalid");
    let shown = error.to_string();
    match error {
        ConfigError::Invalid { file: None, class: None, key, .. } => (key, shown),
        other => panic!("expected Invalid without file or class, got {other:?}"),
    }
}

fn assert_mentions(message: &str, parts: &[&str]) {
    for part in parts {
        assert!(message.contains(part), "{message:?} should mention {part:?}");
    }
}

fn parse(name: &str, text: &str) -> ConfigFile {
    ConfigFile::parse(name, text).unwrap_or_else(|error| panic!("{error}"))
}

/// Parses `text`, expecting a `Parse` error; returns its Display.
fn parse_error(text: &str) -> String {
    let error = ConfigFile::parse("conf/pools.toml", text).expect_err("text should not parse");
    let shown = error.to_string();
    match error {
        ConfigError::Parse { file, .. } => assert_eq!(file, Path::new("conf/pools.toml")),
        other => panic!("expected Parse, got {other:?}"),
    }
    assert!(shown.starts_with("conf/pools.toml: "), "{shown:?} should start with the file");
    shown
}

// ---------------------------------------------------------------------------------------
// Presets and validation

#[test]
fn every_preset_validates() {
    for (name, preset) in PRESETS {
        assert!(preset.validate().is_ok(), "{name}: {:?}", preset.validate());
    }
}

#[test]
fn default_is_the_default_preset() {
    assert_eq!(PoolConfig::default(), PoolConfig::DEFAULT);
    assert_eq!(Policy::default(), Policy::Default);
}

#[test]
fn presets_have_their_documented_policies() {
    assert_eq!(PoolConfig::DEFAULT.policy, Policy::Default);
    assert_eq!(PoolConfig::PROJECTILES.policy, Policy::Reuse);
    assert_eq!(PoolConfig::EXPENSIVE.policy, Policy::Purge);
    assert_eq!(PoolConfig::ON_DEMAND.policy, Policy::Reuse);
    assert_eq!(
        (PoolConfig::ON_DEMAND.precreate, PoolConfig::ON_DEMAND.workers),
        (false, 0),
        "ON_DEMAND has no threads"
    );
}

#[test]
fn zero_max_is_invalid() {
    let (key, message) = invalid(PoolConfig { max: 0, ..PoolConfig::DEFAULT });
    assert_eq!(key, "max");
    assert_mentions(&message, &["max is 0", "set max ≥ 1"]);
}

#[test]
fn max_below_capacity_is_invalid() {
    let (key, message) = invalid(PoolConfig { capacity: 100, max: 10, low_watermark: 5, ..PoolConfig::DEFAULT });
    assert_eq!(key, "max");
    assert_eq!(
        message, "max: max (10) is below capacity (100): raise max to at least 100 or lower capacity",
        "without file or class the message starts with the key"
    );
}

#[test]
fn low_watermark_above_max_is_invalid() {
    let (key, message) = invalid(PoolConfig { capacity: 10, max: 100, low_watermark: 101, ..PoolConfig::DEFAULT });
    assert_eq!(key, "low_watermark");
    assert_mentions(&message, &["low_watermark (101)", "max (100)", "lower low_watermark to at most 100", "raise max"]);
}

#[test]
fn precreate_without_workers_is_invalid() {
    let (key, message) = invalid(PoolConfig { workers: 0, ..PoolConfig::DEFAULT });
    assert_eq!(key, "workers");
    assert_mentions(&message, &["at least one worker", "set workers ≥ 1 or precreate = false"]);
}

#[test]
fn too_many_workers_is_invalid() {
    let limit = PoolConfig { workers: PoolConfig::MAX_WORKERS, ..PoolConfig::DEFAULT };
    assert!(limit.validate().is_ok(), "MAX_WORKERS itself is allowed");

    let (key, message) = invalid(PoolConfig { workers: PoolConfig::MAX_WORKERS + 1, ..PoolConfig::DEFAULT });
    assert_eq!(key, "workers");
    assert_mentions(&message, &["workers (65)", "set workers ≤ 64"]);
}

#[test]
fn zero_grow_by_below_max_is_invalid() {
    let (key, message) = invalid(PoolConfig { grow_by: 0, ..PoolConfig::DEFAULT });
    assert_eq!(key, "grow_by");
    assert_mentions(
        &message,
        &["grow_by is 0", "max (65536)", "capacity (256)", "never grow past capacity", "set grow_by ≥ 1 or max = 256"],
    );

    // A pool already at its ceiling, or with no watermark, has nothing to grow into.
    let full = PoolConfig { grow_by: 0, max: 256, ..PoolConfig::DEFAULT };
    assert!(full.validate().is_ok(), "{:?}", full.validate());
    let no_watermark = PoolConfig { grow_by: 0, low_watermark: 0, ..PoolConfig::DEFAULT };
    assert!(no_watermark.validate().is_ok(), "{:?}", no_watermark.validate());
}

#[test]
fn watermark_without_precreate_is_invalid() {
    let (key, message) = invalid(PoolConfig { low_watermark: 16, ..PoolConfig::ON_DEMAND });
    assert_eq!(key, "low_watermark");
    assert_mentions(&message, &["low_watermark (16)", "set precreate = true or low_watermark = 0"]);
}

#[test]
fn low_watermark_at_or_above_capacity_is_invalid() {
    // A preset's absolute watermark kept under a smaller capacity: the pool would start at
    // its watermark and grow at once.
    let (key, message) = invalid(PoolConfig { capacity: 64, ..PoolConfig::DEFAULT });
    assert_eq!(key, "low_watermark");
    assert_mentions(&message, &["low_watermark (64)", "below capacity (64)", "lower low_watermark", "16"]);
    let (key, message) = invalid(PoolConfig { capacity: 16, ..PoolConfig::EXPENSIVE });
    assert_eq!(key, "low_watermark");
    assert_mentions(&message, &["low_watermark (256)", "capacity (16)"]);
    let (key, _) = invalid(PoolConfig { capacity: 1024, ..PoolConfig::PROJECTILES });
    assert_eq!(key, "low_watermark");

    for low_watermark in [0, 16, 63] {
        let below = PoolConfig { capacity: 64, low_watermark, ..PoolConfig::DEFAULT };
        assert!(below.validate().is_ok(), "{low_watermark}: {:?}", below.validate());
    }
    // Capacity 0 precreates nothing: the watermark alone grows the pool, from its first spawn.
    let empty = PoolConfig { capacity: 0, low_watermark: 64, ..PoolConfig::DEFAULT };
    assert!(empty.validate().is_ok(), "{:?}", empty.validate());
}

#[test]
fn a_file_that_lowers_capacity_to_the_watermark_is_refused() {
    let mut layers = ConfigLayers::new();
    layers.push(parse("conf/pools.toml", "[Turret]\ncapacity = 32\n"));
    let mut turret = PoolConfig::DEFAULT;
    let message = layers.apply("Turret", &mut turret).expect_err("low_watermark 64 ≥ capacity 32").to_string();
    assert_mentions(
        &message,
        &["conf/pools.toml", "class Turret, low_watermark", "low_watermark (64)", "capacity (32)"],
    );
}

#[test]
fn empty_precreated_pool_is_valid() {
    let empty = PoolConfig { capacity: 0, ..PoolConfig::DEFAULT };
    assert!(empty.validate().is_ok(), "{:?}", empty.validate());
}

#[test]
fn validation_reports_the_first_rule_broken() {
    // Breaks rule 2 (max < capacity) and rule 4 (precreate without workers).
    let (key, _) = invalid(PoolConfig { capacity: 100, max: 10, low_watermark: 0, workers: 0, ..PoolConfig::DEFAULT });
    assert_eq!(key, "max");
    // Breaks rule 1 (max == 0), and with it rules 2 and 3.
    let (_, message) = invalid(PoolConfig { max: 0, ..PoolConfig::DEFAULT });
    assert_mentions(&message, &["max is 0"]);
}

// ---------------------------------------------------------------------------------------
// Layers

const DEFAULTS: &str = r#"
[Projectile]
capacity = 8192
max = 100000
policy = "default"

[Turret]
max = 64
capacity = 32
low_watermark = 8
"#;

const LINUX: &str = r#"
[Projectile]
workers = 4
policy = "purge"
"#;

#[test]
fn layers_apply_in_order_over_the_registered_config() {
    let mut layers = ConfigLayers::new();
    assert!(layers.is_empty());
    layers.push(parse("conf/pools.toml", DEFAULTS));
    layers.push(parse("conf/pools.linux.toml", LINUX));
    assert!(!layers.is_empty());
    assert_eq!(layers.files().len(), 2);

    let registered = PoolConfig { low_watermark: 512, ..PoolConfig::PROJECTILES };
    let mut projectile = registered;
    layers.apply("Projectile", &mut projectile).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(
        projectile,
        PoolConfig {
            capacity: 8192,                  // defaults
            max: 100_000,                    // defaults
            policy: Policy::Purge,           // platform, over defaults' "default"
            workers: 4,                      // platform
            low_watermark: 512,              // code
            grow_by: registered.grow_by,     // code (preset)
            precreate: registered.precreate, // code (preset)
            idle_trim: None,
        }
    );

    let mut turret = PoolConfig::DEFAULT;
    layers.apply("Turret", &mut turret).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(turret, PoolConfig { max: 64, capacity: 32, low_watermark: 8, ..PoolConfig::DEFAULT });

    let mut untouched = PoolConfig::EXPENSIVE;
    layers.apply("Door", &mut untouched).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(untouched, PoolConfig::EXPENSIVE, "a class no file names keeps its code config");
}

#[test]
fn patch_sets_only_the_keys_it_has() {
    let file = parse("pools.toml", "[Turret]\nprecreate = false\nworkers = 0\nlow_watermark = 0\n");
    let patch = file.get("Turret").expect("Turret patch");
    assert_eq!(
        *patch,
        PoolConfigPatch {
            precreate: Some(false),
            workers: Some(0),
            low_watermark: Some(0),
            ..PoolConfigPatch::default()
        }
    );
    let mut config = PoolConfig::EXPENSIVE;
    patch.apply(&mut config);
    assert_eq!(config, PoolConfig { precreate: false, workers: 0, low_watermark: 0, ..PoolConfig::EXPENSIVE });

    let mut unchanged = PoolConfig::EXPENSIVE;
    PoolConfigPatch::default().apply(&mut unchanged);
    assert_eq!(unchanged, PoolConfig::EXPENSIVE);
}

#[test]
fn file_lists_its_classes() {
    let file = parse("conf/pools.toml", DEFAULTS);
    assert_eq!(file.path(), Path::new("conf/pools.toml"));
    let classes: Vec<&str> = file.classes().map(|(class, _)| class).collect();
    assert_eq!(classes, ["Projectile", "Turret"]);
    assert_eq!(file.get("Turret").and_then(|patch| patch.max), Some(64));
    assert!(file.get("Door").is_none());
}

#[test]
fn layer_that_breaks_the_config_is_named() {
    let mut layers = ConfigLayers::new();
    layers.push(parse("conf/pools.toml", DEFAULTS));
    let mut alone = PoolConfig::PROJECTILES;
    layers.apply("Projectile", &mut alone).expect("the defaults layer alone is valid");

    layers.push(parse("conf/pools.switch.toml", "[Projectile]\nmax = 10\n"));
    let mut config = PoolConfig::PROJECTILES;
    let error = layers.apply("Projectile", &mut config).expect_err("max below capacity");
    assert_eq!(config, PoolConfig::PROJECTILES, "config is unchanged on error");
    assert_eq!(
        error.to_string(),
        "conf/pools.switch.toml: class Projectile, max: max (10) is below capacity (8192): \
         raise max to at least 8192 or lower capacity"
    );
    match error {
        ConfigError::Invalid { file, class, key, .. } => {
            assert_eq!(file.as_deref(), Some(Path::new("conf/pools.switch.toml")));
            assert_eq!(class.as_deref(), Some("Projectile"));
            assert_eq!(key, "max");
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

#[test]
fn invalid_registered_config_is_blamed_on_code() {
    let mut layers = ConfigLayers::new();
    layers.push(parse("conf/pools.toml", DEFAULTS));
    let mut config = PoolConfig { workers: 0, ..PoolConfig::DEFAULT };
    let error = layers.apply("Door", &mut config).expect_err("registered config is invalid");
    match error {
        ConfigError::Invalid { file: None, class: Some(class), key: "workers", .. } => assert_eq!(class, "Door"),
        other => panic!("expected Invalid from code, got {other:?}"),
    }
}

// ---------------------------------------------------------------------------------------
// Parse errors

#[test]
fn negative_number_is_a_parse_error() {
    let message = parse_error("[Projectile]\ncapacity = -1\n");
    assert_mentions(&message, &["line 2", "capacity = -1", "-1"]);
}

#[test]
fn wrong_type_is_a_parse_error() {
    let message = parse_error("[Projectile]\ncapacity = \"many\"\n");
    assert_mentions(&message, &["line 2", "capacity = \"many\"", "invalid type"]);
}

#[test]
fn unknown_policy_is_a_parse_error_listing_the_policies() {
    let message = parse_error("[Projectile]\npolicy = \"recycle\"\n");
    assert_mentions(&message, &["line 2", "policy", "recycle", "default", "purge", "reuse"]);
}

#[test]
fn unknown_key_is_a_parse_error() {
    let message = parse_error("[Projectile]\ncapcity = 3\n");
    assert_mentions(&message, &["line 2", "capcity", "capacity"]);
}

#[test]
fn top_level_value_is_a_parse_error() {
    let message = parse_error("capacity = 3\n");
    assert_mentions(&message, &["line 1", "capacity = 3", "class header such as [Projectile]"]);
}

#[test]
fn malformed_toml_is_a_parse_error() {
    let message = parse_error("[Projectile\ncapacity = 3\n");
    assert_mentions(&message, &["line 1"]);
    let message = parse_error("[Projectile]\ncapacity = 3\ncapacity = 4\n");
    assert_mentions(&message, &["line 3", "duplicate key"]);
}

// ---------------------------------------------------------------------------------------
// Class names

#[test]
fn unknown_class_is_named_with_the_known_ones() {
    let mut layers = ConfigLayers::new();
    layers.push(parse("conf/pools.toml", DEFAULTS));
    layers.check_classes(["Turret", "Projectile", "Door"]).expect("every class is known");

    layers.push(parse("conf/pools.linux.toml", "[Projetcile]\nworkers = 2\n"));
    let error = layers.check_classes(["Turret", "Projectile"]).expect_err("misspelt class");
    assert_eq!(
        error.to_string(),
        "conf/pools.linux.toml: unknown class Projetcile (the table [Projetcile]); classes registered in code: Projectile, Turret"
    );
    match error {
        ConfigError::UnknownClass { file, class, known } => {
            assert_eq!(file, Path::new("conf/pools.linux.toml"));
            assert_eq!(class, "Projetcile");
            assert_eq!(known, ["Projectile", "Turret"]);
        }
        other => panic!("expected UnknownClass, got {other:?}"),
    }

    let error = layers.check_classes([]).expect_err("nothing registered");
    assert_mentions(
        &error.to_string(),
        &["conf/pools.toml: unknown class Projectile (the table [Projectile])", "no classes are registered"],
    );
}

// ---------------------------------------------------------------------------------------
// Files on disk

#[test]
fn missing_file_is_an_io_error_naming_it() {
    let dir = TempDir::new("pool-config-missing");
    let path = dir.path().join("pools.toml");
    let error = ConfigFile::load(&path).expect_err("no such file");
    assert!(error.source().is_some(), "the io error is the source");
    let shown = error.to_string();
    assert!(shown.starts_with(&format!("{}: cannot read: ", path.display())), "{shown:?}");
    match error {
        ConfigError::Io { file, error } => {
            assert_eq!(file, path);
            assert_eq!(error.kind(), std::io::ErrorKind::NotFound);
        }
        other => panic!("expected Io, got {other:?}"),
    }

    let mut layers = ConfigLayers::new();
    assert!(layers.push_file(&path).is_err());
    assert!(layers.is_empty(), "nothing is pushed on error");
}

#[test]
fn push_file_loads_and_pushes() {
    let dir = TempDir::new("pool-config-push-file");
    let path = dir.write("pools.toml", DEFAULTS);
    let mut layers = ConfigLayers::new();
    layers.push_file(&path).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(layers.files().len(), 1);
    assert_eq!(layers.files()[0].path(), path);

    let mut turret = PoolConfig::DEFAULT;
    layers.apply("Turret", &mut turret).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!(turret.max, 64);
}

#[test]
fn load_reports_parse_errors_with_the_path() {
    let dir = TempDir::new("pool-config-load-parse");
    let path = dir.write("pools.toml", "[Turret]\nmax = -3\n");
    let error = ConfigFile::load(&path).expect_err("negative max");
    assert!(matches!(&error, ConfigError::Parse { file, .. } if *file == path), "{error:?}");
    assert!(error.to_string().starts_with(&format!("{}: ", path.display())));
}

#[test]
fn platform_path_puts_the_os_before_the_extension() {
    assert_eq!(ConfigLayers::platform_path(Path::new("conf/pools.toml"), "linux"), Path::new("conf/pools.linux.toml"));
    assert_eq!(ConfigLayers::platform_path(Path::new("pools.toml"), "windows"), Path::new("pools.windows.toml"));
    assert_eq!(ConfigLayers::platform_path(Path::new("conf/pools"), "macos"), Path::new("conf/pools.macos"));
}

#[test]
fn push_platform_pushes_the_file_for_this_os() {
    let dir = TempDir::new("pool-config-platform");
    let base = dir.write("pools.toml", DEFAULTS);
    let platform = dir.write(&format!("pools.{}.toml", std::env::consts::OS), LINUX);

    let mut layers = ConfigLayers::new();
    layers.push_file(&base).unwrap_or_else(|error| panic!("{error}"));
    assert!(layers.push_platform(&base).unwrap_or_else(|error| panic!("{error}")));
    let paths: Vec<&Path> = layers.files().iter().map(ConfigFile::path).collect();
    assert_eq!(paths, [base.as_path(), platform.as_path()]);

    let mut projectile = PoolConfig::PROJECTILES;
    layers.apply("Projectile", &mut projectile).unwrap_or_else(|error| panic!("{error}"));
    assert_eq!((projectile.workers, projectile.policy), (4, Policy::Purge));
}

#[test]
fn push_platform_without_a_platform_file_pushes_nothing() {
    let dir = TempDir::new("pool-config-no-platform");
    let base = dir.write("pools.toml", DEFAULTS);
    let mut layers = ConfigLayers::new();
    assert!(!layers.push_platform(&base).unwrap_or_else(|error| panic!("{error}")));
    assert!(layers.is_empty());
}

#[test]
fn broken_platform_file_is_an_error() {
    let dir = TempDir::new("pool-config-broken-platform");
    let base = dir.write("pools.toml", DEFAULTS);
    let platform = dir.write(&format!("pools.{}.toml", std::env::consts::OS), "[Projectile]\nworkers = \"two\"\n");
    let mut layers = ConfigLayers::new();
    let error = layers.push_platform(&base).expect_err("platform file does not parse");
    assert!(matches!(&error, ConfigError::Parse { file, .. } if *file == platform), "{error:?}");
    assert!(layers.is_empty());
}

// ---------------------------------------------------------------------------------------
// Policy names

#[test]
fn policy_names_round_trip_ignoring_case() {
    for policy in Policy::ALL {
        let name = policy.name();
        assert_eq!(policy.to_string(), name);
        assert_eq!(name.parse::<Policy>(), Ok(policy));
        assert_eq!(name.to_uppercase().parse::<Policy>(), Ok(policy));
        let capitalised = format!("{}{}", name[..1].to_uppercase(), &name[1..]);
        assert_eq!(capitalised.parse::<Policy>(), Ok(policy));
    }
    assert_eq!(Policy::ALL.map(Policy::name), ["default", "purge", "reuse"]);
}

#[test]
fn unknown_policy_name_lists_the_valid_ones() {
    for bad in ["recycle", "", "reuse ", "pool"] {
        let error = bad.parse::<Policy>().expect_err("not a policy");
        assert_eq!(error.0, bad);
        assert_mentions(&error.to_string(), &["unknown policy", "default, purge, reuse"]);
    }
}

#[test]
fn policy_names_match_the_file_format() {
    for policy in Policy::ALL {
        let file = parse("pools.toml", &format!("[Projectile]\npolicy = \"{policy}\"\n"));
        assert_eq!(file.get("Projectile").and_then(|patch| patch.policy), Some(policy));
    }
}

#[test]
fn idle_trim_is_set_in_milliseconds_and_zero_turns_it_off() {
    use std::time::Duration;
    let file = parse("pools.toml", "[Projectile]\nidle_trim_ms = 5000\n[Turret]\nidle_trim_ms = 0\n");
    let mut projectile = PoolConfig::PROJECTILES;
    file.get("Projectile").unwrap().apply(&mut projectile);
    assert_eq!(projectile.idle_trim, Some(Duration::from_secs(5)));
    let mut turret = PoolConfig { idle_trim: Some(Duration::from_secs(1)), ..PoolConfig::DEFAULT };
    file.get("Turret").unwrap().apply(&mut turret);
    assert_eq!(turret.idle_trim, None, "0 turns it off");
    assert!(parse_error("[Projectile]\nidle_trim_ms = -1\n").contains("idle_trim_ms"));
}

#[test]
fn an_idle_trim_below_a_millisecond_is_invalid() {
    use std::time::Duration;
    let (key, message) = invalid(PoolConfig { idle_trim: Some(Duration::from_micros(10)), ..PoolConfig::DEFAULT });
    assert_eq!(key, "idle_trim");
    assert_mentions(&message, &["idle_trim (10µs) is below a millisecond", "set idle_trim to None"]);
}
