"""`nwbzarr convert FIFO` records a stream fed at a fixed rate, and the real
readers can open the file while it is being written:
- while the writer feeds a FIFO block by block, zarr-python 3 and pynwb 4.2 +
  hdmf-zarr 0.14 (NWBZarrIO, or NWBZarrV2IO for v2) open the store again and again; every time
  the series is a prefix of the input, equal to it, and across the openings
  it grows; at end of stream the file is complete and holds all of it;
- a second recording is killed (SIGKILL) part-way: the store still opens
  with at least every frame a reader saw before the kill, equal to the
  input; `nwbzarr repair` says how many frames it kept, and pynwb then reads
  exactly those, equal to the input;
- Ctrl-C (SIGINT) on a third recording finalises what arrived.
The pacing is a handshake, not a clock: the feeder writes the next blocks
only after a reader has seen the series grow, so the test does not depend on
the machine's speed."""
import faulthandler
import os
import pathlib
import re
import shutil
import signal
import subprocess
import threading
import time
import warnings

import numpy as np
import zarr
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO

faulthandler.dump_traceback_later(600, exit=True)  # a hang is a failure, with a traceback
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "readers_record_stream"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)
CH, BLOCK, BLOCKS = 8, 300, 60
rng = np.random.default_rng(5)
x = rng.integers(-2000, 2000, (BLOCK * BLOCKS, CH), dtype="<i2")
DATA = "acquisition/ElectricalSeries/data"


def start(name, fifo, quiet=True):
    out = tmp / name
    os.mkfifo(fifo)
    p = subprocess.Popen([cli, "convert", str(fifo), "-o", str(out), "--channels", str(CH),
                          "--rate", "30000", "--flush-interval", "0.05"] + ["-q"] * quiet,
                         stderr=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return p, out


def frames_zarr(out):
    """Open the series' data with zarr-python 3 (its .zarray: zarr 3.4 cannot
    parse the v2 layout's consolidated object arrays, issue 12)."""
    if not (out / DATA / "zarr.json").exists() and not (out / DATA / ".zarray").exists():
        return None  # not created yet
    a = zarr.open_array(str(out / DATA), mode="r")[:]
    assert np.array_equal(a, x[: a.shape[0]]), f"zarr: {a.shape[0]} frames differ from the input"
    return a.shape[0]


def frames_pynwb(out):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        v3 = (out / "zarr.json").exists()
        with (NWBZarrIO if v3 else NWBZarrV2IO)(str(out), "r") as io:
            es = io.read().acquisition["ElectricalSeries"]
            a = es.data[:]
    assert es.rate == 30000.0
    assert np.array_equal(a, x[: a.shape[0]]), f"pynwb: {a.shape[0]} frames differ from the input"
    return a.shape[0]


def feed(fifo, gate, upto, hold=None):
    """Write blocks; before block b waits until gate(b) allows it. With
    `hold` (two Events: written, release), the FIFO stays open after the last
    block, `written` set, until `release` is: closing it is the end of the
    recording, which convert then finalises."""
    with open(fifo, "wb") as w:
        for b in range(upto):
            gate(b)
            w.write(x[b * BLOCK:(b + 1) * BLOCK].tobytes())
            w.flush()
        if hold is not None:
            hold[0].set()
            hold[1].wait()


# ---- 1. read while recording ------------------------------------------------
seen = []
cond = threading.Condition()


def gate(b):
    # Every 10 blocks, wait until a reader has seen the series part-way.
    with cond:
        while b > 0 and b % 10 == 0 and len(set(s for s in seen if s)) < b // 10:
            cond.wait(0.05)


p, out = start("live.nwb.zarr", tmp / "live.fifo")
feeder = threading.Thread(target=feed, args=(tmp / "live.fifo", gate, BLOCKS), daemon=True)
feeder.start()
while feeder.is_alive():
    n = frames_zarr(out)
    if n:
        m = frames_pynwb(out)
        # pynwb reads the consolidated copy, which a flush updates last
        # (after the arrays' own zarr.json): it may lag zarr-python's view by
        # the flush in progress, but never run ahead of the documents.
        n2 = frames_zarr(out)
        assert m <= n2, f"pynwb saw {m} frames, more than the array's own {n2}"
        with cond:
            seen.append(m)
            cond.notify_all()
    time.sleep(0.01)
feeder.join()
_, err = p.communicate(timeout=120)
assert p.returncode == 0, err
assert not (out / ".nwbzarr-incomplete").exists(), "the finished recording is incomplete"
assert frames_zarr(out) == frames_pynwb(out) == len(x)
distinct = sorted(set(s for s in seen if 0 < s < len(x)))
assert len(distinct) >= 3, f"readers saw too few part-way states: {distinct}"
assert seen == sorted(seen), f"the series shrank between openings: {seen}"
print(f"live: readers opened it {len(seen)} times, {len(distinct)} part-way lengths")

# ---- 2. kill -9, then repair --------------------------------------------------
p, out = start("killed.nwb.zarr", tmp / "killed.fifo")
last = [0]


def gate_kill(b):
    # Wait for a flush of what was fed before going on.
    while b == 30 and last[0] < 20 * BLOCK:
        time.sleep(0.01)


# The FIFO stays open until after the kill: at EOF convert would finalise,
# and on a quiet machine it did so before the kill came (a complete file).
hold = (threading.Event(), threading.Event())
feeder = threading.Thread(target=feed, args=(tmp / "killed.fifo", gate_kill, 31, hold), daemon=True)
feeder.start()
while last[0] < 20 * BLOCK:
    last[0] = frames_zarr(out) or 0
    time.sleep(0.01)
hold[0].wait()
p.send_signal(signal.SIGKILL)
p.wait()
hold[1].set()
feeder.join()
assert (out / ".nwbzarr-incomplete").exists()
n = frames_zarr(out)
assert n >= last[0], f"after kill -9: {n} frames, a reader had seen {last[0]}"
# the consolidated copy (pynwb's view) may lag by the flush the kill cut short
m = frames_pynwb(out)
assert m <= n, f"after kill -9: pynwb sees {m} frames, the array {n}"
r = subprocess.run([cli, "repair", str(out)], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
said = r.stdout.strip()
kept = int(re.search(r"(\d+) frames kept", said).group(1))
assert kept == n, f"repair kept {kept}, the store held {n}"
assert not (out / ".nwbzarr-incomplete").exists()
assert frames_pynwb(out) == kept
r = subprocess.run([cli, "repair", str(out)], capture_output=True, text=True)
assert r.returncode == 1 and "nothing to repair" in r.stderr, r.stderr
print(f"killed: {n} frames flushed; {said}")

# ---- 3. Ctrl-C finalises -------------------------------------------------------
p, out = start("sigint.nwb.zarr", tmp / "sigint.fifo", quiet=False)
w = open(tmp / "sigint.fifo", "wb")
w.write(x[: 10 * BLOCK].tobytes())
w.flush()
while (frames_zarr(out) or 0) < 10 * BLOCK:
    time.sleep(0.01)
p.send_signal(signal.SIGINT)
_, err = p.communicate(timeout=60)
w.close()
assert p.returncode == 0, err
assert "finalising the 3000 frames" in err, err
assert not (out / ".nwbzarr-incomplete").exists()
assert frames_pynwb(out) == 10 * BLOCK
print("sigint: finalised 3000 frames")
