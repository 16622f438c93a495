//! The Blosc/Blosc2 chunk: a header, block starts, an optional dictionary and compressed streams.
//!
//! - [`header`]: parsing and writing the 16-byte (Blosc1) and 32-byte (Blosc2) headers.
//! - [`compress`]: the compression context (parameters + its thread pool) and the encoder.
//! - [`decompress`](mod@decompress): the decoder, whole chunks or single blocks.
//! - [`special`]: chunks that carry a special value instead of data.
//! - [`blocksize`]: c-blosc2's automatic blocksize and split decisions.

pub mod blocksize;
pub mod compress;
pub mod decompress;
pub mod header;
pub mod special;

pub use compress::{CParams, Context, SplitMode};
pub use decompress::{decompress, decompress_to_vec};
pub use header::{ChunkHeader, SpecialValue};

/// Size of the Blosc1 header.
pub const MIN_HEADER_LEN: usize = 16;
/// Size of the Blosc2 extended header.
pub const EXTENDED_HEADER_LEN: usize = 32;
/// Most bytes a chunk can add to its data (`b2f_max_compressed_size`).
pub const MAX_OVERHEAD: usize = EXTENDED_HEADER_LEN;
/// Largest nbytes a chunk can hold.
pub const MAX_BUFFERSIZE: usize = i32::MAX as usize - MAX_OVERHEAD;
/// Largest block c-blosc2 accepts.
pub const MAX_BLOCKSIZE: usize = 536_866_816;
