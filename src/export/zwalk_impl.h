/* Internal to src/export: the pieces of the Zarr walk (zwalk.c) that the
 * v2 and v3 layouts share (zwalk3.c reads hdmf-zarr 0.14's v3 layout). */
#ifndef NZ_EXPORT_ZWALK_IMPL_H
#define NZ_EXPORT_ZWALK_IMPL_H

#include "export/zread.h"

/** The model type of an open array: its numpy dtype, or for '|O' arrays
 *  its object codec and hdmf-zarr's v2 zarr_dtype `zd` (may be NULL).
 *  Structured dtypes may hold '|Sn' and '<Un' text fields (STRING). */
int nz__z_array_type(nz__xtype *t, nz_array *a, const json_t *zd, const char *path);
/** hdmf-zarr's root ".specloc" (a plain name) as the reference HDF5 holds. */
int nz__z_fix_specloc(json_t *attrs);
/** hdmf-zarr's link list of a group (v2 zarr_link, v3 _LINKS: {name,
 *  source, path}) as model links; source "." is a link inside the file. */
int nz__z_add_links(nz__xmodel *m, const char *group, const json_t *list);
/** Sort the model; NZ_EFORMAT when two objects share a path. */
int nz__z_unique_paths(nz__xmodel *m);
/** The v3 walk behind nz__z_walk. */
int nz__z_walk3(nz__xmodel *out, nz_hierarchy *h, nz_store *store);

#endif
