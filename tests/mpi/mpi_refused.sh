#!/usr/bin/env bash
# A build without MPI started by mpirun with 2 processes must refuse (each
# rank would write the whole file at once) and name the build option; with
# one process it works as usual.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T="$NZ_TMP/mpi_refused"
rm -rf "$T" && mkdir -p "$T"
"$NZ_PYTHON" -c "import numpy as np; np.arange(4000, dtype='<i2').tofile('$T/rec.bin')"
if mpi 2 "$NZ_CLI" convert "$T/rec.bin" -o "$T/a.zarr" --channels 4 --rate 1000 -q \
	>"$T/out.txt" 2>"$T/err.txt"; then
	fail "mpirun -n 2 with a non-MPI build: exit 0"
fi
grep -q 'built without MPI (cmake -DNZ_MPI=ON)' "$T/err.txt" || fail "message: $(cat "$T/err.txt")"
[ -e "$T/a.zarr" ] && fail "output written by a refused run"
mpi 1 "$NZ_CLI" convert "$T/rec.bin" -o "$T/b.zarr" --channels 4 --rate 1000 -q \
	|| fail "mpirun -n 1: exit $?"
grep -q consolidated_metadata "$T/b.zarr/zarr.json" || fail "mpirun -n 1: not consolidated"
[ "$fails" = 0 ] && echo "ok" || exit 1
