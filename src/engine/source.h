/* Internal: what the engine may ask of a source beyond nz_source_read. */
#ifndef NZ_ENGINE_SOURCE_H
#define NZ_ENGINE_SOURCE_H

#include "nwbzarr/engine.h"
#include "util/buf.h"

/** The source's elements as one dense C-order array in memory, or NULL when
 *  it has to be read (the engine then gathers straight from it). */
const void *nz__source_memory(const nz_source *src);

/** 1 when reading whole rows (every trailing dimension complete) is far
 *  cheaper than reading a narrower box, as for a row-major file or a
 *  callback with NZ_SOURCE_ROWS: the engine then reads full rows once and
 *  gathers several chunks from them. */
int nz__source_prefers_rows(const nz_source *src);

/** Where the source comes from, for messages (a path, "memory", "callback"). */
const char *nz__source_describe(const nz_source *src);

/** The ctx of a callback source built with ops->read, else NULL: lets the
 *  layer that built a source recognise it again (nz_source_hdf5_stats). */
void *nz__source_callback_ctx(const nz_source *src, const nz_source_ops *ops);

/** A target's chunk encoding, as far as a source can already hold it: one
 *  zlib stream (made at `zlib_level`) of the chunk's little-endian C-order
 *  bytes, byte-shuffled first by element size `shuffle` when not 0. */
typedef struct nz__stored_fmt {
	int ndim;
	const uint64_t *chunks;
	int zlib_level;
	size_t shuffle;
} nz__stored_fmt;

/** Chunks a source holds already encoded (HDF5 deflate chunks): the engine
 *  stores those bytes instead of encoding the elements again. */
typedef struct nz__stored_ops {
	/** 1 when the source's chunks are the target's chunks, stored as `fmt`. */
	int (*accepts)(void *ctx, const nz__stored_fmt *fmt);
	/** The chunk whose first element is at `origin`: its stored bytes into
	 *  `stored` (replaced) and its elements (`len` bytes, C order) into
	 *  `out`, having checked that the bytes decode to them; 1 (out
	 *  untouched, stored undefined) when this chunk is not held that way
	 *  (not stored, a filter skipped): the engine reads it as usual.
	 *  Called from many threads. */
	int (*read)(void *ctx, const uint64_t *origin, nz_buf *stored, void *out, size_t len);
} nz__stored_ops;

/** Give callback source `src` stored chunks (`ops` outlives it). */
void nz__source_set_stored(nz_source *src, const nz__stored_ops *ops);
/** The stored-chunk ops of `src` (its ctx in *ctx), or NULL. */
const nz__stored_ops *nz__source_stored(const nz_source *src, void **ctx);

#endif
