#!/usr/bin/env bash
# c_api.sh BUILD SOURCE CMAKE CC [FLAGS]: the code of docs/c-api.md works.
#  - every ```c block is a complete program: it is compiled with -std=c11
#    -Wall -Wextra -Werror against this build tree installed into a scratch
#    prefix (pkg-config, as an application would), then run in a scratch
#    folder; it must exit 0;
#  - every line of every ```c excerpt block appears verbatim in
#    examples/acquire.c, so the walk-through cannot drift from the example.
set -euo pipefail
build=$1 src=$2 cmake=$3 cc=$4 flags=${5:-}
doc=$src/docs/c-api.md example=$src/examples/acquire.c
T=${NZ_TMP:?}/docs_c_api
fail() { echo "test_docs_c_api: $*" >&2; exit 1; }
rm -rf "$T" && mkdir -p "$T/run"

# Split the blocks into T/prog_N.c and T/excerpt_N.txt.
awk -v dir="$T" -v doc="$doc" '
	/^```c( |$)/ && !inb { inb = 1; tag = substr($0, 5); sub(/^ +/, "", tag)
		if (tag == "") f = sprintf("%s/prog_%d.c", dir, ++np)
		else if (tag == "excerpt") f = sprintf("%s/excerpt_%d.txt", dir, ++ne)
		else { print doc ":" NR ": unknown ```c tag \"" tag "\"" > "/dev/stderr"; exit 1 }
		printf "" > f; next }
	/^```/ && inb { inb = 0; close(f); next }
	inb { print > f }
	END { if (inb) { print doc ": unterminated block" > "/dev/stderr"; exit 1 }
	      printf "%d programs, %d excerpts\n", np, ne }' "$doc"
nprog=$(ls "$T"/prog_*.c 2>/dev/null | wc -l)
nexc=$(ls "$T"/excerpt_*.txt 2>/dev/null | wc -l)
[ "$nprog" -ge 4 ] || fail "expected at least 4 complete programs in $doc, found $nprog"
[ "$nexc" -ge 5 ] || fail "expected at least 5 excerpts of examples/acquire.c in $doc, found $nexc"

for e in "$T"/excerpt_*.txt; do
	while IFS= read -r line; do
		[ -n "${line//[[:space:]]/}" ] || continue
		grep -qxF -- "$line" "$example" || fail "c-api.md excerpt line not in examples/acquire.c: '$line'"
	done < "$e"
done

"$cmake" --install "$build" --prefix "$T/prefix" > "$T/install.log" 2>&1 || { cat "$T/install.log"; fail "cmake --install failed"; }
pc=$(find "$T/prefix" -name nwbzarr.pc | head -1)
[ -n "$pc" ] || fail "no nwbzarr.pc installed"
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
export PKG_CONFIG_PATH=$pcdir LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for p in "$T"/prog_*.c; do
	n=$(basename "$p" .c)
	# shellcheck disable=SC2046,SC2086
	"$cc" -std=c11 -Wall -Wextra -Werror $flags "$p" $(pkg-config --cflags --libs nwbzarr) \
		-o "$T/$n" 2> "$T/$n.cc.log" || { cat "$T/$n.cc.log"; fail "$n (from c-api.md) does not compile"; }
	(cd "$T/run" && "$T/$n") > "$T/$n.out" 2>&1 || { cat "$T/$n.out"; fail "$n (from c-api.md) exits non-zero"; }
	echo "$n: $(tail -1 "$T/$n.out")"
done
# What the programs say they wrote is there.
grep -q consolidated_metadata "$T/run/example.nwb.zarr/zarr.json" || fail "the NWB example wrote no consolidated example.nwb.zarr/zarr.json"
[ -f "$T/run/ramp.zarr/ramp/.zarray" ] || fail "the engine example wrote no ramp.zarr/ramp/.zarray"
grep -q consolidated_metadata "$T/run/loop.nwb.zarr/zarr.json" || fail "the acquisition-loop example wrote no consolidated loop.nwb.zarr/zarr.json"
echo ok
