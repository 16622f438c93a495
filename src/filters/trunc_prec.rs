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
    let whole = src.len() / typesize * typesize;
    if typesize == 4 {
        let mask = !((1u32 << zeroed) - 1);
        for (d, s) in dst[..whole].chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            let v = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    } else {
        let mask = !((1u64 << zeroed) - 1);
        for (d, s) in dst[..whole].chunks_exact_mut(8).zip(src.chunks_exact(8)) {
            let v = u64::from_le_bytes(s.try_into().unwrap_or([0; 8])) & mask;
            d.copy_from_slice(&v.to_le_bytes());
        }
    }
    dst[whole..].copy_from_slice(&src[whole..]);
    Ok(())
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
