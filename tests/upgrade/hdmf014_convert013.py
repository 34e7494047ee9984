"""The acceptance check `nwbzarr upgrade` is held to, set up on hdmf-zarr
0.14's own v2 -> v3 conversion: hdmf-zarr 0.13 makes v2 files (every
reference file, pickle-coded references, a compound holding references;
run by NZ_PY013, the first argument), 0.14's NWBZarrV2IO.convert_to_v3
converts each, and the v3 file read by 0.14's NWBZarrIO equals, container
by container (containers.py), its HDF5 source read by pynwb and the v2 file
read by NWBZarrV2IO. Two limits of 0.14 found here: allow_pickle=True alone
does not let NWBZarrV2IO decode pickle under numcodecs 0.17 (its global
NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE gate must be set too), and
NWBZarrV2IO cannot open a v2 compound holding references (the TimeIntervals
`timeseries` column: "Found bad link"), so that file is compared with its
HDF5 source only. A value planted in a converted file, and a reference
retargeted, are reported."""
import os

os.environ["NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"] = "1"  # these are files this test made
import shutil
import subprocess
import sys
import warnings

import zarr
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO
from pynwb import NWBHDF5IO

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import containers  # noqa: E402

warnings.simplefilter("ignore")
py013, tmp = sys.argv[1], os.path.join(os.environ["NZ_TMP"], "hdmf014_convert013")
shutil.rmtree(tmp, ignore_errors=True)
made = subprocess.run([py013, os.path.join(here, "hdmf013.py"), tmp], capture_output=True, text=True,
                      env=dict(os.environ, PYTHONWARNINGS="ignore"))
assert made.returncode == 0, made.stderr
pairs = [line.split() for line in made.stdout.splitlines()]
assert len(pairs) >= 8, made.stdout


def compare(h5, v2, v3):
    """Differences of v3 from the HDF5 source and (where 0.14 opens it) v2."""
    with NWBHDF5IO(h5, "r") as a, NWBZarrIO(v3, "r") as b:
        diff = containers.differences(a.read(), b.read())
    if not h5.endswith("pickle_refs.nwb"):
        with NWBZarrV2IO(v2, "r", allow_pickle=True) as a, NWBZarrIO(v3, "r") as b:
            diff += containers.differences(a.read(), b.read())
    return diff


# A 0.13 array compressed with zlib: 0.14 maps numcodecs' zlib to an
# array-to-array codec ("Expected an ArrayArrayCodec").
# A compound holding references: NWBZarrV2IO cannot resolve it ("Found bad
# link to object /intervals/trials/timeseries"), so 0.14 cannot convert it.
KNOWN_FAILURES = {"ecephys_units.nwb.zarr", "pickle_refs.nwb.zarr"}
failed = {}
for h5, v2 in pairs:
    v3 = v2[: -len(".nwb.zarr")] + ".v3.nwb.zarr"
    try:
        NWBZarrV2IO.convert_to_v3(source_path=v2, dest_path=v3, allow_pickle=True)
    except Exception as e:  # 0.14's own limits: listed below, must stay as they are
        failed[os.path.basename(v2)] = f"{type(e).__name__}: {str(e)[-200:]}"
        continue
    diff = compare(h5, v2, v3)
    assert not diff, f"{v3}: " + "\n".join(diff)

print("hdmf-zarr 0.14 cannot convert:", failed)
assert set(failed) == KNOWN_FAILURES, failed

# The comparison finds what it must: a planted value, a retargeted reference.
h5, v2 = [p for p in pairs if p[0].endswith("/reference.nwb")][0]
v3 = v2[: -len(".nwb.zarr")] + ".v3.nwb.zarr"
data = zarr.open_array(os.path.join(v3, "acquisition/ElectricalSeries/data"), mode="r+")
old = data[0, 0]
data[0, 0] = old + 1
diff = compare(h5, v2, v3)
assert any("ElectricalSeries 'ElectricalSeries': field 'data' differs" in d for d in diff), diff
data[0, 0] = old
assert not compare(h5, v2, v3)
group = zarr.open_array(os.path.join(v3, "general/extracellular_ephys/electrodes/group"), mode="r+")
group[0] = "/acquisition/ElectricalSeries"
diff = compare(h5, v2, v3)
assert any("VectorData 'group': field 'data' differs" in d for d in diff), diff
print(f"ok: {len(pairs) - len(failed)} hdmf-zarr 0.13 files converted by 0.14, equal container by container; "
      f"plants found")
