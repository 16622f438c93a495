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
FILTER_BYTEDELTA, FILTER_INT_TRUNC, FILTER_NDCELL, FILTER_NDMEAN = 35, 36, 32, 33
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


def getitem(chunk, start, nitems):
    """Items [start, start + nitems) of a chunk (in its header's typesize), decoding only the
    blocks that hold them."""
    chunk = bytes(chunk)
    n = ctypes.c_size_t()
    args = (chunk, ctypes.c_size_t(len(chunk)), ctypes.c_int64(start), ctypes.c_int64(nitems))
    st = lib.b2f_getitem(*args, None, ctypes.c_size_t(0), ctypes.byref(n))
    if st == ERR_BUFFER_TOO_SMALL:
        out = ctypes.create_string_buffer(n.value)
        st = lib.b2f_getitem(*args, out, ctypes.c_size_t(n.value), ctypes.byref(n))
        _check(st)
        return out.raw[:n.value]
    _check(st)
    return b""


def chunk_sizes(chunk):
    """(nbytes, cbytes, blocksize) of a chunk."""
    chunk = bytes(chunk)
    nb, cb, bs = ctypes.c_size_t(), ctypes.c_size_t(), ctypes.c_size_t()
    _check(lib.b2f_chunk_sizes(chunk, ctypes.c_size_t(len(chunk)), ctypes.byref(nb),
                               ctypes.byref(cb), ctypes.byref(bs)))
    return nb.value, cb.value, bs.value


# ---- frames ----

READ, WRITE, SYNC = 1, 2, 4
SPECIAL_ZERO, SPECIAL_NAN, SPECIAL_UNINIT = 1, 2, 4


class Storage(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("contiguous", ctypes.c_bool),
        ("chunksize", ctypes.c_int32),
        ("cparams", CParams),
        ("sync", ctypes.c_bool),
    ]


class Info(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("nchunks", ctypes.c_int64),
        ("nbytes", ctypes.c_int64),
        ("cbytes", ctypes.c_int64),
        ("typesize", ctypes.c_int32),
        ("chunksize", ctypes.c_int32),
        ("blocksize", ctypes.c_int32),
        ("codec", ctypes.c_uint8),
        ("clevel", ctypes.c_uint8),
        ("filters", ctypes.c_uint8 * 6),
        ("filters_meta", ctypes.c_uint8 * 6),
        ("contiguous", ctypes.c_bool),
        ("format_version", ctypes.c_uint8),
    ]


def _path(p):
    return os.fsencode(os.fspath(p)) if p is not None else None


def _name_arg(name):
    return name if isinstance(name, bytes) else name.encode("utf-8", "surrogateescape")


def _sized(call, *args):
    """The two-call pattern: ask the size, then fill a buffer of that size."""
    n = ctypes.c_size_t()
    _check(call(*args, None, ctypes.c_size_t(0), ctypes.byref(n)))
    buf = ctypes.create_string_buffer(max(n.value, 1))
    _check(call(*args, buf, ctypes.c_size_t(n.value), ctypes.byref(n)))
    return buf.raw[:n.value]


class Frame:
    """A Blosc2 frame (super-chunk) opened or created through libb2frame."""

    def __init__(self, handle):
        self._h = handle

    @classmethod
    def open(cls, path, mode=READ, offset=0):
        h = ctypes.c_void_p()
        _check(lib.b2f_open_offset(_path(path), ctypes.c_uint64(offset), ctypes.c_uint32(mode),
                                   ctypes.byref(h)))
        return cls(h)

    @classmethod
    def from_buffer(cls, data, mode=READ):
        data = bytes(data)
        h = ctypes.c_void_p()
        _check(lib.b2f_open_buffer(data, ctypes.c_size_t(len(data)), ctypes.c_uint32(mode),
                                   ctypes.byref(h)))
        return cls(h)

    @classmethod
    def create(cls, path=None, contiguous=True, chunksize=0, sync=False, **cparams_kwargs):
        s = Storage()
        s.struct_size = ctypes.sizeof(Storage)
        s.contiguous = contiguous
        s.chunksize = chunksize
        s.sync = sync
        s.cparams = cparams(**cparams_kwargs)
        h = ctypes.c_void_p()
        _check(lib.b2f_create(_path(path), ctypes.byref(s), ctypes.byref(h)))
        return cls(h)

    def close(self):
        if self._h:
            lib.b2f_close(self._h)
            self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        self.close()

    def info(self):
        i = Info()
        i.struct_size = ctypes.sizeof(Info)
        _check(lib.b2f_get_info(self._h, ctypes.byref(i)))
        return i

    @property
    def nchunks(self):
        return self.info().nchunks

    def chunk(self, i):
        return _sized(lib.b2f_get_chunk, self._h, ctypes.c_int64(i))

    def chunk_raw(self, i):
        return _sized(lib.b2f_get_chunk_raw, self._h, ctypes.c_int64(i))

    def slice(self, start, stop):
        n = (stop - start) * self.info().typesize
        buf = ctypes.create_string_buffer(max(n, 1))
        _check(lib.b2f_get_slice(self._h, ctypes.c_int64(start), ctypes.c_int64(stop), buf,
                                 ctypes.c_size_t(n)))
        return buf.raw[:n]

    def append(self, data):
        data = bytes(data)
        n = ctypes.c_int64()
        _check(lib.b2f_append(self._h, data, ctypes.c_size_t(len(data)), ctypes.byref(n)))
        return n.value

    def append_chunk(self, chunk):
        chunk = bytes(chunk)
        n = ctypes.c_int64()
        _check(lib.b2f_append_chunk(self._h, chunk, ctypes.c_size_t(len(chunk)), ctypes.byref(n)))
        return n.value

    def insert(self, pos, data):
        data = bytes(data)
        _check(lib.b2f_insert(self._h, ctypes.c_int64(pos), data, ctypes.c_size_t(len(data))))

    def update(self, i, data):
        data = bytes(data)
        _check(lib.b2f_update(self._h, ctypes.c_int64(i), data, ctypes.c_size_t(len(data))))

    def delete(self, i):
        _check(lib.b2f_delete(self._h, ctypes.c_int64(i)))

    def reorder(self, order):
        arr = (ctypes.c_int64 * len(order))(*order)
        _check(lib.b2f_reorder(self._h, arr, ctypes.c_size_t(len(order))))

    def fill_special(self, nitems, special):
        _check(lib.b2f_fill_special(self._h, ctypes.c_int64(nitems), ctypes.c_int32(special)))

    def to_buffer(self):
        return _sized(lib.b2f_to_buffer, self._h)

    def save(self, path, contiguous=True):
        _check(lib.b2f_save(self._h, _path(path), ctypes.c_bool(contiguous)))

    # Names are bytes in the format, usually UTF-8: others round-trip through str with
    # surrogateescape, and bytes are taken as they are.
    def meta(self, name):
        return _sized(lib.b2f_meta_get, self._h, _name_arg(name))

    def meta_add(self, name, content):
        content = bytes(content)
        _check(lib.b2f_meta_add(self._h, _name_arg(name), content, ctypes.c_size_t(len(content))))

    def meta_update(self, name, content):
        content = bytes(content)
        _check(lib.b2f_meta_update(self._h, _name_arg(name), content, ctypes.c_size_t(len(content))))

    def meta_names(self):
        n = ctypes.c_size_t()
        _check(lib.b2f_meta_count(self._h, ctypes.byref(n)))
        return [_sized(lib.b2f_meta_name, self._h, ctypes.c_size_t(i))[:-1].decode(
                    "utf-8", "surrogateescape")
                for i in range(n.value)]

    def vlmeta(self, name):
        return _sized(lib.b2f_vlmeta_get, self._h, _name_arg(name))

    def vlmeta_set(self, name, content):
        content = bytes(content)
        _check(lib.b2f_vlmeta_set(self._h, _name_arg(name), content, ctypes.c_size_t(len(content))))

    def vlmeta_delete(self, name):
        _check(lib.b2f_vlmeta_delete(self._h, _name_arg(name)))

    def vlmeta_names(self):
        n = ctypes.c_size_t()
        _check(lib.b2f_vlmeta_count(self._h, ctypes.byref(n)))
        return [_sized(lib.b2f_vlmeta_name, self._h, ctypes.c_size_t(i))[:-1].decode(
                    "utf-8", "surrogateescape")
                for i in range(n.value)]


lib.b2f_open_offset.argtypes = [ctypes.c_char_p, ctypes.c_uint64, ctypes.c_uint32, ctypes.c_void_p]
for _name in ["b2f_close", "b2f_get_info", "b2f_get_chunk", "b2f_get_chunk_raw", "b2f_get_slice",
              "b2f_append", "b2f_append_chunk", "b2f_insert", "b2f_update", "b2f_delete",
              "b2f_reorder", "b2f_fill_special", "b2f_to_buffer", "b2f_save", "b2f_meta_get",
              "b2f_meta_add", "b2f_meta_update", "b2f_meta_count", "b2f_meta_name",
              "b2f_vlmeta_get", "b2f_vlmeta_set", "b2f_vlmeta_delete", "b2f_vlmeta_count",
              "b2f_vlmeta_name"]:
    getattr(lib, _name).restype = ctypes.c_int32 if _name != "b2f_close" else None


MAX_DIM = 16


class NdInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("ndim", ctypes.c_int8),
        ("shape", ctypes.c_int64 * MAX_DIM),
        ("chunkshape", ctypes.c_int32 * MAX_DIM),
        ("blockshape", ctypes.c_int32 * MAX_DIM),
        ("itemsize", ctypes.c_int32),
        ("dtype_format", ctypes.c_uint8),
        ("dtype", ctypes.c_char * 64),
    ]


def _i64s(v):
    return (ctypes.c_int64 * max(len(v), 1))(*v)


class Array(Frame):
    """An n-dimensional array (a frame with a b2nd or caterva metalayer)."""

    @classmethod
    def create(cls, path, shape, chunks, blocks, dtype, contiguous=True, **cparams_kwargs):
        s = Storage()
        s.struct_size = ctypes.sizeof(Storage)
        s.contiguous = contiguous
        s.cparams = cparams(**cparams_kwargs)
        nd = len(shape)
        h = ctypes.c_void_p()
        _check(lib.b2f_nd_create(_path(path), ctypes.byref(s), ctypes.c_int8(nd), _i64s(shape),
                                 (ctypes.c_int32 * max(nd, 1))(*chunks),
                                 (ctypes.c_int32 * max(nd, 1))(*blocks),
                                 dtype.encode(), ctypes.byref(h)))
        return cls(h)

    def nd_info(self):
        i = NdInfo()
        i.struct_size = ctypes.sizeof(NdInfo)
        _check(lib.b2f_nd_info_get(self._h, ctypes.byref(i)))
        return i

    @property
    def shape(self):
        i = self.nd_info()
        return tuple(i.shape[:i.ndim])

    @property
    def chunks(self):
        i = self.nd_info()
        return tuple(i.chunkshape[:i.ndim])

    @property
    def blocks(self):
        i = self.nd_info()
        return tuple(i.blockshape[:i.ndim])

    @property
    def itemsize(self):
        return self.nd_info().itemsize

    @property
    def dtype(self):
        return _sized(lib.b2f_nd_dtype, self._h).decode()

    def get_slice(self, start, stop):
        """The C-order bytes of the slab [start, stop)."""
        n = self.itemsize
        for a, b in zip(start, stop):
            n *= max(b - a, 0)
        buf = ctypes.create_string_buffer(max(n, 1))
        _check(lib.b2f_nd_get_slice(self._h, _i64s(start), _i64s(stop), buf, ctypes.c_size_t(n)))
        return buf.raw[:n]

    def set_slice(self, start, stop, data):
        data = bytes(data)
        _check(lib.b2f_nd_set_slice(self._h, _i64s(start), _i64s(stop), data,
                                    ctypes.c_size_t(len(data))))


lib.b2f_nd_create.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int8, ctypes.c_void_p,
                              ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
lib.b2f_nd_get_slice.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p,
                                 ctypes.c_void_p, ctypes.c_size_t]
lib.b2f_nd_set_slice.argtypes = lib.b2f_nd_get_slice.argtypes
for _name in ["b2f_nd_create", "b2f_nd_info_get", "b2f_nd_dtype", "b2f_nd_get_slice",
              "b2f_nd_set_slice"]:
    getattr(lib, _name).restype = ctypes.c_int32
