#!/usr/bin/env bash
# Recording while acquiring (issue 14): K simultaneous 384-channel 30 kHz
# int16 streams (23 MB/s each) recorded into one file through the public
# record API, blosc-lz4 (the default), a flush every second.
#
#   bench/bench_record.sh BUILD_DIR [WORKDIR=mktemp]
#
# Steps K through KS (default "4 8 12 16 20 24"), each for SECONDS (20)
# with bench/bench_record.c (paced appenders, a reader timing when frames
# become readable), and reports:
#   - the largest K with no growing backlog (keeps_up: the appenders' lag
#     behind their clock ends under 1 s and does not grow by 0.5 s from the
#     first quarter to the last); target >= 16;
#   - the append-to-readable delay at K = 8 (p50, p99, max over every 10 ms
#     block of every stream); target <= 2 s;
#   - the peak RSS per series (the recording's memory over the process's
#     before it, divided by K); target <= 64 MiB.
# The input is 2 s of bench/gen_ephys data that every stream cycles
# through (compressors see ephys-like data; nothing is generated while
# timing). QUICK=1: K 2 4 8, 5 s each. Writes WORKDIR/record.csv and
# WORKDIR/record.md and prints the table. A full run takes about
# 6 x (20 s + set-up and close) = ~2.5 min.
set -euo pipefail
build=$(cd "${1:?usage: bench_record.sh BUILD_DIR [WORKDIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/nz-bench-record.XXXXXX)}
for x in gen_ephys bench_record; do
  [ -x "$build/bench/$x" ] || { echo "missing $build/bench/$x: build the project first" >&2; exit 2; }
done
if [ "${QUICK:-0}" = 1 ]; then
  ks=${KS:-"2 4 8"}; seconds=${SECONDS_PER_STEP:-5}
else
  ks=${KS:-"4 8 12 16 20 24"}; seconds=${SECONDS_PER_STEP:-20}
fi
mkdir -p "$work"
[ -s "$work/in.raw" ] || "$build/bench/gen_ephys" "$work/in.raw" 2 384 30000 1
csv=$work/record.csv
"$build/bench/bench_record" --header | sed 's/^/loadavg,/' >"$csv"
for k in $ks; do
  load=$(cut -d' ' -f1 /proc/loadavg)
  line=$("$build/bench/bench_record" "$work/in.raw" "$k" "$seconds" "$work/rec.nwb.zarr")
  echo "$load,$line" >>"$csv"
  echo "# K=$k: $line (load $load)" >&2
  rm -rf "$work/rec.nwb.zarr"
done
python3 - "$csv" "$work/record.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
out = ["| K | in MB/s | load | lag q1/q4/end s | keeps up | delay p50/p99/max s | close s | peak RSS MiB (per series) | ratio |",
       "|---|---|---|---|---|---|---|---|---|"]
for r in rows:
    out.append(f"| {r['k']} | {r['in_MBps']} | {r['loadavg']} | {r['lag_q1_s']}/{r['lag_q4_s']}/{r['lag_end_s']} | "
               f"{'yes' if r['keeps_up'] == '1' else 'no'} | {r['delay_p50_s']}/{r['delay_p99_s']}/{r['delay_max_s']} | "
               f"{r['close_s']} | {r['rss_peak_MiB']} ({r['rss_per_series_MiB']}) | {r['ratio']} |")
ok = [int(r['k']) for r in rows if r['keeps_up'] == '1']
k8 = [r for r in rows if r['k'] == '8']
out.append("")
out.append(f"largest K keeping up: {max(ok) if ok else 'none'} (target >= 16); "
           f"delay at K=8: {k8[0]['delay_max_s'] + ' s max' if k8 else 'not run'} (target <= 2 s); "
           f"peak RSS per series: {max(float(r['rss_per_series_MiB']) for r in rows):.1f} MiB max (target <= 64)")
open(sys.argv[2], "w").write("\n".join(out) + "\n")
print("\n".join(out))
EOF
