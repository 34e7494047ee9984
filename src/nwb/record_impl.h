/* Internal: the state of a recording (record.c, record_flush.c).
 *
 * Locks, always taken in this order: r->flush_mu (one flush, series
 * creation), s->mu (a series' open buffer and frame count), r->mu (the
 * job queues, the budget, the first failure). Worker threads take r->mu
 * only; an append waits for budget holding neither s->mu nor r->mu (a
 * condition wait), so neither a worker nor a flush waits behind it. */
#ifndef NZ_NWB_RECORD_IMPL_H
#define NZ_NWB_RECORD_IMPL_H

#include <pthread.h>

#include "engine/pool.h"
#include "nwb/nwb_impl.h"
#include "nwbzarr/record.h"
#include "zarr/resize.h"

/** One inner chunk of frames for the pool: frames [unit * s->unit, +
 *  nframes) of the series (a full chunk, or a flush's copy of the partial
 *  one), encoded by nz__grow, which keeps a shard's full chunks until the
 *  shard is complete or a flush (`store`) writes it. */
typedef struct nz__record_job {
	struct nz__record_job *next;
	uint64_t unit;
	uint64_t nframes;
	int store;           /**< a flush's: write the shard up to here */
	unsigned char *data; /**< s->unit_bytes; NULL when nframes is 0 */
	double *ts;          /**< s->unit values, or NULL */
	size_t bytes;        /**< counted against the budget */
} nz__record_job;

struct nz_record_series {
	nz_record *r;
	char *path;             /**< the series group: "acquisition/<name>" */
	nz_array *data, *ts;    /**< as created (0 frames); ts NULL without timestamps */
	nz__grow *gdata, *gts;  /**< their writers (the pool's, one job at a time) */
	int ndim;               /**< of data: 1 or 2 */
	uint64_t channels;      /**< >= 1 */
	uint64_t unit;          /**< frames per inner chunk of data (and timestamps) */
	size_t itemsize, row_bytes, unit_bytes;
	/* the appending thread's side, under mu */
	pthread_mutex_t mu;
	nz__record_job *open;      /**< the unit being filled, or NULL */
	uint64_t frames;        /**< appended */
	/* queue, under r->mu: one worker at a time runs a series' jobs, in
	 * order, so a rewritten partial unit never lands after its full one */
	nz__record_job *head, *tail;
	int scheduled;
	uint64_t pushed, done;
	nz__record_job *spare;  /**< freed full jobs kept for reuse (page faults) */
	int n_spare;
	/* flushing, under r->flush_mu */
	uint64_t published;     /**< frames whose length is published */
	uint64_t partial_at;    /**< frame count of the last partial unit stored */
};

struct nz_record {
	nz_nwb *f;
	int closed;
	double interval;
	nz__pool *pool;
	int threads;
	nz_scratch **scratch;   /**< one per worker */
	pthread_mutex_t mu;
	pthread_cond_t cv;      /**< budget freed, a job done, a failure */
	size_t budget, queued;
	int auto_budget;        /**< budget grows with the series (opts gave 0) */
	int failed;
	nz_error error;         /**< the first failure, re-raised by every call */
	json_t *cm;             /**< the consolidated document as stored (nz__record_consolidate) */
	nz_record_series *series[NZ_RECORD_MAX_SERIES];
	size_t n_series;
	pthread_mutex_t flush_mu;
	pthread_t flusher;
	int has_flusher, stop;
	pthread_cond_t stop_cv; /**< with mu: wakes the flusher to stop */
};

/** Queue `j` on `s` for the pool (takes r->mu; never waits). On failure
 *  (an earlier one re-raised) j is freed. */
int nz__record_push(nz_record_series *s, nz__record_job *j);

/** Back-pressure: wait while the queued bytes exceed the budget. Called
 *  without s->mu, so a flush never waits behind an append that waits for
 *  budget (each series may thus queue one chunk past the budget). Returns
 *  the recording's failure, if any. */
int nz__record_wait_budget(nz_record *r);

/** A new job for chunk `unit`, its buffers allocated (not filled; a spare
 *  one reused when there is one) when `with_data`. Takes r->mu. */
int nz__record_job_new(nz__record_job **out, nz_record_series *s, uint64_t unit,
		       int with_data);
void nz__record_job_free(nz__record_job *j);

/** The first failure, re-raised on this thread; 0 when none. */
int nz__record_failed(nz_record *r);

/** Keep this thread's error as the recording's first failure. */
void nz__record_fail(nz_record *r);

/** Flush under r->flush_mu (held by the caller). */
int nz__record_flush_locked(nz_record *r);

/** nz_consolidate (it lists the store: for a new node, not a new shape),
 *  then keep what it wrote in r->cm. Under flush_mu or before threads. */
int nz__record_consolidate(nz_record *r, nz_store *store);

/** Start / stop the periodic flusher thread. */
int nz__record_flusher_start(nz_record *r);
void nz__record_flusher_stop(nz_record *r);

/** The pool's function: run the next job of series `arg`. */
void nz__record_run(void *arg, int worker);

/** Write the recorded series' list into the incomplete marker (repair
 *  reads it). Under flush_mu. */
int nz__record_marker(nz_record *r, nz_nwb *f);

#endif
