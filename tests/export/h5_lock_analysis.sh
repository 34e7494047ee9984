#!/usr/bin/env bash
# Every call into libhdf5 from the library is made with the one HDF5 lock
# held (util/h5lock.h): clang's thread-safety analysis compiles every source
# under src/ with each libhdf5 function redeclared as requiring the lock, and
# any call it cannot prove is under nz__h5_lock() fails this test. A probe
# that calls libhdf5 without the lock must be caught, or the check is void.
# Usage: h5_lock_analysis.sh CLANG SOURCE_DIR HDF5_INCLUDE_DIR...
set -euo pipefail
clang=$1 srcdir=$2
shift 2
incs=()
for d in "$@"; do incs+=(-I "$d"); done
work=${NZ_TMP:-/tmp}/h5_lock_analysis
rm -rf "$work" && mkdir -p "$work"

# Every function libhdf5 declares (names as the preprocessor leaves them:
# H5Dopen is already H5Dopen2) becomes one that needs the lock.
echo '#include <hdf5.h>' | "$clang" -E -P "${incs[@]}" - >"$work/hdf5.i"
# (Names ending in _t are return types of function-pointer typedefs.)
grep -oE '\bH5[A-Za-z0-9_]*[[:space:]]*\(' "$work/hdf5.i" | tr -d ' (' | grep -v '_t$' |
	sort -u >"$work/names"
n=$(wc -l <"$work/names")
[ "$n" -gt 200 ] || { echo "only $n libhdf5 functions found in <hdf5.h>"; exit 1; }
{
	echo '#include <hdf5.h>'
	echo '#include "util/h5lock.h"'
	while read -r f; do echo "extern __typeof__($f) $f NZ__H5_HELD;"; done <"$work/names"
} >"$work/h5_needs_lock.h"

flags=(-fsyntax-only -std=c11 -D_POSIX_C_SOURCE=200809L -D_DEFAULT_SOURCE -D_GNU_SOURCE -I "$srcdir/include"
       -I "$srcdir/src" "${incs[@]}" -include "$work/h5_needs_lock.h" -Wno-everything
       -Wthread-safety -Werror=thread-safety -ferror-limit=0)

# (_GNU_SOURCE: the forced include brings in libc before a source's own
# feature macro could, so ask for everything any source asks for.)

# The probe: one unlocked call and one locked call; only the first may be reported.
cat >"$work/probe.c" <<'C'
void probe(void);
void probe(void)
{
	H5Eclear2(H5E_DEFAULT);
	nz__h5_lock();
	H5Eclear2(H5E_DEFAULT);
	nz__h5_unlock();
}
C
if "$clang" "${flags[@]}" "$work/probe.c" 2>"$work/probe.err"; then
	echo "the analysis accepted a libhdf5 call made without the lock"; exit 1
fi
[ "$(grep -c 'requires holding' "$work/probe.err")" -eq 1 ] || {
	echo "the probe was not judged as expected:"; cat "$work/probe.err"; exit 1; }

checked=0 bad=0
while IFS= read -r -d '' f; do
	if ! "$clang" "${flags[@]}" "$f" 2>>"$work/errors"; then
		bad=$((bad + 1))
	fi
	checked=$((checked + 1))
done < <(find "$srcdir/src" -name '*.c' -print0 | sort -z)
if [ "$bad" -ne 0 ]; then
	cat "$work/errors"
	echo "$bad of $checked sources call libhdf5 without the HDF5 lock (util/h5lock.h)"
	exit 1
fi
if grep -nE '\bH5[A-Z][A-Za-z0-9_]*[[:space:]]*\(' "$srcdir"/src/cli/*.c; then
	echo "the CLI calls libhdf5 directly"; exit 1
fi
echo "$checked sources: every call of $n libhdf5 functions is under the lock"
