#!/usr/bin/env bash
# Decoding speed of two revisions against c-blosc2 (bench/decode_ab.c), averaged over code
# layouts.
#   bench/decode_ab.sh [--seeds N] [--solo RUNS] REV_A REV_B [decode_ab arguments...]
# e.g. bench/decode_ab.sh --solo 8 HEAD~1 HEAD --kib 1 --codec 0 --filter 1 --data smooth_f64
#
# Builds each revision under N layouts as bench/compare.sh does (build/compare/), runs
# decode_ab once with all 2N builds in one process, and prints its lines, then per revision
# the geometric mean over layouts of each build's ratio (c-blosc2's time over its own). A few
# seconds per case where compare.sh takes minutes per codec, for a question about decoding
# one chunk.
#
# --solo RUNS: each build instead runs in a process of its own (with c-blosc2), RUNS times,
# the builds taking turns. A build's ratio is its median over the runs made in the machine's
# fast phase (c-blosc2 within 1.25 times its quickest time of all runs). Slower, but with
# several builds in one process a build's speed also depends on the others loaded beside it:
# a change that took a 1 KiB row from 0.87 to 0.99 of c-blosc2's speed, measured build by
# build in processes of their own, read 0.925 -> 0.911 with all of them in one process
# (bench/RESULTS.md, stop 71).
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=3 solo=0
while [ $# -gt 0 ]; do
  case $1 in
    --seeds | --solo) [ $# -ge 2 ] || { sed -n 4,5p "$0"; exit 2; } ;;&
    --seeds) seeds=$2; shift 2 ;;
    --solo) solo=$2; shift 2 ;;
    *) break ;;
  esac
done
[[ $seeds =~ ^[1-9][0-9]*$ && $solo =~ ^[0-9]+$ && $# -ge 2 ]] || { sed -n 4,5p "$0"; exit 2; }
revs=("$1" "$2")
shift 2
out=$PWD/build/compare
mkdir -p "$out"
source bench/layouts.sh
build_layouts "$out" "$seeds" "${revs[@]}"
libs=()
for rev in "${revs[@]}"; do
  sha=$(git rev-parse --short "$rev^{commit}")
  for s in $(seq "$seeds"); do libs+=("$out/lib/$sha-s$s/libb2frame.so.0"); done
done
# Reads lines that end in a build's ratio and its path; prints each revision's geometric mean
# of its builds' ratios.
per_revision() {
  awk '$NF ~ /\/lib\/[0-9a-f]+-s[0-9]+\// && $(NF - 1) ~ /^[0-9.]+$/ {
         split($NF, p, "/lib/"); sha = p[2]; sub(/-s[0-9]+\/.*/, "", sha)
         if (!(sha in n)) order[++k] = sha
         n[sha]++; logsum[sha] += log($(NF - 1))
       }
       END { for (i = 1; i <= k; i++) printf "%s: geometric mean %.3f over %d layouts\n", order[i], exp(logsum[order[i]] / n[order[i]]), n[order[i]] }'
}
if [ "$solo" -gt 0 ]; then
  # The first run builds build/bench/decode_ab; the others call it directly.
  bash bench/run.sh --decode-ab "$@" "${libs[0]}" >/dev/null
  for r in $(seq "$solo"); do
    for lib in "${libs[@]}"; do
      build/bench/decode_ab "$@" "$lib" |
        awk -v lib="$lib" '$NF == "c-blosc2" { c = $1 } $NF == lib { ratio = $3 } END { print lib, c, ratio }'
    done
  done |
    awk '{ lib[NR] = $1; c[NR] = $2; ratio[NR] = $3; if (NR == 1 || $2 < fastest) fastest = $2 }
         END {
           for (i = 1; i <= NR; i++) {
             l = lib[i]
             if (!(l in n)) { order[++k] = l; n[l] = 0 }
             if (c[i] <= 1.25 * fastest) v[l, ++n[l]] = ratio[i]
           }
           for (i = 1; i <= k; i++) {
             l = order[i]
             if (n[l] == 0) { printf "no fast runs %s\n", l; continue }
             for (a = 1; a <= n[l]; a++)  # insertion sort of this build'"'"'s ratios
               for (b = a; b > 1 && v[l, b - 1] > v[l, b]; b--) { t = v[l, b]; v[l, b] = v[l, b - 1]; v[l, b - 1] = t }
             m = n[l] % 2 ? v[l, (n[l] + 1) / 2] : (v[l, n[l] / 2] + v[l, n[l] / 2 + 1]) / 2
             printf "median of %d fast runs %.3f %s\n", n[l], m, l
           }
         }' | tee /dev/stderr | per_revision
  exit
fi
bash bench/run.sh --decode-ab "$@" "${libs[@]}" | tee /dev/stderr | per_revision
