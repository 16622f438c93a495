//! LZ4 and LZ4HC through lz4-sys (lz4 1.10.0, the version c-blosc2 bundles).
//!
//! lz4-sys does not declare the dictionary entry points, which its static library does contain;
//! they are declared here with lz4.h's signatures. The `unsafe` blocks are calls into the C
//! library with slices we own.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, c_void};
use std::ptr::NonNull;

use super::with_per_thread;

use crate::error::{Error, Result};

#[allow(non_camel_case_types)]
type LZ4_stream_t = c_void;
#[allow(non_camel_case_types)]
type LZ4_streamHC_t = c_void;

extern "C" {
    fn LZ4_compress_fast_extState_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    fn LZ4_loadDict(stream: *mut LZ4_stream_t, dict: *const c_char, dict_size: c_int) -> c_int;
    fn LZ4_compress_fast_continue(
        stream: *mut LZ4_stream_t,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        acceleration: c_int,
    ) -> c_int;
    fn LZ4_decompress_safe_usingDict(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        dict: *const c_char,
        dict_size: c_int,
    ) -> c_int;
    fn LZ4_compress_HC_extStateHC_fastReset(
        state: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
        compression_level: c_int,
    ) -> c_int;
    fn LZ4_createStreamHC() -> *mut LZ4_streamHC_t;
    fn LZ4_freeStreamHC(stream: *mut LZ4_streamHC_t) -> c_int;
    fn LZ4_resetStreamHC_fast(stream: *mut LZ4_streamHC_t, level: c_int);
    fn LZ4_loadDictHC(stream: *mut LZ4_streamHC_t, dict: *const c_char, dict_size: c_int) -> c_int;
    fn LZ4_compress_HC_continue(
        stream: *mut LZ4_streamHC_t,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_capacity: c_int,
    ) -> c_int;
}

/// LZ4 works on int sizes; blocks never exceed that, but clamp rather than wrap.
fn cint(n: usize) -> c_int {
    c_int::try_from(n).unwrap_or(c_int::MAX)
}

/// Acceleration c-blosc2 uses for LZ4 at a clevel.
pub fn accel_for(clevel: u8) -> i32 {
    10 - i32::from(clevel)
}

/// Compresses with LZ4; returns the length or 0 if it does not fit.
///
/// The same output as `LZ4_compress_fast`, which c-blosc2 calls, from a state kept per
/// thread: `LZ4_compress_fast` clears its 16 KiB hash table for every stream, while the
/// fast-reset entry point clears it only for streams of 4 KiB or more, or once 64 KiB have
/// gone through it, and otherwise leaves stale entries that it knows to ignore. A 1 KiB
/// chunk of 8-byte items is 8 streams of 128 bytes: 128 KiB cleared for 1 KiB compressed.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { lz4_sys::LZ4_createStream() }.cast()).map(Stream);
    let fast = with_per_thread(&FAST_RESET_STATE, make, |state| {
        compress_by(
            FastOrOneShot::Fast(state.0.as_ptr(), LZ4_compress_fast_extState_fastReset),
            accel_for(clevel),
            src,
            dst,
        )
    });
    // Without a state (its allocation failed), the one-shot call.
    let n = fast.unwrap_or_else(|| compress_one_shot(clevel, src, dst));
    usize::try_from(n).unwrap_or(0)
}

/// `LZ4_compress_fast`, as c-blosc2 calls it.
fn compress_one_shot(clevel: u8, src: &[u8], dst: &mut [u8]) -> c_int {
    compress_by(
        FastOrOneShot::OneShot(lz4_sys::LZ4_compress_fast),
        accel_for(clevel),
        src,
        dst,
    )
}

/// Compresses with LZ4HC at `clevel`; returns the length or 0 if it does not fit.
///
/// The same output as `LZ4_compress_HC`, which c-blosc2 calls, from a state kept per thread
/// (as [`compress`] does): `LZ4_compress_HC` allocates its 256 KiB state and clears it for
/// every stream, the fast reset moves the window past the old entries instead.
///
/// Where the output must be shorter than the input, a stream the probe finds incompressible
/// gives 0 at once (stored raw, as c-blosc2 stores it after LZ4HC's full search).
pub fn compress_hc(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if dst.len() <= src.len() && super::probe::incompressible(src) {
        return 0;
    }
    hc(clevel, src, dst)
}

/// [`compress_hc`] without the probe.
pub(super) fn hc(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    if src.len() > (2usize << 30) {
        return 0;
    }
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { LZ4_createStreamHC() }).map(StreamHC);
    let fast = with_per_thread(&FAST_RESET_STATE_HC, make, |state| {
        compress_by(
            FastOrOneShot::Fast(state.0.as_ptr(), LZ4_compress_HC_extStateHC_fastReset),
            c_int::from(clevel),
            src,
            dst,
        )
    });
    let n = fast.unwrap_or_else(|| compress_hc_one_shot(clevel, src, dst));
    usize::try_from(n).unwrap_or(0)
}

/// `LZ4_compress_HC`, as c-blosc2 calls it.
fn compress_hc_one_shot(clevel: u8, src: &[u8], dst: &mut [u8]) -> c_int {
    compress_by(
        FastOrOneShot::OneShot(lz4_sys::LZ4_compress_HC),
        c_int::from(clevel),
        src,
        dst,
    )
}

/// lz4's one-shot compressors: (src, dst, src_size, dst_capacity, acceleration or level).
type OneShotFn = unsafe extern "C" fn(*const c_char, *mut c_char, c_int, c_int, c_int) -> c_int;
/// Their fast-reset twins, the same arguments after a state.
type FastResetFn =
    unsafe extern "C" fn(*mut c_void, *const c_char, *mut c_char, c_int, c_int, c_int) -> c_int;

/// Which of an lz4 compressor's entry points to call.
enum FastOrOneShot {
    /// The fast reset on a state of this thread's, made by lz4's create call for that
    /// compressor and used by nothing else.
    Fast(*mut c_void, FastResetFn),
    OneShot(OneShotFn),
}

/// `src` compressed into `dst` by `entry` at `level`: the compressed length, or 0 or less when
/// it does not fit.
fn compress_by(entry: FastOrOneShot, level: c_int, src: &[u8], dst: &mut [u8]) -> c_int {
    let (s, d) = (src.as_ptr().cast(), dst.as_mut_ptr().cast());
    let (n, capacity) = (cint(src.len()), cint(dst.len()));
    // SAFETY: the slices are valid for their lengths; lz4 reads at most `n` bytes of `src` and
    // writes at most `capacity` to `dst`. A state is live, aligned (lz4's create calls use
    // malloc) and this thread's own, per `FastOrOneShot::Fast`.
    unsafe {
        match entry {
            FastOrOneShot::Fast(state, fast_reset) => fast_reset(state, s, d, n, capacity, level),
            FastOrOneShot::OneShot(one_shot) => one_shot(s, d, n, capacity, level),
        }
    }
}

/// Streams that expand 2^this (16) times or more are decoded by [`super::lz4_block`], the
/// rest by lz4 (but for short streams, below). Such streams are mostly long matches, which the
/// Rust decoder fills 16 bytes a store (shuffled incr_i32 with LZ4HC: 1.24-1.40 of c-blosc2's
/// decoding speed, against 0.97-1.04 through lz4). In streams of short sequences lz4's fewer
/// instructions per sequence win (rainfall_f32 unfiltered, 3.3 times: 0.71 through the Rust
/// decoder); at 8 times that still cost 15% on shuffled rainfall_f32 (before decoders had room
/// after their streams). At 16 nothing measured loses against 32 (clevels 1, 5 and 9), and
/// streams of 16-32 times go faster: shuffled incr_i32 LZ4HC at clevel 1 0.94 -> 1.15-1.17,
/// bitshuffled incr_i32 LZ4 at clevels 1 and 9 1.52-1.56 -> 1.85-1.95; at 24 the bitshuffled
/// ones stay with lz4. (A power of two, so that the test is a shift.)
const RUST_DECODER_MIN_EXPANSION_LOG2: u32 = 4;

/// Streams of up to [`SHORT_STREAM`] bytes go to the Rust decoder from 8 times on (2^3).
/// Measured once decoders had room after their streams (bench_chunk, LZ4 and LZ4HC at 1 and 4
/// KiB, 1 thread, six rounds): geometric mean 1.193 -> 1.212 of c-blosc2's speed, LZ4HC on
/// shuffled incr_i32 at 1 KiB 0.94 -> 1.42, LZ4 on bitshuffled incr_i32 1.22 -> 1.61, LZ4 on
/// shuffled smooth_f64 0.95 -> 0.98. Longer streams stay at 16: at 8 there, shuffled
/// rainfall_f32 at 8 MiB decoded 5-7% slower (LZ4 1.04 -> 0.97, LZ4HC 0.99 -> 0.93), and 64
/// KiB chunks did not change. At 6 for short streams, unfiltered incr_i32 at 1 KiB lost (1.14
/// -> 0.99).
const RUST_DECODER_MIN_EXPANSION_SHORT_LOG2: u32 = 3;
const SHORT_STREAM: usize = 4096;

/// Whether a stream of `compressed` bytes that decodes to `n` goes to [`super::lz4_block`]:
/// from the expansions above, and for short streams also below 1.5 times. Those are mostly
/// long runs of literals, which it copies by `memcpy` where lz4 takes 32 bytes a loop.
/// Shuffled smooth_f64 with LZ4HC (one such stream a block), alternating harness, whole
/// chunks: 4 KiB 0.91-0.95 -> 1.15 of c-blosc2's speed, 1 KiB 0.91 -> 0.96. The cost is on
/// bitshuffled smooth_f64, whose streams are as compressible but end in many short matches at
/// offsets 2-16: LZ4 at 4 KiB 1.38 -> 1.28, LZ4HC at 1 KiB 1.54 -> 1.50.
#[inline(always)]
fn decoded_in_rust(n: usize, compressed: usize) -> bool {
    if n <= SHORT_STREAM {
        n >> RUST_DECODER_MIN_EXPANSION_SHORT_LOG2 >= compressed || 2 * n < 3 * compressed
    } else {
        n >> RUST_DECODER_MIN_EXPANSION_LOG2 >= compressed
    }
}

/// Decompresses one stream into exactly the first `n` bytes of `dst` (LZ4 and LZ4HC share the
/// format); the decoder may write over the rest of `dst`, which it takes as output room.
/// lz4's end-of-block rules (the last 5 bytes are literals, the last match starts 12 bytes
/// before the end) are then checked at the end of the room, as for any larger buffer given to
/// `LZ4_decompress_safe`: a block that breaks them only at `n` decodes, where c-blosc2 (which
/// passes `n`) refuses it. No encoder writes such blocks; any other stream that does not decode
/// to exactly `n` bytes is refused. Inlined into the decoder's streams loop, as the call to lz4
/// is all it adds.
#[inline(always)]
pub fn decompress(src: &[u8], dst: &mut [u8], n: usize) -> Result<usize> {
    if decoded_in_rust(n, src.len()) {
        let decoded = super::lz4_block::decompress(src, dst).map_or(-1, cint);
        return check_decoded(decoded, n);
    }
    // SAFETY: LZ4_decompress_safe never reads past src_size nor writes past dst_capacity.
    let decoded = unsafe {
        lz4_sys::LZ4_decompress_safe(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            cint(src.len()),
            cint(dst.len()),
        )
    };
    check_decoded(decoded, n)
}

/// Decompresses one stream that was compressed against `dict`.
pub fn decompress_with_dict(dict: &[u8], src: &[u8], dst: &mut [u8]) -> Result<usize> {
    // SAFETY: bounds as for LZ4_decompress_safe; the dictionary is a valid slice.
    let n = unsafe {
        LZ4_decompress_safe_usingDict(
            src.as_ptr().cast(),
            dst.as_mut_ptr().cast(),
            cint(src.len()),
            cint(dst.len()),
            dict.as_ptr().cast(),
            cint(dict.len()),
        )
    };
    check_decoded(n, dst.len())
}

fn check_decoded(n: c_int, expected: usize) -> Result<usize> {
    match usize::try_from(n) {
        Ok(n) if n == expected => Ok(n),
        Ok(n) => Err(Error::corrupt(format_args!(
            "lz4 stream decoded to {n} bytes, expected {expected}"
        ))),
        Err(_) => Err(Error::corrupt("lz4 stream does not decode")),
    }
}

struct Stream(NonNull<LZ4_stream_t>);
impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: created by LZ4_createStream, freed once.
        unsafe { lz4_sys::LZ4_freeStream(self.0.as_ptr().cast()) };
    }
}
struct StreamHC(NonNull<LZ4_streamHC_t>);
impl Drop for StreamHC {
    fn drop(&mut self) {
        // SAFETY: created by LZ4_createStreamHC, freed once.
        unsafe { LZ4_freeStreamHC(self.0.as_ptr()) };
    }
}

thread_local! {
    /// [`compress`]'s and [`compress_hc`]'s states (never given a dictionary).
    static FAST_RESET_STATE: RefCell<Option<Stream>> = const { RefCell::new(None) };
    static FAST_RESET_STATE_HC: RefCell<Option<StreamHC>> = const { RefCell::new(None) };
    static STREAM: RefCell<Option<Stream>> = const { RefCell::new(None) };
    static STREAM_HC: RefCell<Option<StreamHC>> = const { RefCell::new(None) };
}

/// Compresses one block against `dict` (the stream is reset to the dictionary first, so every
/// block decodes on its own, as c-blosc2 does). Returns the length or 0.
pub fn compress_with_dict(clevel: u8, dict: &[u8], src: &[u8], dst: &mut [u8]) -> usize {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { lz4_sys::LZ4_createStream() }.cast()).map(Stream);
    with_per_thread(&STREAM, make, |stream| {
        let s = stream.0.as_ptr();
        // SAFETY: s is a live stream owned by this thread; the slices are valid. The dictionary
        // outlives the compression call that references it.
        let n = unsafe {
            LZ4_loadDict(s, dict.as_ptr().cast(), cint(dict.len()));
            LZ4_compress_fast_continue(
                s,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                cint(src.len()),
                cint(dst.len()),
                accel_for(clevel),
            )
        };
        usize::try_from(n).unwrap_or(0)
    })
    .unwrap_or(0)
}

/// LZ4HC version of [`compress_with_dict`].
pub fn compress_hc_with_dict(clevel: u8, dict: &[u8], src: &[u8], dst: &mut [u8]) -> usize {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { LZ4_createStreamHC() }).map(StreamHC);
    with_per_thread(&STREAM_HC, make, |stream| {
        let s = stream.0.as_ptr();
        // SAFETY: s is a live stream owned by this thread; the slices are valid.
        let n = unsafe {
            LZ4_resetStreamHC_fast(s, c_int::from(clevel));
            LZ4_loadDictHC(s, dict.as_ptr().cast(), cint(dict.len()));
            LZ4_compress_HC_continue(
                s,
                src.as_ptr().cast(),
                dst.as_mut_ptr().cast(),
                cint(src.len()),
                cint(dst.len()),
            )
        };
        usize::try_from(n).unwrap_or(0)
    })
    .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codecs::xorshift;

    #[test]
    fn room_after_the_stream_changes_nothing_but_the_speed() {
        // Long matches at the end (where lz4's safe loop copies byte by byte without room),
        // short sequences, and streams of both decoders (lz4's, and ours for those that
        // expand 8 times or more, as these 4 KiB streams do from there).
        let kinds: Vec<Vec<u8>> = vec![
            (0..4096u32)
                .map(|i| (i % 251) as u8 ^ (i / 3) as u8)
                .collect(),
            (0..4096u32)
                .map(|i| {
                    if i < 900 {
                        (i * 7) as u8
                    } else {
                        (i % 2) as u8
                    }
                })
                .collect(),
            (0..4096u32).map(|i| (i / 10) as u8).collect(),
            vec![3u8; 4096],
        ];
        for data in kinds {
            for hc in [false, true] {
                let mut block = vec![0u8; data.len() + 64];
                let n = if hc {
                    compress_hc(9, &data, &mut block)
                } else {
                    compress(5, &data, &mut block)
                };
                let block = &block[..n];
                for room in [0, 1, 63, 64, 4096] {
                    let mut out = vec![0xeeu8; data.len() + room];
                    assert_eq!(decompress(block, &mut out, data.len()).unwrap(), data.len());
                    assert!(out[..data.len()] == data[..], "hc {hc} room {room}");
                    // A part shorter than the stream: refused, though the room holds it.
                    let mut out = vec![0u8; data.len() + room];
                    let short = data.len() - 16;
                    let err = decompress(block, &mut out, short).unwrap_err();
                    assert!(err.to_string().contains("expected"), "{err}");
                }
            }
        }
    }

    /// Streams on every side of the decoders' boundaries (expansions under 1.5, 1.5-8, 8-16
    /// and over 16; streams of up to `SHORT_STREAM` bytes and longer) decode to lz4's own
    /// bytes, and refuse to decode truncated.
    #[test]
    fn both_decoders_agree_with_lz4_across_the_choice() {
        let mut noise = xorshift(0x2545_f491);
        let mut expansions = Vec::new();
        for n in [1024, SHORT_STREAM, SHORT_STREAM + 1, 4 * SHORT_STREAM] {
            // Noise (incompressible) up to `prefix`, then a slow ramp of long runs.
            for prefix in [
                n,
                n * 3 / 4,
                n / 2,
                n / 4,
                n / 10,
                n / 13,
                n / 24,
                n / 40,
                0,
            ] {
                let data: Vec<u8> = (0..n)
                    .map(|i| {
                        if i < prefix {
                            noise() as u8
                        } else {
                            (i / 400) as u8
                        }
                    })
                    .collect();
                let mut block = vec![0u8; n + n / 255 + 64];
                let len = compress(1, &data, &mut block);
                let block = &block[..len];
                // Expansion class: 0 under 1.5 times, else the whole number of times.
                expansions.push((n, if 2 * n < 3 * len { 0 } else { n / len.max(1) }));
                let mut by_lz4 = vec![0u8; n];
                // SAFETY: the slices are valid for the lengths passed.
                let lz4_n = unsafe {
                    lz4_sys::LZ4_decompress_safe(
                        block.as_ptr().cast(),
                        by_lz4.as_mut_ptr().cast(),
                        cint(len),
                        cint(n),
                    )
                };
                assert_eq!(lz4_n, cint(n));
                let mut out = vec![0u8; n + 64];
                assert_eq!(decompress(block, &mut out, n).unwrap(), n);
                assert!(
                    out[..n] == by_lz4[..] && by_lz4 == data,
                    "n {n} prefix {prefix}"
                );
                let err = decompress(&block[..len - 1], &mut out, n).unwrap_err();
                assert!(err.to_string().contains("lz4"), "{err}");
            }
        }
        let short = |e: usize| expansions.iter().any(|&(n, x)| n <= SHORT_STREAM && x == e);
        let long = |r: std::ops::Range<usize>| {
            expansions
                .iter()
                .any(|&(n, x)| n > SHORT_STREAM && r.contains(&x))
        };
        assert!(
            short(0) && (1..8).any(short) && (8..16).any(short) && (16..64).any(short),
            "{expansions:?}"
        );
        assert!(
            long(0..1) && long(1..8) && long(8..16) && long(16..64),
            "{expansions:?}"
        );
    }

    /// The kept states give `LZ4_compress_fast`'s and `LZ4_compress_HC`'s bytes, stream after
    /// stream: short streams over stale tables, streams of 4 KiB and more (which clear LZ4's),
    /// past the 64 KiB after which LZ4's is cleared, and destinations too small for the worst
    /// case.
    #[test]
    fn kept_state_compresses_as_the_one_shot_call() {
        let mut rnd = xorshift(0x9e37_79b9_7f4a_7c15);
        let sizes = [
            0, 1, 5, 12, 13, 64, 128, 300, 1000, 4095, 4096, 5000, 20_000, 70_000,
        ];
        let mut streams = 0;
        for round in 0..6 {
            for &len in &sizes {
                let kind = (rnd() % 4) as u8;
                let data: Vec<u8> = (0..len)
                    .map(|i| match kind {
                        0 => rnd() as u8,
                        1 => (i / 10) as u8,
                        2 => b"the quick brown fox jumps over the lazy dog "[i % 44],
                        _ => (rnd() % 3) as u8,
                    })
                    .collect();
                for clevel in [1, 5, 9] {
                    for capacity in [lz4_sys_bound(len), len / 2 + 16] {
                        for hc in [false, true] {
                            let mut kept = vec![0u8; capacity];
                            let mut one_shot = vec![0u8; capacity];
                            let (n, m) = if hc {
                                let n = compress_hc(clevel, &data, &mut kept);
                                (n, compress_hc_one_shot(clevel, &data, &mut one_shot))
                            } else {
                                let n = compress(clevel, &data, &mut kept);
                                (n, compress_one_shot(clevel, &data, &mut one_shot))
                            };
                            let m = usize::try_from(m).unwrap_or(0);
                            let case = format!("round {round} len {len} kind {kind} hc {hc}");
                            assert_eq!(n, m, "{case} clevel {clevel}");
                            assert!(kept[..n] == one_shot[..m], "{case} clevel {clevel}");
                            streams += 1;
                        }
                    }
                }
            }
        }
        assert_eq!(streams, 6 * sizes.len() * 3 * 2 * 2);
    }

    fn push_length(block: &mut Vec<u8>, mut rest: usize) {
        while rest >= 255 {
            block.push(255);
            rest -= 255;
        }
        block.push(rest as u8);
    }

    /// Appends a sequence of `literals` then a match of `(length, offset)`, or no match: the
    /// block's last sequence.
    fn push_sequence(block: &mut Vec<u8>, literals: &[u8], matched: Option<(usize, u16)>) {
        let match_bits = matched.map_or(0, |(length, _)| (length - 4).min(15));
        block.push(((literals.len().min(15) << 4) | match_bits) as u8);
        if literals.len() >= 15 {
            push_length(block, literals.len() - 15);
        }
        block.extend_from_slice(literals);
        if let Some((length, offset)) = matched {
            block.extend(offset.to_le_bytes());
            if length - 4 >= 15 {
                push_length(block, length - 4 - 15);
            }
        }
    }

    /// Bytes after the output that lz4 must leave alone.
    const GUARD: usize = 64;

    /// lz4's `LZ4_decompress_safe` of `block` into `n` bytes of a buffer with [`GUARD`] bytes
    /// of 0xa5 after them: its result and the `n` bytes, once the guard is checked untouched.
    fn lz4_into_guarded(block: &[u8], n: usize, case: &str) -> (i32, Vec<u8>) {
        let mut out = vec![0xa5u8; n + GUARD];
        // SAFETY: valid slices; lz4 writes at most `n` bytes of `out`.
        let decoded = unsafe {
            lz4_sys::LZ4_decompress_safe(
                block.as_ptr().cast(),
                out.as_mut_ptr().cast(),
                cint(block.len()),
                cint(n),
            )
        };
        assert!(
            out[n..].iter().all(|&b| b == 0xa5),
            "{case}: wrote past the end"
        );
        out.truncate(n);
        (decoded, out)
    }

    /// lz4's decoder as this crate builds it fills matches at offset 1 with its own stores
    /// (cmake/lz4-fills.h): every length, starting at several alignments, followed by a second
    /// fill and by tails that end the output inside and past its fast loop's 64-byte margin,
    /// decodes to the runs it names and writes nothing past the output's capacity.
    #[test]
    fn lz4_fills_offset_1_matches_exactly() {
        let mut checked = 0;
        for length in 4..=340 {
            for lead in [1usize, 7, 16] {
                let second = 4 + length % 17;
                // The next three end the first match 64, 65 and 66 bytes before the output's
                // end: the fast loop takes it from 65 on.
                for tail in [12, 40, 63 - second, 64 - second, 65 - second, 64, 65, 200] {
                    let literals: Vec<u8> = (0..lead).map(|i| 0x41 + i as u8).collect();
                    let last: Vec<u8> = (0..tail).map(|i| (i * 7 + 3) as u8).collect();
                    let mut block = Vec::new();
                    push_sequence(&mut block, &literals, Some((length, 1)));
                    push_sequence(&mut block, &[0xb7], Some((second, 1)));
                    push_sequence(&mut block, &last, None);
                    let mut expected = literals.clone();
                    expected.resize(lead + length, literals[lead - 1]);
                    expected.push(0xb7);
                    expected.resize(expected.len() + second, 0xb7);
                    expected.extend_from_slice(&last);

                    let n = expected.len();
                    let case = format!("length {length} lead {lead} tail {tail}");
                    let (decoded, out) = lz4_into_guarded(&block, n, &case);
                    assert_eq!(usize::try_from(decoded).ok(), Some(n), "{case}");
                    assert!(out == expected, "{case}");
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 337 * 3 * 8);
    }

    /// lz4's safe loop copies each block's last match; cmake/lz4-fills.h fills the long ones
    /// at offsets 1-7 16 bytes a store, after lz4's first 8. Every offset up to 9 (0 reads as
    /// zeros), every length around the fill's bounds and strides: the bytes the match repeats and
    /// nothing past the output; with fewer than 5 literals after the match, an error.
    #[test]
    fn lz4_fills_long_last_matches_at_short_offsets_exactly() {
        let mut checked = 0;
        for offset in 0..=9u16 {
            for lead in [9usize, 16, 30] {
                for length in (60..=140).chain([257, 1000, 5003]) {
                    for tail in [4usize, 5, 6, 12, 20, 70] {
                        let literals: Vec<u8> = (0..lead).map(|i| (i * 29 + 5) as u8).collect();
                        let last: Vec<u8> = (0..tail).map(|i| (i * 7 + 3) as u8).collect();
                        let mut block = Vec::new();
                        push_sequence(&mut block, &literals, Some((length, offset)));
                        push_sequence(&mut block, &last, None);
                        let mut expected = literals.clone();
                        for _ in 0..length {
                            let back = usize::from(offset);
                            expected.push(if back == 0 {
                                0
                            } else {
                                expected[expected.len() - back]
                            });
                        }
                        expected.extend_from_slice(&last);

                        let n = expected.len();
                        let case =
                            format!("offset {offset} lead {lead} length {length} tail {tail}");
                        let (decoded, out) = lz4_into_guarded(&block, n, &case);
                        if tail < 5 {
                            assert!(decoded < 0, "{case}");
                        } else {
                            assert_eq!(usize::try_from(decoded).ok(), Some(n), "{case}");
                            assert!(out == expected, "{case}");
                        }
                        checked += 1;
                    }
                }
            }
        }
        assert_eq!(checked, 10 * 3 * 84 * 6);
    }

    fn lz4_sys_bound(len: usize) -> usize {
        // SAFETY: a pure function of its argument.
        usize::try_from(unsafe { lz4_sys::LZ4_compressBound(cint(len)) }).unwrap_or(0)
    }
}
