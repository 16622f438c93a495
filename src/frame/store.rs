//! Where a frame's bytes live, how a frame is opened from them, and how changes are committed.
//!
//! # Nothing lost: the commit order
//!
//! A contiguous frame file is never overwritten where the committed header points. The
//! commit point of every change is one small write of the fixed 87-byte header (frame_len,
//! nbytes, cbytes, chunksize, flags) at the frame's start: a writer killed before it leaves the
//! old header, which still describes the old frame byte for byte (readers, c-blosc2 included,
//! find the trailer through the header's frame_len and ignore what lies past it); killed after
//! it, the new frame is complete.
//!
//! A change lays the frame out as c-blosc2 does: a new chunk goes where the committed index
//! starts (`header_len + cbytes`), followed by the new index and trailer. Those overwrite the
//! committed index and trailer, so a change takes two commits: first a copy of the committed
//! index and trailer is written past both the old and the new end, and a header pointing at
//! the copy is committed (the same frame, with dead bytes before its index); then the new
//! chunk, index and trailer take the old index's place and the new header is committed; then
//! the copy, past the new end, is cut off. Appends thus leave no dead space; the bytes of
//! chunks replaced or removed stay dead (never overwritten, so a reader of an older state
//! still finds them) until dead space outgrows the live data and the frame is rewritten
//! compactly into a temporary file that replaces the original with one atomic rename.
//! Compaction follows a committed change, so its failure (a full disk) is not that change's.
//! A reader reads the index when it opens the frame: the bytes overwritten later are no
//! longer its state's, and an open that saw the header change under it is done again.
//!
//! An empty frame (no chunks) keeps its trailer right after the header, where c-blosc2 looks
//! for it, so it cannot be moved aside: an empty frame file is replaced whole (it and its
//! first chunk), through the same atomic rename; inside a larger file, where it cannot be,
//! its first chunk goes past the trailer, which stays as dead bytes. In memory, changes are
//! written in place.
//!
//! Sparse frames write each new chunk to a new file (never over a file the committed index
//! names), then replace `chunks.b2frame` through a temporary file and a rename, and only then
//! remove the files of chunks that left the index.
//!
//! No fsync is done by default: the order above survives the writer being killed (the page
//! cache outlives the process). Surviving power loss needs the `sync` option, which syncs
//! the data before the commit write and the commit write itself, and the directory after
//! files are created or renamed. A commit whose sync fails is undone (the old header written
//! back, the old index file renamed back), so the failed call leaves the frame as it was.
//!
//! # One writer: the lock
//!
//! A handle that may write holds an exclusive advisory lock (`flock`) on the frame's file or
//! directory until it closes, so a second writer (another process, or another handle of this
//! one) is refused at open instead of overwriting what the first commits. Readers take no
//! lock. A file that replaces the frame's (compaction, creation) is locked before it takes the
//! path. The kernel drops the lock with the process, so a killed writer leaves none behind.
//! c-blosc2 neither takes nor honours it.

use std::borrow::Cow;
use std::fs::{self, File, OpenOptions};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use super::header::{self, FrameHeader};
use super::{compute_spans, index, trailer, Frame, Index, IndexSource, Vlmeta};
use crate::error::{Error, Result};

/// The bytes underneath a frame.
#[derive(Debug)]
pub enum Store {
    /// A contiguous frame in memory (its bytes from the header to the end of the trailer,
    /// possibly with dead space).
    Mem(Vec<u8>),
    /// A contiguous frame in a file, starting at byte `base`.
    File {
        file: File,
        path: PathBuf,
        base: u64,
        writable: bool,
        sync: bool,
    },
    /// A sparse frame: a directory with `chunks.b2frame` and one file per chunk.
    Dir {
        dir: PathBuf,
        /// The directory, open, holding the writer's lock (writable handles only).
        lock: Option<File>,
        writable: bool,
        sync: bool,
        /// Id for the next chunk file.
        next_id: u64,
    },
}

/// Chunk file ids of a sparse frame not in use, handed out smallest first.
///
/// Sparse frames take fresh ids, so that a reader in another process racing with a commit
/// finds a file gone rather than another chunk under the id it read. But c-blosc2 checks
/// every index entry of any frame against its chunk bytes (`offset <= cbytes - 32`), file
/// ids included: frames of small, well-compressed chunks rewritten a few times outran that
/// and no longer opened in c-blosc2. Where fresh ids would, ids come from here instead.
struct FreeIds {
    taken: Vec<bool>,
    next: usize,
}

impl FreeIds {
    /// Ids `held` (negative ones are special values, not files) are in use.
    fn new(held: impl Iterator<Item = i64>, count: usize) -> FreeIds {
        let mut taken = vec![false; count + 1];
        for id in held {
            if let Some(t) = usize::try_from(id).ok().and_then(|i| taken.get_mut(i)) {
                *t = true;
            }
        }
        FreeIds { taken, next: 0 }
    }

    fn take(&mut self) -> i64 {
        while self.taken.get(self.next) == Some(&true) {
            self.next += 1;
        }
        if self.next == self.taken.len() {
            self.taken.push(false);
        }
        self.taken[self.next] = true;
        self.next as i64
    }
}

/// Copies chunk file `from` to `to` in `dir` (a chunk moving to a lower id).
fn copy_chunk_file(dir: &Path, from: i64, to: i64, sync: bool) -> Result<()> {
    let src = dir.join(chunk_file_name(from as u64));
    let len = fs::metadata(&src)
        .map_err(|e| io_err("cannot stat", &src, e))?
        .len();
    if len > i32::MAX as u64 {
        bail!(
            corrupt,
            "{}: {len} bytes, more than a chunk holds",
            src.display()
        );
    }
    let data = fs::read(&src).map_err(|e| io_err("cannot read", &src, e))?;
    write_file(&dir.join(chunk_file_name(to as u64)), &data, sync)
}

/// The index file of a sparse frame.
pub const SPARSE_INDEX: &str = "chunks.b2frame";

fn io_err(what: impl std::fmt::Display, path: &Path, e: std::io::Error) -> Error {
    Error::io(format!("{what} {}", path.display()), e)
}

/// A chunk file's name in a sparse frame.
pub fn chunk_file_name(id: u64) -> String {
    format!("{id:08X}.chunk")
}

impl Store {
    /// Reads `len` bytes at `pos` (relative to the frame start; for sparse frames, in
    /// `chunks.b2frame`). Memory frames lend their bytes.
    pub fn read(&self, pos: u64, len: u64) -> Result<Cow<'_, [u8]>> {
        match self {
            Store::Mem(buf) => {
                let end = pos
                    .checked_add(len)
                    .filter(|&e| e <= buf.len() as u64)
                    .ok_or_else(|| {
                        Error::corrupt(format_args!(
                            "frame: {len} bytes at {pos} run past the end ({} bytes)",
                            buf.len()
                        ))
                    })?;
                Ok(Cow::Borrowed(&buf[pos as usize..end as usize]))
            }
            Store::File {
                file, path, base, ..
            } => Ok(Cow::Owned(read_exact_at(file, path, base + pos, len)?)),
            Store::Dir { dir, .. } => {
                let path = dir.join(SPARSE_INDEX);
                let file = File::open(&path).map_err(|e| io_err("cannot open", &path, e))?;
                Ok(Cow::Owned(read_exact_at(&file, &path, pos, len)?))
            }
        }
    }

    /// Fills `dst` with the bytes at `pos` of a contiguous frame (a file or memory).
    pub fn read_into(&self, pos: u64, dst: &mut [u8]) -> Result<()> {
        match self {
            Store::File {
                file, path, base, ..
            } => file.read_exact_at(dst, base + pos).map_err(|e| {
                if e.kind() == std::io::ErrorKind::UnexpectedEof {
                    Error::corrupt(format_args!(
                        "{}: {} bytes at offset {pos} run past the end of the file",
                        path.display(),
                        dst.len()
                    ))
                } else {
                    io_err("cannot read", path, e)
                }
            }),
            _ => {
                let src = self.read(pos, dst.len() as u64)?;
                dst.copy_from_slice(&src);
                Ok(())
            }
        }
    }

    /// Reads a sparse frame's chunk file, refusing files longer than `max` bytes.
    pub fn read_chunk_file(&self, id: u64, max: u64) -> Result<Vec<u8>> {
        let Store::Dir { dir, .. } = self else {
            bail!(invalid, "chunk files exist only in sparse frames");
        };
        let path = dir.join(chunk_file_name(id));
        let file = File::open(&path).map_err(|e| io_err("cannot open chunk file", &path, e))?;
        let len = file
            .metadata()
            .map_err(|e| io_err("cannot stat", &path, e))?
            .len();
        if len > max {
            bail!(
                corrupt,
                "chunk file {} holds {len} bytes, more than a chunk of this frame can ({max})",
                path.display()
            );
        }
        read_exact_at(&file, &path, 0, len)
    }

    pub fn writable(&self) -> bool {
        match self {
            Store::Mem(_) => true,
            Store::File { writable, .. } | Store::Dir { writable, .. } => *writable,
        }
    }

    /// Writes `data` at `pos` (contiguous frames).
    fn write(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        match self {
            Store::Mem(buf) => {
                let end = pos as usize + data.len();
                if buf.len() < end {
                    buf.resize(end, 0);
                }
                buf[pos as usize..end].copy_from_slice(data);
                Ok(())
            }
            Store::File {
                file, path, base, ..
            } => file
                .write_all_at(data, *base + pos)
                .map_err(|e| io_err("cannot write", path, e)),
            Store::Dir { .. } => bail!(invalid, "sparse frames are not written in place"),
        }
    }

    /// Drops the bytes past `end`, the end of a contiguous frame, where they are dead: in
    /// memory, and in a file of its own (a frame inside a larger file keeps what follows it).
    /// Failing to cut leaves dead bytes that nothing reads, so failures are ignored.
    fn cut(&mut self, end: u64) {
        match self {
            Store::Mem(buf) => buf.truncate(end as usize),
            Store::File { file, base: 0, .. } => {
                let _ = file.set_len(end);
            }
            _ => {}
        }
    }

    /// Points the store at `to`, where its file or directory was renamed to.
    pub fn relocate(&mut self, to: &Path) {
        match self {
            Store::Mem(_) => {}
            Store::File { path, .. } => *path = to.to_path_buf(),
            Store::Dir { dir, .. } => *dir = to.to_path_buf(),
        }
    }

    /// Whether commits are synced to disk.
    fn syncs(&self) -> bool {
        match self {
            Store::Mem(_) => false,
            Store::File { sync, .. } | Store::Dir { sync, .. } => *sync,
        }
    }

    fn sync(&self) -> Result<()> {
        if let Store::File {
            file,
            path,
            sync: true,
            ..
        } = self
        {
            file.sync_data()
                .map_err(|e| io_err("cannot sync", path, e))?;
        }
        Ok(())
    }

    /// Writes `bytes` over `old`, the frame's first bytes: the commit point of an in-place
    /// change, synced when the store syncs. If that sync fails, `old` is written back, so the
    /// failed call leaves the frame as it was.
    fn write_start(&mut self, bytes: &[u8], old: &[u8]) -> Result<()> {
        self.write(0, bytes)?;
        self.sync().inspect_err(|_| {
            let _ = self.write(0, old);
        })
    }
}

/// Reads exactly `len` bytes at `pos`, or fails with the path named.
fn read_exact_at(file: &File, path: &Path, pos: u64, len: u64) -> Result<Vec<u8>> {
    let n = usize::try_from(len)
        .map_err(|_| Error::no_memory(format_args!("{len} bytes cannot be read at once")))?;
    let mut buf = vec![0u8; n];
    file.read_exact_at(&mut buf, pos).map_err(|e| {
        if e.kind() == std::io::ErrorKind::UnexpectedEof {
            Error::corrupt(format_args!(
                "{}: {len} bytes at offset {pos} run past the end of the file",
                path.display()
            ))
        } else {
            io_err("cannot read", path, e)
        }
    })?;
    Ok(buf)
}

/// The frame being built by a change, before it is committed.
pub struct Pending {
    pub header: FrameHeader,
    pub offsets: Vec<i64>,
    pub spans: Vec<u32>,
    pub vlmeta: Vec<Vlmeta>,
    /// Index values that left the index (their stored bytes become dead / their files go).
    pub removed: Vec<(i64, u32)>,
    /// Write an index of equal values as one repeated-value chunk (a special fill of an empty
    /// frame, as c-blosc2 writes it) rather than compressed.
    pub repeated_index: bool,
}

impl Pending {
    /// The index chunk of the pending state.
    fn encode_index(&self) -> Result<Vec<u8>> {
        index_chunk(&self.offsets, self.repeated_index)
    }
}

/// The index chunk for `offsets`: none for no chunk; with `repeated`, equal values as one
/// repeated-value chunk; else compressed.
fn index_chunk(offsets: &[i64], repeated: bool) -> Result<Vec<u8>> {
    match offsets.first() {
        None => Ok(Vec::new()),
        Some(&raw) if repeated && offsets.iter().all(|&o| o == raw) => {
            index::encode_repeated(raw, offsets.len())
        }
        Some(_) => index::encode(offsets),
    }
}

impl Frame {
    /// Opens a frame from a path: a directory is a sparse frame, a file a contiguous one
    /// starting at `offset`.
    pub fn open_path(path: &Path, offset: u64, writable: bool, sync: bool) -> Result<Frame> {
        let meta = fs::metadata(path).map_err(|e| io_err("cannot open", path, e))?;
        if meta.is_dir() {
            if offset != 0 {
                bail!(
                    invalid,
                    "{}: a sparse frame (a directory) has no offset",
                    path.display()
                );
            }
            let lock = if writable {
                Some(lock_dir(path)?)
            } else {
                None
            };
            // The index file is read once, whole: a writer replaces it by rename, so the
            // header, index and trailer parsed all come from one state.
            let index_path = path.join(SPARSE_INDEX);
            let image = fs::read(&index_path).map_err(|e| io_err("cannot read", &index_path, e))?;
            let size = image.len() as u64;
            let mut f = Frame::parse(Store::Mem(image), size, true)
                .map_err(|e| e.context(index_path.display()))?;
            if f.legacy {
                bail!(
                    format,
                    "{}: a pre-2.0 frame, which is never sparse",
                    index_path.display()
                );
            }
            f.store = Store::Dir {
                dir: path.to_path_buf(),
                lock,
                writable,
                sync,
                next_id: 0,
            };
            let ix = f.index()?;
            let next = (0..ix.len())
                .map(|i| ix.raw(i))
                .filter(|&o| o >= 0)
                .max()
                .map_or(0, |m| m as u64 + 1);
            if let Store::Dir { next_id, .. } = &mut f.store {
                *next_id = next;
            }
            return Ok(f);
        }
        // A writer in another process rewrites the committed index and trailer in place once
        // a newer header is committed (see `write_tail`): a parse that saw the header change
        // under it is done again.
        let mut attempts = 0;
        loop {
            let file = OpenOptions::new()
                .read(true)
                .write(writable)
                .open(path)
                .map_err(|e| io_err("cannot open", path, e))?;
            if writable {
                lock_for_writing(&file, path)?;
            }
            let size = file
                .metadata()
                .map_err(|e| io_err("cannot stat", path, e))?
                .len();
            if offset > size {
                bail!(
                    invalid,
                    "{}: offset {offset} is past the end of the file ({size} bytes)",
                    path.display()
                );
            }
            let probe = file
                .try_clone()
                .map_err(|e| io_err("cannot open", path, e))?;
            let fixed = |f: &File| -> Option<Vec<u8>> {
                let mut b = vec![0u8; header::FIXED_LEN];
                f.read_exact_at(&mut b, offset).ok().map(|()| b)
            };
            let before = fixed(&probe);
            let store = Store::File {
                file,
                path: path.to_path_buf(),
                base: offset,
                writable,
                sync,
            };
            let parsed = Frame::parse(store, size - offset, false);
            attempts += 1;
            if attempts < 4 && before.is_some() && fixed(&probe) != before {
                continue;
            }
            return parsed.map_err(|e| e.context(path.display()));
        }
    }

    /// Opens a contiguous frame held in memory (the buffer must be exactly the frame).
    pub fn open_buffer(buf: Vec<u8>) -> Result<Frame> {
        let len = buf.len() as u64;
        let f = Frame::parse(Store::Mem(buf), len, false)?;
        if f.header.frame_len != len {
            bail!(
                corrupt,
                "frame: frame_len {} differs from the buffer length {len}",
                f.header.frame_len
            );
        }
        Ok(f)
    }

    /// Parses a frame whose bytes (from the frame start) number `avail`.
    fn parse(store: Store, avail: u64, sparse: bool) -> Result<Frame> {
        if avail < header::FIXED_LEN as u64 {
            bail!(
                format,
                "not a Blosc2 frame: {avail} bytes is shorter than a frame header"
            );
        }
        let start = store.read(0, header::FIXED_LEN as u64)?;
        let legacy_marker = matches!(start[0], 0x9B | 0x9C) && &start[2..10] == header::MAGIC;
        // A current frame whose first byte was damaged into a legacy array marker reads as
        // current, as c-blosc2 (which never looks at that byte) reads it: the legacy layout
        // has other markers from byte 57 on.
        if legacy_marker && !header::has_current_markers(&start) {
            drop(start);
            return super::legacy::parse(store, avail);
        }
        let (header_len, frame_len) = FrameHeader::peek_lengths(&start)?;
        drop(start);
        if frame_len > avail {
            bail!(
                corrupt,
                "frame: frame_len {frame_len} exceeds the {avail} bytes available"
            );
        }
        let hbytes = store.read(0, header_len as u64)?;
        let header = FrameHeader::parse(&hbytes)?;
        drop(hbytes);
        if header.is_sparse() != sparse {
            bail!(
                format,
                "frame: frame type {} where a {} frame was expected",
                header.frame_type,
                if sparse { "sparse" } else { "contiguous" }
            );
        }
        // The trailer, found from the end.
        if frame_len < (header_len + trailer::MIN_LEN) as u64 {
            bail!(corrupt, "frame: frame_len {frame_len} leaves no room for a trailer after the {header_len}-byte header");
        }
        let tail = store.read(frame_len - 23, 23)?;
        let tlen = trailer::trailer_len_from_end(&tail)? as u64;
        drop(tail);
        if tlen > frame_len - header_len as u64 {
            bail!(corrupt, "frame: trailer_len {tlen} reaches into the header (frame_len {frame_len}, header_len {header_len})");
        }
        let tstart = frame_len - tlen;
        let vlmeta = trailer::parse(&store.read(tstart, tlen)?)?;

        // The index: its chunk header is checked now, its offsets are read when first needed.
        let nchunks_hint = header.nchunks_from_sizes();
        let vl_blocks = header.general_flags & header::VL_BLOCKS != 0;
        if nchunks_hint == Some(0) {
            return Ok(Frame::with_index(
                store,
                header,
                Index::default(),
                vlmeta,
                tlen,
                vl_blocks,
                false,
            ));
        }
        let ipos = if sparse {
            header_len as u64
        } else {
            (header_len as u64)
                .checked_add(header.cbytes as u64)
                .ok_or_else(|| Error::corrupt("frame: cbytes overflows"))?
        };
        if ipos + crate::chunk::EXTENDED_HEADER_LEN as u64 > tstart {
            bail!(
                corrupt,
                "frame index: position {ipos} (header_len {header_len} + cbytes {}) is past the trailer at {tstart}",
                if sparse { 0 } else { header.cbytes }
            );
        }
        let ih = crate::chunk::ChunkHeader::parse_prefix(
            &store.read(ipos, crate::chunk::EXTENDED_HEADER_LEN as u64)?,
        )
        .map_err(|e| e.context("frame index"))?;
        if ipos + ih.cbytes() as u64 > tstart {
            bail!(
                corrupt,
                "frame index: {} bytes at {ipos} run into the trailer at {tstart}",
                ih.cbytes()
            );
        }
        let nchunks = match nchunks_hint {
            Some(n) => {
                usize::try_from(n).map_err(|_| Error::corrupt("frame: chunk count overflows"))?
            }
            None => {
                if ih.nbytes() % 8 != 0 {
                    bail!(
                        corrupt,
                        "frame index: {} bytes is not a whole number of offsets",
                        ih.nbytes()
                    );
                }
                ih.nbytes() / 8
            }
        };
        if nchunks as i64 > header::MAX_NCHUNKS {
            bail!(
                corrupt,
                "frame: {nchunks} chunks exceed the maximum ({})",
                header::MAX_NCHUNKS
            );
        }
        // A special index chunk is held as its one value; any other is decoded whole.
        if ih.special()? == crate::chunk::SpecialValue::None {
            index::check_size(ih.nbytes(), ih.cbytes())?;
        }
        if ih.nbytes() != nchunks * 8 {
            bail!(
                corrupt,
                "frame index: decodes to {} bytes, expected {} for {nchunks} chunks",
                ih.nbytes(),
                nchunks * 8
            );
        }
        // Read now, decoded when first needed: the bytes of the state just opened, whatever
        // a writer commits after this.
        let source = IndexSource {
            bytes: store.read(ipos, ih.cbytes() as u64)?.into_owned(),
            nchunks,
        };
        Ok(Frame::with_lazy_index(
            store, header, source, vlmeta, tlen, vl_blocks,
        ))
    }

    /// The largest value a stored chunk's index entry may hold: a chunk header must fit before
    /// the end of the data; a chunk-file id has at most 8 hex digits.
    fn max_stored(&self) -> Option<u64> {
        if self.is_sparse() {
            Some(u64::from(u32::MAX))
        } else {
            (self.header.cbytes as u64).checked_sub(crate::chunk::EXTENDED_HEADER_LEN as u64)
        }
    }

    /// Checks index entry `raw` of chunk `i`.
    fn check_entry(&self, i: usize, raw: i64) -> Result<()> {
        let max_stored = self.max_stored();
        match index::entry(raw).map_err(|e| e.context(format_args!("chunk {i}")))? {
            index::Entry::At(v) if max_stored.is_some_and(|max| v <= max) => {}
            index::Entry::At(v) if self.is_sparse() => bail!(
                corrupt,
                "frame index: chunk {i} names file id {v}, beyond 8 hex digits"
            ),
            index::Entry::At(v) => bail!(
                corrupt,
                "frame index: offset {v} of chunk {i} is past the end of the data ({} bytes)",
                self.header.cbytes
            ),
            index::Entry::Special(_) => {}
        }
        Ok(())
    }

    /// Decodes and checks entry `i` alone (see [`index::decode_one`]).
    pub(super) fn load_entry(&self, src: &IndexSource, i: usize) -> Result<Option<i64>> {
        let raw = index::decode_one(&src.bytes, src.nchunks, i)?;
        if let Some(raw) = raw {
            self.check_entry(i, raw)?;
        }
        Ok(raw)
    }

    /// Decodes and validates the index from `src`.
    pub(super) fn load_index(&self, src: &IndexSource) -> Result<Index> {
        let sparse = self.is_sparse();
        let ibytes = &src.bytes[..];
        let data_len = self.header.cbytes as u64;
        if let Some(raw) = index::uniform_value(ibytes)? {
            self.check_entry(0, raw)?;
            let span = if sparse {
                0
            } else {
                compute_spans(&[raw], data_len)[0]
            };
            return Ok(Index::Uniform {
                raw,
                span,
                len: src.nchunks,
            });
        }
        let offsets = index::decode(ibytes, src.nchunks)?;
        // Most indexes hold stored chunks only: one comparison per entry tells (a special
        // entry is negative, so above the limit as u64), and `check_entry` names the first bad
        // one.
        if !self
            .max_stored()
            .is_some_and(|max| offsets.iter().all(|&o| o as u64 <= max))
        {
            for (i, &o) in offsets.iter().enumerate() {
                self.check_entry(i, o)?;
            }
        }
        let spans = if sparse {
            vec![0; offsets.len()]
        } else {
            compute_spans(&offsets, data_len)
        };
        Ok(Index::List { offsets, spans })
    }

    /// Starts a change from the committed state.
    pub fn pending(&self) -> Result<Pending> {
        let (offsets, spans) = self.index()?.to_lists();
        Ok(Pending {
            header: self.header.clone(),
            offsets,
            spans,
            vlmeta: self.vlmeta.clone(),
            removed: Vec::new(),
            repeated_index: false,
        })
    }

    /// Makes a change visible. `chunk` is a new chunk to store; `edit` receives its index
    /// value and stored length and turns the committed state into the new one.
    pub fn commit(
        &mut self,
        chunk: Option<&[u8]>,
        edit: impl FnOnce(&mut Pending, Option<(i64, u32)>) -> Result<()>,
    ) -> Result<()> {
        let chunks: Vec<&[u8]> = chunk.into_iter().collect();
        self.commit_many(&chunks, |p, locs| edit(p, locs.first().copied()))
    }

    /// [`Frame::commit`] with several new chunks stored at once: `edit` gets where each is
    /// (raw index value and length, in the order given), and the whole change is one commit.
    pub fn commit_many(
        &mut self,
        chunks: &[&[u8]],
        edit: impl FnOnce(&mut Pending, &[(i64, u32)]) -> Result<()>,
    ) -> Result<()> {
        if self.legacy {
            bail!(read_only, "legacy frames are read only");
        }
        if !self.store.writable() {
            bail!(read_only, "the frame was opened read-only");
        }
        match &self.store {
            Store::Dir { .. } => self.commit_sparse(chunks, edit),
            _ => self.commit_contiguous(chunks, edit),
        }
    }

    fn commit_contiguous(
        &mut self,
        chunks: &[&[u8]],
        edit: impl FnOnce(&mut Pending, &[(i64, u32)]) -> Result<()>,
    ) -> Result<()> {
        let header_len = self.header.header_len as u64;
        let old_end = self.header.frame_len;
        let was_empty = self.nchunks() == 0;
        let embedded = matches!(self.store, Store::File { base, .. } if base != 0);
        // The new chunk goes where c-blosc2 puts it: where the committed index (or an empty
        // frame's trailer) starts. An empty frame inside a larger file can neither move its
        // trailer (c-blosc2 looks for it right after the header) nor be replaced whole, so
        // there the chunk goes past the trailer, which becomes dead.
        let at = if was_empty && embedded {
            old_end
        } else {
            self.data_end_committed()
        };
        // Bytes left dead before the new chunks (an embedded empty frame's trailer).
        let skipped = at - self.data_end_committed();
        let mut locs = Vec::with_capacity(chunks.len());
        let mut end = at - header_len;
        for c in chunks {
            locs.push((end as i64, c.len() as u32));
            end += c.len() as u64;
        }
        let mut p = self.pending()?;
        edit(&mut p, &locs)?;
        p.header.has_vlmeta = !p.vlmeta.is_empty();
        p.header.set_general_flags(self.vl_blocks);
        let trailer = trailer::encode(&p.vlmeta);
        if p.offsets.is_empty() {
            // An empty frame is header + trailer: c-blosc2 looks for the trailer right there.
            p.header.cbytes = 0;
            p.header.nbytes = 0;
            let mut image = p.header.encode();
            p.header.frame_len = (image.len() + trailer.len()) as u64;
            p.header.header_len = image.len();
            p.header.write_fixed(&mut image);
            image.extend_from_slice(&trailer);
            self.replace_image(image)?;
            self.dead_bytes = 0;
        } else {
            let index = p.encode_index()?;
            let data_end = header_len + end;
            p.header.cbytes = (data_end - header_len) as i64;
            p.header.frame_len = data_end + (index.len() + trailer.len()) as u64;
            // The chunks are written from where they are, not copied into one buffer.
            let mut tail: Vec<&[u8]> = chunks.to_vec();
            tail.push(&index);
            tail.push(&trailer);
            if was_empty && matches!(self.store, Store::File { .. }) && !embedded {
                // An empty frame's trailer cannot be moved aside (see above): the file is
                // replaced whole, which costs no more than writing the tail.
                let mut image = self.store.read(0, header_len)?.into_owned();
                p.header.write_fixed(&mut image);
                image.reserve((p.header.frame_len - at) as usize);
                for part in &tail {
                    image.extend_from_slice(part);
                }
                self.replace_image(image)?;
            } else {
                self.write_tail(at, &tail, &p.header)?;
            }
            self.dead_bytes += skipped + p.removed.iter().map(|&(_, s)| u64::from(s)).sum::<u64>();
        }
        self.trailer_len = trailer.len() as u64;
        self.header = p.header;
        self.set_index(Index::List {
            offsets: p.offsets,
            spans: p.spans,
        });
        self.vlmeta = p.vlmeta;
        self.maybe_compact();
        Ok(())
    }

    /// Writes `tail` (new chunks, the index, the trailer: parts laid end to end) at `at` and
    /// commits `new`, whose frame ends with that tail.
    ///
    /// `at` is where the committed index and trailer start, so they are in the way: first a
    /// copy of them is written past both the old and the new end, and a header pointing at
    /// the copy is committed (the same frame, with dead bytes before its index). Then the
    /// tail overwrites the old index and trailer, no longer referenced, and the new header
    /// is committed. A writer killed at any point leaves one of the three frames, whole. The
    /// result is laid out as c-blosc2 lays it out, with no dead space; the copy, now past
    /// the frame's end, is cut off. In memory the tail is simply written in place.
    fn write_tail(&mut self, at: u64, tail: &[&[u8]], new: &FrameHeader) -> Result<()> {
        let old_end = self.header.frame_len;
        let new_end = at + tail.iter().map(|part| part.len() as u64).sum::<u64>();
        let aside = new_end.max(old_end);
        let move_aside = at < old_end && matches!(self.store, Store::File { .. });
        if move_aside {
            let committed = self.store.read(at, old_end - at)?.into_owned();
            self.store.write(aside, &committed)?;
            self.store.sync()?;
            let mut moved = self.header.clone();
            moved.cbytes = (aside - moved.header_len as u64) as i64;
            moved.frame_len = aside + committed.len() as u64;
            self.commit_fixed(&moved)?;
            // Until the new header is in, the committed frame is the moved one.
            self.header = moved;
            self.dead_bytes += aside - at;
        }
        let mut pos = at;
        for part in tail {
            self.store.write(pos, part)?;
            pos += part.len() as u64;
        }
        self.store.sync()?;
        self.commit_fixed(new)?;
        if move_aside {
            self.dead_bytes -= aside - at;
        }
        self.store.cut(new_end);
        Ok(())
    }

    /// The commit point of a change: one small write of the fixed header, synced when the
    /// store syncs (a failed sync puts the old one back).
    fn commit_fixed(&mut self, h: &FrameHeader) -> Result<()> {
        let old = self.store.read(0, header::FIXED_LEN as u64)?.into_owned();
        let mut fixed = old.clone();
        h.write_fixed(&mut fixed);
        self.store.write_start(&fixed, &old)
    }

    /// Where the committed data region (and index) ends; the index and trailer after it are
    /// dead once a new state is committed.
    fn data_end_committed(&self) -> u64 {
        if self.nchunks() == 0 {
            self.header.header_len as u64
        } else {
            self.header.header_len as u64 + self.header.cbytes as u64
        }
    }

    /// Replaces a contiguous frame with `image` (a complete frame): in memory, or through a
    /// temporary file and an atomic rename. Frames inside a larger file (at an offset) are
    /// overwritten in place, which is the one write that is not crash-safe.
    fn replace_image(&mut self, image: Vec<u8>) -> Result<()> {
        match &mut self.store {
            Store::Mem(buf) => {
                *buf = image;
                Ok(())
            }
            Store::File {
                file,
                path,
                base,
                sync,
                ..
            } => {
                if *base != 0 {
                    file.write_all_at(&image, *base)
                        .map_err(|e| io_err("cannot write", path, e))?;
                    if *sync {
                        file.sync_data()
                            .map_err(|e| io_err("cannot sync", path, e))?;
                    }
                    return Ok(());
                }
                // The new file's handle is kept: nothing to reopen once it has taken the old
                // one's place.
                *file = replace_file(path, &image, *sync)?;
                Ok(())
            }
            Store::Dir { .. } => bail!(invalid, "sparse frames are not replaced whole"),
        }
    }

    /// Rewrites the frame compactly when dead space outgrows the live data. This follows a
    /// change already committed, and a frame with dead space is whole: if compaction fails (a
    /// full disk, say), the frame stays as it is and the change still succeeded.
    fn maybe_compact(&mut self) {
        let live = (self.header.frame_len).saturating_sub(self.dead_bytes);
        let embedded = matches!(self.store, Store::File { base, .. } if base != 0);
        if embedded || self.dead_bytes < (1 << 20).max(live) {
            return;
        }
        let _ = self.compact();
    }

    /// Rewrites the frame with its chunks in index order and no dead space.
    pub fn compact(&mut self) -> Result<()> {
        if self.is_sparse() {
            return Ok(());
        }
        let image = self.to_contiguous_image()?;
        self.replace_image(image)?;
        self.reload()
    }

    /// Re-reads the committed state from the store (after it was replaced whole).
    fn reload(&mut self) -> Result<()> {
        let avail = match &self.store {
            Store::Mem(b) => b.len() as u64,
            Store::File {
                file, path, base, ..
            } => {
                file.metadata()
                    .map_err(|e| io_err("cannot stat", path, e))?
                    .len()
                    - *base
            }
            Store::Dir { .. } => unreachable!("sparse frames are never reloaded"),
        };
        // Parses the image just written (only an I/O error reading it back can fail here).
        let store = std::mem::replace(&mut self.store, Store::Mem(Vec::new()));
        let fresh = Frame::parse(store, avail, false)?;
        *self = Frame {
            dead_bytes: 0,
            ..fresh
        };
        Ok(())
    }

    fn commit_sparse(
        &mut self,
        chunks: &[&[u8]],
        edit: impl FnOnce(&mut Pending, &[(i64, u32)]) -> Result<()>,
    ) -> Result<()> {
        let Store::Dir {
            dir, sync, next_id, ..
        } = &mut self.store
        else {
            unreachable!("commit_sparse is only called on sparse frames");
        };
        let (dir, sync, fresh) = (dir.clone(), *sync, *next_id);
        // The new chunks' files get fresh ids (unique in the index, so they can be placed
        // first and changed below), or reused ones where c-blosc2 would refuse fresh ones.
        let placed: Vec<(i64, u32)> = chunks
            .iter()
            .enumerate()
            .map(|(k, c)| ((fresh + k as u64) as i64, c.len() as u32))
            .collect();
        let mut p = self.pending()?;
        edit(&mut p, &placed)?;
        // cbytes of a sparse frame is the total size of its chunk files.
        let mut cbytes = p.header.cbytes + placed.iter().map(|&(_, l)| i64::from(l)).sum::<i64>();
        let mut gone = Vec::new();
        for &(raw, _) in &p.removed {
            if raw >= 0 {
                let path = dir.join(chunk_file_name(raw as u64));
                cbytes -= fs::metadata(&path).map(|m| m.len() as i64).unwrap_or(0);
                gone.push(path);
            }
        }
        // Ids c-blosc2 accepts are at most this; all ids in use are below `fresh`.
        let limit = cbytes - crate::chunk::EXTENDED_HEADER_LEN as i64;
        let new_raws: Vec<i64> = placed.iter().map(|&(raw, _)| raw).collect();
        let mut new_ids = new_raws.clone();
        let mut next = fresh;
        // The last id a fresh placement would use (`fresh` itself without new chunks).
        let last_fresh = fresh as i64 + chunks.len().max(1) as i64 - 1;
        if last_fresh <= limit {
            next = fresh + chunks.len() as u64;
        } else {
            // The new chunks and every file beyond the limit go to the lowest free ids; moved
            // files keep their old names until the index no longer holds them.
            let held = p.offsets.iter().copied().filter(|o| !new_raws.contains(o));
            let removed = p.removed.iter().map(|&(o, _)| o);
            let mut free = FreeIds::new(held.chain(removed), p.offsets.len() + p.removed.len());
            new_ids = new_raws.iter().map(|_| free.take()).collect();
            let mut moving = true;
            for i in 0..p.offsets.len() {
                let old = p.offsets[i];
                if let Some(k) = new_raws.iter().position(|&r| r == old) {
                    p.offsets[i] = new_ids[k];
                } else if moving && old > limit && old >= 0 {
                    let to = free.take();
                    if to > limit {
                        // Too few chunk bytes for the ids of all files: as good as it gets.
                        moving = false;
                        continue;
                    }
                    copy_chunk_file(&dir, old, to, sync)?;
                    p.offsets[i] = to;
                    gone.push(dir.join(chunk_file_name(old as u64)));
                }
            }
            next = next.max(free.taken.len() as u64);
        }
        for (c, &id) in chunks.iter().zip(&new_ids) {
            if id > i64::from(u32::MAX) {
                bail!(unsupported, "sparse frame: chunk file ids are exhausted");
            }
            write_file(&dir.join(chunk_file_name(id as u64)), c, sync)?;
        }
        p.header.cbytes = cbytes.max(0);
        if p.offsets.is_empty() {
            p.header.nbytes = 0;
        }
        p.header.has_vlmeta = !p.vlmeta.is_empty();
        p.header.set_general_flags(self.vl_blocks);
        let index = p.encode_index()?;
        let image = sparse_index_image(&mut p.header, &index, &p.vlmeta)?;
        if sync {
            // The new chunk files exist on disk before the index names them.
            sync_dir(&dir)?;
        }
        replace_file(&dir.join(SPARSE_INDEX), &image, sync)?;
        for g in gone {
            let _ = fs::remove_file(g);
        }
        if let Store::Dir { next_id, .. } = &mut self.store {
            *next_id = next;
        }
        self.trailer_len = trailer::encode(&p.vlmeta).len() as u64;
        self.header = p.header;
        self.set_index(Index::List {
            offsets: p.offsets,
            spans: p.spans,
        });
        self.vlmeta = p.vlmeta;
        Ok(())
    }

    /// The frame as one contiguous image: header, stored chunks in index order, index,
    /// trailer (what `b2f_to_buffer` returns and what compaction writes).
    pub fn to_contiguous_image(&self) -> Result<Vec<u8>> {
        let mut h = self.header.clone();
        h.frame_type = header::CONTIGUOUS;
        let mut out = h.encode();
        let header_len = out.len();
        let ix = self.index()?;
        let mut offsets = Vec::with_capacity(ix.len());
        for i in 0..ix.len() {
            match self.chunk_data(i)? {
                super::ChunkData::Stored(b) => {
                    offsets.push((out.len() - header_len) as i64);
                    out.extend_from_slice(&b);
                }
                super::ChunkData::Special(..) => offsets.push(ix.raw(i)),
            }
        }
        h.cbytes = (out.len() - header_len) as i64;
        h.header_len = header_len;
        h.has_vlmeta = !self.vlmeta.is_empty();
        if !offsets.is_empty() {
            out.extend_from_slice(&index::encode(&offsets)?);
        } else {
            h.cbytes = 0;
        }
        out.extend_from_slice(&trailer::encode(&self.vlmeta));
        h.frame_len = out.len() as u64;
        h.write_fixed(&mut out);
        Ok(out)
    }

    /// Writes the frame to `path` as a contiguous file or a sparse directory. The copy is
    /// built under a temporary name next to `path` and then takes its place, so whatever was
    /// at `path` stays whole until the copy is complete. The frame's own storage is refused:
    /// replacing it would leave this frame reading the copy through its old offsets.
    pub fn save(&self, path: &Path, contiguous: bool) -> Result<()> {
        if self.is_stored_at(path) {
            bail!(
                invalid,
                "{}: that is where this frame is stored; save the copy to another path",
                path.display()
            );
        }
        let target = resolve_link(path)?;
        // A frame that syncs its commits syncs its copies too.
        let sync = self.store.syncs();
        let tmp = temp_path(&target);
        let built = if contiguous {
            self.to_contiguous_image()
                .and_then(|image| write_file(&tmp, &image, sync))
        } else {
            self.save_sparse(&tmp, sync)
        };
        if let Err(e) = built {
            remove_path(&tmp);
            return Err(e);
        }
        replace_path(&tmp, &target)?;
        if sync {
            sync_dir(parent_dir(&target))?;
        }
        Ok(())
    }

    /// Whether `path` names this frame's file or directory.
    fn is_stored_at(&self, path: &Path) -> bool {
        let ours = match &self.store {
            Store::Mem(_) => return false,
            Store::File { file, .. } => file.metadata(),
            Store::Dir { dir, .. } => fs::metadata(dir),
        };
        same_inode(ours, fs::metadata(path))
    }

    /// Writes a sparse copy of the frame into the new directory `path`.
    fn save_sparse(&self, path: &Path, sync: bool) -> Result<()> {
        fs::create_dir(path).map_err(|e| io_err("cannot create directory", path, e))?;
        let mut h = self.header.clone();
        h.frame_type = header::SPARSE;
        let ix = self.index()?;
        let mut offsets = Vec::with_capacity(ix.len());
        let mut cbytes = 0i64;
        let mut id = 0u64;
        for i in 0..ix.len() {
            match self.chunk_data(i)? {
                super::ChunkData::Stored(b) => {
                    write_file(&path.join(chunk_file_name(id)), &b, sync)?;
                    cbytes += b.len() as i64;
                    offsets.push(id as i64);
                    id += 1;
                }
                super::ChunkData::Special(..) => offsets.push(ix.raw(i)),
            }
        }
        h.cbytes = cbytes;
        h.has_vlmeta = !self.vlmeta.is_empty();
        let image = sparse_index_image(&mut h, &index_chunk(&offsets, false)?, &self.vlmeta)?;
        write_file(&path.join(SPARSE_INDEX), &image, sync)?;
        if sync {
            sync_dir(path)?;
        }
        Ok(())
    }

    /// Creates a new empty frame in `store` with `header` (whose lengths are computed here).
    pub fn create(mut store: Store, mut header: FrameHeader, vl_blocks: bool) -> Result<Frame> {
        header.nbytes = 0;
        header.cbytes = 0;
        header.has_vlmeta = false;
        header.set_general_flags(vl_blocks);
        let trailer = trailer::encode(&[]);
        if let Store::Dir { dir, lock, .. } = &mut store {
            fs::create_dir_all(&*dir).map_err(|e| io_err("cannot create directory", dir, e))?;
            *lock = Some(lock_dir(dir)?);
        }
        let image = match &store {
            Store::Dir { dir, sync, .. } => {
                header.frame_type = header::SPARSE;
                let image = sparse_index_image(&mut header, &[], &[])?;
                write_file(&dir.join(SPARSE_INDEX), &image, *sync)?;
                if *sync {
                    sync_dir(dir)?;
                    sync_dir(parent_dir(dir))?;
                }
                image
            }
            _ => {
                header.frame_type = header::CONTIGUOUS;
                let mut image = header.encode();
                header.header_len = image.len();
                header.frame_len = (image.len() + trailer.len()) as u64;
                header.write_fixed(&mut image);
                image.extend_from_slice(&trailer);
                image
            }
        };
        match &mut store {
            Store::Mem(buf) => *buf = image,
            Store::File {
                file,
                path,
                base,
                sync,
                ..
            } => {
                file.set_len(*base)
                    .map_err(|e| io_err("cannot truncate", path, e))?;
                file.write_all_at(&image, *base)
                    .map_err(|e| io_err("cannot write", path, e))?;
                if *sync {
                    file.sync_all()
                        .map_err(|e| io_err("cannot sync", path, e))?;
                    sync_dir(parent_dir(path))?;
                }
            }
            Store::Dir { .. } => {}
        }
        Ok(Frame::with_index(
            store,
            header,
            Index::default(),
            Vec::new(),
            trailer.len() as u64,
            vl_blocks,
            false,
        ))
    }

    /// Rewrites the header in place after a same-size change of a metalayer (c-blosc2's rule:
    /// metalayers keep their size once written).
    pub fn rewrite_header(&mut self, header: FrameHeader) -> Result<()> {
        if !self.store.writable() || self.legacy {
            bail!(read_only, "the frame was opened read-only");
        }
        let mut bytes = header.encode();
        if bytes.len() != self.header.header_len {
            bail!(
                invalid,
                "the header would change size ({} -> {} bytes)",
                self.header.header_len,
                bytes.len()
            );
        }
        let mut h = header;
        h.header_len = bytes.len();
        h.write_fixed(&mut bytes);
        match &mut self.store {
            Store::Dir { dir, sync, .. } => {
                let path = dir.join(SPARSE_INDEX);
                let mut image = fs::read(&path).map_err(|e| io_err("cannot read", &path, e))?;
                let Some(start) = image.get_mut(..bytes.len()) else {
                    bail!(
                        corrupt,
                        "{}: {} bytes, shorter than the frame's header",
                        path.display(),
                        image.len()
                    );
                };
                start.copy_from_slice(&bytes);
                replace_file(&path, &image, *sync)?;
            }
            _ => {
                let old = self.store.read(0, bytes.len() as u64)?.to_vec();
                self.store.write_start(&bytes, &old)?;
            }
        }
        self.header = h;
        Ok(())
    }

    /// Adds metalayers to a frame with no chunks (the header grows, so the frame is rebuilt).
    pub fn rebuild_empty(&mut self, header: FrameHeader) -> Result<()> {
        if self.nchunks() != 0 {
            bail!(
                invalid,
                "metalayers can only be added before the first chunk"
            );
        }
        if !self.store.writable() || self.legacy {
            bail!(read_only, "the frame was opened read-only");
        }
        let mut h = header;
        let trailer = trailer::encode(&self.vlmeta);
        match &self.store {
            Store::Dir { dir, sync, .. } => {
                let image = sparse_index_image(&mut h, &[], &self.vlmeta)?;
                replace_file(&dir.join(SPARSE_INDEX), &image, *sync)?;
            }
            _ => {
                let mut image = h.encode();
                h.header_len = image.len();
                h.frame_len = (image.len() + trailer.len()) as u64;
                h.cbytes = 0;
                h.write_fixed(&mut image);
                image.extend_from_slice(&trailer);
                self.replace_image(image)?;
            }
        }
        self.header = h;
        self.trailer_len = trailer.len() as u64;
        Ok(())
    }
}

/// `chunks.b2frame` of a sparse frame: header, index chunk (empty if no chunk), trailer.
fn sparse_index_image(h: &mut FrameHeader, index: &[u8], vlmeta: &[Vlmeta]) -> Result<Vec<u8>> {
    h.frame_type = header::SPARSE;
    let mut image = h.encode();
    h.header_len = image.len();
    image.extend_from_slice(index);
    image.extend_from_slice(&trailer::encode(vlmeta));
    h.frame_len = image.len() as u64;
    h.write_fixed(&mut image);
    Ok(image)
}

/// Takes the writer's lock on a frame's open file or directory (see the module's docs).
pub fn lock_for_writing(file: &File, path: &Path) -> Result<()> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(std::fs::TryLockError::WouldBlock) => Err(Error::io(
            format!(
                "{}: the frame is open for writing elsewhere (another handle or process holds its lock)",
                path.display()
            ),
            std::io::ErrorKind::WouldBlock.into(),
        )),
        // File systems without locks: the frame is written unlocked, as c-blosc2 writes it.
        Err(std::fs::TryLockError::Error(_)) => Ok(()),
    }
}

/// Opens directory `dir` and takes the writer's lock on it.
fn lock_dir(dir: &Path) -> Result<File> {
    let file = File::open(dir).map_err(|e| io_err("cannot open", dir, e))?;
    lock_for_writing(&file, dir)?;
    Ok(file)
}

/// Refuses to replace a frame that a writer has open (the writer would go on committing to
/// the replaced file). The probe's lock goes with it.
fn check_no_writer(path: &Path) -> Result<()> {
    match File::open(path) {
        Ok(file) => lock_for_writing(&file, path),
        Err(_) => Ok(()),
    }
}

/// `path`, or the file or directory it links to (replaced there, the link kept).
pub fn resolve_link(path: &Path) -> Result<PathBuf> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            fs::canonicalize(path).map_err(|e| io_err("cannot resolve", path, e))
        }
        _ => Ok(path.to_path_buf()),
    }
}

pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path
        .file_name()
        .map(|n| n.to_os_string())
        .unwrap_or_default();
    // Unique within the process too: saves from several handles may run at once.
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    name.push(format!(".b2f-tmp-{}-{n}", std::process::id()));
    path.with_file_name(name)
}

/// Puts the file or directory `tmp` in the place of `path`, in one atomic step: a file
/// replaces a file by a rename; otherwise the two are exchanged (`renameat2` with
/// `RENAME_EXCHANGE`) and the old one, now at `tmp`, removed. Where the file system cannot
/// exchange, what was at `path` is moved aside first (killed between the two renames, both
/// copies remain under their temporary names).
pub fn replace_path(tmp: &Path, path: &Path) -> Result<()> {
    if let Err(e) = check_no_writer(path) {
        remove_path(tmp);
        return Err(e);
    }
    let rename = |from: &Path, to: &Path| {
        fs::rename(from, to).map_err(|e| io_err("cannot rename to", to, e))
    };
    let both_files = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => true,
        Err(e) => {
            remove_path(tmp);
            return Err(io_err("cannot stat", path, e));
        }
        Ok(m) => {
            let tmp_is_dir = tmp.is_dir();
            // The copy takes the place of what was there, with its permissions.
            if m.is_dir() == tmp_is_dir {
                let _ = fs::set_permissions(tmp, m.permissions());
            }
            !m.is_dir() && !tmp_is_dir
        }
    };
    if both_files {
        return rename(tmp, path).inspect_err(|_| remove_path(tmp));
    }
    let exchanged = rustix::fs::renameat_with(
        rustix::fs::CWD,
        tmp,
        rustix::fs::CWD,
        path,
        rustix::fs::RenameFlags::EXCHANGE,
    );
    if exchanged.is_ok() {
        remove_path(tmp);
        return Ok(());
    }
    let mut aside = temp_path(path).into_os_string();
    aside.push("-old");
    let aside = PathBuf::from(aside);
    if let Err(e) = rename(path, &aside) {
        remove_path(tmp);
        return Err(e);
    }
    if let Err(e) = rename(tmp, path) {
        let _ = fs::rename(&aside, path);
        remove_path(tmp);
        return Err(e);
    }
    remove_path(&aside);
    Ok(())
}

/// Whether two paths name the same file or directory.
pub fn same_file(a: &Path, b: &Path) -> bool {
    same_inode(fs::metadata(a), fs::metadata(b))
}

fn same_inode(a: std::io::Result<fs::Metadata>, b: std::io::Result<fs::Metadata>) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (a, b) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Removes a file or a directory tree, ignoring failures (cleanup after an error).
pub fn remove_path(path: &Path) {
    if fs::remove_dir_all(path).is_err() {
        let _ = fs::remove_file(path);
    }
}

/// Replaces the file `path` with `data`: a temporary file, then one atomic rename. With
/// `sync`, the data and then the rename are on disk before this returns, and if syncing the
/// rename fails the old file is put back (it keeps a second name until then), so an error
/// always leaves what was there. The new file keeps the old one's permissions. Returns the
/// new file, open for reading and writing.
fn replace_file(path: &Path, data: &[u8], sync: bool) -> Result<File> {
    let tmp = temp_path(path);
    let replaced = create_file(&tmp, data, false).and_then(|file| {
        // Locked before it takes the path: a contiguous frame's writer keeps this handle.
        lock_for_writing(&file, &tmp)?;
        if let Ok(m) = fs::metadata(path) {
            let _ = file.set_permissions(m.permissions());
        }
        let rename = || fs::rename(&tmp, path).map_err(|e| io_err("cannot replace", path, e));
        if !sync {
            return rename().map(|()| file);
        }
        file.sync_all()
            .map_err(|e| io_err("cannot sync", &tmp, e))?;
        let mut old = temp_path(path).into_os_string();
        old.push("-old");
        let old = PathBuf::from(old);
        // The old file keeps a second name until the rename is durable (none if it is gone).
        let backup = match fs::hard_link(path, &old) {
            Ok(()) => true,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(io_err("cannot link", path, e)),
        };
        let durable = rename().and_then(|()| sync_dir(parent_dir(path)));
        if backup {
            if durable.is_err() {
                let _ = fs::rename(&old, path);
            }
            let _ = fs::remove_file(&old);
        }
        durable.map(|()| file)
    });
    if replaced.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    replaced
}

/// Makes the entries of directory `dir` (files created, renamed or removed) durable.
pub fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| io_err("cannot sync directory", dir, e))
}

/// The directory that holds `path` (`.` for a bare file name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn write_file(path: &Path, data: &[u8], sync: bool) -> Result<()> {
    create_file(path, data, sync).map(drop)
}

/// Creates (or truncates) `path` with `data`; returns it open for reading and writing.
fn create_file(path: &Path, data: &[u8], sync: bool) -> Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(true)
        .open(path)
        .map_err(|e| io_err("cannot create", path, e))?;
    // Positional writes, like every other write of the library (one kind of system call to
    // watch or fault in tests).
    f.write_all_at(data, 0)
        .map_err(|e| io_err("cannot write", path, e))?;
    if sync {
        f.sync_all().map_err(|e| io_err("cannot sync", path, e))?;
    }
    Ok(f)
}
