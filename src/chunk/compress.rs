//! Compression parameters and the compression context. Stub.

use crate::error::{Error, Result};

/// How blocks are split into one stream per byte of the type (c-blosc2 values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitMode {
    Always = 1,
    Never = 2,
    Auto = 3,
    ForwardCompat = 4,
}

/// Compression parameters (the engine's form of `b2f_cparams`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CParams {
    pub codec: u8,
    pub clevel: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub typesize: usize,
    /// 0 = automatic.
    pub blocksize: usize,
    pub nthreads: usize,
    pub splitmode: SplitMode,
    pub use_dict: bool,
}

impl Default for CParams {
    /// c-blosc2's `BLOSC2_CPARAMS_DEFAULTS`.
    fn default() -> Self {
        CParams {
            codec: crate::codecs::BLOSCLZ,
            clevel: 5,
            filters: [0, 0, 0, 0, 0, crate::filters::SHUFFLE],
            filters_meta: [0; 6],
            typesize: 8,
            blocksize: 0,
            nthreads: 1,
            splitmode: SplitMode::ForwardCompat,
            use_dict: false,
        }
    }
}

/// A compression context: validated parameters plus the worker pool that lives with it.
pub struct Context {
    params: CParams,
}

impl Context {
    pub fn new(params: CParams) -> Result<Context> {
        Ok(Context { params })
    }

    pub fn params(&self) -> &CParams {
        &self.params
    }

    /// Compresses `src` into `dst`; returns the chunk length.
    pub fn compress(&self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let _ = (src, dst);
        Err(Error::unsupported("compress: not implemented yet"))
    }

    /// Compresses `src` into a new chunk.
    pub fn compress_to_vec(&self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; src.len() + super::MAX_OVERHEAD];
        let n = self.compress(src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Decompresses `chunk` into `dst` with this context's threads; returns nbytes.
    pub fn decompress(&self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        super::decompress(chunk, dst)
    }
}
