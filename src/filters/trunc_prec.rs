//! Precision truncation of float32/float64 mantissas (lossy; nothing to undo), as c-blosc2's
//! trunc-prec.c. Bytes past the last whole float are copied unchanged.

use crate::error::Result;

const MANTISSA_F32: i32 = 23;
const MANTISSA_F64: i32 = 52;

/// Zeroes the low mantissa bits of every float in `src`, writing `dst`. `prec_bits` (the
/// filter's meta byte read as `i8`) keeps that many mantissa bits when positive and removes
/// that many when negative. Only typesizes 4 and 8 are valid, and at least one mantissa bit
/// must survive (so NaN and infinities keep their meaning).
pub fn truncate(prec_bits: i8, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    zero_low_bits(zeroed_bits(prec_bits, typesize)?, typesize, src, dst);
    Ok(())
}

/// How many low bits [`truncate`] zeroes in each item, or its error for parameters it refuses
/// (whatever the data).
pub fn zeroed_bits(prec_bits: i8, typesize: usize) -> Result<u32> {
    let mantissa = match typesize {
        4 => MANTISSA_F32,
        8 => MANTISSA_F64,
        t => bail!(
            invalid,
            "trunc_prec: typesize {t} is not a float size (4 or 8)"
        ),
    };
    let bits = i32::from(prec_bits);
    if bits.abs() > mantissa {
        bail!(
            invalid,
            "trunc_prec: precision {bits} bits exceeds the {mantissa}-bit mantissa of {}-byte floats",
            typesize
        );
    }
    let zeroed = if bits >= 0 { mantissa - bits } else { -bits };
    if zeroed >= mantissa {
        bail!(
            invalid,
            "trunc_prec: removing {zeroed} bits leaves no mantissa in {typesize}-byte floats"
        );
    }
    Ok(zeroed as u32)
}

/// Zeroes the `zeroed` low bits (fewer than the item's) of every little-endian item of
/// `typesize` bytes (1, 2, 4 or 8) in `src`, writing `dst`; bytes past the last whole item are
/// copied unchanged. Both truncation filters come down to this.
pub(super) fn zero_low_bits(zeroed: u32, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let mask = !((1u64 << zeroed) - 1);
    let whole = src.len() / typesize * typesize;
    match typesize {
        1 => mask_items::<1>(mask, &src[..whole], &mut dst[..whole]),
        2 => mask_items::<2>(mask, &src[..whole], &mut dst[..whole]),
        4 => mask_items::<4>(mask, &src[..whole], &mut dst[..whole]),
        _ => mask_items::<8>(mask, &src[..whole], &mut dst[..whole]),
    }
    dst[whole..].copy_from_slice(&src[whole..]);
}

fn mask_items<const N: usize>(mask: u64, src: &[u8], dst: &mut [u8]) {
    for (d, s) in dst.chunks_exact_mut(N).zip(src.chunks_exact(N)) {
        let mut v = [0u8; 8];
        v[..N].copy_from_slice(s);
        let masked = u64::from_le_bytes(v) & mask;
        d.copy_from_slice(&masked.to_le_bytes()[..N]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_requested_bits() {
        let x = std::f32::consts::PI;
        let mut out = [0u8; 4];
        truncate(10, 4, &x.to_le_bytes(), &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), x.to_bits() & !((1 << 13) - 1));
        truncate(-3, 4, &x.to_le_bytes(), &mut out).unwrap();
        assert_eq!(u32::from_le_bytes(out), x.to_bits() & !0b111);
        let y = std::f64::consts::E;
        let mut out8 = [0u8; 8];
        truncate(20, 8, &y.to_le_bytes(), &mut out8).unwrap();
        assert_eq!(u64::from_le_bytes(out8), y.to_bits() & !((1 << 32) - 1));
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut out = [0u8; 8];
        assert!(truncate(5, 2, &[0; 8], &mut out).is_err());
        assert!(truncate(24, 4, &[0; 8], &mut out).is_err());
        assert!(truncate(0, 4, &[0; 8], &mut out).is_err());
        assert!(truncate(-23, 4, &[0; 8], &mut out).is_err());
        assert!(truncate(53, 8, &[0; 8], &mut out).is_err());
    }
}
