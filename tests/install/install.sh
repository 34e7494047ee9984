#!/bin/bash
# install.sh BUILD SOURCE CMAKE CC PKG_CONFIG VERSION CONFIG [FLAGS]
# `cmake --install` the build tree BUILD into a scratch prefix; check what is
# installed; then use it as another project would: tests/install/consumer
# (which writes and reads back a small array) built with find_package(nwbzarr)
# and with `pkg-config --cflags --libs nwbzarr`, and every SOURCE/examples/*.c
# built both ways. FLAGS (sanitizers) go to every compile and link.
set -euo pipefail
build=$1 src=$2 cmake=$3 cc=$4 pkgconfig=$5 version=$6 config=$7 flags=${8:-}
here=$(cd "$(dirname "$0")" && pwd)
work=${NZ_TMP:?}/install
prefix=$work/prefix
fail() { echo "test_install: $*" >&2; exit 1; }
# run LOG CMD...: run quietly, show the log if it fails.
run() {
	local log=$1; shift
	"$@" > "$log" 2>&1 || { cat "$log" >&2; fail "failed: $*"; }
}
rm -rf "$work"
mkdir -p "$work"

run "$work/install.log" "$cmake" --install "$build" --prefix "$prefix" ${config:+--config "$config"}

# -- what is installed ------------------------------------------------------
for f in bin/nwbzarr include/nwbzarr.h; do
	[ -f "$prefix/$f" ] || fail "cmake --install did not install $f"
done
for h in "$src"/include/nwbzarr/*.h; do
	[ -f "$prefix/include/nwbzarr/${h##*/}" ] || fail "public header ${h##*/} not installed"
done
pc=$(find "$prefix" -name nwbzarr.pc)
cfg=$(find "$prefix" -name nwbzarrConfig.cmake)
[ -n "$pc" ] || fail "no nwbzarr.pc under $prefix"
[ -n "$cfg" ] || fail "no nwbzarrConfig.cmake under $prefix"
libdir=$(dirname "$(dirname "$pc")")
for f in nwbzarrConfigVersion.cmake nwbzarrTargets.cmake; do
	[ -f "$(dirname "$cfg")/$f" ] || fail "no $f next to nwbzarrConfig.cmake"
done
# The package must not point back into the source or build tree (the scratch
# prefix itself lies in the build tree: hide it first).
if cat "$pc" "$(dirname "$cfg")"/*.cmake | sed "s#$prefix#PREFIX#g" | grep -F -e "$src/" -e "$build/"; then
	fail "installed package files name the source or build tree (above)"
fi

# The installed CLI runs the libraries the built one runs (with -DNZ_ZSTD_ROOT,
# that libzstd: the RUNPATH must survive the install).
[ "$("$prefix/bin/nwbzarr" --version)" = "$("$build/src/cli/nwbzarr" --version)" ] ||
	fail "installed nwbzarr --version: '$("$prefix/bin/nwbzarr" --version)', built: '$("$build/src/cli/nwbzarr" --version)'"

# -- CMake: find_package(nwbzarr) -------------------------------------------
export CFLAGS="$flags" LDFLAGS="$flags"
cm=$work/cmake
run "$cm.configure.log" "$cmake" -S "$here/consumer" -B "$cm" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
	-DNZ_EXPECT_VERSION="$version" -DNZ_EXAMPLES_DIR="$src/examples"
run "$cm.build.log" "$cmake" --build "$cm" -j2
grep -qF "$prefix/include" "$cm/compile_commands.json" || fail "consumer not compiled against $prefix/include"
! grep -qF "$src/include" "$cm/compile_commands.json" || fail "consumer compiled against the source tree"
run "$cm.run.log" "$cm/consumer" "$work/cmake.zarr" "$version"
[ -f "$work/cmake.zarr/x/.zarray" ] || fail "consumer wrote no x/.zarray"
# With BUILD_SHARED_LIBS=ON the installed libnwbzarr.so must be the one loaded.
if [ -e "$libdir/libnwbzarr.so" ] && command -v ldd > /dev/null; then
	grep -F libnwbzarr <<<"$(ldd "$cm/consumer")" | grep -qF "$libdir/" ||
		fail "consumer does not load $libdir/libnwbzarr.so"
fi
# Another version's request must be refused by nwbzarrConfigVersion.cmake.
if "$cmake" -S "$here/consumer" -B "$work/cmake-badversion" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_PREFIX_PATH="$prefix" -DNZ_EXPECT_VERSION=99.0 > "$work/badversion.log" 2>&1; then
	fail "find_package(nwbzarr 99.0 EXACT) succeeded against $version"
fi
grep -q "nwbzarr" "$work/badversion.log" || fail "find_package(nwbzarr 99.0) failed without naming nwbzarr"

# -- pkg-config ---------------------------------------------------------------
PKG_CONFIG_PATH="$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
export PKG_CONFIG_PATH
[ "$("$pkgconfig" --modversion nwbzarr)" = "$version" ] || fail "pkg-config --modversion nwbzarr is not $version"
! "$pkgconfig" --exists "nwbzarr > $version" || fail "pkg-config accepts nwbzarr > $version"
pcflags=$("$pkgconfig" --cflags --libs nwbzarr)
[[ " $pcflags " == *" -I$prefix/include "* ]] || fail "pkg-config --cflags lacks -I$prefix/include: $pcflags"
pk=$work/pkgconfig
mkdir -p "$pk"
# shellcheck disable=SC2086 # word splitting of the flags is meant
run "$pk.consumer.log" "$cc" $flags "$here/consumer/consumer.c" -o "$pk/consumer" $pcflags
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
run "$pk.run.log" "$pk/consumer" "$work/pkgconfig.zarr" "$version"
[ -f "$work/pkgconfig.zarr/x/.zarray" ] || fail "pkg-config consumer wrote no x/.zarray"

# -- examples/*.c (none is fine) ----------------------------------------------
n=0
for ex in "$src"/examples/*.c; do
	[ -f "$ex" ] || continue
	name=$(basename "$ex" .c)
	[ -x "$cm/example_$name" ] || fail "examples/$name.c not built with find_package"
	# shellcheck disable=SC2086
	run "$pk.$name.log" "$cc" $flags "$ex" -o "$pk/$name" $pcflags -lm
	n=$((n + 1))
done
echo "test_install: ok ($version in $prefix; consumer and $n example(s) built with find_package and pkg-config)"
