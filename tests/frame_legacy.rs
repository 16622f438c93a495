//! The legacy frame layout (c-blosc2 up to 2.0.0-beta.1, frame-format-legacy.rst): nothing
//! writes it any more, so these frames are built here from the document and read back.

use b2frame::chunk::{CParams, Context};
use b2frame::schunk::SChunk;

fn chunk_data(k: u32, n: usize) -> Vec<u8> {
    (0..n as u32 / 4)
        .flat_map(|i| (i / 3 + k).to_le_bytes())
        .collect()
}

/// Builds a legacy frame: header (11 or 12 elements), chunks, index of `offset_size` bytes.
fn legacy_frame(
    chunks: &[Vec<u8>],
    chunksize: i32,
    offset_size: usize,
    metas: &[(&str, &[u8])],
) -> Vec<u8> {
    let ctx = Context::new(CParams {
        typesize: 4,
        ..CParams::default()
    })
    .unwrap();
    let mut body = Vec::new();
    let mut offsets = Vec::new();
    for c in chunks {
        offsets.push(body.len() as u64);
        body.extend_from_slice(&ctx.compress_to_vec(c).unwrap());
    }
    let raw: Vec<u8> = offsets
        .iter()
        .flat_map(|&o| o.to_le_bytes()[..offset_size].to_vec())
        .collect();
    let index = Context::new(CParams {
        typesize: offset_size,
        ..CParams::default()
    })
    .unwrap()
    .compress_to_vec(&raw)
    .unwrap();
    let mut h = vec![if metas.is_empty() { 0x9B } else { 0x9C }, 0xA8];
    h.extend_from_slice(b"b2frame\0");
    h.push(0xD2);
    h.extend_from_slice(&[0; 4]); // header_size, later
    h.push(0xCF);
    h.extend_from_slice(&[0; 8]); // frame_size, later
    let offbits = match offset_size {
        2 => 0u8,
        4 => 1,
        _ => 2,
    };
    let variable = if chunksize == 0 { 0x40 } else { 0 };
    h.extend_from_slice(&[
        0xA4,
        0x01 | (2 << 2) | (offbits << 4) | variable,
        0x06,
        0x50,
        0,
    ]);
    let nbytes: i64 = chunks.iter().map(|c| c.len() as i64).sum();
    h.push(0xD3);
    h.extend_from_slice(&nbytes.to_be_bytes());
    h.push(0xD3);
    h.extend_from_slice(&(body.len() as i64).to_be_bytes());
    h.push(0xD2);
    h.extend_from_slice(&4i32.to_be_bytes());
    h.push(0xD2);
    h.extend_from_slice(&chunksize.to_be_bytes());
    h.extend_from_slice(&[0xD1, 0, 1, 0xD1, 0, 1]);
    h.push(if metas.is_empty() { 0xC2 } else { 0xC3 });
    assert_eq!(h.len(), 64);
    if !metas.is_empty() {
        let start = h.len();
        h.extend_from_slice(&[0x93, 0xCD, 0, 0, 0xDE]);
        h.extend_from_slice(&(metas.len() as u16).to_be_bytes());
        let mut slots = Vec::new();
        for (name, _) in metas {
            h.push(0xA0 | name.len() as u8);
            h.extend_from_slice(name.as_bytes());
            h.push(0xD2);
            slots.push(h.len());
            h.extend_from_slice(&[0; 4]);
        }
        let size = (h.len() - start) as u16;
        h[start + 2..start + 4].copy_from_slice(&size.to_be_bytes());
        h.push(0xDC);
        h.extend_from_slice(&(metas.len() as u16).to_be_bytes());
        for ((_, content), slot) in metas.iter().zip(slots) {
            let off = h.len() as i32;
            h[slot..slot + 4].copy_from_slice(&off.to_be_bytes());
            h.push(0xC6);
            h.extend_from_slice(&(content.len() as u32).to_be_bytes());
            h.extend_from_slice(content);
        }
    }
    let header_len = h.len() as i32;
    let frame_len = (h.len() + body.len() + index.len()) as u64;
    h[11..15].copy_from_slice(&header_len.to_be_bytes());
    h[16..24].copy_from_slice(&frame_len.to_be_bytes());
    h.extend_from_slice(&body);
    h.extend_from_slice(&index);
    h
}

#[test]
fn legacy_frames_of_every_offset_size_read() {
    let chunks: Vec<Vec<u8>> = (0..5)
        .map(|k| chunk_data(k, 2000))
        .chain([chunk_data(9, 800)])
        .collect();
    for offset_size in [2, 4, 8] {
        for metas in [
            vec![],
            vec![("caterva", &b"\x95\x00\x01"[..]), ("user", &b"\xa3abc"[..])],
        ] {
            let f = legacy_frame(&chunks, 2000, offset_size, &metas);
            let s = SChunk::open_buffer(f.clone()).unwrap();
            assert_eq!(s.nchunks(), chunks.len());
            for (i, c) in chunks.iter().enumerate() {
                assert_eq!(
                    &s.get_chunk_vec(i as i64).unwrap(),
                    c,
                    "offsets {offset_size}: chunk {i}"
                );
            }
            for (name, content) in &metas {
                assert_eq!(s.meta_get(name).unwrap(), *content);
            }
            assert!(matches!(
                s.append(&chunk_data(1, 2000)),
                Err(b2frame::Error::ReadOnly(_))
            ));
            // Converting it gives a current frame.
            let modern = SChunk::open_buffer(s.to_buffer().unwrap()).unwrap();
            assert_eq!(modern.get_chunk_vec(5).unwrap(), chunks[5]);
            assert_eq!(modern.info().format_version, 2);
            // From a file too.
            let path = std::env::temp_dir().join(format!(
                "b2f-legacy-{}-{offset_size}.b2frame",
                std::process::id()
            ));
            std::fs::write(&path, &f).unwrap();
            assert_eq!(
                SChunk::open(&path, false)
                    .unwrap()
                    .get_chunk_vec(2)
                    .unwrap(),
                chunks[2]
            );
            let _ = std::fs::remove_file(&path);
        }
    }
}

#[test]
fn legacy_frames_with_variable_chunks() {
    let chunks: Vec<Vec<u8>> = [400usize, 1200, 80, 2000]
        .iter()
        .enumerate()
        .map(|(k, &n)| chunk_data(k as u32, n))
        .collect();
    let s = SChunk::open_buffer(legacy_frame(&chunks, 0, 4, &[])).unwrap();
    assert_eq!(s.nchunks(), 4);
    for (i, c) in chunks.iter().enumerate() {
        assert_eq!(&s.get_chunk_vec(i as i64).unwrap(), c);
    }
}

#[test]
fn malformed_legacy_frames_are_errors() {
    let chunks = vec![chunk_data(1, 2000)];
    let f = legacy_frame(&chunks, 2000, 4, &[]);
    for n in 0..f.len() {
        let mut x = f[..n].to_vec();
        if x.len() >= 24 {
            x[16..24].copy_from_slice(&(n as u64).to_be_bytes());
        }
        let _ = SChunk::open_buffer(x).map(|s| s.get_chunk_vec(0));
    }
    let mut x = f.clone();
    x[25] = (x[25] & !0x0C) | (1 << 2); // not a frame type
    assert!(SChunk::open_buffer(x).is_err());
    let mut x = f.clone();
    x[25] |= 0x30; // reserved offset size
    assert!(SChunk::open_buffer(x).is_err());
}

/// A legacy frame named as a sparse frame's index file is refused: that layout was never
/// sparse, and its chunk offsets are not chunk-file ids.
#[test]
fn a_legacy_frame_in_a_directory_is_refused() {
    let dir = std::env::temp_dir().join(format!("b2f-legacy-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let chunks: Vec<Vec<u8>> = (0..2).map(|k| chunk_data(k, 8000)).collect();
    std::fs::write(
        dir.join("chunks.b2frame"),
        legacy_frame(&chunks, 8000, 8, &[]),
    )
    .unwrap();
    match SChunk::open(&dir, false) {
        Err(b2frame::Error::Format(m)) => assert!(m.contains("never sparse"), "{m}"),
        other => panic!("a legacy frame in a directory: {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
