#!/usr/bin/env bash
# Zarr v3 with sharding: nwbzarr against its peers, in one run, on one
# generated recording, same codec chain, inner chunks and shards.
#
#   bench/bench_v3.sh BUILD_DIR [SECONDS=60] [WORKDIR=mktemp]
#
# Writes (int16, 384 ch, 30 kHz; inner chunks 30000,64; shards 300000,384;
# blosc lz4 clevel 5 byte shuffle, then blosc zstd clevel 3):
#   bare_shard-j1/-j2  bench/bare_shard.c: read, compress inner chunks, one
#                      file per shard with its index; no format library:
#                      the machine's limit
#   nwbzarr-j1/-j2     bench/nz_write_raw --zarr-format 3 --shards (the engine)
#   zarr-python, tensorstore, acquire-zarr   bench/v3_peers.py, 2 threads each
# and checks every output (bench/v3_check.py: layout and data, with
# zarr-python). Details of the timing: bench/bench_v3.py's docstring.
#
# Environment: REPS (3), CODECS ("lz4:5,zstd:3": blosc cname:clevel),
# CHANNELS (384), THREADS (2), BIG_SECONDS (e.g. 600: also nwbzarr and the
# bare loop at -j THREADS on an input that long, for peak RSS), SAMPLE=1
# (check a sample of chunks instead of every shard), OUT (prefix of the
# results: OUT.csv, OUT.md and OUT.png; default WORKDIR/v3).
# ZSTD_BUILD (a second build tree, configured with -DNZ_ZSTD_ROOT: for the
# zstd codecs also bare_shard-j1/-j2 and nwbzarr-j1/-j2 linked with that
# libzstd, named "... (zstd 1.5.7)", in the same rounds, checked the same
# way, with targets of their own), or ZSTD13=1: on Debian 12, make that tree
# here as BUILD_DIR/zstd13 with Debian 13's libzstd 1.5.7
# (scripts/zstd-debian13.sh BUILD_DIR/zstd-debian13; the same build type,
# only the three programs; needs deb.debian.org). Debian 12's libzstd 1.5.4
# lacks zstd 1.5.5's mid-level speed-up that the peers' bundled zstd has
# (bench/RESULTS.md, "Why blosc zstd is slower").
#
# The Python peers run in BUILD_DIR/venv-bench/venv, made by
# scripts/pyvenv.sh from scripts/requirements-readers.txt and
# bench/requirements-bench.txt (reused while those are unchanged). The plot
# (bench/plot_scaling.py --peers, Debian's python3-matplotlib) overlays the
# peers on bench/scaling.csv.
set -euo pipefail
build=$(cd "${1:?usage: bench_v3.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
seconds=${2:-60}
work=${3:-$(mktemp -d /tmp/nz-bench-v3.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
for x in gen_ephys bare_shard nz_write_raw; do
  [ -x "$build/bench/$x" ] || { echo "missing $build/bench/$x: build the project first" >&2; exit 2; }
done
zbuild=${ZSTD_BUILD:-}
if [ -z "$zbuild" ] && [ "${ZSTD13:-0}" = 1 ]; then
  root=$(bash "$here/../scripts/zstd-debian13.sh" "$build/zstd-debian13")
  if [ -n "$root" ]; then
    type=$(sed -n 's/^CMAKE_BUILD_TYPE:[A-Z]*=//p' "$build/CMakeCache.txt")
    zbuild=$build/zstd13
    cmake -S "$here/.." -B "$zbuild" -DCMAKE_BUILD_TYPE="${type:-Release}" -DNZ_ZSTD_ROOT="$root" \
      -DNZ_PYEXT=OFF -DBUILD_TESTING=OFF >/dev/null
    cmake --build "$zbuild" -j "$(nproc)" --target bare_shard nz_write_raw nwbzarr-cli >/dev/null
  fi # else the system's libzstd is already Debian 13's: nothing to add
fi
if [ -n "$zbuild" ]; then
  zbuild=$(cd "$zbuild" && pwd)
  for x in bench/bare_shard bench/nz_write_raw src/cli/nwbzarr; do
    [ -x "$zbuild/$x" ] || { echo "ZSTD_BUILD: missing $zbuild/$x: build it first" >&2; exit 2; }
  done
fi
py=$(bash "$here/../scripts/pyvenv.sh" "$build/venv-bench" "$here/requirements-bench.txt")
mkdir -p "$work"
out=${OUT:-$work/v3}
case $out in /*) ;; *) out=$PWD/$out ;; esac
args=(--build "$build" --py "$py" --work "$work" --out "$out" --seconds "$seconds"
      --channels "${CHANNELS:-384}" --codecs "${CODECS:-lz4:5,zstd:3}" --reps "${REPS:-3}"
      --threads "${THREADS:-2}" --big-seconds "${BIG_SECONDS:-0}")
[ "${SAMPLE:-0}" = 1 ] && args+=(--sample)
[ -n "$zbuild" ] && args+=(--zstd-build "$zbuild")
# The driver needs only the standard library; the venv's Python is used so
# that one interpreter runs the whole benchmark.
"$py" "$here/bench_v3.py" "${args[@]}"
cat "$out.md"
if /usr/bin/python3 -c 'import matplotlib' 2>/dev/null; then
  /usr/bin/python3 "$here/plot_scaling.py" "$here/scaling.csv" "$out.png" --peers "$out.csv"
  echo "# wrote $out.png (bench/scaling.csv with the peers of this run)"
fi
