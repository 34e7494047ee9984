/* Internal: what the engine may ask of a source beyond nz_source_read. */
#ifndef NZ_ENGINE_SOURCE_H
#define NZ_ENGINE_SOURCE_H

#include "nwbzarr/engine.h"

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

#endif
