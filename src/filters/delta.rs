//! Delta: each element XOR the reference block (block 0 of the chunk), as c-blosc2's delta.c.
//!
//! Block 0 is coded against itself (element i XOR element i-1); other blocks element-wise
//! against block 0. Elements are 1, 2, 4 or 8 bytes wide: typesizes that are multiples of 8
//! work in 8-byte words, all others byte by byte. Bytes past the last whole word are left as
//! they are (c-blosc2 leaves them unwritten; we copy them through).

/// The word width delta works in for a typesize.
fn word(typesize: usize) -> usize {
    match typesize {
        1 | 2 | 4 | 8 => typesize,
        t if t % 8 == 0 => 8,
        _ => 1,
    }
}

fn xor_words<const W: usize>(dst: &mut [u8], a: &[u8], b: &[u8]) {
    for ((d, x), y) in dst
        .chunks_exact_mut(W)
        .zip(a.chunks_exact(W))
        .zip(b.chunks_exact(W))
    {
        for i in 0..W {
            d[i] = x[i] ^ y[i];
        }
    }
}

/// Encodes block `src` into `dst`. `dref` is the chunk's first block as given to the filter
/// (for block 0 itself: `src`).
pub fn encode(dref: &[u8], is_first_block: bool, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let w = word(typesize);
    let whole = src.len() / w * w;
    dst[whole..].copy_from_slice(&src[whole..]);
    if whole == 0 {
        return;
    }
    if is_first_block {
        dst[..w].copy_from_slice(&dref[..w]);
        xor(w, &mut dst[w..whole], &src[w..whole], &dref[..whole - w]);
    } else {
        xor(w, &mut dst[..whole], &src[..whole], &dref[..whole]);
    }
}

fn xor(w: usize, dst: &mut [u8], a: &[u8], b: &[u8]) {
    match w {
        8 => xor_words::<8>(dst, a, b),
        4 => xor_words::<4>(dst, a, b),
        2 => xor_words::<2>(dst, a, b),
        _ => xor_words::<1>(dst, a, b),
    }
}

/// Decodes the first block in place (a running XOR over its words).
pub fn decode_first_block(typesize: usize, buf: &mut [u8]) {
    let w = word(typesize);
    let whole = buf.len() / w * w;
    for i in (w..whole).step_by(w) {
        for b in 0..w {
            buf[i + b] ^= buf[i - w + b];
        }
    }
}

/// Decodes a later block in place, against the decoded first block `dref`.
pub fn decode(dref: &[u8], typesize: usize, buf: &mut [u8]) {
    let w = word(typesize);
    let whole = buf.len() / w * w;
    for (d, r) in buf[..whole].iter_mut().zip(&dref[..whole]) {
        *d ^= r;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_examples() {
        // typesize 2, first block: [a, b^a, c^b] in 16-bit words.
        let src = [1u8, 0, 3, 0, 7, 0, 9];
        let mut enc = [0u8; 7];
        encode(&src, true, 2, &src, &mut enc);
        assert_eq!(enc, [1, 0, 2, 0, 4, 0, 9]);
        let mut dec = enc;
        decode_first_block(2, &mut dec);
        assert_eq!(dec, src);
        // A later block against the reference.
        let later = [5u8, 5, 5, 5, 5, 5, 5];
        let mut enc2 = [0u8; 7];
        encode(&src, false, 2, &later, &mut enc2);
        assert_eq!(enc2, [4, 5, 6, 5, 2, 5, 5]);
        decode(&src, 2, &mut enc2);
        assert_eq!(enc2, later);
    }

    #[test]
    fn round_trips_for_every_word_width() {
        for ts in [1, 2, 3, 4, 7, 8, 12, 16, 24] {
            let first: Vec<u8> = (0..1000u32).map(|i| (i * 7 / 3) as u8).collect();
            let other: Vec<u8> = (0..999u32).map(|i| (i * 11 / 5) as u8).collect();
            let mut e0 = vec![0; first.len()];
            encode(&first, true, ts, &first, &mut e0);
            let mut e1 = vec![0; other.len()];
            encode(&first, false, ts, &other, &mut e1);
            decode_first_block(ts, &mut e0);
            assert_eq!(e0, first, "ts {ts}");
            decode(&e0, ts, &mut e1);
            assert_eq!(e1, other, "ts {ts}");
        }
    }
}
