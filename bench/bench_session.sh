#!/usr/bin/env bash
# Session benchmark (issue 15): a SpikeGLX run with one probe's AP file
# (385 saved channels: 384 + sync, 30 kHz), its LF file (2.5 kHz) and NIDQ
# (2 channels), converted whole, against converting its AP file alone. The
# target: the whole run in at most 1.15x the AP file's time.
#
#   bench/bench_session.sh BUILD_DIR [SECONDS=60] [WORKDIR=mktemp]
#
# Environment: REPS (3: best wall time of REPS interleaved runs), JOBS (-j,
# default 0: all cores). The .meta files are the real ones of
# tests/data/recordings (session test4olivier_g0); the samples are
# gen_ephys's. Both conversions end with the store's sync(). Prints a table
# and, last, one JSON object (machine-readable).
set -euo pipefail
build=$(cd "${1:?usage: bench_session.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
seconds=${2:-60}
work=${3:-$(mktemp -d /tmp/nz-bench-session.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
reps=${REPS:-3} jobs=${JOBS:-0}
gen=$build/bench/gen_ephys cli=$build/src/cli/nwbzarr
meta=$here/../tests/data/recordings/spikeglx
[ -x "$gen" ] && [ -x "$cli" ] || { echo "build gen_ephys and nwbzarr first" >&2; exit 2; }
run=$work/run_g0 && mkdir -p "$run/run_g0_imec0"
ap=$run/run_g0_imec0/run_g0_t0.imec0.ap lf=$run/run_g0_imec0/run_g0_t0.imec0.lf nidq=$run/run_g0_t0.nidq
cp "$meta/sample3B_g0_t0.imec1.ap.meta" "$ap.meta"
cp "$meta/sample3B_g0_t0.imec1.lf.meta" "$lf.meta"
cp "$meta/sample3B_g0_t0.nidq.meta" "$nidq.meta"
[ -s "$ap.bin" ] || "$gen" "$ap.bin" "$seconds" 385 30000 1
[ -s "$lf.bin" ] || "$gen" "$lf.bin" "$seconds" 385 2500 2
[ -s "$nidq.bin" ] || "$gen" "$nidq.bin" "$seconds" 2 30000 3
cat "$ap.bin" "$lf.bin" "$nidq.bin" >/dev/null # into the page cache

one() { # NAME ARGS...: wall seconds of one conversion
	local name=$1 t0 t1
	shift
	rm -rf "$work/$name.nwb.zarr"
	sync
	t0=$(date +%s.%N)
	"$cli" convert "$@" -o "$work/$name.nwb.zarr" -q -j "$jobs" --session-start-time 2024-01-01T00:00:00Z
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc
}
best_ap= best_run=
for ((i = 0; i < reps; i++)); do
	a=$(one ap "$ap.bin")
	r=$(one run "$run")
	echo "rep $i: AP alone $a s, whole run $r s" >&2
	if [ -z "$best_ap" ] || (($(echo "$a < $best_ap" | bc))); then best_ap=$a; fi
	if [ -z "$best_run" ] || (($(echo "$r < $best_run" | bc))); then best_run=$r; fi
done
ratio=$(echo "scale=3; $best_run / $best_ap" | bc)
bytes_ap=$(stat -c %s "$ap.bin")
bytes_run=$((bytes_ap + $(stat -c %s "$lf.bin") + $(stat -c %s "$nidq.bin")))
printf '%-12s %10s %12s\n' variant seconds MB
printf '%-12s %10.2f %12.1f\n' ap-alone "$best_ap" "$(echo "$bytes_ap / 1000000" | bc -l)"
printf '%-12s %10.2f %12.1f\n' whole-run "$best_run" "$(echo "$bytes_run / 1000000" | bc -l)"
printf 'ratio %s (target <= 1.15)\n' "$ratio"
printf '{"bench": "session", "seconds_recorded": %s, "jobs": %s, "reps": %s, "ap_alone_s": %s, "whole_run_s": %s, "ratio": %s, "ap_bytes": %s, "run_bytes": %s}\n' \
	"$seconds" "$jobs" "$reps" "$best_ap" "$best_run" "$ratio" "$bytes_ap" "$bytes_run"
