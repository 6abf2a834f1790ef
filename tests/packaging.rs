//! What a game that adds `respawn` compiles: the library's normal dependency tree. The
//! storm's crates (clap, indicatif, plotters, serde_json, dhat) belong to the
//! `respawn-storm` member and the bench peers (criterion, slab, slotmap, hecs, rust-gc, the
//! object pools) to `respawn-benches`; neither may leak into the library's tree. And what a
//! program that wants only the standalone pools compiles: `respawn-pool` without its
//! `world` feature, which must not pull in the arena, the collector or rayon.

use std::collections::BTreeSet;
use std::process::Command;

/// The crates in `cargo tree -e normal` of the package `package`, with `extra` arguments
/// (features): each crate's name, once.
fn normal_dependencies(package: &str, extra: &[&str]) -> BTreeSet<String> {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "-p", package, "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .args(extra)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8(output.stdout).expect("cargo prints UTF-8");
    tree.lines().filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect()
}

#[test]
fn the_library_pulls_in_no_cli_plotting_or_bench_crate() {
    let crates = normal_dependencies("respawn", &[]);
    // The tree was read: the library's own crates are in it.
    for own in ["respawn", "respawn-allocator", "respawn-arena", "respawn-gc", "respawn-pool", "bumpalo"] {
        assert!(crates.contains(own), "{own} missing from the tree: {crates:?}");
    }
    let storm = ["respawn-storm", "clap", "indicatif", "plotters", "serde_json", "dhat"];
    let benches = ["respawn-benches", "criterion", "slab", "slotmap", "hecs", "gc", "object-pool", "sharded-slab"];
    let leaked: Vec<_> = storm.iter().chain(&benches).filter(|name| crates.contains(**name)).collect();
    assert!(leaked.is_empty(), "the library's normal dependencies include {leaked:?}: {crates:?}");
}

#[test]
fn the_standalone_pools_pull_in_no_arena_collector_or_rayon() {
    let crates = normal_dependencies("respawn-pool", &["--no-default-features"]);
    // The tree was read: the pool and the allocator it stands on are in it.
    for own in ["respawn-pool", "respawn-allocator"] {
        assert!(crates.contains(own), "{own} missing from the tree: {crates:?}");
    }
    let world = ["respawn-arena", "respawn-gc", "respawn-gc-derive", "rayon", "rayon-core"];
    let leaked: Vec<_> = world.iter().filter(|name| crates.contains(**name)).collect();
    assert!(leaked.is_empty(), "respawn-pool without `world` depends on {leaked:?}: {crates:?}");
    // And the feature is what brings them: the default tree has them.
    let with_world = normal_dependencies("respawn-pool", &[]);
    for crate_name in ["respawn-arena", "respawn-gc", "rayon"] {
        assert!(with_world.contains(crate_name), "{crate_name} missing from the default tree: {with_world:?}");
    }
}
