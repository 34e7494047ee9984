/* nwbzarr: the parallel write engine: data sources, task plans, and
 * nz_write_array, which reads, gathers, encodes and stores every chunk of an
 * array on N worker threads.
 *
 * A source is anything that can fill a dense C-order hyperslab ("read rows
 * 1000..1999 of channels 32..63 into this buffer"). A plan cuts an array's
 * chunk grid into tasks: each task is a box of whole chunks, each chunk
 * belongs to exactly one task, and tasks are numbered in C order of the task
 * grid. A plan can be split into disjoint contiguous parts (part k of K) so
 * that several processes share one write.
 *
 * Output does not depend on the number of jobs: each chunk's bytes depend on
 * its data only, so the files are identical for any `jobs`. Memory is
 * bounded by nz_write_opts.buffer_size, not by the size of the data.
 *
 * Thread safety: an nz_source may be read from many threads at once (that is
 * its contract; user callbacks must honour it). An nz_plan is immutable after
 * creation and may be shared. nz_write_array runs its callbacks (progress) on
 * the calling thread; worker threads block all signals, so a process-directed
 * signal (SIGINT) is delivered to another thread, typically the caller. A
 * small write (one chunk, or at most 1 MiB in all) starts no threads: it runs
 * on the calling thread with signals blocked while each chunk is written, so
 * a signal arriving then is delivered when the chunk is done. The
 * library installs no signal handlers: a program cancels through
 * nz_write_opts.cancel_flag or the progress callback.
 */
#ifndef NWBZARR_ENGINE_H
#define NWBZARR_ENGINE_H

#include <signal.h>

#include "nwbzarr/common.h"
#include "nwbzarr/zarr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ sources */

typedef struct nz_source nz_source;

/** Options of nz_source_open_raw: a headerless binary recording, row-major
 *  (samples x channels), optionally after a fixed-size header. */
typedef struct nz_raw_opts {
	unsigned int version;   /**< NZ_RAW_OPTS_VERSION */
	const char *dtype;      /**< numpy dtype string of one sample, e.g. "<i2" */
	uint64_t nchannels;     /**< columns per frame, >= 1 */
	uint64_t header_offset; /**< bytes to skip at the start of the file */
} nz_raw_opts;

#define NZ_RAW_OPTS_VERSION 1
#define NZ_RAW_OPTS_INIT { NZ_RAW_OPTS_VERSION, "<i2", 1, 0 }

/** Open a raw recording as a 2-d source (frames x nchannels). The file size
 *  minus header_offset must be a whole number of frames (NZ_EFORMAT naming
 *  the file otherwise). Data is read with pread on demand; the file is never
 *  mapped or loaded whole. */
NZ_EXTERN int nz_source_open_raw(nz_source **out, const char *path, const nz_raw_opts *opts);

/** Wrap a dense C-order buffer of prod(shape) elements of `dtype`. The buffer
 *  is borrowed, not copied: it must outlive the source and not change while
 *  a write runs. */
NZ_EXTERN int nz_source_from_memory(nz_source **out, const void *data, const char *dtype,
				    int ndim, const uint64_t *shape);

/** A user-defined source. */
typedef struct nz_source_ops {
	unsigned int version; /**< NZ_SOURCE_OPS_VERSION */
	/** Fill `out` with the dense C-order hyperslab [start, start+count)
	 *  (prod(count) elements). Called from several threads at once with
	 *  disjoint or overlapping regions: it must be thread-safe. Return 0 or
	 *  a negative nz_error_code; the engine's error names the region, and
	 *  keeps the message of a failed nwbzarr call made by the callback. */
	int (*read)(void *ctx, const uint64_t *start, const uint64_t *count, void *out);
	/** Called by nz_source_free (may be NULL). */
	void (*free)(void *ctx);
} nz_source_ops;

#define NZ_SOURCE_OPS_VERSION 1

/** Build a source from callbacks. On success the source owns ctx (ops->free
 *  runs in nz_source_free); on failure the caller still owns it. `ops` is
 *  copied. */
NZ_EXTERN int nz_source_from_callback(nz_source **out, const nz_source_ops *ops, void *ctx,
				      const char *dtype, int ndim, const uint64_t *shape);

/** Release the source (and a callback source's ctx through ops->free; a
 *  memory source's buffer stays the caller's). Not while a write uses it.
 *  NULL ok. */
NZ_EXTERN void nz_source_free(nz_source *src);

/** Source hint: whole rows (every index of the trailing dimensions) cost
 *  little more to read than part of them, as in contiguous row-major
 *  storage. The engine then reads whole rows once and gathers a band of
 *  chunks from them. Without it each chunk's box is read on its own, once
 *  (what a chunked source such as an HDF5 dataset wants). Raw sources have
 *  it from the start. */
#define NZ_SOURCE_ROWS 1u

/** Source hint for nz_write_arrays: run this source's tasks after those of
 *  every source of the write without it (each group largest tasks first,
 *  as always). For a source that takes its data from what another source
 *  of the same write reads (nz_rec_sources); it changes the order of the
 *  work, never the bytes written. */
#define NZ_SOURCE_LAST 2u

/** Set the NZ_SOURCE_* hints of a source (before any write uses it; not
 *  thread-safe). Unknown bits are NZ_EINVAL. */
NZ_EXTERN int nz_source_set_flags(nz_source *src, unsigned int flags);

/* Accessors: no errors, thread-safe; the shape and dtype strings are owned
 * by the source. */
NZ_EXTERN int nz_source_ndim(const nz_source *src);
NZ_EXTERN const uint64_t *nz_source_shape(const nz_source *src);
NZ_EXTERN size_t nz_source_itemsize(const nz_source *src);
NZ_EXTERN const char *nz_source_dtype(const nz_source *src);

/** Read the hyperslab [start, start+count) into `out` (len must be
 *  prod(count) x itemsize). Thread-safe. */
NZ_EXTERN int nz_source_read(nz_source *src, const uint64_t *start, const uint64_t *count,
			     void *out, size_t len);

/* -------------------------------------------------------------------- plans */

typedef struct nz_plan nz_plan;

/** One task: a box of whole chunks in chunk-grid coordinates. */
typedef struct nz_task {
	uint64_t index;                    /**< position in the whole (unsplit) plan */
	int ndim;
	uint64_t chunk_start[NZ_MAX_DIMS]; /**< grid index of the first chunk */
	uint64_t chunk_count[NZ_MAX_DIMS]; /**< chunks per dimension (clipped at the edge) */
} nz_task;

/** Plan the chunks of an array (shape, chunks) in tasks of `task_chunks`
 *  chunks per dimension (NULL = one chunk per task; larger values are
 *  clipped to the grid). ndim 0 gives one task of one chunk; an empty array
 *  (a 0 in shape) gives no tasks. */
NZ_EXTERN int nz_plan_new(nz_plan **out, int ndim, const uint64_t *shape, const uint64_t *chunks,
			  const uint64_t *task_chunks);

/** Part k (0-based) of nparts: the k-th of nparts contiguous, disjoint,
 *  nearly equal runs of `plan`'s tasks (some may be empty). Parts of a part
 *  split that part. Task indices keep their values in the whole plan. */
NZ_EXTERN int nz_plan_part(nz_plan **out, const nz_plan *plan, uint64_t k, uint64_t nparts);

/** NULL ok. */
NZ_EXTERN void nz_plan_free(nz_plan *plan);
/** Tasks in this plan (or part). No errors; thread-safe. */
NZ_EXTERN uint64_t nz_plan_ntasks(const nz_plan *plan);
/** Chunks covered by the plan's tasks. */
NZ_EXTERN uint64_t nz_plan_nchunks(const nz_plan *plan);
/** The i-th task of this plan (0 <= i < nz_plan_ntasks; NZ_EINVAL
 *  otherwise). Thread-safe. */
NZ_EXTERN int nz_plan_task(nz_task *out, const nz_plan *plan, uint64_t i);

/* -------------------------------------------------------------------- write */

/** What the progress callback sees. Byte counts are uncompressed bytes of
 *  array data (elements inside the array), summed over finished chunks. */
typedef struct nz_progress {
	uint64_t bytes_done;
	uint64_t bytes_total;
	uint64_t chunks_done;
	uint64_t chunks_total;
	double elapsed_s; /**< since nz_write_array started */
} nz_progress;

/** Return non-zero to cancel the write (NZ_ECANCELED). */
typedef int (*nz_progress_cb)(const nz_progress *progress, void *ctx);

/** Filled by nz_write_array on success (and as far as it got on failure). */
typedef struct nz_write_stats {
	uint64_t bytes;    /**< uncompressed bytes written */
	uint64_t chunks;   /**< chunks written */
	uint64_t tasks;    /**< tasks started (not those skipped after a stop) */
	int jobs;          /**< worker threads actually used */
	uint64_t task_chunks[NZ_MAX_DIMS]; /**< task shape used, in chunks */
	double elapsed_s;
} nz_write_stats;

typedef struct nz_write_opts {
	unsigned int version; /**< NZ_WRITE_OPTS_VERSION */
	int jobs;             /**< worker threads; 0 = one per online core; at most NZ_WRITE_MAX_JOBS */
	/** Memory budget for data in flight, over all workers. A worker holds
	 *  the chunks of its task plus about one chunk of encoded output (and,
	 *  where a source's stored chunks move unchanged, three more: a stored
	 *  chunk and its two decode buffers), so
	 *  the budget bounds the task width and the number of workers: fewer
	 *  than `jobs` run if it cannot feed them all (at least one always
	 *  runs, even when a single chunk exceeds it). For a row-major source
	 *  a wider budget means wider bands, so rows are read fewer times.
	 *  0 = the default, 160 MiB: about 140 MiB peak RSS at 2 jobs with
	 *  hdmf's 9.6 MB chunks. */
	size_t buffer_size;
	/** Chunks per task along each dimension; NULL = chosen from the budget
	 *  (a band of chunks sharing rows, so a row-major source is read once). */
	const uint64_t *task_chunks;
	/** Write only part `part` of `nparts` of the plan (MPI ranks); every
	 *  part must use the same jobs, buffer_size and task_chunks. nparts 0 or
	 *  1 = everything. */
	uint64_t part, nparts;
	/** Called on the calling thread at the start, after tasks finish (at most
	 *  about every progress_interval_ms) and once at the end. */
	nz_progress_cb progress;
	void *progress_ctx;
	unsigned int progress_interval_ms; /**< 0 = 100 */
	/** Polled on the calling thread; non-zero cancels (set it from a SIGINT
	 *  handler). May be NULL. */
	const volatile sig_atomic_t *cancel_flag;
	nz_write_stats *stats; /**< out, may be NULL */
} nz_write_opts;

#define NZ_WRITE_OPTS_VERSION 1
#define NZ_WRITE_BUFFER_DEFAULT ((size_t)160 << 20)
#define NZ_WRITE_MAX_JOBS 256
#define NZ_WRITE_OPTS_INIT { NZ_WRITE_OPTS_VERSION, 0, 0, NULL, 0, 0, NULL, NULL, 0, NULL, NULL }

/** Write the whole of `src` (same shape and dtype as `dst`) into `dst`,
 *  chunk by chunk, on opts->jobs threads (opts NULL = defaults). Edge chunks
 *  are padded with the array's fill value. The first failure (source, codec,
 *  store) stops the other workers promptly; its error is returned and set on
 *  the calling thread. Chunks already stored by then stay (each is complete:
 *  stores put atomically).
 *
 *  A sharded Zarr v3 array is written shard by shard: a task owns whole
 *  shards, and each shard is one atomic streaming put (its inner chunks
 *  encoded and appended one row of chunks at a time, the index last), so a
 *  worker holds one row of a shard's inner chunks, not the shard, and a
 *  failure leaves the shards finished before it and no partial one. The
 *  task shape (task_chunks, stats->task_chunks) then counts shards;
 *  stats->chunks still counts inner chunks. */
NZ_EXTERN int nz_write_array(nz_array *dst, nz_source *src, const nz_write_opts *opts);

/** Write src[i] into dst[i] for i < n in one parallel write: the tasks of
 *  every array (each planned as nz_write_array plans it) share one queue and
 *  one set of opts->jobs workers, so a small array's tasks run beside a
 *  large one's instead of after it on a pool of its own. Tasks run largest
 *  first (stable in the order given), which keeps the workers busy to the
 *  end. Each array's files are byte for byte what nz_write_array writes,
 *  for any jobs. A worker holds one array's buffers at a time and the
 *  number of workers is the fewest any of the arrays could feed alone, so
 *  buffer_size bounds the memory as for one array. Progress and stats count
 *  all the arrays (stats->task_chunks: dst[0]'s task shape); the first
 *  failure stops every array and is returned naming its array.
 *  opts->task_chunks must be NULL when n > 1 (NZ_EINVAL); part/nparts
 *  split every array's plan. The arrays must be distinct. */
NZ_EXTERN int nz_write_arrays(nz_array *const *dst, nz_source *const *src, size_t n,
			      const nz_write_opts *opts);

/** The number of cores this process may run on (its CPU affinity; what
 *  jobs = 0 means), from 1 to NZ_WRITE_MAX_JOBS. */
NZ_EXTERN int nz_ncores(void);

#ifdef __cplusplus
}
#endif
#endif
