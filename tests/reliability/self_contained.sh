#!/usr/bin/env bash
# The repository tests alone: no file of it (sources, tests, build scripts,
# docs) reaches for a sibling ../shared folder or the machine it was developed
# on; the reference data the tests read lives in tests/data (see its README).
# Usage: self_contained.sh SOURCE_DIR
set -euo pipefail
src=$1
cd "$src"
pattern='\.\./shared|NZ_SHARED|/work/shared|"\.\.", *"shared"'
hits=$(grep -rnE "$pattern" --exclude-dir=.git --exclude-dir='build*' --exclude-dir=out \
	--exclude=self_contained.sh . || true)
if [ -n "$hits" ]; then
	echo "$hits"
	echo "these depend on a folder outside the repository; put the data in tests/data"
	exit 1
fi
# What the tests read is there, and the README accounts for every folder.
for d in nwb raw manifest zarr; do
	[ -n "$(ls -A "tests/data/$d" 2>/dev/null)" ] || { echo "tests/data/$d is missing or empty"; exit 1; }
	grep -q "\`$d/\`" tests/data/README.md || { echo "tests/data/README.md does not describe $d/"; exit 1; }
done
echo "no reference outside the repository; tests/data holds nwb raw manifest zarr"
