"""bench_v3.sh measures only what it has checked, so its parts are tested:
- bench/bare_shard writes a valid sharded Zarr v3 array (edge shards in both
  dimensions, inner chunks wholly outside the array left empty): zarr-python
  (through bench/v3_check.py) and TensorStore read it equal to the input, and
  -j 1 and -j 2 write the same bytes;
- v3_check.py fails on a wrong codec level, a wrong shard shape, a missing
  shard file and data that differ from the input;
- bench/v3_peers.py's zarr-python and TensorStore writers produce the asked
  layout (acquire-zarr is not in the readers venv: bench_v3.sh checks it on
  every run);
- nz_write_raw --zarr-format 3 --shards either writes an array v3_check.py
  accepts or, while the library refuses shards as unsupported, exits 3 with
  the library's message (the benchmark's "not available").

usage: bench_v3_parts.py GEN_EPHYS BARE_SHARD NZ_WRITE_RAW"""
import filecmp
import json
import os
import pathlib
import subprocess
import sys

import numpy as np
import tensorstore as ts

gen, bare, nzw = sys.argv[1:4]
bench = pathlib.Path(__file__).resolve().parents[2] / "bench"
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "bench_v3_parts"
subprocess.run(["rm", "-rf", str(tmp)], check=True)
tmp.mkdir(parents=True)
CH, CHUNKS, SHARDS = 100, "4000,32", "12000,64"  # 30000 x 100: edges in both dimensions
raw, other = tmp / "rec.raw", tmp / "other.raw"
subprocess.run([gen, str(raw), "1", str(CH)], check=True, stdout=subprocess.DEVNULL)
subprocess.run([gen, str(other), "1", str(CH), "30000", "2"], check=True, stdout=subprocess.DEVNULL)
x = np.fromfile(raw, dtype="<i2").reshape(-1, CH)
assert x.shape == (30000, CH), x.shape
layout = ["--channels", str(CH), "--chunks", CHUNKS, "--shards", SHARDS]


def check(array_dir, *extra, raw_file=raw):
    r = subprocess.run([sys.executable, str(bench / "v3_check.py"), str(array_dir), str(raw_file)]
                       + layout + list(extra), capture_output=True, text=True)
    return r.returncode, json.loads(r.stdout.strip().splitlines()[-1])


for j in (1, 2):
    subprocess.run([bare, str(raw), str(tmp / ("bare%d" % j))] + layout + ["-j", str(j)], check=True)
rc, res = check(tmp / "bare2")
assert rc == 0 and res == {"layout_ok": True, "data_ok": True, "problems": []}, res
got = ts.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": str(tmp / "bare2")}},
              open=True).result().read().result()
assert np.array_equal(got, x), "TensorStore reads bare_shard's output different from the input"
for d in ("c/0", "c/1", "c/2"):
    m, mm, e = filecmp.cmpfiles(tmp / "bare1" / d, tmp / "bare2" / d, ["0", "1"], shallow=False)
    assert m == ["0", "1"] and not mm and not e, (d, mm, e)
# The edge shard row holds 1.5 inner-chunk rows of data: its third inner row
# is wholly outside the array, so its index entries must be empty.
edge = (tmp / "bare2" / "c" / "2" / "1").read_bytes()
index = np.frombuffer(edge[-(3 * 2 * 16 + 4):-4], dtype="<u8").reshape(3, 2, 2)
assert (index[2] == 2**64 - 1).all() and (index[:2] != 2**64 - 1).all(), index

rc, res = check(tmp / "bare2", "--clevel", "3")
assert rc == 1 and not res["layout_ok"] and any("blosc" in p for p in res["problems"]), res
rc, res = check(tmp / "bare2", "--shards", "24000,64")
assert rc == 1 and not res["layout_ok"] and any("chunk_grid" in p for p in res["problems"]), res
rc, res = check(tmp / "bare2", raw_file=other)
assert rc == 1 and res["layout_ok"] and not res["data_ok"], res
rc, res = check(tmp / "bare2", "--sample", raw_file=other)
assert rc == 1 and not res["data_ok"], res
os.remove(tmp / "bare1" / "c" / "1" / "0")
rc, res = check(tmp / "bare1")
assert rc == 1 and any("shard files missing" in p for p in res["problems"]), res

for peer in ("zarr-python", "tensorstore"):
    out = tmp / peer
    subprocess.run([sys.executable, str(bench / "v3_peers.py"), peer, str(raw), str(out)] + layout
                   + ["--cname", "zstd", "--clevel", "3"], check=True, stdout=subprocess.DEVNULL)
    rc, res = check(out, "--cname", "zstd", "--clevel", "3")
    assert rc == 0, (peer, res)

r = subprocess.run([nzw, str(raw), str(tmp / "nz")] + layout + ["--zarr-format", "3", "--quiet"],
                   capture_output=True, text=True)
if r.returncode == 3:  # the library refuses the layout: the benchmark's "not available"
    assert r.stderr.startswith("nz_write_raw: ") and "shard" in r.stderr, r.stderr
else:
    assert r.returncode == 0, r.stderr
    rc, res = check(tmp / "nz" / "data")
    assert rc == 0, res
print("ok")
