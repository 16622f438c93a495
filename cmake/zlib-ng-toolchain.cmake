# Compiler for zlib-ng, which libz-sys builds with cmake (see .cargo/config.toml): the
# dependency compiler script, which gives zlib-ng's deflate to clang and its inflate to the
# default compiler when clang is installed (why: see the script). Without clang, cmake's
# default compiler builds it all.
find_program(B2FRAME_CLANG NAMES clang-19 clang)
if(CMAKE_HOST_UNIX AND B2FRAME_CLANG)
  set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/deps-cc.sh")
endif()
