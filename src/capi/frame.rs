//! Frames from C: `b2f_frame` handles and every chunk operation on them.

use std::ffi::{c_char, c_void};
use std::path::Path;

use super::boundary::{
    copy_out, guard, input, optional_path, output, read_versioned, string, write_opt,
};
use super::chunk::b2f_cparams;
use super::error::b2f_status;
use crate::chunk::SpecialValue;
use crate::error::{Error, Result};
use crate::schunk::{CreateOptions, OpenOptions, SChunk};

/// Open for reading.
pub const B2F_READ: u32 = 1;
/// Open for writing (`B2F_READ | B2F_WRITE` opens an existing frame for update).
pub const B2F_WRITE: u32 = 2;
/// With `B2F_WRITE`: every change is on disk (fsync) before its call returns, so it survives
/// a power loss, not only a killed process; a call whose sync fails leaves the frame as it
/// was. Slower: each commit waits for the disk. No effect on frames in memory.
pub const B2F_SYNC: u32 = 4;

/// Special values for `b2f_fill_special` (c-blosc2's ids).
pub const B2F_SPECIAL_ZERO: i32 = 1;
pub const B2F_SPECIAL_NAN: i32 = 2;
pub const B2F_SPECIAL_UNINIT: i32 = 4;

/// An open frame (a super-chunk over a contiguous file, a sparse directory or memory).
/// Opaque: created by `b2f_open*`/`b2f_create`, released by `b2f_close`.
pub struct b2f_frame {
    pub(crate) schunk: SChunk,
}

/// How to create a frame. Set `struct_size = sizeof(b2f_storage)`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2f_storage {
    pub struct_size: u32,
    /// true: a contiguous frame (a file, or memory); false: a sparse frame (a directory).
    pub contiguous: bool,
    /// Bytes per chunk; 0 = variable-length chunks. Negative values are refused.
    pub chunksize: i32,
    /// Compression parameters of the frame's chunks.
    pub cparams: b2f_cparams,
    /// Sync every change to disk, as `B2F_SYNC` does for `b2f_open` (default false).
    pub sync: bool,
}

impl b2f_storage {
    /// A contiguous frame of variable-length chunks, c-blosc2's default cparams, no sync.
    pub(crate) fn defaults() -> Self {
        b2f_storage {
            struct_size: std::mem::size_of::<b2f_storage>() as u32,
            contiguous: true,
            chunksize: 0,
            cparams: b2f_cparams::defaults(),
            sync: false,
        }
    }
}

/// What `b2f_get_info` reports. Set `struct_size` before the call; a smaller (older) struct
/// receives the fields it has.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct b2f_info {
    pub struct_size: u32,
    pub nchunks: i64,
    /// Uncompressed data bytes.
    pub nbytes: i64,
    /// Compressed bytes of the frame's data region, as c-blosc2 reports them for a frame (the
    /// header's cbytes: chunks, including space no chunk uses any more; not the header, index
    /// or trailer). Chunks held as special values in the index take none.
    pub cbytes: i64,
    pub typesize: i32,
    /// 0 for variable-length chunks; -1 for a frame without chunks whose first chunk sets it
    /// (c-blosc2's empty frames record no chunksize).
    pub chunksize: i32,
    /// 0 = automatic.
    pub blocksize: i32,
    pub codec: u8,
    pub clevel: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub contiguous: bool,
    /// The frame format version (2 or 3; 1 for old frames).
    pub format_version: u8,
}

/// The handle behind a pointer, or an invalid-argument error.
///
/// # Safety
/// `f` is NULL or a live handle from this library.
pub(crate) unsafe fn frame_ref<'a>(f: *const b2f_frame) -> Result<&'a SChunk> {
    if f.is_null() {
        bail!(invalid, "frame is NULL");
    }
    // SAFETY: non-NULL and live per the caller.
    Ok(unsafe { &(*f).schunk })
}

/// The open mode as (writable, sync).
fn parse_mode(mode: u32) -> Result<(bool, bool)> {
    if mode & (B2F_READ | B2F_WRITE) == 0 || mode & !(B2F_READ | B2F_WRITE | B2F_SYNC) != 0 {
        bail!(
            invalid,
            "mode {mode} is not B2F_READ, B2F_WRITE or B2F_READ | B2F_WRITE (optionally | B2F_SYNC)"
        );
    }
    Ok((mode & B2F_WRITE != 0, mode & B2F_SYNC != 0))
}

pub(crate) fn into_handle(schunk: SChunk, out: *mut *mut b2f_frame) -> Result<()> {
    let h = Box::into_raw(Box::new(b2f_frame { schunk }));
    if out.is_null() {
        // SAFETY: h was just created by Box::into_raw.
        drop(unsafe { Box::from_raw(h) });
        bail!(invalid, "frame_out is NULL");
    }
    // SAFETY: checked non-NULL; writable per the caller's contract.
    unsafe { out.write(h) };
    Ok(())
}

/// Opens the frame at `urlpath`: a file (contiguous frame) or a directory (sparse frame).
/// `mode` is `B2F_READ`, or `B2F_READ | B2F_WRITE` to change it, optionally with `B2F_SYNC`
/// (changes synced to disk before each call returns). Only the header, trailer and index are
/// read; chunks are read when asked for.
///
/// A handle opened with `B2F_WRITE` holds an advisory lock (`flock`) on the file or directory
/// until `b2f_close`: another writer, in this process or another, is refused with
/// `B2F_ERR_IO` ("open for writing elsewhere") instead of overwriting its commits. Readers
/// take no lock; c-blosc2 neither takes nor honours it.
///
/// Returns `B2F_OK` and a new handle in `*frame_out`; `B2F_ERR_IO` (missing file, permission,
/// another writer), `B2F_ERR_FORMAT` (not a frame), `B2F_ERR_CORRUPT` (inconsistent frame),
/// `B2F_ERR_INVALID_ARGUMENT` (NULL, bad mode).
///
/// # Memory and lifetimes
/// The handle belongs to the caller, who releases it with `b2f_close`. It may be used from
/// several threads at once (reads run in parallel, writes are serialized); `b2f_close` must
/// not race with other calls on the same handle.
///
/// # Safety
/// `urlpath` is a NUL-terminated string; `frame_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_open(
    urlpath: *const c_char,
    mode: u32,
    frame_out: *mut *mut b2f_frame,
) -> b2f_status {
    // SAFETY: forwarded contract.
    unsafe { b2f_open_offset(urlpath, 0, mode, frame_out) }
}

/// Opens a contiguous frame stored in a file from byte `offset` on (e.g. a frame embedded in
/// a larger file). Otherwise as `b2f_open`. With `B2F_WRITE`, changes are written in place and
/// past the frame's end: the frame must be the last thing in its file (what follows it is
/// overwritten), and the file is not truncated.
///
/// # Safety
/// As for `b2f_open`.
#[no_mangle]
pub unsafe extern "C" fn b2f_open_offset(
    urlpath: *const c_char,
    offset: u64,
    mode: u32,
    frame_out: *mut *mut b2f_frame,
) -> b2f_status {
    guard("b2f_open", || {
        if frame_out.is_null() {
            bail!(invalid, "frame_out is NULL");
        }
        // SAFETY: per the contract.
        let path = unsafe { string(urlpath, "urlpath") }?;
        let (writable, sync) = parse_mode(mode)?;
        let opts = OpenOptions {
            writable,
            sync,
            offset,
        };
        into_handle(SChunk::open_with(Path::new(path), &opts)?, frame_out)
    })
}

/// Opens a contiguous frame held in a buffer. The library copies the `len` bytes: the caller
/// may free `buf` when this returns. With `B2F_WRITE`, changes stay in memory (see
/// `b2f_to_buffer` and `b2f_save`).
///
/// # Safety
/// `buf` points to `len` readable bytes; `frame_out` is writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_open_buffer(
    buf: *const c_void,
    len: usize,
    mode: u32,
    frame_out: *mut *mut b2f_frame,
) -> b2f_status {
    guard("b2f_open_buffer", || {
        if frame_out.is_null() {
            bail!(invalid, "frame_out is NULL");
        }
        // SAFETY: per the contract.
        let bytes = unsafe { input(buf.cast(), len, "buf") }?;
        let (writable, _in_memory_needs_no_sync) = parse_mode(mode)?;
        let s = SChunk::open_buffer_mode(bytes.to_vec(), writable)?;
        into_handle(s, frame_out)
    })
}

/// Creates an empty frame: a contiguous file or sparse directory at `urlpath` (replacing what
/// is there, but a directory by a file), or an in-memory frame when `urlpath` is NULL. The
/// frame is built under a temporary name and renamed into place: killed before, the path
/// holds what it held. The handle is open for writing (and holds the writer's lock, as
/// `b2f_open` describes); a frame another writer has open is not replaced (`B2F_ERR_IO`).
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for bad storage or parameters;
/// `B2F_ERR_UNSUPPORTED` for unknown codecs or filters, or a filter pipeline c-blosc2 decodes
/// wrongly (as `b2f_compress`); `B2F_ERR_IO`.
///
/// # Memory and lifetimes
/// As for `b2f_open`.
///
/// # Safety
/// `urlpath` is NULL or NUL-terminated; `s` points to a `b2f_storage`; `frame_out` writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_create(
    urlpath: *const c_char,
    s: *const b2f_storage,
    frame_out: *mut *mut b2f_frame,
) -> b2f_status {
    guard("b2f_create", || {
        if frame_out.is_null() {
            bail!(invalid, "frame_out is NULL");
        }
        // SAFETY: per the contract.
        let storage = unsafe { read_storage(s) }?;
        // SAFETY: per the contract.
        let path = unsafe { optional_path(urlpath, "urlpath") }?;
        let schunk = SChunk::create(path, &storage)?;
        into_handle(schunk, frame_out)
    })
}

/// Reads a caller's `b2f_storage`.
///
/// # Safety
/// `s` is NULL or points to a `b2f_storage` of at least `s->struct_size` bytes.
pub(crate) unsafe fn read_storage(s: *const b2f_storage) -> Result<CreateOptions> {
    // SAFETY: per the contract.
    let st = unsafe { read_versioned(s, b2f_storage::defaults(), "storage") }?;
    // A zeroed (unset) cparams means c-blosc2's defaults.
    let cp = if st.cparams.struct_size == 0 {
        b2f_cparams::defaults()
    } else {
        st.cparams
    };
    // SAFETY: `cp` is a local copy; its own struct_size says how much of it is meaningful.
    let params = unsafe { b2f_cparams::read(&cp) }?;
    // The engine's -1 (set by the first chunk) is for copies of c-blosc2's empty frames.
    if st.chunksize < 0 {
        bail!(
            invalid,
            "chunksize {} is negative (0 means variable-length chunks)",
            st.chunksize
        );
    }
    Ok(CreateOptions {
        contiguous: st.contiguous,
        chunksize: st.chunksize,
        params,
        sync: st.sync,
    })
}

/// Closes a frame: what is pending is flushed (every change is already committed when its
/// call returns) and the handle is freed. `b2f_close(NULL)` does nothing.
///
/// # Safety
/// `frame` is NULL or a handle from this library not closed before and not in use by
/// another thread.
#[no_mangle]
pub unsafe extern "C" fn b2f_close(frame: *mut b2f_frame) {
    if frame.is_null() {
        return;
    }
    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        // SAFETY: created by Box::into_raw in this library, released once.
        drop(unsafe { Box::from_raw(frame) });
    }));
}

/// Fills `*info_out` (up to `info_out->struct_size` bytes) with the frame's sizes and
/// parameters. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `info_out` points to a `b2f_info` whose `struct_size` is set.
#[no_mangle]
pub unsafe extern "C" fn b2f_get_info(f: *const b2f_frame, info_out: *mut b2f_info) -> b2f_status {
    guard("b2f_get_info", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let i = s.info();
        let info = b2f_info {
            struct_size: std::mem::size_of::<b2f_info>() as u32,
            nchunks: i.nchunks,
            nbytes: i.nbytes,
            cbytes: i.cbytes,
            typesize: i.typesize,
            chunksize: i.chunksize,
            blocksize: i.blocksize,
            codec: i.codec,
            clevel: i.clevel,
            filters: i.filters,
            filters_meta: i.filters_meta,
            contiguous: i.contiguous,
            format_version: i.format_version,
        };
        // SAFETY: per the contract.
        unsafe { write_versioned(info_out, info, "info_out") }
    })
}

/// Writes `value` into a caller's versioned output struct, no more than its `struct_size`.
///
/// # Safety
/// `ptr` is NULL or points to a struct whose first field (`uint32_t struct_size`) is set and
/// which has at least that many writable bytes.
pub(crate) unsafe fn write_versioned<T: Copy>(ptr: *mut T, value: T, what: &str) -> Result<()> {
    if ptr.is_null() {
        bail!(invalid, "{what} is NULL");
    }
    // SAFETY: the first field of every versioned struct is a u32 size.
    let given = unsafe { (ptr as *const u32).read_unaligned() } as usize;
    if given < std::mem::size_of::<u32>() {
        bail!(
            invalid,
            "{what}->struct_size is {given}; set it to sizeof the struct"
        );
    }
    let n = given.min(std::mem::size_of::<T>());
    // SAFETY: the caller's struct has `given` >= n writable bytes; `value` is plain data.
    unsafe {
        std::ptr::copy_nonoverlapping(&value as *const T as *const u8, ptr as *mut u8, n);
        (ptr as *mut u32).write_unaligned(given as u32);
    }
    Ok(())
}

/// Decompresses chunk `nchunk` into `dst`. With `dst = NULL, dst_len = 0` only its size is
/// written to `*nbytes_out`. Special chunks (zeros, NaN, uninitialized) are filled without
/// decoding; uninitialized chunks read as zeros.
///
/// Returns `B2F_OK`; `B2F_ERR_INVALID_ARGUMENT` for an index out of range;
/// `B2F_ERR_BUFFER_TOO_SMALL` with the size in `*nbytes_out`; `B2F_ERR_CORRUPT`;
/// `B2F_ERR_UNSUPPORTED` (unknown codec or filter id); `B2F_ERR_IO`. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `dst` points to `dst_len` writable bytes or is NULL with 0;
/// `nbytes_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_get_chunk(
    f: *mut b2f_frame,
    nchunk: i64,
    dst: *mut c_void,
    dst_len: usize,
    nbytes_out: *mut usize,
) -> b2f_status {
    guard("b2f_get_chunk", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        if dst.is_null() && dst_len == 0 {
            let n = s.chunk_nbytes(nchunk)?;
            // SAFETY: per the contract.
            unsafe { write_opt(nbytes_out, n) };
            return Ok(());
        }
        // SAFETY: per the contract.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        // The chunk is read once: its size comes from the decode, or with the error.
        let r = s.get_chunk(nchunk, out);
        if let Ok(n) | Err(Error::BufferTooSmall { needed: n, .. }) = r {
            // SAFETY: per the contract.
            unsafe { write_opt(nbytes_out, n) };
        }
        r.map(drop)
    })
}

/// Copies chunk `nchunk` as stored (a Blosc2 chunk) into `dst`, e.g. to move chunks between
/// frames without recompressing. Two-call pattern as `b2f_get_chunk`, with the chunk length
/// in `*cbytes_out`. Thread-safe.
///
/// # Safety
/// As for `b2f_get_chunk`.
#[no_mangle]
pub unsafe extern "C" fn b2f_get_chunk_raw(
    f: *mut b2f_frame,
    nchunk: i64,
    dst: *mut c_void,
    dst_len: usize,
    cbytes_out: *mut usize,
) -> b2f_status {
    guard("b2f_get_chunk_raw", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let raw = s.get_chunk_raw(nchunk)?;
        // SAFETY: per the contract.
        unsafe { copy_out(&raw, dst.cast(), dst_len, cbytes_out) }
    })
}

/// Reads items `[start, stop)` (in typesize units, across chunk boundaries) into `dst`, which
/// must hold `(stop - start) * typesize` bytes. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `dst` points to `dst_len` writable bytes (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_get_slice(
    f: *mut b2f_frame,
    start: i64,
    stop: i64,
    dst: *mut c_void,
    dst_len: usize,
) -> b2f_status {
    guard("b2f_get_slice", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        s.get_slice(start, stop, out)
    })
}

/// Compresses `src_len` bytes with the frame's parameters and appends them as a new chunk;
/// `*nchunks_out` (may be NULL) receives the new number of chunks. The change is committed
/// (crash-safe) when this returns.
///
/// A frame with a fixed chunksize turns to variable-length chunks (chunksize 0) when a chunk
/// does not fit that layout (larger than the chunksize, after a short last chunk, or of
/// another size anywhere but last), as c-blosc2 does.
///
/// The blocksize asked for carries over from chunk to chunk on one handle, as through
/// c-blosc2's super-chunk context: each chunk compressed here (append, insert, update) is cut
/// by the blocksize of the one compressed before it, so a short chunk after full ones gets
/// their blocks, and chunks after a short one its blocks (but after one smaller than an item,
/// where c-blosc2 goes to 1-byte blocks). A handle opened anew starts from the header's.
///
/// An empty chunk (`src_len` 0) may be any chunk but the first: c-blosc2 cannot open a frame
/// whose first chunk is empty, so no call (append, insert, update, delete, reorder) makes one.
///
/// Returns `B2F_OK`; `B2F_ERR_READ_ONLY`; `B2F_ERR_INVALID_ARGUMENT` (e.g. larger than the
/// chunksize of a frame without chunks, an empty first chunk); `B2F_ERR_IO`. Writes on one
/// handle are serialized.
///
/// # Safety
/// `f` is a live handle; `src` points to `src_len` readable bytes (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_append(
    f: *mut b2f_frame,
    src: *const c_void,
    src_len: usize,
    nchunks_out: *mut i64,
) -> b2f_status {
    guard("b2f_append", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let data = unsafe { input(src.cast(), src_len, "src") }?;
        let n = s.append(data)?;
        // SAFETY: per the contract.
        unsafe { write_opt(nchunks_out, n as i64) };
        Ok(())
    })
}

/// Appends an existing Blosc2 chunk (validated first: header, layout, size rules) without
/// recompressing it. As `b2f_append` otherwise.
///
/// # Safety
/// As for `b2f_append`.
#[no_mangle]
pub unsafe extern "C" fn b2f_append_chunk(
    f: *mut b2f_frame,
    chunk: *const c_void,
    chunk_len: usize,
    nchunks_out: *mut i64,
) -> b2f_status {
    guard("b2f_append_chunk", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let c = unsafe { input(chunk.cast(), chunk_len, "chunk") }?;
        let n = s.append_chunk(c)?;
        // SAFETY: per the contract.
        unsafe { write_opt(nchunks_out, n as i64) };
        Ok(())
    })
}

/// Compresses `src_len` bytes and inserts them as chunk number `pos` (0..=nchunks).
///
/// # Safety
/// As for `b2f_append`.
#[no_mangle]
pub unsafe extern "C" fn b2f_insert(
    f: *mut b2f_frame,
    pos: i64,
    src: *const c_void,
    src_len: usize,
) -> b2f_status {
    guard("b2f_insert", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let data = unsafe { input(src.cast(), src_len, "src") }?;
        s.insert(pos, data).map(|_| ())
    })
}

/// Compresses `src_len` bytes and replaces chunk `nchunk` with them.
///
/// # Safety
/// As for `b2f_append`.
#[no_mangle]
pub unsafe extern "C" fn b2f_update(
    f: *mut b2f_frame,
    nchunk: i64,
    src: *const c_void,
    src_len: usize,
) -> b2f_status {
    guard("b2f_update", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let data = unsafe { input(src.cast(), src_len, "src") }?;
        s.update(nchunk, data)
    })
}

/// Removes chunk `nchunk` (`B2F_ERR_INVALID_ARGUMENT` where an empty chunk would become the
/// first, as for `b2f_append`).
///
/// # Safety
/// `f` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn b2f_delete(f: *mut b2f_frame, nchunk: i64) -> b2f_status {
    guard("b2f_delete", || {
        // SAFETY: per the contract.
        unsafe { frame_ref(f) }?.delete(nchunk)
    })
}

/// Reorders the chunks: position k gets the chunk that was at `order[k]` (`n` must be the
/// number of chunks and `order` a permutation; an empty chunk is not moved first, as for
/// `b2f_append`).
///
/// # Safety
/// `f` is a live handle; `order` points to `n` values (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_reorder(f: *mut b2f_frame, order: *const i64, n: usize) -> b2f_status {
    guard("b2f_reorder", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        if order.is_null() && n > 0 {
            bail!(invalid, "order is NULL but n is {n}");
        }
        let order: &[i64] = if n == 0 {
            &[]
        } else {
            // SAFETY: non-NULL, `n` readable values per the contract.
            unsafe { std::slice::from_raw_parts(order, n) }
        };
        s.reorder(order)
    })
}

/// Appends `nitems` items of a special value (`B2F_SPECIAL_ZERO`, `NAN` or `UNINIT`) as
/// index-only chunks of the frame's chunksize (which must be fixed). Nothing is compressed
/// or stored but the index.
///
/// # Safety
/// `f` is a live handle.
#[no_mangle]
pub unsafe extern "C" fn b2f_fill_special(
    f: *mut b2f_frame,
    nitems: i64,
    special: i32,
) -> b2f_status {
    guard("b2f_fill_special", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let kind = match special {
            B2F_SPECIAL_ZERO => SpecialValue::Zero,
            B2F_SPECIAL_NAN => SpecialValue::Nan,
            B2F_SPECIAL_UNINIT => SpecialValue::Uninit,
            k => bail!(
                invalid,
                "special value {k} is not B2F_SPECIAL_ZERO (1), NAN (2) or UNINIT (4)"
            ),
        };
        s.fill_special(nitems, kind).map(|_| ())
    })
}

/// Copies the whole frame, compacted, as one contiguous frame into `dst` (two-call pattern:
/// the length goes to `*len_out`).
///
/// # Safety
/// As for `b2f_get_chunk`.
#[no_mangle]
pub unsafe extern "C" fn b2f_to_buffer(
    f: *mut b2f_frame,
    dst: *mut c_void,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_to_buffer", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        let image = s.to_buffer()?;
        // SAFETY: per the contract.
        unsafe { copy_out(&image, dst.cast(), dst_len, len_out) }
    })
}

/// Saves a copy of the frame at `urlpath`: a contiguous file (`contiguous`) or a sparse
/// directory. The handle keeps using its own storage. The copy is written under a temporary
/// name next to `urlpath` and then replaces whatever is there (a frame of either kind, or a
/// file); until then, and if the save fails, that stays untouched. A file replaces a file in
/// one atomic rename; where a directory is involved, the old one is renamed aside first
/// (`<urlpath>.b2f-tmp-*-old`, removed at the end), so a process killed in between leaves both
/// copies under their temporary names. Saving onto the frame's own file or directory is
/// `B2F_ERR_INVALID_ARGUMENT`.
///
/// # Safety
/// `f` is a live handle; `urlpath` is NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn b2f_save(
    f: *mut b2f_frame,
    urlpath: *const c_char,
    contiguous: bool,
) -> b2f_status {
    guard("b2f_save", || {
        // SAFETY: per the contract.
        let s = unsafe { frame_ref(f) }?;
        // SAFETY: per the contract.
        let path = unsafe { string(urlpath, "urlpath") }?;
        s.save(Path::new(path), contiguous)
    })
}
