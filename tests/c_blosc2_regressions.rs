//! c-blosc2's own malformed-input regression tests, one named test here per class they cover
//! (tests/test_frame_malformed_*.c, test_frame_lazychunk_malformed_cbytes.c,
//! test_frame_metalayer_overflow.c, test_frame_trailer_neg_nvlmeta.c, test_getitem_overflow.c,
//! test_vl_block_overflow.c, test_reorder_offsets_negative.c, test_schunk_negative_index.c,
//! b2nd/test_b2nd_shape_overflow.c, b2nd/test_b2nd_chunk_overflow.c), plus the crashes
//! spec/NOTES.md lists. The inputs are built here from the descriptions, not copied.

use b2frame::chunk::{self, header, CParams};
use b2frame::ndim::{self, meta, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::Error;

fn opts(contiguous: bool, chunksize: i32, typesize: usize) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize,
        params: CParams {
            typesize,
            ..CParams::default()
        },
        sync: false,
    }
}

fn ints(n: u32, k: u32) -> Vec<u8> {
    (0..n).flat_map(|i| (i * k + i / 7).to_le_bytes()).collect()
}

/// A contiguous in-memory frame of `nchunks` chunks of 256 int32, as c-blosc2's tests build.
fn frame_bytes(nchunks: u32) -> Vec<u8> {
    let s = SChunk::create(None, &opts(true, 1024, 4)).unwrap();
    for k in 0..nchunks {
        s.append(&ints(256, k + 1)).unwrap();
    }
    s.to_buffer().unwrap()
}

fn be32(b: &[u8], at: usize) -> usize {
    u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize
}
fn be64(b: &[u8], at: usize) -> usize {
    u64::from_be_bytes(b[at..at + 8].try_into().unwrap()) as usize
}
fn le32(b: &[u8], at: usize) -> usize {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap()) as usize
}

/// Where the chunks start (header_len) and where the index chunk starts.
fn layout(frame: &[u8]) -> (usize, usize) {
    let header_len = be32(frame, 11);
    (header_len, header_len + be64(frame, 39))
}

fn is_corrupt(r: &Result<impl std::fmt::Debug, Error>) -> bool {
    matches!(r, Err(Error::Corrupt(_)))
}

/// test_frame_lazychunk_malformed_cbytes: chunk 1's cbytes inflated far past the frame. Reading
/// it is an error (c-blosc2 returned the inflated size and read out of bounds); chunk 0 and
/// the same frame read from a file stay fine.
#[test]
fn frame_lazychunk_malformed_cbytes() {
    let mut b = frame_bytes(2);
    let (data, _) = layout(&b);
    let c1 = data + le32(&b, data + 12);
    b[c1 + 12..c1 + 16].copy_from_slice(&0x7FFF_0000i32.to_le_bytes());
    let dir = std::env::temp_dir().join(format!("b2f-lazychunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.b2frame");
    std::fs::write(&path, &b).unwrap();
    for s in [
        SChunk::open_buffer(b.clone()).unwrap(),
        SChunk::open(&path, false).unwrap(),
    ] {
        assert_eq!(s.get_chunk_vec(0).unwrap(), ints(256, 1));
        let r = s.get_chunk_vec(1);
        assert!(is_corrupt(&r), "{r:?}");
        assert!(is_corrupt(&s.get_chunk_raw(1)));
        let mut out = vec![0u8; 2048];
        assert!(is_corrupt(&s.get_slice(0, 512, &mut out)));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// test_frame_malformed_offsets: the index chunk's payload replaced by offsets that point
/// outside the data (negative of no special kind, past the end): refused, never followed, whether
/// the entry is the first one looked up (decoded from its index block alone) or is looked up
/// once the whole index is loaded. An entry that is right (offset 0) still reads its chunk.
#[test]
fn frame_malformed_offsets() {
    let good = frame_bytes(32);
    let (_, ix) = layout(&good);
    let ilen = le32(&good, ix + 12);
    for bad in [
        // Negative, with none of the special kind bits (1, 2, 4) c-blosc2 tests.
        vec![(0x88u64 << 56 | 5) as i64; 32],
        vec![i64::MAX; 32],
        (0..32).map(|i| i * 1_000_000).collect(),
    ] {
        let raw: Vec<u8> = bad.iter().flat_map(|o| o.to_le_bytes()).collect();
        let chunk = chunk::Context::new(CParams {
            typesize: 8,
            clevel: 0,
            ..CParams::default()
        })
        .unwrap()
        .compress_to_vec(&raw)
        .unwrap();
        // Splice the forged index in and fix frame_len.
        let mut b = good[..ix].to_vec();
        b.extend_from_slice(&chunk);
        b.extend_from_slice(&good[ix + ilen..]);
        let n = b.len() as u64;
        b[16..24].copy_from_slice(&n.to_be_bytes());
        let s = SChunk::open_buffer(b.clone()).unwrap();
        for i in 0..32 {
            let first = SChunk::open_buffer(b.clone()).and_then(|f| f.get_chunk_vec(i as i64));
            let later = s.get_chunk_vec(i as i64);
            if bad[i] == 0 {
                assert_eq!(first.unwrap(), ints(256, 1));
                assert_eq!(later.unwrap(), ints(256, 1));
            } else {
                assert!(is_corrupt(&first), "{bad:?} chunk {i}: {first:?}");
                assert!(is_corrupt(&later), "{bad:?} chunk {i}: {later:?}");
            }
        }
    }
    // Random bytes over the index payload: an error or (if they decode to valid offsets) the
    // chunks they name, never a crash.
    let mut b = good.clone();
    for (k, byte) in b[ix + 32..ix + ilen].iter_mut().enumerate() {
        *byte ^= (k as u8).wrapping_mul(37) | 1;
    }
    if let Ok(s) = SChunk::open_buffer(b) {
        for i in 0..s.nchunks() as i64 {
            let _ = s.get_chunk_vec(i);
        }
    }
}

/// test_frame_malformed_trailer_len: trailer_len below the 25-byte minimum, and above the
/// frame length (within INT32_MAX).
#[test]
fn frame_malformed_trailer_len() {
    let good = frame_bytes(3);
    let at = good.len() - 22;
    assert_eq!(good[at - 1], 0xCE);
    for tlen in [0u32, 24, good.len() as u32 + 1, i32::MAX as u32] {
        let mut b = good.clone();
        b[at..at + 4].copy_from_slice(&tlen.to_be_bytes());
        let r = SChunk::open_buffer(b);
        assert!(is_corrupt(&r), "trailer_len {tlen}: {:?}", r.err());
    }
}

/// test_frame_metalayer_overflow: a metalayer content length out of range, and INT32_MAX
/// (where c-blosc2's `offset + 5 + len` wrapped and it read 2 GB past the buffer).
#[test]
fn frame_metalayer_overflow() {
    let s = SChunk::create(None, &opts(true, 1024, 4)).unwrap();
    let marker = b"\xfe\xed\xfa\xceINCOMPRESSIBLE-MARKER";
    s.meta_add("overflow", marker).unwrap();
    s.append(&ints(256, 3)).unwrap();
    let good = s.to_buffer().unwrap();
    let at = good
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap();
    assert_eq!(good[at - 5], 0xC6);
    for len in [good.len() as u32, i32::MAX as u32, u32::MAX] {
        let mut b = good.clone();
        b[at - 4..at].copy_from_slice(&len.to_be_bytes());
        let r = SChunk::open_buffer(b).and_then(|s| s.meta_get("overflow"));
        assert!(is_corrupt(&r), "content length {len}: {r:?}");
    }
}

/// test_frame_trailer_neg_nvlmeta: the trailer's vlmetalayer count set to 0xFFFF (c-blosc2 read
/// it as int16 -1 and slipped past its checks).
#[test]
fn frame_trailer_neg_nvlmeta() {
    let s = SChunk::create(None, &opts(true, 1024, 4)).unwrap();
    s.append(&ints(256, 3)).unwrap();
    s.vlmeta_set("vlmeta", b"value").unwrap();
    let good = s.to_buffer().unwrap();
    let tstart = good.len() - be32(&good, good.len() - 22);
    assert_eq!(&good[tstart..tstart + 4], &[0x94, 1, 0x93, 0xCD]);
    assert_eq!(good[tstart + 6], 0xDE);
    let mut b = good.clone();
    b[tstart + 7..tstart + 9].copy_from_slice(&[0xFF, 0xFF]);
    let r = SChunk::open_buffer(b).and_then(|s| s.vlmeta_get("vlmeta", 1 << 20));
    assert!(is_corrupt(&r), "{r:?}");
    // The untouched frame round-trips.
    let s = SChunk::open_buffer(good).unwrap();
    assert_eq!(s.vlmeta_get("vlmeta", 1 << 20).unwrap(), b"value");
}

/// test_getitem_overflow: a 32-byte memcpyed chunk claiming INT32_MAX bytes, read into a
/// 16-byte buffer; and an item range whose byte offsets overflow.
#[test]
fn getitem_overflow() {
    let mut c = [0u8; 32];
    c[0] = 2;
    c[1] = 1;
    c[2] = header::MEMCPYED | header::DOSHUFFLE;
    c[3] = 2;
    c[4..8].copy_from_slice(&i32::MAX.to_le_bytes());
    c[8..12].copy_from_slice(&16i32.to_le_bytes());
    c[12..16].copy_from_slice(&32i32.to_le_bytes());
    let mut dst = [0u8; 16];
    let r = chunk::decompress(&c, &mut dst);
    assert!(
        matches!(
            r,
            Err(Error::Corrupt(_)) | Err(Error::BufferTooSmall { .. })
        ),
        "{r:?}"
    );
    // Item ranges in a frame: beyond the items, reversed, or overflowing in bytes.
    let s = SChunk::open_buffer(frame_bytes(2)).unwrap();
    let mut out = [0u8; 64];
    for (start, stop) in [
        (0, 1 << 30),
        (i64::MAX - 1, i64::MAX),
        (-1, 3),
        (5, 2),
        (1 << 62, (1 << 62) + 4),
    ] {
        let r = s.get_slice(start, stop, &mut out);
        assert!(
            matches!(
                r,
                Err(Error::InvalidArgument(_)) | Err(Error::BufferTooSmall { .. })
            ),
            "{start}..{stop}: {r:?}"
        );
    }
}

/// test_vl_block_overflow: a variable-length-block chunk of 1 MiB whose 4097 blocks each claim
/// 1 MiB (their sum overflows int32 in c-blosc2).
#[test]
fn vl_block_overflow() {
    let nblocks = 4097usize;
    let streams = 32 + 4 * nblocks;
    let cbytes = streams + 8 * nblocks;
    let mut c = vec![0u8; cbytes];
    c[0] = header::VERSION_VL_BLOCKS;
    c[1] = 1;
    c[2] = header::DOSHUFFLE | header::DOBITSHUFFLE | header::DONT_SPLIT;
    c[3] = 1;
    c[4..8].copy_from_slice(&(1i32 << 20).to_le_bytes());
    c[8..12].copy_from_slice(&(nblocks as i32).to_le_bytes());
    c[12..16].copy_from_slice(&(cbytes as i32).to_le_bytes());
    c[30] = header::VL_BLOCKS;
    for j in 0..nblocks {
        let at = streams + 8 * j;
        c[32 + 4 * j..36 + 4 * j].copy_from_slice(&(at as i32).to_le_bytes());
        c[at..at + 4].copy_from_slice(&(1i32 << 20).to_le_bytes());
    }
    let mut dst = vec![0u8; 1 << 20];
    let r = chunk::decompress(&c, &mut dst);
    match r {
        Err(Error::Corrupt(m)) => assert!(m.contains("variable-length blocks"), "{m}"),
        other => panic!("{other:?}"),
    }
}

/// test_reorder_offsets_negative: a reorder naming chunk -1 is refused and changes nothing.
#[test]
fn reorder_offsets_negative() {
    let s = SChunk::open_buffer(frame_bytes(2)).unwrap();
    let before = s.to_buffer().unwrap();
    for order in [vec![0, -1], vec![0, 2], vec![1, 1], vec![0]] {
        let r = s.reorder(&order);
        assert!(
            matches!(r, Err(Error::InvalidArgument(_))),
            "{order:?}: {r:?}"
        );
        assert_eq!(s.to_buffer().unwrap(), before);
    }
}

/// test_schunk_negative_index: chunk -1 and chunk nchunks are refused by every chunk
/// operation and change nothing, for memory, file and sparse frames; inserting at nchunks
/// appends.
#[test]
fn schunk_negative_index() {
    let dir = std::env::temp_dir().join(format!("b2f-negindex-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let cases = [
        (true, None),
        (true, Some(dir.join("f.b2frame"))),
        (false, Some(dir.join("s.b2frame"))),
    ];
    let data = ints(256, 9);
    for (contiguous, path) in cases {
        let s = SChunk::create(path.as_deref(), &opts(contiguous, 1024, 4)).unwrap();
        s.append(&data).unwrap();
        let chunk = s.get_chunk_raw(0).unwrap();
        let mut dst = vec![0u8; 1024];
        for i in [-1i64, 1] {
            let invalid = |r: Result<(), Error>| matches!(r, Err(Error::InvalidArgument(_)));
            assert!(invalid(s.get_chunk(i, &mut dst).map(drop)), "get {i}");
            assert!(invalid(s.get_chunk_raw(i).map(drop)), "get raw {i}");
            assert!(invalid(s.update_chunk(i, &chunk)), "update {i}");
            assert!(invalid(s.update(i, &data)), "update data {i}");
            assert!(invalid(s.delete(i)), "delete {i}");
            assert_eq!(s.nchunks(), 1);
        }
        assert!(matches!(
            s.insert_chunk(-1, &chunk),
            Err(Error::InvalidArgument(_))
        ));
        assert_eq!(s.insert_chunk(1, &chunk).unwrap(), 2);
        assert!(matches!(s.delete(2), Err(Error::InvalidArgument(_))));
        s.delete(1).unwrap();
        assert_eq!(s.nchunks(), 1);
        assert_eq!(s.get_chunk_vec(0).unwrap(), data);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

fn nd(shape: Vec<i64>, chunkshape: Vec<i32>, blockshape: Vec<i32>) -> NdMeta {
    NdMeta {
        version: 0,
        shape,
        chunkshape,
        blockshape,
        dtype_format: 0,
        dtype: Some("|u1".into()),
    }
}

/// b2nd/test_b2nd_shape_overflow: block and chunk shape products that wrap int32, a shape
/// product of 2^64, the same on the create path, and a chunk of more than INT32_MAX bytes.
#[test]
fn b2nd_shape_overflow() {
    let cases = [
        nd(vec![65536, 65536], vec![65536, 1], vec![65536, 65536]),
        nd(vec![65536, 65536], vec![65536, 65536], vec![1, 1]),
        nd(vec![1 << 62, 4], vec![1, 1], vec![1, 1]),
        // Products fit int32, but the chunk's bytes (itemsize 4) exceed it.
        nd(vec![1073741952], vec![1073741952], vec![128]),
    ];
    for (k, m) in cases.iter().enumerate() {
        let itemsize = if k == 3 { 4 } else { 1 };
        let mut m = m.clone();
        if k == 3 {
            m.dtype = Some("<u4".into());
        }
        let s = SChunk::create(None, &opts(true, 0, itemsize)).unwrap();
        s.meta_add("b2nd", &meta::encode(&m)).unwrap();
        let r = Array::open(&s).map(drop);
        assert!(is_corrupt(&r), "case {k}: {r:?}");
        // Creating such an array is refused up front.
        let r = ndim::slice::create(None, &opts(true, 0, itemsize), &m).map(drop);
        assert!(
            matches!(r, Err(Error::InvalidArgument(_)) | Err(Error::NoMemory(_))),
            "create case {k}: {r:?}"
        );
    }
    // Control: an ordinary odd-shaped array still round-trips.
    let m = nd(vec![20, 10], vec![7, 5], vec![3, 5]);
    let s = ndim::slice::create(None, &opts(true, 0, 1), &m).unwrap();
    let a = Array::open(&s).unwrap();
    let src: Vec<u8> = (0..200u32).map(|i| (i * 7) as u8).collect();
    a.set_slice(&[0, 0], &[20, 10], &src).unwrap();
    let mut out = vec![0u8; 200];
    a.get_slice(&[0, 0], &[20, 10], &mut out).unwrap();
    assert_eq!(out, src);
}

/// b2nd/test_b2nd_chunk_overflow: a chunkshape of INT32_MAX items (typesize 1) is more than a
/// chunk can hold: refused when the array is created.
#[test]
fn b2nd_chunk_overflow() {
    let m = nd(vec![i32::MAX as i64], vec![i32::MAX], vec![1]);
    let r = ndim::slice::create(None, &opts(false, 0, 1), &m).map(drop);
    assert!(
        matches!(r, Err(Error::InvalidArgument(_)) | Err(Error::NoMemory(_))),
        "{r:?}"
    );
}

/// NOTES.md: c-blosc2 divides by zero reading a special chunk of a frame with chunksize 0
/// (variable-length chunks). Here it reads.
#[test]
fn special_chunk_in_a_variable_chunksize_frame() {
    let s = SChunk::create(None, &opts(true, 0, 4)).unwrap();
    s.append(&ints(100, 1)).unwrap();
    let zeros = chunk::special::build(chunk::SpecialValue::Zero, 400, 4, 400, None).unwrap();
    s.append_chunk(&zeros).unwrap();
    s.append(&ints(10, 2)).unwrap();
    let s = SChunk::open_buffer(s.to_buffer().unwrap()).unwrap();
    assert_eq!(s.get_chunk_vec(1).unwrap(), vec![0u8; 400]);
    assert_eq!(s.get_chunk_vec(2).unwrap(), ints(10, 2));
    let mut out = vec![1u8; 4 * 120];
    s.get_slice(90, 210, &mut out).unwrap();
    assert_eq!(&out[..40], &ints(100, 1)[360..]);
    assert!(out[40..440].iter().all(|&b| b == 0));
    assert_eq!(&out[440..], &ints(10, 2)[..40]);
}

/// NOTES.md: c-blosc2 corrupted its heap copying a buffer with a bad chunk on open. Here the
/// buffer opens (chunks are checked when read) and only the bad chunk is an error.
#[test]
fn bad_chunk_in_a_copied_buffer() {
    let mut b = frame_bytes(3);
    let (data, _) = layout(&b);
    let c1 = data + le32(&b, data + 12);
    b[c1 + 4..c1 + 8].copy_from_slice(&(-7i32).to_le_bytes()); // nbytes
    let s = SChunk::open_buffer(b).unwrap();
    assert_eq!(s.get_chunk_vec(0).unwrap(), ints(256, 1));
    assert!(is_corrupt(&s.get_chunk_vec(1)));
    assert_eq!(s.get_chunk_vec(2).unwrap(), ints(256, 3));
    let r = s.to_buffer();
    assert!(
        is_corrupt(&r),
        "copying the frame reports the bad chunk: {r:?}"
    );
}
