#!/usr/bin/python3
"""Compare an NWB Zarr store written by nwbzarr with an hdmf-zarr reference.

usage: compare_layout.py OURS REFERENCE [--subset]

Checks, failing with a message naming the key:
 - the same metadata documents (.zgroup/.zarray/.zattrs) exist in both
   (--subset: every document of OURS exists in REFERENCE, for stores that
   hold only part of the reference's objects);
 - .zgroup/.zarray files are byte-identical; .zattrs are byte-identical once
   uuid4 strings are masked;
 - every object id is a uuid4, every reference's object_id is the target's
   object_id and its source_object_id the root's;
 - OURS has a .zmetadata listing exactly its documents (schema included);
 - zarr-python opens OURS consolidated and plain and every array's values
   equal the reference's (object references compared with ids masked);
 - every chunk file is byte-identical to the reference's (same codecs, same
   bytes), except those of json2 arrays, which hold object ids.
"""
import json
import os
import re
import sys

import numpy as np
import zarr

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
META = (".zgroup", ".zarray", ".zattrs")
failures = []


def fail(msg):
    failures.append(msg)


def docs(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            if f in META:
                rel = os.path.relpath(os.path.join(d, f), root).replace(os.sep, "/")
                with open(os.path.join(d, f), "rb") as fh:
                    out[rel] = fh.read()
    return out


def mask(b):
    return UUID.sub("<uuid>", b.decode("utf-8"))


def check_refs(ours):
    attrs = {k[:-len("/.zattrs")] if k != ".zattrs" else "": json.loads(v)
             for k, v in ours.items() if k.endswith(".zattrs")}
    root_oid = attrs[""].get("object_id")

    def check(ref, where):
        target = ref["path"].lstrip("/")
        if ref.get("source") != ".":
            fail(f"{where}: reference source {ref.get('source')!r} != '.'")
        if ref.get("source_object_id") != root_oid:
            fail(f"{where}: source_object_id is not the root's object_id")
        if target not in attrs:
            fail(f"{where}: reference to missing object {ref['path']}")
        elif ref.get("object_id") != attrs[target].get("object_id"):
            fail(f"{where}: object_id {ref.get('object_id')} != that of {ref['path']}")

    for path, a in attrs.items():
        if "object_id" in a and not UUID.fullmatch(a["object_id"] or ""):
            fail(f"/{path}: object_id {a['object_id']!r} is not a uuid4")
        for k, v in a.items():
            if isinstance(v, dict) and v.get("zarr_dtype") == "object":
                check(v["value"], f"/{path} attribute {k}")
        for link in a.get("zarr_link", []):
            if link["path"].lstrip("/") not in attrs:
                fail(f"/{path}: link {link['name']} to missing {link['path']}")
    return attrs


def values(arr):
    data = arr[...]
    if data.dtype == object:
        out = []
        for x in data.ravel():
            if isinstance(x, dict):
                x = json.loads(UUID.sub("<uuid>", json.dumps(x, sort_keys=True)))
            out.append(x)
        return out
    return data


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    subset = "--subset" in sys.argv
    ours_path, ref_path = args
    ours, ref = docs(ours_path), docs(ref_path)
    if subset:
        for k in sorted(set(ours) - set(ref)):
            fail(f"{k}: not in the reference")
    else:
        for k in sorted(set(ref) - set(ours)):
            fail(f"{k}: missing (present in the reference)")
        for k in sorted(set(ours) - set(ref)):
            fail(f"{k}: extra (not in the reference)")
    for k in sorted(set(ours) & set(ref)):
        a, b = ours[k], ref[k]
        if k.endswith(".zattrs"):
            a, b = mask(a), mask(b)
        if a != b:
            fail(f"{k}: differs\n--- ours\n{a if isinstance(a, str) else a.decode()}\n"
                 f"--- reference\n{b if isinstance(b, str) else b.decode()}")
    check_refs(ours)

    zm = os.path.join(ours_path, ".zmetadata")
    if not os.path.exists(zm):
        fail(".zmetadata: missing")
    else:
        with open(zm) as fh:
            meta = json.load(fh)["metadata"]
        if set(meta) != set(ours):
            fail(f".zmetadata lists {sorted(set(meta) ^ set(ours))} differently from the store")
        for k in set(meta) & set(ours):
            if meta[k] != json.loads(ours[k]):
                fail(f".zmetadata entry {k} differs from the file")

    plain = zarr.open_group(ours_path, mode="r")
    cons = zarr.open_consolidated(ours_path, mode="r")
    refg = zarr.open_group(ref_path, mode="r")
    n = 0
    for k in sorted(ours):
        if not k.endswith(".zarray"):
            continue
        p = k[:-len("/.zarray")]
        a, c = values(plain[p]), values(cons[p])
        if not np.array_equal(np.asarray(a, dtype=object), np.asarray(c, dtype=object)):
            fail(f"/{p}: consolidated and plain reads differ")
        if p in refg:
            r = values(refg[p])
            if not np.array_equal(np.asarray(a, dtype=object), np.asarray(r, dtype=object)):
                fail(f"/{p}: values differ from the reference")
        n += 1
    for k in sorted(set(ours) & set(ref)):
        if not k.endswith(".zarray") or b"json2" in ref[k]:
            continue
        d = os.path.dirname(k)
        for name in sorted(os.listdir(os.path.join(ref_path, d))):
            if name.startswith("."):
                continue
            mine = os.path.join(ours_path, d, name)
            if not os.path.exists(mine):
                fail(f"/{d}/{name}: chunk missing")
                continue
            with open(mine, "rb") as a, open(os.path.join(ref_path, d, name), "rb") as b:
                if a.read() != b.read():
                    fail(f"/{d}/{name}: chunk bytes differ from the reference")
    for f in failures:
        print("FAIL:", f)
    print(f"{len(ours)} documents, {n} arrays compared; {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
