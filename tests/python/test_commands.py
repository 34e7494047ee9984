"""nwbzarr.convert/info/export/verify: the commands as Python calls, each
failure an NWBZarrError carrying the library's (or program's) message and
code, with nothing of the output changed."""

import os
import shutil
import sys

import numpy as np
from hdmf.backends.hdf5 import H5DataIO
from pynwb import NWBHDF5IO

import nwbzarr

from nzpy import FAILED, check, finish, nwbfile, recording, scratch

tmp = scratch("py_commands")


def raises(fn, code, *needles):
    try:
        fn()
    except nwbzarr.NWBZarrError as e:
        ok = e.code == code and all(n in e.message for n in needles) and str(e) == e.message
        check(ok, f"NWBZarrError {e.code} '{e.message[:100]}'")
        return
    check(False, f"an NWBZarrError with code {code} is raised")


data = recording(frames=60_000, channels=32)
data.tofile(tmp("rec.bin"))
summary = nwbzarr.convert(tmp("rec.bin"), tmp("conv.nwb.zarr"), channels=32, rate=30000.0, number_of_jobs=2)
check(summary.get("frames") == 60_000 and summary.get("channels") == 32, f"convert returns its JSON summary ({summary})")
nodes = nwbzarr.info(tmp("conv.nwb.zarr"))
check(any("ElectricalSeries" in str(n) for n in nodes), f"info lists the ElectricalSeries ({len(nodes)} nodes)")
raises(lambda: nwbzarr.convert(tmp("missing.bin"), tmp("m.nwb.zarr"), channels=32, rate=1.0),
       nwbzarr.EINVAL, "missing.bin")
check(not os.path.exists(tmp("m.nwb.zarr")), "a failed convert leaves no output")

h5 = tmp("src.nwb")
with NWBHDF5IO(h5, "w") as io:
    io.write(nwbfile(H5DataIO(data, chunks=(4096, 32), compression="gzip")))
stats = nwbzarr.export(h5, tmp("exp.nwb.zarr"), number_of_jobs=2)
check(stats["datasets"] > 0 and stats["bytes"] >= data.nbytes, f"export returns its stats ({stats})")
check(nwbzarr.verify(h5, tmp("exp.nwb.zarr")) == [], "verify: the export matches its source")
before = sorted(os.listdir(tmp("exp.nwb.zarr")))
raises(lambda: nwbzarr.export(h5, tmp("exp.nwb.zarr")), nwbzarr._nwbzarr.EEXISTS, "exp.nwb.zarr")
check(sorted(os.listdir(tmp("exp.nwb.zarr"))) == before, "a refused export leaves the existing output as it was")
raises(lambda: nwbzarr.export(tmp("nope.nwb"), tmp("x.nwb.zarr")), nwbzarr._nwbzarr.ENOTFOUND, "nope.nwb")
nwbzarr.export(h5, tmp("exp.nwb.zarr"), overwrite=True, compressor="zstd", clevel=3, number_of_jobs=1)
check(nwbzarr.verify(h5, tmp("exp.nwb.zarr")) == [], "export --overwrite with zstd: verify matches")
# compressor="keep": the gzip chunks moved as HDF5 stored them, as zlib
# (a dataset over 4 MiB; the small ones take the same path).
big = recording(frames=90_000, channels=32, seed=2)
h5big = tmp("big.nwb")
with NWBHDF5IO(h5big, "w") as io:
    io.write(nwbfile(H5DataIO(big, chunks=(4096, 32), compression="gzip")))
stats = nwbzarr.export(h5big, tmp("keep.nwb.zarr"), compressor="keep", number_of_jobs=2)
nchunks = -(-big.shape[0] // 4096)
check(stats["stored_chunks"] == nchunks and stats["keep_fallbacks"] == 0,
      f"compressor='keep' moves the {nchunks} stored chunks ({stats})")
check(nwbzarr.verify(h5big, tmp("keep.nwb.zarr")) == [], "compressor='keep': verify matches")
stats = nwbzarr.export(h5, tmp("keep-small.nwb.zarr"), compressor="keep", number_of_jobs=2)
nchunks = -(-data.shape[0] // 4096)
check(stats["stored_chunks"] == nchunks and nwbzarr.verify(h5, tmp("keep-small.nwb.zarr")) == [],
      f"compressor='keep' moves a small dataset's {nchunks} stored chunks too, verified ({stats})")
import json  # noqa: E402
with open(tmp("keep.nwb.zarr/acquisition/ts/data/zarr.json")) as f:
    codecs = [c["name"] for c in json.load(f)["codecs"]]
check(codecs == ["bytes", "numcodecs.zlib"], f"compressor='keep' writes the HDF5 deflate as its codec ({codecs})")
try:
    nwbzarr.export(h5, tmp("z.nwb.zarr"), compressor="keep", clevel=3)
    check(False, "compressor='keep' with a clevel is refused")
except ValueError as e:
    check("keep" in str(e) and not os.path.exists(tmp("z.nwb.zarr")), f"keep with a clevel is refused ({e})")
try:
    nwbzarr.export(h5, tmp("y.nwb.zarr"), compressor="snappy")
    check(False, "an unknown compressor is refused")
except ValueError as e:
    check("snappy" in str(e), f"an unknown compressor is refused ({e})")

# copy_links: an external link's data copied in, nothing exported beside.
import h5py  # noqa: E402
linking = tmp("linking.nwb")
shutil.copyfile(h5, linking)
with h5py.File(linking, "a") as f:
    ts = next(iter(f["acquisition"].values()))
    del ts["data"]
    ts["data"] = h5py.ExternalLink("src.nwb", ts.name + "/data")
os.makedirs(tmp("cl"), exist_ok=True)
nwbzarr.export(linking, tmp("cl/linking.nwb.zarr"), copy_links=True, number_of_jobs=2)
check(os.listdir(tmp("cl")) == ["linking.nwb.zarr"], f"copy_links: nothing beside ({os.listdir(tmp('cl'))})")
check(nwbzarr.verify(linking, tmp("cl/linking.nwb.zarr")) == [], "copy_links: verify matches the linking file")

other = tmp("other.nwb")
with NWBHDF5IO(other, "w") as io:
    io.write(nwbfile(data[::-1].copy()))
diffs = nwbzarr.verify(other, tmp("exp.nwb.zarr"))
check(any("acquisition/ts/data" in d for d in diffs), f"verify names the differing dataset ({diffs[:2]})")

finish()
