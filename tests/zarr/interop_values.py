"""Deterministic array contents shared by the interop scripts (interop_matrix.py
for Zarr v2, interop3.py for Zarr v3) and mirrored by zarr_interop.c."""
import math
import os

import numpy as np

STRUCT = [["x", "<u4"], ["y", "<f8"]]
ATTRS = {"float": 0.1, "big": 1e300, "small": 1e-7, "text": "\u00e9\U0001F600\n\t\"\\",
         "nested": {"b": [1, 2.5, None, True], "a": {}}, "neg": -0.0, "int": 12345678901,
         "empty": [], "third": 1 / 3, "nonfinite": [math.nan, math.inf, -math.inf]}

# Deterministic element i (C order) of each dtype; zarr_interop.c mirrors this.
MULT = {1: 1, 2: 256, 4: 1 << 24, 8: 1 << 56}


def value(kind, size, i):
    if kind == "b":
        return i % 3 == 0
    if kind == "i":
        return ((i * 37 + 5) % 251 - 125) * MULT[size]
    if kind == "u":
        return ((i * 37 + 5) % 251) * MULT[size]
    if kind == "f":
        if i % 11 == 5:
            return math.nan
        if i % 13 == 7:
            return math.inf
        if i % 17 == 3:
            return -math.inf
        return (i % 97) * 0.5 - 20.25
    if kind == "S":
        return ("s%d" % (i % 1000)).encode()[:size]
    if kind == "U":
        return ("u%d" % (i % 1000))[:size // 4]
    raise ValueError(kind)


def object_value(codec, i):
    if codec == "vlen-utf8":
        return "\u00e9%d%s" % (i, "\U0001F600" if i % 2 else "\u2603")
    if codec == "vlen-bytes":
        return b"b%d\x00\xff" % i
    return {"i": i, "s": "v%d" % i, "f": i * 0.25, "l": [i, None]}


def make_data(case):
    shape = tuple(case["shape"])
    n = int(np.prod(shape)) if shape else 1
    if case["object_codec"]:
        flat = np.empty(n, dtype=object)
        for i in range(n):
            flat[i] = object_value(case["object_codec"], i)
        return flat.reshape(shape)
    if isinstance(case["dtype"], list):
        dt = np.dtype([tuple(f) for f in case["dtype"]])
        flat = np.zeros(n, dtype=dt)
        flat["x"] = [i * 3 for i in range(n)]
        flat["y"] = [i * 0.25 - 1 for i in range(n)]
        return flat.reshape(shape)
    dt = np.dtype(case["dtype"])
    flat = np.array([value(dt.kind, dt.itemsize, i) for i in range(n)], dtype=dt)
    return flat.reshape(shape)



def compare_meta(a, b, names):
    """Compare the metadata documents called `names` under stores a (C) and b
    (Python) byte for byte: (problems, documents compared)."""
    def files(root):
        return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs if f in names}
    bad = 0
    fa, fb = files(a), files(b)
    if fa != fb:
        print("METADATA FILE SETS DIFFER: only C %s, only python %s" % (sorted(fa - fb), sorted(fb - fa)))
        bad += 1
    for f in sorted(fa & fb):
        x, y = open(os.path.join(a, f), "rb").read(), open(os.path.join(b, f), "rb").read()
        if x != y:
            i = next((k for k in range(min(len(x), len(y))) if x[k] != y[k]), min(len(x), len(y)))
            print("GOLDEN DIFF %s at byte %d:\n  C:      %r\n  python: %r" % (f, i, x[max(0, i - 80):i + 60],
                                                                            y[max(0, i - 80):i + 60]))
            bad += 1
    return bad, len(fa & fb)
