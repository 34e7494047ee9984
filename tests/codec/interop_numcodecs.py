"""numcodecs <-> nwbzarr codecs, through nz_codec_tool (argv[1]); run with
Debian's numcodecs (0.11 on Debian 12) and with the readers venv's (0.17).

For every codec config and sample array: numcodecs' encoding decodes equal
in C, the C encoding decodes equal in numcodecs, and the C config equals
get_config(). blosc, zstd, lz4 and shuffle give byte-identical output (what
zarr-python goldens need). zlib and gzip are libdeflate's bytes, not zlib's:
for them the header equals numcodecs' (gzip after zeroing its mtime), so does
the trailer (adler32, or crc32 and size: the same data was framed), and two
runs give the same bytes.

zstd levels <= 0: numcodecs 0.15 and 0.17 (hdmf-zarr 0.13's and zarr-python
3.4's) pass them to libzstd, where 0 is its default level 3 and negative
levels are its fast modes; nwbzarr does the same. numcodecs 0.11 clamped
them to 1, so with it those bytes are not compared (both decode ways are).

Byte identity of zstd output (zstd, blosc zstd) is required only from the
same libzstd version: a build with another libzstd (-DNZ_ZSTD_ROOT, e.g.
Debian 13's 1.5.7) writes other valid frames. Then those bytes are listed as
not compared, both decode ways still are, and level 0 must still encode as
the C codec's level 3 does."""
import json
import subprocess
import sys

import numcodecs
import numcodecs.zstd  # noqa: F401 (its version numbers)
import numpy as np

TOOL = sys.argv[1]
CONFIGS = [
    {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    {"id": "blosc", "cname": "lz4hc", "clevel": 9, "shuffle": 2, "blocksize": 0},
    {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": -1, "blocksize": 0},
    {"id": "blosc", "cname": "blosclz", "clevel": 1, "shuffle": 0, "blocksize": 0},
    {"id": "blosc", "cname": "zlib", "clevel": 7, "shuffle": 1, "blocksize": 4096},
    {"id": "blosc", "cname": "lz4", "clevel": 0, "shuffle": 1, "blocksize": 0},
    {"id": "zstd", "level": 1}, {"id": "zstd", "level": 5}, {"id": "zstd", "level": 0},
    {"id": "zstd", "level": -2},
    {"id": "lz4", "acceleration": 1}, {"id": "lz4", "acceleration": 10},
    {"id": "zlib", "level": 1}, {"id": "zlib", "level": 9}, {"id": "zlib", "level": -1},
    {"id": "zlib", "level": 0}, {"id": "zlib", "level": 4}, {"id": "zlib", "level": 7},
    {"id": "gzip", "level": 1}, {"id": "gzip", "level": 5}, {"id": "gzip", "level": 9},
    {"id": "gzip", "level": 0}, {"id": "gzip", "level": 8},
    {"id": "shuffle", "elementsize": 4}, {"id": "shuffle", "elementsize": 8},
]
rng = np.random.default_rng(7)
SAMPLES = [np.zeros(0, "<i4"), np.array([42], "u1"), np.arange(8, dtype="<i2")]
for dt in ("u1", "<i2", "<i4", "<f8"):
    n = 24000 // np.dtype(dt).itemsize
    SAMPLES.append((np.arange(n) // 3 + rng.integers(0, 4, n)).astype(dt))
SAMPLES.append(rng.integers(0, 255, 5000, dtype="u1"))  # incompressible

# With `--zstd-only` (the readers venv's numcodecs 0.17, whose Blosc and
# zstd are its own builds, not Debian's libraries the C codecs use) only the
# plain zstd codec is compared: what this run is for is its level semantics.
if "--zstd-only" in sys.argv[2:]:
    CONFIGS = [c for c in CONFIGS if c["id"] == "zstd"]
failures = []
uncompared = []
_probe = SAMPLES[4].tobytes()
ZSTD_LEVEL0_IS_DEFAULT = bytes(numcodecs.Zstd(level=0).encode(_probe)) == \
    bytes(numcodecs.Zstd(level=3).encode(_probe))
print(f"numcodecs {numcodecs.__version__}: zstd level 0 is libzstd's default: "
      f"{ZSTD_LEVEL0_IS_DEFAULT}")


def zstd_of_c():
    out = subprocess.run([TOOL, "versions"], capture_output=True, text=True, check=True).stdout
    return next(v.split()[1] for v in out.strip().split(", ") if v.startswith("zstd "))


C_ZSTD = zstd_of_c()
NC_ZSTD = "%d.%d.%d" % (numcodecs.zstd.MAJOR_VERSION_NUMBER, numcodecs.zstd.MINOR_VERSION_NUMBER,
                        numcodecs.zstd.MICRO_VERSION_NUMBER)
print(f"libzstd: nwbzarr's {C_ZSTD}, numcodecs' {NC_ZSTD}")


def uses_zstd(cfg):
    return cfg["id"] == "zstd" or cfg.get("cname") == "zstd"


def tool(mode, cfg, itemsize, data, expected=None):
    args = [TOOL, mode, json.dumps(cfg), str(itemsize)]
    if expected is not None:
        args.append(str(expected))
    p = subprocess.run(args, input=data, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError(p.stderr.decode())
    return p.stdout


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


for cfg in CONFIGS:
    codec = numcodecs.get_codec(dict(cfg))
    want = codec.get_config()
    if want.get("checksum") is False and "checksum" not in cfg:
        del want["checksum"]  # numcodecs >= 0.12 lists the default; the v2 config omits it
    want_cfg = json.dumps(want, sort_keys=True, separators=(",", ":"))
    got_cfg = tool("config", cfg, 1, b"").decode().strip()
    if got_cfg != want_cfg:
        fail(f"{cfg}: config {got_cfg} != numcodecs {want_cfg}")
    for a in SAMPLES:
        if cfg["id"] == "shuffle" and a.nbytes % cfg["elementsize"]:
            continue
        raw = a.tobytes()
        what = f"{cfg} on {a.dtype}[{a.size}]"
        ref = bytes(codec.encode(a))
        try:
            mine = tool("encode", cfg, a.itemsize, raw)
            back = tool("decode", cfg, a.itemsize, ref, len(raw))
        except RuntimeError as e:
            fail(f"{what}: {e}")
            continue
        if back != raw:
            fail(f"{what}: C decode of numcodecs output differs")
        # numcodecs 0.11's blosc, zstd and lz4 cannot decode even their own
        # encoding of 0 bytes (0 is their error value); zarr never stores one.
        if raw or cfg["id"] not in ("blosc", "zstd", "lz4"):
            try:
                if bytes(np.frombuffer(codec.decode(mine), "u1")) != raw:
                    fail(f"{what}: numcodecs decode of C output differs")
            except Exception as e:  # numcodecs raises various types
                fail(f"{what}: numcodecs cannot decode C output: {e}")
        if cfg["id"] in ("zlib", "gzip"):  # libdeflate's bytes: the framing is numcodecs'
            if cfg["id"] == "gzip":
                ref = ref[:4] + b"\0\0\0\0" + ref[8:]  # numcodecs writes the time
            head, tail = (10, 8) if cfg["id"] == "gzip" else (2, 4)
            if mine[:head] != ref[:head] or mine[-tail:] != ref[-tail:]:
                fail(f"{what}: header {mine[:head].hex()} / trailer {mine[-tail:].hex()} != "
                     f"numcodecs' {ref[:head].hex()} / {ref[-tail:].hex()}")
            if tool("encode", cfg, a.itemsize, raw) != mine:
                fail(f"{what}: two encodings differ")
            continue
        if cfg["id"] == "zstd" and cfg["level"] <= 0 and not ZSTD_LEVEL0_IS_DEFAULT:
            continue
        if mine != ref and uses_zstd(cfg) and C_ZSTD != NC_ZSTD:
            uncompared.append(what)
            if cfg["id"] == "zstd" and cfg["level"] == 0 and ZSTD_LEVEL0_IS_DEFAULT and \
                    mine != tool("encode", dict(cfg, level=3), a.itemsize, raw):
                fail(f"{what}: C level 0 is not its level 3 (libzstd's default)")
        elif mine != ref:
            fail(f"{what}: C encoding ({len(mine)} B) != numcodecs ({len(ref)} B)")

if uncompared:
    print(f"bytes not compared (libzstd {C_ZSTD} here, {NC_ZSTD} in numcodecs; both decode ways "
          f"are): {len(uncompared)} encodings, e.g. {uncompared[0]}")
if failures:
    sys.exit(f"{len(failures)} interop failures")
print("numcodecs interop: all configs match")
