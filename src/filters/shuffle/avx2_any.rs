//! AVX2 byte shuffle for the typesizes without a power-of-two kernel, 32 elements per tile.
//!
//! Below 16 bytes, each element is padded to the next power of two P (3 -> 4, 5..7 -> 8,
//! 9..15 -> 16) and the power-of-two rounds of `avx2` do the rest: a byte shuffle spreads the
//! elements into their padded slots before, or packs them back after. Padding bytes only ever
//! reach planes that are not stored, or bytes that the next element's store overwrites.
//! Above 16 bytes, each 16-byte column of the elements is a P = 16 problem with a stride; the
//! last column overlaps the one before it when the typesize is not a multiple of 16.

use std::arch::x86_64::*;

use super::avx2::{from_planes, to_planes, Slots};

/// Shuffles whole tiles; returns how many leading elements were handled.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = tiles(typesize, n);
    if tiles > 0 {
        let shuffle = kernels(typesize).0;
        // SAFETY: only called after AVX2 was detected. `tiles` keeps every 16-byte load
        // within src[..n * typesize] (see `tiles`), and tile t writes plane j's bytes
        // dst[j*n + 32t..][..32], within j*n + n <= dst.len().
        unsafe { shuffle(typesize, src.as_ptr(), dst.as_mut_ptr(), n, tiles) };
    }
    tiles * 32
}

/// Unshuffles whole tiles; returns how many leading elements were handled.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let n = src.len() / typesize;
    let tiles = tiles(typesize, n);
    if tiles > 0 {
        let unshuffle = kernels(typesize).1;
        // SAFETY: only called after AVX2 was detected; the mirror of `shuffle`: tile t reads
        // src[j*n + 32t..][..32], and `tiles` keeps every 16-byte store within
        // dst[..n * typesize].
        unsafe { unshuffle(typesize, src.as_ptr(), dst.as_mut_ptr(), n, tiles) };
    }
    tiles * 32
}

/// A kernel: (typesize, src, dst, elements, tiles).
type Kernel = unsafe fn(usize, *const u8, *mut u8, usize, usize);

/// The shuffle and unshuffle kernels for `typesize` (not 1, 2, 4, 8 or 16).
fn kernels(typesize: usize) -> (Kernel, Kernel) {
    match typesize {
        3 => (shuffle_padded::<3, 4>, unshuffle_padded::<3, 4>),
        5 => (shuffle_padded::<5, 8>, unshuffle_padded::<5, 8>),
        6 => (shuffle_padded::<6, 8>, unshuffle_padded::<6, 8>),
        7 => (shuffle_padded::<7, 8>, unshuffle_padded::<7, 8>),
        9 => (shuffle_padded::<9, 16>, unshuffle_padded::<9, 16>),
        10 => (shuffle_padded::<10, 16>, unshuffle_padded::<10, 16>),
        11 => (shuffle_padded::<11, 16>, unshuffle_padded::<11, 16>),
        12 => (shuffle_padded::<12, 16>, unshuffle_padded::<12, 16>),
        13 => (shuffle_padded::<13, 16>, unshuffle_padded::<13, 16>),
        14 => (shuffle_padded::<14, 16>, unshuffle_padded::<14, 16>),
        15 => (shuffle_padded::<15, 16>, unshuffle_padded::<15, 16>),
        _ => (shuffle_wide, unshuffle_wide),
    }
}

/// How many 32-element tiles the kernels may run. Padded kernels load and store 16 bytes at
/// an element, reaching up to 16 - typesize bytes past it, so they stop 16 bytes short of the
/// end; the wide kernels never leave an element.
fn tiles(typesize: usize, n: usize) -> usize {
    if typesize < 16 {
        (n * typesize).saturating_sub(16) / (32 * typesize)
    } else {
        n / 32
    }
}

/// `pshufb` mask (the same in both lanes) that spreads 16 / P elements of `typesize` bytes,
/// packed, into P-byte slots; or, with `pack`, the reverse.
fn mask<const P: usize>(typesize: usize, pack: bool) -> [u8; 32] {
    let mut m = [0x80u8; 32];
    for k in 0..16 {
        let from = if pack {
            (k < 16 / P * typesize).then(|| k / typesize * P + k % typesize)
        } else {
            (k % P < typesize).then(|| k / P * typesize + k % P)
        };
        if let Some(from) = from {
            m[k] = from as u8;
            m[16 + k] = from as u8;
        }
    }
    m
}

#[target_feature(enable = "avx2")]
unsafe fn shuffle_padded<const T: usize, const P: usize>(
    _typesize: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    tiles: usize,
) {
    // SAFETY: the caller checked every bound (see `shuffle`) and detected AVX2.
    unsafe {
        let typesize = T;
        let per_slot = 16 / P;
        let spread = _mm256_loadu_si256(mask::<P>(typesize, false).as_ptr() as *const __m256i);
        for t in 0..tiles {
            let base = src.add(32 * typesize * t);
            let mut v = [_mm256_setzero_si256(); P];
            for (q, x) in v.iter_mut().enumerate() {
                let lo = _mm_loadu_si128(base.add(q * per_slot * typesize) as *const __m128i);
                let hi =
                    _mm_loadu_si128(base.add((16 + q * per_slot) * typesize) as *const __m128i);
                *x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
                if P < 16 {
                    *x = _mm256_shuffle_epi8(*x, spread);
                }
            }
            to_planes(&mut v);
            for (j, x) in v.iter().take(typesize).enumerate() {
                _mm256_storeu_si256(dst.add(j * n + 32 * t) as *mut __m256i, *x);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn unshuffle_padded<const T: usize, const P: usize>(
    _typesize: usize,
    src: *const u8,
    dst: *mut u8,
    n: usize,
    tiles: usize,
) {
    // SAFETY: the caller checked every bound (see `unshuffle`) and detected AVX2.
    unsafe {
        let typesize = T;
        let per_slot = 16 / P;
        let pack = _mm256_loadu_si256(mask::<P>(typesize, true).as_ptr() as *const __m256i);
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); P];
            for (j, x) in v.iter_mut().take(typesize).enumerate() {
                *x = _mm256_loadu_si256(src.add(j * n + 32 * t) as *const __m256i);
            }
            from_planes(&mut v);
            if P < 16 {
                for x in v.iter_mut() {
                    *x = _mm256_shuffle_epi8(*x, pack);
                }
            }
            // Vector bitrev(s) holds padded slot s. Stores go in element order, so each one's
            // overhang is overwritten by the next (the last one's by the next tile or tail).
            let base = dst.add(32 * typesize * t);
            for (s, &x) in Slots::<P>::VECTOR.iter().enumerate() {
                let at = base.add(s * per_slot * typesize);
                _mm_storeu_si128(at as *mut __m128i, _mm256_castsi256_si128(v[x]));
            }
            for (s, &x) in Slots::<P>::VECTOR.iter().enumerate() {
                let at = base.add((16 + s * per_slot) * typesize);
                _mm_storeu_si128(at as *mut __m128i, _mm256_extracti128_si256(v[x], 1));
            }
        }
    }
}

/// Start of each 16-byte column of a wide element; the last one ends at the element's end.
fn columns(typesize: usize) -> impl Iterator<Item = usize> {
    (0..typesize).step_by(16).map(move |c| c.min(typesize - 16))
}

#[target_feature(enable = "avx2")]
unsafe fn shuffle_wide(typesize: usize, src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the caller checked every bound (see `shuffle`) and detected AVX2; columns stay
    // inside their element.
    unsafe {
        for c in columns(typesize) {
            for t in 0..tiles {
                let base = src.add(32 * typesize * t + c);
                let mut v = [_mm256_setzero_si256(); 16];
                for (q, x) in v.iter_mut().enumerate() {
                    let lo = _mm_loadu_si128(base.add(q * typesize) as *const __m128i);
                    let hi = _mm_loadu_si128(base.add((16 + q) * typesize) as *const __m128i);
                    *x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
                }
                to_planes(&mut v);
                for (j, x) in v.iter().enumerate() {
                    _mm256_storeu_si256(dst.add((c + j) * n + 32 * t) as *mut __m256i, *x);
                }
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn unshuffle_wide(typesize: usize, src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the caller checked every bound (see `unshuffle`) and detected AVX2; columns stay
    // inside their element.
    unsafe {
        for c in columns(typesize) {
            for t in 0..tiles {
                let mut v = [_mm256_setzero_si256(); 16];
                for (j, x) in v.iter_mut().enumerate() {
                    *x = _mm256_loadu_si256(src.add((c + j) * n + 32 * t) as *const __m256i);
                }
                from_planes(&mut v);
                let base = dst.add(32 * typesize * t + c);
                for (e, &x) in Slots::<16>::VECTOR.iter().enumerate() {
                    _mm_storeu_si128(
                        base.add(e * typesize) as *mut __m128i,
                        _mm256_castsi256_si128(v[x]),
                    );
                    _mm_storeu_si128(
                        base.add((16 + e) * typesize) as *mut __m128i,
                        _mm256_extracti128_si256(v[x], 1),
                    );
                }
            }
        }
    }
}
