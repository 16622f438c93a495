//! Special-value chunks: a 32-byte header (and for `Value`, one item after it) standing for a
//! whole chunk of zeros, NaNs, uninitialized bytes or one repeated value.

use super::header::{ChunkHeader, SpecialValue};
use super::EXTENDED_HEADER_LEN;
use crate::error::Result;

/// Builds a special chunk as c-blosc2's `blosc2_chunk_zeros` (and friends) do. `typesize` is the
/// item size, `blocksize` the one a compression context would pick for `nbytes`.
pub fn build(
    kind: SpecialValue,
    nbytes: usize,
    typesize: usize,
    blocksize: usize,
    value: Option<&[u8]>,
) -> Result<Vec<u8>> {
    if typesize == 0 {
        bail!(invalid, "special chunk: typesize is 0");
    }
    if nbytes > super::MAX_BUFFERSIZE {
        bail!(
            invalid,
            "special chunk: {nbytes} bytes exceed the chunk maximum"
        );
    }
    if !nbytes.is_multiple_of(typesize) {
        bail!(
            invalid,
            "special chunk: nbytes {nbytes} is not a multiple of typesize {typesize}"
        );
    }
    let item = match (kind, value) {
        (SpecialValue::Value, Some(v)) if v.len() == typesize => v,
        (SpecialValue::Value, _) => {
            bail!(
                invalid,
                "special chunk: a repeated value of exactly {typesize} bytes is needed"
            )
        }
        (SpecialValue::None, _) => bail!(invalid, "special chunk: no special kind given"),
        (SpecialValue::Nan, _) if typesize != 4 && typesize != 8 => {
            bail!(
                invalid,
                "special chunk: NaN needs typesize 4 or 8, not {typesize}"
            )
        }
        _ => &[][..],
    };
    let stored_typesize = if typesize > 255 { 1 } else { typesize as u8 };
    let mut h = ChunkHeader::new_extended(stored_typesize, nbytes, blocksize, [0; 6], [0; 6], 0);
    h.set_cbytes(EXTENDED_HEADER_LEN + item.len());
    h.add_blosc2_flags((kind as u8) << 4);
    let mut out = vec![0u8; h.cbytes()];
    h.write(&mut out);
    out[EXTENDED_HEADER_LEN..].copy_from_slice(item);
    Ok(out)
}

/// Whether a special chunk of `kind` over `nbytes` is zeros that are not whole items of
/// `typesize`: no special chunk holds them (c-blosc2's and ours want whole items), but zeros
/// need no item size, so they are read and stored as [`zero_streams`].
pub fn zeros_not_whole_items(kind: SpecialValue, nbytes: usize, typesize: usize) -> bool {
    matches!(kind, SpecialValue::Zero | SpecialValue::Uninit)
        && !nbytes.is_multiple_of(typesize.max(1))
}

/// A regular chunk of `nbytes` zeros: each block (`blocksize` bytes, the last maybe fewer) one
/// unsplit stream of zeros (a stream size of 0). Unlike a special chunk it needs no whole
/// number of items: c-blosc2 opens a file frame whose first chunk is this, but not one whose
/// first is a repeated value of another size than the frame's typesize.
pub fn zero_streams(nbytes: usize, typesize: usize, blocksize: usize) -> Result<Vec<u8>> {
    if nbytes > super::MAX_BUFFERSIZE {
        bail!(
            invalid,
            "chunk of zeros: {nbytes} bytes exceed the chunk maximum"
        );
    }
    let blocksize = if blocksize == 0 || blocksize > nbytes {
        nbytes
    } else {
        blocksize
    };
    let nblocks = nbytes.div_ceil(blocksize.max(1));
    let stored_typesize = if typesize > 255 {
        1
    } else {
        typesize.max(1) as u8
    };
    let mut h = ChunkHeader::new_extended(stored_typesize, nbytes, blocksize, [0; 6], [0; 6], 0);
    h.add_flags(super::header::DONT_SPLIT);
    let streams_at = EXTENDED_HEADER_LEN + 4 * nblocks;
    h.set_cbytes(streams_at + 4 * nblocks);
    let mut out = vec![0u8; h.cbytes()];
    h.write(&mut out);
    for (j, start) in out[EXTENDED_HEADER_LEN..streams_at]
        .chunks_exact_mut(4)
        .enumerate()
    {
        start.copy_from_slice(&((streams_at + 4 * j) as i32).to_le_bytes());
    }
    Ok(out)
}

/// The special chunk a frame hands out for an index entry that holds a special value, as
/// c-blosc2's `frame_special_chunk` does (default parameters with the frame's typesize and
/// blocksize). Zeros (or uninitialized bytes) that are not whole items, which c-blosc2 keeps
/// as an entry but cannot hand out, are blocks of zero streams.
pub fn for_frame(
    kind: SpecialValue,
    nbytes: usize,
    typesize: usize,
    blocksize: usize,
) -> Result<Vec<u8>> {
    let bs = super::blocksize::compute_blocksize(
        super::SplitMode::ForwardCompat,
        crate::codecs::BLOSCLZ,
        5,
        true,
        typesize,
        nbytes,
        blocksize,
    );
    if zeros_not_whole_items(kind, nbytes, typesize) {
        return zero_streams(nbytes, typesize, bs);
    }
    build(kind, nbytes, typesize, bs, None)
}
