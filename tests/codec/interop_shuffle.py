"""numcodecs 0.11's Shuffle <-> nwbzarr's, through nz_codec_tool (argv[1]).

Element sizes with their own C loops (2, 4, 8) and generic ones (3, 16),
element counts around the loops' block of 32: the C encoding is
byte-identical to numcodecs', each side decodes the other's. Lengths that
are not whole elements: numcodecs raises ValueError, the tool fails."""
import json
import subprocess
import sys

import numcodecs
import numpy as np

TOOL = sys.argv[1]
rng = np.random.default_rng(11)
failures = []


def tool(mode, cfg, data, expected=None):
    args = [TOOL, mode, json.dumps(cfg), "1"]
    if expected is not None:
        args.append(str(expected))
    return subprocess.run(args, input=data, capture_output=True)


for es in (2, 4, 8, 3, 16):
    cfg = {"id": "shuffle", "elementsize": es}
    codec = numcodecs.get_codec(dict(cfg))
    for count in (0, 1, 31, 32, 33, 100, 4097):
        raw = rng.integers(0, 256, count * es, dtype="u1").tobytes()
        ref = bytes(codec.encode(np.frombuffer(raw, "u1")))
        p = tool("encode", cfg, raw)
        mine = p.stdout
        if p.returncode != 0 or mine != ref:
            failures.append(f"elementsize {es}, {count} elements: C encoding differs "
                            f"({p.stderr.decode().strip()})")
            continue
        p = tool("decode", cfg, ref, len(raw))
        if p.returncode != 0 or p.stdout != raw:
            failures.append(f"elementsize {es}, {count} elements: C decoding differs")
        if bytes(np.frombuffer(codec.decode(mine), "u1")) != raw:
            failures.append(f"elementsize {es}, {count} elements: numcodecs decoding differs")
    for nbytes in (1, es - 1, 33 * es + 1):
        if nbytes % es == 0:
            continue
        raw = rng.integers(0, 256, nbytes, dtype="u1").tobytes()
        try:
            codec.encode(np.frombuffer(raw, "u1"))
            failures.append(f"elementsize {es}, {nbytes} bytes: numcodecs accepted it")
        except ValueError:
            pass
        for mode in ("encode", "decode"):
            p = tool(mode, cfg, raw)
            msg = p.stderr.decode()
            if p.returncode == 0 or f"not a multiple of elementsize {es}" not in msg:
                failures.append(f"elementsize {es}, {nbytes} bytes: C {mode} gave rc "
                                f"{p.returncode}, {msg.strip()!r}")

for f in failures:
    print("FAIL:", f)
if failures:
    sys.exit(f"{len(failures)} shuffle interop failures")
print("shuffle interop: numcodecs and nwbzarr agree")
