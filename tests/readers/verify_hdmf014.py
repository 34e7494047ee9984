"""verify reads hdmf-zarr 0.14's own Zarr v3 export (made here, at test
time, by NWBZarrIO.export from NWBHDF5IO) of every reference file and of a
pynwb 4.2 file whose trials hold a `timeseries` column (a compound of
int32, int32 and an object reference: 0.14's `struct` + `_REFERENCE_FIELDS`).

What 0.14 writes differs from its HDF5 source where pynwb 4.2 migrates the
file to the schema it writes with: nwb_version becomes 2.11.0 (and
/specifications holds that schema), the electrodes table becomes an
ElectrodesTable, a subject's age gets the new default `reference`. verify
must report exactly those differences and no other; with the data, links,
references and attributes it does compare, a difference planted in any of
them must be named."""
import json
import os
import pathlib
import re
import shutil
import subprocess
import warnings
from datetime import datetime, timezone

import numpy as np
import zarr
from hdmf_zarr import NWBZarrIO
from pynwb import NWBHDF5IO, NWBFile, TimeSeries

warnings.simplefilter("ignore")  # schema-migration notes: they are the subject, checked below
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "verify_hdmf014"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)

VERSION = re.compile(r"^/: attribute 'nwb_version' differs: \"2\.[56]\.0\" vs \"2\.11\.0\" "
                     r"\(the cached schemas in /specifications are not compared\)$")
ELECTRODES = {
    "/general/extracellular_ephys/electrodes: attribute 'namespace' differs: \"hdmf-common\" vs \"core\"",
    "/general/extracellular_ephys/electrodes: attribute 'neurodata_type' differs: "
    "\"DynamicTable\" vs \"ElectrodesTable\"",
}
MIGRATED = {
    "reference.nwb": ELECTRODES,
    "ecephys_units.nwb": ELECTRODES,
    "2.2.0_subject_no_age__reference.nwb": {
        "/general/subject/age: attribute 'reference' is missing in '{src}'",
    },
}


def export014(h5, z):
    with NWBHDF5IO(str(h5), "r") as r, NWBZarrIO(str(z), "w") as w:
        w.export(src_io=r, write_args=dict(link_data=False))


def verify(a, b):
    r = subprocess.run([cli, "verify", str(a), str(b)], capture_output=True, text=True)
    lines = [l for l in (r.stdout + r.stderr).splitlines() if l and not l.startswith(("nwbzarr:", "ok:"))]
    return r.returncode, lines, r.stderr


refs = sorted((pathlib.Path(os.environ["NZ_REF"]) / "nwb").glob("*.nwb"))
assert len(refs) >= 8, "the reference files are missing"
checked = 0
for h5 in refs:
    z = tmp / (h5.stem + ".nwb.zarr")
    export014(h5, z)
    rc, lines, err = verify(h5, z)
    want = {l.format(src=h5) for l in MIGRATED.get(h5.name, set())}
    assert rc == 1, f"{h5.name}: verify exited {rc}: {lines} {err}"
    assert lines and VERSION.match(lines[0]), f"{h5.name}: first difference: {lines[:1]}"
    assert set(lines[1:]) == want and len(lines[1:]) == len(want), f"{h5.name}: {lines[1:]} != {want}"
    assert f"differ in {1 + len(want)} place" in err, err
    checked += 1
assert checked == len(refs), checked

# Planted differences, each named; the consolidated copy in the root
# zarr.json goes stale first (a difference of its own), then is rewritten.
ref = next(h for h in refs if h.name == "reference.nwb")
z = tmp / "planted.nwb.zarr"
shutil.copytree(tmp / "reference.nwb.zarr", z)
g = zarr.open_group(str(z), mode="r+", use_consolidated=False)
g["acquisition/ElectricalSeries/data"][7, 2] += 1
col = g["general/extracellular_ephys/electrodes/group"]
col[1] = "/general/devices/probe0"
g["session_description"][...] = "planted"
g["acquisition/ElectricalSeries/electrodes"].attrs["table"] = {"_REFERENCE": {"source": ".", "path": "/general/devices"}}
links = g["general/extracellular_ephys/shank0"].attrs["_LINKS"]
g["general/extracellular_ephys/shank0"].attrs["_LINKS"] = [dict(links[0], path="/general/devices")]
rc, lines, err = verify(ref, z)
assert rc == 1 and any(l.startswith("/zarr.json: ") for l in lines), f"stale consolidated copy not named: {lines}"
zarr.consolidate_metadata(str(z))
rc, lines, err = verify(ref, z)
planted = [
    "/acquisition/ElectricalSeries/data: 1 of 120000 values differ; first at [7, 2]",
    "/general/extracellular_ephys/electrodes/group: 1 of 4 values differ; first at [1]: "
    "-> /general/extracellular_ephys/shank0 vs -> /general/devices/probe0",
    "/session_description: 1 of 1 values differ",
    "/acquisition/ElectricalSeries/electrodes: attribute 'table' differs",
    "/general/extracellular_ephys/shank0/device: link target differs: /general/devices/probe0 vs /general/devices",
]
for p in planted:
    assert any(l.startswith(p) for l in lines), f"planted difference not named: {p!r} in {lines}"
assert rc == 1 and len(lines) == 3 + len(planted), lines

# A compound of references: 0.14's struct, fields keeping their types.
src = tmp / "trials.nwb"
nwb = NWBFile("d", "id1", datetime(2024, 1, 1, tzinfo=timezone.utc))
ts = TimeSeries(name="ts", data=np.arange(100.0), unit="m", rate=10.0)
ts2 = TimeSeries(name="ts2", data=np.arange(50.0), unit="m", rate=10.0)
nwb.add_acquisition(ts)
nwb.add_acquisition(ts2)
nwb.add_trial(start_time=0.0, stop_time=1.0, timeseries=[ts])
nwb.add_trial(start_time=1.0, stop_time=2.0, timeseries=[ts2])
with NWBHDF5IO(str(src), "w") as io:
    io.write(nwb)
z = tmp / "trials.nwb.zarr"
export014(src, z)
g = zarr.open_group(str(z), mode="r+", use_consolidated=False)
a = g["intervals/trials/timeseries"]
assert a.attrs["_REFERENCE_FIELDS"] == ["timeseries"] and a.dtype["idx_start"] == np.int32, (a.dtype, dict(a.attrs))
rc, lines, err = verify(src, z)
assert rc == 0 and not lines, f"trials: {lines} {err}"
v = a[:]
v["idx_start"][1] = 7
v["timeseries"][0] = "/acquisition/ts2"
a[:] = v
rc, lines, err = verify(src, z)
assert rc == 1 and len(lines) == 1 and lines[0].startswith(
    "/intervals/trials/timeseries: 2 of 2 values differ; first at [0]"), lines
# Hostile v3 layouts: exit 1 naming the store and the problem. The edit is
# made to the document and to its consolidated copy, so that it is read.
def hostile(name, base, rel, change, problem):
    z = tmp / name
    shutil.copytree(tmp / base, z)
    root = json.load(open(z / "zarr.json"))
    doc = json.load(open(z / rel / "zarr.json"))
    change(doc)
    json.dump(doc, open(z / rel / "zarr.json", "w"))
    cm = dict(doc)
    cm.pop("consolidated_metadata", None)
    root["consolidated_metadata"]["metadata"][rel] = cm
    json.dump(root, open(z / "zarr.json", "w"))
    r = subprocess.run([cli, "verify", str(src), str(z)], capture_output=True, text=True)
    first = r.stderr.splitlines()[0] if r.stderr else ""
    assert r.returncode == 1 and first.startswith("nwbzarr") and name in first and problem in first, (name, r.stderr)


hostile("h_reffields", "trials.nwb.zarr", "intervals/trials/timeseries",
        lambda d: d["attributes"].update(_REFERENCE_FIELDS=["nothere"]), "names a field the struct does not have")
hostile("h_refint", "trials.nwb.zarr", "intervals/trials/timeseries",
        lambda d: d["attributes"].update(_REFERENCE_FIELDS=["idx_start"]), "reference field 'idx_start' does not hold text")
hostile("h_dtype", "trials.nwb.zarr", "intervals/trials/start_time",
        lambda d: d["attributes"].update(_DTYPE="object_reference"), "object_reference on an array that does not hold text")
hostile("h_dangling", "trials.nwb.zarr", "acquisition",
        lambda d: d["attributes"].update(_LINKS=[{"name": "l", "source": ".", "path": "/nowhere"}]), "'/nowhere'")
hostile("h_node", "trials.nwb.zarr", "acquisition", lambda d: d.update(node_type="banana"), "acquisition")

# info on v3: types, shapes, chunks, shards, codecs, ratios.
r = subprocess.run([cli, "info", str(tmp / "reference.nwb.zarr")], capture_output=True, text=True)
assert r.returncode == 0, r.stderr
assert re.search(r"ElectricalSeries/ \[ElectricalSeries\]", r.stdout), r.stdout
assert re.search(r"\n +data +\(30000, 4\) +int16 chunks \(5000, 4\) +bytes\+zstd\(0\)  240000 B -> \d+ B \(x\d",
                 r.stdout), r.stdout
r = subprocess.run([cli, "info", str(tmp / "trials.nwb.zarr"), "--json"], capture_output=True, text=True)
rows = {j["path"]: j for j in map(json.loads, r.stdout.splitlines())}
ts = rows["/intervals/trials/timeseries"]
assert r.returncode == 0 and ts["zarr_format"] == 3 and ts["dtype"]["name"] == "struct", ts
assert rows["/intervals/trials"]["neurodata_type"] == "TimeIntervals", rows["/intervals/trials"]
sh = tmp / "sharded.zarr"
zg = zarr.open_group(str(sh), mode="w", zarr_format=3)
zg.create_array("x", shape=(1000, 8), chunks=(100, 8), shards=(500, 8), dtype="i2")[:] = 1
zarr.consolidate_metadata(str(sh))
r = subprocess.run([cli, "info", str(sh)], capture_output=True, text=True)
assert r.returncode == 0 and re.search(r"x +\(1000, 8\) +int16 chunks \(100, 8\) +shards \(500, 8\) bytes\+zstd",
                                       r.stdout), r.stdout + r.stderr

print(f"verify_hdmf014: {checked} reference files against hdmf-zarr 0.14's export, 5 planted differences "
      "named, a struct of references compared field by field")
