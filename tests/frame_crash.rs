//! Nothing lost: a writer killed at each of its file-changing system calls in turn (strace
//! injects SIGKILL at the K-th call of one system call, for K = 1, 2, ..., and each of
//! `SYSCALLS` in turn) leaves a frame that opens and holds exactly the chunks, metalayers and
//! vlmetalayers of the last call that returned (or of the one in flight, if its commit write
//! had happened).
//!
//! The writer is this test binary itself, re-run with `B2F_CRASH_WRITER` set.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use b2frame::chunk::{CParams, SpecialValue};
use b2frame::schunk::{CreateOptions, OpenOptions, SChunk};

const CHUNK: usize = 4000;
/// Chunks of the tiny writer: 400 bytes of one value (a 56-byte chunk).
const TINY: usize = 400;

fn data(k: u32) -> Vec<u8> {
    (0..CHUNK as u32 / 4)
        .flat_map(|i| (i / 5 + k * 100).to_le_bytes())
        .collect()
}

fn tiny_data(k: u32) -> Vec<u8> {
    vec![k as u8 + 1; TINY]
}

/// The state a frame is in: its chunks, metalayers and vlmetalayers.
#[derive(Clone, Debug, PartialEq)]
struct State {
    chunks: Vec<Vec<u8>>,
    meta: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

/// The operations the writer performs, applied to a model.
type Op = Box<dyn Fn(&SChunk, &mut State)>;

fn ops(tiny: bool) -> Vec<Op> {
    if tiny {
        return tiny_ops();
    }
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
            s.meta_update("fixed", b"version 2").unwrap();
            m.meta[0].1 = b"version 2".to_vec();
        }),
        Box::new(|s, m| {
            s.update(0, &data(12)).unwrap();
            m.chunks[0] = data(12);
        }),
        Box::new(|s, m| {
            s.delete(2).unwrap();
            m.chunks.remove(2);
        }),
        // Dead bytes of the replaced and removed chunks: rewritten whole (contiguous frames).
        Box::new(|s, _| s.compact().unwrap()),
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
        // Index-only chunks: two of zeros, then one of float32 NaNs.
        Box::new(|s, m| {
            s.fill_special(2 * CHUNK as i64 / 4, SpecialValue::Zero)
                .unwrap();
            m.chunks.extend([vec![0u8; CHUNK], vec![0u8; CHUNK]]);
        }),
        Box::new(|s, m| {
            s.fill_special(CHUNK as i64 / 4, SpecialValue::Nan).unwrap();
            m.chunks.push(f32::NAN.to_le_bytes().repeat(CHUNK / 4));
        }),
        // Larger than the chunksize: the frame turns to variable-length chunks, the zero
        // chunk above (index-only) stored first.
        Box::new(|s, m| {
            let mut d = data(14);
            d.extend_from_slice(&data(15)[..400]);
            s.append(&d).unwrap();
            m.chunks.push(d);
        }),
    ]
}

/// A sparse frame of small, well-compressed chunks: ids taken fresh for every write outrun
/// what c-blosc2 accepts (an id at most the chunk bytes - 32), so the writes reuse ids and
/// move the files of surviving chunks to lower ids (copies, before the index names them).
fn tiny_ops() -> Vec<Op> {
    let mut ops: Vec<Op> = Vec::new();
    for k in 1..30 {
        ops.push(Box::new(move |s, m| {
            s.append(&tiny_data(k)).unwrap();
            m.chunks.push(tiny_data(k));
        }));
    }
    // Down to the chunk with id 29, beyond the 24 one chunk allows: moved to id 0.
    for _ in 0..29 {
        ops.push(Box::new(|s, m| {
            s.delete(0).unwrap();
            m.chunks.remove(0);
        }));
    }
    for k in 20..23 {
        ops.push(Box::new(move |s, m| {
            s.update(0, &tiny_data(k)).unwrap();
            m.chunks[0] = tiny_data(k);
        }));
    }
    ops
}

fn initial_state(tiny: bool) -> State {
    State {
        chunks: if tiny {
            vec![tiny_data(0)]
        } else {
            (0..3).map(data).collect()
        },
        meta: vec![("fixed".into(), b"version 1".to_vec())],
        vlmeta: vec![],
    }
}

/// Puts a new frame in state `m` (metalayers come before the first chunk).
fn build(s: &SChunk, m: &State) {
    for (name, content) in &m.meta {
        s.meta_add(name, content).unwrap();
    }
    for c in &m.chunks {
        s.append(c).unwrap();
    }
}

/// All the states the writer passes through.
fn states(tiny: bool) -> Vec<State> {
    let s = SChunk::create(None, &options(true, tiny)).unwrap();
    let mut m = initial_state(tiny);
    build(&s, &m);
    let mut all = vec![m.clone()];
    for op in ops(tiny) {
        op(&s, &mut m);
        all.push(m.clone());
    }
    all
}

fn options(contiguous: bool, tiny: bool) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize: if tiny { TINY } else { CHUNK } as i32,
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
    let meta = s
        .meta_names()
        .into_iter()
        .map(|n| {
            let v = s.meta_get(&n).unwrap();
            (n, v)
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
    State {
        chunks,
        meta,
        vlmeta,
    }
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
    let tiny = std::env::var("B2F_CRASH_TINY").as_deref() == Ok("1");
    let opts = OpenOptions {
        writable: true,
        sync: std::env::var("B2F_CRASH_SYNC").as_deref() == Ok("1"),
        ..OpenOptions::default()
    };
    let s = SChunk::open_with(Path::new(&path), &opts).unwrap();
    let mut m = initial_state(tiny);
    for (k, op) in ops(tiny).into_iter().enumerate() {
        op(&s, &mut m);
        let mut line = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&log)
            .unwrap();
        std::io::Write::write_all(&mut line, format!("{}\n", k + 1).as_bytes()).unwrap();
    }
}

/// Every chunk file id of a sparse frame is at most its chunk bytes - 32, which c-blosc2
/// checks on open.
fn assert_ids_within_chunk_bytes(dir: &Path) {
    let mut ids = vec![];
    let mut cbytes = 0;
    for e in std::fs::read_dir(dir).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().into_string().unwrap();
        if let Some(hex) = name.strip_suffix(".chunk") {
            ids.push(u64::from_str_radix(hex, 16).unwrap());
            cbytes += e.metadata().unwrap().len();
        }
    }
    let max = ids.iter().max().copied().unwrap_or(0);
    assert!(
        max + 32 <= cbytes,
        "chunk file ids {ids:?} with {cbytes} chunk bytes"
    );
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

/// The system calls that change files, each swept on its own: strace counts invocations per
/// system call, so `when=K` over a set would kill at the K-th call of whichever comes first and
/// skip the calls of the others in between.
const SYSCALLS: [&str; 13] = [
    "write",
    "pwrite64",
    "pwritev",
    "ftruncate",
    "rename",
    "renameat2",
    "linkat",
    "unlink",
    "unlinkat",
    "fsync",
    "fdatasync",
    "mkdir",
    "close",
];

/// An empty test directory named after `what`.
fn fresh_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("b2f-crash-{what}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs test `child` on a fresh copy of `pristine` (named by env var `path_var`, with `env`
/// besides), killed at its K-th call of each of `SYSCALLS` in turn, K = 1, 2, ... until it
/// runs to completion; `check(copy, kill point, finished)` judges the copy after each run.
fn sweep_kills(
    dir: &Path,
    pristine: &Path,
    child: &str,
    path_var: &str,
    env: &[(&str, &str)],
    mut check: impl FnMut(&Path, &str, bool),
) {
    for syscall in SYSCALLS {
        for k in 1..200 {
            let path = dir.join(format!("run-{syscall}-{k}.b2nd"));
            copy_tree(pristine, &path);
            let mut vars = vec![(path_var, path.as_os_str())];
            vars.extend(env.iter().map(|&(n, v)| (n, std::ffi::OsStr::new(v))));
            let out = run_killed(syscall, k, child, &vars);
            check(
                &path,
                &format!("kill at {syscall} {k}"),
                out.status.success(),
            );
            let _ = std::fs::remove_dir_all(&path);
            let _ = std::fs::remove_file(&path);
            if out.status.success() {
                break;
            }
        }
    }
}

/// A fresh test directory named after `what`, holding a frame in the initial state.
fn pristine_frame(what: &str, contiguous: bool, tiny: bool) -> (PathBuf, PathBuf) {
    let dir = fresh_dir(what);
    let pristine = dir.join("pristine.b2frame");
    let s = SChunk::create(Some(&pristine), &options(contiguous, tiny)).unwrap();
    build(&s, &initial_state(tiny));
    (dir, pristine)
}

/// `sync`: the writer syncs every commit, which adds fsyncs and, around each rename, a second
/// name for the file it replaces.
fn kill_at_every_write(contiguous: bool, tiny: bool, sync: bool) {
    let (dir, pristine) = pristine_frame(&format!("{contiguous}-{tiny}-{sync}"), contiguous, tiny);
    let all = states(tiny);
    let mut kills = vec![];
    let mut writes = 0;
    for syscall in SYSCALLS {
        let n = kill_at_every_call(syscall, &dir, &pristine, &all, (tiny, sync));
        kills.push(format!("{syscall} {n}"));
        if syscall.contains("write") {
            writes += n;
        }
    }
    assert!(writes > 10, "only {writes} kill points at writes");
    eprintln!(
        "{} frame{}: killed at every call of each system call, then ran to completion: {}",
        if contiguous { "contiguous" } else { "sparse" },
        if sync { " (synced)" } else { "" },
        kills.join(", ")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Runs this test binary's test `child` with `env`, killed at its `k`-th call of `syscall`.
fn run_killed(
    syscall: &str,
    k: usize,
    child: &str,
    env: &[(&str, &std::ffi::OsStr)],
) -> std::process::Output {
    Command::new("strace")
        .args(["-f", "-qq", "-o", "/dev/null", "-e"])
        .arg(format!("trace={syscall}"))
        .arg("-e")
        .arg(format!("inject={syscall}:signal=KILL:when={k}"))
        .arg(std::env::current_exe().unwrap())
        .args(["--exact", child, "--test-threads=1", "--nocapture", "-q"])
        .envs(env.iter().copied())
        .output()
        .expect("run strace (is it installed?)")
}

/// Kills the writer at the K-th call of `syscall`, for K = 1, 2, ... until it runs to
/// completion; checks the frame after each kill. Returns the number of kills.
fn kill_at_every_call(
    syscall: &str,
    dir: &Path,
    pristine: &Path,
    all: &[State],
    (tiny, sync): (bool, bool),
) -> usize {
    for k in 1..2000 {
        let path: PathBuf = dir.join(format!("run-{syscall}-{k}.b2frame"));
        let log = dir.join(format!("run-{syscall}-{k}.log"));
        copy_tree(pristine, &path);
        let sync_env = if sync { "1" } else { "" };
        let out = run_killed(
            syscall,
            k,
            "crash_writer_child",
            &[
                ("B2F_CRASH_WRITER", path.as_os_str()),
                ("B2F_CRASH_LOG", log.as_os_str()),
                ("B2F_CRASH_TINY", if tiny { "1" } else { "" }.as_ref()),
                ("B2F_CRASH_SYNC", sync_env.as_ref()),
            ],
        );
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
            "kill at {syscall} {k}: {logged} calls had returned, but the frame holds {} chunks / {} vlmeta that match no state",
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
            if tiny {
                assert_ids_within_chunk_bytes(&path);
            }
            let _ = std::fs::remove_dir_all(&path);
            let _ = std::fs::remove_file(&path);
            return k - 1;
        }
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
    }
    panic!("the writer never ran to completion ({syscall})");
}

#[test]
fn contiguous_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(true, false, false);
}

#[test]
fn sparse_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(false, false, false);
}

#[test]
fn sparse_frames_moving_chunk_files_survive_a_kill_at_every_write() {
    kill_at_every_write(false, true, false);
}

#[test]
fn synced_contiguous_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(true, false, true);
}

#[test]
fn synced_sparse_frames_survive_a_kill_at_every_write() {
    kill_at_every_write(false, false, true);
}

fn new_array_meta() -> b2frame::ndim::NdMeta {
    b2frame::ndim::NdMeta {
        version: 0,
        shape: vec![30, 20],
        chunkshape: vec![10, 10],
        blockshape: vec![5, 5],
        dtype_format: 0,
        dtype: Some("<f8".into()),
    }
}

/// The child of `creating_over_a_frame_...`: an n-dim array created where a frame is.
#[test]
fn crash_creator_child() {
    let (Ok(path), Ok(contiguous)) = (
        std::env::var("B2F_CRASH_CREATOR"),
        std::env::var("B2F_CRASH_CONTIGUOUS"),
    ) else {
        return; // not the child
    };
    let opts = CreateOptions {
        contiguous: contiguous == "1",
        sync: true,
        ..options(true, false)
    };
    b2frame::ndim::slice::create(Some(Path::new(&path)), &opts, &new_array_meta()).unwrap();
}

/// Creating an array over an existing frame, killed at each file-changing system call in
/// turn: the path holds the old frame whole or the new array whole (its 6 chunks of zeros),
/// never a part of either.
fn kill_creator_at_every_call(contiguous: bool) {
    let (dir, pristine) = pristine_frame(&format!("create-{contiguous}"), contiguous, false);
    let (mut old, mut new) = (0, 0);
    let env = [("B2F_CRASH_CONTIGUOUS", if contiguous { "1" } else { "0" })];
    sweep_kills(
        &dir,
        &pristine,
        "crash_creator_child",
        "B2F_CRASH_CREATOR",
        &env,
        |path, at, _| {
            let s = SChunk::open(path, false)
                .unwrap_or_else(|e| panic!("{at}: no frame at the path: {e}"));
            match b2frame::ndim::Array::open(&s) {
                Ok(a) => {
                    assert_eq!(a.meta, new_array_meta(), "{at}");
                    let mut all = vec![0xAAu8; 30 * 20 * 8];
                    a.get_slice(&[0, 0], &[30, 20], &mut all).unwrap();
                    assert!(all.iter().all(|&b| b == 0), "{at}");
                    new += 1;
                }
                Err(_) => {
                    assert_eq!(read_state(path), initial_state(false), "{at}");
                    old += 1;
                }
            }
        },
    );
    assert!(
        old > 5 && new > 5,
        "{old} kills left the old frame, {new} the new array"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn creating_over_a_contiguous_frame_survives_a_kill_at_every_write() {
    kill_creator_at_every_call(true);
}

#[test]
fn creating_over_a_sparse_frame_survives_a_kill_at_every_write() {
    // One directory replaces another atomically only where the file system exchanges them.
    let probe = std::env::temp_dir().join(format!("b2f-exchange-{}", std::process::id()));
    let (a, b) = (probe.join("a"), probe.join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let exchanges = rustix::fs::renameat_with(
        rustix::fs::CWD,
        &a,
        rustix::fs::CWD,
        &b,
        rustix::fs::RenameFlags::EXCHANGE,
    )
    .is_ok();
    std::fs::remove_dir_all(&probe).unwrap();
    if !exchanges {
        eprintln!("skipped: the file system of the temporary directory cannot exchange names");
        return;
    }
    kill_creator_at_every_call(false);
}

/// The child of `slab_writes_...`: one slab over all six chunks of an array of zeros.
#[test]
fn crash_slab_writer_child() {
    let Ok(path) = std::env::var("B2F_CRASH_SLAB") else {
        return; // not the child
    };
    let s = SChunk::open(Path::new(&path), true).unwrap();
    let a = b2frame::ndim::Array::open(&s).unwrap();
    let values: Vec<u8> = (1..=600u32)
        .flat_map(|v| f64::from(v).to_le_bytes())
        .collect();
    a.set_slice(&[0, 0], &[30, 20], &values).unwrap();
}

/// A slab written over several chunks, killed at each file-changing system call in turn:
/// the array holds the slab all as it was (zeros) or all written, every chunk whole.
fn kill_slab_writer_at_every_call(contiguous: bool) {
    let dir = fresh_dir(&format!("slab-{contiguous}"));
    let pristine = dir.join("pristine.b2nd");
    let opts = CreateOptions {
        contiguous,
        ..options(true, false)
    };
    b2frame::ndim::slice::create(Some(&pristine), &opts, &new_array_meta()).unwrap();
    let (mut old_states, mut new_states) = (0, 0);
    sweep_kills(
        &dir,
        &pristine,
        "crash_slab_writer_child",
        "B2F_CRASH_SLAB",
        &[],
        |path, at, finished| {
            let s = SChunk::open(path, false)
                .unwrap_or_else(|e| panic!("{at}: the array no longer opens: {e}"));
            let a = b2frame::ndim::Array::open(&s).unwrap();
            let mut all = vec![0u8; 30 * 20 * 8];
            a.get_slice(&[0, 0], &[30, 20], &mut all)
                .unwrap_or_else(|e| panic!("{at}: {e}"));
            let item = |r: usize, c: usize| {
                f64::from_le_bytes(all[(r * 20 + c) * 8..][..8].try_into().unwrap())
            };
            let mut written = 0;
            for (cr, cc) in (0..3).flat_map(|r| (0..2).map(move |c| (r, c))) {
                let cells: Vec<(usize, usize)> = (cr * 10..cr * 10 + 10)
                    .flat_map(|r| (cc * 10..cc * 10 + 10).map(move |c| (r, c)))
                    .collect();
                let new = cells
                    .iter()
                    .all(|&(r, c)| item(r, c) == (r * 20 + c + 1) as f64);
                let old = cells.iter().all(|&(r, c)| item(r, c) == 0.0);
                assert!(new || old, "{at}: chunk ({cr}, {cc}) is torn");
                written += usize::from(new);
            }
            assert!(
                written == 0 || written == 6,
                "{at}: {written} of 6 chunks written"
            );
            old_states += usize::from(written == 0);
            new_states += usize::from(written == 6);
            if finished {
                assert_eq!(written, 6, "the writer finished: every chunk written");
            }
        },
    );
    assert!(
        old_states > 5 && new_states > 5,
        "{old_states} kills left the slab unwritten, {new_states} written"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn slab_writes_to_a_contiguous_array_survive_a_kill_at_every_write() {
    kill_slab_writer_at_every_call(true);
}

#[test]
fn slab_writes_to_a_sparse_array_survive_a_kill_at_every_write() {
    kill_slab_writer_at_every_call(false);
}
