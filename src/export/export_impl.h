/* Internal: what export.c, zwalk.c and verify.c share. */
#ifndef NZ_EXPORT_IMPL_H
#define NZ_EXPORT_IMPL_H

#include "export/h5.h"
#include "export/model.h"
#include "hdmf/hdmf.h"
#include "nwbzarr/export.h"

/** nz__xjson_ctx.oid over a model (ctx = the nz__xmodel): the object_id
 *  attribute of the node at `path`, or NULL. */
char *nz__x_model_oid(void *ctx, const char *path);
/** hdmf-zarr's zarr_dtype of a compound: [{name, dtype}] (new reference;
 *  NULL when out of memory). */
json_t *nz__x_compound_zarr_dtype(const nz__xtype *t);

/** Zarr v3: the compound dataset `n` (one holding references or text) of
 *  `nelem` elements read whole from `ds` and written as hdmf-zarr 0.14's
 *  struct (struct3.c) with `attrs` (v2 form, converted) and
 *  _REFERENCE_FIELDS; *bytes grows by its normalised size. */
int nz__x_write_struct3(nz__hdmf *h, nz__h5ds *ds, const nz__xmodel *m, const nz__xnode *n,
			uint64_t nelem, const json_t *attrs, const uint64_t *chunks, uint64_t *bytes);
/** The struct of nz__x_write_struct3 from `nelem` normalised elements at
 *  `buf` (borrowed; references already canonical), whatever they came from
 *  (export's HDF5, upgrade's Zarr v2). */
int nz__x_put_struct3(nz__hdmf *h, const nz__xnode *n, uint64_t nelem, const unsigned char *buf,
		      const json_t *attrs, const uint64_t *chunks);

/* ---- writing a model through src/hdmf (xlayout.c): export and upgrade ---- */

/** 1 if `path` is `prefix` or below it (prefix NULL or "": 0). */
int nz__x_under(const char *path, const char *prefix);
/** Where the model's root keeps its cached schema (the path its `.specloc`
 *  reference names, borrowed from the model), or NULL when it has none. */
const char *nz__x_specloc(const nz__xmodel *m);
/** The link source of external link `n` (nz__malloc'd into *out). */
typedef int (*nz__x_link_source_fn)(char **out, void *ctx, const nz__xnode *n);
/** Every link of `m` as an entry {name, path, source} of its group's
 *  zarr_link list in `links` (group path -> list; v2 form, which hdmf
 *  turns into _LINKS on v3); source "." inside the file, ext()'s for an
 *  external link. *count grows by the links. */
int nz__x_collect_links(json_t *links, uint64_t *count, const nz__xmodel *m, nz__x_link_source_fn ext,
			void *ctx);
/** Group `n` with its attributes and zarr_link list (from `links`). The
 *  root (root_attrs not NULL) is not written: its attributes go into
 *  root_attrs, less ".specloc", which the cached specs set later. */
int nz__x_write_group(nz__hdmf *h, const nz__xnode *n, const json_t *links, json_t *root_attrs);
/** The v3 shards of dataset `n` with `chunks` (NULL *out = unsharded):
 *  `user` (2-D datasets; a multiple of the chunks, else NZ_EINVAL naming
 *  the dataset), else datasets over 64 MiB in shards of all of each other
 *  dimension x about 256 MiB of whole chunks along the first. */
int nz__x_choose_shards(const nz__xnode *n, const uint64_t *chunks, uint64_t itemsize, const uint64_t *user,
			uint64_t *shards, const uint64_t **out);

/** nz__verify_files flags. */
#define NZ__VERIFY_NWB 1        /* both files are NWB; without it (a file an external
				   link leads into) only their links must lead somewhere */
#define NZ__VERIFY_UNFINISHED 2 /* `b` may carry the incomplete marker: the writer's own
				   check before it marks the store complete (upgrade) */
/** nz_verify with `flags`. */
int nz__verify_files(uint64_t *ndiff, const char *a, const char *b, const nz_verify_opts *opts, int flags);

/** The stores an export writes (extlink.c): v[0] the source file and the
 *  output; then each HDF5 file that an external link leads into (from the
 *  source or from another linked file), by real path, and its export beside
 *  the output ("<folder of dst>/<file name>.zarr"). */
typedef struct nz__xlinks {
	struct nz__xlinked {
		char *real; /**< real path of the HDF5 file */
		char *dst;  /**< its Zarr store */
		int keep;   /**< 1 = dst is a complete, verified export of it: kept */
	} *v;
	size_t n, cap;
} nz__xlinks;

/** Plan the export of `src` (walked: `m`) into `dst`: every linked file
 *  opened, walked and its links checked; two linked files of one name, a
 *  link into a file that cannot be opened, or (without overwrite or
 *  resume) a linked store that exists already and is not a complete export
 *  equal to its file (nz_verify) are errors naming them. Nothing is
 *  written. */
int nz__xlinks_plan(nz__xlinks *l, const char *src, const char *dst, const nz__xmodel *m,
		    const nz_export_opts *o);
/** The link source (relative to the linking store) for external link `n`
 *  of plan entry `from`: "." into itself, else "../<store name>". */
int nz__xlinks_source(char **out, const nz__xlinks *l, size_t from, const nz__xnode *n);
void nz__xlinks_clear(nz__xlinks *l);
/** The real path (PATH_MAX bytes) of the file external link `n` of file
 *  `from` leads into: absolute as written, else relative to `from`'s folder
 *  (as libhdf5 looks first). NZ_EFORMAT naming both files when it cannot
 *  be opened or is not a regular file. */
int nz__xlinks_resolve(char *real, const char *from, const nz__xnode *n);

/** export --copy-links (inline.c): replace every external link of `m`
 *  (walked from `file`, sorted) by a copy of the group or dataset it leads
 *  to (through any chain of links, into any file), with its attributes and
 *  object ids, at the link's path; so are the links inside the copies. An
 *  object is copied once: a later link to it, or to an object of the
 *  source, becomes a soft link. The linked files are walked, nothing is
 *  written. m->files and m->grafts record where each copy came from (for
 *  references, nz__xvalues_canon); its datasets open in `file` by their
 *  model path, libhdf5 following the links. NZ_EFORMAT naming both files
 *  for a linked file that cannot be opened, a target that does not exist,
 *  a reference to an object no copy holds, or a circle of links. */
int nz__xmodel_inline(nz__xmodel *m, const char *file);

#endif
