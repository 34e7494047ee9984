"""The engine seen from outside, through bench/nz_write_raw (a raw file into
one Zarr array with nz_write_array) and Debian's zarr-python 2.13.

roundtrip: zarr-python reads what 1 and 2 jobs wrote: the raw input's values
  and the array's metadata; the chunk files of both are identical; a
  truncated input is refused naming the file.
sigint: Ctrl-C during a write (nz_write_raw sets nz_write_opts.cancel_flag
  from its SIGINT handler) stops it within two seconds with exit status 130
  and a message, leaves no temporary files, and the chunks already stored
  are whole.

usage: interop_engine.py NZ_WRITE_RAW roundtrip|sigint"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import numpy as np
import zarr


def roundtrip(tool, tmp):
    rng = np.random.default_rng(7)
    frames, nch = 4321, 70
    t = np.arange(frames)[:, None]
    data = (200 * np.sin(t / 50.0 + np.arange(nch)[None, :] / 9.0)
            + rng.normal(0, 20, (frames, nch))).astype("<i2")
    raw = os.path.join(tmp, "in.raw")
    with open(raw, "wb") as f:
        f.write(b"H" * 64)
        f.write(data.tobytes())
    outs = []
    for jobs in (1, 2):
        out = os.path.join(tmp, "j%d.zarr" % jobs)
        res = subprocess.run([tool, raw, out, "--channels", str(nch), "--header", "64",
                              "--chunks", "1000,16", "-j", str(jobs), "--json"],
                             capture_output=True, text=True, check=True)
        summary = json.loads(res.stdout)
        assert summary["ok"] and summary["bytes"] == data.nbytes, summary
        assert summary["chunks"] == 5 * 5, summary
        z = zarr.open_array(out, path="data", mode="r")
        assert z.shape == data.shape and z.chunks == (1000, 16), (z.shape, z.chunks)
        assert z.dtype == np.dtype("<i2")
        assert z.compressor.cname == "lz4" and z.compressor.clevel == 5
        np.testing.assert_array_equal(z[:], data)
        outs.append(os.path.join(out, "data"))
    names = sorted(os.listdir(outs[0]))
    assert names == sorted(os.listdir(outs[1]))
    assert len(names) == 26, names  # 25 chunks + .zarray
    for name in names:
        with open(os.path.join(outs[0], name), "rb") as a, open(os.path.join(outs[1], name), "rb") as b:
            assert a.read() == b.read(), name
    # A truncated input is refused with a message naming it.
    with open(raw, "ab") as f:
        f.write(b"x")
    res = subprocess.run([tool, raw, os.path.join(tmp, "bad.zarr"), "--channels", str(nch),
                          "--header", "64", "--chunks", "1000,16"], capture_output=True, text=True)
    assert res.returncode == 1 and raw in res.stderr and "whole number" in res.stderr, res.stderr
    print("ok")


def sigint(tool, tmp):
    nch, frames = 384, 150000
    rng = np.random.default_rng(3)
    data = rng.integers(-300, 300, (frames, nch), dtype="<i2")  # slow to compress
    raw = os.path.join(tmp, "in.raw")
    data.tofile(raw)
    out = os.path.join(tmp, "out.zarr")
    # Noise through blosc-zstd takes seconds in small chunks: ample time to
    # stop it, and each chunk is quick, so stopping is quick.
    proc = subprocess.Popen([tool, raw, out, "--channels", str(nch), "--chunks", "500,384",
                             "--cname", "zstd", "--clevel", "6", "-j", "2"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert proc.poll() is None, "finished before SIGINT: the test needs a slower write"
    start = time.time()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    took = time.time() - start
    assert proc.returncode == 130, (proc.returncode, err)
    assert "canceled" in err, err
    assert took < 2.0, "took %.2f s to stop" % took
    names = os.listdir(os.path.join(out, "data"))
    assert not [n for n in names if "nztmp" in n], names
    assert len(names) - 1 < 300, "everything was written: nothing was canceled"
    z = zarr.open_array(out, path="data", mode="r")
    for name in names:
        if name.startswith("."):
            continue
        r = int(name.split(".")[0])
        np.testing.assert_array_equal(z[r * 500:(r + 1) * 500], data[r * 500:(r + 1) * 500])
    print("ok (stopped in %.2f s, %d chunks kept)" % (took, len(names) - 1))


def main():
    tool, mode = sys.argv[1], sys.argv[2]
    tmp = os.path.join(os.environ.get("NZ_TMP", "/tmp"), "engine_" + mode)
    shutil.rmtree(tmp, ignore_errors=True)
    os.makedirs(tmp)
    {"roundtrip": roundtrip, "sigint": sigint}[mode](tool, tmp)
    shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
