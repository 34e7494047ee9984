/* Sources that pick columns of a stream's data file. The file is row-major
 * (a SpikeGLX AP frame: 384 neural columns, then the sync column), so even
 * one column costs a read of whole rows. The sources of one stream made
 * together (nz_rec_sources) share one reader: every read of whole rows, by
 * whichever source, keeps the columns of the second and later sources (the
 * taps) for the rows it fetched, and a tap takes its rows from there. The
 * taps run last in the write (NZ_SOURCE_LAST), so when one asks, the first
 * source has read the file or is reading its last rows, which the tap
 * waits for. Rows nobody reads (another part of an MPI write, units a
 * resumed write skipped, rows past KEEP_BYTES) the tap reads itself: what
 * it returns never depends on the order or the timing, only how often the
 * file is read does. */
#include <pthread.h>
#include <string.h>

#include "engine/pool.h"
#include "recording/rec_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* Frames per read of whole rows. */
enum { BLOCK = 1024 };

/* What the taps of one file keep at most: 256 MiB is 74 minutes of one
 * int16 column at 30 kHz. Later rows are read again by the tap. */
#define KEEP_BYTES ((size_t)256 << 20)

/* Rows a read of whole rows is still fetching: a tap that needs them waits
 * for that read rather than fetching them a second time. */
typedef struct span {
	uint64_t lo, hi;
	struct span *next;
} span;

/* The row where each of the latest reads of the first source ended: where
 * the task that made it most likely reads next. A tap that needs that row
 * waits for it while the first source's blocks keep arriving (WAIT_MS
 * apart at most), then reads it itself. */
enum { ENDS = 64, WAIT_MS = 200 };

typedef struct tap {
	uint64_t *cols;
	size_t n;
	int16_t *kept; /* kept_rows x n; row r valid once its bit in `have` is set */
} tap;

typedef struct reader {
	nz_source *raw;      /* the whole file, frames x width */
	uint64_t width, kept_rows;
	size_t refs;         /* sources still open; freed with the last */
	pthread_mutex_t mu;  /* guards what follows and the writes into kept */
	pthread_cond_t cv;   /* a block of rows arrived */
	int locks_ready;
	uint64_t *have;      /* a bit per row < kept_rows */
	span *busy;
	uint64_t ends[ENDS];
	size_t n_ends;       /* reads ended so far; ends[] holds the last ENDS */
	double last_end;     /* nz__now() when a block of the first source last arrived */
	tap *taps;
	size_t ntaps;
} reader;

typedef struct cols_ctx {
	reader *rd;
	const uint64_t *cols; /* the tap's, or the first source's own copy */
	uint64_t *own_cols;
	size_t n;
	int run;              /* cols are cols[0], cols[0]+1, ...: one box */
	const tap *tap;       /* NULL for the first source */
} cols_ctx;

static void reader_release(reader *rd)
{
	if (!rd || --rd->refs > 0)
		return;
	nz_source_free(rd->raw);
	for (size_t i = 0; i < rd->ntaps; i++) {
		nz__free(rd->taps[i].cols);
		nz__free(rd->taps[i].kept);
	}
	nz__free(rd->taps);
	nz__free(rd->have);
	if (rd->locks_ready) {
		pthread_mutex_destroy(&rd->mu);
		pthread_cond_destroy(&rd->cv);
	}
	nz__free(rd);
}

static void cols_free(void *p)
{
	cols_ctx *c = p;
	reader_release(c->rd);
	nz__free(c->own_cols);
	nz__free(c);
}

static int has(const reader *rd, uint64_t r)
{
	return r < rd->kept_rows && (rd->have[r / 64] >> (r % 64) & 1);
}

/* The taps' columns of whole rows [lo, hi) in buf, for the rows they keep
 * and lack (mu held). */
static void keep(reader *rd, uint64_t lo, uint64_t hi, const int16_t *buf)
{
	for (uint64_t r = lo; r < hi && r < rd->kept_rows; r++) {
		const int16_t *row = buf + (r - lo) * rd->width;
		if (has(rd, r))
			continue;
		for (size_t t = 0; t < rd->ntaps; t++)
			for (size_t k = 0; k < rd->taps[t].n; k++)
				rd->taps[t].kept[r * rd->taps[t].n + k] = row[rd->taps[t].cols[k]];
		rd->have[r / 64] |= (uint64_t)1 << (r % 64);
	}
}

/* The asked columns of whole rows [lo, hi) (in rows) into out, whose first
 * row is start[0]. */
static void pick(const cols_ctx *c, const int16_t *rows, uint64_t lo, uint64_t hi,
		 const uint64_t *start, const uint64_t *count, int16_t *out)
{
	for (uint64_t r = lo; r < hi; r++) {
		const int16_t *in = rows + (r - lo) * c->rd->width;
		int16_t *o = out + (r - start[0]) * count[1];
		if (c->run) {
			memcpy(o, in + c->cols[start[1]], (size_t)count[1] * sizeof *o);
			continue;
		}
		for (uint64_t k = 0; k < count[1]; k++)
			o[k] = in[c->cols[start[1] + k]];
	}
}

/* Rows [lo, hi) of the file, a BLOCK of whole rows at a time into `rows`,
 * c's columns of them into out (the box start/count), the taps' kept. The
 * read is in `busy` until its last block is kept, and (for the first
 * source) its end is in ends from the same moment, so a tap never finds
 * its rows neither kept nor being read nor at a recent end between two
 * reads of one task. */
static int fetch(const cols_ctx *c, uint64_t lo, uint64_t hi, int16_t *rows,
		 const uint64_t *start, const uint64_t *count, int16_t *out)
{
	reader *rd = c->rd;
	span me = {lo, hi, NULL};
	uint64_t e;
	int err = 0;
	if (rd->ntaps && lo < hi) {
		pthread_mutex_lock(&rd->mu);
		me.next = rd->busy;
		rd->busy = &me;
		pthread_mutex_unlock(&rd->mu);
	}
	for (uint64_t b = lo; b < hi && err == 0; b = e) {
		uint64_t st[2] = {b, 0}, ct[2];
		e = hi - b < BLOCK ? hi : b + BLOCK;
		ct[0] = e - b;
		ct[1] = rd->width;
		if ((err = nz_source_read(rd->raw, st, ct, rows,
					  (size_t)(ct[0] * rd->width) * sizeof *rows)) == 0)
			pick(c, rows, b, e, start, count, out);
		if (!rd->ntaps)
			continue;
		pthread_mutex_lock(&rd->mu);
		if (err == 0)
			keep(rd, b, e, rows);
		me.lo = e;
		if (!c->tap) /* a tap's own reads are no reason for a tap to wait */
			rd->last_end = nz__now();
		if (err < 0 || e == hi) {
			for (span **p = &rd->busy; *p; p = &(*p)->next)
				if (*p == &me) {
					*p = me.next;
					break;
				}
			if (!c->tap)
				rd->ends[rd->n_ends++ % ENDS] = e;
		}
		pthread_cond_broadcast(&rd->cv);
		pthread_mutex_unlock(&rd->mu);
	}
	return err;
}

/* Whether a read now under way fetches row r; else *next = the first row
 * after r that one fetches (or UINT64_MAX). */
static int busy_at(const reader *rd, uint64_t r, uint64_t *next)
{
	*next = UINT64_MAX;
	for (const span *s = rd->busy; s; s = s->next) {
		if (s->lo <= r && r < s->hi)
			return 1;
		if (s->lo > r && s->lo < *next)
			*next = s->lo;
	}
	return 0;
}

/* Whether a recent read ended at row r (its task likely reads r next). */
static int ends_at(const reader *rd, uint64_t r)
{
	size_t n = rd->n_ends < ENDS ? rd->n_ends : ENDS;
	for (size_t i = 0; i < n; i++)
		if (rd->ends[i] == r)
			return 1;
	return 0;
}

/* A tap's rows: the kept ones copied; those a read is fetching, or that
 * the latest reads stopped before while reads still arrive, waited for;
 * the others fetched (rows is a BLOCK-row buffer). */
static int tap_read(const cols_ctx *c, const uint64_t *start, const uint64_t *count, int16_t *out,
		    int16_t *rows)
{
	reader *rd = c->rd;
	const tap *t = c->tap;
	uint64_t r = start[0], end = start[0] + count[0], e, next;
	int err = 0;
	pthread_mutex_lock(&rd->mu);
	while (r < end && err == 0) {
		double wait;
		if (has(rd, r)) {
			for (e = r + 1; e < end && has(rd, e); e++)
				;
			/* kept rows never change again: copied without the lock */
			pthread_mutex_unlock(&rd->mu);
			if (count[1] == t->n) /* all the tap's columns: one run */
				memcpy(out + (r - start[0]) * count[1], t->kept + r * t->n,
				       (size_t)((e - r) * t->n) * sizeof *out);
			else
				for (uint64_t k = r; k < e; k++)
					memcpy(out + (k - start[0]) * count[1],
					       t->kept + k * t->n + start[1],
					       (size_t)count[1] * sizeof *out);
			r = e;
			pthread_mutex_lock(&rd->mu);
			continue;
		}
		/* rows past kept_rows are never kept: nothing to wait for */
		next = UINT64_MAX;
		if (r < rd->kept_rows && busy_at(rd, r, &next)) {
			pthread_cond_wait(&rd->cv, &rd->mu);
			continue;
		}
		wait = rd->last_end + WAIT_MS / 1000.0 - nz__now();
		if (r < rd->kept_rows && ends_at(rd, r) && wait > 0) {
			struct timespec until = nz__deadline((unsigned)(wait * 1000) + 1);
			pthread_cond_timedwait(&rd->cv, &rd->mu, &until);
			continue;
		}
		e = end - r < BLOCK ? end : r + BLOCK;
		if (next < e)
			e = next;
		for (uint64_t k = r + 1; k < e; k++)
			if (has(rd, k)) {
				e = k;
				break;
			}
		pthread_mutex_unlock(&rd->mu);
		err = fetch(c, r, e, rows, start, count, out);
		r = e;
		pthread_mutex_lock(&rd->mu);
	}
	pthread_mutex_unlock(&rd->mu);
	return err;
}

static int cols_read(void *p, const uint64_t *start, const uint64_t *count, void *out)
{
	cols_ctx *c = p;
	int16_t *rows = NULL;
	size_t bytes;
	int err;
	if (c->run && !c->rd->ntaps) { /* the raw source copies the box out of whole rows */
		uint64_t st[2] = {start[0], c->cols[0] + start[1]};
		return nz_source_read(c->rd->raw, st, count, out,
				      (size_t)(count[0] * count[1]) * sizeof *rows);
	}
	if (nz__mul_size(&bytes, (size_t)c->rd->width * sizeof *rows, BLOCK) < 0 ||
	    !(rows = nz__malloc(bytes)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading columns");
	err = c->tap ? tap_read(c, start, count, out, rows)
		     : fetch(c, start[0], start[0] + count[0], rows, start, count, out);
	nz__free(rows);
	return err;
}

static int check_cols(const nz_rec_stream *s, const uint64_t *cols, size_t n)
{
	if (!cols || !n)
		return nz__error_set(NZ_EINVAL, "stream '%s': a set of no columns", s->id);
	for (size_t i = 0; i < n; i++)
		if (cols[i] >= s->columns)
			return nz__error_set(NZ_EINVAL, "stream '%s': column %llu of %llu", s->id,
					     (unsigned long long)cols[i],
					     (unsigned long long)s->columns);
	return 0;
}

static int is_run(const uint64_t *cols, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (cols[i] != cols[0] + i)
			return 0;
	return 1;
}

/* The reader of s's file, with a tap for each of sets 1..nsets. */
static int reader_new(reader **out, const nz_rec_stream *s, const uint64_t *const *cols,
		      const size_t *n, size_t nsets)
{
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	reader *rd = nz__calloc(1, sizeof *rd);
	size_t tap_cols = 0;
	int err = 0;
	*out = NULL;
	ro.dtype = "<i2";
	ro.nchannels = s->columns;
	if (!rd || (nsets > 1 && !(rd->taps = nz__calloc(nsets - 1, sizeof *rd->taps)))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", s->data_path);
		goto done;
	}
	rd->refs = 1;
	rd->width = s->columns;
	if ((err = nz_source_open_raw(&rd->raw, s->data_path, &ro)) < 0)
		goto done;
	for (size_t k = 1; k < nsets; k++)
		tap_cols += n[k];
	if (tap_cols) {
		uint64_t frames = nz_source_shape(rd->raw)[0];
		rd->kept_rows = KEEP_BYTES / (tap_cols * sizeof(int16_t));
		if (rd->kept_rows > frames)
			rd->kept_rows = frames;
		if (!(rd->have = nz__calloc((size_t)(rd->kept_rows / 64 + 1), sizeof *rd->have))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", s->data_path);
			goto done;
		}
	}
	for (size_t k = 1; k < nsets; k++) {
		tap *t = &rd->taps[k - 1];
		if (!(t->cols = nz__malloc(n[k] * sizeof *t->cols)) ||
		    !(t->kept = nz__malloc((size_t)(rd->kept_rows ? rd->kept_rows : 1) * n[k] *
					   sizeof *t->kept))) {
			nz__free(t->cols);
			err = nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", s->data_path);
			goto done;
		}
		memcpy(t->cols, cols[k], n[k] * sizeof *t->cols);
		t->n = n[k];
		rd->ntaps++;
	}
	if (pthread_mutex_init(&rd->mu, NULL) != 0 || nz__cond_init(&rd->cv) != 0) {
		err = nz__error_set(NZ_ENOMEM, "opening '%s': no mutex", s->data_path);
		goto done;
	}
	rd->locks_ready = 1;
	*out = rd;
	rd = NULL;
done:
	reader_release(rd);
	return err;
}

/* Source k of the reader: the first reads for itself, the others are taps. */
static int source_of(nz_source **out, reader *rd, size_t k, const uint64_t *cols, size_t n)
{
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cols_read, cols_free};
	uint64_t shape[2] = {nz_source_shape(rd->raw)[0], n};
	cols_ctx *c = nz__calloc(1, sizeof *c);
	int err;
	*out = NULL;
	if (!c || (k == 0 && !(c->own_cols = nz__malloc(n * sizeof *c->own_cols)))) {
		nz__free(c);
		return nz__error_set(NZ_ENOMEM, "out of memory opening columns");
	}
	if (k == 0) {
		memcpy(c->own_cols, cols, n * sizeof *cols);
		c->cols = c->own_cols;
	} else {
		c->tap = &rd->taps[k - 1];
		c->cols = c->tap->cols;
	}
	c->n = n;
	c->run = is_run(cols, n);
	c->rd = rd;
	rd->refs++;
	if ((err = nz_source_from_callback(out, &ops, c, "<i2", 2, shape)) < 0) {
		cols_free(c);
		return err;
	}
	return nz_source_set_flags(*out, NZ_SOURCE_ROWS | (k ? NZ_SOURCE_LAST : 0));
}

int nz_rec_sources(nz_source **out, const nz_rec_stream *s, const uint64_t *const *cols,
		   const size_t *n, size_t nsets)
{
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	reader *rd = NULL;
	size_t k;
	int err = 0, identity = 1;
	for (k = 0; out && k < nsets; k++)
		out[k] = NULL;
	if (!out || !s || !cols || !n || !nsets || !s->data_path || !*s->data_path)
		return nz__error_set(NZ_EINVAL, "nz_rec_sources: no stream, data file or columns");
	for (k = 0; k < nsets; k++)
		if ((err = check_cols(s, cols[k], n[k])) < 0)
			return err;
	for (size_t i = 0; i < n[0]; i++)
		identity &= cols[0][i] == i;
	if (nsets == 1 && identity && n[0] == s->columns) {
		ro.dtype = "<i2";
		ro.nchannels = s->columns;
		return nz_source_open_raw(out, s->data_path, &ro);
	}
	if ((err = reader_new(&rd, s, cols, n, nsets)) < 0)
		return err;
	for (k = 0; k < nsets && err == 0; k++)
		err = source_of(&out[k], rd, k, cols[k], n[k]);
	reader_release(rd); /* the sources hold it now */
	if (err < 0)
		for (k = 0; k < nsets; k++) {
			nz_source_free(out[k]);
			out[k] = NULL;
		}
	return err;
}

int nz_rec_source(nz_source **out, const nz_rec_stream *s, const uint64_t *cols, size_t n)
{
	return nz_rec_sources(out, s, &cols, &n, 1);
}
