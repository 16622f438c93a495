//! Codecs: one file each. Blosc2 codec ids are the values stored in frames and chunk headers.

pub mod blosclz;
pub mod lz4;
pub mod lz4_block;
pub mod zlib;
pub mod zstd;

/// Blosc2 codec ids (`compcode`).
pub const BLOSCLZ: u8 = 0;
pub const LZ4: u8 = 1;
pub const LZ4HC: u8 = 2;
pub const ZLIB: u8 = 4;
pub const ZSTD: u8 = 5;

/// The name c-blosc2 gives a codec id, for messages.
pub fn name(id: u8) -> &'static str {
    match id {
        BLOSCLZ => "blosclz",
        LZ4 => "lz4",
        LZ4HC => "lz4hc",
        3 => "snappy",
        ZLIB => "zlib",
        ZSTD => "zstd",
        32 => "ndlz",
        33 => "zfp_acc",
        34 => "zfp_prec",
        35 => "zfp_rate",
        36 => "openhtj2k",
        37 => "grok",
        38 => "openzl",
        39 => "j2k",
        40 => "htj2k",
        _ => "unknown",
    }
}
