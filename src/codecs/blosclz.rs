//! BloscLZ: c-blosc2's own LZ77 codec, written here in Rust.
//!
//! Stub: to be replaced by the real codec.

use crate::error::{Error, Result};

/// Compresses `src` into `dst` at `clevel` (1..=9). Returns the compressed length, or 0 when
/// the data does not compress into `dst` (the caller then stores it uncompressed), exactly as
/// c-blosc2's `blosclz_compress` does.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    let _ = (clevel, src, dst);
    0
}

/// Decompresses one BloscLZ stream into `dst`. Returns the number of bytes written.
/// Malformed input (a match reaching before the start, or past `dst`) is an error, never a panic.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let _ = (src, dst);
    Err(Error::unsupported("blosclz: not implemented yet"))
}
