//! zstd through zstd-sys. Compression and decompression contexts are cached per thread
//! (c-blosc2 keeps one per worker); dictionaries are digested once per chunk.
//!
//! The `unsafe` blocks here are calls into the C library with slices we own.

use std::cell::RefCell;
use std::ptr::NonNull;

use zstd_sys as z;

use super::with_per_thread;
use crate::error::{Error, Result};

/// Largest dictionary c-blosc2 builds or accepts (`BLOSC2_MAXDICTSIZE`).
pub const MAX_DICT_SIZE: usize = 32 * 1024;

/// zstd level for a Blosc clevel, as c-blosc2 maps it: 1..8 → 1, 3, .., 15; 9 → the maximum.
/// (c-blosc2 means to map 8 near the maximum, but tests the mapped level, which is odd, against
/// 8, so clevel 8 gives level 15; its chunks are what ours must equal.)
pub fn level_for(clevel: u8) -> i32 {
    match clevel {
        0..=8 => 2 * i32::from(clevel) - 1,
        _ => {
            // SAFETY: a pure query without arguments.
            unsafe { z::ZSTD_maxCLevel() }
        }
    }
}

fn is_error(code: usize) -> bool {
    // SAFETY: a pure query on a return code.
    unsafe { z::ZSTD_isError(code) != 0 }
}

struct CCtx(NonNull<z::ZSTD_CCtx>);
impl Drop for CCtx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from ZSTD_createCCtx and is freed once.
        unsafe { z::ZSTD_freeCCtx(self.0.as_ptr()) };
    }
}
struct DCtx(NonNull<z::ZSTD_DCtx>);
impl Drop for DCtx {
    fn drop(&mut self) {
        // SAFETY: the pointer came from ZSTD_createDCtx and is freed once.
        unsafe { z::ZSTD_freeDCtx(self.0.as_ptr()) };
    }
}

thread_local! {
    static CCTX: RefCell<Option<CCtx>> = const { RefCell::new(None) };
    static DCTX: RefCell<Option<DCtx>> = const { RefCell::new(None) };
}

fn with_cctx<R>(f: impl FnOnce(*mut z::ZSTD_CCtx) -> R) -> Option<R> {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { z::ZSTD_createCCtx() }).map(CCtx);
    with_per_thread(&CCTX, make, |c| f(c.0.as_ptr()))
}

fn with_dctx<R>(f: impl FnOnce(*mut z::ZSTD_DCtx) -> R) -> Option<R> {
    // SAFETY: allocation call; NULL is handled by with_per_thread.
    let make = || NonNull::new(unsafe { z::ZSTD_createDCtx() }).map(DCtx);
    with_per_thread(&DCTX, make, |d| f(d.0.as_ptr()))
}

/// Compresses `src` into `dst`; returns the length, or 0 if it does not fit (or fails).
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    let level = level_for(clevel);
    with_cctx(|cctx| {
        // SAFETY: cctx is a live context owned by this thread; the buffers are valid slices.
        unsafe {
            z::ZSTD_compressCCtx(
                cctx,
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
                level,
            )
        }
    })
    .filter(|&code| !is_error(code))
    .unwrap_or(0)
}

/// zstd's largest block (`ZSTD_BLOCKSIZE_MAX`).
const BLOCK_SIZE_MAX: usize = 128 * 1024;

/// Decompresses one stream into exactly `dst.len()` bytes.
///
/// A frame that is one compressed block (what zstd writes for a stream of up to 128 KiB that
/// compresses) has that block decoded by zstd's block API, without the frame API's parsing
/// and checks of the frame, which are [`lone_block`]'s here: 340 of the 10,330 instructions of
/// decoding a 1 KiB stream. Only an exact decode is taken from it; any other outcome, and any
/// other frame, goes to the frame API, whose verdict and message stand. (zstd marks the block
/// API deprecated, in favour of that frame API.)
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let n = dst.len();
    let code = with_dctx(|dctx| {
        if let Some(block) = lone_block(src, n) {
            // SAFETY: dctx is a live context owned by this thread; the buffers are valid
            // slices. ZSTD_decompressBegin resets the context as the frame API does before a
            // frame, so the block has no history but `dst`.
            let decoded = unsafe {
                z::ZSTD_decompressBegin(dctx);
                z::ZSTD_decompressBlock(
                    dctx,
                    dst.as_mut_ptr().cast(),
                    n,
                    block.as_ptr().cast(),
                    block.len(),
                )
            };
            if decoded == n {
                return decoded;
            }
        }
        // SAFETY: dctx is a live context owned by this thread; the buffers are valid slices.
        unsafe {
            z::ZSTD_decompressDCtx(
                dctx,
                dst.as_mut_ptr().cast(),
                n,
                src.as_ptr().cast(),
                src.len(),
            )
        }
    })
    .ok_or_else(|| Error::no_memory("zstd: cannot allocate a decompression context"))?;
    check_decoded(code, n)
}

/// The block of `frame` when the frame decodes to `n` bytes through one compressed block and
/// nothing else: the frame API's checks of such a frame, made here (RFC 8878, section 3.1.1).
/// `None` for every other frame (a checksum, a dictionary ID, a window descriptor, other
/// blocks, bytes after the block, or a block larger than the frame's content), which the
/// frame API then decodes or refuses.
fn lone_block(frame: &[u8], n: usize) -> Option<&[u8]> {
    const MAGIC: u32 = 0xFD2F_B528;
    let (magic, rest) = frame.split_first_chunk::<4>()?;
    let (&descriptor, rest) = rest.split_first()?;
    // Single segment (bit 5), no checksum (bit 2), the reserved bit (3) clear, no dictionary
    // ID (bits 0-1); bit 4 is unused, and ignored as zstd does.
    if u32::from_le_bytes(*magic) != MAGIC || descriptor & 0b0010_1111 != 0b0010_0000 {
        return None;
    }
    // The content size, whose field's width the top two bits give (1 byte for 0 in a single
    // segment frame; 2 bytes hold the size less 256).
    let (content_size, rest) = match descriptor >> 6 {
        0 => {
            let (&size, rest) = rest.split_first()?;
            (u64::from(size), rest)
        }
        1 => {
            let (size, rest) = rest.split_first_chunk::<2>()?;
            (u64::from(u16::from_le_bytes(*size)) + 256, rest)
        }
        2 => {
            let (size, rest) = rest.split_first_chunk::<4>()?;
            (u64::from(u32::from_le_bytes(*size)), rest)
        }
        _ => {
            let (size, rest) = rest.split_first_chunk::<8>()?;
            (u64::from_le_bytes(*size), rest)
        }
    };
    // A single segment frame's window is its content, and no block exceeds the window.
    if content_size != n as u64 || n > BLOCK_SIZE_MAX {
        return None;
    }
    let (header, block) = rest.split_first_chunk::<3>()?;
    let header = u32::from_le_bytes([header[0], header[1], header[2], 0]);
    // The last block (bit 0), compressed (type 2, bits 1-2), and the rest of the frame.
    let size = (header >> 3) as usize;
    (header & 0b111 == 0b101 && size == block.len() && size <= n).then_some(block)
}

fn check_decoded(code: usize, expected: usize) -> Result<usize> {
    if is_error(code) {
        return Err(Error::corrupt(format_args!(
            "zstd stream does not decode ({})",
            error_name(code)
        )));
    }
    if code != expected {
        return Err(Error::corrupt(format_args!(
            "zstd stream decoded to {code} bytes, expected {expected}"
        )));
    }
    Ok(code)
}

fn error_name(code: usize) -> String {
    // SAFETY: ZSTD_getErrorName returns a static NUL-terminated string for any code.
    unsafe { std::ffi::CStr::from_ptr(z::ZSTD_getErrorName(code)) }
        .to_string_lossy()
        .into_owned()
}

/// A digested compression dictionary (zstd's CDict is read-only, so it is shared by threads).
pub struct CDict(NonNull<z::ZSTD_CDict>);
// SAFETY: a ZSTD_CDict is immutable after creation and documented as shareable across threads.
unsafe impl Send for CDict {}
// SAFETY: as above.
unsafe impl Sync for CDict {}
impl Drop for CDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createCDict, freed once.
        unsafe { z::ZSTD_freeCDict(self.0.as_ptr()) };
    }
}
impl CDict {
    /// Digests `dict` at level 1, the level c-blosc2 uses for dictionary compression.
    pub fn new(dict: &[u8]) -> Result<CDict> {
        // SAFETY: zstd copies the dictionary content.
        let p = unsafe { z::ZSTD_createCDict(dict.as_ptr().cast(), dict.len(), 1) };
        NonNull::new(p)
            .map(CDict)
            .ok_or_else(|| Error::no_memory("zstd: cannot create a compression dictionary"))
    }
}

/// A digested decompression dictionary.
pub struct DDict(NonNull<z::ZSTD_DDict>);
// SAFETY: a ZSTD_DDict is immutable after creation and documented as shareable across threads.
unsafe impl Send for DDict {}
// SAFETY: as above.
unsafe impl Sync for DDict {}
impl Drop for DDict {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDDict, freed once.
        unsafe { z::ZSTD_freeDDict(self.0.as_ptr()) };
    }
}
impl DDict {
    pub fn new(dict: &[u8]) -> Result<DDict> {
        // SAFETY: zstd copies the dictionary content.
        let p = unsafe { z::ZSTD_createDDict(dict.as_ptr().cast(), dict.len()) };
        NonNull::new(p)
            .map(DDict)
            .ok_or_else(|| Error::corrupt("zstd: the chunk's dictionary is not usable"))
    }
}

/// Compresses with a dictionary; returns the length or 0.
pub fn compress_with_dict(cdict: &CDict, src: &[u8], dst: &mut [u8]) -> usize {
    with_cctx(|cctx| {
        // SAFETY: live thread-owned context, valid slices, live CDict.
        unsafe {
            z::ZSTD_compress_usingCDict(
                cctx,
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
                cdict.0.as_ptr(),
            )
        }
    })
    .filter(|&code| !is_error(code))
    .unwrap_or(0)
}

/// Decompresses with a dictionary into exactly `dst.len()` bytes.
pub fn decompress_with_dict(ddict: &DDict, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let code = with_dctx(|dctx| {
        // SAFETY: live thread-owned context, valid slices, live DDict.
        unsafe {
            z::ZSTD_decompress_usingDDict(
                dctx,
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
                ddict.0.as_ptr(),
            )
        }
    })
    .ok_or_else(|| Error::no_memory("zstd: cannot allocate a decompression context"))?;
    check_decoded(code, dst.len())
}

/// Trains a dictionary of at most `capacity` bytes from equal-sized samples laid end to end,
/// as c-blosc2 does (`ZDICT_trainFromBuffer`). `None` when training fails.
pub fn train_dict(
    samples: &[u8],
    sample_size: usize,
    nsamples: usize,
    capacity: usize,
) -> Option<Vec<u8>> {
    if sample_size.checked_mul(nsamples)? > samples.len() {
        return None;
    }
    let sizes = vec![sample_size; nsamples];
    let mut dict = vec![0u8; capacity];
    // SAFETY: the samples buffer holds nsamples * sample_size bytes (checked above); dict has
    // `capacity` writable bytes.
    let n = unsafe {
        z::ZDICT_trainFromBuffer(
            dict.as_mut_ptr().cast(),
            capacity,
            samples.as_ptr().cast(),
            sizes.as_ptr(),
            u32::try_from(nsamples).ok()?,
        )
    };
    // SAFETY: a pure query on a return code.
    if unsafe { z::ZDICT_isError(n) } != 0 || n == 0 {
        return None;
    }
    dict.truncate(n);
    Some(dict)
}

#[cfg(test)]
mod tests {
    use super::{compress, decompress, lone_block, z, BLOCK_SIZE_MAX};
    use crate::codecs::test_rng::Rng;

    /// The frame API alone, on a fresh context: the reference.
    fn frame_api(src: &[u8], n: usize) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; n];
        // SAFETY: a fresh context, freed below; valid slices.
        let code = unsafe {
            let dctx = z::ZSTD_createDCtx();
            let code = z::ZSTD_decompressDCtx(
                dctx,
                out.as_mut_ptr().cast(),
                n,
                src.as_ptr().cast(),
                src.len(),
            );
            z::ZSTD_freeDCtx(dctx);
            code
        };
        super::check_decoded(code, n)
            .map(|_| out)
            .map_err(|e| e.to_string())
    }

    fn ours(src: &[u8], n: usize) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; n];
        decompress(src, &mut out)
            .map(|_| out)
            .map_err(|e| e.to_string())
    }

    fn samples() -> Vec<Vec<u8>> {
        let mut rng = Rng(0x5eed_0f2a_7d01);
        let mut all = vec![];
        for n in [
            1, 2, 100, 255, 256, 257, 1000, 4096, 65_535, 65_791, 65_792, 100_000, 131_072,
            131_073, 300_000,
        ] {
            all.push((0..n).map(|i| (i / 10) as u8).collect());
            all.push(
                (0..n)
                    .map(|i| (i as u32 / 7).to_le_bytes()[i % 4])
                    .collect(),
            );
            all.push(
                (0..n)
                    .map(|i| {
                        if rng.below(4) == 0 {
                            rng.next() as u8
                        } else {
                            (i % 31) as u8
                        }
                    })
                    .collect(),
            );
            all.push((0..n).map(|_| rng.next() as u8).collect());
        }
        all
    }

    fn frame(data: &[u8], clevel: u8) -> Vec<u8> {
        let mut out = vec![0u8; data.len() + data.len() / 128 + 64];
        let len = compress(clevel, data, &mut out);
        assert!(len > 0);
        out.truncate(len);
        out
    }

    #[test]
    fn decodes_what_zstd_writes_and_takes_the_block_path_where_it_can() {
        let mut lone = 0;
        for data in samples() {
            for clevel in [1, 5, 9] {
                let f = frame(&data, clevel);
                let n = data.len();
                assert_eq!(
                    ours(&f, n).as_deref(),
                    Ok(&data[..]),
                    "{n} bytes, clevel {clevel}"
                );
                if lone_block(&f, n).is_some() {
                    assert!(n <= BLOCK_SIZE_MAX);
                    lone += 1;
                }
                // Another size than the frame's content goes to the frame API, and fails.
                assert_eq!(lone_block(&f, n + 1), None);
                assert_eq!(ours(&f, n + 1), frame_api(&f, n + 1));
            }
        }
        // The compressible streams of 100 bytes to 128 KiB: one compressed block each.
        assert!(lone >= 80, "{lone}");
    }

    /// Runs of period 1-16 (zstd's matches at those offsets; those up to 15 filled by
    /// cmake/zstd-fill8.h, at distances of 8-15 bytes) of many lengths, between literals and
    /// at the end of the data, decode to the data and write nothing past the output.
    #[test]
    fn periodic_runs_decode_exactly() {
        const GUARD: usize = 64;
        let mut rng = Rng(0xf111_8bad_5eed);
        let mut checked = 0;
        for period in 1..=16 {
            for run in [
                5, 8, 9, 15, 16, 17, 24, 31, 33, 40, 64, 65, 100, 257, 1000, 5000,
            ] {
                if run < period {
                    continue;
                }
                let mut data = Vec::new();
                while data.len() < 20_000 {
                    let literals = 3 + rng.below(20);
                    data.extend((0..literals).map(|_| rng.next() as u8));
                    let seed: Vec<u8> = (0..period).map(|_| rng.next() as u8).collect();
                    data.extend((0..run).map(|i| seed[i % period]));
                }
                for ends_with_run in [false, true] {
                    if !ends_with_run {
                        data.extend((0..7).map(|_| rng.next() as u8));
                    }
                    for clevel in [1, 5, 9] {
                        let f = frame(&data, clevel);
                        let n = data.len();
                        let mut out = vec![0xa5u8; n + GUARD];
                        let case = format!("period {period} run {run} clevel {clevel}");
                        assert_eq!(decompress(&f, &mut out[..n]).ok(), Some(n), "{case}");
                        assert!(out[..n] == data[..], "{case}");
                        assert!(out[n..].iter().all(|&b| b == 0xa5), "{case}");
                        checked += 1;
                    }
                }
            }
        }
        // 27 of the pairs have runs shorter than their period.
        assert_eq!(checked, (16 * 16 - 27) * 2 * 3);
    }

    #[test]
    fn mutated_frames_get_the_frame_apis_verdict() {
        let mut rng = Rng(0x0ddb_a11c_afe5);
        let mut checked = 0;
        for data in samples().into_iter().filter(|d| d.len() <= 4096) {
            let f = frame(&data, 5);
            let n = data.len();
            for _ in 0..400 {
                let mut bad = f.clone();
                match rng.below(4) {
                    0 => {
                        let i = rng.below(bad.len());
                        bad[i] = rng.next() as u8;
                    }
                    1 => {
                        // The frame header and the block header, where the checks are.
                        let i = rng.below(bad.len().min(12));
                        bad[i] ^= 1 << rng.below(8);
                    }
                    2 => bad.truncate(rng.below(bad.len())),
                    _ => bad.extend((0..1 + rng.below(8)).map(|_| rng.next() as u8)),
                }
                let capacity = if rng.below(4) == 0 {
                    rng.below(n + 2)
                } else {
                    n
                };
                assert_eq!(ours(&bad, capacity), frame_api(&bad, capacity), "{bad:?}");
                checked += 1;
            }
        }
        assert!(checked > 10_000);
    }
}
