#!/usr/bin/env bash
# Runs the tests under AddressSanitizer (with slab poisoning) and ThreadSanitizer (nightly).
#
#   scripts/sanitizers.sh          both
#   scripts/sanitizers.sh asan     AddressSanitizer only (also LeakSanitizer, on by default)
#   scripts/sanitizers.sh tsan     ThreadSanitizer only
#
# ASan knows only the system allocator's blocks; respawn carves its own slabs out of mmap,
# so `--cfg respawn_poison` makes the slabs poison free cells and unpoison handed-out ones
# (allocator/src/poison.rs). arena/tests/poison.rs proves a use-after-free inside a slab is
# reported. TSan needs the standard library instrumented too, hence -Zbuild-std.
#
# Left out of both: the criterion benches (timing), the CLI tests (they run the storm for
# seconds; the main job is the examples' and the tests' code), and the dhat tests (dhat
# replaces the global allocator and records a backtrace per allocation).
set -euo pipefail
cd "$(dirname "$0")/.."
only="${1:-all}"
target="$(rustc -vV | sed -n 's/^host: //p')"
if ! rustup component list --toolchain nightly --installed | grep -q '^rust-src'; then
  rustup component add --toolchain nightly rust-src
fi

# Every crate's library and test binaries, but for the ones named above.
run() { # run FLAGS... : the tests of each crate with the current RUSTFLAGS
  cargo +nightly test "$@" --target "$target" -p respawn-allocator -p respawn-arena --lib --tests
  cargo +nightly test "$@" --target "$target" -p respawn-pool --lib --test config --test standalone --test shared --test trim
  cargo +nightly test "$@" --target "$target" -p respawn-gc --lib --test gc --test model
  cargo +nightly test "$@" --target "$target" -p respawn --lib --test world --test world_model --test precreation \
    --test shutdown --test world_config --test priority --test stress --test misuse --test trim
}

if [[ $only == all || $only == asan ]]; then
  echo "=== AddressSanitizer with slab poisoning (--cfg respawn_poison)"
  RUSTFLAGS="-Zsanitizer=address --cfg respawn_poison" \
    ASAN_OPTIONS="detect_leaks=1:detect_stack_use_after_return=1" \
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/asan}" run
fi
if [[ $only == all || $only == tsan ]]; then
  echo "=== ThreadSanitizer (-Zbuild-std)"
  RUSTFLAGS="-Zsanitizer=thread" TSAN_OPTIONS="halt_on_error=1" \
    CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/tsan}" run -Zbuild-std
fi
echo "=== sanitizers: clean"
