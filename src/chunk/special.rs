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

/// The special chunk a frame hands out for an index entry that holds a special value, as
/// c-blosc2's `frame_special_chunk` does (default parameters with the frame's typesize and
/// blocksize).
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
    build(kind, nbytes, typesize, bs, None)
}
