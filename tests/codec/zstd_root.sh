#!/usr/bin/env bash
# zstd_root.sh LIBDIR VERSION PROGRAM... : with -DNZ_ZSTD_ROOT
# (cmake/zstd_root.cmake), each PROGRAM (the CLI, bare_shard; a Python
# extension module is loaded by NZ_PY3) carries LIBDIR as its RUNPATH and,
# run with every symbol bound at start (LD_BIND_NOW), binds c-blosc's ZSTD_*
# calls to LIBDIR's libzstd and to no other; `nwbzarr --version` reports
# VERSION.
set -euo pipefail
libdir=$(realpath "$1") version=$2
shift 2
fail() { echo "FAIL: $*" >&2; exit 1; }
T=$NZ_TMP/zstd_root
rm -rf "$T" && mkdir -p "$T"

# bindings FILE...: "binding file A [0] to B [0]: normal symbol `S'" lines
# of c-blosc to a libzstd, as "B S".
bindings() { sed -n "s/.*binding file [^ ]*libblosc\.so[^ ]* \[0\] to \([^ ]*libzstd\.so[^ ]*\) \[0\]: normal symbol \`\(ZSTD_[A-Za-z_]*\)'.*/\1 \2/p" "$@"; }

for prog in "$@"; do
	name=$(basename "$prog")
	case $prog in *.so) kind=module ;; *) kind=program ;; esac
	readelf -d "$prog" | grep -q "(RUNPATH).*$libdir" ||
		fail "$name has no RUNPATH $libdir: $(readelf -d "$prog" | grep -E 'R(UN)?PATH' || echo none)"
	if [ $kind = module ]; then
		[ -n "${NZ_PY3:-}" ] || continue
		mod=$(basename "$prog" | cut -d. -f1)
		LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$T/$name.ld PYTHONPATH=$(dirname "$(dirname "$prog")") \
			"$NZ_PY3" -c "import nwbzarr; print(nwbzarr.libraries)" > "$T/$name.out" ||
			fail "$name: import nwbzarr failed"
		out=$(cat "$T/$name.out")
	else
		# The CLI says which libzstd it runs; the other programs only load.
		args=(--version); [ "$name" = nwbzarr ] || args=(--help)
		LD_BIND_NOW=1 LD_DEBUG=bindings LD_DEBUG_OUTPUT=$T/$name.ld "$prog" "${args[@]}" > "$T/$name.out" 2>&1 || true
		out=$(cat "$T/$name.out")
	fi
	case $name in nwbzarr|*.so)
		grep -q "zstd $version," <<<"$out" || fail "$name reports '$out', not zstd $version"
		grep -q "built with" <<<"$out" && fail "$name: headers and library differ: '$out'" ;;
	esac
	bindings "$T/$name.ld".* > "$T/$name.bind"
	[ -s "$T/$name.bind" ] || fail "$name: LD_DEBUG shows no binding of c-blosc to a libzstd"
	while read -r lib sym; do
		[ "$(realpath "$lib")" = "$(realpath "$libdir/libzstd.so.1")" ] ||
			fail "$name: c-blosc's $sym bound to $lib, not $libdir/libzstd.so.1"
	done < "$T/$name.bind"
	echo "$name: RUNPATH $libdir; c-blosc's $(wc -l < "$T/$name.bind") ZSTD_* bindings all to it"
done
echo "zstd_root: ok (zstd $version)"
