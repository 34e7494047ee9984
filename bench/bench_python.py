"""issue 13's benchmark: hdmf_zarr.NWBZarrIO vs nwbzarr.NWBZarrIO writing an
NWBFile whose TimeSeries is a memmap of a 384-channel int16 recording, at
number_of_jobs 1 and 2, with hdmf-zarr 0.14's default codec (zarr's zstd
level 0) and blosc-lz4 (a ZarrDataIO, the same for both); `nwbzarr convert`
of the same data and codec, with its own layout (v3 shards of all-channel
chunks) and, as `convert_hdmf_chunks`, with the chunks zarr-python picks for
the NWBZarrIOs (one file per chunk, Zarr v2: the same work as theirs, whose
chunks are column strips); export of the gzip NWB HDF5 file through both.
hdmf-zarr writes in parallel only from a GenericDataChunkIterator, so its
2-job rows write the memmap through one, in that iterator's chunks
(87472 x 56 at 20 s); `nwbzarr_iter_chunks` is nwbzarr.NWBZarrIO writing the
memmap in those same chunks, the like-for-like row for them.

`bare_loop` (bench/bare_loop.c: read, gather, blosc-lz4, one plain file per
chunk, then sync; no metadata, no rename, no format) is the machine's floor
for the blosc-lz4 rows, in both of those layouts (`bare_loop` in zarr-python's
default chunks, `bare_loop_iter_chunks` in the iterator's).

usage: python bench/bench_python.py BUILD_DIR [SECONDS=60] [WORKDIR]
QUICK=1 in the environment: 5 s of recording (a check, not a measurement);
ONLY=export (or write, convert): only those variants (export: the gzip
file's series through hdmf-zarr's default export codec, numcodecs.zlib: the
HDF5 filter, so nwbzarr moves the stored chunks; convert includes the bare
loops); REPS=N: every variant N times, the series interleaved (all variants,
then all again), then a table of the medians and the issue's ratios on them;
KINDS=a,b / JOBS=2 / CODECS=blosc-lz4: only those variants, jobs, codecs.
(with the staged package: PYTHONPATH=BUILD_DIR/python, and the readers'
interpreter). Each run is its own process under /usr/bin/time (peak RSS,
CPU); time is to data on disk (the write plus a sync). Prints CSV rows
(variant,codec,jobs,write_s,process_s,peak_rss_mib,write_cpu_s,process_cpu_s:
user + system seconds of the timed write and of the whole process, all
threads; CPU is the steady figure on a loaded machine) and checks each
output reads back.
"""

import os
import resource
import shutil
import subprocess
import sys
import time

BUILD = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 and not sys.argv[1].startswith("--") else None
HERE = os.path.dirname(os.path.abspath(__file__))


def memmap_iterator(path, shape):
    """What hdmf-zarr parallelises: a picklable GenericDataChunkIterator over
    the raw file (the path, not the map), with the 2-job rows' buffer."""
    import numpy as np
    from hdmf.data_utils import GenericDataChunkIterator

    class MemmapIterator(GenericDataChunkIterator):
        def __init__(self, path, shape, **kw):
            self.path, self.shape_, self._mm = path, shape, None
            super().__init__(**kw)

        def _mmap(self):
            if self._mm is None:
                self._mm = np.memmap(self.path, dtype=np.int16, mode="r", shape=self.shape_)
            return self._mm

        def __getstate__(self):
            return {k: (None if k == "_mm" else v) for k, v in self.__dict__.items()}

        def _get_data(self, selection):
            return self._mmap()[selection]

        def _get_maxshape(self):
            return self.shape_

        def _get_dtype(self):
            return np.dtype(np.int16)

    return MemmapIterator(path, shape, buffer_gb=0.1)


def one(kind, codec, jobs, raw, out, frames):
    """One timed write in this process (the child)."""
    import datetime

    import numpy as np
    import zarr
    from hdmf_zarr import NWBZarrIO as HdmfIO
    from hdmf_zarr import ZarrDataIO
    from pynwb import NWBHDF5IO, NWBFile, TimeSeries

    from nwbzarr import NWBZarrIO as NzIO

    shape = (frames, 384)
    mm = np.memmap(raw, dtype=np.int16, mode="r", shape=shape)
    if kind == "hdmf_zarr" and jobs > 1:
        data = memmap_iterator(raw, shape)  # hdmf-zarr's only parallel path
    else:
        data = mm
    kw = {}
    if codec == "blosc-lz4":
        kw["compressors"] = [zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")]
    if data is not mm:
        kw["chunks"] = data.chunk_shape
    elif kind == "nwbzarr_iter_chunks":
        # The memmap in the chunks hdmf-zarr's parallel path writes (its
        # iterator's), so that this row and hdmf_zarr's 2-job row write the
        # same layout; plain "nwbzarr" writes zarr-python's default chunks.
        kw["chunks"] = memmap_iterator(raw, shape).chunk_shape
    if "compressors" in kw or kind == "nwbzarr_iter_chunks":
        data = ZarrDataIO(data, **kw)

    def nwbfile(d):
        f = NWBFile(session_description="bench", identifier="bench",
                    session_start_time=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc))
        f.add_acquisition(TimeSeries(name="ts", data=d, unit="V", rate=30000.0))
        return f

    def cpu():
        """This process's every thread, and hdmf-zarr's pool workers once reaped."""
        rs = (resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN))
        return sum(r.ru_utime + r.ru_stime for r in rs)

    c = cpu()
    t = time.perf_counter()
    if kind in ("hdmf_zarr", "nwbzarr", "nwbzarr_iter_chunks"):
        cls = HdmfIO if kind == "hdmf_zarr" else NzIO
        with cls(out, mode="w") as io:
            io.write(nwbfile(data), number_of_jobs=jobs)
    elif kind in ("export_hdmf_zarr", "export_nwbzarr"):
        cls = HdmfIO if kind == "export_hdmf_zarr" else NzIO
        kw = {"number_of_jobs": jobs} if cls is NzIO else {}
        with NWBHDF5IO(raw + ".nwb", "r") as src, cls(out, mode="w") as io:
            io.export(src_io=src, write_args={"link_data": False}, **kw)
    os.sync()
    elapsed = time.perf_counter() - t
    c = cpu() - c
    with HdmfIO(out, mode="r") as io:
        got = io.read().acquisition["ts"].data
        assert got.shape == shape and np.array_equal(got[-1000:], mm[-1000:]), "output differs"
    print(f"SECONDS {elapsed:.3f}")
    print(f"CPU {c:.3f}")


def make_h5(raw, frames):
    """The gzip NWB HDF5 file the export runs read (as pynwb writes one)."""
    import datetime

    import numpy as np
    from hdmf.backends.hdf5 import H5DataIO
    from pynwb import NWBHDF5IO, NWBFile, TimeSeries

    mm = np.memmap(raw, dtype=np.int16, mode="r", shape=(frames, 384))
    f = NWBFile(session_description="bench", identifier="bench",
                session_start_time=datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc))
    f.add_acquisition(TimeSeries(name="ts", data=H5DataIO(mm, chunks=(8192, 64), compression="gzip"),
                                 unit="V", rate=30000.0))
    with NWBHDF5IO(raw + ".nwb", "w") as io:
        io.write(f)


def zarr_chunks(shape):
    """The chunks zarr-python gives an int16 array of this shape when none
    are asked (what hdmf-zarr writes the TimeSeries with, in both codecs)."""
    import zarr

    return zarr.create_array(store=zarr.storage.MemoryStore(), shape=shape, dtype="int16").chunks


def timed(cmd):
    """(seconds reported or measured, wall seconds, peak RSS MiB, CPU
    seconds reported or measured, CPU seconds) of one child process."""
    t = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "RSS %M %U %S", *cmd], capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{p.stderr[-3000:]}")
    secs = [float(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("SECONDS ")]
    cpus = [float(line.split()[1]) for line in p.stdout.splitlines() if line.startswith("CPU ")]
    rss = [line.split()[1:] for line in p.stderr.splitlines() if line.startswith("RSS ")]
    cpu = float(rss[-1][1]) + float(rss[-1][2])
    return (secs[0] if secs else wall), wall, int(rss[-1][0]) / 1024, (cpus[0] if cpus else cpu), cpu


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        kind, codec, jobs, raw, out, frames = sys.argv[2:8]
        return one(kind, codec, int(jobs), raw, out, int(frames))
    seconds = float(sys.argv[2]) if len(sys.argv) > 2 else (5 if os.environ.get("QUICK") == "1" else 60)
    work = sys.argv[3] if len(sys.argv) > 3 else os.path.join(BUILD, "bench-python")
    os.makedirs(work, exist_ok=True)
    frames = int(seconds * 30000)
    raw = os.path.join(work, "rec.bin")
    if not os.path.exists(raw) or os.path.getsize(raw) != frames * 384 * 2:
        subprocess.run([os.path.join(BUILD, "bench", "gen_ephys"), raw, str(seconds)], check=True,
                       stdout=subprocess.DEVNULL)
    if not os.path.exists(raw + ".nwb") or os.path.getmtime(raw + ".nwb") < os.path.getmtime(raw):
        make_h5(raw, frames)
    cli = os.path.join(BUILD, "src", "cli", "nwbzarr")
    out = os.path.join(work, "out.nwb.zarr")
    print(f"# load average {os.getloadavg()[0]:.2f} at start", flush=True)
    print("variant,codec,jobs,write_s,process_s,peak_rss_mib,write_cpu_s,process_cpu_s", flush=True)
    runs = [(k, c, j) for c in ("zstd-default", "blosc-lz4")
            for k in ("hdmf_zarr", "nwbzarr", "nwbzarr_iter_chunks", "convert", "convert_hdmf_chunks",
                      "bare_loop", "bare_loop_iter_chunks")
            for j in (1, 2)] + [(k, "gzip-source", j) for k in ("export_hdmf_zarr", "export_nwbzarr") for j in (1, 2)]
    only = os.environ.get("ONLY")
    reps = int(os.environ.get("REPS", "1"))
    group = {"hdmf_zarr": "write", "nwbzarr": "write", "nwbzarr_iter_chunks": "write", "convert": "convert",
             "convert_hdmf_chunks": "convert", "bare_loop": "convert", "bare_loop_iter_chunks": "convert"}
    kinds = os.environ["KINDS"].split(",") if os.environ.get("KINDS") else None
    jobs_only = [int(j) for j in os.environ["JOBS"].split(",")] if os.environ.get("JOBS") else None
    codecs = os.environ["CODECS"].split(",") if os.environ.get("CODECS") else None
    runs = [r for r in runs if not (only and group.get(r[0], "export") != only)
            and (kinds is None or r[0] in kinds) and (jobs_only is None or r[2] in jobs_only)
            and (codecs is None or r[1] in codecs)
            and not (r[0] == "export_hdmf_zarr" and r[2] > 1)  # hdmf-zarr 0.14's export has no number_of_jobs
            and not (r[0].startswith("bare_loop") and r[1] != "blosc-lz4")]  # the bare loop is blosc only
    default_chunks = ",".join(map(str, zarr_chunks((frames, 384))))
    results = {}
    for rep in range(reps):
        for kind, codec, jobs in runs:
            shutil.rmtree(out, ignore_errors=True)
            os.sync()
            if kind.startswith("convert"):
                comp = ["--compressor", "zstd", "--clevel", "3"] if codec == "zstd-default" else []
                if kind == "convert_hdmf_chunks":
                    comp += ["--zarr-format", "2", "--chunks", default_chunks]
                cmd = [cli, "convert", raw, "-o", out, "--channels", "384", "--rate", "30000", "-j", str(jobs),
                       "--quiet", *comp]
            elif kind.startswith("bare_loop"):
                chunks = default_chunks if kind == "bare_loop" else iter_chunks(raw, frames)
                cmd = ["sh", "-c", 'mkdir "$2" && "$1" "$3" "$2" --channels 384 --chunks "$4" -j "$5" >/dev/null'
                       ' && sync -f "$2"', "sh", os.path.join(BUILD, "bench", "bare_loop"), out, raw, chunks,
                       str(jobs)]
            else:
                cmd = [sys.executable, os.path.abspath(__file__), "--one", kind, codec, str(jobs), raw, out,
                       str(frames)]
            row = timed(cmd)
            results.setdefault((kind, codec, jobs), []).append(row)
            write_s, process_s, rss, write_cpu, cpu = row
            print(f"{kind},{codec},{jobs},{write_s:.2f},{process_s:.2f},{rss:.0f},{write_cpu:.2f},{cpu:.2f}",
                  flush=True)
    print(f"# load average {os.getloadavg()[0]:.2f} at end", flush=True)
    if reps > 1:
        summary(results, reps)


def iter_chunks(raw, frames):
    """The chunks hdmf-zarr's 2-job rows write (its iterator's), as R,C."""
    return ",".join(map(str, memmap_iterator(raw, (frames, 384)).chunk_shape))


def summary(results, reps):
    """Medians of every variant (peak RSS: the largest) and issue 13's ratios on them."""
    import statistics

    med = {k: [statistics.median(r[i] for r in v) for i in range(5)] for k, v in results.items()}
    print(f"# medians of {reps} interleaved runs (peak RSS: the largest of them)")
    print("variant,codec,jobs,write_s,process_s,peak_rss_mib,write_cpu_s,process_cpu_s")
    for (kind, codec, jobs), v in results.items():
        m = med[(kind, codec, jobs)]
        print(f"{kind},{codec},{jobs},{m[0]:.2f},{m[1]:.2f},{max(r[2] for r in v):.0f},{m[3]:.2f},{m[4]:.2f}")

    def ratio(label, a, b):
        if a in med and b in med:
            print(f"# {label}: {med[a][0]:.2f} s / {med[b][0]:.2f} s = {med[a][0] / med[b][0]:.2f}")

    for codec in ("zstd-default", "blosc-lz4"):
        ratio(f"hdmf_zarr / nwbzarr at 2 jobs, {codec}", ("hdmf_zarr", codec, 2), ("nwbzarr", codec, 2))
        ratio(f"nwbzarr / convert at 2 jobs, {codec}", ("nwbzarr", codec, 2), ("convert", codec, 2))
        ratio(f"nwbzarr / convert_hdmf_chunks at 2 jobs, {codec}", ("nwbzarr", codec, 2),
              ("convert_hdmf_chunks", codec, 2))
    ratio("hdmf_zarr / bare_loop at 2 jobs, blosc-lz4 (the most any writer of that layout can gain)",
          ("hdmf_zarr", "blosc-lz4", 2), ("bare_loop", "blosc-lz4", 2))
    ratio("nwbzarr / bare_loop at 2 jobs, blosc-lz4", ("nwbzarr", "blosc-lz4", 2), ("bare_loop", "blosc-lz4", 2))
    ratio("nwbzarr_iter_chunks / bare_loop_iter_chunks at 2 jobs, blosc-lz4", ("nwbzarr_iter_chunks", "blosc-lz4", 2),
          ("bare_loop_iter_chunks", "blosc-lz4", 2))
    ratio("export_hdmf_zarr 1 job / export_nwbzarr 2 jobs", ("export_hdmf_zarr", "gzip-source", 1),
          ("export_nwbzarr", "gzip-source", 2))


if __name__ == "__main__":
    main()
