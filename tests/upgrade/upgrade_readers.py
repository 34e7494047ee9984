"""`nwbzarr upgrade` (Zarr v2 -> v3) checked with the real readers.

Sources: hdmf-zarr 0.13's own writes of every reference file plus a file
with pickle-coded references and a compound holding references (made at
test time by NZ_PY013, the first argument), and our own v2: `convert
--zarr-format 2` of a recording and `export --zarr-format 2` of every
reference file. For each: upgrade exits 0, `nwbzarr verify OLD NEW`
passes, and hdmf-zarr 0.14's NWBZarrIO reads NEW equal, container by
container (tests/readers/nwbcompare.py: object ids, types, names, parents, every field
and value, references resolved to the same objects), to the HDF5 source
read by pynwb (and, for the recording, to OLD read by NWBZarrV2IO).
-j 1, 2 and 3 write the same bytes. Reuse is proven on the bytes: each v2
chunk file of the recording equals the v3 chunk, and, with --shards, the
inner chunk its shard index points at. Hostile inputs (a truncated
.zmetadata, a pickle that would run code, a missing chunk, a v3 input, an
existing output) fail naming the file and the problem and leave no output
(an existing one untouched)."""
import glob
import hashlib
import json
import os
import shutil
import struct
import subprocess
import sys
import warnings

import numpy as np

os.environ["NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"] = "1"  # NWBZarrV2IO on files this test made
warnings.simplefilter("ignore")
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO  # noqa: E402
from pynwb import NWBHDF5IO  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "readers"))
import nwbcompare  # noqa: E402

cli, ref = os.environ["NZ_CLI"], os.environ["NZ_REF"]
py013, tmp = sys.argv[1], os.path.join(os.environ["NZ_TMP"], "upgrade_readers")
shutil.rmtree(tmp, ignore_errors=True)
os.makedirs(tmp)


def run(*args):
    return subprocess.run([cli, *map(str, args)], capture_output=True, text=True)


def ok(*args):
    r = run(*args)
    assert r.returncode == 0, f"{args}: rc {r.returncode}\n{r.stdout}\n{r.stderr}"
    return r.stdout


def upgrade(v2, v3, *extra):
    return json.loads(ok("upgrade", v2, v3, "--quiet", "--json", *extra))


def digest(store):
    h = hashlib.sha256()
    for d, dirs, files in sorted(os.walk(store)):
        dirs.sort()
        for f in sorted(files):
            p = os.path.join(d, f)
            h.update(os.path.relpath(p, store).encode() + b"\0")
            with open(p, "rb") as fh:
                h.update(fh.read())
    return h.hexdigest()


def same_as_hdf5(h5, v3):
    with NWBHDF5IO(h5, "r") as a, NWBZarrIO(v3, "r") as b:
        return nwbcompare.differences(a.read(), b.read())


# ---- the sources --------------------------------------------------------
made = subprocess.run([py013, os.path.join(here, "hdmf013.py"), os.path.join(tmp, "h013")],
                      capture_output=True, text=True, env=dict(os.environ, PYTHONWARNINGS="ignore"))
assert made.returncode == 0, made.stderr
pairs = [tuple(line.split()) for line in made.stdout.splitlines()]
assert len(pairs) >= 8, made.stdout
for h5 in sorted(glob.glob(os.path.join(ref, "nwb", "*.nwb"))):
    ours = os.path.join(tmp, os.path.basename(h5)[:-4] + ".ours.nwb.zarr")
    ok("export", h5, ours, "--zarr-format", "2", "--quiet")
    pairs.append((h5, ours))
rec = os.path.join(tmp, "rec.bin")
rows, cols = 100000, 32
values = (np.random.default_rng(7).normal(0, 200, (rows, cols))).astype("<i2")
values.tofile(rec)
conv = os.path.join(tmp, "rec.nwb.zarr")
r = run("convert", rec, "-o", conv, "--channels", cols, "--rate", 30000, "--zarr-format", 2, "--quiet")
assert r.returncode == 0, r.stderr

# ---- every source upgrades, verifies and reads back equal ---------------
reused = 0
for h5, v2 in pairs:
    v3 = v2[: -len(".nwb.zarr")] + ".v3.nwb.zarr"
    st = upgrade(v2, v3, "-j", 2)
    reused += st["chunks_reused"]
    assert not os.path.exists(os.path.join(v3, ".nwbzarr-incomplete")), v3
    ok("verify", "--quiet", v2, v3)
    diff = same_as_hdf5(h5, v3)
    assert not diff, f"{v3}:\n" + "\n".join(diff)
assert reused > 0, "no chunk was reused"

conv3 = os.path.join(tmp, "rec.v3.nwb.zarr")
st = upgrade(conv, conv3, "-j", 2)
with NWBZarrV2IO(conv, "r") as a, NWBZarrIO(conv3, "r") as b:
    fa, fb = a.read(), b.read()
    diff = nwbcompare.differences(fa, fb)
    assert not diff, "\n".join(diff)
    assert np.array_equal(fb.acquisition["ElectricalSeries"].data[:], values)
ok("verify", "--quiet", conv, conv3)

# ---- the same bytes for any -j ------------------------------------------
pickled = [v2 for _, v2 in pairs if v2.endswith("pickle_refs.nwb.zarr")][0]
for src in (conv, pickled):
    outs = []
    for j in (1, 2, 3):
        out = os.path.join(tmp, f"j{j}_" + os.path.basename(src))
        upgrade(src, out, "-j", j)
        outs.append(digest(out))
    assert len(set(outs)) == 1, f"{src}: -j 1/2/3 differ"

# ---- chunk bytes reused, unsharded and sharded --------------------------
v2data = os.path.join(conv, "acquisition", "ElectricalSeries", "data")
meta = json.load(open(os.path.join(v2data, ".zarray")))
ch = meta["chunks"]
grid = [-(-s // c) for s, c in zip(meta["shape"], ch)]
assert st["chunks_reused"] >= grid[0] * grid[1], st


def v2chunk(i, j):
    with open(os.path.join(v2data, f"{i}.{j}"), "rb") as f:
        return f.read()


v3data = os.path.join(conv3, "acquisition", "ElectricalSeries", "data")
for i in range(grid[0]):
    with open(os.path.join(v3data, "c", str(i), "0"), "rb") as f:
        assert f.read() == v2chunk(i, 0), f"chunk {i},0 was not moved as its bytes"

sharded = os.path.join(tmp, "rec.sharded.nwb.zarr")
upgrade(conv, sharded, "--shards", f"{2 * ch[0]},{ch[1]}")
sdata = os.path.join(sharded, "acquisition", "ElectricalSeries", "data")
zj = json.load(open(os.path.join(sdata, "zarr.json")))
assert zj["codecs"][0]["name"] == "sharding_indexed", zj["codecs"]
conf = zj["codecs"][0]["configuration"]
assert conf["chunk_shape"] == ch and conf.get("index_location", "end") == "end", conf
index_bytes = 2 * 16 + (4 if any(c["name"] == "crc32c" for c in conf["index_codecs"]) else 0)
checked = 0
for s in range(-(-grid[0] // 2)):
    with open(os.path.join(sdata, "c", str(s), "0"), "rb") as f:
        shard = f.read()
    index = shard[-index_bytes:]
    for k in range(2):
        i = 2 * s + k
        off, n = struct.unpack_from("<QQ", index, 16 * k)
        if i >= grid[0]:
            assert (off, n) == (2**64 - 1, 2**64 - 1), (s, k, off, n)
            continue
        assert shard[off:off + n] == v2chunk(i, 0), f"inner chunk {i} of shard {s} is not v2's chunk file"
        checked += 1
assert checked == grid[0], checked
with NWBZarrIO(sharded, "r") as b:
    assert np.array_equal(b.read().acquisition["ElectricalSeries"].data[:], values)

# ---- hostile inputs: clear errors, no output ----------------------------
base = [v2 for _, v2 in pairs if v2.endswith("/reference.nwb.zarr")][0]


def refused(src, needles, out=None):
    out = out or os.path.join(tmp, "refused.nwb.zarr")
    r = run("upgrade", src, out, "--quiet")
    assert r.returncode == 1, f"{src}: rc {r.returncode} {r.stderr}"
    for n in needles:
        assert n in r.stderr, f"{src}: {n!r} not in {r.stderr!r}"
    return r.stderr, out


def copy(src, name):
    dst = os.path.join(tmp, name)
    shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst)
    return dst


bad = copy(base, "truncated.nwb.zarr")
zm = os.path.join(bad, ".zmetadata")
text = open(zm, "rb").read()
open(zm, "wb").write(text[: len(text) // 2])
_, out = refused(bad, [bad, ".zmetadata"])
assert not os.path.exists(out), "output left after a truncated .zmetadata"

bad = copy(base, "missing.nwb.zarr")
os.remove(os.path.join(bad, "acquisition", "ElectricalSeries", "data", "1.0"))
_, out = refused(bad, [bad, "acquisition/ElectricalSeries/data/1.0", "missing"])
assert not os.path.exists(out)

bad = copy(pickled, "evil.nwb.zarr")
witness = os.path.join(tmp, "ran")
cmd = ("touch " + witness).encode()
evil = (b"\x80\x04\x95\x20\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94"
        + b"\x8c" + bytes([len(cmd)]) + cmd + b"\x94\x85\x94R\x94.")
put = subprocess.run([py013, "-c", "import sys; sys.path.insert(0, sys.argv[1]); import hdmf013; "
                      "hdmf013.put_raw_chunk(sys.argv[2], 'intervals/trials/timeseries', bytes.fromhex(sys.argv[3]))",
                      here, bad, evil.hex()], capture_output=True, text=True)
assert put.returncode == 0, put.stderr
_, out = refused(bad, [bad, "intervals/trials/timeseries", "os.system"])
assert not os.path.exists(out) and not os.path.exists(witness), "a refused pickle left output or ran"

refused(conv3, [conv3, "Zarr v3 already"])
before = digest(conv3)
refused(conv, [conv3, "exists"], out=conv3)
assert digest(conv3) == before, "an existing output was touched"
# --overwrite replaces it (and the old one is gone once the new one is verified)
upgrade(conv, conv3, "--overwrite")
assert digest(conv3) == before
print(f"ok: {len(pairs) + 1} v2 files upgraded ({reused} chunks reused), verified, read back equal "
      f"by hdmf-zarr 0.14; -j 1/2/3 identical; chunk bytes reused, sharded and not; hostile inputs refused")
