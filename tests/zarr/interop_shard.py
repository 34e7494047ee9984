"""The shard byte layer (src/zarr/shard.c) against zarr-python 3.4 and
TensorStore, through shard_tool (argv[1]), for the index at the end and at
the start, with and without its crc32c, full and partial (edge) shards:

- zarr-python writes a sharded array (inner codecs [bytes], so an inner
  chunk's bytes are its little-endian elements); the C reader finds every
  inner chunk's bytes equal to the padded numpy chunk, and the ones that lie
  wholly outside the array (zarr-python skips them) empty.
- zarr-python makes the metadata only; the C writer writes the shards (one
  inner chunk left out on purpose); zarr-python and TensorStore read the
  array equal to the data, with the fill value where the chunk was left out.
"""
import itertools
import json
import os
import shutil
import subprocess
import sys

import numpy as np
import tensorstore as ts
import zarr
from zarr.codecs import BytesCodec, Crc32cCodec, ShardingCodec

TOOL = sys.argv[1]
TMP = os.path.join(os.environ.get("NZ_TMP", "/tmp"), "interop_shard")
SHAPE, SHARD, INNER = (10, 12), (10, 8), (5, 4)
failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def inner_chunks(data, shard_idx):
    """[(position in shard, padded chunk or None if wholly outside)] in C order."""
    per = [s // c for s, c in zip(SHARD, INNER)]
    out = []
    for pos in itertools.product(*[range(p) for p in per]):
        start = [si * s + pi * c for si, s, pi, c in zip(shard_idx, SHARD, pos, INNER)]
        if any(st >= n for st, n in zip(start, SHAPE)):
            out.append(None)
            continue
        block = np.zeros(INNER, "<i2")
        sl = tuple(slice(st, min(st + c, n)) for st, c, n in zip(start, INNER, SHAPE))
        part = data[sl]
        block[tuple(slice(0, k) for k in part.shape)] = part
        out.append(block)
    return out


def make(path, loc, crc):
    shutil.rmtree(path, ignore_errors=True)
    index_codecs = [BytesCodec(), Crc32cCodec()] if crc else [BytesCodec()]
    return zarr.create_array(store=path, shape=SHAPE, chunks=SHARD, dtype="<i2", fill_value=0,
                             compressors=None,
                             serializer=ShardingCodec(chunk_shape=INNER, codecs=[BytesCodec()],
                                                      index_codecs=index_codecs,
                                                      index_location=loc))


def tool(mode, path, key, start, crc, stdin=""):
    n = (SHARD[0] // INNER[0]) * (SHARD[1] // INNER[1])
    p = subprocess.run([TOOL, mode, path, key, str(n), str(int(start)), str(int(crc))],
                       input=stdin, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.strip())
    return p.stdout.splitlines()


data = (np.arange(np.prod(SHAPE)).reshape(SHAPE) * 7 + 1).astype("<i2")
for loc, crc in itertools.product(["end", "start"], [True, False]):
    what = f"index {loc}, crc32c {crc}"
    # zarr-python writes, C reads.
    path = os.path.join(TMP, f"py_{loc}_{int(crc)}")
    make(path, loc, crc)[:] = data
    for shard_idx in [(0, 0), (0, 1)]:
        key = "c/" + "/".join(map(str, shard_idx))
        try:
            got = tool("read", path, key, loc == "start", crc)
        except RuntimeError as e:
            fail(f"{what}: C cannot read zarr-python's shard {key}: {e}")
            continue
        for i, want in enumerate(inner_chunks(data, shard_idx)):
            exp = "-" if want is None else want.tobytes().hex()
            if got[i] != exp:
                fail(f"{what}: shard {key} inner chunk {i}: C read {got[i][:40]}, expected {exp[:40]}")
    # C writes, zarr-python and TensorStore read.
    path = os.path.join(TMP, f"c_{loc}_{int(crc)}")
    make(path, loc, crc)
    expected = data.copy()
    for shard_idx in [(0, 0), (0, 1)]:
        key = "c/" + "/".join(map(str, shard_idx))
        lines = []
        for i, block in enumerate(inner_chunks(data, shard_idx)):
            if block is None:
                continue
            if shard_idx == (0, 0) and i == 2:  # left out: reads as the fill value
                expected[5:10, 0:4] = 0
                continue
            lines.append(f"{i} {block.tobytes().hex()}")
        # Written in reverse order: offsets need not follow the chunk order.
        try:
            tool("write", path, key, loc == "start", crc, "\n".join(reversed(lines)) + "\n")
        except RuntimeError as e:
            fail(f"{what}: C cannot write shard {key}: {e}")
    leftovers = [f for _, _, fs in os.walk(path) for f in fs if ".nztmp." in f]
    if leftovers:
        fail(f"{what}: temporary files left: {leftovers}")
    try:
        back = zarr.open_array(path, mode="r")[:]
        if not np.array_equal(back, expected):
            fail(f"{what}: zarr-python reads the C shards differently")
    except Exception as e:  # zarr raises many types
        fail(f"{what}: zarr-python cannot read the C shards: {e}")
    try:
        t = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": path}}).result()
        if not np.array_equal(t.read().result(), expected):
            fail(f"{what}: TensorStore reads the C shards differently")
    except Exception as e:
        fail(f"{what}: TensorStore cannot read the C shards: {e}")

if failures:
    sys.exit(f"{len(failures)} shard interop failures")
print("shard interop: zarr-python 3.4 and TensorStore agree with the C byte layer")
