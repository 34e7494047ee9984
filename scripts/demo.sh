#!/usr/bin/env bash
# The README's main job: install, build, generate a realistic 384-channel
# int16 recording (bench/gen_ephys, seeded), convert it to NWB-Zarr with all
# cores, verify it with zarr-python against the raw samples, print throughput.
#   NZ_DEMO_SECONDS (default 60)  length of the recording
#   NZ_DEMO_DIR     (default out/demo)  where the files go
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
seconds=${NZ_DEMO_SECONDS:-60}
dir=${NZ_DEMO_DIR:-out/demo}
jobs=$(nproc)

cmake -S . -B build-release -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF >/dev/null
cmake --build build-release -j "$jobs" >/dev/null
cli=build-release/src/cli/nwbzarr

mkdir -p "$dir"
rec=$dir/recording.bin
out=$dir/recording.nwb.zarr
echo "== generating ${seconds} s x 384 channels x 30 kHz int16 -> $rec"
build-release/bench/gen_ephys "$rec" "$seconds" 384 30000 1

echo "== nwbzarr convert -j $jobs"
"$cli" convert "$rec" -o "$out" --channels 384 --rate 30000 -j "$jobs" --overwrite \
  --json > "$dir/convert.json"
/usr/bin/python3 - "$dir/convert.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
s["bytes"] = int(s["bytes"])
print("   %(bytes)d bytes in %(seconds).2f s = %(mb_per_s).1f MB/s with %(jobs)s jobs" % s)
PY

echo "== verifying with zarr-python"
/usr/bin/python3 scripts/check_recording.py "$out" "$rec" 384

echo "== nwbzarr info"
"$cli" info "$out" | head -40
