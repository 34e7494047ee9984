#!/usr/bin/env bash
# A hostile user of convert and of the options every command shares
# (docs/reliability.md, "Hostile options"). One row per case:
#
#   row NAME RC NEEDLE -- nwbzarr ARGS...
#
# runs the command (10 s at most: a hang fails), and checks its exit status
# is RC, that stderr's first line starts with "nwbzarr" and names NEEDLE,
# and that every protected file and store (snapshot() below: an existing
# output store, a store holding the recording, the target of a link, the
# inputs) is byte for byte what it was before. Most rows aim at the existing
# store with --overwrite, so an option checked after the old output is
# deleted shows here.
set -uo pipefail
T="$NZ_TMP/hostile_cli"
rm -rf "$T" && mkdir -p "$T" && cd "$T" || exit 1
nz=${NZ_CLI:?}
fails=0 rows=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

# --- fixtures -----------------------------------------------------------------
"$NZ_PYTHON" -c "
import numpy as np, h5py
np.random.default_rng(1).normal(0, 30, (3000, 8)).astype('<i2').tofile('rec.bin')
with h5py.File('in.nwb', 'w') as f:
    f.attrs['nwb_version'] = '2.6.0'
    f.create_dataset('identifier', data='x')
    # over export's 4 MiB 'small dataset' limit: written by the engine's workers
    d = np.random.default_rng(2).integers(0, 1 << 30, (1100, 1000), dtype='<i4')
    f.create_group('acquisition').create_dataset('d', data=d, chunks=(100, 1000))
with h5py.File('extmissing.nwb', 'w') as f:  # an external link into a file that is not there
    f.attrs['nwb_version'] = '2.6.0'
    f['m'] = h5py.ExternalLink('gone.nwb', '/x')
" || exit 1
# Zarr v2: rows below look at v2 keys (.zattrs, .zmetadata, .zgroup temps).
A=(--zarr-format 2 --channels 8 --rate 1000 -q --seed 1 --create-date 2024-01-01T00:00:00Z)
"$nz" convert rec.bin -o keep "${A[@]}" || { echo "FAIL: fixture convert"; exit 1; }
cp -r keep target                      # what a link points to
ln -s target link                      # an output that is a symbolic link
cp -r keep holder && echo outside >outside.txt
ln -s "$T/outside.txt" holder/acquisition/planted  # a store holding a link
cp -r keep withrec && cp rec.bin withrec/rec.bin   # a store holding the input
cp -r keep withh5 && cp in.nwb withh5/in.nwb       # the same for export
mkdir notastore && echo mine >notastore/notes.txt
mkfifo fifo && mkdir adir && echo text >text.txt
echo '{"identifier": "x",' >bad.json

# Everything a failing run must leave alone: names, types, modes, link
# targets and the bytes of every file.
snapshot() {
	find keep target link holder outside.txt withrec withh5 notastore rec.bin in.nwb -printf '%p %y %m %s %l\n' | sort
	find keep target holder withrec withh5 notastore rec.bin in.nwb -type f -print0 | sort -z | xargs -0 md5sum
}
snapshot >before.txt

row() {
	local name=$1 want=$2 needle=$3 rc
	shift 4
	rows=$((rows + 1))
	timeout 10 "$@" >out.txt 2>err.txt </dev/null
	rc=$?
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, expected $want: $(head -c 300 err.txt)"
	elif [ "$want" -ne 0 ] && ! grep -qF -- "$needle" err.txt; then
		fail "$name: stderr lacks '$needle': $(head -c 300 err.txt)"
	elif [ "$want" -ne 0 ] && ! head -n1 err.txt | grep -q '^nwbzarr'; then
		fail "$name: message not prefixed 'nwbzarr': $(head -c 200 err.txt)"
	fi
	snapshot >after.txt
	cmp -s before.txt after.txt || { fail "$name: protected files changed:"; diff before.txt after.txt | head -5; }
	# A failed validation must not suggest --resume: it would fail the same way.
	if [ "$want" -eq 2 ] && head -n1 err.txt | grep -q -- "--resume" &&
		! grep -q "exclude each other" err.txt; then
		fail "$name: a usage error suggests --resume"
	fi
}

C=("$nz" convert rec.bin -o keep --overwrite "${A[@]}")

# --- codecs and levels: refused before the old output is touched --------------
row "gzip --clevel 15" 2 "gzip's levels 0..9" -- "${C[@]}" --compressor gzip --clevel 15
row "blosc --clevel 10" 2 "blosc-lz4's levels 0..9" -- "${C[@]}" --clevel 10
row "zstd --clevel 23" 2 "--clevel" -- "${C[@]}" --compressor zstd --clevel 23
row "lz4 --clevel" 2 "does not apply to --compressor lz4" -- "${C[@]}" --compressor lz4 --clevel 3
row "none --clevel" 2 "does not apply to --compressor none" -- "${C[@]}" --compressor none --clevel 1
row "--clevel -1" 2 "--clevel" -- "${C[@]}" --clevel -1
row "--clevel empty" 2 "non-empty" -- "${C[@]}" --clevel ""
row "unknown compressor" 2 "unknown --compressor 'lzma'" -- "${C[@]}" --compressor lzma
row "compressor empty" 2 "non-empty" -- "${C[@]}" --compressor=

# --- numbers: negative, huge, malformed, empty ---------------------------------
for j in -1 257 5000000000 99999999999999999999 abc 1.5 ""; do
	row "convert -j '$j'" 2 "-j" -- "${C[@]}" -j "$j"
done
row "-j given twice, last bad" 2 "-j" -- "${C[@]}" -j 2 -j 999
for v in 0 -3 99999999999999999999 x ""; do
	row "--channels '$v'" 2 "--channels" -- "${C[@]}" --channels "$v"
done
for v in 0 -1 nan inf 1e999 ""; do
	row "--rate '$v'" 2 "--rate" -- "${C[@]}" --rate "$v"
done
row "--conversion -1" 2 "--conversion" -- "${C[@]}" --conversion -1
row "--offset -5" 2 "--offset" -- "${C[@]}" --offset -5
row "--offset past the end" 1 "rec.bin" -- "${C[@]}" --offset 99999999999
: >empty.bin
row "empty recording" 1 "'empty.bin' holds no frames" -- "$nz" convert empty.bin -o keep --overwrite "${A[@]}"
row "header only" 1 "holds no frames" -- "${C[@]}" --offset 48000
for v in 0,0 5 1,2,3 1,-1 99999999999999999999,1 ""; do
	row "--chunks '$v'" 2 "--chunks" -- "${C[@]}" --chunks "$v"
done
row "--chunks wider than channels" 2 "--chunks" -- "${C[@]}" --chunks 10,9
row "huge channel count" 1 "rec.bin" -- "${C[@]}" --channels 4611686018427387904 --dtype float64
row "unknown dtype" 2 "unknown --dtype 'complex64'" -- "${C[@]}" --dtype complex64
row "--seed 0" 2 "--seed" -- "${C[@]}" --seed 0
row "--zarr-format 4" 2 "--zarr-format" -- "${C[@]}" --zarr-format 4
row "--zarr-format 3 with lz4" 2 "--compressor lz4 needs --zarr-format 2" -- "${C[@]}" --zarr-format 3 --compressor lz4
row "--shards 0,64" 2 "--shards" -- "${C[@]}" --shards 0,64
row "export --zarr-format empty" 2 "non-empty" -- "$nz" export in.nwb keep --overwrite --zarr-format ""
row "export --shards with v2" 2 "--shards needs Zarr v3" -- "$nz" export in.nwb keep --overwrite --zarr-format 2 --shards 100,8
row "export --shards not a multiple" 1 "shards 100,8 are not a multiple of its chunks 100,1000" -- "$nz" export in.nwb keep --overwrite --shards 100,8

# --- text: empty, not UTF-8, not a time ------------------------------------------
row "--identifier empty" 2 "non-empty" -- "${C[@]}" --identifier ""
row "--identifier not UTF-8" 2 "not valid UTF-8" -- "${C[@]}" --identifier $'rec\xff'
row "--lab not UTF-8" 2 "--lab" -- "${C[@]}" --lab $'\xc3\x28'
row "--location surrogate" 2 "--location" -- "${C[@]}" --location $'\xed\xa0\x80'
row "--species overlong" 2 "--species" -- "${C[@]}" --species $'\xc0\xaf'
row "--session-description not UTF-8" 2 "--session-description" -- "${C[@]}" --session-description $'\xfe'
cp rec.bin $'r\xe9c.bin'
row "file name not UTF-8 (default identifier)" 2 "--identifier" -- "$nz" convert $'r\xe9c.bin' -o keep --overwrite "${A[@]}"
row "--session-start-time not a time" 2 "--session-start-time" -- "${C[@]}" --session-start-time yesterday
row "--create-date without zone" 2 "--create-date" -- "$nz" convert rec.bin -o keep --overwrite --channels 8 --rate 1 -q --create-date 2024-01-01T00:00:00

# --- inputs: missing, directories, FIFOs (no hang), not what they claim ----------
row "input missing" 1 "nothere.bin" -- "$nz" convert nothere.bin -o keep --overwrite "${A[@]}"
row "input a directory" 1 "'adir' is not a regular file" -- "$nz" convert adir -o keep --overwrite "${A[@]}"
# A FIFO (or -) is a stream to record: refused before it is opened when the
# request cannot work with one (opening waits for a writer).
row "input a FIFO, --resume" 2 "not resumed" -- "$nz" convert fifo -o keep --resume "${A[@]}"
row "input -, --resume" 2 "not resumed" -- "$nz" convert - -o keep --resume "${A[@]}"
row "--flush-interval for a file" 2 "--flush-interval is for streams" -- "$nz" convert rec.bin -o keep --overwrite --flush-interval 1 "${A[@]}"
row "--flush-interval 0" 2 "--flush-interval needs a positive number" -- "$nz" convert - -o keep --overwrite --flush-interval 0 "${A[@]}"
row "input - without --channels" 2 "channel count unknown" -- "$nz" convert - -o keep --overwrite --rate 10 -q
row "--meta missing" 1 "none.json" -- "${C[@]}" --meta none.json
row "--meta bad JSON" 1 "bad.json" -- "${C[@]}" --meta bad.json
printf '{"identifier": "a\xffb"}' >bad8.json
row "--meta not UTF-8" 1 "bad8.json" -- "${C[@]}" --meta bad8.json
row "--meta a directory" 1 "adir" -- "${C[@]}" --meta adir
row "--meta a FIFO" 1 "fifo" -- "${C[@]}" --meta fifo
row "--spec-from missing" 1 "nospec.nwb" -- "${C[@]}" --spec-from nospec.nwb
row "--spec-from not NWB" 1 "text.txt" -- "${C[@]}" --spec-from text.txt
row "--spec-from a non-NWB directory" 1 "adir" -- "${C[@]}" --spec-from adir
row "--spec-from a FIFO" 1 "fifo" -- "${C[@]}" --spec-from fifo

# --- outputs: links, files, foreign folders, inside or equal to the input -----------
row "output is a link to a store" 1 "symbolic link" -- "$nz" convert rec.bin -o link --overwrite "${A[@]}"
row "output is a link, trailing slash" 1 "symbolic link" -- "$nz" convert rec.bin -o link/ --overwrite "${A[@]}"
row "store holding a link" 1 "holds a symbolic link" -- "$nz" convert rec.bin -o holder --overwrite "${A[@]}"
row "output a group of another store" 1 "lies inside the Zarr store" -- "$nz" convert rec.bin -o keep/acquisition --overwrite "${A[@]}"
row "export: output a group of another store" 1 "lies inside the Zarr store" -- "$nz" export in.nwb keep/general --overwrite -q
row "--spec-from the output itself" 1 "keep" -- "${C[@]}" --spec-from keep
row "output a directory of other data" 1 "not a Zarr store" -- "$nz" convert rec.bin -o notastore --overwrite "${A[@]}"
row "output a regular file" 1 "not a directory" -- "$nz" convert rec.bin -o text.txt --overwrite "${A[@]}"
row "output a FIFO" 1 "not a directory" -- "$nz" convert rec.bin -o fifo --overwrite "${A[@]}"
row "output equal to the input" 1 "not a directory" -- "$nz" convert rec.bin -o rec.bin --overwrite "${A[@]}"
row "output inside the input" 1 "rec.bin/out" -- "$nz" convert rec.bin -o rec.bin/out "${A[@]}"
row "input inside the output" 2 "lies inside the output" -- "$nz" convert withrec/rec.bin -o withrec --overwrite "${A[@]}"
row "output exists, no --overwrite" 1 "already exists (use --overwrite)" -- "$nz" convert rec.bin -o keep "${A[@]}"

# --- convert and export agree on what an existing output may be -------------------
# to DIR: the command line of convert or export writing DIR
to() { if [ "$1" = convert ]; then echo "convert rec.bin ${A[*]} -o $2"; else echo "export in.nwb $2 -q --zarr-format 2"; fi; }
for c in convert export; do
	rm -rf e1 && mkdir e1
	# shellcheck disable=SC2046
	row "$c: empty folder, no --overwrite" 1 "already exists (use --overwrite)" -- "$nz" $(to $c e1)
	rm -rf e1 && mkdir e1 && echo x >e1/.zgroup.nztmp.7.1
	# shellcheck disable=SC2046
	row "$c: temp-only folder, --overwrite" 0 "" -- "$nz" $(to $c e1) --overwrite
	[ -e e1/.zmetadata ] && [ ! -e e1/.zgroup.nztmp.7.1 ] || fail "$c: temp-only folder not written afresh"
	rm -rf e1 && mkdir e1 && ln -s "$T/outside.txt" e1/.zgroup.nztmp.7.2
	# shellcheck disable=SC2046
	row "$c: temp-named link only, --overwrite" 0 "" -- "$nz" $(to $c e1) --overwrite
	[ -e e1/.zmetadata ] || fail "$c: folder with a temp-named link not written afresh"
	rm -rf e1
done

# --- flags: unknown, missing values and operands, conflicts ---------------------
row "unknown flag" 2 "--frobnicate" -- "${C[@]}" --frobnicate
row "-o without value" 2 "needs a value" -- "$nz" convert rec.bin -o
row "no -o" 2 "-o" -- "$nz" convert rec.bin "${A[@]}"
row "no input" 2 "RECORDING" -- "$nz" convert -o keep "${A[@]}"
row "two inputs" 2 "unexpected argument" -- "${C[@]}" rec.bin
row "--resume with --overwrite" 2 "exclude each other" -- "${C[@]}" --resume
row "unknown command" 2 "unknown command" -- "$nz" explode

row "convert --json, output not UTF-8" 2 "--json: the path" -- "$nz" convert rec.bin -o $'o\xff' --json "${A[@]}"
[ ! -e $'o\xff' ] || fail "--json with a non-UTF-8 path: output created"

# --- the common options of export, verify, info --------------------------------------
for j in -1 257 5000000000 abc ""; do
	row "export -j '$j'" 2 "-j" -- "$nz" export in.nwb keep --overwrite -j "$j"
	row "verify --jobs '$j'" 2 "-j" -- "$nz" verify keep target --jobs "$j"
done
row "export --jobs=-1" 2 "-j" -- "$nz" export in.nwb keep --overwrite --jobs=-1
row "export unknown compressor" 2 "lzma" -- "$nz" export in.nwb keep --overwrite --compressor lzma
row "export --clevel alone" 2 "needs --compressor" -- "$nz" export in.nwb keep --overwrite --clevel 3
row "export zstd --clevel 30" 2 "--clevel 30 is outside zstd's levels 1..22" -- "$nz" export in.nwb keep --overwrite --compressor zstd --clevel 30
row "export lz4 --clevel" 2 "does not apply to --compressor lz4" -- "$nz" export in.nwb keep --overwrite --compressor lz4 --clevel 1
row "export --clevel abc" 2 "whole number" -- "$nz" export in.nwb keep --overwrite --compressor zstd --clevel abc
row "export --chunks bogus" 2 "keep or auto" -- "$nz" export in.nwb keep --overwrite --chunks bogus
row "export --chunks empty" 2 "non-empty" -- "$nz" export in.nwb keep --overwrite --chunks ""
row "export unknown flag" 2 "--frobnicate" -- "$nz" export in.nwb keep --frobnicate
row "export one operand" 2 "required" -- "$nz" export in.nwb
row "export three operands" 2 "unexpected argument" -- "$nz" export in.nwb keep extra
row "export --resume --overwrite" 2 "exclude each other" -- "$nz" export in.nwb keep --resume --overwrite
row "export input missing" 1 "nothere.nwb" -- "$nz" export nothere.nwb keep --overwrite
row "export input not HDF5" 1 "not an HDF5 file" -- "$nz" export rec.bin keep --overwrite
row "export --copy-links, linked file missing" 1 "extmissing.nwb': external link '/m' leads into 'gone.nwb', which cannot be opened" \
	-- "$nz" export extmissing.nwb keep --overwrite --copy-links
row "export, linked file missing" 1 "extmissing.nwb': external link '/m' leads into 'gone.nwb', which cannot be opened" \
	-- "$nz" export extmissing.nwb keep --overwrite
grep -q "was left as it was" err.txt || fail "export of a bad input: no word that 'keep' is as it was"
row "export to a new output, bad input" 1 "rec.bin" -- "$nz" export rec.bin newout --overwrite
grep -q "was left as it was" err.txt && fail "a new output is not 'left as it was'"
[ ! -e newout ] || fail "export of a bad input created its output"
row "export output equal to the input" 1 "not a directory" -- "$nz" export in.nwb in.nwb --overwrite
row "export output inside the input" 1 "in.nwb/out" -- "$nz" export in.nwb in.nwb/out
row "export input inside the output" 1 "holds an input of this run" -- "$nz" export withh5/in.nwb withh5 --overwrite
row "export output a link" 1 "symbolic link" -- "$nz" export in.nwb link --overwrite -q
row "export store holding a link" 1 "holds a symbolic link" -- "$nz" export in.nwb holder --overwrite -q
row "export output exists" 1 "already exists" -- "$nz" export in.nwb keep -q
row "verify --max-diffs 0" 2 "--max-diffs" -- "$nz" verify keep target --max-diffs 0
row "verify --max-diffs -1" 2 "--max-diffs" -- "$nz" verify keep target --max-diffs -1
row "verify one operand" 2 "required" -- "$nz" verify keep
row "verify unknown flag" 2 "--frobnicate" -- "$nz" verify keep target --frobnicate
row "info no operand" 2 "FILE" -- "$nz" info
row "info unknown flag" 2 "--frobnicate" -- "$nz" info keep --frobnicate
row "info a FIFO" 1 "fifo" -- "$nz" info fifo

# --- a failure after writing began: the old store is given back --------------------
NZ_TEST_STORE_MAX_BYTES=20000 row "convert --overwrite, disk full" 1 "No space left" -- "${C[@]}"
grep -q "'keep' was left as it was" err.txt || fail "disk full: no word that the old store is back: $(cat err.txt)"
grep -q -- "--resume" err.txt && fail "disk full after --overwrite suggests --resume"
NZ_TEST_STORE_MAX_BYTES=20000 row "export --overwrite, disk full" 1 "No space left" -- "$nz" export in.nwb keep --overwrite -q
ls -a | grep -q nzold && fail "an old store was left aside"

# --- sanity: the same commands succeed with good values, and report what they did ---
row "verify keep target" 0 "" -- "$nz" verify keep target -q
"$nz" convert rec.bin -o fresh -j 3 --json "${A[@]:0:4}" --rate 1000 >sum.json 2>err.txt || fail "good convert: $(cat err.txt)"
"$NZ_PYTHON" -c "
import json, sys
j = json.load(open('sum.json'))
assert 1 <= j['jobs'] <= 3, j   # threads the engine ran, not just the -j asked for
" || fail "convert --json: jobs not the threads used: $(cat sum.json)"
"$nz" export in.nwb ex -j 2 --json >ex.json 2>err.txt || fail "good export: $(cat err.txt)"
"$NZ_PYTHON" -c "
import json
j = json.load(open('ex.json'))
assert j['datasets'] >= 2 and 1 <= j['jobs'] <= 2 and j['output'] == 'ex', j
" || fail "export --json: $(cat ex.json)"
"$nz" verify in.nwb ex --json >v.json 2>err.txt || fail "verify --json: $(cat err.txt)"
tail -n1 v.json | "$NZ_PYTHON" -c "
import json, sys
j = json.loads(sys.stdin.read())
assert j['kind'] == 'summary' and j['match'] is True and j['differences'] == 0, j
" || fail "verify --json summary: $(cat v.json)"
"$nz" export in.nwb ex -q --overwrite >q.txt 2>&1 || fail "export --quiet --overwrite: $(cat q.txt)"
[ ! -s q.txt ] || fail "export --quiet printed: $(cat q.txt)"
"$nz" convert rec.bin -o keep --overwrite "${A[@]}" --rate 2000 || fail "good --overwrite"
grep -q '"rate": 2000.0' keep/acquisition/ElectricalSeries/starting_time/.zattrs || fail "--overwrite did not replace"
ls -a | grep -q nzold && fail "--overwrite left the old store aside"

# --- progress on a terminal (a pty from script(1)), none with --quiet or --json ---
if command -v script >/dev/null; then
	for c in "convert rec.bin -o t1 --channels 8 --rate 1000" "export in.nwb t2" "verify in.nwb ex"; do
		script -qec "$nz $c" /dev/null >tty.txt 2>&1 </dev/null
		grep -q "MB/s  ETA" tty.txt || fail "$c: no progress line on a terminal: $(head -c 200 tty.txt)"
		for q in -q --json; do
			rm -rf t1 t2
			script -qec "$nz $c $q" /dev/null >tty.txt 2>&1 </dev/null
			grep -q "ETA" tty.txt && fail "$c $q: progress line drawn"
		done
		rm -rf t1 t2
	done
else
	echo "SKIP progress on a terminal: no script(1)"
fi

echo "$rows rows, $fails failures"
[ "$fails" -eq 0 ]
