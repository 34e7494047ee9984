#!/usr/bin/env bash
# `mpirun -n K nwbzarr convert`: the same bytes as one process for K = 2, 3
# (uneven parts, more ranks than tasks, chunks split across channels), read
# back by zarr-python; a failure on one rank in each phase stops every rank
# promptly with the failing rank's message and leaves no complete-looking
# store; a missing input is reported by the ranks, tagged.
set -uo pipefail
. "$(dirname "$0")/common.sh"
T="$NZ_TMP/mpi_convert"
rm -rf "$T" && mkdir -p "$T"
py() { "$NZ_PYTHON" -c "$@"; }
py "import numpy as np; np.random.default_rng(3).integers(-3000, 3000, (20001, 12), dtype='<i2').tofile('$T/rec.bin')"
py "import numpy as np; np.random.default_rng(4).integers(-9, 9, (1500, 4), dtype='<i2').tofile('$T/tiny.bin')"
# Zarr v2 unless a case asks for 3 (a later --zarr-format wins): the chunk
# count and zarr-python 2 read-back below are v2's.
same=(--seed 11 --create-date 2024-05-06T07:08:09Z -q --zarr-format 2)

# --- byte-identical to one process ---------------------------------------
# case: NAME INPUT CHANNELS [convert flags...]
check_same() {
	local name=$1 in=$2 ch=$3; shift 3
	"$NZ_CLI" convert "$in" -o "$T/$name.1" --channels "$ch" --rate 30000 "${same[@]}" -j2 "$@" \
		|| { fail "$name: single process exit $?"; return; }
	for k in 2 3; do
		mpi "$k" "$NZ_CLI" convert "$in" -o "$T/$name.$k" --channels "$ch" --rate 30000 \
			"${same[@]}" -j1 "$@" 2>"$T/err.txt" || { fail "$name: -n $k exit $?: $(cat "$T/err.txt")"; continue; }
		diff -r "$T/$name.1" "$T/$name.$k" >/dev/null || fail "$name: -n $k differs from one process"
	done
}
check_same rows "$T/rec.bin" 12 --chunks 1000,12      # 21 chunks: 11+10, 7+7+7
check_same cols "$T/rec.bin" 12 --chunks 3000,5       # 7x3 chunks, bands of 3
check_same tiny "$T/tiny.bin" 4 --chunks 1000,4       # 2 chunks for 3 ranks
check_same dflt "$T/rec.bin" 12                       # default chunking: 1 chunk
# Zarr v3 (convert's default): ranks own whole shards
check_same rows3 "$T/rec.bin" 12 --zarr-format 3 --chunks 1000,12 --shards 3000,12  # 7 shards
check_same cols3 "$T/rec.bin" 12 --zarr-format 3 --chunks 3000,6 --shards 6000,12   # 4 shards
check_same dflt3 "$T/rec.bin" 12 --zarr-format 3                                   # unsharded
n=$(ls "$T/rows3.3/acquisition/ElectricalSeries/data/c" | wc -l)
[ "$n" = 7 ] || fail "rows3: $n shard rows, expected 7"
grep -q consolidated_metadata "$T/rows3.3/zarr.json" || fail "rows3: -n 3 output not consolidated"
n=$(ls "$T/rows.3/acquisition/ElectricalSeries/data" | wc -l)
[ "$n" = 21 ] || fail "rows: $n chunk files, expected 21"
py "
import numpy as np, zarr
raw = np.fromfile('$T/rec.bin', dtype='<i2').reshape(-1, 12)
for k in (2, 3):
    g = zarr.open_consolidated('$T/cols.%d' % k, mode='r')
    assert np.array_equal(g['acquisition/ElectricalSeries/data'][...], raw), k
" || fail "zarr-python read-back of the MPI output"

# --- a failure on one rank stops every rank ---------------------------------
# fail_case NAME PHASE RANK: 3 ranks, RANK fails in PHASE.
fail_case() {
	local name=$1 phase=$2 r=$3 t0 t1
	rm -rf "$T/f.$name"
	t0=$(date +%s)
	if NZ_TEST_FAIL_RANK=$r NZ_TEST_FAIL_PHASE=$phase mpi 3 "$NZ_CLI" convert "$T/rec.bin" \
		-o "$T/f.$name" --channels 12 --rate 30000 --chunks 1000,12 "${same[@]}" -j1 \
		>"$T/out.txt" 2>"$T/err.txt"; then
		fail "$name: exit 0"
	fi
	t1=$(date +%s)
	[ $((t1 - t0)) -lt 60 ] || fail "$name: took $((t1 - t0)) s (a rank waited?)"
	grep -q "^nwbzarr: rank $r of 3: injected failure in phase '$phase'" "$T/err.txt" \
		|| fail "$name: no tagged message from rank $r: $(cat "$T/err.txt")"
	for o in 0 1 2; do
		[ "$o" = "$r" ] && continue
		grep -q "^nwbzarr: rank $o of 3: stopping: rank $r failed in phase '$phase'" "$T/err.txt" \
			|| fail "$name: rank $o did not report stopping"
	done
	[ -e "$T/f.$name/.zmetadata" ] && fail "$name: left a .zmetadata (complete-looking store)"
	case $phase in
	open) [ -e "$T/f.$name" ] && fail "$name: output created before every rank opened the input" ;;
	*) grep -q "rank 0 of 3: '$T/f.$name' is incomplete" "$T/err.txt" \
		|| fail "$name: rank 0 did not say the output is incomplete"
	   [ -e "$T/f.$name/.nwbzarr-incomplete" ] || fail "$name: no incomplete marker" ;;
	esac
}
fail_case open open 2
fail_case meta metadata 0
fail_case data1 data 1
fail_case data2 data 2
fail_case fin finalise 0

# --- --resume after a failed MPI run: one process, or mpirun with other K ----
"$NZ_CLI" convert "$T/rec.bin" -o "$T/f.data1" --channels 12 --rate 30000 --chunks 1000,12 \
	"${same[@]}" -j2 --resume 2>"$T/err.txt" || fail "resume (1 process): exit $?: $(cat "$T/err.txt")"
diff -r "$T/rows.1" "$T/f.data1" >/dev/null || fail "resume (1 process) differs from one clean run"
D="$T/f.data2/acquisition/ElectricalSeries/data"
n=$(ls "$D" | wc -l)
[ "$n" = 14 ] || fail "failed run (rank 2 of 3): $n chunks stored, expected 14"
ino=$(stat -c %i "$D/0.0")
mpi 2 "$NZ_CLI" convert "$T/rec.bin" -o "$T/f.data2" --channels 12 --rate 30000 --chunks 1000,12 \
	"${same[@]}" -j1 --resume 2>"$T/err.txt" || fail "resume (mpirun -n 2): exit $?: $(cat "$T/err.txt")"
diff -r "$T/rows.1" "$T/f.data2" >/dev/null || fail "resume (mpirun -n 2) differs from one clean run"
[ -e "$T/f.data2/.nwbzarr-incomplete" ] && fail "resume (mpirun -n 2) left the marker"
[ "$(stat -c %i "$D/0.0")" = "$ino" ] || fail "resume (mpirun -n 2) rewrote a chunk stored whole"

# --- a real error: every rank names the missing input ------------------------
if mpi 2 "$NZ_CLI" convert "$T/missing.bin" -o "$T/m" --channels 4 --rate 1 -q 2>"$T/err.txt"; then
	fail "missing input: exit 0"
fi
for r in 0 1; do
	grep -q "^nwbzarr: rank $r of 2: .*missing.bin" "$T/err.txt" || fail "missing input: rank $r: $(cat "$T/err.txt")"
done
[ -e "$T/m" ] && fail "missing input: output created"

[ "$fails" = 0 ] && echo "ok" || exit 1
