//! Which commit a checkout is at, and which files move when it moves: shared by the build
//! script (`storm/build.rs`) and its test (`storm/tests/build_label.rs`).
//!
//! Git is asked, not the `.git` directory guessed at: in a linked worktree `.git` is a file
//! pointing elsewhere, `HEAD` lives in the worktree's own git dir
//! (`git rev-parse --git-dir`) and the branch refs in the shared one
//! (`git rev-parse --git-common-dir`). A directory git does not know (a source tarball) or
//! a machine without git gives the label `unknown` and nothing to watch.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A checkout's commit and the files whose change means it moved.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Checkout {
    /// `git rev-parse --short=12 HEAD`, or `unknown`.
    pub commit: String,
    /// Files and directories that change when HEAD moves: the git dir's `HEAD` (a checkout,
    /// or a commit on a detached HEAD), the branch's loose ref (a commit on the branch),
    /// `packed-refs` (a packed branch) and, while the branch is packed only, the directory
    /// its loose ref will be written to. Every path exists when returned: Cargo reruns a
    /// build script on every build while a watched path is missing.
    pub watch: Vec<PathBuf>,
}

/// The checkout `dir` is in, asking the `git` program `git` (normally `"git"`).
pub fn checkout(dir: &Path, git: &OsStr) -> Checkout {
    let ask = |args: &[&str]| -> Option<String> {
        let out = Command::new(git).arg("-C").arg(dir).args(args).output().ok()?;
        let text = String::from_utf8(out.stdout).ok()?;
        let text = text.trim();
        (out.status.success() && !text.is_empty()).then(|| text.to_owned())
    };
    let Some(commit) = ask(&["rev-parse", "--short=12", "HEAD"]) else {
        return Checkout { commit: "unknown".to_owned(), watch: Vec::new() };
    };
    // Relative answers are relative to `dir`; joining an absolute one keeps it as it is.
    let Some(git_dir) = ask(&["rev-parse", "--git-dir"]).map(|d| dir.join(d)) else {
        return Checkout { commit, watch: Vec::new() };
    };
    let common = ask(&["rev-parse", "--git-common-dir"]).map_or_else(|| git_dir.clone(), |d| dir.join(d));
    let mut watch = vec![git_dir.join("HEAD")];
    // On a branch, its ref; on a detached HEAD, HEAD itself holds the commit.
    if let Some(branch) = ask(&["symbolic-ref", "-q", "HEAD"]) {
        let loose = common.join(&branch);
        if loose.is_file() {
            watch.push(loose);
        } else if let Some(parent) =
            loose.ancestors().skip(1).take_while(|p| p.starts_with(common.join("refs"))).find(|p| p.is_dir())
        {
            // Packed: the next commit writes the loose ref here.
            watch.push(parent.to_path_buf());
        }
        watch.push(common.join("packed-refs"));
        // Repositories with the reftable backend keep every ref there.
        watch.push(common.join("reftable"));
    }
    watch.retain(|p| p.exists());
    watch.dedup();
    Checkout { commit, watch }
}
