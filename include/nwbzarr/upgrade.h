/* nwbzarr: upgrade an NWB-Zarr file from Zarr v2 (hdmf-zarr <= 0.13's
 * layout, ours with --zarr-format 2 included) to Zarr v3 (hdmf-zarr 0.14's
 * layout), in parallel, then verify the result against the source.
 *
 * Every group, dataset, attribute, link, reference and object id carries
 * over (docs/format.md, "Upgrading v2 to v3"). The chunk grid is kept, so
 * where the v2 codec carries over to v3 (blosc, zstd or gzip, no filters)
 * each v2 chunk file becomes an inner chunk of a v3 shard (or a v3 chunk)
 * byte for byte, without being decoded. Other codecs (zlib, lz4, filters)
 * and object arrays (vlen text, json2, and hdmf-zarr <= 0.13's pickle,
 * read by a restricted decoder that runs no code) are decoded and written
 * again in 0.14's forms.
 *
 * Thread safety: the function may be called from any thread; it runs its
 * own workers and shares nothing between calls.
 */
#ifndef NWBZARR_UPGRADE_H
#define NWBZARR_UPGRADE_H

#include <signal.h>

#include "nwbzarr/common.h"
#include "nwbzarr/engine.h"
#include "nwbzarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What an upgrade did. */
typedef struct nz_upgrade_stats {
	uint64_t groups, datasets, links, attributes;
	uint64_t bytes;           /**< uncompressed bytes of dataset values written */
	uint64_t chunks_reused;   /**< v2 chunks moved as their stored bytes */
	uint64_t chunks_recoded;  /**< v2 chunks decoded and encoded again */
	int jobs;                 /**< most worker threads used for one dataset */
	double elapsed_s;         /**< the whole upgrade, verify included */
	double verify_s;          /**< of which the verify */
} nz_upgrade_stats;

typedef struct nz_upgrade_opts {
	unsigned int version;            /**< NZ_UPGRADE_OPTS_VERSION */
	int jobs;                        /**< worker threads; 0 = one per core; at most NZ_WRITE_MAX_JOBS */
	/** NULL = keep each dataset's v2 compressor where it carries over
	 *  (chunks reused), else zstd level 0 (hdmf-zarr 0.14's default).
	 *  Given: every dataset is re-encoded with it. */
	const nz_compressor *compressor;
	/** The chunk shape of 2-D datasets (NULL = each dataset's v2 chunks).
	 *  Different chunks mean re-encoding: nothing is reused. */
	const uint64_t *chunks;
	/** The shard shape of 2-D datasets, a multiple of their chunks in each
	 *  dimension (else NZ_EINVAL naming the dataset); NULL = datasets over
	 *  64 MiB in shards of all columns x about 256 MiB of rows, as export. */
	const uint64_t *shards;
	int overwrite;                   /**< 1 = replace an existing output store */
	int fsync;                       /**< 1 = fsync every file and directory written */
	int no_verify;                   /**< 1 = skip the closing nz_verify (for measuring) */
	nz_progress_cb progress;         /**< per large dataset; may be NULL */
	void *progress_ctx;
	const volatile sig_atomic_t *cancel_flag; /**< may be NULL */
	nz_upgrade_stats *stats;         /**< out; may be NULL */
} nz_upgrade_opts;

#define NZ_UPGRADE_OPTS_VERSION 1
#define NZ_UPGRADE_OPTS_INIT { NZ_UPGRADE_OPTS_VERSION, 0, NULL, NULL, NULL, 0, 0, 0, NULL, NULL, NULL, NULL }

/** Upgrade the complete Zarr v2 NWB file `src` (a directory store) into a
 *  new Zarr v3 store `dst` (opts NULL = defaults).
 *
 *  The whole input is checked before `dst` is touched: its metadata
 *  (nz_metadata_check: .zmetadata parses and agrees with the documents),
 *  the NWB hierarchy and its links, every array's metadata, every chunk
 *  present (a missing chunk is NZ_EFORMAT naming it: hdmf-zarr writes
 *  them all, so one missing is damage, not fill) and every object array
 *  decoded (a pickle the restricted decoder refuses is NZ_EFORMAT). A v3
 *  or incomplete `src` is NZ_EINVAL / NZ_EINCOMPLETE. An existing `dst`
 *  is NZ_EEXISTS unless opts->overwrite (which replaces only what
 *  nz_export_hdf5's does, and gives the old store back if the upgrade
 *  fails).
 *
 *  `dst` carries the incomplete marker (NZ_INCOMPLETE_MARKER) until it is
 *  written, consolidated and verified equal to `src` (nz_verify; a
 *  difference is NZ_EMISMATCH naming the first): a failed upgrade is
 *  removed and never looks complete. The output is the same bytes for any
 *  jobs. Errors name the file and the object. */
NZ_EXTERN int nz_upgrade(const char *src, const char *dst, const nz_upgrade_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
