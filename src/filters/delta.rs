//! Delta: XOR of each element against the reference block (block 0 of the chunk). Stub.

/// Encodes block `src` into `dst`. `dref` is the chunk's first block (for block 0 itself,
/// `dref` is `src` and the coding runs against the previous element).
pub fn encode(dref: &[u8], is_first_block: bool, typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = (dref, is_first_block, typesize);
    dst.copy_from_slice(src);
}

/// Decodes the first block in place.
pub fn decode_first_block(typesize: usize, buf: &mut [u8]) {
    let _ = (typesize, buf);
}

/// Decodes a later block in place, against the already decoded first block `dref`.
pub fn decode(dref: &[u8], typesize: usize, buf: &mut [u8]) {
    let _ = (dref, typesize, buf);
}
