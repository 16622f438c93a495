#!/bin/sh
# C compiler for the dependencies, chosen per dependency and, for zlib-ng and zstd, per source
# file: Debian 12's gcc 12 and clang 19 each make some of them markedly faster than the other does
# (c-blosc2's wheel is built by gcc 14; measurements in bench/RESULTS.md).
# - lz4: clang. LZ4_decompress_safe runs 1.2-1.4x faster than built by gcc; compression is
#   the same either way.
# - zlib-ng: clang deflates at 0.97 of c-blosc2's speed where gcc reaches 0.72; gcc inflates
#   at 0.89 where clang reaches 0.70 (a machine without AVX-512). So inflate's sources go to
#   gcc, the rest to clang; but chunkset_avx512.c, the inflate loop of AVX-512 CPUs, to clang
#   (Zen 4: rainfall_f32 0.91 -> 0.99, smooth_f64 0.97 -> 1.00, unfiltered incr_i32 0.98 ->
#   0.95).
# - zstd: clang for lib/compress/, whose output compresses 1.05-1.3x faster than gcc's (most on
#   shuffled incr_i32); gcc for the rest, as clang's build decompressed incr_i32 10% slower.
# - Everything else: the default compiler.
# The cc crate runs this from each dependency's build script (.cargo/config.toml), cmake
# through cmake/zlib-ng-toolchain.cmake; CARGO_PKG_NAME names the dependency either way.
# The choice depends only on the dependency and the file, never on the flags, so the cc crate's
# compiler detection (a run of this script) sees the compiler that then builds the dependency;
# for zstd, the one that builds all but lib/compress/.
clang=
for c in clang-19 clang; do
  if command -v "$c" >/dev/null 2>&1; then clang=$c; break; fi
done
# The compiler for this file, and a flag (a case pattern) that its flags may hold but it does
# not know: each dependency's flags were chosen for the compiler of its detection run.
compiler=cc
foreign=
if [ -n "$clang" ]; then
  case "$CARGO_PKG_NAME" in
    lz4-sys) compiler=$clang ;;
    zstd-sys)
      # Flags for gcc; sanitizer builds add one that clang rejects.
      case " $* " in */lib/compress/*) compiler=$clang foreign=-fno-ipa-icf-variables ;; esac
      ;;
    libz-sys)
      # Flags chosen for clang; gcc rejects their --target.
      case " $* " in
        */chunkset_avx512.c" "*) compiler=$clang ;;
        */inflate.c" "* | */infback.c" "* | */inftrees.c" "* | */chunkset_*.c" "*)
          foreign='--target=*' ;;
        *) compiler=$clang ;;
      esac
      ;;
  esac
fi
if [ -n "$foreign" ]; then
  for arg in "$@"; do
    shift
    case "$arg" in $foreign) ;; *) set -- "$@" "$arg" ;; esac
  done
fi
exec "$compiler" "$@"
