"""export writes Zarr v3 in hdmf-zarr 0.14's layout by default. For every
reference file: verify passes against the source, -j 1 and -j 2 give the
same bytes, hdmf-zarr 0.14's NWBZarrIO reads it under pynwb 4.2 equal to
the source read by NWBHDF5IO container by container (object ids, types,
names, parents, every field and value, references resolved to the same
objects), and its zarr.json documents match hdmf-zarr 0.14's own export of
the same file (made here): the same groups, arrays, attributes, links,
references and data types, chunks, chunk keys and codecs aside.

Where 0.14's export differs from its source by pynwb's schema migration
(nwb_version 2.11.0 and its cached schema, ElectrodesTable, a subject age's
`reference`), ours keeps the source: those are listed and expected below.
_ARRAY_DIMENSIONS (0.14 takes dimension names from the schema) is not
compared: export does not read the schema's dims."""
import json
import os
import pathlib
import shutil
import subprocess
import warnings

from hdmf_zarr import NWBZarrIO
from pynwb import NWBHDF5IO

from nwbcompare import same_containers

warnings.simplefilter("ignore")
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "export_v3"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)


def run(*cmd):
    r = subprocess.run([cli, *map(str, cmd)], capture_output=True, text=True)
    assert r.returncode == 0, f"{cmd}: {r.stdout} {r.stderr}"


def docs(store):
    """path -> zarr.json (attributes without the ignored keys)."""
    out = {}
    for p in sorted(store.rglob("zarr.json")):
        rel = "/" + str(p.parent.relative_to(store)) if p.parent != store else "/"
        d = json.loads(p.read_text())
        d.pop("consolidated_metadata", None)
        out[rel] = d
    return out


def layout(d):
    a = dict(d.get("attributes", {}))
    a.pop("_ARRAY_DIMENSIONS", None)
    if "_LINKS" in a:
        a["_LINKS"] = sorted(json.dumps(l, sort_keys=True) for l in a["_LINKS"])
    return {"node_type": d["node_type"], "attributes": a, "shape": d.get("shape"),
            "data_type": d.get("data_type"), "fill_value": d.get("fill_value")}


MIGRATION_ROOT = {"nwb_version"}
MIGRATION = {
    "/general/extracellular_ephys/electrodes": {"namespace", "neurodata_type"},
    "/general/subject/age": {"reference"},
}


def diff_layouts(ours, theirs, name):
    problems = []
    keys = {k for k in set(ours) | set(theirs) if not k.startswith("/specifications")}
    for k in sorted(keys):
        if k not in ours or k not in theirs:
            problems.append(f"{k}: only in {'ours' if k in ours else 'theirs'}")
            continue
        a, b = layout(ours[k]), layout(theirs[k])
        skip = MIGRATION_ROOT if k == "/" else MIGRATION.get(k, set())
        for key in ("node_type", "shape", "data_type", "fill_value"):
            if a[key] != b[key]:
                problems.append(f"{k}: {key} {a[key]} vs {b[key]}")
        for at in sorted(set(a["attributes"]) | set(b["attributes"])):
            if at in skip:
                continue
            if a["attributes"].get(at) != b["attributes"].get(at):
                problems.append(f"{k}: attribute {at}: {a['attributes'].get(at)!r} vs {b['attributes'].get(at)!r}")
    assert not problems, f"{name}: our export differs from hdmf-zarr 0.14's:\n" + "\n".join(problems[:40])


refs = sorted((pathlib.Path(os.environ["NZ_REF"]) / "nwb").glob("*.nwb"))
assert len(refs) >= 8
for h5 in refs:
    ours, ours1, theirs = (tmp / f"{h5.stem}{s}.nwb.zarr" for s in ("", "_j1", "_014"))
    run("export", h5, ours, "-j", "2", "--quiet")
    run("export", h5, ours1, "-j", "1", "--quiet")
    r = subprocess.run(["diff", "-r", str(ours), str(ours1)], capture_output=True, text=True)
    assert r.returncode == 0, f"{h5.name}: -j 1 and -j 2 differ: {r.stdout[:500]}"
    run("verify", h5, ours)
    assert json.loads((ours / "zarr.json").read_text())["zarr_format"] == 3
    with NWBHDF5IO(str(h5), "r") as hio, NWBZarrIO(str(ours), "r") as zio:
        same_containers(hio.read(), zio.read(), h5.name)
    with NWBHDF5IO(str(h5), "r") as r, NWBZarrIO(str(theirs), "w") as w:
        w.export(src_io=r, write_args=dict(link_data=False))
    diff_layouts(docs(ours), docs(theirs), h5.name)
print(f"export_v3: {len(refs)} reference files exported to v3: verified, -j identical, read by NWBZarrIO "
      "equal to the source, the same layout as hdmf-zarr 0.14's export")
