"""Python wrappers for the nwbzarr commands (docs/python.md, "Commands").

export and verify call the library in this process (the GIL released);
convert, info and upgrade run the bundled ``nwbzarr`` program, since their
logic (recordings, side-cars, session JSON, the tree printer) lives in the
CLI. Every failure raises NWBZarrError with the program's or library's own
message and code.
"""

import json
import os
import subprocess
import sys

from . import _nwbzarr
from ._lib import NWBZarrError, cli_path, resolve_jobs

_COMPRESSORS = {
    "blosc-lz4": ("blosc", "lz4"),
    "blosc-zstd": ("blosc", "zstd"),
    "zstd": ("zstd", None),
    "lz4": ("lz4", None),
    "zlib": ("zlib", None),
    "gzip": ("gzip", None),
    "none": ("none", None),
}
_DEFAULT_CLEVEL = {"blosc": 5, "zstd": 3, "zlib": 1, "gzip": 1, "lz4": 0, "none": 0}


def _run(command, args, expect_json=False, ok=(0,)):
    """Run ``nwbzarr COMMAND ARGS``; NWBZarrError (its stderr) on failure."""
    proc = subprocess.run([cli_path(), command, *args], capture_output=True, text=True)
    if proc.returncode not in ok:
        message = proc.stderr.strip() or f"nwbzarr {command} exited with status {proc.returncode}"
        code = _nwbzarr.EINCOMPLETE if proc.returncode == 3 else _nwbzarr.EINVAL
        raise NWBZarrError(code, message)
    return proc


def _flags(options):
    """keyword arguments as CLI flags: a_b=1 -> --a-b 1, True -> --a-b, False/None -> nothing."""
    out = []
    for key, value in options.items():
        if value is None or value is False:
            continue
        flag = "--" + key.replace("_", "-")
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            out += [flag, ",".join(str(v) for v in value)]
        else:
            out += [flag, str(value)]
    return out


def convert(recording, output, *, number_of_jobs=-1, **options):
    """``nwbzarr convert RECORDING -o OUTPUT``: every other option of the
    command as a keyword (``channels=384, rate=30000.0, compressor="zstd"``,
    ``overwrite=True`` ...). Returns the command's JSON summary as a dict."""
    args = [os.fspath(recording), "-o", os.fspath(output), "-j", str(resolve_jobs(number_of_jobs)),
            "--quiet", "--json", *_flags(options)]
    return json.loads(_run("convert", args).stdout)


def info(path):
    """``nwbzarr info PATH --json``: one dict per node. An incomplete file
    raises NWBZarrError with code EINCOMPLETE."""
    proc = _run("info", [os.fspath(path), "--json"])
    return [json.loads(line) for line in proc.stdout.splitlines() if line.strip()]


def upgrade(src, dst, *, number_of_jobs=-1, **options):
    """``nwbzarr upgrade SRC DST``: a Zarr v2 NWB file (hdmf-zarr <= 0.13's,
    or ``--zarr-format 2``) rewritten as Zarr v3, then verified. Every other
    option of the command as a keyword (``compressor="zstd"``,
    ``shards=(r, c)``, ``overwrite=True`` ...). Returns the command's JSON
    summary as a dict (``chunks_reused``, ``chunks_recoded``, ...)."""
    args = [os.fspath(src), "-o", os.fspath(dst), "-j", str(resolve_jobs(number_of_jobs)), "--quiet",
            "--json", *_flags(options)]
    return json.loads(_run("upgrade", args).stdout)


def export(src, dst, *, number_of_jobs=-1, overwrite=False, compressor=None, clevel=None,
           memory_budget=0, auto_chunks=False, copy_links=False):
    """Export the NWB HDF5 file ``src`` to the NWB-Zarr store ``dst`` with
    the library's exporter (``nwbzarr export``), in parallel. ``compressor``
    is one of the CLI's names (default: zstd level 0, hdmf-zarr 0.14's; a ``clevel``
    alone applies to blosc-lz4), or ``"keep"``: each dataset's HDF5 filters
    as its Zarr codecs and its HDF5 chunks moved as stored (``--compressor
    keep``; no ``clevel``, stats ``stored_chunks`` and ``keep_fallbacks``);
    ``memory_budget``
    bytes of data in flight (0 = the engine's default); ``copy_links`` copies
    what HDF5 external links lead to into ``dst`` (``--copy-links``) instead
    of exporting the linked files beside it. Returns its stats."""
    comp = None
    keep = compressor == "keep"
    if keep and clevel is not None:
        raise ValueError('clevel does not apply to compressor="keep" (the levels are the HDF5 file\'s)')
    if not keep and (compressor is not None or clevel is not None):
        name = compressor or "blosc-lz4"
        if name not in _COMPRESSORS:
            raise ValueError(f"compressor {name!r}: use one of {', '.join(_COMPRESSORS)}, keep")
        cid, cname = _COMPRESSORS[name]
        comp = (cid, cname, _DEFAULT_CLEVEL[cid] if clevel is None else int(clevel), 1, 0)
    return _nwbzarr.export_hdf5(os.fspath(src), os.fspath(dst), jobs=resolve_jobs(number_of_jobs),
                                overwrite=overwrite, compressor=comp, buffer_size=memory_budget,
                                auto_chunks=auto_chunks, copy_links=copy_links, keep_filters=keep)


def verify(a, b, *, number_of_jobs=-1, max_diffs=0):
    """Compare two NWB files (HDF5 or Zarr) as ``nwbzarr verify`` does: the
    list of differences, each "object: how it differs" (empty when equal)."""
    return _nwbzarr.verify(os.fspath(a), os.fspath(b), jobs=resolve_jobs(number_of_jobs), max_diffs=max_diffs)


def main():
    """The ``nwbzarr`` console script: the bundled program itself."""
    os.execv(cli_path(), [cli_path(), *sys.argv[1:]])
