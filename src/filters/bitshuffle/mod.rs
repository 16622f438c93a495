//! Bit shuffle, as c-blosc2's `blosc2_bitshuffle`: over the elements in whole groups of 8,
//! bit k of byte j of element e goes to bit row `8j + k`, at bit `e % 8` of byte `e / 8`;
//! the remaining elements and trailing bytes are copied unchanged.
//!
//! Done in two steps: a byte shuffle into planes (the shuffle module's kernels), then each
//! plane is split into its 8 bit rows (and back) by the SIMD kernels in `x86`.

mod scalar;
#[cfg(target_arch = "x86_64")]
mod x86;

use std::cell::RefCell;

use super::shuffle;
use super::simd::{level, Level};
use crate::error::Result;

thread_local! {
    /// The byte planes of the block being (un)shuffled.
    static PLANES: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// Bit-shuffles `src` into `dst` (same length).
pub fn bitshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    bitshuffle_with(level(), typesize, src, dst)
}

/// Inverse of [`bitshuffle`]. `format_version` is the chunk header's version byte: Blosc1
/// chunks (version 2) bit-shuffled only blocks whose element count is a multiple of 8.
pub fn bitunshuffle(typesize: usize, src: &[u8], dst: &mut [u8], format_version: u8) -> Result<()> {
    bitunshuffle_with(level(), typesize, src, dst, format_version)
}

/// [`bitshuffle`] with an explicit kernel level.
pub fn bitshuffle_with(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    check(typesize, src, dst)?;
    let nb = src.len() / typesize / 8 * 8;
    let whole = nb * typesize;
    if nb > 0 {
        if typesize == 1 {
            bits_of_plane(level, &src[..nb], &mut dst[..nb]);
        } else {
            PLANES.with(|p| {
                let mut planes = p.borrow_mut();
                if planes.len() < whole {
                    planes.resize(whole, 0);
                }
                shuffle::shuffle_with(level, typesize, &src[..whole], &mut planes[..whole]);
                for (plane, out) in planes[..whole]
                    .chunks_exact(nb)
                    .zip(dst.chunks_exact_mut(nb))
                {
                    bits_of_plane(level, plane, out);
                }
            });
        }
    }
    shuffle::copy_rest(whole, src, dst);
    Ok(())
}

/// [`bitunshuffle`] with an explicit kernel level.
pub fn bitunshuffle_with(
    level: Level,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
    format_version: u8,
) -> Result<()> {
    check(typesize, src, dst)?;
    let n = src.len() / typesize;
    if format_version == crate::chunk::header::VERSION_BLOSC1 && !n.is_multiple_of(8) {
        dst.copy_from_slice(src);
        return Ok(());
    }
    let nb = n / 8 * 8;
    let whole = nb * typesize;
    if nb > 0 {
        if typesize == 1 {
            plane_of_bits(level, &src[..nb], &mut dst[..nb]);
        } else {
            PLANES.with(|p| {
                let mut planes = p.borrow_mut();
                if planes.len() < whole {
                    planes.resize(whole, 0);
                }
                for (bits, plane) in src[..whole]
                    .chunks_exact(nb)
                    .zip(planes.chunks_exact_mut(nb))
                {
                    plane_of_bits(level, bits, plane);
                }
                shuffle::unshuffle_with(level, typesize, &planes[..whole], &mut dst[..whole]);
            });
        }
    }
    shuffle::copy_rest(whole, src, dst);
    Ok(())
}

fn check(typesize: usize, src: &[u8], dst: &[u8]) -> Result<()> {
    if typesize == 0 {
        bail!(invalid, "bitshuffle: typesize is 0");
    }
    if src.len() != dst.len() {
        bail!(invalid, "bitshuffle: source and destination lengths differ");
    }
    Ok(())
}

/// Splits one byte plane (a multiple of 8 bytes) into its 8 bit rows.
fn bits_of_plane(level: Level, plane: &[u8], out: &mut [u8]) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    match level.min(super::simd::detect()) {
        Level::Avx2 | Level::Avx512 if super::simd::has_gfni() => {
            done = x86::bits_of_plane_gfni(plane, out)
        }
        Level::Avx512 => done = x86::bits_of_plane_avx512(plane, out),
        Level::Avx2 => done = x86::bits_of_plane_avx2(plane, out),
        Level::Sse2 => done = x86::bits_of_plane_sse2(plane, out),
        Level::Scalar => {}
    }
    let _ = level;
    scalar::bits_of_plane(plane, out, done);
}

/// Joins 8 bit rows back into their byte plane.
fn plane_of_bits(level: Level, bits: &[u8], plane: &mut [u8]) {
    #[allow(unused_mut)]
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    match level.min(super::simd::detect()) {
        Level::Avx2 | Level::Avx512 if super::simd::has_gfni() => {
            done = x86::plane_of_bits_gfni(bits, plane)
        }
        Level::Avx2 | Level::Avx512 => done = x86::plane_of_bits_avx2(bits, plane),
        Level::Sse2 => done = x86::plane_of_bits_sse2(bits, plane),
        Level::Scalar => {}
    }
    let _ = level;
    scalar::plane_of_bits(bits, plane, done);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, bit by bit.
    fn reference(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let nb = n - n % 8;
        let mut out = src.to_vec();
        out[..nb * ts].fill(0);
        for e in 0..nb {
            for j in 0..ts {
                for k in 0..8 {
                    let bit = (src[e * ts + j] >> k) & 1;
                    let row = 8 * j + k;
                    out[row * (nb / 8) + e / 8] |= bit << (e % 8);
                }
            }
        }
        out
    }

    #[test]
    fn every_level_matches_the_definition() {
        let data: Vec<u8> = (0..40_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 9) as u8)
            .collect();
        let mut sizes: Vec<usize> = (0..=300).step_by(7).collect();
        sizes.extend([512, 1000, 4096, 8192 + 24, 20_000]);
        for ts in (1..=20).chain([24, 32, 64, 255]) {
            for &len in &sizes {
                for misalign in [0, 1, 5] {
                    let src = &data[misalign..misalign + len];
                    let want = reference(ts, src);
                    for level in [Level::Scalar, Level::Sse2, Level::Avx2, Level::Avx512] {
                        let mut buf = vec![0u8; len + 8];
                        let dst = &mut buf[misalign..misalign + len];
                        bitshuffle_with(level, ts, src, dst).unwrap();
                        assert!(dst == &want[..], "bitshuffle ts {ts} len {len} {level:?}");
                        let mut back = vec![0u8; len + 8];
                        let b = &mut back[3..3 + len];
                        bitunshuffle_with(level, ts, dst, b, 5).unwrap();
                        assert!(b == src, "bitunshuffle ts {ts} len {len} {level:?}");
                    }
                }
            }
        }
    }

    /// Planes of 32768 and 65536 bytes (one per byte of the element), whose bit rows lie 4 and
    /// 8 KiB apart and take the wider kernels; with a partial group and a byte after them.
    #[test]
    fn every_level_matches_the_definition_with_rows_4k_apart() {
        let data: Vec<u8> = (0..200_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        for (ts, elements) in [(1, 65_536), (2, 32_768), (4, 32_768 + 5), (3, 65_536)] {
            let len = ts * elements + 1;
            let src = &data[..len];
            let want = reference(ts, src);
            for level in [Level::Scalar, Level::Sse2, Level::Avx2, Level::Avx512] {
                let mut dst = vec![0u8; len];
                bitshuffle_with(level, ts, src, &mut dst).unwrap();
                assert!(dst == want, "bitshuffle ts {ts} len {len} {level:?}");
                let mut back = vec![0u8; len];
                bitunshuffle_with(level, ts, &dst, &mut back, 5).unwrap();
                assert!(back == src, "bitunshuffle ts {ts} len {len} {level:?}");
            }
        }
    }

    /// Each x86 kernel the CPU can run, called directly (the levels above take the GFNI ones
    /// wherever the CPU has GFNI, which would leave the others untested there), finished by
    /// the scalar code from where it stops, against the scalar code alone.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn every_x86_kernel_matches_the_scalar_transposes() {
        type Kernel = fn(&[u8], &mut [u8]) -> usize;
        let has = |f: &str| match f {
            "avx2" => std::is_x86_feature_detected!("avx2"),
            "avx512" => super::super::simd::detect() == Level::Avx512,
            "gfni" => super::super::simd::has_gfni(),
            _ => true,
        };
        let forward: [(&str, Kernel); 4] = [
            ("sse2", x86::bits_of_plane_sse2),
            ("avx2", x86::bits_of_plane_avx2),
            ("avx512", x86::bits_of_plane_avx512),
            ("gfni", x86::bits_of_plane_gfni),
        ];
        let inverse: [(&str, Kernel); 3] = [
            ("sse2", x86::plane_of_bits_sse2),
            ("avx2", x86::plane_of_bits_avx2),
            ("gfni", x86::plane_of_bits_gfni),
        ];
        let data: Vec<u8> = (0..300_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .collect();
        // Rows of every length up to 300 bytes, then long ones, 4 KiB multiples among them.
        let mut lengths: Vec<usize> = (0..=300).map(|rows| 8 * rows).collect();
        lengths.extend([8 * 4096, 8 * 4100, 8 * 8192, 8 * 12_500, 8 * 32_768]);
        for len in lengths {
            let plane = &data[..len];
            let mut want = vec![0u8; len];
            scalar::bits_of_plane(plane, &mut want, 0);
            for (name, kernel) in forward.iter().filter(|(n, _)| has(n)) {
                let mut out = vec![0u8; len];
                let done = kernel(plane, &mut out);
                scalar::bits_of_plane(plane, &mut out, done);
                assert!(out == want, "{name} forward, plane of {len} bytes");
            }
            for (name, kernel) in inverse.iter().filter(|(n, _)| has(n)) {
                let mut back = vec![0u8; len];
                let done = kernel(&want, &mut back);
                scalar::plane_of_bits(&want, &mut back, done);
                assert!(back == plane, "{name} inverse, plane of {len} bytes");
            }
        }
    }

    #[test]
    fn blosc1_chunks_with_incomplete_groups_were_not_bit_shuffled() {
        let src: Vec<u8> = (0..36u8).collect(); // 9 elements of 4 bytes
        let mut out = vec![0u8; 36];
        bitunshuffle(4, &src, &mut out, 2).unwrap();
        assert_eq!(out, src);
    }
}
