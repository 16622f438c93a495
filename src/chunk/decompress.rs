//! The chunk decoder: whole chunks or single blocks, serial or on a context's pool.
//!
//! [`Decoder::new`] validates the chunk's layout (bstarts, dictionary, variable-length block
//! table) before anything is decoded; each block is then decoded with bounds checked against
//! the chunk, so no field read from the chunk indexes or sizes anything unchecked.

use std::borrow::Cow;
use std::cell::RefCell;

use super::blocksize::blocks_of;
use super::header::{self, ChunkHeader, SpecialValue};
use crate::codecs;
use crate::error::{Error, Result};
use crate::filters;
use crate::filters::pipeline::{is_noop_backward, keeps_zeros, Undo};
use crate::memcopy;
use crate::pool::{BufferStash, Pool};

/// Largest dictionary a chunk may carry (`BLOSC2_MAXDICTSIZE`).
const MAX_DICT_SIZE: usize = codecs::zstd::MAX_DICT_SIZE;

/// Decompresses a whole chunk into `dst` (at least the chunk's nbytes long); returns nbytes.
pub fn decompress(chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
    Decoder::new(chunk)?.decode_all(dst, None)
}

/// Decompresses a whole chunk on `pool`'s threads.
pub fn decompress_with(pool: &Pool, chunk: &[u8], dst: &mut [u8]) -> Result<usize> {
    Decoder::new(chunk)?.decode_all(dst, Some(pool))
}

/// Items `[start, start + nitems)` of `chunk` (in its header's typesize) into `dst`, decoding
/// only the blocks that hold them (c-blosc2's `blosc2_getitem`); returns the bytes written.
/// Takes the memory of one block of the chunk (its blocksize, at most `MAX_BLOCKSIZE` as the
/// header check holds), as c-blosc2 does.
pub fn getitem(chunk: &[u8], start: usize, nitems: usize, dst: &mut [u8]) -> Result<usize> {
    let d = Decoder::new(chunk)?;
    let ts = usize::from(d.header().typesize()).max(1);
    let total = d.header().nbytes() / ts;
    if start > total || nitems > total - start {
        bail!(
            invalid,
            "getitem: items [{start}, {start} + {nitems}) are outside the chunk's {total} items"
        );
    }
    let len = nitems * ts;
    if dst.len() < len {
        return Err(Error::BufferTooSmall {
            needed: len,
            given: dst.len(),
        });
    }
    d.decode_range(start * ts..start * ts + len, &mut dst[..len])?;
    Ok(len)
}

/// Decompresses a whole chunk into a new buffer. `max_nbytes` bounds the allocation: a header
/// claiming more is an error, so an untrusted chunk never sizes an allocation by itself.
pub fn decompress_to_vec(chunk: &[u8], max_nbytes: usize) -> Result<Vec<u8>> {
    let d = Decoder::new(chunk)?;
    let n = d.header().nbytes();
    if n > max_nbytes {
        bail!(
            no_memory,
            "chunk claims {n} uncompressed bytes, more than the {max_nbytes} allowed here"
        );
    }
    let mut out = vec![0u8; n];
    d.decode_all(&mut out, None)?;
    Ok(out)
}

/// Where one variable-length block lives.
#[derive(Clone, Copy, Debug)]
struct VlBlock {
    /// Offset of the block in the decompressed chunk.
    offset: usize,
    len: usize,
    /// The block's stream (after its int32 uncompressed size) within the chunk.
    cstart: usize,
    cend: usize,
}

enum Dict<'a> {
    None,
    Lz4(&'a [u8]),
    Zstd(codecs::zstd::DDict),
}

/// A validated chunk, ready to decode whole or block by block.
pub struct Decoder<'a> {
    chunk: &'a [u8],
    h: ChunkHeader,
    special: SpecialValue,
    typesize: usize,
    /// The frame's typesize: what bytedelta with meta 0, NDCELL and NDMEAN work with (see
    /// [`Decoder::in_frame`]).
    frame_typesize: usize,
    /// The array's blockshape, for NDCELL and NDMEAN (see [`Decoder::in_array`]).
    array_blockshape: Option<&'a [i32]>,
    nblocks: usize,
    blocksize: usize,
    leftover: usize,
    bstarts_end: usize,
    dict: Dict<'a>,
    vl: Vec<VlBlock>,
    /// Whether the first undo step is an unshuffle that can read the streams of a whole
    /// block as its planes where they lie: streams stored raw are then unshuffled from the
    /// chunk rather than copied out first. Only for blocks of `MIN_PLANES_IN_PLACE_BLOCK`
    /// bytes and up.
    planes_in_place: bool,
    /// Whether any filter has something to undo (else streams decode straight to the output).
    has_filters: bool,
    /// Whether blocks other than 0 are coded against block 0 (a delta filter in a chunk with
    /// streams).
    delta: bool,
    /// The items' size, where the one filter to undo is a shuffle (the most common pipeline,
    /// undone without walking the six slots).
    only_unshuffle: Option<usize>,
}

/// Per-thread scratch for the filter pipeline (two ping-pong buffers) and the planes of
/// repeated bytes the unshuffle reads.
struct Scratch {
    a: Vec<u8>,
    b: Vec<u8>,
    runs: RunPlanes,
}

/// `n` bytes of `buf` starting on a cache line, growing `buf` as needed. As c-blosc2 aligns
/// its own scratch: LZ4 decodes shuffled incr_i32 into it 1-6% faster than at malloc's
/// 16-byte alignment.
fn aligned(buf: &mut Vec<u8>, n: usize) -> &mut [u8] {
    if buf.len() < n + LINE {
        buf.resize(n + LINE, 0);
    }
    let at = line_start(buf);
    &mut buf[at..at + n]
}

/// [`aligned`], with [`STREAM_SLACK`] more bytes after the `n` for the last stream decoded
/// into it.
fn aligned_with_slack(buf: &mut Vec<u8>, n: usize) -> &mut [u8] {
    aligned(buf, n + STREAM_SLACK)
}

/// Room after the block in the scratch, for its last stream. Decoders are given the bytes
/// after their stream's part as room to write over: the next streams of the block, not
/// decoded yet, then this. LZ4's decoder (lz4's and ours alike) keeps to its fast loop while
/// 64 bytes of room are left; given the stream's exact length, it ended each stream in its
/// safe loop, which copies the end of a long match a byte at a time (bench/RESULTS.md, stop 52).
/// libdeflate needs 299 bytes ([`codecs::zlib::OUTPUT_ROOM`]).
const STREAM_SLACK: usize = 320;
const _: () = assert!(STREAM_SLACK >= codecs::zlib::OUTPUT_ROOM);

const LINE: usize = 64;

/// Smallest block whose planes are read where they lie (see `Decoder::planes_in_place`).
/// Below it the streams are decoded (or copied, or filled) into one buffer and unshuffled
/// from there: the plane bookkeeping costs about 250 instructions a block, more than the
/// copies it saves in a 1 KiB block (shuffled 1 KiB chunks decode 0.05-0.11 of c-blosc2's
/// speed faster, worst row 0.82 -> 0.90). From 4 KiB on, the saved copies are worth it:
/// with the bound at 16 KiB, shuffled 4 KiB chunks with LZ4HC decoded 0.02-0.03 slower.
const MIN_PLANES_IN_PLACE_BLOCK: usize = 4 << 10;

/// Where the first cache line of `buf` starts.
fn line_start(buf: &[u8]) -> usize {
    buf.as_ptr().align_offset(LINE).min(LINE)
}

/// The block buffers of [`Decoder::decode_range`], kept between calls.
static RANGE_BLOCKS: BufferStash = BufferStash::new(16 << 20);

thread_local! {
    static SCRATCH: RefCell<Scratch> = const {
        RefCell::new(Scratch { a: Vec::new(), b: Vec::new(), runs: RunPlanes::new() })
    };
}

/// The filter slots whose id passes `test`, as bits (slot `i` at bit `i`), written out term
/// by term so that it is unrolled in place.
#[inline(always)]
fn slots_where(pipeline: [u8; filters::MAX_FILTERS], test: impl Fn(u8) -> bool) -> u32 {
    let [f0, f1, f2, f3, f4, f5] = pipeline;
    let bit = |f: u8, i: u32| u32::from(test(f)) << i;
    bit(f0, 0) | bit(f1, 1) | bit(f2, 2) | bit(f3, 3) | bit(f4, 4) | bit(f5, 5)
}

/// The slots with a step to undo (as [`slots_where`] bits), and whether one is a delta.
/// Most pipelines have only their last slot set, c-blosc2's default: one compare finds them,
/// where the two masks test each of the six slots (a shuffled 1 KiB chunk's `Decoder::new`:
/// 303 -> 242 instructions).
#[inline(always)]
fn undo_slots(pipeline: [u8; filters::MAX_FILTERS]) -> (u32, bool) {
    let last = pipeline[filters::MAX_FILTERS - 1];
    // (A slice compare: the five bytes gathered into an array compared in 18 more
    // instructions.)
    if pipeline[..filters::MAX_FILTERS - 1] == [filters::NOFILTER; filters::MAX_FILTERS - 1] {
        let active = u32::from(!is_noop_backward(last)) << (filters::MAX_FILTERS - 1);
        return (active, last == filters::DELTA);
    }
    (
        slots_where(pipeline, |f| !is_noop_backward(f)),
        // Not `contains`: a `memchr` call for six bytes.
        slots_where(pipeline, |f| f == filters::DELTA) != 0,
    )
}

/// The little-endian int32 at `at`, if the chunk holds it. (An `Option`, where
/// [`read_i32`]'s `Result` was built on the stack in the streams' loop.)
#[inline(always)]
fn le_i32_at(chunk: &[u8], at: usize) -> Option<i32> {
    let bytes = chunk.get(at..)?.first_chunk::<4>()?;
    Some(i32::from_le_bytes(*bytes))
}

/// Stream `k`'s `len` bytes (its size, or its data) at `at` run past the chunk's end.
#[cold]
#[inline(never)]
fn stream_past_end(k: usize, at: usize, len: usize, chunk_len: usize) -> Error {
    Error::corrupt(format_args!(
        "stream {k}: {len} bytes at offset {at} run past the chunk ({chunk_len} bytes)"
    ))
}

fn read_i32(chunk: &[u8], at: usize) -> Result<i32> {
    chunk
        .get(at..at + 4)
        .map(|b| i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| {
            Error::corrupt(format_args!(
                "chunk: int32 at offset {at} is past the end ({} bytes)",
                chunk.len()
            ))
        })
}

impl<'a> Decoder<'a> {
    /// Parses and validates `chunk`'s header and layout.
    ///
    /// The decoder is built once, at the end, from values worked out before: built first and
    /// then filled in, it was copied into the `Result` (184 bytes, a `memcpy` call).
    #[inline]
    pub fn new(chunk: &'a [u8]) -> Result<Decoder<'a>> {
        let mut h = ChunkHeader::EMPTY;
        ChunkHeader::parse_into(chunk, &mut h)?;
        let chunk = &chunk[..h.cbytes()];
        let special = h.special()?;
        let hl = h.header_len();
        let typesize = usize::from(h.typesize());
        let whole_blocks = || blocks_of(h.nbytes(), h.blocksize());
        let mut nblocks = 0;
        let mut blocksize = h.blocksize();
        let mut leftover = 0;
        let mut bstarts_end = hl;
        let mut dict = Dict::None;
        let mut vl = Vec::new();
        let mut planes_in_place = false;
        let mut has_filters = false;
        let mut delta = false;
        let mut only_unshuffle = None;
        if special != SpecialValue::None {
            // Nothing stored but the header (and a repeated value).
        } else if h.memcpyed() {
            if h.cbytes() != h.nbytes() + hl {
                bail!(
                    corrupt,
                    "chunk: memcpyed chunk of {} bytes has cbytes {} (expected {})",
                    h.nbytes(),
                    h.cbytes(),
                    h.nbytes() + hl
                );
            }
            (nblocks, leftover) = whole_blocks();
        } else if !(h.nbytes() == 0 && h.cbytes() == hl) {
            if h.vl_blocks() {
                nblocks = h.blocksize();
                blocksize = 0;
            } else {
                (nblocks, leftover) = whole_blocks();
            }
            let bstarts_len = nblocks
                .checked_mul(4)
                .filter(|n| hl + n <= chunk.len())
                .ok_or_else(|| {
                    Error::corrupt(format_args!(
                        "chunk: {nblocks} block starts do not fit in its {} bytes",
                        chunk.len()
                    ))
                })?;
            bstarts_end = hl + bstarts_len;
            if h.use_dict() {
                (dict, bstarts_end) = Self::dict(&h, chunk, bstarts_end)?;
            }
            if h.vl_blocks() {
                vl = Self::vl_blocks(&h, chunk, nblocks, bstarts_end)?;
            }
            let pipeline = h.filters();
            // The slots with a step to undo: a slot iterator filtered from the end took 76
            // instructions for an unfiltered chunk, a `fold` over the slots 72 (not unrolled,
            // a call).
            let (active, has_delta) = undo_slots(pipeline);
            if active != 0 {
                // Undone first: the last slot's.
                let first = (u32::BITS - 1 - active.leading_zeros()) as usize;
                has_filters = true;
                delta = has_delta;
                // The items' size where the first step is a shuffle (of the meta's typesize,
                // or the chunk's for meta 0, as `Undo::step` reads it).
                let meta = usize::from(h.filters_meta()[first]);
                let unshuffle = (pipeline[first] == filters::SHUFFLE).then_some(if meta == 0 {
                    typesize
                } else {
                    meta
                });
                only_unshuffle = unshuffle.filter(|_| active == 1 << first);
                // The block's streams are then its planes, unless blocks are variable-length
                // or not split; up to 16 planes, as `PlaneSources` holds.
                planes_in_place = unshuffle == Some(typesize)
                    && blocksize >= MIN_PLANES_IN_PLACE_BLOCK
                    && vl.is_empty()
                    && !h.dont_split()
                    && filters::shuffle::unshuffles_planes_fast(typesize);
            }
        }
        Ok(Decoder {
            chunk,
            typesize,
            frame_typesize: typesize,
            array_blockshape: None,
            special,
            nblocks,
            blocksize,
            leftover,
            bstarts_end,
            dict,
            vl,
            planes_in_place,
            has_filters,
            delta,
            only_unshuffle,
            h,
        })
    }

    /// The chunk's dictionary, at `at`, and where the streams start after it. (This and
    /// `vl_blocks` are out of line, as rare layouts: inlined, they spread `new`'s common path
    /// over more cache lines.)
    #[cold]
    #[inline(never)]
    fn dict(h: &ChunkHeader, chunk: &'a [u8], at: usize) -> Result<(Dict<'a>, usize)> {
        let dsize = read_i32(chunk, at).map_err(|e| e.context("chunk dictionary size"))?;
        if dsize <= 0 || dsize as usize > MAX_DICT_SIZE {
            bail!(
                corrupt,
                "chunk: dictionary size {dsize} outside 1..={MAX_DICT_SIZE}"
            );
        }
        let start = at + 4;
        let end = start + dsize as usize;
        if end > chunk.len() {
            bail!(
                corrupt,
                "chunk: dictionary of {dsize} bytes at offset {start} runs past the chunk ({} bytes)",
                chunk.len()
            );
        }
        let bytes = &chunk[start..end];
        let dict = match h.compformat() {
            header::FORMAT_ZSTD => Dict::Zstd(codecs::zstd::DDict::new(bytes)?),
            header::FORMAT_LZ4 => Dict::Lz4(bytes),
            _ => Dict::None,
        };
        Ok((dict, end))
    }

    /// The blocks of a variable-length-block chunk, `nblocks` of them, whose offsets end at
    /// `bstarts_end`.
    #[cold]
    #[inline(never)]
    fn vl_blocks(
        h: &ChunkHeader,
        chunk: &[u8],
        nblocks: usize,
        bstarts_end: usize,
    ) -> Result<Vec<VlBlock>> {
        let hl = h.header_len();
        let cbytes = chunk.len();
        let mut blocks = Vec::with_capacity(nblocks);
        let mut total = 0usize;
        let mut prev = 0usize;
        for i in 0..nblocks {
            let bstart = read_i32(chunk, hl + 4 * i)?;
            let next = if i + 1 < nblocks {
                read_i32(chunk, hl + 4 * (i + 1))?
            } else {
                cbytes as i32
            };
            if bstart < 0 || next < 0 {
                bail!(
                    corrupt,
                    "chunk: variable-length block {i} has a negative offset"
                );
            }
            let (bstart, next) = (bstart as usize, next as usize);
            if bstart < bstarts_end || bstart <= prev || next <= bstart + 4 || next > cbytes {
                bail!(
                    corrupt,
                    "chunk: variable-length block {i} offsets {bstart}..{next} are out of order or outside {bstarts_end}..{cbytes}"
                );
            }
            let len = read_i32(chunk, bstart)?;
            if len <= 0 {
                bail!(corrupt, "chunk: variable-length block {i} has size {len}");
            }
            let len = len as usize;
            if total + len > h.nbytes() {
                bail!(
                    corrupt,
                    "chunk: variable-length blocks add up to more than nbytes ({})",
                    h.nbytes()
                );
            }
            blocks.push(VlBlock {
                offset: total,
                len,
                cstart: bstart + 4,
                cend: next,
            });
            total += len;
            prev = bstart;
        }
        if total != h.nbytes() {
            bail!(
                corrupt,
                "chunk: variable-length blocks add up to {total} bytes, nbytes is {}",
                h.nbytes()
            );
        }
        Ok(blocks)
    }

    /// Reads the chunk as one of a frame whose typesize is `typesize` (positive, as frame
    /// headers are checked to hold): c-blosc2 runs bytedelta with meta 0 over the
    /// super-chunk's typesize, which is not the header's above 255 (stored as 1).
    pub fn in_frame(mut self, typesize: usize) -> Self {
        self.frame_typesize = typesize.max(1);
        self
    }

    /// Reads the chunk as one of an n-dim array with this blockshape (from its `b2nd`
    /// metalayer; `None`: not an array), which NDCELL and NDMEAN need.
    pub fn in_array(mut self, blockshape: Option<&'a [i32]>) -> Self {
        self.array_blockshape = blockshape;
        self
    }

    pub fn header(&self) -> &ChunkHeader {
        &self.h
    }

    pub fn special(&self) -> SpecialValue {
        self.special
    }

    /// Number of blocks (0 for special and empty chunks).
    pub fn nblocks(&self) -> usize {
        if self.special != SpecialValue::None {
            0
        } else {
            self.nblocks
        }
    }

    /// Offset and length of block `j` in the decompressed chunk.
    pub fn block_range(&self, j: usize) -> std::ops::Range<usize> {
        if let Some(b) = self.vl.get(j) {
            return b.offset..b.offset + b.len;
        }
        let start = j * self.blocksize;
        let len = if j + 1 == self.nblocks && self.leftover > 0 {
            self.leftover
        } else {
            self.blocksize
        };
        start..start + len
    }

    /// Whether decoding a block other than 0 needs block 0's decoded bytes (delta filter).
    pub fn needs_reference(&self) -> bool {
        self.delta
    }

    /// Decodes the whole chunk into `dst`; returns nbytes.
    pub fn decode_all(&self, dst: &mut [u8], pool: Option<&Pool>) -> Result<usize> {
        let nbytes = self.h.nbytes();
        if dst.len() < nbytes {
            return Err(Error::BufferTooSmall {
                needed: nbytes,
                given: dst.len(),
            });
        }
        let dst = &mut dst[..nbytes];
        let serial = Pool::serial();
        let threads = pool.unwrap_or(&serial);
        if self.special != SpecialValue::None {
            return self.fill_special(dst, threads).map(|_| nbytes);
        }
        if self.h.memcpyed() {
            threads.copy(dst, &self.chunk[self.h.header_len()..]);
            return Ok(nbytes);
        }
        if nbytes == 0 {
            return Ok(0);
        }
        if self.nblocks == 1 {
            // Straight to the block: splitting the output among blocks cost a 1 KiB chunk 5 ns.
            return self.decode_block(0, dst, None).map(|_| nbytes);
        }
        let parallel = pool.and_then(|p| p.workers());
        if self.needs_reference() {
            // Block 0 first: every other block is coded against it.
            let r0 = self.block_range(0);
            let (first, rest) = dst.split_at_mut(r0.end);
            self.decode_block(0, first, None)?;
            let first: &[u8] = first;
            self.decode_rest(rest, r0.end, Some(first), parallel)?;
        } else {
            self.decode_rest(dst, 0, None, parallel)?;
        }
        Ok(nbytes)
    }

    /// Decodes every block that starts at or after `base` into `out` (= dst[base..]).
    fn decode_rest(
        &self,
        out: &mut [u8],
        base: usize,
        dref: Option<&[u8]>,
        parallel: Option<&crate::pool::Workers>,
    ) -> Result<()> {
        let first = if base == 0 { 0 } else { 1 };
        let mut rest = out;
        let parts = (first..self.nblocks).map(|j| {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(self.block_range(j).len());
            rest = tail;
            (j, head)
        });
        match parallel {
            Some(p) => crate::pool::for_each_claimed(p, parts, |(j, part)| {
                self.decode_block(j, part, dref)
            }),
            None => parts
                .into_iter()
                .try_for_each(|(j, part)| self.decode_block(j, part, dref)),
        }
    }

    fn fill_special(&self, dst: &mut [u8], threads: &Pool) -> Result<()> {
        self.fill_special_from(0, dst, threads)
    }

    /// [`Decoder::fill_special`] of the chunk's bytes from offset `at` on.
    fn fill_special_from(&self, at: usize, dst: &mut [u8], threads: &Pool) -> Result<()> {
        let mut fill = |pattern: &[u8]| {
            // The pattern as it runs from `at` (a copy only where that is not its start).
            let shift = at % pattern.len().max(1);
            let phased: Cow<'_, [u8]> = if shift == 0 {
                Cow::Borrowed(pattern)
            } else {
                let mut p = pattern.to_vec();
                p.rotate_left(shift);
                Cow::Owned(p)
            };
            threads.split_mut(dst, pattern.len(), |_, piece| fill_pattern(piece, &phased))
        };
        match self.special {
            // No pattern to keep in phase: a `memset` per piece, without the pattern's checks.
            SpecialValue::Zero | SpecialValue::Uninit => {
                threads.split_mut(dst, 1, |_, piece| piece.fill(0))
            }
            SpecialValue::Nan => match self.typesize {
                4 => fill(&f32::NAN.to_le_bytes()),
                8 => fill(&f64::NAN.to_le_bytes()),
                t => bail!(
                    unsupported,
                    "chunk: NaN chunk with typesize {t} (only 4 and 8 hold floats)"
                ),
            },
            SpecialValue::Value => fill(&self.chunk[self.h.header_len()..]),
            SpecialValue::None => {}
        }
        Ok(())
    }

    /// Decodes block `j` into `out` (exactly the block's length). `dref` is block 0 decoded,
    /// required for blocks other than 0 when [`Decoder::needs_reference`].
    pub fn decode_block(&self, j: usize, out: &mut [u8], dref: Option<&[u8]>) -> Result<()> {
        let r = self.block_range(j);
        if j >= self.nblocks.max(1) || out.len() != r.len() {
            bail!(
                invalid,
                "chunk: block {j} of {} decodes into {} bytes, {} given",
                self.nblocks,
                r.len(),
                out.len()
            );
        }
        if self.special != SpecialValue::None {
            return self.fill_special(out, &Pool::serial());
        }
        if self.h.memcpyed() {
            let start = self.h.header_len() + r.start;
            memcopy::copy(out, &self.chunk[start..start + r.len()]);
            return Ok(());
        }
        if out.is_empty() {
            return Ok(());
        }
        let result = if self.has_filters {
            // The error leaves the closure through `failed`: returned, the `Result` was
            // copied byte by byte on the way out, 26 instructions a block.
            let mut failed = None;
            SCRATCH.with(|s| {
                let mut s = s.borrow_mut();
                let Scratch { a, b, runs } = &mut *s;
                let n = out.len();
                let a = aligned_with_slack(a, n);
                failed = self.unfilter_block(j, out, dref, a, b, runs).err();
            });
            failed.map_or(Ok(()), Err)
        } else {
            // Streams go straight to `out` when nothing is left to undo.
            let n = out.len();
            self.decode_streams(j, out, n, None).map(|zeros| {
                if zeros {
                    out.fill(0);
                }
            })
        };
        result.map_err(|e| e.context(format_args!("chunk block {j}")))
    }

    /// Decodes block `j` into `out` where only the bytes of `parts` (ranges of the block)
    /// are to be read: a block whose one filter is a shuffle has just the items of `parts`
    /// gathered from its planes, instead of all of them unshuffled (a single element's read
    /// spent 5% of its time unshuffling the 128 KiB block around it). Any other block, and
    /// `parts` that are not whole items or cover more than a quarter of the block, are
    /// decoded whole.
    pub fn decode_block_parts(
        &self,
        j: usize,
        parts: &[std::ops::Range<usize>],
        out: &mut [u8],
        dref: Option<&[u8]>,
    ) -> Result<()> {
        let ts = self.typesize;
        let whole_items = |r: &std::ops::Range<usize>| {
            r.start.is_multiple_of(ts) && r.end.is_multiple_of(ts) && r.start <= r.end
        };
        let gather = self.gathers_items()
            && self.vl.is_empty()
            && j < self.nblocks
            && !(j + 1 == self.nblocks && self.leftover > 0)
            && out.len() == self.blocksize
            && out.len().is_multiple_of(ts)
            && parts.iter().all(|r| whole_items(r) && r.end <= out.len())
            && parts.iter().map(|r| r.len()).sum::<usize>() <= out.len() / 4;
        if !gather {
            return self.decode_block(j, out, dref);
        }
        let result = SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            let Scratch { a, runs, .. } = &mut *s;
            let n = out.len();
            let a = aligned_with_slack(a, n);
            let mut sources = PlaneSources::new(runs);
            let in_place = self.planes_in_place.then_some(&mut sources);
            if self.decode_streams(j, a, n, in_place)? && !self.planes_in_place {
                a[..n].fill(0);
            }
            let a = &a[..n];
            let mut planes: [&[u8]; MAX_PLANE_SOURCES] = [&[]; MAX_PLANE_SOURCES];
            self.planes(&sources, a, n / ts, &mut planes);
            for r in parts {
                let (lo, hi) = (r.start / ts, r.end / ts);
                let mut sub: [&[u8]; MAX_PLANE_SOURCES] = [&[]; MAX_PLANE_SOURCES];
                for (s, p) in sub.iter_mut().zip(&planes).take(ts) {
                    *s = &p[lo..hi];
                }
                filters::shuffle::unshuffle_planes(&sub[..ts], &mut out[r.clone()]);
            }
            Ok(())
        });
        result.map_err(|e: Error| e.context(format_args!("chunk block {j}")))
    }

    /// Whether the one filter to undo is a shuffle of whole items, with planes the gather
    /// of [`Decoder::decode_block_parts`] can index (typesize 2 to 16). Only chunks with
    /// streams (not special, not memcpyed) have a filter to undo.
    fn gathers_items(&self) -> bool {
        self.only_unshuffle == Some(self.typesize)
            && (2..=MAX_PLANE_SOURCES).contains(&self.typesize)
    }

    /// Decodes bytes `range` of the chunk into `dst` (`range.len()` bytes): only the blocks
    /// that hold them are decoded, and of a shuffled block only those items, as c-blosc2's
    /// getitem does.
    pub fn decode_range(&self, range: std::ops::Range<usize>, dst: &mut [u8]) -> Result<()> {
        if range.start > range.end || range.end > self.h.nbytes() || dst.len() != range.len() {
            bail!(
                invalid,
                "chunk: bytes {range:?} of {} into {} bytes",
                self.h.nbytes(),
                dst.len()
            );
        }
        if self.special != SpecialValue::None {
            return self.fill_special_from(range.start, dst, &Pool::serial());
        }
        let mut reference = None;
        if self.needs_reference() && range.end > self.block_range(0).end {
            let mut b0 = RANGE_BLOCKS.take(self.block_range(0).len());
            self.decode_block(0, &mut b0, None)?;
            reference = Some(b0);
        }
        let blocks = (0..self.nblocks())
            .map(|j| (j, self.block_range(j)))
            .filter(|(_, r)| r.end > range.start && r.start < range.end);
        let longest = blocks.clone().map(|(_, r)| r.len()).max().unwrap_or(0);
        // A kept buffer, stale bytes and all (only the decoded part is read): zeroing a fresh
        // one was a fifth of a short slice's time.
        let mut block = RANGE_BLOCKS.take(longest);
        for (j, r) in blocks {
            let (lo, hi) = (range.start.max(r.start), range.end.min(r.end));
            let part = lo - r.start..hi - r.start;
            let b = match (j, &reference) {
                // Block 0, decoded already as the reference.
                (0, Some(b0)) => &b0[..],
                _ => {
                    let b = &mut block[..r.len()];
                    self.decode_block_parts(
                        j,
                        std::slice::from_ref(&part),
                        b,
                        reference.as_deref(),
                    )?;
                    &b[..]
                }
            };
            dst[lo - range.start..hi - range.start].copy_from_slice(&b[part]);
        }
        // In the reverse of the order taken, so the next call takes each again.
        RANGE_BLOCKS.give_back(std::iter::once(block).chain(reference));
        Ok(())
    }

    /// Decodes block `j`'s streams into `a` (or leaves them where [`PlaneSources`] says)
    /// and undoes the filters into `out`, with `b` as the second scratch buffer (sized only
    /// for a pipeline that needs it). `a` has [`STREAM_SLACK`] bytes more than the block.
    ///
    /// Inlined into `decode_block`, its one caller, together with the thread-local scratch
    /// access: out of line it took its arguments on the stack and returned through memory.
    #[inline(always)]
    fn unfilter_block(
        &self,
        j: usize,
        out: &mut [u8],
        dref: Option<&[u8]>,
        a: &mut [u8],
        b: &mut Vec<u8>,
        runs: &mut RunPlanes,
    ) -> Result<()> {
        // The leftover block is one stream, not the block's planes.
        let keep = self.planes_in_place && !(j + 1 == self.nblocks && self.leftover > 0);
        let mut sources = keep.then(|| PlaneSources::new(runs));
        let n = out.len();
        let zeros = self.decode_streams(j, a, n, sources.as_mut())?;
        if zeros {
            if self.filters_keep_zeros() {
                // What undoing the filters would make of the block, without them (c-blosc2
                // fills the streams and undoes them): blocks of zeros in sparse data and in
                // the padding of an n-dim array's edge chunks.
                out.fill(0);
                return Ok(());
            }
            if sources.is_none() {
                a[..n].fill(0);
            }
        }
        let a = &mut a[..n];
        match (self.only_unshuffle, &sources) {
            (Some(_), Some(sources)) => self.unshuffle_sources(sources, a, out),
            (Some(typesize), None) => filters::shuffle::unshuffle(typesize, a, out),
            (None, _) => {
                let b = aligned(b, a.len());
                return self.unfilter(j, out, dref, a, b, sources.as_ref());
            }
        }
        Ok(())
    }

    /// Whether undoing this chunk's filters leaves a block of zeros zeros: the shuffles and
    /// bytedelta do, and the truncations have nothing to undo. Not delta (block 0's items are
    /// XORed into the others) nor the n-dim filters. Out of line: asked only for blocks whose
    /// streams are all runs of zeros.
    #[inline(never)]
    fn filters_keep_zeros(&self) -> bool {
        (self.h.filters().iter()).all(|&id| is_noop_backward(id) || keeps_zeros(id))
    }

    /// Decodes the compressed streams of block `j` into the first `n` bytes of `buf`; what
    /// follows them in `buf` is room the decoders may write over ([`STREAM_SLACK`]). With
    /// `sources`, streams stored raw stay in the chunk and runs of one byte are not written
    /// out: `sources` says where the unshuffle reads them instead. Returns whether every
    /// stream was a run of zeros; without `sources`, the block's bytes in `buf` are then left
    /// as they were, for the caller to fill.
    ///
    /// The codec is picked once for all the block's streams: LZ4 without a dictionary, the
    /// most common, has a streams' loop of its own, without the per-stream dispatch.
    #[inline]
    fn decode_streams(
        &self,
        j: usize,
        buf: &mut [u8],
        n: usize,
        sources: Option<&mut PlaneSources>,
    ) -> Result<bool> {
        let lz4 = matches!(
            (self.h.compformat(), &self.dict),
            (header::FORMAT_LZ4, Dict::None)
        );
        match (lz4, sources.is_some()) {
            (true, false) => self.decode_streams_of::<true, false>(j, buf, n, None),
            (true, true) => self.decode_streams_of::<true, true>(j, buf, n, sources),
            (false, false) => self.decode_streams_of::<false, false>(j, buf, n, None),
            (false, true) => self.decode_streams_of::<false, true>(j, buf, n, sources),
        }
    }

    /// [`Decoder::decode_streams`], whose compressed streams are all LZ4 without a dictionary
    /// if `LZ4`. (A const parameter, not a decoder passed in: passed as a function, it was
    /// called out of line once per stream, and as a closure it ran as many instructions.)
    /// `SOURCES` is whether `sources` may be given: the loop without them is compiled on its
    /// own, without their branches and the registers they hold.
    fn decode_streams_of<const LZ4: bool, const SOURCES: bool>(
        &self,
        j: usize,
        buf: &mut [u8],
        n: usize,
        sources: Option<&mut PlaneSources>,
    ) -> Result<bool> {
        let mut sources = sources.filter(|_| SOURCES);
        if let Some(vb) = self.vl.get(j) {
            let src = &self.chunk[vb.cstart..vb.cend];
            if src.len() == n {
                // Stored raw.
                memcopy::copy(&mut buf[..n], src);
                return Ok(false);
            }
            return self
                .decode_stream::<LZ4>(src, vb.cstart, buf, n)
                .map(|_| false);
        }
        let bstart = read_i32(self.chunk, self.h.header_len() + 4 * j)?;
        if bstart <= 0
            || (bstart as usize) < self.bstarts_end
            || bstart as usize >= self.chunk.len()
        {
            bail!(
                corrupt,
                "block start {bstart} outside the chunk's streams ({}..{})",
                self.bstarts_end,
                self.chunk.len()
            );
        }
        let mut pos = bstart as usize;
        let leftover_block = j + 1 == self.nblocks && self.leftover > 0;
        let nstreams = if !self.h.dont_split() && !leftover_block {
            self.typesize
        } else {
            1
        };
        let neblock = n / nstreams;
        if neblock == 0 {
            bail!(
                corrupt,
                "block of {n} bytes cannot be split into {nstreams} streams"
            );
        }
        if !n.is_multiple_of(nstreams) {
            // c-blosc2 3.3.5 writes such blocks from an explicit blocksize that is not a
            // multiple of the typesize: its streams leave the last bytes of the block unstored.
            bail!(
                corrupt,
                "block of {n} bytes split into {nstreams} streams of {neblock}: its last {} bytes \
                 were never stored",
                n % nstreams
            );
        }
        // Each stream's part is split off `rest` in turn (`chunks_exact_mut` divided the
        // length again); a compressed stream is decoded before, with the rest as its room.
        // Without `sources`, leading runs of zeros are written only once a stream of another
        // kind follows them: a block of nothing but is left to the caller, whose filters may
        // keep it zeros without a pass over the scratch.
        let defer_zeros = sources.is_none();
        // `deferred`: the bytes of the leading runs of zeros not written yet.
        let (mut rest, mut deferred) = (buf, 0);
        let mut zero_runs = 0;
        let chunk = self.chunk;
        for k in 0..nstreams {
            let Some(csize) = le_i32_at(chunk, pos) else {
                return Err(stream_past_end(k, pos, 4, chunk.len()));
            };
            pos += 4;
            if deferred != 0 && csize != 0 {
                let (head, tail) = std::mem::take(&mut rest).split_at_mut(deferred);
                head.fill(0);
                (rest, deferred) = (tail, 0);
            }
            let stream = |pos: usize, csize: usize| {
                chunk
                    .get(pos..pos + csize)
                    .ok_or_else(|| stream_past_end(k, pos, csize, chunk.len()))
            };
            if csize > 0 && csize as usize != neblock {
                let csize = csize as usize;
                self.decode_stream::<LZ4>(stream(pos, csize)?, pos, rest, neblock)
                    .map_err(|e| e.context(format_args!("stream {k}")))?;
                pos += csize;
                rest = &mut std::mem::take(&mut rest)[neblock..];
                continue;
            }
            if csize == 0 && defer_zeros && zero_runs == k {
                // Written once another kind of stream follows (above), else by the caller.
                zero_runs += 1;
                deferred += neblock;
                continue;
            }
            let (part, tail) = std::mem::take(&mut rest).split_at_mut(neblock);
            rest = tail;
            if csize == 0 {
                fill_run(sources.as_deref_mut(), k, 0, part);
                zero_runs += 1;
            } else if csize < 0 {
                let token = *self.chunk.get(pos).ok_or_else(|| {
                    Error::corrupt(format_args!(
                        "stream {k}: run token past the end of the chunk"
                    ))
                })?;
                pos += 1;
                if token & 0x1 == 0 {
                    bail!(corrupt, "stream {k}: unknown stream token 0x{token:02x}");
                }
                if csize < -255 {
                    bail!(
                        corrupt,
                        "stream {k}: run length value {csize} is not a byte"
                    );
                }
                fill_run(sources.as_deref_mut(), k, (-csize) as u8, part);
            } else {
                // Stored raw.
                let src = stream(pos, neblock)?;
                match sources.as_deref_mut() {
                    Some(sources) if k < MAX_PLANE_SOURCES => sources.at[k] = PlaneAt::Chunk(pos),
                    _ => memcopy::copy(part, src),
                }
                pos += neblock;
            }
        }
        Ok(zero_runs == nstreams)
    }

    /// Decodes one compressed stream, at `pos` in the chunk (its callers copy streams stored
    /// raw), to exactly `n` bytes at the start of `buf`; LZ4, BloscLZ and zlib take the rest
    /// of `buf` as room to write over. A stream that decodes to more than `n` bytes there is
    /// refused all the same. Inlined into the streams loop: one call and one `Result` through
    /// memory less per stream. With `LZ4`, the chunk's streams are LZ4 without a dictionary.
    #[inline(always)]
    fn decode_stream<const LZ4: bool>(
        &self,
        src: &[u8],
        pos: usize,
        buf: &mut [u8],
        n: usize,
    ) -> Result<()> {
        if LZ4 {
            // (exactly `n` bytes, or an error)
            return codecs::lz4::decompress(src, buf, n).map(|_| ());
        }
        let out = ..n;
        let decoded = match self.h.compformat() {
            header::FORMAT_BLOSCLZ => codecs::blosclz::decompress_with_room(src, buf, n)?,
            header::FORMAT_LZ4 => match &self.dict {
                Dict::Lz4(d) => codecs::lz4::decompress_with_dict(d, src, &mut buf[out])?,
                _ => codecs::lz4::decompress(src, buf, n)?,
            },
            header::FORMAT_ZLIB => {
                // The stream with the chunk's bytes after it, for libdeflate to read ahead.
                let end = (pos + src.len() + codecs::zlib::INPUT_SLACK).min(self.chunk.len());
                codecs::zlib::decompress(&self.chunk[pos..end], src.len(), buf, n)?
            }
            header::FORMAT_ZSTD => match &self.dict {
                Dict::Zstd(d) => codecs::zstd::decompress_with_dict(d, src, &mut buf[out])?,
                _ => codecs::zstd::decompress(src, &mut buf[out])?,
            },
            header::FORMAT_UDCODEC => bail!(
                unsupported,
                "codec id {} ({}) is not supported by b2frame",
                self.h.udcodec(),
                codecs::name(self.h.udcodec())
            ),
            f => bail!(unsupported, "codec format {f} is not supported by b2frame"),
        };
        if decoded != n {
            bail!(corrupt, "stream decoded to {decoded} bytes, expected {n}");
        }
        Ok(())
    }

    /// What undoing this chunk's filters needs.
    fn undo(&self) -> Undo<'_> {
        Undo {
            typesize: self.typesize,
            frame_typesize: self.frame_typesize,
            array_blockshape: self.array_blockshape,
            version: self.h.version(),
        }
    }

    /// Undoes the filter pipeline (last slot first). The block's decoded streams are in `a`,
    /// but for those `sources` places elsewhere (stored raw in the chunk, runs of one byte), which
    /// the first step (an unshuffle) reads where they are.
    fn unfilter(
        &self,
        j: usize,
        out: &mut [u8],
        dref: Option<&[u8]>,
        a: &mut [u8],
        b: &mut [u8],
        mut sources: Option<&PlaneSources>,
    ) -> Result<()> {
        let mut cur = Buf::A;
        let (pipeline, metas) = (self.h.filters(), self.h.filters_meta());
        // The last filter to undo writes straight into `out`.
        let last = (0..filters::MAX_FILTERS)
            .find(|&i| !is_noop_backward(pipeline[i]))
            .unwrap_or(0);
        for i in (0..filters::MAX_FILTERS).rev() {
            let id = pipeline[i];
            if is_noop_backward(id) {
                continue;
            }
            let meta = metas[i];
            if id == filters::DELTA {
                if cur != Buf::Out {
                    let (src, dst) = pick(a, b, out, cur, Buf::Out);
                    memcopy::copy(dst, src);
                    cur = Buf::Out;
                }
                if j == 0 {
                    filters::delta::decode_first_block(self.typesize, out);
                } else {
                    let dref = dref.ok_or_else(|| {
                        Error::invalid("delta-coded block decoded without its reference block")
                    })?;
                    filters::delta::decode(dref, self.typesize, out);
                }
                continue;
            }
            let next = match cur {
                // After a delta the data is in `out`: go through a scratch buffer (and copy
                // back below), as c-blosc2 does.
                Buf::Out => Buf::A,
                _ if i == last => Buf::Out,
                Buf::A => Buf::B,
                _ => Buf::A,
            };
            let (src, dst) = pick(a, b, out, cur, next);
            // (`sources` come only with an unshuffle for the first step)
            match (id, sources.take()) {
                (filters::SHUFFLE, Some(sources)) => self.unshuffle_sources(sources, src, dst),
                _ => self.undo().step(id, meta, src, dst)?,
            }
            cur = next;
        }
        if cur != Buf::Out {
            let (src, dst) = pick(a, b, out, cur, Buf::Out);
            memcopy::copy(dst, src);
        }
        Ok(())
    }

    /// Unshuffles a block whose planes are the decoded streams in `decoded`, or for streams
    /// `sources` places elsewhere, the chunk's bytes and kept runs of one byte.
    fn unshuffle_sources(&self, sources: &PlaneSources, decoded: &[u8], dst: &mut [u8]) {
        let mut planes: [&[u8]; MAX_PLANE_SOURCES] = [&[]; MAX_PLANE_SOURCES];
        self.planes(sources, decoded, dst.len() / self.typesize, &mut planes);
        filters::shuffle::unshuffle_planes(&planes[..self.typesize], dst);
    }

    /// Points the first `typesize` of `planes` at the `n`-byte planes of a block, each where
    /// `sources` puts it. (Filled in place: the 256-byte array, returned, was copied with a
    /// `memcpy` call for every block.)
    fn planes<'s>(
        &'s self,
        sources: &'s PlaneSources,
        decoded: &'s [u8],
        n: usize,
        planes: &mut [&'s [u8]; MAX_PLANE_SOURCES],
    ) {
        for (k, plane) in planes.iter_mut().enumerate().take(self.typesize) {
            *plane = match sources.at[k] {
                PlaneAt::Chunk(at) => &self.chunk[at..at + n],
                PlaneAt::Run(slot) => sources.runs.plane(slot, n),
                PlaneAt::Decoded => &decoded[k * n..(k + 1) * n],
            };
        }
    }
}

/// Typesizes up to this many bytes can have their planes read where they are (see
/// `Decoder::planes_in_place`); the plane kernels go up to 16.
const MAX_PLANE_SOURCES: usize = 16;

/// Where the unshuffle reads each plane of a block from.
struct PlaneSources<'r> {
    at: [PlaneAt; MAX_PLANE_SOURCES],
    runs: &'r mut RunPlanes,
}

impl<'r> PlaneSources<'r> {
    /// Every plane decoded, for a block that keeps its runs in `runs`.
    fn new(runs: &'r mut RunPlanes) -> Self {
        runs.start_block();
        PlaneSources {
            at: [PlaneAt::Decoded; MAX_PLANE_SOURCES],
            runs,
        }
    }
}

#[derive(Clone, Copy)]
enum PlaneAt {
    /// Decoded into the block's scratch buffer.
    Decoded,
    /// Stored raw: the chunk's bytes from this offset.
    Chunk(usize),
    /// A run of one byte (csize 0 or negative): this slot of [`RunPlanes`].
    Run(usize),
}

/// Fills stream `k` of a block, `part`, with `byte`; or with `sources`, keeps the run in
/// their [`RunPlanes`] and has the unshuffle read it from there.
fn fill_run(sources: Option<&mut PlaneSources>, k: usize, byte: u8, part: &mut [u8]) {
    if let Some(sources) = sources.filter(|_| k < MAX_PLANE_SOURCES) {
        if let Some(slot) = sources.runs.keep(byte, part.len()) {
            sources.at[k] = PlaneAt::Run(slot);
            return;
        }
    }
    part.fill(byte);
}

/// Planes of one repeated byte (streams stored as runs: csize 0 for zeros, negative for
/// other bytes), kept per thread for the unshuffle to read instead of being written out for
/// every block. Data has such planes where one byte of every item is the same (the high
/// bytes of small integers, the exponent byte of floats in a narrow range), mostly block
/// after block, so a kept plane is filled once.
struct RunPlanes {
    /// Each slot's byte and plane: its first `len` bytes from a cache line on (`aligned`).
    slots: [RunPlane; RUN_SLOTS],
    /// Slots the current block reads (bits): not to be refilled before it is unshuffled.
    in_use: u8,
    /// Where the search for a slot to refill starts, so that slots take turns.
    next: usize,
}

/// Distinct run bytes kept per thread; a block with more writes the others out.
const RUN_SLOTS: usize = 4;
/// Longest plane kept. With planes at most half a block (typesize 2 and up), the slots hold
/// at most twice the block scratch.
const RUN_PLANE_MAX: usize = 1 << 20;

impl RunPlanes {
    const fn new() -> Self {
        RunPlanes {
            slots: [const {
                RunPlane {
                    byte: 0,
                    len: 0,
                    buf: Vec::new(),
                }
            }; RUN_SLOTS],
            in_use: 0,
            next: 0,
        }
    }

    fn start_block(&mut self) {
        self.in_use = 0;
    }

    /// The slot holding `len` bytes of `byte` for the current block, filled if need be.
    /// `None` when `len` is over [`RUN_PLANE_MAX`] or every slot holds another byte this
    /// block reads.
    fn keep(&mut self, byte: u8, len: usize) -> Option<usize> {
        if len > RUN_PLANE_MAX {
            return None;
        }
        let held = self
            .slots
            .iter()
            .position(|slot| slot.byte == byte && slot.len >= len);
        let slot = match held {
            Some(slot) => slot,
            None => {
                let in_use = self.in_use;
                let slot = (0..RUN_SLOTS)
                    .map(|d| (self.next + d) % RUN_SLOTS)
                    .find(|&i| in_use >> i & 1 == 0)?;
                self.next = (slot + 1) % RUN_SLOTS;
                let run = &mut self.slots[slot];
                aligned(&mut run.buf, len).fill(byte);
                run.byte = byte;
                run.len = len;
                slot
            }
        };
        self.in_use |= 1 << slot;
        Some(slot)
    }

    /// The first `len` bytes of a slot [`RunPlanes::keep`] gave for as many.
    fn plane(&self, slot: usize, len: usize) -> &[u8] {
        let buf = &self.slots[slot].buf;
        let at = line_start(buf);
        &buf[at..at + len]
    }
}

struct RunPlane {
    byte: u8,
    /// Bytes filled with `byte` (0: none yet).
    len: usize,
    buf: Vec<u8>,
}

/// Which buffer holds a block between the steps that undo its filters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Buf {
    A,
    B,
    Out,
}

/// Borrows `from` for reading and `to` for writing among the three block buffers.
fn pick<'x>(
    a: &'x mut [u8],
    b: &'x mut [u8],
    out: &'x mut [u8],
    from: Buf,
    to: Buf,
) -> (&'x [u8], &'x mut [u8]) {
    match (from, to) {
        (Buf::A, Buf::B) => (a, b),
        (Buf::A, Buf::Out) => (a, out),
        (Buf::B, Buf::A) => (b, a),
        (Buf::B, Buf::Out) => (b, out),
        (Buf::Out, Buf::A) => (out, a),
        (Buf::Out, Buf::B) => (out, b),
        _ => unreachable!("a filter never reads and writes the same buffer"),
    }
}

/// Repeats `pattern` over `dst` (its length is a multiple of the pattern's).
pub(crate) fn fill_pattern(dst: &mut [u8], pattern: &[u8]) {
    let Some(&byte) = pattern.first() else {
        return; // the header check refuses value chunks without a value
    };
    if pattern.iter().all(|&b| b == byte) {
        dst.fill(byte);
        return;
    }
    // One copy of the pattern, then the filled prefix doubled: memcpy speed, and every copy
    // starts at a multiple of the period, so the result stays periodic.
    let first = pattern.len().min(dst.len());
    dst[..first].copy_from_slice(&pattern[..first]);
    let mut filled = first;
    while filled < dst.len() {
        let n = filled.min(dst.len() - filled);
        dst.copy_within(..n, filled);
        filled += n;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::compress::{CParams, Context, SplitMode};

    #[test]
    fn blocks_of_zero_runs_are_filled_only_where_undoing_the_filters_gives_zeros() {
        // A block whose streams are all runs of zeros is filled with zeros where
        // `filters_keep_zeros` says so: undoing the filters for real must give zeros there,
        // block 0 being data (delta XORs it into the others).
        let ids = [
            filters::NOFILTER,
            filters::SHUFFLE,
            filters::BITSHUFFLE,
            filters::DELTA,
            filters::TRUNC_PREC,
            filters::NDCELL,
            filters::NDMEAN,
            filters::BYTEDELTA_BUGGY,
            filters::BYTEDELTA,
            filters::INT_TRUNC,
            7, // unknown
        ];
        let metas = [0u8, 2, 13, 60, (-3i8) as u8];
        let mut filled = Vec::new();
        for typesize in [1, 2, 3, 4, 8, 12, 16] {
            let blocksize = 4096 / typesize * typesize;
            let src: Vec<u8> = (0..2 * blocksize)
                .map(|i| {
                    if i < blocksize {
                        (i * 7 + i / 13) as u8 | 1
                    } else {
                        0
                    }
                })
                .collect();
            let params = CParams {
                filters: [0; 6],
                typesize,
                blocksize,
                splitmode: SplitMode::Never,
                ..CParams::default()
            };
            let mut chunk = Context::new(params).unwrap().compress_to_vec(&src).unwrap();
            for (&a, &b, &meta) in ids
                .iter()
                .flat_map(|a| ids.iter().map(move |b| (a, b)))
                .flat_map(|(a, b)| metas.iter().map(move |m| (a, b, m)))
            {
                // The header's pipeline (bytes 16-21, metas 24-29), which nothing checks
                // against the streams.
                chunk[16..22].copy_from_slice(&[0, 0, 0, 0, a, b]);
                chunk[24..30].copy_from_slice(&[0, 0, 0, 0, meta, meta]);
                let dec = Decoder::new(&chunk).unwrap();
                if !dec.filters_keep_zeros() {
                    continue;
                }
                filled.push((a, b));
                let (mut x, mut y) = (vec![0u8; blocksize], vec![0u8; blocksize]);
                let mut out = vec![0xa5u8; blocksize];
                let block0 = &src[..blocksize];
                let undone = dec.unfilter(1, &mut out, Some(block0), &mut x, &mut y, None);
                if let Err(e) = undone {
                    panic!("{a} {b} (meta {meta}), typesize {typesize}: filled, but refused: {e}");
                }
                assert!(
                    out.iter().all(|&v| v == 0),
                    "filters {a}, {b} (meta {meta}), typesize {typesize}"
                );
            }
        }
        // The pipelines that matter are among them, and no delta, n-dim or unknown filter.
        for pair in [
            (filters::NOFILTER, filters::SHUFFLE),
            (filters::NOFILTER, filters::BITSHUFFLE),
            (filters::SHUFFLE, filters::BYTEDELTA),
            (filters::TRUNC_PREC, filters::SHUFFLE),
            (filters::INT_TRUNC, filters::BITSHUFFLE),
            (filters::BYTEDELTA_BUGGY, filters::NOFILTER),
        ] {
            assert!(filled.contains(&pair), "{pair:?} not filled");
        }
        let others = [filters::DELTA, filters::NDCELL, filters::NDMEAN, 7];
        assert!(!filled
            .iter()
            .any(|(a, b)| others.contains(a) || others.contains(b)));
    }

    /// Blocks split into streams that are runs of zeros before, between and after others,
    /// and blocks of nothing but (split or not; the decoder writes their zeros only where the
    /// filters need them), decode to the input whole and in parts, into buffers of stale
    /// bytes. Block 6 is a copy of block 0, so after a delta its streams are all runs of zeros.
    #[test]
    fn streams_after_runs_of_zeros_land_where_they_belong() {
        let (typesize, blocksize, nblocks) = (4, 4096, 8);
        let full = |i: u32| i.wrapping_mul(2_654_435_761) | 0x0101_0101;
        let items = blocksize / typesize;
        let src: Vec<u8> = (0..nblocks * items)
            .flat_map(|n| {
                let (b, i) = (n / items, (n % items) as u32);
                let quarter = i as usize * 4 / items;
                let v = match b {
                    1 => 0,
                    0 | 2 | 6 => full(i) << 16, // planes 0 and 1 zeros
                    3 => full(i) >> 16,         // planes 2 and 3 zeros
                    4 => [0, 0, full(i), full(i)][quarter], // unshuffled: streams 0, 1 zeros
                    5 => [0, full(i), 0, 0][quarter],
                    _ => (full(i) & 0xff) << 8,
                };
                v.to_le_bytes()
            })
            .collect();
        let pipelines: [&[u8]; 6] = [
            &[],
            &[filters::SHUFFLE],
            &[filters::BITSHUFFLE],
            &[filters::SHUFFLE, filters::BYTEDELTA],
            &[filters::DELTA, filters::SHUFFLE],
            &[filters::DELTA],
        ];
        let splits = [SplitMode::Always, SplitMode::Never];
        for codec in [
            crate::codecs::BLOSCLZ,
            crate::codecs::LZ4,
            crate::codecs::ZSTD,
        ] {
            for (pipeline, splitmode) in pipelines
                .iter()
                .flat_map(|p| splits.iter().map(move |&s| (p, s)))
            {
                let mut ids = [0u8; 6];
                ids[6 - pipeline.len()..].copy_from_slice(pipeline);
                let params = CParams {
                    codec,
                    filters: ids,
                    typesize,
                    blocksize,
                    splitmode,
                    ..CParams::default()
                };
                let chunk = Context::new(params).unwrap().compress_to_vec(&src).unwrap();
                let what = format!("codec {codec}, filters {pipeline:?}, {splitmode:?}");
                let mut out = vec![0xa5u8; src.len()];
                assert_eq!(decompress(&chunk, &mut out).unwrap(), src.len(), "{what}");
                assert!(out == src, "{what}");
                for b in 0..nblocks {
                    // Items from the middle of each block: only those are gathered.
                    let start = b * items + items / 3;
                    let mut part = vec![0xa5u8; 16 * typesize];
                    getitem(&chunk, start, 16, &mut part).unwrap();
                    let at = start * typesize;
                    assert!(part == src[at..at + part.len()], "{what}, block {b}");
                }
            }
        }
    }
}
