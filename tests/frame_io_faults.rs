//! I/O faults: a disk that fills up (ENOSPC) or fails (EIO) at each write-type system call of a
//! writer in turn (strace injects the error at the K-th call of one of `SYSCALLS`, for K = 1,
//! 2, ..., and each of them in turn). The call that meets the fault returns an I/O error; the
//! frame — on disk and through the same handle — stays exactly as it was before that call, and
//! later calls work.
//!
//! The writer is this test binary itself, re-run with `B2F_FAULT_WRITER` set.

use std::path::Path;
use std::process::Command;

use b2frame::chunk::{CParams, SpecialValue};
use b2frame::schunk::{CreateOptions, SChunk};
use b2frame::Error;

const CHUNK: usize = 4000;
/// The library writes files only with positional writes; plain `write` is left alone so the
/// test harness can still print. Each is swept on its own: strace counts invocations per system
/// call, so `when=K` over a set would fault the K-th call of whichever comes first and skip the
/// calls of the others in between.
const SYSCALLS: [&str; 7] = [
    "pwrite64",
    "pwritev",
    "ftruncate",
    "rename",
    "fsync",
    "fdatasync",
    "mkdir",
];

fn data(k: u32) -> Vec<u8> {
    (0..CHUNK as u32 / 4)
        .flat_map(|i| (i / 5 + k * 100).to_le_bytes())
        .collect()
}

/// Chunks and vlmetalayers: what a frame holds.
#[derive(Clone, Debug, PartialEq)]
struct State {
    chunks: Vec<Vec<u8>>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn state_of(s: &SChunk) -> State {
    State {
        chunks: (0..s.nchunks() as i64)
            .map(|i| s.get_chunk_vec(i).unwrap())
            .collect(),
        vlmeta: s
            .vlmeta_names()
            .into_iter()
            .map(|n| {
                let v = s.vlmeta_get(&n, 1 << 20).unwrap();
                (n, v)
            })
            .collect(),
    }
}

/// Adds or replaces the "note" vlmetalayer in the model.
fn set_note(m: &mut State, value: &[u8]) {
    m.vlmeta.retain(|(n, _)| n != "note");
    m.vlmeta.push(("note".into(), value.to_vec()));
}

type Op = (
    &'static str,
    fn(&SChunk) -> Result<(), Error>,
    fn(&mut State),
);

fn ops() -> Vec<Op> {
    vec![
        (
            "append",
            |s| s.append(&data(10)).map(drop),
            |m| m.chunks.push(data(10)),
        ),
        (
            "append",
            |s| s.append(&data(11)).map(drop),
            |m| m.chunks.push(data(11)),
        ),
        (
            "insert",
            |s| s.insert(1, &data(12)).map(drop),
            |m| m.chunks.insert(1, data(12)),
        ),
        (
            "update",
            |s| s.update(0, &data(13)),
            |m| m.chunks[0] = data(13),
        ),
        ("delete", |s| s.delete(2), |m| drop(m.chunks.remove(2))),
        (
            "vlmeta_set",
            |s| s.vlmeta_set("note", b"first"),
            |m| set_note(m, b"first"),
        ),
        (
            "vlmeta_set",
            |s| s.vlmeta_set("note", b"second"),
            |m| set_note(m, b"second"),
        ),
        (
            "reorder",
            |s| {
                let mut order: Vec<i64> = (0..s.nchunks() as i64).collect();
                order.swap(0, 1);
                s.reorder(&order)
            },
            |m| m.chunks.swap(0, 1),
        ),
        (
            "fill_special",
            |s| {
                s.fill_special(2 * CHUNK as i64 / 4, SpecialValue::Zero)
                    .map(drop)
            },
            |m| m.chunks.extend([vec![0u8; CHUNK], vec![0u8; CHUNK]]),
        ),
        (
            "vlmeta_delete",
            |s| s.vlmeta_delete("note"),
            |m| m.vlmeta.clear(),
        ),
    ]
}

fn options(contiguous: bool) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize: CHUNK as i32,
        params: CParams {
            typesize: 4,
            ..CParams::default()
        },
        sync: true,
    }
}

/// The child: runs every operation; the one that meets the injected fault must fail with an
/// I/O error and change nothing. Prints how many operations failed.
#[test]
fn io_fault_writer_child() {
    let Ok(path) = std::env::var("B2F_FAULT_WRITER") else {
        return; // not the child
    };
    let path = Path::new(&path);
    let s = SChunk::open(path, true).unwrap();
    let mut model = state_of(&s);
    let mut failed = 0;
    for (name, op, apply) in ops() {
        match op(&s) {
            Ok(()) => apply(&mut model),
            Err(e @ Error::Io { .. }) => {
                failed += 1;
                eprintln!("{name}: {e}");
            }
            Err(e) => panic!("{name} failed with the wrong kind of error: {e:?}"),
        }
        assert_eq!(
            state_of(&s),
            model,
            "after {name}: the handle holds something else"
        );
        let fresh = SChunk::open(path, false).unwrap_or_else(|e| panic!("after {name}: {e}"));
        assert_eq!(
            state_of(&fresh),
            model,
            "after {name}: the file holds something else"
        );
    }
    println!("B2F_FAULTS {failed}");
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

fn fault_at_every_write(contiguous: bool, errno: &str) {
    let dir = std::env::temp_dir().join(format!(
        "b2f-faults-{}-{contiguous}-{errno}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pristine = dir.join("pristine.b2frame");
    {
        let s = SChunk::create(Some(&pristine), &options(contiguous)).unwrap();
        for k in 0..3 {
            s.append(&data(k)).unwrap();
        }
    }
    let mut faults = vec![];
    let mut writes = 0;
    for syscall in SYSCALLS {
        let n = fault_at_every_call(syscall, errno, &dir, &pristine);
        faults.push(format!("{syscall} {n}"));
        if syscall.contains("write") {
            writes += n;
        }
    }
    assert!(writes > 10, "only {writes} fault points at writes");
    eprintln!(
        "{} frame, {errno}: each fault left the frame as it was; fault points: {}",
        if contiguous { "contiguous" } else { "sparse" },
        faults.join(", ")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Faults the K-th call of `syscall` with `errno`, for K = 1, 2, ... until the writer runs
/// without a fault. Returns the number of faults.
fn fault_at_every_call(syscall: &str, errno: &str, dir: &Path, pristine: &Path) -> usize {
    let exe = std::env::current_exe().unwrap();
    for k in 1..3000 {
        let path = dir.join(format!("run-{syscall}-{k}.b2frame"));
        copy_tree(pristine, &path);
        let out = Command::new("strace")
            .args(["-f", "-qq", "-o", "/dev/null", "-e"])
            .arg(format!("trace={syscall}"))
            .arg("-e")
            .arg(format!("inject={syscall}:error={errno}:when={k}"))
            .arg(&exe)
            .args([
                "--exact",
                "io_fault_writer_child",
                "--test-threads=1",
                "--nocapture",
                "-q",
            ])
            .env("B2F_FAULT_WRITER", &path)
            .output()
            .expect("run strace (is it installed?)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "fault at {syscall} {k} ({errno}): the writer failed\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let failed: usize = stdout
            .lines()
            .find_map(|l| l.strip_prefix("B2F_FAULTS "))
            .and_then(|n| n.trim().parse().ok())
            .expect("the child's report");
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        if failed == 0 {
            // K is past the last call: every operation ran.
            return k - 1;
        }
    }
    panic!("the writer never ran without a fault ({syscall})");
}

#[test]
fn contiguous_frames_survive_disk_full_at_every_write() {
    fault_at_every_write(true, "ENOSPC");
}

#[test]
fn sparse_frames_survive_disk_full_at_every_write() {
    fault_at_every_write(false, "ENOSPC");
}

#[test]
fn contiguous_frames_survive_io_errors_at_every_write() {
    fault_at_every_write(true, "EIO");
}
