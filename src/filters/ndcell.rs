//! NDCELL (32) and NDMEAN (33), c-blosc2's global filters for n-dim arrays. Both store a
//! block cell by cell (cells of `meta` items per dimension, C order over the cells and within
//! each); NDMEAN stores each cell's mean in all its items (lossy). Either direction needs the
//! array's blockshape (the `b2nd` metalayer) and the typesize, as in c-blosc2. Both follow
//! c-blosc2's plugins: NDMEAN clamps the cell to the block in each dimension but steps cell
//! origins by its first dimension's cell (a quirk that only matters when that dimension was
//! clamped and another was not: c-blosc2 then cannot read back what it wrote, and b2frame
//! refuses both ways).

use crate::error::Result;

/// c-blosc2's limit for both filters.
pub const MAX_DIM: usize = 8;

/// A step of the walk over a block's cells.
enum Step {
    /// A row of a cell: its first item in the block (C order) and its length in items.
    Row(usize, usize),
    CellDone,
}

/// Where a block's cells lie: cells of `cs` items per dimension over a block of `bs`.
struct Cells {
    name: &'static str,
    bs: Vec<i64>,
    cs: Vec<i64>,
    grid: Vec<i64>,
    stride: Vec<i64>,
    origin_step: i64,
    items: i64,
}

impl Cells {
    /// Checks the geometry against a block of `len` bytes, as c-blosc2's plugins do.
    fn new(
        ndmean: bool,
        meta: u8,
        blockshape: &[i32],
        typesize: usize,
        len: usize,
    ) -> Result<Cells> {
        let name = if ndmean { "ndmean" } else { "ndcell" };
        let nd = blockshape.len();
        if nd == 0 || nd > MAX_DIM {
            bail!(
                unsupported,
                "{name}: arrays of {nd} dimensions (1 to {MAX_DIM})"
            );
        }
        let cell = if ndmean {
            i64::from(meta as i8)
        } else {
            i64::from(meta)
        };
        if cell <= 0 {
            bail!(corrupt, "{name}: cell shape {meta} (meta) is not positive");
        }
        let bs: Vec<i64> = blockshape.iter().map(|&b| i64::from(b)).collect();
        // From the file's metalayer: every product checked before it is trusted.
        let items = (bs.iter())
            .try_fold(1i64, |p, &b| if b > 0 { p.checked_mul(b) } else { None })
            .unwrap_or(-1);
        if items.checked_mul(typesize as i64) != Some(len as i64) || typesize == 0 {
            bail!(
                corrupt,
                "{name}: a block of {len} bytes is not one of blockshape {blockshape:?} x {typesize} bytes"
            );
        }
        let cs: Vec<i64> = bs
            .iter()
            .map(|&b| if ndmean { cell.min(b) } else { cell })
            .collect();
        let cell_items = cs.iter().try_fold(1i64, |p, &c| p.checked_mul(c));
        if cell_items.is_none_or(|n| n > items) {
            bail!(
                corrupt,
                "{name}: cells of {cell} items per dimension exceed the block"
            );
        }
        let grid = (0..nd).map(|i| (bs[i] + cs[i] - 1) / cs[i]).collect();
        // Item strides of the block, C order.
        let mut stride = vec![1i64; nd];
        for i in (0..nd - 1).rev() {
            stride[i] = stride[i + 1] * bs[i + 1];
        }
        let origin_step = if ndmean { cs[0] } else { cell };
        Ok(Cells {
            name,
            bs,
            cs,
            grid,
            stride,
            origin_step,
            items,
        })
    }

    /// Calls `step` with each row of each cell (first item, items), in the cells' order, and
    /// after each cell; then checks, as c-blosc2's decoder does, that the last row ends the
    /// block.
    fn walk(&self, mut step: impl FnMut(Step)) -> Result<()> {
        let nd = self.bs.len();
        let (bs, cs, grid, stride) = (&self.bs, &self.cs, &self.grid, &self.stride);
        let ncells: i64 = grid.iter().product();
        let mut last_row = 0i64;
        // Odometers (C order) over the cells and over a cell's rows, without allocating.
        let mut ii = [0i64; MAX_DIM];
        let mut kk = [0i64; MAX_DIM];
        let mut pad = [0i64; MAX_DIM];
        for _ in 0..ncells {
            let origin: i64 = (0..nd).map(|i| ii[i] * self.origin_step * stride[i]).sum();
            for i in 0..nd {
                let rem = bs[i] % cs[i];
                pad[i] = if rem != 0 && ii[i] == grid[i] - 1 {
                    rem
                } else {
                    cs[i]
                };
            }
            let rows: i64 = pad[..nd - 1].iter().product();
            kk[..nd].fill(0);
            for _ in 0..rows {
                let r = origin + (0..nd - 1).map(|i| kk[i] * stride[i]).sum::<i64>();
                if r + pad[nd - 1] > self.items {
                    bail!(corrupt, "{}: cells run past the block", self.name);
                }
                step(Step::Row(r as usize, pad[nd - 1] as usize));
                last_row = r;
                advance(&mut kk[..nd - 1], &pad[..nd - 1]);
            }
            step(Step::CellDone);
            advance(&mut ii[..nd], grid);
        }
        if last_row + pad[nd - 1] != self.items {
            bail!(
                corrupt,
                "{}: cells do not tile the block {:?}",
                self.name,
                self.bs
            );
        }
        Ok(())
    }
}

/// Which way a filter runs.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Encode,
    Decode,
}

/// Runs filter `id` (NDCELL or NDMEAN) over one whole block, `src` into `dst`, for an array
/// of `blockshape` (`None` outside an array: an error, as in c-blosc2).
pub fn run(
    direction: Direction,
    id: u8,
    meta: u8,
    blockshape: Option<&[i32]>,
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
    let ndmean = id == super::NDMEAN;
    let Some(blockshape) = blockshape else {
        bail!(
            unsupported,
            "filter {} works on the blocks of an n-dim array: it needs the array's frame (its b2nd metalayer)",
            super::name(id)
        );
    };
    match direction {
        Direction::Decode => {
            let cells = Cells::new(ndmean, meta, blockshape, typesize, src.len())?;
            decode(&cells, typesize, src, dst)
        }
        // Geometry that does not fit is the caller's parameters here, not damaged data.
        Direction::Encode => Cells::new(ndmean, meta, blockshape, typesize, src.len())
            .and_then(|cells| encode(&cells, ndmean, typesize, src, dst))
            .map_err(|e| match e {
                crate::Error::Corrupt(m) => crate::Error::InvalidArgument(m),
                e => e,
            }),
    }
}

/// Puts the cell-ordered items of `src` (one whole block) back in C order into `dst`.
fn decode(cells: &Cells, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let mut at = 0;
    cells.walk(|step| {
        if let Step::Row(row, n) = step {
            let (to, len) = (row * typesize, n * typesize);
            dst[to..to + len].copy_from_slice(&src[at..at + len]);
            at += len;
        }
    })
}

/// Writes the block `src` (C order) cell by cell into `dst`, as c-blosc2's plugins encode:
/// NDCELL moves the items; NDMEAN writes each cell's mean (float32 or float64, summed in
/// order, as c-blosc2 sums) in all its items. Cells that would not read back are refused.
fn encode(cells: &Cells, ndmean: bool, typesize: usize, src: &[u8], dst: &mut [u8]) -> Result<()> {
    if ndmean && typesize != 4 && typesize != 8 {
        bail!(
            invalid,
            "ndmean: typesize {typesize} is not a float size (4 or 8)"
        );
    }
    let mut at = 0;
    let (mut sum32, mut sum64, mut count) = (0f32, 0f64, 0usize);
    cells.walk(|step| match step {
        Step::Row(row, n) => {
            let (from, len) = (row * typesize, n * typesize);
            let items = &src[from..from + len];
            if !ndmean {
                dst[at..at + len].copy_from_slice(items);
                at += len;
            } else if typesize == 4 {
                for v in items.chunks_exact(4) {
                    sum32 += f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
                }
            } else {
                for v in items.chunks_exact(8) {
                    sum64 += f64::from_le_bytes(v.try_into().unwrap_or([0; 8]));
                }
            }
            count += n;
        }
        Step::CellDone => {
            if ndmean {
                let len = count * typesize;
                let mut mean = [0u8; 8];
                if typesize == 4 {
                    mean[..4].copy_from_slice(&(sum32 / count as f32).to_le_bytes());
                } else {
                    mean = (sum64 / count as f64).to_le_bytes();
                }
                for item in dst[at..at + len].chunks_exact_mut(typesize) {
                    item.copy_from_slice(&mean[..typesize]);
                }
                at += len;
            }
            (sum32, sum64, count) = (0.0, 0.0, 0);
        }
    })
}

/// Steps C-order coordinates `at` in a grid of `shape` to the next point (wrapping to zero).
fn advance(at: &mut [i64], shape: &[i64]) {
    for i in (0..at.len()).rev() {
        at[i] += 1;
        if at[i] < shape[i] {
            return;
        }
        at[i] = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(
        direction: Direction,
        ndmean: bool,
        meta: u8,
        bs: &[i32],
        ts: usize,
        src: &[u8],
        dst: &mut [u8],
    ) -> Result<()> {
        let id = if ndmean {
            crate::filters::NDMEAN
        } else {
            crate::filters::NDCELL
        };
        run(direction, id, meta, Some(bs), ts, src, dst)
    }

    /// The C-order coordinates of `index` in a grid of `shape`.
    fn unravel(mut index: i64, shape: &[i64]) -> Vec<i64> {
        let mut out = vec![0; shape.len()];
        for i in (0..shape.len()).rev() {
            out[i] = index % shape[i];
            index /= shape[i];
        }
        out
    }

    /// NDCELL's encoding, as c-blosc2's plugin writes it: cells in C order, each row by row.
    fn cells_of(block: &[u8], blockshape: &[i64], cell: i64) -> Vec<u8> {
        let nd = blockshape.len();
        let grid: Vec<i64> = blockshape.iter().map(|&b| (b + cell - 1) / cell).collect();
        let mut out = Vec::new();
        for c in 0..grid.iter().product() {
            let ii = unravel(c, &grid);
            let lo: Vec<i64> = ii.iter().map(|&i| i * cell).collect();
            let hi: Vec<i64> = (0..nd).map(|i| (lo[i] + cell).min(blockshape[i])).collect();
            let ext: Vec<i64> = (0..nd).map(|i| hi[i] - lo[i]).collect();
            for k in 0..ext.iter().product() {
                let kk = unravel(k, &ext);
                let mut flat = 0;
                for i in 0..nd {
                    flat = flat * blockshape[i] + lo[i] + kk[i];
                }
                out.push(block[flat as usize]);
            }
        }
        out
    }

    #[test]
    fn undoes_cells_of_any_fit() {
        for (shape, cell) in [
            (vec![10i64], 3i64),
            (vec![4, 6], 2),
            (vec![5, 7], 3),
            (vec![3, 4, 5], 2),
            (vec![2, 3, 2, 3], 4),
        ] {
            let n: i64 = shape.iter().product();
            let block: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let cells = cells_of(&block, &shape, cell);
            let bs: Vec<i32> = shape.iter().map(|&b| b as i32).collect();
            let mut out = vec![0u8; block.len()];
            let r = apply(
                Direction::Decode,
                false,
                cell as u8,
                &bs,
                1,
                &cells,
                &mut out,
            );
            if cell.pow(shape.len() as u32) > n {
                assert!(r.is_err(), "{shape:?} {cell}");
                continue;
            }
            r.unwrap();
            assert_eq!(out, block, "{shape:?} cell {cell}");
        }
    }

    #[test]
    fn encodes_what_it_decodes() {
        let bs = [5i32, 7];
        let block: Vec<u8> = (0..35u8).collect();
        let mut cells = vec![0u8; 35];
        apply(Direction::Encode, false, 3, &bs, 1, &block, &mut cells).unwrap();
        assert_eq!(cells, cells_of(&block, &[5, 7], 3));
        let mut back = vec![0u8; 35];
        apply(Direction::Decode, false, 3, &bs, 1, &cells, &mut back).unwrap();
        assert_eq!(back, block);
        // NDMEAN: a 2x4 block of float32 in 2x2 cells holds each cell's mean.
        let v: Vec<u8> = [1f32, 2., 10., 20., 3., 4., 30., 40.]
            .iter()
            .flat_map(|f| f.to_le_bytes())
            .collect();
        let mut means = vec![0u8; v.len()];
        apply(Direction::Encode, true, 2, &[2, 4], 4, &v, &mut means).unwrap();
        let got: Vec<f32> = means
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().unwrap()))
            .collect();
        assert_eq!(got, [2.5, 2.5, 2.5, 2.5, 25., 25., 25., 25.]);
        assert!(apply(
            Direction::Encode,
            true,
            2,
            &[2, 4],
            2,
            &v[..16],
            &mut means[..16]
        )
        .is_err());
        // Cells that do not tile the block are bad parameters when encoding, damage when
        // decoding.
        for (direction, parameters) in [(Direction::Encode, true), (Direction::Decode, false)] {
            let r = apply(direction, true, 4, &[2, 16], 8, &[0; 256], &mut [0; 256]);
            match r {
                Err(crate::Error::InvalidArgument(_)) if parameters => {}
                Err(crate::Error::Corrupt(_)) if !parameters => {}
                _ => panic!("{r:?}"),
            }
        }
    }

    #[test]
    fn refuses_bad_geometry() {
        let mut out = [0u8; 16];
        let refused = |r: Result<()>, needle: &str| match r {
            Err(crate::Error::Corrupt(m) | crate::Error::Unsupported(m)) if m.contains(needle) => {}
            other => panic!("expected an error about {needle:?}, got {other:?}"),
        };
        let decode = |ndmean, meta, bs: &[i32], ts, src: &[u8], out: &mut [u8]| {
            apply(Direction::Decode, ndmean, meta, bs, ts, src, out)
        };
        refused(
            decode(false, 0, &[4, 4], 1, &[0; 16], &mut out),
            "cell shape 0",
        );
        refused(
            decode(true, 200, &[4, 4], 1, &[0; 16], &mut out),
            "cell shape 200",
        );
        refused(
            decode(false, 2, &[4, 4], 2, &[0; 16], &mut out),
            "not one of blockshape",
        );
        refused(
            decode(false, 2, &[], 1, &[0; 16], &mut out),
            "arrays of 0 dimensions",
        );
        refused(
            decode(false, 2, &[1; 9], 1, &[0; 1], &mut out[..1]),
            "arrays of 9",
        );
        // Products of the blockshape that overflow, or wrap onto the block's size.
        let huge = [i32::MAX; 8];
        refused(
            decode(false, 1, &huge, 1, &[0; 16], &mut out),
            "not one of blockshape",
        );
        let wraps = [65536, 65536, 16];
        refused(
            decode(false, 1, &wraps, 1, &[0; 16], &mut out),
            "not one of blockshape",
        );
        refused(
            decode(false, 1, &[4, -4], 1, &[0; 16], &mut out),
            "not one of blockshape",
        );
        // Outside an array (no blockshape), as in c-blosc2.
        let r = run(
            Direction::Decode,
            crate::filters::NDCELL,
            2,
            None,
            1,
            &[0; 16],
            &mut out,
        );
        refused(r, "needs the array's frame");
    }
}
