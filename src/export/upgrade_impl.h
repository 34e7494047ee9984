/* Internal: upgrade's parallel copy of one fixed-size v2 array into its v3
 * counterpart (upcopy.c), apart from the model walk (upgrade.c). */
#ifndef NZ_EXPORT_UPGRADE_IMPL_H
#define NZ_EXPORT_UPGRADE_IMPL_H

#include <signal.h>

#include "nwbzarr/engine.h"
#include "nwbzarr/upgrade.h"
#include "nwbzarr/zarr.h"

typedef struct nz__ucopy_opts {
	int jobs; /**< 0 = one per core */
	nz_progress_cb progress;
	void *progress_ctx;
	const volatile sig_atomic_t *cancel_flag;
} nz__ucopy_opts;

typedef struct nz__ucopy_stats {
	uint64_t reused;  /**< chunks moved as stored bytes */
	uint64_t recoded; /**< chunks decoded and encoded again */
	int jobs;         /**< threads that ran */
} nz__ucopy_stats;

/** Every value of `src` (Zarr v2) into `dst` (v3, created with the same
 *  shape and dtype). Same chunk shape: write unit by write unit (a shard,
 *  or a chunk when unsharded) through nz_array_copy_unit on o->jobs
 *  threads, each unit on one thread and one atomic put, so the bytes do
 *  not depend on the threads. Other chunks: through the engine
 *  (nz_write_array) reading `src`'s regions. Progress and the cancel flag
 *  are looked at on the calling thread. */
int nz__ucopy_array(nz_array *dst, nz_array *src, const nz__ucopy_opts *o, nz__ucopy_stats *st);

#endif
