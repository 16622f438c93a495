//! Malformed frames: each class gets an error of the right kind and a message naming the
//! structure, never a panic or an out-of-bounds read.

use b2frame::chunk::CParams;
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::Error;

/// A contiguous frame with 3 chunks, a metalayer and a vlmetalayer, as bytes.
fn base() -> Vec<u8> {
    let s = SChunk::create(
        None,
        &CreateOptions {
            contiguous: true,
            chunksize: 4000,
            params: CParams {
                typesize: 4,
                ..CParams::default()
            },
            sync: false,
        },
    )
    .unwrap();
    s.meta_add("meta", b"\x93\x01\x02\x03").unwrap();
    for k in 0..3u32 {
        let d: Vec<u8> = (0..1000u32)
            .flat_map(|i| (i * k + i / 3).to_le_bytes())
            .collect();
        s.append(&d).unwrap();
    }
    s.vlmeta_set("vl", b"some value").unwrap();
    s.to_buffer().unwrap()
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap())
}
fn be64(b: &[u8], at: usize) -> u64 {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap())
}

fn open(b: Vec<u8>) -> Result<SChunk, Error> {
    SChunk::open_buffer(b)
}

/// Opens and reads everything, so lazily detected problems surface too.
fn open_and_read(b: Vec<u8>) -> Result<(), Error> {
    let s = open(b)?;
    for i in 0..s.nchunks() as i64 {
        s.get_chunk_vec(i)?;
    }
    for n in s.vlmeta_names() {
        s.vlmeta_get(&n, 1 << 20)?;
    }
    Ok(())
}

fn expect_err(r: Result<(), Error>, kind: fn(&Error) -> bool, needle: &str) {
    match r {
        Err(e) if kind(&e) && e.to_string().contains(needle) => {}
        other => panic!("expected an error mentioning {needle:?}, got {other:?}"),
    }
}
fn corrupt(e: &Error) -> bool {
    matches!(e, Error::Corrupt(_))
}
fn format(e: &Error) -> bool {
    matches!(e, Error::Format(_))
}
fn corrupt_or_format(e: &Error) -> bool {
    matches!(e, Error::Corrupt(_) | Error::Format(_))
}

#[test]
fn the_base_frame_is_fine() {
    open_and_read(base()).unwrap();
}

#[test]
fn wrong_magic() {
    // A damaged magic alone reads, as in c-blosc2 (which checks neither the magic nor the
    // markers); with a marker damaged too, it is not a frame.
    let mut b = base();
    b[3] = b'X';
    open_and_read(b.clone()).unwrap();
    b[47] = 0xC0;
    expect_err(open(b).map(|_| ()), format, "magic");
    let mut text = b"just some text, no Blosc2 frame".repeat(10);
    text[2..10].copy_from_slice(b"b2frame\0");
    expect_err(
        open(text).map(|_| ()),
        format,
        "not a Blosc2 frame of a layout",
    );
    expect_err(
        open(b"hello".to_vec()).map(|_| ()),
        format,
        "shorter than a frame header",
    );
}

#[test]
fn header_len_and_frame_len_inconsistent_with_the_buffer() {
    let b = base();
    let mut x = b.clone();
    x[11..15].copy_from_slice(&50i32.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "header_len");
    let mut x = b.clone();
    x[11..15].copy_from_slice(&i32::MAX.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "header_len");
    let mut x = b.clone();
    x[16..24].copy_from_slice(&(b.len() as u64 + 1).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "frame_len");
    let mut x = b.clone();
    x[16..24].copy_from_slice(&(b.len() as u64 - 1).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "frame");
    expect_err(
        open(b[..b.len() - 1].to_vec()).map(|_| ()),
        corrupt,
        "frame_len",
    );
}

#[test]
fn fields_of_the_wrong_msgpack_type() {
    // One damaged marker reads, as c-blosc2 reads it (the fields are at fixed positions);
    // two are another layout.
    for (at, what) in [
        (0usize, "array"),
        (29, "nbytes"),
        (47, "typesize"),
        (62, "threads"),
        (68, "has_vlmetalayers"),
        (69, "filter pipeline"),
    ] {
        let mut x = base();
        x[at] = 0x01;
        open_and_read(x.clone()).unwrap_or_else(|e| panic!("{what}: {e}"));
        x[15] = 0xC0;
        expect_err(open(x).map(|_| ()), format, what);
    }
    // The array marker damaged into a legacy frame's (11 or 12 elements): the layout from
    // byte 57 on is the current one, so it reads as current, as c-blosc2 reads it.
    let chunks = |b: Vec<u8>| -> Result<Vec<Vec<u8>>, Error> {
        let s = open(b)?;
        (0..s.nchunks() as i64)
            .map(|i| s.get_chunk_vec(i))
            .collect()
    };
    let want = chunks(base()).unwrap();
    for legacy in [0x9B, 0x9C] {
        let mut x = base();
        x[0] = legacy;
        let got = chunks(x).unwrap_or_else(|e| panic!("array marker 0x{legacy:02x}: {e}"));
        assert!(got == want, "array marker 0x{legacy:02x}: other chunks");
    }
}

#[test]
fn bad_header_values() {
    let mut x = base();
    x[48..52].copy_from_slice(&0i32.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "typesize");
    let mut x = base();
    x[30..38].copy_from_slice(&(-5i64).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "negative");
    let mut x = base();
    x[25] = 0x17; // version 7
    expect_err(open(x).map(|_| ()), format, "version");
    let mut x = base();
    x[70] = 9; // 9 filters
    expect_err(open(x).map(|_| ()), corrupt, "filters");
    let mut x = base();
    x[58..62].copy_from_slice(&1i32.to_be_bytes()); // chunksize 1: billions of chunks
    x[30..38].copy_from_slice(&(1i64 << 40).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "chunks exceed");
}

#[test]
fn metalayer_offsets_and_counts_out_of_range() {
    let b = base();
    // The section starts at 87: 0x93, 0xCD u16, 0xDE u16 count, then "meta" (0xA4 + 4), 0xD2 + i32.
    let mut x = b.clone();
    x[92..94].copy_from_slice(&17u16.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "17 entries");
    let mut x = b.clone();
    x[92..94].copy_from_slice(&5u16.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "metalayers");
    let off_at = 94 + 1 + 4 + 1;
    let mut x = b.clone();
    x[off_at..off_at + 4].copy_from_slice(&100_000i32.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "offset");
    let mut x = b.clone();
    x[off_at..off_at + 4].copy_from_slice(&(-1i32).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "negative offset");
    // The map marker is checked (as in c-blosc2); the array and u16 markers before it not.
    let mut x = b.clone();
    x[91] = 0xDF;
    expect_err(open(x).map(|_| ()), corrupt, "map marker");
    let mut x = b.clone();
    x[87] = 0x92;
    x[88] = 0x00;
    open_and_read(x).unwrap();
    // A content length beyond the header.
    let content_at = be32(&b, off_at) as usize;
    let mut x = b.clone();
    x[content_at + 1..content_at + 5].copy_from_slice(&u32::MAX.to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "runs past");
}

fn trailer_start(b: &[u8]) -> usize {
    b.len() - be32(b, b.len() - 22) as usize
}

#[test]
fn negative_or_huge_vlmetalayer_counts() {
    let b = base();
    let t = trailer_start(&b);
    for n in [0xFFFFu16, 8193] {
        let mut x = b.clone();
        x[t + 7..t + 9].copy_from_slice(&n.to_be_bytes());
        expect_err(open(x).map(|_| ()), corrupt, "entries");
    }
}

#[test]
fn trailer_len_beyond_the_file() {
    let b = base();
    let at = b.len() - 22;
    for v in [b.len() as u32 + 1, u32::MAX, 3] {
        let mut x = b.clone();
        x[at..at + 4].copy_from_slice(&v.to_be_bytes());
        expect_err(open(x).map(|_| ()), corrupt, "trailer");
    }
    // Markers c-blosc2 does not check: the trailer length's, the trailer's array and version.
    let t = trailer_start(&b);
    let mut x = b.clone();
    x[at - 1] = 0x00;
    x[t] = 0x00;
    x[t + 1] = 0xFF;
    open_and_read(x).unwrap();
}

fn index_pos(b: &[u8]) -> usize {
    be32(b, 11) as usize + be64(b, 39) as usize
}

#[test]
fn index_that_does_not_decode_to_nchunks_offsets() {
    let b = base();
    // Claim 4 chunks' worth of bytes: the index holds 3 offsets.
    let mut x = b.clone();
    x[30..38].copy_from_slice(&(4000i64 * 4).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "expected 32");
    // A damaged index chunk header.
    let i = index_pos(&b);
    let mut x = b.clone();
    x[i + 12..i + 16].copy_from_slice(&1_000_000i32.to_le_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "index");
    // cbytes pointing the index at garbage.
    let mut x = b.clone();
    x[39..47].copy_from_slice(&(be64(&b, 39) + 100_000).to_be_bytes());
    expect_err(open(x).map(|_| ()), corrupt, "index");
}

/// Rewrites the index of `b` with `offsets`.
fn with_offsets(b: &[u8], offsets: &[i64]) -> Vec<u8> {
    with_offsets_at(b, index_pos(b), offsets)
}

/// Rewrites the index at `i` of `b` with `offsets` (a sparse frame's index follows its header).
fn with_offsets_at(b: &[u8], i: usize, offsets: &[i64]) -> Vec<u8> {
    let old = b2frame::chunk::ChunkHeader::parse(&b[i..])
        .unwrap()
        .cbytes();
    let new = b2frame::frame::index::encode(offsets).unwrap();
    let mut x = b[..i].to_vec();
    x.extend_from_slice(&new);
    x.extend_from_slice(&b[i + old..]);
    let len = x.len() as u64;
    x[16..24].copy_from_slice(&len.to_be_bytes());
    x
}

#[test]
fn offsets_past_the_end_or_into_the_header() {
    // The index is read when first needed (opening reads only its chunk header), so these
    // surface at the first chunk read.
    let b = base();
    let cbytes = be64(&b, 39) as i64;
    expect_err(
        open_and_read(with_offsets(&b, &[0, cbytes, 10])),
        corrupt,
        "past the end of the data",
    );
    // One byte short of a chunk header before the end.
    expect_err(
        open_and_read(with_offsets(&b, &[0, cbytes - 31, 10])),
        corrupt,
        "past the end of the data",
    );
    expect_err(
        open_and_read(with_offsets(&b, &[0, i64::MAX, 10])),
        corrupt,
        "past the end",
    );
    // An offset landing inside another chunk reads garbage, which the chunk check catches.
    expect_err(
        open_and_read(with_offsets(&b, &[0, 7, 10])),
        corrupt_or_format,
        "chunk 1",
    );
    // An unknown special kind (none of the bits c-blosc2 tests: 1, 4, 2).
    expect_err(
        open_and_read(with_offsets(&b, &[0, (0x88u64 << 56) as i64, 10])),
        corrupt,
        "special kind",
    );
}

#[test]
fn a_chunk_whose_cbytes_runs_past_the_frame() {
    let b = base();
    let h = be32(&b, 11) as usize;
    let mut x = b.clone();
    x[h + 12..h + 16].copy_from_slice(&1_000_000i32.to_le_bytes());
    expect_err(open_and_read(x), corrupt, "chunk 0");
}

#[test]
fn missing_or_truncated_sparse_chunk_files() {
    let dir = std::env::temp_dir().join(format!("b2f-bad-sframe-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let s = SChunk::open_buffer(base()).unwrap();
    s.save(&dir, false).unwrap();
    let f1 = dir.join("00000001.chunk");
    let full = std::fs::read(&f1).unwrap();
    std::fs::write(&f1, &full[..full.len() - 5]).unwrap();
    let r = SChunk::open(&dir, false).unwrap();
    assert!(r.get_chunk_vec(0).is_ok());
    match r.get_chunk_vec(1) {
        Err(Error::Corrupt(m)) => assert!(m.contains("chunk 1"), "{m}"),
        other => panic!("truncated chunk file: {other:?}"),
    }
    std::fs::remove_file(&f1).unwrap();
    match r.get_chunk_vec(1) {
        Err(Error::Io { context, .. }) => assert!(context.contains("00000001.chunk"), "{context}"),
        other => panic!("missing chunk file: {other:?}"),
    }
    std::fs::remove_file(dir.join("chunks.b2frame")).unwrap();
    assert!(matches!(SChunk::open(&dir, false), Err(Error::Io { .. })));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn chunk_index_out_of_range() {
    let s = open(base()).unwrap();
    for i in [-1i64, 3, i64::MAX, i64::MIN] {
        match s.get_chunk_vec(i) {
            Err(Error::InvalidArgument(m)) => assert!(m.contains("out of range"), "{m}"),
            other => panic!("index {i}: {other:?}"),
        }
    }
    assert!(matches!(s.delete(5), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        s.insert(9, b"1234"),
        Err(Error::InvalidArgument(_))
    ));
    assert!(matches!(s.reorder(&[0, 1]), Err(Error::InvalidArgument(_))));
    assert!(matches!(
        s.reorder(&[0, 0, 1]),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn writes_on_a_read_only_handle() {
    let s = SChunk::open_buffer_mode(base(), false).unwrap();
    let d = vec![0u8; 4000];
    for r in [
        s.append(&d).map(|_| ()),
        s.update(0, &d),
        s.delete(0),
        s.vlmeta_set("x", b"y"),
        s.meta_update("meta", b"\x93"),
        s.reorder(&[2, 1, 0]),
    ] {
        assert!(matches!(r, Err(Error::ReadOnly(_))), "{r:?}");
    }
}

#[test]
fn every_truncation_and_many_byte_flips_are_handled() {
    let b = base();
    for n in 0..b.len() {
        let _ = open_and_read(b[..n].to_vec());
    }
    for at in 0..b.len() {
        for v in [0u8, 0xFF, b[at].wrapping_add(1)] {
            let mut x = b.clone();
            x[at] = v;
            let _ = open_and_read(x);
        }
    }
}

#[test]
fn sparse_chunk_ids_beyond_eight_hex_digits() {
    let dir = std::env::temp_dir().join(format!("b2f-bad-ids-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    SChunk::open_buffer(base())
        .unwrap()
        .save(&dir, false)
        .unwrap();
    let meta = dir.join("chunks.b2frame");
    let b = std::fs::read(&meta).unwrap();
    for (id, ok) in [(u64::from(u32::MAX), true), (1u64 << 32, false)] {
        std::fs::write(
            &meta,
            with_offsets_at(&b, be32(&b, 11) as usize, &[0, id as i64, 2]),
        )
        .unwrap();
        // Sparse frames check their index when opened.
        match SChunk::open(&dir, false).and_then(|r| r.get_chunk_vec(1).map(drop)) {
            // The largest id passes the index check; its chunk file does not exist.
            Err(Error::Io { context, .. }) if ok => {
                assert!(context.contains("FFFFFFFF.chunk"), "{context}")
            }
            Err(Error::Corrupt(m)) if !ok => assert!(m.contains("beyond 8 hex digits"), "{m}"),
            other => panic!("chunk id {id:#x}: {other:?}"),
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
