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
    # 16 dimensions: c-blosc2 marks each shape list 0x90 + 16 = 0xa0, not a msgpack array.
    ((2, 1, 3, 1, 2, 1, 1, 2, 1, 1, 2, 1, 1, 1, 2, 3), (2, 1, 2, 1, 1, 1, 1, 2, 1, 1, 1, 1, 1, 1, 2, 2),
     (1, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2), "<i2"),
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
def test_blosc2s_arrays_read_here(tmp_path, shape, chunks, blocks, dtype):
    want = sample(shape, dtype, seed=len(shape) * 5 + len(dtype))
    path = tmp_path / "theirs.b2nd"
    blosc2.asarray(want, urlpath=str(path), mode="w", chunks=chunks, blocks=blocks)
    with b2frame.Array.open(path) as arr:
        assert arr.shape == shape and arr.chunks == chunks and arr.blocks == blocks
        assert arr.get_slice((0,) * len(shape), shape) == want.tobytes()


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


def _made_by_python_blosc2(tmp_path):
    """Arrays as python-blosc2's constructors, operations and containers write them."""
    rng = np.random.default_rng(11)
    x = rng.standard_normal(size=(60, 70)).astype("<f4")
    d = str(tmp_path)

    def p(name):
        return f"{d}/{name}.b2nd"

    blosc2.asarray(x, urlpath=p("asarray"), mode="w", chunks=(25, 30), blocks=(5, 7))
    blosc2.arange(0, 1000, 3, urlpath=p("arange"), mode="w", chunks=(50,))
    blosc2.linspace(0, 1, 777, urlpath=p("linspace"), mode="w")
    blosc2.full((30, 40), 3.25, urlpath=p("full"), mode="w", chunks=(7, 9))
    blosc2.full((30,), b"abc", urlpath=p("full_bytes"), mode="w", chunks=(7,))
    blosc2.nans((50, 50), dtype="<f8", urlpath=p("nans"), mode="w", chunks=(20, 20))
    blosc2.eye(40, 30, k=2, urlpath=p("eye"), mode="w")
    blosc2.concat([blosc2.asarray(x[:20]), blosc2.asarray(x[20:])], axis=0, urlpath=p("concat"),
                  mode="w")
    blosc2.stack([blosc2.asarray(x), blosc2.asarray(x * 2)], axis=1, urlpath=p("stack"), mode="w")
    blosc2.asarray(x).copy(chunks=(11, 13), blocks=(3, 4), urlpath=p("copy"), mode="w",
                           cparams={"codec": blosc2.Codec.LZ4HC,
                                    "filters": [blosc2.Filter.BITSHUFFLE]})
    blosc2.asarray(x).slice((slice(3, 50), slice(10, 11)), urlpath=p("slice"), mode="w")
    a = blosc2.asarray(x, urlpath=p("resized"), mode="w", chunks=(25, 30))
    a.resize((80, 50))
    a[70:, :] = 5
    a = blosc2.asarray(np.arange(100, dtype="<i8"), urlpath=p("appended"), mode="w", chunks=(30,))
    a.append(np.arange(45, dtype="<i8"))
    (blosc2.asarray(x) * 2 + 1).compute(urlpath=p("lazy"), mode="w")
    blosc2.where(blosc2.asarray(x) > 0, 1.0, 0.0).compute(urlpath=p("where"), mode="w")
    blosc2.asarray(np.arange(300).astype("M8[s]"), urlpath=p("datetime"), mode="w")
    blosc2.asarray(rng.standard_normal(size=300).astype("<f2"), urlpath=p("float16"), mode="w")
    blosc2.asarray(np.arange(300, dtype=">i4"), urlpath=p("big_endian"), mode="w")
    a = blosc2.asarray(x, urlpath=p("attrs"), mode="w")
    a.attrs["unit"] = "m"
    a = blosc2.asarray(np.arange(10000, dtype="<i8")[::-1].copy(), urlpath=p("indexed"),
                       mode="w")
    a.create_index()  # more arrays beside it, structured ones among them
    with blosc2.TreeStore(f"{d}/tree.b2d", mode="w") as s:
        s["/g/a"] = np.arange(100)
        s["/g/h/b"] = x
    return sorted(tmp_path.rglob("*.b2nd"))


def test_arrays_of_python_blosc2_constructors_and_containers(tmp_path):
    """Every chunk and the whole array read here as python-blosc2 reads them; random slabs
    written here then read there as a model has them."""
    paths = _made_by_python_blosc2(tmp_path)
    assert len(paths) > 25
    rng = np.random.default_rng(3)
    for p in paths:
        theirs = blosc2.open(str(p))
        model = np.array(theirs[()])
        with b2frame.Array.open(p) as ours:
            assert ours.shape == theirs.shape, p
            assert ours.nchunks == theirs.schunk.nchunks, p
            for i in range(ours.nchunks):
                assert ours.chunk(i) == theirs.schunk.decompress_chunk(i), (p, i)
            assert ours.get_slice((0,) * model.ndim, model.shape) == model.tobytes(), p
        with b2frame.Array.open(p, mode=b2frame.READ | b2frame.WRITE) as ours:
            for _ in range(2):
                start = [int(rng.integers(0, n)) for n in model.shape]
                stop = [int(rng.integers(a + 1, n + 1)) for a, n in zip(start, model.shape)]
                sl = tuple(slice(a, b) for a, b in zip(start, stop))
                n = int(np.prod([b - a for a, b in zip(start, stop)]))
                raw = rng.integers(0, 256, size=n * model.dtype.itemsize, dtype=np.uint8)
                vals = np.frombuffer(raw.tobytes(), dtype=model.dtype).reshape(model[sl].shape)
                ours.set_slice(start, stop, vals.tobytes())
                model[sl] = vals
        assert np.array(blosc2.open(str(p))[()]).tobytes() == model.tobytes(), p


@pytest.mark.parametrize("dtype", ["<i2", "<u4", "<i8"])
def test_int_trunc_arrays_both_ways(tmp_path, dtype):
    # Arrays whose chunks drop low bits of every integer (c-blosc2's INT_TRUNC, filter 36):
    # python-blosc2's read here as it reads them, ours there, slabs written by each read by
    # the other; the values are the integers with their 5 low bits zeroed.
    shape, chunks, blocks = (60, 90), (24, 40), (8, 40)
    rng = np.random.default_rng(9)

    def sample(shape):
        # Compressible (a chunk that is not is stored as given, unfiltered, by both).
        ramp = np.arange(np.prod(shape)).reshape(shape) * 7
        return (ramp + rng.integers(0, 64, size=shape)).astype(dtype)

    def truncate(v):
        return v & ~np.array(31, dtype=dtype)

    values = sample(shape)
    truncated = truncate(values)
    assert (truncated != values).mean() > 0.9
    theirs, ours = tmp_path / "theirs.b2nd", tmp_path / "ours.b2nd"
    # Keep all bits but 5, a positive meta: python-blosc2 cannot open a frame whose meta is
    # negative (it converts the stored byte to int8 and overflows), its own included.
    keep = 8 * np.dtype(dtype).itemsize - 5
    cparams = {"filters": [blosc2.Filter.INT_TRUNC, blosc2.Filter.SHUFFLE],
               "filters_meta": [keep, 0], "nthreads": 1}
    blosc2.asarray(values, chunks=chunks, blocks=blocks, urlpath=str(theirs), mode="w",
                   cparams=cparams)
    itemsize = np.dtype(dtype).itemsize
    with b2frame.Array.create(ours, shape, chunks, blocks, dtype, typesize=itemsize,
                              filters=[b2frame.FILTER_INT_TRUNC, b2frame.FILTER_SHUFFLE],
                              filters_meta=[keep, 0]) as arr:
        arr.set_slice((0, 0), shape, values.tobytes())
    for p in (theirs, ours):
        assert blosc2.open(str(p))[...].tobytes() == truncated.tobytes(), p
        with b2frame.Array.open(p) as arr:
            assert arr.get_slice((0, 0), shape) == truncated.tobytes(), p
    # A slab each way, on the other's array.
    more = sample((7, 25))
    sl = (slice(5, 12), slice(10, 35))
    blosc2.open(str(ours), mode="a")[sl] = more
    with b2frame.Array.open(theirs, b2frame.READ | b2frame.WRITE) as arr:
        arr.set_slice((5, 10), (12, 35), more.tobytes())
    truncated[sl] = truncate(more)
    for p in (theirs, ours):
        assert blosc2.open(str(p))[...].tobytes() == truncated.tobytes(), p
        with b2frame.Array.open(p) as arr:
            assert arr.get_slice((0, 0), shape) == truncated.tobytes(), p


@pytest.mark.parametrize("filt", ["NDCELL", "NDMEAN"])
def test_ndcell_and_ndmean_arrays_read_here(tmp_path, filt):
    # c-blosc2's filters for n-dim arrays store each block cell by cell (NDMEAN: each cell's
    # mean, lossy); undoing them needs the array's blockshape, from the b2nd metalayer. Arrays
    # python-blosc2 writes with them read here as there: every chunk, and slabs.
    rng = np.random.default_rng(3)
    cases = [
        ((64, 64), (32, 32), (16, 16), 4, "<f8"),
        ((50, 45), (20, 30), (10, 15), 4, "<f4"),   # cells that do not divide the blocks
        ((12, 10, 9), (6, 10, 9), (3, 5, 9), 2, "<f8"),
        ((40,), (20,), (10,), 3, "<f4"),
        ((30, 40), (10, 20), (10, 20), 8, "<f8"),  # cells larger than a block side
        # Cells cut to the block in the first dimension only: c-blosc2's NDMEAN steps cell
        # origins by that first side, its cells then miss the block's end, and it refuses
        # the chunks it wrote. So does this (NDCELL does not cut cells).
        ((8, 32), (4, 32), (2, 16), 4, "<f8"),
    ]
    if filt == "NDCELL":
        cases += [((33, 20), (11, 20), (11, 10), 3, "<i2"), ((16, 16), (8, 8), (8, 8), 2, "|u1")]
    averaged = 0
    for k, (shape, chunks, blocks, cell, dtype) in enumerate(cases):
        x = (np.cumsum(rng.normal(size=shape)).reshape(shape) * 10).astype(dtype)
        path = tmp_path / f"{filt}{k}.b2nd"
        a = blosc2.asarray(x, chunks=chunks, blocks=blocks, urlpath=str(path), mode="w",
                           cparams={"filters": [getattr(blosc2.Filter, filt)],
                                    "filters_meta": [cell], "nthreads": 1})
        what = (filt, shape, blocks, cell, dtype)
        if filt == "NDMEAN" and blocks[0] < cell <= min(blocks[1:]):
            with pytest.raises(RuntimeError):
                a[...]
            with b2frame.Array.open(path) as arr, pytest.raises(b2frame.Error, match="tile"):
                arr.get_slice((0,) * len(shape), shape)
            continue
        theirs = a[...]
        if filt == "NDCELL":
            assert theirs.tobytes() == x.tobytes()
        # Means, lossy (unless the chunks were stored as given: then no filter ran).
        averaged += theirs.tobytes() != x.tobytes()
        with b2frame.Array.open(path) as arr:
            assert arr.get_slice((0,) * len(shape), shape) == theirs.tobytes(), what
            lo = tuple(s // 3 for s in shape)
            hi = tuple(max(l + 1, 2 * s // 3) for l, s in zip(lo, shape))
            sl = tuple(slice(a, b) for a, b in zip(lo, hi))
            assert arr.get_slice(lo, hi) == np.ascontiguousarray(theirs[sl]).tobytes(), what
        with b2frame.Frame.open(path) as f:
            for i in range(f.nchunks):
                assert f.chunk(i) == a.schunk.decompress_chunk(i), (what, i)
    assert averaged >= (4 if filt == "NDMEAN" else 0)
    # A slab written here into such an array: its chunks keep the filter; python-blosc2 reads
    # what b2frame reads (NDCELL: the slab exactly; NDMEAN: means again, over the new items).
    path = tmp_path / f"{filt}0.b2nd"
    before = blosc2.open(str(path))[...]
    slab = np.full((5, 40), 7.5)
    with b2frame.Array.open(path, b2frame.READ | b2frame.WRITE) as arr:
        arr.set_slice((30, 10), (35, 50), slab.tobytes())
        ours = arr.get_slice((0, 0), (64, 64))
    after = blosc2.open(str(path))
    assert after[...].tobytes() == ours
    assert after.schunk.cparams.filters[0] == getattr(blosc2.Filter, filt)
    before[30:35, 10:50] = slab
    if filt == "NDCELL":
        assert ours == before.tobytes()
    else:
        assert ours != before.tobytes()


@pytest.mark.parametrize("filt", ["NDCELL", "NDMEAN"])
def test_ndcell_and_ndmean_chunks_written_here_are_c_blosc2s(tmp_path, filt):
    # Arrays written here with NDCELL or NDMEAN: every chunk byte for byte the one
    # python-blosc2 writes for the same data and parameters (NDMEAN's float means summed in
    # c-blosc2's order); a geometry whose cells c-blosc2 could not read back is refused.
    rng = np.random.default_rng(4)
    cases = [((64, 64), (32, 32), (16, 16), 4, "<f8"), ((50, 45), (20, 30), (10, 15), 4, "<f4"),
             ((12, 10, 9), (6, 10, 9), (3, 5, 9), 2, "<f8"), ((40,), (20,), (10,), 3, "<f4")]
    if filt == "NDCELL":
        cases += [((33, 20), (11, 20), (11, 10), 3, "<i2"), ((8, 32), (4, 32), (2, 16), 4, "<f8")]
    filtered = 0
    for k, (shape, chunks, blocks, cell, dtype) in enumerate(cases):
        x = (np.cumsum(rng.normal(size=shape)).reshape(shape) * 10).astype(dtype)
        theirs, ours = tmp_path / f"t{k}.b2nd", tmp_path / f"o{k}.b2nd"
        a = blosc2.asarray(x, chunks=chunks, blocks=blocks, urlpath=str(theirs), mode="w",
                           cparams={"filters": [getattr(blosc2.Filter, filt)],
                                    "filters_meta": [cell], "codec": blosc2.Codec.ZSTD,
                                    "clevel": 5, "nthreads": 1})
        with b2frame.Array.create(ours, shape, chunks, blocks, dtype, typesize=x.itemsize,
                                  codec=b2frame.CODEC_ZSTD, clevel=5,
                                  filters=[getattr(blosc2.Filter, filt).value],
                                  filters_meta=[cell]) as arr:
            arr.set_slice((0,) * len(shape), shape, x.tobytes())
        with b2frame.Frame.open(ours) as f:
            assert f.nchunks == a.schunk.nchunks
            for i in range(f.nchunks):
                chunk = f.chunk_raw(i)
                assert chunk == a.schunk.get_chunk(i), (filt, shape, blocks, cell, i)
                filtered += not chunk[2] & 0x02  # not stored as given
    assert filtered >= 10, filtered
    # NDMEAN with cells cut to the block in the first dimension only: not written.
    if filt == "NDMEAN":
        with b2frame.Array.create(tmp_path / "cut.b2nd", (8, 32), (4, 32), (2, 16), "<f8",
                                  typesize=8, filters=[blosc2.Filter.NDMEAN.value],
                                  filters_meta=[4]) as arr:
            with pytest.raises(b2frame.Error, match="tile"):
                arr.set_slice((0, 0), (8, 32), np.ones((8, 32)).tobytes())
