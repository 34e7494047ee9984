/* Internal: the parts of the Zarr v2 layer shared between its files, and
 * what the engine may use beyond the public header (the dtype of an array,
 * its fill bytes). An nz_array is immutable after create/open, so everything
 * here that only reads it is thread-safe. */
#ifndef NZ_ZARR_IMPL_H
#define NZ_ZARR_IMPL_H

#include <jansson.h>

#include "codec/codec.h"
#include "nwbzarr/zarr.h"
#include "util/buf.h"

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
void nz__dtype_clear(nz__dtype *dt);

/** Decode a .zarray fill_value for `dt` into `bytes` (dt->itemsize bytes;
 *  zeros for null) and make the canonical JSON zarr-python would write for
 *  it (*canon, new reference). Object dtypes: bytes unused; null, integers
 *  and strings are kept as given. */
int nz__fill_parse(unsigned char *bytes, json_t **canon, const nz__dtype *dt,
		   const json_t *value, const char *what);

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
};

struct nz_scratch {
	nz_buf a, b; /**< ping-pong buffers for the codec pipeline */
};

/** Allocate an array struct with shape/chunks/sizes validated. */
int nz__array_from_meta(nz_array **out, nz_store *store, const char *path, const json_t *meta);
/** Build the .zarray document of `a` (new reference). */
int nz__array_to_meta(json_t **out, const nz_array *a);

/** Move *v into object m under key and clear *v (jansson takes the
 *  reference even on failure); -1 when *v is NULL (a failed allocation
 *  upstream) or insertion fails. */
int nz__json_take(json_t *m, const char *key, json_t **v);
/** A JSON list of n integers; NULL when out of memory. */
json_t *nz__dims_json(const uint64_t *d, int n);

/** "<path>/<name>" or "<name>" for the root; caller frees with nz__free. */
int nz__zarr_key(char **out, const char *path, const char *name);
/** Copy `path` without leading/trailing '/' (caller frees). */
int nz__zarr_norm_path(char **out, const char *path);
/** Both of the above: *p = normalised path, *key = "<p>/<name>". On
 *  failure both are NULL. */
int nz__zarr_path_key(char **p, char **key, const char *path, const char *name);
/** Write a metadata document in zarr's style (indent 4, sorted, ASCII). */
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
/** The config zarr-python writes for an object codec (new reference). */
json_t *nz__vlen_codec_json(nz_object_codec c);
/** Parse an object codec config; NZ_EUNSUPPORTED naming the id if unknown. */
int nz__vlen_codec_parse(nz_object_codec *out, const json_t *config, const char *what);

#endif
