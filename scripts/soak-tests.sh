#!/usr/bin/env bash
# Runs the whole test suite again and again on a busy machine, to shake out tests whose
# expectations depend on timing: on the slab preparation thread, a pool's workers, the
# collector's clock. Such a test passes on an idle machine and fails when the scheduler
# runs a background thread early or late.
#
# It builds the tests once (`cargo test --no-run`), then runs `cargo test --no-fail-fast`
# (every test binary, even after one fails) N times while a competing load it starts
# itself (one busy loop per core, at normal priority) keeps every core busy, then once
# more pinned to one core (`taskset -c 0`) without the load. The load
# is stopped on any exit: success, failure or Ctrl-C. Each run's output goes to
# target/soak/run-K.log; a table at the end gives each run's condition, result, passed and
# failed counts and time. Exits non-zero if any run failed.
#
#   scripts/soak-tests.sh          5 loaded runs, then the pinned one
#   scripts/soak-tests.sh 2        2 loaded runs, then the pinned one
#   SOAK_RUNS=10 scripts/soak-tests.sh
#
# Needs only the Rust toolchain and bash; the pinned run needs `taskset` (util-linux, on
# Debian by default) and is skipped, with a note, where it is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

runs="${1:-${SOAK_RUNS:-5}}"
if ! [[ $runs =~ ^[0-9]+$ ]]; then
  echo "usage: $0 [RUNS]   (RUNS a whole number; default \$SOAK_RUNS or 5)" >&2
  exit 2
fi
logs=target/soak
mkdir -p "$logs"
rm -f "$logs"/run-*.log

load_pids=()
stop_load() {
  local pid
  for pid in "${load_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
    wait "$pid" 2>/dev/null || true
  done
  load_pids=()
}
# The run in progress, in a process group of its own (setsid, where there is one) so that
# cargo and the test binaries it started go with it.
run_pid=
stop_run() {
  [[ -n $run_pid ]] || return 0
  if [[ $run_own_group == 1 ]]; then kill -- "-$run_pid" 2>/dev/null || true; fi
  kill "$run_pid" 2>/dev/null || true
  wait "$run_pid" 2>/dev/null || true
  run_pid=
}
cleanup() {
  stop_run
  stop_load
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

start_load() {
  local cores i
  cores="$(nproc 2>/dev/null || echo 2)"
  for ((i = 0; i < cores; i++)); do
    # A subshell that only spins: no I/O, nothing to install.
    ( while :; do :; done ) &
    load_pids+=("$!")
  done
}

run_own_group=0
command -v setsid >/dev/null 2>&1 && run_own_group=1

echo "building the tests once"
cargo test --no-run 2>&1 | tail -n 3

rows=()
failed=0
run_one() { # run_one K CONDITION COMMAND...
  local k="$1" condition="$2" log="$logs/run-$1.log" result start seconds passed fails
  shift 2
  echo "run $k ($condition): $*"
  start="$(date +%s)"
  # In the background and waited for, so that a signal stops the script at once.
  if [[ $run_own_group == 1 ]]; then setsid "$@" >"$log" 2>&1 & else "$@" >"$log" 2>&1 & fi
  run_pid=$!
  if wait "$run_pid"; then result=pass; else result=FAIL; failed=1; fi
  stop_run # anything the run left behind
  seconds=$(($(date +%s) - start))
  # Sum the per-binary summaries: "test result: ok. 12 passed; 0 failed; ...".
  passed="$({ grep -Eo '[0-9]+ passed' "$log" || true; } | awk '{ s += $1 } END { print s + 0 }')"
  fails="$({ grep -Eo '[0-9]+ failed' "$log" || true; } | awk '{ s += $1 } END { print s + 0 }')"
  rows+=("$(printf '%-4s %-22s %-6s %7s %7s %7s' "$k" "$condition" "$result" "$passed" "$fails" "${seconds}s")")
  if [[ $result == FAIL ]]; then
    echo "  failed; see $log:"
    grep -E '^test .* FAILED$|^---- .* stdout ----$|panicked at' "$log" | head -n 20 | sed 's/^/    /' || true
  fi
}

start_load
for ((k = 1; k <= runs; k++)); do
  run_one "$k" "loaded ($(nproc) busy loops)" cargo test --no-fail-fast
done
stop_load

k=$((runs + 1))
if command -v taskset >/dev/null 2>&1; then
  run_one "$k" "pinned (taskset -c 0)" taskset -c 0 cargo test --no-fail-fast
else
  echo "taskset not found (it is in util-linux): the pinned run is skipped"
  rows+=("$(printf '%-4s %-22s %-6s %7s %7s %7s' "$k" "pinned (no taskset)" skip - - -)")
fi

echo
printf '%-4s %-22s %-6s %7s %7s %7s\n' run condition result passed failed time
for row in "${rows[@]}"; do
  echo "$row"
done
echo "logs: $logs/run-K.log"
exit "$failed"
