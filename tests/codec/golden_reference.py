"""Every compressed chunk of the hdmf-zarr reference stores ($NZ_REF/zarr,
tests/data/zarr) decodes with our codecs to the size .zarray implies, and
re-encodes byte-identically (what nwbzarr must do to match zarr-python);
zlib and gzip, whose bytes are libdeflate's and not zlib's, re-encode to a
stream with the stored one's header and trailer that decodes back equal.
Object-codec filters (vlen-utf8, pickle, json2) belong to the zarr layer and
are skipped; their compressor input is bytes (blosc typesize 1)."""
import glob
import json
import os
import subprocess
import sys

import numpy as np

TOOL = sys.argv[1]
ROOT = os.path.join(os.environ["NZ_REF"], "zarr")
OURS = {"blosc", "zstd", "lz4", "zlib", "gzip", "shuffle"}
if not os.path.isdir(ROOT):
    sys.exit(f"no reference stores at {ROOT}")


DEFLATE_FRAMING = {"zlib": (2, 4), "gzip": (10, 8)}  # header, trailer bytes


def same_encoding(cfg, itemsize, again, stored, raw):
    """Byte-identical, or for zlib/gzip: the same framing and contents."""
    if cfg["id"] not in DEFLATE_FRAMING:
        return again == stored
    head, tail = DEFLATE_FRAMING[cfg["id"]]
    if cfg["id"] == "gzip":
        stored = stored[:4] + b"\0\0\0\0" + stored[8:]  # the mtime numcodecs wrote
    return (again[:head] == stored[:head] and again[-tail:] == stored[-tail:]
            and tool("decode", cfg, itemsize, again) == raw)


def tool(mode, cfg, itemsize, data, expected=0):
    p = subprocess.run([TOOL, mode, json.dumps(cfg), str(itemsize), str(expected)],
                       input=data, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode().strip())
    return p.stdout


failures, chunks = [], 0
for zarray in sorted(glob.glob(os.path.join(ROOT, "**", ".zarray"), recursive=True)):
    meta = json.load(open(zarray))
    if meta["compressor"] is None:
        continue
    filters = meta["filters"] or []
    ours = [f for f in filters if f["id"] in OURS]
    dt = meta["dtype"]
    obj = dt == "|O" or len(ours) != len(filters)
    itemsize = 1 if obj or filters else np.dtype(
        [tuple(x) for x in dt] if isinstance(dt, list) else dt).itemsize
    expected = 0 if obj or filters else int(np.prod(meta["chunks"])) * itemsize
    folder = os.path.dirname(zarray)
    for dirpath, dirs, files in os.walk(folder):
        dirs[:] = [] if meta.get("dimension_separator", ".") == "." else dirs
        for name in files:
            if name.startswith("."):
                continue
            path = os.path.join(dirpath, name)
            stored = open(path, "rb").read()
            chunks += 1
            try:
                raw = tool("decode", meta["compressor"], itemsize, stored, expected)
                again = tool("encode", meta["compressor"], itemsize, raw)
                if not same_encoding(meta["compressor"], itemsize, again, stored, raw):
                    failures.append(f"{path}: re-encoding differs")
                for f in reversed(ours):
                    inner = tool("decode", f, itemsize, raw)
                    if not same_encoding(f, itemsize, tool("encode", f, itemsize, inner), raw, inner):
                        failures.append(f"{path}: filter {f} re-encoding differs")
                    raw = inner
            except RuntimeError as e:
                failures.append(f"{path}: {e}")

for f in failures:
    print("FAIL:", f)
print(f"{chunks} reference chunks checked, {len(failures)} failures")
sys.exit(1 if failures or not chunks else 0)
