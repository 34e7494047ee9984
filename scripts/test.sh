#!/usr/bin/env bash
# The README's test command: install, build (warnings are errors), run every
# test; then the sanitizer builds: ASan+UBSan over the whole suite and TSan
# over the parallel tests. Set NZ_QUICK=1 to skip the sanitizer builds,
# NZ_ZSTD13=1 to add a build with Debian 13's libzstd (docs/DEVELOPING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
jobs=$(nproc)
# The pinned real readers (zarr-python 3.4, TensorStore, pynwb 4.2 + hdmf-zarr
# 0.14) in a venv inside the build tree; fails clearly without Python >= 3.12.
echo "== readers venv (scripts/requirements-readers.txt)"
py3=$(bash scripts/pyvenv.sh build)
# hdmf-zarr 0.13 + zarr 2 (its own venv: zarr 2 and 3 cannot share one): the
# ground truth for reading hdmf-zarr <= 0.13 files and for `nwbzarr upgrade`.
echo "== hdmf-zarr 0.13 venv (scripts/requirements-hdmf013.txt)"
py013=$(bash scripts/pyvenv.sh --only build/hdmf013 scripts/requirements-hdmf013.txt)

build() { # build DIR [cmake args...]
  local dir=$1; shift
  # NZ_PYEXT=ON: the Python package's extension and tests (docs/python.md)
  # are built, or the build fails, rather than skipped quietly.
  cmake -S . -B "$dir" -DNZ_WERROR=ON -DNZ_PY3="$py3" -DNZ_PY013="$py013" -DNZ_PYEXT=ON "$@" >/dev/null
  cmake --build "$dir" -j "$jobs" >/dev/null
}

echo "== release build + all tests"
build build
(cd build && ctest --output-on-failure -j "$jobs")

# The MPI driver (docs/mpi.md): only the CLI differs, so build just it.
if command -v mpirun >/dev/null; then
  echo "== MPI build (-DNZ_MPI=ON) + mpirun tests"
  cmake -S . -B build-mpi -DNZ_WERROR=ON -DNZ_MPI=ON >/dev/null
  cmake --build build-mpi -j "$jobs" --target nwbzarr-cli >/dev/null
  (cd build-mpi && ctest --output-on-failure -L mpi)
fi

# Opt-in (NZ_ZSTD13=1): Debian 13's libzstd 1.5.7 on Debian 12
# (scripts/zstd-debian13.sh, docs/DEVELOPING.md). Not by default: it needs
# deb.debian.org, and a mirror hiccup must not turn CI red.
if [ "${NZ_ZSTD13:-0}" = 1 ]; then
  echo "== build with Debian 13's libzstd (-DNZ_ZSTD_ROOT) + codec, cli and zstd-root tests"
  root=$(bash scripts/zstd-debian13.sh build/zstd-debian13)
  if [ -n "$root" ]; then
    build build-zstd13 -DNZ_ZSTD_ROOT="$root"
    (cd build-zstd13 && ctest --output-on-failure -j "$jobs" -R 'zstd_root|codec|cli|bench_v3')
  fi
fi

if [ "${NZ_QUICK:-0}" != 1 ]; then
  echo "== ASan + UBSan build + all tests"
  build build-asan -DCMAKE_BUILD_TYPE=Debug -DNZ_SANITIZE="address;undefined"
  (cd build-asan && ASAN_OPTIONS=detect_leaks=1 ctest --output-on-failure -j "$jobs" -LE slow)
  echo "== TSan build + parallel tests"
  build build-tsan -DCMAKE_BUILD_TYPE=Debug -DNZ_SANITIZE=thread
  (cd build-tsan && TSAN_OPTIONS=halt_on_error=1 ctest --output-on-failure -j "$jobs" -L parallel)
fi
