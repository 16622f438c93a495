#!/usr/bin/env bash
# Compares two revisions of the library on the chunk benchmark, averaged over code layouts.
#   bench/compare.sh [--seeds N] [--rounds R] REV_A REV_B [bench_chunk arguments...]
# e.g. bench/compare.sh --seeds 3 HEAD~1 HEAD --kib 1 --reps 15 --threads 1
#
# Why layouts: at 1-4 KiB a call takes 100-500 ns, and where the linker happens to put our
# functions moves rows the change never touched by 5-20% (zeros compressed at 1 KiB went
# 1.20 -> 0.98 of c-blosc2's speed from a change to the decoder's inlining). Each revision is
# built N times with rust-lld's input sections shuffled by a different seed, and every row is
# the geometric mean over the N layouts of its median over R rounds. The builds take turns
# within each round, so machine drift falls on all of them alike. Three rounds by default:
# the machine has phases of seconds where everything runs at about half speed, and rows
# bound by a fixed cost per call lose more of their ratio there than others (zeros
# compressed at 1 KiB: 1.2 -> 1.0); the median of three drops one such round, a median of
# two is their mean. compare_summary.py also leaves out the samples where c-blosc2 itself
# ran under 0.8 of its usual speed, as one build can meet such phases in all three rounds.
#
# Builds go to build/compare/ (a worktree per revision, a target directory per seed shared by
# the revisions, so the codecs are built once per seed); the benchmark program is
# build/bench/bench_chunk from bench/run.sh. Needs what bench/run.sh needs. To clean up:
# rm -rf build/compare && git worktree prune.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=3 rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --seeds) seeds=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { sed -n 2,4p "$0"; exit 2; }
revs=("$1" "$2")
shas=("$(git rev-parse --short "$1^{commit}")" "$(git rev-parse --short "$2^{commit}")")
shift 2
root=$PWD
out=$root/build/compare
mkdir -p "$out"
[ -x build/bench/bench_chunk ] ||
  bash bench/run.sh --kib 1 --reps 1 --data zeros --codec 0 --filter 0 --threads 1 >/dev/null

source bench/layouts.sh
build_layouts "$out" "$seeds" "${revs[@]}"

results=$out/results-$(date +%Y%m%d-%H%M%S).txt
for r in $(seq "$rounds"); do
  for s in $(seq "$seeds"); do
    for sha in "${shas[@]}"; do
      LD_LIBRARY_PATH=$out/lib/$sha-s$s build/bench/bench_chunk \
        --rainfall ../shared/bench-data/rainfall-grid-150x150.bin "$@" |
        grep '^| [a-z]' | grep -v '^| data' | sed "s/^/$sha $s /" >>"$results"
    done
  done
done
echo "rows: $results" >&2
python3 bench/compare_summary.py "$results" "${shas[@]}"
