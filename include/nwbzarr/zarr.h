/* nwbzarr: Zarr v2 and v3 groups, arrays, attributes and consolidated
 * metadata.
 *
 * Zarr v2 documents (.zgroup, .zarray, .zattrs, .zmetadata) are written as
 * zarr-python 2.x writes them: keys sorted, indent 4, ASCII-escaped, floats
 * in Python's shortest round-trip form, so files compare byte for byte.
 * Zarr v3 documents (zarr.json, attributes inline, consolidated metadata
 * inline in the root's) are written as zarr-python 3.4 writes them: its key
 * order, indent 2, ASCII-escaped.
 *
 * The format is a property of the whole hierarchy in a store, decided by
 * its root: a root zarr.json makes it v3, otherwise it is v2. The root is
 * made in an explicit format by nz_root_create, or by the first
 * nz_array_create with zarr_format 3; group and attribute functions follow
 * whatever the root says (v2 when there is no root yet). Mixing formats in
 * one store is refused (NZ_EINVAL).
 *
 * Thread safety: an nz_array's metadata is immutable once created or opened,
 * so its chunk functions may run on many threads at once for distinct chunks.
 * Group/attribute functions are not meant to race on the same path.
 */
#ifndef NWBZARR_ZARR_H
#define NWBZARR_ZARR_H

#include "nwbzarr/common.h"
#include "nwbzarr/store.h"

#ifdef __cplusplus
extern "C" {
#endif

#define NZ_MAX_DIMS 32

/** How elements of an object ('|O') array are stored. */
typedef enum nz_object_codec {
	NZ_OBJECT_NONE = 0,  /**< not an object array */
	NZ_OBJECT_VLEN_UTF8, /**< numcodecs vlen-utf8: each element a UTF-8 string */
	NZ_OBJECT_VLEN_BYTES,/**< numcodecs vlen-bytes: each element a byte string */
	NZ_OBJECT_JSON2,     /**< numcodecs json2: each element a JSON value */
	/** numcodecs pickle, as hdmf-zarr <= 0.13 writes object arrays: read
	 *  only (a restricted decoder that runs no code), each element read as
	 *  JSON text like json2; creating such an array is NZ_EUNSUPPORTED. */
	NZ_OBJECT_PICKLE
} nz_object_codec;

/** A compressor choice. Fields a codec does not use are ignored. */
typedef struct nz_compressor {
	unsigned int version; /**< NZ_COMPRESSOR_VERSION */
	const char *id;       /**< "blosc", "zstd", "lz4", "zlib", "gzip" or "none" */
	const char *cname;    /**< blosc: "lz4", "lz4hc", "zstd", "blosclz", "zlib" */
	int clevel;           /**< compression level (codec's own range) */
	int shuffle;          /**< blosc: 0 none, 1 byte, 2 bit */
	int blocksize;        /**< blosc: 0 = automatic */
	/* Version 2 (version 1 callers' structs end above): */
	int checksum;         /**< zstd: 1 = each frame carries zstd's content checksum */
} nz_compressor;

#define NZ_COMPRESSOR_VERSION 2
/** hdmf-zarr's default: Blosc(cname='lz4', clevel=5, shuffle=1, blocksize=0). */
#define NZ_COMPRESSOR_INIT { NZ_COMPRESSOR_VERSION, "blosc", "lz4", 5, 1, 0, 0 }

/** Zarr v3 chunk key encodings (v2 arrays always use v2's keys). */
typedef enum nz_chunk_key_encoding {
	NZ_CHUNK_KEY_DEFAULT = 0, /**< v3 "default": "c/1/2" ('/' or '.' separator) */
	NZ_CHUNK_KEY_V2           /**< v3 "v2": "1.2" or "1/2", as Zarr v2 names chunks */
} nz_chunk_key_encoding;

/** Where a shard's index sits (sharding_indexed index_location). */
typedef enum nz_shard_index_location {
	NZ_SHARD_INDEX_END = 0,
	NZ_SHARD_INDEX_START
} nz_shard_index_location;

/** Options of nz_array_create. Version 1 callers (NZ_ARRAY_OPTS_VERSION 1,
 *  the struct up to skip_empty_chunks) keep working: they get Zarr v2;
 *  version 2 ones (up to shard_index_location) get no transpose. */
typedef struct nz_array_opts {
	unsigned int version; /**< NZ_ARRAY_OPTS_VERSION */
	/** numpy dtype string: "|b1", "<i2", "<u8", "<f4", "|S12", "|O", or a
	 *  JSON list for a structured dtype: [["x","<u4"],["w","<f4"]]. */
	const char *dtype;
	int ndim;                /**< 0..NZ_MAX_DIMS; 0 = a 0-d array */
	const uint64_t *shape;   /**< ndim entries (entries may be 0) */
	const uint64_t *chunks;  /**< ndim entries, each >= 1; NULL = shape */
	/** JSON text of .zarray's fill_value as zarr-python writes it ("0",
	 *  "0.0", "\"NaN\"", "null", base64 string for |S); NULL = "null" for
	 *  object arrays and 0 (of the dtype) otherwise. */
	const char *fill_value_json;
	/** NULL = NZ_COMPRESSOR_INIT; id "none" = compressor null. */
	const nz_compressor *compressor;
	/** JSON list of extra numcodecs filter configs (e.g. shuffle, zlib)
	 *  applied before the compressor; NULL = none. */
	const char *filters_json;
	nz_object_codec object_codec; /**< required for dtype "|O" */
	char dimension_separator;     /**< '.' (default when 0) or '/' */
	/** 1 = a chunk whose every element equals the fill value is not stored
	 *  (zarr's write_empty_chunks=False); 0 = every chunk is stored. */
	int skip_empty_chunks;
	/* Version 2: */
	/** 2 or 3; 0 = the format of the store's hierarchy (v2 when it has no
	 *  root yet). A v3 array: data types, codecs and fill values are
	 *  mapped as docs/format.md says (numpy dtype strings stay the input);
	 *  json2 is NZ_EUNSUPPORTED. The lz4 and zlib compressors and the
	 *  filters (shuffle, lz4, zlib, gzip, zstd) are written as zarr-python
	 *  3.4 writes numcodecs' codecs ("numcodecs.lz4", ...): zarr-python
	 *  reads them, TensorStore does not. */
	int zarr_format;
	/** v3 only: ndim shard sizes in elements, each a multiple of chunks;
	 *  NULL = not sharded. Sharded arrays are written whole shards at a
	 *  time (nz_array_write_shard, nz_array_write_all, for object dtypes
	 *  nz_array_write_all_vlen); single-chunk writes are NZ_EUNSUPPORTED
	 *  for them. Index codecs are
	 *  [bytes little, crc32c], as zarr-python writes. */
	const uint64_t *shards;
	/** v3 only: ndim names (entries may be NULL = unnamed); NULL = none. */
	const char *const *dimension_names;
	/** v3 only; dimension_separator picks its separator ('/' when 0 for
	 *  the default encoding, '.' for v2's). */
	nz_chunk_key_encoding chunk_key_encoding;
	nz_shard_index_location shard_index_location; /**< v3 sharded only */
	/* Version 3: */
	/** v3 only: ndim entries, a permutation of 0..ndim-1: chunks are stored
	 *  transposed to this order (the transpose codec, inside the shard when
	 *  sharded); NULL or the identity = none. Fixed-size dtypes only. */
	const int *transpose_order;
} nz_array_opts;

#define NZ_ARRAY_OPTS_VERSION 3
#define NZ_ARRAY_OPTS_INIT { NZ_ARRAY_OPTS_VERSION, NULL, 0, NULL, NULL, NULL, NULL, NULL, NZ_OBJECT_NONE, 0, 0, \
			     0, NULL, NULL, NZ_CHUNK_KEY_DEFAULT, NZ_SHARD_INDEX_END, NULL }

typedef struct nz_array nz_array;

/** Create the root group of a new hierarchy in `zarr_format` (2 or 3). An
 *  existing root of the same format is kept; one of the other format is
 *  NZ_EINVAL naming the store. */
NZ_EXTERN int nz_root_create(nz_store *store, int zarr_format);

/** The format of the store's hierarchy: 3 if the root has a zarr.json, else
 *  2 (also for an empty store); negative on a store error. */
NZ_EXTERN int nz_store_zarr_format(nz_store *store);

/** Create the group at `path` ("" = root) and any missing parent groups, in
 *  the hierarchy's format. An existing group is kept. */
NZ_EXTERN int nz_group_create(nz_store *store, const char *path);

/** 1 if `path` is a group, 0 if not, negative on error. */
NZ_EXTERN int nz_group_exists(nz_store *store, const char *path);

/** Write `json_object` (JSON text of an object) as the attributes of the
 *  group or array at `path`, replacing any: v2 its .zattrs, v3 the
 *  "attributes" of its zarr.json (which must exist: NZ_ENOTFOUND). It is
 *  re-serialised in zarr's style (v2 sorts keys, v3 keeps their order). */
NZ_EXTERN int nz_attrs_write(nz_store *store, const char *path, const char *json_object);

/** Read the attributes at `path` as compact JSON text; "{}" when absent. */
NZ_EXTERN int nz_attrs_read(char **out, nz_store *store, const char *path);

/** Create an array (parents created as groups); writes .zarray, replacing
 *  any. The array borrows `store`, which must outlive it. As zarr-python
 *  does, a 0-d array is stored without a compressor. Errors: NZ_EINVAL for
 *  bad options, NZ_EFORMAT/NZ_EUNSUPPORTED for a dtype, fill value or codec
 *  that .zarray could not hold (json2 needs ndim >= 1), NZ_EEXISTS when a
 *  parent path is an array. See docs/format.md for what is written. */
NZ_EXTERN int nz_array_create(nz_array **out, nz_store *store, const char *path,
			      const nz_array_opts *opts);

/** Open an existing array and validate its .zarray or zarr.json (borrows
 *  `store`; the hierarchy's format decides which: a v3 root's store looks
 *  for zarr.json only; a store without a v3 root looks for .zarray, then
 *  for the array's own zarr.json, so an array inside a store another tool
 *  wrote opens by its path). NZ_ENOTFOUND when there is none; NZ_EFORMAT naming the key for malformed metadata;
 *  NZ_EUNSUPPORTED for order 'F', unknown codecs, dtypes and
 *  v3 extensions whose must_understand is not false (those with false are
 *  ignored). Big-endian arrays ('>' dtypes, v3 bytes codec endian "big")
 *  open; their chunks are returned in the stored byte order. */
NZ_EXTERN int nz_array_open(nz_array **out, nz_store *store, const char *path);

/** Release the array (not its store). NULL ok. */
NZ_EXTERN void nz_array_free(nz_array *array);

/** Whether writes leave out chunks whose every element equals the fill
 *  value (and remove such a chunk already stored): 1 as zarr-python's
 *  write_empty_chunks=False does, 0 to store every chunk. nz_array_create
 *  takes it from opts->skip_empty_chunks; nz_array_open starts at 0, since
 *  Zarr metadata does not record it. Set it before any write uses the
 *  array: not thread-safe. */
NZ_EXTERN void nz_array_set_skip_empty(nz_array *array, int skip);

/* Accessors: no errors, no allocation, safe from any thread (the metadata is
 * immutable); returned pointers are owned by the array and live as long as
 * it does. */
NZ_EXTERN int nz_array_ndim(const nz_array *array);
/** ndim entries. */
NZ_EXTERN const uint64_t *nz_array_shape(const nz_array *array);
/** ndim entries. */
NZ_EXTERN const uint64_t *nz_array_chunks(const nz_array *array);
/** Bytes per element in memory (object arrays: 0). */
NZ_EXTERN size_t nz_array_itemsize(const nz_array *array);
/** The numpy dtype string ("<i2", "|S5", "<U4", "|O"; structured dtypes
 *  as compact JSON), for v3 arrays too. */
NZ_EXTERN const char *nz_array_dtype(const nz_array *array);
NZ_EXTERN nz_object_codec nz_array_object_codec(const nz_array *array);
/** The fill value as one element of itemsize bytes (zeros for fill_value
 *  null); NULL for object arrays. Owned by the array. */
NZ_EXTERN const void *nz_array_fill_value(const nz_array *array);
/** The array's path in its store ("" for the root, no leading '/'). */
NZ_EXTERN const char *nz_array_path(const nz_array *array);
/** 2 or 3. */
NZ_EXTERN int nz_array_zarr_format(const nz_array *array);
/** The write unit in elements (ndim entries, never NULL): the shard shape
 *  of a sharded array, else the chunk shape. */
NZ_EXTERN const uint64_t *nz_array_shards(const nz_array *array);
/** Number of write units along each dimension (as nz_array_chunk_grid). */
NZ_EXTERN int nz_array_shard_grid(const nz_array *array, uint64_t *grid);
/** Total number of write units (saturating, as nz_array_nchunks). */
NZ_EXTERN uint64_t nz_array_nshards(const nz_array *array);
/** Number of chunks along each dimension (ceil(shape/chunks); 0 if shape is 0). */
NZ_EXTERN int nz_array_chunk_grid(const nz_array *array, uint64_t *grid);
/** Total number of chunks (1 for a 0-d array, 0 for an empty one). */
NZ_EXTERN uint64_t nz_array_nchunks(const nz_array *array);
/** Bytes of one full chunk in memory (product of chunks x itemsize). */
NZ_EXTERN size_t nz_array_chunk_nbytes(const nz_array *array);
/** The store key of a chunk, e.g. "data/3.0" (v2) or "data/c/3/0" (v3
 *  default encoding); of a sharded array, the key of the shard holding
 *  that (inner) chunk. Caller frees with nz_free. */
NZ_EXTERN int nz_array_chunk_key(char **out, const nz_array *array, const uint64_t *chunk_index);

/** Per-thread reusable buffers for encoding/decoding. Optional (NULL = the
 *  call allocates its own). One scratch must not be used by two threads at
 *  once; give each worker its own. */
typedef struct nz_scratch nz_scratch;
/** A new, empty scratch (caller frees; NZ_ENOMEM). */
NZ_EXTERN int nz_scratch_new(nz_scratch **out);
/** NULL ok. */
NZ_EXTERN void nz_scratch_free(nz_scratch *scratch);

/** Write one chunk of a fixed-size dtype: `data` holds a full chunk in C
 *  order (nz_array_chunk_nbytes bytes, little-endian as the dtype says);
 *  elements beyond the array's edge must already hold the fill value. The
 *  chunk is encoded with the array's filters and compressor and stored
 *  atomically. Thread-safe for distinct chunks. */
NZ_EXTERN int nz_array_write_chunk(nz_array *array, nz_scratch *scratch,
				   const uint64_t *chunk_index, const void *data, size_t len);

/** Write one whole write unit (nz_array_shards) of a fixed-size dtype:
 *  `data` holds it densely in C order (prod(shards) x itemsize bytes,
 *  elements past the array's edge ignored). A sharded array's shard is one
 *  atomic put of its encoded inner chunks plus index; an unsharded array's
 *  unit is one chunk. Thread-safe for distinct shards. For small writes;
 *  the engine streams inner chunks instead. */
NZ_EXTERN int nz_array_write_shard(nz_array *array, nz_scratch *scratch, const uint64_t *shard_index,
				   const void *data, size_t len);

/** Write one chunk of an object array: `count` elements (a full chunk, C
 *  order); element i is items[i] of lens[i] bytes (UTF-8 text, bytes, or JSON
 *  text per the array's object codec). */
NZ_EXTERN int nz_array_write_chunk_vlen(nz_array *array, nz_scratch *scratch,
					const uint64_t *chunk_index, const char *const *items,
					const size_t *lens, size_t count);

/** 1 if chunks of `src` (Zarr v2) can move into `dst` (v3) as their stored
 *  bytes: same shape, dtype and chunk shape (dst's inner chunks when it is
 *  sharded), src with no filters and a blosc, zstd or gzip compressor, dst
 *  with the bytes codec and that same compressor with the same parameters
 *  (blosc's typesize the itemsize, as v2 has it). 0 if not; a negative
 *  code (NZ_ENOMEM) on error. Fixed-size dtypes only. */
NZ_EXTERN int nz_array_chunks_reusable(const nz_array *dst, const nz_array *src);

/** Fill write unit `unit_index` of `dst` (a shard, or one chunk when dst is
 *  unsharded; see nz_array_shards) from `src`, which must have the same
 *  shape, dtype, fill value and chunk shape (NZ_EINVAL otherwise). When
 *  nz_array_chunks_reusable, each chunk's stored bytes go into dst
 *  unchanged (a sharded dst's inner chunk is then the v2 chunk file byte
 *  for byte) and *reused (NULL ok) counts them; otherwise each chunk is
 *  decoded and encoded with dst's codecs. Chunks src does not store stay
 *  empty. A shard is one atomic put (nothing partial on failure). The
 *  output depends only on src: thread-safe for distinct units, so any
 *  number of threads gives the same bytes. Fixed-size dtypes only. */
NZ_EXTERN int nz_array_copy_unit(nz_array *dst, const nz_array *src, nz_scratch *scratch,
				 const uint64_t *unit_index, uint64_t *reused);

/** Read one chunk of a fixed-size dtype into `out` (len = chunk bytes). A
 *  missing chunk reads as the fill value. */
NZ_EXTERN int nz_array_read_chunk(nz_array *array, nz_scratch *scratch,
				  const uint64_t *chunk_index, void *out, size_t len);

/** Elements of an object-array chunk: items[i] points into one buffer owned by
 *  the struct; free with nz_vlen_free. Missing chunk: every element empty. */
typedef struct nz_vlen {
	size_t count;
	char **items;  /**< NUL-terminated for convenience; lens[i] excludes it */
	size_t *lens;
} nz_vlen;
/** Read one chunk of an object array into a new *out (caller frees with
 *  nz_vlen_free). NZ_EINVAL for a fixed-size array; a chunk that does not
 *  decode is an error naming its key; a missing chunk reads as empty
 *  elements (v3: as the fill value). Thread-safe for any chunks. */
NZ_EXTERN int nz_array_read_chunk_vlen(nz_vlen **out, nz_array *array, const uint64_t *chunk_index);
/** NULL ok. */
NZ_EXTERN void nz_vlen_free(nz_vlen *v);

/** Read a hyperslab [start, start+count) of a fixed-size array into a dense
 *  C-order buffer `out` of prod(count) x itemsize bytes. */
NZ_EXTERN int nz_array_read_region(nz_array *array, const uint64_t *start,
				   const uint64_t *count, void *out, size_t len);

/** Write a whole fixed-size array from a dense C-order buffer, chunk by chunk,
 *  serially (padding edge chunks with the fill value). For small arrays and
 *  tests; large data goes through the engine. */
NZ_EXTERN int nz_array_write_all(nz_array *array, const void *data, size_t len);

/** Write a whole object array (prod(shape) elements, C order). */
NZ_EXTERN int nz_array_write_all_vlen(nz_array *array, const char *const *items,
				      const size_t *lens, size_t count);

/** Consolidate the metadata of every node in the store, as
 *  zarr.consolidate_metadata does: v2 writes .zmetadata covering every
 *  .zgroup/.zarray/.zattrs; v3 rewrites the root zarr.json with every other
 *  node's zarr.json inline ("consolidated_metadata"). Call it last. */
NZ_EXTERN int nz_consolidate(nz_store *store);

/** Check every metadata document of the store before trusting any: each
 *  .zgroup is a JSON object with zarr_format 2, each .zattrs a JSON object,
 *  and .zmetadata, when there is one, is consolidated metadata holding
 *  exactly those documents (and the .zarray ones) as they are in the store,
 *  since zarr-python's open_consolidated reads nothing else. .zarray
 *  contents are nz_array_open's to judge. 0; NZ_EMISMATCH when .zmetadata
 *  parses but disagrees with the documents; NZ_EFORMAT (NZ_EIO, ...) for a
 *  document that does not parse or is not what it must be; each naming the
 *  store and the key. Reads the whole store's metadata. A v3 hierarchy:
 *  every zarr.json is a v3 group or array, and the root's
 *  consolidated_metadata, when there is one, holds exactly the other
 *  nodes' documents (NZ_EMISMATCH otherwise). */
NZ_EXTERN int nz_metadata_check(nz_store *store);

/** A hierarchy opened for reading through its consolidated metadata. */
typedef struct nz_hierarchy nz_hierarchy;

/** Open the hierarchy of `store` for reading (borrows `store`, which must
 *  outlive it): the root's document is read once, and when it holds
 *  consolidated metadata (v3: the root zarr.json's inline
 *  consolidated_metadata; v2: .zmetadata), the nz_hierarchy_* opens below
 *  are served from that copy without reading any other document, as
 *  zarr-python 3.4's open_group does. Like zarr-python, the copy is
 *  trusted: a node changed after consolidating opens as consolidated, one
 *  added after it is NZ_ENOTFOUND; nz_metadata_check (verify) is what
 *  compares the copy with the documents. Without consolidated metadata
 *  every call falls through to the store functions (nz_array_open, ...).
 *  Errors: NZ_EFORMAT for a root document or a consolidated block that is
 *  malformed, naming the store and key. Immutable once open: its
 *  functions may run on many threads at once. */
NZ_EXTERN int nz_hierarchy_open(nz_hierarchy **out, nz_store *store);
/** NULL ok. Arrays opened through it stay valid (they borrow the store). */
NZ_EXTERN void nz_hierarchy_free(nz_hierarchy *h);
/** 1 if opens are served from consolidated metadata, 0 if not. */
NZ_EXTERN int nz_hierarchy_consolidated(const nz_hierarchy *h);
/** 2 or 3, as nz_store_zarr_format. */
NZ_EXTERN int nz_hierarchy_zarr_format(const nz_hierarchy *h);
/** nz_array_open, from the consolidated copy of the array's document. */
NZ_EXTERN int nz_hierarchy_array_open(nz_array **out, nz_hierarchy *h, const char *path);
/** nz_group_exists, from the consolidated copy. */
NZ_EXTERN int nz_hierarchy_group_exists(nz_hierarchy *h, const char *path);
/** nz_attrs_read, from the consolidated copy ("{}" when none). */
NZ_EXTERN int nz_hierarchy_attrs_read(char **out, nz_hierarchy *h, const char *path);
/** Called once per node; non-zero stops the walk and is returned. */
typedef int (*nz_hierarchy_member_cb)(const char *path, int is_array, void *payload);
/** Every node the consolidated metadata lists except the root, in its
 *  order (no store listing: an object store need not list). NZ_EINVAL
 *  when the hierarchy is not consolidated. */
NZ_EXTERN int nz_hierarchy_members(nz_hierarchy *h, nz_hierarchy_member_cb cb, void *payload);

#ifdef __cplusplus
}
#endif
#endif
