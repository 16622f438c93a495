//! Filters of the 6-slot pipeline: one module each, SIMD kernels beside the scalar reference.

pub mod bitshuffle;
pub mod bytedelta;
pub mod delta;
pub mod int_trunc;
pub mod ndcell;
pub mod pipeline;
pub mod shuffle;
pub mod simd;
pub mod trunc_prec;

/// Filter ids as stored in chunk headers and frames.
pub const NOFILTER: u8 = 0;
pub const SHUFFLE: u8 = 1;
pub const BITSHUFFLE: u8 = 2;
pub const DELTA: u8 = 3;
pub const TRUNC_PREC: u8 = 4;
/// c-blosc2's global filters for n-dim arrays (they need the array's blockshape).
pub const NDCELL: u8 = 32;
pub const NDMEAN: u8 = 33;
/// The first bytedelta id, which c-blosc2 still decodes (same transform as 35).
pub const BYTEDELTA_BUGGY: u8 = 34;
pub const BYTEDELTA: u8 = 35;
/// Integer precision truncation, a filter c-blosc2 registers globally (lossy).
pub const INT_TRUNC: u8 = 36;

/// Number of filter slots in a Blosc2 pipeline.
pub const MAX_FILTERS: usize = 6;

/// The name c-blosc2 gives a filter id, for messages.
pub fn name(id: u8) -> &'static str {
    match id {
        NOFILTER => "nofilter",
        SHUFFLE => "shuffle",
        BITSHUFFLE => "bitshuffle",
        DELTA => "delta",
        TRUNC_PREC => "trunc_prec",
        NDCELL => "ndcell",
        NDMEAN => "ndmean",
        BYTEDELTA_BUGGY => "bytedelta_buggy",
        BYTEDELTA => "bytedelta",
        INT_TRUNC => "int_trunc",
        _ => "unknown",
    }
}
