"""Kernel time of writing chunk files in one write(2) against pieces of at
most 1 MiB, the size the library's store (src/store/dirstore.c, WRITE_PIECE)
and the bare loops (bench/bare_io.h) write in. No nwbzarr code runs here:
it measures the machine, so that the choice can be rechecked on another
kernel or filesystem.

usage: python bench/bench_pieces.py DIR [TOTAL_MB=600] [REPS=5]
DIR must be on the disk under test; it is emptied and removed. Each variant
writes TOTAL_MB of random bytes as files of one size, in writes of one
size; the variants run interleaved REPS times (rm and sync before each), and
the median system time of each is printed (it is the cost that moves; user
time is nil).
"""

import os
import resource
import shutil
import statistics
import sys

MIB = 1 << 20
VARIANTS = [  # (file bytes, bytes per write)
    (6_500_000, 6_500_000), (6_500_000, MIB), (6_500_000, 2 * MIB), (6_500_000, 4 * MIB),
    (1_800_000, 1_800_000), (1_800_000, MIB),
    (12_000_000, 12_000_000), (12_000_000, MIB),
]


def one(d, size, piece, total):
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    os.sync()
    buf = memoryview(os.urandom(size))
    r0 = resource.getrusage(resource.RUSAGE_SELF)
    for i in range(max(1, total // size)):
        fd = os.open(os.path.join(d, str(i)), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        try:
            for off in range(0, size, piece):
                os.write(fd, buf[off:off + piece])
        finally:
            os.close(fd)
    r1 = resource.getrusage(resource.RUSAGE_SELF)
    return r1.ru_stime - r0.ru_stime


def main():
    if len(sys.argv) < 2:
        raise SystemExit(__doc__)
    d = os.path.abspath(sys.argv[1])
    total = int(sys.argv[2]) * MIB if len(sys.argv) > 2 else 600 * MIB
    reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    got = {v: [] for v in VARIANTS}
    try:
        for _ in range(reps):
            for v in VARIANTS:
                got[v].append(one(d, *v, total))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"# {total // MIB} MiB per variant, {reps} interleaved runs, {os.uname().release}")
    print("file_bytes,write_bytes,median_sys_s,runs")
    for (size, piece), t in got.items():
        print(f"{size},{piece},{statistics.median(t):.2f},{' '.join(f'{x:.2f}' for x in t)}")


if __name__ == "__main__":
    main()
