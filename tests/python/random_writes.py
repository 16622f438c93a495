"""Random write sequences for test_random_writes.py, and the writer it kills.

A seed draws a frame (or an array) and a sequence of writes. Each write is a tuple of random
numbers that positions resolve against the frame it meets (`pos % (nchunks + 1)`), so the
same tuple applies to a handle and to the model of its content alike. Only the C API through
the ctypes binding is used here: the writer child starts fast, without numpy or blosc2.

Run as a script, this is that child: `random_writes.py frame|array SEED PATH LOG` opens PATH
for writing, applies the seed's writes and appends one line to LOG after each returns.
"""

import os
import random
import sys

if __name__ == "__main__":
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                    "bindings", "python"))

import b2frame  # noqa: E402

# Statuses a write may return on a valid frame: refusals of the request itself.
REFUSALS = (b2frame.ERR_INVALID_ARGUMENT, b2frame.ERR_NOT_FOUND)
VLMETA_NAMES = ["a", "b", "note", "x" * 31]
NAN = {4: bytes.fromhex("0000c07f"), 8: bytes.fromhex("000000000000f87f")}


def msgpack_bin(b):
    """b as a msgpack bin object (metalayer contents c-blosc2's Python layer can unpack)."""
    n = len(b)
    if n < 256:
        return bytes([0xc4, n]) + b
    if n < 65536:
        return bytes([0xc5]) + n.to_bytes(2, "big") + b
    return bytes([0xc6]) + n.to_bytes(4, "big") + b


def data(sub, n):
    """n bytes of one of four kinds drawn from sub: noise, ramps, zeros, two-valued noise."""
    r = random.Random(sub)
    kind = r.randrange(4)
    if kind == 0:
        return r.randbytes(n)
    if kind == 1:
        step = r.randint(1, 50)
        return bytes((i // step) & 255 for i in range(n))
    if kind == 2:
        return bytes(n)
    return bytes(r.choice(b"ab") for _ in range(n))


# ---- frames ----

def frame_case(seed):
    r = random.Random(f"frame case {seed}")
    typesize = r.choice([1, 2, 4, 8, r.randint(1, 40)])
    chunksize = typesize * r.randint(1, 3000)
    if r.random() < 0.1:
        chunksize += r.randrange(typesize)  # now and then not whole items
    return dict(contiguous=r.random() < 0.6, sync=r.random() < 0.25, typesize=typesize,
                chunksize=chunksize, codec=r.choice([0, 1, 2, 4, 5]), clevel=r.randint(0, 9),
                nthreads=r.randint(1, 2))


def frame_initial(seed, case):
    """(metalayers, chunks, vlmetalayers) of the frame before the writes."""
    r = random.Random(f"frame initial {seed}")
    metas = [("m1", msgpack_bin(r.randbytes(r.randint(0, 40)))),
             ("b2x", msgpack_bin(b"fixed"))][: r.randint(0, 2)]
    chunks = [data(r.getrandbits(32), case["chunksize"]) for _ in range(r.randint(0, 4))]
    vlmetas = [("a", msgpack_bin(b"initial"))] if r.random() < 0.5 else []
    return metas, chunks, vlmetas


def frame_writes(seed, case, n=None):
    r = random.Random(f"frame writes {seed}")
    cs, ts = case["chunksize"], case["typesize"]
    writes = []
    for _ in range(n or r.randint(4, 14)):
        k = r.random()
        # Mostly full chunks; some short, some longer than the chunksize, a few empty.
        length = (cs if r.random() < 0.7 else r.randint(1, cs) if r.random() < 0.8
                  else r.randint(cs + 1, 2 * cs))
        if r.random() < 0.04:
            length = 0
        sub = r.getrandbits(32)
        if k < 0.25:
            writes.append(("append", length, sub))
        elif k < 0.32:
            writes.append(("append_chunk", length, sub, r.choice([0, 1, 2, 4, 5])))
        elif k < 0.42:
            writes.append(("insert", r.getrandbits(16), length, sub))
        elif k < 0.52:
            writes.append(("update", r.getrandbits(16), length, sub))
        elif k < 0.62:
            writes.append(("delete", r.getrandbits(16)))
        elif k < 0.67:
            writes.append(("reorder", sub))
        elif k < 0.79:
            writes.append(("vlmeta_set", r.choice(VLMETA_NAMES),
                           r.choice([0, 5, 100, 3000, 70000]), sub))
        elif k < 0.84:
            writes.append(("vlmeta_delete", r.choice(VLMETA_NAMES)))
        elif k < 0.89:
            writes.append(("meta_update", sub))
        else:
            writes.append(("fill_special", r.randint(1, 3 * cs // ts), r.choice([1, 2, 4])))
    return writes


def write_frame(f, w, case):
    """Applies write w to frame handle f."""
    kind, n = w[0], f.nchunks
    if kind == "append":
        f.append(data(w[2], w[1]))
    elif kind == "append_chunk":
        f.append_chunk(b2frame.compress(data(w[2], w[1]), typesize=case["typesize"],
                                        codec=w[3], clevel=5))
    elif kind == "insert":
        f.insert(w[1] % (n + 1), data(w[3], w[2]))
    elif kind == "update":
        f.update(w[1] % max(n, 1), data(w[3], w[2]))
    elif kind == "delete":
        f.delete(w[1] % max(n, 1))
    elif kind == "reorder":
        f.reorder(permutation(w[1], n))
    elif kind == "vlmeta_set":
        f.vlmeta_set(w[1], msgpack_bin(data(w[3], w[2])))
    elif kind == "vlmeta_delete":
        f.vlmeta_delete(w[1])
    elif kind == "meta_update":
        names = sorted(f.meta_names())
        if not names:
            raise b2frame.Error(b2frame.ERR_NOT_FOUND, "no metalayer to update")
        name = names[w[1] % len(names)]
        f.meta_update(name, same_length_content(f.meta(name), w[1]))
    else:
        f.fill_special(w[1], w[2])


def model_frame(m, w, case):
    """Applies write w, which the frame took, to model m: {"chunks", "meta", "vlmeta"}.
    A chunk of uninitialized bytes is modelled as its length alone."""
    kind, chunks = w[0], m["chunks"]
    n = len(chunks)
    if kind in ("append", "append_chunk"):
        chunks.append(data(w[2], w[1]))
    elif kind == "insert":
        chunks.insert(w[1] % (n + 1), data(w[3], w[2]))
    elif kind == "update":
        chunks[w[1] % n] = data(w[3], w[2])
    elif kind == "delete":
        del chunks[w[1] % n]
    elif kind == "reorder":
        m["chunks"] = [chunks[i] for i in permutation(w[1], n)]
    elif kind == "vlmeta_set":
        m["vlmeta"][w[1]] = msgpack_bin(data(w[3], w[2]))
    elif kind == "vlmeta_delete":
        del m["vlmeta"][w[1]]
    elif kind == "meta_update":
        names = sorted(m["meta"])
        name = names[w[1] % len(names)]
        m["meta"][name] = same_length_content(m["meta"][name], w[1])
    else:
        ts = case["typesize"]
        per_chunk = case["chunksize"] // ts
        for start in range(0, w[1], per_chunk):
            items = min(per_chunk, w[1] - start)
            chunks.append(bytes(items * ts) if w[2] == 1 else
                          NAN[ts] * items if w[2] == 2 else items * ts)


def permutation(sub, n):
    order = list(range(n))
    random.Random(sub).shuffle(order)
    return order


def same_length_content(old, sub):
    """A msgpack bin of old's length with new bytes (c-blosc2 keeps a metalayer's length)."""
    head = 2 if len(old) >= 2 else len(old)
    return old[:head] + random.Random(sub).randbytes(len(old) - head)


def frame_state(f):
    """What a frame handle holds: {"chunks", "meta", "vlmeta"}."""
    return dict(chunks=[f.chunk(i) for i in range(f.nchunks)],
                meta={n: f.meta(n) for n in f.meta_names()},
                vlmeta={n: f.vlmeta(n) for n in f.vlmeta_names()})


def frame_matches(state, m):
    if state["meta"] != m["meta"] or state["vlmeta"] != m["vlmeta"]:
        return False
    if len(state["chunks"]) != len(m["chunks"]):
        return False
    return all(len(got) == want if isinstance(want, int) else got == want
               for got, want in zip(state["chunks"], m["chunks"]))


# ---- arrays ----

def array_case(seed):
    r = random.Random(f"array case {seed}")
    ndim = r.randint(1, 3)
    shape = [r.randint(1, 40 if ndim > 1 else 3000) for _ in range(ndim)]
    chunks = [r.randint(1, s) for s in shape]
    return dict(contiguous=r.random() < 0.6, sync=r.random() < 0.2, shape=shape, chunks=chunks,
                blocks=[r.randint(1, c) for c in chunks],
                dtype=r.choice(["<f8", "<i4", "|u1", "<u2", "|V3", "<f4"]),
                codec=r.choice([0, 1, 2, 4, 5]), clevel=r.randint(1, 9),
                nthreads=r.randint(1, 2), filters=r.choice([[], [1], [2], [3, 1]]))


def itemsize(case):
    return int(case["dtype"][2:])


def array_writes(seed, case):
    r = random.Random(f"array writes {seed}")
    writes = []
    for _ in range(r.randint(3, 8)):
        k = r.random()
        if k < 0.7:
            start = [r.randrange(s) for s in case["shape"]]
            stop = [r.randint(a + 1, s) for a, s in zip(start, case["shape"])]
            if r.random() < 0.2:
                start, stop = [0] * len(start), list(case["shape"])
            writes.append(("set_slice", start, stop, r.getrandbits(32)))
        elif k < 0.9:
            writes.append(("vlmeta_set", r.choice(VLMETA_NAMES[:2]), r.choice([3, 500, 20000]),
                           r.getrandbits(32)))
        else:
            writes.append(("vlmeta_delete", r.choice(VLMETA_NAMES[:2])))
    return writes


def slab(w, case):
    n = itemsize(case)
    for a, b in zip(w[1], w[2]):
        n *= b - a
    return data(w[3], n)


def write_array(a, w, case):
    if w[0] == "set_slice":
        a.set_slice(w[1], w[2], slab(w, case))
    elif w[0] == "vlmeta_set":
        a.vlmeta_set(w[1], msgpack_bin(data(w[3], w[2])))
    else:
        a.vlmeta_delete(w[1])


# ---- the writer child ----

def writer(kind, seed, path, log):
    if kind == "frame":
        case = frame_case(seed)
        handle, writes, write = b2frame.Frame, frame_writes(seed, case), write_frame
    else:
        case = array_case(seed)
        handle, writes, write = b2frame.Array, array_writes(seed, case), write_array
    mode = b2frame.READ | b2frame.WRITE | (b2frame.SYNC if case["sync"] else 0)
    f = handle.open(path, mode)
    for k, w in enumerate(writes):
        try:
            write(f, w, case)
            outcome = "ok"
        except b2frame.Error as e:
            if e.status not in REFUSALS:
                raise
            outcome = "refused"
        with open(log, "a") as out:
            out.write(f"{k} {outcome}\n")
    f.close()


if __name__ == "__main__":
    writer(sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4])
