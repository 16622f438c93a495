//! The C API: every `b2f_*` export, one file per C object, all of them thin.
//!
//! Conventions (see also the README's "API conventions"):
//! - every fallible call returns `b2f_status` (`B2F_OK` = 0, errors negative) and sets a
//!   thread-local message readable with `b2f_last_error()`, valid until the thread's next call;
//! - a pointer/length pair `(NULL, 0)` is an empty buffer, `(NULL, n > 0)` an invalid argument;
//! - output buffers are owned by the caller: `dst = NULL, dst_len = 0` asks for the size, a
//!   small buffer gives `B2F_ERR_BUFFER_TOO_SMALL` with the size needed in `*len_out`;
//! - outputs are written only on success, except the needed size on `BUFFER_TOO_SMALL`;
//! - a panic never crosses the boundary: it becomes `B2F_ERR_INTERNAL`.
//!
//! This module and the SIMD kernels are the only places with `unsafe` in the crate, besides the
//! thin FFI wrappers of the C codecs (lz4, zlib, zstd).

#![allow(non_camel_case_types)]

pub(crate) mod boundary;
pub mod chunk;
pub mod error;
pub mod frame;
pub mod meta;
pub mod ndim;

use std::ffi::c_char;

pub use chunk::*;
pub use error::*;
pub use frame::*;
pub use meta::*;
pub use ndim::*;

/// The version of the library, e.g. "0.1.0" (static storage: never freed).
///
/// Thread-safe.
#[no_mangle]
pub extern "C" fn b2f_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}

/// A message describing the last failed call on the calling thread, or "" if the thread's last
/// call that reports a status succeeded. The calls that cannot fail (`b2f_version`,
/// `b2f_status_message`, `b2f_last_error`, `b2f_max_compressed_size`, `b2f_close`) leave the
/// message as it is.
///
/// # Memory and lifetimes
/// The string belongs to the library and stays valid until the calling thread makes its next
/// `b2f_` call. Thread-safe (each thread has its own message).
#[no_mangle]
pub extern "C" fn b2f_last_error() -> *const c_char {
    error::last_error_ptr()
}

/// A fixed, static description of a status code (for callers that cannot rely on the
/// thread-local message, such as goroutines that move between threads). Unknown codes give
/// "unknown status code". Thread-safe; the string is never freed.
#[no_mangle]
pub extern "C" fn b2f_status_message(status: b2f_status) -> *const c_char {
    error::status_text(status).as_ptr().cast()
}
