# Compiler for zlib-ng, which libz-sys builds with cmake (see .cargo/config.toml).
# zlib-ng 2.3.3 compiled by Debian 12's gcc 12 deflates at about 0.72 of the speed of c-blosc2's
# wheel (built by gcc 14); compiled by clang 19 it runs at 0.97 with the same output
# (bench/RESULTS.md). Use clang when it is installed, else cmake's default compiler.
# Sanitizer builds keep the default: the cc crate chose their flags for it (some are gcc-only).
find_program(B2FRAME_ZLIB_CC NAMES clang-19 clang)
if(B2FRAME_ZLIB_CC AND NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
  set(CMAKE_C_COMPILER "${B2FRAME_ZLIB_CC}")
endif()
