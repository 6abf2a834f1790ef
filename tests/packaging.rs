//! What a game that adds `respawn` compiles: the library's normal dependency tree. The
//! storm's crates (clap, indicatif, plotters, serde_json, dhat) belong to the
//! `respawn-storm` member and the bench peers (criterion, slab, slotmap, hecs, rust-gc, the
//! object pools) to `respawn-benches`; neither may leak into the library's tree.

use std::collections::BTreeSet;
use std::process::Command;

#[test]
fn the_library_pulls_in_no_cli_plotting_or_bench_crate() {
    let output = Command::new(env!("CARGO"))
        .args(["tree", "-p", "respawn", "-e", "normal", "--prefix", "none", "--format", "{p}"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo runs");
    assert!(output.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&output.stderr));
    let tree = String::from_utf8(output.stdout).expect("cargo prints UTF-8");
    let crates: BTreeSet<&str> = tree.lines().filter_map(|line| line.split_whitespace().next()).collect();
    // The tree was read: the library's own crates are in it.
    for own in ["respawn", "respawn-allocator", "respawn-arena", "respawn-gc", "respawn-pool", "bumpalo"] {
        assert!(crates.contains(own), "{own} missing from the tree: {crates:?}");
    }
    let storm = ["respawn-storm", "clap", "indicatif", "plotters", "serde_json", "dhat"];
    let benches = ["respawn-benches", "criterion", "slab", "slotmap", "hecs", "gc", "object-pool", "sharded-slab"];
    let leaked: Vec<_> = storm.iter().chain(&benches).filter(|name| crates.contains(*name)).collect();
    assert!(leaked.is_empty(), "the library's normal dependencies include {leaked:?}: {crates:?}");
}
