#!/usr/bin/env bash
# kill -9 of `convert` at random points (seeded), at -j1 and -j2, then
# `--resume` (itself killed and resumed again every third run): the store is
# incomplete after each kill, and the finished store is byte for byte the
# uninterrupted write. NZ_KILL_RUNS sets the number of runs (default 12).
. "$(dirname "$0")/common.sh"

# ~30 MB of compressible samples; zstd level 9 makes the write last about a
# second at -j1, long enough to be killed anywhere inside it.
make_rec rec.bin 2 234375 64
ARGS=(--channels 64 --rate 30000 --seed 11 --create-date 2024-01-01T00:00:00Z
      --session-start-time 2024-01-01T00:00:00Z --chunks 2000,64 --compressor zstd
      --clevel 9 -q)
now_ms() { date +%s%3N; }
t0=$(now_ms)
"$NZ_CLI" convert rec.bin "${ARGS[@]}" -o ref -j1 || { fail "reference write"; finish; exit; }
span=$(( $(now_ms) - t0 ))
echo "reference write: $span ms"

# kill_at MS JOBS DIR [--resume]: start a convert, kill -9 it after MS ms.
# Returns 0 when it was killed, 1 when it had already finished.
kill_at() {
	local ms=$1 j=$2 dir=$3
	shift 3
	"$NZ_CLI" convert rec.bin "${ARGS[@]}" -o "$dir" "-j$j" "$@" 2>/dev/null &
	local pid=$!
	sleep "$(printf '0.%03d' "$ms")"
	kill -9 "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	[ $? -eq 137 ]
}

RANDOM=4242
runs=${NZ_KILL_RUNS:-12}
killed=0
for ((r = 0; r < runs; r++)); do
	dir=run$r
	j=$((r % 2 + 1))
	ms=$((RANDOM % (span > 999 ? 999 : span)))
	if kill_at "$ms" "$j" "$dir"; then
		killed=$((killed + 1))
		not_complete "run $r (killed at $ms ms, -j$j)" "$dir"
	fi
	if ((r % 3 == 2)) && [ -e "$dir/.nwbzarr-incomplete" ]; then
		kill_at $((RANDOM % 400)) $((3 - j)) "$dir" --resume && not_complete "run $r: killed resume" "$dir"
	fi
	if [ -e "$dir/.nwbzarr-incomplete" ] || [ ! -e "$dir" ]; then
		"$NZ_CLI" convert rec.bin "${ARGS[@]}" -o "$dir" "-j$((3 - j))" --resume 2>err.txt \
			|| fail "run $r: resume: $(cat err.txt)"
	fi
	diff -r ref "$dir" >diff.txt || fail "run $r (killed at $ms ms, -j$j): differs: $(head -3 diff.txt)"
	rm -rf "$dir"
done
echo "$killed of $runs writers killed mid-write"
[ "$killed" -ge $((runs / 2)) ] || fail "only $killed of $runs writers were killed mid-write"
finish
