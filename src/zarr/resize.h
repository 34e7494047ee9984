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

#include <jansson.h>

#include "nwbzarr/zarr.h"

/** A new handle on `a`'s array (same store, path, codecs, skip_empty) whose
 *  shape is `shape` (ndim entries). Nothing is written. NZ_EINVAL for a
 *  shape no metadata document could hold (the array's own checks), NZ_ENOMEM.
 *  The caller frees *out. */
int nz__array_reshaped(nz_array **out, const nz_array *a, const uint64_t *shape);

/** Publish `shape` for `a`'s array: its metadata document rewritten in one
 *  atomic put (v3: the attributes in the stored zarr.json are kept). `out`
 *  may be NULL; else it receives the handle of the new shape. The stored
 *  consolidated metadata is not touched; `cm`, when not NULL, is a
 *  document from nz__consolidated_read whose entry for the array is set to
 *  the new document (in memory: nz__consolidated_put stores it). */
int nz__array_resize(nz_array **out, const nz_array *a, const uint64_t *shape, json_t *cm);

/* Consolidated metadata kept current without listing the store (a
 * recording publishes new shapes every second, and after hours a listing
 * walks thousands of shards). The document is read once after an
 * nz_consolidate; each resize sets its array's entry; a put stores exactly
 * the bytes nz_consolidate would write, as long as only those resizes
 * changed the hierarchy's documents since. */

/** The stored consolidated document: v3 the root zarr.json, v2 .zmetadata
 *  (NZ_ENOTFOUND when absent). The caller frees *out (json_decref). */
int nz__consolidated_read(json_t **out, nz_store *store);

/** Store `cm` where nz__consolidated_read found it, in one atomic put. */
int nz__consolidated_put(nz_store *store, const json_t *cm);

/* Writing a growing array one inner chunk at a time (along axis 0; the
 * chunks span every other axis). A flush rewrites the last, partial write
 * unit (a shard, or the chunk of an unsharded array); the encoded bytes of
 * the unit's full inner chunks are kept, so each rewrite encodes only the
 * newest chunk. The unit stored is byte for byte what nz_array_write_shard
 * writes for the same rows through a handle of that length. One nz__grow
 * is used by one thread at a time, chunks in increasing order. */
typedef struct nz__grow nz__grow;

/** A writer for `a` (borrowed; it must outlive the writer), fixed-size
 *  dtype. NZ_EUNSUPPORTED when chunks do not span every axis but the
 *  first. */
int nz__grow_new(nz__grow **out, const nz_array *a);

/** Inner chunk `k` holding `rows` rows (0..chunk rows): `chunk` is a full
 *  chunk's bytes (chunk_nbytes), the rows past `rows` are set to the fill
 *  value here; NULL when rows is 0. A full chunk is encoded and kept for
 *  its unit; when it completes the unit, or when `store` is set, the unit
 *  is written (one atomic put) up to row k * chunk rows + rows: the kept
 *  chunks before k, then k's (a partial chunk is not kept). With rows 0
 *  and `store`, the unit holds the kept chunks only (nothing happens when
 *  there are none). */
int nz__grow_put(nz__grow *g, nz_scratch *scratch, uint64_t k, void *chunk, uint64_t rows,
		 int store);

/** NULL ok. */
void nz__grow_free(nz__grow *g);

#endif
