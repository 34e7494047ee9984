#!/usr/bin/env bash
# Rebuild reference_json.nwb.zarr with the C API (schema copied from the
# reference Zarr store, and again from the HDF5 .nwb) and compare layouts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
ref="$NZ_REF/zarr/reference_json.nwb.zarr"
out="$NZ_TMP/nwb_reference.nwb.zarr"
"$NZ_BIN/nwb_make_reference" "$out" 2
"$NZ_PYTHON" "$here/compare_layout.py" "$out" "$ref"
"$NZ_BIN/nwb_make_reference" "$out" 1 "$NZ_REF/nwb/reference.nwb"
"$NZ_PYTHON" "$here/compare_layout.py" "$out" "$ref"
