#!/usr/bin/env bash
# Write benchmark: one synthetic recording, every variant timed in the same
# run. Builds nothing: pass a build directory that has bench/ built.
#
#   bench/bench_write.sh BUILD_DIR [SECONDS=60] [WORKDIR=mktemp]
#
# Environment: CHANNELS (384), REPS (3: best wall time of REPS interleaved
# runs for the fast variants), PY_REPS (1), ZSTD=1 (also time blosc-zstd clevel 5 with
# -j 1 and -j 2), BIG_SECONDS (e.g. 600: also write a recording that long
# with -j 2 to check peak RSS), NZ_PYTHON (/usr/bin/python3).
#
# Variants: cp of the raw file; bare_loop (read, gather, blosc, one plain file
# per chunk: the practical limit); nwbzarr = bench/nz_write_raw (the engine
# into one Zarr array); convert = `nwbzarr convert` (a whole NWB file, which
# ends with sync(), so its time includes flushing to disk); zarr-python.
#
# Each variant's wall time and peak RSS come from /usr/bin/time -v. Output
# directories are removed and `sync` runs before each timing so one run's
# writeback does not land on the next. Prints a table and, last, one JSON
# object per variant (machine-readable).
set -euo pipefail
build=$(cd "${1:?usage: bench_write.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
seconds=${2:-60}
work=${3:-$(mktemp -d /tmp/nz-bench.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
channels=${CHANNELS:-384}
reps=${REPS:-3}
py_reps=${PY_REPS:-1}
py=${NZ_PYTHON:-/usr/bin/python3}
gen=$build/bench/gen_ephys
nzw=$build/bench/nz_write_raw
bare=$build/bench/bare_loop
cli=$build/src/cli/nwbzarr
for x in "$gen" "$nzw" "$bare"; do
  [ -x "$x" ] || { echo "missing $x: build the bench targets first" >&2; exit 2; }
done
mkdir -p "$work"
raw=$work/rec.raw
results=$work/results.tsv
: > "$results"

echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine adds noise)"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
     "$(free -g | awk '/Mem:/ {print $2}') GiB RAM, work dir on $(df -h "$work" | awk 'NR==2 {print $1}')"
echo "# generating ${seconds} s x ${channels} ch x 30 kHz int16 into $raw"
"$gen" "$raw" "$seconds" "$channels"
bytes=$(stat -c %s "$raw")
cat "$raw" > /dev/null # the input starts in the page cache for every variant

# Variants are queued with `add NAME CHUNKS REPS CMD...` and measured by
# `measure`, which interleaves the repetitions (A B C, A B C, ...) so that
# every variant sees the same background load. Per variant: the best wall
# time (with that run's user+system CPU seconds) and the peak RSS of all runs.
names=() chunkss=() repss=() cmds=()
add() {
  names+=("$1"); chunkss+=("$2"); repss+=("$3")
  shift 3
  cmds+=("$(printf '%q ' "$@")")
}
declare -A best cpu rss
once() { # once INDEX
  local k=$1 w c m
  rm -rf "$work/out"
  sync
  eval "/usr/bin/time -v -o \"$work/time.txt\" ${cmds[$k]}" > "$work/stdout.txt"
  w=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0;
       for (k = 1; k <= n; k++) s = s * 60 + p[k]; print s}' "$work/time.txt")
  c=$(awk -F': ' '/(User|System) time \(seconds\)/ {s += $2} END {print s}' "$work/time.txt")
  m=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.txt")
  if [ -z "${best[$k]:-}" ] || awk -v a="$w" -v b="${best[$k]}" 'BEGIN {exit !(a < b)}'; then
    best[$k]=$w
    cpu[$k]=$c
  fi
  if [ -z "${rss[$k]:-}" ] || [ "$m" -gt "${rss[$k]}" ]; then rss[$k]=$m; fi
}
measure() { # measure TITLE: run the queued variants, print them, empty the queue
  local i k max=0 n=${#names[@]}
  echo "# $1"
  for ((k = 0; k < n; k++)); do [ "${repss[$k]}" -gt "$max" ] && max=${repss[$k]}; done
  for ((i = 0; i < max; i++)); do
    for ((k = 0; k < n; k++)); do
      [ "$i" -lt "${repss[$k]}" ] && once "$k"
    done
  done
  rm -rf "$work/out"
  for ((k = 0; k < n; k++)); do
    printf '%s\t%s\t%s\t%s\t%s\n' "${names[$k]}" "${chunkss[$k]}" "${best[$k]}" "${rss[$k]}" \
      "${cpu[$k]}" >> "$results"
    printf '  %-22s %-12s %7.2f s %8.1f MB/s %7.1f MiB %7.2f s cpu\n' "${names[$k]}" "${chunkss[$k]}" \
      "${best[$k]}" "$(awk -v b="$bytes" -v w="${best[$k]}" 'BEGIN {print b / 1e6 / w}')" \
      "$(awk -v m="${rss[$k]}" 'BEGIN {print m / 1024}')" "${cpu[$k]}"
  done
  names=() chunkss=() repss=() cmds=()
  best=() cpu=() rss=()
}

for chunks in 149984,32 12500,$channels; do
  add cp "$chunks" "$reps" cp "$raw" "$work/out"
  add bare_loop-j1 "$chunks" "$reps" "$bare" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j 1
  add bare_loop-j2 "$chunks" "$reps" "$bare" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j 2
  add nwbzarr-j1 "$chunks" "$reps" "$nzw" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j 1 --quiet
  add nwbzarr-j2 "$chunks" "$reps" "$nzw" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j 2 --quiet
  if [ -x "$cli" ]; then # the NWB file (metadata + ElectricalSeries), ends with sync()
    add convert-j1 "$chunks" "$reps" "$cli" convert "$raw" -o "$work/out" --channels "$channels" --rate 30000 --chunks "$chunks" -j 1 -q
    add convert-j2 "$chunks" "$reps" "$cli" convert "$raw" -o "$work/out" --channels "$channels" --rate 30000 --chunks "$chunks" -j 2 -q
  fi
  add zarr-python "$chunks" "$py_reps" "$py" "$here/zarr_python_write.py" "$raw" "$work/out" \
    "$channels" "${chunks%,*}" "${chunks#*,}"
  measure "chunks ($chunks), blosc lz4 clevel 5 shuffle 1"
done

if [ "${ZSTD:-1}" = 1 ]; then
  add nwbzarr-zstd-j1 149984,32 1 "$nzw" "$raw" "$work/out" --channels "$channels" --chunks 149984,32 --cname zstd -j 1 --quiet
  add nwbzarr-zstd-j2 149984,32 1 "$nzw" "$raw" "$work/out" --channels "$channels" --chunks 149984,32 --cname zstd -j 2 --quiet
  measure "chunks (149984,32), blosc zstd clevel 5 shuffle 1"
fi

if [ -n "${BIG_SECONDS:-}" ]; then
  rm -f "$raw"
  "$gen" "$raw" "$BIG_SECONDS" "$channels"
  bytes=$(stat -c %s "$raw")
  add nwbzarr-j2-big 149984,32 1 "$nzw" "$raw" "$work/out" --channels "$channels" --chunks 149984,32 -j 2 --quiet
  add nwbzarr-j2-big-tmajor "12500,$channels" 1 "$nzw" "$raw" "$work/out" --channels "$channels" --chunks "12500,$channels" -j 2 --quiet
  measure "${BIG_SECONDS} s recording: peak RSS must not grow with the input"
fi
rm -f "$raw"

echo "# ratios (wall time; > 1 means nwbzarr is faster / slower than the baseline)"
awk -F'\t' '{ t[$1 "@" $2] = $3; cpu[$1 "@" $2] = $5 }
  END {
    n = split("149984,32 12500,'"$channels"'", cs, " ")
    for (i = 1; i <= n; i++) {
      c = cs[i]
      printf "  chunks %-10s zarr-python / nwbzarr-j2 = %5.2f   nwbzarr-j2 / bare_loop-j2 = %4.2f   nwbzarr-j1 / bare_loop-j1 = %4.2f   j1 / j2 = %4.2f\n",
        c, t["zarr-python@" c] / t["nwbzarr-j2@" c], t["nwbzarr-j2@" c] / t["bare_loop-j2@" c],
        t["nwbzarr-j1@" c] / t["bare_loop-j1@" c], t["nwbzarr-j1@" c] / t["nwbzarr-j2@" c]
      if (("convert-j2@" c) in t)
        printf "  chunks %-10s zarr-python / convert-j2 = %5.2f   convert-j2 / bare_loop-j2 = %4.2f   convert j1 / j2 = %4.2f\n",
          c, t["zarr-python@" c] / t["convert-j2@" c], t["convert-j2@" c] / t["bare_loop-j2@" c], t["convert-j1@" c] / t["convert-j2@" c]
      printf "  chunks %-10s cpu seconds: nwbzarr-j2 / bare_loop-j2 = %4.2f   nwbzarr-j1 / bare_loop-j1 = %4.2f\n",
        c, cpu["nwbzarr-j2@" c] / cpu["bare_loop-j2@" c], cpu["nwbzarr-j1@" c] / cpu["bare_loop-j1@" c]
    }
    if (("nwbzarr-zstd-j1@149984,32") in t)
      printf "  zstd clevel 5: j1 / j2 = %4.2f\n", t["nwbzarr-zstd-j1@149984,32"] / t["nwbzarr-zstd-j2@149984,32"]
  }' "$results"
echo "# json"
awk -F'\t' '{ printf "{\"variant\": \"%s\", \"chunks\": [%s], \"wall_s\": %s, \"peak_rss_kib\": %s, \"cpu_s\": %s}\n", $1, $2, $3, $4, $5 }' "$results"
