"""nwbzarr.upgrade: `nwbzarr upgrade` as a Python call. A Zarr v2 file
(convert --zarr-format 2) becomes a v3 file that hdmf-zarr 0.14's NWBZarrIO
reads with the same values and verify finds equal to its source; the JSON
summary comes back (chunks reused, or none when a compressor is given);
keyword options become flags (shards=(r, c)); a refused upgrade raises
NWBZarrError naming the file and leaves an existing output as it was."""

import os

import numpy as np
from hdmf_zarr import NWBZarrIO

import nwbzarr

from nzpy import check, finish, recording, scratch

tmp = scratch("py_upgrade")
data = recording(frames=80_000, channels=32)
data.tofile(tmp("rec.bin"))
nwbzarr.convert(tmp("rec.bin"), tmp("v2.nwb.zarr"), channels=32, rate=30000.0, zarr_format=2)

st = nwbzarr.upgrade(tmp("v2.nwb.zarr"), tmp("v3.nwb.zarr"), number_of_jobs=2)
check(isinstance(st, dict) and st.get("chunks_reused", 0) > 0 and st.get("output") == tmp("v3.nwb.zarr"),
      f"upgrade returns its JSON summary with chunks reused ({st})")
with NWBZarrIO(tmp("v3.nwb.zarr"), "r") as io:
    got = io.read().acquisition["ElectricalSeries"].data[:]
check(np.array_equal(got, data), "NWBZarrIO reads the upgraded values back")
check(nwbzarr.verify(tmp("v2.nwb.zarr"), tmp("v3.nwb.zarr")) == [], "verify: the upgrade matches its source")

st = nwbzarr.upgrade(tmp("v2.nwb.zarr"), tmp("zstd.nwb.zarr"), compressor="zstd", shards=(65536, 32))
check(st.get("chunks_reused") == 0 and st.get("chunks_recoded", 0) > 0,
      f"compressor= re-encodes every chunk ({st})")
with open(tmp("zstd.nwb.zarr/acquisition/ElectricalSeries/data/zarr.json")) as f:
    check('"sharding_indexed"' in f.read(), "shards=(r, c) becomes --shards r,c")

before = sorted(os.listdir(tmp("v3.nwb.zarr")))
try:
    nwbzarr.upgrade(tmp("v2.nwb.zarr"), tmp("v3.nwb.zarr"))
    check(False, "an existing output is refused")
except nwbzarr.NWBZarrError as e:
    check("exists" in e.message and "v3.nwb.zarr" in e.message, f"an existing output is refused ({e.message[:120]})")
check(sorted(os.listdir(tmp("v3.nwb.zarr"))) == before, "the refused upgrade left the output as it was")
try:
    nwbzarr.upgrade(tmp("nope.nwb.zarr"), tmp("x.nwb.zarr"))
    check(False, "a missing input is refused")
except nwbzarr.NWBZarrError as e:
    check("nope.nwb.zarr" in e.message and not os.path.exists(tmp("x.nwb.zarr")),
          f"a missing input is refused, naming it, with no output ({e.message[:120]})")
finish()
