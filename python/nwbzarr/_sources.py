"""What the engine reads a dataset from: the write_array() keyword arguments
for a numpy array, an np.memmap, an h5py or zarr dataset, or an hdmf
DataChunkIterator (docs/python.md, "Sources")."""

import math
import os
import threading

import h5py
import numpy as np
import zarr


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
        def read_h5(start, count, out):
            dest = np.frombuffer(out, dtype=dtype).reshape(count)
            data.read_direct(dest, source_sel=tuple(slice(s, s + c) for s, c in zip(start, count)))
        return {"read": read_h5}
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
