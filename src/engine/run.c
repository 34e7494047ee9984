/* The caller's side of a write: choose the task shape and the number of
 * workers from the memory budget, feed task after task into the bounded
 * queue, and meanwhile report progress and watch for cancellation, all on
 * the calling thread. A small write (NZ__WRITE_INLINE_BYTES, or a single
 * chunk) skips the pool and runs its tasks on the calling thread. One write
 * may hold several targets (nz_write_arrays): their tasks share one queue
 * and one set of workers, largest tasks first. */
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

/* Chunk-sized buffers a worker holds besides its task's chunks and the
 * encoder output: a pass-through target's worker also keeps a chunk's
 * stored bytes and its two decode buffers (task.c, stored_chunk). */
static size_t extra_chunks(const nz__target *t)
{
	return t->passthru ? 3 : 0;
}

/* Workers and task shape. Each worker holds its chunk buffers plus about one
 * chunk of encoder output (and extra_chunks), so a worker costs (chunks per
 * task + 1 + extra) chunks. For a row-major source a task is a band of
 * chunks sharing rows, as wide as the budget allows, so each row is read as
 * few times as possible. */
static int choose_shape(uint64_t *tc, const nz__target *t, const nz_source *src, int jobs,
			size_t budget, size_t chunk_bytes)
{
	uint64_t grid[NZ_MAX_DIMS], nchunks = 1, gmax, left;
	size_t per_worker, extra = extra_chunks(t);
	int d, workers = jobs;

	if (chunk_bytes > 0 && budget / chunk_bytes / (2 + extra) < (size_t)workers)
		workers = (int)(budget / chunk_bytes / (2 + extra));
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
	gmax = per_worker / chunk_bytes > 1 + extra ? per_worker / chunk_bytes - 1 - extra : 1;
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

int nz__write(const nz__target *t, nz_source *src, const nz_write_opts *opts)
{
	return nz__write_multi_ctl(&t, &src, 1, opts, NULL);
}

int nz__write_ctl_run(const nz__target *t, nz_source *src, const nz_write_opts *opts,
		      nz__write_ctl *ctl)
{
	return nz__write_multi_ctl(&t, &src, 1, opts, ctl);
}

int nz__write_multi(const nz__target *const *t, nz_source *const *src, size_t n,
		    const nz_write_opts *opts)
{
	return nz__write_multi_ctl(t, src, n, opts, NULL);
}

/* Item `it` (t and src set): its plan, task shape and totals, and the
 * workers the budget lets it feed, *workers, as a write of it alone. */
static int plan_item(nz__item *it, int *workers, const nz_write_opts *opts, int jobs,
		     size_t budget)
{
	const nz__target *t = it->t;
	int err, i;

	if ((err = check_source(t, it->src)) < 0)
		return err;
	if (nz__prod_size(&it->chunk_bytes, t->chunks, t->ndim, t->itemsize) < 0)
		return nz__error_set(NZ_EINVAL, "writing '%s': chunk size overflows", t->name);
	if (t->unit_chunks) {
		/* One unit per task: a unit is already a large piece of work, and a
		 * worker's memory is one row of its chunks, whatever the unit's size. */
		size_t row_bytes = 0;
		if ((err = unit_geometry(it->unit, &row_bytes, t, it->chunk_bytes)) < 0)
			return err;
		*workers = jobs;
		row_bytes += extra_chunks(t) * it->chunk_bytes;
		if (row_bytes && budget / row_bytes < (size_t)*workers)
			*workers = budget / row_bytes ? (int)(budget / row_bytes) : 1;
		for (i = 0; i < t->ndim; i++)
			it->tc[i] = 1;
		if (nz__prod_size(&it->unit_bytes, it->unit, t->ndim, t->itemsize) < 0)
			it->unit_bytes = SIZE_MAX;
	} else {
		*workers = choose_shape(it->tc, t, it->src, jobs, budget, it->chunk_bytes);
		memcpy(it->unit, t->chunks, (size_t)t->ndim * sizeof *it->unit);
		it->unit_bytes = it->chunk_bytes;
	}
	if (opts->task_chunks)
		memcpy(it->tc, opts->task_chunks, (size_t)t->ndim * sizeof *it->tc);
	if ((err = nz_plan_new(&it->whole, t->ndim, t->shape, it->unit, it->tc)) < 0 ||
	    (err = nz_plan_part(&it->plan, it->whole, opts->nparts > 1 ? opts->part : 0,
				opts->nparts > 1 ? opts->nparts : 1)) < 0)
		return err;
	it->memory = nz__source_memory(it->src);
	it->rows = nz__source_prefers_rows(it->src);
	it->read_block = it->rows ? READ_BLOCK : it->chunk_bytes;
	it->bytes_total = plan_bytes(&it->chunks_total, t, it->plan, it->unit);
	return 0;
}

/* Bytes per task of an item, for the run order. */
static uint64_t task_bytes(const nz__item *it)
{
	uint64_t n = nz_plan_ntasks(it->plan);
	return n ? it->bytes_total / n : 0;
}

/* Whether item a runs after item b: NZ_SOURCE_LAST sources after the
 * others (they wait for the rows the others read), then smaller tasks. */
static int runs_after(const nz__item *a, const nz__item *b)
{
	int la = nz__source_runs_last(a->src), lb = nz__source_runs_last(b->src);
	return la != lb ? la > lb : task_bytes(a) < task_bytes(b);
}

/* The run order: largest tasks first (the longest-processing-time rule),
 * stable, so the workers spend the end of the write on the small streams'
 * tasks together rather than one stream's last task alone, and small
 * streams never wait for a worker of their own after the big ones; the
 * NZ_SOURCE_LAST sources after all others. Each item's tasks stay in plan
 * order; *ntasks = their sum. */
static void order_items(nz__item *items, size_t n, uint64_t *ntasks)
{
	for (size_t i = 1; i < n; i++) {
		nz__item x = items[i];
		size_t k = i;
		for (; k > 0 && runs_after(&items[k - 1], &x); k--)
			items[k] = items[k - 1];
		items[k] = x;
	}
	*ntasks = 0;
	for (size_t i = 0; i < n; i++) {
		items[i].first = *ntasks;
		*ntasks += nz_plan_ntasks(items[i].plan);
	}
}

/* Whether the items' chunks, padding included, fit the inline limit, or
 * the write is one chunk: one worker would do it all, and neither it nor
 * the caller could stop a chunk half-way, so a thread adds only hand-offs. */
static int runs_inline(const nz__item *items, size_t n, size_t limit)
{
	uint64_t chunks = 0, bytes = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t c = nz_plan_nchunks(items[i].plan);
		chunks += c;
		if (items[i].unit_bytes && c > (UINT64_MAX - bytes) / items[i].unit_bytes)
			bytes = UINT64_MAX;
		else
			bytes += c * items[i].unit_bytes;
	}
	if (chunks == 0 || limit == 0)
		return 0;
	return chunks == 1 || bytes <= limit;
}

static void fill_stats(nz_write_stats *s, const nz__job *job, const nz__item *first, int workers,
		       double start)
{
	memset(s, 0, sizeof *s);
	s->bytes = job->bytes_done;
	s->chunks = job->chunks_done;
	s->tasks = job->tasks_run;
	s->jobs = workers;
	if (first)
		memcpy(s->task_chunks, first->tc, (size_t)first->t->ndim * sizeof *first->tc);
	s->elapsed_s = start > 0 ? nz__now() - start : 0;
}

int nz__write_multi_ctl(const nz__target *const *t, nz_source *const *src, size_t n,
			const nz_write_opts *opts_in, nz__write_ctl *ctl_in)
{
	static const nz_write_opts defaults = NZ_WRITE_OPTS_INIT;
	const nz_write_opts *opts = opts_in ? opts_in : &defaults;
	nz__write_ctl dctl = NZ__WRITE_CTL_INIT, *ctl = ctl_in ? ctl_in : &dctl;
	const nz__item *first = NULL;
	nz__pool *pool = NULL;
	nz__job job;
	poller p;
	size_t budget, k;
	int err = 0, jobs, workers = 0, i, job_ready = 0, inl;

	ctl->threads = 0;
	ctl->waits = ctl->timeouts = 0;
	memset(&job, 0, sizeof job);
	memset(&p, 0, sizeof p);
	if (n == 0)
		return nz__error_set(NZ_EINVAL, "write: no arrays to write");
	if (opts->version != NZ_WRITE_OPTS_VERSION || opts->jobs < 0 ||
	    (opts->nparts > 1 && opts->part >= opts->nparts) || (n > 1 && opts->task_chunks))
		return nz__error_set(NZ_EINVAL, "writing '%s': bad write options (version, jobs, "
				     "part, or task_chunks for several arrays)", t[0]->name);
	jobs = opts->jobs > 0 ? opts->jobs : nz_ncores();
	if (jobs > NZ_WRITE_MAX_JOBS)
		jobs = NZ_WRITE_MAX_JOBS;
	budget = opts->buffer_size ? opts->buffer_size : NZ_WRITE_BUFFER_DEFAULT;
	if (!(job.items = nz__calloc(n, sizeof *job.items)))
		return nz__error_set(NZ_ENOMEM, "writing '%s': out of memory", t[0]->name);
	job.nitems = n;
	/* Every item as if written alone; the workers are the fewest any of
	 * them allows, so that a worker on any item stays inside the budget. */
	workers = jobs;
	for (k = 0; k < n; k++) {
		nz__item *it = &job.items[k];
		int w = 0;
		it->job = &job;
		it->t = t[k];
		it->src = src[k];
		it->index = k;
		if ((err = plan_item(it, &w, opts, jobs, budget)) < 0)
			goto done;
		if (w < workers)
			workers = w;
		p.bytes_total += it->bytes_total;
		p.chunks_total += it->chunks_total;
	}
	order_items(job.items, n, &job.ntasks);
	for (k = 0; k < n; k++)
		if (job.items[k].index == 0)
			first = &job.items[k];
	if ((uint64_t)workers > job.ntasks)
		workers = job.ntasks ? (int)job.ntasks : 1;
	if ((inl = runs_inline(job.items, n, ctl->inline_bytes)) != 0)
		workers = 1;

	atomic_init(&job.next, 0);
	atomic_init(&job.stop, 0);
	if (!(job.workers = nz__calloc((size_t)workers, sizeof *job.workers))) {
		err = nz__error_set(NZ_ENOMEM, "writing '%s': out of memory", t[0]->name);
		goto done;
	}
	pthread_mutex_init(&job.mu, NULL);
	nz__cond_init(&job.done_cv);
	job_ready = 1;

	p.opts = opts;
	p.job = &job;
	p.start = nz__now();
	p.interval_ms = opts->progress_interval_ms ? opts->progress_interval_ms : 100;
	p.ctl = ctl;
	if (inl) {
		run_inline(&p, job.ntasks);
	} else if (job.ntasks > 0) {
		if ((err = nz__pool_new(&pool, workers, 2 * (size_t)workers)) < 0)
			goto done;
		ctl->threads = workers;
		drive(&p, pool, job.ntasks);
		nz__pool_free(pool);
		pool = NULL;
	}
	report(&p, 1);

	if (job.failed) {
		const char *name = job.failed_item->t->name;
		err = nz__error_restore(&job.err);
		if (name && name[0] && !strstr(nz_error_last()->message, name))
			nz__error_wrap("writing '%s'", name);
	} else if (p.canceled) {
		err = nz__error_set(NZ_ECANCELED, "writing '%s'%s: canceled after %" PRIu64 " of %"
				    PRIu64 " chunks", t[0]->name,
				    n > 1 ? " and the other arrays" : "", job.chunks_done,
				    p.chunks_total);
	}
done:
	if (opts->stats)
		fill_stats(opts->stats, &job, first, workers, p.start);
	for (i = 0; job.workers && i < workers; i++)
		nz__worker_release(&job.workers[i]);
	nz__free(job.workers);
	if (job_ready) {
		pthread_mutex_destroy(&job.mu);
		pthread_cond_destroy(&job.done_cv);
	}
	for (k = 0; job.items && k < n; k++) {
		nz_plan_free(job.items[k].plan);
		nz_plan_free(job.items[k].whole);
	}
	nz__free(job.items);
	return err;
}
