#!/usr/bin/env bash
# Runs the unsafe core's tests under Miri (nightly). Loops scale down under cfg(miri).
# The allocator and arena keep one `std::alloc` allocation per slab under Miri (see
# allocator/src/os.rs), so an access that strays out of a slab is reported.
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup component add --toolchain nightly miri rust-src
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
# Strict provenance for the allocator (no rayon); the arena uses rayon in par_tick, whose
# thread pool needs Tree Borrows' more permissive aliasing model.
MIRIFLAGS="-Zmiri-strict-provenance ${MIRIFLAGS:-}" cargo +nightly miri test -p respawn-allocator "$@"
MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-tree-borrows ${MIRIFLAGS:-}" cargo +nightly miri test -p respawn-arena "$@"
