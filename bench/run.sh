#!/usr/bin/env bash
# Builds and runs the benchmarks: b2frame (target/release) against c-blosc2 (the wheel's
# libblosc2.so in .venv, found through its blosc2.pc), both linked into each program.
#   bench/run.sh [--reps N] [--mib N | --kib N] [--clevel N] ...  chunk codecs (bench_chunk.c)
#   bench/run.sh --ndim [--reps N] [--side N]              n-dim slicing (bench_ndim.c)
#   bench/run.sh --frame [--reps N]                        frame operations (bench_frame.c)
#   bench/run.sh --decode-ab [...] LIB...                  builds' decoding in one process
#                                                          (decode_ab.c; see decode_ab.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
cargo build --release --lib
pc=$(echo .venv/lib/python3*/site-packages/blosc2/lib/pkgconfig)
blosc_libdir=$(cd "$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir blosc2)" && pwd)
# Staged under its soname, as an install would put it (cargo writes only libb2frame.so).
mkdir -p build/bench/lib
cp target/release/libb2frame.so build/bench/lib/libb2frame.so.0
ln -sf libb2frame.so.0 build/bench/lib/libb2frame.so
build() {
  cc -O2 -o "build/bench/$1" "bench/$1.c" -Iinclude \
    $(PKG_CONFIG_PATH=$pc pkg-config --cflags blosc2) \
    -Lbuild/bench/lib -lb2frame $(PKG_CONFIG_PATH=$pc pkg-config --libs blosc2) -lm -ldl \
    -Wl,-rpath,"$PWD/build/bench/lib" -Wl,-rpath,"$blosc_libdir"
}
case "${1:-}" in
  --ndim) shift; build bench_ndim; exec build/bench/bench_ndim "$@" ;;
  --frame) shift; build bench_frame; exec build/bench/bench_frame "$@" ;;
  --decode-ab) shift; build decode_ab; exec build/bench/decode_ab "$@" ;;
  *) build bench_chunk; exec build/bench/bench_chunk --rainfall ../shared/bench-data/rainfall-grid-150x150.bin "$@" ;;
esac
