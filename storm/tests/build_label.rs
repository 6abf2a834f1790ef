//! The build script's commit label (`storm/build/git.rs`): the right commit, and watched
//! files that exist and move with HEAD, in a plain clone, a linked worktree (where `.git`
//! is a file), with packed refs, on a detached HEAD; `unknown` outside git.

#[path = "../build/git.rs"]
mod git;

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A scratch directory of this test's own.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("respawn-build-label-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs git in `dir` (no global or system config; a fixed author) and returns its output.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=storm", "-c", "user.email=storm@example.invalid", "-c", "commit.gpgsign=false"])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

fn has_git() -> bool {
    Command::new("git").arg("--version").output().is_ok_and(|o| o.status.success())
}

/// A repository with one commit on `main`.
fn repo(dir: &Path) {
    git_in(dir, &["init", "-q", "-b", "main"]);
    commit(dir, "one");
}

fn commit(dir: &Path, message: &str) {
    git_in(dir, &["commit", "-q", "--allow-empty", "-m", message]);
}

fn label(dir: &Path) -> git::Checkout {
    git::checkout(dir, OsStr::new("git"))
}

fn head(dir: &Path) -> String {
    git_in(dir, &["rev-parse", "--short=12", "HEAD"])
}

#[test]
fn a_plain_clone_watches_head_and_the_branch_ref() {
    if !has_git() {
        return without_git();
    }
    let dir = scratch("plain");
    repo(&dir);
    let first = label(&dir);
    assert_eq!(first.commit, head(&dir));
    let dot_git = std::fs::canonicalize(dir.join(".git")).unwrap();
    let canon: Vec<PathBuf> = first.watch.iter().map(|p| std::fs::canonicalize(p).unwrap()).collect();
    assert!(canon.contains(&dot_git.join("HEAD")), "{:?}", first.watch);
    assert!(canon.contains(&dot_git.join("refs/heads/main")), "{:?}", first.watch);
    commit(&dir, "two");
    let second = label(&dir);
    assert_ne!(second.commit, first.commit, "a commit moves the label");
    assert_eq!(second.commit, head(&dir));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_linked_worktree_watches_its_own_head_and_the_shared_ref() {
    if !has_git() {
        return without_git();
    }
    let dir = scratch("worktree");
    let main = dir.join("main");
    std::fs::create_dir_all(&main).unwrap();
    repo(&main);
    let wt = dir.join("wt");
    git_in(&main, &["worktree", "add", "-q", "-b", "side", wt.to_str().unwrap()]);
    assert!(wt.join(".git").is_file(), "in a linked worktree .git is a file");
    commit(&wt, "on the side");

    let before = label(&wt);
    assert_eq!(before.commit, head(&wt));
    assert_ne!(before.commit, head(&main), "the worktree's own commit, not the main checkout's");
    let common = std::fs::canonicalize(main.join(".git")).unwrap();
    let canon: Vec<PathBuf> = before.watch.iter().map(|p| std::fs::canonicalize(p).unwrap()).collect();
    assert!(canon.contains(&common.join("worktrees/wt/HEAD")), "{:?}", before.watch);
    assert!(canon.contains(&common.join("refs/heads/side")), "{:?}", before.watch);
    assert!(!canon.contains(&common.join("HEAD")), "the main checkout's HEAD is not this one's");

    // A commit in the worktree rewrites the watched ref and moves the label.
    let watched_ref = common.join("refs/heads/side");
    let old = std::fs::read_to_string(&watched_ref).unwrap();
    commit(&wt, "again");
    assert_ne!(std::fs::read_to_string(&watched_ref).unwrap(), old);
    assert_eq!(label(&wt).commit, head(&wt));
    assert_ne!(label(&wt).commit, before.commit);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn packed_refs_and_a_detached_head_are_watched_where_they_live() {
    if !has_git() {
        return without_git();
    }
    let dir = scratch("packed");
    repo(&dir);
    git_in(&dir, &["pack-refs", "--all"]);
    assert!(!dir.join(".git/refs/heads/main").exists(), "the branch is packed");
    let packed = label(&dir);
    assert_eq!(packed.commit, head(&dir));
    let dot_git = std::fs::canonicalize(dir.join(".git")).unwrap();
    let canon: Vec<PathBuf> = packed.watch.iter().map(|p| std::fs::canonicalize(p).unwrap()).collect();
    assert!(canon.contains(&dot_git.join("packed-refs")), "{:?}", packed.watch);
    assert!(canon.contains(&dot_git.join("refs/heads")), "where the next commit writes the ref: {:?}", packed.watch);

    commit(&dir, "two");
    git_in(&dir, &["checkout", "-q", "--detach", "HEAD~1"]);
    let detached = label(&dir);
    assert_eq!(detached.commit, head(&dir));
    assert!(detached.watch.iter().any(|p| p.ends_with("HEAD")), "{:?}", detached.watch);
    for path in packed.watch.iter().chain(&detached.watch) {
        assert!(path.exists(), "a missing watched path reruns the build script every time: {path:?}");
    }
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn outside_git_the_label_is_unknown_and_nothing_is_watched() {
    // No git program at all.
    let dir = scratch("nogit");
    let none = git::checkout(&dir, OsStr::new("respawn-no-such-git-program"));
    assert_eq!(none, git::Checkout { commit: "unknown".to_owned(), watch: Vec::new() });
    // A directory git does not know (a tarball), when the scratch dir is outside any repo.
    if has_git() && !Command::new("git").arg("-C").arg(&dir).arg("rev-parse").output().unwrap().status.success() {
        assert_eq!(label(&dir), none);
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Without git, every directory is `unknown`.
fn without_git() {
    let dir = scratch("absent");
    assert_eq!(label(&dir).commit, "unknown");
    std::fs::remove_dir_all(dir).unwrap();
}
