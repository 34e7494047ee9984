"""Check one writer's output in bench_v3.sh: is it the asked layout, and does
it read back equal to the input?

usage: v3_check.py ARRAY_DIR RAW --channels N --chunks r,c --shards R,C
                   [--cname lz4] [--clevel 5] [--sample]

Layout: ARRAY_DIR/zarr.json as written (not zarr-python's view of it) must
say zarr_format 3, int16, shape (frames, N), a regular chunk grid of the
shard shape, one codec sharding_indexed with the inner chunk shape, inner
codecs bytes (little endian) + blosc (cname, clevel, byte shuffle, typesize
2), index codecs bytes + crc32c, index at the end (the default when
absent), and there must be one shard file per shard of the grid.

Data: zarr-python 3 reads every shard whole and compares it with the input
(--sample: only the first and last shard rows, the last one being the edge,
plus one inner chunk in the middle of each other shard row).

Prints one JSON line {"layout_ok", "data_ok", "problems": [...]} and exits
0 only when both hold.
"""
import argparse
import json
import os
import sys

import numpy as np


def pair(text):
    a, b = text.split(",")
    return int(a), int(b)


def layout_problems(meta, shape, args):
    """What differs from the asked layout, in words; [] when nothing."""
    out = []

    def want(what, got, expected):
        if got != expected:
            out.append("%s is %s, not %s" % (what, json.dumps(got), json.dumps(expected)))

    want("zarr_format", meta.get("zarr_format"), 3)
    want("node_type", meta.get("node_type"), "array")
    want("data_type", meta.get("data_type"), "int16")
    want("shape", meta.get("shape"), list(shape))
    grid = meta.get("chunk_grid", {})
    want("chunk_grid", [grid.get("name"), grid.get("configuration", {}).get("chunk_shape")],
         ["regular", list(args.shards)])
    codecs = meta.get("codecs", [])
    if len(codecs) != 1 or codecs[0].get("name") != "sharding_indexed":
        out.append("codecs are %s, not one sharding_indexed" % [c.get("name") for c in codecs])
        return out
    cfg = codecs[0].get("configuration", {})
    want("inner chunk_shape", cfg.get("chunk_shape"), list(args.chunks))
    inner = cfg.get("codecs", [])
    want("inner codecs", [c.get("name") for c in inner], ["bytes", "blosc"])
    if len(inner) == 2:
        want("bytes endian", inner[0].get("configuration", {}).get("endian"), "little")
        b = inner[1].get("configuration", {})
        want("blosc", [b.get("cname"), b.get("clevel"), b.get("shuffle"), b.get("typesize")],
             [args.cname, args.clevel, "shuffle", 2])
    index = cfg.get("index_codecs", [])
    want("index codecs", [c.get("name") for c in index], ["bytes", "crc32c"])
    want("index_location", cfg.get("index_location", "end"), "end")
    return out


def shard_files(array_dir, meta, grid):
    """Paths of the shard objects the chunk key encoding names."""
    enc = meta.get("chunk_key_encoding", {"name": "default"})
    sep = enc.get("configuration", {}).get("separator", "/" if enc["name"] == "default" else ".")
    prefix = "c" + sep if enc["name"] == "default" else ""
    return [os.path.join(array_dir, prefix + sep.join(map(str, (i, j))))
            for i in range(grid[0]) for j in range(grid[1])]


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("array_dir")
    p.add_argument("raw")
    p.add_argument("--channels", type=int, required=True)
    p.add_argument("--chunks", type=pair, required=True)
    p.add_argument("--shards", type=pair, required=True)
    p.add_argument("--cname", default="lz4")
    p.add_argument("--clevel", type=int, default=5)
    p.add_argument("--sample", action="store_true")
    args = p.parse_args()
    raw = np.memmap(args.raw, dtype="<i2", mode="r")
    raw = raw.reshape(len(raw) // args.channels, args.channels)
    problems, data_ok = [], False
    try:
        with open(os.path.join(args.array_dir, "zarr.json")) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        meta, problems = {}, ["no readable zarr.json: %s" % e]
    if meta:
        problems = layout_problems(meta, raw.shape, args)
        grid = [-(-n // s) for n, s in zip(raw.shape, args.shards)]
        missing = [f for f in shard_files(args.array_dir, meta, grid) if not os.path.isfile(f)]
        if missing and not problems:
            problems.append("%d of %d shard files missing, e.g. %s" %
                            (len(missing), grid[0] * grid[1], missing[0]))
    layout_ok = not problems
    if meta:
        data_ok = data_problems(args, raw, problems)
    print(json.dumps({"layout_ok": layout_ok, "data_ok": data_ok, "problems": problems}))
    sys.exit(0 if layout_ok and data_ok else 1)


def data_problems(args, raw, problems):
    """Compare with the input through zarr-python; append what differs."""
    import zarr
    try:
        a = zarr.open_array(args.array_dir, mode="r")
    except Exception as e:  # any reader failure is the finding
        problems.append("zarr-python cannot open it: %s" % e)
        return False
    if a.shape != raw.shape:
        problems.append("zarr-python reads shape %s" % (a.shape,))
        return False
    rows, (cr, cc) = args.shards[0], args.chunks
    starts = list(range(0, raw.shape[0], rows))
    for k, r0 in enumerate(starts):
        r1 = min(r0 + rows, raw.shape[0])
        if args.sample and 0 < k < len(starts) - 1:
            m0, c0 = r0 + (r1 - r0) // 2 // cr * cr, raw.shape[1] // 2 // cc * cc
            sel = (slice(m0, min(m0 + cr, r1)), slice(c0, min(c0 + cc, raw.shape[1])))
        else:
            sel = (slice(r0, r1), slice(None))
        if not np.array_equal(a[sel], raw[sel]):
            problems.append("data differ from the input in rows %d..%d" % (r0, r1))
            return False
    return True


if __name__ == "__main__":
    main()
