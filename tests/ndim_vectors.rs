//! Every array in ../shared/vectors/ (written by python-blosc2 4.14.1: all ranks, dtypes,
//! contiguous and sparse, b2nd and caterva) gives the manifest's shape, chunks, blocks, dtype,
//! whole-array hash and slice hashes; b2nd metalayers re-encode byte for byte.

mod common;

use b2frame::ndim::{self, Array};
use b2frame::schunk::SChunk;
use serde_json::Value;

fn i64s(v: &Value) -> Vec<i64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_i64().unwrap())
        .collect()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn read_slab(a: &Array, start: &[i64], stop: &[i64]) -> Vec<u8> {
    let n: i64 = start.iter().zip(stop).map(|(a, b)| b - a).product();
    let mut out = vec![0u8; n as usize * a.geom.itemsize];
    a.get_slice(start, stop, &mut out).unwrap();
    out
}

fn check(e: &Value) -> usize {
    let rel = e["path"].as_str().unwrap();
    let nd = &e["ndarray"];
    let s = SChunk::open(&common::vectors_dir().join(rel), false).unwrap();
    let a = Array::open(&s).unwrap_or_else(|err| panic!("{rel}: {err}"));
    assert_eq!(a.meta.shape, i64s(&nd["shape"]), "{rel}: shape");
    let widen = |v: &[i32]| v.iter().map(|&x| x as i64).collect::<Vec<_>>();
    assert_eq!(
        widen(&a.meta.chunkshape),
        i64s(&nd["chunks"]),
        "{rel}: chunks"
    );
    assert_eq!(
        widen(&a.meta.blockshape),
        i64s(&nd["blocks"]),
        "{rel}: blocks"
    );
    assert_eq!(
        a.caterva,
        nd["metalayer"] == "caterva",
        "{rel}: metalayer kind"
    );
    if !a.caterva {
        assert_eq!(
            a.meta.dtype.as_deref(),
            nd["dtype"].as_str(),
            "{rel}: dtype"
        );
        let itemsize = ndim::dtype::itemsize(a.meta.dtype.as_deref().unwrap()).unwrap();
        assert_eq!(
            itemsize as i64,
            nd["itemsize"].as_i64().unwrap(),
            "{rel}: itemsize"
        );
        let raw = s.meta_get("b2nd").unwrap();
        assert_eq!(
            hex(&ndim::meta::encode(&a.meta)),
            hex(&raw),
            "{rel}: b2nd re-encoding"
        );
    }
    let shape = a.meta.shape.clone();
    let whole = read_slab(&a, &vec![0; shape.len()], &shape);
    if let Some(want) = nd["array_sha256"].as_str() {
        assert_eq!(common::sha256_hex(&whole), want, "{rel}: whole array");
    }
    let mut n = 0;
    for sl in nd["slices"].as_array().unwrap() {
        let (start, stop) = (i64s(&sl["start"]), i64s(&sl["stop"]));
        let got = read_slab(&a, &start, &stop);
        if let Some(want) = sl["sha256"].as_str() {
            assert_eq!(
                common::sha256_hex(&got),
                want,
                "{rel}: slice {start:?}..{stop:?}"
            );
            n += 1;
        }
    }
    n
}

#[test]
fn every_vector_array_matches_its_manifest() {
    let m: Value =
        serde_json::from_slice(&common::read(&common::vectors_dir().join("manifest.json")))
            .unwrap();
    let mut arrays = 0;
    let mut slices = 0;
    for e in m["entries"].as_array().unwrap() {
        if e.get("ndarray").is_some_and(|v| !v.is_null()) {
            slices += check(e);
            arrays += 1;
        }
    }
    assert!(arrays >= 40, "only {arrays} arrays in the manifest");
    assert!(slices >= 100, "only {slices} slices compared");
    eprintln!("{arrays} arrays, {slices} slices compared");
}
