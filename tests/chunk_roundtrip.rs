//! Round trips over the parameter matrix: every codec x clevel x filter pipeline x typesize x
//! size x split mode x threads. Each case compresses, checks the header, decompresses whole
//! and block by block, and compares bytes.

mod common;

use b2frame::chunk::decompress::{getitem, Decoder};
use b2frame::chunk::{CParams, ChunkHeader, Context, SpecialValue, SplitMode};
use b2frame::{codecs, filters};

const CODECS: [u8; 5] = [
    codecs::BLOSCLZ,
    codecs::LZ4,
    codecs::LZ4HC,
    codecs::ZLIB,
    codecs::ZSTD,
];
const CLEVELS: [u8; 4] = [0, 1, 5, 9];
const TYPESIZES: [usize; 8] = [1, 2, 3, 4, 7, 8, 12, 16];
const SPLITS: [SplitMode; 4] = [
    SplitMode::Always,
    SplitMode::Never,
    SplitMode::Auto,
    SplitMode::ForwardCompat,
];

fn pipelines(typesize: usize) -> Vec<(&'static str, [u8; 6], [u8; 6])> {
    let mut v = vec![
        ("none", [0; 6], [0; 6]),
        ("shuffle", [0, 0, 0, 0, 0, filters::SHUFFLE], [0; 6]),
        ("bitshuffle", [0, 0, 0, 0, 0, filters::BITSHUFFLE], [0; 6]),
        (
            "delta+shuffle",
            [filters::DELTA, filters::SHUFFLE, 0, 0, 0, 0],
            [0; 6],
        ),
        (
            "bytedelta",
            [filters::SHUFFLE, filters::BYTEDELTA, 0, 0, 0, 0],
            [0, typesize as u8, 0, 0, 0, 0],
        ),
    ];
    if typesize == 4 || typesize == 8 {
        v.push((
            "trunc_prec",
            [filters::TRUNC_PREC, filters::SHUFFLE, 0, 0, 0, 0],
            [20, 0, 0, 0, 0, 0],
        ));
        // Blocks after block 0 are coded against block 0 as it reads back (truncated).
        v.push((
            "trunc_prec+delta",
            [
                filters::TRUNC_PREC,
                filters::DELTA,
                filters::SHUFFLE,
                0,
                0,
                0,
            ],
            [20, 0, 0, 0, 0, 0],
        ));
    }
    v
}

/// Data that compresses somewhat: a slowly varying sequence of `typesize`-byte items with noise.
fn data(n: usize, typesize: usize, seed: u64) -> Vec<u8> {
    let mut rng = common::Rng::new(seed);
    (0..n)
        .map(|i| {
            let item = i / typesize;
            let byte = i % typesize;
            if byte == 0 {
                (item / 3) as u8 ^ (rng.next_u64() % 3) as u8
            } else if byte == typesize - 1 {
                0
            } else {
                item.checked_shr(8 * byte as u32).unwrap_or(0) as u8
            }
        })
        .collect()
}

/// What trunc_prec leaves of `src` (the filter is lossy): computed by the filter itself.
fn expected_after(p: &CParams, src: &[u8]) -> Vec<u8> {
    match p.filters.iter().position(|&f| f == filters::TRUNC_PREC) {
        Some(i) if p.clevel > 0 && src.len() >= 32 => {
            let mut out = src.to_vec();
            let whole = src.len() / p.typesize * p.typesize;
            filters::trunc_prec::truncate(
                p.filters_meta[i] as i8,
                p.typesize,
                &src[..whole],
                &mut out[..whole],
            )
            .unwrap();
            out
        }
        _ => src.to_vec(),
    }
}

fn check(p: &CParams, src: &[u8]) {
    let ctx = Context::new(p.clone()).unwrap();
    let chunk = ctx
        .compress_to_vec(src)
        .unwrap_or_else(|e| panic!("{p:?} size {}: {e}", src.len()));
    let h = ChunkHeader::parse(&chunk).unwrap();
    assert_eq!(h.nbytes(), src.len());
    assert_eq!(h.cbytes(), chunk.len());
    assert!(chunk.len() <= src.len() + 32);
    if p.nthreads > 1 {
        // Blocks finish out of order on several threads; the chunk is the serial one.
        let serial = CParams {
            nthreads: 1,
            ..p.clone()
        };
        let one = Context::new(serial).unwrap().compress_to_vec(src).unwrap();
        assert!(
            one == chunk,
            "{p:?} size {}: differs from 1 thread",
            src.len()
        );
    }
    let expected = expected_after(p, src);
    let mut out = vec![0xA5u8; src.len()];
    let n = ctx
        .decompress(&chunk, &mut out)
        .unwrap_or_else(|e| panic!("{p:?} size {}: {e}", src.len()));
    assert_eq!(n, src.len());
    assert!(
        out == expected,
        "{p:?} size {}: round trip differs",
        src.len()
    );
    // Block by block, as the n-dim layer reads.
    let d = Decoder::new(&chunk).unwrap();
    let mut block0 = Vec::new();
    for j in 0..d.nblocks() {
        let r = d.block_range(j);
        let mut b = vec![0u8; r.len()];
        let dref = if j > 0 && d.needs_reference() {
            Some(&block0[..])
        } else {
            None
        };
        d.decode_block(j, &mut b, dref).unwrap();
        assert!(b == expected[r.clone()], "{p:?}: block {j} differs");
        // A few items of the block, as the n-dim layer reads a small slab: those bytes are
        // the block's (gathered from the planes of a shuffled block), and so are those of
        // ranges that are not whole items (decoded whole).
        let ts = p.typesize.max(1);
        let items = r.len() / ts;
        let mut ranges = vec![0..ts.min(r.len()), 1.min(r.len())..2.min(r.len())];
        if items > 2 {
            let mid = items / 3;
            ranges.push(mid * ts..(mid + 2) * ts);
            ranges.push((items - 1) * ts..items * ts);
        }
        let mut some = vec![0xA5u8; r.len()];
        for parts in [&ranges[..1], &ranges[..], &ranges[2..]] {
            d.decode_block_parts(j, parts, &mut some, dref).unwrap();
            for q in parts {
                assert!(
                    some[q.clone()] == expected[r.start + q.start..r.start + q.end],
                    "{p:?}: block {j}, bytes {q:?} differ"
                );
            }
        }
        if j == 0 {
            block0 = b;
        }
    }
    // Items through getitem (c-blosc2's blosc2_getitem): the first, some past a third, the
    // last ones, none; and one past the end refused. Items are of the header's typesize (1
    // where the typesize does not fit its byte).
    let ts = usize::from(ChunkHeader::parse(&chunk).unwrap().typesize()).max(1);
    let total = src.len() / ts;
    for (start, n) in [
        (0, 1),
        (total / 3, 5),
        (total.saturating_sub(3), 3),
        (total / 2, 0),
    ] {
        let n = n.min(total - start.min(total));
        let mut items = vec![0xA5u8; n * ts];
        let got = getitem(&chunk, start, n, &mut items)
            .unwrap_or_else(|e| panic!("{p:?} size {}: getitem({start}, {n}): {e}", src.len()));
        assert_eq!(got, n * ts);
        assert!(
            items == expected[start * ts..(start + n) * ts],
            "{p:?} size {}: getitem({start}, {n}) differs",
            src.len()
        );
    }
    assert!(getitem(&chunk, total, 1, &mut [0u8; 16]).is_err());
}

#[test]
fn matrix() {
    let mut cases = 0;
    for &codec in &CODECS {
        for &clevel in &CLEVELS {
            for &typesize in &TYPESIZES {
                // 0, 1, not a multiple of typesize, smaller than a block, many blocks.
                let sizes = [
                    0,
                    1,
                    typesize * 50 + 1,
                    5000 * typesize,
                    150_000 + typesize * 3,
                ];
                for (name, filters, meta) in pipelines(typesize) {
                    for (k, &size) in sizes.iter().enumerate() {
                        for &splitmode in &SPLITS {
                            for nthreads in [1, 2] {
                                let p = CParams {
                                    codec,
                                    clevel,
                                    filters,
                                    filters_meta: meta,
                                    typesize,
                                    blocksize: 0,
                                    nthreads,
                                    splitmode,
                                    use_dict: false,
                                };
                                let src = data(size, typesize, (cases + k) as u64);
                                check(&p, &src);
                                let _ = name;
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(cases > 30_000, "{cases} cases");
}

#[test]
fn explicit_blocksizes_and_many_blocks() {
    for &codec in &CODECS {
        for blocksize in [32, 100, 4096, 65536] {
            for typesize in [1, 4, 8] {
                let p = CParams {
                    codec,
                    typesize,
                    blocksize,
                    nthreads: 2,
                    ..CParams::default()
                };
                check(&p, &data(300_001, typesize, blocksize as u64));
            }
        }
    }
}

/// An explicit blocksize below the typesize leaves no byte for each stream of a split block
/// (c-blosc2 writes empty streams there and loses the block): such blocks are not split, on
/// any split mode or thread count. A random sweep found this as a panic in the stream loop.
#[test]
fn blocks_shorter_than_one_item_are_not_split() {
    for &codec in &CODECS {
        for (typesize, blocksize) in [(129, 123), (196, 64), (240, 32), (16, 15), (3, 2)] {
            for &splitmode in &SPLITS {
                for nthreads in [1, 3] {
                    let p = CParams {
                        codec,
                        typesize,
                        blocksize,
                        splitmode,
                        nthreads,
                        filters: [0, 0, 0, 0, 0, filters::SHUFFLE],
                        ..CParams::default()
                    };
                    for len in [typesize + 40, 5_000, 100_003] {
                        let src = data(len, typesize, len as u64);
                        check(&p, &src);
                        let chunk = Context::new(p.clone()).unwrap().compress_to_vec(&src);
                        let h = ChunkHeader::parse(&chunk.unwrap()).unwrap();
                        assert_eq!(h.blocksize(), blocksize, "{p:?} size {len}");
                        assert!(h.memcpyed() || h.dont_split(), "{p:?} size {len}");
                    }
                }
            }
        }
    }
}

/// Streams of block 0 stored raw (compressed size = stream size) in a split chunk.
fn stored_streams_in_block0(chunk: &[u8]) -> usize {
    let sizes = stream_sizes_in_block0(chunk);
    let neblock = ChunkHeader::parse(chunk).unwrap().blocksize() / sizes.len();
    sizes
        .into_iter()
        .filter(|&csize| csize as usize == neblock)
        .count()
}

/// The csize words of block 0's streams (split chunks).
fn stream_sizes_in_block0(chunk: &[u8]) -> Vec<i32> {
    let h = ChunkHeader::parse(chunk).unwrap();
    let word = |at: usize| i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap());
    let mut pos = word(h.header_len()) as usize;
    (0..h.typesize())
        .map(|_| {
            let csize = word(pos);
            pos += 4 + csize.max(0) as usize + usize::from(csize < 0);
            csize
        })
        .collect()
}

/// A shuffled block whose streams the codec cannot shrink is unshuffled with those planes
/// read from the chunk (no copy first): every plane kernel size, stored planes first, last
/// and between compressed ones, a leftover block, the filters around a shuffle, both
/// decoders (whole chunk on 1 and 2 threads, block by block). And blocks too small for
/// that (1 KiB), whose stored planes are copied out first.
#[test]
fn stored_streams_are_unshuffled_where_they_lie() {
    for (typesize, blocksize) in [2, 3, 4, 8, 16]
        .into_iter()
        .flat_map(|t| [(t, 16 * 1024), (t, 1024)])
    {
        for random_planes in [0b01u32, 0b10, 0b0110_1001_1010_0101] {
            let mut rng = common::Rng::new(typesize as u64);
            let src: Vec<u8> = (0..200_000 + typesize + 5)
                .map(|i| {
                    let (item, byte) = (i / typesize, i % typesize);
                    if random_planes >> byte & 1 == 1 {
                        rng.next_u64() as u8
                    } else {
                        (item / 64) as u8
                    }
                })
                .collect();
            let shuffle_last = [0, 0, 0, 0, 0, filters::SHUFFLE];
            let pipelines = [
                (shuffle_last, [0; 6]),
                (shuffle_last, [0, 0, 0, 0, 0, typesize as u8]),
                ([filters::DELTA, filters::SHUFFLE, 0, 0, 0, 0], [0; 6]),
                (
                    [filters::TRUNC_PREC, filters::SHUFFLE, 0, 0, 0, 0],
                    [20, 0, 0, 0, 0, 0],
                ),
                (
                    [filters::SHUFFLE, filters::BYTEDELTA, 0, 0, 0, 0],
                    [0, typesize as u8, 0, 0, 0, 0],
                ),
            ];
            for &codec in &CODECS {
                for (filters, filters_meta) in pipelines {
                    if filters.contains(&filters::TRUNC_PREC) && ![4, 8].contains(&typesize) {
                        continue;
                    }
                    for nthreads in [1, 2] {
                        let p = CParams {
                            codec,
                            clevel: 5,
                            filters,
                            filters_meta,
                            typesize,
                            blocksize,
                            nthreads,
                            splitmode: SplitMode::Always,
                            use_dict: false,
                        };
                        let chunk = Context::new(p.clone())
                            .unwrap()
                            .compress_to_vec(&src)
                            .unwrap();
                        // (trunc_prec and bytedelta leave the random planes compressible)
                        if !filters.contains(&filters::BYTEDELTA)
                            && !filters.contains(&filters::TRUNC_PREC)
                        {
                            assert!(
                                stored_streams_in_block0(&chunk) > 0,
                                "{p:?}: no stream stored raw, the case tests nothing"
                            );
                        }
                        check(&p, &src);
                    }
                }
            }
        }
    }
}

/// Streams that are runs of one byte (csize 0 for zeros, negative for other bytes) in
/// shuffled blocks are unshuffled from planes each thread keeps: zero and other run planes
/// among compressed and stored ones; several planes of one byte; more distinct run bytes in
/// a block than there are kept planes (the rest written out); blocks whose planes are
/// longer, then shorter, than the kept ones; planes over 1 MiB, which are written out, and
/// blocks too small to keep theirs. On 1 and 2 threads and block by block (`check`); a plane
/// read from a slot holding another byte, or refilled while a block still reads it, fails the
/// comparison.
#[test]
fn run_streams_are_unshuffled_from_kept_planes() {
    // Per plane: 0 a zero run, 1 a run of 0x41, 2 a run of its own byte, 3 random, else a
    // slow count.
    let layouts: [&[u8]; 5] = [
        &[4, 0],
        &[3, 4, 0, 0],
        &[1, 4, 1, 3],
        &[4, 4, 1, 0, 2, 2, 3, 2],
        &[2, 2, 2, 2, 2, 4, 0, 1, 2, 2, 4, 4, 2, 3, 2, 2],
    ];
    for layout in layouts {
        let typesize = layout.len();
        let mut rng = common::Rng::new(typesize as u64 + 99);
        // (2 KiB: too small for the kept planes; runs are written out)
        for blocksize in [64 * 1024, 4 << 20, 16 * 1024, 2048] {
            let len = blocksize * 2 + 3 * typesize + 1;
            let src: Vec<u8> = (0..len)
                .map(|i| {
                    let (item, byte) = (i / typesize, i % typesize);
                    match layout[byte] {
                        0 => 0,
                        1 => 0x41,
                        2 => 0x80 + byte as u8,
                        3 => rng.next_u64() as u8,
                        _ => (item / 7 + byte) as u8,
                    }
                })
                .collect();
            for &codec in &CODECS {
                for nthreads in [1, 2] {
                    let p = CParams {
                        codec,
                        typesize,
                        blocksize,
                        nthreads,
                        splitmode: SplitMode::Always,
                        ..CParams::default()
                    };
                    let chunk = Context::new(p.clone())
                        .unwrap()
                        .compress_to_vec(&src)
                        .unwrap();
                    let sizes = stream_sizes_in_block0(&chunk);
                    for (k, &csize) in sizes.iter().enumerate() {
                        let expected = match layout[k] {
                            0 => 0,
                            1 => -0x41,
                            2 => -(0x80 + k as i32),
                            _ => continue,
                        };
                        assert_eq!(csize, expected, "{p:?}: stream {k}");
                    }
                    check(&p, &src);
                }
            }
        }
    }
}

#[test]
fn dictionaries() {
    for codec in [codecs::ZSTD, codecs::LZ4, codecs::LZ4HC] {
        for clevel in [1, 5, 9] {
            for nthreads in [1, 2] {
                let p = CParams {
                    codec,
                    clevel,
                    typesize: 4,
                    use_dict: true,
                    nthreads,
                    ..CParams::default()
                };
                let src = data(1 << 20, 4, 7);
                check(&p, &src);
                let chunk = Context::new(p.clone())
                    .unwrap()
                    .compress_to_vec(&src)
                    .unwrap();
                assert!(
                    ChunkHeader::parse(&chunk).unwrap().use_dict(),
                    "{p:?} built no dictionary"
                );
            }
        }
    }
}

#[test]
fn large_typesizes_are_compressed_as_bytes() {
    for typesize in [255, 256, 1000, 70_000] {
        let p = CParams {
            codec: codecs::LZ4,
            typesize,
            ..CParams::default()
        };
        check(&p, &data(typesize * 20, typesize, 3));
    }
}

#[test]
fn special_value_chunks() {
    use b2frame::chunk::SpecialValue;
    let ctx = Context::new(CParams {
        typesize: 8,
        ..CParams::default()
    })
    .unwrap();
    let zeros = ctx.special_chunk(SpecialValue::Zero, 8000, None).unwrap();
    assert_eq!(zeros.len(), 32);
    assert_eq!(
        b2frame::chunk::decompress_to_vec(&zeros, 1 << 20).unwrap(),
        vec![0u8; 8000]
    );
    let nans = ctx.special_chunk(SpecialValue::Nan, 800, None).unwrap();
    let out = b2frame::chunk::decompress_to_vec(&nans, 1 << 20).unwrap();
    assert!(out
        .chunks(8)
        .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()));
    let v = 1234.5f64.to_le_bytes();
    let rep = ctx
        .special_chunk(SpecialValue::Value, 800, Some(&v))
        .unwrap();
    assert_eq!(rep.len(), 40);
    let out = b2frame::chunk::decompress_to_vec(&rep, 1 << 20).unwrap();
    assert!(out.chunks(8).all(|c| c == v));
    // Items of a value chunk, whole, and bytes from inside an item (the pattern in phase).
    let mut items = [0u8; 24];
    assert_eq!(getitem(&rep, 7, 3, &mut items).unwrap(), 24);
    assert!(items.chunks(8).all(|c| c == v));
    let d = Decoder::new(&rep).unwrap();
    let mut odd = [0u8; 13];
    d.decode_range(37..50, &mut odd).unwrap();
    assert!(odd == out[37..50]);
    let mut nan = [0u8; 16];
    getitem(&nans, 99, 1, &mut nan[..8]).unwrap();
    assert!(f64::from_le_bytes(nan[..8].try_into().unwrap()).is_nan());
    // An all-zero buffer compresses to a zero special chunk, as in c-blosc2.
    let z = ctx.compress_to_vec(&vec![0u8; 1 << 20]).unwrap();
    assert_eq!(z.len(), 32);
    assert_eq!(
        ChunkHeader::parse(&z).unwrap().special().unwrap(),
        SpecialValue::Zero
    );
}

/// Special-value chunks of several MiB decoded on several threads: the fill is cut into
/// pieces the threads claim, each piece starting in phase with the value.
#[test]
fn special_value_chunks_fill_in_phase_on_several_threads() {
    use b2frame::chunk::SpecialValue;
    use b2frame::pool::Pool;
    let value = [0x11u8, 0x22, 0x33];
    let ctx = Context::new(CParams {
        typesize: 3,
        ..CParams::default()
    })
    .unwrap();
    let nbytes = 3 * 1_000_003;
    let rep = ctx
        .special_chunk(SpecialValue::Value, nbytes, Some(&value))
        .unwrap();
    let nan_ctx = Context::new(CParams {
        typesize: 8,
        ..CParams::default()
    })
    .unwrap();
    let nans = nan_ctx
        .special_chunk(SpecialValue::Nan, 8 * 400_001, None)
        .unwrap();
    let zeros = nan_ctx
        .special_chunk(SpecialValue::Zero, 5 << 20, None)
        .unwrap();
    for nthreads in [1, 2, 3] {
        let pool = Pool::new(nthreads).unwrap();
        let mut out = vec![0xffu8; nbytes];
        assert_eq!(
            b2frame::chunk::decompress::decompress_with(&pool, &rep, &mut out).unwrap(),
            nbytes
        );
        if let Some(at) = out.chunks(3).position(|c| c != value) {
            panic!("{nthreads} threads: value out of phase at item {at}");
        }
        let mut out = vec![0u8; 8 * 400_001];
        b2frame::chunk::decompress::decompress_with(&pool, &nans, &mut out).unwrap();
        assert!(
            out.chunks(8)
                .all(|c| f64::from_le_bytes(c.try_into().unwrap()).is_nan()),
            "{nthreads} threads"
        );
        let mut out = vec![0xffu8; 5 << 20];
        b2frame::chunk::decompress::decompress_with(&pool, &zeros, &mut out).unwrap();
        assert!(out.iter().all(|&b| b == 0), "{nthreads} threads");
    }
}

/// Barely compressible data, several blocks: the chunk just fits, or just does not. With more
/// than one thread, blocks are compressed with room to spare and placed afterwards, while the
/// serial compressor (c-blosc2's, whose chunks these must be) gives each block only the room
/// left, where a codec may give up (zstd does, short of its worst-case bound). Every thread
/// count must give the serial chunk.
#[test]
fn chunks_that_barely_fit_are_the_same_on_every_thread_count() {
    let mut rng = common::Rng::new(11);
    let mut memcpyed = 0;
    for case in 0..6000 {
        let codec = CODECS[case % CODECS.len()];
        let blocksize = [256usize, 1024, 4096][(case / 5) % 3];
        let n = (2 + (rng.next_u64() % 4) as usize) * blocksize
            + (rng.next_u64() % blocksize as u64) as usize;
        // Random bytes with a few short runs: compresses a little, or not at all.
        let runs = 1 + rng.next_u64() % 40;
        let mut src = Vec::with_capacity(n + 6);
        while src.len() < n {
            if src.len() > 8 && rng.next_u64() % 100 < runs {
                let b = src[src.len() - 1 - (rng.next_u64() % 8) as usize];
                src.extend_from_slice(&[b; 6]);
            } else {
                src.push(rng.next_u64() as u8);
            }
        }
        src.truncate(n);
        let p = CParams {
            codec,
            clevel: 1 + (rng.next_u64() % 9) as u8,
            typesize: [1, 2, 4, 8][(rng.next_u64() % 4) as usize],
            blocksize,
            nthreads: [2, 3][case % 2],
            splitmode: SPLITS[(rng.next_u64() % 4) as usize],
            ..CParams::default()
        };
        check(&p, &src);
        let chunk = Context::new(p).unwrap().compress_to_vec(&src).unwrap();
        memcpyed += ChunkHeader::parse(&chunk).unwrap().memcpyed() as usize;
    }
    // Both sides of the edge were visited.
    assert!(
        (100..5900).contains(&memcpyed),
        "{memcpyed} of 6000 stored as is"
    );
}

/// Chunks of zero streams (what frames store for zeros that are not whole items) decode to
/// zeros, whole and item by item.
#[test]
fn zero_stream_chunks_decode_to_zeros() {
    for nbytes in [1usize, 7, 2586, 100_003] {
        for typesize in [1usize, 3, 8, 300] {
            for blocksize in [0usize, 1, 16, 1000, 200_000] {
                let what = format!("{nbytes} bytes, typesize {typesize}, blocksize {blocksize}");
                let c = b2frame::chunk::special::zero_streams(nbytes, typesize, blocksize)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                let h = ChunkHeader::parse(&c).unwrap();
                assert_eq!(h.special().unwrap(), SpecialValue::None, "{what}");
                let out = b2frame::chunk::decompress_to_vec(&c, nbytes).unwrap();
                assert!(out == vec![0; nbytes], "{what}");
                let ts = usize::from(h.typesize());
                if let Some(last) = (nbytes / ts).checked_sub(1) {
                    let mut item = vec![0xA5u8; ts];
                    getitem(&c, last, 1, &mut item).unwrap();
                    assert!(item.iter().all(|&b| b == 0), "{what}: item {last}");
                }
            }
        }
    }
}
