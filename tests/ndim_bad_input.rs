//! Broken array descriptions, one test per class: each is refused with a clear error (a
//! corrupt file or an invalid argument), never a panic, never an allocation sized by a field.

use b2frame::chunk::CParams;
use b2frame::ndim::{self, meta, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::Error;

fn opts(typesize: usize) -> CreateOptions {
    CreateOptions {
        contiguous: true,
        chunksize: 0,
        params: CParams {
            typesize,
            ..CParams::default()
        },
        sync: false,
    }
}

fn good() -> NdMeta {
    NdMeta {
        version: 0,
        shape: vec![10, 7],
        chunkshape: vec![4, 7],
        blockshape: vec![2, 3],
        dtype_format: 0,
        dtype: Some("<f8".into()),
    }
}

/// A frame carrying `bytes` as its b2nd metalayer (no chunks).
fn with_meta(name: &str, bytes: &[u8], typesize: usize) -> SChunk {
    let s = SChunk::create(None, &opts(typesize)).unwrap();
    s.meta_add(name, bytes).unwrap();
    s
}

fn open_err(s: &SChunk) -> Error {
    match Array::open(s) {
        Ok(_) => panic!("a broken array opened"),
        Err(e) => e,
    }
}

fn assert_corrupt(e: Error, needle: &str) {
    let msg = e.to_string();
    assert!(matches!(e, Error::Corrupt(_)), "wrong class: {msg}");
    assert!(
        msg.contains(needle),
        "message {msg:?} does not mention {needle:?}"
    );
}

/// The b2nd bytes with `ndim` set to `n` (the shapes keep their two entries).
fn with_ndim(n: u8) -> Vec<u8> {
    let mut b = meta::encode(&good());
    assert_eq!(b[2], 2);
    b[2] = n;
    b
}

#[test]
fn ndim_above_16() {
    assert_corrupt(open_err(&with_meta("b2nd", &with_ndim(17), 8)), "ndim 17");
}

#[test]
fn ndim_negative() {
    // 0xFF is msgpack's negative fixint -1.
    assert_corrupt(open_err(&with_meta("b2nd", &with_ndim(0xFF), 8)), "ndim -1");
}

#[test]
fn ndim_not_matching_the_shape() {
    assert_corrupt(open_err(&with_meta("b2nd", &with_ndim(3), 8)), "entries");
}

#[test]
fn negative_shape() {
    let mut m = good();
    m.shape[1] = -7;
    assert_corrupt(
        open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
        "negative",
    );
}

#[test]
fn zero_chunk_or_block_shape() {
    for (c, b) in [(0, 1), (4, 0)] {
        let mut m = good();
        m.chunkshape[0] = c;
        m.blockshape[0] = b;
        assert_corrupt(
            open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
            "positive",
        );
    }
}

#[test]
fn block_larger_than_chunk() {
    let mut m = good();
    m.blockshape[1] = 8;
    assert_corrupt(
        open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
        "larger than chunkshape",
    );
}

#[test]
fn oversized_chunks() {
    let mut m = good();
    m.shape = vec![1 << 30, 1 << 20];
    m.chunkshape = vec![1 << 20, 1 << 20];
    m.blockshape = vec![1, 1];
    assert_corrupt(
        open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
        "exceeds",
    );
}

#[test]
fn shape_product_overflows_int64() {
    let mut m = good();
    m.shape = vec![i64::MAX / 2, 3];
    m.chunkshape = vec![1, 1];
    m.blockshape = vec![1, 1];
    assert_corrupt(
        open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
        "overflows",
    );
}

#[test]
fn metalayer_shorter_than_it_says() {
    let full = meta::encode(&good());
    for cut in 0..full.len() {
        let e = open_err(&with_meta("b2nd", &full[..cut], 8));
        assert!(matches!(e, Error::Corrupt(_)), "cut at {cut}: {e}");
    }
}

#[test]
fn dtype_length_far_beyond_the_metalayer() {
    let mut b = meta::encode(&good());
    let n = b.len();
    // The dtype is `0xDB len32 "<f8"`: claim 4 GiB.
    b[n - 7..n - 3].copy_from_slice(&u32::MAX.to_be_bytes());
    assert_corrupt(open_err(&with_meta("b2nd", &b, 8)), "runs past");
}

#[test]
fn dtype_that_does_not_parse() {
    for bad in [
        "<x9",
        "",
        "[('a', '<i4'),",
        "{'names': ['a']}",
        "<f8[",
        "S-1",
    ] {
        let mut m = good();
        m.dtype = Some(bad.into());
        assert_corrupt(
            open_err(&with_meta("b2nd", &meta::encode(&m), 8)),
            "does not parse",
        );
    }
}

#[test]
fn caterva_metalayer_truncated_or_wrong() {
    let caterva = |ndim: u8| {
        let mut b = vec![0x95, 0x00, ndim, 0x91, 0x0A, 0x91, 0x04, 0x91, 0x02];
        if ndim != 1 {
            b[2] = ndim;
        }
        b
    };
    let ok = with_meta("caterva", &caterva(1), 4);
    let a = Array::open(&ok).unwrap();
    assert!(a.caterva && a.geom.itemsize == 4 && a.meta.dtype.is_none());
    assert_corrupt(open_err(&with_meta("caterva", &caterva(20), 4)), "ndim 20");
    assert_corrupt(
        open_err(&with_meta("caterva", &caterva(1)[..6], 4)),
        "caterva",
    );
}

#[test]
fn fewer_chunks_than_the_grid() {
    // The metalayer promises 3 chunks; the frame holds one.
    let m = good();
    let s = with_meta("b2nd", &meta::encode(&m), 8);
    s.append(&vec![0u8; 4 * 8 * 6 * 8]).unwrap();
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; 10 * 7 * 8];
    let e = a.get_slice(&[0, 0], &[10, 7], &mut out).unwrap_err();
    assert_corrupt(e, "chunk");
}

#[test]
fn chunk_of_the_wrong_size() {
    let s = with_meta("b2nd", &meta::encode(&good()), 8);
    for _ in 0..3 {
        s.append(&[1u8; 100]).unwrap();
    }
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; 8];
    assert_corrupt(
        a.get_slice(&[0, 0], &[1, 1], &mut out).unwrap_err(),
        "bytes",
    );
}

#[test]
fn slab_outside_the_shape_or_reversed() {
    let s = ndim::slice::create(None, &opts(8), &good()).unwrap();
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; 1 << 12];
    for (start, stop) in [
        (vec![0, 0], vec![11, 7]),
        (vec![-1, 0], vec![1, 1]),
        (vec![5, 0], vec![4, 7]),
        (vec![0], vec![1]),
    ] {
        let e = a.get_slice(&start, &stop, &mut out).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(_)),
            "{start:?}..{stop:?}: {e}"
        );
        let e = a.set_slice(&start, &stop, &out).unwrap_err();
        assert!(
            matches!(e, Error::InvalidArgument(_)),
            "{start:?}..{stop:?}: {e}"
        );
    }
}

#[test]
fn destination_smaller_than_the_slab() {
    let s = ndim::slice::create(None, &opts(8), &good()).unwrap();
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; 10 * 7 * 8 - 1];
    match a.get_slice(&[0, 0], &[10, 7], &mut out) {
        Err(Error::BufferTooSmall { needed, given }) => assert_eq!((needed, given), (560, 559)),
        other => panic!("{other:?}"),
    }
}
