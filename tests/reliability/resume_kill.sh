#!/usr/bin/env bash
# kill -9 of `convert` and `export` at random points (seeded), at -j1 and -j2, then
# `--resume` (itself killed and resumed again every third run): the store is
# incomplete after each kill, and the finished store is byte for byte the
# uninterrupted write. NZ_KILL_RUNS sets the number of runs (default 12).
. "$(dirname "$0")/common.sh"

# ~30 MB of compressible samples; zstd level 9 makes the write last about a
# second at -j1, long enough to be killed anywhere inside it.
make_rec rec.bin 2 234375 64
ARGS=(--channels 64 --rate 30000 --seed 11 --create-date 2024-01-01T00:00:00Z
      --session-start-time 2024-01-01T00:00:00Z --chunks 2000,64 --compressor zstd
      --clevel 9 -q --shards 20000,64) # convert: Zarr v3, 12 shards
now_ms() { date +%s%3N; }
# complete: consolidated (v2 .zmetadata, v3 the root zarr.json's) and no marker
complete() {
	{ [ -e "$1/.zmetadata" ] || grep -qs consolidated_metadata "$1/zarr.json"; } &&
		[ ! -e "$1/.nwbzarr-incomplete" ]
}

# A writer under test sets CMD to its command line for DIR JOBS [--resume]
# (an array, not a function: `kill -9 $!` must hit nwbzarr itself, not a
# subshell that would leave it running).
write_convert() { CMD=("$NZ_CLI" convert rec.bin "${ARGS[@]}" -o "$1" "-j$2" "${@:3}"); }
run() { "$1" "${@:2}" && "${CMD[@]}"; }

# kill_at MS WRITER DIR JOBS [--resume]: start WRITER, kill -9 it after MS
# ms. Returns 0 when it was killed, 1 when it had already finished.
kill_at() {
	local ms=$1 writer=$2
	shift 2
	"$writer" "$@"
	"${CMD[@]}" 2>/dev/null &
	local pid=$!
	sleep "$(printf '%d.%03d' $((ms / 1000)) $((ms % 1000)))"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ $? -eq 137 ]
}

# kill_runs WRITER REF RUNS: RUNS seeded random kill points within the
# first second (or the whole write if shorter) at -j1 and -j2; every third
# resume is killed too; each store is then resumed and compared with REF.
kill_runs() {
	local writer=$1 ref=$2 runs=$3 span=$4 killed=0 r dir j ms
	for ((r = 0; r < runs; r++)); do
		dir=$writer$r
		j=$((r % 2 + 1))
		ms=$((RANDOM % (span > 999 ? 999 : span)))
		if kill_at "$ms" "$writer" "$dir" "$j"; then
			killed=$((killed + 1))
			# A kill that lands after the marker is gone (the writer was
			# exiting) leaves a complete store: the diff below must then
			# find it identical. Any other kill must leave it incomplete.
			complete "$dir" \
				|| not_complete "$writer $r (killed at $ms ms, -j$j)" "$dir"
		fi
		if ((r % 3 == 2)) && [ -e "$dir/.nwbzarr-incomplete" ]; then
			# As above: a kill after the resume finished leaves it complete.
			kill_at $((RANDOM % 400)) "$writer" "$dir" $((3 - j)) --resume \
				&& { complete "$dir" || not_complete "$writer $r: killed resume" "$dir"; }
		fi
		# Resume whatever is not complete: a store with the marker, no
		# directory, or a directory the kill left before the marker.
		if ! complete "$dir"; then
			run "$writer" "$dir" $((3 - j)) --resume 2>err.txt \
				|| fail "$writer $r: resume: $(cat err.txt)"
		fi
		diff -r "$ref" "$dir" >diff.txt \
			|| fail "$writer $r (killed at $ms ms, -j$j): differs: $(head -3 diff.txt)"
		rm -rf "$dir"
	done
	echo "$writer: $killed of $runs writers killed mid-write"
	[ "$killed" -ge $((runs / 2)) ] || fail "$writer: only $killed of $runs killed mid-write"
}

t0=$(now_ms)
run write_convert ref 1 || { fail "reference write"; finish; exit; }
span=$(( $(now_ms) - t0 ))
echo "reference write: $span ms"
RANDOM=4242
kill_runs write_convert ref "${NZ_KILL_RUNS:-12}" "$span"

# --- export, killed and resumed ---------------------------------------------
"$NZ_PYTHON" -c "
import numpy as np, h5py
with h5py.File('big.nwb', 'w') as f:
    f.attrs['nwb_version'] = '2.6.0'
    f.create_group('acquisition').create_dataset('data', chunks=(2000, 64), compression='gzip',
        data=np.fromfile('rec.bin', '<i2').reshape(-1, 64))" || exit 1
write_export() { CMD=("$NZ_CLI" export big.nwb "$1" -j "$2" --chunks auto "${@:3}"); }
t0=$(now_ms)
run write_export xref 1 || fail "reference export"
span=$(( $(now_ms) - t0 ))
echo "reference export: $span ms"
kill_runs write_export xref "${NZ_KILL_RUNS:-6}" "$span"

# SIGTERM (a batch scheduler stopping the job) cancels cleanly: exit 1, a
# message, an incomplete store that --resume finishes.
"$NZ_CLI" convert rec.bin "${ARGS[@]}" -o term -j1 2>err.txt &
pid=$!
# The handlers are installed before the output opens: once the marker is
# there, SIGTERM reaches them (a fixed sleep raced them under load).
for _ in $(seq 1000); do [ -e term/.nwbzarr-incomplete ] && break; sleep 0.01; done
kill -TERM "$pid"
wait "$pid"
[ $? -eq 1 ] && grep -q "canceled" err.txt || fail "SIGTERM: exit status or message: $(cat err.txt)"
not_complete "SIGTERM" term
"$NZ_CLI" convert rec.bin "${ARGS[@]}" -o term --resume || fail "resume after SIGTERM"
diff -r ref term >/dev/null || fail "resumed after SIGTERM: differs"
finish
