"""Two reads of NWB files compared container by container, as the issues'
"equal to its source" asks: the same objects (object ids), each with the
same type, namespace, name and parent, and every field equal: containers by
object id (references resolved to the same object), datasets and arrays
element by element (NaN equal to NaN, bytes and text alike, compound rows
field by field), scalars, lists and dicts recursively.
differences(a, b) returns the list of differences, each naming the object
and the field; same_containers(a, b, name) asserts there are none."""
import numpy as np
from hdmf.container import AbstractContainer, Data


def _plain(v):
    """A comparable form of a field value or dataset element."""
    if isinstance(v, AbstractContainer):
        return ("container", v.object_id)
    if isinstance(v, bytes):
        return v.decode("utf-8", "replace")
    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, np.ndarray):
        if v.dtype.kind in "OSUV":
            return [_plain(x) for x in v.tolist()] if v.ndim else _plain(v[()])
        return v
    if hasattr(v, "shape") and hasattr(v, "dtype") and hasattr(v, "__getitem__"):  # h5py/zarr arrays
        return _plain(np.asarray(v[()] if v.shape == () else v[:]))
    if hasattr(v, "__getitem__") and hasattr(v, "__len__") and not isinstance(v, str):
        return [_plain(v[i]) for i in range(len(v))]  # e.g. a ContainerResolver over references
    return v


def _equal(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        a, b = np.asarray(a), np.asarray(b)
        if a.shape != b.shape:
            return False
        if a.dtype.kind in "biufc" and b.dtype.kind in "biufc" and a.dtype != b.dtype:
            return False  # the same numbers in another type are not the same dataset
        if a.dtype.kind in "fc" and b.dtype.kind in "fc":
            return bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))
        return bool(np.array_equal(a, b))
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return True
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_equal(a[k], b[k]) for k in a)
    return a == b


def differences(fa, fb):
    out = []
    oa = {o.object_id: o for o in fa.objects.values()}
    ob = {o.object_id: o for o in fb.objects.values()}
    for oid in sorted(oa.keys() ^ ob.keys()):
        o = oa.get(oid) or ob.get(oid)
        out.append(f"{type(o).__name__} '{o.name}' ({oid}) is in only one file")
    for oid in sorted(oa.keys() & ob.keys()):
        a, b = oa[oid], ob[oid]
        where = f"{type(a).__name__} '{a.name}'"
        # (extension classes are generated per reader: compared by type name)
        if (type(a).__name__, a.namespace, a.name) != (type(b).__name__, b.namespace, b.name):
            out.append(f"{where}: type/namespace/name {type(b).__name__} {b.namespace} '{b.name}' in the other")
            continue
        pa, pb = a.parent.object_id if a.parent else None, b.parent.object_id if b.parent else None
        if pa != pb:
            out.append(f"{where}: parent {pa} vs {pb}")
        fields_a, fields_b = dict(a.fields), dict(b.fields)
        if isinstance(a, Data):  # a Data's values are not among its fields
            fields_a["data"], fields_b["data"] = a.data, b.data
        for k in sorted(fields_a.keys() | fields_b.keys()):
            if k not in fields_a or k not in fields_b:
                out.append(f"{where}: field '{k}' is in only one file")
                continue
            va, vb = _plain(fields_a[k]), _plain(fields_b[k])
            if not _equal(va, vb):
                out.append(f"{where}: field '{k}' differs")
    return out


def same_containers(a, b, name):
    """Assert that the files a and b (pynwb reads) have no differences."""
    diff = differences(a, b)
    assert not diff, f"{name}: {len(diff)} differences: {diff[:5]}"
