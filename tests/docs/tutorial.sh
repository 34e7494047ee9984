#!/usr/bin/env bash
# tutorial.sh BUILD SOURCE CMAKE CC [FLAGS]: run every ```sh block of
# docs/tutorial.md, in order, as one script, in a scratch folder with HOME
# pointing there; fail on the first command that fails.
#
# Block tags: ```sh (always run), ```sh setup (install steps: `bash
# scripts/deps.sh`, `cmake -S` and `cmake --build` are skipped, since ctest
# runs inside a configured and built tree; `cmake --install build` installs
# this build tree into $HOME/.local for real), ```sh pynwb (run only where
# NZ_PYREF points at a pynwb + hdmf-zarr tree with env.sh; CI has none).
# Any other tag, or a ```bash/```shell block, fails the test: every shell
# command of the tutorial must be run here.
#
# Substitutions: `your-file.nwb` is $NZ_REF/nwb/ecephys_units.nwb;
# cc, cmake and python3 are the build's compiler (with FLAGS, e.g.
# sanitizers), cmake and Debian's python (NZ_PYTHON).
set -euo pipefail
build=$1 src=$2 cmake=$3 cc=$4 flags=${5:-}
doc=$src/docs/tutorial.md
T=${NZ_TMP:?}/docs_tutorial
fail() { echo "test_docs_tutorial: $*" >&2; exit 1; }
[ -f "$doc" ] || fail "no $doc"
rm -rf "$T"
mkdir -p "$T/src" "$T/home"
# The "clone": what the setup blocks use, with build/ = this build tree.
ln -s "$build" "$T/src/build"
for d in examples scripts include docs; do ln -s "$src/$d" "$T/src/$d"; done

pyref=0
if [ -n "${NZ_PYREF:-}" ] && [ -f "$NZ_PYREF/env.sh" ]; then pyref=1; fi
export NZ_REF_NWB="$NZ_REF/nwb/ecephys_units.nwb"
[ -f "$NZ_REF_NWB" ] || fail "no $NZ_REF_NWB"

# Extract the blocks: awk writes the script and a count per tag on stderr.
script=$T/tutorial_script.sh
{
	echo 'set -euo pipefail'
	printf 'cc() { %q %s "$@"; }\n' "$cc" "$flags"
	printf 'cmake() { %q "$@"; }\n' "$cmake"
	printf 'python3() { %q "$@"; }\n' "${NZ_PYTHON:-/usr/bin/python3}"
	[ "$pyref" = 1 ] && printf 'source %q\n' "$NZ_PYREF/env.sh"
	awk -v pyref="$pyref" -v doc="$doc" '
		function bad(msg) { print doc ":" NR ": " msg > "/dev/stderr"; err = 1; exit 1 }
		/^```/ && !inblock {
			info = substr($0, 4)
			if (info ~ /^(bash|shell|console|zsh)/) bad("use ```sh for shell blocks (they are run by this test)")
			if (info !~ /^sh( |$)/) { other = 1; inblock = 1; next }
			tag = info; sub(/^sh */, "", tag)
			if (tag != "" && tag != "setup" && tag != "pynwb") bad("unknown block tag \"" tag "\"")
			inblock = 1; other = 0; n[tag == "" ? "plain" : tag]++
			skip = (tag == "pynwb" && pyref != 1)
			print "# ---- " doc ":" NR " (" (tag == "" ? "sh" : tag) ")" (skip ? " skipped: no NZ_PYREF" : "")
			next
		}
		/^```/ && inblock { inblock = 0; next }
		inblock && !other && !skip {
			line = $0
			if (tag == "setup" && line ~ /^(bash scripts\/deps\.sh|cmake -S |cmake --build )/) {
				print ": skipped, done by the build: " line; nskip++; next
			}
			nsub += gsub(/your-file\.nwb/, "\"$NZ_REF_NWB\"", line)
			print line
		}
		END {
			if (err) exit 1
			if (inblock) bad("unterminated code block")
			printf "blocks: %d sh, %d setup, %d pynwb; %d setup lines skipped; %d substitutions\n",
				n["plain"], n["setup"], n["pynwb"], nskip, nsub > "/dev/stderr"
			if (nskip != 3) { print doc ": expected 3 skipped setup lines (deps, configure, build)" > "/dev/stderr"; exit 1 }
			if (nsub < 1) { print doc ": no your-file.nwb to substitute" > "/dev/stderr"; exit 1 }
			if (n["plain"] < 5) { print doc ": fewer than 5 sh blocks" > "/dev/stderr"; exit 1 }
		}' "$doc"
} > "$script" 2> "$T/extract.log" || { cat "$T/extract.log" >&2; fail "could not extract the blocks"; }
cat "$T/extract.log"
[ "$pyref" = 1 ] || echo "pynwb blocks skipped (NZ_PYREF not set)"

start=$(date +%s)
# A shared libnwbzarr (BUILD_SHARED_LIBS=ON) installs outside the loader's path.
(cd "$T/src" && HOME="$T/home" LD_LIBRARY_PATH="$T/home/.local/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
	bash -x "$script") > "$T/run.log" 2>&1 || { cat "$T/run.log"; fail "a tutorial command failed (above)"; }
cat "$T/run.log"
# Spot checks that the commands did what the text says.
tut=$T/home/nwbzarr-tutorial
[ -s "$T/home/.local/share/man/man1/nwbzarr.1" ] || fail "cmake --install put no man page in share/man/man1 ('man nwbzarr')"
[ -f "$tut/run.nwb.zarr/.zmetadata" ] || fail "run.nwb.zarr not complete"
[ ! -e "$tut/slow.nwb.zarr/.nwbzarr-incomplete" ] || fail "slow.nwb.zarr still incomplete after --resume"
grep -q 'INCOMPLETE' "$T/run.log" || fail "the interrupted convert was not reported INCOMPLETE by info"
grep -q 'convert stopped: exit status 1$' "$T/run.log" || fail "the interrupted convert was not interrupted (exit status 1)"
grep -q "resumed 'slow.nwb.zarr': [1-9][0-9]* chunks kept" "$T/run.log" ||
	fail "the resume kept no chunk of the interrupted run"
echo "tutorial ran in $(( $(date +%s) - start )) s"
echo ok
