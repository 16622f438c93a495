"""Chunks both ways between b2frame and c-blosc2 (python-blosc2 4.14.1 = c-blosc2 3.3.5).

- c-blosc2's chunks decode here to the same bytes;
- our chunks decode in c-blosc2 to the input;
- with the deterministic codecs (lz4, lz4hc, zlib-ng, zstd: the versions c-blosc2 bundles),
  our chunks are byte-identical to c-blosc2's for every filter pipeline, which proves the
  filters, blocksizes and split decisions are c-blosc2's;
- BloscLZ chunks compress within 1% of c-blosc2's ratio.
"""

import itertools

import blosc2
import numpy as np
import pytest

import b2frame

CODECS = {
    b2frame.CODEC_BLOSCLZ: blosc2.Codec.BLOSCLZ,
    b2frame.CODEC_LZ4: blosc2.Codec.LZ4,
    b2frame.CODEC_LZ4HC: blosc2.Codec.LZ4HC,
    b2frame.CODEC_ZLIB: blosc2.Codec.ZLIB,
    b2frame.CODEC_ZSTD: blosc2.Codec.ZSTD,
}
F = blosc2.Filter
PIPELINES = {
    "none": ([], []),
    "shuffle": ([F.SHUFFLE], [0]),
    "bitshuffle": ([F.BITSHUFFLE], [0]),
    "delta+shuffle": ([F.DELTA, F.SHUFFLE], [0, 0]),
    # Decoding undoes the delta first, then the shuffle (a fuzzer finding: see
    # tests/fuzz_regressions.rs).
    "shuffle+delta": ([F.SHUFFLE, F.DELTA], [0, 0]),
    "trunc_prec": ([F.TRUNC_PREC, F.SHUFFLE], [13, 0]),
    "bytedelta": ([F.SHUFFLE, F.BYTEDELTA], [0, 0]),
    # Drops the 3 low bits of every integer (a negative meta, int8 in the chunk).
    "int_trunc": ([F.INT_TRUNC, F.SHUFFLE], [-3, 0]),
}
LOSSY = ("trunc_prec", "int_trunc")


def dataset(kind, nbytes, typesize, seed=0):
    rng = np.random.default_rng(seed)
    if kind == "smooth_f64":
        x = np.sin(np.linspace(0, 40, nbytes // 8 + 1)) * 1000
        raw = x.astype("<f8").tobytes()
    elif kind == "increasing_i32":
        raw = (np.arange(nbytes // 4 + 1, dtype="<i4") // 3).tobytes()
    elif kind == "random":
        raw = rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes()
    elif kind == "zeros":
        raw = bytes(nbytes)
    elif kind == "noisy_f32":
        raw = (np.cumsum(rng.normal(size=nbytes // 4 + 1))).astype("<f4").tobytes()
    else:
        raise ValueError(kind)
    return raw[:nbytes]


def ours_params(codec, clevel, pipeline, typesize, splitmode=b2frame.SPLIT_FORWARD_COMPAT,
                nthreads=1, use_dict=False):
    filters, meta = PIPELINES[pipeline]
    meta = list(meta)
    if pipeline == "bytedelta":
        meta[1] = typesize
    return b2frame.cparams(codec=codec, clevel=clevel, filters=[f.value for f in filters],
                           filters_meta=[m & 0xFF for m in meta], typesize=typesize, splitmode=splitmode,
                           nthreads=nthreads, use_dict=use_dict)


def theirs(data, codec, clevel, pipeline, typesize, splitmode=4, nthreads=1, use_dict=False,
           blocksize=0):
    filters, meta = PIPELINES[pipeline]
    meta = list(meta)
    if pipeline == "bytedelta":
        meta[1] = typesize
    return blosc2.compress2(data, codec=CODECS[codec], clevel=clevel,
                            filters=filters or [F.NOFILTER], filters_meta=meta or [0],
                            typesize=typesize, splitmode=blosc2.SplitMode(splitmode),
                            nthreads=nthreads, use_dict=use_dict, blocksize=blocksize)


# 3, 12 and 24 take the padded and the wide AVX2 shuffle kernels.
TYPESIZES = [1, 2, 4, 8, 3, 12, 24]
KINDS = ["smooth_f64", "increasing_i32", "random", "zeros", "noisy_f32"]
SIZES = [0, 1, 33, 1000, 70_001]


def valid(pipeline, typesize):
    if pipeline == "int_trunc":
        return typesize in (1, 2, 4, 8)
    return pipeline != "trunc_prec" or typesize in (4, 8)


def cases(kinds, clevels=(0, 1, 5, 9), splits=(1, 2, 4), nthreads=(1,)):
    """The small sizes over the whole product, plus one large (multi-block) buffer per
    typesize and kind at the default split mode."""
    for typesize, kind, size, clevel, split, nt in itertools.product(
            TYPESIZES, kinds, SIZES, clevels, splits, nthreads):
        yield typesize, kind, size, clevel, split, nt
    for typesize, kind, clevel in itertools.product(TYPESIZES, kinds, clevels):
        yield typesize, kind, 400_003, clevel, 4, nthreads[-1]


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_c_blosc2_chunks_decode_here(codec, pipeline):
    n = 0
    for typesize, kind, size, clevel, split, _ in cases(KINDS[:3]):
        if not valid(pipeline, typesize):
            continue
        data = dataset(kind, size, typesize, seed=size)
        chunk = theirs(data, codec, clevel, pipeline, typesize, split)
        if pipeline == "shuffle+delta" and size % typesize:
            # c-blosc2 leaves the bytes past the last whole item unwritten when it encodes and
            # reads uninitialized memory when it decodes them (its output varies from run to
            # run): only the whole items are defined.
            cut = size - size % typesize
            assert b2frame.decompress(chunk)[:cut] == data[:cut], (kind, size, typesize, clevel)
            n += 1
            continue
        expected = blosc2.decompress2(chunk)
        assert b2frame.decompress(chunk) == expected, (kind, size, typesize, clevel, split)
        assert b2frame.decompress(chunk, nthreads=2) == expected
        # Items alone (b2f_getitem decodes only their blocks), in the header's typesize.
        ts = chunk[3]
        items = len(expected) // ts
        for start, k in [(0, 1), (items // 3, 7), (items - 2, 2)]:
            if 0 <= start and start + k <= items:
                assert b2frame.getitem(chunk, start, k) == expected[start * ts:(start + k) * ts]
        if pipeline == "delta+shuffle" and size % typesize:
            # c-blosc2's delta leaves the bytes past the last whole item unwritten.
            cut = size - size % typesize
            assert expected[:cut] == data[:cut]
        elif pipeline not in LOSSY:
            assert expected == data
        n += 1
    assert n > 100


@pytest.mark.parametrize("codec", list(CODECS))
@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_our_chunks_decode_in_c_blosc2(codec, pipeline):
    for typesize, kind, size, clevel, split, nthreads in cases(KINDS, nthreads=(1, 2)):
        if not valid(pipeline, typesize):
            continue
        if pipeline == "shuffle+delta" and size % typesize:
            continue  # c-blosc2 reads uninitialized memory decoding these (see above)
        data = dataset(kind, size, typesize, seed=size + 1)
        chunk = b2frame.compress(data, ours_params(codec, clevel, pipeline, typesize, split, nthreads))
        out = blosc2.decompress2(chunk)
        if pipeline in LOSSY:
            assert out == b2frame.decompress(chunk)
            assert len(out) == len(data)
        else:
            assert out == data, (kind, size, typesize, clevel, split, nthreads)


@pytest.mark.parametrize("codec", [b2frame.CODEC_BLOSCLZ, b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC, b2frame.CODEC_ZLIB,
                                   b2frame.CODEC_ZSTD])
@pytest.mark.parametrize("pipeline", list(PIPELINES))
def test_chunks_are_byte_identical_to_c_blosc2(codec, pipeline):
    differ = []
    for typesize, kind, size, clevel, split, _ in cases(KINDS, splits=(1, 2, 3, 4)):
        if not valid(pipeline, typesize):
            continue
        if pipeline in ("delta+shuffle", "shuffle+delta", *LOSSY) and size % typesize:
            # c-blosc2 leaves the bytes past the last whole item unwritten in these filters
            # (its output there is whatever was in its buffer); b2frame copies them through.
            continue
        if pipeline == "bytedelta" and typesize == 1:
            continue  # python-blosc2 drops bytedelta from the pipeline for typesize 1
        data = dataset(kind, size, typesize, seed=7)
        a = theirs(data, codec, clevel, pipeline, typesize, split)
        b = b2frame.compress(data, ours_params(codec, clevel, pipeline, typesize, split))
        if a != b:
            differ.append((kind, size, typesize, clevel, split, len(a), len(b)))
    assert not differ, f"{len(differ)} cases differ, e.g. {differ[:5]}"


def blocks_of_zeros_among_data(typesize, blocksize, seed):
    """Blocks of zeros, of data, and of zeros but for one byte (first, middle or last), then a
    leftover block of zeros: b2frame stores blocks of zeros without filtering them, and fills
    blocks stored as runs of zeros without undoing the filters. Block 4 is a copy of block 0."""
    rng = np.random.default_rng(seed)
    data = dataset("noisy_f32", 4 * blocksize, typesize, seed=seed)
    blocks = []
    # Block 0 of data: delta XORs the others with it.
    for k, kind in enumerate(["data", "zero", "last", "zero", "data", "first", "zero", "middle"]):
        b = bytearray(blocksize)
        if kind == "data":
            b[:] = data[k % 4 * blocksize:(k % 4 + 1) * blocksize]
        elif kind != "zero":
            at = {"first": 0, "middle": blocksize // 2, "last": blocksize - 1}[kind]
            b[at] = int(rng.integers(1, 256))
        blocks.append(bytes(b))
    return b"".join(blocks) + bytes(blocksize // 3 // typesize * typesize + 1)


@pytest.mark.parametrize("codec", list(CODECS))
def test_blocks_of_zeros_give_c_blosc2s_chunk_for_every_pipeline(codec):
    differ = []
    blocksize = 12288  # a multiple of every typesize here
    for pipeline, typesize, split, nthreads in itertools.product(
            PIPELINES, [1, 2, 4, 8, 12, 16], [1, 2], [1, 2]):
        if not valid(pipeline, typesize) or (pipeline == "bytedelta" and typesize == 1):
            continue
        data = blocks_of_zeros_among_data(typesize, blocksize, seed=typesize)
        whole = len(data) // typesize * typesize
        if pipeline in ("delta+shuffle", "shuffle+delta", *LOSSY) and whole != len(data):
            data = data[:whole]  # the bytes c-blosc2 leaves unwritten (see above)
        for d in (data, bytes(len(data))):
            a = theirs(d, codec, 5, pipeline, typesize, split, blocksize=blocksize)
            params = ours_params(codec, 5, pipeline, typesize, split, nthreads=nthreads)
            params.blocksize = blocksize
            b = b2frame.compress(d, params)
            # One thread: c-blosc2's decoder races on a delta after another filter (README).
            back = blosc2.decompress2(b, nthreads=1)
            if pipeline not in LOSSY:
                assert back == d, (pipeline, typesize, split, nthreads)
            # Ours reads c-blosc2's chunk as c-blosc2 does. Its decoder fills blocks whose
            # streams are all runs of zeros without undoing the filters; block 4, a copy of
            # block 0, is such a block after a delta, which must be undone.
            assert b2frame.decompress(a, nthreads) == blosc2.decompress2(a, nthreads=1), (
                pipeline, typesize, split, nthreads)
            if a != b:
                differ.append((pipeline, typesize, split, nthreads, len(d), len(a), len(b)))
    assert not differ, f"{len(differ)} chunks differ from c-blosc2's, e.g. {differ[:5]}"


@pytest.mark.parametrize("codec", [c for c in CODECS if c != b2frame.CODEC_BLOSCLZ])
def test_every_clevel_gives_c_blosc2s_chunk(codec):
    # Each codec maps clevel 1-9 to its own levels (zstd's 8 is 15, not near the maximum as
    # c-blosc2's comment says): every level, not only the matrix's 0, 1, 5 and 9.
    differ = []
    for clevel, kind, pipeline in itertools.product(
            range(10), ["smooth_f64", "noisy_f32", "random"], ["none", "shuffle"]):
        data = dataset(kind, 300_000, 4, seed=clevel)
        a = theirs(data, codec, clevel, pipeline, 4)
        b = b2frame.compress(data, ours_params(codec, clevel, pipeline, 4))
        if a != b:
            differ.append((clevel, kind, pipeline, len(a), len(b)))
    assert not differ, f"{len(differ)} chunks differ from c-blosc2's, e.g. {differ[:5]}"


def test_streams_the_probe_stores_raw_cost_at_most_half_a_percent():
    # Random bytes with a few short repeats (480 bytes in each 256 KiB, under the probe's
    # 1/512): the probe stores the streams raw, where c-blosc2's deflate saves 0.05-0.07%
    # (README, "Where b2frame and c-blosc2 differ").
    rng = np.random.default_rng(3)
    n = 1 << 20
    data = bytearray(rng.integers(0, 256, n, dtype=np.uint8).tobytes())
    for block in range(4):
        for k in range(6):
            at = block * 262144 + 20000 + k * 40000
            data[at:at + 80] = data[at - 3000:at - 2920]
    data = bytes(data)
    larger = 0
    for codec, clevel in itertools.product([b2frame.CODEC_ZLIB, b2frame.CODEC_LZ4HC], [1, 5, 9]):
        a = theirs(data, codec, clevel, "none", 1)
        b = b2frame.compress(data, ours_params(codec, clevel, "none", 1))
        assert blosc2.decompress2(b) == data and b2frame.decompress(a) == data
        assert len(b) * 1000 <= len(a) * 1005, (codec, clevel, len(a), len(b))
        if len(b) > len(a):
            larger += 1
            assert len(b) == n + 32  # stored whole: every stream went raw
        else:
            assert a == b, (codec, clevel)
    # Measured: deflate at clevels 5 and 9 (1,047,929 and 1,048,091 bytes against 1,048,608).
    assert larger == 2


@pytest.mark.parametrize("pipeline", ["none", "shuffle", "bitshuffle", "delta+shuffle"])
def test_blosclz_ratio_within_one_percent(pipeline):
    # Ours makes c-blosc2's decisions at every clevel (hash table sizes 12-14 bits, the second
    # hash at 9), so the chunks are identical, which is stronger than the 1% the issue asks.
    worst, differ = [], []
    for kind in ["smooth_f64", "increasing_i32", "noisy_f32", "random"]:
        for clevel in range(1, 10):
            for typesize in [1, 4, 8]:
                data = dataset(kind, 1_000_000, typesize, seed=3)
                a = theirs(data, b2frame.CODEC_BLOSCLZ, clevel, pipeline, typesize)
                b = b2frame.compress(data, ours_params(b2frame.CODEC_BLOSCLZ, clevel, pipeline, typesize))
                assert blosc2.decompress2(b) == data
                ratio = len(a) / len(b)  # >1: ours is smaller
                worst.append((ratio, kind, clevel, typesize))
                if a != b:
                    differ.append((kind, clevel, typesize))
    assert not differ, f"blosclz chunks differ from c-blosc2's: {differ[:5]}"
    worst.sort()
    assert worst[0][0] >= 0.99, f"blosclz compresses worse than c-blosc2: {worst[:5]}"


def mixed_block(nbytes, compressible_share, seed):
    """Random bytes with a share of them copied from earlier in the buffer: BloscLZ's entropy
    probe lands anywhere from clearly below to clearly above its thresholds."""
    rng = np.random.default_rng(seed)
    out = bytearray(rng.integers(0, 256, nbytes, dtype=np.uint8).tobytes())
    pos = 64
    while pos < nbytes:
        run = int(rng.integers(4, 40))
        if rng.random() < compressible_share:
            back = int(rng.integers(1, min(pos, 9000)))
            for i in range(pos, min(pos + run, nbytes)):
                out[i] = out[i - back]
        pos += run
    return bytes(out)


def test_blosclz_probe_decisions_match_near_thresholds():
    # The probe stops as soon as its answer is certain; the stored/compressed decision per
    # block (and so every byte) must still be c-blosc2's, at every clevel's threshold.
    differ, stored, compressed = [], 0, 0
    for share in np.linspace(0.0, 0.9, 19):
        data = b"".join(mixed_block(40_000, share, seed=int(share * 100) + k) for k in range(3))
        for clevel in range(1, 10):
            a = theirs(data, b2frame.CODEC_BLOSCLZ, clevel, "none", 1)
            b = b2frame.compress(data, ours_params(b2frame.CODEC_BLOSCLZ, clevel, "none", 1))
            if a != b:
                differ.append((round(share, 2), clevel, len(a), len(b)))
            if len(a) > len(data):
                stored += 1
            else:
                compressed += 1
    assert not differ, f"blosclz chunks differ from c-blosc2's: {differ[:5]}"
    # Both outcomes, or the sweep missed the thresholds.
    assert stored > 10 and compressed > 10, (stored, compressed)


@pytest.mark.parametrize("codec", list(CODECS))
def test_chunks_with_stored_and_compressed_blocks_are_byte_identical(codec):
    # Unfiltered streams stored raw are copied only once the chunk is known to fit: a chunk of
    # random blocks with one run of zeros fits (just), one without it is stored memcpyed.
    # Compared with c-blosc2's chunk from 1 thread: with more, c-blosc2 places blocks in the
    # order they finish (the bytes vary from run to run), b2frame always in block order.
    rng = np.random.default_rng(5)
    noise = rng.integers(0, 256, 3_000_000, dtype=np.uint8).tobytes()
    ramp = (np.arange(3_000_000 // 4, dtype="<i4") // 7).tobytes()
    datas = [
        noise[:2_000_000],
        noise[:1_900_000] + bytes(100_000),
        bytes(70_000) + noise[:1_930_000],
        b"".join(noise[i:i + 200_000] + ramp[i:i + 100_000] for i in range(0, 2_400_000, 300_000)),
    ]
    differ = []
    for (k, data), pipeline, clevel in itertools.product(
            enumerate(datas), ["none", "shuffle"], [1, 5, 9]):
        a = theirs(data, codec, clevel, pipeline, 4)
        for nthreads in [1, 2]:
            b = b2frame.compress(data, ours_params(codec, clevel, pipeline, 4, nthreads=nthreads))
            assert blosc2.decompress2(b) == data
            if a != b:
                differ.append((k, pipeline, clevel, nthreads, len(a), len(b)))
    assert not differ, f"{len(differ)} chunks differ from c-blosc2's, e.g. {differ[:5]}"


def test_int_trunc_chunks_are_c_blosc2s_for_every_precision():
    # c-blosc2's global filter 36: meta > 0 keeps that many top bits, < 0 drops that many low
    # bits; nothing to undo. Every meta of every integer size, alone and beside a shuffle,
    # bitshuffle or delta: the same chunk as c-blosc2's, and equal decodes both ways. Metas
    # that leave no bit are refused by both.
    rng = np.random.default_rng(5)
    # At most two filters: with three, c-blosc2 writes into the buffer it compresses. One
    # thread: on two, c-blosc2's chunks with a delta before another filter vary from run to
    # run (90 of 221 differed from b2frame's, and from each other, decoding the same).
    pipelines = [[F.INT_TRUNC], [F.INT_TRUNC, F.SHUFFLE], [F.DELTA, F.INT_TRUNC],
                 [F.INT_TRUNC, F.BITSHUFFLE], [F.SHUFFLE, F.INT_TRUNC]]
    checked = refused = 0
    for typesize in (1, 2, 4, 8):
        width = 8 * typesize
        data = rng.integers(0, 256, 40_000 * typesize, dtype=np.uint8).tobytes()
        for meta in range(-128, 128):
            keeps = 0 < meta <= width or -width < meta < 0
            for filters in pipelines:
                metas = [meta if f == F.INT_TRUNC else 0 for f in filters]
                ours = b2frame.cparams(codec=b2frame.CODEC_ZSTD, clevel=1, typesize=typesize,
                                       filters=[f.value for f in filters],
                                       filters_meta=[m & 0xFF for m in metas])
                if not keeps:
                    with pytest.raises(b2frame.Error):
                        b2frame.compress(data, ours)
                    with pytest.raises(Exception):
                        blosc2.compress2(data, codec=blosc2.Codec.ZSTD, clevel=1, nthreads=1,
                                         typesize=typesize, filters=filters, filters_meta=metas)
                    refused += 1
                    continue
                a = blosc2.compress2(data, codec=blosc2.Codec.ZSTD, clevel=1, typesize=typesize,
                                     nthreads=1, filters=filters, filters_meta=metas)
                b = b2frame.compress(data, ours)
                what = (typesize, meta, [f.name for f in filters])
                assert a == b, what
                assert b2frame.decompress(a) == blosc2.decompress2(b), what
                checked += 1
            if meta in (-width + 1, -1, 1, width):
                # The mask, on whole items: the low bits zeroed, the top ones kept. (On data
                # that compresses: a chunk that does not is stored as given, unfiltered, by
                # c-blosc2 and here alike.)
                dropped = width - meta if meta > 0 else -meta
                items = np.arange(40_000, dtype=f"<u{typesize}") * 3
                want = (items & np.array(~((1 << dropped) - 1) & ((1 << width) - 1),
                                         dtype=f"<u{typesize}")).tobytes()
                single = b2frame.cparams(codec=b2frame.CODEC_ZSTD, clevel=1, typesize=typesize,
                                         filters=[F.INT_TRUNC.value], filters_meta=[meta & 0xFF])
                got = b2frame.decompress(b2frame.compress(items.tobytes(), single))
                assert got == want, (typesize, meta)
    assert checked > 1000 and refused > 100


def test_blocksizes_and_splits_match_c_blosc2_at_every_clevel():
    # The chunk header (flags with the split bit, typesize, nbytes, blocksize) for every codec
    # and clevel: c-blosc2's blocksize depends on the clevel in steps the byte-identity matrix
    # (clevels 0, 1, 5, 9) does not all reach. BloscLZ included: its blocks are c-blosc2's too.
    ramp = (np.arange(400_000 // 4, dtype="<i4") // 3).tobytes()
    differ = []
    for codec, clevel, typesize, size, split, pipeline in itertools.product(
            CODECS, range(10), [1, 4, 16], [40_000, 400_000], [1, 2, 3, 4], ["none", "shuffle"]):
        data = ramp[:size]
        a = theirs(data, codec, clevel, pipeline, typesize, split, nthreads=2)
        b = b2frame.compress(data, ours_params(codec, clevel, pipeline, typesize, split,
                                               nthreads=2))
        if a[:12] != b[:12]:
            differ.append((codec, clevel, typesize, size, split, pipeline, a[:12].hex(),
                           b[:12].hex()))
    assert not differ, f"{len(differ)} chunk headers differ, e.g. {differ[:5]}"


def test_explicit_blocksizes_label_chunks_without_blocks_as_c_blosc2_does():
    # c-blosc2 cuts blocks by the explicit blocksize rounded down to the typesize, but its
    # header records the blocksize as asked, capped at nbytes (any size for an empty chunk).
    # Chunks without blocks (empty, stored, a run of zeros) then differ only in that label.
    rng = np.random.default_rng(9)
    noise = rng.integers(0, 256, 200_000, dtype=np.uint8).tobytes()
    ramp = (np.arange(50_000, dtype="<i4") // 3).tobytes()
    cases = [  # (data, typesize, blocksize, clevel)
        (b"", 1, 4848, 5), (b"", 12, 7, 0), (b"", 4, 0, 5),
        (ramp[:2], 3, 804, 9), (ramp[:6], 7, 8511, 5), (ramp[:6], 7, 0, 5),
        (noise[:107], 33, 10_098, 9), (noise[:5000], 33, 54_487, 5),
        (ramp[:200_000], 24, 4807, 0), (ramp[:40_003], 4, 65_536, 0),
        (noise[:40_001], 4, 100_000, 5), (bytes(40_000), 3, 1000, 5),
        (bytes(40_001), 4, 50_000, 5),
    ]
    differ = []
    for (data, typesize, blocksize, clevel), codec in itertools.product(cases, CODECS):
        a = blosc2.compress2(data, codec=CODECS[codec], clevel=clevel, typesize=typesize,
                             blocksize=blocksize, filters=[F.SHUFFLE], filters_meta=[0])
        b = b2frame.compress(data, b2frame.cparams(codec=codec, clevel=clevel, typesize=typesize,
                                                   blocksize=blocksize, filters=[F.SHUFFLE.value]))
        assert blosc2.decompress2(b) == data and b2frame.decompress(a) == data
        if a != b:
            differ.append((len(data), typesize, blocksize, clevel, codec, a[:32].hex(),
                           b[:32].hex()))
    assert not differ, f"{len(differ)} chunks differ from c-blosc2's, e.g. {differ[:3]}"


def barely_compressible(rng, n):
    """Random bytes with a few short runs: compresses a little, or not at all."""
    out = bytearray()
    runs = int(rng.integers(1, 41))
    while len(out) < n:
        if len(out) > 8 and rng.integers(0, 100) < runs:
            out += bytes([out[-1 - int(rng.integers(0, 8))]]) * 6
        else:
            out += rng.integers(0, 256, 16, dtype=np.uint8).tobytes()[:1 + int(rng.integers(0, 16))]
    return bytes(out[:n])


@pytest.mark.parametrize("codec", list(CODECS))
def test_chunks_that_barely_fit_are_c_blosc2_serial_chunks_on_any_thread_count(codec):
    # c-blosc2 compresses serially below two whole blocks, whatever nthreads says, and its
    # serial compressor gives each block only the room left in the chunk, where a codec may
    # give up (zstd does, short of its worst-case bound): whether such a chunk is stored as is
    # depends on it. b2frame on 2 threads must give c-blosc2's serial chunk.
    rng = np.random.default_rng(3)
    differ, stored = [], 0
    for case in range(600):
        blocksize = [256, 1024, 4096][case % 3]
        n = int(rng.integers(1, 6)) * blocksize + int(rng.integers(0, blocksize))
        data = barely_compressible(rng, n)
        clevel, typesize = int(rng.integers(1, 10)), [1, 2, 4, 8][case % 4]
        split = [1, 2, 3, 4][int(rng.integers(0, 4))]
        a = blosc2.compress2(data, codec=CODECS[codec], clevel=clevel, filters=[F.NOFILTER],
                             filters_meta=[0], typesize=typesize, blocksize=blocksize,
                             splitmode=blosc2.SplitMode(split), nthreads=1)
        stored += a[2] & 0x2 != 0
        for nthreads in [1, 2]:
            p = b2frame.cparams(codec=codec, clevel=clevel, typesize=typesize,
                                blocksize=blocksize, splitmode=split, nthreads=nthreads,
                                filters=[], filters_meta=[])
            b = b2frame.compress(data, p)
            if a != b:
                differ.append((case, n, blocksize, clevel, typesize, split, nthreads,
                               len(a), len(b)))
    assert not differ, f"{len(differ)} chunks differ from c-blosc2's, e.g. {differ[:5]}"
    assert 20 < stored < 580, f"{stored} of 600 stored as is: the edge was not visited"


def run_streams(chunk):
    """The csize of every stream of every block of a split chunk (negative: a run of one
    byte; 0: a run of zeros)."""
    nbytes, blocksize = int.from_bytes(chunk[4:8], "little"), int.from_bytes(chunk[8:12], "little")
    typesize, nblocks = chunk[3], -(-nbytes // blocksize)
    word = lambda at: int.from_bytes(chunk[at:at + 4], "little", signed=True)
    sizes = []
    for j in range(nblocks - (nbytes % blocksize > 0)):
        pos = word(32 + 4 * j)
        for _ in range(typesize):
            csize = word(pos)
            pos += 4 + max(csize, 0) + (csize < 0)
            sizes.append(csize)
    return sizes


@pytest.mark.parametrize("codec", list(CODECS))
def test_c_blosc2_run_planes_decode_here(codec):
    # Shuffled planes that are runs of one byte other than zero (c-blosc2 stores them as a
    # negative csize): the exponent byte of floats in [16, 32), twice per item at typesize
    # 8; the high bytes of small negative integers. Split always, as only some codecs split
    # by default. The decoder keeps such planes per thread across blocks and chunks.
    x = np.arange(1_000_000)
    datas = [
        (20 + 5 * np.sin(x * 1e-3)).astype("<f4").tobytes(),
        (-(x // 9) - 1).astype("<i4").tobytes(),
        (-(x // 9) - 1).astype("<i8").tobytes(),
    ]
    for data, typesize, clevel in itertools.product(datas, [4, 8], [1, 5, 9]):
        chunk = theirs(data, codec, clevel, "shuffle", typesize, splitmode=1)
        assert min(run_streams(chunk)) < 0, (typesize, clevel)
        assert b2frame.decompress(chunk) == data, (typesize, clevel)
        assert b2frame.decompress(chunk, nthreads=2) == data, (typesize, clevel)


@pytest.mark.parametrize("typesize", [1, 2, 4, 8, 3, 12])
def test_c_blosc2_bytedelta_34_decodes_here(typesize):
    # Filter 34, bytedelta's first release: c-blosc2 restarts each stream's running value
    # after its last whole 16 bytes, so streams whose length is not a multiple of 16 decode
    # differently from filter 35. Item counts give such tails in one block and in the last
    # of many. (Whole items only: c-blosc2 leaves the bytes after them unwritten here.)
    for nitems, kind in itertools.product([1000, 4136, 100_003, 400_009],
                                          ["increasing_i32", "noisy_f32", "random"]):
        data = dataset(kind, nitems * typesize, typesize, seed=nitems)
        chunk = blosc2.compress2(data, codec=blosc2.Codec.LZ4, clevel=5, typesize=typesize,
                                 filters=[F.SHUFFLE, 34], filters_meta=[0, typesize])
        assert chunk[17] == 34
        assert blosc2.decompress2(chunk) == data
        assert b2frame.decompress(chunk) == data, (nitems, kind)
        assert b2frame.decompress(chunk, nthreads=2) == data, (nitems, kind)


@pytest.mark.parametrize("codec", [b2frame.CODEC_ZSTD, b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC])
def test_dictionaries_both_ways(codec):
    for kind in ["smooth_f64", "increasing_i32", "noisy_f32"]:
        for clevel in [1, 5, 9]:
            data = dataset(kind, 2_000_000, 8, seed=11)
            a = theirs(data, codec, clevel, "shuffle", 8, use_dict=True)
            b = b2frame.compress(data, ours_params(codec, clevel, "shuffle", 8, use_dict=True))
            assert b2frame.decompress(a) == data
            assert blosc2.decompress2(b) == data
            assert a == b, (kind, clevel, len(a), len(b))


@pytest.mark.parametrize("codec", [b2frame.CODEC_ZSTD, b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC])
def test_stored_chunks_with_use_dict_decode_in_c_blosc2(codec):
    # Incompressible data with use_dict is stored (memcpyed). c-blosc2 keeps the dictionary
    # flag on such a chunk and then cannot decode it (it reads a dictionary size from the
    # data); ours drop the flag, and c-blosc2's flagged ones still decode here.
    data = dataset("random", 65536, 8, seed=7)
    ours = b2frame.compress(data, ours_params(codec, 5, "bitshuffle", 8, use_dict=True))
    assert ours[2] & 0x02 and not ours[31] & 0x01
    assert blosc2.decompress2(ours) == data
    theirs_ = theirs(data, codec, 5, "bitshuffle", 8, use_dict=True)
    assert b2frame.decompress(theirs_) == data


@pytest.mark.parametrize("codec", [b2frame.CODEC_ZSTD, b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC])
def test_small_chunks_with_use_dict_are_c_blosc2s(codec):
    # Too small for a dictionary: c-blosc2 stores them, after a second pass without one. An
    # empty input comes out of that pass marked a run of zeros, 1-byte blocks whose starts do
    # not fit keep the split and codec flags of that pass (both found by test_random_chunks).
    # 31 bytes of one value are left out: c-blosc2 stores them flagged both stored and
    # compressed, and cannot read them back (b2frame stores them).
    for data, typesize in [(b"", 1), (b"", 4), (bytes(range(20)), 1), (bytes(range(97)), 200),
                           (bytes(64), 100), (bytes(range(31)), 4)]:
        a = theirs(data, codec, 5, "shuffle", typesize, use_dict=True)
        b = b2frame.compress(data, ours_params(codec, 5, "shuffle", typesize, use_dict=True))
        assert blosc2.decompress2(b) == data and b2frame.decompress(a) == data
        assert a == b, (len(data), typesize, a[:32].hex(), b[:32].hex())


def test_chunk_sizes_match_c_blosc2():
    data = dataset("smooth_f64", 1_000_000, 8)
    chunk = theirs(data, b2frame.CODEC_ZSTD, 5, "shuffle", 8)
    nbytes, cbytes, blocksize = b2frame.chunk_sizes(chunk)
    assert (nbytes, cbytes, blocksize) == blosc2.get_cbuffer_sizes(chunk)


def test_unknown_codec_is_unsupported():
    data = dataset("smooth_f64", 100_000, 8)
    chunk = bytearray(theirs(data, b2frame.CODEC_LZ4, 5, "shuffle", 8))
    chunk[2] = (chunk[2] & 0x1F) | (6 << 5)
    chunk[22] = 33
    with pytest.raises(b2frame.Error) as e:
        b2frame.decompress(bytes(chunk))
    assert e.value.status == b2frame.ERR_UNSUPPORTED
    assert "33" in str(e.value)


def test_c_blosc2_blocks_with_unstored_bytes_are_refused():
    # An explicit blocksize above nbytes that is not a multiple of the typesize: c-blosc2
    # writes one block of nbytes split into typesize streams of nbytes // typesize bytes, so
    # the block's last nbytes % typesize bytes are never stored.
    data = (np.arange(1000) // 3 % 256).astype(np.uint8).tobytes()
    chunk = blosc2.compress2(data, codec=blosc2.Codec.LZ4, clevel=5, typesize=12, filters=[F.DELTA],
                             filters_meta=[0], splitmode=blosc2.SplitMode.ALWAYS_SPLIT, blocksize=10000)
    assert blosc2.get_cbuffer_sizes(chunk)[2] == 1000  # not rounded to the typesize
    assert blosc2.decompress2(chunk) != data  # c-blosc2 cannot read back those bytes either
    with pytest.raises(b2frame.Error) as e:
        b2frame.decompress(chunk)
    assert e.value.status == b2frame.ERR_CORRUPT
    assert "its last 4 bytes were never stored" in str(e.value)
    # Ours rounds the blocksize down: the chunk is whole, and c-blosc2 reads it.
    ours = b2frame.compress(data, codec=b2frame.CODEC_LZ4, clevel=5, typesize=12, filters=[3],
                            splitmode=b2frame.SPLIT_ALWAYS, blocksize=10000)
    assert b2frame.chunk_sizes(ours)[2] == 996
    assert blosc2.decompress2(ours) == data


def pipelines_to_check():
    """Every pipeline of up to four filters (slots 0..3), plus 300 random six-slot ones with
    empty slots. Trunc_prec is left out: it is lossy, and c-blosc2 skips it when decoding as
    it skips an empty slot. Int_trunc keeping all 32 bits (meta 32) changes nothing, but
    c-blosc2 decodes it as a step of its buffer rotation (a copy)."""
    ids = [F.SHUFFLE, F.BITSHUFFLE, F.DELTA, F.BYTEDELTA, F.INT_TRUNC]
    for n in range(1, 5):
        yield from itertools.product(ids, repeat=n)
    rng = np.random.default_rng(7)
    for _ in range(300):
        yield tuple(F(int(f)) for f in rng.choice([0] + [f.value for f in ids], size=6))


def test_filter_pipelines_are_written_only_where_c_blosc2_reads_them():
    # One block: c-blosc2's encoder overwrites its input from the third filter on, which
    # corrupts the delta reference of later blocks (and memcpyed chunks), but block 0 is
    # filtered before that.
    data = (np.arange(4096) // 3).astype("<i4").tobytes()
    refused = accepted = 0
    for pipeline in pipelines_to_check():
        meta = [{F.BYTEDELTA: 4, F.INT_TRUNC: 32}.get(f, 0) for f in pipeline]
        # A copy, as c-blosc2 writes into the buffer it compresses (even a bytes object).
        chunk = blosc2.compress2(bytearray(data), codec=blosc2.Codec.LZ4, clevel=5, typesize=4,
                                 filters=list(pipeline), filters_meta=meta, blocksize=len(data),
                                 nthreads=1)
        if chunk[2] & 0x2:
            continue  # memcpyed: no filter is undone
        # We decode every pipeline as the filters define it.
        assert b2frame.decompress(chunk) == data, pipeline
        c_blosc2_reads = blosc2.decompress2(chunk, nthreads=1) == data
        ids = [f.value for f in pipeline]
        try:
            ours = b2frame.compress(data, codec=b2frame.CODEC_LZ4, clevel=5, typesize=4,
                                    filters=ids, filters_meta=meta)
        except b2frame.Error as e:
            assert e.status == b2frame.ERR_UNSUPPORTED, pipeline
            assert "c-blosc2 decodes" in str(e), pipeline
            # Refused exactly where c-blosc2 misreads serially, or with two deltas (which it
            # misreads on more than one thread).
            assert not c_blosc2_reads or ids.count(F.DELTA.value) > 1, pipeline
            refused += 1
            continue
        assert c_blosc2_reads, pipeline
        assert blosc2.decompress2(ours, nthreads=1) == data, pipeline
        assert b2frame.decompress(ours) == data, pipeline
        accepted += 1
    assert refused > 150 and accepted > 400, (refused, accepted)


def test_two_delta_filters_misread_by_c_blosc2_on_two_threads():
    # Why b2frame refuses two deltas even where c-blosc2 decodes them on one thread: on two,
    # its workers wait for block 0's first delta only (a chunk of many blocks, two filters,
    # so c-blosc2's own encoder is right).
    data = (np.arange(1 << 18) // 3).astype("<i4").tobytes()
    chunk = blosc2.compress2(data, codec=blosc2.Codec.LZ4, clevel=5, typesize=4,
                             filters=[F.DELTA, F.DELTA], filters_meta=[0, 0], blocksize=16384)
    assert blosc2.decompress2(chunk, nthreads=1) == data
    assert b2frame.decompress(chunk) == data
    assert b2frame.decompress(chunk, nthreads=2) == data
    assert any(blosc2.decompress2(chunk, nthreads=2) != data for _ in range(20))
    with pytest.raises(b2frame.Error) as e:
        b2frame.compress(data, codec=b2frame.CODEC_LZ4, typesize=4, filters=[3, 3])
    assert e.value.status == b2frame.ERR_UNSUPPORTED


def test_lossy_filters_before_a_delta_read_back_truncated_in_both():
    # Decoders undo a delta against block 0 as it reads back; with a lossy filter before the
    # delta that is block 0 truncated, and b2frame codes the other blocks against it (c-blosc2
    # codes them against the raw block 0, so its chunks read back wrong in both libraries).
    # One thread for c-blosc2: with a filter to undo after the delta, on two it races.
    smooth = np.sin(np.linspace(0, 40, 1 << 16))
    floats = (np.round(smooth * 1000) / 1000).astype("<f8")
    ints = (np.arange(1 << 16) * 37 // 5).astype("<i4")
    cases = [  # (data, filters, metas, bits kept of each little-endian word)
        (floats, [F.TRUNC_PREC, F.DELTA], [20, 0], 12 + 20),
        (floats, [F.TRUNC_PREC, F.SHUFFLE, F.DELTA], [30, 0, 0], 12 + 30),
        (floats, [F.TRUNC_PREC, F.DELTA, F.BITSHUFFLE], [10, 0, 0], 12 + 10),
        (floats, [F.TRUNC_PREC, F.BYTEDELTA, F.DELTA], [16, 8, 0], 12 + 16),
        (floats.astype("<f4"), [F.TRUNC_PREC, F.DELTA, F.SHUFFLE], [12, 0, 0], 9 + 12),
        (ints, [F.INT_TRUNC, F.DELTA], [24, 0], 24),
    ]
    wrong_in_c_blosc2s = 0
    for data, filters, metas, kept in cases:
        width = 8 * data.itemsize
        word = np.frombuffer(data.tobytes(), f"<u{data.itemsize}")
        want = (word & np.array(((1 << width) - 1) ^ ((1 << (width - kept)) - 1),
                                dtype=word.dtype)).tobytes()
        for codec in (b2frame.CODEC_LZ4, b2frame.CODEC_ZSTD):
            ours = b2frame.compress(data.tobytes(), codec=codec, clevel=5,
                                    typesize=data.itemsize, blocksize=16384,
                                    filters=[f.value for f in filters], filters_meta=metas)
            what = ([f.name for f in filters], codec)
            assert not ours[2] & 0x2, what  # compressed, not stored: 16 or 32 blocks filtered
            assert b2frame.decompress(ours) == want, what
            assert b2frame.decompress(ours, nthreads=2) == want, what
            assert blosc2.decompress2(ours, nthreads=1) == want, what
            theirs = blosc2.compress2(data.tobytes(), codec=blosc2.Codec(codec), clevel=5,
                                      typesize=data.itemsize, blocksize=16384, nthreads=1,
                                      filters=filters, filters_meta=metas)
            wrong_in_c_blosc2s += blosc2.decompress2(theirs, nthreads=1) != want
            assert b2frame.decompress(theirs) == blosc2.decompress2(theirs, nthreads=1), what
    assert wrong_in_c_blosc2s > 0
