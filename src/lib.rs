//! b2frame: the Blosc2 container formats (chunks, contiguous and sparse frames, b2nd arrays)
//! in safe Rust, exported to C through the thin `capi` layer.
//!
//! Rooms by concept:
//! - [`chunk`]: the Blosc/Blosc2 chunk format (header, compress, decompress, special values).
//! - [`codecs`]: BloscLZ (ours), LZ4/LZ4HC, zlib, zstd.
//! - [`filters`]: shuffle, bitshuffle, delta, trunc_prec, bytedelta.
//! - [`capi`]: the `extern "C"` surface (`b2f_*`), the only place with `unsafe` besides SIMD.

#![deny(unsafe_op_in_unsafe_fn)]

#[macro_use]
pub mod error;
pub mod capi;
pub mod chunk;
pub mod codecs;
pub mod filters;
pub mod frame;
mod memcopy;
pub mod ndim;
pub mod pool;
pub mod schunk;

pub use error::{Error, Result};

/// The library version, as `b2f_version()` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
