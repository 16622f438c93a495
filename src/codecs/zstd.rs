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

/// Decompresses one stream into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let code = with_dctx(|dctx| {
        // SAFETY: dctx is a live context owned by this thread; the buffers are valid slices.
        unsafe {
            z::ZSTD_decompressDCtx(
                dctx,
                dst.as_mut_ptr().cast(),
                dst.len(),
                src.as_ptr().cast(),
                src.len(),
            )
        }
    })
    .ok_or_else(|| Error::no_memory("zstd: cannot allocate a decompression context"))?;
    check_decoded(code, dst.len())
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
