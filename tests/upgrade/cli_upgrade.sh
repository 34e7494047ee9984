#!/usr/bin/env bash
# `nwbzarr upgrade` without any Python reader (so every build runs it): our
# own v2 convert output upgrades to a complete v3 store that `verify` finds
# equal to it, with every chunk reused (the JSON summary counts them), the
# same bytes for -j 1 and -j 3, usage errors (exit 2), and bad inputs: a
# missing chunk, a truncated .zmetadata, an incomplete or v3 input and an
# existing output each exit 1 with a message naming the file and the
# problem, and leave no output (an existing one untouched).
set -uo pipefail
T="$NZ_TMP/cli_upgrade"
rm -rf "$T" && mkdir -p "$T"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# expect_fail NAME STATUS NEEDLE -- command...: that exit status, stderr has NEEDLE
expect_fail() {
	local name=$1 status=$2 needle=$3; shift 4
	"$@" >"$T/out.txt" 2>"$T/err.txt"
	local rc=$?
	if [ "$rc" -ne "$status" ]; then
		fail "$name: exit $rc, not $status: $(cat "$T/err.txt")"
	elif ! grep -qF -- "$needle" "$T/err.txt"; then
		fail "$name: stderr lacks '$needle': $(cat "$T/err.txt")"
	fi
}
sum() { (cd "$1" && find . -type f | LC_ALL=C sort | xargs sha256sum) | sha256sum; }

head -c 9600000 /dev/urandom > "$T/rec.bin" # 300000 frames x 16 int16: 3 chunks
"$NZ_CLI" convert "$T/rec.bin" -o "$T/v2.nwb.zarr" --channels 16 --rate 30000 --zarr-format 2 -q \
	2>/dev/null || fail "convert exit $?"
nchunks=$(ls "$T/v2.nwb.zarr/acquisition/ElectricalSeries/data" | grep -c '^[0-9]')

# --- upgrade, verify, reuse, -j ---------------------------------------------
"$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/v3.nwb.zarr" -j 2 --json > "$T/sum.json" || fail "upgrade exit $?"
[ -e "$T/v3.nwb.zarr/.nwbzarr-incomplete" ] && fail "the output is still marked incomplete"
grep -q '"zarr_format": 3' "$T/v3.nwb.zarr/zarr.json" || fail "the output is not Zarr v3"
"$NZ_CLI" verify -q "$T/v2.nwb.zarr" "$T/v3.nwb.zarr" || fail "verify OLD NEW: exit $?"
reused=$(sed -n 's/.*"chunks_reused": \([0-9]*\).*/\1/p' "$T/sum.json")
[ "${reused:-0}" -ge "$nchunks" ] || fail "$reused chunks reused, the data alone has $nchunks: $(cat "$T/sum.json")"
cmp -s "$T/v2.nwb.zarr/acquisition/ElectricalSeries/data/0.0" \
	"$T/v3.nwb.zarr/acquisition/ElectricalSeries/data/c/0/0" || fail "chunk 0,0 was not moved as its bytes"
"$NZ_CLI" upgrade -q "$T/v2.nwb.zarr" -o "$T/j1.nwb.zarr" -j 1 || fail "upgrade -j 1 exit $?"
"$NZ_CLI" upgrade -q "$T/v2.nwb.zarr" "$T/j3.nwb.zarr" -j 3 || fail "upgrade -j 3 exit $?"
[ "$(sum "$T/v3.nwb.zarr")" = "$(sum "$T/j1.nwb.zarr")" ] || fail "-j 1 and -j 2 differ"
[ "$(sum "$T/v3.nwb.zarr")" = "$(sum "$T/j3.nwb.zarr")" ] || fail "-j 3 and -j 2 differ"
# re-encoding on request: nothing reused, still equal
"$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/zstd.nwb.zarr" --compressor zstd --json > "$T/sum2.json" || fail "--compressor"
grep -q '"chunks_reused": 0' "$T/sum2.json" || fail "--compressor zstd reused chunks: $(cat "$T/sum2.json")"
"$NZ_CLI" verify -q "$T/v2.nwb.zarr" "$T/zstd.nwb.zarr" || fail "verify after --compressor"
"$NZ_CLI" upgrade -q "$T/v2.nwb.zarr" "$T/rechunk.nwb.zarr" --chunks 10000,16 || fail "--chunks"
grep -q '10000' "$T/rechunk.nwb.zarr/acquisition/ElectricalSeries/data/zarr.json" || fail "--chunks not applied"

# --- usage errors ------------------------------------------------------------
"$NZ_CLI" upgrade --help | grep -q '^usage: nwbzarr upgrade' || fail "upgrade --help"
expect_fail "no output" 2 "required" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr"
expect_fail "bad -j" 2 "jobs" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/x" -j -1
expect_fail "bad --shards" 2 "--shards" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/x" --shards 7
expect_fail "bad --compressor" 2 "bogus" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/x" --compressor bogus
expect_fail "unknown flag" 2 "--bogus" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/x" --bogus
expect_fail "shards not a multiple" 1 "not a multiple" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/x" --shards 1000,7
[ -e "$T/x" ] && fail "a refused --shards left output"

# --- bad inputs: exit 1, the file and the problem named, no output ------------
bad() { rm -rf "$T/$1" && cp -r "$T/v2.nwb.zarr" "$T/$1"; }
bad missing.nwb.zarr
rm "$T/missing.nwb.zarr/acquisition/ElectricalSeries/data/1.0"
expect_fail "missing chunk" 1 "acquisition/ElectricalSeries/data/1.0' of" -- "$NZ_CLI" upgrade "$T/missing.nwb.zarr" "$T/out1"
grep -qF "$T/missing.nwb.zarr" "$T/err.txt" || fail "missing chunk: the file is not named"
[ -e "$T/out1" ] && fail "missing chunk: output left"
bad truncated.nwb.zarr
head -c 100 "$T/v2.nwb.zarr/.zmetadata" > "$T/truncated.nwb.zarr/.zmetadata"
expect_fail "truncated .zmetadata" 1 ".zmetadata" -- "$NZ_CLI" upgrade "$T/truncated.nwb.zarr" "$T/out2"
[ -e "$T/out2" ] && fail "truncated .zmetadata: output left"
bad incomplete.nwb.zarr
echo '{}' > "$T/incomplete.nwb.zarr/.nwbzarr-incomplete"
expect_fail "incomplete input" 1 "incomplete" -- "$NZ_CLI" upgrade "$T/incomplete.nwb.zarr" "$T/out3"
[ -e "$T/out3" ] && fail "incomplete input: output left"
expect_fail "v3 input" 1 "Zarr v3 already" -- "$NZ_CLI" upgrade "$T/v3.nwb.zarr" "$T/out4"
[ -e "$T/out4" ] && fail "v3 input: output left"
expect_fail "no input" 1 "$T/nothing" -- "$NZ_CLI" upgrade "$T/nothing" "$T/out5"
before=$(sum "$T/j1.nwb.zarr")
expect_fail "existing output" 1 "exists" -- "$NZ_CLI" upgrade "$T/v2.nwb.zarr" "$T/j1.nwb.zarr"
[ "$(sum "$T/j1.nwb.zarr")" = "$before" ] || fail "an existing output was changed"
"$NZ_CLI" upgrade -q --overwrite "$T/v2.nwb.zarr" "$T/j1.nwb.zarr" || fail "--overwrite exit $?"
[ "$(sum "$T/j1.nwb.zarr")" = "$before" ] || fail "--overwrite gave other bytes"

[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo ok
