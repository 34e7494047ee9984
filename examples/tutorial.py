"""nwbzarr tutorial (docs/python.md): a 384-channel recording on disk, an NWB
file over it written in parallel, a parallel export from NWB HDF5, and both
read back with pynwb. Run: python examples/tutorial.py [WORKDIR] (the
recording is NZ_TUTORIAL_SECONDS long, default 2 s; the `docs` test runs it)."""

import datetime
import os
import sys
import tempfile

import numpy as np
from pynwb import NWBHDF5IO, NWBFile
from pynwb.ecephys import ElectricalSeries

import nwbzarr
from nwbzarr import NWBZarrIO

work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp(prefix="nwbzarr-tutorial-")
os.makedirs(work, exist_ok=True)
rate, channels = 30_000.0, 384
frames = int(rate * float(os.environ.get("NZ_TUTORIAL_SECONDS", "2")))

# 1. A raw recording as an acquisition system leaves it: int16, frames x channels.
raw = os.path.join(work, "recording.bin")
rng = np.random.default_rng(0)
block = 30_000
with open(raw, "wb") as f:
    for start in range(0, frames, block):
        n = min(block, frames - start)
        rng.integers(-2000, 2000, size=(n, channels), dtype=np.int16).tofile(f)
recording = np.memmap(raw, dtype=np.int16, mode="r", shape=(frames, channels))


# 2. An NWBFile whose ElectricalSeries is the memmap itself (nothing is loaded).
def make_nwbfile(data):
    nwbfile = NWBFile(session_description="nwbzarr tutorial", identifier="tutorial-0001",
                      session_start_time=datetime.datetime(2024, 5, 1, 9, 30, tzinfo=datetime.timezone.utc))
    device = nwbfile.create_device(name="probe")
    group = nwbfile.create_electrode_group(name="shank0", description="384-channel shank",
                                           location="CA1", device=device)
    for ch in range(channels):
        nwbfile.add_electrode(group=group, location="CA1", x=0.0, y=20.0 * ch, z=0.0)
    region = nwbfile.create_electrode_table_region(list(range(channels)), "all electrodes")
    nwbfile.add_acquisition(ElectricalSeries(name="ElectricalSeries", data=data, electrodes=region,
                                             rate=rate, conversion=0.195e-6))
    return nwbfile


# 3. Write it with the C engine on 2 threads: the engine reads the file itself.
zarr_path = os.path.join(work, "tutorial.nwb.zarr")
with NWBZarrIO(zarr_path, mode="w") as io:
    io.write(make_nwbfile(recording), number_of_jobs=2)
    print("wrote", zarr_path, io.engine_stats["acquisition/ElectricalSeries/data"])

# 4. Read it back with pynwb (hdmf_zarr.NWBZarrIO reads it the same way).
with NWBZarrIO(zarr_path, mode="r") as io:
    series = io.read().acquisition["ElectricalSeries"]
    assert series.data.shape == (frames, channels)
    assert np.array_equal(series.data[1000:2000], recording[1000:2000])
    assert len(series.electrodes) == channels
    print("read back", series.data.shape, series.data.dtype, "at", series.rate, "Hz")

# 5. The same file as NWB HDF5, exported to Zarr in parallel (hdmf-zarr's
#    export takes no number_of_jobs; nwbzarr's does).
h5_path = os.path.join(work, "tutorial.nwb")
with NWBHDF5IO(h5_path, mode="w") as io:
    io.write(make_nwbfile(recording))
export_path = os.path.join(work, "exported.nwb.zarr")
with NWBHDF5IO(h5_path, mode="r") as src, NWBZarrIO(export_path, mode="w") as io:
    io.export(src_io=src, write_args={"link_data": False}, number_of_jobs=2)
with NWBZarrIO(export_path, mode="r") as io:
    exported = io.read().acquisition["ElectricalSeries"]
    assert np.array_equal(exported.data[-500:], recording[-500:])
    print("exported", export_path, exported.data.shape)

# 6. Or the library's own exporter, and a comparison of the two files.
lib_export = os.path.join(work, "lib-exported.nwb.zarr")
print("nwbzarr.export:", nwbzarr.export(h5_path, lib_export, number_of_jobs=2, overwrite=True)["bytes"], "bytes")
print("verify HDF5 vs its library export:", nwbzarr.verify(h5_path, lib_export) or "identical")
