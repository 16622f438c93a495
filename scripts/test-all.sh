#!/usr/bin/env bash
# Runs every test: Rust unit and integration tests, the header drift check, the Python
# interop tests against c-blosc2, and the C API harness (ctest), plus the same C tests
# under ASan/UBSan and valgrind. This is the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bash scripts/install-deps.sh
export B2F_PYTHON=$root/.venv/bin/python
export B2F_VECTORS=${B2F_VECTORS:-$root/../shared/vectors}
export CARGO_TERM_COLOR=never

step() { printf '\n=== %s\n' "$*"; }

step "cargo build (release library, binaries)"
cargo build --release --lib --bins

step "SIMD kernels: no x86 intrinsic left out of line (one was a call per vector, 4x slower)"
if nm -C target/release/libb2frame.so | grep -E 'core_arch::x86::(sse|avx|ssse3|sse41|sse2)'; then
  echo "intrinsics above are compiled as functions: call them only from #[target_feature] code, not closures"
  exit 1
fi

step "header drift: include/b2frame.h must match the one cbindgen generates"
if git -C "$root" rev-parse --git-dir >/dev/null 2>&1; then
  git -C "$root" diff --exit-code -- include/b2frame.h
fi

step "the C codecs' profile (cmake/codecs.profdata) is from Cargo.lock's codec crates"
bash scripts/pgo-train.sh --check

# Release profile: shares the build above (the engine's tests with debug assertions and
# overflow checks run in the AddressSanitizer step below and in the fuzz targets).
step "cargo test"
cargo test --release --no-fail-fast 2>&1 | tee "$root/target/cargo-test.log"

step "engine tests under AddressSanitizer (miri cannot run on the stable toolchain; this checks the SIMD kernels' and codecs' memory accesses instead)"
RUSTC_BOOTSTRAP=1 RUSTFLAGS="-Zsanitizer=address -Cdebug-assertions -Coverflow-checks" \
  CARGO_TARGET_DIR=target/asan \
  cargo test --release --target x86_64-unknown-linux-gnu --lib --test chunk_bad_input \
  --test c_blosc2_regressions --test fuzz_regressions --test ndim_roundtrip --test ndim_partial

step "pytest (interop with c-blosc2)"
B2F_LIB=$root/target/release/libb2frame.so "$B2F_PYTHON" -m pytest -q -n 2 tests/python

step "C API harness (ctest)"
cmake -S capi-tests -B build/capi -DB2F_CARGO_PROFILE=release >/dev/null
cmake --build build/capi -j2 >/dev/null
ctest --test-dir build/capi --output-on-failure

step "C API harness under ASan + UBSan"
cmake -S capi-tests -B build/capi-asan -DB2F_CARGO_PROFILE=release -DB2F_SANITIZE=ON >/dev/null
cmake --build build/capi-asan -j2 >/dev/null
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/capi-asan --output-on-failure

step "C API harness under valgrind memcheck"
cmake -S capi-tests -B build/capi-valgrind -DB2F_CARGO_PROFILE=release -DB2F_VALGRIND=ON >/dev/null
cmake --build build/capi-valgrind -j2 >/dev/null
ctest --test-dir build/capi-valgrind --output-on-failure

step "install (cmake --install), consumers via pkg-config and find_package, Go/Ruby/Python bindings"
bash scripts/test-install.sh

step "fuzz smoke: every target for 10 s (fuzz/run.sh; longer runs are recorded in fuzz/RUNS.md)"
bash fuzz/run.sh --no-record 10

step "all tests passed"
