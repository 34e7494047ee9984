#!/usr/bin/env bash
# `mpirun -n K nwbzarr export`: the same bytes as one process for K = 2, 3
# (large chunked, contiguous and compound datasets streamed through the
# engine, small ones and strings), verified against the source; so with an
# external link (exported beside, or --copy-links); a failure
# on one rank stops every rank and leaves no .zmetadata.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T="$NZ_TMP/mpi_export"
rm -rf "$T" && mkdir -p "$T"
"$NZ_PYTHON" - "$T/big.h5" <<'PY' || { echo "FAIL: fixture"; exit 1; }
import sys, h5py, numpy as np
OID = "00000000-0000-4000-8000-%012d"
rng = np.random.default_rng(5)
with h5py.File(sys.argv[1], "w") as f:
    f.attrs.update(object_id=OID % 0, namespace="core", neurodata_type="NWBFile",
                   nwb_version="2.6.0")
    g = f.create_group("acquisition/es")
    g.attrs.update(object_id=OID % 1, namespace="core", neurodata_type="ElectricalSeries")
    g.create_dataset("data", data=rng.integers(-2000, 2000, (30001, 96), dtype="<i2"))
    g.create_dataset("chunked", data=rng.integers(-2000, 2000, (40000, 64), dtype="<i2"),
                     chunks=(1000, 64), compression="gzip", shuffle=True)
    g.create_dataset("f4", data=rng.normal(size=(3000, 500)).astype("<f4"), chunks=(256, 100))
    big = np.zeros(360000, dtype=[("x", "<u4"), ("y", "<u4"), ("w", "<f4")])
    big["x"] = np.arange(big.size)
    g.create_dataset("compound", data=big, chunks=(50000,), compression="gzip")
    g.create_dataset("small", data=np.arange(10))
    g.create_dataset("small_gz", data=rng.integers(-2000, 2000, (2000, 64), dtype="<i2"),
                     chunks=(500, 64), compression="gzip")
    g.create_dataset("names", data=["a", "bb", "ccc"])
PY
# Zarr v3 (export's default, sharded) and the v2 layout: K processes write
# the bytes one process writes.
for fmt in 3 2; do
	"$NZ_CLI" export "$T/big.h5" "$T/v$fmt.1" -j 2 --zarr-format $fmt -q || fail "v$fmt: single process exit $?"
	for k in 2 3; do
		mpi "$k" "$NZ_CLI" export "$T/big.h5" "$T/v$fmt.$k" -j 1 --zarr-format $fmt 2>"$T/err.txt" \
			|| { fail "v$fmt -n $k exit $?: $(cat "$T/err.txt")"; continue; }
		diff -r "$T/v$fmt.1" "$T/v$fmt.$k" >/dev/null || fail "v$fmt -n $k differs from one process"
		"$NZ_CLI" verify "$T/big.h5" "$T/v$fmt.$k" >/dev/null || fail "v$fmt -n $k: verify"
	done
done
# --compressor keep: every gzip chunk moves as stored, the small dataset's
# (written whole by the METADATA rank) as the large ones' (shared out).
"$NZ_CLI" export "$T/big.h5" "$T/keep.1" -j 2 --compressor keep -q --json >"$T/keep.json" ||
	fail "keep: single process exit $?"
grep -q '"stored_chunks": *44[,}]' "$T/keep.json" || fail "keep: not 40 + 4 chunks moved as stored: $(cat "$T/keep.json")"
mpi 2 "$NZ_CLI" export "$T/big.h5" "$T/keep.2" -j 1 --compressor keep 2>"$T/err.txt" ||
	fail "keep -n 2 exit $?: $(cat "$T/err.txt")"
diff -r "$T/keep.1" "$T/keep.2" >/dev/null || fail "keep -n 2 differs from one process"
"$NZ_CLI" verify "$T/big.h5" "$T/keep.2" >/dev/null || fail "keep -n 2: verify"
grep -q '"zarr_format": 3' "$T/v3.3/acquisition/es/chunked/zarr.json" || fail "v3: chunked is not a v3 array"
n=$(find "$T/v3.3/acquisition/es/chunked/c" -type f | wc -l)
[ "$n" -ge 1 ] || fail "v3: chunked holds no chunks"
n=$(ls "$T/v2.3/acquisition/es/chunked" | wc -l)
[ "$n" = 40 ] || fail "v2 chunked: $n chunk files, expected 40"
mv "$T/v2.1" "$T/x.1" # the failure cases below are checked on the v2 layout

# An external link: rank 0 exports the linked file beside OUT, whole, before
# the source; with --copy-links the copy's chunks are shared out like the
# source's own. Either way the bytes of one process.
"$NZ_PYTHON" - "$T/top.h5" <<'PY' || { echo "FAIL: link fixture"; exit 1; }
import sys, h5py
with h5py.File(sys.argv[1], "w") as f:
    f.attrs.update(object_id="00000000-0000-4000-8000-000000000100", nwb_version="2.6.0")
    f["ext"] = h5py.ExternalLink("big.h5", "/acquisition/es")
PY
for mode in beside copy; do
	flag=$([ $mode = copy ] && echo --copy-links)
	mkdir -p "$T/$mode.1" "$T/$mode.2"
	"$NZ_CLI" export "$T/top.h5" "$T/$mode.1/top.zarr" -j 2 -q $flag || fail "$mode: single process exit $?"
	mpi 2 "$NZ_CLI" export "$T/top.h5" "$T/$mode.2/top.zarr" -j 1 $flag 2>"$T/err.txt" \
		|| fail "$mode -n 2 exit $?: $(cat "$T/err.txt")"
	diff -r "$T/$mode.1" "$T/$mode.2" >/dev/null || fail "$mode -n 2 differs from one process"
	"$NZ_CLI" verify "$T/top.h5" "$T/$mode.2/top.zarr" >/dev/null || fail "$mode -n 2: verify"
done
[ -e "$T/beside.2/big.h5.zarr/zarr.json" ] || fail "beside: the linked file was not exported"
[ -e "$T/copy.2/big.h5.zarr" ] && fail "--copy-links: a store was written beside"

for phase in data metadata; do
	r=$([ $phase = data ] && echo 2 || echo 0)
	rm -rf "$T/f"
	if NZ_TEST_FAIL_RANK=$r NZ_TEST_FAIL_PHASE=$phase mpi 3 "$NZ_CLI" export "$T/big.h5" "$T/f" \
		-j 1 --zarr-format 2 >/dev/null 2>"$T/err.txt"; then
		fail "$phase: exit 0"
	fi
	grep -q "^nwbzarr: rank $r of 3: injected failure in phase '$phase'" "$T/err.txt" \
		|| fail "$phase: no tagged message: $(cat "$T/err.txt")"
	[ "$(grep -c "stopping: rank $r failed in phase '$phase'" "$T/err.txt")" = 2 ] \
		|| fail "$phase: the other two ranks did not report stopping"
	[ -e "$T/f/.zmetadata" ] && fail "$phase: left a .zmetadata"
	[ -e "$T/f/.nwbzarr-incomplete" ] || fail "$phase: no incomplete marker"
	# A failed MPI export is finished by one process with --resume.
	"$NZ_CLI" export "$T/big.h5" "$T/f" -j 2 --zarr-format 2 --resume 2>"$T/err.txt" \
		|| fail "$phase: resume after the failed MPI export: $(cat "$T/err.txt")"
	diff -r "$T/x.1" "$T/f" >/dev/null || fail "$phase: resumed export differs from one process"
done
if mpi 2 "$NZ_CLI" export "$T/missing.h5" "$T/m" 2>"$T/err.txt"; then fail "missing: exit 0"; fi
grep -q "^nwbzarr: rank 1 of 2: cannot read '.*missing.h5'" "$T/err.txt" || fail "missing: $(cat "$T/err.txt")"
[ -e "$T/m" ] && fail "missing input: output created"
[ "$fails" = 0 ] && echo "ok" || exit 1
