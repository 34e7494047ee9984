"""Interop both ways with zarr-python 2.13 / numcodecs 0.11, plus golden
metadata bytes.

1. Build a matrix of arrays (every dtype x compressor, shapes with edge
   chunks, 0-d, empty, N-D up to 4-D, fill values incl. NaN/+-Inf, |S,
   vlen-utf8 with non-ASCII, vlen-bytes, json2 of dicts, structured) with
   deterministic content; the spec goes to spec.json for the C tool.
2. zarr-python writes py/, the C tool writes c/ (zarr_interop write).
3. zarr-python reads c/ and checks every value; the C tool reads py/
   (zarr_interop check).
4. Every .zarray/.zattrs/.zgroup/.zmetadata of c/ equals py/'s byte for byte.

Usage: interop_matrix.py [path/to/zarr_interop]  (default $NZ_BIN/zarr_interop)
"""
import json
import os
import shutil
import subprocess
import sys

import numcodecs
import numpy as np
import zarr
from zarr.meta import Metadata2

TMP = os.path.join(os.environ.get("NZ_TMP", "/tmp"), "zarr_interop")

from interop_values import ATTRS, STRUCT, compare_meta, make_data  # shared with interop3.py


def cases():
    blosc = [{"id": "blosc", "cname": c, "clevel": 5, "shuffle": s, "blocksize": 0}
             for c in ("lz4", "lz4hc", "zstd", "blosclz", "zlib") for s in (0, 1, 2)]
    comps = blosc + [{"id": "zstd", "level": 3}, {"id": "lz4", "acceleration": 1},
                     {"id": "zlib", "level": 4}, {"id": "gzip", "level": 6}, None]
    dtypes = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8", "|S5"]
    out = []

    def add(name, dtype, shape, chunks, comp=comps[1], fill=0, filters=None, codec=None, sep=".",
            write_empty=True):
        out.append({"name": name, "dtype": dtype, "shape": shape, "chunks": chunks,
                    "compressor": comp, "filters": filters, "fill": fill, "object_codec": codec,
                    "sep": sep, "write_empty": write_empty})

    for d in dtypes:
        for k, c in enumerate(comps):
            fill = "" if d == "|S5" else (False if d == "|b1" else 0)
            if d in ("<f4", "<f8"):
                fill = 0.0
            add("m/%s_%d" % (d[1:], k), d, [10], [4], c, fill)
    # shapes: edge chunks, 0-d, empty, N-D, nested keys
    add("shape/d2", "<i4", [7, 5], [3, 2], fill=-7)
    add("shape/d3", "<u2", [5, 4, 3], [2, 3, 2])
    add("shape/d4", "<f8", [3, 4, 2, 5], [2, 3, 1, 2], fill="NaN")
    add("shape/d4_nested", "<i2", [3, 4, 2, 5], [2, 3, 1, 2], sep="/")
    add("shape/scalar", "<f8", [], [], fill=1.5)
    add("shape/scalar_i", "<i8", [], [], comp=None, fill=-3)
    add("shape/empty", "<f4", [0], [4])
    add("shape/empty2", "|u1", [3, 0], [2, 2])
    add("shape/one_chunk", "<i4", [6, 4], [6, 4])
    add("shape/big_chunks", "<i4", [3, 2], [5, 5])
    # fill values
    add("fill/nan", "<f4", [9], [4], fill="NaN")
    add("fill/inf", "<f8", [9], [4], fill="Infinity")
    add("fill/ninf", "<f8", [9], [4], fill="-Infinity")
    add("fill/f32", "<f4", [9], [4], fill=0.1)
    add("fill/neg", "<i8", [9], [4], fill=-9007199254740993)
    add("fill/u8", "<u8", [9], [4], fill=9007199254740993)
    add("fill/true", "|b1", [9], [4], fill=True)
    add("fill/bytes", "|S5", [9], [4], fill="YWJj")
    add("fill/none", "<i2", [9], [4], fill=None)
    add("fill/skip_empty", "<f8", [9], [4], fill="NaN", write_empty=False)
    # big-endian: elements stay in stored byte order on the C side
    add("be/i4", ">i4", [9], [4], fill=-5)
    add("be/f8", ">f8", [9], [4], fill="NaN")
    # hdmf-style filters: shuffle + zlib before blosc
    add("filters/shuffle_zlib", "<i2", [20, 3], [7, 3], filters=[
        {"id": "shuffle", "elementsize": 2}, {"id": "zlib", "level": 4}])
    add("filters/zlib_only", "<f8", [11], [4], comp=None, filters=[{"id": "zlib", "level": 1}])
    # objects
    add("obj/utf8", "|O", [7], [3], codec="vlen-utf8")
    add("obj/utf8_2d", "|O", [3, 5], [2, 2], codec="vlen-utf8", comp=comps[7])
    # numcodecs cannot pad vlen-bytes with "" (hdmf's fill), so no edge chunk here
    add("obj/bytes", "|O", [6], [2], codec="vlen-bytes", fill="", comp=None)
    add("obj/json", "|O", [5], [2], codec="json2", fill=None)
    add("obj/json_2d", "|O", [3, 3], [2, 2], codec="json2", fill=None, comp=comps[15])
    add("obj/utf8_filters", "|O", [6], [4], codec="vlen-utf8", filters=[{"id": "zlib", "level": 1}])
    # structured
    add("struct/xy", STRUCT, [7], [3])
    add("struct/xy_2d", STRUCT, [3, 2], [2, 2], comp=None)
    return out


def write_py(root, spec):
    store = zarr.DirectoryStore(root)
    g = zarr.group(store=store)
    g.attrs.put(ATTRS)
    for c in spec:
        dt = np.dtype([tuple(f) for f in c["dtype"]]) if isinstance(c["dtype"], list) else np.dtype(c["dtype"])
        codec = numcodecs.get_codec({"id": c["object_codec"]}) if c["object_codec"] else None
        # object and structured-0 fills go to zarr as given; the rest as .zarray spells them
        raw = codec or (dt.kind == "V" and c["fill"] == 0)
        fill = c["fill"] if raw else Metadata2.decode_fill_value(c["fill"], dt)
        z = zarr.create(store=store, path=c["name"], shape=tuple(c["shape"]), chunks=tuple(c["chunks"]) or True,
                        dtype=dt, fill_value=fill, object_codec=codec,
                        compressor=numcodecs.get_codec(c["compressor"]) if c["compressor"] else None,
                        filters=[numcodecs.get_codec(f) for f in c["filters"]] if c["filters"] else None,
                        dimension_separator="/" if c["sep"] == "/" else None,
                        write_empty_chunks=c["write_empty"])
        data = make_data(c)
        if data.size:
            if data.shape == ():
                z[...] = data[()]
            else:
                z[...] = data
    zarr.consolidate_metadata(store)


def check_store(root, spec):
    bad = 0
    for c in spec:
        z = zarr.open_array(zarr.DirectoryStore(root), path=c["name"], mode="r")
        got = z[...]
        want = make_data(c)
        if c["object_codec"]:
            ok = got.shape == want.shape and all(a == b for a, b in zip(got.ravel(), want.ravel()))
        else:
            ok = got.shape == want.shape and got.dtype == want.dtype and \
                (np.array_equal(got, want, equal_nan=True) if got.dtype.kind == "f" else np.array_equal(got, want))
        if not ok:
            print("VALUE MISMATCH %s: %r != %r" % (c["name"], got, want))
            bad += 1
    # consolidated metadata must open and list every array
    g = zarr.open_consolidated(zarr.DirectoryStore(root), mode="r")
    for c in spec:
        if g[c["name"]].shape != tuple(c["shape"]):
            print("CONSOLIDATED SHAPE %s" % c["name"])
            bad += 1
    return bad


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ["NZ_BIN"], "zarr_interop")
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    spec = cases()
    spec_path = os.path.join(TMP, "spec.json")
    with open(spec_path, "w") as f:
        json.dump({"attrs": ATTRS, "arrays": spec}, f)
    py_root, c_root = os.path.join(TMP, "py"), os.path.join(TMP, "c")
    write_py(py_root, spec)
    subprocess.run([tool, "write", spec_path, c_root], check=True)
    bad = check_store(c_root, spec)
    r = subprocess.run([tool, "check", spec_path, py_root])
    if r.returncode != 0:
        print("C tool failed to read the python store")
        bad += 1
    nbad, nsame = compare_meta(c_root, py_root, (".zarray", ".zattrs", ".zgroup", ".zmetadata"))
    bad += nbad
    print("%d arrays, %d metadata documents compared, %d problems" % (len(spec), nsame, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
