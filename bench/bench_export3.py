"""issue 12's export benchmark: Zarr v3 export of a gzip-compressed NWB HDF5
file by hdmf-zarr 0.14 and by `nwbzarr export`, with the same output codec,
against the bare loop (bench/bare_export.c) that bounds that work.

usage: python bench/bench_export3.py BUILD_DIR [WORKDIR]
  (the readers' interpreter: pynwb 4.2, hdmf-zarr 0.14, zarr 3)
  env ROWS=N   rows of the int16 (N, 384) ElectricalSeries (default 3600000,
               the issue's 2.8 GB); QUICK=1 is ROWS=300000
  env CODECS=zstd,blosc-lz4,keep (default all three)

1. The input, cached in WORKDIR (default BUILD_DIR/bench-export3): a real NWB
   file that pynwb 4.2 writes (NWBFile, a 384-row electrodes table, an
   ElectricalSeries of bench/gen_ephys's synthetic recording), its data in
   HDF5 chunks of (16384, 64) with gzip 4 + shuffle (H5DataIO).
2. For each codec (zstd level 3, see ZSTD_LEVEL: hdmf-zarr 0.14's codec for
   new data; blosc-lz4 clevel 5 + shuffle):
   - hdmf-zarr 0.14: NWBHDF5IO read, then NWBZarrIO.export. 0.14's export
     takes no codec argument: left alone it copies the HDF5 filters (gzip 4
     + shuffle become numcodecs.zlib + shuffle), so the codec is chosen the
     way 0.14 lets a user change a dataset's settings on export:
     ElectricalSeries.set_data_io("data", ZarrDataIO, {compressors, chunks})
     with the HDF5 chunk shape. 0.14 takes no number of jobs on export.
   - nwbzarr export -j 1 and -j 2: inner chunks = the HDF5 chunks (its
     default), shards of all columns x about its default 256 MiB of rows
     (shard_rows(): an even number of shards, given to both);
   - bare_export -j 1 and -j 2, the same chunks, shards and codec.
   keep: hdmf-zarr 0.14's export left at its default (the HDF5 filters as
   numcodecs.shuffle + numcodecs.zlib level 4, the HDF5 chunks, no shards)
   against `nwbzarr export --compressor keep` (the same codecs; its chunks
   move as HDF5 stored them, so there is no inflate or deflate for a bare
   loop to bound: no bare row).
   Every output is checked afterwards, untimed: nwbzarr verify against the
   source for both exporters' stores, and bare's array read back with
   zarr-python and compared with h5py's read of the source.
3. One table (markdown, and CSV in WORKDIR/export3.csv): seconds (to data
   on disk: every variant ends with a sync), CPU seconds, peak RSS, the load
   average, hdmf-zarr / nwbzarr -j 2 (wall and CPU) and nwbzarr / bare at
   the same -j. Targets (issue 12): hdmf-zarr / nwbzarr
   -j 2 >= 3 at zstd and >= 10 at blosc-lz4; nwbzarr -j 2 / bare -j 2 <= 1.3.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CHUNKS = (16384, 64)
DSET = "acquisition/ElectricalSeries/data"
TARGET = {"zstd": 3.0, "blosc-lz4": 10.0, "keep": 3.0}
# zstd at level 3 for all three: hdmf-zarr 0.14's default level 0 is
# numcodecs 0.17's default, level 3, while nwbzarr's level 0 compresses at
# level 1 (numcodecs 0.11's clamp): at level 0 the two would not do the same
# work. Level 3 gives the same bytes from both.
ZSTD_LEVEL = 3


def make_input(build, path, rows):
    """pynwb writes the NWB HDF5 file from gen_ephys's recording, a block of
    rows at a time (DataChunkIterator), so this stays small for any rows."""
    import datetime

    import numpy as np
    from hdmf.backends.hdf5 import H5DataIO
    from hdmf.data_utils import DataChunkIterator
    from pynwb import NWBHDF5IO, NWBFile
    from pynwb.ecephys import ElectricalSeries

    raw = path + ".raw"
    subprocess.run([os.path.join(build, "bench", "gen_ephys"), raw, str(rows / 30000.0)], check=True,
                   stdout=subprocess.DEVNULL)
    mm = np.memmap(raw, dtype=np.int16, mode="r")
    mm = mm[: rows * 384].reshape(rows, 384)
    f = NWBFile(session_description="issue 12 export benchmark", identifier="bench-export3",
                session_start_time=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc))
    dev = f.create_device(name="probe")
    grp = f.create_electrode_group(name="shank0", description="shank 0", location="unknown", device=dev)
    for i in range(384):
        f.add_electrode(group=grp, location="unknown", rel_x=0.0, rel_y=float(i) * 20.0)
    region = f.create_electrode_table_region(region=list(range(384)), description="all electrodes")
    data = H5DataIO(DataChunkIterator(mm, buffer_size=CHUNKS[0], maxshape=(rows, 384)), chunks=CHUNKS,
                    compression="gzip", compression_opts=4, shuffle=True)
    f.add_acquisition(ElectricalSeries(name="ElectricalSeries", data=data, electrodes=region,
                                       rate=30000.0, conversion=1.95e-7))
    tmp = path + ".tmp.nwb"
    with NWBHDF5IO(tmp, "w") as io:
        io.write(f)
    os.remove(raw)
    os.replace(tmp, path)


def hdmf_export(src, out, codec):
    """One hdmf-zarr 0.14 export in this (child) process; prints its seconds."""
    import zarr
    from hdmf_zarr import NWBZarrIO, ZarrDataIO
    from pynwb import NWBHDF5IO

    if codec == "zstd":
        comp = [zarr.codecs.ZstdCodec(level=ZSTD_LEVEL)]
    else:
        comp = [zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle", typesize=2)]
    t0 = time.perf_counter()
    with NWBHDF5IO(src, "r") as r:
        nwb = r.read()
        if codec != "keep":  # keep: 0.14's own default, the HDF5 filters
            nwb.acquisition["ElectricalSeries"].set_data_io("data", ZarrDataIO,
                                                            {"compressors": comp, "chunks": CHUNKS})
        with NWBZarrIO(out, mode="w") as w:
            w.export(src_io=r, nwbfile=nwb, write_args={"link_data": False})
    os.sync()  # to data on disk, as every variant is timed
    print(f"SECONDS {time.perf_counter() - t0:.3f}")


def run_timed(cmd):
    """(seconds, CPU seconds, peak RSS MiB) of a child process, to its data
    on disk; a child that prints SECONDS (its own timing to data on disk,
    Python's imports excluded) is taken at its word."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile("w+") as errf:  # a file: a chatty stderr cannot block the child
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=errf, text=True)
        out = p.stdout.read()
        _, status, usage = os.wait4(p.pid, 0)
        os.sync()  # time to data on disk, for every variant (nwbzarr syncs its output itself)
        dt = time.perf_counter() - t0
        errf.seek(0)
        err = errf.read()
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"failed: {' '.join(cmd)}\n{out[-2000:]}\n{err[-3000:]}")
    secs = [float(x.split()[1]) for x in out.splitlines() if x.startswith("SECONDS ")]
    return (secs[0] if secs else dt), usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024.0


def check_bare(src, out):
    """bare's array equals the source: every 7th HDF5 chunk row and the last."""
    import h5py
    import numpy as np
    import zarr

    z = zarr.open_array(out, mode="r")
    with h5py.File(src, "r") as f:
        d = f[DSET]
        assert z.shape == d.shape, f"{out}: shape {z.shape} vs {d.shape}"
        starts = list(range(0, d.shape[0], CHUNKS[0] * 7)) + [max(0, d.shape[0] - CHUNKS[0])]
        for r0 in starts:
            a, b = z[r0:r0 + CHUNKS[0]], d[r0:r0 + CHUNKS[0]]
            assert np.array_equal(a, b), f"{out}: rows {r0}.. differ from the source"


def shard_rows(rows):
    """Shards of all 384 columns and about nwbzarr's default ~256 MiB (21 HDF5
    chunk rows), in an even number so that 2 workers taking whole shards
    (bare's way) balance; both exporters get the same shape."""
    n = -(-rows // CHUNKS[0])
    count = 2 * max(1, round(n / 42))
    return CHUNKS[0] * -(-n // count)


def array_meta(store):
    with open(os.path.join(store, DSET, "zarr.json")) as f:
        return json.load(f)


def check_codec(codecs, codec):
    """The last codec is the one asked for (zstd level 0, blosc lz4, or for
    keep the HDF5 gzip 4 + shuffle as numcodecs.shuffle + numcodecs.zlib)."""
    c = codecs[-1]
    if codec == "keep":
        assert [x["name"] for x in codecs[-2:]] == ["numcodecs.shuffle", "numcodecs.zlib"] and \
            c["configuration"]["level"] == 4, f"{DSET} is written with {codecs}, not the HDF5 filters"
        return
    want = ("zstd", {"level": ZSTD_LEVEL}) if codec == "zstd" else ("blosc", {"cname": "lz4", "clevel": 5})
    assert c["name"] == want[0] and all(c["configuration"][k] == v for k, v in want[1].items()), \
        f"{DSET} is written with {c}, not {codec}"


def check_hdmf(out, codec):
    meta = array_meta(out)
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == list(CHUNKS), "hdmf-zarr changed the chunks"
    check_codec(meta["codecs"], codec)


def check_shards(store, shards, codec):
    meta = array_meta(store)
    sh = meta["codecs"][0]
    assert sh["name"] == "sharding_indexed", f"{store}: {DSET} is not sharded"
    assert sh["configuration"]["chunk_shape"] == list(CHUNKS), "inner chunks are not the HDF5 chunks"
    assert meta["chunk_grid"]["configuration"]["chunk_shape"] == shards, f"{store}: shards differ"
    check_codec(sh["configuration"]["codecs"], codec)


def main():
    # The children: this parent stays small, since a child's peak RSS
    # starts from its parent's (Linux keeps it across exec).
    if len(sys.argv) > 1 and sys.argv[1] == "--hdmf":
        return hdmf_export(*sys.argv[2:5])
    if len(sys.argv) > 1 and sys.argv[1] == "--input":
        return make_input(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    if len(sys.argv) > 1 and sys.argv[1] == "--check-bare":
        return check_bare(sys.argv[2], sys.argv[3])
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    build = os.path.abspath(sys.argv[1])
    rows = 300000 if os.environ.get("QUICK") else int(os.environ.get("ROWS", "3600000"))
    codecs = os.environ.get("CODECS", "zstd,blosc-lz4,keep").split(",")
    work = sys.argv[2] if len(sys.argv) > 2 else os.path.join(build, "bench-export3")
    os.makedirs(work, exist_ok=True)
    cli = os.path.join(build, "src", "cli", "nwbzarr")
    bare = os.path.join(build, "bench", "bare_export")
    src = os.path.join(work, f"ephys_{rows}x384.nwb")
    me = os.path.abspath(__file__)
    if not os.path.exists(src):
        subprocess.run([sys.executable, me, "--input", build, src, str(rows)], check=True)
    out = os.path.join(work, "out.zarr")
    rows_out = []
    check_bare_cmd = [sys.executable, me, "--check-bare", src, out]

    def one(variant, codec, jobs, cmd, check):
        shutil.rmtree(out, ignore_errors=True)
        os.sync()
        secs, cpu, rss = run_timed(cmd)
        load = open("/proc/loadavg").read().split()[0]
        check()
        rows_out.append({"variant": variant, "codec": codec, "jobs": jobs, "seconds": secs, "cpu_s": cpu,
                         "peak_rss_mib": rss, "loadavg": float(load)})
        print(json.dumps(rows_out[-1]), flush=True)

    def verify():
        r = subprocess.run([cli, "verify", src, out, "-j", "2"], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"nwbzarr verify {out} failed:\n{r.stdout[-3000:]}\n{r.stderr[-3000:]}")

    for codec in codecs:
        comp = ["--compressor", codec] + (["--clevel", str(ZSTD_LEVEL)] if codec == "zstd" else [])
        if codec == "keep":
            comp = ["--compressor", "keep"]
        one("hdmf-zarr 0.14", codec, 1, [sys.executable, me, "--hdmf", src, out, codec],
            lambda: (verify(), check_hdmf(out, codec)))
        shards = [shard_rows(rows), 384]
        for j in (1, 2):
            one("nwbzarr export", codec, j, [cli, "export", src, out, "-j", str(j), "--quiet", "--shards",
                                             f"{shards[0]},{shards[1]}", *comp],
                lambda: (verify(), check_shards(out, shards, codec)))
        for j in (1, 2) if codec != "keep" else ():
            one("bare_export", codec, j, [bare, src, DSET, out, "--shards", f"{shards[0]},{shards[1]}",
                                          "--codec", codec, "-j", str(j)]
                + (["--clevel", str(ZSTD_LEVEL)] if codec == "zstd" else []),
                lambda: subprocess.run(check_bare_cmd, check=True))
    shutil.rmtree(out, ignore_errors=True)
    report(rows_out, rows, work)


def report(rs, rows, work):
    def find(variant, codec, jobs):
        return next((r for r in rs if (r["variant"], r["codec"], r["jobs"]) == (variant, codec, jobs)), None)

    for r in rs:
        ours = find("nwbzarr export", r["codec"], 2 if r["variant"] == "hdmf-zarr 0.14" else r["jobs"])
        bare = find("bare_export", r["codec"], r["jobs"])
        r["vs_nwbzarr_j2"] = r["seconds"] / ours["seconds"] if r["variant"] == "hdmf-zarr 0.14" else None
        # CPU too: on a shared machine wall time depends on the load.
        r["cpu_vs_nwbzarr_j2"] = r["cpu_s"] / ours["cpu_s"] if r["variant"] == "hdmf-zarr 0.14" else None
        r["nwbzarr_vs_bare"] = r["seconds"] / bare["seconds"] if r["variant"] == "nwbzarr export" and bare else None
    cols = ["variant", "codec", "jobs", "seconds", "cpu_s", "peak_rss_mib", "loadavg", "vs_nwbzarr_j2",
            "cpu_vs_nwbzarr_j2", "nwbzarr_vs_bare"]
    fmt = lambda v: "" if v is None else (f"{v:.2f}" if isinstance(v, float) else str(v))
    with open(os.path.join(work, "export3.csv"), "w") as f:
        f.write(",".join(cols) + "\n")
        for r in rs:
            f.write(",".join(fmt(r[c]) for c in cols) + "\n")
    print(f"\nexport of int16 ({rows}, 384), HDF5 chunks {CHUNKS} gzip 4 + shuffle, "
          f"{rows * 384 * 2 / 1e9:.2f} GB raw\n")
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rs:
        print("| " + " | ".join(fmt(r[c]) for c in cols) + " |")
    print()
    for codec in TARGET:
        h, o = find("hdmf-zarr 0.14", codec, 1), find("nwbzarr export", codec, 2)
        b = find("bare_export", codec, 2)
        if h and o:
            print(f"{codec}: hdmf-zarr / nwbzarr -j 2 = {h['seconds'] / o['seconds']:.2f} (target >= "
                  f"{TARGET[codec]:.0f}; CPU {h['cpu_s'] / o['cpu_s']:.2f})"
                  + (f", nwbzarr / bare at -j 2 = {o['seconds'] / b['seconds']:.2f} (target <= 1.3)" if b else ""))


if __name__ == "__main__":
    main()
