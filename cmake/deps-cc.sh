#!/bin/sh
# C compiler for the dependencies the cc crate builds (set in .cargo/config.toml; cargo runs it
# from each dependency's build script, so CARGO_PKG_NAME names the dependency).
#
# lz4 1.10.0 compiled by clang 19 decompresses 1.2-1.4x faster than compiled by Debian 12's
# gcc 12, and 0.93 -> 1.2 of c-blosc2's wheel (built by gcc 14); its compression is the same
# either way (bench/RESULTS.md). zstd measured no faster with clang, so it keeps the default.
# Sanitizer builds keep the default too, as cmake/zlib-ng-toolchain.cmake does.
if [ "$CARGO_PKG_NAME" = lz4-sys ]; then
  case " $* " in
    *" -fsanitize="*) ;;
    *)
      for clang in clang-19 clang; do
        command -v "$clang" >/dev/null 2>&1 && exec "$clang" "$@"
      done
      ;;
  esac
fi
exec cc "$@"
