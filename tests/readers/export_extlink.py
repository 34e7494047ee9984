"""An NWB file whose TimeSeries data is an HDF5 external link into another
NWB file (as pynwb writes with link_data): export writes the linked file
beside the output and links to it relative to the store, verify accepts
the pair, and hdmf-zarr 0.14 (NWBZarrIO on v3, NWBZarrV2IO on our v2
layout) opens the result and reads the linked data through the link."""
import os
import pathlib
import shutil
import subprocess
import warnings

import numpy as np
import zarr
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO

from nwblinks import linked_pair

warnings.simplefilter("ignore")
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "export_extlink"
shutil.rmtree(tmp, ignore_errors=True)
(tmp / "raw").mkdir(parents=True)

base, top = linked_pair(tmp / "raw", np.arange(1000, dtype="i2"), ["linked"])
import h5py  # noqa: E402
with h5py.File(top, "r") as f:
    link = f["acquisition/linked"].get("data", getlink=True)
    assert isinstance(link, h5py.ExternalLink) and link.filename == "base.nwb", link

for fmt in ("3", "2"):
    od = tmp / ("out" + fmt)
    od.mkdir()
    out = od / "top.nwb.zarr"
    r = subprocess.run([cli, "export", str(top), str(out), "--quiet", "--zarr-format", fmt],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    want = [{"name": "data", "path": "/acquisition/ts/data", "source": "../base.nwb.zarr"}]
    g = zarr.open_group(str(out / "acquisition" / "linked"), mode="r", zarr_format=int(fmt))
    links = [{k: l[k] for k in ("name", "path", "source")} for l in g.attrs["_LINKS" if fmt == "3" else "zarr_link"]]
    assert links == want, dict(g.attrs)
    assert (od / "base.nwb.zarr" / ("zarr.json" if fmt == "3" else ".zmetadata")).exists()
    for a, b in ((top, out), (base, od / "base.nwb.zarr")):
        r = subprocess.run([cli, "verify", str(a), str(b)], capture_output=True, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
    with (NWBZarrIO if fmt == "3" else NWBZarrV2IO)(str(out), "r") as io:
        f = io.read()
        assert f.identifier == "id-top"
        assert np.array_equal(f.acquisition["linked"].data[:], np.arange(1000, dtype="i2"))
print("export_extlink: a pynwb external link exported beside (v3 and v2), verified, read through by NWBZarrIO / NWBZarrV2IO")
