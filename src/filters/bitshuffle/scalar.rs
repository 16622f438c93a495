//! Portable bit shuffle with 8x8 bit-matrix transposes in a u64.

/// Transposes the 8x8 bit matrix in `x` (byte p, bit k) -> (byte k, bit p).
#[inline(always)]
pub fn transpose8(mut x: u64) -> u64 {
    let mut t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Bit-transposes the groups of 8 elements `from/8 .. nb/8` (`nb` a multiple of 8).
pub fn trans(ts: usize, nb: usize, from: usize, src: &[u8], dst: &mut [u8]) {
    let rows = nb / 8;
    for j in 0..ts {
        for m in from / 8..rows {
            let mut x = 0u64;
            for p in 0..8 {
                x |= u64::from(src[(8 * m + p) * ts + j]) << (8 * p);
            }
            let y = transpose8(x);
            for k in 0..8 {
                dst[(8 * j + k) * rows + m] = (y >> (8 * k)) as u8;
            }
        }
    }
}

/// Inverse of [`trans`].
pub fn untrans(ts: usize, nb: usize, from: usize, src: &[u8], dst: &mut [u8]) {
    let rows = nb / 8;
    for j in 0..ts {
        for m in from / 8..rows {
            let mut x = 0u64;
            for k in 0..8 {
                x |= u64::from(src[(8 * j + k) * rows + m]) << (8 * k);
            }
            let y = transpose8(x);
            for p in 0..8 {
                dst[(8 * m + p) * ts + j] = (y >> (8 * p)) as u8;
            }
        }
    }
}
