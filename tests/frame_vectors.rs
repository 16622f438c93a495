//! Every frame in ../shared/vectors/ (written by c-blosc2 3.3.5 and older releases) opens and
//! matches its manifest: chunk count, sizes, per-chunk sha256 of the decoded data, metalayer
//! and vlmetalayer bytes. Arrays (.b2nd) are frames too; their n-dim content is checked by the
//! n-dim tests.

mod common;

use std::path::Path;

use b2frame::schunk::SChunk;
use serde_json::Value;

fn manifest(rel: &str) -> Value {
    serde_json::from_slice(&common::read(&common::vectors_dir().join(rel))).unwrap()
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Checks one manifest entry; returns how many chunks were compared.
fn check_entry(root: &Path, e: &Value) -> usize {
    let rel = e["path"].as_str().unwrap();
    let path = root.join(rel);
    let s = SChunk::open(&path, false).unwrap_or_else(|err| panic!("{rel}: {err}"));
    let info = s.info();
    assert_eq!(
        info.nchunks,
        e["nchunks"].as_i64().unwrap(),
        "{rel}: nchunks"
    );
    assert_eq!(info.nbytes, e["nbytes"].as_i64().unwrap(), "{rel}: nbytes");
    assert_eq!(info.cbytes, e["cbytes"].as_i64().unwrap(), "{rel}: cbytes");
    assert_eq!(
        info.typesize as i64,
        e["typesize"].as_i64().unwrap(),
        "{rel}: typesize"
    );
    assert_eq!(
        info.contiguous,
        e["container"] == "cframe",
        "{rel}: container"
    );
    let nbytes = e["chunk_nbytes"].as_array().unwrap();
    let shas = e["chunk_sha256"].as_array().unwrap();
    for (i, want) in shas.iter().enumerate() {
        let n = s
            .chunk_nbytes(i as i64)
            .unwrap_or_else(|err| panic!("{rel}: chunk {i}: {err}"));
        assert_eq!(
            n as u64,
            nbytes[i].as_u64().unwrap(),
            "{rel}: chunk {i} nbytes"
        );
        let data = s
            .get_chunk_vec(i as i64)
            .unwrap_or_else(|err| panic!("{rel}: chunk {i}: {err}"));
        if let Some(want) = want.as_str() {
            assert_eq!(common::sha256_hex(&data), want, "{rel}: chunk {i} content");
        }
        // The raw chunk decodes to the same bytes.
        let raw = s.get_chunk_raw(i as i64).unwrap();
        if let Some(want) = want.as_str() {
            let again = b2frame::chunk::decompress_to_vec(&raw, 1 << 31).unwrap();
            assert_eq!(common::sha256_hex(&again), want, "{rel}: raw chunk {i}");
        }
    }
    let metas = e["meta"].as_array().unwrap();
    assert_eq!(s.meta_names().len(), metas.len(), "{rel}: metalayer count");
    for (k, m) in metas.iter().enumerate() {
        let name = m["name"].as_str().unwrap();
        assert_eq!(s.meta_names()[k], name, "{rel}: metalayer order");
        assert_eq!(
            hex(&s.meta_get(name).unwrap()),
            m["hex"].as_str().unwrap(),
            "{rel}: metalayer {name}"
        );
    }
    let vlmetas = e["vlmeta"].as_array().unwrap();
    assert_eq!(
        s.vlmeta_names().len(),
        vlmetas.len(),
        "{rel}: vlmetalayer count"
    );
    for v in vlmetas {
        let name = v["name"].as_str().unwrap();
        let got = s.vlmeta_get(name, 1 << 30).unwrap();
        assert_eq!(
            hex(&got),
            v["hex"].as_str().unwrap(),
            "{rel}: vlmetalayer {name}"
        );
    }
    shas.len()
}

#[test]
fn every_generated_vector_matches_its_manifest() {
    let root = common::vectors_dir();
    let m = manifest("manifest.json");
    let mut files = 0;
    let mut chunks = 0;
    for e in m["entries"].as_array().unwrap() {
        chunks += check_entry(&root, e);
        files += 1;
    }
    assert!(files >= 100, "{files} files");
    assert!(chunks > 1000, "{chunks} chunks");
}

#[test]
fn every_compat_frame_matches_its_manifest() {
    let root = common::vectors_dir().join("c-blosc2-compat");
    let m = manifest("c-blosc2-compat/manifest.json");
    let mut n = 0;
    for e in m["entries"].as_array().unwrap() {
        if e["kind"] == "chunk" {
            continue;
        }
        check_entry(&root, e);
        n += 1;
    }
    assert!(n >= 10, "{n} compat frames");
}
