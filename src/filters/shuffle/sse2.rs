//! SSE2 byte shuffle for typesizes 2, 4, 8 and 16, 16 elements per tile.
//!
//! Forward: a tile of K vectors (16 elements of K bytes) becomes the K plane vectors through
//! log2(K) rounds of "split each pair of vectors into its even and its odd bytes" (two packs).
//! Inverse: log2(K) rounds of unpacks of widening units (1, 2, 4, 8 bytes) leave the element
//! vectors in bit-reversed order. The AVX2 kernels run the same rounds in each 128-bit lane.

use std::arch::x86_64::*;

/// Shuffles whole tiles; returns how many leading elements were handled.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = n / 16;
    if tiles == 0 || !matches!(typesize, 2 | 4 | 8 | 16) {
        return 0;
    }
    // SAFETY: SSE2 is in the x86_64 baseline. Tile t reads src[16*K*t..][..16*K] with
    // 16*K*tiles <= n*K <= src.len(), and writes dst[j*n + 16t..][..16] with 16*tiles <= n,
    // so j*n + 16*tiles <= K*n <= dst.len().
    unsafe {
        match typesize {
            2 => shuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => shuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => shuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => shuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
        }
    }
    tiles * 16
}

/// Unshuffles whole tiles; returns how many leading elements were handled.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = n / 16;
    if tiles == 0 || !matches!(typesize, 2 | 4 | 8 | 16) {
        return 0;
    }
    // SAFETY: the mirror of `shuffle`: reads src[j*n + 16t..][..16], writes dst[16*K*t..][..16*K].
    unsafe {
        match typesize {
            2 => unshuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => unshuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => unshuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => unshuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
        }
    }
    tiles * 16
}

/// Shuffles the whole 16-element tiles from element `from` on (the AVX2 kernels' tail);
/// returns how many elements it handled.
pub fn shuffle_from(typesize: usize, from: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = (n - from) / 16;
    if tiles == 0 {
        return 0;
    }
    // SAFETY: as in `shuffle`, with tiles offset by `from` elements: reads end at
    // (from + 16*tiles)*K <= n*K, writes at j*n + from + 16*tiles <= (j+1)*n.
    unsafe {
        let (s, d) = (
            src.as_ptr().add(from * typesize),
            dst.as_mut_ptr().add(from),
        );
        match typesize {
            2 => shuffle_k::<2>(s, d, n, tiles),
            4 => shuffle_k::<4>(s, d, n, tiles),
            8 => shuffle_k::<8>(s, d, n, tiles),
            _ => shuffle_k::<16>(s, d, n, tiles),
        }
    }
    tiles * 16
}

/// Unshuffles the whole 16-element tiles from element `from` on; returns how many it handled.
#[inline]
pub fn unshuffle_from(typesize: usize, from: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = (n - from) / 16;
    if tiles == 0 {
        return 0;
    }
    // SAFETY: the mirror of `shuffle_from`.
    unsafe {
        let (s, d) = (
            src.as_ptr().add(from),
            dst.as_mut_ptr().add(from * typesize),
        );
        match typesize {
            2 => unshuffle_k::<2>(s, d, n, tiles),
            4 => unshuffle_k::<4>(s, d, n, tiles),
            8 => unshuffle_k::<8>(s, d, n, tiles),
            _ => unshuffle_k::<16>(s, d, n, tiles),
        }
    }
    tiles * 16
}

/// Reverses the low `bits` bits of `x`: where rounds of unpacks leave vector `x`.
#[inline(always)]
pub(crate) const fn bitrev(x: usize, bits: u32) -> usize {
    if bits == 0 {
        0
    } else {
        x.reverse_bits() >> (usize::BITS - bits)
    }
}

#[target_feature(enable = "sse2")]
unsafe fn shuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the callers checked every bound (see `shuffle`); SSE2 is always present.
    unsafe {
        let low = _mm_set1_epi16(0x00FF);
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (q, x) in v.iter_mut().enumerate() {
                *x = _mm_loadu_si128(src.add(16 * K * t + 16 * q) as *const __m128i);
            }
            let mut r = 1;
            while r < K {
                let w = v;
                for q in 0..K / 2 {
                    let (a, b) = (w[2 * q], w[2 * q + 1]);
                    v[q] = _mm_packus_epi16(_mm_and_si128(a, low), _mm_and_si128(b, low));
                    v[q + K / 2] = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8));
                }
                r *= 2;
            }
            for (j, x) in v.iter().enumerate() {
                _mm_storeu_si128(dst.add(j * n + 16 * t) as *mut __m128i, *x);
            }
        }
    }
}

/// One round of the inverse: unpacks in units of `1 << round` bytes.
#[inline(always)]
unsafe fn unpack_round<const K: usize>(v: &mut [__m128i; K], round: u32) {
    // SAFETY: register-only SSE2 intrinsics.
    unsafe {
        let w = *v;
        for j in 0..K / 2 {
            let (a, b) = (w[2 * j], w[2 * j + 1]);
            let (lo, hi) = match round {
                0 => (_mm_unpacklo_epi8(a, b), _mm_unpackhi_epi8(a, b)),
                1 => (_mm_unpacklo_epi16(a, b), _mm_unpackhi_epi16(a, b)),
                2 => (_mm_unpacklo_epi32(a, b), _mm_unpackhi_epi32(a, b)),
                _ => (_mm_unpacklo_epi64(a, b), _mm_unpackhi_epi64(a, b)),
            };
            v[j] = lo;
            v[K / 2 + j] = hi;
        }
    }
}

/// Turns the K plane vectors of 16 elements into element vectors; vector `x` ends up holding
/// bytes `16 * bitrev(x)..` of the tile.
#[inline(always)]
pub(crate) unsafe fn from_planes<const K: usize>(v: &mut [__m128i; K]) {
    let rounds = K.trailing_zeros();
    for round in 0..rounds {
        // SAFETY: register-only SSE2 intrinsics.
        unsafe { unpack_round(v, round) };
    }
}

#[target_feature(enable = "sse2")]
unsafe fn unshuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the callers checked every bound (see `unshuffle`); SSE2 is always present.
    unsafe {
        let bits = K.trailing_zeros();
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (j, x) in v.iter_mut().enumerate() {
                *x = _mm_loadu_si128(src.add(j * n + 16 * t) as *const __m128i);
            }
            from_planes(&mut v);
            for (x, vec) in v.iter().enumerate() {
                _mm_storeu_si128(
                    dst.add(16 * K * t + 16 * bitrev(x, bits)) as *mut __m128i,
                    *vec,
                );
            }
        }
    }
}
