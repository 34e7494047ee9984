/* Internal: hdmf-zarr's storage conventions on top of the Zarr core.
 *
 * hdmf-zarr 0.6 (what pynwb's NWBZarrIO reads) stores a typed HDMF object as
 * a Zarr group or array whose .zattrs carry
 *   "neurodata_type" / "namespace" / "object_id" (a UUID4),
 * every dataset also carries "zarr_dtype" (its HDMF dtype spelling), HDF5
 * scalars become shape [1] arrays tagged "zarr_dtype": "scalar", links are
 * entries of the parent group's "zarr_link" list, and object references are
 * dicts {source, path, object_id, source_object_id}: inside an attribute as
 * {"zarr_dtype": "object", "value": ref}, inside a dataset as elements of a
 * '|O' array. We store reference datasets with numcodecs' json2 codec (not
 * pickle) so non-Python readers can decode them; hdmf-zarr reads both.
 * docs/format.md ("HDMF/NWB mapping") gives the full table.
 *
 * Zarr v3: when the store's hierarchy is v3 (decided at nz__hdmf_init, see
 * zarr_format), every writer here writes hdmf-zarr 0.14's layout instead:
 * links as "_LINKS" [{source, path, name}] (first among the group's
 * attributes), attribute references as {"_REFERENCE": {source, path}},
 * every dataset carries "_DTYPE" (numpy's type name, "str" for text,
 * "object_reference" for references, none for compounds) and, when
 * d->dims is given, "_ARRAY_DIMENSIONS"; text (vlen-utf8 and vlen-bytes
 * alike) is a v3 "string" array with fill ""; reference datasets are
 * "string" arrays of the targets' absolute paths; "scalar" datasets are
 * 0-d arrays; the cached schema documents are 0-d strings. Chunk keys use
 * "/" unless that would put a key more than 7 path components below the
 * store root (DANDI's limit, dandi-cli #1919), then ".". Small datasets
 * use zstd level 0 (hdmf-zarr 0.14's default) unless a compressor is
 * given. Callers keep passing attributes in the v2 form above (zarr_link
 * lists from nz__hdmf_add_link, {"value": ref, "zarr_dtype": "object"}
 * from nz__hdmf_set_ref_attr or built by hand, zarr_dtype keys); the
 * layer converts them on write, so they need no knowledge of the format.
 * v2 output is unchanged by all this.
 *
 * This layer knows HDMF (typed objects, tables, references, the cached
 * schema) but nothing of NWB; src/nwb and src/export build on it.
 *
 * Contract shared by every function here:
 *  - 0 or a negative nz_error_code with a message naming the path;
 *  - paths are store paths without a leading '/' ("" = root, "general/x");
 *    reference/link *targets* are absolute HDMF paths ("/general/x");
 *  - json_t arguments are borrowed (the caller keeps its reference);
 *  - an nz__hdmf is used by one thread at a time (object ids are drawn from
 *    its generator in call order, which is what makes a seeded file
 *    reproducible); the store it wraps may be shared with the engine.
 */
#ifndef NZ_HDMF_HDMF_H
#define NZ_HDMF_HDMF_H

#include <jansson.h>
#include <stdint.h>

#include "nwbzarr/nwb.h"
#include "nwbzarr/store.h"
#include "nwbzarr/zarr.h"
#include "util/h5lock.h"

/** DANDI's deepest chunk key: path components below the store root. */
#define NZ__HDMF_MAX_KEY_DEPTH 7
/** The v3 chunk key separator of an array at store path `path` of rank
 *  `ndim`: '/' unless "path/c/i/j" would be deeper than
 *  NZ__HDMF_MAX_KEY_DEPTH, then '.' (for writers that create arrays
 *  themselves, e.g. export's compounds). */
char nz__hdmf_key_separator(const char *path, int ndim);

/** Length of a textual UUID including its NUL. */
#define NZ_HDMF_OID_LEN 37

/** Writer context: the store, the object-id generator and the defaults for
 *  small datasets. Fields are read-only for callers after nz__hdmf_init. */
typedef struct nz__hdmf {
	nz_store *store;          /**< borrowed; outlives the context */
	nz_compressor compressor; /**< for small datasets (hdmf's default Blosc lz4) */
	uint64_t rng;             /**< seeded generator state (seeded != 0) */
	int seeded;               /**< 0: ids from getrandom(), else from rng */
	char root_oid[NZ_HDMF_OID_LEN]; /**< object_id of "/" (source_object_id of refs) */
	int zarr_format;          /**< 2: hdmf-zarr 0.6's layout; 3: hdmf-zarr 0.14's */
} nz__hdmf;

/** Prepare a context on `store`. seed 0 = random object ids (getrandom);
 *  any other seed makes the sequence of ids a pure function of the seed (for
 *  reproducible files and tests). compressor NULL = NZ_COMPRESSOR_INIT. The
 *  root object id is drawn first. Nothing is written. */
int nz__hdmf_init(nz__hdmf *h, nz_store *store, uint64_t seed, const nz_compressor *compressor);

/** nz__hdmf_init in an explicit format: zarr_format 0 = the store's
 *  hierarchy (nz_store_zarr_format: v3 if its root is, else v2, which is
 *  what nz__hdmf_init does); 2 = v2; 3 = v3, creating the v3 root group
 *  now when there is none (nz_root_create; a v2 root is NZ_EINVAL).
 *  compressor NULL = NZ_COMPRESSOR_INIT for v2, zstd level 0 for v3. */
int nz__hdmf_init_format(nz__hdmf *h, nz_store *store, uint64_t seed, const nz_compressor *compressor,
			 int zarr_format);

/** Draw the next UUID4 ("xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx"). */
int nz__hdmf_uuid4(nz__hdmf *h, char out[NZ_HDMF_OID_LEN]);

/** numpy's name of a dtype string as hdmf writes it into zarr_dtype for
 *  data built from numpy arrays ("<f4" -> "float32", "|b1" -> "bool_");
 *  NULL for dtypes without one (structured, big-endian, '|O'). */
const char *nz__hdmf_dtype_name(const char *dtype);

/* ---- attributes ------------------------------------------------------ */

/** Serialise `attrs` (a JSON object) as the .zattrs of `path`. */
int nz__hdmf_attrs_write(nz__hdmf *h, const char *path, const json_t *attrs);

/** Add the typing attributes namespace/neurodata_type/object_id to `attrs`.
 *  oid NULL = draw a new id; oid_out (may be NULL) receives the id used. */
int nz__hdmf_set_type(json_t *attrs, nz__hdmf *h, const char *ns, const char *type,
		      const char *oid, char *oid_out);

/** A new reference dict {object_id, path, source: ".", source_object_id}
 *  to the object at absolute path `target` (oid NULL -> JSON null, as
 *  hdmf-zarr writes for untyped targets). NULL when out of memory. */
json_t *nz__hdmf_ref(const nz__hdmf *h, const char *target, const char *oid);

/** Set attribute `name` of `attrs` to a reference attribute
 *  {"value": ref, "zarr_dtype": "object"}. */
int nz__hdmf_set_ref_attr(json_t *attrs, const nz__hdmf *h, const char *name,
			  const char *target, const char *oid);

/** Append a soft link {name, path: target, source: "."} to the "zarr_link"
 *  list of the group attributes `attrs` (created when missing). */
int nz__hdmf_add_link(json_t *attrs, const char *name, const char *target);

/* ---- groups ---------------------------------------------------------- */

/** Create group `path` (parents too) and, when attrs is not NULL, write
 *  them as its .zattrs. */
int nz__hdmf_group(nz__hdmf *h, const char *path, const json_t *attrs);

/* ---- datasets -------------------------------------------------------- */

/** Description of a dataset. Zero-initialise, then set what applies. */
typedef struct nz__hdmf_dset {
	const char *dtype;          /**< numpy dtype for .zarray: "<i2", "<f8", "|b1", "|O" */
	const char *zarr_dtype;     /**< the zarr_dtype attribute: "int64", "<i2", "float",
				       "str", "bytes", "object", "scalar", ... */
	nz_object_codec object_codec; /**< for "|O" */
	int ndim;                   /**< 1..NZ_MAX_DIMS */
	const uint64_t *shape;
	const uint64_t *chunks;     /**< NULL = one chunk (shape, 0 -> 1), hdmf's choice
				       for data written from memory */
	const nz_compressor *compressor; /**< NULL = the context's; id "none" = null */
	const char *ns, *type;      /**< neurodata type; NULL = untyped */
	const char *oid;            /**< object id to use (typed only); NULL = draw */
	char *oid_out;              /**< receives the id (NZ_HDMF_OID_LEN), may be NULL */
	const json_t *attrs;        /**< extra attributes, may be NULL */
	/** v3 only: ndim dimension labels for _ARRAY_DIMENSIONS (hdmf's from
	 *  the spec's dims, e.g. "num_times"); NULL = none. Ignored in v2. */
	const char *const *dims;
	/** v3 only: ndim shard sizes (multiples of chunks); NULL = unsharded. */
	const uint64_t *shards;
	/** numcodecs filter configs before the compressor (nz_array_opts'
	 *  filters_json); NULL = none. */
	const char *filters_json;
} nz__hdmf_dset;

/** Create the array at `path` with its .zarray and .zattrs (zarr_dtype,
 *  typing and extra attributes). Fill values follow hdmf-zarr: 0 for object
 *  and integer arrays, 0.0 for floats, false for bool. *out is the open
 *  array for writing data (free with nz_array_free); out may be NULL when
 *  the caller only wants the metadata (an empty or fill-valued array). */
int nz__hdmf_dset_create(nz_array **out, nz__hdmf *h, const char *path, const nz__hdmf_dset *d);

/** Write a dense fixed-size dataset in one go (small data from memory). */
int nz__hdmf_dset_write(nz__hdmf *h, const char *path, const nz__hdmf_dset *d, const void *data,
			size_t len);

/* v3 (see the top of this file): dset_create writes d->dtype's v3 data
 * type, a "scalar" zarr_dtype (shape [1]) becomes a 0-d array, a json2
 * array becomes a "string" array of paths (_DTYPE "object_reference") that
 * the caller fills with the targets' absolute paths, vlen-bytes becomes
 * vlen-utf8 text. */

/** Write a 1-D text dataset of `n` strings ('|O'; codec vlen-utf8 or
 *  vlen-bytes). zarr_dtype defaults to "str" (utf8) / "bytes". */
int nz__hdmf_text_list(nz__hdmf *h, const char *path, const char *const *items, size_t n,
		       nz_object_codec codec, const nz__hdmf_dset *d);

/** A scalar string: shape [1], zarr_dtype "scalar", vlen-utf8 (text) or
 *  vlen-bytes (ISO-8601 datetimes, as hdmf-zarr writes them). */
int nz__hdmf_scalar_text(nz__hdmf *h, const char *path, const char *text, nz_object_codec codec,
			 const json_t *attrs);

/** A scalar float64 (shape [1], "<f8", zarr_dtype "scalar"). */
int nz__hdmf_scalar_f64(nz__hdmf *h, const char *path, double v, const json_t *attrs);

/** A 1-D dataset of `n` object references (json2 codec). refs[i] are
 *  reference dicts (nz__hdmf_ref). zarr_dtype "object". */
int nz__hdmf_ref_list(nz__hdmf *h, const char *path, json_t *const *refs, size_t n,
		      const nz__hdmf_dset *d);

/* ---- DynamicTable ---------------------------------------------------- */

/** A DynamicTable being written: columns are written as they are added and
 *  colnames/id when it is finished. Rows must agree across columns. */
typedef struct nz__hdmf_table nz__hdmf_table;

/** Start the table group `path` (absolute-free store path), typed
 *  ns:type (e.g. "hdmf-common", "DynamicTable"), with `description`. oid
 *  NULL = draw one; the id is readable with nz__hdmf_table_oid. */
int nz__hdmf_table_begin(nz__hdmf_table **out, nz__hdmf *h, const char *path, const char *ns,
			 const char *type, const char *description, const char *oid, uint64_t nrows);

const char *nz__hdmf_table_oid(const nz__hdmf_table *t);

/** A 1-D VectorData column of nrows fixed-size elements of `dtype` ("<f8",
 *  "|b1", ...) from `data` (len bytes). zarr_dtype e.g. "float". */
int nz__hdmf_table_col(nz__hdmf_table *t, const char *name, const char *description,
		       const char *dtype, const char *zarr_dtype, const void *data, size_t len);

/** A VectorData column of text (vlen-utf8, zarr_dtype "str"). */
int nz__hdmf_table_col_text(nz__hdmf_table *t, const char *name, const char *description,
			    const char *const *items);

/** A VectorData column of object references (json2, zarr_dtype "object"). */
int nz__hdmf_table_col_refs(nz__hdmf_table *t, const char *name, const char *description,
			    json_t *const *refs);

/** A ragged column: VectorData `name` with `ndata` float64 values and its
 *  VectorIndex `name`_index (nrows end offsets, "<u8"/"uint64"; ends[i]
 *  ends row i) whose `target` attribute references the data. Offsets that
 *  decrease or pass ndata are NZ_EINVAL. */
int nz__hdmf_table_col_ragged_f64(nz__hdmf_table *t, const char *name, const char *description,
				  const double *data, size_t ndata, const uint64_t *ends);

/** A DynamicTableRegion column: nrows int64 row numbers into the table at
 *  absolute path `table_path` with object id `table_oid`. */
int nz__hdmf_table_col_region(nz__hdmf_table *t, const char *name, const char *description,
			      const int64_t *rows, const char *table_path, const char *table_oid);

/** Write id (ElementIdentifiers, "<i8"; ids NULL = 0..nrows-1) and the
 *  table's attributes (colnames in the order columns were added), then free
 *  the table. Frees it on failure too. */
int nz__hdmf_table_end(nz__hdmf_table *t, const int64_t *ids);

/** Free an unfinished table (nothing more is written). NULL ok. */
void nz__hdmf_table_free(nz__hdmf_table *t);

/** A standalone DynamicTableRegion dataset at `path` (e.g. an
 *  ElectricalSeries' electrodes): n int64 rows, typed hdmf-common. */
int nz__hdmf_region(nz__hdmf *h, const char *path, const char *description, const int64_t *rows,
		    size_t n, const char *table_path, const char *table_oid);

/** nz__hdmf_region with the v3 dimension label `dim` (hdmf's "num_rows"
 *  standalone, "dim0" as a table's column). */
int nz__hdmf_region_dim(nz__hdmf *h, const char *path, const char *description, const int64_t *rows,
			size_t n, const char *table_path, const char *table_oid, const char *dim);

/* ---- cached schema --------------------------------------------------- */

/** Copy the cached schema (/specifications/<namespace>/<version>/<doc>) of
 *  an existing NWB file, HDF5 (.nwb) or Zarr (a directory), into
 *  specifications/ of this store as json2 '|O' scalars (uncompressed, as
 *  hdmf-zarr writes them), and set the root's ".specloc" in `root_attrs`.
 *  A file without /specifications is NZ_ENOTFOUND naming it. Reading an
 *  HDF5 file takes the HDF5 lock (util/h5lock.h) itself: call it without. */
int nz__hdmf_copy_specs(nz__hdmf *h, const char *from_path, json_t *root_attrs) NZ__H5_FREE;

/** One document of a cached schema: rel "<namespace>/<version>/<doc>". */
typedef struct nz__hdmf_spec_doc {
	const char *rel, *text;
} nz__hdmf_spec_doc;

/** The default cached schema (src/hdmf/schema/README.md: NWB core
 *  NZ_NWB_SCHEMA_VERSION, hdmf-common, hdmf-experimental as pynwb 4.2
 *  caches them), generated at build time. */
extern const nz__hdmf_spec_doc nz__hdmf_default_specs[];
extern const size_t nz__hdmf_n_default_specs;

/** The core version of nz__hdmf_default_specs: the nwb_version of files
 *  that carry it. */
#define NZ_NWB_SCHEMA_VERSION "2.11.0"

/** Write nz__hdmf_default_specs into specifications/ (in the store's
 *  format, as nz__hdmf_copy_specs does) and set ".specloc" in root_attrs. */
int nz__hdmf_write_default_specs(nz__hdmf *h, json_t *root_attrs);

/** 1 if `ns` is one of the namespaces nz__hdmf_default_specs holds. */
int nz__hdmf_is_default_namespace(const char *ns);

/** nz__hdmf_copy_specs, leaving out the namespaces of the default schema
 *  when skip_default (only extensions are added to it). */
int nz__hdmf_copy_specs_ext(nz__hdmf *h, const char *from_path, json_t *root_attrs,
			    int skip_default) NZ__H5_FREE;

/* ---- the incomplete marker (marker.c; docs/reliability.md) ----------- */

/** Put the marker NZ_INCOMPLETE_MARKER at the root: `request` (a JSON
 *  object, borrowed) plus "tool" and "version". Written before anything
 *  else of a new store. */
int nz__hdmf_marker_write(nz_store *store, const json_t *request);

/** 1 if the store's metadata is consolidated (v2: .zmetadata exists; v3:
 *  the root zarr.json holds consolidated_metadata), 0 if not, negative on
 *  a store error or a root zarr.json that does not parse. */
int nz__hdmf_consolidated(nz_store *store);

/** Read the marker; NZ_ENOTFOUND when there is none, NZ_EFORMAT when it is
 *  not a JSON object. *out is a new reference. */
int nz__hdmf_marker_read(json_t **out, nz_store *store);

/** The last step of a write, after .zmetadata: sync the store, then remove
 *  the marker (durably with an NZ_STORE_FSYNC store). */
int nz__hdmf_marker_finish(nz_store *store);

/* ---- resuming an interrupted write (resume.c) -------------------------- */

/** Wrap `inner` in a store whose put of a metadata document (.zgroup,
 *  .zarray, .zattrs) that already exists succeeds without writing when the
 *  bytes are equal and fails with NZ_EMISMATCH naming the key when they
 *  differ; everything else passes through. On success the wrapper owns
 *  `inner`. */
int nz__hdmf_resume_store(nz_store **out, nz_store *inner);

/** Reopen `path` (flags | NZ_STORE_WRITE) to resume a write. When there is
 *  nothing to resume (no `path`, or a directory holding only temporary
 *  files, which are removed and counted in *temps) returns 0 with *out
 *  NULL: the caller starts afresh. Otherwise the
 *  store must carry the incomplete marker (a complete one is NZ_EEXISTS,
 *  one without marker NZ_EINCOMPLETE); its temporary files are removed
 *  (*temps counts them) and *out is the comparing store of
 *  nz__hdmf_resume_store, *marker the marker's JSON (a new reference). */
int nz__hdmf_resume_open(nz_store **out, json_t **marker, uint64_t *temps, const char *path,
			 unsigned int flags);

/** Remove the temporary files (".<name>.nztmp.<pid>.<n>") a killed writer
 *  left below the directory `path` (nz_store_remove_temps of its directory
 *  store); *removed counts them. */
int nz__hdmf_remove_temps(const char *path, uint64_t *removed);

/** 1 if `path` is a directory holding nothing but temporary files (a writer
 *  killed before its incomplete marker left it: writing afresh there is
 *  resuming), 0 otherwise (including when it does not exist). The store
 *  layer's nz__store_dir_is_fresh, which the replace routine uses too. */
int nz__hdmf_dir_is_fresh(const char *path);

/** Write `src` into `a` (on `store`) through the engine like
 *  nz_write_array, keeping every chunk already stored that decodes to
 *  exactly the data it must hold (a chunk the source hands over as stored
 *  bytes: that holds exactly those bytes); chunks missing or corrupt are
 *  written.
 *  The counts are added to *acc (temp_removed untouched). */
int nz__hdmf_write_resumed(nz_array *a, nz_store *store, nz_source *src,
			   const nz_write_opts *wo, nz_nwb_resume_info *acc);

/** nz__hdmf_write_resumed for n arrays in one write (nz_write_arrays). */
int nz__hdmf_write_resumed_n(nz_array *const *a, nz_source *const *src, size_t n,
			     nz_store *store, const nz_write_opts *wo, nz_nwb_resume_info *acc);

#endif
