//! Every chunk operation on every kind of frame, checked against a simple model after each
//! step and after reopening.

mod common;

use std::path::Path;

use b2frame::chunk::{CParams, SpecialValue};
use b2frame::schunk::{CreateOptions, SChunk};

const CHUNK: usize = 4000;

fn opts(contiguous: bool, chunksize: i32) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize,
        params: CParams {
            typesize: 4,
            codec: b2frame::codecs::LZ4,
            ..CParams::default()
        },
        sync: false,
    }
}

fn data(seed: u64, n: usize) -> Vec<u8> {
    (0..n as u32 / 4)
        .flat_map(|i| (i / 7 + seed as u32 * 1000).to_le_bytes())
        .collect()
}

fn check(s: &SChunk, model: &[Vec<u8>], what: &str) {
    assert_eq!(s.nchunks(), model.len(), "{what}: nchunks");
    let total: usize = model.iter().map(|c| c.len()).sum();
    assert_eq!(s.info().nbytes as usize, total, "{what}: nbytes");
    for (i, want) in model.iter().enumerate() {
        let got = s
            .get_chunk_vec(i as i64)
            .unwrap_or_else(|e| panic!("{what}: chunk {i}: {e}"));
        assert!(got == *want, "{what}: chunk {i} differs");
    }
    let typesize = s.info().typesize as usize;
    if total > 0 && total.is_multiple_of(typesize) {
        let all: Vec<u8> = model.concat();
        let mut out = vec![0u8; total];
        if s.info().chunksize > 0 {
            s.get_slice(0, (total / typesize) as i64, &mut out).unwrap();
            assert!(out == all, "{what}: slice");
        }
    }
}

fn run_ops(s: &SChunk, reopen: &dyn Fn() -> SChunk) {
    let mut model: Vec<Vec<u8>> = Vec::new();
    for k in 0..5 {
        let d = data(k, CHUNK);
        assert_eq!(s.append(&d).unwrap(), k as usize + 1);
        model.push(d);
    }
    check(s, &model, "append");
    let d = data(50, CHUNK);
    s.insert(2, &d).unwrap();
    model.insert(2, d);
    check(s, &model, "insert");
    let d = data(60, CHUNK);
    s.update(0, &d).unwrap();
    model[0] = d;
    check(s, &model, "update");
    s.delete(3).unwrap();
    model.remove(3);
    check(s, &model, "delete");
    s.reorder(&[4, 0, 3, 1, 2]).unwrap();
    model = [4, 0, 3, 1, 2].iter().map(|&i| model[i].clone()).collect();
    check(s, &model, "reorder");
    s.fill_special(2000, SpecialValue::Zero).unwrap();
    model.push(vec![0; CHUNK]);
    model.push(vec![0; CHUNK]);
    check(s, &model, "fill_special");
    // A zero chunk appended as data becomes an index-only special, like in c-blosc2.
    s.append(&vec![0u8; CHUNK]).unwrap();
    model.push(vec![0; CHUNK]);
    // A short last chunk.
    let d = data(70, 1000);
    s.append(&d).unwrap();
    model.push(d);
    check(s, &model, "short last");
    s.vlmeta_set("note", b"hello").unwrap();
    s.vlmeta_set("other", &[7u8; 300]).unwrap();
    s.vlmeta_set("note", b"hello again").unwrap();
    s.vlmeta_delete("other").unwrap();
    assert_eq!(s.vlmeta_get("note", 1000).unwrap(), b"hello again");
    assert_eq!(s.vlmeta_names(), vec!["note".to_string()]);
    check(s, &model, "vlmeta");
    // Appending after a short chunk switches the frame to variable-length chunks.
    let d = data(80, CHUNK);
    s.append(&d).unwrap();
    model.push(d);
    check(s, &model, "variable");
    assert_eq!(s.info().chunksize, 0);
    let r = reopen();
    check(&r, &model, "reopened");
    assert_eq!(r.vlmeta_get("note", 1000).unwrap(), b"hello again");
    // A copy as a buffer, and saved both ways.
    let buf = s.to_buffer().unwrap();
    check(&SChunk::open_buffer(buf).unwrap(), &model, "to_buffer");
    let dir = tempdir("save");
    s.save(&dir.join("c.b2frame"), true).unwrap();
    check(
        &SChunk::open(&dir.join("c.b2frame"), false).unwrap(),
        &model,
        "saved contiguous",
    );
    s.save(&dir.join("s.b2frame"), false).unwrap();
    check(
        &SChunk::open(&dir.join("s.b2frame"), false).unwrap(),
        &model,
        "saved sparse",
    );
    // Delete everything.
    for _ in 0..model.len() {
        s.delete(0).unwrap();
    }
    model.clear();
    check(s, &model, "emptied");
    check(&reopen(), &model, "emptied, reopened");
    assert_eq!(reopen().vlmeta_get("note", 1000).unwrap(), b"hello again");
}

fn tempdir(tag: &str) -> common::TempDir {
    common::TempDir::new(tag)
}

#[test]
fn contiguous_file() {
    let dir = tempdir("cframe");
    let path = dir.join("f.b2frame");
    let s = SChunk::create(Some(&path), &opts(true, CHUNK as i32)).unwrap();
    s.meta_add("m", b"\x93\x01\x02\x03").unwrap();
    run_ops(&s, &|| SChunk::open(&path, false).unwrap());
    assert_eq!(
        SChunk::open(&path, false).unwrap().meta_get("m").unwrap(),
        b"\x93\x01\x02\x03"
    );
}

#[test]
fn sparse_directory() {
    let dir = tempdir("sframe");
    let path = dir.join("s.b2frame");
    let s = SChunk::create(Some(&path), &opts(false, CHUNK as i32)).unwrap();
    run_ops(&s, &|| SChunk::open(&path, false).unwrap());
    // Only the chunk files the index names are left.
    let files = std::fs::read_dir(&path).unwrap().count();
    assert_eq!(files, 1, "leftover chunk files in {}", path.display());
}

#[test]
fn memory() {
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    let snapshot = std::cell::RefCell::new(None::<Vec<u8>>);
    let _ = &snapshot;
    run_ops(&s, &|| SChunk::open_buffer(s.to_buffer().unwrap()).unwrap());
}

#[test]
fn metalayer_rules() {
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    for i in 0..16 {
        s.meta_add(format!("m{i}"), &[i as u8; 10]).unwrap();
    }
    assert!(s.meta_add("m16", b"x").is_err(), "17th metalayer accepted");
    assert!(
        s.meta_add("n".repeat(32), b"x").is_err(),
        "32-byte name accepted"
    );
    s.meta_update("m3", &[9u8; 4]).unwrap();
    assert_eq!(s.meta_get("m3").unwrap(), [9, 9, 9, 9, 3, 3, 3, 3, 3, 3]);
    assert!(
        s.meta_update("m3", &[1u8; 11]).is_err(),
        "growing update accepted"
    );
    s.append(&data(1, CHUNK)).unwrap();
    let s2 = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    s2.append(&data(1, CHUNK)).unwrap();
    assert!(
        s2.meta_add("late", b"x").is_err(),
        "metalayer added after data"
    );
    assert!(matches!(
        s.meta_get("nope"),
        Err(b2frame::Error::NotFound(_))
    ));
}

#[test]
fn variable_chunks_from_the_start() {
    let s = SChunk::create(None, &opts(true, 0)).unwrap();
    let mut model = Vec::new();
    for (k, n) in [100usize, 4000, 12, 7000, 0, 33].iter().enumerate() {
        let d = data(k as u64, *n);
        s.append(&d).unwrap();
        model.push(d);
    }
    s.append(&vec![0u8; 500]).unwrap();
    model.push(vec![0; 500]);
    check(&s, &model, "variable");
    check(
        &SChunk::open_buffer(s.to_buffer().unwrap()).unwrap(),
        &model,
        "variable buffer",
    );
}

#[test]
fn fixed_chunksize_frames_switch_to_variable_chunks_as_c_blosc2_does() {
    // (what is done, whether the frame keeps its chunksize after it)
    type Step = fn(&SChunk, &mut Vec<Vec<u8>>) -> b2frame::Result<()>;
    let cases: [(&str, Step, bool); 6] = [
        (
            "a larger chunk appended",
            |s, m| {
                m.push(data(9, CHUNK + 4));
                s.append(&data(9, CHUNK + 4)).map(drop)
            },
            false,
        ),
        (
            "a larger chunk inserted",
            |s, m| {
                m.insert(1, data(9, CHUNK + 4));
                s.insert(1, &data(9, CHUNK + 4)).map(drop)
            },
            false,
        ),
        (
            "the last chunk updated larger",
            |s, m| {
                m[2] = data(9, CHUNK + 4);
                s.update(2, &data(9, CHUNK + 4))
            },
            false,
        ),
        (
            "the last chunk updated shorter",
            |s, m| {
                m[2] = data(9, 400);
                s.update(2, &data(9, 400))
            },
            true,
        ),
        (
            "a short chunk inserted",
            |s, m| {
                m.insert(0, data(9, 400));
                s.insert(0, &data(9, 400)).map(drop)
            },
            false,
        ),
        (
            "a full chunk inserted before a short last one",
            |s, m| {
                s.update(2, &data(8, 400))?;
                m[2] = data(8, 400);
                m.insert(0, data(9, CHUNK));
                s.insert(0, &data(9, CHUNK)).map(drop)
            },
            false,
        ),
    ];
    for (what, step, keeps) in cases {
        let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
        let mut model: Vec<Vec<u8>> = (0..3).map(|k| data(k, CHUNK)).collect();
        for d in &model {
            s.append(d).unwrap();
        }
        step(&s, &mut model).unwrap_or_else(|e| panic!("{what}: {e}"));
        let cs = if keeps { CHUNK as i32 } else { 0 };
        assert_eq!(s.info().chunksize, cs, "{what}");
        check(&s, &model, what);
        check(
            &SChunk::open_buffer(s.to_buffer().unwrap()).unwrap(),
            &model,
            what,
        );
    }
    // An empty frame keeps its chunksize as a limit, as in c-blosc2.
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    assert!(matches!(
        s.append(&data(1, CHUNK + 4)),
        Err(b2frame::Error::InvalidArgument(_))
    ));
}

#[allow(dead_code)]
fn exists(p: &Path) -> bool {
    p.exists()
}

/// A frame whose index spans several index blocks (5,000 chunks: three 16 KiB blocks), read
/// right after opening: the first lookups decode one index block each, later ones the whole
/// index. Every read, on every kind of store, must give the chunk the model holds.
#[test]
fn reads_right_after_opening_a_large_index() {
    const N: usize = 5000;
    const SMALL: usize = 16;
    let s = SChunk::create(None, &opts(true, SMALL as i32)).unwrap();
    let mut model = Vec::with_capacity(N);
    for k in 0..N as u64 {
        if k % 1000 == 999 {
            s.fill_special(SMALL as i64 / 4, SpecialValue::Zero)
                .unwrap();
            model.push(vec![0u8; SMALL]);
        } else {
            let d = data(k, SMALL);
            s.append(&d).unwrap();
            model.push(d);
        }
    }
    let dir = tempdir("large-index");
    let file = dir.join("f.b2frame");
    let sparse = dir.join("s.b2frame");
    s.save(&file, true).unwrap();
    s.save(&sparse, false).unwrap();
    let image = s.to_buffer().unwrap();
    let opens: [(&str, &dyn Fn() -> SChunk); 3] = [
        ("file", &|| SChunk::open(&file, false).unwrap()),
        ("sparse", &|| SChunk::open(&sparse, false).unwrap()),
        ("memory", &|| SChunk::open_buffer(image.clone()).unwrap()),
    ];
    for (what, open) in opens {
        for i in [0, 1, 2047, 2048, 2049, 998, 999, 3999, 4095, 4096, N - 1] {
            let f = open();
            assert_eq!(
                f.chunk_nbytes(i as i64).unwrap(),
                SMALL,
                "{what}: chunk {i}"
            );
            assert!(
                f.get_chunk_vec(i as i64).unwrap() == model[i],
                "{what}: chunk {i}"
            );
            let f = open();
            let kind = f.chunk_special(i as i64).unwrap();
            assert_eq!(
                kind == SpecialValue::Zero,
                i % 1000 == 999,
                "{what}: chunk {i}"
            );
        }
        // Past the single lookups, through the whole index, in an order that is not the
        // index's.
        let f = open();
        for i in (0..N).rev().step_by(7) {
            assert!(
                f.get_chunk_vec(i as i64).unwrap() == model[i],
                "{what}: chunk {i}"
            );
        }
    }
}

/// Random operations on a sparse frame of tiny chunks, whose file ids must stay within what
/// c-blosc2 accepts (at most the chunk bytes - 32) while chunk files move to lower ids.
#[test]
fn sparse_tiny_chunks_random_operations() {
    let dir = tempdir("sparse-tiny");
    let path = dir.join("t.b2frame");
    let s = SChunk::create(Some(&path), &opts(false, 400)).unwrap();
    let mut model: Vec<Vec<u8>> = Vec::new();
    let mut x = 0x2545_f491_4f6c_dd1du64;
    let mut rand = |n: usize| {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        (x % n as u64) as usize
    };
    for step in 0..400 {
        // One value (a 56-byte chunk) or a few (somewhat larger).
        let v = step as u8 | 1;
        let d: Vec<u8> = if step % 3 == 0 {
            data(step, 400)
        } else {
            vec![v; 400]
        };
        // Kept to a few chunks, where the ids press on the bound.
        let op = if model.len() > 3 { 3 } else { rand(5) };
        match (op, model.len()) {
            (_, 0) | (0, _) => {
                s.append(&d).unwrap();
                model.push(d);
            }
            (1, n) => {
                let i = rand(n + 1);
                s.insert(i as i64, &d).unwrap();
                model.insert(i, d);
            }
            (2, n) => {
                let i = rand(n);
                s.update(i as i64, &d).unwrap();
                model[i] = d;
            }
            (3, n) => {
                let i = rand(n);
                s.delete(i as i64).unwrap();
                model.remove(i);
            }
            (_, n) => {
                let mut order: Vec<i64> = (0..n as i64).collect();
                order.rotate_left(rand(n));
                s.reorder(&order).unwrap();
                model = order.iter().map(|&i| model[i as usize].clone()).collect();
            }
        }
        check(&s, &model, &format!("step {step}"));
        let (mut max_id, mut cbytes, mut files) = (0, 0, 0);
        for e in std::fs::read_dir(&path).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().into_string().unwrap();
            if let Some(hex) = name.strip_suffix(".chunk") {
                max_id = max_id.max(u64::from_str_radix(hex, 16).unwrap());
                cbytes += e.metadata().unwrap().len();
                files += 1;
            }
        }
        // Every chunk has its file (none is all zeros), and no old file is left.
        assert_eq!(files, model.len(), "step {step}: chunk files");
        assert!(
            cbytes == 0 || max_id + 32 <= cbytes,
            "step {step}: chunk file id {max_id} with {cbytes} chunk bytes"
        );
        if step % 50 == 49 {
            check(&SChunk::open(&path, false).unwrap(), &model, "reopened");
        }
    }
}

/// A save builds its copy under a temporary name and then takes the place of what was at the
/// path (a frame of either kind, or a file); the frame's own storage is refused, and the frame
/// keeps working after the refusal.
#[test]
fn save_replaces_what_is_at_the_path_and_refuses_the_frames_own_storage() {
    let dir = tempdir("save-over");
    let entries = |d: &Path| {
        let mut v: Vec<String> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    };
    for contiguous in [true, false] {
        let path = dir.join(format!("own-{contiguous}.b2frame"));
        let s = SChunk::create(Some(&path), &opts(contiguous, CHUNK as i32)).unwrap();
        let mut model: Vec<Vec<u8>> = (0..5).map(|k| data(k, CHUNK)).collect();
        for c in &model {
            s.append(c).unwrap();
        }
        // Dead space (contiguous) and a gap in the chunk ids (sparse): a saved copy is laid
        // out differently, which this frame must not be made to read.
        s.update(0, &data(9, CHUNK)).unwrap();
        model[0] = data(9, CHUNK);
        s.delete(1).unwrap();
        model.remove(1);
        for as_contiguous in [true, false] {
            match s.save(&path, as_contiguous) {
                Err(b2frame::Error::InvalidArgument(m)) => {
                    assert!(m.contains("where this frame is stored"), "{m}")
                }
                other => panic!("saving a frame onto itself: {other:?}"),
            }
        }
        check(&s, &model, "after refused self-save");
        s.append(&data(20, CHUNK)).unwrap();
        model.push(data(20, CHUNK));
        check(
            &SChunk::open(&path, false).unwrap(),
            &model,
            "after refused self-save, reopened",
        );

        // Over a bigger frame of the same kind, over one of the other kind, over a file, over
        // nothing: the copy alone is left, and no temporary names.
        for (k, target) in ["bigger", "other-kind", "plain-file", "new"]
            .into_iter()
            .enumerate()
        {
            let to = dir.join(format!("{target}-{contiguous}"));
            match target {
                "bigger" | "other-kind" => {
                    let kind = (target == "bigger") == contiguous;
                    let old = SChunk::create(Some(&to), &opts(kind, CHUNK as i32)).unwrap();
                    for j in 0..9 {
                        old.append(&data(100 + j, CHUNK)).unwrap();
                    }
                }
                "plain-file" => std::fs::write(&to, b"not a frame").unwrap(),
                _ => {}
            }
            let before = entries(&dir);
            s.save(&to, contiguous).unwrap();
            check(&SChunk::open(&to, false).unwrap(), &model, target);
            assert_eq!(to.is_dir(), !contiguous, "{target}");
            if !contiguous {
                let files = entries(&to);
                assert_eq!(files.len(), model.len() + 1, "{target}: {files:?}");
            }
            let mut after = entries(&dir);
            if target == "new" {
                after.retain(|n| *n != format!("{target}-{contiguous}"));
            }
            assert_eq!(after, before, "{target} ({k}): leftovers in the directory");
        }
    }
    // A failed save (no such parent directory) leaves nothing behind.
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    s.append(&data(1, CHUNK)).unwrap();
    let before = entries(&dir);
    for contiguous in [true, false] {
        let err = s
            .save(&dir.join("missing/x.b2frame"), contiguous)
            .unwrap_err();
        assert!(matches!(err, b2frame::Error::Io { .. }), "{err:?}");
    }
    assert_eq!(entries(&dir), before);
}

/// Replacing a file whole (compaction, an empty frame's trailer, a sparse index, a save over
/// an existing file) keeps the permissions the user gave it.
#[test]
fn replaced_files_keep_their_permissions() {
    use b2frame::schunk::OpenOptions;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempdir("keep-mode");
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let chmod =
        |p: &Path, m: u32| std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap();
    for sync in [false, true] {
        for contiguous in [true, false] {
            let path = dir.join(format!("f-{contiguous}-{sync}"));
            drop(SChunk::create(Some(&path), &opts(contiguous, CHUNK as i32)).unwrap());
            let watched = if contiguous {
                path.clone()
            } else {
                path.join("chunks.b2frame")
            };
            chmod(&watched, 0o600);
            let open = OpenOptions {
                writable: true,
                sync,
                ..OpenOptions::default()
            };
            let s = SChunk::open_with(&path, &open).unwrap();
            let what = format!("contiguous {contiguous}, sync {sync}");
            // An empty frame's trailer change replaces it whole; so does a sparse index change.
            s.vlmeta_set("note", b"x").unwrap();
            assert_eq!(mode(&watched), 0o600, "{what}: vlmeta on an empty frame");
            s.append(&data(1, CHUNK)).unwrap();
            s.update(0, &data(2, CHUNK)).unwrap();
            s.compact().unwrap();
            assert_eq!(mode(&watched), 0o600, "{what}: after compaction");
            check(&s, &[data(2, CHUNK)], &what);

            let to = dir.join(format!("copy-{contiguous}-{sync}"));
            std::fs::write(&to, b"old").unwrap();
            chmod(&to, 0o640);
            s.save(&to, true).unwrap();
            assert_eq!(mode(&to), 0o640, "{what}: saved over a file");
        }
    }
}

/// Appends and metadata changes lay the file out as c-blosc2 does: each new chunk where the
/// old index started, no dead space, so the header's cbytes is the chunks' total.
#[test]
fn appends_leave_no_dead_space() {
    let dir = tempdir("no-dead-space");
    let path = dir.join("f.b2frame");
    let s = SChunk::create(Some(&path), &opts(true, CHUNK as i32)).unwrap();
    let mut model = Vec::new();
    for k in 0..120u64 {
        match k % 10 {
            3 => s.vlmeta_set("step", k.to_string().as_bytes()).unwrap(),
            7 => {
                let n = model.len() as i64;
                let order: Vec<i64> = (0..n).rev().collect();
                s.reorder(&order).unwrap();
                model.reverse();
            }
            _ => {
                s.append(&data(k, CHUNK)).unwrap();
                model.push(data(k, CHUNK));
            }
        }
        let info = s.info();
        let stored: usize = (0..model.len() as i64)
            .map(|i| s.get_chunk_raw(i).unwrap().len())
            .sum();
        assert_eq!(info.cbytes, stored as i64, "step {k}: cbytes");
        let bytes = std::fs::read(&path).unwrap();
        let frame_len = u64::from_be_bytes(bytes[16..24].try_into().unwrap());
        assert_eq!(
            bytes.len() as u64,
            frame_len,
            "step {k}: bytes past the frame's end"
        );
    }
    check(&s, &model, "after the appends");
    check(&SChunk::open(&path, false).unwrap(), &model, "reopened");
}

/// A handle opened before other commits keeps reading the state it opened, although the
/// writer rewrites the old index and trailer in place (the index is read at open).
#[test]
fn a_reader_keeps_the_state_it_opened() {
    let dir = tempdir("snapshot");
    let path = dir.join("f.b2frame");
    let w = SChunk::create(Some(&path), &opts(true, CHUNK as i32)).unwrap();
    let model: Vec<Vec<u8>> = (0..6).map(|k| data(k, CHUNK)).collect();
    for c in &model {
        w.append(c).unwrap();
    }
    w.vlmeta_set("v", b"1").unwrap();
    let r = SChunk::open(&path, false).unwrap();
    for k in 0..5 {
        w.append(&data(50 + k, CHUNK)).unwrap();
    }
    w.update(0, &data(99, CHUNK)).unwrap();
    w.delete(1).unwrap();
    w.vlmeta_set("v", b"22").unwrap();
    w.vlmeta_set("w", &[7; 3000]).unwrap();
    check(&r, &model, "the reader opened before the changes");
    assert_eq!(r.vlmeta_get("v", 100).unwrap(), b"1");
    let now = SChunk::open(&path, false).unwrap();
    assert_eq!(now.nchunks(), 10);
    assert_eq!(now.get_chunk_vec(0).unwrap(), data(99, CHUNK));
}

/// Chunks larger than the largest Blosc2 block (536,866,816 bytes): a special chunk of such a
/// frame decodes (it was rebuilt with the chunk's size as its blocksize, which its own header
/// check refused), and an n-dim array of c-blosc2 with 640 MB chunks of zeros takes a slab
/// here that c-blosc2 then reads.
#[test]
fn chunks_larger_than_the_largest_block() {
    const BIG: usize = 600 << 20;
    let s = SChunk::create(None, &opts(true, BIG as i32)).unwrap();
    s.fill_special(BIG as i64 / 4, SpecialValue::Zero).unwrap();
    let mut chunk = vec![0xAAu8; BIG];
    assert_eq!(s.get_chunk(0, &mut chunk).unwrap(), BIG);
    assert!(chunk.iter().all(|&b| b == 0));
    drop(chunk);

    let dir = std::env::temp_dir().join(format!("b2f-bigchunk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("zeros.b2nd");
    let p = path.to_str().unwrap();
    // Two chunks of 8000 x 10000 float64 (640 MB), both index-only zeros but one value.
    common::run_python(
        &format!(
            "import blosc2, numpy as np\n\
             a = blosc2.zeros((12000, 10000), dtype=np.float64, urlpath={p:?}, mode='w',\n\
                              chunks=(8000, 10000), blocks=(1000, 1000))\n\
             a[9000, 5] = 3.0\n"
        ),
        b"",
    );
    let s = SChunk::open(&path, true).unwrap();
    let a = b2frame::ndim::Array::open(&s).unwrap();
    let pair: Vec<u8> = [7.0f64, 8.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    a.set_slice(&[0, 1], &[1, 3], &pair).unwrap();
    let mut out = vec![0u8; 4 * 8];
    a.get_slice(&[0, 0], &[1, 4], &mut out).unwrap();
    let got: Vec<f64> = out
        .chunks(8)
        .map(|b| f64::from_le_bytes(b.try_into().unwrap()))
        .collect();
    assert_eq!(got, [0.0, 7.0, 8.0, 0.0]);
    drop(a);
    drop(s);
    let seen = common::run_python(
        &format!(
            "import blosc2\n\
             a = blosc2.open({p:?})\n\
             print(list(a[0, 0:4]), list(a[9000, 4:7]), float(a[7999:8001, :].sum()))\n"
        ),
        b"",
    );
    assert_eq!(
        String::from_utf8_lossy(&seen).trim(),
        "[np.float64(0.0), np.float64(7.0), np.float64(8.0), np.float64(0.0)] \
         [np.float64(0.0), np.float64(3.0), np.float64(0.0)] 0.0"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// At most 16 vlmetalayers are added, as c-blosc2 writes (appending to a frame with more
/// crashes python-blosc2); a frame that has more (c-blosc2 reads up to 8192) is read, and its
/// vlmetalayers replaced and deleted.
#[test]
fn vlmetalayers_are_added_up_to_sixteen() {
    use b2frame::frame::trailer;
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    s.append(&data(1, CHUNK)).unwrap();
    for k in 0..16 {
        s.vlmeta_set(format!("v{k}"), &[k as u8]).unwrap();
    }
    assert!(matches!(
        s.vlmeta_set("v16", b"x"),
        Err(b2frame::Error::InvalidArgument(_))
    ));
    s.vlmeta_set("v3", b"again").unwrap();
    s.vlmeta_delete("v0").unwrap();
    s.vlmeta_set("", b"empty name").unwrap();
    assert_eq!(s.vlmeta_names().len(), 16);
    // The same frame with 20 vlmetalayers in its trailer, as another writer may leave it.
    let mut frame = s.to_buffer().unwrap();
    let old_len = trailer::trailer_len_from_end(&frame[frame.len() - 23..]).unwrap();
    let mut vls = trailer::parse(&frame[frame.len() - old_len..]).unwrap();
    let proto = vls[0].chunk.clone();
    for k in 0..4 {
        vls.push(trailer::Vlmeta {
            name: format!("extra{k}").into(),
            chunk: proto.clone(),
        });
    }
    frame.truncate(frame.len() - old_len);
    frame.extend_from_slice(&trailer::encode(&vls));
    let frame_len = frame.len() as u64;
    frame[16..24].copy_from_slice(&frame_len.to_be_bytes());
    let t = SChunk::open_buffer_mode(frame, true).unwrap();
    assert_eq!(t.vlmeta_names().len(), 20);
    assert_eq!(t.vlmeta_get("extra3", 100).unwrap(), [1u8]);
    t.vlmeta_set("extra3", b"replaced").unwrap();
    assert_eq!(t.vlmeta_get("extra3", 100).unwrap(), b"replaced");
    assert!(t.vlmeta_set("new", b"x").is_err());
    t.vlmeta_delete("extra0").unwrap();
    assert_eq!(t.vlmeta_names().len(), 19);
    check(&t, &[data(1, CHUNK)], "20 vlmetalayers");
}

/// Creating replaces what is at the path (a frame of either kind, through a symbolic link its
/// target), but never a directory by a contiguous frame; no temporary name is left behind.
#[test]
fn creating_replaces_what_is_at_the_path() {
    let dir = std::env::temp_dir().join(format!("b2f-create-over-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("f.b2frame");
    let one = |contiguous: bool| {
        let s = SChunk::create(Some(&path), &opts(contiguous, CHUNK as i32)).unwrap();
        s.append(&data(1, CHUNK)).unwrap();
        assert_eq!(SChunk::open(&path, false).unwrap().nchunks(), 1);
    };
    one(true); // over nothing
    one(true); // a file over a file
    one(false); // a directory over a file
    one(false); // a directory over a directory
    match SChunk::create(Some(&path), &opts(true, CHUNK as i32)) {
        Err(e @ b2frame::Error::Io { .. }) => {
            let m = e.to_string();
            assert!(
                m.contains("cannot create") && m.contains("directory"),
                "{m}"
            );
        }
        other => panic!(
            "a contiguous frame over a directory: {:?}",
            other.map(|_| ())
        ),
    }
    assert_eq!(SChunk::open(&path, false).unwrap().nchunks(), 1);
    std::fs::remove_dir_all(&path).unwrap();
    let target = dir.join("target.b2frame");
    one(true);
    std::fs::rename(&path, &target).unwrap();
    std::os::unix::fs::symlink(&target, &path).unwrap();
    let s = SChunk::create(Some(&path), &opts(true, CHUNK as i32)).unwrap();
    assert_eq!(s.nchunks(), 0);
    assert!(std::fs::symlink_metadata(&path)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(SChunk::open(&target, false).unwrap().nchunks(), 0);
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["f.b2frame", "target.b2frame"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// An empty chunk is never made a frame's first (c-blosc2 cannot open such a frame); after
/// the first, empty chunks are stored and read back.
#[test]
fn an_empty_chunk_is_never_made_the_first() {
    let s = SChunk::create(None, &opts(true, 0)).unwrap();
    let refused = |r: b2frame::Result<()>, what: &str| match r {
        Err(b2frame::Error::InvalidArgument(m)) => assert!(m.contains("first chunk"), "{m}"),
        other => panic!("{what}: {other:?}"),
    };
    refused(s.append(&[]).map(drop), "append to an empty frame");
    let d = data(1, 400);
    s.append(&d).unwrap();
    refused(s.insert(0, &[]).map(drop), "insert at 0");
    refused(s.update(0, &[]), "update of chunk 0");
    s.append(&[]).unwrap();
    s.insert(1, &[]).unwrap();
    refused(s.delete(0), "delete before an empty chunk");
    refused(s.reorder(&[1, 0, 2]), "reorder with an empty chunk first");
    s.reorder(&[0, 2, 1]).unwrap();
    check(
        &s,
        &[d.clone(), vec![], vec![]],
        "empty chunks after the first",
    );
    s.delete(1).unwrap();
    s.delete(1).unwrap();
    s.delete(0).unwrap();
    assert_eq!(s.nchunks(), 0);
}

/// An empty chunk, even last, does not fit a fixed chunksize: the header's nbytes would count
/// one chunk too few and the frame would not open again (c-blosc2 writes such frames, which
/// neither library opens). The frame turns to variable-length chunks instead.
#[test]
fn an_empty_chunk_turns_a_fixed_chunksize_frame_variable() {
    let dir = tempdir("empty-last");
    let (first, second) = (data(1, CHUNK), data(2, CHUNK));
    let empty = b2frame::chunk::Context::new(opts(true, 0).params)
        .unwrap()
        .compress_to_vec(&[])
        .unwrap();
    type Step = fn(&SChunk, &[u8]);
    let cases: [(&str, Step, usize); 4] = [
        (
            "append",
            |s, _| {
                s.append(&[]).unwrap();
            },
            3,
        ),
        (
            "insert last",
            |s, _| {
                s.insert(2, &[]).unwrap();
            },
            3,
        ),
        (
            "append_chunk",
            |s, c| {
                s.append_chunk(c).unwrap();
            },
            3,
        ),
        ("update of the last", |s, _| s.update(1, &[]).unwrap(), 2),
    ];
    for contiguous in [true, false] {
        for (what, step, n) in cases {
            let path = dir.join(format!("{what}-{contiguous}.b2frame"));
            let s = SChunk::create(Some(&path), &opts(contiguous, CHUNK as i32)).unwrap();
            s.append(&first).unwrap();
            s.append(&second).unwrap();
            step(&s, &empty);
            let mut model = vec![first.clone(), second.clone(), vec![]];
            model.truncate(n);
            model[n - 1] = vec![];
            let what = format!("{what} (contiguous: {contiguous})");
            assert_eq!(s.info().chunksize, 0, "{what}: chunksize");
            check(&s, &model, &what);
            drop(s);
            let reopened = SChunk::open(&path, false)
                .unwrap_or_else(|e| panic!("{what}: the frame does not open again: {e}"));
            check(&reopened, &model, &format!("{what}, reopened"));
        }
    }
}

/// An index entry stands for a special chunk rebuilt with the frame's typesize: zeros that are
/// not whole items of it, and NaNs of another width, are stored instead, and read back as
/// given. Zeros as chunk 0 of a variable-length frame too.
#[test]
fn special_chunks_an_index_entry_would_change_are_stored() {
    let dir = tempdir("special-stored");
    let mut o = opts(true, 8000);
    o.params.typesize = 8;
    let ctx = b2frame::chunk::Context::new(o.params.clone()).unwrap();
    let zeros = ctx.compress_to_vec(&[0u8; 2586]).unwrap();
    assert_eq!(zeros.len(), 32, "a special chunk of zeros");
    let nan32 = b2frame::chunk::special::build(SpecialValue::Nan, 8000, 4, 8000, None).unwrap();
    let nan32_data = f32::NAN.to_le_bytes().repeat(2000);
    let d = data(1, 8000);
    let dc = ctx.compress_to_vec(&d).unwrap();
    // (what, chunksize, chunks appended, chunks read back)
    type Case<'a> = (&'a str, i32, Vec<&'a [u8]>, Vec<&'a [u8]>);
    let cases: [Case; 3] = [
        ("short zeros", 8000, vec![&zeros], vec![&[0; 2586]]),
        ("zeros first", 0, vec![&zeros, &dc], vec![&[0; 2586], &d]),
        ("nan32", 8000, vec![&dc, &nan32], vec![&d, &nan32_data]),
    ];
    for contiguous in [true, false] {
        for (what, chunksize, chunks, want) in &cases {
            let path = dir.join(format!("{what}-{contiguous}.b2frame"));
            o.contiguous = contiguous;
            o.chunksize = *chunksize;
            let s = SChunk::create(Some(&path), &o).unwrap();
            for c in chunks {
                s.append_chunk(c).unwrap();
            }
            assert_eq!(s.info().chunksize, *chunksize, "{what}");
            let want: Vec<Vec<u8>> = want.iter().map(|c| c.to_vec()).collect();
            check(&s, &want, what);
            check(&SChunk::open(&path, false).unwrap(), &want, what);
        }
    }
}

/// A chunk of NaNs stored in a frame of variable-length chunks keeps its own float width,
/// whatever the frame's typesize (zeros take the frame's typesize, as c-blosc2 reads them).
#[test]
fn special_chunks_stored_as_values_keep_their_content() {
    let nan_f32 = SChunk::create(None, &opts(true, 4000)).unwrap();
    nan_f32.fill_special(1000, SpecialValue::Nan).unwrap();
    let raw = nan_f32.get_chunk_raw(0).unwrap();
    let want = nan_f32.get_chunk_vec(0).unwrap();
    assert_eq!(&want[..4], &f32::NAN.to_le_bytes());
    let mut o = opts(true, 0);
    o.params.typesize = 8;
    let s = SChunk::create(None, &o).unwrap();
    s.append_chunk(&raw).unwrap();
    s.append(&[0u8; 800]).unwrap();
    check(
        &s,
        &[want, vec![0; 800]],
        "specials in a variable-length frame",
    );
}

/// Metalayer and vlmetalayer names are bytes, as in the format: a frame with names that are
/// not UTF-8 (c-blosc2 takes any) opens, and its layers are found and kept byte for byte.
#[test]
fn names_that_are_not_utf8_are_kept() {
    let s = SChunk::create(None, &opts(true, CHUNK as i32)).unwrap();
    s.meta_add(b"\xe9t\xe9", b"latin-1").unwrap();
    s.append(&data(1, CHUNK)).unwrap();
    s.vlmeta_set(b"caf\xe9", b"\xc0").unwrap();
    s.vlmeta_set("ok", b"\xc3").unwrap();
    let r = SChunk::open_buffer(s.to_buffer().unwrap()).unwrap();
    assert_eq!(r.meta_names_raw(), [b"\xe9t\xe9".to_vec()]);
    assert_eq!(r.meta_names(), ["\u{fffd}t\u{fffd}"]);
    assert_eq!(r.meta_get(b"\xe9t\xe9").unwrap(), b"latin-1");
    assert!(matches!(
        r.meta_get("\u{fffd}t\u{fffd}"),
        Err(b2frame::Error::NotFound(_))
    ));
    assert_eq!(r.vlmeta_get(b"caf\xe9", 10).unwrap(), b"\xc0");
    r.vlmeta_set(b"caf\xe9", b"\xc2").unwrap();
    r.vlmeta_delete("ok").unwrap();
    let r = SChunk::open_buffer(r.to_buffer().unwrap()).unwrap();
    assert_eq!(r.vlmeta_names_raw(), [b"caf\xe9".to_vec()]);
    assert_eq!(r.vlmeta_get(b"caf\xe9", 10).unwrap(), b"\xc2");
    check(&r, &[data(1, CHUNK)], "non-UTF-8 names");
}

/// The blocksize a chunk's header records.
fn chunk_blocksize(chunk: &[u8]) -> usize {
    b2frame::chunk::header::ChunkHeader::parse(chunk)
        .unwrap()
        .blocksize()
}

#[test]
fn each_chunk_is_cut_by_the_blocksize_of_the_chunk_before_it_as_in_c_blosc2() {
    // LZ4 at clevel 1 without filters cuts 64 KiB into 16 KiB blocks, and 20000 bytes alone
    // into one block; in a frame, as in c-blosc2's super-chunks, the 20000 bytes after full
    // chunks take the 16 KiB blocks, and the chunks after 1000 bytes take 1000-byte blocks.
    // A chunk smaller than an item (c-blosc2: 1-byte blocks from then on) changes nothing.
    let params = CParams {
        typesize: 4,
        codec: b2frame::codecs::LZ4,
        clevel: 1,
        filters: [0; 6],
        ..CParams::default()
    };
    let ctx = b2frame::chunk::Context::new(params.clone()).unwrap();
    let alone = ctx.compress_to_vec(&data(1, 20000)).unwrap();
    assert_eq!(chunk_blocksize(&alone), 20000);

    let dir = tempdir("blocksize");
    let path = dir.join("f.b2frame");
    let create = CreateOptions {
        contiguous: true,
        chunksize: 65536,
        params,
        sync: false,
    };
    let s = SChunk::create(Some(&path), &create).unwrap();
    let sizes = [65536, 20000, 65536, 1000, 2, 65536, 65536];
    let mut model = Vec::new();
    for (k, &n) in sizes.iter().enumerate() {
        let d = if n < 4 { vec![7; n] } else { data(k as u64, n) };
        s.append(&d).unwrap();
        model.push(d);
    }
    check(&s, &model, "appended");
    let cut: Vec<usize> = (0..sizes.len())
        .map(|i| chunk_blocksize(&s.get_chunk_raw(i as i64).unwrap()))
        .collect();
    assert_eq!(cut, [16384, 16384, 16384, 1000, 2, 1000, 1000]);

    // A frame opened anew starts from its header's blocksize (automatic) again.
    drop(s);
    let s = SChunk::open(&path, true).unwrap();
    let d = data(9, 65536);
    s.append(&d).unwrap();
    model.push(d);
    check(&s, &model, "reopened");
    assert_eq!(chunk_blocksize(&s.get_chunk_raw(7).unwrap()), 16384);
}

#[test]
fn slices_read_right_however_they_cut_chunks_and_blocks() {
    use b2frame::filters::{BITSHUFFLE, BYTEDELTA, DELTA, SHUFFLE};
    // Slices shorter than half a chunk decode only the blocks that hold them (and of a
    // shuffled block only their items): every pipeline, block boundaries, whole blocks, a
    // chunk of zeros (index only), an incompressible (memcpyed) chunk and a short last one.
    let pipelines: [([u8; 6], [u8; 6]); 6] = [
        ([0; 6], [0; 6]),
        ([0, 0, 0, 0, 0, SHUFFLE], [0; 6]),
        ([0, 0, 0, 0, 0, BITSHUFFLE], [0; 6]),
        ([DELTA, SHUFFLE, 0, 0, 0, 0], [0; 6]),
        ([SHUFFLE, BYTEDELTA, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0]),
        ([0, 0, 0, 0, 0, SHUFFLE], [0, 0, 0, 0, 0, 2]),
    ];
    for typesize in [1usize, 2, 3, 4, 8] {
        for (filters, meta) in pipelines {
            let chunk = 5000 * typesize;
            let o = CreateOptions {
                contiguous: true,
                chunksize: chunk as i32,
                params: CParams {
                    typesize,
                    codec: b2frame::codecs::ZSTD,
                    clevel: 3,
                    filters,
                    filters_meta: meta,
                    blocksize: 256 * typesize,
                    ..CParams::default()
                },
                sync: false,
            };
            // In a file, short slices read only their blocks' bytes (Frame::read_chunk_blocks).
            let dir = tempdir("slices");
            let path = dir.join("s.b2frame");
            let s = SChunk::create(Some(&path), &o).unwrap();
            let mut all = Vec::new();
            let mut noise = 0x9e37_79b9_7f4a_7c15u64;
            for k in 0..4 {
                let c: Vec<u8> = match k {
                    1 => vec![0; chunk],
                    2 => (0..chunk)
                        .map(|_| {
                            noise ^= noise << 13;
                            noise ^= noise >> 7;
                            noise ^= noise << 17;
                            noise as u8
                        })
                        .collect(),
                    _ => (0..chunk)
                        .map(|i| ((i / 7) as u8) ^ (k as u8 * 31))
                        .collect(),
                };
                s.append(&c).unwrap();
                all.extend_from_slice(&c);
            }
            let short = &data(9, 1000 * typesize)[..999 * typesize];
            s.append(short).unwrap();
            all.extend_from_slice(short);
            let items = (all.len() / typesize) as i64;
            let per_chunk = 5000i64;
            let in_memory = SChunk::open_buffer(s.to_buffer().unwrap()).unwrap();
            let mut starts = vec![0, 1, 255, 256, 257, 511, 4999, 5000, 12_345, 19_990, 20_000];
            starts.extend((0..40).map(|k| (k * 509 + 13) % items));
            for &a in &starts {
                // (5000: whole chunks, decoded straight into the output; 7500: a whole chunk
                // and half of one, decoded whole into a buffer)
                for len in [1i64, 2, 255, 256, 257, 1500, 2499, 5000, 7500] {
                    let b = (a + len).min(items);
                    let want = &all[a as usize * typesize..b as usize * typesize];
                    for (frame, kind) in [(&s, "file"), (&in_memory, "memory")] {
                        let mut out = vec![0xA5u8; ((b - a) as usize) * typesize];
                        frame.get_slice(a, b, &mut out).unwrap();
                        assert!(
                            out == want,
                            "{kind}, typesize {typesize} {filters:?} {meta:?}: items [{a}, {b}) \
                             differ (chunk {})",
                            a / per_chunk
                        );
                    }
                }
            }
        }
    }
}

/// Chunksize -1, c-blosc2's "not set yet": the first chunk sets it, and the frame then goes
/// as any of that chunksize. A frame made with it records -1 until then, as c-blosc2's do.
#[test]
fn chunksize_minus_one_is_set_by_the_first_chunk() {
    let dir = tempdir("chunksize-unset");
    for contiguous in [true, false] {
        let path = dir.join(format!("unset-{contiguous}.b2frame"));
        let s = SChunk::create(Some(&path), &opts(contiguous, -1)).unwrap();
        assert_eq!(s.info().chunksize, -1);
        drop(s);
        let s = SChunk::open(&path, true).unwrap();
        assert_eq!(s.info().chunksize, -1, "reopened empty");
        let mut model = vec![data(1, 1000), data(2, 1000)];
        for d in &model {
            s.append(d).unwrap();
        }
        assert_eq!(s.info().chunksize, 1000, "set by the first chunk");
        s.append(&data(3, 2000)).unwrap();
        model.push(data(3, 2000));
        assert_eq!(s.info().chunksize, 0, "a larger chunk: variable-length");
        check(&s, &model, "unset");
        drop(s);
        check(
            &SChunk::open(&path, false).unwrap(),
            &model,
            "unset, reopened",
        );
    }
    let Err(e) = SChunk::create(None, &opts(true, -2)) else {
        panic!("-2 is refused")
    };
    assert!(
        matches!(&e, b2frame::Error::InvalidArgument(m) if m.contains("chunksize -2 is negative")),
        "{e}"
    );
    let s = SChunk::create(None, &opts(true, -1)).unwrap();
    let e = s.fill_special(10, SpecialValue::Zero).unwrap_err();
    assert!(
        matches!(&e, b2frame::Error::InvalidArgument(m) if m.contains("no chunksize until its first chunk")),
        "{e}"
    );
}

/// A header that says -1 over chunks (neither library writes one) is read by its index, and
/// the next chunk makes it variable-length instead of taking that chunk's size as the
/// chunksize of chunks that have other sizes.
#[test]
fn chunksize_minus_one_over_chunks_turns_variable() {
    let v = SChunk::create(None, &opts(true, 0)).unwrap();
    let mut model = vec![data(1, 1200), data(2, 2000), data(3, 800)];
    for d in &model {
        v.append(d).unwrap();
    }
    let mut frame = v.to_buffer().unwrap();
    let pos = b2frame::frame::header::CHUNKSIZE_POS;
    frame[pos..pos + 4].copy_from_slice(&(-1i32).to_be_bytes());
    let dir = tempdir("chunksize-unset-over");
    let path = dir.join("f.b2frame");
    std::fs::write(&path, &frame).unwrap();
    let s = SChunk::open(&path, true).unwrap();
    assert_eq!(s.info().chunksize, -1);
    check(&s, &model, "as found");
    // 1000 bytes: the total (5000) is not below 4 chunks of 1000, so taking 1000 as the
    // chunksize would make a header that counts 5 chunks where the index has 4.
    s.append(&data(4, 1000)).unwrap();
    model.push(data(4, 1000));
    assert_eq!(s.info().chunksize, 0);
    check(&s, &model, "appended");
    drop(s);
    check(&SChunk::open(&path, false).unwrap(), &model, "reopened");
}
