//! N-dimensional arrays (b2nd): a frame whose "b2nd" (or older "caterva") metalayer gives the
//! shape, chunk and block shapes and dtype.
//!
//! Layout, as c-blosc2 lays it out: chunks cover the array in C order over the chunk grid;
//! every chunk holds the *extended* chunk shape (the chunkshape rounded up to a multiple of the
//! blockshape), edge chunks padded; inside a chunk, blocks in C order over the block grid, each
//! block C-ordered and padded at the edges. So a block is exactly a chunk-level Blosc2 block,
//! and a slab is read by decoding only the blocks it touches.

pub mod dtype;
pub mod meta;
pub mod slice;

pub use meta::{NdMeta, MAX_DIM};
pub use slice::{Array, Geometry};
