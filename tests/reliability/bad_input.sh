#!/usr/bin/env bash
# Bad input and faults through the CLI, beyond those of tests/cli/convert.sh
# (missing input, partial frame, bad JSON, existing output): each must fail
# with exit 1 (2 for usage), a message naming the file and the problem, no
# crash or hang, and no complete-looking output. Filesystem faults use a
# small tmpfs where this runs as root and mount works (skipped visibly
# otherwise) and always an injected full disk (NZ_TEST_STORE_MAX_BYTES) and
# RLIMIT_FSIZE.
. "$(dirname "$0")/common.sh"

"$NZ_PYTHON" -c "
import numpy as np, h5py
with h5py.File('in.nwb', 'w') as f:
    f.attrs['nwb_version'] = '2.6.0'
    g = f.create_group('acquisition')
    g.create_dataset('data', data=np.random.default_rng(4).integers(0, 1 << 30, (2000, 100), dtype='<i4'), chunks=(100, 100))
    f.create_dataset('identifier', data='x')
with h5py.File('regions.nwb', 'w') as f:
    d = f.create_dataset('data', data=np.arange(10))
    r = f.create_dataset('regions', (1,), dtype=h5py.regionref_dtype)
    r[0] = d.regionref[2:5]
" || exit 1
make_rec rec.bin 3 60000 32
A=(--channels 32 --rate 1000 -q)
CONV=("$NZ_CLI" convert)

# --- inputs that are not recordings -----------------------------------------
mkdir adir && mkfifo fifo
expect_fail "directory input" "'adir' is not a regular file" -- "${CONV[@]}" adir -o o1 "${A[@]}"
[ ! -e o1 ] || fail "bad input: output created"
# A FIFO is a stream to record; nobody writing to it: a SIGTERM ends the
# wait for a writer, and no output was created (the FIFO is opened first).
timeout -k 5 2 "${CONV[@]}" fifo -o o1 "${A[@]}" 2>fifo.err
[ $? -ne 0 ] || fail "FIFO without a writer: convert succeeded"
[ ! -e o1 ] || fail "FIFO without a writer: output created"
if [ "$(id -u)" != 0 ]; then
	cp rec.bin locked.bin && chmod 000 locked.bin
	expect_fail "unreadable input" "locked.bin" -- "${CONV[@]}" locked.bin -o o1 "${A[@]}"
	[ ! -e o1 ] || fail "unreadable input: output created"
else
	echo "SKIP unreadable input: root reads any file"
fi

# --- sizes, channels and dtypes that do not fit ------------------------------
expect_fail "huge channel count" "rec.bin" -- "${CONV[@]}" rec.bin -o o2 --channels 4611686018427387904 --rate 1 --dtype float64 -q
expect_fail "dtype does not divide" "rec.bin" -- "${CONV[@]}" rec.bin -o o2 --channels 32 --rate 1 --dtype float64 --offset 6 -q
expect_fail "offset past the end" "rec.bin" -- "${CONV[@]}" rec.bin -o o2 --channels 32 --rate 1 --offset 99999999 -q
expect_fail "unknown dtype" "--dtype" -- "${CONV[@]}" rec.bin -o o2 --channels 32 --rate 1 --dtype complex64 -q
[ ! -e o2 ] || fail "misfit input: output created"

# --- absurd arguments ----------------------------------------------------------
for bad in "-j -1" "-j 99999" "--chunks 0,0" "--chunks 5" "--chunks 1,-1" "--clevel 99" \
	   "--clevel -3" "--channels 0" "--rate -1" "--rate nan" "--offset -5"; do
	# shellcheck disable=SC2086
	expect_fail "convert $bad" "${bad%% *}" -- "${CONV[@]}" rec.bin -o o3 --rate 1 --channels 32 -q $bad
	grep -q "^usage" err.txt || fail "convert $bad: no usage text"
done
expect_fail "chunks wider than channels" "--chunks" -- "${CONV[@]}" rec.bin -o o3 "${A[@]}" --chunks 10,33
for bad in "-j -1" "--chunks bogus" "--compressor lzma"; do
	# shellcheck disable=SC2086
	expect_fail "export $bad" "${bad#* }" -- "$NZ_CLI" export in.nwb o3 $bad
done
[ ! -e o3 ] || fail "absurd arguments: output created"

# --- HDF5 input: missing, truncated, garbage, unrepresentable -----------------
expect_fail "export: missing input" "nothere.nwb" -- "$NZ_CLI" export nothere.nwb o4
head -c 3000 in.nwb >trunc.nwb
expect_fail "export: truncated HDF5" "trunc.nwb" -- "$NZ_CLI" export trunc.nwb o4
not_complete "truncated HDF5" o4
head -c 100000 /dev/urandom >garbage.nwb
expect_fail "export: not HDF5" "garbage.nwb" -- "$NZ_CLI" export garbage.nwb o5
not_complete "garbage HDF5" o5
expect_fail "export: region references" "'/regions': region references" -- "$NZ_CLI" export regions.nwb o6
not_complete "region references" o6
"$NZ_CLI" export in.nwb ex -j 2 || fail "export of a good file"
expect_fail "export: output exists" "output 'ex' already exists" -- "$NZ_CLI" export in.nwb ex
"$NZ_CLI" info ex >/dev/null || fail "existing export damaged"

# --- outputs that cannot be written ------------------------------------------
echo x >afile
expect_fail "output below a file" "afile/out" -- "${CONV[@]}" rec.bin -o afile/out "${A[@]}"
"$NZ_CLI" convert --zarr-format 2 rec.bin "${A[@]}" -o ok --seed 1 --create-date 2024-01-01T00:00:00Z || fail "good convert"
# a disk that fills (injected), for convert and export
NZ_TEST_STORE_MAX_BYTES=200000 timeout 10 "$NZ_CLI" convert --zarr-format 2 rec.bin "${A[@]}" -o full1 2>err.txt
[ $? -eq 1 ] && grep -q "full1/.*No space left on device" err.txt || fail "injected full disk: $(cat err.txt)"
not_complete "injected full disk" full1
NZ_TEST_STORE_MAX_BYTES=100000 expect_fail "export: injected full disk" "No space left" -- "$NZ_CLI" export in.nwb full2
not_complete "export: injected full disk" full2
# a file size limit (EFBIG): SIGXFSZ ignored so write() reports it
(ulimit -f 64; trap '' XFSZ; exec "$NZ_CLI" convert --zarr-format 2 rec.bin "${A[@]}" -o fsize --chunks 2000,32 --compressor none) 2>err.txt
[ $? -eq 1 ] && grep -q "fsize/.*File too large" err.txt || fail "RLIMIT_FSIZE: $(cat err.txt)"
not_complete "RLIMIT_FSIZE" fsize
# a real full (and a read-only) filesystem: a 1 MiB tmpfs, then resumed after growing it
if [ "$(id -u)" = 0 ] && mkdir -p mnt && mount -t tmpfs -o size=1m nz_rel_tmpfs mnt 2>/dev/null; then
	trap 'umount "$T/mnt" 2>/dev/null' EXIT
	"$NZ_CLI" convert --zarr-format 2 rec.bin "${A[@]}" -o mnt/out --seed 1 --create-date 2024-01-01T00:00:00Z 2>err.txt
	[ $? -eq 1 ] && grep -q "mnt/out.*No space left on device" err.txt || fail "tmpfs full: $(cat err.txt)"
	not_complete "tmpfs full" mnt/out
	mount -o remount,size=16m mnt || fail "remount"
	"$NZ_CLI" convert --zarr-format 2 rec.bin "${A[@]}" -o mnt/out --seed 1 --create-date 2024-01-01T00:00:00Z --resume \
		|| fail "resume after the disk was grown"
	diff -r ok mnt/out >/dev/null || fail "resumed after a full disk: differs"
	mount -o remount,ro mnt || fail "remount ro"
	expect_fail "read-only filesystem" "mnt/ro" -- "${CONV[@]}" rec.bin -o mnt/ro "${A[@]}"
	umount mnt
	trap - EXIT
else
	echo "SKIP real tmpfs: not root or mount not permitted (injected variants ran)"
fi

# --- a chunk corrupted on disk ------------------------------------------------
cp -r ok bad
key=acquisition/ElectricalSeries/data/0.0
head -c 50 ok/$key >bad/$key
expect_fail "verify: corrupt chunk" "data/0.0" -- "$NZ_CLI" verify ok bad
printf 'garbage' >bad/$key
expect_fail "verify: garbage chunk" "data/0.0" -- "$NZ_CLI" verify ok bad
finish
