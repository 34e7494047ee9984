"""An NWB file whose TimeSeries' data are HDF5 external links into another
NWB file, as pynwb writes them with link_data (the export tests' input)."""
from datetime import datetime, timezone

from pynwb import NWBHDF5IO, NWBFile, TimeSeries


def linked_pair(folder, values, names):
    """folder/base.nwb holds TimeSeries 'ts' of `values`; folder/top.nwb a
    TimeSeries per name whose data links to it. Returns (base, top)."""
    base, top = folder / "base.nwb", folder / "top.nwb"
    nwb = NWBFile("base", "id-base", datetime(2024, 1, 1, tzinfo=timezone.utc))
    nwb.add_acquisition(TimeSeries(name="ts", data=values, unit="m", rate=10.0))
    with NWBHDF5IO(str(base), "w") as io:
        io.write(nwb)
    with NWBHDF5IO(str(base), "r") as bio:
        b = bio.read()
        nwb2 = NWBFile("top", "id-top", datetime(2024, 1, 1, tzinfo=timezone.utc))
        for name in names:
            nwb2.add_acquisition(TimeSeries(name=name, data=b.acquisition["ts"].data, unit="m", rate=10.0))
        with NWBHDF5IO(str(top), "w", manager=bio.manager) as io:
            io.write(nwb2, link_data=True)
    return base, top
