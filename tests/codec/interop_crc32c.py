"""nwbzarr's crc32c codec against the Python crc32c package (an independent
implementation): for random buffers of many lengths, the C encoding is the
data followed by crc32c.crc32c(data) little-endian, and the C decoder takes
such a buffer back. argv[1] is nz_codec_tool; run with NZ_PY3."""
import random
import subprocess
import sys

import crc32c

TOOL = sys.argv[1]
CFG = '{"id":"crc32c"}'
rng = random.Random(11)
failures = 0
for n in [0, 1, 3, 4, 7, 8, 15, 16, 63, 64, 255, 256, 4095, 4096, 65537, 1 << 20]:
    data = rng.randbytes(n)
    want = data + crc32c.crc32c(data).to_bytes(4, "little")
    got = subprocess.run([TOOL, "encode", CFG, "1"], input=data, capture_output=True, check=True).stdout
    back = subprocess.run([TOOL, "decode", CFG, "1", str(n)], input=want, capture_output=True)
    if got != want:
        print(f"FAIL: {n} bytes: C encoding differs from crc32c package")
        failures += 1
    if back.returncode != 0 or back.stdout != data:
        print(f"FAIL: {n} bytes: C cannot decode the crc32c package's layout: {back.stderr!r}")
        failures += 1
if failures:
    sys.exit(f"{failures} crc32c interop failures")
print("crc32c interop: C matches the crc32c package")
