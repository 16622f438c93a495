"""N-dim arrays both ways between b2frame and c-blosc2 (python-blosc2 4.14.1).

Arrays created and written here (several ranks, dtypes, shapes not divisible by chunk or block
shapes, contiguous and sparse) open in python-blosc2 with the same shape, chunks, blocks, dtype
and content; python-blosc2's `arr[slice] = ...` writes, on its arrays and on ours, read back
here; our b2nd metalayer is byte-identical to c-blosc2's for the same array.
"""

import blosc2
import numpy as np
import pytest

import b2frame

CASES = [
    # shape, chunks, blocks, dtype
    ((), (), (), "<f8"),
    ((37,), (10,), (3,), "<i4"),
    ((0, 5), (2, 5), (1, 5), "<i4"),
    ((13, 17), (5, 6), (2, 4), "<f8"),
    ((9, 11, 7), (4, 5, 3), (2, 3, 2), "<i2"),
    ((6, 5, 4, 3), (3, 2, 4, 2), (2, 2, 3, 1), "|u1"),
    ((3, 4, 2, 3, 2), (2, 3, 2, 2, 1), (1, 2, 1, 2, 1), "<c16"),
    ((20, 9), (7, 4), (3, 4), "|S5"),
    ((15,), (6,), (4,), "<U3"),
    ((25, 3), (10, 2), (4, 1), "[('a', '<i4'), ('b', '<f8')]"),
    ((11, 7), (5, 7), (5, 2), "|b1"),
]


def sample(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    dt = np.dtype(eval(dtype) if dtype.startswith("[") else dtype)
    raw = rng.integers(0, 256, size=int(np.prod(shape)) * dt.itemsize, dtype=np.uint8)
    a = np.frombuffer(raw.tobytes(), dtype=dt).reshape(shape).copy()
    if dt.kind == "b":
        a = (raw[: a.size] & 1).astype(bool).reshape(shape)
    elif dt.kind == "U":
        a = np.array(["".join(chr(0x61 + (i + j) % 26) for j in range(i % 4)) for i in range(a.size)],
                     dtype=dt).reshape(shape)
    elif dt.kind == "f" or dt.kind == "c":
        a = rng.standard_normal(size=a.shape).astype(dt)
    return a


def split_slabs(shape, parts=2):
    """Cuts the array into a few slabs along the first dimension (all of it for scalars)."""
    if not shape:
        yield (), ()
        return
    edges = np.linspace(0, shape[0], parts + 1).astype(int)
    for a, b in zip(edges[:-1], edges[1:]):
        yield (int(a),) + (0,) * (len(shape) - 1), (int(b),) + tuple(shape[1:])


def python_dtype(dtype):
    return np.dtype(eval(dtype) if dtype.startswith("[") else dtype)


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
@pytest.mark.parametrize("shape,chunks,blocks,dtype", CASES, ids=[str(c[0]) + c[3] for c in CASES])
def test_ours_read_by_blosc2(tmp_path, contiguous, shape, chunks, blocks, dtype):
    path = tmp_path / ("a.b2nd" if contiguous else "a_sparse.b2nd")
    want = sample(shape, dtype, seed=len(shape) * 7 + len(dtype))
    arr = b2frame.Array.create(path, shape, chunks, blocks, dtype, contiguous=contiguous,
                               typesize=want.dtype.itemsize, codec=b2frame.CODEC_ZSTD, clevel=5)
    assert arr.shape == shape and arr.chunks == chunks and arr.blocks == blocks
    assert arr.dtype == dtype and arr.itemsize == want.dtype.itemsize
    for start, stop in split_slabs(shape):
        sl = tuple(slice(a, b) for a, b in zip(start, stop))
        arr.set_slice(start, stop, np.ascontiguousarray(want[sl]).tobytes())
    assert arr.get_slice((0,) * len(shape), shape) == want.tobytes()
    arr.close()

    theirs = blosc2.open(str(path))
    assert theirs.shape == shape
    assert theirs.chunks == chunks and theirs.blocks == blocks
    assert theirs.dtype == python_dtype(dtype)
    got = theirs[...] if shape else theirs[()]
    np.testing.assert_array_equal(np.asarray(got), want)


@pytest.mark.parametrize("shape,chunks,blocks,dtype", CASES, ids=[str(c[0]) + c[3] for c in CASES])
def test_b2nd_metalayer_identical_to_blosc2(tmp_path, shape, chunks, blocks, dtype):
    ours = tmp_path / "ours.b2nd"
    theirs = tmp_path / "theirs.b2nd"
    b2frame.Array.create(ours, shape, chunks, blocks, dtype).close()
    blosc2.zeros(shape, dtype=python_dtype(dtype), chunks=chunks, blocks=blocks,
                 urlpath=str(theirs), mode="w")
    with b2frame.Frame.open(ours) as a, b2frame.Frame.open(theirs) as b:
        assert a.meta("b2nd") == b.meta("b2nd")


@pytest.mark.parametrize("shape,chunks,blocks,dtype", CASES, ids=[str(c[0]) + c[3] for c in CASES])
def test_new_arrays_are_python_blosc2s_byte_for_byte(tmp_path, shape, chunks, blocks, dtype):
    # A new array is a special fill of an empty frame: the same header, metalayer, index
    # (one repeated-value chunk) and trailer as blosc2.zeros writes, with the same parameters.
    # The thread counts python-blosc2 records in the header (bytes 63-67) are masked.
    ours = tmp_path / "ours.b2nd"
    theirs = tmp_path / "theirs.b2nd"
    dt = python_dtype(dtype)
    b2frame.Array.create(ours, shape, chunks, blocks, dtype, typesize=dt.itemsize,
                         codec=b2frame.CODEC_ZSTD, clevel=1,
                         splitmode=b2frame.SPLIT_AUTO).close()
    blosc2.zeros(shape, dtype=dt, chunks=chunks, blocks=blocks, urlpath=str(theirs), mode="w",
                 cparams=dict(codec=blosc2.Codec.ZSTD, clevel=1, nthreads=1,
                              splitmode=blosc2.SplitMode.AUTO_SPLIT))
    a, b = bytearray(theirs.read_bytes()), bytearray(ours.read_bytes())
    a[63:68] = b[63:68] = b"\0" * 5
    assert a == b, (len(a), len(b))


@pytest.mark.parametrize("contiguous", [True, False], ids=["cframe", "sframe"])
def test_blosc2_writes_read_here(tmp_path, contiguous):
    shape, chunks, blocks = (40, 33, 9), (16, 10, 9), (5, 4, 3)
    rng = np.random.default_rng(5)
    model = np.zeros(shape, dtype="<f4")
    # python-blosc2 writes into its own array and into one created here.
    paths = [tmp_path / "theirs.b2nd", tmp_path / "ours.b2nd"]
    blosc2.zeros(shape, dtype="<f4", chunks=chunks, blocks=blocks, urlpath=str(paths[0]),
                 contiguous=contiguous, mode="w")
    b2frame.Array.create(paths[1], shape, chunks, blocks, "<f4", contiguous=contiguous,
                         typesize=4).close()
    writes = [((3, 0, 0), (20, 33, 9)), ((0, 5, 2), (40, 6, 8)), ((39, 32, 8), (40, 33, 9)),
              ((10, 10, 0), (30, 25, 9))]
    for start, stop in writes:
        sl = tuple(slice(a, b) for a, b in zip(start, stop))
        block = rng.standard_normal(size=[b - a for a, b in zip(start, stop)]).astype("<f4")
        model[sl] = block
        for p in paths:
            arr = blosc2.open(str(p), mode="a")
            arr[sl] = block
    for p in paths:
        with b2frame.Array.open(p) as arr:
            assert arr.get_slice((0, 0, 0), shape) == model.tobytes()
            for start, stop in writes + [((7, 3, 1), (8, 30, 2)), ((0, 0, 4), (40, 33, 5))]:
                sl = tuple(slice(a, b) for a, b in zip(start, stop))
                assert arr.get_slice(start, stop) == np.ascontiguousarray(model[sl]).tobytes()


def test_vector_arrays_match_blosc2_slices():
    """A few random slabs of every bundled array, compared live with python-blosc2."""
    from conftest import VECTORS
    rng = np.random.default_rng(1)
    paths = sorted((VECTORS / "b2nd").glob("*.b2nd"))
    assert paths
    for p in paths:
        theirs = blosc2.open(str(p))
        if not hasattr(theirs, "shape") or "uninit" in p.name:
            continue
        with b2frame.Array.open(p) as ours:
            shape = ours.shape
            assert shape == theirs.shape, p
            for _ in range(4):
                start = tuple(int(rng.integers(0, s + 1)) for s in shape)
                stop = tuple(int(rng.integers(a, s + 1)) for a, s in zip(start, shape))
                sl = tuple(slice(a, b) for a, b in zip(start, stop))
                want = np.ascontiguousarray(theirs[sl] if shape else theirs[()]).tobytes()
                assert ours.get_slice(start, stop) == want, (p, start, stop)
