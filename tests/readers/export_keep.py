"""export --compressor keep: each dataset's HDF5 filters become its Zarr
codecs (shuffle -> numcodecs.shuffle, gzip -> numcodecs.zlib at the file's
level; fletcher32 dropped), as hdmf-zarr 0.14's export maps them, and the
large datasets' chunks move as HDF5 stored them: every Zarr chunk is
h5py's read_direct_chunk bytes, for -j 1, 2 and 3 alike, v3 and v2. The
exports verify against the source, read back equal with zarr-python and
with hdmf-zarr 0.14's NWBZarrIO container by container; a filter with no
Zarr codec (scaleoffset) gives that dataset the default codec, with a note
naming it. Every reference file exports with keep and verifies."""
import json
import os
import pathlib
import shutil
import subprocess
import warnings
from datetime import datetime, timezone

import h5py
import numpy as np
import zarr
from hdmf.backends.hdf5 import H5DataIO
from hdmf_zarr import NWBZarrIO
from pynwb import NWBHDF5IO, NWBFile, TimeSeries

from nwbcompare import same_containers

warnings.simplefilter("ignore")
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "export_keep"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)
ROWS, CHUNK = 60_000, 8192  # 7.7 MB of int16: streamed by the engine; 8 chunks, the last partial
NCHUNKS = -(-ROWS // CHUNK)


def run(*cmd, code=0):
    r = subprocess.run([cli, *map(str, cmd)], capture_output=True, text=True)
    assert r.returncode == code, f"{cmd}: exit {r.returncode}: {r.stdout} {r.stderr}"
    return r


rng = np.random.default_rng(3)
data = (rng.normal(0, 200, (ROWS, 64)).cumsum(axis=0) % 3000).astype(np.int16)
f = NWBFile(session_description="keep", identifier="keep", session_start_time=datetime(2024, 1, 2, tzinfo=timezone.utc))
f.add_acquisition(TimeSeries(name="gz", unit="uV", rate=30000.0,
                             data=H5DataIO(data, chunks=(CHUNK, 64), compression="gzip", compression_opts=4,
                                           shuffle=True)))
f.add_acquisition(TimeSeries(name="fl", unit="uV", rate=30000.0,
                             data=H5DataIO(data, chunks=(CHUNK, 64), compression="gzip", fletcher32=True)))
f.add_acquisition(TimeSeries(name="plain", unit="uV", rate=30000.0, data=data[:1000]))
src = tmp / "src.nwb"
with NWBHDF5IO(str(src), "w") as io:
    io.write(f)


def codecs(store, name, v2=False):
    if v2:
        z = json.loads((store / "acquisition" / name / "data" / ".zarray").read_text())
        return z["filters"], z["compressor"]
    return [c["name"] if c["name"] == "bytes" else (c["name"], c.get("configuration"))
            for c in json.loads((store / "acquisition" / name / "data" / "zarr.json").read_text())["codecs"]]


def chunk_bytes(store, name, v2=False):
    base = store / "acquisition" / name / "data"
    return {i: (base / (f"{i}.0" if v2 else f"c/{i}/0")).read_bytes() for i in range(NCHUNKS)}


with h5py.File(src, "r") as h:
    stored = {i: h["acquisition/gz/data"].id.read_direct_chunk((i * CHUNK, 0))[1] for i in range(NCHUNKS)}

outs = {}
for fmt in ("3", "2"):
    for jobs in ("1", "2", "3"):
        out = tmp / f"keep_v{fmt}_j{jobs}.nwb.zarr"
        st = json.loads(run("export", src, out, "--compressor", "keep", "--zarr-format", fmt, "-j", jobs,
                            "--json").stdout)
        assert st["stored_chunks"] == NCHUNKS, f"v{fmt} -j {jobs}: {st['stored_chunks']} chunks moved as stored"
        run("verify", src, out)
        outs[fmt, jobs] = out
    v2 = fmt == "2"
    first = chunk_bytes(outs[fmt, "1"], "gz", v2)
    assert first == stored, f"v{fmt}: the Zarr chunks are not the HDF5 chunks as stored"
    for jobs in ("2", "3"):
        r = subprocess.run(["diff", "-r", str(outs[fmt, "1"]), str(outs[fmt, jobs])], capture_output=True, text=True)
        assert r.returncode == 0, f"v{fmt}: -j 1 and -j {jobs} differ: {r.stdout[:300]}"
    for name in ("gz", "fl"):
        a = zarr.open_array(str(outs[fmt, "2"] / "acquisition" / name / "data"), mode="r")
        assert np.array_equal(a[...], data), f"v{fmt} {name}: zarr-python reads other values"

shuffle2 = ("numcodecs.shuffle", {"elementsize": 2})
assert codecs(outs["3", "1"], "gz") == ["bytes", shuffle2, ("numcodecs.zlib", {"level": 4})], codecs(outs["3", "1"], "gz")
assert codecs(outs["3", "1"], "fl") == ["bytes", ("numcodecs.zlib", {"level": 4})], codecs(outs["3", "1"], "fl")
assert codecs(outs["3", "1"], "plain")[1][0] == "zstd", "a dataset without filters: the default codec"
assert codecs(outs["2", "1"], "gz", True) == ([{"elementsize": 2, "id": "shuffle"}], {"id": "zlib", "level": 4})

# hdmf-zarr 0.14's own export makes the same codecs for the filtered series
theirs = tmp / "hdmf014.nwb.zarr"
with NWBHDF5IO(str(src), "r") as r, NWBZarrIO(str(theirs), "w") as w:
    w.export(src_io=r, write_args=dict(link_data=False))
for name in ("gz", "fl"):
    assert codecs(theirs, name) == codecs(outs["3", "1"], name), f"{name}: {codecs(theirs, name)}"

with NWBHDF5IO(str(src), "r") as hio, NWBZarrIO(str(outs["3", "2"]), "r") as zio:
    same_containers(hio.read(), zio.read(), src.name)

# a filter Zarr has no codec for here: the default codec, and a note naming the dataset
so = tmp / "scaleoffset.nwb"
shutil.copy(src, so)
with h5py.File(so, "r+") as h:
    h.create_dataset("extra", data=np.arange(10_000, dtype=np.int32), chunks=(1000,), scaleoffset=0)
out = tmp / "so.nwb.zarr"
r = run("export", so, out, "--compressor", "keep", "--quiet")
assert "'/extra'" in r.stderr and "no Zarr codec" in r.stderr, r.stderr
assert json.loads((out / "extra" / "zarr.json").read_text())["codecs"][1]["name"] == "zstd"
run("verify", so, out)

# every reference file (strings, references, compounds, scalars, empty datasets) exports and verifies
refs = sorted((pathlib.Path(os.environ["NZ_REF"]) / "nwb").glob("*.nwb"))
assert len(refs) >= 8
for h5 in refs:
    out = tmp / f"{h5.stem}.nwb.zarr"
    run("export", h5, out, "--compressor", "keep", "--quiet")
    run("verify", h5, out)

r = run("export", src, tmp / "bad.nwb.zarr", "--compressor", "keep", "--clevel", "3", code=2)
assert "--clevel" in r.stderr and not (tmp / "bad.nwb.zarr").exists()
print(f"export_keep: {NCHUNKS} HDF5 chunks moved as stored, v3 and v2, -j 1/2/3 identical, verified, "
      "read back equal by zarr-python and NWBZarrIO, the codecs hdmf-zarr 0.14's export picks")
