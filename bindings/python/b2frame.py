"""b2frame for Python: a ctypes binding of libb2frame (the C API in include/b2frame.h).

    import b2frame
    chunk = b2frame.compress(data, typesize=8, codec=b2frame.CODEC_ZSTD, clevel=5)
    assert b2frame.decompress(chunk) == data

The library is found through $B2F_LIB, else next to this file, else the system loader.
"""

import ctypes
import ctypes.util
import os

CODEC_BLOSCLZ, CODEC_LZ4, CODEC_LZ4HC, CODEC_ZLIB, CODEC_ZSTD = 0, 1, 2, 4, 5
FILTER_NONE, FILTER_SHUFFLE, FILTER_BITSHUFFLE, FILTER_DELTA, FILTER_TRUNC_PREC = 0, 1, 2, 3, 4
FILTER_BYTEDELTA = 35
SPLIT_ALWAYS, SPLIT_NEVER, SPLIT_AUTO, SPLIT_FORWARD_COMPAT = 1, 2, 3, 4

OK = 0
ERR_INVALID_ARGUMENT = -1
ERR_IO = -2
ERR_FORMAT = -3
ERR_CORRUPT = -4
ERR_UNSUPPORTED = -5
ERR_NOT_FOUND = -6
ERR_BUFFER_TOO_SMALL = -7
ERR_READ_ONLY = -8
ERR_NO_MEMORY = -9
ERR_INTERNAL = -10


class Error(Exception):
    """A b2frame call failed: `status` is the b2f_status code, the text the library's message."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _load():
    path = os.environ.get("B2F_LIB")
    if not path:
        here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libb2frame.so")
        path = here if os.path.exists(here) else ctypes.util.find_library("b2frame")
    if not path:
        raise OSError("libb2frame not found: set B2F_LIB to its path")
    return ctypes.CDLL(path)


lib = _load()
lib.b2f_version.restype = ctypes.c_char_p
lib.b2f_last_error.restype = ctypes.c_char_p
lib.b2f_status_message.restype = ctypes.c_char_p
lib.b2f_status_message.argtypes = [ctypes.c_int32]
lib.b2f_max_compressed_size.restype = ctypes.c_size_t
lib.b2f_max_compressed_size.argtypes = [ctypes.c_size_t]


class CParams(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("codec", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("filters", ctypes.c_uint8 * 6),
        ("filters_meta", ctypes.c_uint8 * 6),
        ("typesize", ctypes.c_int32),
        ("blocksize", ctypes.c_int32),
        ("nthreads", ctypes.c_int16),
        ("splitmode", ctypes.c_uint8),
        ("use_dict", ctypes.c_uint8),
    ]


def _check(status):
    if status != OK:
        raise Error(status, lib.b2f_last_error().decode("utf-8", "replace"))


def version():
    return lib.b2f_version().decode()


def cparams(codec=None, clevel=None, filters=None, filters_meta=None, typesize=None,
            blocksize=None, nthreads=None, splitmode=None, use_dict=None):
    """A CParams with c-blosc2's defaults, overridden by the arguments given."""
    p = CParams()
    lib.b2f_cparams_default(ctypes.byref(p))
    for name, value in [("codec", codec), ("clevel", clevel), ("typesize", typesize),
                        ("blocksize", blocksize), ("nthreads", nthreads),
                        ("splitmode", splitmode), ("use_dict", use_dict)]:
        if value is not None:
            setattr(p, name, int(value))
    if filters is not None:
        f = list(filters) + [0] * (6 - len(filters))
        for i in range(6):
            p.filters[i] = f[i]
    if filters_meta is not None:
        m = list(filters_meta) + [0] * (6 - len(filters_meta))
        for i in range(6):
            p.filters_meta[i] = m[i]
    return p


def compress(data, params=None, **kwargs):
    """Compresses bytes into one Blosc2 chunk."""
    p = params if params is not None else cparams(**kwargs)
    data = bytes(data)
    out = ctypes.create_string_buffer(lib.b2f_max_compressed_size(len(data)))
    n = ctypes.c_size_t()
    _check(lib.b2f_compress(ctypes.byref(p), data, ctypes.c_size_t(len(data)), out,
                            ctypes.c_size_t(len(out)), ctypes.byref(n)))
    return out.raw[:n.value]


def decompress(chunk, nthreads=1):
    """Decompresses one Blosc/Blosc2 chunk."""
    chunk = bytes(chunk)
    n = ctypes.c_size_t()
    _check(lib.b2f_decompress(chunk, ctypes.c_size_t(len(chunk)), None, ctypes.c_size_t(0),
                              ctypes.byref(n)))
    out = ctypes.create_string_buffer(max(n.value, 1))
    _check(lib.b2f_decompress_threads(chunk, ctypes.c_size_t(len(chunk)), out,
                                      ctypes.c_size_t(n.value), ctypes.c_int16(nthreads),
                                      ctypes.byref(n)))
    return out.raw[:n.value]


def chunk_sizes(chunk):
    """(nbytes, cbytes, blocksize) of a chunk."""
    chunk = bytes(chunk)
    nb, cb, bs = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_size_t()
    _check(lib.b2f_chunk_sizes(chunk, ctypes.c_size_t(len(chunk)), ctypes.byref(nb),
                               ctypes.byref(cb), ctypes.byref(bs)))
    return nb.value, cb.value, bs.value
