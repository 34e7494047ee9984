/* The caller's side of a write: choose the task shape and the number of
 * workers from the memory budget, feed task after task into the bounded
 * queue, and meanwhile report progress and watch for cancellation, all on
 * the calling thread. A small write (NZ__WRITE_INLINE_BYTES, or a single
 * chunk) skips the pool and runs its tasks on the calling thread. */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "engine/box.h"
#include "engine/pool.h"
#include "engine/source.h"
#include "engine/write.h"
#include "util/alloc.h"
#include "util/error.h"

/* Bytes per source read when gathering rows: large enough that a read costs
 * little per byte, small enough to stay in cache while it is scattered. */
#define READ_BLOCK ((size_t)1 << 20)

int nz_ncores(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
#ifdef CPU_COUNT
	/* Respect taskset and container cpusets: the cores we may run on. */
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		n = CPU_COUNT(&set);
#endif
	return n < 1 ? 1 : n > NZ_WRITE_MAX_JOBS ? NZ_WRITE_MAX_JOBS : (int)n;
}

/* Workers and task shape. Each worker holds its chunk buffers plus about one
 * chunk of encoder output, so a worker costs (chunks per task + 1) chunks.
 * For a row-major source a task is a band of chunks sharing rows, as wide as
 * the budget allows, so each row is read as few times as possible. */
static int choose_shape(uint64_t *tc, const nz__target *t, const nz_source *src, int jobs,
			size_t budget, size_t chunk_bytes)
{
	uint64_t grid[NZ_MAX_DIMS], nchunks = 1, gmax, left;
	size_t per_worker;
	int d, workers = jobs;

	if (chunk_bytes > 0 && budget / 2 / chunk_bytes < (size_t)workers)
		workers = (int)(budget / 2 / chunk_bytes);
	if (workers < 1)
		workers = 1;
	for (d = 0; d < t->ndim; d++) {
		tc[d] = 1;
		grid[d] = t->shape[d] / t->chunks[d] + (t->shape[d] % t->chunks[d] != 0);
		nchunks *= grid[d];
	}
	if (!nz__source_prefers_rows(src) || t->ndim < 2 || chunk_bytes == 0)
		return workers;
	per_worker = budget / (size_t)workers;
	gmax = per_worker / chunk_bytes > 1 ? per_worker / chunk_bytes - 1 : 1;
	/* Keep a couple of tasks per worker so that none idles at the end. */
	if (gmax > nchunks / (2 * (uint64_t)workers))
		gmax = nchunks / (2 * (uint64_t)workers) ? nchunks / (2 * (uint64_t)workers) : 1;
	left = gmax;
	for (d = t->ndim - 1; d >= 1 && left > 1; d--) {
		if (grid[d] <= left) {
			tc[d] = grid[d];
			left /= grid[d];
		} else {
			uint64_t groups = grid[d] / left + (grid[d] % left != 0);
			tc[d] = grid[d] / groups + (grid[d] % groups != 0);
			left = 1;
		}
	}
	return workers;
}

static int check_source(const nz__target *t, const nz_source *src)
{
	const uint64_t *shape = nz_source_shape(src);
	int d;

	if (nz_source_ndim(src) != t->ndim)
		return nz__error_set(NZ_EMISMATCH, "writing '%s': source %s has %d dimensions, the "
				     "array %d", t->name, nz__source_describe(src),
				     nz_source_ndim(src), t->ndim);
	for (d = 0; d < t->ndim; d++)
		if (shape[d] != t->shape[d])
			return nz__error_set(NZ_EMISMATCH, "writing '%s': source %s has %" PRIu64
					     " elements along dimension %d, the array %" PRIu64,
					     t->name, nz__source_describe(src), shape[d], d,
					     t->shape[d]);
	if (nz_source_itemsize(src) != t->itemsize)
		return nz__error_set(NZ_EMISMATCH, "writing '%s': source %s has %zu-byte elements "
				     "(%s), the array %zu", t->name, nz__source_describe(src),
				     nz_source_itemsize(src), nz_source_dtype(src), t->itemsize);
	return 0;
}

/* Bytes of array data (inside the array's edges) in the plan's chunks (or
 * units: `unit` is the extent in elements of what the plan counts), and
 * *chunks = the array chunks they hold. */
static uint64_t plan_bytes(uint64_t *chunks, const nz__target *t, const nz_plan *plan,
			   const uint64_t *unit)
{
	uint64_t k, n = nz_plan_ntasks(plan), total = 0;
	nz_task task;
	int d;

	*chunks = 0;
	for (k = 0; k < n; k++) {
		uint64_t b = t->itemsize, c = 1;
		nz_plan_task(&task, plan, k);
		for (d = 0; d < t->ndim; d++) {
			uint64_t lo = task.chunk_start[d] * unit[d];
			uint64_t hi = (task.chunk_start[d] + task.chunk_count[d]) * unit[d];
			hi = hi < t->shape[d] ? hi : t->shape[d];
			b *= hi - lo;
			c *= (hi - lo) / t->chunks[d] + ((hi - lo) % t->chunks[d] != 0);
		}
		total += b;
		*chunks += c;
	}
	return total;
}

/* Units mode: the extent of a unit in elements, and the bytes a worker
 * holds for one row of a unit's chunks (plus one chunk of encoder output). */
static int unit_geometry(uint64_t *unit, size_t *row_bytes, const nz__target *t,
			 size_t chunk_bytes)
{
	uint64_t n = 1;
	int d;

	for (d = 0; d < t->ndim; d++) {
		if (t->unit_chunks[d] == 0 || t->unit_chunks[d] > UINT64_MAX / t->chunks[d])
			return nz__error_set(NZ_EINVAL, "writing '%s': bad write unit of %" PRIu64
					     " chunks in dimension %d", t->name, t->unit_chunks[d], d);
		unit[d] = t->unit_chunks[d] * t->chunks[d];
		if (d > 0)
			n *= t->unit_chunks[d];
	}
	if (n > SIZE_MAX / (chunk_bytes ? chunk_bytes : 1) - 1)
		return nz__error_set(NZ_EINVAL, "writing '%s': write unit size overflows", t->name);
	*row_bytes = (size_t)(n + 1) * chunk_bytes;
	return 0;
}

/* State the caller keeps between polls. */
typedef struct poller {
	const nz_write_opts *opts;
	nz__job *job;
	double start, next_report;
	unsigned interval_ms;
	int canceled;
	uint64_t chunks_total, bytes_total;
	nz__write_ctl *ctl;
} poller;

static void report(poller *p, int force)
{
	nz_progress pr;
	double now = nz__now();

	if (p->opts->cancel_flag && *p->opts->cancel_flag)
		p->canceled = 1;
	if (p->opts->progress && (force || now >= p->next_report)) {
		pthread_mutex_lock(&p->job->mu);
		pr.bytes_done = p->job->bytes_done;
		pr.chunks_done = p->job->chunks_done;
		pthread_mutex_unlock(&p->job->mu);
		pr.bytes_total = p->bytes_total;
		pr.chunks_total = p->chunks_total;
		pr.elapsed_s = now - p->start;
		p->next_report = now + p->interval_ms / 1000.0;
		if (p->opts->progress(&pr, p->opts->progress_ctx) != 0)
			p->canceled = 1;
	}
	if (p->canceled)
		atomic_store(&p->job->stop, 1);
}

/* Queue every task, then wait for the workers, polling all along. */
static void drive(poller *p, nz__pool *pool, uint64_t ntasks)
{
	nz__job *job = p->job;
	uint64_t submitted = 0;
	struct timespec deadline;

	report(p, 1);
	while (submitted < ntasks && !atomic_load(&job->stop)) {
		if (nz__pool_add(pool, nz__job_run_one, job, p->interval_ms) == 0) {
			submitted++;
		} else {
			p->ctl->waits++;
			p->ctl->timeouts++;
		}
		report(p, 0);
	}
	/* Every finished task signals done_cv under mu, so the wait ends when
	 * the last one does; the timeout only paces the polls of the cancel
	 * flag (a signal handler cannot signal a condition variable). */
	pthread_mutex_lock(&job->mu);
	while (job->tasks_done < submitted) {
		deadline = nz__deadline(p->interval_ms);
		p->ctl->waits++;
		if (pthread_cond_timedwait(&job->done_cv, &job->mu, &deadline) == ETIMEDOUT)
			p->ctl->timeouts++;
		pthread_mutex_unlock(&job->mu);
		report(p, 0);
		pthread_mutex_lock(&job->mu);
	}
	pthread_mutex_unlock(&job->mu);
}

/* A small write runs on the calling thread, as worker 0: starting threads,
 * handing them the work and waiting for them to finish and exit costs more
 * than the write, and on a busy machine each hand-off waits for the
 * scheduler, milliseconds each. Signals are blocked while a task runs, as
 * on a worker (a put never runs a handler; one that arrives meanwhile is
 * delivered when the task ends, which is soon: the write is small). The
 * cancel flag and progress are looked at between tasks. */
static void run_inline(poller *p, uint64_t ntasks)
{
	sigset_t all, old;
	uint64_t k;

	sigfillset(&all);
	report(p, 1);
	for (k = 0; k < ntasks && !atomic_load(&p->job->stop); k++) {
		pthread_sigmask(SIG_SETMASK, &all, &old);
		nz__job_run_one(p->job, 0);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		report(p, 0);
	}
}

/* Whether the plan's chunks, padding included, fit the inline limit, or
 * the plan is one chunk: one worker would do it all, and neither it nor the
 * caller could stop a chunk half-way, so a thread adds only hand-offs. */
static int runs_inline(const nz_plan *plan, size_t chunk_bytes, size_t limit)
{
	uint64_t n = nz_plan_nchunks(plan);

	if (n == 0 || limit == 0)
		return 0;
	return n == 1 || chunk_bytes == 0 || n <= limit / chunk_bytes;
}

int nz__write(const nz__target *t, nz_source *src, const nz_write_opts *opts)
{
	return nz__write_ctl_run(t, src, opts, NULL);
}

int nz__write_ctl_run(const nz__target *t, nz_source *src, const nz_write_opts *opts_in,
		      nz__write_ctl *ctl_in)
{
	static const nz_write_opts defaults = NZ_WRITE_OPTS_INIT;
	const nz_write_opts *opts = opts_in ? opts_in : &defaults;
	nz__write_ctl dctl = NZ__WRITE_CTL_INIT, *ctl = ctl_in ? ctl_in : &dctl;
	uint64_t tc[NZ_MAX_DIMS], unit[NZ_MAX_DIMS], ntasks;
	nz_plan *whole = NULL, *part = NULL;
	nz__pool *pool = NULL;
	nz__job job;
	poller p;
	size_t budget, chunk_bytes, plan_unit_bytes;
	int err = 0, jobs, workers, i, job_ready = 0, inl;

	ctl->threads = 0;
	ctl->waits = ctl->timeouts = 0;
	memset(&job, 0, sizeof job);
	memset(&p, 0, sizeof p);
	if (opts->version != NZ_WRITE_OPTS_VERSION || opts->jobs < 0 ||
	    (opts->nparts > 1 && opts->part >= opts->nparts))
		return nz__error_set(NZ_EINVAL, "writing '%s': bad write options (version, jobs or "
				     "part)", t->name);
	if ((err = check_source(t, src)) < 0)
		return err;
	if (nz__prod_size(&chunk_bytes, t->chunks, t->ndim, t->itemsize) < 0)
		return nz__error_set(NZ_EINVAL, "writing '%s': chunk size overflows", t->name);
	jobs = opts->jobs > 0 ? opts->jobs : nz_ncores();
	if (jobs > NZ_WRITE_MAX_JOBS)
		jobs = NZ_WRITE_MAX_JOBS;
	budget = opts->buffer_size ? opts->buffer_size : NZ_WRITE_BUFFER_DEFAULT;
	if (t->unit_chunks) {
		/* One unit per task: a unit is already a large piece of work, and a
		 * worker's memory is one row of its chunks, whatever the unit's size. */
		size_t row_bytes = 0;
		if ((err = unit_geometry(unit, &row_bytes, t, chunk_bytes)) < 0)
			return err;
		workers = jobs;
		if (row_bytes && budget / row_bytes < (size_t)workers)
			workers = budget / row_bytes ? (int)(budget / row_bytes) : 1;
		for (i = 0; i < t->ndim; i++)
			tc[i] = 1;
		if (nz__prod_size(&plan_unit_bytes, unit, t->ndim, t->itemsize) < 0)
			plan_unit_bytes = SIZE_MAX;
	} else {
		workers = choose_shape(tc, t, src, jobs, budget, chunk_bytes);
		memcpy(unit, t->chunks, (size_t)t->ndim * sizeof *unit);
		plan_unit_bytes = chunk_bytes;
	}
	if (opts->task_chunks)
		memcpy(tc, opts->task_chunks, (size_t)t->ndim * sizeof *tc);
	if ((err = nz_plan_new(&whole, t->ndim, t->shape, unit, tc)) < 0)
		goto done;
	if ((err = nz_plan_part(&part, whole, opts->nparts > 1 ? opts->part : 0,
				opts->nparts > 1 ? opts->nparts : 1)) < 0)
		goto done;
	ntasks = nz_plan_ntasks(part);
	if ((uint64_t)workers > ntasks)
		workers = ntasks ? (int)ntasks : 1;
	if ((inl = runs_inline(part, plan_unit_bytes, ctl->inline_bytes)) != 0)
		workers = 1;

	job.t = t;
	job.src = src;
	job.plan = part;
	job.chunk_bytes = chunk_bytes;
	job.memory = nz__source_memory(src);
	job.rows = nz__source_prefers_rows(src);
	job.read_block = job.rows ? READ_BLOCK : chunk_bytes;
	atomic_init(&job.next, 0);
	atomic_init(&job.stop, 0);
	if (!(job.workers = nz__calloc((size_t)workers, sizeof *job.workers))) {
		err = nz__error_set(NZ_ENOMEM, "writing '%s': out of memory", t->name);
		goto done;
	}
	pthread_mutex_init(&job.mu, NULL);
	nz__cond_init(&job.done_cv);
	job_ready = 1;

	p.opts = opts;
	p.job = &job;
	p.start = nz__now();
	p.interval_ms = opts->progress_interval_ms ? opts->progress_interval_ms : 100;
	p.bytes_total = plan_bytes(&p.chunks_total, t, part, unit);
	p.ctl = ctl;
	if (inl) {
		run_inline(&p, ntasks);
	} else if (ntasks > 0) {
		if ((err = nz__pool_new(&pool, workers, 2 * (size_t)workers)) < 0)
			goto done;
		ctl->threads = workers;
		drive(&p, pool, ntasks);
		nz__pool_free(pool);
		pool = NULL;
	}
	report(&p, 1);

	if (job.failed) {
		err = nz__error_restore(&job.err);
		if (t->name && t->name[0] && !strstr(nz_error_last()->message, t->name))
			nz__error_wrap("writing '%s'", t->name);
	} else if (p.canceled) {
		err = nz__error_set(NZ_ECANCELED, "writing '%s': canceled after %" PRIu64 " of %"
				    PRIu64 " chunks", t->name, job.chunks_done, p.chunks_total);
	}
done:
	if (opts->stats) {
		nz_write_stats *s = opts->stats;
		memset(s, 0, sizeof *s);
		s->bytes = job.bytes_done;
		s->chunks = job.chunks_done;
		s->tasks = job.tasks_run;
		s->jobs = workers;
		memcpy(s->task_chunks, tc, (size_t)t->ndim * sizeof *tc);
		s->elapsed_s = p.start > 0 ? nz__now() - p.start : 0;
	}
	for (i = 0; job.workers && i < workers; i++) {
		nz__worker_release(&job.workers[i]);
		if (job.workers[i].state && t->state_free)
			t->state_free(job.workers[i].state);
	}
	nz__free(job.workers);
	if (job_ready) {
		pthread_mutex_destroy(&job.mu);
		pthread_cond_destroy(&job.done_cv);
	}
	nz_plan_free(part);
	nz_plan_free(whole);
	return err;
}
