"""Write the HDF5 edge-case files the export tests use (h5py, Debian's).

usage: make_fixtures.py OUTDIR
  edge.h5      every construct export maps (see docs/format.md, "Export from HDF5")
  target.h5    the file edge.h5's external link points into
  regref.h5    a dataset of region references (export must fail naming it)
  vlenseq.h5   a variable-length integer sequence dataset (unsupported type)
  alias.h5     a dataset with two hard links in a creation-ordered group, so
               libhdf5 names references by the alias the export makes a link
"""
import os
import sys

import h5py
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)

OID = "00000000-0000-4000-8000-%012d"

with h5py.File(os.path.join(out, "target.h5"), "w") as f:
    f.attrs["object_id"] = OID % 99
    f.create_dataset("x", data=np.arange(3))

with h5py.File(os.path.join(out, "edge.h5"), "w") as f:
    f.attrs["object_id"] = OID % 0
    f.attrs["namespace"] = "core"
    f.attrs["neurodata_type"] = "NWBFile"
    f.attrs["nwb_version"] = "2.6.0"
    g = f.create_group("grp")
    g.attrs["object_id"] = OID % 1
    g.attrs["neurodata_type"] = "Thing"
    g.attrs["floats"] = np.array([1.5, -2.0], dtype="f4")
    g.attrs["ints"] = np.array([[1, 2], [3, 4]], dtype="i8")
    g.attrs["flag"] = np.bool_(True)
    g.attrs["utf8"] = "h\u00e9llo"
    g.attrs["empty"] = np.zeros(0, dtype="f8")
    g.attrs["nonfinite"] = np.array([np.nan, np.inf, -np.inf])
    d = g.create_dataset("data", data=np.arange(6000, dtype="<i2").reshape(1000, 6),
                         chunks=(128, 4), compression="gzip", compression_opts=4,
                         shuffle=True, fletcher32=True)
    d.attrs["object_id"] = OID % 2
    d.attrs["unit"] = "volts"
    g.create_dataset("big_endian", data=np.arange(10, dtype=">f8"))
    g.create_dataset("sparse", shape=(100,), chunks=(10,), dtype="f4", fillvalue=7.5)
    g["sparse"][20:30] = np.arange(10)
    g.create_dataset("nonfinite", data=np.array([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    g.create_dataset("scalar_f", data=3.25)
    g.create_dataset("scalar_s", data="a scalar string")
    g.create_dataset("empty", shape=(0, 3), dtype="f4")
    g.create_dataset("vlen_utf8", data=["alpha", "\u03b2eta", ""], dtype=h5py.string_dtype("utf-8"))
    g.create_dataset("vlen_ascii", data=[b"x", b"yy"], dtype=h5py.string_dtype("ascii"))
    g.create_dataset("fixed_ascii", data=np.array([b"ab", b"cde"], dtype="S4"))
    g.create_dataset("strings_2d", data=[["a", "b"], ["c", "d"]], dtype=h5py.string_dtype())
    g.create_dataset("bools", data=np.array([True, False, True]))
    g.create_dataset("enum", data=np.array([0, 2, 1], dtype="u1"),
                     dtype=h5py.enum_dtype({"RED": 0, "GREEN": 1, "BLUE": 2}, basetype="u1"))
    cmp = np.dtype([("x", "<u4"), ("w", "<f4")])
    g.create_dataset("compound", data=np.array([(1, 0.5), (2, 1.5)], dtype=cmp))
    ref = h5py.ref_dtype
    g.create_dataset("refs", data=np.array([f["grp"].ref, d.ref], dtype=ref))
    g.attrs["table"] = d.ref
    cref = np.dtype([("idx", "<i4"), ("count", "<i4"), ("target", ref)])
    g.create_dataset("compound_refs", data=np.array([(0, 5, d.ref), (5, 2, g.ref)], dtype=cref))
    # Filter pipelines and types for the raw-chunk path (edge chunks too).
    rng = np.random.default_rng(3)
    fl = f.create_group("filters")
    fl.create_dataset("f4_shuffle", data=rng.normal(size=(300, 7)).astype("<f4"), chunks=(64, 3),
                      shuffle=True)
    fl.create_dataset("u1_gzip", data=rng.integers(0, 255, (1000,), dtype="u1"), chunks=(99,),
                      compression="gzip", compression_opts=9)
    fl.create_dataset("i8_fletcher", data=rng.integers(-2**60, 2**60, (50, 4)), chunks=(7, 4),
                      fletcher32=True)
    fl.create_dataset("f8_3d", data=rng.normal(size=(20, 9, 5)), chunks=(6, 4, 5),
                      compression="gzip", shuffle=True, fletcher32=True)
    # Over 4 MiB: a structured dtype streamed through the engine.
    big = np.zeros(360000, dtype=[("x", "<u4"), ("y", "<u4"), ("weight", "<f4")])
    big["x"] = np.arange(big.size)
    big["weight"] = 0.25
    fl.create_dataset("big_compound", data=big, chunks=(50000,), compression="gzip")
    fl.create_dataset("u2_be_gzip", data=np.arange(500, dtype=">u2"), chunks=(64,),
                      compression="gzip")
    g["soft"] = h5py.SoftLink("/grp/data")
    g["alias"] = d  # a second hard link: exported as a link to /grp/data
    f["ext"] = h5py.ExternalLink("target.h5", "/x")

with h5py.File(os.path.join(out, "alias.h5"), "w", track_order=True) as f:
    f.attrs["nwb_version"] = "2.6.0"
    g = f.create_group("g", track_order=True)
    d = g.create_dataset("z", data=np.arange(3))
    g["a"] = d
    f.create_dataset("refs", data=np.array([d.ref], dtype=h5py.ref_dtype))
    g.attrs["r"] = d.ref

with h5py.File(os.path.join(out, "regref.h5"), "w") as f:
    d = f.create_dataset("data", data=np.arange(10))
    f.create_dataset("regions", data=[d.regionref[2:5]], dtype=h5py.regionref_dtype)

with h5py.File(os.path.join(out, "vlenseq.h5"), "w") as f:
    dt = h5py.vlen_dtype(np.dtype("i4"))
    ds = f.create_dataset("ragged", (2,), dtype=dt)
    ds[0] = [1, 2]
    ds[1] = [3]
