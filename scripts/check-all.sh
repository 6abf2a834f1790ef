#!/usr/bin/env bash
# Every check respawn has, one after another, and one table at the end: check, result, time.
# Each check's output goes to target/check-all/<check>.log. Exits non-zero if any failed.
#
#   scripts/check-all.sh                 everything (about an hour on 2 cores, most of it
#                                        the sanitizer builds and Miri)
#   scripts/check-all.sh loom miri       only the named checks
#   FUZZ_SECONDS=600 scripts/check-all.sh fuzz
#
# Checks: fmt clippy test release loom miri asan tsan fuzz doc. Nightly (installed with
# rustup) runs miri, asan, tsan and fuzz; the scripts add the components they need.
set -uo pipefail
cd "$(dirname "$0")/.."
logs=target/check-all
mkdir -p "$logs"
fuzz_seconds="${FUZZ_SECONDS:-120}"

all=(fmt clippy test release doc loom miri asan tsan fuzz)
wanted=("$@")
[[ ${#wanted[@]} -eq 0 ]] && wanted=("${all[@]}")

check() { # check NAME: runs it, output to its log
  case "$1" in
    fmt) cargo fmt --all -- --check ;;
    clippy) cargo clippy --workspace --all-targets -- -D warnings ;;
    test) cargo test ;;
    release) cargo test --release --test misuse --test stress ;;
    doc) RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps ;;
    loom) bash scripts/loom.sh ;;
    miri) bash scripts/miri.sh ;;
    asan) bash scripts/sanitizers.sh asan ;;
    tsan) bash scripts/sanitizers.sh tsan ;;
    fuzz)
      if ! cargo +nightly fuzz --version >/dev/null 2>&1; then cargo install cargo-fuzz; fi
      (cd fuzz && cargo +nightly fuzz run world -- -max_total_time="$fuzz_seconds" -max_len=2048)
      ;;
    *) echo "unknown check: $1 (one of: ${all[*]})"; return 2 ;;
  esac
}

results=()
failed=0
for name in "${wanted[@]}"; do
  printf '%-8s ... ' "$name"
  start=$SECONDS
  if check "$name" >"$logs/$name.log" 2>&1; then result=pass; else result=FAIL; failed=1; fi
  took=$((SECONDS - start))
  printf '%s (%dm%02ds)\n' "$result" $((took / 60)) $((took % 60))
  results+=("$(printf '| %-8s | %-6s | %3dm%02ds | %s' "$name" "$result" $((took / 60)) $((took % 60)) "$logs/$name.log")")
done

echo
echo "| check    | result |    time | log"
echo "|----------|--------|---------|-----"
printf '%s\n' "${results[@]}"
exit $failed
