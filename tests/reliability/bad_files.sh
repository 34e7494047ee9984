#!/usr/bin/env bash
# Hostile input files for export, verify and info (docs/reliability.md,
# "Hostile input files"): truncated, empty and garbage HDF5, HDF5 that is not
# NWB, dangling and circular links, absurd shapes, Zarr stores with broken,
# missing or disagreeing metadata, a link named like a child, a directory or
# a file where the other is expected. Each row of the table must exit 1 within
# 20 s (no crash, no hang), with a first line "nwbzarr..." naming the file
# and the problem, without a huge allocation (address space capped where no
# sanitizer runs), and leave the output untouched: no new store, and an
# existing one kept byte for byte even with --overwrite.
. "$(dirname "$0")/common.sh"
SRC="$NZ_REF/nwb/2.2.0_subject_no_age__reference.nwb"
# The hostile stores below are v2 (made with Debian's zarr 2.13).
"$NZ_CLI" export "$SRC" good.zarr -j 2 --zarr-format 2 || { echo "FAIL: export of the good file"; exit 1; }

# ---- the files ----------------------------------------------------------------
"$NZ_PYTHON" - "$SRC" <<'PY' || exit 1
import json, os, shutil, sys
import h5py, numpy as np, zarr

def nwb(name):
    f = h5py.File(name, "w")
    f.attrs["nwb_version"] = "2.6.0"
    return f

head = open(sys.argv[1], "rb").read(4096)
open("trunc.nwb", "wb").write(head)
open("empty.nwb", "wb").close()
open("garbage.nwb", "wb").write(np.random.default_rng(1).bytes(100000))
with h5py.File("notnwb.h5", "w") as f:
    f.create_dataset("x", data=np.arange(10))
with nwb("dangling.nwb") as f:
    f["soft"] = h5py.SoftLink("/nowhere")
with nwb("circle.nwb") as f:
    f["a"] = h5py.SoftLink("/b")
    f["b"] = h5py.SoftLink("/a")
with nwb("huge.nwb") as f:  # 4 TiB of never-written chunks
    f.create_dataset("big", shape=(2**40,), dtype="<i4", chunks=(2**20,))
with nwb("overflow.nwb") as f:  # more elements than 2^64 bytes hold
    f.create_dataset("big", shape=(2**31, 2**31), dtype="<f8", chunks=(1, 1024))
with nwb("cycle.nwb") as f:  # a legal cycle: must export and verify
    g = f.create_group("g")
    g["up"] = f["/"]
    g.attrs["self"] = g.ref

def store(name, edit=None, consolidate=True):
    shutil.copytree("good.zarr", name)
    if edit:
        edit(name)
    if consolidate:
        zarr.consolidate_metadata(zarr.DirectoryStore(name))

def edit_json(rel, change):
    def f(root):
        p = os.path.join(root, rel)
        d = json.load(open(p))
        change(d)
        json.dump(d, open(p, "w"))
    return f

def write(rel, text):
    return lambda root: open(os.path.join(root, rel), "w").write(text)

store("z_badzgroup", write(".zgroup", "garbage"), consolidate=False)
store("z_badzattrs", write("general/.zattrs", '{"a": '), consolidate=False)
store("z_badzmeta", write(".zmetadata", "{bad"), consolidate=False)
store("z_notconsolidated", write(".zmetadata", "{}"), consolidate=False)
store("z_stale", edit_json("general/.zattrs", lambda d: d.update(x=1)), consolidate=False)
store("z_zarray", edit_json("identifier/.zarray", lambda d: d.pop("shape")))
store("z_absurd", edit_json("identifier/.zarray", lambda d: d.update(shape=[10**18], chunks=[1])))
store("z_overflow", edit_json("identifier/.zarray",
                              lambda d: d.update(shape=[2**62, 2**62], chunks=[1, 1])))
links = lambda l: edit_json("general/.zattrs", lambda d: d.update(zarr_link=l))
store("z_dangling", links([{"name": "l", "source": ".", "path": "/nowhere"}]))
store("z_circle", links([{"name": "a", "source": ".", "path": "/general/b"},
                         {"name": "b", "source": ".", "path": "/general/a"}]))
store("z_dup", links([{"name": "subject", "source": ".", "path": "/acquisition"}]))
os.mkdir("z_empty")
open("afile", "w").write("not a store\n")
PY
mkdir adir
mkfifo afifo

# ---- the checks -----------------------------------------------------------------
# Address space capped (4 GiB) where no sanitizer reserves its shadow memory.
cap=""
# (grep reads a captured string: under pipefail, `ldd | grep -q` fails
# whenever grep quits before ldd has written everything.)
grep -qE 'lib(a|t)san' <<<"$(ldd "$NZ_CLI" 2>/dev/null)" || cap="ulimit -v 4194304;"
cp -r good.zarr prev && cp -r good.zarr prev.orig
cases=0
# bad NAME FILE PROBLEM -- command...: exit 1, stderr names FILE and PROBLEM.
bad() {
	local name=$1 file=$2 problem=$3 rc
	shift 4
	cases=$((cases + 1))
	bash -c "$cap exec timeout 20 \"\$@\"" _ "$@" >out.txt 2>err.txt
	rc=$?
	if [ $rc -ne 1 ]; then
		fail "$name: exit $rc, not 1: $(head -c 300 err.txt)"
	elif ! head -n1 err.txt | grep -q '^nwbzarr'; then
		fail "$name: first line not 'nwbzarr...': $(head -c 300 err.txt)"
	elif ! grep -qF -- "$file" err.txt || ! grep -qF -- "$problem" err.txt; then
		fail "$name: stderr lacks '$file' or '$problem': $(head -c 300 err.txt)"
	fi
}
# export_bad NAME INPUT PROBLEM: no new store, and an existing one untouched.
export_bad() {
	bad "export $1" "$2" "$3" -- "$NZ_CLI" export "$2" new.zarr
	[ ! -e new.zarr ] || { fail "export $1: created new.zarr"; rm -rf new.zarr; }
	bad "export --overwrite $1" "$2" "$3" -- "$NZ_CLI" export "$2" prev --overwrite
	diff -r prev prev.orig >/dev/null || { fail "export $1: --overwrite touched prev"
		rm -rf prev && cp -r prev.orig prev; }
}

# file                problem
while read -r f problem; do
	export_bad "$f" "$f" "$problem"
	bad "verify $f" "$f" "$problem" -- "$NZ_CLI" verify "$f" good.zarr
done <<'EOF'
trunc.nwb truncated or corrupt
empty.nwb truncated or corrupt
garbage.nwb truncated or corrupt
notnwb.h5 is not an NWB file: its root has no nwb_version attribute
dangling.nwb link '/soft' leads to '/nowhere', which does not exist
circle.nwb leads round a circle of links
huge.nwb '/big': its shape asks for 4398046511104 bytes but the file stores 0
overflow.nwb '/big': its shape asks for more than 2^64 bytes
nothere.nwb No such file or directory
EOF
export_bad "a directory" adir "is not an HDF5 file"
# libhdf5 would block for ever opening a FIFO: refused before it is opened.
export_bad "a FIFO" afifo "is not a regular file"
bad "verify a FIFO" afifo "is not a regular file" -- "$NZ_CLI" verify afifo good.zarr
bad "verify a FIFO store" afifo "afifo" -- "$NZ_CLI" verify "$SRC" afifo
bad "info a FIFO" afifo "afifo" -- "$NZ_CLI" info afifo

# store               problem (verify SRC STORE)
while read -r z problem; do
	bad "verify $z" "$z" "$problem" -- "$NZ_CLI" verify "$SRC" "$z"
done <<'EOF'
z_badzgroup .zgroup: invalid JSON
z_badzattrs general/.zattrs: invalid JSON
z_badzmeta .zmetadata: invalid JSON
z_notconsolidated .zmetadata: not consolidated metadata
z_zarray identifier/.zarray: 'shape' must be a list of integers
z_absurd differ in 1 place
z_overflow identifier/.zarray: the shape holds more than 2^64 bytes
z_dangling link '/general/l' leads to '/nowhere', which does not exist
z_circle leads round a circle of links
z_dup two objects at '/general/subject'
z_empty holds no Zarr group
afile is not an HDF5 file
EOF
# A .zmetadata disagreeing with the documents is a difference verify names.
bad "verify z_stale" "z_stale" "differ in" -- "$NZ_CLI" verify "$SRC" z_stale
grep -q "its copy of 'general/.zattrs' differs from the file" out.txt err.txt ||
	fail "verify z_stale: the stale .zmetadata is not named: $(head -c 300 out.txt)"

# store               problem (info STORE)
while read -r z problem; do
	bad "info $z" "$z" "$problem" -- "$NZ_CLI" info "$z"
done <<'EOF'
z_badzgroup .zgroup: invalid JSON
z_badzattrs general/.zattrs: invalid JSON
z_badzmeta .zmetadata: invalid JSON
z_notconsolidated .zmetadata: not consolidated metadata
z_stale its copy of 'general/.zattrs' differs from the file
z_zarray identifier/.zarray: 'shape' must be a list of integers
z_overflow identifier/.zarray: the shape holds more than 2^64 bytes
z_empty not a Zarr group
afile is not a directory
nothere.zarr No such file or directory
EOF

# A cycle of hard links and a self-reference are legal HDF5: exported and
# verified, in bounded time; an absurd but well-formed Zarr shape is listed.
timeout 60 "$NZ_CLI" export cycle.nwb cycle.zarr || fail "export of a hard-link cycle"
timeout 60 "$NZ_CLI" verify cycle.nwb cycle.zarr >/dev/null || fail "verify of a hard-link cycle"
bash -c "$cap exec timeout 20 \"\$@\"" _ "$NZ_CLI" info z_absurd >out.txt 2>err.txt ||
	fail "info of an absurd but well-formed shape: $(head -c 300 err.txt)"
grep -q "(1000000000000000000)" out.txt || fail "info z_absurd: shape not listed"
diff -r good.zarr prev.orig >/dev/null || fail "the good store was changed"
echo "$cases hostile cases"
finish
