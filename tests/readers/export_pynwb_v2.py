"""Files pynwb 4.2 writes are exported to the v2 layout, verified, and read
back by hdmf-zarr 0.14's NWBZarrV2IO: first every reference file in
tests/data/nwb, then one with constructs the reference set lacks (trials with
a text column, Images, NaN/Inf data).

Not here: a TimeIntervals `timeseries` column (a compound dataset holding
references). The v2 layout stores it as a json2 object array, which
NWBZarrV2IO cannot open ("Found bad link to object .../timeseries"): the v3
layout's `struct` compounds (issue 12) are the fix."""
import math
import os
import pathlib
import shutil
import subprocess
import warnings
from datetime import datetime, timezone

import numpy as np
from hdmf_zarr import NWBZarrV2IO
from pynwb import NWBHDF5IO, NWBFile, TimeSeries
from pynwb.image import Images, RGBImage

cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "readers_export_pynwb_v2"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)
src, dst = tmp / "extra.nwb", tmp / "extra.nwb.zarr"
warnings.simplefilter("ignore")  # v2 fallback notes, deprecations: not the subject here


def export(h5, zarr_path):
    for cmd in ([cli, "export", str(h5), str(zarr_path), "-j", "2"], [cli, "verify", str(h5), str(zarr_path)]):
        r = subprocess.run(cmd, capture_output=True, text=True)
        assert r.returncode == 0, f"{' '.join(cmd)} failed: {r.stdout} {r.stderr}"


refs = sorted((pathlib.Path(os.environ["NZ_REF"]) / "nwb").glob("*.nwb"))
assert refs, "no reference files"
for h5 in refs:
    z = tmp / (h5.stem + ".nwb.zarr")
    export(h5, z)
    with NWBHDF5IO(str(h5), "r", load_namespaces=True) as hio, NWBZarrV2IO(str(z), "r") as zio:
        a, b = hio.read(), zio.read()
        ida = sorted(o.object_id for o in a.objects.values())
        idb = sorted(o.object_id for o in b.objects.values())
        assert ida == idb, f"{h5.name}: the export holds other objects than its source"

nwb = NWBFile("d", "id1", datetime(2024, 1, 1, tzinfo=timezone.utc))
ts = TimeSeries(name="ts", data=np.arange(100.0), unit="m", rate=10.0)
nwb.add_acquisition(ts)
nwb.add_trial_column("label", "a label")
nwb.add_trial(start_time=0.0, stop_time=1.0, label="x")
nwb.add_trial(start_time=1.0, stop_time=2.0, label="y")
nwb.add_acquisition(Images(name="imgs", images=[RGBImage(name="im", data=np.zeros((4, 4, 3), dtype="u1"))]))
nwb.add_acquisition(TimeSeries(name="nonfinite", data=np.array([np.nan, np.inf, 1.0]), unit="m", rate=1.0))
with NWBHDF5IO(str(src), "w") as io:
    io.write(nwb)

export(src, dst)

with NWBZarrV2IO(str(dst), "r") as io:
    f = io.read()
    assert f.object_id == nwb.object_id and f.identifier == "id1"
    assert list(f.trials["label"][:]) == ["x", "y"]
    assert list(f.trials["start_time"][:]) == [0.0, 1.0]
    assert f.acquisition["imgs"].images["im"].data.shape == (4, 4, 3)
    assert np.array_equal(f.acquisition["ts"].data[:], np.arange(100.0))
    d = f.acquisition["nonfinite"].data[:]
    assert math.isnan(d[0]) and d[1] == math.inf and d[2] == 1.0
print("export_pynwb_v2: %d reference files and a pynwb 4.2 file exported, verified, read back by NWBZarrV2IO" % len(refs))
