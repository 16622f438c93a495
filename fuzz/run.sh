#!/usr/bin/env bash
# Runs every fuzz target (or those named) for SECONDS each, seeding corpora from the reference
# vectors, and records the run in fuzz/RUNS.md (unless --no-record). Works on the stable
# toolchain: RUSTC_BOOTSTRAP=1 lets cargo-fuzz pass its sanitizer flags.
#   fuzz/run.sh [--no-record] SECONDS [TARGET...]
set -euo pipefail
cd "$(dirname "$0")"
record=1
if [ "${1:-}" = "--no-record" ]; then record=0; shift; fi
secs=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(chunk_decode chunk_encode frame_open sframe_index ndim_slice frame_ops lz4_block blosclz_encode zlib_decode)
vectors=${B2F_VECTORS:-$PWD/../../shared/vectors}
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked --version 0.13.2
export RUSTC_BOOTSTRAP=1

# Seeds: chunks for the chunk decoder, frames and arrays for the frame targets.
seed() { for f in "$@"; do if [ -f "$f" ]; then cp -n "$f" "corpus/$target/" 2>/dev/null || true; fi; done; }
for target in "${targets[@]}"; do
  mkdir -p "corpus/$target"
  case $target in
    chunk_decode) seed "$vectors"/c-blosc2-compat/compat/blosc-*.cdata ;;
    frame_open|ndim_slice) seed "$vectors"/schunk/*.b2frame "$vectors"/b2nd/*.b2nd \
                             "$vectors"/c-blosc2-compat/fuzz-corpus/* ;;
    sframe_index) for d in "$vectors"/schunk/*sframe* "$vectors"/b2nd/*sframe*; do
                    [ -f "$d/chunks.b2frame" ] && cp "$d/chunks.b2frame" "corpus/$target/$(basename "$d").index" || true
                  done ;;
  esac
done

cargo fuzz build -O
status=0
for target in "${targets[@]}"; do
  log=$(mktemp)
  if cargo fuzz run -O "$target" "corpus/$target" -- -max_total_time="$secs" -rss_limit_mb=2048 \
       -timeout=10 -print_final_stats=1 >"$log" 2>&1; then
    result=ok
  else
    result=FINDING
    status=1
    tail -40 "$log"
  fi
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  echo "$target: ${secs}s, ${execs:-?} runs, $result"
  if [ $record = 1 ]; then
    printf '| %s | %s | %s | %s | %s |\n' "$(date -u +%Y-%m-%d)" "$target" "$secs" "${execs:-?}" "$result" >> RUNS.md
  fi
  rm -f "$log"
done
exit $status
