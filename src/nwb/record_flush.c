/* Recording: the compression pool's jobs, flushing (what makes frames
 * readable), the periodic flusher and closing.
 *
 * A flush is three steps, in this order, so a reader opening the store at
 * any moment sees lengths whose frames are stored: (1) every series' open
 * unit is copied into a partial job behind its full ones, and the flush
 * waits until each series has stored every job queued so far; (2) the new
 * lengths are published, timestamps before data (a repair cuts both to the
 * shorter); (3) the consolidated metadata is rewritten. Each put is atomic
 * (the store's temporary file + rename). */
#include <signal.h>
#include <string.h>

#include "nwb/record_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/resize.h"

/* ---- jobs ------------------------------------------------------------------ */

int nz__record_job_new(nz__record_job **out, nz_record_series *s, uint64_t unit,
		       int with_data)
{
	nz__record_job *j = NULL;
	*out = NULL;
	if (with_data) { /* a freed job's buffers: no fresh pages to fault in */
		pthread_mutex_lock(&s->r->mu);
		if ((j = s->spare)) {
			s->spare = j->next;
			s->n_spare--;
		}
		pthread_mutex_unlock(&s->r->mu);
		if (j) {
			j->next = NULL;
			j->unit = unit;
			j->nframes = 0;
			j->store = 0;
			*out = j;
			return 0;
		}
	}
	if (!(j = nz__calloc(1, sizeof *j)) || (with_data && !(j->data = nz__malloc(s->unit_bytes ? s->unit_bytes : 1))) ||
	    (with_data && s->ts && !(j->ts = nz__malloc((size_t)s->unit * sizeof *j->ts)))) {
		nz__record_job_free(j);
		return nz__error_set(NZ_ENOMEM, "out of memory recording '/%s'", s->path);
	}
	j->unit = unit;
	if (with_data)
		j->bytes = s->unit_bytes + (s->ts ? (size_t)s->unit * sizeof *j->ts : 0);
	*out = j;
	return 0;
}

void nz__record_job_free(nz__record_job *j)
{
	if (!j)
		return;
	nz__free(j->data);
	nz__free(j->ts);
	nz__free(j);
}

int nz__record_failed(nz_record *r)
{
	int err = 0;
	pthread_mutex_lock(&r->mu);
	if (r->failed)
		err = nz__error_restore(&r->error);
	pthread_mutex_unlock(&r->mu);
	return err;
}

static void fail_locked(nz_record *r)
{
	if (!r->failed) {
		r->failed = 1;
		nz__error_save(&r->error);
	}
	pthread_cond_broadcast(&r->cv);
}

void nz__record_fail(nz_record *r)
{
	pthread_mutex_lock(&r->mu);
	fail_locked(r);
	pthread_mutex_unlock(&r->mu);
}

int nz__record_wait_budget(nz_record *r)
{
	int err = 0;
	pthread_mutex_lock(&r->mu);
	while (!r->failed && r->queued > r->budget)
		pthread_cond_wait(&r->cv, &r->mu);
	if (r->failed)
		err = nz__error_restore(&r->error);
	pthread_mutex_unlock(&r->mu);
	return err;
}

int nz__record_push(nz_record_series *s, nz__record_job *j)
{
	nz_record *r = s->r;
	int err = 0, schedule = 0;
	pthread_mutex_lock(&r->mu);
	if (r->failed) {
		err = nz__error_restore(&r->error);
		nz__record_job_free(j);
		goto done;
	}
	if (s->tail)
		s->tail->next = j;
	else
		s->head = j;
	s->tail = j;
	s->pushed++;
	r->queued += j->bytes;
	if (!s->scheduled)
		schedule = s->scheduled = 1;
done:
	pthread_mutex_unlock(&r->mu);
	/* The queue holds each series at most once: this never waits. */
	if (schedule)
		nz__pool_add(r->pool, nz__record_run, s, 0);
	return err;
}

/* Frames [unit * s->unit, + nframes) of data and timestamps: encoded,
 * and their shards stored when complete or when a flush asks. */
static int write_job(nz_record_series *s, nz__record_job *j, nz_scratch *scratch)
{
	int err = nz__grow_put(s->gdata, scratch, j->unit, j->data, j->nframes, j->store);
	if (err == 0 && s->ts)
		err = nz__grow_put(s->gts, scratch, j->unit, j->ts, j->nframes, j->store);
	if (err < 0)
		nz__error_wrap("recording '/%s'", s->path);
	return err;
}

void nz__record_run(void *arg, int worker)
{
	nz_record_series *s = arg;
	nz_record *r = s->r;
	nz__record_job *j;
	int again, skip, err = 0;
	pthread_mutex_lock(&r->mu);
	j = s->head;
	s->head = j->next;
	if (!s->head)
		s->tail = NULL;
	skip = r->failed; /* after a failure, jobs are only dropped */
	pthread_mutex_unlock(&r->mu);
	if (!skip)
		err = write_job(s, j, r->scratch[worker]);
	pthread_mutex_lock(&r->mu);
	if (err < 0)
		fail_locked(r);
	r->queued -= j->bytes;
	s->done++;
	again = s->head != NULL;
	s->scheduled = again;
	if (j->data && s->n_spare < 1) {
		j->next = s->spare;
		s->spare = j;
		s->n_spare++;
		j = NULL;
	}
	pthread_cond_broadcast(&r->cv);
	pthread_mutex_unlock(&r->mu);
	nz__record_job_free(j);
	if (again)
		nz__pool_add(r->pool, nz__record_run, s, 0);
}

/* ---- flushing -------------------------------------------------------------- */

/* Step 1 for one series: queue a copy of its open chunk (or, at a chunk's
 * end, nothing but the order to store its shard); *target = jobs to wait
 * for. */
static int queue_partial(nz_record_series *s, uint64_t *frames, uint64_t *target)
{
	nz__record_job *j = NULL;
	uint64_t rows;
	int err = 0;
	pthread_mutex_lock(&s->mu);
	*frames = s->frames;
	rows = s->frames % s->unit;
	if (s->frames != s->partial_at) {
		if ((err = nz__record_job_new(&j, s, s->frames / s->unit, rows > 0)) < 0)
			goto done;
		if (rows) {
			memcpy(j->data, s->open->data, (size_t)rows * s->row_bytes);
			if (s->ts)
				memcpy(j->ts, s->open->ts, (size_t)rows * sizeof *j->ts);
		}
		j->nframes = rows;
		j->store = 1;
		/* Not held back by the budget: the flush must make progress. */
		if ((err = nz__record_push(s, j)) < 0)
			goto done;
		s->partial_at = s->frames;
	}
done:
	pthread_mutex_lock(&s->r->mu);
	*target = s->pushed;
	pthread_mutex_unlock(&s->r->mu);
	pthread_mutex_unlock(&s->mu);
	return err;
}

/* Step 2 for one series; its entries in r->cm follow, for step 3. */
static int publish(nz_record_series *s, uint64_t frames)
{
	uint64_t shape[2] = {frames, s->channels};
	int err;
	if (s->ts && (err = nz__array_resize(NULL, s->ts, &frames, s->r->cm)) < 0)
		return err;
	return nz__array_resize(NULL, s->data, shape, s->r->cm);
}

int nz__record_flush_locked(nz_record *r)
{
	uint64_t frames[NZ_RECORD_MAX_SERIES], target[NZ_RECORD_MAX_SERIES];
	size_t n = r->n_series, i;
	int err = 0, changed = 0;
	if ((err = nz__record_failed(r)) < 0)
		return err;
	for (i = 0; i < n; i++)
		if ((err = queue_partial(r->series[i], &frames[i], &target[i])) < 0)
			goto done;
	pthread_mutex_lock(&r->mu);
	for (i = 0; i < n && !r->failed; i++)
		while (!r->failed && r->series[i]->done < target[i])
			pthread_cond_wait(&r->cv, &r->mu);
	err = r->failed ? nz__error_restore(&r->error) : 0;
	pthread_mutex_unlock(&r->mu);
	if (err < 0)
		return err;
	for (i = 0; i < n; i++) {
		if (frames[i] == r->series[i]->published)
			continue;
		if ((err = publish(r->series[i], frames[i])) < 0)
			goto done;
		r->series[i]->published = frames[i];
		changed = 1;
	}
	/* Only the shapes changed since the last full consolidation (begin,
	 * add_series): r->cm is what nz_consolidate would write, no listing. */
	if (changed)
		err = nz__consolidated_put(r->f->store, r->cm);
done:
	if (err < 0) {
		nz__error_wrap("flushing '%s'", r->f->path);
		nz__record_fail(r);
	}
	return err;
}

int nz_record_flush(nz_record *r)
{
	int err;
	if (!r)
		return nz__error_set(NZ_EINVAL, "record flush: no recording");
	if (r->closed)
		return nz__error_set(NZ_EINVAL, "record flush '%s': already closed", r->f->path);
	pthread_mutex_lock(&r->flush_mu);
	err = nz__record_flush_locked(r);
	pthread_mutex_unlock(&r->flush_mu);
	return err;
}

/* ---- the periodic flusher -------------------------------------------------- */

/* Flushes keep a fixed rate (the next one is due an interval after the
 * last was due, not after it ended), so a frame waits at most about one
 * interval plus one flush to be readable; a flush that overran is followed
 * by the next at once. */
static void *flusher(void *arg)
{
	nz_record *r = arg;
	double due = nz__now();
	pthread_mutex_lock(&r->mu);
	while (!r->stop) {
		double t = nz__now();
		due += r->interval;
		if (due < t)
			due = t;
		/* Woken early only to stop; after a failure, nothing more to do. */
		while (!r->stop && (r->failed || (t = nz__now()) < due)) {
			struct timespec at = nz__deadline(r->failed ? 1000u
						: (unsigned)((due - t) * 1000.0 + 0.5));
			pthread_cond_timedwait(&r->stop_cv, &r->mu, &at);
		}
		if (r->stop)
			break;
		pthread_mutex_unlock(&r->mu);
		/* An error is kept by the flush itself and re-raised by the
		 * next call on the file. */
		nz_record_flush(r);
		pthread_mutex_lock(&r->mu);
	}
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int nz__record_flusher_start(nz_record *r)
{
	sigset_t all, old;
	int rc;
	/* Signals (Ctrl-C) belong to the caller's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&r->flusher, NULL, flusher, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return nz__error_errno(rc, "cannot start the flush thread of", r->f->path);
	r->has_flusher = 1;
	return 0;
}

void nz__record_flusher_stop(nz_record *r)
{
	if (!r->has_flusher)
		return;
	pthread_mutex_lock(&r->mu);
	r->stop = 1;
	pthread_cond_broadcast(&r->stop_cv);
	pthread_mutex_unlock(&r->mu);
	pthread_join(r->flusher, NULL);
	r->has_flusher = 0;
}

/* ---- closing --------------------------------------------------------------- */

int nz_record_close(nz_record *r)
{
	int err;
	if (!r)
		return nz__error_set(NZ_EINVAL, "record close: no recording");
	if (r->closed)
		return nz__error_set(NZ_EINVAL, "record close '%s': already closed", r->f->path);
	nz__record_flusher_stop(r);
	pthread_mutex_lock(&r->flush_mu);
	err = nz__record_flush_locked(r);
	r->closed = 1;
	r->f->closed = 1;
	pthread_mutex_unlock(&r->flush_mu);
	if (err == 0 && (err = nz__nwb_finish(r->f)) < 0)
		nz__error_wrap("finishing '%s'", r->f->path);
	return err;
}
