"""Two reads of one NWB file compared container by container, as the
issues' "equal to its source" asks: the same object ids, types, names and
parents, every field and dataset value, references resolved to the same
objects (by object id)."""
import numpy as np


def load(v):
    """An HDF5 or Zarr dataset (lazy) or a value, as a numpy array."""
    if isinstance(v, (np.ndarray, np.generic)) or not hasattr(v, "shape"):
        return np.asarray(v)
    return np.asarray(v[()])


def same_value(x, y, where):
    if hasattr(x, "object_id") and hasattr(y, "object_id") and not isinstance(x, (str, bytes)):
        assert x.object_id == y.object_id, f"{where}: refers to {x.object_id} vs {y.object_id}"
        return
    if isinstance(x, (list, tuple)) and isinstance(y, (list, tuple)):
        assert len(x) == len(y), f"{where}: {len(x)} vs {len(y)} items"
        for i, (p, q) in enumerate(zip(x, y)):
            same_value(p, q, f"{where}[{i}]")
        return
    if isinstance(x, dict):
        assert sorted(x) == sorted(y), f"{where}: keys {sorted(x)} vs {sorted(y)}"
        for k in x:
            same_value(x[k], y[k], f"{where}.{k}")
        return
    if hasattr(x, "shape") and hasattr(x, "dtype") or hasattr(y, "shape") and hasattr(y, "dtype"):
        p, q = load(x), load(y)
        if p.dtype.names:
            assert p.dtype.names == q.dtype.names, f"{where}: fields {p.dtype.names} vs {q.dtype.names}"
            for f in p.dtype.names:
                same_value(list(p[f]), list(q[f]), f"{where}.{f}")
            return
        if p.dtype.kind in "OSU" or q.dtype.kind in "OSU":
            dec = lambda v: v.decode() if isinstance(v, bytes) else v
            pl, ql = [dec(v) for v in p.ravel().tolist()], [dec(v) for v in q.ravel().tolist()]
            if pl and hasattr(pl[0], "object_id"):
                return same_value(pl, ql, where)
            assert pl == ql, f"{where}: {pl[:3]} vs {ql[:3]}"
            return
        assert p.shape == q.shape and p.dtype == q.dtype, f"{where}: {p.shape} {p.dtype} vs {q.shape} {q.dtype}"
        assert np.array_equal(p, q, equal_nan=p.dtype.kind == "f"), f"{where}: values differ"
        return
    dec = lambda v: v.decode() if isinstance(v, bytes) else v
    assert dec(x) == dec(y) or str(x) == str(y), f"{where}: {x!r} vs {y!r}"


def same_containers(a, b, name):
    oa, ob = a.objects, b.objects
    assert sorted(oa) == sorted(ob), f"{name}: objects differ"
    for oid, x in oa.items():
        y = ob[oid]
        where = f"{name}:{x.name}({type(x).__name__})"
        # (extension classes are generated per reader: compared by type name)
        assert (type(x).__name__, x.namespace, x.name) == (type(y).__name__, y.namespace, y.name), \
            f"{where}: {type(y).__name__} {y.namespace} {y.name}"
        assert (x.parent.object_id if x.parent else None) == (y.parent.object_id if y.parent else None), where
        assert sorted(x.fields) == sorted(y.fields), f"{where}: fields {sorted(x.fields)} vs {sorted(y.fields)}"
        for f in x.fields:
            same_value(x.fields[f], y.fields[f], f"{where}.{f}")
