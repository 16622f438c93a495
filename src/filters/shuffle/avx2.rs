//! AVX2 byte shuffle for typesizes 2, 4, 8 and 16, 32 elements per tile: the SSE2 rounds in
//! both 128-bit lanes at once, lane 0 holding elements 0..16 of the tile and lane 1 elements
//! 16..32, so no instruction ever crosses lanes.

use std::arch::x86_64::*;

use super::sse2::bitrev;

/// Shuffles whole tiles; returns how many leading elements were handled.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    if !matches!(typesize, 2 | 4 | 8 | 16) {
        return super::avx2_any::shuffle(typesize, src, dst);
    }
    let n = src.len() / typesize;
    let tiles = n / 32;
    if tiles == 0 {
        return super::sse2::shuffle(typesize, src, dst);
    }
    // SAFETY: only called after AVX2 was detected. Tile t reads src[32*K*t..][..32*K] within
    // n*K <= src.len(), and writes dst[j*n + 32t..][..32] within K*n <= dst.len().
    unsafe {
        match typesize {
            2 => shuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => shuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => shuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => shuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
        }
    }
    tiles * 32 + super::sse2::shuffle_from(typesize, tiles * 32, src, dst)
}

/// Unshuffles whole tiles; returns how many leading elements were handled.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    if !matches!(typesize, 2 | 4 | 8 | 16) {
        return super::avx2_any::unshuffle(typesize, src, dst);
    }
    let n = src.len() / typesize;
    let tiles = n / 32;
    if tiles == 0 {
        return super::sse2::unshuffle(typesize, src, dst);
    }
    // SAFETY: only called after AVX2 was detected; bounds mirror `shuffle`.
    unsafe {
        match typesize {
            2 => unshuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => unshuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => unshuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => unshuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
        }
    }
    tiles * 32 + super::sse2::unshuffle_from(typesize, tiles * 32, src, dst)
}

#[target_feature(enable = "avx2")]
unsafe fn shuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the callers checked every bound (see `shuffle`) and detected AVX2.
    unsafe {
        for t in 0..tiles {
            let base = src.add(32 * K * t);
            let mut v = [_mm256_setzero_si256(); K];
            for (q, x) in v.iter_mut().enumerate() {
                let lo = _mm_loadu_si128(base.add(16 * q) as *const __m128i);
                let hi = _mm_loadu_si128(base.add(16 * K + 16 * q) as *const __m128i);
                *x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
            }
            to_planes(&mut v);
            for (j, x) in v.iter().enumerate() {
                _mm256_storeu_si256(dst.add(j * n + 32 * t) as *mut __m256i, *x);
            }
        }
    }
}

/// The K plane vectors from K vectors holding 16 K-byte elements per lane (lane 0 elements
/// 0..16 of the tile, lane 1 elements 16..32): plane j ends up in vector j.
#[inline(always)]
pub(crate) unsafe fn to_planes<const K: usize>(v: &mut [__m256i; K]) {
    // SAFETY: register-only AVX2 intrinsics, inlined into AVX2-enabled callers.
    unsafe {
        if K == 16 {
            // 16 elements of 16 bytes are a square: the unpack rounds transpose it too, with
            // a third of the instructions of the pack rounds.
            from_planes(v);
            let w = *v;
            for (j, &x) in Slots::<K>::VECTOR.iter().enumerate() {
                v[j] = w[x];
            }
            return;
        }
        let low = _mm256_set1_epi16(0x00FF);
        let mut r = 1;
        while r < K {
            let w = *v;
            for q in 0..K / 2 {
                let (a, b) = (w[2 * q], w[2 * q + 1]);
                v[q] = _mm256_packus_epi16(_mm256_and_si256(a, low), _mm256_and_si256(b, low));
                v[q + K / 2] =
                    _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
            }
            r *= 2;
        }
    }
}

/// Element vectors (lane-split, in bit-reversed order) from the K plane vectors of 32 elements.
#[inline(always)]
pub(crate) unsafe fn from_planes<const K: usize>(v: &mut [__m256i; K]) {
    // SAFETY: register-only AVX2 intrinsics, inlined into AVX2-enabled callers.
    unsafe {
        for round in 0..K.trailing_zeros() {
            let w = *v;
            for j in 0..K / 2 {
                let (a, b) = (w[2 * j], w[2 * j + 1]);
                let (lo, hi) = match round {
                    0 => (_mm256_unpacklo_epi8(a, b), _mm256_unpackhi_epi8(a, b)),
                    1 => (_mm256_unpacklo_epi16(a, b), _mm256_unpackhi_epi16(a, b)),
                    2 => (_mm256_unpacklo_epi32(a, b), _mm256_unpackhi_epi32(a, b)),
                    _ => (_mm256_unpacklo_epi64(a, b), _mm256_unpackhi_epi64(a, b)),
                };
                v[j] = lo;
                v[K / 2 + j] = hi;
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn unshuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the callers checked every bound (see `unshuffle`) and detected AVX2.
    unsafe {
        let bits = K.trailing_zeros();
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (j, x) in v.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(src.add(j * n + 32 * t) as *const __m256i);
            }
            from_planes(&mut v);
            // Lane 0 of vector x belongs at 16-byte slot bitrev(x), lane 1 at K + bitrev(x).
            let base = dst.add(32 * K * t);
            if K >= 16 {
                // Pair the vectors of adjacent slots so each store writes 32 bytes: 1.6x
                // faster at K = 16, where the lane extracts spill registers; at K = 4 and 8
                // the extra lane permutes make it 5% slower.
                for s in (0..K).step_by(2) {
                    let (a, b) = (v[bitrev(s, bits)], v[bitrev(s + 1, bits)]);
                    let lanes0 = _mm256_permute2x128_si256(a, b, 0x20);
                    let lanes1 = _mm256_permute2x128_si256(a, b, 0x31);
                    _mm256_storeu_si256(base.add(16 * s) as *mut __m256i, lanes0);
                    _mm256_storeu_si256(base.add(16 * (K + s)) as *mut __m256i, lanes1);
                }
            } else {
                for (x, vec) in v.iter().enumerate() {
                    let slot = 16 * bitrev(x, bits);
                    _mm_storeu_si128(base.add(slot) as *mut __m128i, _mm256_castsi256_si128(*vec));
                    _mm_storeu_si128(
                        base.add(16 * K + slot) as *mut __m128i,
                        _mm256_extracti128_si256(*vec, 1),
                    );
                }
            }
        }
    }
}

/// Which vector `from_planes` leaves each 16-byte slot of a lane in, as a constant table, so
/// the store loops unroll with fixed registers instead of indexing a spilled array.
pub(crate) struct Slots<const P: usize>;

impl<const P: usize> Slots<P> {
    pub(crate) const VECTOR: [usize; P] = {
        let mut table = [0; P];
        let mut s = 0;
        while s < P {
            table[s] = bitrev(s, P.trailing_zeros());
            s += 1;
        }
        table
    };
}
