/* Internal: the engine core. nz_write_array is one client (its chunk sink is
 * nz_array_write_chunk); tests and other layers may plug in their own sink.
 *
 * A write is one nz__job shared by the caller and the workers: workers take
 * task indices from an atomic counter, gather chunks into their own buffers,
 * hand them to the sink, and count what they finished under the job's mutex.
 * The first failure is saved in the job (never in thread-local state) and
 * raises the stop flag; every worker checks it between reads and chunks. */
#ifndef NZ_ENGINE_WRITE_H
#define NZ_ENGINE_WRITE_H

#include <pthread.h>
#include <stdatomic.h>

#include "nwbzarr/engine.h"
#include "util/buf.h"

/** Where chunks go. */
typedef struct nz__target {
	int ndim;
	const uint64_t *shape;
	const uint64_t *chunks;
	size_t itemsize;
	const void *fill;  /**< itemsize bytes for padding edge chunks; NULL = zeros */
	const char *name;  /**< for messages, e.g. the array's path */
	/** Store one full chunk (C order, chunk-shaped, padded). Runs on worker
	 *  threads concurrently for distinct chunks. *state is the calling
	 *  worker's own slot, NULL at first; state_free releases it. */
	int (*put)(void *ctx, void **state, const uint64_t *chunk_index, const void *data,
		   size_t len);
	void (*state_free)(void *state);
	void *ctx;
	/** Write units (Zarr v3 shards): chunks per unit along each dimension;
	 *  NULL = every chunk is a unit of its own and only put is called.
	 *  With units, a task is a box of whole units (opts->task_chunks then
	 *  counts units), and each unit is written on one worker as
	 *  unit_begin, put for each of its chunks inside the array in C order
	 *  of their position in the unit, one row of chunks (along dimension
	 *  0) at a time so that memory holds one row, never the unit, then
	 *  unit_end. After a failure or a stop between the two, unit_abort is
	 *  called instead: a unit is stored whole or not at all. unit_begin
	 *  returns 1 to skip a unit that is already stored (resume). */
	const uint64_t *unit_chunks;
	int (*unit_begin)(void *ctx, void **state, const uint64_t *unit_index);
	int (*unit_end)(void *ctx, void **state);
	void (*unit_abort)(void *ctx, void **state);
	uint64_t units[NZ_MAX_DIMS]; /**< storage unit_chunks may point to */
	/** Stored chunks move unchanged (the source's nz__stored_ops matched the
	 *  array: nz__target_from_array decides): for each chunk the engine
	 *  first asks the source for its stored bytes and, when it has them,
	 *  calls put_stored instead of put, in put's place in the order, with
	 *  the same state; a chunk the source does not store so is read and
	 *  put as usual. */
	int passthru;
	int (*put_stored)(void *ctx, void **state, const uint64_t *chunk_index, const void *enc,
			  size_t len);
	/** With passthru: 1 when put would leave out the chunk `data` (padded
	 *  with the fill value as put's chunks are), as the Zarr sink leaves
	 *  out a chunk of fill values under write_empty_chunks=False. Such a
	 *  moved chunk (its elements decoded from the stored bytes) is put
	 *  instead, so that the keys stored are the same whether a chunk was
	 *  moved or encoded. NULL = every moved chunk is put_stored. */
	int (*leaves_out)(const void *empty_ctx, const void *data);
	const void *empty_ctx;
} nz__target;

/** Fill `t` with the geometry, fill value and name of array `a` (put,
 *  state_free and ctx are left NULL for the caller), after checking that
 *  `src` may be written into it (fixed-size dtype, same dtype string). */
int nz__target_from_array(nz__target *t, nz_array *a, const nz_source *src);

/** Point t's sink at array `a` (t->ctx = a; t filled by
 *  nz__target_from_array first): nz_array_write_chunk per
 *  chunk, or, on a sharded Zarr v3 array, write units of one shard each,
 *  every shard one atomic streaming put (nz__shard_begin/put/end/abort);
 *  put_stored stores encoded bytes as the chunk's key or shard entry. */
void nz__target_sink_array(nz__target *t, nz_array *a);

/** The unsharded sink's put_stored (ctx = the nz_array): the bytes become
 *  the chunk's key's value. */
int nz__array_put_stored(void *ctx, void **state, const uint64_t *chunk_index, const void *enc,
			 size_t len);

/** The sharded sink's calls (ctx = the nz_array), for sinks that wrap it
 *  (resume): the worker's state is theirs to pass through unchanged. */
int nz__array_unit_begin(void *ctx, void **state, const uint64_t *unit_index);
int nz__array_unit_put(void *ctx, void **state, const uint64_t *chunk_index, const void *data,
		       size_t len);
int nz__array_unit_put_stored(void *ctx, void **state, const uint64_t *chunk_index, const void *enc,
			      size_t len);
int nz__array_unit_end(void *ctx, void **state);
void nz__array_unit_abort(void *ctx, void **state);
void nz__array_unit_state_free(void *state);

/** Whether shard `unit_index` of sharded array `a` is stored whole in
 *  `store`: 1 when its index reads back and validates (every chunk's range
 *  inside the object, none overlapping), 0 when it is missing, 2 when it is
 *  there but damaged (short, bad index or checksum); < 0 on other errors
 *  (I/O), with the message set. */
int nz__array_shard_stored(nz_array *a, nz_store *store, const uint64_t *unit_index);

/** Write every chunk of `t` from `src` as nz_write_array describes. */
int nz__write(const nz__target *t, nz_source *src, const nz_write_opts *opts);

/** Write every chunk of the n targets t[i] from src[i] in one write on one
 *  set of workers, as nz_write_arrays describes (opts->task_chunks must be
 *  NULL when n > 1). n == 1 is nz__write. */
int nz__write_multi(const nz__target *const *t, nz_source *const *src, size_t n,
		    const nz_write_opts *opts);

/** Writes of one chunk, or of chunks holding (padding included) at most
 *  this many bytes in all, run on the calling thread, without worker
 *  threads: see run.c. */
#define NZ__WRITE_INLINE_BYTES ((size_t)1 << 20)

/** How a write runs, and what its caller did, for tests and benchmarks. */
typedef struct nz__write_ctl {
	size_t inline_bytes; /**< in: the inline limit; 0 = always worker threads */
	int threads;         /**< out: worker threads started (0 = ran inline) */
	uint64_t waits;      /**< out: the caller's waits for the workers */
	uint64_t timeouts;   /**< out: those that ended by timing out (polls) */
} nz__write_ctl;

#define NZ__WRITE_CTL_INIT { NZ__WRITE_INLINE_BYTES, 0, 0, 0 }

/** nz__write with controls; ctl NULL = the defaults (as nz__write). */
int nz__write_ctl_run(const nz__target *t, nz_source *src, const nz_write_opts *opts,
		      nz__write_ctl *ctl);

/** nz__write_multi with controls; ctl NULL = the defaults. */
int nz__write_multi_ctl(const nz__target *const *t, nz_source *const *src, size_t n,
			const nz_write_opts *opts, nz__write_ctl *ctl);

/* ---- shared between run.c (the caller's side) and task.c (the workers) */

typedef struct nz__job nz__job;

/** One target of a write, with its source and this process's part of its
 *  plan. A write's items are kept in the order their tasks run: task
 *  indices [first, first + ntasks of plan) of the job are this item's. */
typedef struct nz__item {
	nz__job *job;
	const nz__target *t;
	nz_source *src;
	nz_plan *whole, *plan;
	size_t chunk_bytes;
	const unsigned char *memory; /* the source's data when it is in memory */
	int rows;                    /* read whole rows (nz__source_prefers_rows) */
	size_t read_block;           /* bytes per source read when gathering */
	uint64_t first;
	uint64_t tc[NZ_MAX_DIMS];    /* task shape, in chunks (or units) */
	uint64_t unit[NZ_MAX_DIMS];  /* elements per planned chunk (or unit) */
	size_t unit_bytes;           /* bytes of one planned chunk (or unit) */
	uint64_t bytes_total, chunks_total;
	size_t index;                /* the caller's index of this target */
} nz__item;

/** A worker's buffers and its sink state hold for one item at a time: a
 *  worker that moves to another item's task first releases them, so its
 *  memory is that of the item it works on, never the sum over items. */
typedef struct nz__worker {
	unsigned char **bufs; /* chunk buffers, chunk_bytes each */
	size_t nbufs;
	unsigned char *readbuf;
	size_t readcap;
	nz_buf stored;        /* a chunk's stored bytes (passthru) */
	nz_buf dec[2];        /* and its elements, decoded (passthru) */
	void *state;          /* the target's per-worker state */
	const nz__item *item; /* whose buffers and state these are; NULL = none */
} nz__worker;

struct nz__job {
	nz__item *items; /* in run order */
	size_t nitems;
	uint64_t ntasks; /* over all items */
	nz__worker *workers;

	atomic_uint_least64_t next; /* next task index to run */
	atomic_int stop;            /* set on the first error or on cancel */

	pthread_mutex_t mu; /* guards everything below */
	pthread_cond_t done_cv;
	uint64_t tasks_done; /* taken from the queue, run or skipped */
	uint64_t tasks_run, chunks_done, bytes_done;
	uint64_t units_skipped; /* unit_begin said "already stored" */
	int failed;
	const nz__item *failed_item;
	nz_error err; /* the first failure */
};

/** Pool entry point: run the job's next task on worker `worker`. */
void nz__job_run_one(void *job, int worker);

/** Free a worker's buffers and its sink state (through its item's
 *  target), leaving it holding nothing. */
void nz__worker_release(nz__worker *w);

#endif
