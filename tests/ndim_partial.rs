//! Slab reads from files read only the blocks they need (a partial chunk in a reused buffer):
//! their results must equal reads of the same array held in memory (read whole), for every
//! chunk layout the partial path meets — split and unsplit streams, delta filters (block 0
//! is a reference), memcpyed chunks, special chunks, and Blosc2 blocks that are not the
//! array's blocks (the whole-chunk fallback).

mod common;

use b2frame::chunk::{CParams, SplitMode};
use b2frame::codecs;
use b2frame::filters;
use b2frame::ndim::{self, meta, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};
use common::Rng;

fn params(codec: u8, clevel: u8, filters: [u8; 6], split: SplitMode) -> CParams {
    CParams {
        codec,
        clevel,
        filters,
        typesize: 8,
        splitmode: split,
        ..CParams::default()
    }
}

fn array_meta() -> NdMeta {
    NdMeta {
        version: 0,
        shape: vec![70, 64, 33],
        chunkshape: vec![40, 64, 33],
        blockshape: vec![5, 16, 11],
        dtype_format: 0,
        dtype: Some("<f8".into()),
    }
}

/// Fills the array chunk by chunk with smooth data (one chunk left zero: special).
fn fill(a: &Array, rng: &mut Rng) {
    let m = &a.meta;
    let mut k = 0;
    for i0 in (0..m.shape[0]).step_by(m.chunkshape[0] as usize) {
        k += 1;
        if k == 2 {
            continue;
        }
        let stop = [
            (i0 + m.chunkshape[0] as i64).min(m.shape[0]),
            m.shape[1],
            m.shape[2],
        ];
        let n = ((stop[0] - i0) * stop[1] * stop[2]) as usize;
        let base = (rng.next_u64() % 1000) as f64;
        let data: Vec<u8> = (0..n)
            .flat_map(|i| (base + (i as f64 * 0.01).sin()).to_le_bytes())
            .collect();
        a.set_slice(&[i0, 0, 0], &stop, &data).unwrap();
    }
}

fn compare_reads(path: &std::path::Path, seed: u64) {
    let on_disk = SChunk::open(path, false).unwrap();
    let in_mem = SChunk::open_buffer(std::fs::read(path).unwrap()).unwrap();
    let (a, b) = (
        Array::open(&on_disk).unwrap(),
        Array::open(&in_mem).unwrap(),
    );
    let shape = a.meta.shape.clone();
    let mut rng = Rng::new(seed);
    for q in 0..300 {
        let start: Vec<i64> = shape
            .iter()
            .map(|&s| (rng.next_u64() % s as u64) as i64)
            .collect();
        // Mostly small slabs (the partial path), some large ones (the whole-chunk path).
        let span = if q % 10 == 0 { 40 } else { 3 };
        let stop: Vec<i64> = start
            .iter()
            .zip(&shape)
            .map(|(&a, &s)| (a + 1 + (rng.next_u64() % span) as i64).min(s))
            .collect();
        let n: i64 = start.iter().zip(&stop).map(|(a, b)| b - a).product();
        let mut x = vec![0u8; n as usize * 8];
        let mut y = vec![1u8; n as usize * 8];
        a.get_slice(&start, &stop, &mut x).unwrap();
        b.get_slice(&start, &stop, &mut y).unwrap();
        assert!(
            x == y,
            "{}: slab {start:?}..{stop:?} differs",
            path.display()
        );
    }
}

#[test]
fn partial_reads_equal_whole_reads() {
    let dir = std::env::temp_dir().join(format!("b2f-partial-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let shuffle = [0, 0, 0, 0, 0, filters::SHUFFLE];
    let delta = [0, 0, 0, 0, filters::DELTA, filters::SHUFFLE];
    let cases = [
        (
            "zstd-split",
            params(codecs::ZSTD, 5, shuffle, SplitMode::Always),
        ),
        (
            "lz4-nosplit",
            params(codecs::LZ4, 5, shuffle, SplitMode::Never),
        ),
        (
            "blosclz-delta",
            params(codecs::BLOSCLZ, 5, delta, SplitMode::Auto),
        ),
        ("memcpyed", params(codecs::LZ4, 0, shuffle, SplitMode::Auto)),
    ];
    for (k, (name, p)) in cases.into_iter().enumerate() {
        let path = dir.join(format!("{name}.b2nd"));
        let opts = CreateOptions {
            contiguous: true,
            chunksize: 0,
            params: p,
            sync: false,
        };
        let s = ndim::slice::create(Some(&path), &opts, &array_meta()).unwrap();
        fill(&Array::open(&s).unwrap(), &mut Rng::new(k as u64));
        drop(s);
        compare_reads(&path, k as u64);
    }

    // Blosc2 blocks that are not the array's blocks: chunks compressed with another blocksize.
    let path = dir.join("misaligned.b2nd");
    let m = array_meta();
    let g = ndim::Geometry::new(&m, 8).unwrap();
    let p = CParams {
        blocksize: 4096,
        ..params(codecs::ZSTD, 5, shuffle, SplitMode::Auto)
    };
    let opts = CreateOptions {
        contiguous: true,
        chunksize: g.chunk_nbytes() as i32,
        params: p,
        sync: false,
    };
    let s = SChunk::create(Some(&path), &opts).unwrap();
    s.meta_add("b2nd", &meta::encode(&m)).unwrap();
    let mut rng = Rng::new(7);
    for _ in 0..g.nchunks {
        let data: Vec<u8> = (0..g.chunk_nitems)
            .flat_map(|_| ((rng.next_u64() % 100) as f64).to_le_bytes())
            .collect();
        s.append(&data).unwrap();
    }
    drop(s);
    compare_reads(&path, 9);
    let _ = std::fs::remove_dir_all(&dir);
}
