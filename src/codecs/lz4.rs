//! LZ4 and LZ4HC through lz4-sys.
