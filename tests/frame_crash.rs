//! Nothing lost: a writer killed at each of its write system calls in turn (strace injects
//! SIGKILL at the K-th write, pwrite64, pwritev or ftruncate, for K = 1, 2, ...) leaves a frame
//! that opens and holds exactly the chunks and vlmetalayers of the last call that returned (or
//! of the one in flight, if its commit write had happened).
//!
//! The writer is this test binary itself, re-run with `B2F_CRASH_WRITER` set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use b2frame::chunk::CParams;
use b2frame::schunk::{CreateOptions, SChunk};

const CHUNK: usize = 4000;

fn data(k: u32) -> Vec<u8> {
    (0..CHUNK as u32 / 4)
        .flat_map(|i| (i / 5 + k * 100).to_le_bytes())
        .collect()
}

/// The state a frame is in: its chunks and vlmetalayers.
#[derive(Clone, Debug, PartialEq)]
struct State {
    chunks: Vec<Vec<u8>>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

/// The operations the writer performs, applied to a model.
type Op = Box<dyn Fn(&SChunk, &mut State)>;

fn ops() -> Vec<Op> {
    vec![
        Box::new(|s, m| {
            s.append(&data(10)).unwrap();
            m.chunks.push(data(10));
        }),
        Box::new(|s, m| {
            s.insert(1, &data(11)).unwrap();
            m.chunks.insert(1, data(11));
        }),
        Box::new(|s, m| {
            s.vlmeta_set("note", b"first").unwrap();
            m.vlmeta.push(("note".into(), b"first".to_vec()));
        }),
        Box::new(|s, m| {
            s.update(0, &data(12)).unwrap();
            m.chunks[0] = data(12);
        }),
        Box::new(|s, m| {
            s.delete(2).unwrap();
            m.chunks.remove(2);
        }),
        Box::new(|s, m| {
            let n = m.chunks.len();
            let order: Vec<i64> = (0..n as i64).rev().collect();
            s.reorder(&order).unwrap();
            m.chunks.reverse();
        }),
        Box::new(|s, m| {
            s.vlmeta_set("note", b"second, longer").unwrap();
            m.vlmeta[0].1 = b"second, longer".to_vec();
        }),
        Box::new(|s, m| {
            s.append(&data(13)).unwrap();
            m.chunks.push(data(13));
        }),
        Box::new(|s, m| {
            s.vlmeta_delete("note").unwrap();
            m.vlmeta.clear();
        }),
        Box::new(|s, m| {
            s.append(&vec![0u8; CHUNK]).unwrap();
            m.chunks.push(vec![0u8; CHUNK]);
        }),
    ]
}

fn initial_state() -> State {
    State {
        chunks: (0..3).map(data).collect(),
        vlmeta: vec![],
    }
}

/// All the states the writer passes through.
fn states() -> Vec<State> {
    let s = SChunk::create(None, &options(true)).unwrap();
    let mut m = initial_state();
    for c in &m.chunks {
        s.append(c).unwrap();
    }
    let mut all = vec![m.clone()];
    for op in ops() {
        op(&s, &mut m);
        all.push(m.clone());
    }
    all
}

fn options(contiguous: bool) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize: CHUNK as i32,
        params: CParams {
            typesize: 4,
            ..CParams::default()
        },
        sync: false,
    }
}

fn read_state(path: &Path) -> State {
    let s = SChunk::open(path, false).unwrap_or_else(|e| panic!("frame no longer opens: {e}"));
    let chunks = (0..s.nchunks() as i64)
        .map(|i| {
            s.get_chunk_vec(i)
                .unwrap_or_else(|e| panic!("chunk {i}: {e}"))
        })
        .collect();
    let vlmeta = s
        .vlmeta_names()
        .into_iter()
        .map(|n| {
            let v = s.vlmeta_get(&n, 1 << 20).unwrap();
            (n, v)
        })
        .collect();
    State { chunks, vlmeta }
}

/// The child: open the frame and run the operations, logging each one that returned.
#[test]
fn crash_writer_child() {
    let (Ok(path), Ok(log)) = (
        std::env::var("B2F_CRASH_WRITER"),
        std::env::var("B2F_CRASH_LOG"),
    ) else {
        return; // not the child
    };
    let s = SChunk::open(Path::new(&path), true).unwrap();
    let mut m = initial_state();
    for (k, op) in ops().into_iter().enumerate() {
        op(&s, &mut m);
        let mut line = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&log)
            .unwrap();
        std::io::Write::write_all(&mut line, format!("{}\n", k + 1).as_bytes()).unwrap();
    }
}

fn copy_tree(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    } else {
        std::fs::copy(from, to).unwrap();
    }
}

fn kill_at_every_write(contiguous: bool) {
    let dir = std::env::temp_dir().join(format!("b2f-crash-{}-{contiguous}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pristine = dir.join("pristine.b2frame");
    {
        let s = SChunk::create(Some(&pristine), &options(contiguous)).unwrap();
        for c in &initial_state().chunks {
            s.append(c).unwrap();
        }
    }
    let all = states();
    let exe = std::env::current_exe().unwrap();
    let mut completed = false;
    let mut kills = 0;
    for k in 1..2000 {
        let path: PathBuf = dir.join(format!("run{k}.b2frame"));
        let log = dir.join(format!("run{k}.log"));
        copy_tree(&pristine, &path);
        let out = Command::new("strace")
            .args([
                "-f",
                "-qq",
                "-o",
                "/dev/null",
                "-e",
                "trace=write,pwrite64,pwritev,ftruncate",
            ])
            .arg("-e")
            .arg(format!(
                "inject=write,pwrite64,pwritev,ftruncate:signal=KILL:when={k}"
            ))
            .arg(&exe)
            .args([
                "--exact",
                "crash_writer_child",
                "--test-threads=1",
                "--nocapture",
                "-q",
            ])
            .env("B2F_CRASH_WRITER", &path)
            .env("B2F_CRASH_LOG", &log)
            .output()
            .expect("run strace (is it installed?)");
        let logged = std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .count();
        let state = read_state(&path);
        // The frame is in the state after the last logged call, or after the next one if
        // that call had committed before the kill.
        let ok = state == all[logged] || (logged + 1 < all.len() && state == all[logged + 1]);
        assert!(
            ok,
            "kill at write {k}: {logged} calls had returned, but the frame holds {} chunks / {} vlmeta that match no state",
            state.chunks.len(),
            state.vlmeta.len()
        );
        if out.status.success() {
            assert_eq!(
                logged,
                all.len() - 1,
                "the writer finished without running every operation"
            );
            assert_eq!(state, *all.last().unwrap());
            completed = true;
            break;
        }
        kills += 1;
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
    }
    assert!(completed, "the writer never ran to completion");
    eprintln!(
        "{} frame: killed at {kills} write points, then ran to completion",
        if contiguous { "contiguous" } else { "sparse" }
    );
    assert!(kills > 10, "only {kills} kill points");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn contiguous_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(true);
}

#[test]
fn sparse_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(false);
}
