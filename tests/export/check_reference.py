"""Export every reference .nwb with `nwbzarr export`, then check each export:

1. `nwbzarr verify SRC DST` passes;
2. zarr-python reads every array (consolidated and plain);
3. the export matches the source manifest (manifest/<name>.json) under the
   comparison rules of tests/data/README.md: groups, datasets
   (shape, dtype, value hashes, reference targets, compound fields), links,
   attributes;
4. its structure matches hdmf-zarr's export (zarr/<name>.nwb.zarr): the same
   groups and arrays with the same shapes and attributes (codecs, chunking,
   zarr_dtype spellings and /specifications excepted: we keep the file's own
   cached namespaces, hdmf-zarr substitutes pynwb's).
pynwb + hdmf-zarr reading every export is tests/readers/export_pynwb_v2.py.
"""
import hashlib
import json
import os
import subprocess
import sys

import numpy as np
import zarr

REF = os.environ["NZ_REF"]
CLI = os.environ["NZ_CLI"]
TMP = os.path.join(os.environ["NZ_TMP"], "export_reference")
os.makedirs(TMP, exist_ok=True)

failures = []


def fail(name, msg):
    failures.append(f"{name}: {msg}")


def sha(b):
    return hashlib.sha256(b).hexdigest()


NUMPY_NAMES = {"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "bool"}


def text_of(x):
    return x.decode("utf-8") if isinstance(x, bytes) else str(x)


def hash_values(dtype, values):
    """The manifest's hash of a 1-D (flattened) column of `dtype`."""
    if dtype in ("utf8", "ascii"):
        return sha("\n".join(text_of(v) for v in values).encode("utf-8"))
    arr = np.asarray(values)
    if dtype == "bool":
        return sha(arr.astype("u1").tobytes())
    return sha(arr.astype(np.dtype(dtype).newbyteorder("<")).tobytes())


def is_scalar(arr):
    return arr.attrs.get("zarr_dtype") == "scalar" and arr.shape == (1,)


def compare_dataset(name, path, arr, entry):
    scalar = is_scalar(arr)
    shape = [] if scalar else list(arr.shape)
    if shape != entry["shape"]:
        return fail(name, f"{path}: shape {shape} != manifest {entry['shape']}")
    data = arr[...]
    dt = entry["dtype"]
    flat = data.reshape(-1)
    if dt == "object_reference":
        targets = [v["path"] for v in flat]
        want = entry["targets"] if isinstance(entry["targets"], list) else [entry["targets"]]
        if targets != want:
            fail(name, f"{path}: reference targets differ")
    elif dt == "compound":
        for i, field in enumerate(entry["fields"]):
            if data.dtype.names:
                col = data[field["name"]].reshape(-1)
            else:
                col = [v[i] for v in flat]
            if field["dtype"] == "object_reference":
                if [v["path"] for v in col] != field["targets"]:
                    fail(name, f"{path}: field {field['name']} targets differ")
            elif hash_values(field["dtype"], col) != field["sha256"]:
                fail(name, f"{path}: field {field['name']} values differ")
    elif dt in ("utf8", "ascii"):
        got = text_of(flat[0]).encode() if scalar else "\n".join(text_of(v) for v in flat).encode()
        if sha(got) != entry["sha256"]:
            fail(name, f"{path}: text differs")
    elif dt in NUMPY_NAMES:
        if np.dtype(dt if dt != "bool" else "?") != data.dtype.newbyteorder("="):
            fail(name, f"{path}: dtype {data.dtype} != manifest {dt}")
        elif hash_values(dt, flat) != entry["sha256"]:
            fail(name, f"{path}: values differ")
    else:
        fail(name, f"{path}: manifest dtype {dt} not understood by this test")


def same_json(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or (a != a and b != b)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(same_json(x, y) for x, y in zip(a, b))
    if a in ("NaN", "Infinity", "-Infinity") and isinstance(b, float):
        return same_json(float(a.replace("Infinity", "inf")), b)
    return a == b


def compare_attrs(name, path, attrs, want):
    attrs = {k: v for k, v in attrs.items() if k not in ("zarr_dtype", "zarr_link")}
    if set(attrs) != set(want):
        return fail(name, f"{path}: attribute names {sorted(attrs)} != {sorted(want)}")
    for k, w in want.items():
        v = attrs[k]
        if w["dtype"] == "object_reference":
            got = v["value"]["path"] if isinstance(v, dict) else "/" + v  # root .specloc
            if got != w["target"]:
                fail(name, f"{path} attribute {k}: target {got} != {w['target']}")
        elif "value" in w:
            if not same_json(v, w["value"]):
                fail(name, f"{path} attribute {k}: {v!r} != {w['value']!r}")
        else:
            vals = np.asarray(v).reshape(-1) if not isinstance(v, str) else [v]
            if hash_values(w["dtype"], vals) != w["sha256"]:
                fail(name, f"{path} attribute {k}: values differ")


def walk(root):
    """(groups, arrays) of a store: absolute paths -> zarr objects."""
    groups, arrays = {"/": root}, {}

    def rec(g, prefix):
        for k, v in g.groups():
            groups[prefix + k] = v
            rec(v, prefix + k + "/")
        for k, v in g.arrays():
            arrays[prefix + k] = v
    rec(root, "/")
    return groups, arrays


def check_manifest(name, root, manifest):
    groups, arrays = walk(root)
    if sorted(groups) != manifest["groups"]:
        missing = set(manifest["groups"]) ^ set(groups)
        fail(name, f"groups differ from the manifest: {sorted(missing)[:5]}")
    if set(arrays) != set(manifest["datasets"]):
        fail(name, f"datasets differ: {sorted(set(arrays) ^ set(manifest['datasets']))[:5]}")
    for path, entry in manifest["datasets"].items():
        if path in arrays:
            compare_dataset(name, path, arrays[path], entry)
    links = {}
    for gpath, g in groups.items():
        for link in g.attrs.get("zarr_link", []):
            p = (gpath.rstrip("/") + "/" + link["name"])
            links[p] = ({"type": "soft", "target": link["path"]} if link["source"] == "."
                        else {"type": "external", "file": link["source"], "target": link["path"]})
    if links != manifest["links"]:
        fail(name, f"links differ: {links} != {manifest['links']}")
    for path, want in manifest["attributes"].items():
        obj = groups[path] if path in groups else arrays.get(path)
        if obj is None:
            fail(name, f"{path}: no object for attributes")
        else:
            compare_attrs(name, path, dict(obj.attrs), want)


def strip_ref_ids(v):
    """Reference dicts without their ids: hdmf-zarr writes object_id null for
    untyped targets where we write the target's id."""
    if isinstance(v, dict):
        return {k: strip_ref_ids(x) for k, x in v.items()
                if not ("path" in v and "source" in v and k in ("object_id", "source_object_id"))}
    if isinstance(v, list):
        return [strip_ref_ids(x) for x in v]
    return v


def check_hdmf_structure(name, ours, theirs):
    g1, a1 = walk(ours)
    g2, a2 = walk(theirs)
    spec = lambda p: p.startswith("/specifications")
    k1 = sorted(p for p in list(g1) + list(a1) if not spec(p))
    k2 = sorted(p for p in list(g2) + list(a2) if not spec(p))
    if k1 != k2:
        return fail(name, f"structure differs from hdmf-zarr: {sorted(set(k1) ^ set(k2))[:5]}")
    for p in k1:
        x, y = (a1.get(p), a2.get(p)) if p in a1 else (g1[p], g2[p])
        if p in a1:
            if x.shape != y.shape:
                fail(name, f"{p}: shape {x.shape} != hdmf-zarr {y.shape}")
            if (x.dtype.kind == "O") != (y.dtype.kind == "O") or \
               (x.dtype.kind != "O" and x.dtype != y.dtype):
                fail(name, f"{p}: dtype {x.dtype} != hdmf-zarr {y.dtype}")
        ax = strip_ref_ids({k: v for k, v in x.attrs.items() if k != "zarr_dtype"})
        ay = strip_ref_ids({k: v for k, v in y.attrs.items() if k != "zarr_dtype"})
        if json.dumps(ax, sort_keys=True) != json.dumps(ay, sort_keys=True):
            fail(name, f"{p}: attributes differ from hdmf-zarr's export")


def run(args):
    return subprocess.run(args, capture_output=True, text=True)


def main():
    nwbs = sorted(f for f in os.listdir(os.path.join(REF, "nwb")) if f.endswith(".nwb"))
    if not nwbs:
        print("no reference files", file=sys.stderr)
        return 1
    for f in nwbs:
        name = f[:-4]
        src = os.path.join(REF, "nwb", f)
        dst = os.path.join(TMP, name + ".nwb.zarr")
        r = run([CLI, "export", src, dst, "-j", "2", "--overwrite", "--zarr-format", "2"])  # the v2 goldens
        if r.returncode != 0:
            fail(name, f"export failed: {r.stderr.strip()}")
            continue
        r = run([CLI, "verify", src, dst, "-j", "2"])
        if r.returncode != 0:
            fail(name, f"verify failed: {r.stdout.strip()} {r.stderr.strip()}")
        try:
            for root in (zarr.open_consolidated(dst, mode="r"), zarr.open_group(dst, mode="r")):
                for _, arr in walk(root)[1].items():
                    arr[...]
        except Exception as e:  # noqa: BLE001 - any failure to read is the finding
            fail(name, f"zarr-python cannot read: {e!r}")
            continue
        root = zarr.open_group(dst, mode="r")
        with open(os.path.join(REF, "manifest", name + ".json")) as fh:
            check_manifest(name, root, json.load(fh))
        theirs = os.path.join(REF, "zarr", name + "_exported.nwb.zarr")
        if not os.path.isdir(theirs):
            theirs = os.path.join(REF, "zarr", name + ".nwb.zarr")
        if os.path.isdir(theirs):
            check_hdmf_structure(name, root, zarr.open_group(theirs, mode="r"))
        print(f"{name}: checked")
    for m in failures:
        print("FAIL", m)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
