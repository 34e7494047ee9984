#!/usr/bin/env bash
# readme.sh SOURCE: README.md says only what the tree backs.
#  - the Performance block (table, machine, input, load) equals
#    `bench/plot_scaling.py bench/scaling.csv --markdown`;
#  - bench/scaling.png, which it embeds, is a PNG;
#  - every linked file exists;
#  - every option of every `nwbzarr CMD` line in its ```sh blocks is shown
#    by `nwbzarr CMD --help`;
#  - the "Two commands" are still there.
set -euo pipefail
src=$1
readme=$src/README.md csv=$src/bench/scaling.csv png=$src/bench/scaling.png
nz=${NZ_CLI:?} py=${NZ_PYTHON:-/usr/bin/python3}
T=${NZ_TMP:?}/docs_readme
rm -rf "$T" && mkdir -p "$T"
errors=0
fail() { echo "FAIL: $*"; errors=$((errors + 1)); }

"$py" "$src/bench/plot_scaling.py" "$csv" --markdown > "$T/table.expected"
awk '/^<!-- scaling table/ {on = 1; next} /^<!-- end of scaling table/ {on = 0} on' "$readme" > "$T/table.readme"
[ -s "$T/table.readme" ] || fail "README.md has no scaling table between its markers"
diff -u "$T/table.expected" "$T/table.readme" ||
	fail "README.md's scaling block differs from bench/scaling.csv (plot_scaling.py bench/scaling.csv --update-readme README.md)"
machine=$(sed -n 's/^# machine: //p' "$csv")
grep -qxF "Machine: $machine." "$T/table.readme" || fail "README.md's block does not name the CSV's machine: '$machine'"
grep -qF '](bench/scaling.png)' "$readme" || fail "README.md does not embed bench/scaling.png"
[ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] || fail "bench/scaling.png is not a PNG"

for f in $(grep -oE '\]\([^)#]+\)' "$readme" | sed 's/^](//; s/)$//' | grep -v '://'); do
	[ -e "$src/$f" ] || fail "README.md links to $f, which does not exist"
done

awk '/^```sh/ {on = 1; next} /^```/ {on = 0} on' "$readme" | sed 's/#.*//' | grep -E '^nwbzarr [a-z]+' > "$T/usage" || true
[ "$(wc -l < "$T/usage")" -ge 4 ] || fail "README.md shows fewer than 4 nwbzarr command lines"
while read -r _ cmd rest; do
	"$nz" "$cmd" --help > "$T/help" 2>&1 || { fail "README.md uses 'nwbzarr $cmd', which has no --help"; continue; }
	for o in $(printf ' %s\n' "$rest" | grep -oE ' -(-[a-z][a-z0-9-]*|[a-zA-Z])\b' | sed 's/^ //'); do
		grep -qE -- "(^|[ ,[])$o([] ,=]|$)" "$T/help" || fail "README.md: 'nwbzarr $cmd $o' is not in nwbzarr $cmd --help"
	done
done < "$T/usage"

grep -qx 'bash scripts/demo.sh' "$readme" || fail "README.md lost 'bash scripts/demo.sh'"
grep -qx 'bash scripts/test.sh' "$readme" || fail "README.md lost 'bash scripts/test.sh'"
[ "$errors" -eq 0 ] || { echo "$errors failure(s)"; exit 1; }
echo ok
