/* Internal: the Zarr side of verify: an NWB Zarr store (hdmf-zarr's
 * conventions) as a neutral model, and its values in normalised form. */
#ifndef NZ_EXPORT_ZREAD_H
#define NZ_EXPORT_ZREAD_H

#include "export/model.h"
#include "nwbzarr/store.h"
#include "nwbzarr/zarr.h"

/** Every group, array, attribute and link of `store` (sorted), in either
 *  layout: v2 (hdmf-zarr <= 0.13, ours) or v3 (hdmf-zarr 0.14, zwalk3.c).
 *  With `h` (nz_hierarchy_open of `store`) the nodes, attributes and arrays
 *  come from the consolidated metadata when there is some, as readers see
 *  them, without listing the store or reading each document; with `h`
 *  NULL from the documents themselves (verify, when nz_metadata_check
 *  found the copy disagreeing with them, so that it names each
 *  difference). v2 scalars
 *  (zarr_dtype "scalar", shape [1]) get ndim 0; "zarr_dtype" and
 *  "zarr_link" are not kept as attributes; the root's ".specloc" name
 *  becomes the reference HDF5 holds. */
int nz__z_walk(nz__xmodel *out, nz_hierarchy *h, nz_store *store);

/** nz_hierarchy_array_open, or nz_array_open of `store` when `h` is NULL. */
int nz__z_array_open(nz_array **out, nz_hierarchy *h, nz_store *store, const char *path);

/** Read [start, start+count) of array `a` (described by `n`) in normalised
 *  form into `out` (len bytes). Object arrays ('|O') are read whole only
 *  (start 0, count = shape). Thread-safe for a shared `a`. */
int nz__z_read(nz_array *a, const nz__xnode *n, const uint64_t *start, const uint64_t *count,
	       void *out, size_t len);

#endif
