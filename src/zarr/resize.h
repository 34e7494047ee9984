/* Internal: growable arrays (issue 14). An nz_array's metadata is
 * immutable, so an array grows by handles: nz__array_reshaped makes a
 * handle of another shape without touching the store (for writing the
 * chunks of a region that is not published yet), and nz__array_resize
 * publishes a shape by rewriting the array's one metadata document
 * (.zarray, or zarr.json with its attributes kept) in one atomic put. A
 * reader therefore sees the old shape or the new one, never a mix; callers
 * store the chunks a new shape exposes before they publish it.
 *
 * Thread safety: both only read `a`, so they may run beside chunk writes
 * through `a` on other threads; two resizes of one array must not race. */
#ifndef NZ_ZARR_RESIZE_H
#define NZ_ZARR_RESIZE_H

#include "nwbzarr/zarr.h"

/** A new handle on `a`'s array (same store, path, codecs, skip_empty) whose
 *  shape is `shape` (ndim entries). Nothing is written. NZ_EINVAL for a
 *  shape no metadata document could hold (the array's own checks), NZ_ENOMEM.
 *  The caller frees *out. */
int nz__array_reshaped(nz_array **out, const nz_array *a, const uint64_t *shape);

/** Publish `shape` for `a`'s array: its metadata document rewritten in one
 *  atomic put (v3: the attributes in the stored zarr.json are kept). `out`
 *  may be NULL; else it receives the handle of the new shape. Consolidated
 *  metadata is not touched: the caller reconsolidates when it has one. */
int nz__array_resize(nz_array **out, const nz_array *a, const uint64_t *shape);

#endif
