#!/usr/bin/env bash
# Remakes cmake/codecs.profdata, the profile clang builds the C compressors with
# (cmake/deps-cc.sh says which and why): an instrumented build of the library, the training
# run of scripts/pgo_train.py, then llvm-profdata. Run it after updating libz-sys, zstd-sys or
# lz4-sys, or moving to a newer clang, and commit the profile. Needs clang 19 or later and its
# llvm-profdata (Debian: llvm-19), which it installs when run as root.
#   scripts/pgo-train.sh --check   only checks that the profile is from Cargo.lock's codec crates
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

# "name version" of each codec crate in Cargo.lock.
codec_versions() {
  awk '/^name = /{n=$3} /^version = /{v=$3; if (n ~ /^"(libz-sys|zstd-sys|lz4-sys)"$/) {
    gsub(/"/, "", n); gsub(/"/, "", v); print n, v}}' Cargo.lock
}

if [ "${1:-}" = --check ]; then
  # A stale profile still builds (its unmatched functions go unprofiled), just slower.
  if [ "$(grep -v '^#' cmake/codecs.profdata.txt)" != "$(codec_versions)" ]; then
    echo "cmake/codecs.profdata was made from other codec crates than Cargo.lock's:" >&2
    diff <(grep -v '^#' cmake/codecs.profdata.txt) <(codec_versions) >&2 || true
    echo "remake it: scripts/pgo-train.sh" >&2
    exit 1
  fi
  echo "cmake/codecs.profdata matches Cargo.lock's codec crates"
  exit 0
fi

bash scripts/install-deps.sh >/dev/null
clang=$(command -v clang-19 || command -v clang) || { echo "pgo-train: clang not found" >&2; exit 1; }
major=$("$clang" -dumpversion | cut -d. -f1)
profdata=$(command -v "llvm-profdata-$major" || true)
if [ -z "$profdata" ] && [ "$(id -u)" = 0 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "llvm-$major" >/dev/null
  profdata=$(command -v "llvm-profdata-$major")
fi
[ -n "$profdata" ] || { echo "pgo-train: llvm-profdata-$major not found (Debian: llvm-$major)" >&2; exit 1; }

target=$root/target/pgo-train
raw=$target/profraw
rm -rf "$raw"
mkdir -p "$raw"
# The codec crates' build scripts do not watch cmake/deps-cc.sh: clean them so they rebuild.
codecs=(-p libz-sys -p zstd-sys -p lz4-sys)
CARGO_TARGET_DIR=$target cargo clean --release "${codecs[@]}" 2>/dev/null || true
# The library is linked by rustc, not clang, so the profiling runtime is named explicitly.
B2F_PGO=generate:$raw CARGO_TARGET_DIR=$target \
  RUSTFLAGS="-C link-arg=-Wl,-u,__llvm_profile_runtime -C link-arg=$("$clang" -print-file-name=libclang_rt.profile-x86_64.a)" \
  cargo build --release --lib
B2F_LIB=$target/release/libb2frame.so .venv/bin/python scripts/pgo_train.py
# Without zstd's row hash update: the front end counts an inline template once for all the
# functions it is inlined into, and the training's searches update 2.6 positions each where
# data with matches of tens of bytes update them all, so clang took the loop for cold and
# spilled its registers (unfiltered incr_i32 with zstd 0.96 of c-blosc2's speed, 1.02 with
# the loop left to clang's own estimate; shuffled 1.11 -> 1.14).
"$profdata" merge --no-function=ZSTD_row_update_internalImpl -o cmake/codecs.profdata \
  "$raw"/*.profraw
# What the profile was made from; scripts/test-all.sh fails when Cargo.lock moves on from it.
{
  echo "# cmake/codecs.profdata was made by scripts/pgo-train.sh from these codec crates,"
  echo "# with $("$clang" --version | head -1)"
  codec_versions
} >cmake/codecs.profdata.txt
cargo clean --release "${codecs[@]}" 2>/dev/null || true
echo "cmake/codecs.profdata: $(wc -c <cmake/codecs.profdata) bytes; the next build uses it"
