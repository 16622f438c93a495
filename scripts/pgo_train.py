"""The training run behind cmake/codecs.profdata (scripts/pgo-train.sh runs it).

Compresses, with every codec whose compressor is built with the profile, kinds of data that
Blosc2 users store: text, noisy floats, timestamps, image-like integers, labels in runs, sparse
masks, event counters, random bytes. None of it is the benchmark's data (bench/bench_chunk.c): a profile
trained on what is measured would flatter the measurement.
"""

import glob
import os
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bindings", "python"))
import b2frame  # noqa: E402

rng = np.random.default_rng(2026)
N = 1 << 21
text = b"".join(open(p, "rb").read()
                for p in sorted(glob.glob(os.path.join(ROOT, "src", "**", "*.rs"), recursive=True)))
t = np.arange(N // 4, dtype=np.float64)
datasets = [
    ("text", (text * (N // len(text) + 1))[:N], 1),
    ("random", rng.integers(0, 256, N, dtype=np.uint8).tobytes(), 1),
    ("noisy_f32", (np.cos(t * 3e-3) * 50 + rng.normal(0, 0.5, N // 4)).astype(np.float32).tobytes(), 4),
    ("timestamps_i64",
     (1_700_000_000_000 + np.cumsum(rng.integers(0, 1000, N // 8))).astype(np.int64).tobytes(), 8),
    ("image_u16",
     (np.add.outer(np.arange(512), np.arange(N // 1024)) % 4096).astype(np.uint16).tobytes(), 2),
    ("labels_i32",
     np.repeat(rng.integers(0, 50, N // 16), rng.integers(1, 8, N // 16))[:N // 4]
     .astype(np.int32).tobytes(), 4),
    ("mask_i32", (rng.random(N // 4) < 0.02).astype(np.int32).tobytes(), 4),
    ("event_count_i32", np.cumsum(rng.random(N // 4) < 0.1).astype(np.int32).tobytes(), 4),
]

# Each codec's strategies and the dictionary paths: code the run never reaches is taken as
# cold and built for size, so what is left out here would get slower, not stay as it was.
# zstd's clevels map to levels 1-17 over five strategies, so all of them; zlib-ng's 1, 3, 5, 6
# and 9 reach its quick, fast, medium and slow deflate (all clevels there profiled its deflate
# worse: random data 0.97-1.00 -> 0.92-0.96 of c-blosc2's speed).
CLEVELS = {b2frame.CODEC_ZLIB: (1, 3, 5, 6, 9)}
DICT_CODECS = (b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC, b2frame.CODEC_ZSTD)
for name, data, typesize in datasets:
    for codec in (b2frame.CODEC_LZ4, b2frame.CODEC_LZ4HC, b2frame.CODEC_ZLIB, b2frame.CODEC_ZSTD):
        for clevel in CLEVELS.get(codec, range(1, 10)):
            for filt in (b2frame.FILTER_NONE, b2frame.FILTER_SHUFFLE, b2frame.FILTER_BITSHUFFLE):
                for use_dict in (False, True) if codec in DICT_CODECS else (False,):
                    chunk = b2frame.compress(data, typesize=typesize, codec=codec, clevel=clevel,
                                             filters=[filt], use_dict=use_dict)
                    assert b2frame.decompress(chunk) == data, (name, codec, clevel, filt, use_dict)
print("trained on", len(datasets), "datasets")
