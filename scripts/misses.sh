#!/usr/bin/env bash
# Instructions and cache misses per operation, respawn beside its peers, from cachegrind
# (valgrind's simulated caches: exact counts, unaffected by a busy machine; this VM exposes
# no hardware counters to `perf stat`). Each peer runs twice, with OPS operations and with
# none, and the difference divided by OPS is what one operation costs: the set-up cancels.
#
#   scripts/misses.sh [MODE] [LIVE] [OPS] [PEERS...]
#   MODE: chase (one dependent lookup after another) or churn (remove + insert pairs)
#   defaults: churn 10000 200000, peers vec box slab slotmap arena store
#
# The simulated caches are the development VM's: a 32 KiB 8-way L1d and a 32 MiB 16-way last
# level (LL=size,ways,line overrides it; cachegrind's own detection reads this VM's L3 as a
# 256 MiB direct-mapped cache). Needs valgrind. The binary is benches/resolve.rs, built with `cargo bench --no-run`.
set -euo pipefail
cd "$(dirname "$0")/.."

LL=${LL:-33554432,16,64}
mode=${1:-churn}
live=${2:-10000}
ops=${3:-200000}
shift $(( $# < 3 ? $# : 3 ))
peers=("$@")
[ ${#peers[@]} -gt 0 ] || peers=(vec box slab slotmap arena store)

cargo bench --bench resolve --no-run >/dev/null 2>&1
bin=$(ls -t target/release/deps/resolve-* | grep -v '\.d$' | head -1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Totals of one cachegrind run: Ir D1mr+D1mw LLmr+LLmw (data misses only).
totals() {
  valgrind --tool=cachegrind --cache-sim=yes --D1=32768,8,64 --LL="$LL" \
    --cachegrind-out-file="$tmp/out" "$bin" "$@" >/dev/null 2>&1
  awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i - 1 }
       /^summary:/ { print $(col["Ir"]+1), $(col["D1mr"]+1) + $(col["D1mw"]+1), $(col["DLmr"]+1) + $(col["DLmw"]+1) }' "$tmp/out"
}

printf '%s, %s live, per op (cachegrind, %s ops, LL %s)\n' "$mode" "$live" "$ops" "$LL"
printf '%-8s %12s %10s %10s\n' peer instructions 'D1 misses' 'LL misses'
for peer in "${peers[@]}"; do
  read -r i1 d1 l1 < <(totals "$peer" "$mode" "$live" "$ops")
  read -r i0 d0 l0 < <(totals "$peer" "$mode" "$live" 0)
  awk -v p="$peer" -v n="$ops" -v i="$((i1 - i0))" -v d="$((d1 - d0))" -v l="$((l1 - l0))" \
    'BEGIN { printf "%-8s %12.1f %10.2f %10.2f\n", p, i / n, d / n, l / n }'
done
