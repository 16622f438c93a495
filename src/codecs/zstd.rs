//! zstd through zstd-sys.
