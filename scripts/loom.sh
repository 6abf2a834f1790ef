#!/usr/bin/env bash
# Loom models of respawn's lock-free hand-offs. Builds into target/loom so that the
# `--cfg loom` build does not invalidate the ordinary one.
set -euo pipefail
cd "$(dirname "$0")/.."
export RUSTFLAGS="${RUSTFLAGS:-} --cfg loom"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-2}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/loom}"
cargo test --release -p respawn-allocator --lib -- loom "$@"
cargo test --release -p respawn-arena --lib -- loom "$@"
cargo test --release -p respawn-gc --lib -- loom "$@"
cargo test --release -p respawn-pool --lib -- loom "$@"
