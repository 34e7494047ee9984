"""What the engine reads a dataset from: the write_array() keyword arguments
for a numpy array, an np.memmap, an h5py or zarr dataset, or an hdmf
DataChunkIterator (docs/python.md, "Sources")."""

import logging
import math
import os
import threading

import h5py
import numpy as np
import zarr

log = logging.getLogger("nwbzarr")

def _native(dtype):
    return dtype.byteorder in ("=", "<", "|")


def _memmap_file(data):
    """(path, offset) when ``data`` is a whole np.memmap (not a view into one)
    reaching the end of its file, so the engine can pread() the file itself."""
    mm = getattr(data, "_mmap", None)
    path = getattr(data, "filename", None)
    if mm is None or not path or data.ndim != 2 or not data.flags.c_contiguous:
        return None
    try:
        # np.memmap maps from `offset` rounded down to the allocation
        # granularity; a view has moved away from that start.
        base = np.frombuffer(mm, dtype=np.uint8).ctypes.data
        import mmap
        start = data.offset - data.offset % mmap.ALLOCATIONGRANULARITY
        if data.ctypes.data != base + (data.offset - start):
            return None
        if os.path.getsize(path) != data.offset + data.nbytes:
            return None
    except (OSError, ValueError, TypeError, BufferError):
        return None
    return os.fspath(path), data.offset


def _hdf5_file(ds, dtype):
    """The file the engine can read the h5py dataset ``ds`` from itself (with
    its own libhdf5, raw chunks decoded on its workers), or None when only
    h5py can read it; why is said in the debug log."""
    def no(why):
        log.debug("%s: read through h5py under the GIL: %s", ds.name, why)
        return None

    f = ds.file
    if f.mode != "r":
        return no(f"{f.filename} is open for writing")
    if f.driver not in ("sec2", "stdio"):
        return no(f"{f.filename} is opened with the {f.driver!r} driver")
    if not os.path.isfile(f.filename):
        return no(f"{f.filename!r} is not a file on disk")
    if ds.dtype.kind not in "biuf" or ds.dtype.newbyteorder("<") != np.dtype(dtype).newbyteorder("<"):
        return no(f"its {ds.dtype} values are written as {dtype}")
    return os.fspath(f.filename)


def h5py_source(ds, dtype):
    """write_array() keywords reading the h5py dataset ``ds`` through h5py
    (under the GIL): for what the engine's HDF5 source cannot read."""
    def read_h5(start, count, out):
        dest = np.frombuffer(out, dtype=dtype).reshape(count)
        ds.read_direct(dest, source_sel=tuple(slice(s, s + c) for s, c in zip(start, count)))
    return {"read": read_h5}


def array_source(data, dtype):
    """write_array() keywords reading the array-like ``data`` as ``dtype``,
    or None when only hdmf-zarr can write it."""
    if isinstance(data, np.ndarray):
        if data.dtype == dtype and _native(data.dtype):
            if isinstance(data, np.memmap):
                raw = _memmap_file(data)
                if raw is not None:
                    return {"raw": (raw[0], raw[1], data.shape[1]), "rows": True}
            if data.flags.c_contiguous:
                return {"buffer": data, "rows": True}
        # a cast or a gather: hdmf-zarr's np.array(data, dtype) copies too
        return {"buffer": np.ascontiguousarray(data, dtype=dtype), "rows": True}
    if isinstance(data, h5py.Dataset):
        file = _hdf5_file(data, dtype)
        if file is not None:
            return {"hdf5": (file, data.name), "fallback": h5py_source(data, dtype)}
        return h5py_source(data, dtype)
    if isinstance(data, zarr.Array):
        def read_zarr(start, count, out):
            dest = np.frombuffer(out, dtype=dtype).reshape(count)
            dest[...] = data[tuple(slice(s, s + c) for s, c in zip(start, count))]
        return {"read": read_zarr}
    return None


def _box(selection, shape, data_shape):
    """A DataChunk's selection as (start, stop) per dimension, or None when it
    is not a box of unit-step slices."""
    if not isinstance(selection, tuple):
        selection = (selection,)
    if len(selection) > len(shape):
        return None
    box = []
    for d, n in enumerate(shape):
        s = selection[d] if d < len(selection) else slice(None)
        if isinstance(s, (int, np.integer)):
            s = slice(int(s), int(s) + 1)
        if not isinstance(s, slice):
            return None
        start, stop, step = s.indices(n)
        if step != 1 or stop < start:
            return None
        box.append((start, stop))
    if math.prod(b - a for a, b in box) != math.prod(data_shape):
        return None
    return box


class IteratorReader:
    """The engine's read(start, count, out) over an AbstractDataChunkIterator.

    The iterator is pulled on whichever worker thread needs rows it has not
    produced yet (under the GIL and this reader's lock); each DataChunk is
    kept until every element of it has been read once, then dropped. The
    write runs with bands=True (one task per row of chunks, across the whole
    array, whole rows read once, tasks taken in order), so each element is
    read exactly once and what is held is bounded by the chunks of the
    tasks in flight plus the iterator's own buffer.
    """

    def __init__(self, iterator, shape, dtype):
        self._it = iterator
        self._shape = tuple(shape)
        self._dtype = dtype
        self._lock = threading.Lock()
        self._pending = []  # [box, array, elements not read yet]

    def _next(self):
        chunk = next(self._it, None)
        if chunk is None or chunk.data is None:
            raise ValueError(f"{type(self._it).__name__} ended before producing every element of "
                             f"the {self._shape} dataset it was declared to fill")
        values = np.asarray(chunk.data)
        box = _box(chunk.selection, self._shape, values.shape)
        if box is None:
            raise ValueError(f"{type(self._it).__name__} produced a DataChunk whose selection "
                             f"{chunk.selection!r} is not a box of the {self._shape} dataset")
        values = values.reshape([b - a for a, b in box])
        entry = [box, values, values.size]
        self._pending.append(entry)
        return entry

    @staticmethod
    def _copy(entry, lo, hi, dest):
        """Copy the part of ``entry`` inside [lo, hi) into ``dest``; elements copied."""
        box, values = entry[0], entry[1]
        inter = [(max(a, l), min(b, h)) for (a, b), l, h in zip(box, lo, hi)]
        if any(a >= b for a, b in inter):
            return 0
        dest[tuple(slice(a - l, b - l) for (a, b), l in zip(inter, lo))] = \
            values[tuple(slice(a - ba, b - ba) for (a, b), (ba, _) in zip(inter, box))]
        n = math.prod(b - a for a, b in inter)
        entry[2] -= n
        return n

    def __call__(self, start, count, out):
        dest = np.frombuffer(out, dtype=self._dtype).reshape(count)
        lo = start
        hi = tuple(s + c for s, c in zip(start, count))
        need = math.prod(count)
        with self._lock:
            got = sum(self._copy(e, lo, hi, dest) for e in self._pending)
            while got < need:
                got += self._copy(self._next(), lo, hi, dest)
            self._pending = [e for e in self._pending if e[2] > 0]
        if got != need:
            raise ValueError(f"{type(self._it).__name__} produced overlapping DataChunks "
                             f"in rows {lo[0]}..{hi[0]}")


class GrowingReader:
    """An iterator of unknown length along dimension 0 (DataChunkIterator
    with maxshape None), read band by band: ``pull(end)`` takes DataChunks
    on the calling thread until rows [0, end) are all known or the iterator
    ends; the engine's workers then read the band from what was pulled
    (``__call__``, rows past the end read as the fill value, so the last
    chunk row is the padded edge chunk zarr stores); ``drop(end)`` forgets
    what lies wholly before ``end``. What is held is one band plus the
    iterator's buffer that straddles it."""

    def __init__(self, iterator, width, dtype, fill):
        self._it = iterator
        self._width = tuple(width)
        self._dtype = dtype
        self._fill = fill
        self._pending = []  # (row_lo, row_hi, values of rows row_lo..row_hi)
        self.rows = 0       # rows known so far
        self.ended = False

    def pull(self, end):
        while not self.ended and self.rows < end:
            chunk = next(self._it, None)
            if chunk is None or chunk.data is None:
                self.ended = True
                break
            values = np.asarray(chunk.data)
            box = _box(chunk.selection, (max(self.rows, _stop0(chunk.selection)),) + self._width,
                       values.shape)
            if box is None or box[0][0] != self.rows or any(b != (0, w) for b, w in zip(box[1:], self._width)):
                raise ValueError(f"{type(self._it).__name__} produced a DataChunk whose selection "
                                 f"{chunk.selection!r} is not whole rows following row {self.rows}")
            self._pending.append((box[0][0], box[0][1], values.reshape((box[0][1] - box[0][0],) + self._width)))
            self.rows = box[0][1]
        return self.rows

    def drop(self, end):
        self._pending = [p for p in self._pending if p[1] > end]

    def __call__(self, start, count, out):
        dest = np.frombuffer(out, dtype=self._dtype).reshape(count)
        lo, hi = start[0], start[0] + count[0]
        cols = tuple(slice(s, s + c) for s, c in zip(start[1:], count[1:]))
        if hi > self.rows:
            dest[max(self.rows, lo) - lo:] = self._fill
        for a, b, values in self._pending:
            a2, b2 = max(a, lo), min(b, hi)
            if a2 < b2:
                dest[a2 - lo:b2 - lo] = values[(slice(a2 - a, b2 - a),) + cols]


def _stop0(selection):
    """The end along dimension 0 of a DataChunk's selection (for its box)."""
    s = selection[0] if isinstance(selection, tuple) else selection
    if isinstance(s, slice) and s.stop is not None:
        return s.stop
    if isinstance(s, (int, np.integer)):
        return int(s) + 1
    return 0
