/* Internal: the parts of the Zarr v2/v3 layer shared between its files, and
 * what the engine may use beyond the public header (the dtype of an array,
 * its fill bytes). An nz_array is immutable after create/open, so everything
 * here that only reads it is thread-safe. */
#ifndef NZ_ZARR_IMPL_H
#define NZ_ZARR_IMPL_H

#include <jansson.h>

#include "codec/codec.h"
#include "nwbzarr/zarr.h"
#include "util/buf.h"
#include "zarr/shard.h"

/** One field of a structured dtype (packed: offsets are running sums). */
typedef struct nz__dtype_field {
	char *name;
	char kind;       /**< 'b', 'i', 'u', 'f' or 'S' */
	size_t itemsize;
	size_t offset;
	int big_endian;
} nz__dtype_field;

/** A parsed numpy dtype as Zarr v2 spells it. */
typedef struct nz__dtype {
	char kind;          /**< 'b','i','u','f','S','O', or 'V' (structured) */
	size_t itemsize;    /**< bytes per element; 0 for 'O' */
	int big_endian;     /**< '>' (read as stored, no byte swapping) */
	size_t nfields;     /**< structured only */
	nz__dtype_field *fields;
	char *str;          /**< canonical string, or compact JSON of the list */
	json_t *json;       /**< what .zarray's "dtype" holds (string or list) */
} nz__dtype;

/** Parse a .zarray "dtype" value (string or structured list). `what` names
 *  the document for messages. NZ_EUNSUPPORTED for valid but unsupported
 *  numpy dtypes ('<U8', '<c8', nested/subarray fields), NZ_EFORMAT otherwise. */
int nz__dtype_parse(nz__dtype *out, const json_t *value, const char *what);
/** The same, also admitting numpy's '<U' (Zarr v3's fixed_length_utf32). */
int nz__dtype_parse_ex(nz__dtype *out, const json_t *value, int allow_utf32, const char *what);
void nz__dtype_clear(nz__dtype *dt);

/** Decode a .zarray fill_value for `dt` into `bytes` (dt->itemsize bytes;
 *  zeros for null) and make the canonical JSON zarr-python would write for
 *  it (*canon, new reference). Object dtypes: bytes unused; null, integers
 *  and strings are kept as given. */
int nz__fill_parse(unsigned char *bytes, json_t **canon, const nz__dtype *dt,
		   const json_t *value, const char *what);

/** One element of a simple kind (b, i, u, f, S) from a v2 fill_value. */
int nz__fill_simple(unsigned char *b, json_t **canon, char kind, size_t size, int big, const json_t *v,
		    const char *what);

/* Zarr v3 (dtype3.c, codecs3.c, meta3.c). */

/** A zarr.json "data_type" as a numpy dtype (+ object codec for string and
 *  variable_length_bytes); `big` is the bytes codec's endian. */
int nz__dtype3_parse(nz__dtype *dt, nz_object_codec *oc, const json_t *data_type, int big, const char *what);
/** zarr-python 3.4's "data_type" for dt (new reference in *out). */
int nz__dtype3_json(json_t **out, const nz__dtype *dt, nz_object_codec oc, const char *what);
/** Decode a v3 fill_value (or v2's spelling of it) into `bytes` and make
 *  the JSON zarr-python 3.4 writes for it (*canon, new reference). */
int nz__fill3_parse(unsigned char *bytes, json_t **canon, const nz__dtype *dt, nz_object_codec oc,
		    const json_t *value, const char *what);
/** 1 if the bytes codec in `codecs` says endian "big". */
int nz__codecs3_big_endian(const json_t *codecs);
/** Parse "codecs" into a->perm/transposed, a->filters + a->typesize and
 *  the canonical list a->codecs3 (needs a->dtype, a->ocodec, a->ndim). */
int nz__codecs3_parse(nz_array *a, const json_t *codecs, const char *what);
/** The "codecs" list for new-array options. */
int nz__codecs3_from_opts(json_t **out, const nz_array_opts *o, const nz__dtype *dt, nz_object_codec oc,
			  const char *path);
/** dst[j] = src[...] where dst dimension k runs over src dimension map[k]
 *  (src in C order of `shape`; dst in C order of shape[map[k]]). */
void nz__transpose(unsigned char *dst, const unsigned char *src, const uint64_t *shape, const int *map, int ndim,
		   size_t itemsize);
/** Sharding (shard3.c). If `codecs` is [sharding_indexed]: a->shards = the
 *  grid's chunks, a->chunks = the inner chunks, the layout, and *inner =
 *  its inner codec list; otherwise *inner = codecs. */
int nz__shard3_peek(nz_array *a, const json_t **inner, const json_t *codecs, const char *what);
/** After the inner codecs are parsed: the index codecs, and a->codecs3
 *  wrapped into the canonical sharding_indexed entry. */
int nz__shard3_finish(nz_array *a, const json_t *codecs, const char *what);
/** The stored bytes of inner chunk idx from shard `key` (*data NULL when
 *  the shard or its entry is empty). */
int nz__shard3_get(void **data, size_t *len, const nz_array *a, const uint64_t *idx, const char *key);

/** Shard writing (the contract's nz__shard_*): inner chunks of a shard in
 *  C order of their position in it, each a full inner chunk (fill-padded at
 *  the array edge; those wholly past it are skipped, as are all-fill ones
 *  with skip_empty_chunks), streamed into one atomic put; end writes the
 *  index and commits; abort discards. For an unsharded array a shard is
 *  one chunk. */
typedef struct nz__shard_job nz__shard_job;
int nz__shard_begin(nz__shard_job **out, nz_array *a, const uint64_t *shard_index);
int nz__shard_put_chunk(nz__shard_job *j, nz_scratch *s, const void *chunk, size_t len);
/** The same for an object array: `count` (a full inner chunk of) elements,
 *  as nz_array_write_chunk_vlen takes them. */
int nz__shard_put_chunk_vlen(nz__shard_job *j, nz_scratch *s, const char *const *items, const size_t *lens,
			     size_t count);
/** The next inner chunk as already-encoded bytes (the inner codecs' output,
 *  stored unchanged); enc NULL leaves its entry empty. Unsharded: the
 *  chunk itself, put (or, for NULL, removed). */
int nz__shard_put_encoded(nz__shard_job *j, const void *enc, size_t len);
int nz__shard_end(nz__shard_job *j);
void nz__shard_abort(nz__shard_job *j);
/** 1 if every element of a full chunk equals the fill value (NaN = NaN). */
int nz__chunk_is_empty(const nz_array *a, const unsigned char *data);

/** Fill `a` (path and store set) from a zarr.json document. */
int nz__array_parse3(nz_array *a, const json_t *meta, const char *what);
/** zarr.json of `a` with `attrs` (borrowed; NULL = {}), new reference. */
int nz__array_to_meta3(json_t **out, const nz_array *a, const json_t *attrs);
/** The zarr.json document for new-array options. */
int nz__opts_to_meta3(json_t **out, const nz_array_opts *o, const char *path);
/** The hierarchy's format: 3 (root zarr.json), 2 (root .zgroup or
 *  .zarray), 0 (no root yet), or a negative error. */
int nz__zarr_format(nz_store *store);
/** {"attributes": {}, "zarr_format": 3, "node_type": "group"}; NULL = ENOMEM. */
json_t *nz__group3_doc(void);
/** Make the v3 group at `path` (not its parents); keep an existing one. */
int nz__group3_one(nz_store *store, const char *path);
/** Replace the "attributes" of the zarr.json at `key` (which must exist). */
int nz__attrs3_write(nz_store *store, const char *key, const json_t *attrs);
/** The "attributes" of the zarr.json at `key` ({} when it is missing). */
int nz__attrs3_read(json_t **out, nz_store *store, const char *key);
/** Rewrite the root zarr.json with every other node's inline. */
int nz__consolidate3(nz_store *store);
/** nz_metadata_check for a v3 hierarchy: every zarr.json a v3 node, and the
 *  root's consolidated_metadata (when present) exactly what consolidating
 *  now would write. */
int nz__metadata_check3(nz_store *store);
/** NZ_EMISMATCH naming `what` unless objects got and want hold the same
 *  keys with equal values. */
int nz__consolidated_differs(const json_t *got, const json_t *want, const char *what);
/** 1 if doc is a JSON object whose "node_type" is `type`. */
int nz__zarr3_node_is(const json_t *doc, const char *type);

/** Base64 (standard alphabet, padded) as Python's base64.standard_b64encode. */
int nz__base64_encode(char **out, const unsigned char *data, size_t len);
/** NZ_EFORMAT (naming `what`) on characters outside the alphabet. */
int nz__base64_decode(unsigned char **out, size_t *outlen, const char *text, const char *what);

struct nz_array {
	nz_store *store;         /**< borrowed: must outlive the array */
	char *path;              /**< "" for the root, no leading/trailing '/' */
	int ndim;
	uint64_t shape[NZ_MAX_DIMS];
	uint64_t chunks[NZ_MAX_DIMS];
	nz__dtype dtype;
	unsigned char *fill;     /**< itemsize bytes (NULL for object arrays) */
	int fill_is_nan;         /**< float fill NaN: empty-chunk test uses isnan */
	json_t *fill_json;       /**< canonical fill_value */
	nz_object_codec ocodec;
	json_t *ocodec_json;     /**< the object codec's config as stored */
	nz_codec **filters;      /**< bytes filters after the object codec */
	size_t nfilters;
	nz_codec *compressor;    /**< NULL = none */
	char sep;                /**< '.' or '/' */
	int sep_explicit;        /**< .zarray names dimension_separator */
	int skip_empty;
	size_t chunk_nelems;     /**< elements in one full chunk */
	size_t chunk_nbytes;     /**< chunk_nelems x itemsize (0 for objects) */
	int format;              /**< 2 or 3 */
	/* v3 only: */
	int key_v2;              /**< chunk_key_encoding "v2" (else "default") */
	int transposed;          /**< transpose codec with a non-identity order */
	int perm[NZ_MAX_DIMS];   /**< its order */
	size_t *typesize;        /**< blosc typesize per filter (v3; v2 uses itemsize) */
	json_t *codecs3;         /**< canonical "codecs" */
	json_t *dim_names;       /**< "dimension_names" or NULL */
	int sharded;             /**< codecs = [sharding_indexed]: chunks are inner chunks */
	uint64_t shards[NZ_MAX_DIMS]; /**< the shard shape (sharded only) */
	nz__shard_layout layout; /**< its index (sharded only) */
};

struct nz_scratch {
	nz_buf a, b; /**< ping-pong buffers for the codec pipeline */
};

/** Allocate an array struct from its .zarray (format 2) or zarr.json
 *  (format 3) document, everything validated. */
int nz__array_from_meta(nz_array **out, nz_store *store, const char *path, const json_t *meta, int format);
/** Most elements in one chunk of an object array (see nz__array_sizes). */
#define NZ__MAX_OBJECT_CHUNK ((size_t)1 << 24)

/** A list of at most NZ_MAX_DIMS non-negative integers (`key` of `what`). */
int nz__zarr_parse_dims(uint64_t *dims, int *ndim, const json_t *v, const char *key, const char *what);
/** chunk_nelems/chunk_nbytes from chunks and dtype (overflow-checked), and
 *  the fill buffer (zeros) for fixed-size dtypes. */
int nz__array_sizes(nz_array *a, const char *what);
/** Build the .zarray document of `a` (new reference). */
int nz__array_to_meta(json_t **out, const nz_array *a);

/** Move *v into object m under key and clear *v (jansson takes the
 *  reference even on failure); -1 when *v is NULL (a failed allocation
 *  upstream) or insertion fails. */
int nz__json_take(json_t *m, const char *key, json_t **v);
/** The same for appending to list l. */
int nz__json_take_append(json_t *l, json_t **v);
/** A JSON list of n integers; NULL when out of memory. */
json_t *nz__dims_json(const uint64_t *d, int n);

/** "<path>/<name>" or "<name>" for the root; caller frees with nz__free. */
int nz__zarr_key(char **out, const char *path, const char *name);
/** Copy `path` without leading/trailing '/' (caller frees). */
int nz__zarr_norm_path(char **out, const char *path);
/** Both of the above: *p = normalised path, *key = "<p>/<name>". On
 *  failure both are NULL. */
int nz__zarr_path_key(char **p, char **key, const char *path, const char *name);
/** Write a metadata document in zarr's style: v2 (indent 4, sorted, ASCII)
 *  or, for a key ending in zarr.json, v3 (indent 2, in order, ASCII). */
int nz__zarr_put_doc(nz_store *store, const char *key, const json_t *doc);
/** Read and parse the JSON document at `key` (errors name the key);
 *  NZ_ENOTFOUND, without a message of its own, when it is missing. */
int nz__zarr_get_doc(json_t **out, nz_store *store, const char *key);

/** Run the bytes pipeline (filters then compressor) on src; the result is
 *  in *res (one of the scratch buffers, or src itself when there are no
 *  codecs). */
int nz__chunk_encode(const nz_array *a, nz_scratch *s, const void *src, size_t len,
		     size_t itemsize, const void **res, size_t *reslen);
/** Reverse: compressor then filters; `expected` 0 = unknown. */
int nz__chunk_decode(const nz_array *a, nz_scratch *s, const void *src, size_t len,
		     size_t expected, const void **res, size_t *reslen);
/** Put or (if `empty` and skip_empty) remove a chunk key. */
int nz__chunk_store(nz_array *a, const uint64_t *idx, const void *data, size_t len);

/** Object codecs: elements -> bytes and back (numcodecs formats). */
int nz__vlen_encode(nz_buf *out, const nz_array *a, const char *const *items,
		    const size_t *lens, size_t count);
int nz__vlen_decode(nz_vlen **out, const nz_array *a, const void *data, size_t len);
/** A chunk of `count` empty elements (missing chunk). */
int nz__vlen_empty(nz_vlen **out, size_t count);
/** A chunk of `count` elements that are each `fill` (len bytes). */
int nz__vlen_filled(nz_vlen **out, size_t count, const void *fill, size_t len);
/** The config zarr-python writes for an object codec (new reference). */
json_t *nz__vlen_codec_json(nz_object_codec c);
/** Parse an object codec config; NZ_EUNSUPPORTED naming the id if unknown. */
int nz__vlen_codec_parse(nz_object_codec *out, const json_t *config, const char *what);

#endif
