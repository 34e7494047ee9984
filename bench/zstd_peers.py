"""The peers' side of bench/bench_zstd.sh: blosc-zstd on the same inner
chunks through numcodecs (what zarr-python 3.4 calls) and TensorStore, the
peers' own bundled zstd called directly, and a comparison of every output's
bytes and blosc header with Debian's (bench/zstd_chunk's files).

usage: zstd_peers.py WORK CLEVEL REPS OUT_PREFIX

WORK holds chunk.raw (one 30000 x 64 int16 chunk), row.raw (the inner
chunks of one shard row, back to back), and zstd_chunk's CSV and .bin files
for both (chunk.csv, row.csv, chunk/, row/). Times are the best of REPS of
the process CPU seconds for all chunks of the input (CPU time, not wall:
the machine is shared and wall time counts the other tenants' turns), one
thread everywhere.
"""
import csv
import json
import os
import struct
import sys
import time

import numpy as np
import numcodecs
import numcodecs.blosc
import numcodecs.zstd
import tensorstore as ts

CHUNK = (30000, 64)
NBYTES = CHUNK[0] * CHUNK[1] * 2


def best(reps, fn):
    t, out = float("inf"), None
    for _ in range(reps):
        t0 = time.process_time()
        out = fn()
        t = min(t, time.process_time() - t0)
    return t, out


def header(buf):
    """c-blosc 1.x header: version, versionlz, flags, typesize, nbytes,
    blocksize, cbytes (README_HEADER.rst)."""
    ver, verlz, flags, typesize, nbytes, blocksize, cbytes = struct.unpack_from("<BBBBiii", buf)
    return {"flags": f"0x{flags:02x}", "shuffle": flags & 1, "dont_split": flags >> 4 & 1,
            "compcode": flags >> 5, "typesize": typesize, "blocksize": blocksize,
            "cbytes": cbytes, "version": f"{ver}/{verlz}"}


def payload(buf):
    """The zstd frames of a non-split blosc buffer: header, bstarts, then per
    block one int32 compressed size and that many bytes."""
    h = header(buf)
    nblocks = -(-struct.unpack_from("<i", buf, 4)[0] // h["blocksize"])
    starts = struct.unpack_from(f"<{nblocks}i", buf, 16)
    out = b""
    for s in starts:
        n = struct.unpack_from("<i", buf, s)[0]
        out += buf[s + 4:s + 4 + n]
    return out


def shuffled_blocks(raw, bs):
    blocks = []
    for o in range(0, len(raw), bs):
        v = np.frombuffer(raw[o:o + bs], dtype=np.uint8).reshape(-1, 2)
        blocks.append(np.ascontiguousarray(v.T).tobytes())
    return blocks


def ts_spec(path, shape):
    return {
        "driver": "zarr3", "kvstore": {"driver": "file", "path": path},
        "context": {"data_copy_concurrency": {"limit": 1}, "file_io_concurrency": {"limit": 1}},
        "metadata": {
            "shape": list(shape), "data_type": "int16",
            "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": list(CHUNK)}},
            "codecs": [{"name": "bytes", "configuration": {"endian": "little"}},
                       {"name": "blosc", "configuration": {"cname": "zstd", "clevel": CLEVEL,
                                                           "shuffle": "shuffle", "typesize": 2,
                                                           "blocksize": 0}}]},
        "create": True, "delete_existing": True}


def tensorstore_write(path, chunks):
    """Writes the chunks as one row of a (30000, 64 * k) array in one
    write, one chunk per file; returns the bytes of every chunk file."""
    data = np.concatenate([np.frombuffer(c, dtype="<i2").reshape(CHUNK) for c in chunks], axis=1)
    arr = ts.open(ts_spec(path, data.shape)).result()
    arr.write(data).result()
    return [open(os.path.join(path, "c", "0", str(j)), "rb").read() for j in range(len(chunks))]


def main():
    global CLEVEL
    work, CLEVEL, reps, prefix = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    level = CLEVEL * 2 - 1 if CLEVEL < 9 else 22  # c-blosc 1.x's zstd_wrap_compress
    rows, checks = [], []
    for name in ("chunk", "row"):
        raw = open(os.path.join(work, f"{name}.raw"), "rb").read()
        chunks = [raw[o:o + NBYTES] for o in range(0, len(raw), NBYTES)]
        mib = len(raw) / 2**20
        with open(os.path.join(work, f"{name}.csv")) as f:
            deb = {r["variant"]: r for r in csv.DictReader(f)}
        for v, r in deb.items():
            rows.append((name, f"debian {v}", "c-blosc 1.21.3" if v == "blosc" else "-",
                         r["zstd_version"], int(r["out_bytes"]), float(r["best_s"])))
        deb_blosc = open(os.path.join(work, name, "blosc.bin"), "rb").read()
        deb_frames = open(os.path.join(work, name, "zstd-fresh.bin"), "rb").read()
        bs = header(deb_blosc)["blocksize"]

        codec = numcodecs.Blosc(cname="zstd", clevel=CLEVEL, shuffle=numcodecs.Blosc.SHUFFLE)
        numcodecs.blosc.use_threads = False  # blosc_compress_ctx, one thread (as in zarr-python's pool)
        arrays = [np.frombuffer(c, dtype="<i2") for c in chunks]
        t, outs = best(reps, lambda: [codec.encode(a) for a in arrays])
        nc_blosc = outs[0]
        rows.append((name, "numcodecs Blosc", numcodecs.blosc.VERSION_STRING,
                     "%d.%d.%d" % divmod_version(numcodecs.zstd.VERSION_NUMBER),
                     sum(map(len, outs)), t))

        blocks = [b for c in chunks for b in shuffled_blocks(c, bs)]
        t, frames = best(reps, lambda: [numcodecs.zstd.compress(b, level) for b in blocks])
        rows.append((name, f"numcodecs zstd.compress level {level} per block", "-",
                     "%d.%d.%d" % divmod_version(numcodecs.zstd.VERSION_NUMBER),
                     sum(map(len, frames)), t))
        nblk = len(shuffled_blocks(chunks[0], bs))
        nc_frames = b"".join(frames[:nblk])

        tsdir = os.path.join(work, f"ts-{name}")
        t, ts_outs = best(reps, lambda: tensorstore_write(tsdir, chunks))
        rows.append((name, "tensorstore zarr3 blosc (file write)", "bundled", "bundled",
                     sum(map(len, ts_outs)), t))

        if name == "chunk":
            for label, buf in (("debian c-blosc", deb_blosc), ("numcodecs Blosc", nc_blosc),
                               ("tensorstore", ts_outs[0])):
                checks.append(("header", label, json.dumps(header(buf))))
            checks += [
                ("bytes", "debian c-blosc == numcodecs Blosc", deb_blosc == nc_blosc),
                ("bytes", "numcodecs Blosc == tensorstore", nc_blosc == ts_outs[0]),
                ("bytes", "debian c-blosc payload == debian ZSTD_compress(level %d) per block" % level,
                 payload(deb_blosc) == deb_frames),
                ("bytes", "numcodecs Blosc payload == numcodecs zstd.compress(level %d) per block" % level,
                 payload(nc_blosc) == nc_frames),
                ("bytes", "debian zstd frames == numcodecs zstd frames", deb_frames == nc_frames),
                ("decode", "numcodecs decodes debian's blosc",
                 numcodecs.Blosc().decode(deb_blosc) == chunks[0]),
            ]
    with open(prefix + ".csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["input", "variant", "blosc", "zstd", "out_bytes", "cpu_s", "ms_per_chunk", "MB_per_s"])
        for r in rows:
            w.writerow(list(r) + fmt_rates(r, work))
        for c in checks:
            w.writerow(["# check"] + [str(x) for x in c])
    with open(prefix + ".md", "w") as f:
        f.write(f"load average: {open('/proc/loadavg').read().split()[:3]}\n\n")
        f.write("| input | variant | blosc | zstd | output bytes | CPU s | ms / chunk | MB/s |\n")
        f.write("|---|---|---|---|---:|---:|---:|---:|\n")
        for r in rows:
            ms, mbs = fmt_rates(r, work)
            f.write(f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} | {r[5]:.3f} | {ms} | {mbs} |\n")
        f.write("\n| check | what | result |\n|---|---|---|\n")
        for c in checks:
            f.write(f"| {c[0]} | {c[1]} | {c[2]} |\n")
    print(open(prefix + ".md").read())


def divmod_version(n):
    return n // 10000, n // 100 % 100, n % 100


def fmt_rates(r, work):
    size = os.path.getsize(os.path.join(work, f"{r[0]}.raw"))
    nchunks = size // NBYTES
    return [f"{r[5] / nchunks * 1e3:.2f}", f"{size / r[5] / 1e6:.0f}" if r[5] > 0 else "-"]


if __name__ == "__main__":
    main()
