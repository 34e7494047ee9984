#!/usr/bin/env bash
# --zarr-format and --shards on convert and export. convert writes Zarr v3
# by default (--zarr-format 3 the same, --shards accepted), 2 is today's v2
# layout; export writes v3 by default too (--shards refused only with
# --zarr-format 2). Every refused combination is a usage
# error (exit 2) naming the problem, and neither the input is read nor the
# output touched (an existing store survives even with --overwrite).
set -uo pipefail
T="$NZ_TMP/cli_format_flags"
rm -rf "$T" && mkdir -p "$T"
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# usage_error NAME NEEDLE -- command...: exit 2, stderr has NEEDLE
usage_error() {
	local name=$1 needle=$2 rc; shift 3
	"$@" >"$T/out.txt" 2>"$T/err.txt"; rc=$?
	[ $rc -eq 2 ] || fail "$name: exit $rc, expected 2: $(head -1 "$T/err.txt")"
	grep -qF -- "$needle" "$T/err.txt" || fail "$name: stderr lacks '$needle': $(head -1 "$T/err.txt")"
}

head -c 8000 /dev/zero >"$T/rec.bin"
mkdir -p "$T/old.nwb.zarr" && echo keep >"$T/old.nwb.zarr/marker"
conv=("$NZ_CLI" convert "$T/rec.bin" --channels 4 --rate 1000 -q)

"${conv[@]}" -o "$T/v2.nwb.zarr" --zarr-format 2 || fail "convert --zarr-format 2"
"${conv[@]}" -o "$T/plain.nwb.zarr" || fail "convert"
[ -e "$T/v2.nwb.zarr/.zmetadata" ] && [ ! -e "$T/v2.nwb.zarr/zarr.json" ] || fail "--zarr-format 2 is not v2"
[ -e "$T/plain.nwb.zarr/zarr.json" ] && [ ! -e "$T/plain.nwb.zarr/.zgroup" ] || fail "convert's default is not v3"
grep -q consolidated_metadata "$T/plain.nwb.zarr/zarr.json" || fail "v3 output is not consolidated"
"${conv[@]}" -o "$T/v3.nwb.zarr" --zarr-format 3 --seed 4 --create-date 2024-01-01T00:00:00Z || fail "convert --zarr-format 3"
"${conv[@]}" -o "$T/v3b.nwb.zarr" --seed 4 --create-date 2024-01-01T00:00:00Z || fail "convert (v3)"
diff -r "$T/v3.nwb.zarr" "$T/v3b.nwb.zarr" >/dev/null || fail "--zarr-format 3 differs from the default"
"${conv[@]}" -o "$T/sh.nwb.zarr" --chunks 100,4 --shards 500,4 || fail "convert --shards"
python3 - "$T/sh.nwb.zarr/acquisition/ElectricalSeries/data/zarr.json" <<'PY' || fail "--shards 500,4 not written"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["chunk_grid"]["configuration"]["chunk_shape"] == [500, 4], d["chunk_grid"]
assert d["codecs"][0]["name"] == "sharding_indexed"
assert d["codecs"][0]["configuration"]["chunk_shape"] == [100, 4]
PY

usage_error "convert shards with v2" "--shards needs --zarr-format 3" -- "${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 2 --shards 1000,4
usage_error "convert shards not a multiple" "not a multiple of --chunks 300,4" -- \
	"${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 3 --chunks 300,4 --shards 1000,4
usage_error "convert bad format" "--zarr-format needs 2 or 3, not '1'" -- "${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 1
usage_error "convert bad shards" "--shards needs ROWS,COLS" -- "${conv[@]}" -o "$T/new.nwb.zarr" --shards 10x4
# A missing input is not even looked at: the flags are refused first.
usage_error "convert v2 shards, missing input" "--shards needs --zarr-format 3" -- \
	"$NZ_CLI" convert "$T/none.bin" -o "$T/new.nwb.zarr" --zarr-format 2 --shards 10,4

# export writes v3 by default (issue 12): --shards is refused only with v2.
usage_error "export shards with v2" "--shards needs Zarr v3, not --zarr-format 2" -- \
	"$NZ_CLI" export "$T/none.nwb" "$T/old.nwb.zarr" --overwrite --zarr-format 2 --shards 1000,4
usage_error "export bad format" "--zarr-format needs 2 or 3" -- "$NZ_CLI" export "$T/none.nwb" "$T/new.nwb.zarr" --zarr-format 33
usage_error "export bad shards" "--shards needs ROWS,COLS" -- "$NZ_CLI" export "$T/none.nwb" "$T/new.nwb.zarr" --shards 4

[ "$(cat "$T/old.nwb.zarr/marker" 2>/dev/null)" = keep ] && [ "$(ls "$T/old.nwb.zarr")" = marker ] \
	|| fail "a refused command touched the existing output"
[ ! -e "$T/new.nwb.zarr" ] || fail "a refused command created an output"
grep -q -- "--zarr-format 2|3" <<<"$("$NZ_CLI" convert --help)" || fail "convert --help lacks --zarr-format"
grep -q -- "--shards R,C" <<<"$("$NZ_CLI" export --help)" || fail "export --help lacks --shards"

[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "format flags: all checks passed"
