"""Randomized single chunks both ways with c-blosc2 (python-blosc2 4.14.1), over parameters
the super-chunks of test_random_interop.py do not reach: typesizes up to 255, explicit
blocksizes of any size (below the typesize too, and not multiples of it), filter pipelines
of up to six slots (TRUNC_PREC anywhere on 4- and 8-byte items), chunks up to 3 MB, 1-4
threads on our side, every split mode, clevels 0-9, dictionaries (LZ4, LZ4HC, zstd).

Each seed checks:
- our chunk reads back in c-blosc2 and here: to the input, or with TRUNC_PREC to the same
  bytes in both (pipelines b2frame refuses to write, as c-blosc2 decodes them wrongly, must
  be refused as such);
- c-blosc2's chunk reads here as c-blosc2 reads it, or is refused where c-blosc2 cannot read
  it back as its input either (blocks with bytes never stored, or labelled with another
  blocksize than they were cut by: README, "Where b2frame and c-blosc2 differ");
- a random run of items read alone (b2f_getitem) is that part of the whole chunk, in both
  chunks;
- where c-blosc2 reads its own chunk back as its input, ours is byte for byte c-blosc2's
  (LZ4, LZ4HC, zlib, zstd) or within 1% of its size (BloscLZ); but for explicit blocksizes
  that are not a multiple of the typesize (README). (Streams of zlib and LZ4HC that the
  probe stores raw could differ too, README; the data here, random or far from it, makes
  none that c-blosc2 compresses.)

c-blosc2 is given a copy of the input: with three or more filters it writes into it.
python-blosc2's compress2 drops BYTEDELTA at typesize 1; b2frame is given the same filters.
B2F_RANDOM_CHUNK_SEEDS sets the number of seeds (default 2000), B2F_RANDOM_CHUNK_FIRST_SEED
the first (default 0).
"""

import os

import blosc2
import numpy as np
import pytest

import b2frame

FIRST_SEED = int(os.environ.get("B2F_RANDOM_CHUNK_FIRST_SEED", "0"))
SEEDS = range(FIRST_SEED, FIRST_SEED + int(os.environ.get("B2F_RANDOM_CHUNK_SEEDS", "2000")))
F = blosc2.Filter
CODECS = [b2frame.CODEC_BLOSCLZ, b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC, b2frame.CODEC_ZLIB,
          b2frame.CODEC_ZSTD]
FILTERS = [F.NOFILTER, F.SHUFFLE, F.BITSHUFFLE, F.DELTA, F.TRUNC_PREC, F.BYTEDELTA]
DICT_CODECS = (b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC, b2frame.CODEC_ZSTD)


def random_data(rng, nbytes, typesize):
    kind = rng.integers(0, 7)
    if kind == 0:
        return rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    if kind == 1:
        return bytes(nbytes)
    if kind == 2:
        return (np.arange(nbytes) // int(rng.integers(1, 300))).astype(np.uint8).tobytes()
    if kind == 3:
        walk = np.cumsum(rng.normal(size=nbytes // 8 + 1)).astype("<f8").tobytes()
        return walk[:nbytes]
    if kind == 4:
        item = rng.integers(0, 256, typesize, dtype=np.uint8).tobytes()
        return (item * (nbytes // typesize + 1))[:nbytes]
    if kind == 5:
        # Sparse: runs of zeros between runs of noise, some spanning whole blocks (which
        # b2frame stores without filtering them).
        out = np.zeros(nbytes, np.uint8)
        pos = 0
        while pos < nbytes:
            run = min(int(rng.integers(1, 70_000)), nbytes - pos)
            if rng.random() < 0.5:
                out[pos:pos + run] = rng.integers(0, 256, run, dtype=np.uint8)
            pos += run
        return out.tobytes()
    return rng.integers(0, 3, nbytes, dtype=np.uint8).tobytes()


def random_case(seed):
    rng = np.random.default_rng([seed, 77])
    if rng.random() < 0.4:
        typesize = int(rng.choice([1, 2, 4, 8]))
    else:
        typesize = int(rng.integers(1, 256))
    size_class = rng.random()
    top = 300 if size_class < 0.3 else 200_000 if size_class < 0.8 else 3_000_000
    nbytes = int(rng.integers(0, top))
    data = random_data(rng, nbytes, typesize)
    codec = int(rng.choice(CODECS))
    clevel = int(rng.integers(0, 10))
    r = rng.random()
    if r < 0.4:
        blocksize = 0
    elif r < 0.7:
        blocksize = int(2 ** rng.integers(4, 22))
    else:
        blocksize = int(rng.integers(1, max(2, nbytes + 100)))
    filters, meta = [], []
    for _ in range(rng.integers(0, 7)):
        f = FILTERS[rng.integers(0, len(FILTERS))]
        if f == F.TRUNC_PREC and typesize not in (4, 8):
            f = F.SHUFFLE
        if f == F.DELTA and F.DELTA in filters:
            f = F.SHUFFLE  # two deltas: neither library writes them (README)
        if f == F.BYTEDELTA and typesize == 1:
            f = F.NOFILTER  # what python-blosc2's compress2 makes of it
        filters.append(f)
        meta.append(int(rng.integers(1, 20)) if f == F.TRUNC_PREC else 0)
    splitmode = int(rng.integers(1, 5))
    nthreads = int(rng.integers(1, 5))
    use_dict = bool(codec in DICT_CODECS and rng.random() < 0.25)
    theirs = dict(codec=blosc2.Codec(codec), clevel=clevel, filters=filters, filters_meta=meta,
                  typesize=typesize, blocksize=blocksize,
                  splitmode=blosc2.SplitMode(splitmode), nthreads=1, use_dict=use_dict)
    # compress2 sets a BYTEDELTA meta of 0 to the typesize (int8: it refuses one above 127).
    ours = dict(codec=codec, clevel=clevel, filters=[f.value for f in filters],
                filters_meta=[typesize if f == F.BYTEDELTA else m for f, m in zip(filters, meta)],
                typesize=typesize, blocksize=blocksize, splitmode=splitmode,
                nthreads=nthreads, use_dict=int(use_dict))
    return data, theirs, ours, int(rng.integers(1, 5))


def c_reads(chunk):
    try:
        return bytes(blosc2.decompress2(chunk, nthreads=1))
    except ValueError:
        return None


def check_getitem(seed, chunk, whole, typesize):
    """A random run of items read alone (only the blocks holding them decode) is the same
    part of the whole chunk."""
    items = len(whole) // typesize
    if items == 0:
        return
    rng = np.random.default_rng([seed, 78])
    start = int(rng.integers(0, items))
    count = int(rng.integers(1, items - start + 1))
    got = b2frame.getitem(chunk, start, count)
    assert got == whole[start * typesize:(start + count) * typesize], (start, count)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_chunks_both_ways(seed):
    data, theirs, ours, read_threads = random_case(seed)
    lossy = F.TRUNC_PREC in theirs["filters"]
    try:
        b = b2frame.compress(data, **ours)
    except b2frame.Error as e:
        assert "c-blosc2 decodes chunks with this filter order wrongly" in str(e), str(e)
        return
    ours_back = b2frame.decompress(b, nthreads=read_threads)
    assert c_reads(b) == ours_back, "c-blosc2 reads our chunk otherwise"
    if not lossy:
        assert ours_back == data, "our chunk does not read back as the input"
    check_getitem(seed, b, ours_back, theirs["typesize"])

    a = blosc2.compress2(bytes(bytearray(data)), **theirs)
    theirs_back = c_reads(a)
    try:
        here = b2frame.decompress(a, nthreads=read_threads)
    except b2frame.Error as e:
        # Bytes never stored read back as c-blosc2's output buffer held them: sometimes
        # right, when that memory last held the same data.
        assert theirs_back != data or "were never stored" in str(e), str(e)
        return
    if theirs_back is not None:
        assert here == theirs_back, "c-blosc2's chunk reads otherwise here"
    check_getitem(seed, a, here, theirs["typesize"])
    if lossy or theirs_back != data:
        return
    blocksize, typesize = theirs["blocksize"], theirs["typesize"]
    if blocksize % typesize:
        # c-blosc2 labels blocks with the blocksize asked, cut at a multiple of the typesize
        # (its chunk reads back only where the difference does not show, as in runs), and
        # below the typesize splits blocks into empty streams: b2frame's chunk differs.
        return
    if ours["codec"] == b2frame.CODEC_BLOSCLZ:
        assert len(b) <= len(a) * 1.01 + 1, f"BloscLZ: {len(b)} bytes against {len(a)}"
    else:
        assert a == b, f"chunks differ: {len(a)} against {len(b)} bytes"
