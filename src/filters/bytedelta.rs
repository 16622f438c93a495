//! Bytedelta (filter id 35, and 34 read alike): byte-wise delta within each shuffled stream. Stub.

/// Encodes `src` into `dst`; `typesize` comes from the filter's meta slot (0 = the chunk's).
pub fn encode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}

/// Inverse of [`encode`].
pub fn decode(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}
