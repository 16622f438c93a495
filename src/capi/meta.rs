//! Metalayers (fixed, in the frame header) and vlmetalayers (variable, in the trailer).

use std::ffi::{c_char, c_void};

use super::boundary::{bytes_string, copy_out, guard, input, output, write_opt};
use super::error::b2f_status;
use super::frame::{b2f_frame, frame_ref};
use crate::error::Error;

/// Copies the content of metalayer `name` (raw bytes, as c-blosc2's `blosc2_meta_get`)
/// into `dst`; two-call pattern with the length in `*len_out`. Names, here and in every
/// metalayer call, are NUL-terminated byte strings compared byte for byte: usually UTF-8,
/// but frames whose names are not (c-blosc2 takes any bytes) are read and written too.
///
/// Returns `B2F_OK`, `B2F_ERR_NOT_FOUND`, `B2F_ERR_BUFFER_TOO_SMALL`, `B2F_ERR_INVALID_ARGUMENT`.
/// Thread-safe.
///
/// # Safety
/// `f` is a live handle; `name` is NUL-terminated; `dst` points to `dst_len` writable bytes
/// (or NULL with 0); `len_out` is NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_meta_get(
    f: *const b2f_frame,
    name: *const c_char,
    dst: *mut c_void,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_meta_get", || {
        // SAFETY: per the contract.
        let (s, name) = unsafe { (frame_ref(f)?, bytes_string(name, "name")?) };
        let content = s.meta_get(name)?;
        // SAFETY: per the contract.
        unsafe { copy_out(&content, dst.cast(), dst_len, len_out) }
    })
}

/// Adds metalayer `name` (up to 31 bytes) with `len` bytes of content. As in c-blosc2, at most
/// 16 metalayers, and only before the first chunk is added.
///
/// # Safety
/// `f` is a live handle; `name` NUL-terminated; `content` points to `len` bytes (or NULL with 0).
#[no_mangle]
pub unsafe extern "C" fn b2f_meta_add(
    f: *mut b2f_frame,
    name: *const c_char,
    content: *const c_void,
    len: usize,
) -> b2f_status {
    guard("b2f_meta_add", || {
        // SAFETY: per the contract.
        let (s, name, c) = unsafe {
            (
                frame_ref(f)?,
                bytes_string(name, "name")?,
                input(content.cast(), len, "content")?,
            )
        };
        s.meta_add(name, c)
    })
}

/// Overwrites metalayer `name` in place: the content may not be longer than the existing one;
/// a shorter one replaces its first bytes (c-blosc2's rule).
///
/// # Safety
/// As for `b2f_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn b2f_meta_update(
    f: *mut b2f_frame,
    name: *const c_char,
    content: *const c_void,
    len: usize,
) -> b2f_status {
    guard("b2f_meta_update", || {
        // SAFETY: per the contract.
        let (s, name, c) = unsafe {
            (
                frame_ref(f)?,
                bytes_string(name, "name")?,
                input(content.cast(), len, "content")?,
            )
        };
        s.meta_update(name, c)
    })
}

/// The number of metalayers. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `count_out` writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_meta_count(f: *const b2f_frame, count_out: *mut usize) -> b2f_status {
    guard("b2f_meta_count", || {
        // SAFETY: per the contract.
        let n = unsafe { frame_ref(f) }?.meta_names().len();
        if count_out.is_null() {
            bail!(invalid, "count_out is NULL");
        }
        // SAFETY: per the contract.
        unsafe { write_opt(count_out, n) };
        Ok(())
    })
}

/// The name of metalayer `i` (0-based, in header order), NUL-terminated, into `dst`;
/// two-call pattern, `*len_out` counting the NUL.
///
/// # Safety
/// As for `b2f_meta_get`.
#[no_mangle]
pub unsafe extern "C" fn b2f_meta_name(
    f: *const b2f_frame,
    i: usize,
    dst: *mut c_char,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_meta_name", || {
        // SAFETY: per the contract.
        let names = unsafe { frame_ref(f) }?.meta_names_raw();
        let name = names.get(i).ok_or_else(|| {
            Error::invalid(format_args!(
                "metalayer index {i} is out of range ({} metalayers)",
                names.len()
            ))
        })?;
        // SAFETY: per the contract.
        unsafe { copy_name(name, dst, dst_len, len_out) }
    })
}

/// A name with its terminating NUL, through the two-call pattern.
///
/// # Safety
/// As for `copy_out`.
unsafe fn copy_name(
    name: &[u8],
    dst: *mut c_char,
    dst_len: usize,
    len_out: *mut usize,
) -> crate::Result<()> {
    let mut bytes = name.to_vec();
    bytes.push(0);
    // SAFETY: per the caller.
    unsafe { copy_out(&bytes, dst.cast(), dst_len, len_out) }
}

/// Decompresses vlmetalayer `name` into `dst` (as `blosc2_vlmeta_get`); two-call pattern.
///
/// # Safety
/// As for `b2f_meta_get`.
#[no_mangle]
pub unsafe extern "C" fn b2f_vlmeta_get(
    f: *const b2f_frame,
    name: *const c_char,
    dst: *mut c_void,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_vlmeta_get", || {
        // SAFETY: per the contract.
        let (s, name) = unsafe { (frame_ref(f)?, bytes_string(name, "name")?) };
        let n = s.vlmeta_len(name)?;
        // SAFETY: per the contract.
        unsafe { write_opt(len_out, n) };
        if dst.is_null() && dst_len == 0 {
            return Ok(());
        }
        // SAFETY: per the contract.
        let out = unsafe { output(dst.cast(), dst_len, "dst") }?;
        if dst_len < n {
            return Err(Error::BufferTooSmall {
                needed: n,
                given: dst_len,
            });
        }
        let content = s.vlmeta_get(name, n)?;
        out[..content.len()].copy_from_slice(&content);
        Ok(())
    })
}

/// Adds vlmetalayer `name` (up to 31 bytes) or replaces its content (stored compressed in the
/// trailer). At most 16 per frame, as c-blosc2 writes (frames with more, up to the 8192
/// c-blosc2 reads, are read, and their vlmetalayers replaced or deleted). Committed
/// crash-safely when this returns.
///
/// # Safety
/// As for `b2f_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn b2f_vlmeta_set(
    f: *mut b2f_frame,
    name: *const c_char,
    content: *const c_void,
    len: usize,
) -> b2f_status {
    guard("b2f_vlmeta_set", || {
        // SAFETY: per the contract.
        let (s, name, c) = unsafe {
            (
                frame_ref(f)?,
                bytes_string(name, "name")?,
                input(content.cast(), len, "content")?,
            )
        };
        s.vlmeta_set(name, c)
    })
}

/// Removes vlmetalayer `name` (`B2F_ERR_NOT_FOUND` if there is none).
///
/// # Safety
/// `f` is a live handle; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn b2f_vlmeta_delete(f: *mut b2f_frame, name: *const c_char) -> b2f_status {
    guard("b2f_vlmeta_delete", || {
        // SAFETY: per the contract.
        let (s, name) = unsafe { (frame_ref(f)?, bytes_string(name, "name")?) };
        s.vlmeta_delete(name)
    })
}

/// The number of vlmetalayers. Thread-safe.
///
/// # Safety
/// `f` is a live handle; `count_out` writable.
#[no_mangle]
pub unsafe extern "C" fn b2f_vlmeta_count(
    f: *const b2f_frame,
    count_out: *mut usize,
) -> b2f_status {
    guard("b2f_vlmeta_count", || {
        // SAFETY: per the contract.
        let n = unsafe { frame_ref(f) }?.vlmeta_names().len();
        if count_out.is_null() {
            bail!(invalid, "count_out is NULL");
        }
        // SAFETY: per the contract.
        unsafe { write_opt(count_out, n) };
        Ok(())
    })
}

/// The name of vlmetalayer `i`, as `b2f_meta_name`.
///
/// # Safety
/// As for `b2f_meta_get`.
#[no_mangle]
pub unsafe extern "C" fn b2f_vlmeta_name(
    f: *const b2f_frame,
    i: usize,
    dst: *mut c_char,
    dst_len: usize,
    len_out: *mut usize,
) -> b2f_status {
    guard("b2f_vlmeta_name", || {
        // SAFETY: per the contract.
        let names = unsafe { frame_ref(f) }?.vlmeta_names_raw();
        let name = names.get(i).ok_or_else(|| {
            Error::invalid(format_args!(
                "vlmetalayer index {i} is out of range ({} vlmetalayers)",
                names.len()
            ))
        })?;
        // SAFETY: per the contract.
        unsafe { copy_name(name, dst, dst_len, len_out) }
    })
}
