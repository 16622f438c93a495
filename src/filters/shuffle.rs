//! Byte shuffle: groups byte k of every element together. Stub: scalar placeholder.

/// Shuffles `src` into `dst` (same length) for elements of `typesize` bytes. Trailing bytes
/// that do not fill a whole element are copied unchanged, as c-blosc2's `blosc2_shuffle` does.
pub fn shuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}

/// Inverse of [`shuffle`].
pub fn unshuffle(typesize: usize, src: &[u8], dst: &mut [u8]) {
    let _ = typesize;
    dst.copy_from_slice(src);
}
