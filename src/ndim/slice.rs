//! Array geometry and hyper-slab reads and writes.
//!
//! A read walks the chunks the slab touches and, in each, only the blocks it touches: each of
//! those blocks is decoded on its own (on the frame's threads) and the slab's part of it is
//! copied out in runs along the last dimension. Special chunks are filled without decoding.
//! A write is read-modify-write of whole chunks, recompressed with the frame's parameters.

use std::ops::Range;
use std::path::Path;
use std::sync::Arc;

use super::meta::{self, NdMeta, MAX_DIM};
use crate::chunk::decompress::Decoder;
use crate::chunk::{self, SpecialValue};
use crate::error::{Error, Result};
use crate::frame::ChunkData;
use crate::pool::BufferStash;
use crate::schunk::{CreateOptions, ReadView, SChunk};

/// Largest slab a single read or write buffers chunks for (decoded blocks are processed in
/// batches of about this many bytes).
const BATCH_BYTES: usize = 16 << 20;

/// Decoded-block buffers kept for the next batch: fresh ones would be zeroed and faulted in
/// for every block, about a tenth of a large slab read.
static BLOCK_BUFFERS: BufferStash = BufferStash::new(32 << 20);

/// A slab write's decoded chunk, compressed chunk and batch of compressed chunks, kept for
/// the next write: fresh ones are faulted in page by page (4% of a write of whole chunks,
/// perf).
static WRITE_BUFFERS: BufferStash = BufferStash::new(32 << 20);

/// Derived sizes of an array, all products overflow-checked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub itemsize: usize,
    pub shape: Vec<i64>,
    pub chunkshape: Vec<i64>,
    pub blockshape: Vec<i64>,
    /// The chunkshape rounded up to a multiple of the blockshape: what each chunk stores.
    pub extchunk: Vec<i64>,
    pub chunks_per_dim: Vec<i64>,
    pub blocks_per_dim: Vec<i64>,
    pub nchunks: i64,
    pub nitems: i64,
    pub chunk_nitems: i64,
    pub block_nitems: i64,
}

fn c_strides(dims: &[i64]) -> Vec<i64> {
    let mut s = vec![1i64; dims.len()];
    for d in (0..dims.len().saturating_sub(1)).rev() {
        s[d] = s[d + 1] * dims[d + 1];
    }
    s
}

fn mul(a: i64, b: i64, what: &str) -> Result<i64> {
    a.checked_mul(b).ok_or_else(|| {
        Error::invalid(format_args!(
            "array: the product of the {what} overflows int64"
        ))
    })
}

impl Geometry {
    /// Validates shapes (from a metalayer or a caller) and derives the layout.
    pub fn new(m: &NdMeta, itemsize: usize) -> Result<Geometry> {
        let nd = m.ndim();
        if nd > MAX_DIM {
            bail!(invalid, "array: ndim {nd} exceeds {MAX_DIM}");
        }
        if m.chunkshape.len() != nd || m.blockshape.len() != nd {
            bail!(
                invalid,
                "array: shape, chunkshape and blockshape need {nd} entries each"
            );
        }
        if itemsize == 0 {
            bail!(invalid, "array: itemsize is 0");
        }
        let mut g = Geometry {
            itemsize,
            shape: m.shape.clone(),
            chunkshape: m.chunkshape.iter().map(|&c| i64::from(c)).collect(),
            blockshape: m.blockshape.iter().map(|&b| i64::from(b)).collect(),
            extchunk: Vec::with_capacity(nd),
            chunks_per_dim: Vec::with_capacity(nd),
            blocks_per_dim: Vec::with_capacity(nd),
            nchunks: 1,
            nitems: 1,
            chunk_nitems: 1,
            block_nitems: 1,
        };
        for d in 0..nd {
            let (s, c, b) = (g.shape[d], g.chunkshape[d], g.blockshape[d]);
            if s < 0 {
                bail!(invalid, "array: shape[{d}] = {s} is negative");
            }
            if c <= 0 || b <= 0 {
                bail!(
                    invalid,
                    "array: chunkshape[{d}] = {c} and blockshape[{d}] = {b} must be positive"
                );
            }
            if b > c {
                bail!(
                    invalid,
                    "array: blockshape[{d}] = {b} is larger than chunkshape[{d}] = {c}"
                );
            }
            let ext = c.div_euclid(b) * b + if c % b != 0 { b } else { 0 };
            g.extchunk.push(ext);
            g.chunks_per_dim.push(s / c + i64::from(s % c != 0));
            g.blocks_per_dim.push(ext / b);
            g.nitems = mul(g.nitems, s, "shape")?;
            g.nchunks = mul(g.nchunks, g.chunks_per_dim[d], "chunk grid")?;
            g.chunk_nitems = mul(g.chunk_nitems, ext, "chunkshape")?;
            g.block_nitems = mul(g.block_nitems, b, "blockshape")?;
        }
        mul(g.nitems, itemsize as i64, "array bytes")?;
        let chunk_bytes = mul(g.chunk_nitems, itemsize as i64, "chunk bytes")?;
        if chunk_bytes as u64 > chunk::MAX_BUFFERSIZE as u64 {
            bail!(
                invalid,
                "array: a chunk of {chunk_bytes} bytes exceeds the Blosc2 chunk maximum ({})",
                chunk::MAX_BUFFERSIZE
            );
        }
        Ok(g)
    }

    pub fn ndim(&self) -> usize {
        self.shape.len()
    }

    pub fn chunk_nbytes(&self) -> usize {
        self.chunk_nitems as usize * self.itemsize
    }

    pub fn block_nbytes(&self) -> usize {
        self.block_nitems as usize * self.itemsize
    }

    /// Checks a slab `[start, stop)` and returns its shape.
    pub fn check_slab(&self, start: &[i64], stop: &[i64]) -> Result<Vec<i64>> {
        let nd = self.ndim();
        if start.len() != nd || stop.len() != nd {
            bail!(invalid, "slab: start and stop need {nd} entries each");
        }
        (0..nd)
            .map(|d| {
                let (a, b, s) = (start[d], stop[d], self.shape[d]);
                if a < 0 || b > s || a > b {
                    bail!(
                        invalid,
                        "slab: dimension {d}: [{a}, {b}) is not within [0, {s}) with start <= stop"
                    );
                }
                Ok(b - a)
            })
            .collect()
    }
}

/// One chunk of a slab: which chunk, and which of its blocks the slab touches.
struct ChunkWork {
    index: i64,
    coords: Vec<i64>,
    blocks: Vec<(usize, Vec<i64>)>,
}

/// What a block's bytes come from.
enum BlockSrc {
    /// Decoded bytes of the block (or of the whole chunk, when `base` locates the block in it).
    Bytes { data: Arc<Vec<u8>>, base: usize },
    /// One item repeated (special chunks).
    Item(Vec<u8>),
}

/// An n-dim array over a super-chunk.
pub struct Array<'a> {
    pub schunk: &'a SChunk,
    pub meta: NdMeta,
    pub geom: Geometry,
    /// Whether the array carries only the older caterva metalayer.
    pub caterva: bool,
}

impl<'a> Array<'a> {
    /// The array a frame holds (b2nd metalayer, else caterva), or `NotFound`.
    pub fn open(schunk: &'a SChunk) -> Result<Array<'a>> {
        let (bytes, caterva) = match schunk.meta_get("b2nd") {
            Ok(b) => (b, false),
            Err(Error::NotFound(_)) => match schunk.meta_get("caterva") {
                Ok(b) => (b, true),
                Err(Error::NotFound(_)) => bail!(
                    not_found,
                    "the frame is not an n-dim array (no b2nd or caterva metalayer)"
                ),
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        };
        let meta = meta::parse(&bytes, caterva)?;
        if let Some(d) = &meta.dtype {
            if meta.dtype_format == 0 {
                super::dtype::itemsize(d).map_err(|_| {
                    Error::corrupt(format_args!("b2nd metalayer: dtype {d:?} does not parse"))
                })?;
            }
        }
        // The data layout uses the frame's typesize, as c-blosc2 does.
        let geom = Geometry::new(&meta, schunk.typesize()).map_err(|e| match e {
            Error::InvalidArgument(m) => Error::Corrupt(m),
            e => e,
        })?;
        Ok(Array {
            schunk,
            meta,
            geom,
            caterva,
        })
    }

    /// The chunks and blocks a slab touches.
    fn plan(&self, start: &[i64], stop: &[i64]) -> Vec<ChunkWork> {
        let g = &self.geom;
        let nd = g.ndim();
        if (0..nd).any(|d| start[d] == stop[d]) {
            return Vec::new();
        }
        let lo: Vec<i64> = (0..nd).map(|d| start[d] / g.chunkshape[d]).collect();
        let hi: Vec<i64> = (0..nd).map(|d| (stop[d] - 1) / g.chunkshape[d]).collect();
        let chunk_strides = c_strides(&g.chunks_per_dim);
        let block_strides = c_strides(&g.blocks_per_dim);
        let mut out = Vec::new();
        for cc in grid(&lo, &hi) {
            let index = (0..nd).map(|d| cc[d] * chunk_strides[d]).sum();
            let (blo, bhi): (Vec<i64>, Vec<i64>) = (0..nd)
                .map(|d| {
                    let origin = cc[d] * g.chunkshape[d];
                    let a = start[d].max(origin) - origin;
                    let b = stop[d].min(origin + g.chunkshape[d]) - 1 - origin;
                    (a / g.blockshape[d], b / g.blockshape[d])
                })
                .unzip();
            let blocks = grid(&blo, &bhi)
                .map(|bc| {
                    (
                        (0..nd).map(|d| bc[d] * block_strides[d]).sum::<i64>() as usize,
                        bc,
                    )
                })
                .collect();
            out.push(ChunkWork {
                index,
                coords: cc,
                blocks,
            });
        }
        out
    }

    /// Reads the slab `[start, stop)` into `dst` (C order, `itemsize` bytes per item).
    pub fn get_slice(&self, start: &[i64], stop: &[i64], dst: &mut [u8]) -> Result<()> {
        let g = &self.geom;
        let slab = g.check_slab(start, stop)?;
        let nbytes = slab.iter().product::<i64>() as usize * g.itemsize;
        if dst.len() < nbytes {
            return Err(Error::BufferTooSmall {
                needed: nbytes,
                given: dst.len(),
            });
        }
        let work = self.plan(start, stop);
        // One view for the whole slab: a concurrent slab write is seen whole or not at all.
        let view = self.schunk.read_view();
        let mut batch: Vec<&ChunkWork> = Vec::new();
        let mut batch_bytes = 0;
        for w in &work {
            batch_bytes += w.blocks.len() * g.block_nbytes();
            batch.push(w);
            if batch_bytes >= BATCH_BYTES {
                self.read_batch(&view, &batch, start, &slab, dst)?;
                batch.clear();
                batch_bytes = 0;
            }
        }
        self.read_batch(&view, &batch, start, &slab, dst)
    }

    /// Decodes the blocks of a batch of chunks (in parallel) and copies the slab's parts out.
    fn read_batch(
        &self,
        view: &ReadView<'_>,
        batch: &[&ChunkWork],
        start: &[i64],
        slab: &[i64],
        dst: &mut [u8],
    ) -> Result<()> {
        if batch.is_empty() {
            return Ok(());
        }
        // Chunks in parallel, or the blocks of a lone chunk.
        let blocks_in_parallel = batch.len() == 1;
        let decode = |w: &&ChunkWork| self.decode_blocks(view, w, start, slab, blocks_in_parallel);
        let decoded: Vec<Vec<BlockSrc>> = self.schunk.context().pool().map(batch, decode)?;
        let mut done = Vec::new();
        for (w, blocks) in batch.iter().zip(decoded) {
            for ((_, bc), src) in w.blocks.iter().zip(blocks) {
                self.copy_block(&w.coords, bc, &src, start, slab, dst);
                if let BlockSrc::Bytes { data, .. } = src {
                    done.extend(Arc::try_unwrap(data).ok());
                }
            }
        }
        BLOCK_BUFFERS.give_back(done);
        Ok(())
    }

    /// The sources of the blocks of one chunk that a slab needs, decoded on the pool's
    /// threads if `blocks_in_parallel`.
    fn decode_blocks(
        &self,
        view: &ReadView<'_>,
        w: &ChunkWork,
        start: &[i64],
        slab: &[i64],
        blocks_in_parallel: bool,
    ) -> Result<Vec<BlockSrc>> {
        let ctx = format!("array chunk {}", w.index);
        if w.index >= view.nchunks() as i64 {
            bail!(
                corrupt,
                "{ctx}: the frame holds only {} chunks",
                view.nchunks()
            );
        }
        let want: Vec<usize> = w.blocks.iter().map(|&(k, _)| k).collect();
        let first = view.with_chunk_blocks(w.index, &want, |data| {
            self.blocks_of(w, data, true, start, slab, blocks_in_parallel)
        })?;
        match first {
            Some(blocks) => Ok(blocks),
            // Blosc2 blocks that are not the array's: decode the whole chunk, read whole.
            None => view
                .with_chunk(w.index, |data| {
                    self.blocks_of(w, data, false, start, slab, blocks_in_parallel)
                })
                .map(|b| b.unwrap_or_default()),
        }
    }

    /// The blocks of chunk `w` a slab needs, from its data; `None` when `partial` data cannot
    /// serve (the chunk's Blosc2 blocks are not the array's blocks).
    fn blocks_of(
        &self,
        w: &ChunkWork,
        data: ChunkData<'_>,
        partial: bool,
        start: &[i64],
        slab: &[i64],
        blocks_in_parallel: bool,
    ) -> Result<Option<Vec<BlockSrc>>> {
        let g = &self.geom;
        let ctx = format!("array chunk {}", w.index);
        match data {
            ChunkData::Special(kind, n) => {
                self.check_chunk_nbytes(n, &ctx)?;
                let item = special_item(kind, g.itemsize);
                Ok(Some(
                    w.blocks
                        .iter()
                        .map(|_| BlockSrc::Item(item.clone()))
                        .collect(),
                ))
            }
            ChunkData::Stored(bytes) => {
                let d = Decoder::new(&bytes)
                    .map_err(|e| e.context(&ctx))?
                    .in_frame(g.itemsize)
                    .in_array(self.schunk.context().array_blockshape());
                self.check_chunk_nbytes(d.header().nbytes(), &ctx)?;
                let bsize = g.block_nbytes();
                let aligned = d.nblocks() == g.blocks_per_dim.iter().product::<i64>() as usize
                    && (0..d.nblocks()).all(|j| d.block_range(j).len() == bsize);
                if d.special() != SpecialValue::None || !aligned {
                    if partial {
                        return Ok(None);
                    }
                    // Not one Blosc2 block per array block: decode the whole chunk once.
                    let mut all = vec![0u8; d.header().nbytes()];
                    d.decode_all(&mut all, None).map_err(|e| e.context(&ctx))?;
                    let all = Arc::new(all);
                    return Ok(Some(
                        w.blocks
                            .iter()
                            .map(|(k, _)| BlockSrc::Bytes {
                                data: Arc::clone(&all),
                                base: k * bsize,
                            })
                            .collect(),
                    ));
                }
                let mut dref = None;
                if d.needs_reference() && w.blocks.iter().any(|&(k, _)| k > 0) {
                    let mut b0 = BLOCK_BUFFERS.take(bsize);
                    d.decode_block(0, &mut b0, None)
                        .map_err(|e| e.context(&ctx))?;
                    dref = Some(b0);
                }
                let one = |(k, bc): &(usize, Vec<i64>)| -> Result<BlockSrc> {
                    let mut b = BLOCK_BUFFERS.take(bsize);
                    match self.block_parts(&w.coords, bc, start, slab) {
                        Some(parts) => d.decode_block_parts(*k, &parts, &mut b, dref.as_deref()),
                        None => d.decode_block(*k, &mut b, dref.as_deref()),
                    }
                    .map_err(|e| e.context(&ctx))?;
                    Ok(BlockSrc::Bytes {
                        data: Arc::new(b),
                        base: 0,
                    })
                };
                let blocks = if blocks_in_parallel {
                    self.schunk.context().pool().map(&w.blocks, one)
                } else {
                    w.blocks.iter().map(one).collect::<Result<_>>()
                }?;
                Ok(Some(blocks))
            }
        }
    }

    fn check_chunk_nbytes(&self, n: usize, ctx: &str) -> Result<()> {
        if n != self.geom.chunk_nbytes() {
            bail!(
                corrupt,
                "{ctx}: holds {n} bytes where the array's chunks hold {}",
                self.geom.chunk_nbytes()
            );
        }
        Ok(())
    }

    /// Copies the part of block `bc` of chunk `cc` that lies in the slab into `dst`.
    fn copy_block(
        &self,
        cc: &[i64],
        bc: &[i64],
        src: &BlockSrc,
        start: &[i64],
        slab: &[i64],
        dst: &mut [u8],
    ) {
        self.block_rows(cc, bc, start, slab, |from, to, run| {
            put(src, from, run, &mut dst[to..to + run])
        });
    }

    /// Where block `bc` of chunk `cc` starts in the array, and the corners `[lo, hi)` of the
    /// part of it the slab `[start, start + slab)` covers (`None`: no part).
    fn block_overlap(
        &self,
        cc: &[i64],
        bc: &[i64],
        start: &[i64],
        slab: &[i64],
    ) -> Option<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        let g = &self.geom;
        let nd = g.ndim();
        let origin: Vec<i64> = (0..nd)
            .map(|d| cc[d] * g.chunkshape[d] + bc[d] * g.blockshape[d])
            .collect();
        let lo: Vec<i64> = (0..nd).map(|d| start[d].max(origin[d])).collect();
        let hi: Vec<i64> = (0..nd)
            .map(|d| {
                (start[d] + slab[d])
                    .min(origin[d] + g.blockshape[d])
                    .min((cc[d] + 1) * g.chunkshape[d])
            })
            .collect();
        (0..nd).all(|d| lo[d] < hi[d]).then_some((origin, lo, hi))
    }

    /// The byte ranges of block `bc` of chunk `cc` a slab reads, when they are few enough
    /// (a quarter of the block at most) for decoding only them to pay.
    fn block_parts(
        &self,
        cc: &[i64],
        bc: &[i64],
        start: &[i64],
        slab: &[i64],
    ) -> Option<Vec<Range<usize>>> {
        let g = &self.geom;
        let (_, lo, hi) = self.block_overlap(cc, bc, start, slab)?;
        let items: i64 = lo.iter().zip(&hi).map(|(l, h)| h - l).product();
        if items * 4 > g.blockshape.iter().product::<i64>() {
            return None;
        }
        let mut parts = Vec::new();
        self.block_rows(cc, bc, start, slab, |from, _, run| {
            parts.push(from..from + run)
        });
        Some(parts)
    }

    /// Calls `row(block_offset, slab_offset, len)` (in bytes) for every run of items that
    /// block `bc` of chunk `cc` and the slab `[start, start + slab)` share, in C order.
    fn block_rows(
        &self,
        cc: &[i64],
        bc: &[i64],
        start: &[i64],
        slab: &[i64],
        mut row: impl FnMut(usize, usize, usize),
    ) {
        let g = &self.geom;
        let nd = g.ndim();
        let isz = g.itemsize;
        if nd == 0 {
            row(0, 0, isz);
            return;
        }
        let Some((origin, lo, hi)) = self.block_overlap(cc, bc, start, slab) else {
            return;
        };
        let bstr = c_strides(&g.blockshape);
        let sstr = c_strides(slab);
        let run = (hi[nd - 1] - lo[nd - 1]) as usize * isz;
        // Walk the rows (all dims but the last) keeping both item offsets up to date instead
        // of recomputing them per row.
        let mut p = lo.clone();
        let mut b: i64 = (0..nd).map(|d| (lo[d] - origin[d]) * bstr[d]).sum();
        let mut s: i64 = (0..nd).map(|d| (lo[d] - start[d]) * sstr[d]).sum();
        loop {
            row(b as usize * isz, s as usize * isz, run);
            let mut d = nd - 1;
            loop {
                if d == 0 {
                    return;
                }
                d -= 1;
                if p[d] + 1 < hi[d] {
                    p[d] += 1;
                    b += bstr[d];
                    s += sstr[d];
                    break;
                }
                b -= (p[d] - lo[d]) * bstr[d];
                s -= (p[d] - lo[d]) * sstr[d];
                p[d] = lo[d];
            }
        }
    }

    /// Writes `src` (C order) into the slab `[start, stop)`: every chunk it touches is read,
    /// changed and written back compressed, within one writer's turn (a concurrent write
    /// cannot land between the read of a chunk and its write-back and be lost).
    pub fn set_slice(&self, start: &[i64], stop: &[i64], src: &[u8]) -> Result<()> {
        let turn = self.schunk.write_turn()?;
        let g = &self.geom;
        let slab = g.check_slab(start, stop)?;
        let nbytes = slab.iter().product::<i64>() as usize * g.itemsize;
        if src.len() < nbytes {
            bail!(
                invalid,
                "slab: the source holds {} bytes, the slab needs {nbytes}",
                src.len()
            );
        }
        let nd = g.ndim();
        let bsize = g.block_nbytes();
        // One decoded chunk, reused for every chunk of the slab. The compressed ones are
        // committed together, so that a writer killed midway leaves the slab all old or all
        // new: up to BATCH bytes of them in one commit.
        const BATCH: usize = 64 << 20;
        let mut chunk = WRITE_BUFFERS.take(g.chunk_nbytes());
        let mut compressed = WRITE_BUFFERS.take(chunk::compress::max_compressed_size(chunk.len()));
        // The batch's compressed chunks end to end, and where each is.
        let mut packed = WRITE_BUFFERS.take(0);
        let mut batch: Vec<(i64, Range<usize>)> = Vec::new();
        let commit = |packed: &mut Vec<u8>, batch: &mut Vec<(i64, Range<usize>)>| -> Result<()> {
            let updates: Vec<(i64, &[u8])> = batch
                .iter()
                .map(|(i, at)| (*i, &packed[at.clone()]))
                .collect();
            turn.update_chunks(&updates)?;
            batch.clear();
            packed.clear();
            Ok(())
        };
        for w in self.plan(start, stop) {
            let nchunks = self.schunk.nchunks() as i64;
            if w.index >= nchunks {
                bail!(
                    corrupt,
                    "array chunk {}: the frame holds only {nchunks} chunks",
                    w.index
                );
            }
            let in_array = |d: usize| {
                let origin = w.coords[d] * g.chunkshape[d];
                (origin, (origin + g.chunkshape[d]).min(g.shape[d]))
            };
            let covered = (0..nd).all(|d| {
                let (origin, end) = in_array(d);
                start[d] <= origin && end <= stop[d]
            });
            if covered {
                // Every item of the chunk comes from the slab: the old chunk is not read, and
                // its padding (past the array's edge, or past the chunkshape) is zeros.
                let items: i64 = (0..nd).map(|d| in_array(d).1 - in_array(d).0).product();
                if items as usize * g.itemsize != chunk.len() {
                    chunk.fill(0);
                }
            } else {
                let n = self
                    .schunk
                    .get_chunk(w.index, &mut chunk)
                    .map_err(|e| e.context(format_args!("array chunk {}", w.index)))?;
                self.check_chunk_nbytes(n, &format!("array chunk {}", w.index))?;
            }
            for (k, bc) in &w.blocks {
                self.fill_block(
                    &w.coords,
                    bc,
                    &mut chunk[k * bsize..(k + 1) * bsize],
                    start,
                    &slab,
                    src,
                );
            }
            let n = self.schunk.context().compress(&chunk, &mut compressed)?;
            if packed.len() + n > BATCH && !batch.is_empty() {
                commit(&mut packed, &mut batch)?;
            }
            let at = packed.len();
            packed.extend_from_slice(&compressed[..n]);
            batch.push((w.index, at..at + n));
        }
        commit(&mut packed, &mut batch)?;
        // Given back in the reverse of the order taken, so the next write takes each again.
        WRITE_BUFFERS.give_back([packed, compressed, chunk]);
        Ok(())
    }

    /// The inverse of [`Array::copy_block`]: slab data into one block of a decoded chunk.
    fn fill_block(
        &self,
        cc: &[i64],
        bc: &[i64],
        block: &mut [u8],
        start: &[i64],
        slab: &[i64],
        src: &[u8],
    ) {
        self.block_rows(cc, bc, start, slab, |to, from, run| {
            block[to..to + run].copy_from_slice(&src[from..from + run])
        });
    }
}

/// Copies `len` bytes of a block source from byte `at` of the block.
fn put(src: &BlockSrc, at: usize, len: usize, out: &mut [u8]) {
    match src {
        BlockSrc::Bytes { data, base } => out.copy_from_slice(&data[base + at..base + at + len]),
        BlockSrc::Item(item) => crate::chunk::decompress::fill_pattern(out, item),
    }
}

/// The item a special chunk repeats (uninitialized items read as zeros).
fn special_item(kind: SpecialValue, itemsize: usize) -> Vec<u8> {
    match (kind, itemsize) {
        (SpecialValue::Nan, 4) => f32::NAN.to_le_bytes().to_vec(),
        (SpecialValue::Nan, 8) => f64::NAN.to_le_bytes().to_vec(),
        _ => vec![0u8; itemsize],
    }
}

/// All coordinates `c` with `lo <= c <= hi` (inclusive), in C order.
fn grid(lo: &[i64], hi: &[i64]) -> impl Iterator<Item = Vec<i64>> {
    let lo = lo.to_vec();
    let hi = hi.to_vec();
    let mut cur = if lo.iter().zip(&hi).all(|(a, b)| a <= b) {
        Some(lo.clone())
    } else {
        None
    };
    std::iter::from_fn(move || {
        let out = cur.clone()?;
        let mut next = out.clone();
        let mut d = next.len();
        loop {
            if d == 0 {
                cur = None;
                break;
            }
            d -= 1;
            if next[d] < hi[d] {
                next[d] += 1;
                cur = Some(next);
                break;
            }
            next[d] = lo[d];
        }
        Some(out)
    })
}

/// Creates an array filled with zeros, stored as special chunks (so a huge empty array costs
/// only its index). The frame's chunks hold the extended chunkshape and its Blosc2 blocks are
/// the array's blocks, as c-blosc2 lays them out.
pub fn create(path: Option<&Path>, opts: &CreateOptions, meta: &NdMeta) -> Result<SChunk> {
    let dtype = meta.dtype.as_deref().unwrap_or("|u1");
    let itemsize = super::dtype::itemsize(dtype)?;
    let g = Geometry::new(meta, itemsize)?;
    let mut o = opts.clone();
    o.params.typesize = itemsize;
    o.params.blocksize = g.block_nbytes();
    o.chunksize =
        i32::try_from(g.chunk_nbytes()).map_err(|_| Error::invalid("array: chunks too large"))?;
    // Built whole before it takes the path: an array is never seen without its chunks.
    let mut s = SChunk::create_with(path, &o, |s| {
        s.meta_add("b2nd", &meta::encode(meta))?;
        if g.nchunks > 0 && g.chunk_nitems > 0 {
            let items = g
                .nchunks
                .checked_mul(g.chunk_nitems)
                .ok_or_else(|| Error::invalid("array: the number of stored items overflows"))?;
            s.fill_special(items, SpecialValue::Zero)?;
        }
        Ok(())
    })?;
    s.set_array_blockshape(meta.blockshape.clone());
    Ok(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_walks_c_order() {
        let v: Vec<Vec<i64>> = grid(&[0, 1], &[1, 2]).collect();
        assert_eq!(v, vec![vec![0, 1], vec![0, 2], vec![1, 1], vec![1, 2]]);
        assert_eq!(grid(&[], &[]).count(), 1);
        assert_eq!(grid(&[2], &[1]).count(), 0);
    }

    #[test]
    fn geometry_rejects_bad_shapes() {
        let m = |shape: Vec<i64>, c: Vec<i32>, b: Vec<i32>| NdMeta {
            version: 0,
            shape,
            chunkshape: c,
            blockshape: b,
            dtype_format: 0,
            dtype: Some("<f8".into()),
        };
        assert!(Geometry::new(&m(vec![-1], vec![1], vec![1]), 8).is_err());
        assert!(Geometry::new(&m(vec![10], vec![0], vec![1]), 8).is_err());
        assert!(Geometry::new(&m(vec![10], vec![4], vec![5]), 8).is_err());
        assert!(Geometry::new(&m(vec![i64::MAX, 4], vec![1, 1], vec![1, 1]), 8).is_err());
        assert!(Geometry::new(&m(vec![10, 10], vec![i32::MAX, 2], vec![1, 1]), 8).is_err());
        let g = Geometry::new(&m(vec![13, 17], vec![5, 6], vec![2, 4]), 4).unwrap();
        assert_eq!(g.extchunk, vec![6, 8]);
        assert_eq!(g.chunks_per_dim, vec![3, 3]);
        assert_eq!(g.chunk_nitems, 48);
    }
}
