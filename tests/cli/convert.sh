#!/usr/bin/env bash
# `nwbzarr convert` and `info` end to end: round trip read by zarr-python,
# same bytes for any -j, side-car metadata, and bad inputs (clear message
# naming the file, non-zero exit, no complete-looking output).
set -uo pipefail
T="$NZ_TMP/cli_convert"
rm -rf "$T" && mkdir -p "$T"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_fail NAME NEEDLE -- command...: non-zero exit, stderr has NEEDLE
expect_fail() {
	local name=$1 needle=$2; shift 3
	if "$@" >"$T/out.txt" 2>"$T/err.txt"; then
		fail "$name: exit 0"
	elif ! grep -qF -- "$needle" "$T/err.txt"; then
		fail "$name: stderr lacks '$needle': $(cat "$T/err.txt")"
	elif ! grep -q '^nwbzarr: ' "$T/err.txt"; then
		fail "$name: message not prefixed 'nwbzarr: '"
	fi
}
py() { "$NZ_PYTHON" -c "$@"; }

py "import numpy as np; np.random.default_rng(1).integers(-3000, 3000, (3001, 8), dtype='<i2').tofile('$T/rec.bin')"

# --- help, version ---------------------------------------------------------
grep -q '^nwbzarr [0-9]' <<<"$("$NZ_CLI" --version)" || fail "--version"
for c in "" convert info; do
	grep -q '^usage: nwbzarr' <<<"$("$NZ_CLI" $c --help)" || fail "$c --help"
done
expect_fail "no command" "no command" -- "$NZ_CLI"
expect_fail "unknown flag" "--bogus" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/x" --bogus 1

# --- round trip -------------------------------------------------------------
"$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/a.nwb.zarr" --channels 8 --rate 30000 -j2 -q \
	|| fail "convert exit $?"
py "
import numpy as np, zarr, sys
raw = np.fromfile('$T/rec.bin', dtype='<i2').reshape(-1, 8)
for g in (zarr.open_consolidated('$T/a.nwb.zarr', mode='r'), zarr.open_group('$T/a.nwb.zarr', mode='r')):
    d = g['acquisition/ElectricalSeries/data']
    assert d.dtype == np.int16 and d.shape == raw.shape, (d.dtype, d.shape)
    assert np.array_equal(d[...], raw), 'data differ'
    assert g['acquisition/ElectricalSeries/starting_time'].attrs['rate'] == 30000.0
    assert list(g['acquisition/ElectricalSeries/electrodes'][...]) == list(range(8))
    assert g['general/extracellular_ephys/electrodes/id'].shape == (8,)
" || fail "round trip"
"$NZ_CLI" info "$T/a.nwb.zarr" >"$T/info.txt" || fail "info exit"
grep -q 'ElectricalSeries/ \[ElectricalSeries\]' "$T/info.txt" || fail "info lacks the series"
grep -q 'data .*(3001, 8) .*<i2 .*blosc(lz4,5)' "$T/info.txt" || fail "info lacks data line: $(grep data "$T/info.txt")"
"$NZ_CLI" info "$T/a.nwb.zarr" --json | py "
import json, sys
rows = [json.loads(l) for l in sys.stdin]
d = [r for r in rows if r['path'] == '/acquisition/ElectricalSeries/data'][0]
assert d['shape'] == [3001, 8] and d['stored_bytes'] > 0
" || fail "info --json"

# --- header offset, other dtypes, other compressors
{ head -c 64 /dev/zero; cat "$T/rec.bin"; } >"$T/hdr.bin"
"$NZ_CLI" convert --zarr-format 2 "$T/hdr.bin" -o "$T/hdr.nwb.zarr" --channels 8 --rate 1000 --offset 64 \
	--dtype uint16 --compressor zstd --clevel 3 -q || fail "convert --offset/--dtype"
py "
import numpy as np, zarr
raw = np.fromfile('$T/rec.bin', dtype='<u2').reshape(-1, 8)
d = zarr.open_consolidated('$T/hdr.nwb.zarr', mode='r')['acquisition/ElectricalSeries/data']
assert d.dtype == np.uint16 and np.array_equal(d[...], raw)
assert d.compressor.codec_id == 'zstd' and d.compressor.level == 3, d.compressor
" || fail "--offset/--dtype/--compressor values"
expect_fail "bad dtype" "--dtype" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/d.nwb.zarr" --channels 8 --rate 1 --dtype int17 -q
expect_fail "bad compressor" "--compressor" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/d.nwb.zarr" --channels 8 --rate 1 --compressor lzma -q
[ ! -e "$T/d.nwb.zarr" ] || fail "bad options: output was created"

# --- same bytes for any -j (seeded ids, fixed dates) --------------------------
cat >"$T/session.json" <<'JSON'
{"identifier": "det", "session_description": "determinism",
 "session_start_time": "2024-01-02T03:04:05-08:00", "file_create_date": "2024-01-02T04:00:00-08:00",
 "subject": {"subject_id": "m1", "species": "Mus musculus"},
 "series": {"conversion": 1.95e-7}}
JSON
for j in 1 2 3; do
	"$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/j$j.nwb.zarr" --channels 8 --rate 30000 -j$j \
		--chunks 250,4 --meta "$T/session.json" --seed 7 -q || fail "convert -j$j"
done
diff -r "$T/j1.nwb.zarr" "$T/j2.nwb.zarr" >/dev/null || fail "-j1 and -j2 outputs differ"
diff -r "$T/j1.nwb.zarr" "$T/j3.nwb.zarr" >/dev/null || fail "-j1 and -j3 outputs differ"
grep -q '"conversion": 1.95e-07' "$T/j1.nwb.zarr/acquisition/ElectricalSeries/data/.zattrs" \
	|| fail "session conversion not applied"
ls "$T/j1.nwb.zarr/acquisition/ElectricalSeries/data" | grep -q '^12\.1$' || fail "--chunks not applied"

"$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/flag.nwb.zarr" --channels 8 --rate 30000 -q \
	--meta "$T/session.json" --identifier from-flag --conversion 2e-6 --species Rattus || fail "flags + meta"
py "
import zarr
g = zarr.open_consolidated('$T/flag.nwb.zarr', mode='r')
assert g['identifier'][0] == 'from-flag', g['identifier'][0]
assert g['session_description'][0] == 'determinism'
assert g['general/subject/species'][0] == 'Rattus' and g['general/subject/subject_id'][0] == 'm1'
assert g['acquisition/ElectricalSeries/data'].attrs['conversion'] == 2e-6
" || fail "flags do not override the session JSON"

# --- the reference recording: every document and chunk as hdmf-zarr writes it
cat >"$T/ref.json" <<'JSON'
{"identifier": "ref-0001-2f6d1c7e", "session_description": "hdmf-zarr reference file for the C NWB-Zarr writer",
 "session_start_time": "2024-01-02T03:04:05-08:00", "file_create_date": "2024-01-02T04:00:00-08:00",
 "experimenter": ["Doe, Jane"], "lab": "Reference Lab", "institution": "Reference Institute",
 "keywords": ["ephys", "zarr", "reference"],
 "devices": [{"name": "probe0", "description": "4-channel test probe", "manufacturer": "Acme"}],
 "electrode_groups": [{"name": "shank0", "description": "shank 0", "location": "CA1", "device": "probe0"}],
 "electrodes": [{"group": "shank0", "x": 0, "y": 0, "z": 0, "imp": 1e6, "filtering": "none"},
                {"group": "shank0", "x": 1, "y": 0, "z": 10, "imp": 1e6, "filtering": "none"},
                {"group": "shank0", "x": 2, "y": 0, "z": 20, "imp": 1e6, "filtering": "none"},
                {"group": "shank0", "x": 3, "y": 0, "z": 30, "imp": 1e6, "filtering": "none"}],
 "series": {"description": "synthetic ephys (gen_ephys seed 1)", "conversion": 1.95e-7}}
JSON
"$NZ_CLI" convert --zarr-format 2 "$NZ_REF/raw/reference_ephys.int16" -o "$T/ref.nwb.zarr" -q \
	--channels 4 --rate 30000 --chunks 5000,4 --meta "$T/ref.json" \
	--spec-from "$NZ_REF/nwb/reference.nwb" || fail "convert of the reference recording"
"$NZ_PYTHON" "$(dirname "$0")/../nwb/compare_layout.py" --subset "$T/ref.nwb.zarr" \
	"$NZ_REF/zarr/reference_json.nwb.zarr" >"$T/cmp.txt" \
	|| fail "reference layout: $(cat "$T/cmp.txt")"

# --- side-car metadata --------------------------------------------------------
cp "$T/rec.bin" "$T/sg.ap.bin"
printf 'nSavedChans=8\nimSampRate=30000\nimAiRangeMax=0.6\nimMaxInt=512\n~imroTbl=(0,8)(0 0 0 500 250 1)\n' >"$T/sg.ap.meta"
"$NZ_CLI" convert --zarr-format 2 "$T/sg.ap.bin" -o "$T/sg.nwb.zarr" -q || fail "convert with SpikeGLX .meta"
py "
import zarr, numpy as np
g = zarr.open_consolidated('$T/sg.nwb.zarr', mode='r')
a = g['acquisition/ElectricalSeries/data']
assert a.shape == (3001, 8)
assert abs(a.attrs['conversion'] - 0.6 / (512 * 500)) < 1e-15, a.attrs['conversion']
" || fail "SpikeGLX side-car values"
mkdir -p "$T/oe/continuous/Rhythm_FPGA-100.0"
cp "$T/rec.bin" "$T/oe/continuous/Rhythm_FPGA-100.0/continuous.dat"
echo '{"continuous": [{"folder_name": "Rhythm_FPGA-100.0/", "sample_rate": 20000.0, "num_channels": 8, "channels": [{"bit_volts": 0.195, "units": "uV"}]}]}' >"$T/oe/structure.oebin"
"$NZ_CLI" convert --zarr-format 2 "$T/oe/continuous/Rhythm_FPGA-100.0/continuous.dat" -o "$T/oe.nwb.zarr" --json \
	>"$T/oe.json" || fail "convert with structure.oebin"
py "
import json
s = json.load(open('$T/oe.json'))
assert s['channels'] == 8 and s['rate'] == 20000.0 and s['frames'] == 3001, s
assert s['sidecar'].endswith('structure.oebin') and s['mb_per_s'] > 0
" || fail "--json summary / oebin values"

# --- bad inputs ---------------------------------------------------------------
head -c 48015 "$T/rec.bin" >"$T/odd.bin"
expect_fail "partial frame" "odd.bin" -- "$NZ_CLI" convert --zarr-format 2 "$T/odd.bin" -o "$T/odd.nwb.zarr" --channels 8 --rate 1 -q
[ ! -e "$T/odd.nwb.zarr" ] || fail "partial frame: output was created"
expect_fail "channels do not divide" "rec.bin" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/c7.nwb.zarr" --channels 7 --rate 1 -q
[ ! -e "$T/c7.nwb.zarr" ] || fail "bad channel count: output was created"
expect_fail "missing input" "nothere.bin" -- "$NZ_CLI" convert --zarr-format 2 "$T/nothere.bin" -o "$T/m.nwb.zarr" --channels 8 --rate 1 -q
[ ! -e "$T/m.nwb.zarr" ] || fail "missing input: output was created"
expect_fail "no channel count" "--channels" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/n.nwb.zarr" --rate 1 -q
echo '{"identifier": "x",' >"$T/bad.json"
expect_fail "bad JSON" "bad.json" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/b.nwb.zarr" --channels 8 --rate 1 --meta "$T/bad.json" -q
echo '{"identifer": "x"}' >"$T/typo.json"
expect_fail "unknown key" "identifer" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/b.nwb.zarr" --channels 8 --rate 1 --meta "$T/typo.json" -q
[ ! -e "$T/b.nwb.zarr" ] || fail "bad JSON: output was created"
echo '{"session_start_time": "2024-01-02 03:04"}' >"$T/time.json"
expect_fail "time without zone" "time zone" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/b.nwb.zarr" --channels 8 --rate 1 --meta "$T/time.json" -q
echo '{"electrode_groups": [{"name": "g"}], "electrodes": [{"group": "g"}]}' >"$T/few.json"
expect_fail "electrodes != channels" "1 electrodes" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/e.nwb.zarr" --channels 8 --rate 1 --meta "$T/few.json" -q
[ ! -e "$T/e.nwb.zarr" ] || fail "electrode count mismatch: output was created"
before=$(cat "$T/a.nwb.zarr/.zmetadata" | md5sum)
expect_fail "existing output" "--overwrite" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/a.nwb.zarr" --channels 8 --rate 1 -q
[ "$(md5sum <"$T/a.nwb.zarr/.zmetadata")" = "$before" ] || fail "existing output was modified"
"$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/a.nwb.zarr" --channels 8 --rate 2 -q --overwrite || fail "--overwrite"
grep -q '"rate": 2.0' "$T/a.nwb.zarr/acquisition/ElectricalSeries/starting_time/.zattrs" || fail "--overwrite did not replace"
# a bad --spec-from is found before the output is touched, and the message
# suggests no --resume (it could not help)
expect_fail "bad --spec-from" "nospec.nwb" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/s.nwb.zarr" --channels 8 --rate 1 --spec-from "$T/nospec.nwb" -q
[ ! -e "$T/s.nwb.zarr" ] || fail "bad --spec-from: output was created"
grep -q -- "--resume" "$T/err.txt" && fail "bad --spec-from suggests --resume"
# a failure after data were written (an injected full disk) leaves no
# .zmetadata, and says the output is incomplete and resumable
NZ_TEST_STORE_MAX_BYTES=20000 expect_fail "full disk" "No space left" -- "$NZ_CLI" convert --zarr-format 2 "$T/rec.bin" -o "$T/s.nwb.zarr" --channels 8 --rate 1 -q
grep -q "incomplete.*--resume" "$T/err.txt" || fail "failure does not say the output is incomplete"
[ -d "$T/s.nwb.zarr" ] && [ ! -e "$T/s.nwb.zarr/.zmetadata" ] || fail "failed output has .zmetadata"
"$NZ_CLI" info "$T/s.nwb.zarr" >"$T/inc.txt"; [ $? -eq 3 ] && grep -q "INCOMPLETE" "$T/inc.txt" || fail "info does not flag the incomplete file"
expect_fail "info of a non-store" "not a Zarr group" -- "$NZ_CLI" info "$T"

echo "$fails failures"
[ "$fails" -eq 0 ]
