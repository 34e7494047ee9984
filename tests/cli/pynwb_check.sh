#!/usr/bin/env bash
# pynwb 2.6 + hdmf-zarr 0.6 read what `convert` writes, and the series equals
# the input. Needs NZ_PYREF (a folder with env.sh and read_nwbzarr.py);
# exit 77 = skipped (ctest shows it as such).
set -euo pipefail
if [ -z "${NZ_PYREF:-}" ] || [ ! -f "$NZ_PYREF/env.sh" ]; then
	echo "SKIP: NZ_PYREF not set (pynwb/hdmf-zarr reference readers unavailable)"
	exit 77
fi
source "$NZ_PYREF/env.sh"
T="$NZ_TMP/cli_pynwb"
rm -rf "$T" && mkdir -p "$T"
raw="$NZ_REF/raw/reference_ephys.int16"
read_back() { "$NZ_PYTHON" "$NZ_PYREF/read_nwbzarr.py" "$1" --quiet --compare-raw "$raw" \
	--series /acquisition/ElectricalSeries --channels 4 "${@:2}"; }
# defaults only: no cached schema (pynwb warns and uses its own)
"$NZ_CLI" convert "$raw" -o "$T/plain.nwb.zarr" --channels 4 --rate 30000 -j2 -q
read_back "$T/plain.nwb.zarr"
# full metadata, schema copied from the HDF5 reference: no warnings at all
cat >"$T/session.json" <<'JSON'
{"identifier": "pynwb-check", "session_description": "pynwb read-back",
 "session_start_time": "2024-01-02T03:04:05-08:00", "experimenter": ["Doe, Jane"],
 "keywords": ["a", "b"], "lab": "L", "institution": "I",
 "related_publications": "doi:10.1000/1", "notes": "n", "session_id": "s1",
 "subject": {"subject_id": "m1", "species": "Mus musculus", "sex": "F", "age": "P90D",
             "age_reference": "gestational", "date_of_birth": "2023-10-04T00:00:00-07:00",
             "weight": "25 g", "strain": "C57BL/6J", "genotype": "wt", "description": "d"},
 "devices": [{"name": "probe0", "description": "probe", "manufacturer": "Acme"}],
 "electrode_groups": [{"name": "shank0", "description": "shank", "location": "CA1", "device": "probe0"}],
 "electrodes": [{"group": "shank0", "x": 0}, {"group": "shank0", "x": 1}, {"group": "shank0", "x": 2}, {"group": "shank0", "x": 3}],
 "series": {"description": "raw", "conversion": 1.95e-7, "channel_conversion": [1, 1, 0.5, 2]}}
JSON
"$NZ_CLI" convert "$raw" -o "$T/full.nwb.zarr" --channels 4 --rate 30000 -j3 -q \
	--meta "$T/session.json" --spec-from "$NZ_REF/nwb/reference.nwb" --chunks 4096,2
read_back "$T/full.nwb.zarr" --strict-warnings
"$NZ_PYTHON" - "$T/full.nwb.zarr" <<'PY'
import sys
from hdmf_zarr.nwb import NWBZarrIO
with NWBZarrIO(sys.argv[1], "r") as io:
    f = io.read()
    s = f.subject
    assert s.date_of_birth.isoformat() == "2023-10-04T00:00:00-07:00", s.date_of_birth
    assert (s.age, s.age__reference, s.weight) == ("P90D", "gestational", "25 g")
    assert f.session_start_time.isoformat() == "2024-01-02T03:04:05-08:00"
    assert list(f.experimenter) == ["Doe, Jane"] and f.session_id == "s1"
    es = f.acquisition["ElectricalSeries"]
    assert es.rate == 30000.0 and abs(es.conversion - 1.95e-7) < 1e-20
    assert list(es.channel_conversion[:]) == [1, 1, 0.5, 2]
    assert list(es.electrodes.table["x"][:]) == [0, 1, 2, 3]
    assert es.electrodes.table["group"][0].name == "shank0"
print("pynwb fields OK")
PY
