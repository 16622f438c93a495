//! The chunk index ("offsets chunk"): a Blosc2 chunk of int64 little-endian values, one per
//! chunk. Non-negative values are offsets from the end of the frame header (contiguous frames)
//! or chunk-file ids (sparse frames); negative values stand for whole special chunks, with the
//! kind in the top byte (0x81 zeros, 0x82 NaN, 0x84 uninitialized).

use crate::chunk::{self, CParams, Context, SpecialValue, SplitMode};
use crate::codecs;
use crate::error::Result;

/// The value of an index entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Entry {
    /// Offset (contiguous) or chunk-file id (sparse).
    At(u64),
    Special(SpecialValue),
}

/// Decodes one raw index value.
pub fn entry(raw: i64) -> Result<Entry> {
    if raw >= 0 {
        return Ok(Entry::At(raw as u64));
    }
    let kind = ((raw as u64) >> 56) as u8 & 0x7F;
    Ok(Entry::Special(match kind {
        1 => SpecialValue::Zero,
        2 => SpecialValue::Nan,
        4 => SpecialValue::Uninit,
        k => bail!(
            corrupt,
            "frame index: unknown special kind {k} in entry 0x{:016x}",
            raw as u64
        ),
    }))
}

/// The raw index value for a special chunk.
pub fn special_raw(kind: SpecialValue) -> i64 {
    ((1u64 << 63) | ((kind as u64) << 56)) as i64
}

/// Decodes the index chunk into exactly `nchunks` raw values.
pub fn decode(index_chunk: &[u8], nchunks: usize) -> Result<Vec<i64>> {
    let want = nchunks
        .checked_mul(8)
        .ok_or_else(|| crate::Error::corrupt(format!("frame index: {nchunks} chunks overflow")))?;
    let h = chunk::ChunkHeader::parse(index_chunk).map_err(|e| e.context("frame index"))?;
    if h.nbytes != want {
        bail!(
            corrupt,
            "frame index: decodes to {} bytes, expected {want} for {nchunks} chunks",
            h.nbytes
        );
    }
    let bytes =
        chunk::decompress_to_vec(index_chunk, want).map_err(|e| e.context("frame index"))?;
    Ok(bytes
        .chunks_exact(8)
        .map(|c| i64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect())
}

/// The parameters c-blosc2 compresses the index with.
fn index_params() -> CParams {
    CParams {
        codec: codecs::BLOSCLZ,
        clevel: 5,
        typesize: 8,
        blocksize: 16 * 1024,
        nthreads: 1,
        splitmode: SplitMode::Never,
        ..CParams::default()
    }
}

/// Encodes raw index values as a Blosc2 chunk, as c-blosc2 does.
pub fn encode(offsets: &[i64]) -> Result<Vec<u8>> {
    let bytes: Vec<u8> = offsets.iter().flat_map(|o| o.to_le_bytes()).collect();
    Context::new(index_params())?.compress_to_vec(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_entries_round_trip() {
        for k in [SpecialValue::Zero, SpecialValue::Nan, SpecialValue::Uninit] {
            assert_eq!(entry(special_raw(k)).unwrap(), Entry::Special(k));
        }
        assert_eq!(special_raw(SpecialValue::Zero) as u64 >> 56, 0x81);
        assert!(entry((0x83u64 << 56) as i64).is_err());
    }

    #[test]
    fn encode_decode() {
        let v: Vec<i64> = (0..5000)
            .map(|i| i * 1000)
            .chain([special_raw(SpecialValue::Nan)])
            .collect();
        let c = encode(&v).unwrap();
        assert_eq!(decode(&c, v.len()).unwrap(), v);
        assert!(decode(&c, v.len() + 1).is_err());
    }
}
