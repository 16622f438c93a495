#!/bin/sh
# C compiler for the dependencies, chosen per dependency and, for zlib-ng and zstd, per source
# file: Debian 12's gcc 12 and clang 19 each make some of them markedly faster than the other does
# (c-blosc2's wheel is built by gcc 14; measurements in bench/RESULTS.md).
# - lz4: lz4.c twice, its decoders (LZ4_decompress_*) taken from one object and the rest from
#   the other, linked into one. Decoders: clang's LZ4_decompress_safe runs 1.2-1.4x faster than
#   gcc's; loops aligned to 64 bytes, 1-3% faster on every LZ4 decoding case tried (Zen 3;
#   shuffled rainfall_f32 LZ4HC 0.94-0.95 -> 0.95-0.97), but with at most 16 bytes of padding:
#   the padding runs each time its loop is entered from above, and the short copy loops are
#   entered once per sequence. Xeon with AVX-512, shuffled rainfall_f32 decompression, 1 thread:
#   LZ4HC 0.90 -> 0.98-1.00 of c-blosc2's speed at clevel 1, 0.95 -> 1.00 at 5, LZ4 0.97 ->
#   1.00-1.03; the rest unchanged. Loops aligned to 32 bytes won those rows too but lost 4% on
#   unfiltered smooth_f64 LZ4HC, whose literal loop then crossed a 64-byte line.
#   The decoders fill matches at offset 1 with 16-byte stores (cmake/lz4-fills.h), where
#   clang's build of lz4's loop sets up a vector loop for each: LZ4 on shuffled incr_i32 at 4
#   KiB decodes at 1.04-1.10 of c-blosc2's speed instead of 0.95-1.03 (bench/RESULTS.md). So
#   are a block's last matches at offsets 1-7 of 64 bytes or more, which lz4's safe loop
#   copies 8 bytes at a time, each load waiting for the store before it: 64 KiB of unfiltered
#   sparse_f64 (a block that ends in 43 KiB of zeros) 0.96 -> 1.69 with LZ4 (stop 72).
#   The compressors: clang with the profile (below) where there is one, else gcc, whose
#   LZ4_compress_fast runs 1.05-1.12x faster than clang's unprofiled one. Measured on Zen 4
#   against gcc's: shuffled LZ4 compression 0.94-0.99 -> 1.02-1.16 of c-blosc2's speed,
#   unfiltered incr_i32 and rainfall_f32 1.00-1.05 -> 0.97-1.00. On Zen 3 (stop 69, 8 MiB, 1
#   thread, two runs) the same trade, wider: unfiltered incr_i32 0.99 -> 0.92-0.93, rainfall_f32
#   1.01-1.02 -> 0.99; shuffled incr_i32 1.22-1.24 -> 1.39-1.43, sparse_f64 1.11-1.12 ->
#   1.27-1.28, rainfall_f32 1.03-1.05 -> 1.09-1.10. Kept. lz4hc.c and lz4frame.c: clang
#   (LZ4HC compresses 1.05-1.45x faster), lz4hc.c without LLVM's cmov converter (below).
# - zlib-ng: clang deflates at 0.97 of c-blosc2's speed where gcc reaches 0.72; gcc inflates
#   at 0.89 where clang reaches 0.70 (a machine without AVX-512). So inflate's sources go to
#   gcc, the rest to clang; but chunkset_avx512.c, the inflate loop of AVX-512 CPUs, to clang
#   (Zen 4: rainfall_f32 0.91 -> 0.99, smooth_f64 0.97 -> 1.00, unfiltered incr_i32 0.98 ->
#   0.95), with its loops aligned to 64 bytes (Zen 4, 1 thread, two rounds: smooth_f64
#   0.92-0.95 -> 0.97-0.98, unfiltered rainfall_f32 0.98 -> 0.99-1.00, the rest unchanged;
#   gcc 12 there read 0.99-1.00 on smooth_f64 but 0.91 on unfiltered incr_i32), and with
#   cmake/inline-memcpy.h, which keeps the copy that ends each short-distance match out of libc
#   (unfiltered incr_i32 0.93-0.94 -> 1.03-1.05, the rest unchanged). inftrees.c, which builds
#   each dynamic block's decoding tables, to clang as well: 19% fewer instructions there (on a
#   4 KiB stream of 16:1, 13,300 -> 10,700 a decode, c-blosc2's 12,600; the decode ran 4-7%
#   faster). deflate_medium.c, level 5's match loop, also has its loops aligned to 64 bytes
#   (below).
# - zstd: clang for lib/compress/, whose output compresses 1.05-1.3x faster than gcc's (most on
#   shuffled incr_i32); gcc for the rest, as clang's build decompressed incr_i32 10% slower
#   (zstd_decompress_block.c with cmake/zstd-fill8.h, which stores matches 8-15 bytes behind their
#   source, at offsets up to 15, as 16-byte patterns: 64 KiB unfiltered incr_i32 0.98 -> 1.21,
#   bitshuffled 1.60 -> 2.13, unfiltered rainfall_f32 0.97 -> 1.05 of c-blosc2's decoding speed),
#   but for huf_decompress.c (literals' Huffman decoding, a C loop as zstd is built without its
#   assembly): clang's runs faster there. Unfiltered rainfall_f32 at clevel 1, where that loop is
#   13% of the time, decompresses at 0.96-1.00 of c-blosc2's speed instead of 0.94-0.95 (Xeon with
#   AVX-512, the decoders of both builds alone on the chunk's streams: 0.95 -> 1.00); the rest
#   within noise. And huf_compress.c (building the literals' Huffman tables) goes to gcc: at 1 KiB
#   chunks, where clang's HUF_buildCTable_wksp was a quarter of the compression time, zstd
#   compresses at 0.97-0.98 of c-blosc2's speed instead of 0.87-0.89 (geometric mean of the 1 KiB
#   table's zstd rows 1.002 -> 1.026, 8 MiB at clevels 1, 5 and 9 +0.2-1%, 64 KiB -0.4%; Xeon with
#   AVX-512). zstd_lazy.c's binary tree search (level 9's strategy for streams up to 16 KiB, so
#   clevel 5's; level 13's over 256 KiB, clevel 7's) is built without the profile (split_first
#   below). The chunk benchmark's zstd rows at 1, 4 and 64 KiB, 1 thread, three rounds: geometric
#   mean of the compression speed ratios 1.104 -> 1.140, rows below 1.0 20 -> 5 (shuffled
#   smooth_f64 at 1 KiB 0.96 -> 1.07, unfiltered random 0.94 -> 1.03); Xeon with AVX-512. At clevel
#   7, 8 MiB, shuffled smooth_f64 1.09 -> 1.03-1.07. Tried: gcc 12 there (1.110, 16 below), and the
#   profile without the search's own functions, its loop (shared with lazy2) keeping its counts
#   (1.125, 6 below). The search's half is built with clang's inlining threshold raised, so that
#   the search (ZSTD_DUBT_findBestMatch, static but not marked inline) is inlined into each of the
#   nine search functions that call it with a constant match length and dictionary mode; clang kept
#   one copy out of line that took both as arguments (at the default threshold and at 1,000).
#   callgrind finds c-blosc2's search (gcc 14) in one function. A 4 KiB bitshuffled rainfall_f32
#   chunk: 858,000 -> 782,000 instructions (c-blosc2's 801,000). bench/compare.sh --rounds 5, zstd,
#   1 thread, geometric mean of the compression speed ratios (rows below 1.0): 1 KiB 1.074 (3) ->
#   1.143 (0), 4 KiB 1.159 (1) -> 1.247 (0), 64 KiB 1.234 (1) -> 1.236 (0); 8 MiB at clevel 7
#   (three rounds) 1.215 (4) -> 1.258 (0).
# - libdeflate: clang, without its loop vectorizer (see below).
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
# Whether the file is one of the compressors built with the profile (see below), and whether
# it is being built so.
pgo=
profiled=
# Runs compiler $1 on the remaining arguments with the output renamed to <output>$2 and
# without the arguments matching case pattern $3 ('' drops none).
compile_to() {
  with=$1 suffix=$2 drop=$3
  shift 3
  prev=
  for arg in "$@"; do
    shift
    case "$arg" in $drop) prev=$arg; continue ;; esac
    if [ "$prev" = -o ]; then set -- "$@" "$arg$suffix"; else set -- "$@" "$arg"; fi
    prev=$arg
  done
  "$with" "$@"
}
# Files built in two halves and joined into one object (lz4.c, zstd_lazy.c; why: above).
# `split_first PATTERN DROP ARGS...`: the first half, by clang without the arguments matching
# case pattern DROP, to <output>.first.o with only the symbols matching PATTERN global; sets
# split_out to <output> and split_keep to PATTERN.
split_first() {
  split_keep=$1 drop=$2
  shift 2
  prev=
  for arg in "$@"; do
    if [ "$prev" = -o ]; then split_out=$arg; fi
    prev=$arg
  done
  compile_to "$clang" .first.o "$drop" "$@" &&
    objcopy -w --keep-global-symbol="$split_keep" "$split_out.first.o"
}
# `split_join COMPILER DROP ARGS...`: the second half, the rest, by COMPILER to
# <output>.rest.o with those symbols local, then both halves joined into <output>. clang's
# profile-guided build leaves a call-graph section that `ld -r` cannot carry (rust-lld then
# rejects its sh_entsize); it only orders functions at the final link, so it goes.
split_join() {
  with=$1 drop=$2
  shift 2
  compile_to "$with" .rest.o "$drop" "$@" &&
    objcopy -w --localize-symbol="$split_keep" \
      --remove-section='*.llvm.call-graph-profile' "$split_out.rest.o" &&
    ld -r -o "$split_out" "$split_out.rest.o" "$split_out.first.o"
  joined=$?
  rm -f "$split_out.rest.o" "$split_out.first.o"
  return $joined
}
split_out=
if [ -n "$clang" ]; then
  case "$CARGO_PKG_NAME" in
    lz4-sys)
      case " $* " in
        */lz4.c" "*)
          # First half: the decoders, by clang without the profile, loops aligned (above);
          # the compressors are the second. Sanitizer builds keep it in one piece: clang
          # gives both halves' instrumented globals the same COMDAT groups, and `ld -r` then
          # drops one half's.
          # Both builds fill matches with cmake/lz4-fills.h (why: there). It acts on two
          # lines of lz4.c; another lz4 without them decodes as lz4 wrote it.
          fills="$(cd "$(dirname "$0")" && pwd)/lz4-fills.h"
          for src in "$@"; do
            case $src in */lz4.c) break ;; esac
          done
          for line in 'MEM_INIT(v, *srcPtr, 8);' 'LZ4_memcpy(op+4, match, 4);'; do
            grep -qF "$line" "$src" ||
              echo "deps-cc.sh: $src has no '$line': lz4-fills.h skips that fill" >&2
          done
          case " $* " in
            *" -fsanitize="*) set -- "$@" -include "$fills" ;;
            *)
              split_first 'LZ4_decompress_*' '' "$@" -falign-loops=64 \
                -mllvm --max-bytes-for-alignment=16 -include "$fills" || exit
              pgo=yes
              ;;
          esac
          ;;
        */lz4hc.c" "*)
          # LLVM's cmov converter makes the hash insert's distance clamp (LZ4HC_Insert) a
          # branch, which data that keeps starting new 4-byte sequences mispredicts: with the
          # cmov, unfiltered incr_i32 compresses at 0.98-1.00 of c-blosc2's speed instead of
          # 0.91, shuffled rows 1.12-1.17 instead of 1.16-1.25 (Xeon with AVX-512).
          set -- "$@" -mllvm -x86-cmov-converter=false
          pgo=yes
          ;;
        */lz4frame.c" "*) pgo=yes ;;
      esac
      compiler=$clang
      ;;
    zstd-sys)
      # Flags for gcc; sanitizer builds add one that clang rejects.
      case " $* " in
        */lib/compress/huf_compress.c" "*) ;; # gcc (see above)
        */lib/compress/zstd_lazy.c" "*)
          # First half: the binary tree search (the ZSTD_compressBlock_btlazy2* entry
          # points), by clang without the profile. The training's chunks are 2 MiB, where
          # that search runs at clevel 7 only; the small streams where clevel 5 runs it
          # compressed slower with its profile (see above). Its inlining threshold is raised
          # (why: the header); its functions and loops start on 64-byte boundaries, so that
          # where the link puts them does not move its speed (4 KiB bitshuffled rainfall_f32
          # compressed at 0.97-1.01 of c-blosc2's speed by layout, now 1.05-1.07; rest
          # unchanged: bench/RESULTS.md, stop 61). In one piece for sanitizer builds, as
          # lz4.c, and for the training's (all of it counted, as when the profile was made)
          # and other builds without the profile.
          case " $* :${B2F_PGO:-use}" in
            *" -fsanitize="* | *:generate:* | *:off) ;;
            *)
              split_first 'ZSTD_compressBlock_btlazy2*' -fno-ipa-icf-variables "$@" \
                -mllvm -inline-threshold=20000 -falign-functions=64 -falign-loops=64 || exit
              ;;
          esac
          compiler=$clang foreign=-fno-ipa-icf-variables pgo=yes
          ;;
        */lib/compress/*) compiler=$clang foreign=-fno-ipa-icf-variables pgo=yes ;;
        */lib/decompress/huf_decompress.c" "*) compiler=$clang foreign=-fno-ipa-icf-variables ;;
      esac
      ;;
    libdeflate-sys)
      # clang without the loop vectorizer. Time to decode the streams libdeflate takes
      # (src/codecs/zlib.rs), against gcc 12's build: 8 MiB chunks' streams under 8:1 3-5%
      # less with clang, 4-7% less without its loop vectorizer; unfiltered incr_i32 (matches of
      # 36-40 bytes at offset 4) 10.1-12.4 ms with gcc's, 13.4-13.6 with clang's, 8.2-8.3
      # without the vectorizer (-fno-slp-vectorize alone: 13.4-13.7; bench/RESULTS.md, stop 69).
      # zlib rows of the chunk benchmark, decompression, 1 thread: 64 KiB geometric mean 1.032
      # -> 1.075 (sparse_f64 0.80 -> 0.91, shuffled smooth_f64 0.86 -> 0.95), 8 MiB 1.099 ->
      # 1.135 (unfiltered incr_i32 1.03 -> 1.16, sparse_f64 0.95 -> 1.03).
      compiler=$clang
      set -- "$@" -fno-vectorize
      ;;
    libz-sys)
      # Flags chosen for clang; gcc rejects their --target.
      case " $* " in
        */chunkset_avx512.c" "*)
          compiler=$clang
          set -- "$@" -falign-loops=64 -include "$(cd "$(dirname "$0")" && pwd)/inline-memcpy.h"
          ;;
        */inftrees.c" "*) compiler=$clang ;; # (see above)
        */inflate.c" "* | */infback.c" "* | */chunkset_*.c" "*)
          foreign='--target=*' ;;
        */deflate_medium.c" "*)
          # deflate_medium, level 5's match loop, with its loops aligned to 64 bytes: zlib
          # compression of random data 0.94 -> 0.96-0.97 of c-blosc2's speed, smooth_f64
          # 0.95 -> 0.97-0.98 (Xeon with AVX-512); levels 1 and 9 unchanged. Inlining the
          # hash inserts into it instead made it slower (0.85), gcc 12 far slower (0.69).
          compiler=$clang pgo=yes
          set -- "$@" -falign-loops=64
          ;;
        */zlib-ng/*.c" "*) compiler=$clang pgo=yes ;;
        *) compiler=$clang ;;
      esac
      ;;
  esac
fi
# zstd's sequences loop, whichever compiler builds it: matches 8-15 bytes behind their source
# stored as 16-byte patterns (cmake/zstd-fill8.h, why: there).
case "$CARGO_PKG_NAME: $* " in
  zstd-sys:*/lib/decompress/zstd_decompress_block.c" "*)
    set -- "$@" -include "$(cd "$(dirname "$0")" && pwd)/zstd-fill8.h"
    ;;
esac
# Profile-guided optimization of the compressors clang builds (zlib-ng's deflate, zstd's
# lib/compress/, lz4.c's compressors, lz4hc.c and lz4frame.c) from cmake/codecs.profdata, which
# scripts/pgo-train.sh makes from a training run over data of its own (not the benchmark's).
# Measured on Zen 4 (bench/RESULTS.md): compression median 1.05 -> 1.11 of c-blosc2's speed,
# rows below 1.0 41 -> 20 (zlib on random data 0.87-0.94 -> 0.91-1.00, zstd on shuffled
# incr_i32 1.00 -> 1.18). The decoders are left alone: clang's profiled inflate decoded
# unfiltered incr_i32 at 0.86 where the split above gives 0.93. B2F_PGO=off builds without
# the profile; generate:DIR is the training build's instrumentation. A profile from a clang
# older than the one reading it is fine, the reverse is not, hence the version check;
# functions it does not match (another codec release) are simply built without it.
[ -n "$pgo" ] && pgo=${B2F_PGO:-use}
case "$pgo" in
  generate:*)
    set -- "$@" "-fprofile-instr-generate=${pgo#generate:}/%p-%m.profraw"
    profiled=yes
    ;;
  use)
    profile="$(cd "$(dirname "$0")" && pwd)/codecs.profdata"
    if [ -f "$profile" ] && [ "$("$clang" -dumpversion | cut -d. -f1)" -ge 19 ]; then
      set -- "$@" "-fprofile-instr-use=$profile" -Wno-profile-instr-unprofiled \
        -Wno-profile-instr-out-of-date
      profiled=yes
    fi
    ;;
esac
if [ -n "$foreign" ]; then
  for arg in "$@"; do
    shift
    case "$arg" in $foreign) ;; *) set -- "$@" "$arg" ;; esac
  done
fi
if [ -n "$split_out" ]; then
  # lz4.c's compressors where there is no profile: gcc's (see above), without clang's
  # --target, which gcc rejects.
  if [ "$CARGO_PKG_NAME" = lz4-sys ] && [ -z "$profiled" ]; then
    split_join cc '--target=*' "$@"
  else
    split_join "$compiler" '' "$@"
  fi
  exit
fi
exec "$compiler" "$@"
