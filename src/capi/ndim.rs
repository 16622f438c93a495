//! N-dimensional arrays from C: `b2f_nd_*` over a frame that carries a b2nd (or caterva)
//! metalayer.

use std::ffi::{c_char, c_void};

use super::boundary::{copy_out, guard, input, optional_path, output, read_versioned, string};
use super::error::b2f_status;
use super::frame::{b2f_frame, b2f_storage, frame_ref, into_handle, read_storage};
use crate::error::Result;
use crate::ndim::{self, Array, NdMeta};

/// Most dimensions an array has.
pub const B2F_MAX_DIM: usize = 16;

/// What `b2f_nd_info_get` reports. Set `struct_size` before the call; a smaller (older)
/// struct receives the fields it has.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2f_nd_info {
    pub struct_size: u32,
    /// 0 (a scalar) to `B2F_MAX_DIM`.
    pub ndim: i8,
    /// Entries past `ndim` are 0.
    pub shape: [i64; B2F_MAX_DIM],
    pub chunkshape: [i32; B2F_MAX_DIM],
    pub blockshape: [i32; B2F_MAX_DIM],
    /// Bytes per item (from the dtype; the frame's typesize for caterva arrays).
    pub itemsize: i32,
    /// 0 = NumPy.
    pub dtype_format: u8,
    /// NUL-terminated, e.g. "<f8"; "" for caterva arrays. Longer dtypes are cut here (a
    /// structured dtype can be long): read them whole with `b2f_nd_dtype`.
    pub dtype: [c_char; 64],
}

/// Fills `*out` (up to `out->struct_size` bytes) with the array's shape, chunk and block
/// shapes, item size and dtype.
///
/// Returns `B2F_OK`; `B2F_ERR_NOT_FOUND` if the frame is not an array; `B2F_ERR_CORRUPT` for
/// a metalayer that does not parse; `B2F_ERR_INVALID_ARGUMENT`. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `out` points to a `b2f_nd_info` of at least `out->struct_size` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2f_nd_info_get(f: *const b2f_frame, out: *mut b2f_nd_info) -> b2f_status {
    guard("b2f_nd_info_get", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let empty = b2f_nd_info {
            struct_size: 0,
            ndim: 0,
            shape: [0; B2F_MAX_DIM],
            chunkshape: [0; B2F_MAX_DIM],
            blockshape: [0; B2F_MAX_DIM],
            itemsize: 0,
            dtype_format: 0,
            dtype: [0; 64],
        };
        // SAFETY: per the contract (checks NULL and the struct size).
        let given = unsafe { read_versioned(out.cast_const(), empty, "out") }?;
        let a = Array::open(s)?;
        let mut info = empty;
        info.struct_size = given.struct_size;
        info.ndim = a.meta.ndim() as i8;
        for d in 0..a.meta.ndim() {
            info.shape[d] = a.meta.shape[d];
            info.chunkshape[d] = a.meta.chunkshape[d];
            info.blockshape[d] = a.meta.blockshape[d];
        }
        info.itemsize = a.geom.itemsize as i32;
        info.dtype_format = a.meta.dtype_format;
        let dtype = a.meta.dtype.as_deref().unwrap_or("").as_bytes();
        for (i, &b) in dtype.iter().take(info.dtype.len() - 1).enumerate() {
            info.dtype[i] = b as c_char;
        }
        let n = (given.struct_size as usize).min(std::mem::size_of::<b2f_nd_info>());
        // SAFETY: `out` holds `struct_size >= n` writable bytes (checked by read_versioned
        // reading the size); `info` is a local repr(C) value of at least `n` bytes.
        unsafe {
            std::ptr::copy_nonoverlapping(
                &info as *const b2f_nd_info as *const u8,
                out.cast::<u8>(),
                n,
            );
        }
        Ok(())
    })
}

/// Copies the array's whole dtype string (not NUL-terminated) into `dst`; `*len_out` receives
/// its length. `dst = NULL, dst_len = 0` asks for the length only. Caterva arrays have an
/// empty dtype.
///
/// Returns `B2F_OK`; `B2F_ERR_BUFFER_TOO_SMALL` (with the length in `*len_out`);
/// `B2F_ERR_NOT_FOUND` if the frame is not an array; `B2F_ERR_CORRUPT`. Thread-safe: the
/// slab is read as of one moment (a concurrent write is seen whole or not at all).
///
/// # Safety
/// `f` is a live handle; `dst` points to `dst_len` writable bytes (or NULL with 0); `len_out`
/// is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_nd_dtype(
    f: *const b2f_frame,
    dst: *mut c_char,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_nd_dtype", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let a = Array::open(s)?;
        let dtype = a.meta.dtype.unwrap_or_default();
        // SAFETY: per the contract.
        unsafe { copy_out(dtype.as_bytes(), dst.cast(), dst_len, len_out) }
    })
}

/// Reads `n` entries of a caller's array (NULL allowed when `n` is 0).
///
/// # Safety
/// `ptr` is NULL or points to `n` readable values.
unsafe fn dims<T: Copy>(ptr: *const T, n: usize, what: &str) -> Result<Vec<T>> {
    let bytes = n * std::mem::size_of::<T>();
    // SAFETY: per the contract; `input` checks NULL against the length.
    let raw = unsafe { input(ptr.cast(), bytes, what) }?;
    if raw.is_empty() {
        return Ok(Vec::new());
    }
    // SAFETY: `raw` covers `n` values of T at `ptr` (the caller's array, aligned for T).
    Ok(unsafe { std::slice::from_raw_parts(ptr, n) }.to_vec())
}

/// Creates an array of `ndim` dimensions, filled with zeros and stored as special chunks (a
/// huge empty array costs only its index), at `urlpath` (a file or, with
/// `s->contiguous == false`, a directory; replaced if present), or in memory when `urlpath` is
/// NULL. `dtype` is a NumPy dtype string ("<f8", "|S10", "[('a', '<i4'), ('b', '<f8')]");
/// the frame's typesize is its item size. `s` may be NULL (contiguous, default parameters);
/// `s->chunksize` is ignored (the chunk size follows from the shapes) and
/// `s->cparams.blocksize` too (a Blosc2 block is one array block).
///
/// Returns `B2F_OK` and a writable handle in `*frame_out`; `B2F_ERR_INVALID_ARGUMENT` for an
/// ndim outside 0..=16, negative shapes, zero chunk or block shapes, a block larger than its
/// chunk, sizes that overflow, or a dtype that does not parse; `B2F_ERR_UNSUPPORTED` as for
/// `b2f_create`; `B2F_ERR_IO`.
///
/// # Memory and lifetimes
/// As for `b2f_open`; the caller's arrays are only read during the call.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated; `s` is NULL or a `b2f_storage`; `shape`, `chunkshape`,
/// `blockshape` point to `ndim` values each (may be NULL when `ndim` is 0); `dtype` is
/// NUL-terminated; `frame_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_nd_create(
    urlpath: *const c_char,
    s: *const b2f_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    frame_out: *mut *mut b2f_frame,
) -> b2f_status {
    guard("b2f_nd_create", || {
        if frame_out.is_null() {
            bail!(invalid, "frame_out is NULL");
        }
        if !(0..=B2F_MAX_DIM as i8).contains(&ndim) {
            bail!(invalid, "ndim {ndim} is outside 0..={B2F_MAX_DIM}");
        }
        let nd = ndim as usize;
        let defaults = b2f_storage::defaults();
        let s = if s.is_null() {
            &defaults as *const b2f_storage
        } else {
            s
        };
        // SAFETY: `s` is the caller's storage (per the contract) or our local defaults.
        let opts = unsafe { read_storage(s) }?;
        // SAFETY: per the contract.
        let meta = unsafe {
            NdMeta {
                version: 0,
                shape: dims(shape, nd, "shape")?,
                chunkshape: dims(chunkshape, nd, "chunkshape")?,
                blockshape: dims(blockshape, nd, "blockshape")?,
                dtype_format: 0,
                dtype: Some(string(dtype, "dtype")?.to_string()),
            }
        };
        // SAFETY: per the contract.
        let path = unsafe { optional_path(urlpath, "urlpath") }?;
        let schunk = ndim::slice::create(path, &opts, &meta)?;
        into_handle(schunk, frame_out)
    })
}

/// The slab bounds a caller passes: `ndim` entries each.
///
/// # Safety
/// `start` and `stop` point to `ndim` values each (may be NULL for a 0-dim array).
unsafe fn slab(a: &Array, start: *const i64, stop: *const i64) -> Result<(Vec<i64>, Vec<i64>)> {
    let nd = a.meta.ndim();
    // SAFETY: per the contract.
    unsafe { Ok((dims(start, nd, "start")?, dims(stop, nd, "stop")?)) }
}

/// Reads the hyper-slab `[start, stop)` (one entry per dimension, step 1) into `dst` in C
/// order, `itemsize` bytes per item. Only the blocks the slab touches are decompressed (in
/// parallel on the frame's threads); special-value chunks are filled without decoding. An
/// empty slab reads nothing.
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for a slab outside the shape or with
/// start > stop; `B2F_ERR_BUFFER_TOO_SMALL` when `dst_len` is less than the slab's bytes;
/// `B2F_ERR_NOT_FOUND` if the frame is not an array; `B2F_ERR_CORRUPT`. Thread-safe: the
/// slab is read as of one moment (a concurrent write is seen whole or not at all).
///
/// # Safety
/// `f` is a live handle; `start`/`stop` point to `ndim` values each; `dst` points to `dst_len`
/// writable bytes (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_nd_get_slice(
    f: *mut b2f_frame,
    start: *const i64,
    stop: *const i64,
    dst: *mut c_void,
    dst_len: usize,
) -> b2f_status {
    guard("b2f_nd_get_slice", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let a = Array::open(s)?;
        // SAFETY: per the contract.
        let (start, stop) = unsafe { slab(&a, start, stop) }?;
        // SAFETY: per the contract.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        a.get_slice(&start, &stop, out)
    })
}

/// Writes the hyper-slab `[start, stop)` from `src` (C order, `itemsize` bytes per item):
/// the chunks it touches are read, updated, compressed and committed together, crash-safe:
/// a writer killed during the call leaves the slab all as it was or all written. (A slab
/// whose compressed chunks exceed 64 MiB is committed in parts of that size, each whole.)
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for a slab outside the shape, start > stop,
/// or `src_len` less than the slab's bytes; `B2F_ERR_READ_ONLY`; `B2F_ERR_NOT_FOUND`;
/// `B2F_ERR_IO`. Writes on one handle are serialized, this whole call included (its reads of
/// the chunks it changes too: a concurrent write to other items of a chunk is not lost).
///
/// # Safety
/// `f` is a live handle; `start`/`stop` point to `ndim` values each; `src` points to
/// `src_len` readable bytes (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_nd_set_slice(
    f: *mut b2f_frame,
    start: *const i64,
    stop: *const i64,
    src: *const c_void,
    src_len: usize,
) -> b2f_status {
    guard("b2f_nd_set_slice", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let a = Array::open(s)?;
        // SAFETY: per the contract.
        let (start, stop) = unsafe { slab(&a, start, stop) }?;
        // SAFETY: per the contract.
        let data = unsafe { input(src.cast(), src_len, "src") }?;
        a.set_slice(&start, &stop, data)
    })
}
