/* Internal: the byte layer of Zarr v3's sharding_indexed codec.
 *
 * A shard is one store value holding the encoded inner chunks of a box of
 * the array, plus an index of nchunks (offset, nbytes) pairs, little-endian
 * uint64 (big-endian if the index's bytes codec says so), in C order of the
 * inner chunk's position in the shard; (2^64-1, 2^64-1) marks an empty
 * (fill-value) chunk. The index may be followed by its CRC32C (index codecs
 * [bytes, crc32c], what zarr-python writes) and sits at the end of the
 * value (default) or at its start; offsets count from the value's first
 * byte either way.
 *
 * This layer moves encoded bytes only: which codecs made an inner chunk,
 * and how many chunks a shard holds, is the caller's (src/zarr's v3 code)
 * business. Everything here is codec-agnostic and store-agnostic (it uses
 * the store's streaming put and ranged get, so shards work on object
 * stores).
 *
 * Hostile shards: an index is validated before any entry is used. Every
 * non-empty chunk must lie inside the value and outside the index, no two
 * may overlap, and an entry is either empty in both fields or in neither.
 * nchunks comes from metadata and may be absurd: the index size is
 * computed with overflow checks and compared with the value's size before
 * anything is allocated, so allocation is bounded by the bytes really
 * stored. Errors are NZ_EFORMAT naming the store, the key and the entry.
 *
 * Thread safety: the functions share nothing; a writer is used by one
 * thread at a time. */
#ifndef NZ_ZARR_SHARD_H
#define NZ_ZARR_SHARD_H

#include <stddef.h>
#include <stdint.h>

#include "nwbzarr/store.h"

/** Offset and nbytes of an empty inner chunk. */
#define NZ__SHARD_EMPTY UINT64_MAX

/** The most inner chunks one shard may have (an index of 1 GiB). */
#define NZ__SHARD_MAX_CHUNKS ((uint64_t)1 << 26)

/** How a shard's index is laid out (from the sharding codec's config). */
typedef struct nz__shard_layout {
	uint64_t nchunks;     /**< inner chunks per shard: the product of shard/chunk */
	int index_at_start;   /**< index_location "start" (else "end") */
	int index_crc32c;     /**< index codecs end with crc32c (4 more bytes) */
	int index_big_endian; /**< the index's bytes codec is big-endian */
} nz__shard_layout;

/** One index entry. */
typedef struct nz__shard_entry {
	uint64_t offset;
	uint64_t nbytes;
} nz__shard_entry;

/** *size = bytes of the encoded index (16 * nchunks, + 4 with crc32c).
 *  NZ_EFORMAT (naming `what`) for 0 or more than NZ__SHARD_MAX_CHUNKS. */
int nz__shard_index_size(size_t *size, const nz__shard_layout *l, const char *what);

/** Encode `entries` (l->nchunks of them) into dst (nz__shard_index_size
 *  bytes). Never fails on a valid layout. */
void nz__shard_index_encode(unsigned char *dst, const nz__shard_layout *l,
			    const nz__shard_entry *entries);

/** Decode and validate an encoded index of `n` bytes taken from a value of
 *  `value_size` bytes into entries (l->nchunks, caller-allocated). Wrong
 *  size, checksum mismatch, or an entry that breaks the rules above:
 *  NZ_EFORMAT naming `what` (e.g. "shard 'store/key'"). Allocates only the
 *  sort array for the overlap check (nchunks entries, which n bounds). */
int nz__shard_index_decode(nz__shard_entry *entries, const nz__shard_layout *l, const void *src,
			   size_t n, uint64_t value_size, const char *what);

/** Locate, decode and validate the index of a whole shard held in memory
 *  (`shard`, `len` bytes) into a new array *entries (l->nchunks; caller
 *  frees with nz__free), allocated only once `len` is known to hold the
 *  index metadata describes. Errors as nz__shard_index_decode. */
int nz__shard_parse(nz__shard_entry **entries, const nz__shard_layout *l, const void *shard,
		    size_t len, const char *what);

/* ---- reading from a store -------------------------------------------- */

/** Read and validate the index of shard `key`: its size, then one ranged
 *  get of exactly the index bytes. *entries (l->nchunks, caller frees with
 *  nz__free) and *value_size on success. NZ_ENOTFOUND when the shard is
 *  absent; NZ_EFORMAT when it is shorter than its index or the index is
 *  bad (nothing of metadata's size is allocated before the value's size
 *  says the index is really there). */
int nz__shard_read_index(nz__shard_entry **entries, uint64_t *value_size, nz_store *store,
			 const char *key, const nz__shard_layout *l);

/** Read the encoded bytes of one inner chunk whose validated entry is `e`
 *  (a ranged get). An empty entry gives *out = NULL, *len = 0 and returns
 *  0 (the caller fills). A value that no longer holds the range (replaced
 *  or truncated meanwhile) is NZ_EFORMAT. Caller frees *out with nz_free. */
int nz__shard_read_chunk(void **out, size_t *len, nz_store *store, const char *key,
			 const nz__shard_entry *e);

/* ---- writing ---------------------------------------------------------- */

typedef struct nz__shard_writer nz__shard_writer;

/** Start writing shard `key` as one atomic streaming put. Memory use does
 *  not grow with the shard: with the index at the end, inner chunks go
 *  straight into the put and the index (16 bytes per chunk) follows at the
 *  end. With the index at the start, whose offsets need every size first,
 *  the chunks go into a temporary key next to the shard (".<leaf>.nztmp.
 *  shard", a temporary name the directory store lists and resumes as such),
 *  and nz__shard_writer_end copies them after the index in pieces of a few
 *  MiB (a second pass over the bytes, not a second encoding), then removes
 *  the temporary key. Caller owns *out (end or abort). */
int nz__shard_writer_begin(nz__shard_writer **out, nz_store *store, const char *key,
			   const nz__shard_layout *l);

/** Append the encoded bytes of inner chunk `index` (C-order position in the
 *  shard, < nchunks; each at most once, in any order; chunks never put are
 *  empty). `len` may be 0 (an entry of 0 bytes, not an empty one). */
int nz__shard_writer_put(nz__shard_writer *w, uint64_t index, const void *data, size_t len);

/** Inner chunks put so far. */
uint64_t nz__shard_writer_count(const nz__shard_writer *w);

/** Write the index, commit the shard atomically and free w (also on
 *  failure, which leaves the old value or none, and no temporary key). */
int nz__shard_writer_end(nz__shard_writer *w);

/** Discard everything and free w: the old value (or none) stays. NULL ok. */
void nz__shard_writer_abort(nz__shard_writer *w);

#endif
