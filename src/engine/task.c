/* The worker side: run one task. A task is a box of whole chunks, or of
 * whole write units (shards), each of which is a box of chunks begun and
 * ended around it; a box is processed one chunk-row (one chunk index along
 * dim 0) at a time. Three ways
 * to fill a chunk buffer, cheapest first:
 *  - memory source: copy straight from the source's array;
 *  - direct: the chunk's data is one contiguous run of the source read (a
 *    chunk spanning all trailing dimensions): read into the chunk buffer;
 *  - gather: read blocks of rows once (whole rows for a row-major file) and
 *    scatter them into the buffers of every chunk of the task's chunk-row.
 * A job may write several targets (items): a task index names an item and
 * one of its tasks, and the worker's buffers follow it from item to item. */
#include <string.h>

#include "engine/box.h"
#include "engine/source.h"
#include "engine/write.h"
#include "util/alloc.h"
#include "util/error.h"

enum { STOPPED = 1, NOT_STORED = 2 };

static int ensure_bufs(nz__worker *w, size_t n, size_t bytes)
{
	unsigned char **bufs;
	size_t i;

	if (w->nbufs >= n)
		return 0;
	if (!(bufs = nz__realloc(w->bufs, n * sizeof *bufs)))
		return nz__error_set(NZ_ENOMEM, "engine: out of memory for %zu chunk buffers", n);
	w->bufs = bufs;
	for (i = w->nbufs; i < n; i++) {
		if (!(bufs[i] = nz__malloc(bytes ? bytes : 1)))
			return nz__error_set(NZ_ENOMEM, "engine: out of memory for a chunk buffer of "
					     "%zu bytes", bytes);
		w->nbufs++;
	}
	return 0;
}

static int ensure_readbuf(nz__worker *w, size_t bytes)
{
	if (w->readcap >= bytes)
		return 0;
	nz__free(w->readbuf);
	w->readcap = 0;
	if (!(w->readbuf = nz__malloc(bytes)))
		return nz__error_set(NZ_ENOMEM, "engine: out of memory for a read buffer of %zu bytes",
				     bytes);
	w->readcap = bytes;
	return 0;
}

void nz__worker_release(nz__worker *w)
{
	size_t i;

	for (i = 0; i < w->nbufs; i++)
		nz__free(w->bufs[i]);
	nz__free(w->bufs);
	nz__free(w->readbuf);
	nz__buf_free(&w->stored);
	nz__buf_free(&w->dec[0]);
	nz__buf_free(&w->dec[1]);
	if (w->state && w->item && w->item->t->state_free)
		w->item->t->state_free(w->state);
	w->bufs = NULL;
	w->readbuf = NULL;
	w->state = NULL;
	w->item = NULL;
	w->nbufs = w->readcap = 0;
}

/* One chunk of a chunk-row: its grid index, element origin and extent
 * (clipped at the array's edge). */
typedef struct chunk_box {
	uint64_t index[NZ_MAX_DIMS];
	uint64_t origin[NZ_MAX_DIMS];
	uint64_t extent[NZ_MAX_DIMS];
	int partial;
} chunk_box;

/* The g-th chunk (C order) of the task's chunk-row `row`. */
static void chunk_of(chunk_box *c, const nz__target *t, const nz_task *task, uint64_t row,
		     uint64_t g)
{
	int d;

	c->partial = 0;
	for (d = t->ndim - 1; d >= 0; d--) {
		uint64_t k = d == 0 ? row : task->chunk_start[d] + g % task->chunk_count[d];
		if (d > 0)
			g /= task->chunk_count[d];
		c->index[d] = k;
		c->origin[d] = k * t->chunks[d];
		c->extent[d] = t->shape[d] - c->origin[d] < t->chunks[d] ? t->shape[d] - c->origin[d]
									 : t->chunks[d];
		if (c->extent[d] != t->chunks[d])
			c->partial = 1;
	}
}

static uint64_t box_elements(const uint64_t *extent, int ndim)
{
	uint64_t n = 1;
	int d;

	for (d = 0; d < ndim; d++)
		n *= extent[d];
	return n;
}

static void count_chunk(const nz__item *it, const chunk_box *c)
{
	const nz__target *t = it->t;

	pthread_mutex_lock(&it->job->mu);
	it->job->chunks_done++;
	it->job->bytes_done += box_elements(c->extent, t->ndim) * t->itemsize;
	pthread_mutex_unlock(&it->job->mu);
}

static int put_chunk(const nz__item *it, nz__worker *w, const chunk_box *c, const unsigned char *buf)
{
	const nz__target *t = it->t;
	int err;

	if (atomic_load(&it->job->stop))
		return STOPPED;
	if ((err = t->put(t->ctx, &w->state, c->index, buf, it->chunk_bytes)) < 0)
		return err;
	count_chunk(it, c);
	return 0;
}

/* Fill what the data will not cover. When only dimension 0 is cut (the
 * last chunk-row of a recording; every chunk of one shorter than a chunk)
 * the data is the first extent[0] rows and only the rest needs the fill;
 * otherwise the gaps are scattered and the whole chunk is filled first. */
static void pad(const nz__item *it, unsigned char *buf, const chunk_box *c)
{
	const nz__target *t = it->t;
	size_t skip = 0;
	int d;

	if (!c->partial)
		return;
	for (d = 1; d < t->ndim && c->extent[d] == t->chunks[d]; d++)
		;
	if (d == t->ndim && t->ndim > 0)
		skip = (size_t)c->extent[0] * (it->chunk_bytes / (size_t)t->chunks[0]);
	nz__fill_elements(buf + skip, (it->chunk_bytes - skip) / t->itemsize, t->fill,
			  t->itemsize);
}

/* A moved edge chunk as put would be given it: the stored chunk's padding
 * past the array's edge is not data, so the elements inside go into a
 * chunk buffer padded with the fill value, as the encode path fills it. */
static int as_put(const nz__item *it, nz__worker *w, const chunk_box *c, const void **chunk)
{
	static const uint64_t zero[NZ_MAX_DIMS];
	const nz__target *t = it->t;
	int err;

	if ((err = ensure_bufs(w, 1, it->chunk_bytes)) < 0)
		return err;
	pad(it, w->bufs[0], c);
	nz__copy_box(w->bufs[0], t->chunks, zero, *chunk, t->chunks, zero, c->extent, t->ndim, t->itemsize);
	*chunk = w->bufs[0];
	return 0;
}

/* Move chunk c's stored bytes from the source, unchanged, when it has
 * them; NOT_STORED when the chunk is to be read and encoded instead. The
 * source decodes each (a corrupt chunk fails the write); a chunk that put
 * would leave out as empty goes to put, as if it had been encoded. */
static int stored_chunk(const nz__item *it, nz__worker *w, const chunk_box *c)
{
	const nz__target *t = it->t;
	const void *chunk = NULL;
	int err;

	if (atomic_load(&it->job->stop))
		return STOPPED;
	if ((err = nz__source_read_stored(it->src, c->index, &w->stored, w->dec, &chunk)) != 0)
		return err < 0 ? err : NOT_STORED;
	if (t->leaves_out) {
		if (c->partial && (err = as_put(it, w, c, &chunk)) < 0)
			return err;
		if (t->leaves_out(t->empty_ctx, chunk))
			return put_chunk(it, w, c, chunk);
	}
	if ((err = t->put_stored(t->ctx, &w->state, c->index, w->stored.data, w->stored.len)) < 0)
		return err;
	count_chunk(it, c);
	return 0;
}

/* A chunk whose trailing extents are whole chunks, and, for a row-major
 * source, whole rows: its rows are contiguous both in the source read and
 * in the chunk buffer. */
static int is_direct(const nz__item *it, const chunk_box *c)
{
	int d;

	for (d = 1; d < it->t->ndim; d++) {
		if (c->extent[d] != it->t->chunks[d])
			return 0;
		if (it->rows && c->extent[d] != it->t->shape[d])
			return 0;
	}
	return 1;
}

/* Fill one chunk on its own (memory source, direct read, 0-d array). */
static int single_chunk(const nz__item *it, nz__worker *w, const chunk_box *c)
{
	const nz__target *t = it->t;
	static const uint64_t zero[NZ_MAX_DIMS];
	unsigned char *buf;
	size_t len;
	int err;

	if ((err = ensure_bufs(w, 1, it->chunk_bytes)) < 0)
		return err;
	buf = w->bufs[0];
	pad(it, buf, c);
	if (it->memory) {
		nz__copy_box(buf, t->chunks, zero, it->memory, t->shape, c->origin, c->extent, t->ndim,
			     t->itemsize);
	} else {
		len = (size_t)box_elements(c->extent, t->ndim) * t->itemsize;
		if ((err = nz_source_read(it->src, c->origin, c->extent, buf, len)) < 0)
			return err;
	}
	return put_chunk(it, w, c, buf);
}

/* The gather path for one chunk-row of a task, whose chunks are cb[0..n). */
static int gather_row(const nz__item *it, nz__worker *w, const chunk_box *cb, size_t n)
{
	const nz__target *t = it->t;
	uint64_t lo[NZ_MAX_DIMS], ext[NZ_MAX_DIMS], dst_off[NZ_MAX_DIMS], src_off[NZ_MAX_DIMS],
		 count[NZ_MAX_DIMS], first_row = cb[0].origin[0], nrows = cb[0].extent[0], r, step;
	size_t row_bytes = t->itemsize, g;
	int d, err;

	if ((err = ensure_bufs(w, n, it->chunk_bytes)) < 0)
		return err;
	/* The box read per block of rows: whole rows for a row-major source,
	 * otherwise just the task's columns. */
	for (d = 1; d < t->ndim; d++) {
		const chunk_box *last = &cb[n - 1];
		lo[d] = it->rows ? 0 : cb[0].origin[d];
		ext[d] = it->rows ? t->shape[d] : last->origin[d] + last->extent[d] - lo[d];
		row_bytes *= (size_t)ext[d];
	}
	step = it->read_block / row_bytes ? it->read_block / row_bytes : 1;
	if (step > nrows)
		step = nrows;
	if ((err = ensure_readbuf(w, (size_t)step * row_bytes)) < 0)
		return err;
	for (g = 0; g < n; g++)
		pad(it, w->bufs[g], &cb[g]);
	for (r = 0; r < nrows; r += step) {
		if (atomic_load(&it->job->stop))
			return STOPPED;
		lo[0] = first_row + r;
		ext[0] = nrows - r < step ? nrows - r : step;
		if ((err = nz_source_read(it->src, lo, ext, w->readbuf, (size_t)ext[0] * row_bytes)) < 0)
			return err;
		for (g = 0; g < n; g++) {
			dst_off[0] = r;
			src_off[0] = 0;
			count[0] = ext[0];
			for (d = 1; d < t->ndim; d++) {
				dst_off[d] = 0;
				src_off[d] = cb[g].origin[d] - lo[d];
				count[d] = cb[g].extent[d];
			}
			nz__copy_box(w->bufs[g], t->chunks, dst_off, w->readbuf, ext, src_off, count,
				     t->ndim, t->itemsize);
		}
	}
	for (g = 0; g < n; g++)
		if ((err = put_chunk(it, w, &cb[g], w->bufs[g])) != 0)
			return err;
	return 0;
}

/* A box of whole chunks, one chunk-row at a time. */
static int run_box(const nz__item *it, nz__worker *w, const nz_task *box)
{
	const nz__target *t = it->t;
	chunk_box *cb = NULL;
	uint64_t row, n = 1, g;
	int d, err = 0;

	if (t->ndim == 0) {
		chunk_box c = {{0}, {0}, {0}, 0};
		return single_chunk(it, w, &c);
	}
	for (d = 1; d < t->ndim; d++)
		n *= box->chunk_count[d];
	if (!(cb = nz__calloc((size_t)n, sizeof *cb)))
		return nz__error_set(NZ_ENOMEM, "engine: out of memory");
	for (row = box->chunk_start[0]; row < box->chunk_start[0] + box->chunk_count[0]; row++) {
		for (g = 0; g < n; g++)
			chunk_of(&cb[g], t, box, row, g);
		if (t->passthru) {
			/* Chunk by chunk, each moved or else filled as below. */
			for (g = 0; g < n && err == 0; g++)
				if ((err = stored_chunk(it, w, &cb[g])) == NOT_STORED)
					err = it->memory || is_direct(it, &cb[g]) ? single_chunk(it, w, &cb[g])
										   : gather_row(it, w, &cb[g], 1);
		} else if (it->memory || (n == 1 && is_direct(it, &cb[0]))) {
			for (g = 0; g < n && err == 0; g++)
				err = single_chunk(it, w, &cb[g]);
		} else if (!it->rows) {
			/* A source without the rows hint (an HDF5 dataset) is
			 * read chunk box by chunk box: a band read in blocks of
			 * rows would decode every source chunk it crosses once
			 * per block. */
			for (g = 0; g < n && err == 0; g++)
				err = is_direct(it, &cb[g]) ? single_chunk(it, w, &cb[g])
							    : gather_row(it, w, &cb[g], 1);
		} else {
			err = gather_row(it, w, cb, (size_t)n);
		}
		if (err != 0)
			break;
	}
	nz__free(cb);
	return err;
}

/* The chunks of unit `u` that lie inside the array's chunk grid. */
static void unit_box(nz_task *box, const nz__target *t, const uint64_t *u)
{
	memset(box, 0, sizeof *box);
	box->ndim = t->ndim;
	for (int d = 0; d < t->ndim; d++) {
		uint64_t grid = t->shape[d] / t->chunks[d] + (t->shape[d] % t->chunks[d] != 0);
		box->chunk_start[d] = u[d] * t->unit_chunks[d];
		box->chunk_count[d] = grid - box->chunk_start[d] < t->unit_chunks[d]
					      ? grid - box->chunk_start[d]
					      : t->unit_chunks[d];
	}
}

/* A task of whole units (the plan's "chunks" are units): each in C order,
 * begun, filled row by row, and ended, or aborted when anything stops it. */
static int run_units(const nz__item *it, nz__worker *w, const nz_task *task)
{
	const nz__target *t = it->t;
	uint64_t u[NZ_MAX_DIMS], n = 1, k;
	int d, err = 0;

	for (d = 0; d < t->ndim; d++)
		n *= task->chunk_count[d];
	for (k = 0; k < n && err == 0; k++) {
		uint64_t rest = k;
		nz_task box;
		for (d = t->ndim - 1; d >= 0; d--) {
			u[d] = task->chunk_start[d] + rest % task->chunk_count[d];
			rest /= task->chunk_count[d];
		}
		if (atomic_load(&it->job->stop))
			return STOPPED;
		if ((err = t->unit_begin(t->ctx, &w->state, u)) < 0)
			return err;
		if (err == 1) { /* already stored */
			pthread_mutex_lock(&it->job->mu);
			it->job->units_skipped++;
			pthread_mutex_unlock(&it->job->mu);
			err = 0;
			continue;
		}
		unit_box(&box, t, u);
		if ((err = run_box(it, w, &box)) == 0)
			err = t->unit_end(t->ctx, &w->state);
		else
			t->unit_abort(t->ctx, &w->state);
	}
	return err;
}

static int run_task(const nz__item *it, nz__worker *w, uint64_t i)
{
	nz_task task;
	int err;

	if ((err = nz_plan_task(&task, it->plan, i)) < 0)
		return err;
	return it->t->unit_chunks ? run_units(it, w, &task) : run_box(it, w, &task);
}

/* The item whose tasks include job task i (items are in run order). */
static const nz__item *item_of(const nz__job *job, uint64_t i)
{
	size_t lo = 0, hi = job->nitems;

	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (job->items[mid].first <= i)
			lo = mid;
		else
			hi = mid;
	}
	return &job->items[lo];
}

void nz__job_run_one(void *arg, int worker)
{
	nz__job *job = arg;
	nz__worker *w = &job->workers[worker];
	uint64_t i = atomic_fetch_add(&job->next, 1);
	const nz__item *it = item_of(job, i);
	int err = 0, ran = 0;

	if (!atomic_load(&job->stop)) {
		if (w->item != it)
			nz__worker_release(w);
		w->item = it;
		err = run_task(it, w, i - it->first);
		ran = 1;
	}
	pthread_mutex_lock(&job->mu);
	job->tasks_run += (uint64_t)ran;
	if (err < 0 && !job->failed) {
		job->failed = 1;
		job->failed_item = it;
		nz__error_save(&job->err);
	}
	job->tasks_done++;
	pthread_cond_signal(&job->done_cv);
	pthread_mutex_unlock(&job->mu);
	if (err < 0)
		atomic_store(&job->stop, 1);
}
