"""The pinned real readers are what the venv holds, and they read today's v2
output: zarr-python 3.4 and TensorStore read convert's ElectricalSeries data
equal to the input; hdmf-zarr 0.14's legacy NWBZarrV2IO opens the file and
its data, rate and electrodes equal what convert was given."""
import os
import pathlib
import subprocess
import sys
import warnings
from importlib import metadata

import numpy as np

root = pathlib.Path(__file__).resolve().parents[2]
pins = {}
for line in (root / "scripts" / "requirements-readers.txt").read_text().splitlines():
    line = line.strip()
    if line and not line.startswith("#"):
        name, ver = line.split("==")
        pins[name] = ver
wrong = {n: (v, metadata.version(n)) for n, v in pins.items() if metadata.version(n) != v}
assert not wrong, f"venv differs from scripts/requirements-readers.txt (pinned, installed): {wrong}"
assert sys.version_info >= (3, 12), sys.version

import hdmf_zarr  # noqa: E402
import tensorstore as ts  # noqa: E402
import zarr  # noqa: E402

tmp = pathlib.Path(os.environ["NZ_TMP"]) / "readers_v2"
subprocess.run(["rm", "-rf", str(tmp)], check=True)
tmp.mkdir(parents=True)
rng = np.random.default_rng(7)
x = (rng.standard_normal((5003, 12)) * 300).astype("<i2")  # an edge chunk in time
(tmp / "rec.bin").write_bytes(x.tobytes())
out = tmp / "rec.nwb.zarr"
subprocess.run([os.environ["NZ_CLI"], "convert", "--zarr-format", "2", str(tmp / "rec.bin"), "-o", str(out),
                "--channels", "12", "--rate", "2500", "--chunks", "1000,5", "-j", "2", "--quiet"],
               check=True)
data = out / "acquisition" / "ElectricalSeries" / "data"

a = zarr.open_array(str(data), mode="r", zarr_format=2)
assert a.shape == x.shape and a.chunks == (1000, 5), (a.shape, a.chunks)
assert np.array_equal(a[...], x), "zarr-python 3 read different data"

t = ts.open({"driver": "zarr", "kvstore": {"driver": "file", "path": str(data)}}).result()
assert np.array_equal(t.read().result(), x), "TensorStore read different data"

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # "No cached namespaces" (issue 12), v2 fallback notes
    with hdmf_zarr.NWBZarrV2IO(str(out), "r") as io:
        f = io.read()
        es = f.acquisition["ElectricalSeries"]
        assert np.array_equal(es.data[:], x), "NWBZarrV2IO read different data"
        assert es.rate == 2500.0, es.rate
        assert len(es.electrodes.table) == 12, len(es.electrodes.table)
print("readers_v2: zarr %s, tensorstore %s, hdmf-zarr %s read convert's v2 output equal"
      % (zarr.__version__, metadata.version("tensorstore"), metadata.version("hdmf_zarr")))
