//! Chunk decoder. Stub.

use crate::error::{Error, Result};

/// Decompresses a whole chunk into `dst` (at least the chunk's nbytes long); returns nbytes.
pub fn decompress(chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
    let _ = (chunk, dst);
    Err(Error::unsupported("decompress: not implemented yet"))
}

/// Decompresses a whole chunk into a new buffer. `max_nbytes` bounds the allocation: a header
/// claiming more is an error, so an untrusted chunk never sizes an allocation by itself.
pub fn decompress_to_vec(chunk: &[u8], max_nbytes: usize) -> Result<Vec<u8>> {
    let _ = (chunk, max_nbytes);
    Err(Error::unsupported("decompress: not implemented yet"))
}
