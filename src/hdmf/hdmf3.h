/* Internal to src/hdmf: the Zarr v3 (hdmf-zarr 0.14) form of attributes and
 * dataset descriptions that callers give in the v2 form (layout3.c). */
#ifndef NZ_HDMF_HDMF3_H
#define NZ_HDMF_HDMF3_H

#include "hdmf/hdmf.h"

/** *out = a new object holding `attrs` in hdmf-zarr 0.14's form: a
 *  "zarr_link" list becomes "_LINKS" (first, entries {source, path, name}),
 *  each {"value": ref, "zarr_dtype": "object"} becomes
 *  {"_REFERENCE": {source, path}}, a top-level "zarr_dtype" is dropped, the
 *  rest is kept in order. NZ_EINVAL naming `path` for a link or reference
 *  without text source/path. */
int nz__hdmf3_attrs(json_t **out, const json_t *attrs, const char *path);

/** The _DTYPE hdmf-zarr 0.14 gives a dataset described by `d`:
 *  "object_reference" for references (json2 or zarr_dtype "object"), "str"
 *  for text, numpy's type name for fixed-size numbers ("int16", "bool"),
 *  NULL for compounds, else d->zarr_dtype. */
const char *nz__hdmf3_dtype(const nz__hdmf_dset *d);

/** *out = the v3 attributes of dataset `d` of rank `ndim`: _DTYPE, then
 *  d->attrs (converted), then the typing attributes (drawing an object id as
 *  the v2 path does), then _ARRAY_DIMENSIONS from d->dims. */
int nz__hdmf3_dset_attrs(json_t **out, nz__hdmf *h, const char *path, const nz__hdmf_dset *d, int ndim);

#endif
