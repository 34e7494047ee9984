"""Zarr v2 NWB files as hdmf-zarr 0.13 writes them, made at test time by
hdmf-zarr 0.13 itself (run by NZ_PY013, scripts/requirements-hdmf013.txt).

make_all(dir) returns [(hdf5 source, 0.13 store)]: every reference file of
tests/data/nwb (first re-exported to HDF5 by pynwb 4.2, so that the source
carries the nwb_version and cached schema the Zarr export writes) and a
file written here with pickle-coded references: an ImageReferences
dataset and a TimeIntervals `timeseries` column (a compound holding a
reference). The chunk helpers decode and re-encode pickle chunks, which is
safe here: these are files this process wrote."""
import datetime
import glob
import os
import shutil
import warnings

os.environ["NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"] = "1"
warnings.simplefilter("ignore")

import numcodecs  # noqa: E402
import numpy as np  # noqa: E402
import zarr  # noqa: E402
from hdmf_zarr.nwb import NWBZarrIO  # noqa: E402
from pynwb import NWBFile, NWBHDF5IO, TimeSeries  # noqa: E402
from pynwb.base import Images, ImageReferences  # noqa: E402
from pynwb.image import GrayscaleImage  # noqa: E402

# hdmf-zarr 0.13's export of this file caches another namespace's text
# under ndx-testextension's name (`verify` reports that one value): its
# bug, not ours, so it is left out.
SKIP = {"2.1.0_nwbfile_with_extension.nwb"}


def export(src, dst):
    shutil.rmtree(dst, ignore_errors=True)
    with NWBHDF5IO(src, "r") as r, NWBZarrIO(dst, "w") as w:
        w.export(src_io=r, write_args=dict(link_data=False))


def pickle_file(path):
    nwb = NWBFile(session_description="pickle-coded references", identifier="upgrade-013",
                  session_start_time=datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc))
    ts = TimeSeries(name="ts", data=np.arange(20, dtype=np.int16), unit="V", rate=10.0)
    nwb.add_acquisition(ts)
    nwb.add_trial_column("note", "text")
    nwb.add_trial(start_time=0.0, stop_time=1.0, timeseries=[ts], note="a")
    nwb.add_trial(start_time=1.0, stop_time=2.0, timeseries=[ts], note="b")
    imgs = [GrayscaleImage(name=f"img{i}", data=np.full((3, 3), i, dtype=np.uint8)) for i in range(2)]
    nwb.add_acquisition(Images(name="images", images=imgs,
                               order_of_images=ImageReferences("order_of_images", imgs[::-1])))
    with NWBHDF5IO(path, "w") as io:
        io.write(nwb)


def make_all(out):
    os.makedirs(out, exist_ok=True)
    pairs = []
    for f in sorted(glob.glob(os.path.join(os.environ["NZ_REF"], "nwb", "*.nwb"))):
        name = os.path.basename(f)
        if name in SKIP:
            continue
        src = os.path.join(out, name)
        with NWBHDF5IO(f, "r") as r, NWBHDF5IO(src, "w") as w:
            w.export(src_io=r, write_args=dict(link_data=False))
        export(src, src + ".zarr")
        pairs.append((src, src + ".zarr"))
    src = os.path.join(out, "pickle_refs.nwb")
    pickle_file(src)
    export(src, src + ".zarr")
    pairs.append((src, src + ".zarr"))
    return pairs


def pickle_arrays(store):
    """The arrays of `store` whose object codec is pickle."""
    found = []
    for root, _, files in os.walk(store):
        if ".zarray" in files:
            with open(os.path.join(root, ".zarray")) as f:
                if '"pickle"' in f.read():
                    found.append(os.path.relpath(root, store))
    return sorted(found)


def chunk_values(store, array):
    z = zarr.open_array(os.path.join(store, array), mode="r")
    return z[...]


def set_values(store, array, values):
    z = zarr.open_array(os.path.join(store, array), mode="r+")
    z[...] = values


def raw_chunk(store, array, key="0"):
    with open(os.path.join(store, array, key), "rb") as f:
        return f.read()


def put_raw_chunk(store, array, data, key="0"):
    """Store `data` (an encoded pickle) as chunk `key`, through the array's
    compressor, as if hdmf-zarr had written it."""
    z = zarr.open_array(os.path.join(store, array), mode="r")
    enc = numcodecs.get_codec(z.compressor.get_config()).encode(data) if z.compressor else data
    with open(os.path.join(store, array, key), "wb") as f:
        f.write(enc)


if __name__ == "__main__":
    # Make the files into sys.argv[1] and list "source store" pairs, one a
    # line (for tests run by another interpreter, e.g. hdmf-zarr 0.14's).
    import sys
    for s, z in make_all(sys.argv[1]):
        print(s, z)
