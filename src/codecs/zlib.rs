//! zlib through libz-sys, built on zlib-ng 2.3.3 in compat mode: the same deflate engine and
//! version c-blosc2's wheels bundle, so ratios and speed compare like for like.
//!
//! The `unsafe` blocks are calls into the C library with slices we own.

use std::ffi::{c_int, c_uchar, c_ulong};

use crate::error::{Error, Result};

extern crate libz_sys;

extern "C" {
    fn compress2(
        dest: *mut c_uchar,
        dest_len: *mut c_ulong,
        source: *const c_uchar,
        source_len: c_ulong,
        level: c_int,
    ) -> c_int;
    fn uncompress(
        dest: *mut c_uchar,
        dest_len: *mut c_ulong,
        source: *const c_uchar,
        source_len: c_ulong,
    ) -> c_int;
}

const Z_OK: c_int = 0;

/// Compresses `src` at `clevel` (zlib format); returns the length or 0 if it does not fit.
pub fn compress(clevel: u8, src: &[u8], dst: &mut [u8]) -> usize {
    let mut out_len = dst.len() as c_ulong;
    // SAFETY: dst has out_len writable bytes, src has src.len() readable bytes.
    let rc = unsafe {
        compress2(
            dst.as_mut_ptr(),
            &mut out_len,
            src.as_ptr(),
            src.len() as c_ulong,
            c_int::from(clevel),
        )
    };
    if rc != Z_OK {
        return 0;
    }
    out_len as usize
}

/// Decompresses one stream into exactly `dst.len()` bytes.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let mut out_len = dst.len() as c_ulong;
    // SAFETY: uncompress writes at most out_len bytes into dst and reads src.len() bytes.
    let rc = unsafe {
        uncompress(
            dst.as_mut_ptr(),
            &mut out_len,
            src.as_ptr(),
            src.len() as c_ulong,
        )
    };
    if rc != Z_OK {
        return Err(Error::corrupt(format!(
            "zlib stream does not decode (error {rc})"
        )));
    }
    if out_len as usize != dst.len() {
        return Err(Error::corrupt(format!(
            "zlib stream decoded to {out_len} bytes, expected {}",
            dst.len()
        )));
    }
    Ok(dst.len())
}
