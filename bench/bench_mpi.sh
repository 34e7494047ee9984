#!/usr/bin/env bash
# Multi-process benchmark: `nwbzarr convert` of one synthetic recording as
# ranks x threads, all on this machine, each output compared byte for byte
# with the single-process one. Builds nothing: pass a build directory
# configured with -DNZ_MPI=ON that has bench/ built (gen_ephys).
#
#   bench/bench_mpi.sh BUILD_DIR [SECONDS=10] [WORKDIR=mktemp]
#
# Environment: CHANNELS (384), REPS (2: best wall time of REPS interleaved
# runs), CONFIGS ("1x1 1x2 2x1 2x2 3x1": ranks x threads; 1xN runs without
# mpirun), MPIRUN (mpirun).
#
# Every run ends with the store's sync() (as `nwbzarr convert` does), so the
# times include flushing to disk. Ranks on one machine share its cores and
# its disk: this measures the overhead of the MPI driver (start-up, phases,
# exchanges), not cluster scaling. Prints a table, then one JSON object per
# configuration.
set -euo pipefail
build=$(cd "${1:?usage: bench_mpi.sh BUILD_DIR [SECONDS] [WORKDIR]}" && pwd)
seconds=${2:-10}
work=${3:-$(mktemp -d /tmp/nz-bench-mpi.XXXXXX)}
channels=${CHANNELS:-384}
reps=${REPS:-2}
configs=${CONFIGS:-"1x1 1x2 2x1 2x2 3x1"}
mpirun=${MPIRUN:-mpirun}
gen=$build/bench/gen_ephys
cli=$build/src/cli/nwbzarr
for x in "$gen" "$cli"; do
  [ -x "$x" ] || { echo "missing $x: build the bench targets first" >&2; exit 2; }
done
mkdir -p "$work"
raw=$work/rec.raw
echo "# load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "# $($mpirun --version | head -1); generating ${seconds} s x ${channels} ch x 30 kHz int16"
"$gen" "$raw" "$seconds" "$channels"
bytes=$(stat -c %s "$raw")
cat "$raw" >/dev/null

run() { # run RANKS THREADS OUT
  local args=("$raw" -o "$3" --channels "$channels" --rate 30000 --seed 1
              --create-date 2024-01-01T00:00:00Z -q -j "$2")
  if [ "$1" = 1 ]; then
    "$cli" convert "${args[@]}"
  else
    "$mpirun" --allow-run-as-root --oversubscribe -n "$1" --mca btl self,vader \
      --mca btl_vader_single_copy_mechanism none "$cli" convert "${args[@]}"
  fi
}

declare -A best
for ((r = 0; r < reps; r++)); do
  for c in $configs; do
    out=$work/out-$c
    rm -rf "$out"; sync
    t0=$(date +%s.%N)
    run "${c%x*}" "${c#*x}" "$out"
    t=$(echo "$(date +%s.%N) - $t0" | bc)
    if [ -z "${best[$c]:-}" ] || [ "$(echo "$t < ${best[$c]}" | bc)" = 1 ]; then best[$c]=$t; fi
    [ "$c" = "${configs%% *}" ] || diff -r "$work/out-${configs%% *}" "$out" >/dev/null \
      || { echo "output of $c differs from ${configs%% *}" >&2; exit 1; }
  done
done

printf '%-12s %8s %10s\n' "ranks x -j" "wall s" "MB/s"
for c in $configs; do
  printf '%-12s %8.2f %10.1f\n' "$c" "${best[$c]}" "$(echo "$bytes / 1000000 / ${best[$c]}" | bc -l)"
done
for c in $configs; do
  printf '{"ranks": %d, "jobs": %d, "bytes": %d, "seconds": %.3f}\n' "${c%x*}" "${c#*x}" \
    "$bytes" "${best[$c]}"
done
echo "# identical outputs: yes; load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
[ -n "${3:-}" ] || rm -rf "$work"
