//! Every fuzzer finding, kept as a test (inputs in tests/fuzz-regressions/). Each must end in
//! a result, never a panic.

mod common;

use std::path::PathBuf;

use b2frame::chunk::{CParams, Context};
use b2frame::filters;
use b2frame::schunk::SChunk;

fn input(name: &str) -> Vec<u8> {
    common::read(
        &common::repo_root()
            .join("tests/fuzz-regressions")
            .join(name),
    )
}

/// What the frame_open target does with its input.
fn walk(s: &SChunk) {
    for i in 0..s.nchunks() as i64 {
        if let Ok(n) = s.chunk_nbytes(i) {
            if n <= 1 << 22 {
                let mut out = vec![0u8; n];
                let _ = s.get_chunk(i, &mut out);
            }
        }
    }
    for n in s.vlmeta_names() {
        let _ = s.vlmeta_get(&n, 1 << 22);
    }
}

/// 2026-11-23, frame_open and sframe_index: a pipeline with a delta filter undone before
/// another filter (shuffle in slot 0, delta in slot 5) made the decoder ask for the same
/// buffer as source and destination (a panic). c-blosc2 goes through a scratch buffer.
#[test]
fn delta_undone_before_another_filter() {
    if let Ok(s) = SChunk::open_buffer(input("frame_open-delta-then-shuffle.bin")) {
        walk(&s);
    }
    let dir: PathBuf = std::env::temp_dir().join(format!("b2f-fuzzreg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("chunks.b2frame"),
        input("sframe_index-delta-then-shuffle.bin"),
    )
    .unwrap();
    if let Ok(s) = SChunk::open(&dir, false) {
        walk(&s);
    }
    let _ = std::fs::remove_dir_all(&dir);

    // And such chunks round-trip.
    let data: Vec<u8> = (0..40_000u32).flat_map(|i| (i / 3).to_le_bytes()).collect();
    let ctx = Context::new(CParams {
        typesize: 4,
        filters: [filters::SHUFFLE, 0, 0, 0, 0, filters::DELTA],
        ..CParams::default()
    })
    .unwrap();
    let chunk = ctx.compress_to_vec(&data).unwrap();
    assert_eq!(
        b2frame::chunk::decompress_to_vec(&chunk, data.len()).unwrap(),
        data
    );
}

/// 2026-11-26, frame_open: a frame (one damaged marker, read since c-blosc2 reads it) with a
/// typesize of 5.8 MB. The finding was the harness's own: its slice buffer of 4096 items was
/// 23 GB (now capped at 4 MiB). The library reads the frame within the buffers it is given.
#[test]
fn a_typesize_of_megabytes() {
    let s = SChunk::open_buffer(input("frame_open-typesize-of-megabytes.bin")).unwrap();
    let info = s.info();
    assert!(info.typesize > 5_000_000, "{info:?}");
    walk(&s);
    let mut out = vec![0u8; info.typesize as usize];
    let _ = s.get_slice(0, 1, &mut out);
    let _ = s.to_buffer();
}
