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
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::OnceLock;

use crate::chunk::{self, ChunkHeader, SpecialValue};
use crate::error::{Error, Result};
use index::Entry;

/// The blocks of a chunk a partial read needs ([`Frame::read_chunk_blocks`]).
#[derive(Clone, Debug)]
pub enum Wanted<'a> {
    /// These blocks.
    Blocks(&'a [usize]),
    /// The blocks that hold these bytes of the decoded chunk.
    Bytes(std::ops::Range<usize>),
}

/// A parsed frame.
#[derive(Debug)]
pub struct Frame {
    pub store: Store,
    pub header: FrameHeader,
    /// Number of chunks (known at open from the index chunk's header).
    nchunks: usize,
    /// The index, decoded when first needed: opening a frame of any size reads only its
    /// header, trailer and the index chunk's header, as c-blosc2 does.
    index: OnceLock<Index>,
    /// Where the index is read from while it is not loaded.
    index_source: Option<IndexSource>,
    /// Chunk lookups served from single index blocks so far (see [`Frame::locate`]).
    entry_lookups: AtomicUsize,
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

/// The chunk index of a frame.
#[derive(Clone, Debug)]
pub enum Index {
    /// Per chunk, its raw index value (offset, chunk-file id, or special) and an upper bound
    /// of its stored length (contiguous frames), so a chunk is read with one positioned read;
    /// the bound is 0 for special entries and sparse frames.
    List { offsets: Vec<i64>, spans: Vec<u32> },
    /// Every chunk has the same raw value. c-blosc2's fill_special writes the index as one
    /// repeated-value chunk, so a few bytes can stand for 2^28 chunks: kept as that value,
    /// never expanded for reading.
    Uniform { raw: i64, span: u32, len: usize },
}

impl Default for Index {
    fn default() -> Index {
        Index::List {
            offsets: Vec::new(),
            spans: Vec::new(),
        }
    }
}

impl Index {
    pub fn len(&self) -> usize {
        match self {
            Index::List { offsets, .. } => offsets.len(),
            Index::Uniform { len, .. } => *len,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The raw index value of chunk `i` (< `len()`).
    pub fn raw(&self, i: usize) -> i64 {
        match self {
            Index::List { offsets, .. } => offsets[i],
            Index::Uniform { raw, .. } => *raw,
        }
    }

    /// The stored-length bound of chunk `i` (< `len()`).
    pub fn span(&self, i: usize) -> u32 {
        match self {
            Index::List { spans, .. } => spans[i],
            Index::Uniform { span, .. } => *span,
        }
    }

    /// The index as per-chunk lists, for a change (this expands a uniform index).
    pub fn to_lists(&self) -> (Vec<i64>, Vec<u32>) {
        match self {
            Index::List { offsets, spans } => (offsets.clone(), spans.clone()),
            Index::Uniform { raw, span, len } => (vec![*raw; *len], vec![*span; *len]),
        }
    }
}

/// The index chunk of a frame not decoded yet, read when the frame was opened (a writer in
/// another process may overwrite it in place once it commits a newer state), and the number
/// of entries it must decode to.
#[derive(Clone, Debug)]
pub struct IndexSource {
    pub bytes: Vec<u8>,
    pub nchunks: usize,
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
        self.nchunks
    }

    /// A frame over `store` with a loaded index.
    pub fn with_index(
        store: Store,
        header: FrameHeader,
        index: Index,
        vlmeta: Vec<Vlmeta>,
        trailer_len: u64,
        vl_blocks: bool,
        legacy: bool,
    ) -> Frame {
        Frame {
            store,
            header,
            nchunks: index.len(),
            index: OnceLock::from(index),
            index_source: None,
            entry_lookups: AtomicUsize::new(0),
            vlmeta,
            trailer_len,
            vl_blocks,
            dead_bytes: 0,
            legacy,
        }
    }

    /// A frame whose index is read from `source` when first needed.
    pub fn with_lazy_index(
        store: Store,
        header: FrameHeader,
        source: IndexSource,
        vlmeta: Vec<Vlmeta>,
        trailer_len: u64,
        vl_blocks: bool,
    ) -> Frame {
        Frame {
            store,
            header,
            nchunks: source.nchunks,
            index: OnceLock::new(),
            index_source: Some(source),
            entry_lookups: AtomicUsize::new(0),
            vlmeta,
            trailer_len,
            vl_blocks,
            dead_bytes: 0,
            legacy: false,
        }
    }

    /// The index, read and validated on first use (errors are reported, not cached).
    pub fn index(&self) -> Result<&Index> {
        if let Some(ix) = self.index.get() {
            return Ok(ix);
        }
        let ix = match &self.index_source {
            Some(src) => self.load_index(src)?,
            None => Index::default(),
        };
        Ok(self.index.get_or_init(|| ix))
    }

    /// The raw index value of chunk `i` and a bound of its stored length (0: unknown).
    ///
    /// The first few lookups of a frame opened with its index unread decode only the index
    /// block that holds the entry, as c-blosc2 does for every lookup: opening a frame of
    /// 100,000 chunks to read one of them decodes 16 KiB of index, not 800 KB. After those,
    /// the whole index is loaded and checked once (for 100,000 chunks it costs about ten
    /// single lookups, each of which reads the whole compressed index).
    fn locate(&self, i: usize) -> Result<(i64, u32)> {
        const SINGLE_LOOKUPS: usize = 4;
        if let (None, Some(src)) = (self.index.get(), &self.index_source) {
            if self.entry_lookups.fetch_add(1, Ordering::Relaxed) < SINGLE_LOOKUPS {
                if let Some(raw) = self.load_entry(src, i)? {
                    return Ok((raw, 0));
                }
            }
        }
        let ix = self.index()?;
        Ok((ix.raw(i), ix.span(i)))
    }

    /// Replaces the index (after a commit).
    pub fn set_index(&mut self, ix: Index) {
        self.nchunks = ix.len();
        self.index = OnceLock::from(ix);
        self.index_source = None;
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
                Error::invalid(format_args!(
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
            return self.lone_special_nbytes(i);
        }
        let cs = cs as i64;
        let n = self.nchunks();
        if i + 1 == n && self.header.nbytes % cs != 0 {
            return Ok((self.header.nbytes % cs) as usize);
        }
        Ok(cs as usize)
    }

    /// The size of special index entry `i` of a frame of variable-length chunks. c-blosc2
    /// writes a chunk of zeros (NaNs...) appended to such a frame as an index entry alone,
    /// which carries no size (and it then cannot open the frame). Where that entry is the
    /// frame's only one, its size is what the header's nbytes leaves after the other chunks.
    fn lone_special_nbytes(&self, i: usize) -> Result<usize> {
        let ix = self.index()?;
        let mut others = 0i64;
        for j in (0..ix.len()).filter(|&j| j != i) {
            match index::entry(ix.raw(j))? {
                Entry::Special(_) => bail!(
                    corrupt,
                    "chunk {i}: a special index entry in a frame with variable-length chunks has no size (and is not the frame's only one)"
                ),
                Entry::At(at) => others += self.stored_header(j, at)?.nbytes() as i64,
            }
        }
        let left = self.header.nbytes - others;
        if !(0..=chunk::MAX_BUFFERSIZE as i64).contains(&left) {
            bail!(
                corrupt,
                "chunk {i}: a special index entry without a size, and the frame's nbytes ({}) leaves {left} bytes for it",
                self.header.nbytes
            );
        }
        Ok(left as usize)
    }

    /// The stored bytes of chunk `i`, or the special value it stands for.
    pub fn chunk_data(&self, i: usize) -> Result<ChunkData<'_>> {
        let (raw, span) = self.locate(i)?;
        match index::entry(raw)? {
            Entry::Special(kind) => Ok(ChunkData::Special(kind, self.special_nbytes(i)?)),
            Entry::At(at) => Ok(ChunkData::Stored(self.stored_chunk(i, at, span)?)),
        }
    }

    /// The checked bytes of stored chunk `i`, at `at` (an offset or a chunk-file id).
    fn stored_chunk(&self, i: usize, at: u64, span: u32) -> Result<Cow<'_, [u8]>> {
        let bytes = match &self.store {
            Store::Dir { .. } => Cow::Owned(self.store.read_chunk_file(at, self.max_chunk_len())?),
            _ => self.read_contiguous_chunk(i, at, span)?,
        };
        check_stored_chunk(&bytes).map_err(|e| e.context(format_args!("chunk {i}")))?;
        Ok(bytes)
    }

    /// Reads into the start of `buf` (grown to the chunk's size if shorter, never shrunk)
    /// only what decoding the blocks `want` names of chunk `i` needs: the header, the block
    /// starts and those blocks' streams; the rest of `buf` keeps whatever it held. This is
    /// how a slab read costs about the blocks it touches, not whole chunks. Returns the
    /// chunk's length, or None, reading nothing more, where the whole chunk should be read
    /// instead: memory and sparse frames, special entries, and chunks where it does not pay
    /// (most blocks wanted, dictionaries, variable-length blocks) or that look unusual (the
    /// full read's checks then report them).
    pub fn read_chunk_blocks(
        &self,
        i: usize,
        want: Wanted<'_>,
        buf: &mut Vec<u8>,
    ) -> Result<Option<usize>> {
        match (&self.store, index::entry(self.locate(i)?.0)?) {
            (Store::File { .. }, Entry::At(off)) => {
                let Some(cbytes) = self.read_blocks(off, want, buf)? else {
                    return Ok(None);
                };
                check_stored_chunk(&buf[..cbytes])
                    .map_err(|e| e.context(format_args!("chunk {i}")))?;
                Ok(Some(cbytes))
            }
            _ => Ok(None),
        }
    }

    /// The partial read behind [`Frame::read_chunk_blocks`].
    fn read_blocks(&self, off: u64, want: Wanted<'_>, buf: &mut Vec<u8>) -> Result<Option<usize>> {
        const FIRST_READ: u64 = 4096;
        let start = self.header.header_len as u64 + off;
        let end = self.data_end();
        let avail = end.saturating_sub(start);
        if avail < chunk::EXTENDED_HEADER_LEN as u64 {
            return Ok(None);
        }
        let first = self.store.read(start, FIRST_READ.min(avail))?;
        let Ok(h) = ChunkHeader::parse_prefix(&first) else {
            return Ok(None);
        };
        let cbytes = h.cbytes();
        let plain = matches!(h.special(), Ok(SpecialValue::None));
        if !plain || !h.is_extended() || h.vl_blocks() || h.use_dict() || h.blocksize() == 0 {
            return Ok(None);
        }
        if cbytes < chunk::EXTENDED_HEADER_LEN
            || cbytes as u64 > avail
            || cbytes as u64 > self.max_chunk_len()
        {
            return Ok(None);
        }
        let hl = h.header_len();
        let nblocks = h.nbytes().div_ceil(h.blocksize());
        let starts_end = if h.memcpyed() { hl } else { hl + 4 * nblocks };
        if starts_end > cbytes {
            return Ok(None);
        }
        // What a previous chunk left in `buf` stays (no zeroing): only the ranges read below
        // are decoded. Truncating it to each chunk's size made the next, longer chunk zero
        // the difference: 4% of a one-element array read.
        if buf.len() < cbytes {
            buf.resize(cbytes, 0);
        }
        let head = first.len().min(cbytes);
        buf[..head].copy_from_slice(&first[..head]);
        if starts_end > head {
            self.store
                .read_into(start + head as u64, &mut buf[head..starts_end])?;
        }
        // Byte ranges of the wanted blocks (block 0 too when a delta filter refers to it).
        let mut blocks: Vec<usize> = match want {
            Wanted::Blocks(list) => list.iter().copied().filter(|&j| j < nblocks).collect(),
            Wanted::Bytes(r) => {
                (r.start / h.blocksize()..r.end.div_ceil(h.blocksize()).min(nblocks)).collect()
            }
        };
        if h.filters().contains(&crate::filters::DELTA) {
            blocks.push(0);
        }
        blocks.sort_unstable();
        blocks.dedup();
        let mut ranges: Vec<std::ops::Range<usize>> = Vec::with_capacity(blocks.len());
        if h.memcpyed() {
            for &j in &blocks {
                let a = hl + j * h.blocksize();
                ranges.push(a.min(cbytes)..(a + h.blocksize()).min(cbytes));
            }
        } else {
            let bstart = |j: usize| {
                let at = hl + 4 * j;
                i32::from_le_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
            };
            let mut sorted: Vec<usize> = Vec::with_capacity(nblocks);
            for j in 0..nblocks {
                let b = bstart(j);
                if b < starts_end as i32 || b as usize >= cbytes {
                    return Ok(None);
                }
                sorted.push(b as usize);
            }
            sorted.sort_unstable();
            for &j in &blocks {
                let a = bstart(j) as usize;
                let next = sorted.partition_point(|&b| b <= a);
                ranges.push(a..sorted.get(next).copied().unwrap_or(cbytes));
            }
        }
        ranges.sort_unstable_by_key(|r| r.start);
        let wanted: usize = ranges.iter().map(|r| r.len()).sum();
        if wanted * 2 > cbytes {
            return Ok(None);
        }
        // Adjacent blocks become one read; bytes below `covered` are already in place.
        let mut covered = head;
        let mut pending: Option<std::ops::Range<usize>> = None;
        for r in ranges {
            let a = r.start.max(covered);
            if a >= r.end {
                continue;
            }
            pending = match pending {
                Some(p) if p.end >= a => Some(p.start..r.end),
                Some(p) => {
                    self.store
                        .read_into(start + p.start as u64, &mut buf[p.clone()])?;
                    Some(a..r.end)
                }
                None => Some(a..r.end),
            };
            covered = r.end;
        }
        if let Some(p) = pending {
            self.store
                .read_into(start + p.start as u64, &mut buf[p.clone()])?;
        }
        Ok(Some(cbytes))
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

    /// Reads a chunk of a contiguous frame with one positioned read of `span` bytes (a second
    /// one only if its header says it is longer).
    fn read_contiguous_chunk(&self, i: usize, off: u64, span: u32) -> Result<Cow<'_, [u8]>> {
        let start = self.header.header_len as u64 + off;
        let end = self.data_end();
        let span = u64::from(span).min(end - start).min(self.max_chunk_len());
        let first = self
            .store
            .read(start, span.max(chunk::EXTENDED_HEADER_LEN as u64))?;
        let h =
            ChunkHeader::parse_prefix(&first).map_err(|e| e.context(format_args!("chunk {i}")))?;
        let cbytes = h.cbytes() as u64;
        self.check_extent(i, off, cbytes)?;
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
        match index::entry(self.locate(i)?.0)? {
            Entry::Special(kind) => Ok(kind),
            Entry::At(at) => self.stored_header(i, at)?.special(),
        }
    }

    /// The uncompressed size of chunk `i`, reading only its header.
    pub fn chunk_nbytes(&self, i: usize) -> Result<usize> {
        match index::entry(self.locate(i)?.0)? {
            Entry::Special(_) => self.special_nbytes(i),
            Entry::At(at) => Ok(self.stored_header(i, at)?.nbytes()),
        }
    }

    /// The header of stored chunk `i` at `at` (an offset or a chunk-file id); of a contiguous
    /// frame only the header is read, and its extent checked as a full read checks it.
    fn stored_header(&self, i: usize, at: u64) -> Result<ChunkHeader> {
        let head = match &self.store {
            Store::Dir { .. } => Cow::Owned(self.store.read_chunk_file(at, self.max_chunk_len())?),
            _ => {
                let start = self.header.header_len as u64 + at;
                let len =
                    (chunk::EXTENDED_HEADER_LEN as u64).min(self.data_end().saturating_sub(start));
                self.store.read(start, len)?
            }
        };
        let h =
            ChunkHeader::parse_prefix(&head).map_err(|e| e.context(format_args!("chunk {i}")))?;
        if !self.is_sparse() {
            self.check_extent(i, at, h.cbytes() as u64)?;
        }
        Ok(h)
    }

    /// Checks that `cbytes` stored at offset `off` fit in the frame's data.
    fn check_extent(&self, i: usize, off: u64, cbytes: u64) -> Result<()> {
        let start = self.header.header_len as u64 + off;
        if cbytes < chunk::EXTENDED_HEADER_LEN as u64 || start + cbytes > self.data_end() {
            bail!(
                corrupt,
                "chunk {i}: {cbytes} bytes at offset {off} run past the frame's data ({} bytes)",
                self.header.cbytes
            );
        }
        Ok(())
    }
}

/// Checks a stored chunk the way c-blosc2 does before using it.
fn check_stored_chunk(bytes: &[u8]) -> Result<()> {
    let h = ChunkHeader::parse(bytes)?;
    if h.cbytes() < chunk::EXTENDED_HEADER_LEN {
        bail!(
            corrupt,
            "stored chunk of {} bytes is shorter than a Blosc2 header",
            h.cbytes()
        );
    }
    Ok(())
}

/// Computes the read bounds of contiguous chunks: the distance from each chunk to the next one
/// in file order (or to the end of the data region).
pub fn compute_spans(offsets: &[i64], data_len: u64) -> Vec<u32> {
    let span = |from: u64, to: u64| to.saturating_sub(from).min(u64::from(u32::MAX)) as u32;
    // Ascending from a non-negative first value: every chunk is stored, in index order (as
    // appends leave them), and runs to the next one.
    if offsets.first().is_none_or(|&o| o >= 0) && offsets.windows(2).all(|w| w[0] <= w[1]) {
        let mut spans = Vec::with_capacity(offsets.len());
        spans.extend(offsets.windows(2).map(|w| span(w[0] as u64, w[1] as u64)));
        spans.extend(offsets.last().map(|&o| span(o as u64, data_len)));
        return spans;
    }
    let mut spans = vec![0u32; offsets.len()];
    let mut order: Vec<(u64, usize)> = offsets
        .iter()
        .enumerate()
        .filter(|(_, &o)| o >= 0)
        .map(|(i, &o)| (o as u64, i))
        .collect();
    order.sort_unstable();
    for (k, &(off, i)) in order.iter().enumerate() {
        let next = order.get(k + 1).map_or(data_len, |&(o, _)| o);
        spans[i] = span(off, next);
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each stored chunk's distance to the next stored one in (offset, position) order, or to
    /// the end of the data, found the slow way.
    fn spans_by_search(offsets: &[i64], data_len: u64) -> Vec<u32> {
        let key = |i: usize| (offsets[i] as u64, i);
        (0..offsets.len())
            .map(|i| {
                if offsets[i] < 0 {
                    return 0;
                }
                let next = (0..offsets.len())
                    .filter(|&j| offsets[j] >= 0 && key(j) > key(i))
                    .map(|j| offsets[j] as u64)
                    .min()
                    .unwrap_or(data_len);
                (next - offsets[i] as u64).min(u64::from(u32::MAX)) as u32
            })
            .collect()
    }

    #[test]
    fn spans_reach_the_next_stored_chunk() {
        let special = index::special_raw(SpecialValue::Zero);
        let cases: [&[i64]; 7] = [
            &[],
            &[0, 100, 250, 251, 400],
            &[0, 100, 100, 300],
            &[300, 0, 100, 200],
            &[0, special, 100, special, 300],
            &[special, special],
            &[0, 1 << 40],
        ];
        for offsets in cases {
            // Past the last chunk by a little; by more than a u32 for the last case.
            let data_len = offsets.iter().max().map_or(0, |&o| o.max(0) as u64) * 2 + 37;
            assert_eq!(
                compute_spans(offsets, data_len),
                spans_by_search(offsets, data_len),
                "{offsets:?}"
            );
        }
    }
}
