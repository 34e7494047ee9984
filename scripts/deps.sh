#!/usr/bin/env bash
# Install everything nwbzarr needs to build, test and benchmark on Debian 12 or 13
# (package names without versions, e.g. the clang runtime through libclang-rt-dev).
# Idempotent; skips apt when every package is already installed.
set -euo pipefail
pkgs=(build-essential cmake pkg-config clang libclang-rt-dev
      libblosc-dev libzstd-dev liblz4-dev zlib1g-dev libdeflate-dev libisal-dev libjansson-dev libhdf5-dev
      python3 python3-dev python3-venv python3-numpy python3-zarr python3-numcodecs python3-h5py python3-matplotlib
      openmpi-bin libopenmpi-dev time strace groff-base bc)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  sudo_cmd=""
  [ "$(id -u)" -eq 0 ] || sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
