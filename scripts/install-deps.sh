#!/usr/bin/env bash
# Installs what building and testing b2frame needs on a Debian machine (run as root):
# Debian packages, and a Python venv in .venv with the reference implementation
# (python-blosc2 4.14.1, which bundles c-blosc2) plus numpy and pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
for tool in cmake:cmake pkg-config:pkg-config strace:strace valgrind:valgrind go:golang-go ruby:ruby \
            g++:g++ python3:python3; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need_apt+=("${tool#*:}")
done
ruby -e 'require "ffi"' >/dev/null 2>&1 || need_apt+=(ruby-ffi)
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need_apt+=(python3-venv)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "missing packages: ${need_apt[*]} (run this script as root, or install them)" >&2
    exit 1
  fi
fi

# Optional: clang builds lz4, zlib-ng's deflate and zstd's compressor faster than Debian 12's
# gcc does (cmake/deps-cc.sh). Without it the build uses gcc throughout.
if ! command -v clang-19 >/dev/null 2>&1 && ! command -v clang >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  [ ${#need_apt[@]} -gt 0 ] || apt-get update -qq >/dev/null 2>&1 || true
  { apt-get install -y -qq --no-install-recommends clang-19 || apt-get install -y -qq --no-install-recommends clang; } \
    >/dev/null 2>&1 || echo "clang not installed: the C codecs are built with the default compiler" >&2
fi
# The AddressSanitizer runs of scripts/test-all.sh link those clang-built codecs with clang's
# sanitizer runtime, a package of its own (no "recommends" brings it along).
for c in clang-19 clang; do
  command -v "$c" >/dev/null 2>&1 || continue
  rt="libclang-rt-$("$c" -dumpversion | cut -d. -f1)-dev"
  if ! dpkg -s "$rt" >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -qq --no-install-recommends "$rt" >/dev/null 2>&1 ||
      { apt-get update -qq >/dev/null 2>&1 && apt-get install -y -qq --no-install-recommends "$rt" >/dev/null; }
  fi
  break
done

if ! .venv/bin/python -c 'import blosc2, numpy, pytest, xdist; assert blosc2.__version__ == "4.14.1"' >/dev/null 2>&1; then
  python3 -m venv .venv
  .venv/bin/pip install -q --disable-pip-version-check blosc2==4.14.1 numpy pytest pytest-xdist
fi
echo "dependencies ready"
