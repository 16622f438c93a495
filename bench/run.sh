#!/usr/bin/env bash
# Builds and runs the benchmarks: b2frame (target/release) against c-blosc2 (the wheel's
# libblosc2.so in .venv, found through its blosc2.pc). Arguments go to bench_chunk.
#   bench/run.sh [--reps N] [--mib N] [--clevel N]      chunk codecs
#   bench/run.sh --ndim [--reps N] [--side N]            n-dim slicing
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh >/dev/null
cargo build --release --lib
pc=$(echo .venv/lib/python3*/site-packages/blosc2/lib/pkgconfig)
blosc_libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir blosc2)
mkdir -p build/bench
cc -O2 -o build/bench/bench_chunk bench/bench_chunk.c -Iinclude \
  $(PKG_CONFIG_PATH=$pc pkg-config --cflags blosc2) \
  -Ltarget/release -lb2frame $(PKG_CONFIG_PATH=$pc pkg-config --libs blosc2) -lm \
  -Wl,-rpath,"$PWD/target/release" -Wl,-rpath,"$(cd "$blosc_libdir" && pwd)"
cc -O2 -o build/bench/bench_ndim bench/bench_ndim.c -Iinclude \
  $(PKG_CONFIG_PATH=$pc pkg-config --cflags blosc2) \
  -Ltarget/release -lb2frame $(PKG_CONFIG_PATH=$pc pkg-config --libs blosc2) -lm \
  -Wl,-rpath,"$PWD/target/release" -Wl,-rpath,"$(cd "$blosc_libdir" && pwd)"
if [ "${1:-}" = "--ndim" ]; then
  shift
  exec build/bench/bench_ndim "$@"
fi
build/bench/bench_chunk --rainfall ../shared/bench-data/rainfall-grid-150x150.bin "$@"
