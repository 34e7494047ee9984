#!/usr/bin/env bash
# Session benchmark (issue 15): a SpikeGLX run with one probe's AP file
# (385 saved channels: 384 + sync, 30 kHz), its LF file (2.5 kHz) and NIDQ
# (2 channels), converted whole, against converting its AP file alone. The
# target: the whole run in at most 1.15x the AP file's time.
#
#   bench/bench_session.sh BUILD_DIR [SECONDS=60] [WORKDIR=mktemp]
#
# Environment: PAIRS (7; an even number is made odd), JOBS (-j, default 0:
# all cores), FSYNC=1 (convert --fsync: each run makes its own files
# durable, where the default ends with syncfs(), which also waits for what
# other processes left dirty on the filesystem), QUICK=1 (10 s of
# recording, 3 pairs: a check that it runs, not a measurement).
#
# Robust to a shared machine: one untimed conversion of each kind first
# (the binary, the libraries and the page cache warm), then the runs come
# in pairs, an AP-alone run and a whole-run run back to back, the order
# alternating from pair to pair, and each pair gives its own ratios, so
# slow drift of the load cancels within a pair; the results are the
# medians of the pair ratios and the ratio of the summed times, with every pair and the 1-minute load
# average before it. Before every timed run the previous output is removed
# and synced away, and every input file of the run (AP, LF, NIDQ, for both
# kinds) is read into the page cache, so both start alike: nothing of the
# other's writing left to flush, nothing of its input left to read from
# disk. Each conversion ends with the store's sync() (time to data on
# disk, for both). Three ratios: wall; CPU (user + system of the process,
# from /usr/bin/time), which moves less on a loaded machine; and user CPU
# alone, which leaves out the kernel's page-cache and writeback work (most
# of the system time, and most of its variance). The .meta files are the
# real ones of tests/data/recordings (session test4olivier_g0); the samples
# are gen_ephys's. Prints a markdown table, writes
# WORKDIR/bench_session.csv, and prints last one JSON object
# (machine-readable).
set -euo pipefail
build=$(cd "${1:?usage: bench_session.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
if [ "${QUICK:-0}" = 1 ]; then
	seconds=${2:-10} pairs=${PAIRS:-3}
else
	seconds=${2:-60} pairs=${PAIRS:-7}
fi
pairs=$((pairs | 1)) # odd: the median is one pair's
work=${3:-$(mktemp -d /tmp/nz-bench-session.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
jobs=${JOBS:-0}
fsync=()
[ "${FSYNC:-0}" = 1 ] && fsync=(--fsync)
gen=$build/bench/gen_ephys cli=$build/src/cli/nwbzarr
meta=$here/../tests/data/recordings/spikeglx
[ -x "$gen" ] && [ -x "$cli" ] || { echo "build gen_ephys and nwbzarr first" >&2; exit 2; }
mkdir -p "$work"
run=$work/run_g0 && mkdir -p "$run/run_g0_imec0"
ap=$run/run_g0_imec0/run_g0_t0.imec0.ap lf=$run/run_g0_imec0/run_g0_t0.imec0.lf nidq=$run/run_g0_t0.nidq
cp "$meta/sample3B_g0_t0.imec1.ap.meta" "$ap.meta"
cp "$meta/sample3B_g0_t0.imec1.lf.meta" "$lf.meta"
cp "$meta/sample3B_g0_t0.nidq.meta" "$nidq.meta"
# Regenerate when the length asked for differs from what is there.
want=$((seconds * 30000 * 385 * 2))
if [ ! -s "$ap.bin" ] || [ "$(stat -c %s "$ap.bin")" != "$want" ]; then
	"$gen" "$ap.bin" "$seconds" 385 30000 1
	"$gen" "$lf.bin" "$seconds" 385 2500 2
	"$gen" "$nidq.bin" "$seconds" 2 30000 3
fi
# NAME ARGS...: prints "wall cpu user" seconds of one conversion, started
# with the previous output synced away and every input in the page cache.
one() {
	local name=$1 out
	shift
	rm -rf "$work/ap.nwb.zarr" "$work/run.nwb.zarr"
	sync
	cat "$ap.bin" "$lf.bin" "$nidq.bin" >/dev/null
	out=$( { /usr/bin/time -f '%e %U %S' "$cli" convert "$@" -o "$work/$name.nwb.zarr" -q \
		-j "$jobs" "${fsync[@]}" --session-start-time 2024-01-01T00:00:00Z; } 2>&1 >/dev/null | tail -1)
	awk '{ printf "%.3f %.3f %.3f\n", $1, $2 + $3, $2 }' <<<"$out"
}
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (Debian package time)" >&2; exit 2; }
ratio() { awk -v r="$1" -v a="$2" 'BEGIN { printf "%.3f", (a > 0 ? r / a : 0) }'; }

one ap "$ap.bin" >/dev/null # warm-up, untimed
one run "$run" >/dev/null
csv=$work/bench_session.csv
echo "pair,order,load1,ap_wall_s,run_wall_s,wall_ratio,ap_cpu_s,run_cpu_s,cpu_ratio,ap_user_s,run_user_s,user_ratio" >"$csv"
for ((i = 0; i < pairs; i++)); do
	load=$(cut -d' ' -f1 /proc/loadavg)
	if ((i % 2 == 0)); then
		order=ap-first
		read -r aw ac au < <(one ap "$ap.bin")
		read -r rw rc ru < <(one run "$run")
	else
		order=run-first
		read -r rw rc ru < <(one run "$run")
		read -r aw ac au < <(one ap "$ap.bin")
	fi
	wr=$(ratio "$rw" "$aw") cr=$(ratio "$rc" "$ac") ur=$(ratio "$ru" "$au")
	echo "$i,$order,$load,$aw,$rw,$wr,$ac,$rc,$cr,$au,$ru,$ur" >>"$csv"
	echo "pair $i ($order, load $load): AP alone $aw s, whole run $rw s: $wr (cpu $cr, user $ur)" >&2
done
rm -rf "$work/ap.nwb.zarr" "$work/run.nwb.zarr"

median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.3f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
col() { tail -n +2 "$csv" | cut -d, -f"$1"; }
med_wall=$(col 6 | median) med_cpu=$(col 9 | median) med_user=$(col 12 | median)
med_ap=$(col 4 | median) med_run=$(col 5 | median)
med_ap_cpu=$(col 7 | median) med_run_cpu=$(col 8 | median)
# The ratio of the summed times as well: the pair ratios come out bimodal by
# order (a kind run right after itself is slower), so with one order once
# more than the other the median leans to that side; the sums do not.
sum_ratio() { tail -n +2 "$csv" | awk -F, -v a="$1" -v b="$2" '{ x += $a; y += $b } END { printf "%.3f", y / x }'; }
tot_wall=$(sum_ratio 4 5) tot_cpu=$(sum_ratio 7 8)
bytes_ap=$(stat -c %s "$ap.bin")
bytes_run=$((bytes_ap + $(stat -c %s "$lf.bin") + $(stat -c %s "$nidq.bin")))

echo "| pair | order | load (1 min) | AP alone s | whole run s | ratio | AP cpu s | run cpu s | cpu ratio | AP user s | run user s | user ratio |"
echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
tail -n +2 "$csv" | tr , ' ' | while read -r p o l a r w ac rc c au ru u; do
	echo "| $p | $o | $l | $a | $r | $w | $ac | $rc | $c | $au | $ru | $u |"
done
echo
echo "median ratio $med_wall (target <= 1.15), cpu $med_cpu, user $med_user; ratio of the summed times $tot_wall (cpu $tot_cpu)"
echo "median AP alone $med_ap s" \
	"($med_ap_cpu s cpu), whole run $med_run s ($med_run_cpu s cpu); $seconds s recorded," \
	"$((bytes_ap / 1000000)) MB AP, $((bytes_run / 1000000)) MB run; -j $jobs${fsync:+ --fsync}; $pairs pairs; csv $csv"
printf '{"bench": "session", "seconds_recorded": %s, "jobs": %s, "fsync": %s, "pairs": %s, "median_ratio": %s, "total_ratio": %s, "total_cpu_ratio": %s, "median_cpu_ratio": %s, "median_user_ratio": %s, "median_ap_s": %s, "median_run_s": %s, "median_ap_cpu_s": %s, "median_run_cpu_s": %s, "ap_bytes": %s, "run_bytes": %s, "loadavg_end": "%s"}\n' \
	"$seconds" "$jobs" "${FSYNC:-0}" "$pairs" "$med_wall" "$tot_wall" "$tot_cpu" "$med_cpu" "$med_user" "$med_ap" "$med_run" \
	"$med_ap_cpu" "$med_run_cpu" "$bytes_ap" "$bytes_run" "$(cut -d' ' -f1-3 /proc/loadavg)"
