/* nz__ucopy_array: upgrade's copy of one fixed-size array, v2 -> v3, on
 * several threads. Units (shards) are handed out by an atomic counter;
 * nz_array_copy_unit makes each one from the source alone, so which thread
 * takes which unit never shows in the output. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#include "engine/pool.h" /* nz__now */
#include "export/upgrade_impl.h"
#include "util/alloc.h"
#include "util/error.h"

typedef struct ujob {
	nz_array *dst;
	const nz_array *src;
	uint64_t grid[NZ_MAX_DIMS], nunits;
	atomic_uint_fast64_t next, done, reused;
	atomic_int stop;
	pthread_mutex_t mu;
	int failed;
	nz_error err; /* the first failure, re-raised on the caller's thread */
} ujob;

/* Keep the first failure (this thread's error) and stop every thread. */
static void fail(ujob *j)
{
	pthread_mutex_lock(&j->mu);
	if (!j->failed) {
		j->failed = 1;
		nz__error_save(&j->err);
	}
	pthread_mutex_unlock(&j->mu);
	atomic_store(&j->stop, 1);
}

/* Copy the next unit; 0 when none is left (or the job stopped). */
static int copy_next(ujob *j, nz_scratch *s)
{
	uint64_t u, idx[NZ_MAX_DIMS], reused = 0, rest;
	int d, ndim = nz_array_ndim(j->dst);
	if (atomic_load(&j->stop) || (u = atomic_fetch_add(&j->next, 1)) >= j->nunits)
		return 0;
	for (d = ndim - 1, rest = u; d >= 0; d--) {
		idx[d] = rest % j->grid[d];
		rest /= j->grid[d];
	}
	if (nz_array_copy_unit(j->dst, j->src, s, idx, &reused) < 0) {
		fail(j);
		return 0;
	}
	atomic_fetch_add(&j->reused, reused);
	atomic_fetch_add(&j->done, 1);
	return 1;
}

static void *worker(void *p)
{
	ujob *j = p;
	nz_scratch *s = NULL;
	if (nz_scratch_new(&s) < 0) {
		fail(j);
		return NULL;
	}
	while (copy_next(j, s))
		;
	nz_scratch_free(s);
	return NULL;
}

static int report(ujob *j, const nz__ucopy_opts *o, uint64_t bytes, double t0)
{
	nz_progress pr;
	if (o->cancel_flag && *o->cancel_flag)
		return nz__error_set(NZ_ECANCELED, "'%s': cancelled", nz_array_path(j->dst));
	if (!o->progress)
		return 0;
	pr.chunks_done = atomic_load(&j->done);
	pr.chunks_total = j->nunits;
	pr.bytes_total = bytes;
	pr.bytes_done = j->nunits ? (uint64_t)((double)bytes * pr.chunks_done / j->nunits) : bytes;
	pr.elapsed_s = nz__now() - t0;
	if (o->progress(&pr, o->progress_ctx) != 0)
		return nz__error_set(NZ_ECANCELED, "'%s': cancelled by the progress callback",
				     nz_array_path(j->dst));
	return 0;
}

static int copy_units(nz_array *dst, nz_array *src, const nz__ucopy_opts *o, nz__ucopy_stats *st)
{
	pthread_t th[NZ_WRITE_MAX_JOBS];
	uint64_t bytes = nz_array_itemsize(src), nchunks = nz_array_nchunks(src);
	int t, started = 0, jobs = o->jobs ? o->jobs : nz_ncores(), err = 0, d;
	nz_scratch *s = NULL;
	double t0 = nz__now();
	ujob j;

	memset(&j, 0, sizeof j);
	j.dst = dst;
	j.src = src;
	nz_array_shard_grid(dst, j.grid);
	j.nunits = nz_array_nshards(dst);
	for (d = 0; d < nz_array_ndim(src); d++)
		bytes *= nz_array_shape(src)[d];
	if ((uint64_t)jobs > j.nunits)
		jobs = j.nunits ? (int)j.nunits : 1;
	if (pthread_mutex_init(&j.mu, NULL) != 0)
		return nz__error_set(NZ_ENOMEM, "'%s': cannot create a mutex", nz_array_path(dst));
	if ((err = nz_scratch_new(&s)) < 0)
		goto done;
	/* The calling thread is one of the jobs: it copies, reports progress and
	 * watches the cancel flag between its units. */
	for (t = 1; t < jobs; t++, started++)
		if (pthread_create(&th[started], NULL, worker, &j) != 0)
			break;
	st->jobs = started + 1;
	while (!err && copy_next(&j, s))
		if ((err = report(&j, o, bytes, t0)) < 0)
			atomic_store(&j.stop, 1);
	for (t = 0; t < started; t++)
		pthread_join(th[t], NULL);
	if (!err && j.failed)
		err = nz__error_restore(&j.err);
	if (!err)
		err = report(&j, o, bytes, t0);
	st->reused += atomic_load(&j.reused);
	st->recoded += nchunks - atomic_load(&j.reused);
done:
	nz_scratch_free(s);
	pthread_mutex_destroy(&j.mu);
	return err;
}

static int region_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	nz_array *a = ctx;
	size_t len = nz_array_itemsize(a);
	for (int d = 0; d < nz_array_ndim(a); d++)
		len *= (size_t)count[d];
	return nz_array_read_region(a, start, count, out, len);
}

int nz__ucopy_array(nz_array *dst, nz_array *src, const nz__ucopy_opts *o, nz__ucopy_stats *st)
{
	nz_source_ops ops = { NZ_SOURCE_OPS_VERSION, region_read, NULL };
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats ws = { 0 };
	nz_source *s = NULL;
	const char *dt = nz_array_dtype(src);
	char vdtype[32];
	int err, d, same = nz_array_ndim(dst) == nz_array_ndim(src);

	for (d = 0; same && d < nz_array_ndim(src); d++)
		same = nz_array_chunks(dst)[d] == nz_array_chunks(src)[d];
	if (same)
		return copy_units(dst, src, o, st);
	/* The engine takes a structured dtype's records as opaque "|V<size>". */
	snprintf(vdtype, sizeof vdtype, "|V%zu", nz_array_itemsize(src));
	if ((err = nz_source_from_callback(&s, &ops, src, dt[0] == '[' ? vdtype : dt, nz_array_ndim(src),
					   nz_array_shape(src))) < 0)
		return err;
	wo.jobs = o->jobs;
	wo.progress = o->progress;
	wo.progress_ctx = o->progress_ctx;
	wo.cancel_flag = o->cancel_flag;
	wo.stats = &ws;
	err = nz_write_array(dst, s, &wo);
	st->recoded += nz_array_nchunks(src);
	st->jobs = ws.jobs;
	nz_source_free(s);
	return err;
}
