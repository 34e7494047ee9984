#!/usr/bin/env bash
# `convert --resume` on interruptions made deterministic (an injected full
# disk, corrupt chunks, a dead writer's temporary files, another request),
# each finished store compared byte for byte with an uninterrupted write.
. "$(dirname "$0")/common.sh"
make_rec rec.bin 1 4000 16
FIXED=(--channels 16 --rate 1000 --create-date 2024-01-01T00:00:00Z
       --session-start-time 2024-01-01T00:00:00Z --chunks 100,16)
ARGS=("${FIXED[@]}" --seed 3 -q)
conv() { "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" "$@"; }
conv -o ref -j1 || fail "reference write"
data=acquisition/ElectricalSeries/data
# Enough for the metadata and some chunks: the disk fills mid-data.
limit=$(( $(du -sb ref | cut -f1) / 4 ))

# --- a full disk (injected), then resume at -j2 ----------------------------
NZ_TEST_STORE_MAX_BYTES=$limit conv -o a -j2 2>err.txt
[ $? -eq 1 ] || fail "full disk: exit status"
grep -q "No space left on device" err.txt && grep -q "a/" err.txt || fail "full disk: message: $(cat err.txt)"
grep -q -- "--resume" err.txt || fail "full disk: no hint to resume"
[ -e a/.nwbzarr-incomplete ] && [ ! -e a/.zmetadata ] || fail "full disk: marker/.zmetadata"
n=$(ls a/$data 2>/dev/null | grep -c '^[0-9]')
[ "$n" -gt 0 ] && [ "$n" -lt 40 ] || fail "full disk: $n chunks written (want some, not all)"
"$NZ_CLI" info a >info.txt; [ $? -eq 3 ] || fail "info of an incomplete store: exit status"
grep -q INCOMPLETE info.txt || fail "info does not say INCOMPLETE"
"$NZ_PYTHON" -c "
import zarr, sys
try:
    zarr.open_consolidated('a', mode='r')
except KeyError:
    sys.exit(0)
sys.exit(1)" || fail "zarr-python opens the incomplete store as consolidated"
"$NZ_CLI" info a --json >info.json; grep -q "\"complete\": *false" info.json || fail "info --json lacks complete:false"
"$NZ_CLI" convert --zarr-format 2 rec.bin "${FIXED[@]}" --seed 3 -o a -j2 --resume 2>err.txt || fail "resume: $(cat err.txt)"
grep -q "resumed 'a': $n chunks kept, 0 corrupt rewritten, $((40 - n)) written" err.txt \
	|| fail "resume summary: $(cat err.txt)"
diff -r ref a >/dev/null || fail "resumed store differs from the uninterrupted one"
"$NZ_CLI" info a >/dev/null || fail "info of the resumed store"

# --- corrupt chunks and leftover temporary files ---------------------------
NZ_TEST_STORE_MAX_BYTES=$limit conv -o b -j1 2>/dev/null
head -c 10 ref/$data/0.0 >b/$data/0.0           # truncated: does not decode
cp ref/$data/2.0 b/$data/1.0                     # decodes, but to other data
echo junk >"b/$data/.5.0.nztmp.123.0"            # a killed writer's temporary
"$NZ_CLI" convert --zarr-format 2 rec.bin "${FIXED[@]}" --seed 3 -o b -j2 --resume 2>err.txt || fail "resume over corrupt chunks"
grep -q "2 corrupt rewritten.*1 temporary files removed" err.txt || fail "corrupt summary: $(cat err.txt)"
diff -r ref b >/dev/null || fail "store with corrupt chunks not repaired"

# --- a request that differs from the interrupted one ------------------------
NZ_TEST_STORE_MAX_BYTES=$limit conv -o c -j1 2>/dev/null
expect_fail "other clevel" "differs" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o c --resume --compressor zstd
grep -q "c/[a-z_/]*/.zarray' differs" err.txt || fail "mismatch does not name the document: $(cat err.txt)"
expect_fail "other seed" "seed" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${FIXED[@]}" --seed 4 -q -o c --resume
expect_fail "other create date" "file_create_date" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o c --resume --create-date 2025-01-01T00:00:00Z
expect_fail "other channels" "differs" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o c --resume --channels 8 --chunks 100,8
not_complete "refused resume" c
conv -o c --resume || fail "resume after refused ones"
diff -r ref c >/dev/null || fail "resume after refused ones differs"

# --- v3: an attribute with another value (another --conversion) is another
# request; the node's own documents are rewritten as attributes are added, so
# this is what catches it ------------------------------------------------------
conv3() { "$NZ_CLI" convert rec.bin "${ARGS[@]}" --shards 400,16 "$@"; }
conv3 -o ref3 -j1 || fail "v3 reference write"
NZ_TEST_STORE_MAX_BYTES=$(( $(find ref3 -type f -printf '%s\n' | awk '{s+=$1} END {print s}') / 2 )) conv3 -o v3 -j1 2>/dev/null
[ -e v3/.nwbzarr-incomplete ] || fail "v3 full disk left no marker"
expect_fail "v3 other conversion" "differs" -- "$NZ_CLI" convert rec.bin "${ARGS[@]}" --shards 400,16 -o v3 --resume --conversion 0.5
not_complete "refused v3 resume" v3
conv3 -o v3 -j2 --resume 2>/dev/null || fail "v3 resume after the refused one"
diff -r ref3 v3 >/dev/null || fail "v3 resumed store differs: $(diff -r ref3 v3 | head -3)"

# --- nothing to resume, nothing there, flags that exclude each other --------
before=$(find ref -type f | sort | xargs md5sum | md5sum)
expect_fail "complete store" "already complete" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o ref --resume
[ "$(find ref -type f | sort | xargs md5sum | md5sum)" = "$before" ] || fail "complete store modified"
mkdir foreign && echo x >foreign/notes.txt
expect_fail "not ours" "cannot be resumed" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o foreign --resume
[ "$(cat foreign/notes.txt)" = x ] || fail "foreign directory touched"
conv -o d --resume || fail "resume of a missing output"
diff -r ref d >/dev/null || fail "resume of a missing output differs"
expect_fail "resume + overwrite" "exclude" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o d --resume --overwrite

# --- killed right after the marker: nothing but the marker -----------------
mkdir g && printf '{"file_create_date": "2024-01-01T00:00:00Z", "object_id_seed": "3"}' >g/.nwbzarr-incomplete
"$NZ_CLI" info g >info.txt; [ $? -eq 3 ] && grep -q INCOMPLETE info.txt || fail "info of a marker-only store"
conv -o g --resume -j2 || fail "resume of a marker-only store"
diff -r ref g >/dev/null || fail "resume of a marker-only store differs"
mkdir h && echo '{"object_id_seed": 3}' >h/.nwbzarr-incomplete
expect_fail "malformed marker" "h/.nwbzarr-incomplete" -- "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o h --resume

# --- random ids and today's date come back from the marker ------------------
NZ_TEST_STORE_MAX_BYTES=$limit "$NZ_CLI" convert --zarr-format 2 rec.bin --channels 16 --rate 1000 --chunks 100,16 -q -o e 2>/dev/null
(cd e && find . -name .zattrs | sort | xargs md5sum) >before.txt
[ -s before.txt ] && grep -q object_id e/general/devices/probe/.zattrs || fail "unseeded: no ids written before the failure"
"$NZ_CLI" convert --zarr-format 2 rec.bin --channels 16 --rate 1000 --chunks 100,16 -q -o e --resume || fail "unseeded resume"
(cd e && md5sum -c --quiet ../before.txt) || fail "unseeded resume changed documents written before"
diff -r ref/$data e/$data >/dev/null || fail "unseeded resume: data differ"
"$NZ_CLI" info e >/dev/null || fail "unseeded resume: not complete"

# --- --fsync writes the same bytes ------------------------------------------
conv -o f --fsync -j2 || fail "--fsync"
diff -r ref f >/dev/null || fail "--fsync output differs"
# each file synced before its rename and its folder after it (where strace runs)
if strace -f -qq -e trace=fsync,rename -o st.txt "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o f2 --fsync 2>/dev/null; then
	renames=$(grep -c 'rename(' st.txt) fsyncs=$(grep -c 'fsync(' st.txt)
	[ "$renames" -gt 40 ] && [ "$fsyncs" -ge $((2 * renames)) ] || fail "--fsync: $fsyncs fsyncs for $renames renames"
	strace -f -qq -e trace=fsync -o st.txt "$NZ_CLI" convert --zarr-format 2 rec.bin "${ARGS[@]}" -o f3
	[ "$(grep -c 'fsync(' st.txt)" -eq 0 ] || fail "fsync without --fsync"
else
	echo "SKIP --fsync syscall count: strace cannot run here"
fi
# --- export: a full disk, then --resume; a different request ----------------
"$NZ_PYTHON" -c "
import numpy as np, h5py
with h5py.File('x.nwb', 'w') as f:
    f.attrs['nwb_version'] = '2.6.0'
    f.create_group('acquisition').create_dataset('data', chunks=(100, 1000), compression='gzip',
        data=np.random.default_rng(5).normal(0, 30, (3000, 1000)).astype('<i2'))
    f.create_dataset('identifier', data='x')" || exit 1
"$NZ_CLI" export x.nwb xref -j 1 || fail "export reference"
limit=$(( $(du -sb xref | cut -f1) / 3 ))
NZ_TEST_STORE_MAX_BYTES=$limit "$NZ_CLI" export x.nwb xa -j 2 2>err.txt
[ $? -eq 1 ] && grep -q "No space left" err.txt || fail "export full disk: $(cat err.txt)"
[ -e xa/.nwbzarr-incomplete ] && [ ! -e xa/.zmetadata ] || fail "export full disk: marker/.zmetadata"
"$NZ_CLI" info xa >/dev/null; [ $? -eq 3 ] || fail "info of an incomplete export"
expect_fail "export resume, other compressor" "differs" -- "$NZ_CLI" export x.nwb xa --resume --compressor zstd
"$NZ_CLI" export x.nwb xa -j 2 --resume 2>err.txt || fail "export resume: $(cat err.txt)"
grep -q "resumed 'xa': [1-9][0-9]* chunks kept" err.txt || fail "export resume summary: $(cat err.txt)"
diff -r xref xa >/dev/null || fail "resumed export differs from the uninterrupted one"
expect_fail "export resume of a complete store" "already complete" -- "$NZ_CLI" export x.nwb xa --resume
expect_fail "export resume + overwrite" "exclude" -- "$NZ_CLI" export x.nwb xa --resume --overwrite
# A writer killed before its marker leaves an empty directory (or only temp
# files): --resume starts afresh; a directory holding anything else is refused.
mkdir xe && touch xe/.x.nztmp.1.1
"$NZ_CLI" export x.nwb xe -j 2 --resume 2>err.txt || fail "export resume into an empty dir: $(cat err.txt)"
diff -r xref xe >/dev/null || fail "export resumed from an empty dir differs"
# The same for convert, with the marker's own temporary (a kill inside the
# marker's put): the fresh store must not keep it.
mkdir ce && echo junk >"ce/..nwbzarr-incomplete.nztmp.77.0"
conv -o ce -j2 --resume 2>err.txt || fail "convert resume into a temp-only dir: $(cat err.txt)"
conv -o cref -j1 2>/dev/null
diff -r cref ce >/dev/null || fail "convert resumed from a temp-only dir differs: $(diff -r cref ce | head -3)"
mkdir xf && echo data >xf/notes.txt
expect_fail "export resume into a foreign dir" "cannot be resumed" -- "$NZ_CLI" export x.nwb xf --resume
[ -e xf/notes.txt ] || fail "export resume removed a foreign file"

finish
