//! Integer precision truncation (c-blosc2's global filter 36, INT_TRUNC; lossy, nothing to
//! undo: c-blosc2's decoder copies the block through). Bytes past the last whole item are
//! copied unchanged.

use crate::error::Result;

/// Zeroes the low bits of every 1-, 2-, 4- or 8-byte integer in `src` (little-endian),
/// writing `dst`. `prec_bits` (the filter's meta byte read as `i8`) keeps that many bits,
/// counted from the top, when positive, and zeroes that many low bits when negative; at least
/// one bit must survive.
pub fn truncate(prec_bits: i8, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let zeroed = zeroed_bits(prec_bits, typesize)?;
    super::trunc_prec::zero_low_bits(zeroed, typesize, src, dst);
    Ok(())
}

/// How many low bits [`truncate`] zeroes in each integer, or its error for parameters it
/// refuses (whatever the data).
pub fn zeroed_bits(prec_bits: i8, typesize: usize) -> Result<u32> {
    if !matches!(typesize, 1 | 2 | 4 | 8) {
        bail!(
            invalid,
            "int_trunc: typesize {typesize} is not an integer size (1, 2, 4 or 8)"
        );
    }
    let width = 8 * typesize as i32;
    let bits = i32::from(prec_bits);
    let zeroed = if bits >= 0 { width - bits } else { -bits };
    if !(0..width).contains(&zeroed) {
        bail!(
            invalid,
            "int_trunc: precision {bits} bits leaves no bit of {typesize}-byte integers"
        );
    }
    Ok(zeroed as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_top_bits_or_drops_the_low_ones() {
        let mut out = [0u8; 9];
        let v = 0x1234_5678_9abc_def0u64.to_le_bytes();
        truncate(12, 8, &v, &mut out[..8]).unwrap();
        assert_eq!(
            u64::from_le_bytes(out[..8].try_into().unwrap()),
            0x1230_0000_0000_0000
        );
        truncate(-4, 4, &[0xff; 9], &mut out).unwrap();
        assert_eq!(out, [0xf0, 0xff, 0xff, 0xff, 0xf0, 0xff, 0xff, 0xff, 0xff]);
        truncate(1, 2, &[0xff, 0xff], &mut out[..2]).unwrap();
        assert_eq!(out[..2], [0x00, 0x80]);
        truncate(-7, 1, &[0xff], &mut out[..1]).unwrap();
        assert_eq!(out[0], 0x80);
    }

    #[test]
    fn rejects_bad_parameters() {
        let mut out = [0u8; 8];
        let refused = |r: Result<()>, needle: &str| match r {
            Err(crate::Error::InvalidArgument(m)) if m.contains(needle) => {}
            other => panic!("expected an invalid argument about {needle:?}, got {other:?}"),
        };
        refused(truncate(5, 3, &[0; 6], &mut out[..6]), "typesize 3");
        refused(truncate(0, 4, &[0; 8], &mut out), "precision 0 bits");
        refused(truncate(-32, 4, &[0; 8], &mut out), "precision -32 bits");
        refused(truncate(33, 4, &[0; 8], &mut out), "precision 33 bits");
        refused(truncate(-8, 1, &[0; 8], &mut out), "1-byte integers");
        refused(truncate(-128, 8, &[0; 8], &mut out), "8-byte integers");
        assert!(truncate(64, 8, &[0; 8], &mut out).is_ok());
    }
}
