"""Random write sequences on frames and arrays, checked against a model of their content.

The writes (random_writes.py): append, append_chunk, insert, update, delete and reorder
chunks of any length (full, short, longer than the chunksize, empty), special fills,
vlmetalayers set and deleted, metalayers updated; on arrays, slab writes and vlmetalayers.
Frames are contiguous or sparse, in files or in memory, synced or not; a sequence goes on
now and then through another handle (reopened, saved as the other kind, copied to memory,
copied into a file after other bytes and opened at their offset).

- test_write_sequences_match_the_model: after every write the handle holds the model's
  content (a refused write leaves it as it was), and the reopened frame too. c-blosc2 then
  reads the frame as the model has it and edits it further (appends, inserts, deletes): where
  it reads back its edits of a frame it built from the same chunks, it reads back its edits
  of ours, and b2frame reads them as it does.
- test_*_killed_at_every_write: the writer is killed at its K-th call of each system call
  that changes files, K = 1, 2, ... until it finishes. After each kill the frame opens and
  holds the content after the last write that returned, or after the next one; c-blosc2
  reads that content; the frame takes another write, and both libraries read it.

B2F_RANDOM_WRITES_SEEDS sets the number of sequences (default 300), B2F_RANDOM_KILL_SEEDS
the number of killed writers of each kind (default 3 frames and 6 arrays: a few hundred kills
each), B2F_RANDOM_WRITES_FIRST_SEED the first seed (default 0).
"""

import copy
import itertools
import os
import shutil
import subprocess
import sys

import blosc2
import msgpack
import numpy as np
import pytest

import b2frame
import random_writes as rw

FIRST = int(os.environ.get("B2F_RANDOM_WRITES_FIRST_SEED", "0"))
SEQUENCE_SEEDS = range(FIRST, FIRST + int(os.environ.get("B2F_RANDOM_WRITES_SEEDS", "300")))
KILLS = os.environ.get("B2F_RANDOM_KILL_SEEDS")
FRAME_KILL_SEEDS = range(FIRST, FIRST + int(KILLS or 3))
ARRAY_KILL_SEEDS = range(FIRST, FIRST + int(KILLS or 6))
# System calls that change files, each swept on its own (strace counts calls per system call).
SYSCALLS = ["write", "pwrite64", "pwritev", "ftruncate", "rename", "renameat2", "linkat",
            "unlink", "unlinkat", "fsync", "fdatasync"]
READ_WRITE = b2frame.READ | b2frame.WRITE


def remove(path):
    if path.is_dir():
        shutil.rmtree(path)
    elif path.exists():
        path.unlink()


def copy_frame(src, dst):
    remove(dst)
    if src.is_dir():
        shutil.copytree(src, dst)
    else:
        shutil.copy(src, dst)


def new_frame_model(metas=(), chunks=(), vlmetas=()):
    return dict(meta=dict(metas), chunks=list(chunks), vlmeta=dict(vlmetas))


def create_frame(path, case, seed):
    """The seed's frame before its writes (path None: in memory), and its model."""
    metas, chunks, vlmetas = rw.frame_initial(seed, case)
    f = b2frame.Frame.create(path, contiguous=case["contiguous"], chunksize=case["chunksize"],
                             typesize=case["typesize"], codec=case["codec"],
                             clevel=case["clevel"], nthreads=case["nthreads"])
    for name, content in metas:
        f.meta_add(name, content)
    for c in chunks:
        f.append(c)
    for name, content in vlmetas:
        f.vlmeta_set(name, content)
    return f, new_frame_model(metas, chunks, vlmetas)


def apply_checked(f, w, case, m, where):
    """Applies write w to handle f and, if f takes it, to model m; checks f against m."""
    try:
        rw.write_frame(f, w, case)
    except b2frame.Error as e:
        assert e.status in rw.REFUSALS, f"{where}: {w[0]}: {e}"
    else:
        rw.model_frame(m, w, case)
    assert rw.frame_matches(rw.frame_state(f), m), f"{where}: {w[0]}: the frame is not the model"


def read_frame(path, offset=0):
    with b2frame.Frame.open(path, offset=offset) as f:
        return rw.frame_state(f)


def read_frame_info(path):
    with b2frame.Frame.open(path) as f:
        return f.info()


def ids_c_blosc2_refuses(path):
    """Whether a sparse frame names a chunk file with an id above its chunk bytes - 32, which
    c-blosc2 refuses on opening."""
    ids = [int(p.stem, 16) for p in path.glob("*.chunk")]
    return bool(ids) and max(ids) > read_frame_info(path).cbytes - 32


def c_blosc2_reads_frame(path, m, where, offset=0):
    s = blosc2.open(str(path), mode="r", offset=offset)
    assert s.nchunks == len(m["chunks"]), f"{where}: c-blosc2's nchunks"
    for i, want in enumerate(m["chunks"]):
        got = s.decompress_chunk(i)
        assert (len(got) == want if isinstance(want, int) else got == want), \
            f"{where}: c-blosc2 reads chunk {i} otherwise"
    for name, content in m["meta"].items():
        assert s.meta[name] == msgpack.unpackb(content), f"{where}: metalayer {name}"
    assert s.vlmeta.getall() == {n: msgpack.unpackb(c) for n, c in m["vlmeta"].items()}, \
        f"{where}: vlmetalayers"


def c_blosc2_edits(path, seed, case):
    """c-blosc2 appends, inserts and deletes chunks in the frame at path: the chunks it
    holds after, or None where c-blosc2 fails to edit or to read back."""
    r = np.random.default_rng([seed, 7])
    try:
        s = blosc2.open(str(path), mode="a")
        for _ in range(r.integers(1, 5)):
            n = s.nchunks
            length = case["chunksize"]
            if r.random() < 0.2:
                length = int(r.integers(1, length + 1))
            chunk = rw.data(int(r.integers(1 << 32)), length)
            what = r.random()
            if what < 0.4 or n < 2:
                s.append_data(chunk)
            elif what < 0.7:
                s.delete_chunk(int(r.integers(1, n)))
            else:
                s.insert_data(int(r.integers(1, n + 1)), chunk, copy=True)
        del s
        s = blosc2.open(str(path), mode="r")
        return [s.decompress_chunk(i) for i in range(s.nchunks)]
    except RuntimeError:
        return None


@pytest.mark.parametrize("seed", SEQUENCE_SEEDS)
def test_write_sequences_match_the_model(tmp_path, seed):
    case = rw.frame_case(seed)
    case["sync"] = False
    in_memory = case["contiguous"] and seed % 4 == 0
    path = tmp_path / "f.b2frame"
    f, m = create_frame(None if in_memory else path, case, seed)
    writes = rw.frame_writes(seed, case, n=5 + seed % 36)
    handles = np.random.default_rng([seed, 3])
    prefix = b""  # bytes before an embedded frame (opened at their length as offset)
    for k, w in enumerate(writes):
        apply_checked(f, w, case, m, f"write {k}")
        if not in_memory and k % 3 == 2:
            assert rw.frame_matches(read_frame(path, len(prefix)), m), f"write {k}: reopened"
        # Now and then the writes go on through another handle: the frame reopened, a copy
        # saved as the other kind of frame, an in-memory copy, or a copy after other bytes
        # in a file.
        turn = handles.random()
        if turn < 0.05 and not in_memory:
            f.close()
            f = b2frame.Frame.open(path, READ_WRITE, offset=len(prefix))
        elif turn < 0.1:
            copy_path = tmp_path / f"copy{k}.b2frame"
            f.save(copy_path, contiguous=not case["contiguous"])
            f.close()
            case = dict(case, contiguous=copy_path.is_file())
            path, in_memory, prefix = copy_path, False, b""
            f = b2frame.Frame.open(path, READ_WRITE)
        elif turn < 0.15 and case["contiguous"]:
            buffer = f.to_buffer()
            f.close()
            f, in_memory = b2frame.Frame.from_buffer(buffer, READ_WRITE), True
            path, prefix = tmp_path / f"memory{k}.b2frame", b""  # written there at the end
        elif turn < 0.2 and case["contiguous"]:
            buffer = f.to_buffer()
            f.close()
            prefix = rw.data(k, int(handles.integers(1, 5000)))
            path, in_memory = tmp_path / f"embedded{k}.bin", False
            path.write_bytes(prefix + buffer)
            f = b2frame.Frame.open(path, READ_WRITE, offset=len(prefix))
        assert rw.frame_matches(rw.frame_state(f), m), f"write {k}: another handle"
    if in_memory:
        path.write_bytes(f.to_buffer())
    f.close()
    if prefix:
        content = path.read_bytes()
        assert content.startswith(prefix), "the bytes before an embedded frame changed"
        assert rw.frame_matches(read_frame(path, len(prefix)), m), "embedded, reopened"
        c_blosc2_reads_frame(path, m, "c-blosc2, embedded", len(prefix))
        path = tmp_path / "extracted.b2frame"
        path.write_bytes(content[len(prefix):])
    assert rw.frame_matches(read_frame(path), m), "reopened"
    c_blosc2_reads_frame(path, m, "c-blosc2")

    if any(isinstance(c, int) for c in m["chunks"]):
        return  # uninitialized chunks: their content is whatever each read leaves
    if not m["chunks"]:
        return  # c-blosc2's empty frames record no chunksize (README): edits differ
    # c-blosc2 edits a frame it builds from the same chunks with the same parameters (it
    # compresses new chunks with those of the frame's header), then ours.
    twin = tmp_path / "twin.b2frame"
    with b2frame.Frame.open(path) as f:
        raw = [f.chunk_raw(i) for i in range(f.nchunks)]
        chunksize = f.info().chunksize
    s = blosc2.SChunk(chunksize=chunksize, contiguous=case["contiguous"], urlpath=str(twin),
                      mode="w", cparams=blosc2.open(str(path)).cparams)
    for i, chunk in enumerate(raw):
        s.insert_chunk(i, chunk)
    del s
    theirs = c_blosc2_edits(twin, seed, case)
    if theirs is None:
        return  # c-blosc2 cannot edit its own frame (README, "Where b2frame and c-blosc2 differ")
    ours = c_blosc2_edits(path, seed, case)
    if ours is None and ids_c_blosc2_refuses(path):
        return  # its deletes left an id it refuses (README, "Where b2frame and c-blosc2 differ")
    assert ours == theirs, "c-blosc2 edits b2frame's frame otherwise than its own"
    assert read_frame(path)["chunks"] == ours, "b2frame reads c-blosc2's edits otherwise"


def kill_sweep(kind, seed, pristine, tmp_path, nwrites, check):
    """Runs the seed's writer on copies of pristine, killed at its K-th call of each syscall
    in turn until it finishes its nwrites writes; check(copy, writes returned, where, K)
    after each run."""
    ext = pristine.suffix
    kills = 0
    for syscall in SYSCALLS:
        for k in itertools.count(1):
            path, log = tmp_path / f"run{ext}", tmp_path / "run.log"
            copy_frame(pristine, path)
            remove(log)
            done = subprocess.run(
                ["strace", "-f", "-qq", "-o", "/dev/null", "-e", f"trace={syscall}", "-e",
                 f"inject={syscall}:signal=KILL:when={k}", sys.executable, rw.__file__, kind,
                 str(seed), str(path), str(log)], capture_output=True, text=True)
            assert done.returncode in (0, -9), f"the writer failed: {done.stderr[-2000:]}"
            returned = len(log.read_text().splitlines()) if log.exists() else 0
            check(path, returned, f"seed {seed}, killed at {syscall} {k}, {returned} returned",
                  k)
            if done.returncode == 0:
                assert returned == nwrites, f"the writer finished after {returned} writes"
                break
            kills += 1
    assert kills > 5, f"only {kills} kills"


@pytest.mark.parametrize("seed", FRAME_KILL_SEEDS)
def test_frames_killed_at_every_write(tmp_path, seed):
    assert shutil.which("strace"), "strace is needed (scripts/install-deps.sh installs it)"
    case = rw.frame_case(seed)
    pristine = tmp_path / "pristine.b2frame"
    f, m = create_frame(pristine, case, seed)
    f.close()
    # The content after each write, from a run of the writes on a copy.
    reference = tmp_path / "reference.b2frame"
    copy_frame(pristine, reference)
    states = [copy.deepcopy(m)]
    with b2frame.Frame.open(reference, READ_WRITE) as f:
        for k, w in enumerate(rw.frame_writes(seed, case)):
            apply_checked(f, w, case, m, f"write {k}")
            states.append(copy.deepcopy(m))

    def check(path, returned, where, k):
        state = read_frame(path)
        match = next((s for s in states[returned:returned + 2] if rw.frame_matches(state, s)),
                     None)
        assert match is not None, f"{where}: the frame holds neither state"
        c_blosc2_reads_frame(path, match, where)
        extra = rw.data(k, case["chunksize"])
        with b2frame.Frame.open(path, READ_WRITE) as f:
            f.append(extra)
        after = copy.deepcopy(match)
        after["chunks"].append(extra)
        assert rw.frame_matches(read_frame(path), after), f"{where}: a write after the kill"
        c_blosc2_reads_frame(path, after, f"{where}, a write after the kill")

    kill_sweep("frame", seed, pristine, tmp_path, len(states) - 1, check)


def array_state(path, case):
    with b2frame.Array.open(path) as a:
        content = a.get_slice([0] * len(case["shape"]), case["shape"])
        return content, {n: a.vlmeta(n) for n in a.vlmeta_names()}


def model_array(m, w, case):
    if w[0] == "set_slice":
        box = tuple(slice(a, b) for a, b in zip(w[1], w[2]))
        shape = [b - a for a, b in zip(w[1], w[2])] + [rw.itemsize(case)]
        m["items"][box] = np.frombuffer(rw.slab(w, case), np.uint8).reshape(shape)
    elif w[0] == "vlmeta_set":
        m["vlmeta"][w[1]] = rw.msgpack_bin(rw.data(w[3], w[2]))
    else:
        del m["vlmeta"][w[1]]


def array_matches(state, m):
    return state[0] == m["items"].tobytes() and state[1] == m["vlmeta"]


@pytest.mark.parametrize("seed", ARRAY_KILL_SEEDS)
def test_arrays_killed_at_every_write(tmp_path, seed):
    assert shutil.which("strace"), "strace is needed (scripts/install-deps.sh installs it)"
    case = rw.array_case(seed)
    pristine = tmp_path / "pristine.b2nd"
    b2frame.Array.create(pristine, case["shape"], case["chunks"], case["blocks"], case["dtype"],
                         contiguous=case["contiguous"], codec=case["codec"],
                         clevel=case["clevel"], nthreads=case["nthreads"],
                         filters=case["filters"], filters_meta=[0] * len(case["filters"])).close()
    m = dict(items=np.zeros(case["shape"] + [rw.itemsize(case)], np.uint8), vlmeta={})
    reference = tmp_path / "reference.b2nd"
    copy_frame(pristine, reference)
    states = [copy.deepcopy(m)]
    with b2frame.Array.open(reference, READ_WRITE) as a:
        for k, w in enumerate(rw.array_writes(seed, case)):
            try:
                rw.write_array(a, w, case)
            except b2frame.Error as e:
                assert e.status in rw.REFUSALS, f"write {k}: {w[0]}: {e}"
            else:
                model_array(m, w, case)
            states.append(copy.deepcopy(m))
    assert array_matches(array_state(reference, case), m), "the writes' reference run"

    def c_blosc2_reads_array(path, m, where):
        x = blosc2.open(str(path), mode="r")
        if b2frame.FILTER_DELTA in case["filters"]:
            # c-blosc2 reads some slices of arrays with DELTA wrongly (test_random_interop.py):
            # its chunks, then, as b2frame reads them (and b2frame's items are the model's).
            with b2frame.Array.open(path) as a:
                for i in range(a.nchunks):
                    assert x.schunk.decompress_chunk(i) == a.chunk(i), f"{where}: chunk {i}"
        else:
            assert x[...].tobytes() == m["items"].tobytes(), f"{where}: c-blosc2's items"
        assert x.schunk.vlmeta.getall() == {n: msgpack.unpackb(c)
                                           for n, c in m["vlmeta"].items()}, f"{where}: vlmeta"

    def check(path, returned, where, k):
        state = array_state(path, case)
        match = next((s for s in states[returned:returned + 2] if array_matches(state, s)),
                     None)
        assert match is not None, f"{where}: the array holds neither state"
        c_blosc2_reads_array(path, match, where)
        w = ("set_slice", [0] * len(case["shape"]), [min(2, n) for n in case["shape"]], k)
        with b2frame.Array.open(path, READ_WRITE) as a:
            rw.write_array(a, w, case)
        after = copy.deepcopy(match)
        model_array(after, w, case)
        assert array_matches(array_state(path, case), after), f"{where}: a write after the kill"
        c_blosc2_reads_array(path, after, f"{where}, a write after the kill")

    kill_sweep("array", seed, pristine, tmp_path, len(states) - 1, check)
