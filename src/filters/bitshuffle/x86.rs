//! SSE2, AVX2, AVX-512 and GFNI bit transposes of one byte plane.
//!
//! Forward: `movemask` (`movepi8_mask` with AVX-512) takes bit 7 of every byte of a vector at
//! once and adding the vector to itself moves the next bit up, so eight masks are the plane's
//! eight bit rows.
//! Inverse: the 8 rows' bytes for 16 (or 32) groups are transposed bytewise with three rounds
//! of unpacks, giving each group's 8 row bytes in one 64-bit lane, and an 8x8 bit transpose
//! in each lane (shifts and masks) yields the group's 8 plane bytes.
//! With GFNI (Ice Lake, Alder Lake, Zen 4 and later), its affine instruction is the 8x8 bit
//! transpose, both ways: the inverse keeps its unpacks, the forward transposes each group
//! first and then its bytes. On Zen 4 against the kernels without it: bitunshuffle of 8-byte
//! items in 64 KiB blocks 15 -> 37 GB/s (c-blosc2: 16), bitshuffle of bytes 30-43 -> 46-48
//! GB/s (c-blosc2: 21-23).

use std::arch::x86_64::*;

/// Byte i of each 64-bit lane is 1 << i: `gf2p8affine` of these against a lane whose bytes are
/// a group's (reversed) is that group's 8x8 bit transpose.
const UNIT_BYTES: i64 = 0x8040_2010_0804_0201_u64 as i64;

/// Bit rows of the leading whole 16-byte chunks of `plane`; returns how many groups of 8
/// bytes were done.
pub fn bits_of_plane_sse2(plane: &[u8], out: &mut [u8]) -> usize {
    let chunks = plane.len() / 16;
    // SAFETY: SSE2 is in the x86_64 baseline. Chunk c reads plane[16c..16c+16] and writes 2
    // bytes at k*rows + 2c with 2c + 2 <= rows = plane.len() / 8, so below 8*rows = out.len().
    unsafe { bits128(plane.as_ptr(), out.as_mut_ptr(), plane.len() / 8, chunks) };
    chunks * 2
}

/// AVX2 version of [`bits_of_plane_sse2`] (32-byte chunks, then a 16-byte one).
pub fn bits_of_plane_avx2(plane: &[u8], out: &mut [u8]) -> usize {
    let rows = plane.len() / 8;
    let mut done = 0;
    if rows_share_a_set(rows) {
        let pairs = plane.len() / 64;
        // SAFETY: only called after AVX2 was detected; pair c reads plane[64c..][..64] and
        // writes 8 bytes at k*rows + 8c with 8c + 8 <= rows.
        unsafe { bits256x2(plane.as_ptr(), out.as_mut_ptr(), rows, pairs) };
        done = pairs * 8;
    }
    avx2_tail(plane, out, done)
}

/// AVX-512 version of [`bits_of_plane_sse2`] (64-byte chunks, then as [`bits_of_plane_avx2`]).
pub fn bits_of_plane_avx512(plane: &[u8], out: &mut [u8]) -> usize {
    let rows = plane.len() / 8;
    let mut done = 0;
    if rows_share_a_set(rows) {
        let pairs = plane.len() / 128;
        // SAFETY: only called after AVX-512 F and BW were detected; pair c reads
        // plane[128c..][..128] and writes 16 bytes at k*rows + 16c with 16c + 16 <= rows.
        unsafe { bits512x2(plane.as_ptr(), out.as_mut_ptr(), rows, pairs) };
        done = pairs * 16;
    }
    let chunks = (plane.len() - 8 * done) / 64;
    // SAFETY: as above; chunk c reads plane[8*done + 64c..][..64] and writes 8 bytes at
    // k*rows + done + 8c, below rows since 8*done + 64c + 64 <= plane.len().
    unsafe {
        bits512(
            plane.as_ptr().add(8 * done),
            out.as_mut_ptr().add(done),
            rows,
            chunks,
        )
    };
    avx2_tail(plane, out, done + 8 * chunks)
}

/// [`bits_of_plane_avx2`] with GFNI: 256-byte steps whose bit transposes are one affine
/// instruction per 4 groups, then as [`bits_of_plane_avx2`].
pub fn bits_of_plane_gfni(plane: &[u8], out: &mut [u8]) -> usize {
    let rows = plane.len() / 8;
    let steps = plane.len() / 256;
    // SAFETY: only called after AVX2 and GFNI were detected; step s reads plane[256s..][..256]
    // and writes 32 bytes at k*rows + 32s, with 32s + 32 <= rows since 256s + 256 <= plane.len().
    unsafe { bits256_gfni(plane.as_ptr(), out.as_mut_ptr(), rows, steps) };
    avx2_tail(plane, out, 32 * steps)
}

/// Whether the 8 bit rows lie a multiple of 4 KiB apart, so that the lines being written fall
/// in one L1 set (8 ways on Zen 4, with the input's line wanting one too). Fewer, wider stores
/// then run 1.15-1.2 times as fast; at other distances the narrow loop, with fewer
/// instructions, is 5-10% faster (planes of 16 KiB to 256 KiB on Zen 4).
fn rows_share_a_set(rows: usize) -> bool {
    rows.is_multiple_of(4096)
}

/// The AVX2 and SSE2 kernels from group `done` on; returns the groups done in all.
fn avx2_tail(plane: &[u8], out: &mut [u8], done: usize) -> usize {
    let rows = plane.len() / 8;
    let chunks = (plane.len() - 8 * done) / 32;
    // SAFETY: AVX2 was detected (the callers run at that level or above). Chunk c reads
    // plane[8*done + 32c..][..32] and writes 4 bytes at k*rows + done + 4c, where
    // done + 4c + 4 <= rows since 8*done + 32c + 32 <= plane.len().
    unsafe {
        bits256(
            plane.as_ptr().add(8 * done),
            out.as_mut_ptr().add(done),
            rows,
            chunks,
        )
    };
    let mut done = done + 4 * chunks;
    if plane.len() - 8 * done >= 16 {
        // SAFETY: one more 16-byte chunk at byte 8*done, writes at k*rows + done + 2 <= rows.
        unsafe {
            bits128(
                plane.as_ptr().add(8 * done),
                out.as_mut_ptr().add(done),
                rows,
                1,
            )
        };
        done += 2;
    }
    done
}

/// Plane bytes of the leading groups whose rows come in whole 16-byte steps; returns how many
/// groups of 8 bytes were done.
pub fn plane_of_bits_sse2(bits: &[u8], plane: &mut [u8]) -> usize {
    let rows = bits.len() / 8;
    let steps = rows / 16;
    // SAFETY: SSE2 baseline. Step s reads 16 bytes at k*rows + 16s (16s + 16 <= rows) and
    // writes plane[128s..][..128] within 8*rows = plane.len().
    unsafe { plane128(bits.as_ptr(), plane.as_mut_ptr(), rows, steps) };
    steps * 16
}

/// AVX2 version of [`plane_of_bits_sse2`] (32-byte steps, then a 16-byte one).
pub fn plane_of_bits_avx2(bits: &[u8], plane: &mut [u8]) -> usize {
    let rows = bits.len() / 8;
    let steps = rows / 32;
    // SAFETY: only called after AVX2 was detected; step s reads 32 bytes at k*rows + 32s and
    // writes plane[256s..][..256].
    unsafe { plane256(bits.as_ptr(), plane.as_mut_ptr(), rows, steps) };
    plane_of_bits_tail(bits, plane, steps * 32)
}

/// [`plane_of_bits_avx2`] with GFNI's affine instruction as each lane's 8x8 bit transpose.
pub fn plane_of_bits_gfni(bits: &[u8], plane: &mut [u8]) -> usize {
    let rows = bits.len() / 8;
    let steps = rows / 32;
    // SAFETY: only called after AVX2 and GFNI were detected; bounds as plane_of_bits_avx2's.
    unsafe { plane256_gfni(bits.as_ptr(), plane.as_mut_ptr(), rows, steps) };
    plane_of_bits_tail(bits, plane, steps * 32)
}

/// After the 32-byte steps up to row byte `done`, one 16-byte step if a whole one is left.
fn plane_of_bits_tail(bits: &[u8], plane: &mut [u8], mut done: usize) -> usize {
    let rows = bits.len() / 8;
    if rows - done >= 16 {
        // SAFETY: one more 16-byte step at row byte `done`, plane bytes 8*done..8*done + 128.
        unsafe {
            plane128(
                bits.as_ptr().add(done),
                plane.as_mut_ptr().add(8 * done),
                rows,
                1,
            )
        };
        done += 16;
    }
    done
}

#[target_feature(enable = "sse2")]
unsafe fn bits128(plane: *const u8, out: *mut u8, rows: usize, chunks: usize) {
    // SAFETY: bounds checked by the callers.
    unsafe {
        for c in 0..chunks {
            let mut v = _mm_loadu_si128(plane.add(16 * c) as *const __m128i);
            for k in (0..8).rev() {
                let m = (_mm_movemask_epi8(v) as u16).to_le_bytes();
                std::ptr::copy_nonoverlapping(m.as_ptr(), out.add(k * rows + 2 * c), 2);
                v = _mm_add_epi8(v, v);
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn bits256(plane: *const u8, out: *mut u8, rows: usize, chunks: usize) {
    // SAFETY: bounds checked by the callers; AVX2 detected.
    unsafe {
        for c in 0..chunks {
            let mut v = _mm256_loadu_si256(plane.add(32 * c) as *const __m256i);
            for k in (0..8).rev() {
                let m = (_mm256_movemask_epi8(v) as u32).to_le_bytes();
                std::ptr::copy_nonoverlapping(m.as_ptr(), out.add(k * rows + 4 * c), 4);
                v = _mm256_add_epi8(v, v);
            }
        }
    }
}

/// As [`bits256`], two chunks a step, so that each bit row gets one 8-byte store instead of
/// two 4-byte ones.
#[target_feature(enable = "avx2")]
unsafe fn bits256x2(plane: *const u8, out: *mut u8, rows: usize, pairs: usize) {
    // SAFETY: bounds checked by the callers; AVX2 detected.
    unsafe {
        for c in 0..pairs {
            let mut lo = _mm256_loadu_si256(plane.add(64 * c) as *const __m256i);
            let mut hi = _mm256_loadu_si256(plane.add(64 * c + 32) as *const __m256i);
            for k in (0..8).rev() {
                let m = (_mm256_movemask_epi8(lo) as u32 as u64)
                    | ((_mm256_movemask_epi8(hi) as u32 as u64) << 32);
                std::ptr::copy_nonoverlapping(
                    m.to_le_bytes().as_ptr(),
                    out.add(k * rows + 8 * c),
                    8,
                );
                lo = _mm256_add_epi8(lo, lo);
                hi = _mm256_add_epi8(hi, hi);
            }
        }
    }
}

/// As [`bits256`], 64 bytes a step.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn bits512(plane: *const u8, out: *mut u8, rows: usize, chunks: usize) {
    // SAFETY: bounds checked by the callers; AVX-512 F and BW detected.
    unsafe {
        for c in 0..chunks {
            let mut v = _mm512_loadu_si512(plane.add(64 * c) as *const __m512i);
            for k in (0..8).rev() {
                let m = _mm512_movepi8_mask(v);
                std::ptr::copy_nonoverlapping(
                    m.to_le_bytes().as_ptr(),
                    out.add(k * rows + 8 * c),
                    8,
                );
                v = _mm512_add_epi8(v, v);
            }
        }
    }
}

/// As [`bits512`], two chunks a step, each bit row getting one 16-byte store.
#[target_feature(enable = "avx512f,avx512bw")]
unsafe fn bits512x2(plane: *const u8, out: *mut u8, rows: usize, pairs: usize) {
    // SAFETY: bounds checked by the callers; AVX-512 F and BW detected.
    unsafe {
        for c in 0..pairs {
            let mut v = _mm512_loadu_si512(plane.add(128 * c) as *const __m512i);
            let mut w = _mm512_loadu_si512(plane.add(128 * c + 64) as *const __m512i);
            for k in (0..8).rev() {
                let m =
                    _mm_set_epi64x(_mm512_movepi8_mask(w) as i64, _mm512_movepi8_mask(v) as i64);
                _mm_storeu_si128(out.add(k * rows + 16 * c) as *mut __m128i, m);
                v = _mm512_add_epi8(v, v);
                w = _mm512_add_epi8(w, w);
            }
        }
    }
}

/// 32 groups a step. Each 128-bit lane holds two groups (the low lanes groups 0-15 of the step,
/// the high lanes 16-31); a group's bytes reversed and put through `gf2p8affine` against the
/// unit bytes come out as its 8 row bytes (see [`plane256_with`]); the two groups of a lane are
/// interleaved by row, and an 8x8 transpose of 16-bit units across the 8 vectors leaves each
/// row's 32 bytes in one vector.
#[target_feature(enable = "avx2,gfni")]
unsafe fn bits256_gfni(plane: *const u8, out: *mut u8, rows: usize, steps: usize) {
    // SAFETY: bounds checked by the callers; AVX2 and GFNI detected.
    unsafe {
        let unit_bytes = _mm256_set1_epi64x(UNIT_BYTES);
        let reverse = _mm256_setr_epi8(
            7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 15, 14,
            13, 12, 11, 10, 9, 8,
        );
        let by_row = _mm256_setr_epi8(
            0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, 0, 8, 1, 9, 2, 10, 3, 11, 4, 12,
            5, 13, 6, 14, 7, 15,
        );
        for s in 0..steps {
            let p = plane.add(256 * s);
            let mut a = [_mm256_setzero_si256(); 8];
            for (j, x) in a.iter_mut().enumerate() {
                let v = _mm256_loadu2_m128i(
                    p.add(128 + 16 * j) as *const __m128i,
                    p.add(16 * j) as *const __m128i,
                );
                let t =
                    _mm256_gf2p8affine_epi64_epi8::<0>(unit_bytes, _mm256_shuffle_epi8(v, reverse));
                *x = _mm256_shuffle_epi8(t, by_row);
            }
            let mut b = [_mm256_setzero_si256(); 8];
            for q in 0..4 {
                b[2 * q] = _mm256_unpacklo_epi16(a[2 * q], a[2 * q + 1]);
                b[2 * q + 1] = _mm256_unpackhi_epi16(a[2 * q], a[2 * q + 1]);
            }
            // c[m] and c[4 + m]: rows 2m and 2m + 1, of vectors 0-3 and 4-7.
            let c = [
                _mm256_unpacklo_epi32(b[0], b[2]),
                _mm256_unpackhi_epi32(b[0], b[2]),
                _mm256_unpacklo_epi32(b[1], b[3]),
                _mm256_unpackhi_epi32(b[1], b[3]),
                _mm256_unpacklo_epi32(b[4], b[6]),
                _mm256_unpackhi_epi32(b[4], b[6]),
                _mm256_unpacklo_epi32(b[5], b[7]),
                _mm256_unpackhi_epi32(b[5], b[7]),
            ];
            for m in 0..4 {
                let even = _mm256_unpacklo_epi64(c[m], c[4 + m]);
                let odd = _mm256_unpackhi_epi64(c[m], c[4 + m]);
                _mm256_storeu_si256(out.add(2 * m * rows + 32 * s) as *mut __m256i, even);
                _mm256_storeu_si256(out.add((2 * m + 1) * rows + 32 * s) as *mut __m256i, odd);
            }
        }
    }
}

/// 8x8 bit transpose in each 64-bit lane.
#[inline(always)]
unsafe fn transpose8_128(mut x: __m128i) -> __m128i {
    // SAFETY: register-only SSE2 intrinsics.
    unsafe {
        let c1 = _mm_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let c2 = _mm_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let c3 = _mm_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let mut t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 7)), c1);
        x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 7));
        t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 14)), c2);
        x = _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 14));
        t = _mm_and_si128(_mm_xor_si128(x, _mm_srli_epi64(x, 28)), c3);
        _mm_xor_si128(_mm_xor_si128(x, t), _mm_slli_epi64(t, 28))
    }
}

#[inline(always)]
unsafe fn transpose8_256(mut x: __m256i) -> __m256i {
    // SAFETY: register-only AVX2 intrinsics, inlined into AVX2-enabled callers.
    unsafe {
        let c1 = _mm256_set1_epi64x(0x00AA_00AA_00AA_00AA);
        let c2 = _mm256_set1_epi64x(0x0000_CCCC_0000_CCCC);
        let c3 = _mm256_set1_epi64x(0x0000_0000_F0F0_F0F0);
        let mut t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 7)), c1);
        x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 7));
        t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 14)), c2);
        x = _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 14));
        t = _mm256_and_si256(_mm256_xor_si256(x, _mm256_srli_epi64(x, 28)), c3);
        _mm256_xor_si256(_mm256_xor_si256(x, t), _mm256_slli_epi64(t, 28))
    }
}

#[target_feature(enable = "sse2")]
unsafe fn plane128(bits: *const u8, plane: *mut u8, rows: usize, steps: usize) {
    // SAFETY: bounds checked by the callers.
    unsafe {
        for s in 0..steps {
            let mut r = [_mm_setzero_si128(); 8];
            for (k, x) in r.iter_mut().enumerate() {
                *x = _mm_loadu_si128(bits.add(k * rows + 16 * s) as *const __m128i);
            }
            // Bytewise transpose: e[h] gets groups 2h and 2h + 1, row k in byte k of each.
            let mut a = [_mm_setzero_si128(); 8];
            for q in 0..4 {
                a[q] = _mm_unpacklo_epi8(r[2 * q], r[2 * q + 1]);
                a[4 + q] = _mm_unpackhi_epi8(r[2 * q], r[2 * q + 1]);
            }
            let mut c = [_mm_setzero_si128(); 8];
            for half in 0..2 {
                let b = 4 * half;
                c[b] = _mm_unpacklo_epi16(a[b], a[b + 1]);
                c[b + 1] = _mm_unpackhi_epi16(a[b], a[b + 1]);
                c[b + 2] = _mm_unpacklo_epi16(a[b + 2], a[b + 3]);
                c[b + 3] = _mm_unpackhi_epi16(a[b + 2], a[b + 3]);
            }
            let out = plane.add(128 * s);
            for half in 0..2 {
                let b = 4 * half;
                let e = [
                    _mm_unpacklo_epi32(c[b], c[b + 2]),
                    _mm_unpackhi_epi32(c[b], c[b + 2]),
                    _mm_unpacklo_epi32(c[b + 1], c[b + 3]),
                    _mm_unpackhi_epi32(c[b + 1], c[b + 3]),
                ];
                for (h, x) in e.iter().enumerate() {
                    let y = transpose8_128(*x);
                    _mm_storeu_si128(out.add(64 * half + 16 * h) as *mut __m128i, y);
                }
            }
        }
    }
}

#[target_feature(enable = "avx2")]
unsafe fn plane256(bits: *const u8, plane: *mut u8, rows: usize, steps: usize) {
    // SAFETY: as plane256_with's; AVX2 detected.
    unsafe { plane256_with::<false>(bits, plane, rows, steps) }
}

#[target_feature(enable = "avx2,gfni")]
unsafe fn plane256_gfni(bits: *const u8, plane: *mut u8, rows: usize, steps: usize) {
    // SAFETY: as plane256_with's; AVX2 and GFNI detected.
    unsafe { plane256_with::<true>(bits, plane, rows, steps) }
}

/// The AVX2 inverse step, inlined into a caller with AVX2 (and GFNI if `GFNI`). With GFNI the
/// rows are gathered last to first: `gf2p8affine(x, A)` puts bit i of byte 7 - b of A's lane
/// at bit b of byte i when byte i of x is 1 << i, so reversed rows come out transposed.
#[inline(always)]
unsafe fn plane256_with<const GFNI: bool>(
    bits: *const u8,
    plane: *mut u8,
    rows: usize,
    steps: usize,
) {
    // SAFETY: bounds checked by the callers; the caller enables AVX2 (and GFNI).
    unsafe {
        let unit_bytes = _mm256_set1_epi64x(UNIT_BYTES);
        for s in 0..steps {
            let mut r = [_mm256_setzero_si256(); 8];
            for (k, x) in r.iter_mut().enumerate() {
                let row = if GFNI { 7 - k } else { k };
                *x = _mm256_loadu_si256(bits.add(row * rows + 32 * s) as *const __m256i);
            }
            let mut a = [_mm256_setzero_si256(); 8];
            for q in 0..4 {
                a[q] = _mm256_unpacklo_epi8(r[2 * q], r[2 * q + 1]);
                a[4 + q] = _mm256_unpackhi_epi8(r[2 * q], r[2 * q + 1]);
            }
            let mut c = [_mm256_setzero_si256(); 8];
            for half in 0..2 {
                let b = 4 * half;
                c[b] = _mm256_unpacklo_epi16(a[b], a[b + 1]);
                c[b + 1] = _mm256_unpackhi_epi16(a[b], a[b + 1]);
                c[b + 2] = _mm256_unpacklo_epi16(a[b + 2], a[b + 3]);
                c[b + 3] = _mm256_unpackhi_epi16(a[b + 2], a[b + 3]);
            }
            // Lane 0 covers groups 32s..32s+16, lane 1 the next 16.
            let out = plane.add(256 * s);
            for half in 0..2 {
                let b = 4 * half;
                let e = [
                    _mm256_unpacklo_epi32(c[b], c[b + 2]),
                    _mm256_unpackhi_epi32(c[b], c[b + 2]),
                    _mm256_unpacklo_epi32(c[b + 1], c[b + 3]),
                    _mm256_unpackhi_epi32(c[b + 1], c[b + 3]),
                ];
                for (h, x) in e.iter().enumerate() {
                    let y = if GFNI {
                        _mm256_gf2p8affine_epi64_epi8::<0>(unit_bytes, *x)
                    } else {
                        transpose8_256(*x)
                    };
                    let at = 64 * half + 16 * h;
                    _mm_storeu_si128(out.add(at) as *mut __m128i, _mm256_castsi256_si128(y));
                    _mm_storeu_si128(
                        out.add(128 + at) as *mut __m128i,
                        _mm256_extracti128_si256(y, 1),
                    );
                }
            }
        }
    }
}
