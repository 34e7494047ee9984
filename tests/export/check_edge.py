"""`nwbzarr export` / `verify` on the h5py-made edge cases of make_fixtures.py:
each construct's Zarr form (docs/format.md, "Export from HDF5") as
zarr-python reads it, loud failures naming the object or file, and verify
catching tampered copies (exit 1, the path printed)."""
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))
CLI = os.environ["NZ_CLI"]
TMP = os.path.join(os.environ["NZ_TMP"], "export_edge")
shutil.rmtree(TMP, ignore_errors=True)
os.makedirs(TMP)
subprocess.run([sys.executable, os.path.join(HERE, "make_fixtures.py"), TMP], check=True)

failures = []


def check(cond, msg):
    if not cond:
        failures.append(msg)


def cli(*args):
    # This test reads the v2 layout with Debian's zarr 2.13 (v3: readers_export_v3).
    if args[0] == "export":
        args = (*args, "--zarr-format", "2")
    return subprocess.run([CLI, *args], capture_output=True, text=True)


src = os.path.join(TMP, "edge.h5")
dst = os.path.join(TMP, "edge.nwb.zarr")
r = cli("export", src, dst, "-j", "2", "--stats")
check(r.returncode == 0, f"export failed: {r.stderr}")
stats = json.loads(r.stdout)
check(stats["raw_chunks"] > 0, f"no chunk decoded by the workers: {stats}")
r = cli("verify", src, dst)
check(r.returncode == 0, f"verify of a fresh export failed: {r.stdout} {r.stderr}")

root = zarr.open_consolidated(dst, mode="r")
g = root["grp"]
check(root.attrs["object_id"] == "00000000-0000-4000-8000-000000000000", "root object_id kept")
# The external link's file is exported beside the output and linked to
# relative to the linking store, as hdmf-zarr resolves a source.
check(root.attrs["zarr_link"] == [{"name": "ext", "path": "/x", "source": "../target.h5.zarr"}],
      f"external link form: {root.attrs.asdict()}")
tgt = os.path.join(TMP, "target.h5.zarr")
check(list(zarr.open_consolidated(tgt, mode="r")["x"][...]) == [0, 1, 2], "linked file exported beside")
tgt_ino = os.stat(os.path.join(tgt, "x", "0")).st_ino
links = {l["name"]: l for l in g.attrs["zarr_link"]}
check(links["soft"]["path"] == "/grp/data" and links["soft"]["source"] == ".", "soft link")
# Two hard links to one dataset: the first in name order holds the data.
check("data" in links and links["data"]["path"] == "/grp/alias", f"hard-link alias: {links}")
alias = g["alias"]
check(alias.chunks == (128, 4), f"HDF5 chunks kept: {alias.chunks}")
check((alias[...] == np.arange(6000, dtype="<i2").reshape(1000, 6)).all(), "gzip+shuffle+fletcher32 values")
check(alias.attrs["object_id"] == "00000000-0000-4000-8000-000000000002", "dataset object_id kept")
check(g.attrs["flag"] is True and g.attrs["utf8"] == "h\u00e9llo" and g.attrs["empty"] == [],
      "attribute values")
check(g.attrs["ints"] == [[1, 2], [3, 4]], "2-D attribute")
nfa = g.attrs["nonfinite"]
check(math.isnan(nfa[0]) and nfa[1] == math.inf and nfa[2] == -math.inf, f"NaN/Inf attribute: {nfa}")
t = g.attrs["table"]
check(t["zarr_dtype"] == "object" and t["value"]["path"] == "/grp/alias"
      and t["value"]["object_id"] == "00000000-0000-4000-8000-000000000002"
      and t["value"]["source_object_id"] == "00000000-0000-4000-8000-000000000000"
      and t["value"]["source"] == ".", f"reference attribute: {t}")
refs = g["refs"]
check(refs.attrs["zarr_dtype"] == "object" and refs.filters[0].codec_id == "json2", "refs use json2")
check([v["path"] for v in refs[...]] == ["/grp", "/grp/alias"], "reference targets")
cr = g["compound_refs"]
check(cr.attrs["zarr_dtype"][2] == {"dtype": "object", "name": "target"}, "compound zarr_dtype")
check(cr[0][:2] == [0, 5] and cr[0][2]["path"] == "/grp/alias", f"compound with refs: {cr[0]}")
check(g["compound"].dtype.names == ("x", "w") and g["compound"][1]["w"] == 1.5, "structured compound")
check(g["bools"].dtype == np.bool_ and list(g["bools"][...]) == [True, False, True], "bool enum")
check(g["enum"].dtype == np.uint8 and list(g["enum"][...]) == [0, 2, 1], "enum as its base integers")
check(g["vlen_utf8"].filters[0].codec_id == "vlen-utf8"
      and list(g["vlen_utf8"][...]) == ["alpha", "\u03b2eta", ""], "utf-8 strings")
check(g["vlen_ascii"].filters[0].codec_id == "vlen-bytes"
      and list(g["vlen_ascii"][...]) == [b"x", b"yy"], "ascii strings as vlen-bytes")
check(list(g["fixed_ascii"][...]) == [b"ab", b"cde"], "fixed-length strings, padding removed")
check(g["strings_2d"].shape == (2, 2) and g["strings_2d"][1, 0] == "c", "2-D strings")
s = g["scalar_s"]
check(s.shape == (1,) and s.attrs["zarr_dtype"] == "scalar" and s[0] == "a scalar string", "scalar string")
check(g["scalar_f"].shape == (1,) and g["scalar_f"][0] == 3.25, "scalar float")
check(g["empty"].shape == (0, 3), "empty dataset")
check(g["big_endian"].dtype == np.dtype("<f8") and g["big_endian"][9] == 9.0, "big-endian -> little")
sp = g["sparse"][...]
check(sp[0] == 7.5 and sp[25] == 5.0, "unwritten chunks read as the HDF5 fill value")
nf = g["nonfinite"][...]
check(math.isnan(nf[0]) and nf[1] == math.inf and nf[2] == -math.inf, "NaN/Inf kept")
check(math.copysign(1, nf[4]) < 0, "-0.0 kept")
fl = root["filters"]
check(fl["f8_3d"].chunks == (6, 4, 5) and fl["u1_gzip"].chunks == (99,), "filter datasets chunked as in HDF5")
import h5py  # noqa: E402 - only here: the values as h5py (libhdf5) decodes them
with h5py.File(src, "r") as h:
    for k in h["filters"]:
        want = h["filters"][k][...]
        got = fl[k][...]
        check(got.dtype == want.dtype.newbyteorder("<") and (got == want).all(), f"filters/{k} values")

# --chunks auto stacks whole HDF5 chunks (128 rows here) along the first
# dimension; --hdf5-decode reads through libhdf5; the content is the same;
# --clevel sets the compressor's level.
auto = os.path.join(TMP, "auto.nwb.zarr")
r = cli("export", src, auto, "--chunks", "auto", "--hdf5-decode", "--compressor", "zstd", "--clevel", "7",
        "--stats")
check(r.returncode == 0 and json.loads(r.stdout)["raw_chunks"] == 0, f"auto export: {r.stderr}")
a = zarr.open_group(auto, mode="r")["grp/alias"]
check(a.chunks == (1000, 4) and a.compressor.codec_id == "zstd" and a.compressor.level == 7,
      f"auto chunks {a.chunks}, {a.compressor}")
r = cli("verify", dst, auto)
check(r.returncode == 0, f"verify Zarr vs Zarr: {r.stdout} {r.stderr}")
check(os.stat(os.path.join(tgt, "x", "0")).st_ino == tgt_ino, "a linked store equal to its file is kept")

# A linked store that no longer matches its file is not replaced without
# --overwrite (nothing of the export is written), and is with it.
zt = zarr.open_consolidated(tgt, mode="r+")
zt["x"][1] = 7
shutil.rmtree(auto)
r = cli("export", src, auto)
check(r.returncode == 1 and "target.h5.zarr" in r.stderr and "not a complete, equal export" in r.stderr
      and "differ in 1 place" in r.stderr and not os.path.exists(auto), f"stale linked store: {r.stderr}")
r = cli("export", src, auto, "--overwrite")
check(r.returncode == 0 and list(zarr.open_consolidated(tgt, mode="r")["x"][...]) == [0, 1, 2],
      f"--overwrite rewrites the linked store: {r.stderr}")

# Links into files that cannot be exported beside: refused before anything is written.
import h5py  # noqa: E402
for name, make, problem in [
    ("ext_missing.h5", lambda f: f.__setitem__("l", h5py.ExternalLink("nothere.h5", "/x")),
     "leads into 'nothere.h5', which cannot be opened"),
    ("ext_twins.h5", lambda f: (f.__setitem__("a", h5py.ExternalLink("d1/t.h5", "/x")),
                                f.__setitem__("b", h5py.ExternalLink("d2/t.h5", "/x"))),
     "would both be exported to"),
]:
    for d in ("d1", "d2"):
        os.makedirs(os.path.join(TMP, d), exist_ok=True)
        shutil.copyfile(os.path.join(TMP, "target.h5"), os.path.join(TMP, d, "t.h5"))
    p = os.path.join(TMP, name)
    with h5py.File(p, "w") as f:
        f.attrs["nwb_version"] = "2.6.0"
        make(f)
    out = os.path.join(TMP, name + ".zarr")
    r = cli("export", p, out)
    check(r.returncode == 1 and problem in r.stderr and not os.path.exists(out)
          and not os.path.exists(os.path.join(TMP, "t.h5.zarr")), f"{name}: {r.stderr}")

# References follow an object to the path holding its data, not to an alias
# that became a zarr_link (libhdf5 names the alias "/g/z" here).
al_src, al_dst = os.path.join(TMP, "alias.h5"), os.path.join(TMP, "alias.zarr")
r = cli("export", al_src, al_dst)
check(r.returncode == 0 and cli("verify", al_src, al_dst).returncode == 0, f"alias export: {r.stderr}")
al = zarr.open_group(al_dst, mode="r")
check(al["g"].attrs["zarr_link"] == [{"name": "z", "path": "/g/a", "source": "."}], "alias link")
check(al["refs"][0]["path"] == "/g/a" and al["g"].attrs["r"]["value"]["path"] == "/g/a",
      f"references canonical: {al['refs'][0]} {al['g'].attrs['r']}")

# Loud failures name the object or the file.
r = cli("export", os.path.join(TMP, "regref.h5"), os.path.join(TMP, "rr.zarr"))
check(r.returncode == 1 and "'/regions'" in r.stderr and "region reference" in r.stderr,
      f"region reference: {r.stderr}")
check(not os.path.exists(os.path.join(TMP, "rr.zarr")), "nothing written for a failed walk")
r = cli("export", os.path.join(TMP, "vlenseq.h5"), os.path.join(TMP, "vs.zarr"))
check(r.returncode == 1 and "'/ragged'" in r.stderr, f"vlen sequence: {r.stderr}")
with open(src, "rb") as fh:
    head = fh.read(3000)
trunc = os.path.join(TMP, "truncated.nwb")
with open(trunc, "wb") as fh:
    fh.write(head)
r = cli("export", trunc, os.path.join(TMP, "t.zarr"))
check(r.returncode == 1 and trunc in r.stderr, f"truncated input: {r.stderr}")
# A corrupt gzip chunk: both reading paths fail naming the dataset and file.
bad = os.path.join(TMP, "corrupt.h5")
shutil.copyfile(src, bad)
with h5py.File(bad, "r") as h:
    off = h["grp/alias"].id.get_chunk_info(3).byte_offset
with open(bad, "r+b") as fh:
    fh.seek(off + 10)
    fh.write(b"\xff" * 40)
for extra in ([], ["--hdf5-decode"]):
    r = cli("export", bad, os.path.join(TMP, "bad.zarr"), "--overwrite", *extra)
    check(r.returncode == 1 and "'/grp/alias'" in r.stderr and bad in r.stderr,
          f"corrupt chunk {extra}: {r.stderr}")
r = cli("export", src, dst)
check(r.returncode == 1 and "exists" in r.stderr, "no overwrite without --overwrite")
r = cli("export", src)
check(r.returncode == 2, "usage error")

# verify catches tampering, printing the path.
def tampered(name, edit):
    copy = os.path.join(TMP, name)
    shutil.copytree(dst, copy)
    edit(zarr.open_group(copy, mode="r+"))
    return cli("verify", src, copy)


def change_value(z):
    z["grp/alias"][500, 3] = -1


def change_attr(z):
    z["grp"].attrs["utf8"] = "changed"


def drop_dataset(z):
    del z["grp/scalar_f"]


r = tampered("t1.zarr", change_value)
check(r.returncode == 1 and "/grp/alias: 1 of 6000 values differ; first at [500, 3]" in r.stdout,
      f"changed value: {r.stdout}")
r = tampered("t2.zarr", change_attr)
check(r.returncode == 1 and "/grp: attribute 'utf8' differs" in r.stdout, f"changed attribute: {r.stdout}")
r = tampered("t3.zarr", drop_dataset)
check(r.returncode == 1 and "/grp/scalar_f: dataset is missing" in r.stdout, f"missing dataset: {r.stdout}")

for f in failures:
    print("FAIL", f)
print("ok" if not failures else f"{len(failures)} failures")
sys.exit(1 if failures else 0)
