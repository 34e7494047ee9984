#!/usr/bin/python3
"""Regenerate the seeds of fuzz/corpus/pickle/ (Debian's python3 with numpy).

Each seed is <ndim byte><ndim dimension bytes><pickle> (see fuzz_pickle.c).
Good seeds are what numcodecs.Pickle writes for object chunks as hdmf-zarr
<= 0.13 fills them (pickle.dumps of the ndarray, protocols 2..5): str,
bytes, ints, floats, None, bools, ZarrReference dicts, compound rows;
hostile ones ask for code (os.system), huge lengths, deep nesting, memo
abuse and cycles."""
import os
import pickle
import struct
import sys
import types

import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "pickle")
os.makedirs(out, exist_ok=True)

# hdmf_zarr.utils.ZarrReference is a dict subclass; pickle names it by module.
mod = types.ModuleType("hdmf_zarr.utils")
sys.modules["hdmf_zarr"] = types.ModuleType("hdmf_zarr")
sys.modules["hdmf_zarr.utils"] = mod


class ZarrReference(dict):
    pass


ZarrReference.__module__ = "hdmf_zarr.utils"
mod.ZarrReference = ZarrReference


def ref(path, oid="6a4e3b0e-0f3c-4b5e-9b1a-0c1d2e3f4a5b"):
    return ZarrReference(source=".", path=path, object_id=oid,
                         source_object_id="ea34dce6-4033-47b9-927e-723505d9fb31")


def seed(name, shape, body):
    with open(os.path.join(out, name), "wb") as f:
        f.write(bytes([len(shape)] + list(shape)) + body)


def objects(values, shape=None):
    a = np.empty(len(values), dtype=object)
    a[:] = values
    return a.reshape(shape) if shape is not None else a


for p in (2, 3, 4, 5):
    seed(f"refs_p{p}", (3,), pickle.dumps(objects([ref("/a"), ref("/b"), ref("/a")]), protocol=p))
    seed(f"text_p{p}", (4,), pickle.dumps(objects(["", "ascii", "π ü 😀", "x" * 300]), protocol=p))
    seed(f"bytes_p{p}", (2,), pickle.dumps(objects([b"raw", b""]), protocol=p))
    seed(f"scalars_p{p}", (7,), pickle.dumps(objects([0, -1, 2**40, -2**63, 1.5, None, True]), protocol=p))
    rows = np.empty(2, dtype=[("idx_start", "<i4"), ("count", "<i4"), ("timeseries", "O")])
    rows[0] = (0, 10, ref("/acquisition/ts"))
    rows[1] = (10, 5, ref("/acquisition/ts"))
    seed(f"compound_p{p}", (2,), pickle.dumps(rows, protocol=p))
seed("grid_2d", (2, 3), pickle.dumps(objects([ref(f"/g{i}") for i in range(6)], (2, 3)), protocol=5))
seed("scalar_0d", (), pickle.dumps(objects(["only"], ()), protocol=5))
seed("nested", (2,), pickle.dumps(objects([(1, [2.5, "x"]), ["y", (None, False)]]), protocol=5))
seed("nonfinite", (2,), pickle.dumps(objects([float("nan"), float("-inf")]), protocol=5))
seed("numpy_int_array", (3,), pickle.dumps(np.arange(3), protocol=5))
seed("wrong_shape", (5,), pickle.dumps(objects(["a", "b"]), protocol=5))

# Hostile: code, lengths, nesting, memo.
seed("os_system", (1,), b"\x80\x05\x8c\x02os\x94\x8c\x06system\x94\x93\x94\x8c\x04true\x94\x85R\x94.")
seed("global_posix", (1,), b"\x80\x02cposix\nsystem\nq\x00X\x04\x00\x00\x00trueq\x01\x85q\x02Rq\x03.")
seed("huge_unicode8", (1,), b"\x80\x05\x8d" + struct.pack("<Q", 2**62) + b"abc.")
seed("huge_binbytes", (1,), b"\x80\x05B" + struct.pack("<I", 2**31) + b"abc.")
seed("huge_frame", (1,), b"\x80\x05\x95" + struct.pack("<Q", 2**63) + b"N.")
seed("deep_tuples", (1,), b"\x80\x05N" + b"\x85" * 100 + b".")
seed("deep_lists", (1,), b"\x80\x05" + b"]" * 100 + b"a" * 99 + b".")
# Each level pairs the previous tuple with itself through the memo.
seed("memo_doubling", (1,), b"\x80\x05N\x94" + b"".join(b"h" + bytes([i]) + b"\x86\x94" for i in range(30)) + b".")
seed("memo_sparse_put", (1,), b"\x80\x04Nr\xff\xff\xff\x7f.")
seed("memo_get_unset", (1,), b"\x80\x04h\x05.")
seed("self_append", (1,), b"\x80\x05]\x94h\x00a.")
seed("truncated", (3,), pickle.dumps(objects([ref("/a"), ref("/b"), ref("/c")]), protocol=2)[:-40])
seed("truncated_frame", (3,), pickle.dumps(objects([ref("/a"), ref("/b"), ref("/c")]), protocol=5)[:-40])
seed("no_stop", (1,), b"\x80\x05N")
seed("trailing", (1,), pickle.dumps(objects(["a"]), protocol=5) + b"N.")
seed("protocol_0", (1,), b"(lp0\n.")
seed("reduce_ndarray", (1,), b"\x80\x05\x8c\x05numpy\x8c\x07ndarray\x93)R.")
