#!/usr/bin/env bash
# Decoding speed of two revisions against c-blosc2, all in one process (bench/decode_ab.c),
# averaged over code layouts.
#   bench/decode_ab.sh [--seeds N] REV_A REV_B [decode_ab arguments...]
# e.g. bench/decode_ab.sh HEAD~1 HEAD --kib 4 --codec 0 --filter 1 --data incr_i32
#
# Builds each revision under N layouts as bench/compare.sh does (build/compare/), runs
# decode_ab once with all 2N builds, and prints its lines, then per revision the geometric
# mean over layouts of each build's ratio (c-blosc2's time over its own). A few seconds per
# case where compare.sh takes minutes per codec, for a question about decoding one chunk.
set -euo pipefail
cd "$(dirname "$0")/.."
seeds=3
if [ "${1:-}" = --seeds ]; then
  seeds=$2
  shift 2
fi
[ $# -ge 2 ] || { sed -n 4,5p "$0"; exit 2; }
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
bash bench/run.sh --decode-ab "$@" "${libs[@]}" | tee /dev/stderr |
  awk '$NF ~ /\/lib\/[0-9a-f]+-s[0-9]+\// {
         split($NF, p, "/lib/"); sha = p[2]; sub(/-s[0-9]+\/.*/, "", sha)
         if (!(sha in n)) order[++k] = sha
         n[sha]++; logsum[sha] += log($3)
       }
       END { for (i = 1; i <= k; i++) printf "%s: geometric mean %.3f over %d layouts\n", order[i], exp(logsum[order[i]] / n[order[i]]), n[order[i]] }'
