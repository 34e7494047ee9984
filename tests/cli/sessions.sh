#!/usr/bin/env bash
# `convert SESSION` from the command line (no Python readers needed): a
# SpikeGLX run in SpikeGLX's folder layout (run_g0/run_g0_imec0/...) found
# from any of its files or its folder, --streams, --json; an Open Ephys
# recording from its continuous.dat; and bad sessions: exit status, a
# message naming the file and the problem, no output written, an existing
# output untouched. The series' contents are checked by rec_sessions.
set -uo pipefail
T="$NZ_TMP/cli_sessions"
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
nz=${NZ_CLI:?} R=$NZ_REF/recordings
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# A .bin of `frames` x nSavedChans int16 beside each .meta.
mkbin() { # META FRAMES
	local n
	n=$(sed -n 's/^nSavedChans=\([0-9]*\).*/\1/p' "$1")
	head -c $(($2 * n * 2)) /dev/urandom >"${1%.meta}.bin"
}
mkdir -p run_g0/run_g0_imec0
cp "$R/spikeglx/sample3B_g0_t0.imec1.ap.meta" run_g0/run_g0_imec0/run_g0_t0.imec0.ap.meta
cp "$R/spikeglx/sample3B_g0_t0.imec1.lf.meta" run_g0/run_g0_imec0/run_g0_t0.imec0.lf.meta
cp "$R/spikeglx/sample3B_g0_t0.nidq.meta" run_g0/run_g0_t0.nidq.meta
mkbin run_g0/run_g0_imec0/run_g0_t0.imec0.ap.meta 1200
mkbin run_g0/run_g0_imec0/run_g0_t0.imec0.lf.meta 1000
mkbin run_g0/run_g0_t0.nidq.meta 1200

series() { # STORE (Zarr v3, convert's default, or v2): the names under acquisition/, sorted, one line
	python3 -c "
import json, os, sys
p = sys.argv[1]
if os.path.exists(p + '/.zmetadata'):
    m = json.load(open(p + '/.zmetadata'))['metadata']
else:
    m = {k + '/zarr.json': v for k, v in json.load(open(p + '/zarr.json'))['consolidated_metadata']['metadata'].items()}
print(' '.join(sorted({k.split('/')[1] for k in m if k.startswith('acquisition/') and k.count('/') >= 2})))
" "$1"
}
ALL="ElectricalSeriesAP ElectricalSeriesLF TimeSeriesImec0Sync TimeSeriesNIDQ TimeSeriesNIDQDigital"
for from in run_g0 run_g0/run_g0_t0.nidq.meta run_g0/run_g0_imec0/run_g0_t0.imec0.lf.meta; do
	rm -rf out.nwb.zarr
	"$nz" convert "$from" -o out.nwb.zarr -q --session-start-time 2024-01-01T00:00:00Z ||
		fail "convert $from"
	[ "$(series out.nwb.zarr)" = "$ALL" ] || fail "from $from: series $(series out.nwb.zarr)"
done
"$nz" convert run_g0 -o lf.nwb.zarr --streams imec0.lf,nidq --json >lf.json || fail "--streams"
[ "$(series lf.nwb.zarr)" = "ElectricalSeriesLF TimeSeriesImec0Sync TimeSeriesNIDQ TimeSeriesNIDQDigital" ] ||
	fail "--streams imec0.lf,nidq: $(series lf.nwb.zarr)"
python3 -c "
import json
j = json.load(open('lf.json'))
assert [s['id'] for s in j['streams']] == ['imec0.lf', 'nidq'], j
assert j['streams'][0]['frames'] == 1000 and j['streams'][0]['channels'] == 385
" || fail "--json streams"

# Open Ephys, named by one of its data files.
oe=$T/oe/rec && mkdir -p "$oe" && cp "$R/openephys/probeinterface-OE_OneBox-NP2014-binary/Record_Node_101/experiment1/recording1/structure.oebin" "$oe/"
mkdir -p "$oe/continuous/OneBox-111.ProbeA" "$oe/continuous/OneBox-111.OneBox-ADC"
head -c $((600 * 385 * 2)) /dev/urandom >"$oe/continuous/OneBox-111.ProbeA/continuous.dat"
head -c $((600 * 12 * 2)) /dev/urandom >"$oe/continuous/OneBox-111.OneBox-ADC/continuous.dat"
"$nz" convert "$oe/continuous/OneBox-111.ProbeA/continuous.dat" --streams "Record Node 0/ProbeA" \
	-o oe1.nwb.zarr -q 2>/dev/null && fail "a stream id of another node was accepted"
"$nz" convert "$oe/structure.oebin" -o oe.nwb.zarr -q || fail "convert structure.oebin"
[ "$(series oe.nwb.zarr)" = "ElectricalSeriesProbeA TimeSeriesOneBoxADC TimeSeriesProbeASync" ] ||
	fail "open ephys series: $(series oe.nwb.zarr)"

# --- bad sessions --------------------------------------------------------------
row() { # NAME RC NEEDLE -- ARGS...: no output appears, `keep` stays as it was
	local name=$1 rc=$2 needle=$3 got
	shift 4
	before=$(find keep -type f -exec md5sum {} + | sort | md5sum)
	"$nz" "$@" -q 2>err.txt
	got=$?
	[ "$got" = "$rc" ] || fail "$name: exit $got, expected $rc: $(cat err.txt)"
	grep -qF -- "$needle" err.txt || fail "$name: stderr lacks '$needle': $(cat err.txt)"
	[ ! -e new.nwb.zarr ] || fail "$name: an output was written"
	[ "$(find keep -type f -exec md5sum {} + | sort | md5sum)" = "$before" ] ||
		fail "$name: the existing output changed"
	rm -rf new.nwb.zarr
}
cp -r out.nwb.zarr keep
bad() { rm -rf b && cp -r run_g0 b; }
bad; rm b/run_g0_imec0/run_g0_t0.imec0.lf.bin
row "missing .bin" 1 "run_g0_t0.imec0.lf.bin" -- convert b -o new.nwb.zarr
bad; head -c 1001 /dev/zero >b/run_g0_t0.nidq.bin
row "partial frame" 1 "whole number of frames" -- convert b -o new.nwb.zarr
bad; : >b/run_g0_t0.nidq.bin
row "empty .bin" 1 "holds no frames" -- convert b -o new.nwb.zarr
bad; sed -i 's/^imSampRate=.*/imSampRate=fast/' b/run_g0_imec0/run_g0_t0.imec0.ap.meta
row "bad rate" 1 "imSampRate='fast' is not a number" -- convert b -o new.nwb.zarr
bad; sed -i 's/^imDatPrb_type=.*/imDatPrb_type=3333/' b/run_g0_imec0/run_g0_t0.imec0.ap.meta
row "unknown probe" 1 "probe type 3333" -- convert b/run_g0_t0.nidq.meta -o new.nwb.zarr
bad; cp b/run_g0_t0.nidq.meta b/other_g0_t0.nidq.meta && cp b/run_g0_t0.nidq.bin b/other_g0_t0.nidq.bin
row "two runs" 1 "several SpikeGLX runs" -- convert b -o new.nwb.zarr
row "unknown stream" 2 "no stream 'imec9.ap'" -- convert run_g0 -o new.nwb.zarr --streams imec0.ap,imec9.ap
row "raw flags" 2 "do not apply to a session" -- convert run_g0/run_g0_t0.nidq.meta -o new.nwb.zarr --channels 4
row "--flush-interval" 2 "--flush-interval is for streams" -- convert run_g0/run_g0_t0.nidq.meta -o new.nwb.zarr --flush-interval 1
echo '{"devices": [{"name": "d"}]}' >el.json
row "JSON devices" 2 "come from the recording" -- convert run_g0 -o new.nwb.zarr --meta el.json
mkdir empty
row "nothing there" 1 "holds no SpikeGLX .meta" -- convert empty -o new.nwb.zarr
row "existing output" 1 "keep" -- convert run_g0 -o keep
rm "$oe/continuous/OneBox-111.OneBox-ADC/continuous.dat"
row "oe missing .dat" 1 "OneBox-ADC/continuous.dat" -- convert "$oe" -o new.nwb.zarr

[ "$fails" = 0 ] || { echo "$fails failures"; exit 1; }
echo ok
