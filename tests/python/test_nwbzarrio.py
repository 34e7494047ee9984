"""nwbzarr.NWBZarrIO against hdmf-zarr 0.14's own NWBZarrIO (the pinned
readers): same layout and metadata, the same values read back by
hdmf_zarr.NWBZarrIO and pynwb, output independent of the number of jobs,
every kind of source (numpy, memmap, h5py through export, zarr, hdmf
iterators), a user's exception re-raised as itself, Ctrl-C stopping the
write and leaving the file marked incomplete. Run by NZ_PY3 with the
staged package on PYTHONPATH (tests/python/CMakeLists.txt)."""

import datetime
import json
import os
import signal
import sys
import threading

import h5py
import hdmf_zarr
import numpy as np
import zarr
from hdmf.data_utils import DataChunkIterator, GenericDataChunkIterator
from hdmf_zarr import ZarrDataIO
from pynwb import NWBHDF5IO, NWBFile, TimeSeries

import nwbzarr
from nwbzarr import _sources

from nzpy import FAILED, check, finish, nwbfile, recording, scratch

tmp = scratch("py_nwbzarrio")
def write(cls, path, data, **kw):
    with cls(path, mode="w") as io:
        io.write(nwbfile(data), **kw)
    return io.engine_stats if cls is nwbzarr.NWBZarrIO else None


def by_engine(stats, what, jobs=2, nbytes=None):
    """The engine (not hdmf-zarr) wrote the series' data, on `jobs` threads."""
    st = (stats or {}).get("acquisition/ts/data")
    check(st is not None and st["jobs"] == jobs and st["bytes"] == (nbytes or data.nbytes),
          f"{what}: the engine wrote the data on {jobs} threads ({st})")


def read_back(path, name="ts"):
    with hdmf_zarr.NWBZarrIO(path, mode="r") as io:
        f = io.read()
        return f.acquisition[name].data[:], f.acquisition[name].rate


def documents(root):
    """Every file of the store except chunks: {key: parsed JSON with object ids blanked}."""
    out = {}
    for dirpath, _, files in os.walk(root):
        for fn in files:
            key = os.path.relpath(os.path.join(dirpath, fn), root)
            if fn == "zarr.json":
                out[key] = blank_ids(json.load(open(os.path.join(dirpath, fn))))
    return out


def blank_ids(v):
    if isinstance(v, dict):
        return {k: ("X" if k == "object_id" else blank_ids(x)) for k, x in v.items()}
    if isinstance(v, list):
        return [blank_ids(x) for x in v]
    return v


def chunk_files(root, array):
    base = os.path.join(root, array, "c")
    out = {}
    for dirpath, _, files in os.walk(base):
        for fn in files:
            p = os.path.join(dirpath, fn)
            out[os.path.relpath(p, base)] = open(p, "rb").read()
    return out


def same_layout(a, b, what):
    da, db = documents(a), documents(b)
    check(da.keys() == db.keys(), f"{what}: the same zarr.json documents as hdmf-zarr's")
    diff = [k for k in da if k in db and da[k] != db[k]]
    check(not diff, f"{what}: every document equal to hdmf-zarr's (object ids aside) {diff[:3]}")


def same_values(a, b, array, what):
    """Same chunk keys and the same values. Chunk bytes are the codec
    library's: with zarr's default zstd, numcodecs' bundled zstd and the
    system's libzstd compress a few inputs differently (blosc-lz4 is checked
    byte for byte above)."""
    ca, cb = chunk_files(a, array), chunk_files(b, array)
    check(ca.keys() == cb.keys() and ca, f"{what}: the same {len(ca)} chunk keys as hdmf-zarr's "
          f"({sum(ca[k] == cb.get(k) for k in ca)} byte-identical)")
    za = zarr.open_array(os.path.join(a, array), mode="r")
    zb = zarr.open_array(os.path.join(b, array), mode="r")
    check(np.array_equal(za[...], zb[...]), f"{what}: values equal to hdmf-zarr's")


# -- numpy, 2 jobs, against hdmf-zarr's own write -----------------------------
data = recording()
write(hdmf_zarr.NWBZarrIO, tmp("hdmf.nwb.zarr"), data)
by_engine(write(nwbzarr.NWBZarrIO, tmp("nz2.nwb.zarr"), data, number_of_jobs=2), "numpy")
got, rate = read_back(tmp("nz2.nwb.zarr"))
check(np.array_equal(got, data) and got.dtype == data.dtype and rate == 30000.0,
      "numpy, 2 jobs: hdmf_zarr.NWBZarrIO reads back what was written")
same_layout(tmp("hdmf.nwb.zarr"), tmp("nz2.nwb.zarr"), "numpy, 2 jobs")
same_values(tmp("hdmf.nwb.zarr"), tmp("nz2.nwb.zarr"), "acquisition/ts/data", "numpy, 2 jobs")
check(not os.path.exists(tmp("nz2.nwb.zarr/" + nwbzarr.INCOMPLETE_MARKER)),
      "a finished write leaves no incomplete marker")
root = json.load(open(tmp("nz2.nwb.zarr/zarr.json")))
check(root.get("consolidated_metadata") is not None, "a finished write is consolidated (as hdmf-zarr's)")

# -- identical for 1, 2, 3 jobs (blosc-lz4: chunk bytes are the codec's alone) ---
def blosc(d):
    return ZarrDataIO(d, chunks=(10_000, 32),
                      compressors=[zarr.codecs.BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")])


for jobs in (1, 2, 3):
    by_engine(write(nwbzarr.NWBZarrIO, tmp(f"j{jobs}.nwb.zarr"), blosc(data), number_of_jobs=jobs),
              f"blosc, {jobs} jobs", jobs=jobs)
write(hdmf_zarr.NWBZarrIO, tmp("hdmf_blosc.nwb.zarr"), blosc(data))
c1, c2, c3 = (chunk_files(tmp(f"j{j}.nwb.zarr"), "acquisition/ts/data") for j in (1, 2, 3))
check(c1 == c2 == c3 and len(c1) == 24, "chunks byte-identical for 1, 2 and 3 jobs")
check(c1 == chunk_files(tmp("hdmf_blosc.nwb.zarr"), "acquisition/ts/data"),
      "blosc-lz4: chunks byte-identical to hdmf-zarr's own write")
same_layout(tmp("hdmf_blosc.nwb.zarr"), tmp("j2.nwb.zarr"), "blosc-lz4 ZarrDataIO")
check(np.array_equal(read_back(tmp("j3.nwb.zarr"))[0], data), "3 jobs: reads back equal")

# -- a codec the engine lacks: zarr-python writes, the reason is recorded -------
from numcodecs.zarr3 import BZ2

with nwbzarr.NWBZarrIO(tmp("bz2.nwb.zarr"), mode="w") as io:
    io.write(nwbfile(ZarrDataIO(data, chunks=(30_000, 64), compressors=[BZ2(level=1)])), number_of_jobs=2)
reason = io.engine_fallbacks.get("acquisition/ts/data", "")
check(io.engine_stats == {} and "bz2" in reason, f"an unsupported codec falls back to zarr-python ({reason!r})")
check(np.array_equal(read_back(tmp("bz2.nwb.zarr"))[0], data), "the fallback reads back equal")

# -- memmap: the engine reads the file itself ---------------------------------
raw = tmp("rec.bin")
data.tofile(raw)
mm = np.memmap(raw, dtype=np.int16, mode="r", shape=data.shape)
check("raw" in _sources.array_source(mm, mm.dtype), "a whole np.memmap is read as a raw file")
check("buffer" in _sources.array_source(mm[1000:], mm.dtype), "a view into a memmap is read as memory")
by_engine(write(nwbzarr.NWBZarrIO, tmp("mm.nwb.zarr"), mm, number_of_jobs=2), "memmap")
check(np.array_equal(read_back(tmp("mm.nwb.zarr"))[0], data), "memmap, 2 jobs: reads back equal")
same_values(tmp("hdmf.nwb.zarr"), tmp("mm.nwb.zarr"), "acquisition/ts/data", "memmap")
with open(tmp("hdr.bin"), "wb") as f:
    f.write(b"H" * 100)
    data.tofile(f)
mmo = np.memmap(tmp("hdr.bin"), dtype=np.int16, mode="r", offset=100, shape=data.shape)
check(_sources.array_source(mmo, mmo.dtype)["raw"][1] == 100, "a memmap with a header: raw at its offset")
by_engine(write(nwbzarr.NWBZarrIO, tmp("mmo.nwb.zarr"), mmo, number_of_jobs=2), "memmap with header")
check(np.array_equal(read_back(tmp("mmo.nwb.zarr"))[0], data), "memmap after a 100-byte header: equal")

# -- h5py datasets: export from NWB HDF5, read by the engine's HDF5 source -------
from hdmf.backends.hdf5 import H5DataIO

H5_CHUNKS = 15  # HDF5 chunks of 8192 x 64 in the 120000 x 64 series


def export(src_path, out, cls=nwbzarr.NWBZarrIO, **kw):
    with NWBHDF5IO(src_path, "r") as src, cls(tmp(out), mode="w") as io:
        io.export(src_io=src, write_args={"link_data": False}, **kw)
    return io


def h5_written(h5opts, name, values=None):
    h5 = tmp(name)
    with NWBHDF5IO(h5, "w") as io:
        io.write(nwbfile(H5DataIO(data if values is None else values, chunks=(8192, 64), **h5opts)))
    return h5


for label, h5opts in (("plain", {}), ("gzip", {"compression": "gzip"})):
    h5 = h5_written(h5opts, f"src_{label}.nwb")
    export(h5, f"exp_hdmf_{label}.nwb.zarr", hdmf_zarr.NWBZarrIO)
    io = export(h5, f"exp_nz_{label}.nwb.zarr", number_of_jobs=2)
    what = f"export from {label} HDF5"
    by_engine(io.engine_stats, what)  # gzip: hdmf-zarr's numcodecs.zlib
    h5st = io.engine_stats["acquisition/ts/data"].get("hdf5", {})
    # gzip: hdmf-zarr's codecs are the HDF5 filters (numcodecs.zlib), so the
    # stored chunks move unchanged; plain: hdmf-zarr's zstd, so each chunk is
    # read raw and encoded.
    moved, decoded = (H5_CHUNKS, 0) if label == "gzip" else (0, H5_CHUNKS)
    check(h5st.get("raw_path") and h5st.get("raw_chunks") == decoded and h5st.get("stored_chunks") == moved
          and h5st.get("hdf5_reads") == 0,
          f"{what}: the engine read every HDF5 chunk raw itself, each once, none through h5py, "
          f"{moved} moved as stored ({h5st})")
    check(nwbzarr.verify(h5, tmp(f"exp_nz_{label}.nwb.zarr")) == [],
          f"{what}: nwbzarr.verify finds the export equal to its source")
    check(np.array_equal(read_back(tmp(f"exp_nz_{label}.nwb.zarr"))[0], data), f"{what}, 2 jobs: equal")
    same_layout(tmp(f"exp_hdmf_{label}.nwb.zarr"), tmp(f"exp_nz_{label}.nwb.zarr"), what)
    same_values(tmp(f"exp_hdmf_{label}.nwb.zarr"), tmp(f"exp_nz_{label}.nwb.zarr"), "acquisition/ts/data", what)
# The gzip export's chunks are the HDF5 file's stored chunks byte for byte.
with h5py.File(h5, "r") as f:
    d = f["acquisition/ts/data"]
    stored = {f"{i}/0": d.id.read_direct_chunk((i * 8192, 0))[1] for i in range(H5_CHUNKS)}
check(chunk_files(tmp("exp_nz_gzip.nwb.zarr"), "acquisition/ts/data") == stored,
      "export from gzip HDF5: every Zarr chunk is H5Dread_chunk's bytes, unchanged")
# A chunk of zeros (the fill value), moved: left out as zarr-python leaves it
# out of hdmf-zarr's export (write_empty_chunks=False), so the chunk keys are
# the same, and it reads back as the fill.
zeroed = data.copy()
zeroed[2 * 8192:3 * 8192] = 0
h5z = h5_written({"compression": "gzip"}, "src_zeros.nwb", zeroed)
export(h5z, "exp_hdmf_zeros.nwb.zarr", hdmf_zarr.NWBZarrIO)
io = export(h5z, "exp_nz_zeros.nwb.zarr", number_of_jobs=2)
h5st = io.engine_stats["acquisition/ts/data"].get("hdf5", {})
kh, kn = (set(chunk_files(tmp(n), "acquisition/ts/data")) for n in ("exp_hdmf_zeros.nwb.zarr", "exp_nz_zeros.nwb.zarr"))
check(h5st.get("stored_chunks") == H5_CHUNKS and h5st.get("raw_chunks") == 0 and kn == kh
      and len(kn) == H5_CHUNKS - 1 and "2/0" not in kn,
      f"export from gzip HDF5: the chunk of zeros is left out, as hdmf-zarr leaves it ({sorted(kh ^ kn)}, {h5st})")
check(np.array_equal(read_back(tmp("exp_nz_zeros.nwb.zarr"))[0], zeroed),
      "export from gzip HDF5 with a chunk of zeros: equal, that chunk read as the fill")
# 1, 2 and 3 jobs from the gzip file
for jobs in (1, 3):
    by_engine(export(h5, f"exp_j{jobs}.nwb.zarr", number_of_jobs=jobs).engine_stats, f"export, {jobs} jobs",
              jobs=jobs)
e1, e2, e3 = (chunk_files(tmp(n), "acquisition/ts/data")
              for n in ("exp_j1.nwb.zarr", "exp_nz_gzip.nwb.zarr", "exp_j3.nwb.zarr"))
check(e1 == e2 == e3 and len(e1) == H5_CHUNKS, "export: chunks byte-identical for 1, 2 and 3 jobs")
same_layout(tmp("exp_j1.nwb.zarr"), tmp("exp_j3.nwb.zarr"), "export, 1 and 3 jobs")

# When the engine cannot read the file itself, h5py reads it (logged).
with h5py.File(h5, "r") as f:
    check("hdf5" in _sources.array_source(f["acquisition/ts/data"], np.dtype("<i2")),
          "an h5py dataset of a file open read-only goes to the engine's HDF5 source")
    check("read" in _sources.array_source(f["acquisition/ts/data"], np.dtype("<i4")),
          "an h5py dataset written as another dtype is read through h5py")
with h5py.File(h5, "r+") as f:
    check("read" in _sources.array_source(f["acquisition/ts/data"], np.dtype("<i2")),
          "a file open for writing is read through h5py")
with h5py.File(h5, "r", driver="core") as f:
    check("read" in _sources.array_source(f["acquisition/ts/data"], np.dtype("<i2")),
          "a file held in memory (driver 'core') is read through h5py")
import logging


class Logged(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.lines = []

    def emit(self, record):
        self.lines.append(record.getMessage())


logged = Logged()
logging.getLogger("nwbzarr").addHandler(logged)
logging.getLogger("nwbzarr").setLevel(logging.DEBUG)
lzf = h5_written({"compression": "lzf"}, "src_lzf.nwb")  # h5py's own filter: not in nwbzarr's libhdf5
io = export(lzf, "exp_lzf.nwb.zarr", number_of_jobs=2)
by_engine(io.engine_stats, "export from lzf HDF5")
why = [m for m in logged.lines if "read through h5py" in m]
check("hdf5" not in io.engine_stats["acquisition/ts/data"] and why and "filter 32000" in why[0],
      f"lzf: h5py reads the chunks, the engine writes them, the debug log says why ({why})")
check(np.array_equal(read_back(tmp("exp_lzf.nwb.zarr"))[0], data), "export from lzf HDF5: equal")
logging.getLogger("nwbzarr").removeHandler(logged)

# A corrupt gzip chunk, decoded (fletcher32 keeps the chunks from moving as
# stored: hdmf-zarr drops the checksum) or moved as stored (gzip, gzip +
# shuffle: hdmf-zarr's codecs are the HDF5 filters, and each moved chunk is
# inflated on the way to check it): an NWBZarrError naming the file, the
# dataset and the chunk, the output left marked incomplete.
for label, h5opts in (("decoded", {"compression": "gzip", "fletcher32": True}),
                      ("moved", {"compression": "gzip"}),
                      ("moved, shuffled", {"compression": "gzip", "shuffle": True})):
    name = "corrupt_" + label.replace(", ", "_")
    bad = h5_written(h5opts, name + ".nwb")
    with h5py.File(bad, "r") as f:
        info = f["acquisition/ts/data"].id.get_chunk_info(7)
    with open(bad, "r+b") as f:
        f.seek(info.byte_offset + info.size // 2)
        f.write(b"\xa5" * 64)
    out = name + ".nwb.zarr"
    what = f"a corrupt gzip chunk ({label})"
    try:
        export(bad, out, number_of_jobs=2)
        check(False, f"{what} fails the export")
    except nwbzarr.NWBZarrError as e:
        check(bad in e.message and "/acquisition/ts/data" in e.message and "chunk at [57344, 0]" in e.message
              and e.code == nwbzarr._nwbzarr.ECODEC,
              f"{what} raises NWBZarrError naming the file, the dataset and the chunk ({e.message})")
    check(os.path.exists(tmp(out + "/" + nwbzarr.INCOMPLETE_MARKER)),
          f"an export failed on {what} stays marked incomplete")
    check(json.load(open(tmp(out + "/zarr.json"))).get("consolidated_metadata") is None,
          f"an export failed on {what} is not consolidated")

# hdmf cannot take a bare zarr array as data (it iterates it); a zarr array
# is copied when a Zarr file is exported with link_data=False.
za = zarr.open_array(tmp("nz2.nwb.zarr/acquisition/ts/data"), mode="r")
check("read" in _sources.array_source(za, za.dtype), "a zarr array is read through zarr-python")
for cls, out, kw in ((hdmf_zarr.NWBZarrIO, "zexp_hdmf.nwb.zarr", {}),
                     (nwbzarr.NWBZarrIO, "zexp_nz.nwb.zarr", {"number_of_jobs": 2})):
    with hdmf_zarr.NWBZarrIO(tmp("nz2.nwb.zarr"), "r") as src, cls(tmp(out), mode="w") as io:
        io.export(src_io=src, write_args={"link_data": False}, **kw)
by_engine(io.engine_stats, "export from Zarr")
check(np.array_equal(read_back(tmp("zexp_nz.nwb.zarr"))[0], data), "export from Zarr, 2 jobs: equal")
same_layout(tmp("zexp_hdmf.nwb.zarr"), tmp("zexp_nz.nwb.zarr"), "export from Zarr")
same_values(tmp("zexp_hdmf.nwb.zarr"), tmp("zexp_nz.nwb.zarr"), "acquisition/ts/data", "export from Zarr")

# -- hdmf iterators ---------------------------------------------------------------
class Gen(GenericDataChunkIterator):
    """A neuroconv-style iterator over an array (buffers of 5000 x 32)."""

    def __init__(self, array, fail_at=None, on_buffer=None, **kw):
        self.array, self.fail_at, self.on_buffer, self.calls = array, fail_at, on_buffer, 0
        super().__init__(buffer_shape=(5000, 32), chunk_shape=(5000, 32), **kw)

    def _get_data(self, selection):
        self.calls += 1
        if self.on_buffer:
            self.on_buffer(self.calls)
        if self.fail_at is not None and self.calls == self.fail_at:
            self.raised = MyError("buffer %d" % self.calls)
            raise self.raised
        return self.array[selection]

    def _get_maxshape(self):
        return self.array.shape

    def _get_dtype(self):
        return self.array.dtype


class MyError(Exception):
    pass


for name, make in (("DataChunkIterator", lambda: DataChunkIterator((row for row in data), maxshape=data.shape,
                                                                    dtype=data.dtype, buffer_size=777)),
                   ("GenericDataChunkIterator", lambda: Gen(data))):
    write(hdmf_zarr.NWBZarrIO, tmp(f"it_hdmf_{name}.nwb.zarr"), make())
    by_engine(write(nwbzarr.NWBZarrIO, tmp(f"it_nz_{name}.nwb.zarr"), make(), number_of_jobs=2), name)
    check(np.array_equal(read_back(tmp(f"it_nz_{name}.nwb.zarr"))[0], data), f"{name}, 2 jobs: equal")
    same_layout(tmp(f"it_hdmf_{name}.nwb.zarr"), tmp(f"it_nz_{name}.nwb.zarr"), name)
    same_values(tmp(f"it_hdmf_{name}.nwb.zarr"), tmp(f"it_nz_{name}.nwb.zarr"), "acquisition/ts/data", name)

# A sharded target: the engine writes shard row by shard row.
def sharded(it):
    return ZarrDataIO(it, chunks=(5000, 32), shards=(20000, 64))


for name, make in (("sharded GenericDataChunkIterator", lambda: sharded(Gen(data))),
                   ("sharded DataChunkIterator", lambda: sharded(DataChunkIterator(
                       (row for row in data), maxshape=data.shape, dtype=data.dtype, buffer_size=777)))):
    key = name.replace(" ", "_")
    write(hdmf_zarr.NWBZarrIO, tmp(f"sh_hdmf_{key}.nwb.zarr"), make())
    for jobs in (1, 2, 3):
        by_engine(write(nwbzarr.NWBZarrIO, tmp(f"sh_nz{jobs}_{key}.nwb.zarr"), make(), number_of_jobs=jobs),
                  f"{name}, {jobs} jobs", jobs=jobs)
    check(zarr.open_array(tmp(f"sh_nz2_{key}.nwb.zarr/acquisition/ts/data")).shards == (20000, 64),
          f"{name}: the array is sharded")
    same_layout(tmp(f"sh_hdmf_{key}.nwb.zarr"), tmp(f"sh_nz2_{key}.nwb.zarr"), name)
    same_values(tmp(f"sh_hdmf_{key}.nwb.zarr"), tmp(f"sh_nz2_{key}.nwb.zarr"), "acquisition/ts/data", name)
    s1, s2, s3 = (chunk_files(tmp(f"sh_nz{j}_{key}.nwb.zarr"), "acquisition/ts/data") for j in (1, 2, 3))
    check(s1 == s2 == s3 and len(s1) == 6, f"{name}: the 6 shards byte-identical for 1, 2 and 3 jobs")

# Unknown length (maxshape (None, 384)): the array grows band by band. hdmf-zarr
# 0.14 then chunks one row at a time, so the series is short; a 4 MiB budget
# makes bands of 2730 rows (the second one short) that the iterator's 777-row
# buffers straddle.
short = recording(frames=3000, channels=384)


def growing():
    return DataChunkIterator((row for row in short), maxshape=(None, 384), dtype=short.dtype, buffer_size=777)


write(hdmf_zarr.NWBZarrIO, tmp("grow_hdmf.nwb.zarr"), growing())
for jobs in (1, 2, 3):
    by_engine(write(nwbzarr.NWBZarrIO, tmp(f"grow_nz{jobs}.nwb.zarr"), growing(), number_of_jobs=jobs,
                    memory_budget=4 << 20), f"unknown length, {jobs} jobs", jobs=jobs, nbytes=short.nbytes)
check(np.array_equal(read_back(tmp("grow_nz2.nwb.zarr"))[0], short), "unknown length, 2 jobs: reads back equal")
same_layout(tmp("grow_hdmf.nwb.zarr"), tmp("grow_nz2.nwb.zarr"), "unknown length")
same_values(tmp("grow_hdmf.nwb.zarr"), tmp("grow_nz2.nwb.zarr"), "acquisition/ts/data", "unknown length")
g1, g2, g3 = (chunk_files(tmp(f"grow_nz{j}.nwb.zarr"), "acquisition/ts/data") for j in (1, 2, 3))
check(g1 == g2 == g3 and len(g1) == 3000, "unknown length: chunks byte-identical for 1, 2 and 3 jobs")

# -- a user's exception comes back as itself --------------------------------------
it = Gen(data, fail_at=5)
try:
    write(nwbzarr.NWBZarrIO, tmp("fail.nwb.zarr"), it, number_of_jobs=2)
    check(False, "an iterator's exception stops the write")
except MyError as e:
    check(e is it.raised and e.__traceback__ is not None,
          "an iterator's exception is re-raised in the caller as itself (MyError('buffer 5'))")
check(os.path.exists(tmp("fail.nwb.zarr/" + nwbzarr.INCOMPLETE_MARKER)), "a failed write stays marked incomplete")
check(it.calls == 5, f"no buffer is pulled after the failing one ({it.calls} pulled)")

# -- Ctrl-C: a real SIGINT from a worker thread stops the write cleanly ------------
interrupted = threading.Event()
default = signal.getsignal(signal.SIGINT)


def on_sigint(signum, frame):
    interrupted.set()
    return default(signum, frame)  # KeyboardInterrupt, as Python's own handler


def ctrl_c(call):
    if call == 3:
        os.kill(os.getpid(), signal.SIGINT)  # process-directed: the main thread takes it
        check(interrupted.wait(60), "the main thread ran the SIGINT handler while the engine wrote")


signal.signal(signal.SIGINT, on_sigint)
it = Gen(data, on_buffer=ctrl_c)
try:
    write(nwbzarr.NWBZarrIO, tmp("int.nwb.zarr"), it, number_of_jobs=2)
    check(False, "SIGINT stops the write")
except KeyboardInterrupt:
    check(True, "SIGINT during the engine's write raises KeyboardInterrupt in the caller")
signal.signal(signal.SIGINT, default)
check(os.path.exists(tmp("int.nwb.zarr/" + nwbzarr.INCOMPLETE_MARKER)), "an interrupted write stays marked incomplete")
check(json.load(open(tmp("int.nwb.zarr/zarr.json"))).get("consolidated_metadata") is None,
      "an interrupted write is not consolidated")
check(it.calls < it.num_buffers, f"the write stopped early ({it.calls} of {it.num_buffers} buffers)")
write(nwbzarr.NWBZarrIO, tmp("int.nwb.zarr"), data, number_of_jobs=2)
check(np.array_equal(read_back(tmp("int.nwb.zarr"))[0], data), "writing again after Ctrl-C works")

# -- the engine writes a numpy or memmap dataset while hdmf-zarr goes on -----------
real_write_array = nwbzarr._nwbzarr.write_array


def spying(before=None):
    """Wrap the engine's write_array: record the thread and outcome of each
    call; ``before(path, cancel)`` runs first on that thread."""
    calls = []

    def spy(store, path, **kw):
        call = {"thread": threading.current_thread().name, "path": path}
        calls.append(call)
        if before:
            before(store, path, kw.get("cancel"))
        try:
            call["result"] = real_write_array(store, path, **kw)
        except BaseException as e:
            call["error"] = e
            raise
        return call["result"]

    nwbzarr._nwbzarr.write_array = spy
    return calls


def fill_threads():
    return [t for t in threading.enumerate() if t.name.startswith("nwbzarr-fill")]


def spec_cached(store):
    """hdmf-zarr has cached the spec: it went on past the dataset's fill."""
    def wait(_store, _path, _cancel):
        for _ in range(600):
            if os.path.exists(os.path.join(store, "specifications", "core")):
                return
            threading.Event().wait(0.05)
    return wait


try:
    for what, src in (("numpy", data), ("memmap", mm)):
        out = tmp(f"ov_{what}.nwb.zarr")
        calls = spying(spec_cached(out))
        st = write(nwbzarr.NWBZarrIO, out, src, number_of_jobs=2)
        c = calls[0] if len(calls) == 1 else {}
        check(c.get("thread", "").startswith("nwbzarr-fill") and "result" in c,
              f"{what}: the engine wrote on a background thread while hdmf-zarr cached the spec ({c})")
        by_engine(st, f"{what}, overlapped")
        check(np.array_equal(read_back(out)[0], data) and not os.path.exists(out + "/" + nwbzarr.INCOMPLETE_MARKER)
              and json.load(open(out + "/zarr.json")).get("consolidated_metadata") is not None,
              f"{what}, overlapped: write returns with the data in, consolidated, not marked incomplete")
    calls = spying()
    write(nwbzarr.NWBZarrIO, tmp("ov_it.nwb.zarr"), Gen(data), number_of_jobs=2)
    check([c["thread"] for c in calls] == ["MainThread"], "an iterator (Python reads) is written on the caller's thread")

    # the background write fails: raised by write, nothing consolidated, no thread left
    def block_chunks(store, path, _cancel):
        with open(os.path.join(store, path, "c"), "w") as f:
            f.write("not a folder")  # where the engine makes the chunks' folder

    calls = spying(block_chunks)
    try:
        write(nwbzarr.NWBZarrIO, tmp("ov_fail.nwb.zarr"), data, number_of_jobs=2)
        check(False, "a failed background fill fails the write")
    except nwbzarr.NWBZarrError as e:
        check(e is calls[0].get("error") and "acquisition/ts/data" in e.message,
              f"a failed background fill raises its NWBZarrError from write ({e.message})")
    check(os.path.exists(tmp("ov_fail.nwb.zarr/" + nwbzarr.INCOMPLETE_MARKER))
          and json.load(open(tmp("ov_fail.nwb.zarr/zarr.json"))).get("consolidated_metadata") is None,
          "a failed background fill: marked incomplete, not consolidated")
    check(not fill_threads(), "a failed background fill leaves no thread running")

    # Ctrl-C in the main thread while the engine writes in the background
    def interrupt(_store, _path, cancel):
        os.kill(os.getpid(), signal.SIGINT)  # the main thread takes it, in hdmf-zarr's code or waiting
        check(cancel.wait(60), "Ctrl-C in the caller cancels the background fill")

    calls = spying(interrupt)
    try:
        write(nwbzarr.NWBZarrIO, tmp("ov_int.nwb.zarr"), data, number_of_jobs=2)
        check(False, "SIGINT stops an overlapped write")
    except KeyboardInterrupt:
        err = calls[0].get("error")
        check(isinstance(err, nwbzarr.NWBZarrError) and err.code == nwbzarr._nwbzarr.ECANCELED,
              f"SIGINT: KeyboardInterrupt in the caller, the background engine stopped with ECANCELED ({err!r})")
    check(os.path.exists(tmp("ov_int.nwb.zarr/" + nwbzarr.INCOMPLETE_MARKER))
          and json.load(open(tmp("ov_int.nwb.zarr/zarr.json"))).get("consolidated_metadata") is None,
          "an interrupted overlapped write: marked incomplete, not consolidated")
    check(not fill_threads(), "an interrupted overlapped write leaves no thread running")

    # A large dataset that hdmf-zarr writes itself (here strings) waits for
    # the background fill: its whole copy and the engine's budget are never
    # held at once.
    import hdmf_zarr.backend
    from hdmf.common import DynamicTable, VectorData

    events = []
    calls = spying(lambda _store, _path, _cancel: (events.append("fill begins"), threading.Event().wait(0.5)))
    hdmf_list_fill = hdmf_zarr.backend.ZarrIO.__list_fill__

    def recording_fill(self, parent, name, data, options=None):
        if name == "label":
            events.append(("label written, fill done:", "result" in calls[0] if calls else None))
        return hdmf_list_fill(self, parent, name, data, options)

    hdmf_zarr.backend.ZarrIO.__list_fill__ = recording_fill
    try:
        f = nwbfile(data)
        labels = [f"label-{i:06d}" for i in range(20_000)]  # >= engine_min_bytes by the estimate
        f.add_acquisition(DynamicTable(name="zlabels", description="labels",
                                       columns=[VectorData(name="label", description="a label", data=labels)]))
        with nwbzarr.NWBZarrIO(tmp("ov_strings.nwb.zarr"), mode="w") as io:
            io.write(f, number_of_jobs=2)
    finally:
        hdmf_zarr.backend.ZarrIO.__list_fill__ = hdmf_list_fill
    check(events == ["fill begins", ("label written, fill done:", True)],
          f"a large string dataset is written after the background fill, not beside it ({events})")
    with hdmf_zarr.NWBZarrIO(tmp("ov_strings.nwb.zarr"), mode="r") as io:
        back = io.read()
        check(list(back.acquisition["zlabels"]["label"].data[:]) == labels
              and np.array_equal(back.acquisition["ts"].data[:], data), "... and both read back")
finally:
    nwbzarr._nwbzarr.write_array = real_write_array

# -- arguments ---------------------------------------------------------------------
for bad, exc in ((0, ValueError), (1.5, TypeError)):
    try:
        write(nwbzarr.NWBZarrIO, tmp("bad.nwb.zarr"), data, number_of_jobs=bad)
        check(False, f"number_of_jobs={bad!r} is refused")
    except exc:
        check(True, f"number_of_jobs={bad!r} is refused with {exc.__name__}")
by_engine(write(nwbzarr.NWBZarrIO, tmp("all.nwb.zarr"), data, number_of_jobs=-1, memory_budget=8 << 20),
          "number_of_jobs=-1", jobs=nwbzarr._nwbzarr.ncores())
small = np.arange(1000, dtype=np.int16)
with nwbzarr.NWBZarrIO(tmp("small.nwb.zarr"), mode="w") as io:
    io.write(nwbfile(small))
check(io.engine_stats == {} and np.array_equal(read_back(tmp("small.nwb.zarr"))[0], small),
      "a small dataset is left to hdmf-zarr")
check(np.array_equal(read_back(tmp("all.nwb.zarr"))[0], data), "number_of_jobs=-1 and an 8 MiB budget: equal")
check(issubclass(nwbzarr.NWBZarrIO, hdmf_zarr.NWBZarrIO), "nwbzarr.NWBZarrIO is an hdmf_zarr.NWBZarrIO")

finish()
