#!/usr/bin/python3
"""Check an NWB-Zarr file written by `nwbzarr convert` against its raw input.

usage: check_recording.py OUT.nwb.zarr RECORDING.bin CHANNELS [SERIES]

Opens the store with zarr-python twice (consolidated metadata and plain),
checks the NWB root attributes, and compares the ElectricalSeries data with
the raw int16 samples block by block (bounded memory). Exits 1 on any
difference."""
import sys

import numpy as np
import zarr


def main():
    out, rec, channels = sys.argv[1], sys.argv[2], int(sys.argv[3])
    series = sys.argv[4] if len(sys.argv) > 4 else "acquisition/ElectricalSeries"
    raw = np.memmap(rec, dtype="<i2", mode="r").reshape(-1, channels)
    root = zarr.open_consolidated(out, mode="r")
    plain = zarr.open_group(out, mode="r")
    attrs = dict(root.attrs)
    if attrs.get("neurodata_type") != "NWBFile":
        sys.exit("%s: root is not an NWBFile: %r" % (out, attrs))
    data = root[series + "/data"]
    if data.shape != raw.shape or data.dtype != raw.dtype:
        sys.exit("%s: %s has shape %s %s, the recording %s %s"
                 % (out, series, data.shape, data.dtype, raw.shape, raw.dtype))
    if plain[series + "/data"].shape != data.shape:
        sys.exit("%s: consolidated and plain metadata disagree" % out)
    step = max(1, (64 << 20) // (channels * 2))
    for start in range(0, raw.shape[0], step):
        a = data[start:start + step]
        if not np.array_equal(a, raw[start:start + step]):
            bad = np.argwhere(a != raw[start:start + step])[0]
            sys.exit("%s: sample (%d, %d) differs from the recording"
                     % (out, start + bad[0], bad[1]))
    print("   ok: %s %s %s equal to %s (%s chunks %s, %s)"
          % (series, data.shape, data.dtype, rec, data.nchunks, data.chunks,
             data.compressor))


if __name__ == "__main__":
    main()
