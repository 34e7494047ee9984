#!/usr/bin/env bash
# Throughput against the number of jobs: one generated recording written by
# every variant at -j 1..4, then a CSV and a PNG (bench/plot_scaling.py).
#
#   bench/bench_scaling.sh BUILD_DIR [SECONDS=30] [WORKDIR=mktemp]
#
# Environment: CHANNELS (384), CHUNKS (149984,32: hdmf-zarr's default for
# this shape), JOBS ("1 2 3 4": go past the core count to show the plateau),
# REPS (2: best wall time of REPS interleaved runs), OUT (bench/scaling:
# writes OUT.csv and OUT.png; with the default, also README.md's Performance
# table, machine and load), NZ_PYTHON (/usr/bin/python3, with Debian's
# python3-zarr and python3-matplotlib), PEERS (a bench_v3.sh CSV, e.g.
# bench/v3.csv: the plot also shows the Zarr v3 writers of that run).
#
# Variants, all blosc lz4 clevel 5 byte-shuffle, same chunks, same input (in
# the page cache):
#   bare_loop    bench/bare_loop.c: read, gather, compress, one file per chunk,
#                no format: the machine's practical limit at -j N
#   nwbzarr      bench/nz_write_raw: the engine writing one Zarr array
#   convert      `nwbzarr convert`: the whole NWB file; ends by syncing the
#                output's file system, so it includes writeback to disk
#   zarr-python  bench/zarr_python_write.py, Debian's zarr 2.13, with
#                BLOSC_NTHREADS=N (numcodecs compresses each chunk on N threads)
# Before each timing the output is removed and `sync` runs.
set -euo pipefail
build=$(cd "${1:?usage: bench_scaling.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
seconds=${2:-30}
work=${3:-$(mktemp -d /tmp/nz-scaling.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
channels=${CHANNELS:-384}
chunks=${CHUNKS:-149984,32}
jobs=${JOBS:-1 2 3 4}
reps=${REPS:-2}
out=${OUT:-$here/scaling}
py=${NZ_PYTHON:-/usr/bin/python3}
gen=$build/bench/gen_ephys nzw=$build/bench/nz_write_raw bare=$build/bench/bare_loop
cli=$build/src/cli/nwbzarr
for x in "$gen" "$nzw" "$bare" "$cli"; do
  [ -x "$x" ] || { echo "missing $x: build the project first" >&2; exit 2; }
done
"$py" -c 'import zarr, numcodecs, matplotlib' || { echo "$py lacks zarr/numcodecs/matplotlib (scripts/deps.sh)" >&2; exit 2; }
mkdir -p "$work"
raw=$work/rec.raw

cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
disk=$(df -T "$work" | awk 'NR==2 {print $1 " (" $2 ")"}')
load0=$(cut -d' ' -f1 /proc/loadavg)
echo "# generating ${seconds} s x ${channels} ch x 30 kHz int16"
"$gen" "$raw" "$seconds" "$channels"
bytes=$(stat -c %s "$raw")
cat "$raw" > /dev/null

# run VARIANT JOBS CMD...: one timing; keeps the best wall time per (variant, jobs).
declare -A best cpus
run() {
  local v=$1 j=$2 w c
  shift 2
  rm -rf "$work/out"
  sync
  /usr/bin/time -f '%e %U %S' -o "$work/time.txt" "$@" > /dev/null
  read -r w u s < "$work/time.txt"
  c=$(awk -v u="$u" -v s="$s" 'BEGIN {print u + s}')
  if [ -z "${best[$v,$j]:-}" ] || awk -v a="$w" -v b="${best[$v,$j]}" 'BEGIN {exit !(a < b)}'; then
    best[$v,$j]=$w cpus[$v,$j]=$c
  fi
  printf '  %-12s -j %s  %6.2f s\n' "$v" "$j" "$w"
}
variants="bare_loop nwbzarr convert zarr-python"
for ((r = 0; r < reps; r++)); do
  for j in $jobs; do
    run bare_loop "$j" "$bare" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j "$j"
    run nwbzarr "$j" "$nzw" "$raw" "$work/out" --channels "$channels" --chunks "$chunks" -j "$j" --quiet
    run convert "$j" "$cli" convert "$raw" -o "$work/out" --channels "$channels" --rate 30000 \
      --chunks "$chunks" -j "$j" -q
    run zarr-python "$j" env BLOSC_NTHREADS="$j" "$py" "$here/zarr_python_write.py" "$raw" \
      "$work/out" "$channels" "${chunks%,*}" "${chunks#*,}"
  done
done
rm -rf "$work/out" "$raw"
load1=$(cut -d' ' -f1 /proc/loadavg)

{
  echo "# nwbzarr bench/bench_scaling.sh, $(date -u '+%Y-%m-%d %H:%M UTC')"
  echo "# input: ${seconds} s x ${channels} ch x 30 kHz int16 ($bytes bytes), chunks ($chunks), blosc lz4 clevel 5 shuffle, best of $reps"
  echo "# machine: $(nproc) cores, $cpu, $(free -g | awk '/Mem:/ {print $2}') GiB RAM, $disk, Linux $(uname -r)"
  echo "# load average: $load0 at start, $load1 at end"
  echo "variant,jobs,wall_s,mb_per_s,cpu_s"
  for v in $variants; do
    for j in $jobs; do
      awk -v v="$v" -v j="$j" -v w="${best[$v,$j]}" -v c="${cpus[$v,$j]}" -v b="$bytes" \
        'BEGIN {printf "%s,%s,%.2f,%.1f,%.2f\n", v, j, w, b / 1e6 / w, c}'
    done
  done
} > "$out.csv"
cat "$out.csv"
"$py" "$here/plot_scaling.py" "$out.csv" "$out.png" ${PEERS:+--peers "$PEERS"}
echo "# wrote $out.csv and $out.png"
if [ "$out" = "$here/scaling" ]; then # the committed results: keep README.md's block in step
  "$py" "$here/plot_scaling.py" "$out.csv" --update-readme "$here/../README.md"
  echo "# updated README.md's Performance table"
fi
