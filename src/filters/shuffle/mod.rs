//! Byte shuffle: byte j of every element goes to plane j (`dst[j * n + i] = src[i * ts + j]`),
//! trailing bytes of an incomplete element are copied unchanged, as `blosc2_shuffle` does.
//!
//! SSE2 and AVX2 kernels handle typesizes 2, 4, 8 and 16 over whole tiles of 16 or 32
//! elements, and AVX2 kernels every other typesize (`avx2_any`); the portable code does the
//! tails, and every typesize but those four on machines without AVX2.

#[cfg(target_arch = "x86_64")]
mod avx2;
#[cfg(target_arch = "x86_64")]
mod avx2_any;
mod scalar;
#[cfg(target_arch = "x86_64")]
mod sse2;

use super::simd::{level, Level};

/// Shuffles `src` into `dst` (same length) for elements of `typesize` bytes.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "shuffle: source and destination lengths differ"
    );
    let n = src.len().checked_div(typesize).unwrap_or(0);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let done = simd_shuffle(level(), typesize, src, dst);
    finish(scalar::shuffle_tail, typesize, n, done, src, dst);
}

/// Inverse of [`shuffle`].
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    assert_eq!(
        src.len(),
        dst.len(),
        "unshuffle: source and destination lengths differ"
    );
    let n = src.len().checked_div(typesize).unwrap_or(0);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let done = simd_unshuffle(level(), typesize, src, dst);
    finish(scalar::unshuffle_tail, typesize, n, done, src, dst);
}

/// The `n` elements from `done` on by `tail` (the portable code), then the trailing bytes of
/// an incomplete element, copied. Each is skipped when there is none: the tail's dispatch and
/// a zero-length `memcpy` were 70 instructions of a 1 KiB chunk's unshuffle.
#[inline(always)]
fn finish(
    tail: fn(usize, usize, &[u8], &mut [u8]),
    typesize: usize,
    n: usize,
    done: usize,
    src: &[u8],
    dst: &mut [u8],
) {
    if done < n {
        tail(typesize, done, src, dst);
    }
    copy_rest(n * typesize, src, dst);
}

/// The bytes of `src` from `whole` on, copied unchanged into `dst`; no `memcpy` call when
/// there are none.
#[inline(always)]
pub(super) fn copy_rest(whole: usize, src: &[u8], dst: &mut [u8]) {
    if whole < src.len() {
        dst[whole..].copy_from_slice(&src[whole..]);
    }
}

/// Whether [`unshuffle_planes`] has a vector kernel for `typesize` on this machine. Without
/// one, gathering planes is slower than copying them together for [`unshuffle`].
pub fn unshuffles_planes_fast(typesize: usize) -> bool {
    cfg!(target_arch = "x86_64") && level() >= Level::Avx2 && matches!(typesize, 2 | 4 | 8 | 16)
}

/// [`unshuffle`] of planes that need not lie together: `planes[j]` holds byte j of every
/// element (`dst.len() / planes.len()` bytes at least). The block's planes can then be read
/// where a decoder found them, a stored stream straight from the chunk.
pub fn unshuffle_planes(planes: &[&[u8]], dst: &mut [u8]) {
    let typesize = planes.len();
    #[cfg(target_arch = "x86_64")]
    if unshuffles_planes_fast(typesize) {
        // (checks that the planes cover `dst`)
        return avx2::unshuffle_planes(planes, dst, level() == Level::Avx512);
    }
    let n = dst.len().checked_div(typesize).unwrap_or(0);
    assert!(
        n * typesize == dst.len() && planes.iter().all(|p| p.len() >= n),
        "unshuffle_planes: {typesize} planes do not cover {} bytes",
        dst.len()
    );
    for (i, item) in dst.chunks_exact_mut(typesize).enumerate() {
        for (b, plane) in item.iter_mut().zip(planes) {
            *b = plane[i];
        }
    }
}

/// Runs the best kernel for `level`; returns how many leading elements it handled.
fn simd_shuffle(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    match level {
        Level::Avx2 | Level::Avx512 => return avx2::shuffle(typesize, src, dst),
        Level::Sse2 => return sse2::shuffle(typesize, src, dst),
        Level::Scalar => {}
    }
    let _ = (level, typesize, src, dst);
    0
}

/// (Compares, not a `match`, which LLVM made a jump table: an indirect branch on every
/// block for the same instruction count.)
fn simd_unshuffle(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if level >= Level::Avx2 {
        return avx2::unshuffle(typesize, src, dst, level == Level::Avx512);
    } else if level == Level::Sse2 {
        return sse2::unshuffle(typesize, src, dst);
    }
    let _ = (level, typesize, src, dst);
    0
}

/// Runs one kernel level explicitly (tests compare every level with the scalar reference).
pub fn shuffle_with(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize.max(1);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let done = simd_shuffle(level.min(super::simd::detect()), typesize, src, dst);
    finish(scalar::shuffle_tail, typesize, n, done, src, dst);
}

/// [`unshuffle`] with an explicit kernel level.
pub fn unshuffle_with(level: Level, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let n = src.len() / typesize.max(1);
    if typesize <= 1 || n == 0 {
        dst.copy_from_slice(src);
        return;
    }
    let done = simd_unshuffle(level.min(super::simd::detect()), typesize, src, dst);
    finish(scalar::unshuffle_tail, typesize, n, done, src, dst);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(ts: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / ts;
        let mut out = src.to_vec();
        for i in 0..n {
            for j in 0..ts {
                out[j * n + i] = src[i * ts + j];
            }
        }
        out
    }

    #[test]
    fn every_level_matches_the_definition() {
        let data: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8)
            .collect();
        let mut sizes: Vec<usize> = (0..=300).collect();
        // 33_285: 16-byte items in an odd number of tiles (2080 items), past the two-tile cut.
        sizes.extend([1023, 4096, 33_285, 65536, 65536 + 17]);
        for ts in (1..=20).chain([24, 32, 64, 128, 255]) {
            for &len in &sizes {
                for misalign in [0, 1, 3, 7] {
                    let src = &data[misalign..misalign + len];
                    let want = reference(ts, src);
                    for level in [Level::Scalar, Level::Sse2, Level::Avx2, Level::Avx512] {
                        let mut buf = vec![0u8; len + 8];
                        let dst = &mut buf[misalign..misalign + len];
                        shuffle_with(level, ts, src, dst);
                        assert!(dst == &want[..], "shuffle ts {ts} len {len} {level:?}");
                        let mut back = vec![0u8; len + 8];
                        let b = &mut back[(misalign + 1) % 8..(misalign + 1) % 8 + len];
                        unshuffle_with(level, ts, dst, b);
                        assert!(b == src, "unshuffle ts {ts} len {len} {level:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn planes_apart_unshuffle_as_planes_together() {
        for ts in (1..=20).chain([32, 64]) {
            for len in (0..300).chain([1023 * ts, 4096 * ts + 5 * ts, 65536]) {
                let n = len / ts;
                let whole = n * ts;
                let items: Vec<u8> = (0..whole).map(|i| (i * 131 + i / 9) as u8).collect();
                let shuffled = reference(ts, &items);
                // Each plane in an allocation of its own, longer than the plane, at an odd
                // offset.
                let owned: Vec<Vec<u8>> = (0..ts)
                    .map(|j| {
                        let mut v = vec![0x5Au8; n + 40];
                        v[3..3 + n].copy_from_slice(&shuffled[j * n..(j + 1) * n]);
                        v
                    })
                    .collect();
                let planes: Vec<&[u8]> = owned.iter().map(|v| &v[3..]).collect();
                let mut dst = vec![0u8; whole];
                unshuffle_planes(&planes, &mut dst);
                assert!(dst == items, "ts {ts} len {len}");
            }
        }
    }

    /// The kernels load and store whole vectors that overhang the element they work on; none
    /// may reach past either buffer. Sources are exact-size allocations (the sanitizer run of
    /// scripts/test-all.sh catches over-reads); destinations are followed by guard bytes.
    #[test]
    fn kernels_stay_inside_both_buffers() {
        for ts in (2..=40).chain([48, 64, 100, 255]) {
            let base = 32 * ts;
            let lens = (0..4 * base).step_by(ts.max(7)).chain(base - 20..base + 20);
            for len in lens.chain([8 * base - 1, 8 * base, 8 * base + 17]) {
                let src: Vec<u8> = (0..len).map(|i| (i * 31 + i / 7) as u8).collect();
                let want = reference(ts, &src);
                for level in [Level::Sse2, Level::Avx2, Level::Avx512] {
                    let mut guarded = vec![0xA5u8; len + 64];
                    shuffle_with(level, ts, &src, &mut guarded[..len]);
                    assert!(guarded[..len] == want[..], "shuffle ts {ts} len {len}");
                    assert!(
                        guarded[len..].iter().all(|&b| b == 0xA5),
                        "shuffle ts {ts} len {len} wrote past the end"
                    );
                    let shuffled = guarded[..len].to_vec();
                    let mut back = vec![0xA5u8; len + 64];
                    unshuffle_with(level, ts, &shuffled, &mut back[..len]);
                    assert!(back[..len] == src[..], "unshuffle ts {ts} len {len}");
                    assert!(
                        back[len..].iter().all(|&b| b == 0xA5),
                        "unshuffle ts {ts} len {len} wrote past the end"
                    );
                }
            }
        }
    }
}
