/* Fuzz target: Zarr v3 zarr.json and the codec chain it configures; the
 * properties are fuzz_zarr_meta.c's (see there), in a v3 hierarchy. */
#define FUZZ_ZARR3 1
#include "fuzz_zarr_meta.c"
