#!/usr/bin/python3
"""Regenerate the hand-made seeds of fuzz/corpus/codec/ (run with Debian's
/usr/bin/python3, which has numcodecs 0.11).

Each seed is "<config JSON>\\0<payload>": a payload encoded by numcodecs itself
(so the decoder starts from real buffers), plus truncated and corrupted
variants and configs that must be refused."""
import json
import os
import subprocess
import sys

import numcodecs
import numpy as np

from crc32c_ref import crc32c

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "codec")
os.makedirs(out, exist_ok=True)

data = (np.arange(96, dtype="<i2") * 7 - 40).tobytes()
text = b"zarr chunk " * 9


def seed(name, config, payload):
    with open(os.path.join(out, name), "wb") as f:
        f.write(json.dumps(config, sort_keys=True).encode() + b"\0" + payload)


codecs = {
    "blosc_lz4_shuffle": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
    "blosc_zstd_bitshuffle": {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
    "blosc_zlib_noshuffle": {"id": "blosc", "cname": "zlib", "clevel": 1, "shuffle": 0, "blocksize": 0},
    "blosc_blosclz_auto": {"id": "blosc", "cname": "blosclz", "clevel": 9, "shuffle": -1, "blocksize": 64},
    "blosc_memcpy": {"id": "blosc", "cname": "lz4", "clevel": 0, "shuffle": 0, "blocksize": 0},
    "zstd_1": {"id": "zstd", "level": 1},
    "zstd_checksum": {"id": "zstd", "level": 3, "checksum": True},
    "lz4_1": {"id": "lz4", "acceleration": 1},
    "zlib_6": {"id": "zlib", "level": 6},
    "gzip_1": {"id": "gzip", "level": 1},
    "shuffle_2": {"id": "shuffle", "elementsize": 2},
    "shuffle_8": {"id": "shuffle", "elementsize": 8},
}
for name, cfg in codecs.items():
    # numcodecs 0.11 has no zstd checksum; newer writers add the key.
    codec = numcodecs.get_codec({k: v for k, v in cfg.items() if k != "checksum"})
    enc = bytes(codec.encode(data))
    seed(name, cfg, enc)
    if name.startswith(("blosc_lz4", "zstd_1", "lz4", "zlib", "gzip")):
        seed(name + "_text", cfg, bytes(codec.encode(text)))
        seed(name + "_truncated", cfg, enc[: len(enc) // 2])
        flipped = bytearray(enc)
        flipped[len(flipped) // 2] ^= 0x5A
        seed(name + "_flipped", cfg, bytes(flipped))

# zstd frames concatenated; a zstd frame without a content size (streamed).
z = numcodecs.Zstd(level=1)
seed("zstd_two_frames", {"id": "zstd", "level": 1}, bytes(z.encode(data)) + bytes(z.encode(text)))
# A zstd frame without a content size, as a streaming writer makes it.
streamed = subprocess.run(["zstd", "-q", "-c", "-"], input=text, stdout=subprocess.PIPE, check=True).stdout
seed("zstd_streamed", {"id": "zstd", "level": 1}, streamed)
# An lz4 header claiming far more than the block can expand to.
seed("lz4_huge_claim", {"id": "lz4", "acceleration": 1}, b"\xff\xff\xff\x7f" + b"\x00" * 8)
# A blosc header claiming 2 GiB from a 32-byte buffer.
seed("blosc_huge_claim", codecs["blosc_lz4_shuffle"], bytes([2, 1, 1, 2]) + (0x7FFFFFF0).to_bytes(4, "little") + (0).to_bytes(4, "little") + (32).to_bytes(4, "little") + bytes(16))
seed("zlib_empty", {"id": "zlib", "level": 1}, b"")
seed("shuffle_odd_length", {"id": "shuffle", "elementsize": 4}, b"abcdefg")


# Zarr v3's crc32c: the data, then its little-endian CRC32C.
crc_cfg = {"id": "crc32c"}
seed("crc32c_end", crc_cfg, data + crc32c(data).to_bytes(4, "little"))
seed("crc32c_empty", {"id": "crc32c", "location": "end"}, crc32c(b"").to_bytes(4, "little"))
seed("crc32c_flipped", crc_cfg, b"Zarr" + data[4:] + crc32c(data).to_bytes(4, "little"))
seed("crc32c_short", crc_cfg, b"\x01\x02\x03")

# Configs that must be refused (the payload does not matter).
bad = {
    "bad_unknown_id": {"id": "bz2", "level": 1},
    "bad_blosc_cname": {"id": "blosc", "cname": "snappy2", "clevel": 5, "shuffle": 1},
    "bad_blosc_clevel": {"id": "blosc", "cname": "lz4", "clevel": 10, "shuffle": 1},
    "bad_blosc_missing": {"id": "blosc", "cname": "lz4", "shuffle": 1},
    "bad_blosc_extra": {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "typesize": 4},
    "bad_zstd_type": {"id": "zstd", "level": "3"},
    "bad_zlib_level": {"id": "zlib", "level": 11},
    "bad_lz4_float": {"id": "lz4", "acceleration": 1.5},
    "bad_shuffle_negative": {"id": "shuffle", "elementsize": -2},
    "bad_shuffle_zero": {"id": "shuffle", "elementsize": 0},
    "bad_id_type": {"id": 7},
    "bad_crc32c_start": {"id": "crc32c", "location": "start"},
}
for name, cfg in bad.items():
    seed(name, cfg, data[:16])
with open(os.path.join(out, "bad_not_object"), "wb") as f:
    f.write(b'["blosc"]\0')
with open(os.path.join(out, "bad_no_separator"), "wb") as f:
    f.write(b'{"id": "zstd", "level": 1}')
