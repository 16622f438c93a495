//! Bytedelta (filter 35): after a shuffle, each of the `typesize` byte streams is replaced by
//! the differences of consecutive bytes (wrapping), as c-blosc2's bytedelta plugin. Bytes past
//! the last whole element are copied unchanged.
//!
//! Filter 34 ("bytedelta_buggy") is the first release of the same idea: on SIMD builds of
//! c-blosc2 (all x86 ones) the running value restarts from 0 after the last whole 16 bytes of
//! each stream. [`decode_buggy`] undoes that so such chunks read as c-blosc2 reads them.

/// The number of streams and their length for `typesize` over `n` bytes: no streams when no
/// item is whole (a typesize from a file may be far larger than the data).
fn streams(typesize: usize, n: usize) -> (usize, usize) {
    let ts = typesize.max(1);
    let len = n / ts;
    (if len == 0 { 0 } else { ts }, len)
}

/// Encodes `src` into `dst` with `typesize` streams (0 is treated as 1).
pub fn encode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let (ts, len) = streams(typesize, src.len());
    for s in 0..ts {
        let (i, o) = (
            &src[s * len..(s + 1) * len],
            &mut dst[s * len..(s + 1) * len],
        );
        let mut prev = 0u8;
        for (d, &v) in o.iter_mut().zip(i) {
            *d = v.wrapping_sub(prev);
            prev = v;
        }
    }
    dst[ts * len..].copy_from_slice(&src[ts * len..]);
}

/// Inverse of [`encode`].
pub fn decode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let (ts, len) = streams(typesize, src.len());
    for s in 0..ts {
        prefix_sum(
            &src[s * len..(s + 1) * len],
            &mut dst[s * len..(s + 1) * len],
        );
    }
    dst[ts * len..].copy_from_slice(&src[ts * len..]);
}

/// Decodes filter 34: as [`decode`], but each stream's tail after its last whole 16 bytes
/// restarts from 0.
pub fn decode_buggy(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let (ts, len) = streams(typesize, src.len());
    let head = len / 16 * 16;
    for s in 0..ts {
        let (i, o) = (
            &src[s * len..(s + 1) * len],
            &mut dst[s * len..(s + 1) * len],
        );
        prefix_sum(&i[..head], &mut o[..head]);
        prefix_sum(&i[head..], &mut o[head..]);
    }
    dst[ts * len..].copy_from_slice(&src[ts * len..]);
}

fn prefix_sum(src: &[u8], dst: &mut [u8]) {
    let mut acc = 0u8;
    for (d, &v) in dst.iter_mut().zip(src) {
        acc = acc.wrapping_add(v);
        *d = acc;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_worked_example() {
        // Two streams of 3 bytes and one trailing byte.
        let src = [10u8, 12, 11, 200, 100, 0, 77];
        let mut enc = [0u8; 7];
        encode(2, &src, &mut enc);
        assert_eq!(enc, [10, 2, 255, 200, 156, 156, 77]);
        let mut dec = [0u8; 7];
        decode(2, &enc, &mut dec);
        assert_eq!(dec, src);
    }

    #[test]
    fn buggy_variant_restarts_after_sixteen_byte_groups() {
        let src: Vec<u8> = (0..40u8).map(|i| i * 3).collect();
        // c-blosc2's buggy encoder: running delta over the first 32 bytes, then from 0.
        let mut enc = vec![0u8; 40];
        encode(1, &src[..32], &mut enc[..32]);
        encode(1, &src[32..], &mut enc[32..]);
        let mut dec = vec![0u8; 40];
        decode_buggy(1, &enc, &mut dec);
        assert_eq!(dec, src);
    }

    #[test]
    fn typesizes_beyond_the_data_pass_it_through() {
        // A frame's typesize reaches bytedelta unchecked against the block: no stream is
        // whole, so nothing is filtered.
        let src = [9u8, 8, 7];
        for f in [encode, decode, decode_buggy] {
            let mut out = [0u8; 3];
            f(i32::MAX as usize, &src, &mut out);
            assert_eq!(out, src);
        }
    }
}
