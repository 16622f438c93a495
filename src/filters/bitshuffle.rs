//! Bit shuffle. Stub.

use crate::error::Result;

/// Bit-shuffles `src` into `dst` (same length) as c-blosc2's `blosc2_bitshuffle` does,
/// including its handling of trailing elements.
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let _ = typesize;
    dst.copy_from_slice(src);
    Ok(())
}

/// Inverse of [`bitshuffle`]. `format_version` is the chunk header's version byte: chunks
/// written before Blosc2 format 3 bit-shuffled the trailing elements differently.
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8) -> Result<()> {
    let _ = (typesize, format_version);
    dst.copy_from_slice(src);
    Ok(())
}
