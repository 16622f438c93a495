//! Compression parameters, the compression context and the chunk encoder.
//!
//! The encoder makes the decisions c-blosc2 makes (blocksize, split, memcpy fallback, runs,
//! all-zero chunks, dictionaries), so for deterministic codecs the chunks are byte-identical
//! to c-blosc2's. Blocks are compressed independently on the context's pool and laid out in
//! block order, so the output does not depend on the number of threads.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use super::blocksize::{blocks_of, compute_blocksize, split_block, MIN_BUFFERSIZE};
use super::header::{self, ChunkHeader, SpecialValue};
use super::{EXTENDED_HEADER_LEN, MAX_BLOCKSIZE, MAX_BUFFERSIZE, MAX_OVERHEAD};
use crate::codecs;
use crate::error::{Error, Result};
use crate::filters;
use crate::filters::pipeline::{is_noop_backward, Undo};
use crate::memcopy;
use crate::pool::{BufferStash, Pool};

/// Types larger than this are compressed as a stream of bytes (c-blosc2's `BLOSC_MAX_TYPESIZE`).
const MAX_SPLIT_TYPESIZE: usize = 255;
/// Largest dictionary built for a chunk.
const MAX_DICT_SIZE: usize = codecs::zstd::MAX_DICT_SIZE;
/// Below this a dictionary is not worth building.
const MIN_USEFUL_DICT: usize = 256;

/// How blocks are split into one stream per byte of the type (c-blosc2 values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SplitMode {
    Always = 1,
    Never = 2,
    Auto = 3,
    ForwardCompat = 4,
}

impl TryFrom<u8> for SplitMode {
    type Error = Error;
    fn try_from(v: u8) -> Result<SplitMode> {
        Ok(match v {
            1 => SplitMode::Always,
            2 => SplitMode::Never,
            3 => SplitMode::Auto,
            4 => SplitMode::ForwardCompat,
            _ => bail!(
                invalid,
                "splitmode {v} is not one of 1 (always), 2 (never), 3 (auto), 4 (forward compat)"
            ),
        })
    }
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
            codec: codecs::BLOSCLZ,
            clevel: 5,
            filters: [0, 0, 0, 0, 0, filters::SHUFFLE],
            filters_meta: [0; 6],
            typesize: 8,
            blocksize: 0,
            nthreads: 1,
            splitmode: SplitMode::ForwardCompat,
            use_dict: false,
        }
    }
}

impl CParams {
    /// Checks every field; unknown codecs and filters are `Unsupported`, bad values `InvalidArgument`.
    pub fn validate(&self) -> Result<()> {
        self.check_codec()?;
        self.check_filters()?;
        if self.typesize == 0 || self.typesize > MAX_BLOCKSIZE {
            bail!(
                invalid,
                "typesize {} is outside 1..={MAX_BLOCKSIZE}",
                self.typesize
            );
        }
        if self.blocksize > MAX_BLOCKSIZE {
            bail!(
                invalid,
                "blocksize {} exceeds the maximum ({MAX_BLOCKSIZE})",
                self.blocksize
            );
        }
        if self.nthreads == 0 || self.nthreads > i16::MAX as usize {
            bail!(
                invalid,
                "nthreads {} is outside 1..={}",
                self.nthreads,
                i16::MAX
            );
        }
        Ok(())
    }

    /// The codec, its clevel and its dictionary: whether this library writes them.
    pub(crate) fn check_codec(&self) -> Result<()> {
        match self.codec {
            codecs::BLOSCLZ | codecs::LZ4 | codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD => {}
            c => bail!(
                unsupported,
                "codec id {c} ({}) is not supported by b2frame",
                codecs::name(c)
            ),
        }
        if self.clevel > 9 {
            bail!(invalid, "clevel {} is outside 0..=9", self.clevel);
        }
        if self.use_dict && !matches!(self.codec, codecs::ZSTD | codecs::LZ4 | codecs::LZ4HC) {
            bail!(
                invalid,
                "use_dict is only supported with zstd, lz4 and lz4hc (codec is {})",
                codecs::name(self.codec)
            );
        }
        Ok(())
    }

    /// The filter pipeline: whether this library writes it (known filters, in an order
    /// c-blosc2 reads back).
    pub(crate) fn check_filters(&self) -> Result<()> {
        for &f in &self.filters {
            match f {
                filters::NOFILTER
                | filters::SHUFFLE
                | filters::BITSHUFFLE
                | filters::DELTA
                | filters::TRUNC_PREC
                | filters::BYTEDELTA
                | filters::INT_TRUNC
                | filters::NDCELL
                | filters::NDMEAN => {}
                other => bail!(
                    unsupported,
                    "filter id {other} ({}) is not supported by b2frame for compression",
                    filters::name(other)
                ),
            }
        }
        if let Some(why) = filters::pipeline::c_blosc2_misreads(&self.filters) {
            let names: Vec<&str> = (self.filters.iter())
                .filter(|&&f| f != filters::NOFILTER)
                .map(|&f| filters::name(f))
                .collect();
            bail!(
                unsupported,
                "filter pipeline [{}] is not written: {why}",
                names.join(", ")
            );
        }
        Ok(())
    }
}

/// A compression context: validated parameters plus the worker pool that lives with it.
/// It is `Sync`: several threads may compress with one context at once.
#[derive(Debug)]
pub struct Context {
    params: CParams,
    pool: Pool,
    /// The n-dim array's blockshape, for NDCELL and NDMEAN (see
    /// [`Context::set_array_blockshape`]).
    array_blockshape: Option<Vec<i32>>,
    /// What a super-chunk's context carries from chunk to chunk (see
    /// [`Context::carry_over_between_chunks`]); `None` in one-shot contexts.
    carried: Option<Carried>,
}

/// What c-blosc2's context keeps of one chunk's compression for the next.
#[derive(Debug, Default)]
struct Carried {
    /// The blocksize the last chunk was cut by, 0 before the first.
    blocksize: AtomicUsize,
    /// Set once a chunk was compressed: c-blosc2 caps a typesize above 255 to 1 in the
    /// context itself, so later chunks pick their blocksize with typesize 1.
    typesize_capped: AtomicBool,
}

/// The layout decisions for one chunk.
struct Plan {
    nbytes: usize,
    /// Typesize used by filters and splits (1 for types above 255 bytes).
    typesize: usize,
    blocksize: usize,
    nblocks: usize,
    leftover: usize,
    dont_split: bool,
    /// Blocks shorter than one item, which c-blosc2 would split and this does not (see
    /// [`Context::plan`]): a chunk stored as is keeps c-blosc2's split bit.
    too_short_to_split: bool,
    /// What delta codes the blocks after block 0 against, when not the raw block 0 (see
    /// [`Context::delta_reference`]).
    delta_ref: Option<Vec<u8>>,
}

impl Plan {
    fn block_range(&self, j: usize) -> std::ops::Range<usize> {
        let start = j * self.blocksize;
        let len = if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        };
        start..start + len
    }
    fn is_leftover(&self, j: usize) -> bool {
        j + 1 == self.nblocks && self.leftover > 0
    }
    fn nstreams(&self, j: usize) -> usize {
        if !self.dont_split && !self.is_leftover(j) {
            self.typesize
        } else {
            1
        }
    }
}

/// The chunk being laid out by [`Context::compress_blocks_parallel`]'s workers.
struct Placement<'a> {
    /// The next block to place: blocks go into the chunk in order.
    next: usize,
    /// Compressed blocks that finished before the ones in front of them: buffer, size, and
    /// the raw streams left out of the buffer.
    waiting: BTreeMap<usize, Compressed>,
    /// The part of the chunk not handed out yet; it starts at chunk offset `pos`.
    rest: &'a mut [u8],
    pos: usize,
    /// Chunk offset of each block placed.
    starts: Vec<usize>,
    /// A block did not fit: the chunk is stored uncompressed instead.
    full: bool,
    /// The raw streams of the blocks placed, at their chunk offsets.
    raw: Vec<RawStream>,
}

/// A compressed block waiting for its place: buffer, size, the raw streams left out of the
/// buffer, and whether every stream is stored raw (no codec output in it).
type Compressed = (Vec<u8>, usize, Vec<RawStream>, bool);

/// A placed block: its chunk space, and the buffer to copy there but for its raw streams
/// (`None`: the block was compressed in place).
type Ready<'a> = (&'a mut [u8], Option<Vec<u8>>, Vec<RawStream>);

/// Compresses block `j` into the given room as the serial compressor does: its size and raw
/// streams, or `None` if it does not fit.
type Redo<'r> = dyn FnMut(usize, &mut [u8]) -> Result<Option<(usize, Vec<RawStream>)>> + 'r;

impl<'a> Placement<'a> {
    /// Records block `j`, compressed into `out`: its size, raw streams and whether all its
    /// streams are raw (`None`: it did not fit `out`). Then adds to `ready` the chunk space
    /// of every block now next in order, with the buffer to copy into it.
    fn finish(
        &mut self,
        j: usize,
        out: Vec<u8>,
        outcome: Option<(usize, Vec<RawStream>, bool)>,
        ready: &mut Vec<Ready<'a>>,
        redo: &mut Redo<'_>,
    ) -> Result<()> {
        let Some((n, raw, all_raw)) = outcome else {
            self.full = true;
            BUFFERS.give_back([out]);
            return Ok(());
        };
        if j != self.next || self.full {
            self.waiting.insert(j, (out, n, raw, all_raw));
            return Ok(());
        }
        // The block next in order goes straight in, without a stop in `waiting`.
        let mut next = Some((out, n, raw, all_raw));
        while let Some((block, n, raw, all_raw)) = next {
            let (block, n, raw) = if self.rest.len() >= block.len() || all_raw {
                // As much room as the block was compressed with, or no codec output in it (a
                // codec that could not shrink a stream cannot with less room either): the
                // serial compressor writes the same block, if it fits.
                if n > self.rest.len() {
                    self.full = true;
                    BUFFERS.give_back([block]);
                    return Ok(());
                }
                (Some(block), n, raw)
            } else {
                // Less room left than the block was compressed with. The serial compressor,
                // whose chunk this must be, gives a codec only the room left, and a codec
                // short of room can give up on a block it would have fit (zstd does): the
                // block is compressed again that way, in place.
                BUFFERS.give_back([block]);
                match redo(self.next, self.rest)? {
                    Some((n, raw)) => (None, n, raw),
                    None => {
                        self.full = true;
                        return Ok(());
                    }
                }
            };
            let (to, rest) = std::mem::take(&mut self.rest).split_at_mut(n);
            self.rest = rest;
            self.starts.push(self.pos);
            self.raw.extend(raw.iter().map(|s| RawStream {
                at: self.pos + s.at,
                ..*s
            }));
            self.pos += n;
            self.next += 1;
            ready.push((to, block, raw));
            next = self.waiting.remove(&self.next);
        }
        Ok(())
    }
}

struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = const { RefCell::new(Scratch { a: Vec::new(), b: Vec::new() }) };
}

/// A stream stored raw whose bytes are copied once the chunk is known to fit. Unfiltered
/// streams are slices of the source, so the copy can wait: an incompressible chunk, stored
/// memcpyed in the end, then costs one copy of the data instead of two.
struct RawStream {
    at: usize,
    from: usize,
    len: usize,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Buf {
    Src,
    A,
    B,
}

impl Context {
    pub fn new(params: CParams) -> Result<Context> {
        params.validate()?;
        let pool = Pool::new(params.nthreads)?;
        Ok(Context {
            params,
            pool,
            array_blockshape: None,
            carried: None,
        })
    }

    /// Makes this a super-chunk's context, whose blocksize carries over from chunk to chunk
    /// as c-blosc2's does: c-blosc2 compresses all of a super-chunk's chunks through one
    /// context, and each chunk's blocksize becomes the next chunk's requested one. So a
    /// short last chunk is cut by the blocksize of the chunks before it (not the one it would
    /// get alone), and chunks after a short chunk by the short chunk's. The one exception: a
    /// chunk smaller than an item leaves c-blosc2 blocks of 1 byte for every chunk after it
    /// (stored uncompressed); here it leaves the blocksize as it was. A typesize above 255
    /// carries over capped, as c-blosc2's does: 1 for the blocksize of every chunk after the
    /// first (a short last chunk is then cut at any byte, not at whole items).
    pub fn carry_over_between_chunks(&mut self) {
        self.carried = Some(Carried::default());
    }

    /// The blocksize asked for the next chunk (the last chunk's in a super-chunk's context,
    /// once there is one, else the parameters'; 0 = automatic), and the typesize to pick
    /// the blocksize with.
    fn carried_in(&self) -> (usize, usize) {
        let p = &self.params;
        let Some(c) = &self.carried else {
            return (p.blocksize, p.typesize);
        };
        let asked = match c.blocksize.load(Ordering::Relaxed) {
            0 => p.blocksize,
            b => b,
        };
        let capped = p.typesize > MAX_SPLIT_TYPESIZE && c.typesize_capped.load(Ordering::Relaxed);
        (asked, if capped { 1 } else { p.typesize })
    }

    /// Records what the next chunk takes from this one (see [`Context::carried_in`]).
    fn carry_out(&self, nbytes: usize, typesize: usize, blocksize: usize) {
        if let Some(c) = &self.carried {
            if nbytes >= typesize {
                c.blocksize.store(blocksize, Ordering::Relaxed);
            }
            c.typesize_capped.store(true, Ordering::Relaxed);
        }
    }

    /// Compresses chunks of an n-dim array with this blockshape (its `b2nd` metalayer's),
    /// which NDCELL and NDMEAN need, as in c-blosc2.
    pub fn set_array_blockshape(&mut self, blockshape: Vec<i32>) {
        self.array_blockshape = Some(blockshape);
    }

    /// The array's blockshape, if this context codes an array's chunks.
    pub fn array_blockshape(&self) -> Option<&[i32]> {
        self.array_blockshape.as_deref()
    }

    pub fn params(&self) -> &CParams {
        &self.params
    }

    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    fn has_shuffle(&self) -> bool {
        self.params.filters.contains(&filters::SHUFFLE)
    }

    /// The blocksize this context uses for `nbytes` of data.
    pub fn blocksize_for(&self, nbytes: usize) -> usize {
        self.blocksize_asking(nbytes, self.params.blocksize, self.params.typesize)
    }

    fn blocksize_asking(&self, nbytes: usize, asked: usize, typesize: usize) -> usize {
        let p = &self.params;
        compute_blocksize(
            p.splitmode,
            p.codec,
            p.clevel,
            self.has_shuffle(),
            typesize,
            nbytes,
            asked,
        )
    }

    /// The layout of a chunk of `nbytes`, its blocksize picked as asked with `stune_typesize`.
    fn plan(&self, nbytes: usize, asked_blocksize: usize, stune_typesize: usize) -> Plan {
        let p = &self.params;
        // c-blosc2 picks the blocksize with the typesize its context holds (the real one
        // until a super-chunk's context has capped it), then caps the typesize.
        let blocksize = self.blocksize_asking(nbytes, asked_blocksize, stune_typesize);
        let typesize = if p.typesize > MAX_SPLIT_TYPESIZE {
            1
        } else {
            p.typesize
        };
        let c_blosc2_splits = split_block(
            p.splitmode,
            p.codec,
            p.clevel,
            self.has_shuffle(),
            typesize,
            blocksize,
        );
        // A block shorter than one item (an explicit blocksize below the typesize) has no
        // byte for each of its typesize streams. c-blosc2 splits it all the same, into empty
        // streams: its chunk expands (stored as is, or with room to spare, unreadable).
        // Such blocks are not split here.
        let too_short_to_split = c_blosc2_splits && blocksize < typesize;
        let (nblocks, leftover) = blocks_of(nbytes, blocksize);
        Plan {
            nbytes,
            typesize,
            blocksize,
            nblocks,
            leftover,
            dont_split: !c_blosc2_splits || too_short_to_split,
            too_short_to_split,
            delta_ref: None,
        }
    }

    /// Whether the filters (one at least) turn any block of zeros into zeros, so that such a
    /// block's streams are runs of zeros without running them: shuffles, bytedelta and the
    /// truncations do, the latter only with parameters they accept (they refuse the others on
    /// every block, and still must). Delta does not (it XORs the blocks after block 0 with
    /// it); the n-dim filters are left out. Asked only for blocks that start and end with a
    /// zero byte: once per context, it cost one-shot compressions of 1 KiB 150 instructions.
    /// `typesize` is the plan's, which the filters run with.
    #[inline(never)]
    fn filters_keep_zeros(&self, typesize: usize) -> bool {
        let p = &self.params;
        let mut any = false;
        for (&id, &m) in p.filters.iter().zip(&p.filters_meta) {
            let stays = match id {
                filters::NOFILTER => continue,
                filters::TRUNC_PREC => filters::trunc_prec::zeroed_bits(m as i8, typesize).is_ok(),
                filters::INT_TRUNC => filters::int_trunc::zeroed_bits(m as i8, typesize).is_ok(),
                other => filters::pipeline::keeps_zeros(other),
            };
            if !stays {
                return false;
            }
            any = true;
        }
        any
    }

    /// The header every chunk of this context starts with (cbytes and some flags set later).
    fn base_header(&self, plan: &Plan) -> ChunkHeader {
        let p = &self.params;
        let mut blocksize = plan.blocksize;
        if plan.nbytes > 0 && blocksize > plan.nbytes {
            blocksize = plan.nbytes;
        }
        ChunkHeader::new_extended(
            plan.typesize as u8,
            plan.nbytes,
            blocksize,
            p.filters,
            self.filters_meta(),
            p.codec,
        )
    }

    /// Bytedelta takes its typesize from its meta slot; 0 means the chunk's typesize.
    fn filters_meta(&self) -> [u8; 6] {
        let p = &self.params;
        let mut meta = p.filters_meta;
        for (m, &f) in meta.iter_mut().zip(&p.filters) {
            if f == filters::BYTEDELTA && *m == 0 {
                *m = p.typesize.min(MAX_SPLIT_TYPESIZE) as u8;
            }
        }
        meta
    }

    /// Compresses `src` into `dst`; returns the chunk length.
    /// `dst` of [`max_compressed_size`] bytes always suffices.
    pub fn compress(&self, src: &[u8], dst: &mut [u8]) -> Result<usize> {
        let nbytes = src.len();
        if nbytes > MAX_BUFFERSIZE {
            bail!(
                invalid,
                "source of {nbytes} bytes exceeds the chunk maximum ({MAX_BUFFERSIZE})"
            );
        }
        if dst.len() < MAX_OVERHEAD {
            return Err(Error::BufferTooSmall {
                needed: max_compressed_size(nbytes),
                given: dst.len(),
            });
        }
        let (asked_blocksize, stune_typesize) = self.carried_in();
        let mut plan = self.plan(nbytes, asked_blocksize, stune_typesize);
        self.carry_out(nbytes, stune_typesize, plan.blocksize);
        let mut h = self.base_header(&plan);
        let p = &self.params;
        // Block starts that do not fit make c-blosc2 store the chunk as is from the start,
        // but not with a dictionary to build: it finds out after its sampling pass, so the
        // stored chunk keeps the split and codec flags set in between.
        let bstarts_fit = EXTENDED_HEADER_LEN + 4 * plan.nblocks <= dst.len();
        let memcpyed = p.clevel == 0 || nbytes < MIN_BUFFERSIZE || (!bstarts_fit && !p.use_dict);
        if memcpyed {
            h.add_flags(header::MEMCPYED);
            if nbytes == 0 && p.use_dict && p.clevel > 0 {
                // c-blosc2 compresses an empty input again without the dictionary it could
                // not build, finds no stream in it and marks the stored chunk a run of zeros.
                h.add_blosc2_flags((SpecialValue::Zero as u8) << 4);
            }
            return self.write_memcpyed(&mut h, asked_blocksize, src, dst);
        }
        let delta = p.filters.contains(&filters::DELTA);
        if delta {
            h.add_flags(header::DODELTA);
        }
        if plan.dont_split && !plan.too_short_to_split {
            h.add_flags(header::DONT_SPLIT);
        }
        h.add_flags(codec_format(p.codec) << 5);
        if !bstarts_fit {
            // Stored with the flags above; the dictionary c-blosc2 samples here goes unused.
            h.add_flags(header::MEMCPYED);
            return self.write_memcpyed(&mut h, asked_blocksize, src, dst);
        }
        if delta {
            plan.delta_ref = self.delta_reference(&plan, src)?;
        }
        let dict = if p.use_dict {
            self.build_dict(&plan, src)?
        } else {
            None
        };
        let mut pos = EXTENDED_HEADER_LEN + 4 * plan.nblocks;
        if let Some(d) = &dict {
            h.add_blosc2_flags(header::USEDICT);
            let end = pos + 4 + d.bytes.len();
            if end > dst.len() {
                h.add_flags(header::MEMCPYED);
                return self.write_memcpyed(&mut h, asked_blocksize, src, dst);
            }
            dst[pos..pos + 4].copy_from_slice(&(d.bytes.len() as i32).to_le_bytes());
            dst[pos + 4..end].copy_from_slice(&d.bytes);
            pos = end;
        }
        // c-blosc2 runs on one thread unless there are two whole blocks or more, and the
        // choice shows when the chunk barely fits: a serial block must fit in the room left
        // in `dst` as it is compressed, a parallel one only once it is placed.
        let parallel = plan.nbytes / plan.blocksize > 1;
        let end = match self.pool.workers().filter(|_| parallel) {
            Some(pool) => {
                self.compress_blocks_parallel(pool, &plan, src, dict.as_ref(), dst, pos)?
            }
            None => self.compress_blocks_serial(&plan, src, dict.as_ref(), dst, pos)?,
        };
        let Some(end) = end else {
            // Incompressible, or larger than dst: store it as is.
            h.add_flags(header::MEMCPYED);
            return self.write_memcpyed(&mut h, asked_blocksize, src, dst);
        };
        if plan.too_short_to_split {
            h.add_flags(header::DONT_SPLIT);
        }
        let nstreams: usize = (0..plan.nblocks).map(|j| plan.nstreams(j)).sum();
        if dict.is_none() && end == EXTENDED_HEADER_LEN + 4 * plan.nblocks + 4 * nstreams {
            // Every stream is a run of zeros: the whole chunk is.
            h.add_blosc2_flags((SpecialValue::Zero as u8) << 4);
            h.set_cbytes(EXTENDED_HEADER_LEN);
            label_blocksize(&mut h, asked_blocksize, nbytes);
        } else {
            h.set_cbytes(end);
        }
        h.write(dst);
        Ok(h.cbytes())
    }

    /// Compresses into a new chunk.
    pub fn compress_to_vec(&self, src: &[u8]) -> Result<Vec<u8>> {
        let mut out = vec![0u8; max_compressed_size(src.len())];
        let n = self.compress(src, &mut out)?;
        out.truncate(n);
        Ok(out)
    }

    /// Decompresses `chunk` into `dst` with this context's threads; returns nbytes.
    pub fn decompress(&self, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
        super::decompress::decompress_with(&self.pool, chunk, dst)
    }

    fn write_memcpyed(
        &self,
        h: &mut ChunkHeader,
        asked_blocksize: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<usize> {
        // No dictionary in a stored chunk. c-blosc2 leaves its flag set and then cannot
        // decode its own chunk (it reads the data's first word as the dictionary's size).
        h.remove_blosc2_flags(header::USEDICT);
        let total = EXTENDED_HEADER_LEN + src.len();
        if total > dst.len() {
            return Err(Error::BufferTooSmall {
                needed: total,
                given: dst.len(),
            });
        }
        h.set_cbytes(total);
        label_blocksize(h, asked_blocksize, src.len());
        h.write(dst);
        self.pool.copy(&mut dst[EXTENDED_HEADER_LEN..total], src);
        Ok(total)
    }

    fn compress_blocks_serial(
        &self,
        plan: &Plan,
        src: &[u8],
        dict: Option<&Dict>,
        dst: &mut [u8],
        mut pos: usize,
    ) -> Result<Option<usize>> {
        let mut raw = Vec::new();
        for j in 0..plan.nblocks {
            let at = EXTENDED_HEADER_LEN + 4 * j;
            dst[at..at + 4].copy_from_slice(&(pos as i32).to_le_bytes());
            let first = raw.len();
            match self.compress_block(plan, j, src, dict, &mut dst[pos..], Some(&mut raw))? {
                Some((n, _)) => {
                    for s in &mut raw[first..] {
                        s.at += pos;
                    }
                    pos += n;
                }
                None => return Ok(None),
            }
        }
        self.copy_raw_streams(dst, src, &raw);
        Ok(Some(pos))
    }

    /// Workers claim blocks in order, compress each into a buffer from a small reused set
    /// (so it is still in cache), and place finished blocks into the chunk in block order:
    /// whoever finishes the next block to place also places any later ones already waiting.
    /// The chunk is the same as the serial one, whatever the thread count.
    fn compress_blocks_parallel(
        &self,
        pool: &crate::pool::Workers,
        plan: &Plan,
        src: &[u8],
        dict: Option<&Dict>,
        dst: &mut [u8],
        pos: usize,
    ) -> Result<Option<usize>> {
        let (head, body) = dst.split_at_mut(pos);
        let placement = Mutex::new(Placement {
            next: 0,
            waiting: BTreeMap::new(),
            rest: body,
            pos,
            starts: Vec::with_capacity(plan.nblocks),
            full: false,
            raw: Vec::new(),
        });
        let claimed = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let work = || -> Result<()> {
            // Buffers this thread placed, reused for its next blocks: the shared stash is
            // visited once per call, not twice per block (tiny blocks, such as runs, spent
            // more time waiting for its lock than compressing).
            let mut spare: Vec<Vec<u8>> = Vec::new();
            let mut ready: Vec<Ready<'_>> = Vec::new();
            let mut run = || -> Result<()> {
                while !stop.load(Ordering::Relaxed) {
                    let j = claimed.fetch_add(1, Ordering::Relaxed);
                    if j >= plan.nblocks {
                        break;
                    }
                    let len = plan.block_range(j).len() + 5 * plan.nstreams(j);
                    let mut out = match spare.pop() {
                        Some(mut b) => {
                            b.resize(len, 0);
                            b
                        }
                        None => BUFFERS.take(len),
                    };
                    let mut raw = Vec::new();
                    let n = self.compress_block(plan, j, src, dict, &mut out, Some(&mut raw));
                    let n = n.inspect_err(|_| stop.store(true, Ordering::Relaxed))?;
                    {
                        let mut p = placement.lock().unwrap_or_else(|e| e.into_inner());
                        let mut redo = |j: usize, room: &mut [u8]| {
                            let mut raw = Vec::new();
                            let n = self.compress_block(plan, j, src, dict, room, Some(&mut raw));
                            Ok(n?.map(|(n, _)| (n, raw)))
                        };
                        let outcome = n.map(|(n, all_raw)| (n, raw, all_raw));
                        let placed = p.finish(j, out, outcome, &mut ready, &mut redo);
                        if p.full || placed.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        placed?;
                    }
                    for (to, block, raw) in ready.drain(..) {
                        let Some(block) = block else {
                            continue;
                        };
                        // The bytes between the raw streams (whose place stays empty for now).
                        let mut at = 0;
                        for s in raw.iter().chain([&RawStream {
                            at: to.len(),
                            from: 0,
                            len: 0,
                        }]) {
                            memcopy::copy(&mut to[at..s.at], &block[at..s.at]);
                            at = s.at + s.len;
                        }
                        spare.push(block);
                    }
                }
                Ok(())
            };
            let result = run();
            BUFFERS.give_back(spare);
            result
        };
        crate::pool::on_each_thread(pool, work)?;
        let p = placement.into_inner().unwrap_or_else(|e| e.into_inner());
        BUFFERS.give_back(p.waiting.into_values().map(|(b, ..)| b));
        if p.full || p.next != plan.nblocks {
            return Ok(None);
        }
        for (j, start) in p.starts.iter().enumerate() {
            let at = EXTENDED_HEADER_LEN + 4 * j;
            head[at..at + 4].copy_from_slice(&(*start as i32).to_le_bytes());
        }
        let (end, raw) = (p.pos, p.raw);
        self.copy_raw_streams(dst, src, &raw);
        Ok(Some(end))
    }

    /// Copies the raw streams `raw` (in chunk order) from `src` into their places in `dst`,
    /// split over the threads as [`Pool::split_mut`] does.
    fn copy_raw_streams(&self, dst: &mut [u8], src: &[u8], raw: &[RawStream]) {
        let (Some(first), Some(last)) = (raw.first(), raw.last()) else {
            return;
        };
        let base = first.at;
        self.pool
            .split_mut(&mut dst[base..last.at + last.len], 1, |offset, piece| {
                let (start, end) = (base + offset, base + offset + piece.len());
                let from = raw.partition_point(|s| s.at + s.len <= start);
                for s in raw[from..].iter().take_while(|s| s.at < end) {
                    let (lo, hi) = (s.at.max(start), (s.at + s.len).min(end));
                    let src = &src[s.from + (lo - s.at)..][..hi - lo];
                    memcopy::copy(&mut piece[lo - start..hi - start], src);
                }
            });
    }

    /// Filters and compresses block `j` into `out` as its streams (csize + data each): its
    /// size and whether every stream is stored raw, or `None` when the block does not fit in
    /// `out`. With `defer`, raw streams of an unfiltered block are listed there (offsets into
    /// `out` and `src`) instead of copied.
    ///
    /// Its shape is pinned (out of line, with the scratch access and `compress_streams` in
    /// it): left to LLVM it changed with edits to the decoder, which share codegen units with
    /// it, and zeros took 53 more instructions a 1 KiB chunk.
    #[inline(never)]
    fn compress_block(
        &self,
        plan: &Plan,
        j: usize,
        src: &[u8],
        dict: Option<&Dict>,
        out: &mut [u8],
        defer: Option<&mut Vec<RawStream>>,
    ) -> Result<Option<(usize, bool)>> {
        let r = plan.block_range(j);
        let n = r.len();
        let block = &src[r.clone()];
        if block.first() == Some(&0)
            && block.last() == Some(&0)
            && self.filters_keep_zeros(plan.typesize)
            && is_run(block)
        {
            // What the filters and the run check would make of it, without them: 8 MiB of
            // zeros compress 4-5 times as fast shuffled (12 -> 55-61 GB/s), 10-13 times
            // bitshuffled. A block of zeros starts and ends with one: most others are not
            // scanned.
            let len = 4 * plan.nstreams(j);
            if len > out.len() {
                return Ok(None);
            }
            out[..len].fill(0);
            return Ok(Some((len, false)));
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let Scratch { a, b } = &mut *s;
            if a.len() < n {
                a.resize(n, 0);
                b.resize(n, 0);
            }
            let (a, b) = (&mut a[..n], &mut b[..n]);
            let (data, mut defer): (&[u8], _) = match self.filter_block(plan, j, src, a, b)? {
                Buf::Src => (block, defer),
                Buf::A => (a, None),
                Buf::B => (b, None),
            };
            let first = defer.as_ref().map_or(0, |list| list.len());
            let n = self.compress_streams(plan.nstreams(j), data, dict, out, defer.as_deref_mut());
            if let Some(list) = defer {
                // compress_streams counts from the block's start; the copy reads from src.
                for s in &mut list[first..] {
                    s.from += r.start;
                }
            }
            Ok(n)
        })
    }

    /// Block 0 as decoders read it back, where that is not its input: with a lossy filter
    /// (trunc_prec, int_trunc, ndmean) before the delta. Decoders, c-blosc2's too, undo the
    /// delta of the other blocks against block 0 as decoded, so they are coded against that
    /// here. c-blosc2 codes them against the raw block 0, and its chunks then read back wrong
    /// (with [trunc_prec, delta] on compressible floats, most values). A lossy filter after
    /// the delta truncates the differences themselves: nothing reads those back as written,
    /// and the chunks stay c-blosc2's.
    fn delta_reference(&self, plan: &Plan, src: &[u8]) -> Result<Option<Vec<u8>>> {
        let f = &self.params.filters;
        let lossy = |&id: &u8| {
            matches!(
                id,
                filters::TRUNC_PREC | filters::INT_TRUNC | filters::NDMEAN
            )
        };
        let delta = f.iter().position(|&id| id == filters::DELTA).unwrap_or(0);
        if plan.nblocks < 2 || !f[..delta].iter().any(lossy) {
            return Ok(None);
        }
        let n = plan.blocksize;
        let (mut a, mut b) = (vec![0u8; n], vec![0u8; n]);
        let mut block = match self.filter_block(plan, 0, src, &mut a, &mut b)? {
            Buf::Src => src[..n].to_vec(),
            Buf::A => a,
            Buf::B => b,
        };
        // Undo the pipeline as a decoder does, last slot first.
        let undo = Undo {
            typesize: plan.typesize,
            frame_typesize: self.params.typesize,
            array_blockshape: self.array_blockshape.as_deref(),
            version: header::VERSION_STABLE,
        };
        let mut out = vec![0u8; n];
        for (&id, &m) in f.iter().zip(&self.filters_meta()).rev() {
            if id == filters::DELTA {
                filters::delta::decode_first_block(plan.typesize, &mut block);
            } else if !is_noop_backward(id) {
                undo.step(id, m, &block, &mut out)?;
                std::mem::swap(&mut block, &mut out);
            }
        }
        Ok(Some(block))
    }

    /// Runs the forward pipeline on block `j`; returns which buffer holds the result.
    fn filter_block(
        &self,
        plan: &Plan,
        j: usize,
        src: &[u8],
        a: &mut [u8],
        b: &mut [u8],
    ) -> Result<Buf> {
        let p = &self.params;
        let r = plan.block_range(j);
        let block = &src[r.clone()];
        let meta = self.filters_meta();
        let mut cur = Buf::Src;
        for (&id, &m) in p.filters.iter().zip(&meta) {
            if id == filters::NOFILTER {
                continue;
            }
            let next = if cur == Buf::A { Buf::B } else { Buf::A };
            let (input, output): (&[u8], &mut [u8]) = match (cur, next) {
                (Buf::Src, Buf::A) => (block, &mut *a),
                (Buf::A, Buf::B) => (&*a, &mut *b),
                (Buf::B, Buf::A) => (&*b, &mut *a),
                _ => unreachable!("the pipeline alternates between its two buffers"),
            };
            let ts = plan.typesize;
            match id {
                filters::SHUFFLE => {
                    let g = if m == 0 { ts } else { usize::from(m) };
                    filters::shuffle::shuffle(g, input, output);
                }
                filters::BITSHUFFLE => filters::bitshuffle::bitshuffle(ts, input, output)?,
                filters::DELTA => {
                    // Block 0 is coded against itself; the others against block 0.
                    if j == 0 {
                        filters::delta::encode(input, true, ts, input, output);
                    } else {
                        let dref = plan.delta_ref.as_deref();
                        let dref = dref.unwrap_or(&src[..plan.blocksize]);
                        filters::delta::encode(dref, false, ts, input, output);
                    }
                }
                filters::TRUNC_PREC => filters::trunc_prec::truncate(m as i8, ts, input, output)?,
                filters::BYTEDELTA => filters::bytedelta::encode(usize::from(m), input, output),
                filters::INT_TRUNC => filters::int_trunc::truncate(m as i8, ts, input, output)?,
                filters::NDCELL | filters::NDMEAN => filters::ndcell::run(
                    filters::ndcell::Direction::Encode,
                    id,
                    m,
                    self.array_blockshape.as_deref(),
                    p.typesize,
                    input,
                    output,
                )?,
                other => bail!(
                    unsupported,
                    "filter id {other} is not supported for compression"
                ),
            }
            cur = next;
        }
        Ok(cur)
    }

    /// Writes `nstreams` streams of `data` into `out`: their size and whether every one is
    /// stored raw, or `None` if they do not fit. With `defer`, streams stored raw get their
    /// place but not their bytes: each is listed there (offsets into `out` and `data`) for the
    /// caller to copy. Inlined into `compress_block`, its one caller (see there).
    #[inline(always)]
    fn compress_streams(
        &self,
        nstreams: usize,
        data: &[u8],
        dict: Option<&Dict>,
        out: &mut [u8],
        mut defer: Option<&mut Vec<RawStream>>,
    ) -> Option<(usize, bool)> {
        let neblock = data.len() / nstreams;
        let mut pos = 0;
        let mut raw = 0;
        for (i, stream) in data.chunks_exact(neblock).take(nstreams).enumerate() {
            if pos + 4 > out.len() {
                return None;
            }
            let first = stream[0];
            if is_run(stream) {
                if first == 0 {
                    out[pos..pos + 4].copy_from_slice(&0i32.to_le_bytes());
                    pos += 4;
                } else {
                    if pos + 5 > out.len() {
                        return None;
                    }
                    out[pos..pos + 4].copy_from_slice(&(-i32::from(first)).to_le_bytes());
                    out[pos + 4] = 0x1; // run-length token
                    pos += 5;
                }
                continue;
            }
            let maxout = neblock.min(out.len() - pos - 4);
            if maxout == 0 {
                return None;
            }
            let body = &mut out[pos + 4..pos + 4 + maxout];
            let mut csize = self.compress_stream(stream, dict, body);
            if csize == 0 || csize == neblock {
                // Not compressible: store the stream raw.
                if pos + 4 + neblock > out.len() {
                    return None;
                }
                match defer.as_deref_mut() {
                    Some(list) => list.push(RawStream {
                        at: pos + 4,
                        from: i * neblock,
                        len: neblock,
                    }),
                    None => memcopy::copy(&mut out[pos + 4..pos + 4 + neblock], stream),
                }
                csize = neblock;
                raw += 1;
            }
            out[pos..pos + 4].copy_from_slice(&(csize as i32).to_le_bytes());
            pos += 4 + csize;
        }
        Some((pos, raw == nstreams))
    }

    fn compress_stream(&self, stream: &[u8], dict: Option<&Dict>, out: &mut [u8]) -> usize {
        let clevel = self.params.clevel;
        match (self.params.codec, dict) {
            (codecs::BLOSCLZ, _) => codecs::blosclz::compress(clevel, stream, out),
            (codecs::LZ4, Some(d)) => {
                codecs::lz4::compress_with_dict(clevel, &d.bytes, stream, out)
            }
            (codecs::LZ4, None) => codecs::lz4::compress(clevel, stream, out),
            (codecs::LZ4HC, Some(d)) => {
                codecs::lz4::compress_hc_with_dict(clevel, &d.bytes, stream, out)
            }
            (codecs::LZ4HC, None) => codecs::lz4::compress_hc(clevel, stream, out),
            (codecs::ZLIB, _) => codecs::zlib::compress(clevel, stream, out),
            (codecs::ZSTD, Some(Dict { zstd: Some(cd), .. })) => {
                codecs::zstd::compress_with_dict(cd, stream, out)
            }
            (codecs::ZSTD, _) => codecs::zstd::compress(clevel, stream, out),
            _ => 0,
        }
    }

    /// Builds the chunk's dictionary from its filtered blocks, as c-blosc2 does: raw samples for
    /// LZ4, a trained dictionary for zstd. `None` when the data is too small to be worth one.
    fn build_dict(&self, plan: &Plan, src: &[u8]) -> Result<Option<Dict>> {
        let nbytes = plan.nbytes;
        let max_size = MAX_DICT_SIZE.min(nbytes / 20);
        let nsamples = (plan.nblocks * if plan.dont_split { 1 } else { plan.typesize }).max(8);
        let sample_size = nbytes / nsamples / 16;
        if max_size < MIN_USEFUL_DICT || sample_size == 0 {
            return Ok(None);
        }
        // The samples are the filtered blocks laid end to end.
        let mut filtered = vec![0u8; nsamples * sample_size];
        let mut filled = 0;
        for j in 0..plan.nblocks {
            if filled == filtered.len() {
                break;
            }
            let r = plan.block_range(j);
            let (n, take) = (r.len(), r.len().min(filtered.len() - filled));
            SCRATCH.with(|s| -> Result<()> {
                let mut s = s.borrow_mut();
                let Scratch { a, b } = &mut *s;
                if a.len() < n {
                    a.resize(n, 0);
                    b.resize(n, 0);
                }
                let (a, b) = (&mut a[..n], &mut b[..n]);
                let data: &[u8] = match self.filter_block(plan, j, src, a, b)? {
                    Buf::Src => &src[r],
                    Buf::A => a,
                    Buf::B => b,
                };
                filtered[filled..filled + take].copy_from_slice(&data[..take]);
                Ok(())
            })?;
            filled += take;
        }
        if self.params.codec == codecs::ZSTD {
            let Some(bytes) = codecs::zstd::train_dict(&filtered, sample_size, nsamples, max_size)
            else {
                return Ok(None);
            };
            let cdict = codecs::zstd::CDict::new(&bytes)?;
            Ok(Some(Dict {
                bytes,
                zstd: Some(cdict),
            }))
        } else {
            let len = max_size.min(filtered.len());
            filtered.truncate(len);
            // c-blosc2 writes the dictionary size into the chunk before copying the samples
            // from an overlapping region of it, so its LZ4 dictionaries carry those 4 bytes
            // at offset 4 * nblocks. Reproduced for identical chunks.
            let at = 4 * plan.nblocks;
            if at < len {
                let size = (len as i32).to_le_bytes();
                let end = (at + 4).min(len);
                filtered[at..end].copy_from_slice(&size[..end - at]);
            }
            Ok(Some(Dict {
                bytes: filtered,
                zstd: None,
            }))
        }
    }

    /// A special-value chunk of `nbytes` with this context's parameters (`value` for
    /// [`SpecialValue::Value`]: one item of typesize bytes).
    pub fn special_chunk(
        &self,
        kind: SpecialValue,
        nbytes: usize,
        value: Option<&[u8]>,
    ) -> Result<Vec<u8>> {
        let plan = self.plan(nbytes, self.params.blocksize, self.params.typesize);
        super::special::build(kind, nbytes, self.params.typesize, plan.blocksize, value)
    }
}

/// Labels a chunk without blocks (stored, or a run of zeros) with the blocksize asked for, as
/// c-blosc2 records it: capped at nbytes but not rounded to the typesize (nothing is cut by
/// it there). Blocked chunks keep the blocksize they are cut by: where c-blosc2's label and
/// cut differ there, it cannot read its own chunk.
fn label_blocksize(h: &mut ChunkHeader, asked_blocksize: usize, nbytes: usize) {
    if asked_blocksize > 0 {
        h.set_blocksize(if nbytes > 0 {
            asked_blocksize.min(nbytes)
        } else {
            asked_blocksize
        });
    }
}

/// A chunk's dictionary: the bytes stored in the chunk, digested for zstd.
struct Dict {
    bytes: Vec<u8>,
    zstd: Option<codecs::zstd::CDict>,
}

/// Block output buffers kept between calls (enough for a 64 MiB chunk).
static BUFFERS: BufferStash = BufferStash::new(80 << 20);

/// Whether every byte of `s` equals the first (c-blosc2 stores such streams as runs).
fn is_run(s: &[u8]) -> bool {
    let first = s[0];
    // A byte-wise OR of differences over 256 bytes, which the compiler turns into vector
    // instructions, then one test: compares of 8-byte words, each with its branch, took 9%
    // of the compression of shuffled incr_i32 with BloscLZ at clevel 1, whose high planes are
    // runs.
    let mut pieces = s.chunks_exact(256);
    for piece in &mut pieces {
        if piece.iter().fold(0, |acc, &b| acc | (b ^ first)) != 0 {
            return false;
        }
    }
    // The rest the same way: a byte loop that stops at the first difference cannot be
    // vectorized, and streams shorter than 256 bytes went through it whole (a 1 KiB chunk of
    // zeros, shuffled in 128-byte streams, compressed at 0.4 of c-blosc2's speed).
    pieces
        .remainder()
        .iter()
        .fold(0, |acc, &b| acc | (b ^ first))
        == 0
}

/// `b2f_max_compressed_size`: the largest chunk `nbytes` of data can take.
pub fn max_compressed_size(nbytes: usize) -> usize {
    nbytes + MAX_OVERHEAD
}

/// The codec format stored in `flags` bits 5-7 for a codec id.
fn codec_format(codec: u8) -> u8 {
    match codec {
        codecs::BLOSCLZ => header::FORMAT_BLOSCLZ,
        codecs::LZ4 | codecs::LZ4HC => header::FORMAT_LZ4,
        codecs::ZLIB => header::FORMAT_ZLIB,
        codecs::ZSTD => header::FORMAT_ZSTD,
        _ => header::FORMAT_UDCODEC,
    }
}

#[cfg(test)]
mod tests {
    use super::{is_run, Buf, CParams, Context};
    use crate::filters;

    #[test]
    fn blocks_of_zeros_skip_only_filters_that_keep_them_zeros() {
        // Block 0 of data, then blocks of zeros: delta would XOR those with block 0.
        let ids = [
            filters::NOFILTER,
            filters::SHUFFLE,
            filters::BITSHUFFLE,
            filters::DELTA,
            filters::TRUNC_PREC,
            filters::BYTEDELTA,
            filters::INT_TRUNC,
        ];
        let metas = [0u8, 2, 13, 60, (-3i8) as u8, (-60i8) as u8];
        let mut skipped = Vec::new();
        for typesize in [1, 2, 3, 4, 8, 12, 16] {
            let mut src = vec![0u8; 3 * 4096 + 1000];
            for (&a, &b, &meta) in ids
                .iter()
                .flat_map(|a| ids.iter().map(move |b| (a, b)))
                .flat_map(|(a, b)| metas.iter().map(move |m| (a, b, m)))
            {
                let params = CParams {
                    filters: [0, 0, 0, 0, a, b],
                    filters_meta: [0, 0, 0, 0, meta, meta],
                    typesize,
                    ..CParams::default()
                };
                let Ok(ctx) = Context::new(params) else {
                    continue; // a pipeline c-blosc2 would misread
                };
                let plan = ctx.plan(src.len(), 4096, typesize);
                for (i, v) in src.iter_mut().enumerate() {
                    *v = if i < plan.blocksize {
                        (i * 7 + i / 13) as u8 | 1
                    } else {
                        0
                    };
                }
                if !ctx.filters_keep_zeros(plan.typesize) {
                    continue;
                }
                skipped.push((a, b, meta, typesize));
                let (mut x, mut y) = (vec![0u8; 4096], vec![0u8; 4096]);
                for j in 1..plan.nblocks {
                    let n = plan.block_range(j).len();
                    let (x, y) = (&mut x[..n], &mut y[..n]);
                    let out: &[u8] = match ctx.filter_block(&plan, j, &src, x, y) {
                        Ok(Buf::Src) => &src[plan.block_range(j)],
                        Ok(Buf::A) => x,
                        Ok(Buf::B) => y,
                        Err(e) => panic!("{a} {b} {meta} {typesize}: skipped, but refused: {e}"),
                    };
                    let zeros = out.iter().all(|&v| v == 0);
                    assert!(
                        zeros,
                        "filters {a}, {b} (meta {meta}), typesize {typesize}, block {j}"
                    );
                }
            }
        }
        // The pipelines that matter are among them: shuffles, bytedelta, truncations.
        for (a, b, meta, typesize) in [
            (filters::NOFILTER, filters::SHUFFLE, 0, 8),
            (filters::NOFILTER, filters::BITSHUFFLE, 0, 4),
            (filters::SHUFFLE, filters::BYTEDELTA, 2, 2),
            (filters::TRUNC_PREC, filters::SHUFFLE, 13, 4),
            (filters::INT_TRUNC, filters::SHUFFLE, (-3i8) as u8, 2),
        ] {
            assert!(
                skipped.contains(&(a, b, meta, typesize)),
                "{a}, {b}, {meta}, {typesize}"
            );
        }
        assert!(!skipped
            .iter()
            .any(|s| s.0 == filters::DELTA || s.1 == filters::DELTA));
        // Nothing to skip without a filter; nor past a truncation's refusal.
        assert!(!skipped.iter().any(|s| s.0 == 0 && s.1 == 0));
        assert!(!skipped.contains(&(filters::TRUNC_PREC, filters::SHUFFLE, 60, 4)));
    }

    #[test]
    fn a_run_is_found_only_when_every_byte_matches() {
        for len in [1, 2, 31, 255, 256, 257, 511, 512, 1000, 4096 + 17] {
            for first in [0u8, 0x5a, 0xff] {
                let run = vec![first; len];
                assert!(is_run(&run), "len {len}, byte {first:#x}");
                // One byte off anywhere (in a whole 256-byte piece, its last byte, the tail).
                for at in [1, 7, 255, 256, len / 2, len - 1] {
                    if at == 0 || at >= len {
                        continue;
                    }
                    let mut broken = run.clone();
                    broken[at] ^= 0x80;
                    assert!(!is_run(&broken), "len {len}, byte {first:#x}, at {at}");
                }
            }
        }
    }
}
