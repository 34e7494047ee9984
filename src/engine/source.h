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

/** 1 when the source has NZ_SOURCE_LAST: its tasks go after the others'. */
int nz__source_runs_last(const nz_source *src);

/** Where the source comes from, for messages (a path, "memory", "callback"). */
const char *nz__source_describe(const nz_source *src);

/** The ctx of a callback source built with ops->read, else NULL: lets the
 *  layer that built a source recognise it again (nz_source_hdf5_stats). */
void *nz__source_callback_ctx(const nz_source *src, const nz_source_ops *ops);

/** A source whose data lies in encoded chunks (an HDF5 dataset's filtered
 *  chunks) may hand those bytes over unchanged where the array written
 *  would store exactly them: no decode, no encode (docs/format.md, "Export
 *  from HDF5"). `ctx` is the source's own (see nz__source_set_stored). */
typedef struct nz__stored_ops {
	/** 1 when a stored chunk, moved as it is, is a valid chunk of `dst`
	 *  (for sharded arrays an inner chunk): same chunk shape and a codec
	 *  chain that decodes it to the same elements. 0 when not; < 0 on
	 *  errors. Called before a write starts. */
	int (*matches)(void *ctx, const nz_array *dst);
	/** The stored bytes of the chunk at grid index `index` into *out
	 *  (replacing its contents), checked by decoding them: *chunk then
	 *  points to the chunk's elements (a full chunk, C order, as put's
	 *  data), in *out or in dec[0] or dec[1], the caller's buffers (reused
	 *  from chunk to chunk). 0; 1 when that chunk is not
	 *  stored so (never written, a filter skipped): the engine then reads
	 *  and encodes it; < 0 on errors, a chunk that does not decode to
	 *  exactly a chunk's bytes among them (the message names the chunk and
	 *  the source's file). Thread-safe. */
	int (*get)(void *ctx, const uint64_t *index, nz_buf *out, nz_buf *dec, const void **chunk);
} nz__stored_ops;

/** Give `src` stored chunks (`ops` must outlive it; ctx is borrowed and
 *  must too: typically what the source's own ctx holds). */
void nz__source_set_stored(nz_source *src, const nz__stored_ops *ops, void *ctx);

/** 1 when `src` has stored chunks that match `dst`, 0 when not, < 0 on
 *  errors (matches' own). */
int nz__source_stored_matches(const nz_source *src, const nz_array *dst);

/** The stored bytes of chunk `index` and its decoded elements (see
 *  nz__stored_ops.get): 0, 1 when the engine must read and encode it (also
 *  for a source without stored chunks), < 0 on errors. */
int nz__source_read_stored(nz_source *src, const uint64_t *index, nz_buf *out, nz_buf *dec,
			   const void **chunk);

#endif
