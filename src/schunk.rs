//! The super-chunk: a sequence of chunks stored in a frame, with the operations of the C API.
//!
//! An [`SChunk`] is shared between threads: reads take a read lock and run in parallel (chunks
//! are read with positioned reads and decompressed under that lock), changes take the write
//! lock and are serialized. Every change is committed as described in [`crate::frame::store`].
//! A change that reads before it writes (an n-dim slab write) holds a [`WriteTurn`]: other
//! writers wait for it to end, readers go on reading.

use std::borrow::Cow;
use std::cell::RefCell;
use std::ops::{Deref, DerefMut, Range};
use std::path::Path;
use std::sync::{Mutex, MutexGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};

use crate::chunk::decompress::Decoder;
use crate::chunk::{self, CParams, ChunkHeader, Context, SpecialValue, SplitMode};
use crate::error::{Error, Result};
use crate::frame::header::{self, FrameHeader};
use crate::frame::index::{self, Entry};
use crate::frame::metalayers::{self, show, Metalayer, MAX_METALAYERS};
use crate::frame::store::{self, Pending};
use crate::frame::trailer::{Vlmeta, MAX_VLMETALAYERS_WRITTEN};
use crate::frame::{ChunkData, Frame, Store, Wanted};

/// How to create a frame.
#[derive(Clone, Debug)]
pub struct CreateOptions {
    /// A contiguous frame (a file, or memory) rather than a sparse one (a directory).
    pub contiguous: bool,
    /// Bytes per chunk; 0 = variable-length chunks; -1 = set by the first chunk, as in
    /// c-blosc2's empty frames (`b2f convert` copies them so; the C API takes no -1).
    pub chunksize: i32,
    pub params: CParams,
    /// Sync data to disk at every commit (survives power loss, not only a killed writer).
    pub sync: bool,
}

/// How to open a frame stored in a file or directory.
#[derive(Clone, Debug, Default)]
pub struct OpenOptions {
    /// Allow changes.
    pub writable: bool,
    /// Sync every commit to disk (survives power loss, not only a killed writer).
    pub sync: bool,
    /// Where a contiguous frame starts in its file.
    pub offset: u64,
}

/// What `b2f_get_info` reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Info {
    pub nchunks: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub typesize: i32,
    pub chunksize: i32,
    pub blocksize: i32,
    pub codec: u8,
    pub clevel: u8,
    pub filters: [u8; 6],
    pub filters_meta: [u8; 6],
    pub contiguous: bool,
    pub format_version: u8,
    pub splitmode: u8,
    pub use_dict: bool,
}

/// A super-chunk over a frame.
#[derive(Debug)]
pub struct SChunk {
    frame: RwLock<Frame>,
    /// Held by every writer, before the frame's write lock, for as long as its change takes
    /// (reads included): writers take turns without keeping readers out.
    writer: Mutex<()>,
    ctx: Context,
    writable: bool,
}

/// A writer's turn on an [`SChunk`]: until it is dropped, no other thread changes the frame,
/// so what the holder reads stays current until it writes.
pub struct WriteTurn<'a> {
    schunk: &'a SChunk,
    _turn: MutexGuard<'a, ()>,
}

impl WriteTurn<'_> {
    /// [`SChunk::update_chunks`] within the turn.
    pub fn update_chunks(&self, updates: &[(i64, &[u8])]) -> Result<()> {
        self.schunk
            .update_chunks_in(&mut self.schunk.lock_frame(), updates)
    }
}

/// The frame under a read lock: see [`SChunk::read_view`].
pub struct ReadView<'a> {
    frame: RwLockReadGuard<'a, Frame>,
}

impl ReadView<'_> {
    pub fn nchunks(&self) -> usize {
        self.frame.nchunks()
    }

    /// Runs `f` on chunk `i` as stored (or the special value it stands for), under the read
    /// lock: memory frames lend their bytes, file frames read the chunk once.
    pub fn with_chunk<R>(&self, i: i64, f: impl FnOnce(ChunkData<'_>) -> Result<R>) -> Result<R> {
        let fr = &self.frame;
        let i = fr.check_index(i)?;
        let data = fr
            .chunk_data(i)
            .map_err(|e| e.context(format_args!("chunk {i}")))?;
        f(data)
    }

    /// Like [`ReadView::with_chunk`], but reading from a file only what decoding the blocks
    /// `want` needs (see `Frame::read_chunk_blocks`); `f` must decode only those blocks.
    pub fn with_chunk_blocks<R>(
        &self,
        i: i64,
        want: &[usize],
        f: impl FnOnce(ChunkData<'_>) -> Result<R>,
    ) -> Result<R> {
        let i = self.frame.check_index(i)?;
        with_partial_chunk(&self.frame, i, Wanted::Blocks(want), f)
    }
}

/// Runs `f` on what decoding the blocks `want` of chunk `i` needs, read from a file into a
/// per-thread buffer reused across calls (or on the whole chunk where a partial read does
/// not serve, see `Frame::read_chunk_blocks`).
fn with_partial_chunk<R>(
    fr: &Frame,
    i: usize,
    want: Wanted<'_>,
    f: impl FnOnce(ChunkData<'_>) -> Result<R>,
) -> Result<R> {
    thread_local! {
        static PARTIAL: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }
    /// Larger buffers are not kept between calls.
    const KEEP: usize = 64 << 20;
    let mut buf = PARTIAL.with(|b| std::mem::take(&mut *b.borrow_mut()));
    let partial = fr
        .read_chunk_blocks(i, want, &mut buf)
        .map_err(|e| e.context(format_args!("chunk {i}")))?;
    let r = if let Some(len) = partial {
        f(ChunkData::Stored(Cow::Borrowed(&buf[..len])))
    } else {
        let data = fr
            .chunk_data(i)
            .map_err(|e| e.context(format_args!("chunk {i}")))?;
        f(data)
    };
    if buf.capacity() <= KEEP {
        PARTIAL.with(|b| *b.borrow_mut() = buf);
    }
    r
}

/// The frame, locked for a change, with the writer's turn.
struct Writing<'a> {
    // Fields drop in order: the frame's lock before the turn.
    frame: RwLockWriteGuard<'a, Frame>,
    _turn: MutexGuard<'a, ()>,
}

impl Deref for Writing<'_> {
    type Target = Frame;
    fn deref(&self) -> &Frame {
        &self.frame
    }
}

impl DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut Frame {
        &mut self.frame
    }
}

/// Compression parameters as a frame header records them.
fn params_from_header(h: &FrameHeader) -> CParams {
    CParams {
        codec: h.codec(),
        clevel: h.clevel().min(9),
        filters: h.filters,
        filters_meta: h.filters_meta,
        typesize: h.typesize as usize,
        blocksize: h.blocksize.max(0) as usize,
        nthreads: usize::try_from(h.nthreads_c).unwrap_or(1).clamp(1, 64),
        splitmode: SplitMode::try_from(h.splitmode()).unwrap_or(SplitMode::ForwardCompat),
        use_dict: h.use_dict(),
    }
}

/// The blockshape in the frame's `b2nd` metalayer, which NDCELL and NDMEAN chunks are coded
/// with (c-blosc2 reads it there too); `None` for frames that are not such arrays.
fn array_blockshape(h: &FrameHeader) -> Option<Vec<i32>> {
    let m = h.metalayers.iter().find(|m| m.name == b"b2nd")?;
    Some(crate::ndim::meta::parse(&m.content, false).ok()?.blockshape)
}

/// Whether the last of `n` chunks of a fixed-chunksize frame holding `nbytes` is short (all
/// the others are full).
fn short_last(chunksize: i64, nbytes: i64, n: usize) -> bool {
    chunksize > 0 && n > 0 && nbytes < n as i64 * chunksize
}

/// A compression context for a frame's parameters. Frames whose codec or filters this library
/// does not write (plugin codecs; pipelines c-blosc2 misreads) are still read, and new chunks
/// take c-blosc2's default in their place (each chunk names its own codec and filters). The
/// typesize and blocksize stay: an n-dim array's Blosc2 blocks are its blocks. A typesize or
/// blocksize no chunk can have (a damaged header; c-blosc2 reads through it, as each chunk
/// names its own) leaves new chunks c-blosc2's default blocksize, and typesize 1. An array's
/// context carries its blockshape, for the chunks NDCELL and NDMEAN code, read or written.
/// Each chunk's blocksize is the next one's asked for, as in c-blosc2 (see
/// [`Context::carry_over_between_chunks`]).
fn context_for(h: &FrameHeader) -> Result<Context> {
    let mut c = params_context(h)?;
    c.carry_over_between_chunks();
    if let Some(bs) = array_blockshape(h) {
        c.set_array_blockshape(bs);
    }
    Ok(c)
}

/// The context of [`context_for`] but for the array's blockshape.
fn params_context(h: &FrameHeader) -> Result<Context> {
    let p = params_from_header(h);
    if let Ok(c) = Context::new(p.clone()) {
        return Ok(c);
    }
    let d = CParams::default();
    let mut q = p.clone();
    if p.check_codec().is_err() {
        (q.codec, q.clevel, q.use_dict) = (d.codec, d.clevel, false);
    }
    if p.check_filters().is_err() {
        (q.filters, q.filters_meta) = (d.filters, d.filters_meta);
    }
    Context::new(q).or_else(|_| {
        let typesize = p.typesize.max(1);
        Context::new(CParams {
            typesize: if typesize <= chunk::MAX_BLOCKSIZE {
                typesize
            } else {
                1
            },
            nthreads: p.nthreads,
            ..d
        })
    })
}

impl SChunk {
    fn from_frame(frame: Frame, writable: bool) -> Result<SChunk> {
        let ctx = context_for(&frame.header)?;
        Ok(SChunk {
            frame: RwLock::new(frame),
            writer: Mutex::new(()),
            ctx,
            writable,
        })
    }

    /// Opens a frame: a file (contiguous) or a directory (sparse).
    pub fn open(path: &Path, writable: bool) -> Result<SChunk> {
        Self::open_with(
            path,
            &OpenOptions {
                writable,
                ..OpenOptions::default()
            },
        )
    }

    /// Opens a contiguous frame stored in a file from byte `offset` on.
    pub fn open_offset(path: &Path, offset: u64, writable: bool) -> Result<SChunk> {
        Self::open_with(
            path,
            &OpenOptions {
                writable,
                offset,
                ..OpenOptions::default()
            },
        )
    }

    /// Opens a frame in a file or directory as `opts` says.
    pub fn open_with(path: &Path, opts: &OpenOptions) -> Result<SChunk> {
        let frame = Frame::open_path(path, opts.offset, opts.writable, opts.sync)?;
        Self::from_frame(frame, opts.writable)
    }

    /// Opens a contiguous frame from a copy of its bytes (changes stay in memory).
    pub fn open_buffer(buf: Vec<u8>) -> Result<SChunk> {
        Self::open_buffer_mode(buf, true)
    }

    /// [`SChunk::open_buffer`], read-only unless `writable`.
    pub fn open_buffer_mode(buf: Vec<u8>, writable: bool) -> Result<SChunk> {
        Self::from_frame(Frame::open_buffer(buf)?, writable)
    }

    /// Whether changes are allowed.
    pub fn is_writable(&self) -> bool {
        self.writable
    }

    /// Creates an empty frame at `path` (a file or a directory), or in memory.
    pub fn create(path: Option<&Path>, opts: &CreateOptions) -> Result<SChunk> {
        Self::create_with(path, opts, |_| Ok(()))
    }

    /// Creates a frame at `path` (or in memory) that `init` fills first. A frame for a path is
    /// built under a temporary name beside it and then renamed into place: a writer killed
    /// before that leaves the path as it was, never a partial frame. What was at the path is
    /// replaced (a symbolic link's target), but a directory by a contiguous frame: refused.
    pub fn create_with(
        path: Option<&Path>,
        opts: &CreateOptions,
        init: impl FnOnce(&SChunk) -> Result<()>,
    ) -> Result<SChunk> {
        let Some(p) = path else {
            let s = Self::create_at(None, opts)?;
            init(&s)?;
            return Ok(s);
        };
        let target = store::resolve_link(p)?;
        if opts.contiguous && target.is_dir() {
            return Err(Error::io(
                format!("cannot create {}", p.display()),
                std::io::ErrorKind::IsADirectory.into(),
            ));
        }
        let tmp = store::temp_path(&target);
        let built = Self::create_at(Some(&tmp), opts).and_then(|s| init(&s).map(|()| s));
        let s = match built {
            Ok(s) => s,
            Err(e) => {
                store::remove_path(&tmp);
                return Err(e.context(format_args!("creating {}", p.display())));
            }
        };
        store::replace_path(&tmp, &target)?;
        let mut f = s.lock_frame();
        f.store.relocate(&target);
        if opts.sync {
            store::sync_dir(store::parent_dir(&target))?;
        }
        drop(f);
        Ok(s)
    }

    fn create_at(path: Option<&Path>, opts: &CreateOptions) -> Result<SChunk> {
        opts.params.validate()?;
        if opts.chunksize < -1 {
            bail!(
                invalid,
                "chunksize {} is negative (0 means variable-length chunks, -1 set by the first chunk)",
                opts.chunksize
            );
        }
        if opts.params.typesize > i32::MAX as usize || opts.params.blocksize > i32::MAX as usize {
            bail!(invalid, "typesize or blocksize does not fit a frame header");
        }
        let store = match path {
            None => {
                if !opts.contiguous {
                    bail!(invalid, "an in-memory frame is contiguous");
                }
                Store::Mem(Vec::new())
            }
            Some(p) if opts.contiguous => {
                let file = std::fs::OpenOptions::new()
                    .read(true)
                    .write(true)
                    .create(true)
                    .truncate(true)
                    .open(p)
                    .map_err(|e| Error::io(format!("cannot create {}", p.display()), e))?;
                store::lock_for_writing(&file, p)?;
                Store::File {
                    file,
                    path: p.to_path_buf(),
                    base: 0,
                    writable: true,
                    sync: opts.sync,
                }
            }
            Some(p) => {
                if p.exists() {
                    std::fs::remove_dir_all(p)
                        .or_else(|_| std::fs::remove_file(p))
                        .map_err(|e| Error::io(format!("cannot replace {}", p.display()), e))?;
                }
                Store::Dir {
                    dir: p.to_path_buf(),
                    lock: None, // taken once the directory exists
                    writable: true,
                    sync: opts.sync,
                    next_id: 0,
                }
            }
        };
        let p = &opts.params;
        let header = FrameHeader {
            general_flags: 0,
            frame_type: 0,
            codec_flags: FrameHeader::codec_flags_for(p.codec, p.clevel),
            other_flags: (p.splitmode as u8) - 1,
            header_len: 0,
            frame_len: 0,
            nbytes: 0,
            cbytes: 0,
            typesize: p.typesize as i32,
            blocksize: p.blocksize as i32,
            chunksize: opts.chunksize,
            nthreads_c: p.nthreads as i16,
            nthreads_d: p.nthreads as i16,
            has_vlmeta: false,
            filters: p.filters,
            filters_meta: p.filters_meta,
            udcodec: p.codec,
            compcode_meta: 0,
            other_flags2: if p.use_dict { header::USE_DICT } else { 0 },
            metalayers: Vec::new(),
        };
        let frame = Frame::create(store, header, false)?;
        let mut ctx = Context::new(opts.params.clone())?;
        ctx.carry_over_between_chunks();
        Ok(SChunk {
            frame: RwLock::new(frame),
            writer: Mutex::new(()),
            ctx,
            writable: true,
        })
    }

    fn read(&self) -> RwLockReadGuard<'_, Frame> {
        self.frame.read().unwrap_or_else(|e| e.into_inner())
    }

    /// The writer's turn, after checking the frame may be changed. A thread holding one
    /// must not call the other write functions of this SChunk (they wait for the turn).
    pub fn write_turn(&self) -> Result<WriteTurn<'_>> {
        if !self.writable {
            bail!(read_only, "the frame was opened read-only");
        }
        Ok(WriteTurn {
            schunk: self,
            _turn: self.writer.lock().unwrap_or_else(|e| e.into_inner()),
        })
    }

    /// The frame's write lock (the caller holds the writer's turn, or is alone with it).
    fn lock_frame(&self) -> RwLockWriteGuard<'_, Frame> {
        self.frame.write().unwrap_or_else(|e| e.into_inner())
    }

    /// The write lock, within a writer's turn.
    fn write(&self) -> Result<Writing<'_>> {
        let turn = self.write_turn()?;
        Ok(Writing {
            frame: self.lock_frame(),
            _turn: turn._turn,
        })
    }

    /// Compresses new chunks as an n-dim array's with this blockshape (see
    /// [`Context::set_array_blockshape`]): for arrays created here, whose metalayer is added
    /// after the context is made.
    pub(crate) fn set_array_blockshape(&mut self, blockshape: Vec<i32>) {
        self.ctx.set_array_blockshape(blockshape);
    }

    /// The compression context (parameters and threads) used for appends and reads.
    pub fn context(&self) -> &Context {
        &self.ctx
    }

    pub fn info(&self) -> Info {
        let f = self.read();
        let h = &f.header;
        Info {
            nchunks: f.nchunks() as i64,
            nbytes: h.nbytes,
            cbytes: h.cbytes,
            typesize: h.typesize,
            chunksize: h.chunksize,
            blocksize: h.blocksize.max(0),
            codec: h.codec(),
            clevel: h.clevel(),
            filters: h.filters,
            filters_meta: h.filters_meta,
            contiguous: !f.is_sparse(),
            format_version: h.version(),
            splitmode: h.splitmode(),
            use_dict: h.use_dict(),
        }
    }

    pub fn nchunks(&self) -> usize {
        self.read().nchunks()
    }

    /// Decompresses `chunk`, stored in frame `f`, into `dst` on this frame's threads: with the
    /// frame's typesize, and an array's blockshape.
    fn decode_stored(&self, f: &Frame, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        self.decoder(f, chunk)?
            .decode_all(dst, Some(self.ctx.pool()))
    }

    /// A decoder of `chunk`, stored in frame `f`, that reads it as `decode_stored` does.
    fn decoder<'c>(&'c self, f: &Frame, chunk: &'c [u8]) -> Result<Decoder<'c>> {
        Ok(Decoder::new(chunk)?
            .in_frame(f.header.typesize as usize)
            .in_array(self.ctx.array_blockshape()))
    }

    /// The uncompressed size of chunk `i`.
    pub fn chunk_nbytes(&self, i: i64) -> Result<usize> {
        let f = self.read();
        let i = f.check_index(i)?;
        f.chunk_nbytes(i)
            .map_err(|e| e.context(format_args!("chunk {i}")))
    }

    /// Decompresses chunk `i` into `dst`; returns its size.
    pub fn get_chunk(&self, i: i64, dst: &mut [u8]) -> Result<usize> {
        let f = self.read();
        let i = f.check_index(i)?;
        let r = match f.chunk_data(i)? {
            ChunkData::Stored(b) => self.decode_stored(&f, &b, dst),
            ChunkData::Special(kind, n) => fill_special(kind, f.header.typesize as usize, n, dst),
        };
        r.map_err(|e| e.context(format_args!("chunk {i}")))
    }

    /// The frame as of now, for a read that spans several chunks: writers wait until the view
    /// is dropped, so the read sees every write whole or not at all. A thread holding one must
    /// not call this SChunk's functions (a waiting writer would keep it from reading).
    pub fn read_view(&self) -> ReadView<'_> {
        ReadView { frame: self.read() }
    }

    /// The special value chunk `i` stands for (`SpecialValue::None` for data chunks); reads
    /// only the chunk's header.
    pub fn chunk_special(&self, i: i64) -> Result<SpecialValue> {
        let f = self.read();
        let i = f.check_index(i)?;
        f.chunk_special(i)
            .map_err(|e| e.context(format_args!("chunk {i}")))
    }

    /// The compression parameters the frame records (what appends use).
    pub fn params(&self) -> CParams {
        params_from_header(&self.read().header)
    }

    /// The frame's typesize.
    pub fn typesize(&self) -> usize {
        self.read().header.typesize as usize
    }

    /// Decompresses chunk `i` into a new buffer.
    pub fn get_chunk_vec(&self, i: i64) -> Result<Vec<u8>> {
        let n = self.chunk_nbytes(i)?;
        let mut out = vec![0u8; n];
        let m = self.get_chunk(i, &mut out)?;
        out.truncate(m);
        Ok(out)
    }

    /// Chunk `i` as stored: a Blosc2 chunk (special index entries become the special chunk
    /// c-blosc2 hands out for them).
    pub fn get_chunk_raw(&self, i: i64) -> Result<Vec<u8>> {
        let f = self.read();
        let i = f.check_index(i)?;
        match f.chunk_data(i)? {
            ChunkData::Stored(b) => Ok(b.into_owned()),
            ChunkData::Special(kind, n) => chunk::special::for_frame(
                kind,
                n,
                f.header.typesize as usize,
                f.header.blocksize.max(0) as usize,
            ),
        }
    }

    /// Items `[start, stop)` (in typesize units) across chunks, into `dst`.
    pub fn get_slice(&self, start: i64, stop: i64, dst: &mut [u8]) -> Result<()> {
        let f = self.read();
        let ts = f.header.typesize as i64;
        let total = f.header.nbytes / ts;
        if start < 0 || stop < start || stop > total {
            bail!(
                invalid,
                "slice [{start}, {stop}) is outside the frame's {total} items"
            );
        }
        let nbytes = ((stop - start) * ts) as usize;
        if dst.len() < nbytes {
            return Err(Error::BufferTooSmall {
                needed: nbytes,
                given: dst.len(),
            });
        }
        let mut byte = start * ts;
        let end = stop * ts;
        let mut out = 0usize;
        let mut chunk_start = 0i64;
        let mut scratch = Vec::new();
        for i in 0..f.nchunks() {
            if byte >= end {
                break;
            }
            let n = if f.header.chunksize > 0 {
                let cs = i64::from(f.header.chunksize);
                (f.header.nbytes - i as i64 * cs).min(cs)
            } else {
                f.chunk_nbytes(i)? as i64
            };
            if chunk_start + n <= byte {
                chunk_start += n;
                continue;
            }
            let from = (byte - chunk_start) as usize;
            let to = (end.min(chunk_start + n) - chunk_start) as usize;
            self.read_chunk_part(
                &f,
                i,
                n as usize,
                from..to,
                &mut dst[out..out + (to - from)],
                &mut scratch,
            )?;
            out += to - from;
            byte = chunk_start + to as i64;
            chunk_start += n;
        }
        if out != nbytes {
            bail!(
                corrupt,
                "the frame's chunks hold fewer bytes than its nbytes says"
            );
        }
        Ok(())
    }

    /// Bytes `part` of chunk `i` (of `n` bytes) of frame `f`, into `dst`: a special value
    /// filled in, a whole chunk decoded straight into it, less than half of one from only the
    /// blocks that hold it (read and decoded), anything else decoded whole into `scratch`
    /// first.
    fn read_chunk_part(
        &self,
        f: &Frame,
        i: usize,
        n: usize,
        part: Range<usize>,
        dst: &mut [u8],
        scratch: &mut Vec<u8>,
    ) -> Result<()> {
        let ts = f.header.typesize as usize;
        let short = 2 * part.len() < n;
        let wanted = Wanted::Bytes(part.clone());
        let read = |data: ChunkData<'_>| -> Result<()> {
            let in_chunk = |e: Error| e.context(format_args!("chunk {i}"));
            match data {
                ChunkData::Special(kind, m) if m == n => special_part(kind, ts, n, part, dst),
                ChunkData::Special(_, m) => Err(wrong_size(i, m, n)),
                ChunkData::Stored(b) => {
                    let d = self.decoder(f, &b)?;
                    if d.header().nbytes() != n {
                        return Err(wrong_size(i, d.header().nbytes(), n));
                    }
                    if short {
                        d.decode_range(part, dst).map_err(in_chunk)
                    } else if part.len() == n {
                        d.decode_all(dst, Some(self.ctx.pool())).map_err(in_chunk)?;
                        Ok(())
                    } else {
                        scratch.resize(n, 0);
                        d.decode_all(scratch, Some(self.ctx.pool()))
                            .map_err(in_chunk)?;
                        dst.copy_from_slice(&scratch[part]);
                        Ok(())
                    }
                }
            }
        };
        if short {
            with_partial_chunk(f, i, wanted, read)
        } else {
            read(f.chunk_data(i)?)
        }
    }

    // ---- writes ----

    /// Compresses `data` with the frame's parameters and appends it; returns the new chunk count.
    pub fn append(&self, data: &[u8]) -> Result<usize> {
        self.check_fits(data.len())?;
        let chunk = self.ctx.compress_to_vec(data)?;
        self.append_chunk(&chunk)
    }

    /// Refuses, before compressing, data larger than the fixed chunksize of an empty frame
    /// (with chunks, the frame switches to variable-length chunks instead, as in c-blosc2).
    fn check_fits(&self, len: usize) -> Result<()> {
        let f = self.read();
        let cs = f.header.chunksize;
        if cs > 0 && len > cs as usize && f.nchunks() == 0 {
            bail!(
                invalid,
                "{len} bytes are more than the frame's chunksize ({cs}); create the frame with chunksize 0 for variable-length chunks"
            );
        }
        Ok(())
    }

    /// Appends an existing chunk (validated first); returns the new chunk count.
    pub fn append_chunk(&self, chunk: &[u8]) -> Result<usize> {
        let mut f = self.write()?;
        let n = f.nchunks();
        self.put_chunk(&mut f, Placement::Insert(n), chunk)?;
        Ok(f.nchunks())
    }

    /// Compresses `data` and inserts it at position `pos` (0..=nchunks).
    pub fn insert(&self, pos: i64, data: &[u8]) -> Result<usize> {
        self.check_fits(data.len())?;
        let chunk = self.ctx.compress_to_vec(data)?;
        self.insert_chunk(pos, &chunk)
    }

    /// Inserts an existing chunk at position `pos`.
    pub fn insert_chunk(&self, pos: i64, chunk: &[u8]) -> Result<usize> {
        let mut f = self.write()?;
        let n = f.nchunks();
        let pos = usize::try_from(pos)
            .ok()
            .filter(|&p| p <= n)
            .ok_or_else(|| {
                Error::invalid(format_args!(
                    "insert position {pos} is out of range (0..={n})"
                ))
            })?;
        self.put_chunk(&mut f, Placement::Insert(pos), chunk)?;
        Ok(f.nchunks())
    }

    /// Compresses `data` and replaces chunk `i` with it.
    pub fn update(&self, i: i64, data: &[u8]) -> Result<()> {
        self.check_fits(data.len())?;
        let chunk = self.ctx.compress_to_vec(data)?;
        self.update_chunk(i, &chunk)
    }

    /// Replaces chunk `i` with an existing chunk.
    pub fn update_chunk(&self, i: i64, chunk: &[u8]) -> Result<()> {
        let mut f = self.write()?;
        let i = f.check_index(i)?;
        self.put_chunk(&mut f, Placement::Replace(i), chunk)
    }

    /// Replaces several chunks (existing chunks, as `update_chunk`) in one commit: a writer
    /// killed during it leaves them all as they were or all replaced. That holds for full
    /// chunks replacing full chunks of a frame with a fixed chunksize (an array's chunks);
    /// anything else, which may turn the frame to variable-length chunks, is placed one by
    /// one, each in its own commit.
    pub fn update_chunks(&self, updates: &[(i64, &[u8])]) -> Result<()> {
        self.update_chunks_in(&mut *self.write()?, updates)
    }

    fn update_chunks_in(&self, f: &mut Frame, updates: &[(i64, &[u8])]) -> Result<()> {
        if updates.is_empty() {
            return Ok(());
        }
        let cs = i64::from(f.header.chunksize);
        let n = f.nchunks();
        // In a fixed-chunksize frame every chunk is full but a short last one.
        let full = |i: usize| i + 1 < n || !short_last(cs, f.header.nbytes, n);
        let mut together = cs > 0 && !f.vl_blocks;
        // Per chunk, how put_chunk would keep it: stored bytes or an index entry alone.
        let mut planned: Vec<(usize, Kept<'_>)> = Vec::new();
        for &(i, chunk) in updates {
            let i = f.check_index(i)?;
            let (h, chunk) = chunk_to_store(chunk)?;
            together &= !h.vl_blocks()
                && h.nbytes() as i64 == cs
                && full(i)
                && !planned.iter().any(|&(j, _)| j == i);
            if !together {
                break;
            }
            planned.push((i, kept_form(f, &h, chunk, cs, Placement::Replace(i))?));
        }
        if !together {
            for &(i, chunk) in updates {
                let i = f.check_index(i)?;
                self.put_chunk(f, Placement::Replace(i), chunk)?;
            }
            return Ok(());
        }
        let data: Vec<&[u8]> = planned.iter().filter_map(|(_, k)| k.stored()).collect();
        f.commit_many(&data, |p, locs| {
            let mut stored = locs.iter().copied();
            for (i, kept) in &planned {
                let loc = kept.stored().and_then(|_| stored.next());
                let (raw, span) = kept.entry(loc)?;
                p.removed.push((p.offsets[*i], p.spans[*i]));
                p.offsets[*i] = raw;
                p.spans[*i] = span;
            }
            Ok(())
        })
    }

    /// Removes chunk `i`.
    pub fn delete(&self, i: i64) -> Result<()> {
        let mut f = self.write()?;
        let i = f.check_index(i)?;
        let nb = f.chunk_nbytes(i)? as i64;
        if i == 0 && f.nchunks() > 1 {
            check_first_chunk(f.chunk_nbytes(1)?)?;
        }
        // Removing a chunk before a short last chunk keeps the fixed-size layout valid.
        f.commit(None, |p, _| {
            let raw = p.offsets.remove(i);
            let span = p.spans.remove(i);
            p.removed.push((raw, span));
            p.header.nbytes -= nb;
            Ok(())
        })
    }

    /// Reorders the chunks: new position k holds old chunk `order[k]`.
    pub fn reorder(&self, order: &[i64]) -> Result<()> {
        let mut f = self.write()?;
        let n = f.nchunks();
        if order.len() != n {
            bail!(
                invalid,
                "reorder: {} positions given for {n} chunks",
                order.len()
            );
        }
        let mut seen = vec![false; n];
        for &o in order {
            let o = usize::try_from(o)
                .ok()
                .filter(|&o| o < n && !seen[o])
                .ok_or_else(|| Error::invalid(format_args!("reorder: {o} is out of range or repeated (must be a permutation of 0..{n})")))?;
            seen[o] = true;
        }
        if n > 0 && order[0] != 0 {
            check_first_chunk(f.chunk_nbytes(order[0] as usize)?)?;
        }
        if short_last(i64::from(f.header.chunksize), f.header.nbytes, n)
            && order[n - 1] as usize != n - 1
        {
            self.make_variable(&mut f)?;
        }
        f.commit(None, |p, _| {
            let offsets: Vec<i64> = order.iter().map(|&o| p.offsets[o as usize]).collect();
            let spans: Vec<u32> = order.iter().map(|&o| p.spans[o as usize]).collect();
            p.offsets = offsets;
            p.spans = spans;
            Ok(())
        })
    }

    /// Appends `nitems` items of a special value as index-only chunks of the frame's chunksize.
    pub fn fill_special(&self, nitems: i64, kind: SpecialValue) -> Result<usize> {
        let mut f = self.write()?;
        let ts = i64::from(f.header.typesize);
        let cs = f.header.chunksize;
        if !matches!(
            kind,
            SpecialValue::Zero | SpecialValue::Nan | SpecialValue::Uninit
        ) {
            bail!(
                invalid,
                "fill_special: only zeros, NaN and uninitialized values can be filled"
            );
        }
        if kind == SpecialValue::Nan && ts != 4 && ts != 8 {
            bail!(
                invalid,
                "fill_special: NaN needs a typesize of 4 or 8, not {ts}"
            );
        }
        if nitems < 0 {
            bail!(invalid, "fill_special: nitems {nitems} is negative");
        }
        if cs <= 0 {
            let has = if cs == 0 {
                "variable-length chunks"
            } else {
                "no chunksize until its first chunk"
            };
            bail!(
                invalid,
                "fill_special needs a frame with a fixed chunksize (this one has {has})"
            );
        }
        let cs = i64::from(cs);
        if cs % ts != 0 {
            bail!(
                invalid,
                "fill_special: chunksize {cs} is not a multiple of typesize {ts}"
            );
        }
        if f.header.nbytes % cs != 0 {
            bail!(
                invalid,
                "fill_special: the frame's last chunk is partial, nothing can follow it"
            );
        }
        let total = nitems
            .checked_mul(ts)
            .filter(|&t| f.header.nbytes.checked_add(t).is_some())
            .ok_or_else(|| Error::invalid(format_args!("fill_special: {nitems} items overflow")))?;
        let nnew = (total + cs - 1) / cs;
        if f.nchunks() as i64 + nnew > header::MAX_NCHUNKS {
            bail!(
                invalid,
                "fill_special: {nnew} more chunks exceed the maximum of {}",
                header::MAX_NCHUNKS
            );
        }
        let raw = index::special_raw(kind);
        // Filling an empty frame, c-blosc2 writes the index as one repeated-value chunk and
        // records the blocksize of the special chunks in the header: the same frame here.
        let empty = f.nchunks() == 0 && f.header.nbytes == 0;
        let blocksize = self.ctx.blocksize_for(cs as usize) as i32;
        f.commit(None, |p, _| {
            p.offsets.extend(std::iter::repeat_n(raw, nnew as usize));
            p.spans.extend(std::iter::repeat_n(0, nnew as usize));
            p.header.nbytes += total;
            if empty {
                p.repeated_index = true;
                p.header.blocksize = blocksize;
            }
            Ok(())
        })?;
        Ok(f.nchunks())
    }

    /// Places a validated chunk (insert at a position, or replace one).
    fn put_chunk(&self, f: &mut Frame, place: Placement, chunk: &[u8]) -> Result<()> {
        let (h, chunk) = chunk_to_store(chunk)?;
        let nb = h.nbytes() as i64;
        let vl = h.vl_blocks();
        let n = f.nchunks();
        if n > 0 && vl != f.vl_blocks {
            bail!(
                invalid,
                "a frame cannot mix chunks with variable-length blocks and regular ones"
            );
        }
        if n as i64 >= header::MAX_NCHUNKS && matches!(place, Placement::Insert(_)) {
            bail!(
                invalid,
                "the frame already holds the maximum of {} chunks",
                header::MAX_NCHUNKS
            );
        }
        if matches!(place, Placement::Insert(0) | Placement::Replace(0)) {
            check_first_chunk(h.nbytes())?;
        }
        let old_nb = match place {
            Placement::Replace(i) => f.chunk_nbytes(i)? as i64,
            Placement::Insert(_) => 0,
        };
        // Keep the fixed-chunksize layout or switch to variable-length chunks, when and as
        // c-blosc2 does: a chunk larger than the chunksize, one after a short last chunk, or
        // one of another size anywhere but last. Also an empty chunk, even last, which
        // c-blosc2 keeps in the fixed layout: its frame then counts one chunk too few from
        // the header's nbytes, and neither library opens it.
        let mut cs = i64::from(f.header.chunksize);
        if cs == -1 {
            // Not set yet: the first chunk sets it. A frame that has chunks anyway (not
            // written so by either library) takes no guess from them: variable-length.
            cs = if n == 0 { nb } else { 0 };
        }
        if cs > 0 {
            if nb > cs && n == 0 {
                bail!(
                    invalid,
                    "chunk of {nb} bytes is larger than the frame's chunksize ({cs}); create the frame with chunksize 0 for variable-length chunks"
                );
            }
            let fits = 0 < nb
                && nb <= cs
                && match place {
                    Placement::Insert(pos) => {
                        !short_last(cs, f.header.nbytes, n) && (pos == n || nb == cs)
                    }
                    Placement::Replace(i) => nb == cs || i + 1 == n,
                };
            if !fits {
                self.make_variable(f)?;
                cs = 0;
            }
        }
        let new_cs = cs as i32;
        if vl && n == 0 {
            f.vl_blocks = true;
        }
        let kept = kept_form(f, &h, chunk, cs, place)?;
        f.commit(kept.stored(), |p: &mut Pending, loc| {
            let (raw, span) = kept.entry(loc)?;
            match place {
                Placement::Insert(pos) => {
                    p.offsets.insert(pos, raw);
                    p.spans.insert(pos, span);
                }
                Placement::Replace(i) => {
                    let old = (p.offsets[i], p.spans[i]);
                    p.removed.push(old);
                    p.offsets[i] = raw;
                    p.spans[i] = span;
                }
            }
            p.header.nbytes = p.header.nbytes - old_nb + nb;
            p.header.chunksize = new_cs;
            Ok(())
        })
    }

    /// Switches a fixed-chunksize frame to variable-length chunks: special index entries
    /// carry no size, so each becomes a stored special chunk first.
    fn make_variable(&self, f: &mut Frame) -> Result<()> {
        let ts = f.header.typesize as usize;
        for i in 0..f.nchunks() {
            if let Entry::Special(kind) = index::entry(f.index()?.raw(i))? {
                let n = f.chunk_nbytes(i)?;
                let bs = self.ctx.blocksize_for(n);
                let c = match stored_special(kind, n, ts, bs)? {
                    Some(c) => c,
                    None => chunk::special::build(kind, n, ts, bs, None)?,
                };
                f.commit(Some(&c), |p, loc| {
                    if let Some((raw, span)) = loc {
                        p.offsets[i] = raw;
                        p.spans[i] = span;
                    }
                    Ok(())
                })?;
            }
        }
        f.commit(None, |p, _| {
            p.header.chunksize = 0;
            Ok(())
        })
    }

    // ---- whole frame ----

    /// The frame as one contiguous buffer (compacted).
    pub fn to_buffer(&self) -> Result<Vec<u8>> {
        self.read().to_contiguous_image()
    }

    /// Writes a copy of the frame to `path`, contiguous or sparse.
    pub fn save(&self, path: &Path, contiguous: bool) -> Result<()> {
        self.read().save(path, contiguous)
    }

    /// Rewrites the frame without dead space.
    pub fn compact(&self) -> Result<()> {
        self.write()?.compact()
    }

    // ---- metalayers ----
    // Names are bytes, as in the format: any `AsRef<[u8]>` (a `&str` too) names a layer.

    pub fn meta_get(&self, name: impl AsRef<[u8]>) -> Result<Vec<u8>> {
        let name = name.as_ref();
        let f = self.read();
        f.header
            .metalayers
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.content.clone())
            .ok_or_else(|| Error::not_found(format_args!("no metalayer named {:?}", show(name))))
    }

    /// The metalayers' names as text (invalid UTF-8 replaced; see `meta_names_raw`).
    pub fn meta_names(&self) -> Vec<String> {
        self.meta_names_raw().iter().map(|n| show(n)).collect()
    }

    /// The metalayers' names as stored.
    pub fn meta_names_raw(&self) -> Vec<Vec<u8>> {
        let f = self.read();
        f.header.metalayers.iter().map(|m| m.name.clone()).collect()
    }

    /// Adds a metalayer; only before the first chunk, as c-blosc2 requires.
    pub fn meta_add(&self, name: impl AsRef<[u8]>, content: &[u8]) -> Result<()> {
        let name = name.as_ref();
        metalayers::check_name(name)?;
        let mut f = self.write()?;
        if f.header.metalayers.iter().any(|m| m.name == name) {
            bail!(invalid, "metalayer {:?} already exists", show(name));
        }
        if f.header.metalayers.len() >= MAX_METALAYERS {
            bail!(invalid, "a frame holds at most {MAX_METALAYERS} metalayers");
        }
        if f.nchunks() > 0 {
            bail!(invalid, "metalayers can only be added before the first chunk (use vlmetalayers for later metadata)");
        }
        let mut h = f.header.clone();
        h.metalayers.push(Metalayer {
            name: name.to_vec(),
            content: content.to_vec(),
        });
        f.rebuild_empty(h)
    }

    /// Overwrites a metalayer's content in place: it cannot grow; a shorter content replaces
    /// its first bytes (c-blosc2's rule).
    pub fn meta_update(&self, name: impl AsRef<[u8]>, content: &[u8]) -> Result<()> {
        let name = name.as_ref();
        let mut f = self.write()?;
        let mut h = f.header.clone();
        let m = h
            .metalayers
            .iter_mut()
            .find(|m| m.name == name)
            .ok_or_else(|| Error::not_found(format_args!("no metalayer named {:?}", show(name))))?;
        if content.len() > m.content.len() {
            bail!(
                invalid,
                "metalayer {:?}: new content of {} bytes exceeds its size ({} bytes); metalayers are updated in place",
                show(name),
                content.len(),
                m.content.len()
            );
        }
        m.content[..content.len()].copy_from_slice(content);
        f.rewrite_header(h)
    }

    // ---- vlmetalayers ----

    /// The decompressed content of a vlmetalayer, refusing more than `max` bytes.
    pub fn vlmeta_get(&self, name: impl AsRef<[u8]>, max: usize) -> Result<Vec<u8>> {
        let name = name.as_ref();
        let f = self.read();
        let v = find_vlmeta(&f, name)?;
        chunk::decompress_to_vec(&v.chunk, max)
            .map_err(|e| e.context(format_args!("vlmetalayer {:?}", show(name))))
    }

    /// The decompressed size of a vlmetalayer.
    pub fn vlmeta_len(&self, name: impl AsRef<[u8]>) -> Result<usize> {
        let f = self.read();
        Ok(ChunkHeader::parse(&find_vlmeta(&f, name.as_ref())?.chunk)?.nbytes())
    }

    /// The vlmetalayers' names as text (invalid UTF-8 replaced; see `vlmeta_names_raw`).
    pub fn vlmeta_names(&self) -> Vec<String> {
        self.vlmeta_names_raw().iter().map(|n| show(n)).collect()
    }

    /// The vlmetalayers' names as stored.
    pub fn vlmeta_names_raw(&self) -> Vec<Vec<u8>> {
        self.read().vlmeta.iter().map(|v| v.name.clone()).collect()
    }

    /// Adds or replaces a vlmetalayer (stored compressed, as c-blosc2 does).
    pub fn vlmeta_set(&self, name: impl AsRef<[u8]>, content: &[u8]) -> Result<()> {
        let name = name.as_ref();
        metalayers::check_name(name)?;
        let chunk = Context::new(CParams::default())?.compress_to_vec(content)?;
        let mut f = self.write()?;
        let exists = f.vlmeta.iter().any(|v| v.name == name);
        if !exists && f.vlmeta.len() >= MAX_VLMETALAYERS_WRITTEN {
            bail!(
                invalid,
                "a frame holds at most {MAX_VLMETALAYERS_WRITTEN} vlmetalayers (c-blosc2 writes no \
                 more, and fails on frames with more)"
            );
        }
        f.commit(None, |p, _| {
            match p.vlmeta.iter_mut().find(|v| v.name == name) {
                Some(v) => v.chunk = chunk,
                None => p.vlmeta.push(Vlmeta {
                    name: name.to_vec(),
                    chunk,
                }),
            }
            Ok(())
        })
    }

    pub fn vlmeta_delete(&self, name: impl AsRef<[u8]>) -> Result<()> {
        let name = name.as_ref();
        let mut f = self.write()?;
        find_vlmeta(&f, name)?;
        f.commit(None, |p, _| {
            p.vlmeta.retain(|v| v.name != name);
            Ok(())
        })
    }
}

fn find_vlmeta<'f>(f: &'f Frame, name: &[u8]) -> Result<&'f Vlmeta> {
    f.vlmeta
        .iter()
        .find(|v| v.name == name)
        .ok_or_else(|| Error::not_found(format_args!("no vlmetalayer named {:?}", show(name))))
}

#[derive(Clone, Copy)]
enum Placement {
    Insert(usize),
    Replace(usize),
}

/// A special chunk of `kind` to store as data (in a frame of variable-length chunks, where
/// an index entry carries no size). c-blosc2 reads zeros, NaNs and uninitialized bytes only
/// from index entries: stored in a file frame it refuses them (its lazy chunk read knows the
/// repeated-value kind alone) and with them the whole frame when chunk 0 is one. So they are
/// stored as that kind, repeating a zero (uninitialized bytes may hold anything) or a NaN.
/// Zeros that are not a whole number of items are blocks of zero streams instead (a repeated
/// value of one byte, as chunk 0, stops c-blosc2 opening the frame). `None` where there is
/// no such value: NaNs of sizes other than 4 and 8 (nothing reads them) and kinds other than
/// these three.
fn stored_special(
    kind: SpecialValue,
    nbytes: usize,
    typesize: usize,
    blocksize: usize,
) -> Result<Option<Vec<u8>>> {
    if chunk::special::zeros_not_whole_items(kind, nbytes, typesize) {
        return chunk::special::zero_streams(nbytes, typesize, blocksize).map(Some);
    }
    let (item, typesize) = match kind {
        SpecialValue::Zero | SpecialValue::Uninit => (vec![0; typesize], typesize),
        SpecialValue::Nan if typesize == 4 => (f32::NAN.to_le_bytes().to_vec(), 4),
        SpecialValue::Nan if typesize == 8 => (f64::NAN.to_le_bytes().to_vec(), 8),
        _ => return Ok(None),
    };
    chunk::special::build(
        SpecialValue::Value,
        nbytes,
        typesize,
        blocksize,
        Some(&item),
    )
    .map(Some)
}

/// A chunk to put in a frame: its header and its bytes (without anything after `cbytes`).
/// Blosc1 chunks are refused: frames hold extended headers only.
fn chunk_to_store(chunk: &[u8]) -> Result<(ChunkHeader, &[u8])> {
    let d = chunk::decompress::Decoder::new(chunk).map_err(|e| e.context("chunk to store"))?;
    let h = d.header().clone();
    if h.cbytes() < chunk::EXTENDED_HEADER_LEN {
        bail!(
            invalid,
            "chunk to store: Blosc1 chunks (16-byte headers) cannot be stored in a frame"
        );
    }
    let cbytes = h.cbytes();
    Ok((h, &chunk[..cbytes]))
}

/// How a frame keeps a chunk: as bytes stored in it, or as an index entry alone.
enum Kept<'c> {
    Stored(Cow<'c, [u8]>),
    Index(i64),
}

impl Kept<'_> {
    fn stored(&self) -> Option<&[u8]> {
        match self {
            Kept::Stored(b) => Some(b),
            Kept::Index(_) => None,
        }
    }

    /// The index entry, given where the stored bytes went (the commit places them all).
    fn entry(&self, loc: Option<(i64, u32)>) -> Result<(i64, u32)> {
        match (self, loc) {
            (Kept::Index(raw), _) => Ok((*raw, 0)),
            (Kept::Stored(_), Some(l)) => Ok(l),
            (Kept::Stored(_), None) => {
                Err(Error::Internal("a stored chunk without a place".into()))
            }
        }
    }
}

/// How chunk `h` (bytes `chunk`) is kept at `place` of frame `f` once its chunksize is `cs`
/// (0: variable-length). Zeros, NaNs and uninitialized bytes of a full chunk (or a last one)
/// of a fixed-chunksize frame are index entries alone, as c-blosc2 keeps them, where an
/// entry reads back as the same chunk; elsewhere they are stored as repeated values (see
/// `stored_special`). Both libraries rebuild an entry's chunk with the frame's typesize, so
/// chunks whose nbytes it does not divide (c-blosc2 keeps them as entries, and then cannot
/// read them) and NaNs of another width are stored.
fn kept_form<'c>(
    f: &Frame,
    h: &ChunkHeader,
    chunk: &'c [u8],
    cs: i64,
    place: Placement,
) -> Result<Kept<'c>> {
    let special = h.special()?;
    let nb = h.nbytes() as i64;
    let n = f.nchunks();
    let ts = i64::from(f.header.typesize);
    let rebuilt_alike = ts > 0
        && nb % ts == 0
        && match special {
            SpecialValue::Zero | SpecialValue::Uninit => true,
            SpecialValue::Nan => i64::from(h.typesize()) == ts,
            _ => false,
        };
    let index_only = cs > 0
        && rebuilt_alike
        && match place {
            Placement::Insert(pos) => nb == cs || pos == n,
            Placement::Replace(i) => nb == cs || i + 1 == n,
        }
        && nb > 0;
    if index_only {
        return Ok(Kept::Index(index::special_raw(special)));
    }
    // Zeros repeat an item of the frame's typesize, not the chunk header's (1 above 255):
    // c-blosc2 reads a repeated value in a file frame as one item of the frame's typesize.
    // NaNs keep the chunk's float width.
    let typesize = match special {
        SpecialValue::Nan => usize::from(h.typesize()),
        _ => f.header.typesize as usize,
    };
    Ok(Kept::Stored(
        match stored_special(special, h.nbytes(), typesize.max(1), h.blocksize())? {
            Some(v) => Cow::Owned(v),
            None => Cow::Borrowed(chunk),
        },
    ))
}

/// Refuses an empty chunk as a frame's first: c-blosc2 cannot open such a frame (it inspects
/// chunk 0 through a read that fails on an empty chunk, and takes a frame of 0 bytes to have
/// no chunks), its own included. Empty chunks after the first are read there.
fn check_first_chunk(nbytes: usize) -> Result<()> {
    if nbytes == 0 {
        bail!(
            invalid,
            "an empty chunk cannot be a frame's first chunk (c-blosc2 cannot open such a frame)"
        );
    }
    Ok(())
}

/// Fills `dst` with `n` bytes of a special value.
fn fill_special(kind: SpecialValue, typesize: usize, n: usize, dst: &mut [u8]) -> Result<usize> {
    if dst.len() < n {
        return Err(Error::BufferTooSmall {
            needed: n,
            given: dst.len(),
        });
    }
    special_part(kind, typesize, n, 0..n, &mut dst[..n])?;
    Ok(n)
}

/// Bytes `part` of `n` bytes of a special value, into `dst` (`part.len()` bytes), the value
/// in phase wherever `part` starts.
fn special_part(
    kind: SpecialValue,
    typesize: usize,
    n: usize,
    part: Range<usize>,
    dst: &mut [u8],
) -> Result<()> {
    // Any blocksize decodes a special chunk; one block unless the chunk exceeds a block's limit.
    let blocksize = n.clamp(1, chunk::MAX_BLOCKSIZE);
    // Zeros need no whole items (c-blosc2 keeps a short last chunk of them as an entry).
    let typesize = if chunk::special::zeros_not_whole_items(kind, n, typesize) {
        1
    } else {
        typesize.max(1)
    };
    let c = chunk::special::build(kind, n, typesize, blocksize, None)?;
    Decoder::new(&c)?.decode_range(part, dst)
}

fn wrong_size(i: usize, got: usize, n: usize) -> Error {
    Error::corrupt(format_args!(
        "chunk {i} holds {got} bytes where {n} were expected"
    ))
}
