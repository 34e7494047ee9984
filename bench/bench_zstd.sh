#!/usr/bin/env bash
# Why blosc-zstd is slower in nwbzarr than in its peers (issue 11): one inner
# chunk (30000 x 64 int16) and one whole shard row (300000 x 384: 60 inner
# chunks) of bench_v3's recording, compressed with blosc zstd by
#   Debian's c-blosc 1.21.3 as src/codec/codec_blosc.c calls it, and Debian's
#   libzstd directly on the same shuffled blocks (bench/zstd_chunk.c);
#   numcodecs' Blosc (zarr-python 3.4's), numcodecs' bundled zstd directly,
#   and TensorStore writing the chunks (bench/zstd_peers.py).
# First the bytes (blosc headers, then the zstd frames of every block), then
# the CPU time per chunk, one thread each.
#
#   bench/bench_zstd.sh BUILD_DIR [WORKDIR=mktemp]
#
# Environment: CLEVEL (3), REPS (5), QUICK=1 (REPS 2 and the first two
# inner-chunk rows of the shard row instead of all ten), OUT (prefix of
# OUT.csv and OUT.md; default WORKDIR/zstd), ZSTD_LIBS (folders, each
# holding a libzstd.so.1 of another zstd version, e.g. one built from
# zstd's source for this diagnosis only: zstd_chunk runs again with each as
# LD_LIBRARY_PATH, so Debian's own c-blosc calls that zstd), ZSTD13=1 (add
# Debian 13's libzstd 1.5.7 to ZSTD_LIBS, fetched by scripts/zstd-debian13.sh
# into BUILD_DIR/zstd-debian13; nothing added where the system's is already
# that), PY (a Python with numcodecs and
# tensorstore; default the venv bench_v3.sh makes, BUILD_DIR/venv-bench).
set -euo pipefail
build=$(cd "${1:?usage: bench_zstd.sh BUILD_DIR [WORKDIR]}" && pwd)
work=${2:-$(mktemp -d /tmp/nz-bench-zstd.XXXXXX)}
here=$(cd "$(dirname "$0")" && pwd)
for x in gen_ephys zstd_chunk; do
  [ -x "$build/bench/$x" ] || { echo "missing $build/bench/$x: build the project first" >&2; exit 2; }
done
clevel=${CLEVEL:-3}
reps=${REPS:-5}
seconds=10
if [ "${QUICK:-0}" = 1 ]; then reps=${REPS:-2}; seconds=2; fi
py=${PY:-$(bash "$here/../scripts/pyvenv.sh" "$build/venv-bench" "$here/requirements-bench.txt")}
mkdir -p "$work/chunk" "$work/row"
out=${OUT:-$work/zstd}
case $out in /*) ;; *) out=$PWD/$out ;; esac
"$build/bench/gen_ephys" "$work/rec.raw" "$seconds" 384
# Cut the recording into the benchmark's inner chunks, C order within each
# chunk, the shard row's chunks in C order of the grid.
"$py" - "$work" <<'EOF'
import sys, numpy as np
w = sys.argv[1]
a = np.fromfile(f"{w}/rec.raw", dtype="<i2").reshape(-1, 384)
ch = [a[i:i + 30000, j:j + 64] for i in range(0, len(a) - 29999, 30000) for j in range(0, 384, 64)]
np.ascontiguousarray(ch[0]).tofile(f"{w}/chunk.raw")
np.concatenate([c.ravel() for c in ch]).tofile(f"{w}/row.raw")
EOF
rm -f "$work/rec.raw"
"$build/bench/zstd_chunk" "$work/chunk.raw" 3840000 "$work/chunk" "$clevel" "$((reps * 4))" > "$work/chunk.csv"
"$build/bench/zstd_chunk" "$work/row.raw" 3840000 "$work/row" "$clevel" "$reps" > "$work/row.csv"
libs=${ZSTD_LIBS:-}
if [ "${ZSTD13:-0}" = 1 ]; then
  root=$(bash "$here/../scripts/zstd-debian13.sh" "$build/zstd-debian13")
  [ -z "$root" ] || libs="$libs $(dirname "$(echo "$root"/lib/*/libzstd.so.1)")"
fi
n=0
for lib in $libs; do
  n=$((n + 1))
  [ -e "$lib/libzstd.so.1" ] || { echo "ZSTD_LIBS: $lib has no libzstd.so.1" >&2; exit 2; }
  for in in chunk row; do
    mkdir -p "$work/$in-lib$n"
    LD_LIBRARY_PATH=$lib "$build/bench/zstd_chunk" "$work/$in.raw" 3840000 "$work/$in-lib$n" "$clevel" \
      "$([ $in = chunk ] && echo $((reps * 4)) || echo "$reps")" > "$work/$in-lib$n.csv"
  done
done
"$py" "$here/zstd_peers.py" "$work" "$clevel" "$reps" "$out"
echo "# wrote $out.md and $out.csv"
