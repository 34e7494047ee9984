"""Zarr v3 interop both ways with zarr-python 3.4 and TensorStore, plus golden
zarr.json bytes.

1. A matrix of arrays (every data type nwbzarr maps to v3 x the v3
   compressors, edge chunks, 0-d, empty, N-D, fill values incl. NaN/+-Inf,
   null_terminated_bytes, fixed_length_utf32, struct, string and
   variable_length_bytes, big-endian, both chunk key encodings, dimension
   names, attributes, sharded with edge shards and the index at either end)
   with deterministic content; the spec goes to spec.json
   for the C tool.
2. zarr-python writes py/, the C tool writes c/ (zarr_interop write), both
   consolidated.
3. zarr-python and TensorStore read c/ and check every value; the C tool
   reads py/ (zarr_interop check, every array opened through zarr-python's
   consolidated metadata: nz_hierarchy), and also arrays zarr-python wrote with
   codecs nwbzarr never writes (transpose, checksummed zstd, crc32c).
4. Every zarr.json of c/ equals py/'s byte for byte.

Usage: interop3.py path/to/zarr_interop   (run by the NZ_PY3 interpreter)
"""
import json
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import BloscCodec, BytesCodec, Crc32cCodec, GzipCodec, TransposeCodec, ZstdCodec
from zarr.codecs import numcodecs as zn

from interop_values import ATTRS, STRUCT, compare_meta, make_data

warnings.simplefilter("ignore")  # zarr's "unstable specification" / consolidated warnings
TMP = os.path.join(os.environ.get("NZ_TMP", "/tmp"), "zarr_interop3")

BLOSC = {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0}
COMPS = [BLOSC, {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
         {"id": "blosc", "cname": "blosclz", "clevel": 1, "shuffle": 0, "blocksize": 0},
         {"id": "zstd", "level": 3}, {"id": "gzip", "level": 5}, None]
SHUFFLES = ["noshuffle", "shuffle", "bitshuffle"]
NUMCODECS = {"lz4": zn.LZ4, "zlib": zn.Zlib, "shuffle": zn.Shuffle}


def cases():
    dtypes = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f4", "<f8", "|S5", "<U4"]
    out = []

    def add(name, dtype, shape, chunks, comp=BLOSC, fill=0, codec=None, sep="", key="default", dims=None,
            attrs=None, shards=None, index="end", transpose=None, filters=None):
        out.append({"name": name, "dtype": dtype, "shape": shape, "chunks": chunks, "compressor": comp,
                    "filters": filters, "fill": fill, "object_codec": codec, "sep": sep,
                    "write_empty": True, "key_encoding": key, "dimension_names": dims, "attrs": attrs,
                    "shards": shards, "index_location": index, "transpose": transpose})

    for d in dtypes:
        for k, c in enumerate(COMPS):
            fill = "" if d in ("|S5", "<U4") else (False if d == "|b1" else 0)
            # (names differ beyond case: zarr-python orders names equal but
            # for case as it happened to list them)
            add("m/%s_%d" % (d[1:].replace("U", "utf32_"), k), d, [10], [4], c, fill)
    add("shape/d2", "<i4", [7, 5], [3, 2], fill=-7, dims=["t", "ch"], attrs={"unit": "uV", "n": [1, 2.5]})
    add("shape/d3", "<u2", [5, 4, 3], [2, 3, 2], dims=["a", None, "c"])
    add("shape/d4", "<f8", [3, 4, 2, 5], [2, 3, 1, 2], fill="NaN", sep=".")
    add("shape/scalar", "<f8", [], [], fill=1.5)
    add("shape/scalar_b", "|b1", [], [], comp=None, fill=True)
    add("shape/empty", "<f4", [0], [4])
    add("shape/empty2", "|u1", [3, 0], [2, 2])
    add("shape/big_chunks", "<i4", [3, 2], [5, 5])
    add("keys/v2_dot", "<i2", [5, 6], [2, 4], key="v2")
    add("keys/v2_slash", "<i2", [5, 6], [2, 4], key="v2", sep="/")
    add("keys/v2_scalar", "<i2", [], [], key="v2", fill=3)
    add("fill/nan", "<f4", [9], [4], fill="NaN")
    add("fill/inf", "<f8", [9], [4], fill="Infinity")
    add("fill/ninf", "<f8", [9], [4], fill="-Infinity")
    add("fill/f32", "<f4", [9], [4], fill=0.1)
    add("fill/neg", "<i8", [9], [4], fill=-9007199254740993)
    add("fill/true", "|b1", [9], [4], fill=True)
    add("fill/bytes", "|S5", [9], [4], fill="YWJj")
    add("fill/text", "<U4", [9], [4], fill="\u00e9x")
    add("be/i4", ">i4", [9], [4], fill=-5)
    add("be/f8", ">f8", [9], [4], fill="NaN", comp=None)
    add("obj/utf8", "|O", [7], [3], codec="vlen-utf8", fill="")
    add("obj/utf8_2d", "|O", [3, 5], [2, 2], codec="vlen-utf8", comp=COMPS[3], fill="")
    add("obj/bytes", "|O", [6], [4], codec="vlen-bytes", fill="", comp=None)
    # sharded: edge shards, shards past the edge, index at the start, 3-D
    add("sh/i2", "<i2", [11, 7], [2, 3], shards=[4, 6], fill=-1)
    add("sh/f8_start", "<f8", [9], [2], comp=COMPS[3], shards=[4], index="start", fill="NaN")
    add("sh/u1_3d", "|u1", [5, 4, 3], [2, 2, 3], comp=None, shards=[4, 4, 3])
    add("sh/b1_one", "|b1", [10], [5], comp=COMPS[4], shards=[10])
    # sharded object arrays: edge shards, index at the start, 2-D
    add("sh/utf8", "|O", [7], [2], codec="vlen-utf8", shards=[4], fill="")
    add("sh/utf8_2d", "|O", [5, 3], [2, 2], codec="vlen-utf8", comp=COMPS[3], shards=[4, 2], fill="",
        index="start")
    add("sh/bytes", "|O", [9], [2], codec="vlen-bytes", comp=None, shards=[6], fill="")
    # written by us too now: transpose (also inside shards), checksummed
    # zstd, and numcodecs' codecs as zarr-python 3.4 names them
    # (numcodecs.lz4/zlib/shuffle; zarr-python reads them, TensorStore not)
    add("tr/i4_3d", "<i4", [4, 3, 5], [3, 2, 5], comp=COMPS[3], transpose=[2, 0, 1])
    add("tr/f8", "<f8", [5, 6], [2, 3], comp=None, transpose=[1, 0], fill="NaN")
    add("tr/sh_u4", "<u4", [5, 6], [2, 3], comp=COMPS[4], transpose=[1, 0], shards=[4, 6])
    add("ck/f8", "<f8", [9], [4], comp={"id": "zstd", "level": 2, "checksum": True})
    add("ck/sh_i2", "<i2", [11, 7], [2, 3], comp={"id": "zstd", "level": 1, "checksum": True}, shards=[4, 6])
    add("nc/lz4_i2", "<i2", [10], [4], comp={"id": "lz4"})
    add("nc/zlib_f4", "<f4", [10], [4], comp={"id": "zlib", "level": 5})
    add("nc/shuffle_zlib", "<u2", [9, 2], [4, 2], comp={"id": "zlib", "level": 1},
        filters=[{"id": "shuffle", "elementsize": 2}])
    add("nc/utf8_lz4", "|O", [7], [3], codec="vlen-utf8", comp={"id": "lz4"}, fill="")
    add("struct/xy", STRUCT, [7], [3])
    add("struct/xy_2d", STRUCT, [3, 2], [2, 2], comp=None)
    return out


def np_dtype(c):
    if c["object_codec"] == "vlen-utf8":
        return zarr.dtype.VariableLengthUTF8()
    if c["object_codec"] == "vlen-bytes":
        return zarr.dtype.VariableLengthBytes()
    return np.dtype([tuple(f) for f in c["dtype"]]) if isinstance(c["dtype"], list) else np.dtype(c["dtype"])


def py_fill(c):
    f, dt = c["fill"], c["dtype"]
    if c["object_codec"] == "vlen-bytes":
        return b""
    if isinstance(dt, list):
        return None
    if dt[1] == "S":
        import base64
        return base64.b64decode(f)
    if dt[1] == "f" and isinstance(f, str):
        return float(f)
    return f


def py_codecs(c):
    """zarr-python's compressors for the case: its numcodecs filters, then
    the compressor."""
    out = [NUMCODECS[f["id"]](**{k: v for k, v in f.items() if k != "id"}) for f in c["filters"] or []]
    comp = c["compressor"]
    if comp is None:
        return out or None
    if comp["id"] == "blosc":
        dt = np_dtype(c)
        size = getattr(dt, "itemsize", 1) if not c["object_codec"] else 1
        out.append(BloscCodec(cname=comp["cname"], clevel=comp["clevel"], shuffle=SHUFFLES[comp["shuffle"]],
                              typesize=size, blocksize=0))
    elif comp["id"] == "zstd":
        out.append(ZstdCodec(level=comp["level"], checksum=comp.get("checksum", False)))
    elif comp["id"] == "lz4":  # nwbzarr's lz4 is numcodecs' LZ4(acceleration=1)
        out.append(NUMCODECS["lz4"](acceleration=1))
    elif comp["id"] == "zlib":
        out.append(NUMCODECS["zlib"](level=comp["level"]))
    else:
        out.append(GzipCodec(level=comp["level"]))
    return out


def tensorstore_reads(c):
    """TensorStore's zarr3 driver has no string/struct data types and no
    numcodecs.* codecs."""
    if c["object_codec"] or isinstance(c["dtype"], list) or c["dtype"][1] in "SU":
        return False
    return not c["filters"] and (c["compressor"] or {}).get("id") not in ("lz4", "zlib")


def write_py(root, spec):
    g = zarr.open_group(root, mode="w", zarr_format=3, attributes=ATTRS)
    for c in spec:
        sep = c["sep"] or ("/" if c["key_encoding"] == "default" else ".")
        kw = {}
        if not isinstance(c["dtype"], list) and c["dtype"][0] == ">":
            kw["serializer"] = BytesCodec(endian="big")
        if c.get("shards"):
            kw["shards"] = {"shape": tuple(c["shards"]), "index_location": c["index_location"]}
        filters = [TransposeCodec(order=tuple(c["transpose"]))] if c.get("transpose") else None
        z = g.create_array(c["name"], shape=tuple(c["shape"]), chunks=tuple(c["chunks"]), dtype=np_dtype(c),
                           fill_value=py_fill(c), compressors=py_codecs(c), filters=filters,
                           chunk_key_encoding={"name": c["key_encoding"], "separator": sep},
                           dimension_names=c["dimension_names"], attributes=c["attrs"], **kw)
        data = make_data(c)
        if data.size:
            z[...] = data[()] if data.shape == () else data
    zarr.consolidate_metadata(root)


def same(got, want, c):
    if c["object_codec"]:
        return got.shape == want.shape and all(a == b for a, b in zip(np.ravel(got), np.ravel(want)))
    if got.shape != want.shape or got.dtype.newbyteorder("=") != want.dtype.newbyteorder("="):
        return False
    return np.array_equal(got, want, equal_nan=True) if got.dtype.kind == "f" else np.array_equal(got, want)


def check_store(root, spec):
    bad = 0
    for c in spec:
        want = make_data(c)
        got = zarr.open_array(os.path.join(root, c["name"]), mode="r")[...]
        if not same(np.asarray(got), want, c):
            print("ZARR-PYTHON VALUE MISMATCH %s: %r != %r" % (c["name"], got, want))
            bad += 1
        if not tensorstore_reads(c):
            continue
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": os.path.join(root, c["name"])}},
                    open=True).result()
        got = t.read().result()
        if not same(got, want, c):
            print("TENSORSTORE VALUE MISMATCH %s: %r != %r" % (c["name"], got, want))
            bad += 1
    g = zarr.open_consolidated(root, mode="r", zarr_format=3)
    for c in spec:
        if g[c["name"]].shape != tuple(c["shape"]):
            print("CONSOLIDATED SHAPE %s" % c["name"])
            bad += 1
    return bad


def write_py_only(root):
    """Arrays with codecs nwbzarr reads but never writes; the C tool checks
    them as spec entries of their own."""
    extra = [{"name": "t/transpose", "dtype": "<i4", "shape": [4, 3, 5], "chunks": [3, 2, 5], "compressor": None,
              "filters": None, "fill": 0, "object_codec": None, "sep": "/", "write_empty": True,
              "key_encoding": "default", "dimension_names": None, "attrs": None},
             {"name": "t/zstd_checksum", "dtype": "<f8", "shape": [9], "chunks": [4], "compressor": None,
              "filters": None, "fill": 0, "object_codec": None, "sep": "/", "write_empty": True,
              "key_encoding": "default", "dimension_names": None, "attrs": None},
             {"name": "t/crc32c", "dtype": "<u2", "shape": [7, 3], "chunks": [3, 2], "compressor": None,
              "filters": None, "fill": 0, "object_codec": None, "sep": "/", "write_empty": True,
              "key_encoding": "default", "dimension_names": None, "attrs": None}]
    g = zarr.open_group(root, mode="w", zarr_format=3)
    z = g.create_array("t/transpose", shape=(4, 3, 5), chunks=(3, 2, 5), dtype="<i4", fill_value=0,
                       filters=[TransposeCodec(order=(2, 0, 1))], compressors=ZstdCodec(level=1))
    z[...] = make_data(extra[0])
    z = g.create_array("t/zstd_checksum", shape=(9,), chunks=(4,), dtype="<f8", fill_value=0,
                       compressors=ZstdCodec(level=2, checksum=True))
    z[...] = make_data(extra[1])
    # sharded (read only so far): edge shards, index at start, inner codecs
    # incl. transpose, strings
    extra += [dict(extra[0], name="sh/i2", dtype="<i2", shape=[11, 7], chunks=[2, 3]),
              dict(extra[0], name="sh/start_f8", dtype="<f8", shape=[9], chunks=[2]),
              dict(extra[0], name="sh/utf8", dtype="|O", object_codec="vlen-utf8", shape=[7], chunks=[2]),
              dict(extra[0], name="sh/transposed", dtype="<u4", shape=[5, 6], chunks=[2, 3])]
    z = g.create_array("sh/i2", shape=(11, 7), shards=(4, 6), chunks=(2, 3), dtype="<i2", fill_value=-1,
                       compressors=ZstdCodec(level=1))
    z[...] = make_data(extra[3])
    z = g.create_array("sh/start_f8", shape=(9,), shards={"shape": (4,), "index_location": "start"}, chunks=(2,),
                       dtype="<f8", fill_value=0, compressors=None)
    z[...] = make_data(extra[4])
    z = g.create_array("sh/utf8", shape=(7,), shards=(4,), chunks=(2,), dtype=zarr.dtype.VariableLengthUTF8(),
                       fill_value="")
    z[...] = make_data(extra[5])
    z = g.create_array("sh/transposed", shape=(5, 6), shards=(4, 6), chunks=(2, 3), dtype="<u4", fill_value=0,
                       filters=[TransposeCodec(order=(1, 0))], compressors=GzipCodec(level=2))
    z[...] = make_data(extra[6])
    # numcodecs' codecs with the empty configurations zarr-python writes
    # for their defaults (numcodecs.shuffle gets the item size)
    extra.append(dict(extra[0], name="t/numcodecs_defaults", dtype="<i4", shape=[9, 2], chunks=[4, 2]))
    z = g.create_array("t/numcodecs_defaults", shape=(9, 2), chunks=(4, 2), dtype="<i4", fill_value=0,
                       compressors=[zn.Shuffle(), zn.Zlib(), zn.LZ4(), zn.GZip(), zn.Zstd()])
    z[...] = make_data(extra[-1])
    # numcodecs.blosc: what hdmf-zarr 0.14's convert_to_v3 writes for a v2 Blosc
    extra.append(dict(extra[0], name="t/numcodecs_blosc", dtype="<i2", shape=[10, 3], chunks=[4, 2]))
    z = g.create_array("t/numcodecs_blosc", shape=(10, 3), chunks=(4, 2), dtype="<i2", fill_value=0,
                       compressors=[zn.Blosc(cname="lz4", clevel=5, shuffle=1, blocksize=0)])
    z[...] = make_data(extra[-1])
    z = g.create_array("t/crc32c", shape=(7, 3), chunks=(3, 2), dtype="<u2", fill_value=0,
                       compressors=[ZstdCodec(level=1), Crc32cCodec()])
    z[...] = make_data(extra[2])
    zarr.consolidate_metadata(root)  # the C tool opens every array through it
    return extra


def run_tool(tool, cmd, spec, attrs, root, has_root=True):
    path = os.path.join(TMP, "spec_%s_%s.json" % (cmd, os.path.basename(root)))
    with open(path, "w") as f:
        json.dump({"zarr_format": 3, "attrs": attrs, "arrays": spec, "root": has_root}, f)
    return subprocess.run([tool, cmd, path, root]).returncode


def main():
    tool = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.environ["NZ_BIN"], "zarr_interop")
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    spec = cases()
    py_root, c_root, extra_root = (os.path.join(TMP, d) for d in ("py", "c", "extra"))
    write_py(py_root, spec)
    if run_tool(tool, "write", spec, ATTRS, c_root) != 0:
        print("C tool failed to write")
        sys.exit(1)
    bad = check_store(c_root, spec)
    if run_tool(tool, "check", spec, ATTRS, py_root) != 0:
        print("C tool failed to read the zarr-python store")
        bad += 1
    if run_tool(tool, "check", write_py_only(extra_root), {}, extra_root) != 0:
        print("C tool failed to read zarr-python's transpose / checksummed zstd / crc32c / numcodecs arrays")
        bad += 1
    # the same arrays opened by path from the folder above the hierarchy,
    # a store with no root zarr.json
    by_path = [dict(c, name="py/" + c["name"]) for c in spec]
    if run_tool(tool, "check", by_path, {}, TMP, has_root=False) != 0:
        print("C tool failed to open zarr-python's arrays by path from a store without a root")
        bad += 1
    nbad, nsame = compare_meta(c_root, py_root, ("zarr.json",))
    bad += nbad
    print("%d arrays, %d zarr.json documents compared, %d problems" % (len(spec), nsame, bad))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
