//! Pool configuration through the World builder: code configs, then a defaults file, then
//! a platform file; every bad value is refused with a message naming the file and key.

use std::path::PathBuf;

use respawn::{Policy, PoolConfig, PoolError, World};
use respawn_testkit::drops::Drops;
use respawn_testkit::fs::TempDir;
use respawn_testkit::world::Shot;

fn build(config: PoolConfig, files: &[PathBuf], platform: Option<&PathBuf>) -> Result<World, PoolError> {
    let drops = Drops::default();
    let mut builder = World::builder().pool_with::<Shot>(config, move || Shot::new(&drops));
    for f in files {
        builder = builder.config_file(f);
    }
    if let Some(p) = platform {
        builder = builder.platform_config(p);
    }
    builder.build()
}

#[test]
fn files_layer_over_the_code_config_in_order() {
    let dir = TempDir::new("layers");
    let defaults = dir.write("pools.toml", "[Shot]\ncapacity = 8\nmax = 100\npolicy = \"purge\"\n");
    dir.write(&format!("pools.{}.toml", std::env::consts::OS), "[Shot]\npolicy = \"reuse\"\nworkers = 2\n");
    let code = PoolConfig {
        capacity: 4,
        max: 50,
        low_watermark: 2,
        grow_by: 3,
        policy: Policy::Default,
        precreate: true,
        workers: 1,
        idle_trim: None,
    };
    let world = build(code, &[], Some(&defaults)).unwrap();
    let merged = *world.pools().config::<Shot>().unwrap();
    assert_eq!(
        merged,
        PoolConfig {
            capacity: 8,
            max: 100,
            low_watermark: 2,
            grow_by: 3,
            policy: Policy::Reuse,
            precreate: true,
            workers: 2,
            idle_trim: None,
        }
    );
    // Without the platform layer, the defaults file alone.
    let world = build(code, &[defaults], None).unwrap();
    let merged = *world.pools().config::<Shot>().unwrap();
    assert_eq!((merged.policy, merged.workers, merged.capacity), (Policy::Purge, 1, 8));
}

#[test]
fn bad_configuration_is_refused_naming_file_class_and_key() {
    let dir = TempDir::new("bad");
    let code = PoolConfig::DEFAULT;
    let cases = [
        (
            "unknown.toml",
            "[Shto]\ncapacity = 3\n",
            vec!["unknown.toml", "unknown class Shto (the table [Shto])", "Shot"],
        ),
        ("negative.toml", "[Shot]\ncapacity = -1\n", vec!["negative.toml", "capacity"]),
        ("policy.toml", "[Shot]\npolicy = \"recycle\"\n", vec!["policy.toml", "recycle", "reuse"]),
        ("key.toml", "[Shot]\ncapcity = 3\n", vec!["key.toml", "capcity"]),
        (
            "range.toml",
            "[Shot]\nmax = 10\ncapacity = 100\n",
            vec!["range.toml", "class Shot, max", "below capacity (100)"],
        ),
        ("workers.toml", "[Shot]\nworkers = 0\n", vec!["workers.toml", "class Shot, workers", "precreate"]),
    ];
    for (file, text, says) in cases {
        let path = dir.write(file, text);
        let message = build(code, &[path], None).unwrap_err().to_string();
        for s in says {
            assert!(message.contains(s), "{file}: {message:?} should mention {s:?}");
        }
    }
    let missing = build(code, &[dir.path().join("missing.toml")], None).unwrap_err().to_string();
    assert!(missing.contains("missing.toml") && missing.contains("cannot read"), "{missing}");
    // A bad config in code names the class and key, and no file.
    let bad = PoolConfig { max: 1, capacity: 2, ..PoolConfig::DEFAULT };
    let message = build(bad, &[], None).unwrap_err().to_string();
    assert!(message.starts_with("class Shot, max:"), "{message}");
}
