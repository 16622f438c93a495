//! SSE2 and AVX2 bit shuffle for typesizes 1, 2, 4, 8 and 16.
//!
//! Forward: a tile of elements becomes byte planes (the byte-shuffle rounds), then
//! `movemask` takes bit 7 of every byte of a plane at once, and adding the vector to itself
//! moves the next bit up: eight masks are the eight bit rows of that plane.
//! Inverse: the bit rows of a plane are gathered so that one `movemask` yields, for one bit
//! position, the plane byte of one element per group; the planes then become elements.

use std::arch::x86_64::*;

use crate::filters::shuffle::{avx2 as shuf256, sse2 as shuf128};

/// Bit-transposes whole tiles of 16 elements; returns how many elements were handled.
pub fn trans_sse2(ts: usize, nb: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let tiles = nb / 16;
    if tiles == 0 || !matches!(ts, 1 | 2 | 4 | 8 | 16) {
        return 0;
    }
    // SAFETY: SSE2 is in the x86_64 baseline. Tile t reads src[16*ts*t..][..16*ts] with
    // 16*ts*tiles <= nb*ts <= src.len(); it writes 2 bytes at (8j+k)*rows + 2t, and
    // 2t + 2 <= rows = nb/8, so every write is below 8*ts*rows = nb*ts <= dst.len().
    unsafe {
        match ts {
            1 => trans128::<1>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            2 => trans128::<2>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            4 => trans128::<4>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            8 => trans128::<8>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            _ => trans128::<16>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
        }
    }
    tiles * 16
}

/// AVX2 version of [`trans_sse2`] (32 elements per tile).
pub fn trans_avx2(ts: usize, nb: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let tiles = nb / 32;
    if tiles == 0 || !matches!(ts, 1 | 2 | 4 | 8 | 16) {
        return trans_sse2(ts, nb, src, dst);
    }
    // SAFETY: only called after AVX2 was detected; bounds as in `trans_sse2` with 32-element
    // tiles and 4-byte writes at (8j+k)*rows + 4t, 4t + 4 <= rows.
    unsafe {
        match ts {
            1 => trans256::<1>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            2 => trans256::<2>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            4 => trans256::<4>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            8 => trans256::<8>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            _ => trans256::<16>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
        }
    }
    tiles * 32
}

/// Inverse bit transpose of whole 16-element tiles; returns how many elements were handled.
pub fn untrans_sse2(ts: usize, nb: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let tiles = nb / 16;
    if tiles == 0 || !matches!(ts, 1 | 2 | 4 | 8 | 16) {
        return 0;
    }
    // SAFETY: SSE2 baseline; reads 2 bytes at (8j+k)*rows + 2t (in bounds as in trans_sse2),
    // writes dst[16*ts*t..][..16*ts] within nb*ts.
    unsafe {
        match ts {
            1 => untrans128::<1>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            2 => untrans128::<2>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            4 => untrans128::<4>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            8 => untrans128::<8>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            _ => untrans128::<16>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
        }
    }
    tiles * 16
}

/// AVX2 version of [`untrans_sse2`] (32 elements per tile).
pub fn untrans_avx2(ts: usize, nb: usize, src: &[u8], dst: &mut [u8]) -> usize {
    let tiles = nb / 32;
    if tiles == 0 || !matches!(ts, 1 | 2 | 4 | 8 | 16) {
        return untrans_sse2(ts, nb, src, dst);
    }
    // SAFETY: only called after AVX2 was detected; reads 4 bytes at (8j+k)*rows + 4t with
    // 4t + 4 <= rows, writes dst[32*ts*t..][..32*ts] within nb*ts.
    unsafe {
        match ts {
            1 => untrans256::<1>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            2 => untrans256::<2>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            4 => untrans256::<4>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            8 => untrans256::<8>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
            _ => untrans256::<16>(src.as_ptr(), dst.as_mut_ptr(), nb, tiles),
        }
    }
    tiles * 32
}

#[target_feature(enable = "sse2")]
unsafe fn trans128<const K: usize>(src: *const u8, dst: *mut u8, nb: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let rows = nb / 8;
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (q, x) in v.iter_mut().enumerate() {
                *x = _mm_loadu_si128(src.add(16 * K * t + 16 * q) as *const __m128i);
            }
            shuf128::to_planes(&mut v);
            for (j, plane) in v.iter().enumerate() {
                let mut p = *plane;
                for k in (0..8).rev() {
                    let bits = _mm_movemask_epi8(p) as u16;
                    std::ptr::copy_nonoverlapping(
                        bits.to_le_bytes().as_ptr(),
                        dst.add((8 * j + k) * rows + 2 * t),
                        2,
                    );
                    p = _mm_add_epi8(p, p);
                }
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn trans256<const K: usize>(src: *const u8, dst: *mut u8, nb: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let rows = nb / 8;
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (q, x) in v.iter_mut().enumerate() {
                *x = _mm256_loadu_si256(src.add(32 * K * t + 32 * q) as *const __m256i);
            }
            shuf256::to_planes(&mut v);
            for (j, plane) in v.iter().enumerate() {
                let mut p = *plane;
                for k in (0..8).rev() {
                    let bits = _mm256_movemask_epi8(p) as u32;
                    std::ptr::copy_nonoverlapping(
                        bits.to_le_bytes().as_ptr(),
                        dst.add((8 * j + k) * rows + 4 * t),
                        4,
                    );
                    p = _mm256_add_epi8(p, p);
                }
            }
        }
    }
}

#[target_feature(enable = "sse2")]
unsafe fn untrans128<const K: usize>(src: *const u8, dst: *mut u8, nb: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let rows = nb / 8;
        let low = _mm_set1_epi16(0x00FF);
        for t in 0..tiles {
            let mut v = [_mm_setzero_si128(); K];
            for (j, out) in v.iter_mut().enumerate() {
                // Row k's two bytes (groups 0 and 1) for this tile, as 16-bit lanes.
                let mut r = [0i16; 8];
                for (k, x) in r.iter_mut().enumerate() {
                    let mut b = [0u8; 2];
                    std::ptr::copy_nonoverlapping(
                        src.add((8 * j + k) * rows + 2 * t),
                        b.as_mut_ptr(),
                        2,
                    );
                    *x = i16::from_le_bytes(b);
                }
                let a = _mm_loadu_si128(r.as_ptr() as *const __m128i);
                // Byte g*8 + k = group g of row k.
                let g0 = _mm_packus_epi16(_mm_and_si128(a, low), _mm_setzero_si128());
                let g1 = _mm_packus_epi16(_mm_srli_epi16(a, 8), _mm_setzero_si128());
                let mut x = _mm_unpacklo_epi64(g0, g1);
                let mut plane = [0u8; 16];
                for p in (0..8).rev() {
                    let m = _mm_movemask_epi8(x) as u16;
                    plane[p] = m as u8;
                    plane[8 + p] = (m >> 8) as u8;
                    x = _mm_add_epi8(x, x);
                }
                *out = _mm_loadu_si128(plane.as_ptr() as *const __m128i);
            }
            shuf128::from_planes(&mut v);
            for (q, x) in v.iter().enumerate() {
                _mm_storeu_si128(dst.add(16 * K * t + 16 * q) as *mut __m128i, *x);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn untrans256<const K: usize>(src: *const u8, dst: *mut u8, nb: usize, tiles: usize) {
    // SAFETY: the safe wrapper checked every bound this body relies on, and the
    // instruction set was detected before dispatching here.
    unsafe {
        let rows = nb / 8;
        // Within each lane, bytes 4k+g become 4g+k; then dwords [g0 k0-3, g0 k4-7, g1 ...].
        let lane_order = _mm256_setr_epi8(
            0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 0, 4, 8, 12, 1, 5, 9, 13, 2, 6,
            10, 14, 3, 7, 11, 15,
        );
        let dword_order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (j, out) in v.iter_mut().enumerate() {
                let mut r = [0i32; 8];
                for (k, x) in r.iter_mut().enumerate() {
                    let mut b = [0u8; 4];
                    std::ptr::copy_nonoverlapping(
                        src.add((8 * j + k) * rows + 4 * t),
                        b.as_mut_ptr(),
                        4,
                    );
                    *x = i32::from_le_bytes(b);
                }
                let a = _mm256_loadu_si256(r.as_ptr() as *const __m256i);
                let mut x =
                    _mm256_permutevar8x32_epi32(_mm256_shuffle_epi8(a, lane_order), dword_order);
                let mut plane = [0u8; 32];
                for p in (0..8).rev() {
                    let m = (_mm256_movemask_epi8(x) as u32).to_le_bytes();
                    for (g, &byte) in m.iter().enumerate() {
                        plane[8 * g + p] = byte;
                    }
                    x = _mm256_add_epi8(x, x);
                }
                *out = _mm256_loadu_si256(plane.as_ptr() as *const __m256i);
            }
            shuf256::from_planes(&mut v);
            for (q, x) in v.iter().enumerate() {
                _mm256_storeu_si256(dst.add(32 * K * t + 32 * q) as *mut __m256i, *x);
            }
        }
    }
}
