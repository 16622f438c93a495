//! One handle shared by many threads: eight readers (at least; more on bigger machines) read
//! random chunks and slices across chunk boundaries while a writer appends, updates and writes
//! vlmetalayers, for a fixed number of operations; every read is checked. And slab writers
//! sharing chunks: each slab write reads its chunks and writes them back, and none may undo
//! another's items.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use b2frame::chunk::CParams;
use b2frame::ndim::{self, Array, NdMeta};
use b2frame::schunk::{CreateOptions, SChunk};

const CHUNK: usize = 16_000;

/// Chunk contents are a function of (index, version) so readers can check what they get.
fn data(i: usize, version: u32) -> Vec<u8> {
    (0..CHUNK as u32 / 4)
        .flat_map(|k| (k / 9 + i as u32 * 1000 + version * 1_000_000).to_le_bytes())
        .collect()
}

fn version_of(chunk: &[u8], i: usize) -> Option<u32> {
    let first = u32::from_le_bytes(chunk[..4].try_into().unwrap());
    let v = (first - i as u32 * 1000) / 1_000_000;
    (data(i, v) == chunk).then_some(v)
}

/// Whether `part` is the bytes `range` of some version of chunk `i`.
fn is_part_of(part: &[u8], i: usize, range: std::ops::Range<usize>) -> bool {
    let first = u32::from_le_bytes(part[..4].try_into().unwrap());
    let k = range.start as u32 / 4;
    let v = first.wrapping_sub(k / 9 + i as u32 * 1000) / 1_000_000;
    data(i, v)[range] == *part
}

fn run(path: Option<&std::path::Path>, contiguous: bool) {
    let opts = CreateOptions {
        contiguous,
        chunksize: CHUNK as i32,
        params: CParams {
            typesize: 4,
            nthreads: 1,
            ..CParams::default()
        },
        sync: false,
    };
    let s = Arc::new(SChunk::create(path, &opts).unwrap());
    for i in 0..8 {
        s.append(&data(i, 0)).unwrap();
    }
    let done = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicUsize::new(0));
    let readers: Vec<_> = (0..std::thread::available_parallelism()
        .map_or(8, |n| n.get())
        .max(8))
        .map(|t| {
            let (s, done, reads) = (Arc::clone(&s), Arc::clone(&done), Arc::clone(&reads));
            std::thread::spawn(move || {
                let mut k = t;
                while !done.load(Ordering::Relaxed) {
                    let n = s.nchunks();
                    let i = k % n;
                    k = k.wrapping_mul(31).wrapping_add(7);
                    let c = s.get_chunk_vec(i as i64).unwrap();
                    assert!(version_of(&c, i).is_some(), "chunk {i} read garbage");
                    if i + 1 < n {
                        // Items from the middle of chunk i to the middle of chunk i + 1.
                        let per = (CHUNK / 4) as i64;
                        let start = i as i64 * per + per / 2;
                        let mut buf = vec![0u8; CHUNK];
                        s.get_slice(start, start + per, &mut buf).unwrap();
                        let half = CHUNK / 2;
                        assert!(
                            is_part_of(&buf[..half], i, half..CHUNK),
                            "slice in chunk {i}"
                        );
                        assert!(
                            is_part_of(&buf[half..], i + 1, 0..half),
                            "slice in chunk {}",
                            i + 1
                        );
                    }
                    if let Ok(v) = s.vlmeta_get("count", 64) {
                        assert!(v.len() == 8);
                    }
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    for round in 0..200u32 {
        // Pace the writer by the readers (one read per round so far), so reads overlap the
        // writes however the threads are scheduled: on a loaded 2-core machine the writer
        // once finished all its rounds before the readers had read 100 times.
        while reads.load(Ordering::Relaxed) < round as usize {
            assert!(
                std::time::Instant::now() < deadline,
                "readers stopped making progress"
            );
            std::thread::yield_now();
        }
        let n = s.nchunks();
        s.append(&data(n, 0)).unwrap();
        s.update(
            (round as usize * 7 % n) as i64,
            &data(round as usize * 7 % n, round + 1),
        )
        .unwrap();
        s.vlmeta_set("count", &u64::from(round).to_le_bytes())
            .unwrap();
    }
    done.store(true, Ordering::Relaxed);
    for r in readers {
        r.join().unwrap();
    }
    assert!(reads.load(Ordering::Relaxed) > 100, "readers barely ran");
    assert_eq!(s.nchunks(), 208);
}

#[test]
fn readers_and_a_writer_on_a_file() {
    let dir = std::env::temp_dir().join(format!("b2f-conc-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    run(Some(&dir.join("c.b2frame")), true);
    run(Some(&dir.join("s.b2frame")), false);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn readers_and_a_writer_in_memory() {
    run(None, true);
}

/// Four threads write rows of one array (thread t the rows r with r % 4 == t), round after
/// round, each row slab crossing two chunks that other threads' rows share, while a reader
/// checks that every row it reads is one round's whole row. At the end every row holds the
/// last round: a slab write that read a chunk before another's write-back and wrote it after
/// would have put older rows back.
fn slab_writers(path: Option<&std::path::Path>, contiguous: bool) {
    const ROWS: i64 = 32;
    const COLS: i64 = 48;
    const ROUNDS: u32 = 40;
    let opts = CreateOptions {
        contiguous,
        chunksize: 0,
        params: CParams {
            nthreads: 1,
            ..CParams::default()
        },
        sync: false,
    };
    let meta = NdMeta {
        version: 0,
        shape: vec![ROWS, COLS],
        chunkshape: vec![16, 32],
        blockshape: vec![4, 8],
        dtype_format: 0,
        dtype: Some("<u4".into()),
    };
    let row = |r: i64, round: u32| -> Vec<u8> {
        (0..COLS as u32)
            .flat_map(|c| (round << 16 | (r as u32) << 8 | c).to_le_bytes())
            .collect()
    };
    let s = ndim::slice::create(path, &opts, &meta).unwrap();
    let done = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let reader = scope.spawn(|| {
            let a = Array::open(&s).unwrap();
            let mut out = vec![0u8; (COLS * 4) as usize];
            let mut reads = 0;
            while !done.load(Ordering::Relaxed) {
                let r = reads % ROWS;
                a.get_slice(&[r, 0], &[r + 1, COLS], &mut out).unwrap();
                let round = u32::from_le_bytes(out[..4].try_into().unwrap()) >> 16;
                let whole = out.iter().all(|&b| b == 0) || out == row(r, round);
                assert!(whole, "row {r} read half written");
                reads += 1;
            }
        });
        let writers: Vec<_> = (0..4)
            .map(|t| {
                let s = &s;
                scope.spawn(move || {
                    let a = Array::open(s).unwrap();
                    for round in 1..=ROUNDS {
                        for r in (t..ROWS).step_by(4) {
                            a.set_slice(&[r, 0], &[r + 1, COLS], &row(r, round))
                                .unwrap();
                        }
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        reader.join().unwrap();
    });
    let a = Array::open(&s).unwrap();
    let mut out = vec![0u8; (ROWS * COLS * 4) as usize];
    a.get_slice(&[0, 0], &[ROWS, COLS], &mut out).unwrap();
    for r in 0..ROWS {
        let got = &out[(r * COLS * 4) as usize..((r + 1) * COLS * 4) as usize];
        let round = u32::from_le_bytes(got[..4].try_into().unwrap()) >> 16;
        assert_eq!(
            round, ROUNDS,
            "row {r} holds round {round}: a later write was lost"
        );
        assert_eq!(got, row(r, ROUNDS), "row {r}");
    }
}

#[test]
fn slab_writers_sharing_chunks_lose_nothing() {
    let dir = std::env::temp_dir().join(format!("b2f-conc-slab-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    slab_writers(None, true);
    slab_writers(Some(&dir.join("c.b2nd")), true);
    slab_writers(Some(&dir.join("s.b2nd")), false);
    let _ = std::fs::remove_dir_all(&dir);
}
