//! Status codes, the thread-local error message, and the mapping from engine errors.

use std::cell::{Cell, RefCell};
use std::ffi::{c_char, CString};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::Error;

/// The result of every fallible call: `B2F_OK` (0) or a negative error code.
/// Codes are stable and never renumbered.
#[allow(non_camel_case_types)]
pub type b2f_status = i32;

/// Success.
pub const B2F_OK: b2f_status = 0;
/// NULL where not allowed, bad flags, index out of range, bad parameters.
pub const B2F_ERR_INVALID_ARGUMENT: b2f_status = -1;
/// The OS refused (the message names the path and the OS error).
pub const B2F_ERR_IO: b2f_status = -2;
/// Not a Blosc2 frame or chunk, or a version this library cannot read.
pub const B2F_ERR_FORMAT: b2f_status = -3;
/// Structurally invalid or inconsistent data (bad offsets, sizes, lengths).
pub const B2F_ERR_CORRUPT: b2f_status = -4;
/// Valid input using a feature not implemented (e.g. an unregistered codec id).
pub const B2F_ERR_UNSUPPORTED: b2f_status = -5;
/// No metalayer or vlmetalayer of that name.
pub const B2F_ERR_NOT_FOUND: b2f_status = -6;
/// The destination is too small; the size needed was written to the `*_out` length.
pub const B2F_ERR_BUFFER_TOO_SMALL: b2f_status = -7;
/// A write on a handle opened read-only.
pub const B2F_ERR_READ_ONLY: b2f_status = -8;
/// An allocation failed or a declared size exceeds the safety limits.
pub const B2F_ERR_NO_MEMORY: b2f_status = -9;
/// A bug: a panic was caught at the boundary (it never unwinds into C).
pub const B2F_ERR_INTERNAL: b2f_status = -10;

/// The status code for an engine error.
pub(crate) fn status_of(e: &Error) -> b2f_status {
    match e {
        Error::InvalidArgument(_) => B2F_ERR_INVALID_ARGUMENT,
        Error::Io { .. } => B2F_ERR_IO,
        Error::Format(_) => B2F_ERR_FORMAT,
        Error::Corrupt(_) => B2F_ERR_CORRUPT,
        Error::Unsupported(_) => B2F_ERR_UNSUPPORTED,
        Error::NotFound(_) => B2F_ERR_NOT_FOUND,
        Error::BufferTooSmall { .. } => B2F_ERR_BUFFER_TOO_SMALL,
        Error::ReadOnly(_) => B2F_ERR_READ_ONLY,
        Error::NoMemory(_) => B2F_ERR_NO_MEMORY,
        Error::Internal(_) => B2F_ERR_INTERNAL,
    }
}

/// The fixed text for a status code.
pub(crate) fn status_text(status: b2f_status) -> &'static [u8] {
    match status {
        B2F_OK => b"success\0",
        B2F_ERR_INVALID_ARGUMENT => b"invalid argument\0",
        B2F_ERR_IO => b"I/O error\0",
        B2F_ERR_FORMAT => b"not a Blosc2 frame or chunk, or an unreadable version\0",
        B2F_ERR_CORRUPT => b"corrupt or inconsistent data\0",
        B2F_ERR_UNSUPPORTED => b"unsupported feature\0",
        B2F_ERR_NOT_FOUND => b"not found\0",
        B2F_ERR_BUFFER_TOO_SMALL => b"destination buffer too small\0",
        B2F_ERR_READ_ONLY => b"handle is read-only\0",
        B2F_ERR_NO_MEMORY => b"out of memory or over a safety limit\0",
        B2F_ERR_INTERNAL => b"internal error (a bug in b2frame)\0",
        _ => b"unknown status code\0",
    }
}

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
    /// Whether `LAST_ERROR` holds a message. Every call clears the message first: with this
    /// flag (no destructor, so no lazy set-up to check), a call after a success does not touch
    /// `LAST_ERROR` at all.
    static HAS_ERROR: Cell<bool> = const { Cell::new(false) };
}

/// How many threads' `HAS_ERROR` is set. While none is, a call need not look at its own: a
/// thread-local in a shared library is reached through `__tls_get_addr`, a call of about 11
/// instructions. A thread that exits holding a message keeps it counted; calls then take
/// the slower path, which is correct.
static THREADS_WITH_ERROR: AtomicUsize = AtomicUsize::new(0);

/// Replaces the calling thread's message (NUL bytes in it become spaces).
pub(crate) fn set_last_error(msg: &str) {
    let bytes: Vec<u8> = msg.bytes().map(|b| if b == 0 { b' ' } else { b }).collect();
    let c = CString::new(bytes).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
    if !HAS_ERROR.replace(true) {
        // Relaxed: a thread reads the count after its own increment in program order, and
        // other threads' decrements only take back their own increments.
        THREADS_WITH_ERROR.fetch_add(1, Ordering::Relaxed);
    }
}

/// Inlined into the entry points, as LLVM did on its own until the decoder's streams loop
/// changed (stop 52): out of line, 8 more instructions a call.
#[inline]
pub(crate) fn clear_last_error() {
    if THREADS_WITH_ERROR.load(Ordering::Relaxed) != 0 && HAS_ERROR.replace(false) {
        LAST_ERROR.with(|e| *e.borrow_mut() = CString::default());
        THREADS_WITH_ERROR.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Pointer to the calling thread's message; valid until this thread's next `b2f_` call.
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}
