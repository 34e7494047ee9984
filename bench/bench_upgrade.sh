#!/usr/bin/env bash
# Upgrade benchmark (issue 12): a large Zarr v2 NWB file (convert
# --zarr-format 2 of a 384-channel 30 kHz recording, Blosc lz4 as hdmf-zarr
# <= 0.13 writes it) upgraded to Zarr v3 by `nwbzarr upgrade` with -j 1 and
# -j 2 (chunks reused; with and without the closing verify), and by
# hdmf-zarr 0.14's own NWBZarrV2IO.convert_to_v3 on the same file (through
# zarr-python: every chunk decoded and encoded again, as `numcodecs.blosc`,
# a codec TensorStore does not read; the last line says whether `nwbzarr
# verify` finds its output equal to the source: it does not, because
# convert_to_v3 migrates the schema and keeps v2's zarr_dtype attributes).
#
#   bench/bench_upgrade.sh BUILD_DIR PYTHON [SECONDS=30] [WORKDIR=mktemp]
#
# PYTHON: an interpreter with hdmf-zarr 0.14 (the readers venv). QUICK=1:
# a 5 s recording. REPS (default 2): best wall time of REPS runs each.
# Prints a markdown table, writes upgrade.csv into WORKDIR, and prints, last,
# one JSON object (machine-readable). Each run ends with the store synced
# (nwbzarr syncs; convert_to_v3's output is synced by `sync`).
set -euo pipefail
build=$(cd "${1:?usage: bench_upgrade.sh BUILD_DIR PYTHON [SECONDS] [WORKDIR]}" && pwd)
py=${2:?usage: bench_upgrade.sh BUILD_DIR PYTHON [SECONDS] [WORKDIR]}
seconds=${3:-30}
[ "${QUICK:-0}" = 1 ] && seconds=5
work=${4:-$(mktemp -d /tmp/nz-bench-upgrade.XXXXXX)}
reps=${REPS:-2}
gen=$build/bench/gen_ephys cli=$build/src/cli/nwbzarr
[ -x "$gen" ] && [ -x "$cli" ] || { echo "build gen_ephys and nwbzarr first" >&2; exit 2; }
mkdir -p "$work"
rec=$work/rec.bin v2=$work/v2.nwb.zarr
[ -s "$rec" ] || "$gen" "$rec" "$seconds" 384 30000 1
rm -rf "$v2"
"$cli" convert "$rec" -o "$v2" --channels 384 --rate 30000 --zarr-format 2 -q 2>/dev/null
mb=$(du -sm "$v2" | cut -f1)

now() { date +%s.%N; }
best() { # NAME COMMAND...: the best wall seconds of REPS runs, output removed before each
	local name=$1 b= t0 t1 t
	shift
	for ((i = 0; i < reps; i++)); do
		rm -rf "$work/$name.nwb.zarr"
		sync
		t0=$(now)
		"$@" >/dev/null
		sync
		t1=$(now)
		t=$(echo "$t1 - $t0" | bc)
		echo "  $name rep $i: $t s" >&2
		if [ -z "$b" ] || (($(echo "$t < $b" | bc))); then b=$t; fi
	done
	echo "$b"
}
up() { "$cli" upgrade "$v2" "$work/$1.nwb.zarr" -q "${@:2}"; }
c14() {
	"$py" -c 'import sys, warnings; warnings.simplefilter("ignore")
from hdmf_zarr import NWBZarrV2IO
NWBZarrV2IO.convert_to_v3(source_path=sys.argv[1], dest_path=sys.argv[2])' "$v2" "$work/c14.nwb.zarr"
}
j1=$(best j1 up j1 -j 1 --no-verify)
j2=$(best j2 up j2 -j 2 --no-verify)
j1v=$(best j1v up j1v -j 1)
j2v=$(best j2v up j2v -j 2)
c=$(best c14 c14)
"$cli" verify -q "$v2" "$work/c14.nwb.zarr" >/dev/null 2>&1 && c14ok=yes || c14ok=no
load=$(cut -d' ' -f1-3 /proc/loadavg)
ratio() { echo "scale=2; $1 / $2" | bc; }
{
	echo "engine,jobs,verify,seconds,mb_per_s"
	echo "nwbzarr upgrade,1,no,$j1,$(ratio "$mb" "$j1")"
	echo "nwbzarr upgrade,2,no,$j2,$(ratio "$mb" "$j2")"
	echo "nwbzarr upgrade,1,yes,$j1v,$(ratio "$mb" "$j1v")"
	echo "nwbzarr upgrade,2,yes,$j2v,$(ratio "$mb" "$j2v")"
	echo "hdmf-zarr 0.14 convert_to_v3,1,no,$c,$(ratio "$mb" "$c")"
} > "$work/upgrade.csv"
echo "Upgrade of a ${seconds} s x 384 ch int16 v2 file ($mb MB stored, Blosc lz4), best of $reps, load $load"
echo
echo "| engine | -j | verify | seconds | stored MB/s | vs convert_to_v3 |"
echo "|---|---|---|---|---|---|"
tail -n +2 "$work/upgrade.csv" | while IFS=, read -r e j v s r; do
	echo "| $e | $j | $v | $s | $r | $(ratio "$c" "$s")x |"
done
echo
echo "nwbzarr verify reads convert_to_v3's output and finds it equal to the source: $c14ok"
printf '{"seconds_of_recording": %s, "stored_mb": %s, "upgrade_j1": %s, "upgrade_j2": %s, "upgrade_j1_verify": %s, "upgrade_j2_verify": %s, "convert_to_v3": %s, "load": "%s"}\n' \
	"$seconds" "$mb" "$j1" "$j2" "$j1v" "$j2v" "$c" "$load"
