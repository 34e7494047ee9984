#!/usr/bin/python3
"""Regenerate the hand-made seeds of fuzz/corpus/zarr_meta/ (run with Debian's
/usr/bin/python3: zarr 2.13, numcodecs 0.11). The seeds copied from the
reference stores of tests/data/zarr (ref_*) are not touched.

A seed is "<.zarray>\\0<chunk 0 as stored>": zarr-python writes a small array
and we take its metadata and first chunk, so the target starts from real
documents and real encoded chunks. Hostile documents follow."""
import json
import os

import numcodecs
import numpy as np
import zarr

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "zarr_meta")
os.makedirs(out, exist_ok=True)


def write(name, doc, chunk=None):
    if not isinstance(doc, bytes):
        doc = json.dumps(doc, indent=4, sort_keys=True).encode()
    with open(os.path.join(out, name), "wb") as f:
        f.write(doc if chunk is None else doc + b"\0" + chunk)


def real(name, data, **kw):
    store = zarr.MemoryStore()
    z = zarr.create(store=store, shape=np.shape(data), dtype=kw.pop("dtype", np.asarray(data).dtype), **kw)
    z[...] = data
    keys = sorted(k for k in store if not k.startswith("."))
    write(name, store[".zarray"], store[keys[0]] if keys else b"")


rng = np.random.default_rng(5)
real("int16_blosc", (np.arange(48).reshape(6, 8) * 3 - 50).astype("<i2"), chunks=(4, 4))
real("uint8_zstd_slash", np.arange(30, dtype="|u1").reshape(5, 6), chunks=(2, 3),
     compressor=numcodecs.Zstd(level=1), dimension_separator="/")
real("float32_nan_fill", rng.normal(size=(7,)).astype("<f4"), chunks=(3,), fill_value=np.nan)
real("float64_bigendian_lz4", np.linspace(0, 1, 10).astype(">f8"), chunks=(4,), compressor=numcodecs.LZ4())
real("bool_zlib", np.array([True, False, True, True]), chunks=(3,), compressor=numcodecs.Zlib(level=1))
real("int64_shuffle_gzip", np.arange(12, dtype="<i8"), chunks=(5,), compressor=numcodecs.GZip(level=1),
     filters=[numcodecs.Shuffle(elementsize=8)])
real("bytes_S5", np.array([b"ab", b"cdefg", b""], dtype="|S5"), chunks=(2,), fill_value=b"xy")
real("compound", np.array([(1, 2.5), (3, -1.0)], dtype=[("x", "<u4"), ("w", "<f4")]), chunks=(1,))
real("vlen_utf8", np.array(["a", "é", "", "zarr"], dtype=object), chunks=(3,), dtype=object,
     object_codec=numcodecs.VLenUTF8())
real("vlen_bytes", np.array([b"\x00\x01", b"", b"xyz"], dtype=object), chunks=(2,), dtype=object,
     object_codec=numcodecs.VLenBytes())
real("json2", np.array([{"a": 1}, [1, 2], "s", None], dtype=object), chunks=(4,), dtype=object,
     object_codec=numcodecs.JSON())
real("scalar_0d", np.array(7, dtype="<i4"))
real("empty_dim", np.zeros((0, 4), dtype="<f4"), chunks=(2, 2))
real("no_compressor", np.arange(6, dtype="<u2"), chunks=(6,), compressor=None)

base = json.loads(open(os.path.join(out, "int16_blosc"), "rb").read().split(b"\0")[0])


def variant(name, **changes):
    doc = dict(base)
    for k, v in changes.items():
        if v is None and k in doc:
            del doc[k]
        else:
            doc[k] = v
    write(name, doc)


variant("bad_zarr_format_3", zarr_format=3)
variant("bad_order_F", order="F")
variant("bad_missing_shape", shape=None)
variant("bad_chunks_zero", chunks=[0, 4])
variant("bad_rank_mismatch", chunks=[4])
variant("bad_negative_shape", shape=[-1, 8])
variant("bad_huge_overflow", shape=[2**62, 2**62], chunks=[2**62, 2**62])
variant("huge_shape_small_chunks", shape=[2**63 - 1, 2**63 - 1], chunks=[1, 1])
variant("bad_33_dims", shape=[1] * 33, chunks=[1] * 33)
variant("bad_dtype_U", dtype="<U8")
variant("bad_dtype_garbage", dtype="<i3")
variant("bad_dtype_type", dtype=5)
variant("bad_fill_string_for_int", fill_value="NaN")
variant("bad_fill_float_for_int", fill_value=1.5)
variant("fill_int_overflow", fill_value=40000)
variant("bad_compressor_unknown", compressor={"id": "bz2", "level": 1})
variant("bad_filters_not_list", filters={"id": "shuffle", "elementsize": 2})
variant("bad_separator", dimension_separator="-")
variant("nested_compound", dtype=[["a", [["b", "<i4"]]]])
variant("compound_subarray", dtype=[["a", "<i4", [2]]])
variant("compound_dup_names", dtype=[["a", "<i4"], ["a", "<i4"]])
variant("vlen_on_int", filters=[{"id": "vlen-utf8"}])
variant("object_no_codec", dtype="|O", fill_value=None, filters=None)
variant("extra_key", extra=1)
write("bad_not_object", b"[1, 2, 3]")
write("bad_truncated", json.dumps(base).encode()[:40])
write("attrs_nonascii", json.dumps({"name": "\u00e9\u4e2d\U0001f600", "x": [1.5, -0.0, 1e-07]}).encode())
