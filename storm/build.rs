//! Records the commit the storm is built from (`RESPAWN_COMMIT`), for its report's header:
//! `git rev-parse --short=12 HEAD` of the checkout, or `unknown` where git is absent or the
//! sources are not a checkout (a tarball). Setting `RESPAWN_COMMIT` in the build's
//! environment labels such a build by hand.
//!
//! The build script runs again when HEAD moves, in a plain clone and in a linked worktree
//! alike: it watches the files git itself names (see `build/git.rs`).

#[path = "build/git.rs"]
mod git;

use std::path::Path;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/git.rs");
    println!("cargo:rerun-if-env-changed=RESPAWN_COMMIT");
    if let Some(commit) = std::env::var("RESPAWN_COMMIT").ok().filter(|c| !c.trim().is_empty()) {
        println!("cargo:rustc-env=RESPAWN_COMMIT={}", commit.trim());
        return;
    }
    let dir = std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| Path::new(".").to_path_buf(), Into::into);
    let checkout = git::checkout(&dir, "git".as_ref());
    println!("cargo:rustc-env=RESPAWN_COMMIT={}", checkout.commit);
    for path in &checkout.watch {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}
