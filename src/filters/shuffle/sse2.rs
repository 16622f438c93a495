//! SSE2 byte shuffle for typesizes 2, 4, 8 and 16, 16 elements per tile.
//!
//! A tile of `K` vectors (16 elements of K bytes) becomes K plane vectors by log2(K) rounds of
//! "deinterleave byte pairs" (even bytes, odd bytes); unshuffling runs the inverse rounds
//! (interleave). The same rounds serve the bitshuffle kernels.

use std::arch::x86_64::*;

/// Shuffles whole tiles; returns how many leading elements were handled.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = n / 16;
    if tiles == 0 {
        return 0;
    }
    // SAFETY: SSE2 is in the x86_64 baseline. Tile t reads src[16*K*t .. 16*K*(t+1)] with
    // 16*K*tiles <= n*K <= src.len(), and writes dst[j*n + 16t .. j*n + 16t + 16] with
    // 16*tiles <= n, so j*n + 16*tiles <= K*n <= dst.len().
    unsafe {
        match typesize {
            2 => shuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => shuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => shuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            16 => shuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => return 0,
        }
    }
    tiles * 16
}

/// Unshuffles whole tiles; returns how many leading elements were handled.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = n / 16;
    if tiles == 0 {
        return 0;
    }
    // SAFETY: the mirror of `shuffle`: reads src[j*n + 16t ..][..16], writes dst[16*K*t..][..16*K].
    unsafe {
        match typesize {
            2 => unshuffle_k::<2>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            4 => unshuffle_k::<4>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            8 => unshuffle_k::<8>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            16 => unshuffle_k::<16>(src.as_ptr(), dst.as_mut_ptr(), n, tiles),
            _ => return 0,
        }
    }
    tiles * 16
}

/// Even bytes of `a` then of `b`.
#[inline(always)]
unsafe fn even(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let m = _mm_set1_epi16(0x00FF);
        _mm_packus_epi16(_mm_and_si128(a, m), _mm_and_si128(b, m))
    }
}

/// Odd bytes of `a` then of `b`.
#[inline(always)]
unsafe fn odd(a: __m128i, b: __m128i) -> __m128i {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe { _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_srli_epi16(b, 8)) }
}

/// Turns K vectors holding 16 elements of K bytes into the K byte planes.
#[inline(always)]
pub(crate) unsafe fn to_planes<const K: usize>(v: &mut [__m128i; K]) {
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
pub(crate) unsafe fn from_planes<const K: usize>(v: &mut [__m128i; K]) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let mut r = 1;
        while r < K {
            let mut w = *v;
            for q in 0..K / 2 {
                w[2 * q] = _mm_unpacklo_epi8(v[q], v[q + K / 2]);
                w[2 * q + 1] = _mm_unpackhi_epi8(v[q], v[q + K / 2]);
            }
            *v = w;
            r *= 2;
        }
    }
}

#[target_feature(enable = "sse2")]
unsafe fn shuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (q, x) in v.iter_mut().enumerate() {
                *x = _mm_loadu_si128(src.add(16 * K * t + 16 * q) as *const __m128i);
            }
            to_planes(&mut v);
            for (j, x) in v.iter().enumerate() {
                _mm_storeu_si128(dst.add(j * n + 16 * t) as *mut __m128i, *x);
            }
        }
    }
}

#[target_feature(enable = "sse2")]
unsafe fn unshuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (j, x) in v.iter_mut().enumerate() {
                *x = _mm_loadu_si128(src.add(j * n + 16 * t) as *const __m128i);
            }
            from_planes(&mut v);
            for (q, x) in v.iter().enumerate() {
                _mm_storeu_si128(dst.add(16 * K * t + 16 * q) as *mut __m128i, *x);
            }
        }
    }
}
