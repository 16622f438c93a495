//! NDCELL (32) and NDMEAN (33), c-blosc2's global filters for n-dim arrays, decoding only.
//! Both store a block cell by cell (cells of `meta` items per dimension, C order over the
//! cells and within each); NDMEAN stores each cell's mean in all its items (lossy). Undoing
//! either puts the items back in the block's C order, which needs the array's blockshape
//! (the `b2nd` metalayer) and the frame's typesize, as in c-blosc2. Decoding follows
//! c-blosc2's plugins: NDMEAN clamps the cell to the block in each dimension but steps cell
//! origins by its first dimension's cell (a quirk that only matters when that dimension was
//! clamped and another was not, and that decoding must mirror).

use crate::error::Result;

/// c-blosc2's limit for both filters.
pub const MAX_DIM: usize = 8;

/// Puts the cell-ordered items of `src` (one whole block) back in C order into `dst`.
pub fn decode(
    ndmean: bool,
    meta: u8,
    blockshape: &[i32],
    typesize: usize,
    src: &[u8],
    dst: &mut [u8],
) -> Result<()> {
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
    if items.checked_mul(typesize as i64) != Some(src.len() as i64) || typesize == 0 {
        bail!(
            corrupt,
            "{name}: a block of {} bytes is not one of blockshape {blockshape:?} x {typesize} bytes",
            src.len()
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
    let grid: Vec<i64> = (0..nd).map(|i| (bs[i] + cs[i] - 1) / cs[i]).collect();
    // Item strides of the block, C order.
    let mut stride = vec![1i64; nd];
    for i in (0..nd - 1).rev() {
        stride[i] = stride[i + 1] * bs[i + 1];
    }
    let origin_step = if ndmean { cs[0] } else { cell };
    let ncells: i64 = grid.iter().product();
    let mut at = 0usize;
    let mut last_row = 0i64;
    // Odometers (C order) over the cells and over a cell's rows, without allocating.
    let mut ii = [0i64; MAX_DIM];
    let mut kk = [0i64; MAX_DIM];
    let mut pad = [0i64; MAX_DIM];
    for _ in 0..ncells {
        let origin: i64 = (0..nd).map(|i| ii[i] * origin_step * stride[i]).sum();
        for i in 0..nd {
            let rem = bs[i] % cs[i];
            pad[i] = if rem != 0 && ii[i] == grid[i] - 1 {
                rem
            } else {
                cs[i]
            };
        }
        let run = pad[nd - 1] as usize * typesize;
        let rows: i64 = pad[..nd - 1].iter().product();
        kk[..nd].fill(0);
        for _ in 0..rows {
            let row = origin + (0..nd - 1).map(|i| kk[i] * stride[i]).sum::<i64>();
            let to = row as usize * typesize;
            let (Some(from), Some(into)) = (src.get(at..at + run), dst.get_mut(to..to + run))
            else {
                bail!(corrupt, "{name}: cells run past the block");
            };
            into.copy_from_slice(from);
            at += run;
            last_row = row;
            advance(&mut kk[..nd - 1], &pad[..nd - 1]);
        }
        advance(&mut ii[..nd], &grid);
    }
    // c-blosc2's own check: the last row copied ends the block.
    if last_row + pad[nd - 1] != items {
        bail!(
            corrupt,
            "{name}: cells do not tile the block {blockshape:?}"
        );
    }
    Ok(())
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
            let r = decode(false, cell as u8, &bs, 1, &cells, &mut out);
            if cell.pow(shape.len() as u32) > n {
                assert!(r.is_err(), "{shape:?} {cell}");
                continue;
            }
            r.unwrap();
            assert_eq!(out, block, "{shape:?} cell {cell}");
        }
    }

    #[test]
    fn refuses_bad_geometry() {
        let mut out = [0u8; 16];
        assert!(decode(false, 0, &[4, 4], 1, &[0; 16], &mut out).is_err());
        assert!(decode(true, 200, &[4, 4], 1, &[0; 16], &mut out).is_err());
        assert!(decode(false, 2, &[4, 4], 2, &[0; 16], &mut out).is_err());
        assert!(decode(false, 2, &[], 1, &[0; 16], &mut out).is_err());
        assert!(decode(false, 2, &[1; 9], 1, &[0; 1], &mut out[..1]).is_err());
        // Products of the blockshape that overflow, or wrap onto the block's size.
        assert!(decode(false, 1, &[i32::MAX; 8], 1, &[0; 16], &mut out).is_err());
        assert!(decode(false, 1, &[65536, 65536, 16], 1, &[0; 16], &mut out).is_err());
        assert!(decode(false, 1, &[4, -4], 1, &[0; 16], &mut out).is_err());
    }
}
