"""The zarr-python baseline: write a raw int16 recording (frames x channels)
into a Zarr v2 array with the given chunks and blosc codec, one chunk-row
band at a time (as hdmf-zarr's iterator does), with Debian's zarr 2.13.

usage: zarr_python_write.py RAW OUT CHANNELS ROWS COLS [CNAME=lz4] [CLEVEL=5]
Prints the seconds spent writing (the array creation included)."""
import sys
import time

import numcodecs
import numpy as np
import zarr


def main():
    raw, out = sys.argv[1], sys.argv[2]
    nch, rows, cols = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    cname = sys.argv[6] if len(sys.argv) > 6 else "lz4"
    clevel = int(sys.argv[7]) if len(sys.argv) > 7 else 5
    with open(raw, "rb") as f:
        f.seek(0, 2)
        nframes = f.tell() // (2 * nch)
    start = time.time()
    z = zarr.open_array(out, mode="w", shape=(nframes, nch), chunks=(rows, cols), dtype="<i2",
                        compressor=numcodecs.Blosc(cname=cname, clevel=clevel, shuffle=1))
    for r0 in range(0, nframes, rows):
        n = min(rows, nframes - r0)
        z[r0:r0 + n] = np.fromfile(raw, dtype="<i2", count=n * nch,
                                   offset=2 * nch * r0).reshape(n, nch)
    print("%.3f" % (time.time() - start))


if __name__ == "__main__":
    main()
