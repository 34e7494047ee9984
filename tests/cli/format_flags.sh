#!/usr/bin/env bash
# --zarr-format and --shards on convert and export: 2 is accepted (and is
# what convert wrote before the flag existed), every combination that asks
# for Zarr v3 or shards (export: shards with v2) is a usage error (exit 2)
# naming the problem, and
# neither the input is read nor the output touched (an existing store
# survives even with --overwrite).
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

usage_error "convert v3" "not available yet (issue 12)" -- "${conv[@]}" -o "$T/old.nwb.zarr" --overwrite --zarr-format 3
usage_error "convert v3 + shards" "issue 12" -- "${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 3 --shards 1000,4
usage_error "convert shards without v3" "--shards needs --zarr-format 3" -- "${conv[@]}" -o "$T/new.nwb.zarr" --shards 1000,4
usage_error "convert shards not a multiple" "not a multiple of --chunks 300,4" -- \
	"${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 3 --chunks 300,4 --shards 1000,4
usage_error "convert bad format" "--zarr-format needs 2 or 3, not '1'" -- "${conv[@]}" -o "$T/new.nwb.zarr" --zarr-format 1
usage_error "convert bad shards" "--shards needs ROWS,COLS" -- "${conv[@]}" -o "$T/new.nwb.zarr" --shards 10x4
# A missing input is not even looked at: the flags are refused first.
usage_error "convert v3, missing input" "issue 12" -- "$NZ_CLI" convert "$T/none.bin" -o "$T/new.nwb.zarr" --zarr-format 3

# export writes v3 by default (issue 12): --shards is refused only with v2.
usage_error "export shards with v2" "--shards needs Zarr v3, not --zarr-format 2" -- \
	"$NZ_CLI" export "$T/none.nwb" "$T/old.nwb.zarr" --overwrite --zarr-format 2 --shards 1000,4
usage_error "export bad format" "--zarr-format needs 2 or 3" -- "$NZ_CLI" export "$T/none.nwb" "$T/new.nwb.zarr" --zarr-format 33
usage_error "export bad shards" "--shards needs ROWS,COLS" -- "$NZ_CLI" export "$T/none.nwb" "$T/new.nwb.zarr" --shards 4

[ "$(cat "$T/old.nwb.zarr/marker" 2>/dev/null)" = keep ] && [ "$(ls "$T/old.nwb.zarr")" = marker ] \
	|| fail "a refused command touched the existing output"
[ ! -e "$T/new.nwb.zarr" ] || fail "a refused command created an output"
"$NZ_CLI" convert --help | grep -q -- "--zarr-format 2|3" || fail "convert --help lacks --zarr-format"
"$NZ_CLI" export --help | grep -q -- "--shards R,C" || fail "export --help lacks --shards"

[ $fails -eq 0 ] || { echo "$fails failures"; exit 1; }
echo "format flags: all checks passed"
