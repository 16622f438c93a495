//! zlib through libz-sys.
