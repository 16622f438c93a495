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

/// Unshuffles whole tiles; returns how many leading elements were handled. `evex`: the CPU
/// has AVX-512F and VL, so the kernels may use 32 vector registers.
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8], evex: bool) -> usize {
    match typesize {
        2 => unshuffle_of::<2>(src, dst, evex),
        4 => unshuffle_of::<4>(src, dst, evex),
        8 => unshuffle_of::<8>(src, dst, evex),
        16 => unshuffle_of::<16>(src, dst, evex),
        _ => super::avx2_any::unshuffle(typesize, src, dst),
    }
}

/// [`unshuffle`] of `K`-byte items. With `K` a constant every element count is a shift, and
/// the plane pointers come straight from `src`: through layers that each divided by a
/// run-time typesize and built plane slices, 1 KiB of 8-byte items took 28.9 ns, now 22.8.
#[inline(always)]
fn unshuffle_of<const K: usize>(src: &[u8], dst: &mut [u8], evex: bool) -> usize {
    let n = src.len() / K;
    let tiles = n / 32;
    if tiles == 0 {
        return super::sse2::unshuffle(K, src, dst);
    }
    assert!(
        dst.len() >= n * K,
        "unshuffle: {} bytes of destination for {n} elements",
        dst.len()
    );
    // Tile t reads planes[j][32t..][..32] within plane j's n bytes of `src` (K*n <=
    // src.len()), and writes dst[32*K*t..][..32*K] within K*n <= dst.len().
    if K == 16 && evex {
        // Plane j starts at j * n < src.len().
        let planes: [*const u8; K] = std::array::from_fn(|j| src[j * n..].as_ptr());
        // SAFETY: AVX-512F and VL were detected for `evex`; the tiles as above.
        unsafe { unshuffle_tiles_on(planes, dst.as_mut_ptr(), tiles, evex) };
    } else {
        // SAFETY: only called after AVX2 was detected; the tiles as above.
        unsafe { unshuffle_k_together::<K>(src.as_ptr(), n, dst.as_mut_ptr(), tiles) };
    }
    tiles * 32 + super::sse2::unshuffle_from(K, tiles * 32, src, dst)
}

/// Unshuffles from planes wherever they lie (`planes[j]` holds byte j of every element, at
/// least `dst.len() / planes.len()` bytes), every element of `dst`: whole tiles here, the rest
/// by the portable code. Typesize `planes.len()` is 2, 4, 8 or 16, and `dst` whole elements.
pub fn unshuffle_planes(planes: &[&[u8]], dst: &mut [u8], evex: bool) {
    match planes.len() {
        2 => unshuffle_planes_of::<2>(planes, dst, evex),
        4 => unshuffle_planes_of::<4>(planes, dst, evex),
        8 => unshuffle_planes_of::<8>(planes, dst, evex),
        16 => unshuffle_planes_of::<16>(planes, dst, evex),
        k => panic!("unshuffle_planes: typesize {k}"),
    }
}

/// [`unshuffle_planes`] of `K` planes (a constant, for the reason [`unshuffle_of`] gives).
#[inline(always)]
fn unshuffle_planes_of<const K: usize>(planes: &[&[u8]], dst: &mut [u8], evex: bool) {
    let n = dst.len() / K;
    assert!(
        n * K == dst.len() && planes.iter().all(|p| p.len() >= n),
        "unshuffle_planes: {K} planes do not cover {} bytes",
        dst.len()
    );
    let tiles = n / 32;
    // SAFETY: only called after AVX2 was detected (AVX-512F and VL for `evex`). Tile t reads
    // planes[j][32t..][..32] within n <= planes[j].len(), and writes dst[32*K*t..][..32*K]
    // within K*n <= dst.len().
    unsafe { unshuffle_tiles_on(plane_ptrs::<K>(planes), dst.as_mut_ptr(), tiles, evex) };
    for i in tiles * 32..n {
        for (j, plane) in planes.iter().enumerate() {
            dst[i * K + j] = plane[i];
        }
    }
}

/// Tiles `0..tiles` by the kernel for `K` planes: the AVX-512VL build for 16 of them when
/// `evex` (see [`unshuffle_k_evex`]), the AVX2 one otherwise.
///
/// # Safety
/// As for [`unshuffle_tiles`]; AVX2 detected, and AVX-512F and VL too for `evex`.
#[inline(always)]
unsafe fn unshuffle_tiles_on<const K: usize>(
    planes: [*const u8; K],
    dst: *mut u8,
    tiles: usize,
    evex: bool,
) {
    // SAFETY: per the caller.
    unsafe {
        if K == 16 && evex {
            unshuffle_k_evex::<K>(planes, dst, tiles)
        } else {
            unshuffle_k::<K>(planes, dst, tiles)
        }
    }
}

fn plane_ptrs<const K: usize>(planes: &[&[u8]]) -> [*const u8; K] {
    std::array::from_fn(|j| planes[j].as_ptr())
}

#[target_feature(enable = "avx2")]
unsafe fn shuffle_k<const K: usize>(src: *const u8, dst: *mut u8, n: usize, tiles: usize) {
    // SAFETY: the callers checked every bound (see `shuffle`) and detected AVX2.
    unsafe {
        let mut t = 0;
        if K <= 8 || n >= 2048 {
            // Two tiles a step, so each plane gets 64 bytes, a whole line, in two stores in a
            // row. Where planes lie a multiple of 4 KiB apart (blocks of 32 KiB and up with
            // 8-byte items) their lines share one L1 set, and a line written half at a time
            // can be evicted in between. Against blosc2_shuffle on the same buffers, 8-byte
            // items: 0.77 -> 1.05 of its speed at 32 KiB, 0.93 -> 1.27 at 256 KiB (Zen 4).
            // At K = 16 the 32 live vectors spill, which costs 5% where the 16 planes are
            // less than 2 KiB apart (blocks under 32 KiB) and their lines spread over 4 or
            // more sets; further apart it pays: a 256 KiB block 1.16 times as fast.
            while t + 2 <= tiles {
                let a = tile_planes::<K>(src, t);
                let b = tile_planes::<K>(src, t + 1);
                for j in 0..K {
                    _mm256_storeu_si256(dst.add(j * n + 32 * t) as *mut __m256i, a[j]);
                    _mm256_storeu_si256(dst.add(j * n + 32 * t + 32) as *mut __m256i, b[j]);
                }
                t += 2;
            }
        }
        while t < tiles {
            let v = tile_planes::<K>(src, t);
            for (j, x) in v.iter().enumerate() {
                _mm256_storeu_si256(dst.add(j * n + 32 * t) as *mut __m256i, *x);
            }
            t += 1;
        }
    }
}

/// The K plane vectors of tile `t` (32 elements).
#[inline(always)]
unsafe fn tile_planes<const K: usize>(src: *const u8, t: usize) -> [__m256i; K] {
    // SAFETY: the callers checked the tile is inside the source and detected AVX2.
    unsafe {
        let base = src.add(32 * K * t);
        let mut v = [_mm256_setzero_si256(); K];
        for (q, x) in v.iter_mut().enumerate() {
            let lo = _mm_loadu_si128(base.add(16 * q) as *const __m128i);
            let hi = _mm_loadu_si128(base.add(16 * K + 16 * q) as *const __m128i);
            *x = _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
        }
        to_planes(&mut v);
        v
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
        if K == 8 {
            // Vector q holds elements 2q and 2q + 1 per lane; interleaving their bytes makes
            // it a row of 8 words (byte b of both), and an 8x8 word transpose (3 unpack
            // rounds) leaves plane b in vector b: 32 shuffles, against the pack rounds'
            // 24 packs and 48 masks and shifts. 16 KiB blocks (in L1): 0.97 -> 1.32 of
            // blosc2_shuffle's speed.
            let pairs = _mm256_setr_epi8(
                0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15, //
                0, 8, 1, 9, 2, 10, 3, 11, 4, 12, 5, 13, 6, 14, 7, 15,
            );
            // A loop, not `v.map`: the closure would not carry AVX2, and where `map` is not
            // inlined the intrinsic becomes a call per vector (zeros and smooth_f64
            // compression fell to 0.2-0.6 of c-blosc2's speed in such a build).
            let mut x = *v;
            for e in x.iter_mut() {
                *e = _mm256_shuffle_epi8(*e, pairs);
            }
            // Words of rows 2k and 2k + 1 interleaved: columns 0..4, then 4..8.
            let mut a = [_mm256_setzero_si256(); 8];
            for k in 0..4 {
                a[2 * k] = _mm256_unpacklo_epi16(x[2 * k], x[2 * k + 1]);
                a[2 * k + 1] = _mm256_unpackhi_epi16(x[2 * k], x[2 * k + 1]);
            }
            // Rows 0..4 (then 4..8) of two columns each: b[4h + c] holds columns 2c, 2c + 1.
            let mut b = [_mm256_setzero_si256(); 8];
            for h in 0..2 {
                let a = &a[4 * h..];
                b[4 * h] = _mm256_unpacklo_epi32(a[0], a[2]);
                b[4 * h + 1] = _mm256_unpackhi_epi32(a[0], a[2]);
                b[4 * h + 2] = _mm256_unpacklo_epi32(a[1], a[3]);
                b[4 * h + 3] = _mm256_unpackhi_epi32(a[1], a[3]);
            }
            for c in 0..4 {
                v[2 * c] = _mm256_unpacklo_epi64(b[c], b[4 + c]);
                v[2 * c + 1] = _mm256_unpackhi_epi64(b[c], b[4 + c]);
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
unsafe fn unshuffle_k<const K: usize>(planes: [*const u8; K], dst: *mut u8, tiles: usize) {
    // SAFETY: as for `unshuffle_tiles`; AVX2 was detected.
    unsafe { unshuffle_tiles(planes, dst, tiles) }
}

/// [`unshuffle_k`] of the `K` planes of `n` bytes that lie together from `src`: the plane
/// pointers are made here, in registers, rather than passed through memory after a bound
/// check each (1 KiB of 8-byte items: 381 -> 356 instructions for the unshuffle).
#[target_feature(enable = "avx2")]
unsafe fn unshuffle_k_together<const K: usize>(
    src: *const u8,
    n: usize,
    dst: *mut u8,
    tiles: usize,
) {
    // SAFETY: plane j starts at j * n < K * n, within the caller's `src`; the rest as for
    // `unshuffle_tiles`, AVX2 was detected.
    unsafe {
        let planes: [*const u8; K] = std::array::from_fn(|j| src.add(j * n));
        unshuffle_tiles(planes, dst, tiles)
    }
}

/// [`unshuffle_k`] compiled for AVX-512VL, whose 32 vector registers hold the 16-byte
/// kernel's 16 planes and their unpacked pairs: with 16, half of them spill every tile.
#[target_feature(enable = "avx2,avx512f,avx512vl")]
unsafe fn unshuffle_k_evex<const K: usize>(planes: [*const u8; K], dst: *mut u8, tiles: usize) {
    // SAFETY: as for `unshuffle_tiles`; AVX-512F and VL were detected.
    unsafe { unshuffle_tiles(planes, dst, tiles) }
}

/// Tiles `0..tiles` of 32 elements: reads `planes[j][32t..][..32]`, writes
/// `dst[32*K*t..][..32*K]`; the callers checked both.
#[inline(always)]
unsafe fn unshuffle_tiles<const K: usize>(planes: [*const u8; K], dst: *mut u8, tiles: usize) {
    // SAFETY: bounds checked by the callers (see `unshuffle_planes`); AVX2 intrinsics inlined
    // into the AVX2-enabled kernels above.
    unsafe {
        let bits = K.trailing_zeros();
        for t in 0..tiles {
            let mut v = [_mm256_setzero_si256(); K];
            for (x, plane) in v.iter_mut().zip(planes) {
                *x = _mm256_loadu_si256(plane.add(32 * t) as *const __m256i);
            }
            let base = dst.add(32 * K * t);
            if K == 2 {
                // Quarters 1 and 2 swapped first, so one unpack round leaves the 32 elements
                // in order for two whole stores (as c-blosc2 does): 0.91-0.97 of
                // blosc2_unshuffle's speed with the generic path, 0.94-1.01 so (Zen 3).
                let a = _mm256_permute4x64_epi64(v[0], 0xD8);
                let b = _mm256_permute4x64_epi64(v[1], 0xD8);
                _mm256_storeu_si256(base as *mut __m256i, _mm256_unpacklo_epi8(a, b));
                _mm256_storeu_si256(base.add(32) as *mut __m256i, _mm256_unpackhi_epi8(a, b));
                continue;
            }
            from_planes(&mut v);
            // Lane 0 of vector x belongs at 16-byte slot bitrev(x), lane 1 at K + bitrev(x).
            // Pairing the vectors of adjacent slots makes every store a whole 32 bytes, as
            // c-blosc2's kernels do, and the tile's bytes go out in address order, first lanes
            // then second. Against blosc2_unshuffle, 256 KiB blocks written over 8 MiB (Xeon
            // with AVX-512): 4-byte items 0.92-0.96 -> 0.97-0.99, 8-byte 0.95-0.96 -> 1.05-1.07
            // of its speed, where 16-byte lane stores wrote each half of a tile in turn; at
            // K = 16 the lane extracts also spilled registers (1.6x). On a Zen 3, alternating
            // halves ran at 0.76-0.95 of its speed at K = 16, in order at 0.96-1.05.
            for s in (0..K).step_by(2) {
                let (a, b) = (v[bitrev(s, bits)], v[bitrev(s + 1, bits)]);
                let lanes0 = _mm256_permute2x128_si256(a, b, 0x20);
                _mm256_storeu_si256(base.add(16 * s) as *mut __m256i, lanes0);
            }
            for s in (0..K).step_by(2) {
                let (a, b) = (v[bitrev(s, bits)], v[bitrev(s + 1, bits)]);
                let lanes1 = _mm256_permute2x128_si256(a, b, 0x31);
                _mm256_storeu_si256(base.add(16 * (K + s)) as *mut __m256i, lanes1);
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
