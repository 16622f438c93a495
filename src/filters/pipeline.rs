//! Which filter pipelines c-blosc2 decodes right, so that b2frame never writes one it misreads.
//!
//! c-blosc2 (3.3.x) undoes a block's filters, last slot first, through three scratch buffers
//! and the block's place in the output, rotating the three after each filter; delta runs in
//! place on the output. For some pipelines the rotation leaves delta working on a stale copy
//! (the filter undone before it is lost) or an unshuffle reading the buffer it writes.
//! [`c_blosc2_undoes`] replays that rotation. Measured against python-blosc2 4.14.1: it names
//! exactly the pipelines whose chunks c-blosc2 decodes wrongly, over every pipeline of up to
//! four filters and a sample of 1,500 longer ones (tests/python/test_chunk_interop.py keeps
//! checking). None of up to four filters with at most one delta is misread.
//!
//! Two delta filters fail on more threads too: c-blosc2's workers wait for block 0's first
//! delta only, and decode the other blocks against a half-undone block 0.

use super::{
    bitshuffle, bytedelta, ndcell, shuffle, BITSHUFFLE, BYTEDELTA, BYTEDELTA_BUGGY, DELTA,
    INT_TRUNC, MAX_FILTERS, NDCELL, NDMEAN, NOFILTER, SHUFFLE, TRUNC_PREC,
};
use crate::error::Result;

/// Whether undoing filter `id` does nothing: empty slots and the lossy truncations.
pub fn is_noop_backward(id: u8) -> bool {
    matches!(id, NOFILTER | TRUNC_PREC | INT_TRUNC)
}

/// Whether filter `id`, applied or undone, makes a block of zeros zeros whatever its meta:
/// the shuffles move bytes, and bytedelta's differences and sums of zeros are zeros. (Delta
/// XORs block 0 into the others; the truncations keep zeros only with parameters they
/// accept.) Blocks of zeros skip such filters both ways.
pub fn keeps_zeros(id: u8) -> bool {
    matches!(id, SHUFFLE | BITSHUFFLE | BYTEDELTA | BYTEDELTA_BUGGY)
}

/// What undoing a filter of a chunk needs beside the filter's id and meta.
pub struct Undo<'a> {
    /// The chunk's typesize.
    pub typesize: usize,
    /// The frame's typesize: what bytedelta with meta 0, NDCELL and NDMEAN work with.
    pub frame_typesize: usize,
    /// The array's blockshape, for NDCELL and NDMEAN.
    pub array_blockshape: Option<&'a [i32]>,
    /// The chunk's format version (bitshuffle's layout depends on it).
    pub version: u8,
}

impl Undo<'_> {
    /// Undoes filter `id` with `meta` from `src` into `dst` (of the same length). Not for
    /// delta, undone in place against block 0, nor for the filters [`is_noop_backward`].
    pub fn step(&self, id: u8, meta: u8, src: &[u8], dst: &mut [u8]) -> Result<()> {
        let or = |ts: usize| if meta == 0 { ts } else { usize::from(meta) };
        match id {
            SHUFFLE => shuffle::unshuffle(or(self.typesize), src, dst),
            BITSHUFFLE => bitshuffle::bitunshuffle(self.typesize, src, dst, self.version)?,
            BYTEDELTA => bytedelta::decode(or(self.frame_typesize), src, dst),
            BYTEDELTA_BUGGY => bytedelta::decode_buggy(or(self.frame_typesize), src, dst),
            NDCELL | NDMEAN => ndcell::run(
                ndcell::Direction::Decode,
                id,
                meta,
                self.array_blockshape,
                self.frame_typesize,
                src,
                dst,
            )?,
            other => bail!(
                unsupported,
                "filter id {other} ({}) is not supported by b2frame",
                super::name(other)
            ),
        }
        Ok(())
    }
}

/// Why c-blosc2 would decode chunks with this pipeline wrongly, or `None` when it decodes
/// them right.
pub fn c_blosc2_misreads(filters: &[u8; MAX_FILTERS]) -> Option<&'static str> {
    if filters.iter().filter(|&&f| f == DELTA).count() > 1 {
        return Some(
            "c-blosc2 decodes chunks with more than one delta filter wrongly on more than one thread",
        );
    }
    if !c_blosc2_undoes(filters) {
        return Some("c-blosc2 decodes chunks with this filter order wrongly");
    }
    None
}

/// The buffers c-blosc2's decoder moves a block through.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Buf {
    Output,
    Scratch1,
    Scratch2,
    Scratch3,
}

/// Whether c-blosc2's serial decoder undoes `filters` right: a replay of which buffer holds
/// the block after each step, failing where a step reads another buffer.
fn c_blosc2_undoes(filters: &[u8; MAX_FILTERS]) -> bool {
    // Trunc_prec has nothing to undo; c-blosc2 skips it as it skips empty slots.
    let skipped = |f: u8| f == NOFILTER || f == TRUNC_PREC;
    let Some(last) = (0..MAX_FILTERS).find(|&i| !skipped(filters[i])) else {
        return true;
    };
    // The filter undone right after slot `i`'s (the next active slot below it).
    let undone_after = |i: usize| filters[..i].iter().rev().copied().find(|&f| !skipped(f));
    // Streams decode into the output when delta is the first filter to undo.
    let mut block = if undone_after(MAX_FILTERS) == Some(DELTA) {
        Buf::Output
    } else {
        Buf::Scratch1
    };
    let (mut src, mut dest, mut spare) = (Buf::Scratch1, Buf::Scratch2, Buf::Scratch3);
    for i in (last..MAX_FILTERS).rev() {
        let f = filters[i];
        let to_output = i == last || f == DELTA || undone_after(i) == Some(DELTA);
        if to_output && (f == DELTA || src != Buf::Output) {
            dest = Buf::Output;
        }
        if skipped(f) {
            continue;
        }
        if f == DELTA {
            // In place, on whatever the output holds.
            if block != dest {
                return false;
            }
        } else {
            // Unshuffle and the cell filters cannot work in place; the others can.
            let in_place_breaks = matches!(f, SHUFFLE | NDCELL | NDMEAN);
            if block != src || (src == dest && in_place_breaks) {
                return false;
            }
            block = dest;
        }
        (src, dest, spare) = (dest, spare, src);
    }
    // The result is copied from `src` to the output (when it is not the output already).
    block == src
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::{BITSHUFFLE, BYTEDELTA};

    fn pipeline(active: &[u8]) -> [u8; MAX_FILTERS] {
        let mut p = [NOFILTER; MAX_FILTERS];
        p[..active.len()].copy_from_slice(active);
        p
    }

    #[test]
    fn pipelines_c_blosc2_misreads_serially() {
        // Measured with python-blosc2 4.14.1: chunks it wrote with one block (so its encoder,
        // which overwrites its input from the third filter on, is still right).
        for active in [
            &[DELTA, SHUFFLE, DELTA][..],
            &[DELTA, BITSHUFFLE, DELTA],
            &[DELTA, BYTEDELTA, DELTA],
            &[DELTA, NOFILTER, SHUFFLE, DELTA],
            &[SHUFFLE, DELTA, DELTA, DELTA],
            &[SHUFFLE, DELTA, DELTA, SHUFFLE],
            &[NOFILTER, SHUFFLE, SHUFFLE, SHUFFLE, DELTA, SHUFFLE],
        ] {
            assert!(!c_blosc2_undoes(&pipeline(active)), "{active:?}");
            assert!(c_blosc2_misreads(&pipeline(active)).is_some(), "{active:?}");
        }
    }

    #[test]
    fn pipelines_c_blosc2_decodes() {
        for active in [
            &[][..],
            &[SHUFFLE],
            &[DELTA, SHUFFLE],
            &[SHUFFLE, DELTA],
            &[DELTA, DELTA, DELTA],
            &[TRUNC_PREC, SHUFFLE],
            &[BITSHUFFLE, DELTA, DELTA, SHUFFLE],
            &[SHUFFLE, BITSHUFFLE, BYTEDELTA, SHUFFLE],
            &[NOFILTER, NOFILTER, NOFILTER, NOFILTER, DELTA, SHUFFLE],
        ] {
            assert!(c_blosc2_undoes(&pipeline(active)), "{active:?}");
        }
    }

    #[test]
    fn up_to_four_filters_with_one_delta_are_all_decoded() {
        let ids = [SHUFFLE, BITSHUFFLE, DELTA, TRUNC_PREC, BYTEDELTA];
        for n in 1..=4u32 {
            for code in 0..ids.len().pow(n) {
                let active: Vec<u8> = (0..n)
                    .map(|k| ids[code / ids.len().pow(k) % ids.len()])
                    .collect();
                let p = pipeline(&active);
                if active.iter().filter(|&&f| f == DELTA).count() <= 1 {
                    assert_eq!(c_blosc2_misreads(&p), None, "{active:?}");
                } else {
                    assert!(c_blosc2_misreads(&p).is_some(), "{active:?}");
                }
            }
        }
    }
}
