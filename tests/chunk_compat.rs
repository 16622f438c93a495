//! Every chunk in ../shared/vectors/c-blosc2-compat/ (written by blosc 1.3 through
//! c-blosc2 3.0) decodes to the content hash in its manifest; and chunks laid out here as
//! c-blosc2 writes them where no vector (nor python-blosc2) can.

mod common;

use b2frame::chunk::{self, CParams};
use b2frame::ndim::{self, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};
use serde_json::Value;

fn compat_manifest() -> Value {
    let path = common::vectors_dir().join("c-blosc2-compat/manifest.json");
    serde_json::from_slice(&common::read(&path)).expect("manifest.json")
}

#[test]
fn every_compat_chunk_decodes_to_its_manifest_hash() {
    let dir = common::vectors_dir().join("c-blosc2-compat");
    let manifest = compat_manifest();
    let mut checked = 0;
    for e in manifest["entries"].as_array().unwrap() {
        if e["kind"] != "chunk" || e.get("chunk_header").is_none() {
            continue; // raw filter outputs and frames are checked elsewhere
        }
        let path = e["path"].as_str().unwrap();
        let data = common::read(&dir.join(path));
        let out =
            chunk::decompress_to_vec(&data, 1 << 30).unwrap_or_else(|err| panic!("{path}: {err}"));
        assert_eq!(
            out.len() as u64,
            e["decoded_nbytes"].as_u64().unwrap(),
            "{path}"
        );
        let h = chunk::ChunkHeader::parse(&data).unwrap();
        if h.version() == 2
            && h.flags() & 0x04 != 0
            && !h.nbytes().is_multiple_of(usize::from(h.typesize()))
        {
            // Blosc1-format bit-shuffled blocks: the bytes past the last whole item were never
            // written by either codec (c-blosc 1.x on encode, c-blosc2 on decode), so their value
            // is whatever c-blosc2's buffers held and the manifest's hash is not reproducible.
            // Everything else must equal c-blosc2's decode, done live here.
            let theirs = common::run_python(
                "import sys, blosc2; sys.stdout.buffer.write(blosc2.decompress(sys.stdin.buffer.read()))",
                &data,
            );
            let defined = out.len() - h.nbytes() % usize::from(h.typesize());
            assert!(
                out[..defined] == theirs[..defined],
                "{path}: differs from c-blosc2's decode"
            );
        } else {
            assert_eq!(
                common::sha256_hex(&out),
                e["decoded_sha256"].as_str().unwrap(),
                "{path}: decoded content differs from c-blosc2's"
            );
        }
        let (nbytes, cbytes, blocksize) = chunk::ChunkHeader::sizes(&data).unwrap();
        assert_eq!(nbytes as u64, e["chunk_nbytes"].as_u64().unwrap(), "{path}");
        assert_eq!(cbytes as u64, e["chunk_cbytes"].as_u64().unwrap(), "{path}");
        assert_eq!(
            blocksize as u64,
            e["chunk_blocksize"].as_u64().unwrap(),
            "{path}"
        );
        checked += 1;
    }
    assert!(checked >= 20, "only {checked} compat chunks found");
}

#[test]
fn raw_shuffle_and_bitshuffle_outputs_of_c_blosc2_invert() {
    let dir = common::vectors_dir().join("c-blosc2-compat/compat");
    let expected: Vec<u8> = (0..1_000_000i32).flat_map(|i| i.to_le_bytes()).collect();
    let shuffled = common::read(&dir.join("shuffle-2.20.0.cdata"));
    let mut out = vec![0u8; shuffled.len()];
    b2frame::filters::shuffle::unshuffle(4, &shuffled, &mut out);
    assert!(
        out == expected,
        "unshuffle of c-blosc2's shuffle output differs"
    );
    let mut again = vec![0u8; expected.len()];
    b2frame::filters::shuffle::shuffle(4, &expected, &mut again);
    assert!(again == shuffled, "shuffle differs from c-blosc2's");

    let bits = common::read(&dir.join("bitshuffle-2.20.0.cdata"));
    b2frame::filters::bitshuffle::bitunshuffle(4, &bits, &mut out, 5).unwrap();
    assert!(
        out == expected,
        "bitunshuffle of c-blosc2's bitshuffle output differs"
    );
    b2frame::filters::bitshuffle::bitshuffle(4, &expected, &mut again).unwrap();
    assert!(again == bits, "bitshuffle differs from c-blosc2's");
}

#[test]
fn the_rainfall_benchmark_chunk_decodes() {
    let path = common::repo_root().join("../shared/bench-data/rainfall-grid-150x150.bin");
    let data = common::read(&path);
    let out = chunk::decompress_to_vec(&data, 1 << 20).unwrap();
    assert_eq!(out.len(), 150 * 150 * 4);
    // Precipitation: finite, non-negative float32 values.
    for v in out.chunks_exact(4) {
        let x = f32::from_le_bytes([v[0], v[1], v[2], v[3]]);
        assert!(x.is_finite() && x >= 0.0, "implausible rainfall value {x}");
    }
}

/// The chunk c-blosc2 writes for `data` in a super-chunk of typesize `channels` > 255 with
/// bytedelta and meta 0: the header says typesize 1 (the most it can hold is 255), the
/// filter runs over the super-chunk's typesize. One block, its one stream stored raw
/// (csize = its length). python-blosc2 cannot make such a frame (it writes meta = typesize,
/// and refuses 300 as a byte), C programs do.
fn c_blosc2_wide_bytedelta_chunk(data: &[u8], channels: usize) -> Vec<u8> {
    let len = data.len() / channels;
    let mut filtered = data.to_vec();
    for s in 0..channels {
        for i in (1..len).rev() {
            filtered[s * len + i] = data[s * len + i].wrapping_sub(data[s * len + i - 1]);
        }
    }
    let n = data.len() as u32;
    let mut c = vec![5u8, 1, 0x05 | 0x10, 1];
    c.extend(n.to_le_bytes()); // nbytes
    c.extend(n.to_le_bytes()); // blocksize
    c.extend((32 + 4 + 4 + n).to_le_bytes()); // cbytes
    c.extend([0, 0, 0, 0, 0, 35, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]); // filters, codec, metas
    c.extend(36u32.to_le_bytes()); // bstarts[0]
    c.extend(n.to_le_bytes()); // csize: stored raw
    c.extend(&filtered);
    c
}

#[test]
fn bytedelta_meta_0_takes_the_frames_typesize() {
    const TS: usize = 300;
    let data: Vec<u8> = (0..TS * 40)
        .map(|i| ((i % TS) * 7 + (i / TS) * (1 + i % 3)) as u8)
        .collect();
    let chunk = c_blosc2_wide_bytedelta_chunk(&data, TS);
    // Alone it is read with the header's typesize: other bytes (c-blosc2 refuses it).
    assert_ne!(chunk::decompress_to_vec(&chunk, 1 << 20).unwrap(), data);

    let params = CParams {
        typesize: TS,
        ..CParams::default()
    };
    let opts = CreateOptions {
        contiguous: true,
        chunksize: data.len() as i32,
        params,
        sync: false,
    };
    let s = SChunk::create(None, &opts).unwrap();
    s.append_chunk(&chunk).unwrap();
    assert_eq!(s.get_chunk_vec(0).unwrap(), data);
    let mut items = vec![0u8; 5 * TS];
    s.get_slice(3, 8, &mut items).unwrap();
    assert_eq!(items, data[3 * TS..8 * TS]);

    // The same chunk as the only chunk of a 40-item array of 300-byte items.
    let meta = NdMeta {
        version: 0,
        shape: vec![40],
        chunkshape: vec![40],
        blockshape: vec![40],
        dtype_format: 0,
        dtype: Some("|V300".into()),
    };
    let s = ndim::slice::create(None, &opts, &meta).unwrap();
    s.update_chunk(0, &chunk).unwrap();
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; 6 * TS];
    a.get_slice(&[10], &[16], &mut out).unwrap();
    assert_eq!(out, data[10 * TS..16 * TS]);
}
