#!/usr/bin/env bash
# Installs b2frame into a temporary prefix (and once more with DESTDIR), checks the installed
# tree, builds a small C consumer four ways (pkg-config and find_package, shared and static)
# and runs it, then tests the Go, Ruby and Python bindings against the installed library.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
version=$(sed -n 's/^version = "\([0-9.]*\)"/\1/p' Cargo.toml | head -1)
step() { printf -- '--- %s\n' "$*"; }

step "cmake install into $prefix"
cmake -S cmake -B build/install -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_INSTALL_LIBDIR=lib >/dev/null
cmake --build build/install >/dev/null
cmake --install build/install >/dev/null
for f in lib/libb2frame.so."$version" lib/libb2frame.so.0 lib/libb2frame.so lib/libb2frame.a \
         include/b2frame.h lib/pkgconfig/b2frame.pc bin/b2f \
         lib/cmake/b2frame/b2frameConfig.cmake lib/cmake/b2frame/b2frameConfigVersion.cmake; do
  test -e "$prefix/$f" || { echo "missing $f" >&2; exit 1; }
done
test "$(readlink "$prefix/lib/libb2frame.so.0")" = "libb2frame.so.$version"
dynamic=$(readelf -d "$prefix/lib/libb2frame.so.$version")
grep -q 'SONAME.*\[libb2frame\.so\.0\]' <<<"$dynamic"

step "DESTDIR install"
DESTDIR=$work/dest cmake --install build/install --prefix /opt/b2frame >/dev/null
test -e "$work/dest/opt/b2frame/lib/libb2frame.so.0"
test -e "$work/dest/opt/b2frame/lib/pkgconfig/b2frame.pc"

export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
frame=$work/consumer.b2frame
run() { # run BINARY: runs it and checks which libb2frame it loads
  local bin=$1 want=$2 deps
  "$bin" "$frame"
  # ldd's whole output first: `ldd | grep -q` under pipefail failed now and then, when grep
  # exited on its match while ldd still wrote (SIGPIPE, status 141); the same for the other
  # checks of a command's output in this script.
  deps=$(ldd "$bin")
  if [ "$want" = shared ]; then
    grep -q "libb2frame.so.0 => $prefix/lib/libb2frame.so.0" <<<"$deps"
  else
    ! grep -q libb2frame <<<"$deps"
  fi
}

step "consumer: pkg-config, shared"
cc -o "$work/pc-shared" tests/consumer/consumer.c $(pkg-config --cflags --libs b2frame) \
  -Wl,-rpath,"$prefix/lib"
run "$work/pc-shared" shared

step "consumer: pkg-config --static, static"
private=$(pkg-config --static --libs b2frame | sed 's/ *-lb2frame//')
cc -o "$work/pc-static" tests/consumer/consumer.c $(pkg-config --cflags b2frame) \
  -Wl,-Bstatic -lb2frame -Wl,-Bdynamic $private
run "$work/pc-static" static

step "consumer: find_package, shared and static"
for kind in shared static; do
  static=$([ $kind = static ] && echo ON || echo OFF)
  cmake -S tests/consumer -B "$work/cm-$kind" -DCMAKE_PREFIX_PATH="$prefix" -DB2F_STATIC=$static >/dev/null
  cmake --build "$work/cm-$kind" >/dev/null
  run "$work/cm-$kind/consumer" $kind
done

step "installed b2f"
info=$("$prefix/bin/b2f" info examples/temperature.b2nd)
grep -q "shape \[24, 37, 72\]" <<<"$info"

export LD_LIBRARY_PATH=$prefix/lib
export B2F_VECTORS=${B2F_VECTORS:-$root/../shared/vectors}

step "Go binding (go test)"
(cd bindings/go/b2frame &&
  GOFLAGS=-mod=mod GOPROXY=off GOTOOLCHAIN=local GOCACHE=$work/gocache GOPATH=$work/gopath \
  go test -count=1 ./...)

step "Ruby binding (minitest)"
B2F_LIB=$prefix/lib/libb2frame.so.0 ruby bindings/ruby/test_b2frame.rb

step "Python binding against the installed library"
B2F_LIB=$prefix/lib/libb2frame.so.0 "${B2F_PYTHON:-$root/.venv/bin/python}" -m pytest -q \
  tests/python/test_chunk_interop.py -k "sizes_match or unknown_codec or dictionaries" -x

step "install checks passed"
