"""pynwb 4.2 + hdmf-zarr 0.14 read what `convert` writes by default (Zarr v3
in hdmf-zarr 0.14's layout):
 - hdmf_zarr.NWBZarrIO(p, "r") opens it and every field equals what was
   converted: data, rate, conversion, channel_conversion, electrodes (rows,
   groups resolved to the same ElectrodeGroup objects, the region pointing at
   the file's table), device links, subject; object ids are the ones stored;
 - it carries its cached schema (core 2.11.0 = nwb_version, hdmf-common,
   hdmf-experimental) and pynwb reads it without "No cached namespaces";
 - its layout is hdmf-zarr 0.14's own: hdmf-zarr exports the file it read
   to a new store, and both hold the same nodes, data types, _DTYPE,
   _ARRAY_DIMENSIONS, attributes, _LINKS and _REFERENCEs (object ids,
   chunking and codecs aside);
 - the bytes are the same for -j 1/2/3;
 - nwbinspector 0.7.2 finds no CRITICAL and no BEST_PRACTICE_VIOLATION;
 - `--zarr-format 2` output converts to v3 with 0.14's convert_to_v3
   without allow_pickle, and reads back equal.
"""
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np

warnings.filterwarnings("ignore", message="Consolidated metadata")
from hdmf_zarr import NWBZarrIO  # noqa: E402
from hdmf_zarr.nwb_zarrv2 import NWBZarrV2IO  # noqa: E402
import zarr  # noqa: E402

cli = os.environ["NZ_CLI"]
tmp = Path(os.environ["NZ_TMP"]) / "readers_pynwb_v3"
subprocess.run(["rm", "-rf", str(tmp)], check=True)
tmp.mkdir(parents=True)

frames, channels = 40000, 6
raw = tmp / "rec.bin"
data = (np.arange(frames * channels, dtype=np.int64) * 7919 % 4001 - 2000).astype("<i2")
data = data.reshape(frames, channels)
data.tofile(raw)
session = {
    "identifier": "v3-readers",
    "session_description": "Zarr v3 read by pynwb 4.2",
    "session_start_time": "2024-05-06T10:00:00+02:00",
    "experimenter": ["Doe, Jane"],
    "institution": "Institute",
    "lab": "Lab",
    "subject": {"subject_id": "m7", "species": "Mus musculus", "sex": "F", "age": "P90D",
                "description": "a mouse"},
    "devices": [{"name": "probe0", "description": "a probe", "manufacturer": "IMEC"}],
    "electrode_groups": [{"name": "shank0", "description": "shank 0", "location": "CA1",
                          "device": "probe0"},
                         {"name": "shank1", "description": "shank 1", "location": "CA3",
                          "device": "probe0"}],
    "electrodes": [{"group": "shank0" if c < 3 else "shank1", "x": float(c), "y": 20.0, "z": 0.0}
                   for c in range(channels)],
    "series": {"name": "ElectricalSeries", "description": "AP band", "conversion": 2.5e-6,
               "channel_conversion": [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]},
}
(tmp / "session.json").write_text(json.dumps(session))


def convert(out, *extra):
    subprocess.run([cli, "convert", str(raw), "-o", str(out), "--channels", str(channels),
                    "--rate", "30000", "--meta", str(tmp / "session.json"), "--seed", "11",
                    "--create-date", "2024-05-06T11:00:00+02:00", "--chunks", "2000,6", "-q",
                    *extra], check=True)


outs = [tmp / f"j{j}.nwb.zarr" for j in (1, 2, 3)]
for j, out in zip((1, 2, 3), outs):
    convert(out, "-j", str(j))
for out in outs[1:]:
    r = subprocess.run(["diff", "-r", str(outs[0]), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, f"-j changes the bytes: {r.stdout[:400]}"
path = outs[0]
root = json.loads((path / "zarr.json").read_text())
assert root["zarr_format"] == 3 and "consolidated_metadata" in root
assert root["attributes"]["nwb_version"] == "2.11.0"
meta = root["consolidated_metadata"]["metadata"]
data_meta = meta["acquisition/ElectricalSeries/data"]
assert data_meta["codecs"][0]["name"] == "sharding_indexed", data_meta["codecs"]


def stored_oid(p):
    return meta[p]["attributes"]["object_id"] if p else root["attributes"]["object_id"]


with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    with NWBZarrIO(str(path), "r") as io:
        nwb = io.read()
        es = nwb.acquisition["ElectricalSeries"]
        assert np.array_equal(es.data[:], data)
        assert es.rate == 30000.0 and es.starting_time == 0.0
        assert es.conversion == 2.5e-6
        assert list(es.channel_conversion[:]) == [1.0, 1.0, 1.0, 2.0, 2.0, 2.0]
        assert es.description == "AP band"
        assert es.electrodes.table is nwb.electrodes
        assert list(es.electrodes.data[:]) == list(range(channels))
        df = nwb.electrodes.to_dataframe()
        assert list(df["x"]) == [float(c) for c in range(channels)]
        assert list(df["group_name"]) == ["shank0"] * 3 + ["shank1"] * 3
        for c in range(channels):
            g = nwb.electrodes["group"][c]
            assert g is nwb.electrode_groups["shank0" if c < 3 else "shank1"], g
        assert nwb.electrode_groups["shank1"].location == "CA3"
        assert nwb.electrode_groups["shank0"].device is nwb.devices["probe0"]
        assert nwb.devices["probe0"].manufacturer == "IMEC"
        assert nwb.subject.subject_id == "m7" and nwb.subject.species == "Mus musculus"
        assert nwb.subject.age == "P90D" and nwb.subject.sex == "F"
        assert nwb.identifier == "v3-readers" and list(nwb.experimenter) == ["Doe, Jane"]
        assert nwb.session_start_time.isoformat() == "2024-05-06T10:00:00+02:00"
        for obj, p in ((nwb, ""), (es, "acquisition/ElectricalSeries"),
                       (nwb.electrodes, "general/extracellular_ephys/electrodes"),
                       (nwb.devices["probe0"], "general/devices/probe0"),
                       (nwb.electrode_groups["shank0"], "general/extracellular_ephys/shank0"),
                       (es.electrodes, "acquisition/ElectricalSeries/electrodes"),
                       (nwb.subject, "general/subject")):
            assert obj.object_id == stored_oid(p), (p, obj.object_id)
        # hdmf-zarr 0.14 writes the same file in its own layout
        with NWBZarrIO(str(tmp / "hdmf.nwb.zarr"), "w") as w:
            w.export(src_io=io, write_args=dict(link_data=False))
msgs = [str(w.message) for w in caught]
assert not any("No cached namespaces" in m for m in msgs), msgs
from hdmf.spec import NamespaceCatalog  # noqa: E402
from pynwb.spec import NWBDatasetSpec, NWBGroupSpec, NWBNamespace  # noqa: E402
catalog = NamespaceCatalog(NWBGroupSpec, NWBDatasetSpec, NWBNamespace)
NWBZarrIO.load_namespaces(catalog, str(path))
assert set(catalog.namespaces) == {"core", "hdmf-common", "hdmf-experimental"}, catalog.namespaces
assert catalog.get_namespace("core").version == "2.11.0"


# ---- layout against hdmf-zarr 0.14's own -------------------------------------
def layout(p):
    r = json.loads((p / "zarr.json").read_text())
    nodes = dict(r["consolidated_metadata"]["metadata"])
    nodes[""] = r
    out = {}
    for k, m in nodes.items():
        if k.startswith("specifications"):
            continue  # the cached schema: compared as documents below
        a = {n: v for n, v in m.get("attributes", {}).items() if n != "object_id"}
        if m["node_type"] == "array":
            out[k] = ("array", m["data_type"], len(m["shape"]), a)
        else:
            out[k] = ("group", a)
    return out


ours, theirs = layout(path), layout(tmp / "hdmf.nwb.zarr")
# hdmf-zarr fills file_create_date from what it read: the same; identical keys
assert set(ours) == set(theirs), (sorted(set(ours) ^ set(theirs)))
for k in sorted(ours):
    assert ours[k] == theirs[k], f"{k}:\n ours   {ours[k]}\n theirs {theirs[k]}"
spec = {}
for p in (path, tmp / "hdmf.nwb.zarr"):
    g = zarr.open_group(str(p / "specifications"), mode="r")
    spec[p] = {f"{n}/{v}/{d}": g[n][v][d][()] for n in g.group_keys() for v in g[n].group_keys()
               for d in g[n][v].array_keys()}
assert spec[path] == spec[tmp / "hdmf.nwb.zarr"], sorted(set(spec[path]) ^ set(spec[tmp / "hdmf.nwb.zarr"]))

# ---- nwbinspector -------------------------------------------------------------
from nwbinspector import Importance, inspect_nwbfile_object  # noqa: E402

with NWBZarrIO(str(path), "r") as io:
    found = [m for m in inspect_nwbfile_object(io.read())
             if m.importance in (Importance.CRITICAL, Importance.BEST_PRACTICE_VIOLATION)]
assert not found, "\n".join(f"{m.importance.name} {m.check_function_name}: {m.message}" for m in found)

# ---- --zarr-format 2 through hdmf-zarr 0.14's convert_to_v3 --------------------
v2 = tmp / "v2.nwb.zarr"
convert(v2, "--zarr-format", "2")
NWBZarrV2IO.convert_to_v3(str(v2), str(tmp / "v2to3.nwb.zarr"))
with NWBZarrIO(str(tmp / "v2to3.nwb.zarr"), "r") as io:
    nwb = io.read()
    assert np.array_equal(nwb.acquisition["ElectricalSeries"].data[:], data)
    assert nwb.electrodes["group"][4] is nwb.electrode_groups["shank1"]
print("pynwb_v3: NWBZarrIO read convert's v3 output equal, layout = hdmf-zarr 0.14's, "
      "-j 1/2/3 identical, nwbinspector clean, v2 output converts without pickle")
