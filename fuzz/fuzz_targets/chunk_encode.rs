//! Any compression parameters over any bytes: the first 17 bytes give the codec, clevel,
//! filter pipeline (six slots and their metas), typesize (1-400), blocksize (0 = automatic,
//! powers of two, sizes around the typesize, any), split mode, threads, dictionary flag and
//! size; the rest, repeated up to that size (at most 256 KiB), is the data. The encoder must
//! refuse cleanly or write a chunk that decodes, whole and item by item, to the input (to what
//! one lossy filter leaves: then encoding the decoded bytes again must give them back), and
//! the same chunk on any thread count. A random sweep against c-blosc2 found a panic here (a
//! blocksize below the typesize, split) that no decoding target could reach.
#![no_main]

use b2frame::chunk::decompress::{decompress_to_vec, getitem};
use b2frame::chunk::{CParams, ChunkHeader, Context, SplitMode};
use b2frame::{codecs, filters};
use libfuzzer_sys::fuzz_target;

const CODECS: [u8; 6] = [
    codecs::BLOSCLZ,
    codecs::LZ4,
    codecs::LZ4HC,
    codecs::ZLIB,
    codecs::ZSTD,
    6, // no such codec: refused
];
const FILTERS: [u8; 8] = [
    0,
    filters::SHUFFLE,
    filters::BITSHUFFLE,
    filters::DELTA,
    filters::TRUNC_PREC,
    filters::BYTEDELTA,
    filters::INT_TRUNC,
    0,
];
const SPLITS: [SplitMode; 4] = [
    SplitMode::Always,
    SplitMode::Never,
    SplitMode::Auto,
    SplitMode::ForwardCompat,
];

fuzz_target!(|data: &[u8]| {
    let Some((head, body)) = data.split_first_chunk::<17>() else {
        return;
    };
    let mut filters = [0u8; 6];
    for (k, f) in filters.iter_mut().enumerate() {
        *f = FILTERS[usize::from(head[2 + k / 2] >> (4 * (k % 2))) % FILTERS.len()];
    }
    let mut filters_meta = [0u8; 6];
    filters_meta.copy_from_slice(&head[5..11]);
    let typesize = 1 + usize::from(u16::from_le_bytes([head[11], head[12] & 1])) % 400;
    let p = CParams {
        codec: CODECS[usize::from(head[0] % 6)],
        clevel: head[1] % 10,
        filters,
        filters_meta,
        typesize,
        blocksize: match head[13] >> 6 {
            0 => 0,
            1 => 1 << (head[13] % 24),
            // Around the typesize: blocks shorter than one item, or not whole items.
            2 => 1 + usize::from(head[14]) % (2 * typesize),
            _ => usize::from(head[13] & 0x3f) * 97 + usize::from(head[14]),
        },
        nthreads: 1 + usize::from(head[15] & 3),
        splitmode: SPLITS[usize::from(head[15] >> 2) % 4],
        use_dict: head[15] & 0x10 != 0,
    };
    // The body repeated, with a counter mixed in so that repeats differ.
    let len = if body.is_empty() {
        0
    } else {
        (usize::from(head[16]) * 1031 + body.len()) % (1 << 18)
    };
    let src: Vec<u8> = (0..len)
        .map(|i| body[i % body.len().max(1)].wrapping_add((i / 4093) as u8))
        .collect();

    let Ok(ctx) = Context::new(p.clone()) else {
        return;
    };
    let Ok(chunk) = ctx.compress_to_vec(&src) else {
        return;
    };
    let one = Context::new(CParams {
        nthreads: 1,
        ..p.clone()
    })
    .unwrap()
    .compress_to_vec(&src)
    .unwrap();
    assert!(one == chunk, "{p:?}: differs from the chunk on one thread");

    let back = decompress_to_vec(&chunk, len).unwrap();
    let lossy = p
        .filters
        .iter()
        .filter(|&&f| f == filters::TRUNC_PREC || f == filters::INT_TRUNC)
        .count();
    if lossy == 1 {
        // What one lossy filter leaves is a fixed point of it and the lossless ones around
        // it. (Not of two: the second truncates what the filters between made of the first's
        // output, and undoing those filters need not give truncated values back.)
        let again = ctx.compress_to_vec(&back).unwrap();
        assert!(
            decompress_to_vec(&again, len).unwrap() == back,
            "{p:?}: not idempotent"
        );
    } else if lossy == 0 {
        assert!(back == src, "{p:?}: decodes to other bytes");
    }
    // Items in the header's typesize (1 for typesizes above 255).
    let ts = usize::from(ChunkHeader::parse(&chunk).unwrap().typesize()).max(1);
    let items = len / ts;
    if items > 0 {
        let start = usize::from(head[14]) % items;
        let n = (items - start).min(1 + usize::from(head[13]));
        let mut got = vec![0u8; n * ts];
        assert_eq!(getitem(&chunk, start, n, &mut got).unwrap(), n * ts);
        assert!(got == back[start * ts..(start + n) * ts], "{p:?}: getitem");
    }
});
