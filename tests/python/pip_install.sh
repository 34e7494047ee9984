#!/usr/bin/env bash
# `pip install .` as a user runs it, from a copy of the source tree (what a
# clean clone holds: tracked and untracked-but-not-ignored files), into a
# fresh venv under the build tree that sees the pinned readers through a .pth
# file; then the installed package (not the staged one) runs the tutorial
# and its console script. Needs NZ_PY3 and the package index (build deps).
set -euo pipefail
src=$1
work=$NZ_TMP/pip_install
rm -rf "$work" && mkdir -p "$work/src"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
  (cd "$src" && git ls-files -co --exclude-standard -z | xargs -0 cp --parents -t "$work/src")
else
  tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$work/src" -xf -
fi
"$NZ_PY3" -m venv "$work/venv"
py=$work/venv/bin/python
readers=$("$NZ_PY3" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
"$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' | {
  read -r site; echo "$readers" > "$site/nz_readers.pth"; }
unset PYTHONPATH
"$py" -m pip install -q --disable-pip-version-check "$work/src"
cd "$work"
"$py" - "$work/venv" <<'PY'
import sys, nwbzarr
assert nwbzarr.__file__.startswith(sys.argv[1]), nwbzarr.__file__
print("installed", nwbzarr.__version__, "at", nwbzarr.__file__)
PY
"$work/venv/bin/nwbzarr" --version
NZ_TUTORIAL_SECONDS=1 "$py" "$src/examples/tutorial.py" "$work/tutorial"
echo "pip install: ok"
