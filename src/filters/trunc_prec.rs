//! Precision truncation of float32/float64 mantissas (lossy; nothing to undo). Stub.

use crate::error::Result;

/// Zeroes the low mantissa bits of every float in `src`, writing `dst`. `prec_bits` is the
/// filter's meta byte read as `i8`: positive keeps that many mantissa bits, negative removes
/// that many, as c-blosc2's `truncate_precision` does. Only typesize 4 and 8 are valid.
pub fn truncate(prec_bits: i8, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let _ = (prec_bits, typesize);
    dst.copy_from_slice(src);
    Ok(())
}
