//! zlib through libz-sys, built on zlib-ng 2.3.3 in compat mode: the same deflate engine and
//! version c-blosc2's wheels bundle, so ratios are c-blosc2's and chunks are identical, but
//! for streams the probe stores raw without deflate (`probe.rs`: where deflate saves at most
//! 0.5%, mostly nothing).
//!
//! Decoding takes libdeflate first for streams that compress less than 16:1, which is where
//! it is faster than zlib-ng: measured over 30 kinds of data (runs, sparse noise, text,
//! quantized and smooth floats, counters; unfiltered, shuffled, 256 KiB streams), every stream
//! below 16:1 decoded 1.08-1.46x faster, between 16:1 and 35:1 0.94-1.30x, and above that
//! streams of long short-distance repeats 0.17-0.6x (zlib-ng fills those with memset).
//!
//! Streams of 256 KiB or more from 8:1 to 64:1 are also told apart by the mean match length
//! their first block's codes promise (`deflate_codes`), measured per stream over 16 kinds of
//! data (unfiltered, shuffled and bitshuffled; 256 KiB and 1 MiB streams, clevels 5 and 9):
//! - from 16:1, matches shorter than 100 bytes go to libdeflate: 1.06-1.36x zlib-ng's speed
//!   (counters, held values, masks, sparse noise), but 0.82-0.88x on bitshuffled masks;
//! - below 16:1, matches of 200 bytes or more go to zlib-ng: runs of zeros between values,
//!   which libdeflate decoded at 0.60-0.96x (shuffled), 0.82-1.17x (unfiltered) and
//!   0.84-1.03x (bitshuffled), and quantized floats bitshuffled, 0.89-0.95x.
//!
//! Shorter streams go by their ratio alone: at 64 KiB, libdeflate decoded shuffled held values
//! at 0.55x and shuffled timestamps at 0.33x, their matches under 100 bytes. Any stream
//! libdeflate does not decode in full is handed to zlib-ng, whose verdict and message stand.
//! One kind of invalid stream libdeflate takes where zlib-ng (and so c-blosc2) does not:
//! length symbols 286 and 287, which only a fixed-code block can hold and RFC 1951 leaves
//! unused, read as length 258 like symbol 285. Such a stream still has to fill exactly the
//! expected length and match its Adler-32 (tests: mutated streams).
//!
//! libdeflate is built by clang without its loop vectorizer (`cmake/deps-cc.sh`), which
//! decodes streams under 8:1 in 4-7% less time than gcc's build, and unfiltered counters
//! (matches at offset 4) in 20-35% less.
//!
//! The `unsafe` blocks are calls into the C libraries with slices we own.

use std::cell::RefCell;
use std::ffi::{c_int, c_uchar, c_ulong};
use std::ptr::NonNull;

use libdeflate_sys as ld;

use super::{deflate_codes, with_per_thread};
use crate::error::{Error, Result};

extern crate libz_sys;

extern "C" {
    fn compress2(
        dest: *mut c_uchar,
        dest_len: *mut c_ulong,
        source: *const c_uchar,
        source_len: c_ulong,
        level: c_int,
    ) -> c_int;
    fn uncompress(
        dest: *mut c_uchar,
        dest_len: *mut c_ulong,
        source: *const c_uchar,
        source_len: c_ulong,
    ) -> c_int;
}

const Z_OK: c_int = 0;

/// Compresses `src` at `clevel` (zlib format); returns the length or 0 if it does not fit.
///
/// Where the output must be shorter than the input, a stream the probe finds incompressible
/// gives 0 at once (stored raw, as c-blosc2 stores it after deflate gives it back no shorter).
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if dst.len() <= src.len() && super::probe::incompressible(src) {
        return 0;
    }
    deflate(clevel, src, dst)
}

/// zlib-ng's `compress2`: the length, or 0 if it does not fit.
pub(super) fn deflate(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    let mut out_len = dst.len() as c_ulong;
    // SAFETY: dst has out_len writable bytes, src has src.len() readable bytes.
    let rc = unsafe {
        compress2(
            dst.as_mut_ptr(),
            &mut out_len,
            src.as_ptr(),
            src.len() as c_ulong,
            c_int::from(clevel),
        )
    };
    if rc != Z_OK {
        return 0;
    }
    out_len as usize
}

/// Decompresses one stream into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    if suits_libdeflate(src, dst.len()) && libdeflate_decodes(src, dst) {
        return Ok(dst.len());
    }
    zlib_ng_decompress(src, dst)
}

fn zlib_ng_decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let mut out_len = dst.len() as c_ulong;
    // SAFETY: uncompress writes at most out_len bytes into dst and reads src.len() bytes.
    let rc = unsafe {
        uncompress(
            dst.as_mut_ptr(),
            &mut out_len,
            src.as_ptr(),
            src.len() as c_ulong,
        )
    };
    if rc != Z_OK {
        return Err(Error::corrupt(format_args!(
            "zlib stream does not decode (error {rc})"
        )));
    }
    if out_len as usize != dst.len() {
        return Err(Error::corrupt(format_args!(
            "zlib stream decoded to {out_len} bytes, expected {}",
            dst.len()
        )));
    }
    Ok(dst.len())
}

/// Whether `src` is a stream libdeflate decodes faster than zlib-ng (see the module comment).
fn suits_libdeflate(src: &[u8], out_len: usize) -> bool {
    let below = |ratio: usize| src.len().saturating_mul(ratio) > out_len;
    if out_len < MATCHES_CHECKED_FROM || below(8) || !below(64) {
        return below(16);
    }
    match deflate_codes::mean_match_length(src) {
        Some(mean) if below(16) => mean < LONG_MATCHES,
        Some(mean) => mean < SHORT_MATCHES,
        None => below(16),
    }
}

/// Streams of 8:1 to 16:1 whose first block promises matches this long on average, or
/// longer, decode faster in zlib-ng: runs of zeros between values.
const LONG_MATCHES: u32 = 200;
/// Streams of 16:1 to 64:1 whose first block promises matches shorter than this on average
/// decode faster in libdeflate.
const SHORT_MATCHES: u32 = 100;
/// Shorter streams go by their ratio alone (see the module comment). Reading the codes takes
/// about 1 µs, 1% of the decoding time of a 256 KiB stream at 22:1.
const MATCHES_CHECKED_FROM: usize = 256 << 10;

/// zlib-ng's decode alone, for the fuzz target that checks the decoder picked decodes as
/// zlib-ng does.
#[cfg(fuzzing)]
pub fn zlib_ng_only(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    zlib_ng_decompress(src, dst)
}

/// [`deflate_codes::mean_match_length`], for the same fuzz target.
#[cfg(fuzzing)]
pub fn mean_match_length(src: &[u8]) -> Option<u32> {
    deflate_codes::mean_match_length(src)
}

struct Decompressor(NonNull<ld::libdeflate_decompressor>);
impl Drop for Decompressor {
    fn drop(&mut self) {
        // SAFETY: the pointer came from libdeflate_alloc_decompressor and is freed once.
        unsafe { ld::libdeflate_free_decompressor(self.0.as_ptr()) };
    }
}

thread_local! {
    // One per thread, as libdeflate's decompressors are not to be shared between threads.
    static DECOMPRESSOR: RefCell<Option<Decompressor>> = const { RefCell::new(None) };
}

/// Whether libdeflate decoded `src` into exactly `dst.len()` bytes with a matching checksum.
/// On false, `dst` holds anything.
fn libdeflate_decodes(src: &[u8], dst: &mut [u8]) -> bool {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { ld::libdeflate_alloc_decompressor() }).map(Decompressor);
    with_per_thread(&DECOMPRESSOR, make, |d| {
        // SAFETY: a live decompressor owned by this thread and two valid slices; libdeflate
        // writes at most dst.len() bytes and, given no length pointer, succeeds only when the
        // stream fills dst exactly.
        let rc = unsafe {
            ld::libdeflate_zlib_decompress(
                d.0.as_ptr(),
                src.as_ptr().cast(),
                src.len(),
                dst.as_mut_ptr().cast(),
                dst.len(),
                std::ptr::null_mut(),
            )
        };
        rc == ld::libdeflate_result_LIBDEFLATE_SUCCESS
    })
    .unwrap_or(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compressed(src: &[u8], clevel: u8) -> Vec<u8> {
        let mut out = vec![0u8; src.len() + src.len() / 100 + 64];
        let n = compress(clevel, src, &mut out);
        assert!(n > 0);
        out.truncate(n);
        out
    }

    /// Data on both sides of the 16:1 line: words picked at random (about 5:1, libdeflate),
    /// long runs (hundreds to one, zlib-ng); and streams of 256 KiB the mean length of their
    /// matches decides from clevel 5 (zlib-ng's level 1 has no codes to read): counters (a
    /// 4-byte count repeated 10 times: 22:1 in matches of 36-40 bytes, libdeflate) and noise
    /// between runs of zeros (about 12:1 in matches of 258 bytes, zlib-ng).
    fn samples() -> Vec<Vec<u8>> {
        let words: [&[u8]; 8] = [
            b"frame ", b"chunk ", b"block ", b"blosc ", b"zlib ", b"the ", b"of ", b"a ",
        ];
        // One sequence for both samples that draw from it.
        let mut next = crate::codecs::xorshift(0x9E37_79B9);
        let mut text = Vec::new();
        while text.len() < 100_000 {
            text.extend_from_slice(words[(next() % 8) as usize]);
        }
        let counters = (0..65536u32).flat_map(|i| (i / 10).to_le_bytes()).collect();
        let mut sparse = Vec::new();
        while sparse.len() < 256 << 10 {
            let mut last = 0;
            for _ in 0..2048 {
                last = next();
                sparse.push(last as u8);
            }
            sparse.resize(sparse.len() + 14_336 + (last % 16_384) as usize, 0);
        }
        sparse.truncate(256 << 10);
        vec![
            text,
            (0..100_000u32).map(|i| (i / 5000) as u8).collect(),
            counters,
            sparse,
        ]
    }

    #[test]
    fn streams_on_both_sides_of_the_libdeflate_line_decode_to_the_input() {
        let mut took_libdeflate = [false, false];
        for (i, src) in samples().into_iter().enumerate() {
            for clevel in [1, 5, 9] {
                let c = compressed(&src, clevel);
                let fast = suits_libdeflate(&c, src.len());
                took_libdeflate[usize::from(fast)] = true;
                if i == 2 && clevel > 1 {
                    // Past 16:1: libdeflate for the length of its matches.
                    assert!(c.len() * 16 < src.len() && fast, "clevel {clevel}");
                }
                if i == 3 && clevel > 1 {
                    // Below 16:1: zlib-ng for the length of its matches.
                    let ratio = src.len() / c.len();
                    assert!(
                        (8..16).contains(&ratio) && !fast,
                        "clevel {clevel}: {ratio}:1"
                    );
                }
                let mut back = vec![0u8; src.len()];
                assert_eq!(decompress(&c, &mut back).unwrap(), src.len());
                assert!(back == src, "clevel {clevel}");
            }
        }
        assert_eq!(
            took_libdeflate,
            [true, true],
            "both decoders were exercised"
        );
    }

    #[test]
    fn bad_streams_get_zlib_ngs_verdict_on_either_path() {
        for src in samples() {
            let c = compressed(&src, 5);
            let fast = suits_libdeflate(&c, src.len());
            let mut back = vec![0u8; src.len()];
            // A wrong checksum: libdeflate fails, zlib-ng says why.
            let mut bad_sum = c.clone();
            *bad_sum.last_mut().unwrap() ^= 1;
            let err = decompress(&bad_sum, &mut back).unwrap_err().to_string();
            assert!(
                err.contains("does not decode (error -3)"),
                "{err} (fast path {fast})"
            );
            // One byte short of the output it should fill, and one byte over.
            let mut short = vec![0u8; src.len() - 1];
            let err = decompress(&c, &mut short).unwrap_err().to_string();
            assert!(err.contains("does not decode"), "{err}");
            let mut long = vec![0u8; src.len() + 1];
            let err = decompress(&c, &mut long).unwrap_err().to_string();
            assert!(err.contains("decoded to"), "{err}");
        }
    }

    /// Whatever libdeflate decodes from streams with one to three bits flipped (header, block
    /// codes, distances, checksum; 8,000 of them), zlib-ng decodes to the same bytes, or
    /// rejects it and libdeflate's bytes are the data compressed (the symbols 286 and 287 of
    /// the module comment).
    #[test]
    fn mutated_streams_libdeflate_decodes_zlib_ng_decodes_alike() {
        let mut x = 0x2545_F491_u64;
        let mut rnd = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        let (mut accepted, mut lenient, mut tried) = (0, 0, 0);
        for src in samples() {
            let src = &src[..20_000];
            for clevel in [1, 6] {
                let c = compressed(src, clevel);
                for _ in 0..2000 {
                    let mut m = c.clone();
                    for _ in 0..1 + rnd(3) {
                        let at = if rnd(4) == 0 { rnd(2) } else { rnd(m.len()) };
                        m[at] ^= 1 << rnd(8);
                    }
                    let mut fast = vec![0u8; src.len()];
                    tried += 1;
                    if !libdeflate_decodes(&m, &mut fast) {
                        continue;
                    }
                    accepted += 1;
                    let mut slow = vec![0u8; src.len()];
                    match zlib_ng_decompress(&m, &mut slow) {
                        Ok(_) => assert!(fast == slow),
                        Err(_) => {
                            lenient += 1;
                            assert!(fast == src);
                        }
                    }
                }
            }
        }
        // Measured: 464 of 8,000 decode in libdeflate, 43 of them rejected by zlib-ng.
        assert!(
            lenient < accepted && accepted < tried,
            "{lenient} {accepted} {tried}"
        );
    }
}
