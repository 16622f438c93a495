//! Portable bit transposes of one byte plane, with 8x8 bit-matrix transposes in a u64.

/// Transposes the 8x8 bit matrix in `x`: (byte p, bit k) -> (byte k, bit p).
#[inline(always)]
pub fn transpose8(mut x: u64) -> u64 {
    let mut t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA;
    x = x ^ t ^ (t << 7);
    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC;
    x = x ^ t ^ (t << 14);
    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0;
    x ^ t ^ (t << 28)
}

/// Splits a byte plane into its 8 bit rows (`out` = 8 rows of `plane.len() / 8` bytes),
/// for the groups of 8 bytes from group `from` on.
pub fn bits_of_plane(plane: &[u8], out: &mut [u8], from: usize) {
    let rows = plane.len() / 8;
    for m in from..rows {
        let x = u64::from_le_bytes(plane[8 * m..8 * m + 8].try_into().unwrap_or([0; 8]));
        let y = transpose8(x).to_le_bytes();
        for (k, &b) in y.iter().enumerate() {
            out[k * rows + m] = b;
        }
    }
}

/// Inverse of [`bits_of_plane`].
pub fn plane_of_bits(bits: &[u8], plane: &mut [u8], from: usize) {
    let rows = bits.len() / 8;
    for m in from..rows {
        let mut x = [0u8; 8];
        for (k, b) in x.iter_mut().enumerate() {
            *b = bits[k * rows + m];
        }
        let y = transpose8(u64::from_le_bytes(x));
        plane[8 * m..8 * m + 8].copy_from_slice(&y.to_le_bytes());
    }
}
