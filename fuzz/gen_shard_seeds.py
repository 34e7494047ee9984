#!/usr/bin/python3
"""Regenerate the hand-made seeds of fuzz/corpus/shard_index/ (any python3).

Each seed is <flags byte><nchunks uint32 LE><shard>: flags bit 0 = index at
start, bit 1 = crc32c, bit 2 = big-endian index (see fuzz_shard_index.c).
Good shards of every layout, and hostile ones: offsets past the end,
overflowing ranges, chunks inside the index, overlaps, half-empty entries,
bad checksums, values shorter than their index, absurd chunk counts."""
import os
import struct

from crc32c_ref import crc32c

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "shard_index")
os.makedirs(out, exist_ok=True)
E = 2**64 - 1


def shard(chunks, pairs, start=False, crc=True, big=False, nchunks=None, extra=b""):
    """chunks: the data bytes; pairs: (offset, nbytes) relative to the data
    (None = empty), shifted by the index size when the index is at start."""
    isz = 16 * len(pairs) + (4 if crc else 0)
    fmt = ">QQ" if big else "<QQ"
    idx = b""
    for p in pairs:
        if p is None:
            idx += struct.pack(fmt, E, E)
        else:
            idx += struct.pack(fmt, p[0] + (isz if start else 0), p[1])
    if crc:
        idx += struct.pack("<I", crc32c(idx))
    body = idx + chunks + extra if start else chunks + extra + idx
    flags = int(start) | int(crc) << 1 | int(big) << 2
    return bytes([flags]) + struct.pack("<I", len(pairs) if nchunks is None else nchunks) + body


def seed(name, b):
    with open(os.path.join(out, name), "wb") as f:
        f.write(b)


data = b"AAAABBCCCCCCDDD"
good = [(0, 4), (4, 2), None, (6, 6), (12, 3)]
for start in (False, True):
    for crc in (False, True):
        for big in (False, True):
            seed(f"good_s{int(start)}_c{int(crc)}_b{int(big)}", shard(data, good, start, crc, big))
seed("gap_between_chunks", shard(data, [(0, 4), (6, 6)]))
seed("zero_byte_chunk", shard(data, [(0, 0), (0, 4), (15, 0)]))
seed("all_empty", shard(b"", [None] * 4))
seed("one_chunk", shard(b"x", [(0, 1)]))
seed("bad_past_end", shard(data, [(0, 4), (100, 2)]))
seed("bad_overflow", shard(data, [(5, E - 2)]))
seed("bad_into_index", shard(data, [(12, 5)]))
seed("bad_inside_start_index", shard(data, [(-20, 4)], start=True))
seed("bad_overlap", shard(data, [(6, 4), (0, 4), (3, 2)]))
seed("bad_same_range", shard(data, [(0, 4), (0, 4)]))
seed("bad_half_empty", shard(data, [(0, 4), (E, 2)]))
seed("bad_half_empty_nbytes", shard(data, [(0, 4), (4, E)]))
b = bytearray(shard(data, good))
b[-10] ^= 0x20
seed("bad_checksum", bytes(b))
seed("bad_short", shard(data, good)[:40])
seed("bad_zero_chunks", bytes([2]) + struct.pack("<I", 0) + data)
seed("bad_absurd_count", shard(data, good, nchunks=2**26))
seed("bad_huge_count", shard(data, good, nchunks=2**32 - 1))
seed("bad_count_mismatch", shard(data, good, nchunks=4))
