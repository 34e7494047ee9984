# Sourced by the reliability scripts: a fresh scratch folder (the current
# directory, $T), failure counting, test recordings and the checks every
# failing command must pass.
set -uo pipefail
T="$NZ_TMP/rel_$(basename "$0" .sh)"
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
finish() { echo "$fails failures"; [ "$fails" -eq 0 ]; }
# expect_fail NAME NEEDLE -- command...: exit 1 or 2 (not a crash or a
# hang: 10 s at most), stderr names NEEDLE and starts with "nwbzarr".
expect_fail() {
	local name=$1 needle=$2 rc
	shift 3
	timeout 10 "$@" >"$T/out.txt" 2>"$T/err.txt"
	rc=$?
	if [ $rc -eq 0 ]; then
		fail "$name: exit 0"
	elif [ $rc -ne 1 ] && [ $rc -ne 2 ]; then
		fail "$name: exit $rc (crash or hang?): $(head -c 300 "$T/err.txt")"
	elif ! grep -qF -- "$needle" "$T/err.txt"; then
		fail "$name: stderr lacks '$needle': $(head -c 300 "$T/err.txt")"
	elif ! head -n1 "$T/err.txt" | grep -q '^nwbzarr'; then
		fail "$name: message not prefixed 'nwbzarr'"
	fi
}
# not_complete NAME DIR: DIR is absent, or `nwbzarr info` calls it incomplete.
not_complete() {
	[ -e "$2" ] || return 0
	"$NZ_CLI" info "$2" >/dev/null 2>&1
	local rc=$?
	[ $rc -ne 0 ] || fail "$1: '$2' looks complete"
	[ ! -e "$2/.zmetadata" ] || [ -e "$2/.nwbzarr-incomplete" ] || fail "$1: '$2' has .zmetadata and no marker"
	! grep -qs consolidated_metadata "$2/zarr.json" || [ -e "$2/.nwbzarr-incomplete" ] ||
		fail "$1: '$2' has consolidated zarr.json and no marker"
}
# make_rec FILE SEED FRAMES CHANNELS: int16 normal noise (sigma 30), which
# compresses about 2:1, as a raw row-major recording.
make_rec() {
	"$NZ_PYTHON" -c "
import numpy as np
np.random.default_rng($2).normal(0, 30, ($3, $4)).astype('<i2').tofile('$1')" || exit 1
}
