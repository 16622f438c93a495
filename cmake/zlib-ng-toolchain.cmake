# Compiler for zlib-ng, which libz-sys builds with cmake (see .cargo/config.toml): the
# dependency compiler script, which gives zlib-ng's deflate to clang and its inflate to the
# default compiler when clang is installed (why: see the script). Sanitizer builds keep cmake's
# default compiler: the cc crate chose their flags for it (some are gcc-only).
find_program(B2FRAME_CLANG NAMES clang-19 clang)
if(CMAKE_HOST_UNIX AND B2FRAME_CLANG AND NOT CMAKE_C_FLAGS MATCHES "-fsanitize")
  set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/deps-cc.sh")
endif()
