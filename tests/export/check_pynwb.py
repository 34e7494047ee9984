"""Optional (NZ_PYREF = a folder with env.sh putting pynwb 2.6 / hdmf-zarr 0.6
on PYTHONPATH): a file pynwb writes with constructs the reference set lacks
(TimeIntervals with a `timeseries` compound-of-references column, Images,
NaN/Inf data) is exported, verified, and read back by pynwb + hdmf-zarr with
the references resolved. Skipped (exit 77) without NZ_PYREF."""
import os
import subprocess
import sys

PYREF = os.environ.get("NZ_PYREF")
if not PYREF or not os.path.exists(os.path.join(PYREF, "env.sh")):
    print("NZ_PYREF not set: skipped")
    sys.exit(77)
CLI = os.environ["NZ_CLI"]
TMP = os.path.join(os.environ["NZ_TMP"], "export_pynwb")
os.makedirs(TMP, exist_ok=True)
src, dst = os.path.join(TMP, "extra.nwb"), os.path.join(TMP, "extra.nwb.zarr")

WRITE = """
import sys, warnings
warnings.simplefilter("ignore")
from datetime import datetime, timezone
import numpy as np
from pynwb import NWBFile, NWBHDF5IO, TimeSeries
from pynwb.image import RGBImage, Images
nwb = NWBFile("d", "id1", datetime(2024, 1, 1, tzinfo=timezone.utc))
ts = TimeSeries(name="ts", data=np.arange(100.0), unit="m", rate=10.0)
nwb.add_acquisition(ts)
nwb.add_trial_column("label", "a label")
nwb.add_trial(start_time=0.0, stop_time=1.0, timeseries=[ts], label="x")
nwb.add_trial(start_time=1.0, stop_time=2.0, timeseries=[ts], label="y")
nwb.add_acquisition(Images(name="imgs", images=[RGBImage(name="im", data=np.zeros((4, 4, 3), dtype="u1"))]))
nwb.add_acquisition(TimeSeries(name="nonfinite", data=np.array([np.nan, np.inf, 1.0]), unit="m", rate=1.0))
with NWBHDF5IO(sys.argv[1], "w") as io:
    io.write(nwb)
"""

READ = """
import math, sys, warnings
warnings.simplefilter("ignore")
from hdmf_zarr.nwb import NWBZarrIO
with NWBZarrIO(sys.argv[1], "r") as io:
    f = io.read()
    row = f.trials.timeseries.data[0]
    assert row[0] == 0 and row[1] == 10 and row[2].name == "ts", row
    assert list(f.trials["label"][:]) == ["x", "y"]
    assert f.acquisition["imgs"].images["im"].data.shape == (4, 4, 3)
    d = f.acquisition["nonfinite"].data[:]
    assert math.isnan(d[0]) and d[1] == math.inf
print("read ok")
"""


def py(code, *args):
    return subprocess.run(["bash", "-c", f'. "{PYREF}/env.sh" && "{sys.executable}" -c "$0" "$@"', code, *args],
                          capture_output=True, text=True)


r = py(WRITE, src)
if r.returncode != 0:
    sys.exit(f"pynwb could not write the input: {r.stderr[-1000:]}")
for cmd in ([CLI, "export", src, dst, "--overwrite"], [CLI, "verify", src, dst]):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed: {r.stdout} {r.stderr}")
r = py(READ, dst)
if r.returncode != 0:
    sys.exit(f"pynwb + hdmf-zarr read failed: {r.stdout} {r.stderr[-1500:]}")
print("ok")
