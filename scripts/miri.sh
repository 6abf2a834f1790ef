#!/usr/bin/env bash
# Runs the unsafe core's tests under Miri (nightly). Loops scale down under cfg(miri).
# The allocator and arena keep one `std::alloc` allocation per slab under Miri (see
# allocator/src/os.rs), so an access that strays out of a slab is reported.
#
#   scripts/miri.sh            all passes
#   scripts/miri.sh arena      only the arena's passes (likewise: allocator, gc, pool, world)
#   scripts/miri.sh quick      CI's short run: the allocator's tests, the ticks that read
#                              through a View, and the World's misuse and shutdown tests
#                              (every layer, every policy, workers)
set -euo pipefail
cd "$(dirname "$0")/.."
if ! cargo +nightly miri --version >/dev/null 2>&1; then
  rustup component add --toolchain nightly miri rust-src
fi
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target/miri}"
only="${1:-all}"

# Our own code runs under -Zmiri-strict-provenance. rayon (par_tick) cannot: its
# crossbeam-epoch casts integers to pointers, which strict provenance rejects. So the
# par_tick tests run in a pass of their own, under Tree Borrows with permissive provenance,
# and with -Zmiri-ignore-leaks. Their threads are joined (the arena's tests run on a rayon
# pool joined through its spawn handler, the collector's on `GcSettings::threads`; none
# starts rayon's global pool), but crossbeam-epoch, under rayon's deques, keeps each
# thread's record in a global collector linked through integer-tagged pointers that Miri
# cannot follow, and reports those records as leaked (152- and 384-byte blocks allocated in
# crossbeam_epoch::atomic). Only these passes ignore leaks.
RAYON_TESTS=(par_tick small_slabs_tick)
skip=(); for t in "${RAYON_TESTS[@]}"; do skip+=(--skip "$t"); done

if [[ $only == all || $only == allocator || $only == quick ]]; then
  echo "=== miri: respawn-allocator (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-allocator
fi
if [[ $only == all || $only == arena ]]; then
  echo "=== miri: respawn-arena without rayon (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-arena -- "${skip[@]}"
  echo "=== miri: respawn-arena par_tick tests (tree borrows; rayon needs permissive provenance)"
  for t in "${RAYON_TESTS[@]}"; do
    MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p respawn-arena --test arena -- "$t"
  done
  MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p respawn-arena --doc par_tick_chunks
fi
if [[ $only == all || $only == arena || $only == quick ]]; then
  # The split borrow of a tick that reads the rest of the arena: `&mut` objects of the
  # ticking class beside `&` objects of the others, never the same one.
  echo "=== miri: ticks reading through a View (strict provenance; the parallel one under tree borrows)"
  if [[ $only == quick ]]; then # under `all` and `arena`, the arena pass above ran these
    MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-arena --test view -- --skip par_tick
  fi
  MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p respawn-arena --test view -- par_tick
fi
if [[ $only == all || $only == gc ]]; then
  # The collector on small graphs. Single-threaded collections touch no rayon; the tests
  # that build a rayon pool (parallel = serial, the model test) go to the Tree Borrows pass.
  # The dhat test is left out: its backtrace capture per allocation is too slow under Miri.
  GC_RAYON=(
    parallel_and_single_threaded_collections_keep_the_same_objects
    a_cluster_of_leaf_objects_is_reached_whole
    an_object_kept_only_by_a_referencer_survives_until_the_referencer_goes
    a_heap_with_threads_of_its_own_works_on_them_and_joins_them
  )
  skip=(); for t in "${GC_RAYON[@]}"; do skip+=(--skip "$t"); done
  echo "=== miri: respawn-gc single-threaded (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-gc --test gc -- "${skip[@]}"
  echo "=== miri: respawn-gc parallel mark and model test (tree borrows)"
  # (The threads test reads /proc for its threads' names; under isolation that read fails,
  # as on a system without /proc, and the test skips the names.)
  for t in "${GC_RAYON[@]}"; do
    MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks -Zmiri-isolation-error=warn-nobacktrace" \
      cargo +nightly miri test -p respawn-gc --test gc -- --exact "$t"
  done
  MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p respawn-gc --test model
  echo "=== miri: respawn-gc purge thread, scaled down (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-gc --test async_purge
fi
# The pools and the World run worker threads that park (std's park_timeout, unparked by the
# game thread) and share a few locks; under Miri the sync shim (allocator/src/sync.rs) gives
# them std's Mutex, which strict provenance accepts (parking_lot's queue casts integers to
# pointers). Clocks need no flag: Instant, sleep and park_timeout run on Miri's virtual clock
# under isolation. A small World's
# collection stays on the calling thread (rayon only for tables bigger than one task), so
# these passes touch no rayon. The config tests read TOML files: isolation is lifted there.
if [[ $only == all || $only == pool ]]; then
  echo "=== miri: respawn-pool unit tests and doctests (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-pool --lib
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-pool --doc
  echo "=== miri: respawn-pool configuration files (strict provenance, file system allowed)"
  MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-disable-isolation" cargo +nightly miri test -p respawn-pool --test config
  echo "=== miri: standalone Pool, its trims and Shared/WeakShared, scaled down (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-pool --test standalone --test shared --test trim
  if [[ $only == pool ]]; then # under `all`, the arena pass already runs it
    echo "=== miri: respawn-arena pool APIs (strict provenance)"
    MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn-arena --test pooling
  fi
fi
if [[ $only == all || $only == world || $only == quick ]]; then
  echo "=== miri: respawn misuse and shutdown with objects in every state (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn --test misuse --test shutdown
fi
if [[ $only == all || $only == world ]]; then
  echo "=== miri: respawn World cycles, async purge, composites, the stress test and trims, scaled down (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn --test world --test async_purge --test composite --test stress --test trim
  # Commands from inside a tick: the spawn closures kept in a bump and read or dropped once.
  # The tests that run par_tick_with (rayon) go to a Tree Borrows pass, as the arena's do.
  COMMANDS_RAYON=(par_tick_with a_panic_in_the_tick commands_match_a_model)
  skip=(); for t in "${COMMANDS_RAYON[@]}"; do skip+=(--skip "$t"); done
  echo "=== miri: respawn commands, serial (strict provenance)"
  MIRIFLAGS="-Zmiri-strict-provenance" cargo +nightly miri test -p respawn --test world_commands -- "${skip[@]}"
  echo "=== miri: respawn commands with par_tick_with (tree borrows)"
  MIRIFLAGS="-Zmiri-tree-borrows -Zmiri-ignore-leaks" cargo +nightly miri test -p respawn --test world_commands -- "${COMMANDS_RAYON[@]}"
fi
echo "=== miri: all passes clean"
