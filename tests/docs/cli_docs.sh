#!/usr/bin/env bash
# cli_docs.sh VERSION MAN_PAGE GEN_MAN: --help, docs/cli.md, the man page and
# --version agree.
#  - every command of `nwbzarr --help` has a "## CMD" section in docs/cli.md,
#    and every lower-case "## word" section is a command;
#  - every option shown by `nwbzarr CMD --help` is accepted by the parser
#    and is in that section, and every option in the section is in --help (except HIDDEN ones, which must still
#    be accepted by the parser); -h/--help are documented once at the top;
#  - the generated man page is current (gen_man.sh gives the same bytes),
#    groff formats it without a warning, and it names every option of every
#    command;
#  - `nwbzarr --version` prints the project's version, and so does the man page.
set -euo pipefail
version=$1 man=$2 gen=$3
here=$(cd "$(dirname "$0")" && pwd)
doc=$here/../../docs/cli.md
nz=${NZ_CLI:?}
T=${NZ_TMP:?}/docs_cli
rm -rf "$T" && mkdir -p "$T"
errors=0
fail() { echo "FAIL: $*"; errors=$((errors + 1)); }

# Options in a text: -x or --long-name, at the start or after a space, '[',
# '(', ',', '|' or a backtick (not "row-major", "blosc-lz4").
opts() { grep -oE '(^|[][ ,(|`])(--[a-z][a-z0-9-]*[a-z0-9]|-[a-zA-Z])([^a-zA-Z0-9-]|$)' |
	sed -E 's/^[][ ,(|`]//; s/[^a-zA-Z0-9]$//' | sort -u; }
section() { awk -v c="$1" '/^## / { on = ($2 == c) ; next } on' "$doc"; }

# convert --seed: object-id seed for reproducible tests, documented in
# docs/cli.md but deliberately not in --help.
declare -A hidden=([convert]="--seed")
declare -A hidden_value=([--seed]=7)

top=$("$nz" --help)
cmds=$(printf '%s\n' "$top" | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {on = 0}')
[ -n "$cmds" ] || fail "no commands listed by nwbzarr --help"
printf '%s\n' "$top" | opts > "$T/top.help"
head -12 "$doc" | opts > "$T/top.doc"
for o in $(cat "$T/top.help"); do
	grep -qx -- "$o" "$T/top.doc" || fail "'nwbzarr --help' shows $o; the top of docs/cli.md does not"
done
for c in $(grep -E '^## [a-z]+$' "$doc" | cut -c4-); do
	printf '%s\n' $cmds | grep -qx "$c" || fail "docs/cli.md has a section '## $c' but 'nwbzarr --help' lists no such command"
done

for c in $cmds; do
	"$nz" "$c" --help > "$T/$c.txt" || fail "nwbzarr $c --help exits $?"
	grep -q "^usage: nwbzarr $c" "$T/$c.txt" || fail "nwbzarr $c --help has no 'usage: nwbzarr $c' line"
	section "$c" > "$T/$c.md"
	[ -s "$T/$c.md" ] || { fail "docs/cli.md has no '## $c' section"; continue; }
	opts < "$T/$c.txt" | grep -vxE -- '-h|--help' > "$T/$c.help" || true
	opts < "$T/$c.md" > "$T/$c.doc" || true
	[ -s "$T/$c.help" ] || fail "found no options in nwbzarr $c --help"
	for o in $(cat "$T/$c.help"); do
		grep -qx -- "$o" "$T/$c.doc" || fail "nwbzarr $c --help shows $o; docs/cli.md '## $c' does not"
		# --help must not offer what the parser refuses (any other error is
		# fine here: a value-taking option takes "--help" as its value). Only
		# the option lines count: prose may name another command's options.
		grep -E '^[[:space:]]+-' "$T/$c.txt" | opts | grep -qx -- "$o" || continue
		if grep -qi 'unknown option' <<<"$("$nz" "$c" "$o" --help 2>&1)"; then
			fail "nwbzarr $c --help shows $o, but the parser says it is unknown"
		fi
	done
	for o in $(cat "$T/$c.doc"); do
		grep -qx -- "$o" "$T/$c.help" && continue
		case " ${hidden[$c]:-} " in
		*" $o "*)
			"$nz" "$c" "$o" "${hidden_value[$o]:-}" --help > /dev/null 2>&1 ||
				fail "docs/cli.md documents hidden option $c $o but the parser refuses it" ;;
		*) fail "docs/cli.md '## $c' documents $o; nwbzarr $c --help does not show it" ;;
		esac
	done
	echo "$c: $(wc -l < "$T/$c.help") options in --help and docs/cli.md"
done
# The test itself must be able to fail: an option missing from a section is found.
grep -v -- '--clevel' "$T/convert.md" | opts | grep -qx -- '--clevel' &&
	fail "self-check: the option extractor found a removed option"

# -- version -----------------------------------------------------------------
v=$("$nz" --version)
[ "${v%%$'\n'*}" = "nwbzarr $version" ] || fail "nwbzarr --version says '$v', expected 'nwbzarr $version' first"
grep -qx 'libraries: blosc [0-9.]*, zstd [0-9.]*\( (built with [0-9.]*)\)\?, lz4 [0-9.]*, zlib [0-9.a-z-]*' <<<"${v#*$'\n'}" ||
	fail "nwbzarr --version's second line is not 'libraries: blosc X, zstd Y, lz4 Z, zlib W': '$v'"
grep -qx "nwbzarr $version" <<<"$("$nz" -V)" || fail "nwbzarr -V differs from --version"

# -- man page ----------------------------------------------------------------
if [ ! -s "$man" ]; then
	fail "no generated man page $man"
else
	bash "$gen" "$nz" "$T/nwbzarr.1"
	cmp -s "$man" "$T/nwbzarr.1" || fail "$man is stale: gen_man.sh now writes something else"
	grep -q "^\.TH NWBZARR 1 .*\"nwbzarr $version\"" "$man" || fail "man page .TH does not carry version $version"
	if command -v groff > /dev/null; then
		groff -man -Tutf8 -ww -z "$man" > "$T/groff.txt" 2>&1 || fail "groff failed on $man"
		[ ! -s "$T/groff.txt" ] || { cat "$T/groff.txt"; fail "groff warns on $man (above)"; }
		groff -man -Tutf8 "$man" 2>/dev/null | sed 's/.\x08//g' > "$T/man.txt"
		for c in $cmds; do
			for o in $(cat "$T/$c.help") -h --help; do
				grep -qE -- "(^|[ ,[(])$o([] ,=]|$)" "$T/man.txt" ||
					fail "the man page does not show '$o' of $c"
			done
			grep -qE "^ +$c$" "$T/man.txt" || fail "the man page has no section for $c"
		done
	else
		echo "groff not installed: man page formatting not checked"
	fi
fi

[ "$errors" -eq 0 ] || { echo "$errors failure(s)"; exit 1; }
echo ok
