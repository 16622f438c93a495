//! Chunk header: 16 bytes (Blosc1), extended to 32 (Blosc2) when flags has both shuffle bits.
//! Stub: parsing arrives with the chunk layer.

use crate::error::Result;

/// The special value a whole chunk stands for (bits 4-6 of `blosc2_flags`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpecialValue {
    None,
    Zero,
    Nan,
    Value,
    Uninit,
}

/// A parsed and validated chunk header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ChunkHeader {
    pub version: u8,
    pub versionlz: u8,
    pub flags: u8,
    pub typesize: u8,
    pub nbytes: usize,
    pub blocksize: usize,
    pub cbytes: usize,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub udcodec: u8,
    pub compcode_meta: u8,
    pub blosc2_flags2: u8,
    pub blosc2_flags: u8,
}

impl ChunkHeader {
    /// Parses the header at the start of `chunk`, validating every field against `chunk.len()`.
    pub fn parse(chunk: &[u8]) -> Result<ChunkHeader> {
        let _ = chunk;
        Err(crate::Error::unsupported("chunk header: not implemented yet"))
    }
}
