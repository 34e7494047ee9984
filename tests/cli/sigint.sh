#!/usr/bin/env bash
# Ctrl-C during `convert`: the engine's cancel flag stops the write, the
# error says so, the exit status is 1 and the output is not consolidated.
set -uo pipefail
T="$NZ_TMP/cli_sigint"
rm -rf "$T" && mkdir -p "$T"
# 4 s of 384 channels, compressed slowly (zstd 13, one thread): seconds of work
# (gzip 9, libdeflate's, takes well under a second: too quick to interrupt)
"$NZ_PYTHON" -c "import numpy as np; np.random.default_rng(2).integers(-3000, 3000, (120000, 384), dtype='<i2').tofile('$T/rec.bin')"
# interrupt OUT [FLAGS...]: start the slow convert into OUT, Ctrl-C it after
# 0.5 s; its exit status in $rc, its stderr in $T/err.txt (and shown).
interrupt() {
	local out=$1
	shift
	"$NZ_CLI" convert "$T/rec.bin" -o "$out" --channels 384 --rate 30000 -j1 \
		--compressor zstd --clevel 13 "$@" 2>"$T/err.txt" &
	local pid=$!
	sleep 0.5
	kill -INT "$pid"
	wait "$pid"
	rc=$?
	cat "$T/err.txt"
}
interrupt "$T/out.nwb.zarr"
[ "$rc" -eq 1 ] || { echo "FAIL: exit $rc, expected 1"; exit 1; }
grep -q '^nwbzarr: .*canceled' "$T/err.txt" || { echo "FAIL: no 'canceled' message"; exit 1; }
grep -q 'incomplete' "$T/err.txt" || { echo "FAIL: not reported incomplete"; exit 1; }
! grep -q consolidated_metadata "$T/out.nwb.zarr/zarr.json" || { echo "FAIL: consolidated metadata written"; exit 1; }

# Ctrl-C during an --overwrite: the store it was replacing comes back whole.
head -c 76800 "$T/rec.bin" >"$T/small.bin"
"$NZ_CLI" convert "$T/small.bin" -o "$T/old.nwb.zarr" --channels 384 --rate 30000 -q || exit 1
sums() { (cd "$T/old.nwb.zarr" && find . -type f -print0 | sort -z | xargs -0 md5sum); }
before=$(sums)
interrupt "$T/old.nwb.zarr" --overwrite
[ "$rc" -eq 1 ] || { echo "FAIL: --overwrite: exit $rc, expected 1"; exit 1; }
grep -q "was left as it was" "$T/err.txt" || { echo "FAIL: --overwrite: old store not reported back"; exit 1; }
[ "$(sums)" = "$before" ] || { echo "FAIL: --overwrite: the old store changed"; exit 1; }
ls -a "$T" | grep -q nzold && { echo "FAIL: --overwrite: an old store was left aside"; exit 1; }
rm -rf "$T"
echo ok
