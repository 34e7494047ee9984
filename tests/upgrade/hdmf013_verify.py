"""Our readers (the neutral model under `verify`) read hdmf-zarr 0.13's
Zarr v2 files, pickle-coded object arrays included: `nwbzarr verify
source.nwb hdmf013_export.nwb.zarr` passes for every reference file and
for a file with pickled references and a compound holding references, and
fails, naming the dataset, when a value is planted (a reference retargeted
in a pickled chunk, a compound row's integer changed, a plain value), and
when a chunk's pickle asks to run code, which must not run."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hdmf013  # noqa: E402

cli, tmp = os.environ["NZ_CLI"], os.path.join(os.environ["NZ_TMP"], "hdmf013_verify")
shutil.rmtree(tmp, ignore_errors=True)


def verify(a, b):
    r = subprocess.run([cli, "verify", "--quiet", a, b], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


pairs = hdmf013.make_all(tmp)
npickle = 0
for src, store in pairs:
    rc, out = verify(src, store)
    assert rc == 0, f"{store}: verify failed:\n{out}"
    npickle += len(hdmf013.pickle_arrays(store))
assert npickle >= 4, f"only {npickle} pickle arrays in hdmf-zarr 0.13's files"

src, store = pairs[-1]
assert hdmf013.pickle_arrays(store) == ["acquisition/images/order_of_images", "intervals/trials/timeseries"]


def planted(array, change, needle):
    """Apply change(values) to `array`, expect verify to fail naming it."""
    before = hdmf013.raw_chunk(store, array)
    values = hdmf013.chunk_values(store, array)
    change(values)
    hdmf013.set_values(store, array, values)
    assert hdmf013.raw_chunk(store, array) != before
    rc, out = verify(src, store)
    assert rc == 1, f"{array}: planted value not found (rc {rc}):\n{out}"
    assert needle in out, f"{array}: expected {needle!r} in:\n{out}"
    with open(os.path.join(store, array, "0"), "wb") as f:
        f.write(before)
    assert verify(src, store)[0] == 0


def retarget(v):
    v[0] = dict(v[0], path="/acquisition/ts")


def retarget_row(v):
    row = list(v[1])
    v[1] = (row[0], row[1], dict(row[2], path="/acquisition/images"))


def recount(v):
    v[0] = (v[0][0], v[0][1] + 1, v[0][2])


planted("acquisition/images/order_of_images", retarget, "/acquisition/images/order_of_images")
planted("intervals/trials/timeseries", retarget_row, "/intervals/trials/timeseries")
planted("intervals/trials/timeseries", recount, "/intervals/trials/timeseries")
planted("acquisition/ts/data", lambda v: v.__setitem__(3, -7), "/acquisition/ts/data")

# A pickle that would run `touch`: refused before anything runs.
witness = os.path.join(tmp, "ran")
array = "intervals/trials/timeseries"
before = hdmf013.raw_chunk(store, array)
evil = (b"\x80\x04\x95\x20\x00\x00\x00\x00\x00\x00\x00\x8c\x02os\x94\x8c\x06system\x94\x93\x94"
        + b"\x8c" + bytes([len("touch " + witness)]) + ("touch " + witness).encode() + b"\x94\x85\x94R\x94.")
hdmf013.put_raw_chunk(store, array, evil)
rc, out = verify(src, store)
assert rc == 1 and "global 'os.system' is not" in out and "intervals/trials/timeseries" in out, out
assert not os.path.exists(witness), "the pickle ran code"
with open(os.path.join(store, array, "0"), "wb") as f:
    f.write(before)
print(f"ok: {len(pairs)} files of hdmf-zarr 0.13 verified ({npickle} pickle arrays), plants found")
