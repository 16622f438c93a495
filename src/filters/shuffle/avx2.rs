//! AVX2 byte shuffle for typesizes 2, 4, 8 and 16, 32 elements per tile: the SSE2 rounds on
//! 256-bit vectors, with a lane fix-up after each pack or unpack (AVX2 packs within lanes).

use std::arch::x86_64::*;

/// Shuffles whole tiles; returns how many leading elements were handled.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
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
            16 => shuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => return 0,
        }
    }
    tiles * 32
}

/// Unshuffles whole tiles; returns how many leading elements were handled.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
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
            16 => unshuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => return 0,
        }
    }
    tiles * 32
}

#[inline(always)]
unsafe fn even(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let m = _mm256_set1_epi16(0x00FF);
        let p = _mm256_packus_epi16(_mm256_and_si256(a, m), _mm256_and_si256(b, m));
        _mm256_permute4x64_epi64(p, 0b11_01_10_00)
    }
}

#[inline(always)]
unsafe fn odd(a: __m256i, b: __m256i) -> __m256i {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let p = _mm256_packus_epi16(_mm256_srli_epi16(a, 8), _mm256_srli_epi16(b, 8));
        _mm256_permute4x64_epi64(p, 0b11_01_10_00)
    }
}

/// Turns K vectors holding 32 elements of K bytes into the K byte planes.
#[inline(always)]
pub(crate) unsafe fn to_planes<const K: usize>(v: &mut [__m256i; K]) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let mut r = 1;
        while r < K {
            let mut w = *v;
            for q in 0..K / 2 {
                w[q] = even(v[2 * q], v[2 * q + 1]);
                w[q + K / 2] = odd(v[2 * q], v[2 * q + 1]);
            }
            *v = w;
            r *= 2;
        }
    }
}

/// Inverse of [`to_planes`].
#[inline(always)]
pub(crate) unsafe fn from_planes<const K: usize>(v: &mut [__m256i; K]) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let mut r = 1;
        while r < K {
            let mut w = *v;
            for q in 0..K / 2 {
                let lo = _mm256_unpacklo_epi8(v[q], v[q + K / 2]);
                let hi = _mm256_unpackhi_epi8(v[q], v[q + K / 2]);
                w[2 * q] = _mm256_permute2x128_si256(lo, hi, 0x20);
                w[2 * q + 1] = _mm256_permute2x128_si256(lo, hi, 0x31);
            }
            *v = w;
            r *= 2;
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn shuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (q, x) in v.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(src.add(32 * K * t + 32 * q) as *const __m256i);
            }
            to_planes(&mut v);
            for (j, x) in v.iter().enumerate() {
                _mm256_storeu_si256(dst.add(j * n + 32 * t) as *mut __m256i, *x);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn unshuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (j, x) in v.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(src.add(j * n + 32 * t) as *const __m256i);
            }
            from_planes(&mut v);
            for (q, x) in v.iter().enumerate() {
                _mm256_storeu_si256(dst.add(32 * K * t + 32 * q) as *mut __m256i, *x);
            }
        }
    }
}
