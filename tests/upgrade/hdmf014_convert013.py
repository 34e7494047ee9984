"""The acceptance check `nwbzarr upgrade` is held to, set up on hdmf-zarr
0.14's own v2 -> v3 conversion: hdmf-zarr 0.13 makes v2 files (every
reference file, pickle-coded references, a compound holding references;
run by NZ_PY013, the first argument), 0.14's NWBZarrV2IO.convert_to_v3
converts each, and the v3 file read by 0.14's NWBZarrIO equals, container
by container (tests/readers/nwbcompare.py), its HDF5 source read by pynwb and the v2 file
read by NWBZarrV2IO. Two limits of 0.14 found here: allow_pickle=True alone
does not let NWBZarrV2IO decode pickle under numcodecs 0.17 (its global
NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE gate must be set too), and
NWBZarrV2IO cannot open a v2 compound holding references (the TimeIntervals
`timeseries` column: "Found bad link"), so that file is compared with its
HDF5 source only. A value planted in a converted file, and a reference
retargeted, are reported.

`nwbzarr upgrade` is held to convert_to_v3's output: for every file 0.14
converts, ours has the same groups and arrays, node types, shapes, data
types and attributes (values included), apart from the two documented
differences (docs/format.md, "Upgrading v2 to v3"): convert_to_v3 keeps
v2's `zarr_dtype` attribute where 0.14's own writer (and ours) writes
`_DTYPE`, and gives text arrays fill value 0 (or "0") where 0.14's writer gives "".
Chunks and codecs aside (ours keep v2's, so chunks move unchanged). Ours
also converts the two files 0.14 cannot (tests/upgrade/upgrade_readers.py
reads them back)."""
import os

os.environ["NUMCODECS_ALLOW_UNSAFE_PICKLE_DECODE"] = "1"  # these are files this test made
import json
import shutil
import subprocess
import sys
import warnings

import zarr
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO
from pynwb import NWBHDF5IO

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "readers"))
import nwbcompare  # noqa: E402

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
        diff = nwbcompare.differences(a.read(), b.read())
    if not h5.endswith("pickle_refs.nwb"):
        with NWBZarrV2IO(v2, "r", allow_pickle=True) as a, NWBZarrIO(v3, "r") as b:
            diff += nwbcompare.differences(a.read(), b.read())
    return diff


# A 0.13 array compressed with zlib: 0.14 maps numcodecs' zlib to an
# array-to-array codec ("Expected an ArrayArrayCodec").
# A compound holding references: NWBZarrV2IO cannot resolve it ("Found bad
# link to object /intervals/trials/timeseries"), so 0.14 cannot convert it.
KNOWN_FAILURES = {"ecephys_units.nwb.zarr", "pickle_refs.nwb.zarr"}


def documents(store):
    """store path -> zarr.json, consolidated metadata left out."""
    out = {}
    for d, _, files in os.walk(store):
        if "zarr.json" in files:
            doc = json.load(open(os.path.join(d, "zarr.json")))
            doc.get("attributes", {}).pop("consolidated_metadata", None)
            doc.pop("consolidated_metadata", None)
            out[os.path.relpath(d, store)] = doc
    return out


def layout_differences(ours, theirs):
    """How our upgrade's documents differ from convert_to_v3's, the
    documented differences (_DTYPE for zarr_dtype, text fill "" for 0) set
    aside."""
    a, b = documents(ours), documents(theirs)
    out = [f"{k}: only in {'ours' if k in a else 'theirs'}" for k in sorted(a.keys() ^ b.keys())]
    for k in sorted(a.keys() & b.keys()):
        x, y = a[k], b[k]
        ax, ay = dict(x.get("attributes", {})), dict(y.get("attributes", {}))
        if "zarr_dtype" in ay and "_DTYPE" not in ay:  # convert_to_v3 kept v2's spelling
            ax.pop("_DTYPE", None)
            ay.pop("zarr_dtype")
        if x["node_type"] == "array":
            if x.get("data_type") == "string" and x.get("fill_value") == "" and y.get("fill_value") in (0, "0"):
                y = dict(y, fill_value="")
        for key in ("node_type", "shape", "data_type", "fill_value"):
            if x.get(key) != y.get(key):
                out.append(f"{k}: {key} {x.get(key)!r} vs {y.get(key)!r}")
        if ax != ay:
            out.append(f"{k}: attributes differ in {sorted(n for n in ax.keys() | ay.keys() if ax.get(n) != ay.get(n))}")
    return out


failed = {}
for h5, v2 in pairs:
    v3 = v2[: -len(".nwb.zarr")] + ".v3.nwb.zarr"
    ours = v2[: -len(".nwb.zarr")] + ".ours.nwb.zarr"
    up = subprocess.run([os.environ["NZ_CLI"], "upgrade", "--quiet", v2, ours], capture_output=True, text=True)
    assert up.returncode == 0, f"{v2}: nwbzarr upgrade failed: {up.stderr}"
    try:
        NWBZarrV2IO.convert_to_v3(source_path=v2, dest_path=v3, allow_pickle=True)
    except Exception as e:  # 0.14's own limits: listed below, must stay as they are
        failed[os.path.basename(v2)] = f"{type(e).__name__}: {str(e)[-200:]}"
        continue
    diff = compare(h5, v2, v3)
    assert not diff, f"{v3}: " + "\n".join(diff)
    diff = layout_differences(ours, v3)
    assert not diff, f"{ours} vs convert_to_v3's {v3}:\n" + "\n".join(diff)

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
# The layout comparison finds what it must: an attribute our upgrade lost.
ours = v2[: -len(".nwb.zarr")] + ".ours.nwb.zarr"
doc = os.path.join(ours, "acquisition", "ElectricalSeries", "zarr.json")
text = open(doc).read()
d = json.loads(text)
d["attributes"].pop("description")
open(doc, "w").write(json.dumps(d))
diff = layout_differences(ours, v3)
assert any("acquisition/ElectricalSeries: attributes differ in ['description']" in x for x in diff), diff
open(doc, "w").write(text)
print(f"ok: {len(pairs) - len(failed)} hdmf-zarr 0.13 files converted by 0.14, equal container by container "
      f"and to nwbzarr upgrade's layout; plants found")
