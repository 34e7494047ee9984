#!/usr/bin/env bash
# Make (or reuse) the test venv with the real readers: scripts/pyvenv.sh DIR
# creates DIR/venv from a Python >= 3.12 (zarr 3.4 and hdmf-zarr 0.14 need it),
# installs scripts/requirements-readers.txt (plus any extra requirement files
# given after DIR), and prints the venv's interpreter on stdout.
# `pyvenv.sh --only DIR FILE...` installs just the files given (the hdmf-zarr
# 0.13 venv: zarr 2 cannot live beside zarr 3). Reused while
# the requirement files are unchanged (a stamp holds their hash). DIR should be
# inside the build tree: nothing is cached anywhere else.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
only=0
[ "${1:-}" = --only ] && { only=1; shift; }
[ $# -ge $((1 + only)) ] || { echo "usage: pyvenv.sh [--only] DIR [REQUIREMENTS...]" >&2; exit 2; }
mkdir -p "$1"; dir=$(cd "$1" && pwd); shift
if [ $only = 1 ]; then reqs=("$@"); else reqs=("$here/requirements-readers.txt" "$@"); fi

ok_python() { # a Python >= 3.12 with venv
  "$1" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 12) else 1)' 2>/dev/null
}
find_python() {
  local c
  for c in "${NZ_PYTHON312:-}" python3.13 python3.12 python3; do
    [ -n "$c" ] && command -v "$c" >/dev/null 2>&1 && ok_python "$(command -v "$c")" &&
      { command -v "$c"; return 0; }
  done
  if command -v pyenv >/dev/null 2>&1; then
    local root; root=$(pyenv root)
    for c in $(ls -d "$root"/versions/3.1[2-9]* 2>/dev/null | sort -rV); do
      ok_python "$c/bin/python3" && { echo "$c/bin/python3"; return 0; }
    done
  fi
  return 1
}

stamp_of() { cat "${reqs[@]}" | sha256sum | cut -d' ' -f1; }
venv=$dir/venv
if [ -x "$venv/bin/python" ] && [ "$(cat "$venv/.nz-stamp" 2>/dev/null)" = "$(stamp_of)" ]; then
  echo "$venv/bin/python"; exit 0
fi
py=$(find_python) || {
  echo "pyvenv.sh: no Python >= 3.12 found (tried \$NZ_PYTHON312, python3.13, python3.12, python3 on PATH" \
       "and pyenv's versions); zarr 3.4 and hdmf-zarr 0.14 need one: install one (e.g. pyenv install 3.12)" >&2
  exit 1
}
rm -rf "$venv"
mkdir -p "$dir"
echo "pyvenv.sh: making $venv from $py ($("$py" --version 2>&1))" >&2
"$py" -m venv "$venv"
args=()
for r in "${reqs[@]}"; do args+=(-r "$r"); done
"$venv/bin/python" -m pip install -q --disable-pip-version-check "${args[@]}" >&2
stamp_of > "$venv/.nz-stamp"
echo "$venv/bin/python"
