"""bench_export3.py measures only what it has checked, so its parts are tested:
- bench/bare_export reads a gzip 4 + shuffle HDF5 dataset (edge chunks in
  both dimensions) and writes a sharded Zarr v3 array that zarr-python reads
  equal to h5py's read of the source, for zstd and blosc-lz4; -j 1 and -j 2
  write the same bytes; its zstd chunks equal numcodecs' own at its level;
- it refuses a dataset without shuffle + deflate and --shards that are not a
  multiple of the chunks (the benchmark's input is exactly that layout);
- bench_export3.py's shard_rows() gives an even number of shards of whole
  chunks, and its codec check rejects an output written with another codec.

usage: bench_export3_parts.py BARE_EXPORT"""
import filecmp
import os
import pathlib
import subprocess
import sys

import h5py
import numcodecs
import numpy as np
import zarr

bare = sys.argv[1]
bench = pathlib.Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(bench))
import bench_export3  # noqa: E402

tmp = pathlib.Path(os.environ["NZ_TMP"]) / "bench_export3_parts"
subprocess.run(["rm", "-rf", str(tmp)], check=True)
tmp.mkdir(parents=True)
rng = np.random.default_rng(3)
x = (rng.normal(0, 60, (10000, 100)) + 200 * np.sin(np.arange(10000) / 500.0)[:, None]).astype("<i2")
src = tmp / "in.h5"
with h5py.File(src, "w") as f:
    f.create_dataset("d", data=x, chunks=(1024, 32), compression="gzip", compression_opts=4, shuffle=True)
    f.create_dataset("plain", data=x, chunks=(1024, 32), compression="gzip")


def run(*args):
    return subprocess.run([bare, str(src), *map(str, args)], capture_output=True, text=True)


for codec in ("zstd", "blosc-lz4"):
    for j in (1, 2):
        r = run("d", tmp / f"{codec}{j}", "--shards", "3072,64", "--codec", codec, "-j", j)
        assert r.returncode == 0, r.stderr
    got = zarr.open_array(str(tmp / f"{codec}2"), mode="r")[...]
    assert np.array_equal(got, x), f"{codec}: bare_export's output differs from the source"
    for row in range(4):  # 10000 rows in shards of 3072: 4 shard rows, 2 shard columns
        d1, d2 = tmp / f"{codec}1" / "c" / str(row), tmp / f"{codec}2" / "c" / str(row)
        m, mm, e = filecmp.cmpfiles(d1, d2, ["0", "1"], shallow=False)
        assert m == ["0", "1"] and not mm and not e, (codec, row, mm, e)

# The first inner chunk of the zstd output is numcodecs' Zstd(level=3) of it.
blob = (tmp / "zstd1" / "c" / "0" / "0").read_bytes()
index = np.frombuffer(blob[-(3 * 2 * 16 + 4):-4], dtype="<u8").reshape(3, 2, 2)
first = blob[index[0, 0, 0]:index[0, 0, 0] + index[0, 0, 1]]
assert first == numcodecs.Zstd(level=3).encode(np.ascontiguousarray(x[:1024, :32])), "zstd level differs"

r = run("plain", tmp / "plain", "--shards", "3072,64")
assert r.returncode != 0 and "shuffle then deflate" in r.stderr, r.stderr
r = run("d", tmp / "odd", "--shards", "1000,64")
assert r.returncode != 0 and "multiple of the HDF5 chunk" in r.stderr, r.stderr
assert not (tmp / "odd").exists(), "a refused run left an output"

for rows in (300000, 3600000, 16384, 1):
    s = bench_export3.shard_rows(rows)
    n = -(-rows // s)
    assert s % bench_export3.CHUNKS[0] == 0 and (n % 2 == 0 or n == 1), (rows, s, n)
assert bench_export3.shard_rows(3600000) == 16384 * 22

bench_export3.check_codec([{"name": "zstd", "configuration": {"level": 3, "checksum": False}}], "zstd")
SHUF = {"name": "numcodecs.shuffle", "configuration": {"elementsize": 2}}
ZLIB4 = {"name": "numcodecs.zlib", "configuration": {"level": 4}}
bench_export3.check_codec([{"name": "bytes"}, SHUF, ZLIB4], "keep")
for wrong, codec in (([{"name": "zstd", "configuration": {"level": 0}}], "zstd"),
                     ([ZLIB4], "zstd"),
                     ([{"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5}}], "blosc-lz4"),
                     ([{"name": "bytes"}, ZLIB4], "keep"),
                     ([{"name": "bytes"}, SHUF, {"name": "numcodecs.zlib", "configuration": {"level": 1}}], "keep"),
                     ([{"name": "bytes"}, {"name": "zstd", "configuration": {"level": 3}}], "keep")):
    try:
        bench_export3.check_codec(wrong, codec)
    except AssertionError:
        continue
    raise SystemExit(f"check_codec accepted {wrong} for {codec}")
print("ok")
