"""export --copy-links: an NWB file whose two TimeSeries' data are HDF5
external links into one dataset of another NWB file (as pynwb writes with
link_data) becomes one self-contained store, in v3 and with --zarr-format 2:
the linked data copied in at each link (as hdmf-zarr 0.14's own export,
write_args={'link_data': False}, does: pynwb would read a link to the other
TimeSeries' data as that TimeSeries; groups linked twice: test_export_links);
nothing exported beside. verify accepts it against the source (following the source's
external links); hdmf-zarr 0.14 (NWBZarrIO on v3, NWBZarrV2IO on v2) reads
it equal to the source read by NWBHDF5IO, container by container, and
equal to hdmf-zarr 0.14's own export."""
import os
import pathlib
import shutil
import subprocess
import warnings

import numpy as np
import zarr
from hdmf_zarr import NWBZarrIO, NWBZarrV2IO
from pynwb import NWBHDF5IO

from nwbcompare import same_containers
from nwblinks import linked_pair

warnings.simplefilter("ignore")
cli = os.environ["NZ_CLI"]
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "export_copylinks"
shutil.rmtree(tmp, ignore_errors=True)
(tmp / "raw").mkdir(parents=True)

values = np.arange(3000, dtype="i2").reshape(1000, 3)
base, top = linked_pair(tmp / "raw", values, ["first", "second"])

theirs = tmp / "theirs.nwb.zarr"
with NWBHDF5IO(str(top), "r") as r, NWBZarrIO(str(theirs), "w") as w:
    w.export(src_io=r, write_args=dict(link_data=False))
# hdmf-zarr copies the linked data wherever it is linked from.
for name in ("first", "second"):
    assert isinstance(zarr.open_group(str(theirs), mode="r")[f"acquisition/{name}/data"], zarr.Array)

for fmt in ("3", "2"):
    od = tmp / ("out" + fmt)
    od.mkdir()
    out = od / "top.nwb.zarr"
    r = subprocess.run([cli, "export", str(top), str(out), "--quiet", "--copy-links", "--zarr-format", fmt],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert sorted(p.name for p in od.iterdir()) == ["top.nwb.zarr"], list(od.iterdir())
    for name in ("first", "second"):  # (arrays alone: zarr 3 reads not all of our v2 metadata)
        data = zarr.open_array(str(out / "acquisition" / name / "data"), mode="r", zarr_format=int(fmt))
        assert np.array_equal(data[...], values), name
    r = subprocess.run([cli, "verify", str(top), str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    with NWBHDF5IO(str(top), "r") as hio, (NWBZarrIO if fmt == "3" else NWBZarrV2IO)(str(out), "r") as zio:
        ours = zio.read()
        same_containers(hio.read(), ours, f"v{fmt}")
        with NWBZarrIO(str(theirs), "r") as tio:
            same_containers(tio.read(), ours, f"v{fmt} vs hdmf-zarr's export")
        assert np.array_equal(ours.acquisition["second"].data[:], values)


def files(root):
    """{relative path: bytes} of every file under root."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --copy-links --resume: the disk fills mid-export (injected), the store stays
# marked incomplete, and --resume with the same request finishes it to the
# bytes of the uninterrupted export; a resume without --copy-links is refused
# (it would export the linked file beside instead) and changes nothing.
ref = tmp / "out3" / "top.nwb.zarr"
part = tmp / "resume" / "top.nwb.zarr"
part.parent.mkdir()
full = dict(os.environ, NZ_TEST_STORE_MAX_BYTES=str(sum(len(b) for b in files(ref).values()) // 2))
r = subprocess.run([cli, "export", str(top), str(part), "--quiet", "--copy-links"], env=full,
                   capture_output=True, text=True)
assert r.returncode == 1 and "No space left" in r.stderr, (r.returncode, r.stderr)
root_meta = part / "zarr.json"
assert (part / ".nwbzarr-incomplete").exists(), "a failed export is not marked incomplete"
assert not root_meta.exists() or '"consolidated_metadata"' not in root_meta.read_text(), "a failed export is consolidated"
before = files(part)
r = subprocess.run([cli, "export", str(top), str(part), "--quiet", "--resume"], capture_output=True, text=True)
assert r.returncode == 1 and "begun with copy_links" in r.stderr and files(part) == before, (r.returncode, r.stderr)
assert sorted(p.name for p in part.parent.iterdir()) == ["top.nwb.zarr"], list(part.parent.iterdir())
r = subprocess.run([cli, "export", str(top), str(part), "--quiet", "--copy-links", "--resume"],
                   capture_output=True, text=True)
assert r.returncode == 0, r.stderr
got, want = files(part), files(ref)
assert got.keys() == want.keys(), sorted(set(got) ^ set(want))
assert [k for k in got if got[k] != want[k]] == [], [k for k in got if got[k] != want[k]]
print("export_copylinks: pynwb external links copied in (v3 and v2), verified, read by "
      "NWBZarrIO / NWBZarrV2IO equal to the source and to hdmf-zarr 0.14's export; "
      "--copy-links --resume after a full disk gives the uninterrupted bytes")
