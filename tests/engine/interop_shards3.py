"""nz_write_array on Zarr v3 arrays, seen by zarr-python 3.4 and TensorStore,
through bench/nz_write_raw (argv[1]: a raw int16 file into one array):

- (N, 384) int16, inner chunks (3000, 64), shards (30000, 384), with an edge
  shard holding an edge chunk row, written at -j 1, 2 and 3: the three
  stores are byte-identical; both readers read the raw data back equal;
  zarr-python sees the shard and inner chunk shapes; the edge shard's chunks
  wholly outside the array are empty index entries (zarr-python's own
  convention), every other one is stored.
- (7001, 350) in shards (3000, 256) of chunks (1000, 64): edge shards along
  both dimensions, with inner chunks outside the array in the middle of the
  shard's C order; read equal by both.
- the same array unsharded (v3, chunk per key): read equal by both.
"""
import os
import shutil
import subprocess
import sys
import warnings

import numpy as np
import tensorstore as ts
import zarr

warnings.simplefilter("ignore")

TOOL = sys.argv[1]
TMP = os.path.join(os.environ.get("NZ_TMP", "/tmp"), "interop_shards3")
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def make(rows, cols, seed):
    rng = np.random.default_rng(seed)
    t = np.arange(rows)[:, None]
    return (300 * np.sin(t / 40.0 + np.arange(cols)[None, :] / 7.0)
            + rng.normal(0, 30, (rows, cols))).astype("<i2")


def write(raw, out, cols, chunks, shards, jobs):
    args = [TOOL, raw, out, "--channels", str(cols), "--chunks", "%d,%d" % chunks,
            "--zarr-format", "3", "-j", str(jobs), "--quiet"]
    if shards:
        args += ["--shards", "%d,%d" % shards]
    res = subprocess.run(args, capture_output=True, text=True)
    if res.returncode != 0:
        fail("%s: nz_write_raw exit %d: %s" % (out, res.returncode, res.stderr.strip()))
        return False
    return True


def read_both(out, data, what, chunks, shards):
    try:
        z = zarr.open_array(out, path="data", mode="r", zarr_format=3)
        if z.chunks != chunks or z.shards != shards:
            fail("%s: zarr-python sees chunks %s shards %s" % (what, z.chunks, z.shards))
        if not np.array_equal(z[:], data):
            fail("%s: zarr-python reads other values" % what)
    except Exception as e:  # noqa: BLE001 - reported as a failure
        fail("%s: zarr-python cannot read it: %r" % (what, e))
    try:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file",
                                                    "path": os.path.join(out, "data")}},
                    open=True).result()
        if not np.array_equal(t.read().result(), data):
            fail("%s: TensorStore reads other values" % what)
    except Exception as e:  # noqa: BLE001
        fail("%s: TensorStore cannot read it: %r" % (what, e))


def tree(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            with open(p, "rb") as fh:
                out[os.path.relpath(p, root)] = fh.read()
    return out


def empty_entries(path, nchunks):
    """Index entries (offset, nbytes) of a shard with the index at the end
    followed by its crc32c: positions of the empty ones."""
    with open(path, "rb") as f:
        b = f.read()
    idx = np.frombuffer(b[len(b) - 4 - 16 * nchunks:len(b) - 4], "<u8").reshape(-1, 2)
    return [i for i, (o, n) in enumerate(idx) if o == n == 2**64 - 1]


def main():
    shutil.rmtree(TMP, ignore_errors=True)
    os.makedirs(TMP)
    rows = 65432
    data = make(rows, 384, 3)
    raw = os.path.join(TMP, "a.raw")
    data.tofile(raw)
    outs = []
    for jobs in (1, 2, 3):
        out = os.path.join(TMP, "j%d.zarr" % jobs)
        if write(raw, out, 384, (3000, 64), (30000, 384), jobs):
            outs.append(out)
    if len(outs) == 3:
        ref = tree(outs[0])
        for o in outs[1:]:
            if tree(o) != ref:
                fail("%s differs from %s" % (o, outs[0]))
        if any("nztmp" in k for k in ref):
            fail("temporary files left: %s" % [k for k in ref if "nztmp" in k])
        shard_keys = sorted(k for k in ref if k.startswith("data/c/"))
        if shard_keys != ["data/c/0/0", "data/c/1/0", "data/c/2/0"]:
            fail("shard keys %s" % shard_keys)
        read_both(outs[0], data, "(65432, 384) shards (30000, 384)", (3000, 64), (30000, 384))
        # The edge shard (5432 rows): chunk rows 0 and 1 stored, 2..9 outside.
        empty = empty_entries(os.path.join(outs[0], "data/c/2/0"), 60)
        if empty != list(range(12, 60)):
            fail("edge shard's empty entries %s, expected 12..59" % empty)

    data = make(7001, 350, 4)
    raw = os.path.join(TMP, "b.raw")
    data.tofile(raw)
    out = os.path.join(TMP, "gap.zarr")
    if write(raw, out, 350, (1000, 64), (3000, 256), 2):
        read_both(out, data, "(7001, 350) shards (3000, 256)", (1000, 64), (3000, 256))
    out = os.path.join(TMP, "flat.zarr")
    if write(raw, out, 350, (1000, 64), None, 2):
        read_both(out, data, "(7001, 350) unsharded", (1000, 64), None)
    if failures:
        print("%d failure(s)" % len(failures))
        return 1
    shutil.rmtree(TMP, ignore_errors=True)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
