//! One-shot chunk codec: `b2f_cparams`, `b2f_compress`, `b2f_decompress`, `b2f_getitem`,
//! `b2f_chunk_sizes`.

use std::ffi::c_void;

use super::boundary::{guard, guard_value, input, output, read_versioned, write_opt, write_req};
use super::error::b2f_status;
use crate::chunk::{self, CParams, Context, SplitMode};
use crate::error::{Error, Result};

/// Codec ids (Blosc2's).
pub const B2F_CODEC_BLOSCLZ: u8 = 0;
pub const B2F_CODEC_LZ4: u8 = 1;
pub const B2F_CODEC_LZ4HC: u8 = 2;
pub const B2F_CODEC_ZLIB: u8 = 4;
pub const B2F_CODEC_ZSTD: u8 = 5;

/// Filter ids (Blosc2's).
pub const B2F_FILTER_NONE: u8 = 0;
pub const B2F_FILTER_SHUFFLE: u8 = 1;
pub const B2F_FILTER_BITSHUFFLE: u8 = 2;
pub const B2F_FILTER_DELTA: u8 = 3;
pub const B2F_FILTER_TRUNC_PREC: u8 = 4;
pub const B2F_FILTER_BYTEDELTA: u8 = 35;
/// Integer precision truncation (lossy): meta > 0 keeps that many top bits, < 0 (as `int8_t`)
/// zeroes that many low bits of 1-, 2-, 4- or 8-byte integers.
pub const B2F_FILTER_INT_TRUNC: u8 = 36;
/// Cell reordering of an n-dim array's blocks (meta: cell side); arrays only.
pub const B2F_FILTER_NDCELL: u8 = 32;
/// Cell means of an n-dim float array's blocks (lossy; meta: cell side); arrays only.
pub const B2F_FILTER_NDMEAN: u8 = 33;

/// Split modes (c-blosc2's values).
pub const B2F_SPLIT_ALWAYS: u8 = 1;
pub const B2F_SPLIT_NEVER: u8 = 2;
pub const B2F_SPLIT_AUTO: u8 = 3;
pub const B2F_SPLIT_FORWARD_COMPAT: u8 = 4;

/// Most bytes a chunk adds to its data.
pub const B2F_MAX_OVERHEAD: usize = 32;

/// Compression parameters. Set `struct_size = sizeof(b2f_cparams)`; a smaller size from a
/// caller built against an older header is honoured (missing fields take their defaults).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2f_cparams {
    /// `sizeof(b2f_cparams)`: lets the struct grow without breaking the ABI.
    pub struct_size: u32,
    /// `B2F_CODEC_*`.
    pub codec: u8,
    /// 0 (store) ..= 9.
    pub clevel: u8,
    /// The filter pipeline, applied from slot 0 to 5 (`B2F_FILTER_*`).
    pub filters: [u8; 6],
    /// Per-slot filter parameter (trunc_prec: bits to keep; shuffle/bytedelta: typesize, 0 = the chunk's).
    pub filters_meta: [u8; 6],
    /// Bytes per item (1 ..= 536866816).
    pub typesize: i32,
    /// Bytes per block, 0 = automatic as c-blosc2 chooses.
    pub blocksize: i32,
    /// Threads for blocks (>= 1): the calling thread and `nthreads - 1` pool workers.
    pub nthreads: i16,
    /// `B2F_SPLIT_*`.
    pub splitmode: u8,
    /// Non-zero: build a dictionary per chunk (zstd, lz4, lz4hc).
    pub use_dict: u8,
}

impl b2f_cparams {
    pub(crate) fn defaults() -> b2f_cparams {
        let d = CParams::default();
        b2f_cparams {
            struct_size: std::mem::size_of::<b2f_cparams>() as u32,
            codec: d.codec,
            clevel: d.clevel,
            filters: d.filters,
            filters_meta: d.filters_meta,
            typesize: d.typesize as i32,
            blocksize: 0,
            nthreads: 1,
            splitmode: SplitMode::ForwardCompat as u8,
            use_dict: 0,
        }
    }

    /// The engine's parameters, every field validated.
    pub(crate) fn to_engine(self) -> Result<CParams> {
        let typesize = usize::try_from(self.typesize)
            .map_err(|_| Error::invalid(format_args!("typesize {} is negative", self.typesize)))?;
        let blocksize = usize::try_from(self.blocksize).map_err(|_| {
            Error::invalid(format_args!("blocksize {} is negative", self.blocksize))
        })?;
        let nthreads = usize::try_from(self.nthreads)
            .map_err(|_| Error::invalid(format_args!("nthreads {} is negative", self.nthreads)))?;
        let p = CParams {
            codec: self.codec,
            clevel: self.clevel,
            filters: self.filters,
            filters_meta: self.filters_meta,
            typesize,
            blocksize,
            nthreads,
            splitmode: SplitMode::try_from(self.splitmode)?,
            use_dict: self.use_dict != 0,
        };
        p.validate()?;
        Ok(p)
    }

    /// Reads a caller's (possibly older, smaller) struct.
    ///
    /// # Safety
    /// `p` is NULL or points to a `b2f_cparams` of at least `p->struct_size` bytes.
    pub(crate) unsafe fn read(p: *const b2f_cparams) -> Result<CParams> {
        // SAFETY: per the caller.
        unsafe { read_versioned(p, b2f_cparams::defaults(), "cparams") }?.to_engine()
    }
}

/// Fills `*p` with c-blosc2's default parameters (blosclz, clevel 5, shuffle, typesize 8,
/// automatic blocksize, 1 thread, forward-compatible splits) and `struct_size`.
///
/// # Safety
/// `p` is NULL (nothing happens) or points to a writable `b2f_cparams` of this header's size.
/// Thread-safe.
#[no_mangle]
pub unsafe extern "C" fn b2f_cparams_default(p: *mut b2f_cparams) {
    // SAFETY: per the contract above.
    guard_value((), || unsafe { write_opt(p, b2f_cparams::defaults()) })
}

/// The largest chunk `nbytes` of data can compress to (`nbytes + B2F_MAX_OVERHEAD`): a
/// destination of this size never makes `b2f_compress` fail for lack of room.
/// Thread-safe.
#[no_mangle]
pub extern "C" fn b2f_max_compressed_size(nbytes: usize) -> usize {
    nbytes.saturating_add(B2F_MAX_OVERHEAD)
}

/// Compresses `src_len` bytes of `src` into one Blosc2 chunk in `dst`, with the parameters
/// `*p`. On success `*cbytes_out` holds the chunk's length.
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for NULL pointers or bad parameters;
/// `B2F_ERR_UNSUPPORTED` for an unknown codec or filter, or a filter pipeline c-blosc2 decodes
/// wrongly (two DELTA filters, some orders of five or six: see the README);
/// `B2F_ERR_BUFFER_TOO_SMALL` when `dst_len` is too small, with
/// `b2f_max_compressed_size(src_len)` in `*cbytes_out`.
///
/// # Memory and lifetimes
/// All buffers belong to the caller; `src` and `dst` must not overlap. Nothing is retained.
/// Thread-safe: any number of threads may compress at once (`nthreads > 1` runs blocks on the
/// calling thread and a process-wide pool of `nthreads - 1` workers, shared by all calls with
/// that thread count).
///
/// # Safety
/// `p` points to a `b2f_cparams`; `src`/`dst` point to `src_len`/`dst_len` bytes (or are NULL
/// with length 0); `cbytes_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_compress(
    p: *const b2f_cparams,
    src: *const c_void,
    src_len: usize,
    dst: *mut c_void,
    dst_len: usize,
    cbytes_out: *mut usize,
) -> b2f_status {
    guard("b2f_compress", || {
        // SAFETY: per the contract above.
        let params = unsafe { b2f_cparams::read(p) }?;
        // SAFETY: per the contract above.
        let src = unsafe { input(src.cast(), src_len, "src") }?;
        // SAFETY: per the contract above.
        let dst = unsafe { output(dst.cast(), dst_len, "dst") }?;
        if cbytes_out.is_null() {
            bail!(invalid, "cbytes_out is NULL");
        }
        let ctx = Context::new(params)?;
        match ctx.compress(src, dst) {
            Ok(n) => {
                // SAFETY: checked non-NULL above; writable per the contract.
                unsafe { write_req(cbytes_out, n, "cbytes_out") }
            }
            Err(Error::BufferTooSmall { needed, given }) => {
                // SAFETY: as above.
                unsafe { write_req(cbytes_out, needed, "cbytes_out") }?;
                Err(Error::BufferTooSmall { needed, given })
            }
            Err(e) => Err(e),
        }
    })
}

/// Decompresses the chunk `chunk` (`chunk_len` bytes, at least its `cbytes`) into `dst`.
/// With `dst = NULL, dst_len = 0` only the decompressed size is written to `*nbytes_out`.
///
/// Returns `B2F_OK`; `B2F_ERR_BUFFER_TOO_SMALL` with the size needed in `*nbytes_out`;
/// `B2F_ERR_CORRUPT` for malformed chunks; `B2F_ERR_UNSUPPORTED` for unknown codec or filter
/// ids (named in the message); `B2F_ERR_INVALID_ARGUMENT` for NULL pointers.
///
/// # Memory and lifetimes
/// All buffers belong to the caller. Thread-safe.
///
/// # Safety
/// `chunk`/`dst` point to `chunk_len`/`dst_len` bytes or are NULL with length 0;
/// `nbytes_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_decompress(
    chunk: *const c_void,
    chunk_len: usize,
    dst: *mut c_void,
    dst_len: usize,
    nbytes_out: *mut usize,
) -> b2f_status {
    // SAFETY: forwarded contract.
    unsafe {
        decompress_impl(
            "b2f_decompress",
            chunk,
            chunk_len,
            dst,
            dst_len,
            1,
            nbytes_out,
        )
    }
}

/// `b2f_decompress` with `nthreads` threads over the chunk's blocks (>= 1): the calling
/// thread and `nthreads - 1` pool workers.
///
/// # Safety
/// As for `b2f_decompress`.
#[no_mangle]
pub unsafe extern "C" fn b2f_decompress_threads(
    chunk: *const c_void,
    chunk_len: usize,
    dst: *mut c_void,
    dst_len: usize,
    nthreads: i16,
    nbytes_out: *mut usize,
) -> b2f_status {
    // SAFETY: forwarded contract.
    unsafe {
        decompress_impl(
            "b2f_decompress_threads",
            chunk,
            chunk_len,
            dst,
            dst_len,
            nthreads,
            nbytes_out,
        )
    }
}

/// Decodes items `[start, start + nitems)` of the chunk `chunk` (in the typesize its header
/// records) into `dst`, decoding only the blocks that hold them, as c-blosc2's
/// `blosc2_getitem` does; `*nbytes_out` (may be NULL) gets the bytes written,
/// `nitems * typesize`.
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for a negative `start` or `nitems`, items
/// past the chunk's end, or NULL pointers; `B2F_ERR_BUFFER_TOO_SMALL` with the size needed in
/// `*nbytes_out`; `B2F_ERR_CORRUPT` and `B2F_ERR_UNSUPPORTED` as for `b2f_decompress`.
///
/// # Memory and lifetimes
/// All buffers belong to the caller; decoding takes memory for one block of the chunk (its
/// blocksize), as c-blosc2's does. Thread-safe.
///
/// # Safety
/// `chunk`/`dst` point to `chunk_len`/`dst_len` bytes or are NULL with length 0;
/// `nbytes_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_getitem(
    chunk: *const c_void,
    chunk_len: usize,
    start: i64,
    nitems: i64,
    dst: *mut c_void,
    dst_len: usize,
    nbytes_out: *mut usize,
) -> b2f_status {
    guard("b2f_getitem", || {
        // SAFETY: per the contract above.
        let chunk = unsafe { input(chunk.cast(), chunk_len, "chunk") }?;
        let (Ok(start), Ok(nitems)) = (usize::try_from(start), usize::try_from(nitems)) else {
            return Err(Error::invalid(format_args!(
                "start {start} and nitems {nitems} must not be negative"
            )));
        };
        // SAFETY: per the contract above.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        let r = chunk::decompress::getitem(chunk, start, nitems, out);
        if let Ok(n) | Err(Error::BufferTooSmall { needed: n, .. }) = r {
            // SAFETY: per the contract above.
            unsafe { write_opt(nbytes_out, n) };
        }
        r.map(drop)
    })
}

/// Out of line, so that `guard`'s code is in one place, not in both exports.
///
/// # Safety
/// As for `b2f_decompress`.
#[inline(never)]
unsafe fn decompress_impl(
    name: &str,
    chunk: *const c_void,
    chunk_len: usize,
    dst: *mut c_void,
    dst_len: usize,
    nthreads: i16,
    nbytes_out: *mut usize,
) -> b2f_status {
    guard(name, || {
        // SAFETY: per the caller's contract.
        let chunk = unsafe { input(chunk.cast(), chunk_len, "chunk") }?;
        let threads = usize::try_from(nthreads)
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                Error::invalid(format_args!("nthreads {nthreads} must be at least 1"))
            })?;
        // Used where it lies: moved out of the `Result` (`?`), the decoder's 144 bytes were
        // copied twice, 5% of the time of decoding a 1 KiB chunk.
        let decoder = chunk::decompress::Decoder::new(chunk);
        let decoder = match &decoder {
            Ok(d) => d,
            Err(_) => return decoder.map(drop),
        };
        let nbytes = decoder.header().nbytes();
        if dst.is_null() && dst_len == 0 {
            // SAFETY: per the caller's contract.
            return unsafe { write_req(nbytes_out, nbytes, "nbytes_out") };
        }
        if dst_len < nbytes {
            // SAFETY: per the caller's contract.
            unsafe { write_opt(nbytes_out, nbytes) };
            return Err(Error::BufferTooSmall {
                needed: nbytes,
                given: dst_len,
            });
        }
        // SAFETY: per the caller's contract.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        let pool = crate::pool::Pool::new(threads)?;
        let n = decoder.decode_all(out, Some(&pool))?;
        // SAFETY: per the caller's contract.
        unsafe { write_opt(nbytes_out, n) };
        Ok(())
    })
}

/// Reads a chunk's header: uncompressed size, compressed size and blocksize (each out-pointer
/// may be NULL). The header is validated against `chunk_len`.
///
/// Returns `B2F_OK`, `B2F_ERR_CORRUPT` for a truncated or inconsistent header, or
/// `B2F_ERR_INVALID_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `chunk` points to `chunk_len` bytes (or is NULL with 0); out-pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_chunk_sizes(
    chunk: *const c_void,
    chunk_len: usize,
    nbytes_out: *mut usize,
    cbytes_out: *mut usize,
    blocksize_out: *mut usize,
) -> b2f_status {
    guard("b2f_chunk_sizes", || {
        // SAFETY: per the contract above.
        let chunk = unsafe { input(chunk.cast(), chunk_len, "chunk") }?;
        let (nbytes, cbytes, blocksize) = chunk::ChunkHeader::sizes(chunk)?;
        // SAFETY: per the contract above.
        unsafe {
            write_opt(nbytes_out, nbytes);
            write_opt(cbytes_out, cbytes);
            write_opt(blocksize_out, blocksize);
        }
        Ok(())
    })
}
