//! Malformed chunks: each class gets a clear error of the right kind, never a panic, an
//! out-of-bounds access or an allocation sized by an unchecked field.

use b2frame::chunk::{self, CParams, Context};
use b2frame::{codecs, Error};

/// A valid lz4 chunk of 4 blocks, split in 4 streams each (typesize 4, shuffle).
fn good_chunk() -> Vec<u8> {
    let c = chunk_of(codecs::LZ4, 16384);
    assert!(c[2] & 0x02 == 0, "test chunk should not be memcpyed");
    c
}

/// `len` bytes of repeating data compressed with `codec` in blocks of 4 KiB (typesize 4,
/// shuffle).
fn chunk_of(codec: u8, len: u32) -> Vec<u8> {
    let p = CParams {
        codec,
        typesize: 4,
        blocksize: 4096,
        ..CParams::default()
    };
    let src: Vec<u8> = (0..len).map(|i| (i / 64) as u8 ^ (i % 7) as u8).collect();
    Context::new(p).unwrap().compress_to_vec(&src).unwrap()
}

fn decode(chunk: &[u8]) -> Result<Vec<u8>, Error> {
    chunk::decompress_to_vec(chunk, 1 << 26)
}

fn put_i32(c: &mut [u8], at: usize, v: i32) {
    c[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

fn assert_corrupt(r: Result<Vec<u8>, Error>, needle: &str) {
    match r {
        Err(Error::Corrupt(m)) => assert!(m.contains(needle), "message {m:?} lacks {needle:?}"),
        other => panic!("expected a Corrupt error mentioning {needle:?}, got {other:?}"),
    }
}

#[test]
fn truncated_headers() {
    let c = good_chunk();
    for n in 0..16 {
        assert_corrupt(decode(&c[..n]), "16 bytes needed");
    }
    for n in 16..32 {
        assert_corrupt(decode(&c[..n]), "extended header");
    }
}

#[test]
fn cbytes_larger_than_the_buffer() {
    let c = good_chunk();
    assert_corrupt(decode(&c[..c.len() - 1]), "larger than the buffer");
    let mut c2 = c.clone();
    put_i32(&mut c2, 12, i32::MAX);
    assert_corrupt(decode(&c2), "larger than the buffer");
    put_i32(&mut c2, 12, 3);
    assert_corrupt(decode(&c2), "smaller than the header");
}

#[test]
fn nbytes_and_blocksize_out_of_range() {
    let mut c = good_chunk();
    put_i32(&mut c, 4, -5);
    assert_corrupt(decode(&c), "negative nbytes");
    let mut c = good_chunk();
    put_i32(&mut c, 8, 0);
    assert_corrupt(decode(&c), "blocksize 0");
    put_i32(&mut c, 8, -1);
    assert_corrupt(decode(&c), "blocksize -1");
    put_i32(&mut c, 8, 600_000_000);
    assert_corrupt(decode(&c), "exceeds the maximum");
    // A huge nbytes with a tiny blocksize claims more blocks than the chunk can hold.
    let mut c = good_chunk();
    put_i32(&mut c, 4, i32::MAX);
    put_i32(&mut c, 8, 1);
    match decode(&c) {
        Err(Error::NoMemory(_)) | Err(Error::Corrupt(_)) => {}
        other => panic!("expected a refusal, got {other:?}"),
    }
    assert_corrupt(
        chunk::decompress_to_vec(&c, usize::MAX).map(|_| vec![]),
        "block starts do not fit",
    );
}

#[test]
fn typesize_zero() {
    let mut c = good_chunk();
    c[3] = 0;
    assert_corrupt(decode(&c), "typesize is 0");
}

#[test]
fn bstarts_outside_the_chunk() {
    let c = good_chunk();
    for bad in [0, -1, 20, c.len() as i32, i32::MAX] {
        let mut c2 = c.clone();
        put_i32(&mut c2, 32 + 4, bad);
        assert_corrupt(decode(&c2), "block start");
    }
}

#[test]
fn stream_sizes_outside_the_chunk() {
    let c = good_chunk();
    let bstart = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
    for bad in [c.len() as i32, i32::MAX] {
        let mut c2 = c.clone();
        put_i32(&mut c2, bstart, bad);
        assert_corrupt(decode(&c2), "run past the chunk");
    }
    // A block whose first stream's size is cut by the chunk's end.
    let mut c2 = c.clone();
    put_i32(&mut c2, 32 + 4, c.len() as i32 - 2);
    assert_corrupt(decode(&c2), "stream 0: 4 bytes at offset");
    let mut c2 = c.clone();
    put_i32(&mut c2, bstart, -300);
    c2[bstart + 4] = 1;
    assert_corrupt(decode(&c2), "not a byte");
    c2[bstart + 4] = 2;
    assert_corrupt(decode(&c2), "unknown stream token");
}

#[test]
fn dictionary_size_beyond_the_chunk() {
    let p = CParams {
        codec: codecs::ZSTD,
        typesize: 4,
        use_dict: true,
        ..CParams::default()
    };
    let src: Vec<u8> = (0..1u32 << 20)
        .map(|i| (i / 1000) as u8 ^ (i % 5) as u8)
        .collect();
    let c = Context::new(p).unwrap().compress_to_vec(&src).unwrap();
    let nblocks = src
        .len()
        .div_ceil(i32::from_le_bytes(c[8..12].try_into().unwrap()) as usize);
    let at = 32 + 4 * nblocks;
    for bad in [0, -4, 40_000, c.len() as i32] {
        let mut c2 = c.clone();
        put_i32(&mut c2, at, bad);
        assert_corrupt(decode(&c2), "dictionary");
    }
    assert_eq!(decode(&c).unwrap(), src);
}

#[test]
fn streams_that_decode_to_the_wrong_length() {
    let c = good_chunk();
    let bstart = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
    let csize = i32::from_le_bytes(c[bstart..bstart + 4].try_into().unwrap()) as usize;
    // Cut one byte off the first stream's data by shrinking its declared size.
    let mut c2 = c.clone();
    put_i32(&mut c2, bstart, csize as i32 - 1);
    match decode(&c2) {
        Err(Error::Corrupt(m)) => assert!(m.contains("stream"), "{m}"),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // Garbage in place of a stream.
    let mut c3 = c.clone();
    for b in &mut c3[bstart + 4..bstart + 4 + csize] {
        *b = 0xFF;
    }
    assert!(matches!(decode(&c3), Err(Error::Corrupt(_))));
}

/// A stream that decodes to more than its part of the block, into bytes its decoder may
/// write over (the next stream's part, or the scratch's room after the last): LZ4 and BloscLZ
/// are given that room, and the stream is still refused for its length, at every position.
#[test]
fn a_stream_longer_than_its_part_is_refused_though_room_follows() {
    for codec in [codecs::LZ4, codecs::BLOSCLZ] {
        let good = chunk_of(codec, 4096);
        assert!(
            good[2] & 0x12 == 0,
            "test chunk should be split, not memcpyed"
        );
        let neblock = 1024;
        for k in 0..4 {
            // Stream k replaced by one of neblock + 16 bytes; the others kept.
            let mut c = good[..36].to_vec();
            let mut pos = i32::from_le_bytes(good[32..36].try_into().unwrap()) as usize;
            for j in 0..4 {
                let csize = i32::from_le_bytes(good[pos..pos + 4].try_into().unwrap());
                // A run (negative size) keeps one token byte.
                let len = if csize < 0 { 1 } else { csize as usize };
                let stored = &good[pos + 4..pos + 4 + len];
                pos += 4 + len;
                if j != k {
                    c.extend_from_slice(&csize.to_le_bytes());
                    c.extend_from_slice(stored);
                    continue;
                }
                let long: Vec<u8> = (0..neblock + 16).map(|i| (i / 40) as u8).collect();
                let mut out = vec![0u8; long.len() + 64];
                let n = if codec == codecs::LZ4 {
                    codecs::lz4::compress(5, &long, &mut out)
                } else {
                    codecs::blosclz::compress(5, &long, &mut out)
                };
                assert!(n > 0 && n < neblock, "codec {codec}: {n} bytes");
                c.extend_from_slice(&(n as i32).to_le_bytes());
                c.extend_from_slice(&out[..n]);
            }
            let cbytes = c.len() as i32;
            put_i32(&mut c, 12, cbytes);
            assert_corrupt(decode(&c), "expected 1024");
        }
    }
}

/// Every codec: a stream cut short or overwritten fails with Corrupt, and a good chunk then
/// decodes on the same thread (codecs keep per-thread state between streams: zlib's and
/// zstd's contexts).
#[test]
fn bad_streams_of_every_codec_fail_and_leave_the_codec_usable() {
    let src: Vec<u8> = (0..16384u32)
        .map(|i| (i / 64) as u8 ^ (i % 7) as u8)
        .collect();
    for codec in [
        codecs::BLOSCLZ,
        codecs::LZ4,
        codecs::LZ4HC,
        codecs::ZLIB,
        codecs::ZSTD,
    ] {
        let p = CParams {
            codec,
            typesize: 4,
            blocksize: 4096,
            ..CParams::default()
        };
        let c = Context::new(p).unwrap().compress_to_vec(&src).unwrap();
        let bstart = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
        let csize = i32::from_le_bytes(c[bstart..bstart + 4].try_into().unwrap()) as usize;
        let mut cut = c.clone();
        put_i32(&mut cut, bstart, csize as i32 - 1);
        let mut garbage = c.clone();
        garbage[bstart + 4..bstart + 4 + csize].fill(0xA7);
        for bad in [&cut, &garbage] {
            assert!(
                matches!(decode(bad), Err(Error::Corrupt(_))),
                "codec {codec}"
            );
            assert!(decode(&c).unwrap() == src, "codec {codec}");
        }
    }
}

#[test]
fn destination_too_small() {
    let c = good_chunk();
    let mut dst = vec![0u8; 16383];
    match chunk::decompress(&c, &mut dst) {
        Err(Error::BufferTooSmall {
            needed: 16384,
            given: 16383,
        }) => {}
        other => panic!("expected BufferTooSmall, got {other:?}"),
    }
    // And compression into too small a buffer.
    let ctx = Context::new(CParams::default()).unwrap();
    let src = vec![1u8; 1000];
    let mut small = vec![0u8; 16];
    assert!(matches!(
        ctx.compress(&src, &mut small),
        Err(Error::BufferTooSmall { .. })
    ));
    let random: Vec<u8> = (0..1000u32)
        .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
        .collect();
    let mut tight = vec![0u8; 500];
    assert!(matches!(
        ctx.compress(&random, &mut tight),
        Err(Error::BufferTooSmall { needed: 1032, .. })
    ));
}

#[test]
fn unknown_codec_and_filter_ids_are_unsupported_and_named() {
    let c = good_chunk();
    let mut c2 = c.clone();
    c2[2] = (c2[2] & 0x1F) | (6 << 5); // user-defined codec format
    c2[22] = 32; // NDLZ
    match decode(&c2) {
        Err(Error::Unsupported(m)) => assert!(m.contains("32") && m.contains("ndlz"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let mut c3 = c.clone();
    c3[21] = 200; // a user filter in slot 5
    match decode(&c3) {
        Err(Error::Unsupported(m)) => assert!(m.contains("200"), "{m}"),
        other => panic!("expected Unsupported, got {other:?}"),
    }
    let bad = CParams {
        codec: 33,
        ..CParams::default()
    };
    assert!(matches!(Context::new(bad), Err(Error::Unsupported(_))));
}

#[test]
fn pipelines_c_blosc2_misreads_are_refused_for_writing() {
    // Reading them is tested against c-blosc2's chunks in tests/python/test_chunk_interop.py.
    use b2frame::filters::{DELTA, SHUFFLE};
    let params = |filters| CParams {
        typesize: 4,
        filters,
        ..CParams::default()
    };
    for filters in [[DELTA, SHUFFLE, DELTA, 0, 0, 0], [0, 0, 0, 0, DELTA, DELTA]] {
        match Context::new(params(filters)) {
            Err(Error::Unsupported(m)) => {
                assert!(m.contains("[delta, ") && m.contains("c-blosc2"), "{m}")
            }
            other => panic!("expected Unsupported for {filters:?}, got {other:?}"),
        }
    }
}

#[test]
fn memcpyed_and_special_inconsistencies() {
    let ctx = Context::new(CParams {
        clevel: 0,
        ..CParams::default()
    })
    .unwrap();
    let mut c = ctx.compress_to_vec(&[7u8; 100]).unwrap();
    put_i32(&mut c, 4, 90);
    assert_corrupt(decode(&c), "memcpyed");
    // A special chunk with an unknown kind.
    let mut z = Context::new(CParams::default())
        .unwrap()
        .special_chunk(chunk::SpecialValue::Zero, 800, None)
        .unwrap();
    z[31] = 6 << 4;
    assert_corrupt(decode(&z), "unknown special");
}

#[test]
fn every_truncation_and_byte_flip_of_a_chunk_is_handled() {
    let c = good_chunk();
    for n in 0..c.len() {
        let _ = decode(&c[..n]);
    }
    for at in 0..c.len().min(200) {
        for v in [0u8, 0xFF, c[at].wrapping_add(1), c[at].wrapping_sub(1)] {
            let mut c2 = c.clone();
            c2[at] = v;
            if let Ok(out) = decode(&c2) {
                assert!(out.len() <= 1 << 26);
            }
        }
    }
}

#[test]
fn a_bad_block_fails_the_parallel_decode_as_the_serial_one() {
    // Workers claim blocks as they go; one block's error must come back (not hang, not be
    // lost), whichever worker met it, and the other blocks must not matter.
    let c = good_chunk();
    let ctx = Context::new(CParams {
        nthreads: 2,
        ..CParams::default()
    })
    .unwrap();
    let mut out = vec![0u8; 16384];
    assert_eq!(ctx.decompress(&c, &mut out).unwrap(), 16384);
    for block in 0..4 {
        let mut c2 = c.clone();
        put_i32(&mut c2, 32 + 4 * block, i32::MAX);
        assert_corrupt(
            ctx.decompress(&c2, &mut out).map(|_| Vec::new()),
            "block start",
        );
        assert_corrupt(decode(&c2), "block start");
    }
}

#[test]
fn cell_filters_outside_an_array_are_unsupported() {
    // NDCELL needs an array's blockshape (its frame's b2nd metalayer): a chunk written for
    // 64x64 blocks of bytes decodes in its array, and on its own is refused, as in c-blosc2.
    let p = CParams {
        typesize: 1,
        blocksize: 4096,
        filters: [b2frame::filters::NDCELL, 0, 0, 0, 0, 0],
        filters_meta: [4, 0, 0, 0, 0, 0],
        ..CParams::default()
    };
    let src: Vec<u8> = (0..16384u32).map(|i| (i / 64) as u8).collect();
    let mut ctx = Context::new(p.clone()).unwrap();
    let on_its_own = ctx.compress_to_vec(&src);
    assert!(matches!(on_its_own, Err(Error::Unsupported(ref m)) if m.contains("n-dim array")));
    ctx.set_array_blockshape(vec![64, 64]);
    let c = ctx.compress_to_vec(&src).unwrap();
    assert!(c[2] & 0x02 == 0, "test chunk should not be memcpyed");
    match decode(&c) {
        Err(Error::Unsupported(m)) => assert!(m.contains("ndcell"), "{m}"),
        other => panic!("expected Unsupported naming ndcell, got {other:?}"),
    }
    let mut out = vec![0u8; src.len()];
    chunk::decompress::Decoder::new(&c)
        .unwrap()
        .in_array(Some(&[64, 64]))
        .decode_all(&mut out, None)
        .unwrap();
    assert_eq!(out, src);
}

#[test]
fn stored_chunk_short_of_its_bytes() {
    // As c-blosc2 writes some small dictionary chunks: flagged as stored, with cbytes and the
    // buffer both 2 bytes short of nbytes plus the header. Met in tests/python's random checks.
    let ctx = Context::new(CParams {
        clevel: 0,
        typesize: 2,
        ..CParams::default()
    })
    .unwrap();
    let mut c = ctx.compress_to_vec(&[3u8; 28]).unwrap();
    assert_eq!(c.len(), 60);
    c.truncate(58);
    put_i32(&mut c, 12, 58);
    assert_corrupt(
        decode(&c),
        "memcpyed chunk of 28 bytes has cbytes 58 (expected 60)",
    );
}

#[test]
fn split_blocks_shorter_than_their_streams() {
    // As c-blosc2 writes a blocksize below the typesize with splits on and room to spare:
    // blocks flagged as split into typesize streams, fewer bytes than streams (it cannot read
    // such a chunk either). Made here from b2frame's unsplit chunk by clearing that flag.
    let p = CParams {
        codec: codecs::LZ4,
        typesize: 16,
        blocksize: 15,
        splitmode: chunk::SplitMode::Always,
        ..CParams::default()
    };
    let src: Vec<u8> = (0..300u32).map(|i| (i / 40) as u8).collect();
    let mut c = Context::new(p).unwrap().compress_to_vec(&src).unwrap();
    assert_eq!(c[2] & 0x12, 0x10, "an unsplit chunk, not stored as is");
    assert_eq!(decode(&c).unwrap(), src);
    c[2] &= !0x10;
    assert_corrupt(
        decode(&c),
        "block of 15 bytes cannot be split into 16 streams",
    );
}

#[test]
fn truncation_parameters_they_refuse_are_refused_on_chunks_of_zeros_too() {
    // Blocks of zeros skip the filters (they stay zeros); the truncations' refusals do not.
    use b2frame::filters::{INT_TRUNC, SHUFFLE, TRUNC_PREC};
    for (filter, meta, typesize, needle) in [
        (TRUNC_PREC, 60u8, 4, "exceeds the 23-bit mantissa"),
        (TRUNC_PREC, 10, 2, "typesize 2 is not a float size"),
        (INT_TRUNC, 40, 4, "leaves no bit of 4-byte integers"),
        (INT_TRUNC, 2, 3, "typesize 3 is not an integer size"),
    ] {
        let ctx = Context::new(CParams {
            filters: [0, 0, 0, 0, filter, SHUFFLE],
            filters_meta: [0, 0, 0, 0, meta, 0],
            typesize,
            blocksize: 4096,
            ..CParams::default()
        })
        .unwrap();
        let noise: Vec<u8> = (0..30_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for src in [noise, vec![0u8; 30_000]] {
            match ctx.compress_to_vec(&src) {
                Err(Error::InvalidArgument(m)) => {
                    assert!(m.contains(needle), "message {m:?} lacks {needle:?}")
                }
                other => panic!("{filter} meta {meta}: expected a refusal, got {other:?}"),
            }
        }
    }
}
