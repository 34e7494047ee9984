"""nwbzarr.NWBZarrIO: hdmf-zarr 0.14's NWBZarrIO with every large dataset's
chunks written by the C engine on threads (docs/python.md).

hdmf-zarr still walks the builders, writes every group, attribute, link,
reference and small dataset, and creates each large array's metadata with
zarr-python exactly as it would; only the filling of the chunks changes:
where hdmf-zarr runs ``dset[:] = np.array(data)`` (numpy, memmap, h5py
datasets) or drains a DataChunkIterator, the engine fills the array that
zarr-python just created. The file therefore has hdmf-zarr's layout and
bytes. The override points are the two hdmf-zarr helpers that write data,
``__list_fill__`` and ``__setup_chunked_dataset__``.
"""

import json
import logging
import math
import os
import warnings
from pathlib import Path

import numpy as np
import zarr
from hdmf.data_utils import AbstractDataChunkIterator
from hdmf.utils import docval, get_docval, popargs
from hdmf_zarr.nwb import NWBZarrIO as _HdmfNWBZarrIO

from . import _nwbzarr
from ._lib import NWBZarrError, resolve_jobs
from ._overlap import Overlap
from ._sources import GrowingReader, IteratorReader, array_source

log = logging.getLogger("nwbzarr")

_BUDGET_ARG = {
    "name": "memory_budget",
    "type": int,
    "doc": "bytes of data in flight in the engine, over all workers (0 = the engine's default, 160 MiB)",
    "default": 0,
}
_JOBS_DOC = ("Number of threads the nwbzarr engine writes each large dataset with: 1 serial, "
             "-1 every core, -2 all but one, ... Any data source is parallel (no pickling).")


def _with_jobs_doc(args):
    out = []
    for a in args:
        if a["name"] == "number_of_jobs":
            a = dict(a, doc=_JOBS_DOC)
        out.append(a)
    return out


class NWBZarrIO(_HdmfNWBZarrIO):
    """Drop-in for ``hdmf_zarr.NWBZarrIO`` whose write and export fill large
    datasets with the nwbzarr engine. Same constructor; ``write`` and
    ``export`` take ``number_of_jobs`` (threads) and ``memory_budget``."""

    #: Datasets smaller than this many bytes are left to hdmf-zarr.
    engine_min_bytes = 1 << 20

    _nz_jobs = None  # set while write/export runs
    _nz_overlap = None  # write's background fills (_overlap.py)

    #: After write/export: {array path: the engine's stats} for every dataset
    #: the engine wrote (bytes, chunks, tasks, jobs = threads used, elapsed_s),
    #: and {array path: the library's reason} for each large one that
    #: zarr-python wrote because the engine lacks its codec.
    engine_stats = None
    engine_fallbacks = None

    @docval(*_with_jobs_doc(get_docval(_HdmfNWBZarrIO.write)), _BUDGET_ARG)
    def write(self, **kwargs):
        jobs, budget, consolidate = popargs("number_of_jobs", "memory_budget", "consolidate_metadata", kwargs)
        with self._nz_session(jobs, budget, overlap=True):
            # hdmf-zarr's write, consolidating only once the data are in
            # (a failed write has no consolidated metadata)
            super().write(**kwargs, number_of_jobs=1, consolidate_metadata=False)
            self._nz_overlap.finish()
            if consolidate:
                zarr.consolidate_metadata(store=self.path)

    @docval(*get_docval(_HdmfNWBZarrIO.export),
            {"name": "number_of_jobs", "type": int, "doc": _JOBS_DOC, "default": 1}, _BUDGET_ARG)
    def export(self, **kwargs):
        jobs, budget = popargs("number_of_jobs", "memory_budget", kwargs)
        with self._nz_session(jobs, budget):
            super().export(**kwargs)

    # -- one write or export -------------------------------------------------

    def _nz_session(self, jobs, budget, overlap=False):
        io = self

        class Session:
            def __enter__(self):
                if budget < 0:
                    raise ValueError("memory_budget must be >= 0")
                io._nz_jobs = resolve_jobs(jobs)
                io._nz_budget = budget
                io.engine_stats = {}
                io.engine_fallbacks = {}
                io._nz_marker = io._nz_mark_incomplete()
                io._nz_overlap = Overlap() if overlap else None
                # zarr's consolidation names every file it does not know.
                self.warnings = warnings.catch_warnings()
                self.warnings.__enter__()
                warnings.filterwarnings("ignore", message=f"Object at {_nwbzarr.INCOMPLETE_MARKER} ")

            def __exit__(self, exc_type, exc, tb):
                try:
                    if io._nz_overlap is not None:
                        # on success finish() emptied it; on failure stop the fills
                        io._nz_overlap.stop() if exc_type is not None else io._nz_overlap.close()
                finally:  # a Ctrl-C while waiting: still reset, but left marked
                    io._nz_overlap = None
                    self.warnings.__exit__(exc_type, exc, tb)
                    io._nz_jobs = None
                if exc_type is None and io._nz_marker:
                    os.remove(io._nz_marker)
                return False

        return Session()

    def _nz_store(self):
        """The directory of a local store, or None (hdmf-zarr writes then)."""
        return os.fspath(self.path) if isinstance(self.path, (str, Path)) else None

    def _nz_mark_incomplete(self):
        """Put the library's incomplete marker in the store for the duration
        of the write: an interrupted or failed write stays marked (and has
        no consolidated metadata, which hdmf-zarr writes last)."""
        root = self._nz_store()
        if root is None or self.mode == "r":
            return None
        self._file  # opens (and in mode "w" clears) the store first
        path = os.path.join(root, _nwbzarr.INCOMPLETE_MARKER)
        with open(path, "w") as f:
            json.dump({"tool": "nwbzarr.NWBZarrIO", "version": _nwbzarr.version}, f)
        return path

    def _nz_fill(self, dset, source):
        """Fill every chunk of the zarr array ``dset`` from ``source``
        (write_array keywords; an HDF5 source carries the h5py one to fall
        back on when the engine's libhdf5 lacks one of its filters) with
        the engine, now, after the background fills (one engine write at a
        time: the memory budget holds)."""
        if self._nz_overlap is not None:
            self._nz_overlap.finish()
        stats = self._nz_engine(dset.path, source)()
        self.engine_stats[dset.path] = stats
        return stats

    def _nz_engine(self, path, source):
        """The engine's write_array of ``source`` into the array ``path``, as
        a function of ``cancel`` (a threading.Event for a background thread,
        or None) to run on any thread; its settings are read now."""
        skip = not zarr.config.get("array.write_empty_chunks", False)
        source = dict(source)
        fallback = source.pop("fallback", None)
        store = self._nz_store()
        kw = {"jobs": self._nz_jobs, "buffer_size": self._nz_budget, "skip_empty": skip}

        def run(cancel=None):
            try:
                return _nwbzarr.write_array(store, path, **kw, cancel=cancel, **source)
            except NWBZarrError as e:
                if fallback is None or e.code != _nwbzarr.EUNSUPPORTED:
                    raise
                log.debug("%s: read through h5py under the GIL: %s", path, e.message)
                return _nwbzarr.write_array(store, path, **kw, cancel=cancel, **fallback)
        return run

    def _nz_fill_later(self, dset, source, data, target):
        """Fill ``dset`` on the background thread (a source that needs no
        Python: nothing runs under the GIL there); a codec the engine lacks
        is written by zarr-python from ``data`` when the write finishes."""
        path = dset.path

        def done(stats, error):
            if error is None:
                self.engine_stats[path] = stats
            else:
                self._nz_fallback(dset, error, data, target)

        self._nz_overlap.submit(self._nz_engine(path, source), done)

    def _nz_wants(self, shape, dtype):
        """Whether a dataset of this shape and numpy dtype goes to the engine."""
        if self._nz_jobs is None or self._nz_store() is None or dtype is None:
            return False
        if dtype.kind not in "biuf" or len(shape) == 0:
            return False
        return math.prod(shape) * dtype.itemsize >= self.engine_min_bytes

    # -- hdmf-zarr's override points -----------------------------------------

    def __list_fill__(self, parent, name, data, options=None):
        """Arrays, memmaps, h5py and zarr datasets of numbers: hdmf-zarr's
        metadata, the engine's chunks."""
        options = options or {}
        io_settings = options.get("io_settings") or {}
        dtype = options.get("dtype")
        if dtype is np.ndarray:
            dtype = None
        shape = getattr(data, "shape", None)
        if shape is None or getattr(data, "dtype", None) is None or "shape" in io_settings:
            return self._nz_hdmf_fill(parent, name, data, options)
        if not isinstance(dtype, type):
            dtype = self.__resolve_dtype__(dtype, data)
        try:
            target = np.dtype(dtype)
        except TypeError:
            target = None
        source = array_source(data, target) if self._nz_wants(tuple(shape), target) else None
        if source is None:
            return self._nz_hdmf_fill(parent, name, data, options)
        # What hdmf-zarr's __list_fill__ does for numbers, up to the write.
        dset = parent.require_array(name, shape=tuple(shape), dtype=dtype, **io_settings)
        dset.attrs["_DTYPE"] = self.__serial_dtype__(dtype)
        if self._nz_overlap is not None and ("raw" in source or source.get("buffer") is data):
            self._nz_fill_later(dset, source, data, target)
            return dset
        try:
            self._nz_fill(dset, source)
        except NWBZarrError as e:
            self._nz_fallback(dset, e, data, target)
        return dset

    def _nz_fallback(self, dset, error, data, target):
        """After the engine's ``error`` filling ``dset``: a codec the engine
        lacks (EUNSUPPORTED) is written by zarr-python from ``data``; any
        other error is raised."""
        if not (isinstance(error, NWBZarrError) and error.code == _nwbzarr.EUNSUPPORTED):
            raise error
        self.engine_fallbacks[dset.path] = error.message
        dset[...] = np.asarray(data, dtype=target)

    def _nz_hdmf_fill(self, parent, name, data, options):
        """hdmf-zarr's own __list_fill__ (strings, objects, a source the
        engine cannot read). A large one waits for the background fills
        first: hdmf-zarr holds a whole copy of it, so the two at once would
        need that copy plus the engine's budget."""
        if self._nz_overlap is not None and self._nz_large(data):
            self._nz_overlap.finish()
        return super().__list_fill__(parent, name, data, options)

    def _nz_large(self, data):
        """Whether hdmf-zarr's copy of ``data`` may reach engine_min_bytes:
        its nbytes, else at least a reference and a small object (64
        bytes) per element of a sequence."""
        n = getattr(data, "nbytes", None)
        if n is None:
            try:
                n = len(data) * 64
            except TypeError:
                return False
        return n >= self.engine_min_bytes

    def _copy_array(self, source, dest_group, name):
        """A zarr array copied (export from Zarr, ZarrDataIO(link_data=False)):
        the array hdmf-zarr's _copy_array creates, chunks by the engine."""
        dtype = np.dtype(source.dtype)
        if not self._nz_wants(tuple(source.shape), dtype) or array_source(source, dtype) is None:
            return super()._copy_array(source, dest_group, name)
        kwargs = {"name": name, "shape": source.shape, "chunks": source.chunks, "dtype": dtype}
        # as hdmf-zarr: v2 sources' numcodecs codecs mapped to zarr v3 ones
        for key in ("compressors", "filters"):
            codecs = getattr(source, key, None)
            if codecs:
                codecs = self._to_v3_codecs(codecs)
                if codecs:
                    kwargs[key] = codecs
        if hasattr(source, "fill_value"):
            kwargs["fill_value"] = source.fill_value
        dest = dest_group.create_array(**kwargs)
        try:
            self._nz_fill(dest, array_source(source, dtype))
        except NWBZarrError as e:
            if e.code != _nwbzarr.EUNSUPPORTED:
                raise
            self.engine_fallbacks[dest.path] = e.message
            dest[...] = source[...]
        for k, v in source.attrs.items():
            dest.attrs[k] = v
        return dest

    def __setup_chunked_dataset__(self, parent, name, data, options=None):
        """A DataChunkIterator of known shape is drained by the engine here
        (a sharded target shard row by shard row); hdmf-zarr's queue then
        finds it exhausted."""
        dset = super().__setup_chunked_dataset__(parent, name, data, options)
        maxshape = getattr(data, "maxshape", None)
        if (isinstance(data, AbstractDataChunkIterator) and maxshape is not None
                and tuple(maxshape) == tuple(dset.shape) and self._nz_wants(dset.shape, dset.dtype)):
            self._nz_fill(dset, {"read": IteratorReader(data, dset.shape, dset.dtype), "bands": True,
                                 "rows": True})
        elif self._nz_grows(data, dset):
            self._nz_fill_growing(dset, data)
        return dset

    def _nz_grows(self, data, dset):
        """An iterator of unknown length along dimension 0 only, into an
        unsharded array of numbers: the engine writes it as it grows."""
        maxshape = getattr(data, "maxshape", None)
        return (isinstance(data, AbstractDataChunkIterator) and maxshape is not None and len(maxshape) >= 1
                and maxshape[0] is None and tuple(maxshape[1:]) == tuple(dset.shape[1:])
                and None not in maxshape[1:] and getattr(dset, "shards", None) is None
                and self._nz_wants((1 << 62,) + tuple(dset.shape[1:]), dset.dtype))

    def _nz_fill_growing(self, dset, data):
        """Pull a band of whole chunk rows (half the memory budget), publish
        a shape that holds it (zarr-python's resize, as hdmf-zarr's own
        writes do), write that band's chunk rows only (the engine's part k
        of k+1 of a plan of one chunk row per task), and so on; the last
        band's rows past the end read as the fill value, so its edge chunk
        is the padded one zarr stores, and the final shape is the rows the
        iterator produced."""
        width = tuple(dset.shape[1:])
        row_bytes = math.prod(width) * dset.dtype.itemsize
        chunk_rows = dset.chunks[0]
        budget = self._nz_budget or (160 << 20)
        band = max(1, budget // 2 // max(1, row_bytes * chunk_rows)) * chunk_rows
        reader = GrowingReader(data, width, dset.dtype, dset.fill_value)
        total = None
        k = 0
        while True:
            end = (k + 1) * band
            if reader.pull(end) <= k * band:
                break
            dset.resize((end,) + width)
            st = self._nz_fill(dset, {"read": reader, "bands": True, "rows": True, "part": k, "nparts": k + 1})
            if total is None:
                total = dict(st)
            else:
                for key in ("bytes", "chunks", "tasks", "elapsed_s"):
                    total[key] += st[key]
                total["jobs"] = max(total["jobs"], st["jobs"])
            reader.drop(end)
            k += 1
            if reader.ended:
                break
        if total is not None:
            dset.resize((reader.rows,) + width)
            # the last band's padding is neither data nor stored chunks
            total["bytes"] = reader.rows * row_bytes
            total["chunks"] = math.prod(-(-n // c) for n, c in zip(dset.shape, dset.chunks))
            self.engine_stats[dset.path] = total
