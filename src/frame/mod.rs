//! Blosc2 frames: where a super-chunk's chunks, index and metadata live.
//!
//! - [`header`], [`metalayers`], [`trailer`], [`index`]: the frame's structures.
//! - [`store`]: the bytes underneath (memory, a file at an offset, a sparse directory) and the
//!   commit protocol that makes every write crash-safe.
//! - [`legacy`]: the pre-2.0 frame layout, read only.
//!
//! A [`Frame`] is the parsed, validated state of one frame: header, decoded index, vlmetalayers
//! and where each structure sits. It is not synchronized; [`crate::schunk::SChunk`] wraps it in
//! a lock and adds compression.

pub mod header;
pub mod index;
pub mod legacy;
pub mod metalayers;
pub mod store;
pub mod trailer;

pub use header::FrameHeader;
pub use metalayers::Metalayer;
pub use store::Store;
pub use trailer::Vlmeta;

use std::borrow::Cow;

use crate::chunk::{self, ChunkHeader, SpecialValue};
use crate::error::{Error, Result};
use index::Entry;

/// A parsed frame.
#[derive(Debug)]
pub struct Frame {
    pub store: Store,
    pub header: FrameHeader,
    /// One raw index value per chunk (offset, chunk-file id, or special).
    pub offsets: Vec<i64>,
    /// Per chunk, an upper bound of its stored length (contiguous frames), so a chunk is read
    /// with one positioned read. 0 for special entries and sparse frames.
    pub spans: Vec<u32>,
    pub vlmeta: Vec<Vlmeta>,
    /// Length of the committed trailer (contiguous frames: it ends at `frame_len`).
    pub trailer_len: u64,
    /// Whether the frame's chunks use variable-length blocks (from the header flags).
    pub vl_blocks: bool,
    /// Bytes of the contiguous frame no structure references any more.
    pub dead_bytes: u64,
    /// Legacy frames are read only.
    pub legacy: bool,
}

/// How a chunk of the frame is held.
pub enum ChunkData<'a> {
    Stored(Cow<'a, [u8]>),
    Special(SpecialValue, usize),
}

/// Largest chunk this library stores or reads (nbytes + the Blosc2 overhead).
pub const MAX_CHUNK_LEN: u64 = (chunk::MAX_BUFFERSIZE + chunk::MAX_OVERHEAD) as u64;

impl Frame {
    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }

    pub fn is_sparse(&self) -> bool {
        matches!(self.store, Store::Dir { .. })
    }

    /// Validates chunk index `i` (from a caller).
    pub fn check_index(&self, i: i64) -> Result<usize> {
        usize::try_from(i)
            .ok()
            .filter(|&u| u < self.nchunks())
            .ok_or_else(|| {
                Error::invalid(format!(
                    "chunk index {i} is out of range (the frame has {} chunks)",
                    self.nchunks()
                ))
            })
    }

    /// The uncompressed size of a special chunk at position `i` (its size is not stored: the
    /// chunksize, or what is left of nbytes for the last chunk), as c-blosc2 derives it.
    fn special_nbytes(&self, i: usize) -> Result<usize> {
        let cs = self.header.chunksize;
        if cs <= 0 {
            bail!(
                corrupt,
                "chunk {i}: a special index entry in a frame with variable-length chunks has no size"
            );
        }
        let cs = cs as i64;
        let n = self.nchunks();
        if i + 1 == n && self.header.nbytes % cs != 0 {
            return Ok((self.header.nbytes % cs) as usize);
        }
        Ok(cs as usize)
    }

    /// The stored bytes of chunk `i`, or the special value it stands for.
    pub fn chunk_data(&self, i: usize) -> Result<ChunkData<'_>> {
        match index::entry(self.offsets[i])? {
            Entry::Special(kind) => Ok(ChunkData::Special(kind, self.special_nbytes(i)?)),
            Entry::At(at) => {
                let bytes = match &self.store {
                    Store::Dir { .. } => {
                        Cow::Owned(self.store.read_chunk_file(at, self.max_chunk_len())?)
                    }
                    _ => self.read_contiguous_chunk(i, at)?,
                };
                check_stored_chunk(&bytes).map_err(|e| e.context(format_args!("chunk {i}")))?;
                Ok(ChunkData::Stored(bytes))
            }
        }
    }

    /// Longest a stored chunk of this frame may be.
    fn max_chunk_len(&self) -> u64 {
        if self.header.chunksize > 0 {
            self.header.chunksize as u64 + chunk::MAX_OVERHEAD as u64
        } else {
            MAX_CHUNK_LEN
        }
    }

    fn data_end(&self) -> u64 {
        self.header.header_len as u64 + self.header.cbytes as u64
    }

    /// Reads a chunk of a contiguous frame with one positioned read (a second one only if its
    /// header says it is longer than the first read's bound).
    fn read_contiguous_chunk(&self, i: usize, off: u64) -> Result<Cow<'_, [u8]>> {
        let start = self.header.header_len as u64 + off;
        let end = self.data_end();
        let span = u64::from(self.spans[i])
            .min(end - start)
            .min(self.max_chunk_len());
        let first = self
            .store
            .read(start, span.max(chunk::EXTENDED_HEADER_LEN as u64))?;
        let h =
            ChunkHeader::parse_prefix(&first).map_err(|e| e.context(format_args!("chunk {i}")))?;
        let cbytes = h.cbytes as u64;
        if cbytes < chunk::EXTENDED_HEADER_LEN as u64 || start + cbytes > end {
            bail!(
                corrupt,
                "chunk {i}: {cbytes} bytes at offset {off} run past the frame's data ({} bytes)",
                self.header.cbytes
            );
        }
        if cbytes <= first.len() as u64 {
            return Ok(match first {
                Cow::Borrowed(b) => Cow::Borrowed(&b[..cbytes as usize]),
                Cow::Owned(mut v) => {
                    v.truncate(cbytes as usize);
                    Cow::Owned(v)
                }
            });
        }
        self.store.read(start, cbytes)
    }

    /// The special value chunk `i` stands for (`None` for data), reading only its header.
    pub fn chunk_special(&self, i: usize) -> Result<SpecialValue> {
        match index::entry(self.offsets[i])? {
            Entry::Special(kind) => Ok(kind),
            Entry::At(at) => {
                let head = match &self.store {
                    Store::Dir { .. } => {
                        Cow::Owned(self.store.read_chunk_file(at, self.max_chunk_len())?)
                    }
                    _ => {
                        let start = self.header.header_len as u64 + at;
                        let len = (chunk::EXTENDED_HEADER_LEN as u64)
                            .min(self.data_end().saturating_sub(start));
                        self.store.read(start, len)?
                    }
                };
                ChunkHeader::parse_prefix(&head)?.special()
            }
        }
    }

    /// The uncompressed size of chunk `i`.
    pub fn chunk_nbytes(&self, i: usize) -> Result<usize> {
        match index::entry(self.offsets[i])? {
            Entry::Special(_) => self.special_nbytes(i),
            Entry::At(_) => match self.chunk_data(i)? {
                ChunkData::Stored(b) => Ok(ChunkHeader::parse(&b)?.nbytes),
                ChunkData::Special(_, n) => Ok(n),
            },
        }
    }
}

/// Checks a stored chunk the way c-blosc2 does before using it.
fn check_stored_chunk(bytes: &[u8]) -> Result<()> {
    let h = ChunkHeader::parse(bytes)?;
    if h.cbytes < chunk::EXTENDED_HEADER_LEN {
        bail!(
            corrupt,
            "stored chunk of {} bytes is shorter than a Blosc2 header",
            h.cbytes
        );
    }
    Ok(())
}

/// Computes the read bounds of contiguous chunks: the distance from each chunk to the next one
/// in file order (or to the end of the data region).
pub fn compute_spans(offsets: &[i64], data_len: u64) -> Vec<u32> {
    let mut spans = vec![0u32; offsets.len()];
    let mut order: Vec<(u64, usize)> = offsets
        .iter()
        .enumerate()
        .filter(|(_, &o)| o >= 0)
        .map(|(i, &o)| (o as u64, i))
        .collect();
    if !order.windows(2).all(|w| w[0].0 <= w[1].0) {
        order.sort_unstable();
    }
    for (k, &(off, i)) in order.iter().enumerate() {
        let next = order.get(k + 1).map_or(data_len, |&(o, _)| o.max(off));
        spans[i] = (next.saturating_sub(off)).min(u64::from(u32::MAX)) as u32;
    }
    spans
}
