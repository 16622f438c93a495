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
    // c-blosc2 writes kind 1, 2 or 4 in the top byte and reads whichever of those bits is
    // set first, in this order (frame_special_chunk): so does b2frame.
    let kind = ((raw as u64) >> 56) as u8 & 0x7F;
    Ok(Entry::Special(if kind & 1 != 0 {
        SpecialValue::Zero
    } else if kind & 4 != 0 {
        SpecialValue::Uninit
    } else if kind & 2 != 0 {
        SpecialValue::Nan
    } else {
        bail!(
            corrupt,
            "frame index: unknown special kind {kind} in entry 0x{:016x}",
            raw as u64
        )
    }))
}

/// The raw index value for a special chunk.
pub fn special_raw(kind: SpecialValue) -> i64 {
    ((1u64 << 63) | ((kind as u64) << 56)) as i64
}

/// An index up to this size is decoded whatever its compressed size.
pub const INDEX_FREE_BYTES: usize = 64 << 20;
/// Beyond `INDEX_FREE_BYTES`, the most decoded index bytes allowed per compressed byte. The
/// index is always BloscLZ + shuffle, which stays under ~250:1 even for a frame of nothing but
/// special chunks; a few hundred bytes claiming gigabytes of offsets are forged.
pub const MAX_INDEX_RATIO: usize = 1024;

/// Refuses to allocate an index out of proportion to the bytes that hold it.
pub fn check_size(nbytes: usize, cbytes: usize) -> Result<()> {
    if nbytes > INDEX_FREE_BYTES && nbytes / cbytes.max(1) > MAX_INDEX_RATIO {
        bail!(
            no_memory,
            "frame index: {cbytes} compressed bytes claim {nbytes} bytes of offsets, more than \
             {MAX_INDEX_RATIO}:1 beyond {} MiB",
            INDEX_FREE_BYTES >> 20
        );
    }
    Ok(())
}

/// The one value of an index stored as a special chunk (zeros, or a repeated 8-byte value as
/// c-blosc2's fill_special writes it), `None` for an ordinary index chunk.
pub fn uniform_value(index_chunk: &[u8]) -> Result<Option<i64>> {
    let h = chunk::ChunkHeader::parse(index_chunk).map_err(|e| e.context("frame index"))?;
    match h.special().map_err(|e| e.context("frame index"))? {
        SpecialValue::None => Ok(None),
        SpecialValue::Zero => Ok(Some(0)),
        SpecialValue::Value => {
            let at = h.header_len();
            match index_chunk.get(at..at + 8) {
                Some(v) if h.typesize() == 8 => Ok(Some(le_i64(v))),
                _ => bail!(
                    corrupt,
                    "frame index: repeated-value index chunk without an 8-byte value"
                ),
            }
        }
        k => bail!(corrupt, "frame index: stored as a {k:?} special chunk"),
    }
}

/// Decodes the index chunk into exactly `nchunks` raw values. Block by block where the blocks
/// hold whole values, so the decoded bytes are never held whole beside the values (for 100,000
/// chunks, 800 KB less to allocate and fault in).
pub fn decode(index_chunk: &[u8], nchunks: usize) -> Result<Vec<i64>> {
    let d = decoder(index_chunk, nchunks)?;
    let want = d.header().nbytes();
    let mut values = Vec::with_capacity(nchunks);
    let mut take = |bytes: &[u8]| values.extend(bytes.chunks_exact(8).map(le_i64));
    let lens = (0..d.nblocks()).map(|j| d.block_range(j).len());
    let blockwise = blocks_decode_alone(&d) && lens.clone().all(|n| n % 8 == 0);
    if blockwise {
        let mut block = vec![0u8; lens.max().unwrap_or(0)];
        for j in 0..d.nblocks() {
            let block = &mut block[..d.block_range(j).len()];
            d.decode_block(j, block, None)
                .map_err(|e| e.context("frame index"))?;
            take(block);
        }
    } else {
        let mut bytes = vec![0u8; want];
        d.decode_all(&mut bytes, None)
            .map_err(|e| e.context("frame index"))?;
        take(&bytes);
    }
    Ok(values)
}

/// Decodes entry `i` (< `nchunks`) alone, from the one block that holds it, as c-blosc2 reads
/// entries. `None` where that cannot be done (a special index chunk, blocks coded against
/// block 0, an entry split across blocks): the whole index must be decoded then.
pub fn decode_one(index_chunk: &[u8], nchunks: usize, i: usize) -> Result<Option<i64>> {
    let d = decoder(index_chunk, nchunks)?;
    if !blocks_decode_alone(&d) {
        return Ok(None);
    }
    let Some(at) = i.checked_mul(8).filter(|&at| at < d.header().nbytes()) else {
        bail!(invalid, "frame index: entry {i} of {nchunks}");
    };
    let Some(j) = (0..d.nblocks()).find(|&j| d.block_range(j).contains(&at)) else {
        return Ok(None);
    };
    let r = d.block_range(j);
    if at + 8 > r.end {
        return Ok(None);
    }
    let mut block = vec![0u8; r.len()];
    d.decode_block(j, &mut block, None)
        .map_err(|e| e.context("frame index"))?;
    Ok(Some(le_i64(&block[at - r.start..at - r.start + 8])))
}

/// Whether each block of the index chunk decodes on its own (not special, no delta against
/// block 0).
fn blocks_decode_alone(d: &chunk::decompress::Decoder<'_>) -> bool {
    d.special() == SpecialValue::None && !d.needs_reference()
}

/// An index value from its 8 little-endian bytes.
fn le_i64(v: &[u8]) -> i64 {
    i64::from_le_bytes(v.try_into().unwrap_or([0; 8]))
}

/// A decoder for the index chunk, checked to hold exactly `nchunks` values.
fn decoder(index_chunk: &[u8], nchunks: usize) -> Result<chunk::decompress::Decoder<'_>> {
    let want = nchunks.checked_mul(8).ok_or_else(|| {
        crate::Error::corrupt(format_args!("frame index: {nchunks} chunks overflow"))
    })?;
    let d = chunk::decompress::Decoder::new(index_chunk).map_err(|e| e.context("frame index"))?;
    if d.header().nbytes() != want {
        bail!(
            corrupt,
            "frame index: decodes to {} bytes, expected {want} for {nchunks} chunks",
            d.header().nbytes()
        );
    }
    Ok(d)
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

/// Encodes `n` equal index values `raw` as one repeated-value chunk, the index c-blosc2's
/// `fill_special` writes into an empty frame (with the index parameters' blocksize).
pub fn encode_repeated(raw: i64, n: usize) -> Result<Vec<u8>> {
    let nbytes = n
        .checked_mul(8)
        .ok_or_else(|| crate::error::Error::invalid("frame index: too many chunks"))?;
    let blocksize = Context::new(index_params())?.blocksize_for(nbytes);
    chunk::special::build(
        SpecialValue::Value,
        nbytes,
        8,
        blocksize,
        Some(&raw.to_le_bytes()),
    )
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
        // Other kinds as c-blosc2 reads them: the zero bit first, then uninit, then NaN.
        let k = |top: u64| entry((top << 56 | 5) as i64).unwrap();
        assert_eq!(k(0x83), Entry::Special(SpecialValue::Zero));
        assert_eq!(k(0xFF), Entry::Special(SpecialValue::Zero));
        assert_eq!(k(0xCC), Entry::Special(SpecialValue::Uninit));
        assert_eq!(k(0xB2), Entry::Special(SpecialValue::Nan));
        assert!(entry((0x88u64 << 56) as i64).is_err());
        assert!(entry((0xF8u64 << 56) as i64).is_err());
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
        for (i, &want) in v.iter().enumerate() {
            assert_eq!(decode_one(&c, v.len(), i).unwrap(), Some(want), "entry {i}");
        }
        assert!(decode_one(&c, v.len() + 1, 0).is_err());
        assert!(decode_one(&c, v.len(), v.len()).is_err());
        assert!(decode_one(&c, v.len(), usize::MAX).is_err());
    }

    /// Index chunks written with other parameters: blocks that split values, a delta filter
    /// (blocks coded against block 0), no compression.
    #[test]
    fn decodes_indexes_whatever_their_blocks() {
        let v: Vec<i64> = (0..3000).map(|i| i * 4099 + (i % 7)).collect();
        let bytes: Vec<u8> = v.iter().flat_map(|o| o.to_le_bytes()).collect();
        let variants = [
            (4, 1004, [0, 0, 0, 0, 0, crate::filters::SHUFFLE], 5),
            (
                8,
                2048,
                [0, 0, 0, 0, crate::filters::DELTA, crate::filters::SHUFFLE],
                5,
            ),
            (8, 4096, [0; 6], 0),
        ];
        for (typesize, blocksize, filters, clevel) in variants {
            let params = CParams {
                typesize,
                blocksize,
                filters,
                clevel,
                ..CParams::default()
            };
            let c = Context::new(params)
                .unwrap()
                .compress_to_vec(&bytes)
                .unwrap();
            let d = chunk::decompress::Decoder::new(&c).unwrap();
            assert_eq!(d.block_range(0).len(), blocksize);
            assert_eq!(decode(&c, v.len()).unwrap(), v, "blocksize {blocksize}");
            // Alone, an entry decodes to its value, or is left to the whole decode where its
            // block cannot be decoded on its own (delta) or splits it.
            let alone: Vec<_> = (0..v.len())
                .map(|i| decode_one(&c, v.len(), i).unwrap())
                .collect();
            for (i, got) in alone.iter().enumerate() {
                assert!(got.is_none() || *got == Some(v[i]), "blocksize {blocksize}");
            }
            let served = alone.iter().filter(|g| g.is_some()).count();
            match blocksize {
                1004 => assert!(served > 0 && served < v.len()),
                2048 => assert_eq!(served, 0),
                _ => assert_eq!(served, v.len()),
            }
        }
    }
}
