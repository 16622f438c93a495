//! The one wrapper every export runs its body in, and the pointer/length checks.
//!
//! `guard` catches panics (a bug becomes `B2F_ERR_INTERNAL`, never an unwind into C), maps the
//! engine's errors to status codes and sets or clears the thread-local message.

use std::ffi::{c_char, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};

use super::error::{
    b2f_status, clear_last_error, set_last_error, status_of, B2F_ERR_INTERNAL, B2F_OK,
};
use crate::error::{Error, Result};

/// Runs `body` as the implementation of the export `name`.
///
/// Always inlined: left to LLVM, it went out of line when the body it wraps grew (the chunk
/// decoder's did), a call more on every call of the export and a boundary whose layout
/// changed with changes elsewhere.
#[inline(always)]
pub(crate) fn guard(name: &str, body: impl FnOnce() -> Result<()>) -> b2f_status {
    clear_last_error();
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => B2F_OK,
        Ok(Err(e)) => {
            set_last_error(&format!("{name}: {e}"));
            status_of(&e)
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(&format!("{name}: internal error (please report): {what}"));
            B2F_ERR_INTERNAL
        }
    }
}

/// Like [`guard`] for exports that return a value instead of a status (no error to report).
pub(crate) fn guard_value<T>(fallback: T, body: impl FnOnce() -> T) -> T {
    clear_last_error();
    catch_unwind(AssertUnwindSafe(body)).unwrap_or(fallback)
}

/// A caller's input buffer: `(NULL, 0)` is empty, `(NULL, n > 0)` an invalid argument.
///
/// # Safety
/// If `ptr` is not NULL it must point to `len` readable bytes that stay valid and unmodified
/// for `'a`.
#[inline]
pub(crate) unsafe fn input<'a>(ptr: *const u8, len: usize, what: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&[]);
        }
        bail!(invalid, "{what} is NULL but its length is {len}");
    }
    if len > isize::MAX as usize {
        bail!(invalid, "{what} length {len} is not a valid size");
    }
    // SAFETY: non-NULL, the caller guarantees `len` readable bytes for 'a.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// A caller's output buffer, with the same NULL rules as [`input`].
///
/// # Safety
/// If `ptr` is not NULL it must point to `len` writable bytes, not aliased, valid for `'a`.
#[inline]
pub(crate) unsafe fn output<'a>(ptr: *mut u8, len: usize, what: &str) -> Result<&'a mut [u8]> {
    if ptr.is_null() {
        if len == 0 {
            return Ok(&mut []);
        }
        bail!(invalid, "{what} is NULL but its length is {len}");
    }
    if len > isize::MAX as usize {
        bail!(invalid, "{what} length {len} is not a valid size");
    }
    // SAFETY: non-NULL, the caller guarantees `len` writable, unaliased bytes for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len) })
}

/// Writes `value` through an optional out-pointer.
///
/// # Safety
/// `ptr` is NULL or valid for writing one `T`.
pub(crate) unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: non-NULL and valid for writes per the caller.
        unsafe { ptr.write(value) };
    }
}

/// Writes `value` through a required out-pointer.
///
/// # Safety
/// `ptr` is NULL or valid for writing one `T`.
pub(crate) unsafe fn write_req<T>(ptr: *mut T, value: T, what: &str) -> Result<()> {
    if ptr.is_null() {
        bail!(invalid, "{what} is NULL");
    }
    // SAFETY: non-NULL and valid for writes per the caller.
    unsafe { ptr.write(value) };
    Ok(())
}

/// A NUL-terminated byte string argument (a metalayer name: bytes, as in the format).
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn bytes_string<'a>(ptr: *const c_char, what: &str) -> Result<&'a [u8]> {
    if ptr.is_null() {
        bail!(invalid, "{what} is NULL");
    }
    // SAFETY: non-NULL and NUL-terminated per the caller.
    Ok(unsafe { CStr::from_ptr(ptr) }.to_bytes())
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn string<'a>(ptr: *const c_char, what: &str) -> Result<&'a str> {
    if ptr.is_null() {
        bail!(invalid, "{what} is NULL");
    }
    // SAFETY: non-NULL and NUL-terminated per the caller.
    let s = unsafe { CStr::from_ptr(ptr) };
    s.to_str()
        .map_err(|_| Error::invalid(format_args!("{what} is not valid UTF-8")))
}

/// The two-call output pattern: writes `bytes.len()` to `len_out`; with `(NULL, 0)` only the
/// size is reported; a buffer too small is `BufferTooSmall`; otherwise the bytes are copied.
///
/// # Safety
/// `dst`/`dst_len` as for [`output`]; `len_out` NULL or writable.
pub(crate) unsafe fn copy_out(
    bytes: &[u8],
    dst: *mut u8,
    dst_len: usize,
    len_out: *mut usize,
) -> Result<()> {
    // SAFETY: per the caller.
    unsafe { write_opt(len_out, bytes.len()) };
    if dst.is_null() && dst_len == 0 {
        return Ok(());
    }
    // SAFETY: per the caller.
    let out = unsafe { output(dst, dst_len, "dst") }?;
    if out.len() < bytes.len() {
        return Err(Error::BufferTooSmall {
            needed: bytes.len(),
            given: out.len(),
        });
    }
    out[..bytes.len()].copy_from_slice(bytes);
    Ok(())
}

/// Reads a versioned struct whose first field is `uint32_t struct_size`: an older caller's
/// smaller struct is honoured (missing fields keep `default`'s values).
///
/// # Safety
/// `ptr` is NULL or points to at least `struct_size` readable bytes of such a struct.
pub(crate) unsafe fn read_versioned<T: Copy>(ptr: *const T, default: T, what: &str) -> Result<T> {
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
    let mut value = default;
    // SAFETY: the caller's struct holds `given` >= n readable bytes; `value` holds
    // size_of::<T>() >= n bytes; both are plain-old-data `repr(C)` structs.
    unsafe {
        std::ptr::copy_nonoverlapping(ptr as *const u8, &mut value as *mut T as *mut u8, n);
    }
    Ok(value)
}

/// An optional path argument: NULL means none (an in-memory frame).
///
/// # Safety
/// `ptr` is NULL or points to a NUL-terminated string valid for `'a`.
pub(crate) unsafe fn optional_path<'a>(
    ptr: *const c_char,
    what: &str,
) -> Result<Option<&'a std::path::Path>> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: per the caller.
    Ok(Some(std::path::Path::new(unsafe { string(ptr, what) }?)))
}
