//! I/O faults: a disk that fills up (ENOSPC) or fails (EIO) at each write-type system call of a
//! writer in turn (strace injects the error at the K-th call of one of `SYSCALLS`, for K = 1,
//! 2, ..., and each of them in turn). The call that meets the fault returns an I/O error; the
//! frame — on disk and through the same handle — stays exactly as it was before that call, and
//! later calls work. A fault in the compaction that follows a commit fails nothing: the change
//! stands, dead space and all.
//!
//! The writer is this test binary itself, re-run with `B2F_FAULT_WRITER` set.

use std::path::Path;
use std::process::Command;

use b2frame::chunk::{CParams, SpecialValue};
use b2frame::schunk::{CreateOptions, OpenOptions, SChunk};
use b2frame::Error;

const CHUNK: usize = 4000;
/// The library writes files only with positional writes; plain `write` is left alone so the
/// test harness can still print. Each is swept on its own: strace counts invocations per system
/// call, so `when=K` over a set would fault the K-th call of whichever comes first and skip the
/// calls of the others in between.
const SYSCALLS: [&str; 9] = [
    "pwrite64",
    "pwritev",
    "ftruncate",
    "rename",
    "link",
    "linkat",
    "fsync",
    "fdatasync",
    "mkdir",
];

/// One run of the sweep.
#[derive(Clone, Copy, Debug)]
struct Case {
    contiguous: bool,
    errno: &'static str,
    /// Big chunks whose updates end in compactions (`compaction_ops`).
    compaction: bool,
    /// The writer syncs every commit (`OpenOptions::sync`): fsync and fdatasync fail too.
    sync: bool,
}

/// Chunks of the compaction run: incompressible, so that a few updates leave more dead space
/// than live data and the frame is rewritten.
const BIG: usize = 400_000;

/// Chunk `k`: compressible and CHUNK bytes below 100, incompressible and BIG bytes from 100.
fn data(k: u32) -> Vec<u8> {
    if k >= 100 {
        let mut x = u64::from(k).wrapping_mul(0x9E37_79B9_7F4A_7C15) + 1;
        return (0..BIG / 8)
            .flat_map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x.to_le_bytes()
            })
            .collect();
    }
    (0..CHUNK as u32 / 4)
        .flat_map(|i| (i / 5 + k * 100).to_le_bytes())
        .collect()
}

/// Chunks, metalayers and vlmetalayers: what a frame holds.
#[derive(Clone, Debug, PartialEq)]
struct State {
    chunks: Vec<Vec<u8>>,
    meta: Vec<(String, Vec<u8>)>,
    vlmeta: Vec<(String, Vec<u8>)>,
}

fn state_of(s: &SChunk) -> State {
    State {
        chunks: (0..s.nchunks() as i64)
            .map(|i| s.get_chunk_vec(i).unwrap())
            .collect(),
        meta: s
            .meta_names()
            .into_iter()
            .map(|n| {
                let v = s.meta_get(&n).unwrap();
                (n, v)
            })
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
            // Two chunks in one commit (an n-dim slab write).
            "update_chunks",
            |s| {
                let ctx = s.context();
                let (a, b) = (
                    ctx.compress_to_vec(&data(16))?,
                    ctx.compress_to_vec(&data(17))?,
                );
                s.update_chunks(&[(0, &a), (1, &b)])
            },
            |m| m.chunks[..2].clone_from_slice(&[data(16), data(17)]),
        ),
        (
            "meta_update",
            |s| s.meta_update("fixed", b"version 2"),
            |m| m.meta[0].1 = b"version 2".to_vec(),
        ),
        // The dead bytes of the replaced and removed chunks: a contiguous frame is rewritten.
        ("compact", |s| s.compact(), |_| ()),
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
            // Larger than the chunksize: to variable-length chunks, the zeros stored first.
            "append",
            |s| s.append(&[data(14), data(15)].concat()).map(drop),
            |m| m.chunks.push([data(14), data(15)].concat()),
        ),
        (
            "vlmeta_delete",
            |s| s.vlmeta_delete("note"),
            |m| m.vlmeta.clear(),
        ),
    ]
}

/// Updates of big chunks: the last ones find more dead space than live data, so the frame is
/// compacted right after they commit. A compaction that fails must not fail the update.
fn compaction_ops() -> Vec<Op> {
    vec![
        (
            "update",
            |s| s.update(0, &data(110)),
            |m| m.chunks[0] = data(110),
        ),
        (
            "update",
            |s| s.update(1, &data(111)),
            |m| m.chunks[1] = data(111),
        ),
        (
            "update",
            |s| s.update(0, &data(112)),
            |m| m.chunks[0] = data(112),
        ),
        (
            "update",
            |s| s.update(1, &data(113)),
            |m| m.chunks[1] = data(113),
        ),
        (
            "append",
            |s| s.append(&data(114)).map(drop),
            |m| m.chunks.push(data(114)),
        ),
        (
            "update",
            |s| s.update(2, &data(115)),
            |m| m.chunks[2] = data(115),
        ),
        (
            "update",
            |s| s.update(0, &data(116)),
            |m| m.chunks[0] = data(116),
        ),
    ]
}

fn options(contiguous: bool, chunksize: usize) -> CreateOptions {
    CreateOptions {
        contiguous,
        chunksize: chunksize as i32,
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
    let flag = |name: &str| std::env::var(name).as_deref() == Ok("1");
    let opts = OpenOptions {
        writable: true,
        sync: flag("B2F_FAULT_SYNC"),
        ..OpenOptions::default()
    };
    let s = SChunk::open_with(path, &opts).unwrap();
    let mut model = state_of(&s);
    let mut failed = 0;
    let compaction = flag("B2F_FAULT_COMPACTION");
    for (name, op, apply) in if compaction { compaction_ops() } else { ops() } {
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

fn fault_at_every_write(case: Case) {
    let Case {
        contiguous,
        errno,
        compaction,
        sync,
    } = case;
    let dir = std::env::temp_dir().join(format!(
        "b2f-faults-{}-{contiguous}-{errno}-{compaction}-{sync}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let pristine = dir.join("pristine.b2frame");
    {
        let (first, len) = if compaction { (100, BIG) } else { (0, CHUNK) };
        let s = SChunk::create(Some(&pristine), &options(contiguous, len)).unwrap();
        s.meta_add("fixed", b"version 1").unwrap();
        for k in first..first + 3 {
            s.append(&data(k)).unwrap();
        }
    }
    let mut faults = vec![];
    let mut writes = 0;
    for syscall in SYSCALLS {
        let n = fault_at_every_call(syscall, case, &dir, &pristine);
        faults.push(format!("{syscall} {n}"));
        if syscall.contains("write") {
            writes += n;
        }
    }
    assert!(writes > 10, "only {writes} fault points at writes");
    eprintln!(
        "{case:?}: each fault left the frame as it was; fault points: {}",
        faults.join(", ")
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Faults the K-th call of `syscall` with `errno`, for K = 1, 2, ... until the writer runs
/// without a fault. Returns the number of faults.
fn fault_at_every_call(syscall: &str, case: Case, dir: &Path, pristine: &Path) -> usize {
    let errno = case.errno;
    let flag = |on: bool| if on { "1" } else { "" };
    // How many calls there are, from a run without faults: a fault that only meets the
    // compaction fails no operation, so the operations' failures cannot tell when K is past
    // the last call.
    let trace = dir.join(format!("trace-{syscall}"));
    let run = |k: usize, strace_args: &[String]| {
        let path = dir.join(format!("run-{syscall}-{k}.b2frame"));
        copy_tree(pristine, &path);
        let out = Command::new("strace")
            .args(["-f", "-qq"])
            .args(strace_args)
            .arg(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "io_fault_writer_child",
                "--test-threads=1",
                "--nocapture",
                "-q",
            ])
            .env("B2F_FAULT_WRITER", &path)
            .env("B2F_FAULT_COMPACTION", flag(case.compaction))
            .env("B2F_FAULT_SYNC", flag(case.sync))
            .output()
            .expect("run strace (is it installed?)");
        assert!(
            out.status.success(),
            "fault at {syscall} {k} ({errno}): the writer failed\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_dir_all(&path);
        let _ = std::fs::remove_file(&path);
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .find_map(|l| l.strip_prefix("B2F_FAULTS "))
            .and_then(|n| n.trim().parse::<usize>().ok())
            .expect("the child's report")
    };
    let failed = run(
        0,
        &[
            "-o".into(),
            trace.display().to_string(),
            "-e".into(),
            format!("trace={syscall}"),
        ],
    );
    assert_eq!(failed, 0, "{syscall}: an operation failed without a fault");
    let calls = std::fs::read_to_string(&trace)
        .unwrap()
        .lines()
        .filter(|l| l.contains(&format!("{syscall}(")))
        .count();
    for k in 1..=calls {
        run(
            k,
            &[
                "-o".into(),
                "/dev/null".into(),
                "-e".into(),
                format!("trace={syscall}"),
                "-e".into(),
                format!("inject={syscall}:error={errno}:when={k}"),
            ],
        );
    }
    calls
}

fn case(contiguous: bool, errno: &'static str) -> Case {
    Case {
        contiguous,
        errno,
        compaction: false,
        sync: false,
    }
}

#[test]
fn contiguous_frames_survive_disk_full_at_every_write() {
    fault_at_every_write(case(true, "ENOSPC"));
}

#[test]
fn sparse_frames_survive_disk_full_at_every_write() {
    fault_at_every_write(case(false, "ENOSPC"));
}

#[test]
fn contiguous_frames_survive_io_errors_at_every_write() {
    fault_at_every_write(case(true, "EIO"));
}

#[test]
fn compaction_that_meets_a_full_disk_leaves_the_commit_before_it() {
    fault_at_every_write(Case {
        compaction: true,
        ..case(true, "ENOSPC")
    });
}

/// With sync, a failed fsync or fdatasync (the commit not known to be on disk) fails the call
/// and the commit is undone: the old header written back, the old index file renamed back.
#[test]
fn synced_contiguous_frames_undo_a_commit_whose_sync_fails() {
    fault_at_every_write(Case {
        sync: true,
        ..case(true, "EIO")
    });
}

#[test]
fn synced_sparse_frames_undo_a_commit_whose_sync_fails() {
    fault_at_every_write(Case {
        sync: true,
        ..case(false, "EIO")
    });
}

#[test]
fn synced_compaction_that_fails_leaves_the_commit_before_it() {
    fault_at_every_write(Case {
        compaction: true,
        sync: true,
        ..case(true, "EIO")
    });
}
