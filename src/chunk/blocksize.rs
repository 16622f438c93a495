//! c-blosc2's automatic blocksize and split decisions (its "stune" tuner), so chunks written
//! here have the same block structure, ratio and speed profile as c-blosc2's.

use super::compress::SplitMode;
use crate::codecs;

/// L1 cache size c-blosc2 assumes.
const L1: usize = 32 * 1024;
/// Most streams a block is split into.
const MAX_STREAMS: usize = 16;
/// Buffers smaller than this are always stored memcpyed.
pub const MIN_BUFFERSIZE: usize = 32;

/// Codecs meant for large blocks ("high compression ratio").
fn is_hcr(codec: u8) -> bool {
    matches!(codec, codecs::LZ4HC | codecs::ZLIB | codecs::ZSTD)
}

/// Whether blocks are split into one stream per byte of the type.
/// `shuffle` is whether the pipeline holds a byte shuffle.
pub fn split_block(
    splitmode: SplitMode,
    codec: u8,
    clevel: u8,
    shuffle: bool,
    typesize: usize,
    blocksize: usize,
) -> bool {
    match splitmode {
        SplitMode::Always => return true,
        SplitMode::Never => return false,
        SplitMode::Auto | SplitMode::ForwardCompat => {}
    }
    let fast_codec =
        codec == codecs::BLOSCLZ || codec == codecs::LZ4 || (codec == codecs::ZSTD && clevel <= 5);
    fast_codec && shuffle && typesize <= MAX_STREAMS && blocksize / typesize >= MIN_BUFFERSIZE
}

/// The blocksize c-blosc2 picks for a buffer of `nbytes` (`user_blocksize` 0 = automatic).
pub fn compute_blocksize(
    splitmode: SplitMode,
    codec: u8,
    clevel: u8,
    shuffle: bool,
    typesize: usize,
    nbytes: usize,
    user_blocksize: usize,
) -> usize {
    if nbytes < typesize {
        return 1;
    }
    let splits = split_block(splitmode, codec, clevel, shuffle, typesize, nbytes);
    let mut blocksize = nbytes;
    if user_blocksize != 0 {
        blocksize = user_blocksize;
    } else {
        if nbytes >= L1 {
            blocksize = L1;
            if is_hcr(codec) {
                blocksize *= 2;
            }
            match clevel {
                0 => blocksize /= 4,
                1 => blocksize /= 2,
                2 => {}
                3 => blocksize *= 2,
                4 | 5 => blocksize *= 4,
                6..=8 => blocksize *= 8,
                _ => {
                    blocksize *= 8;
                    if is_hcr(codec) {
                        blocksize *= 2;
                    }
                }
            }
        }
        if clevel > 0 && splits {
            blocksize = match clevel {
                1..=3 => 32 * 1024,
                4..=6 => 64 * 1024,
                7 => 128 * 1024,
                8 => 256 * 1024,
                _ => 512 * 1024,
            };
            blocksize *= typesize;
            blocksize = blocksize.clamp(32 * 1024, 4 * 1024 * 1024);
        }
    }
    if blocksize > nbytes {
        blocksize = nbytes;
    }
    if blocksize > typesize {
        blocksize = blocksize / typesize * typesize;
    }
    blocksize
}

/// The number of blocks of `blocksize` (> 0) bytes in `nbytes`, and the bytes of the last one
/// if it is short (else 0). Without a division for a chunk of one block or blocks of a power of
/// two: the division's latency was a sixth of `Decoder::new`'s perf samples for a 1 KiB chunk.
pub(crate) fn blocks_of(nbytes: usize, blocksize: usize) -> (usize, usize) {
    if nbytes == blocksize {
        (1, 0)
    } else if blocksize.is_power_of_two() {
        let leftover = nbytes & (blocksize - 1);
        (
            (nbytes >> blocksize.trailing_zeros()) + usize::from(leftover != 0),
            leftover,
        )
    } else {
        (nbytes.div_ceil(blocksize), nbytes % blocksize)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_use_one_byte_blocks() {
        assert_eq!(
            compute_blocksize(SplitMode::ForwardCompat, 0, 5, true, 8, 4, 0),
            1
        );
    }

    #[test]
    fn split_codecs_scale_with_typesize() {
        // blosclz clevel 5 with shuffle splits: 64 KiB per byte of the type, capped at 4 MiB.
        let bs = compute_blocksize(SplitMode::ForwardCompat, 0, 5, true, 4, 10 << 20, 0);
        assert_eq!(bs, 256 * 1024);
        let bs = compute_blocksize(SplitMode::ForwardCompat, 0, 9, true, 16, 100 << 20, 0);
        assert_eq!(bs, 4 * 1024 * 1024);
    }

    #[test]
    fn hcr_codecs_double_the_l1_blocks() {
        // zstd clevel 9 does not split: 32 KiB * 2 (HCR) * 8 * 2 (HCR at 9) = 1 MiB.
        let bs = compute_blocksize(SplitMode::ForwardCompat, 5, 9, true, 8, 100 << 20, 0);
        assert_eq!(bs, 1024 * 1024);
    }

    #[test]
    fn user_blocksize_is_rounded_to_typesize() {
        assert_eq!(
            compute_blocksize(SplitMode::Never, 1, 5, false, 8, 1 << 20, 1001),
            1000
        );
    }

    #[test]
    fn blocks_of_agrees_with_division() {
        for blocksize in [1, 2, 3, 7, 8, 1000, 1024, 4096, 5000, 1 << 20] {
            for nbytes in (0..3 * blocksize + 2)
                .step_by((blocksize / 97).max(1))
                .chain([blocksize, 2 * blocksize, 2 * blocksize + 1])
            {
                assert_eq!(
                    blocks_of(nbytes, blocksize),
                    (nbytes.div_ceil(blocksize), nbytes % blocksize),
                    "nbytes {nbytes}, blocksize {blocksize}"
                );
            }
        }
    }
}
