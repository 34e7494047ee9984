/* The engine core against a serial reference, through a sink that records
 * every chunk: random shapes, chunks, task shapes, dtypes, fill values,
 * sources and job counts; every chunk written exactly once; failures,
 * cancellation and progress. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "engine/write.h"
#include "test.h"
#include "util/alloc.h"
#include "util/error.h"

static atomic_int signals_open; /* puts that ran with signals unblocked */

/* Per-worker sink states alive: every write must free all it made. */
static atomic_int states_live;

typedef struct sink {
	int ndim;
	uint64_t shape[4], chunks[4], grid[4], nchunks;
	size_t itemsize, chunk_bytes;
	unsigned char fill[8];
	atomic_int *writes;       /* per chunk */
	unsigned char **got;      /* per chunk, a copy */
	long fail_at;             /* linear chunk index that fails, -1 none */
	unsigned sleep_us;
} sink;

static unsigned char byte_at(uint64_t linear, size_t b)
{
	uint64_t x = linear * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull;
	x ^= x >> 31;
	return (unsigned char)(x * 0x94D049BB133111EBull >> 56);
}

static uint64_t linear_of(const sink *s, const uint64_t *idx)
{
	uint64_t lin = 0;
	int d;
	for (d = 0; d < s->ndim; d++)
		lin = lin * s->grid[d] + idx[d];
	return lin;
}

static int sink_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len)
{
	sink *s = ctx;
	uint64_t lin = linear_of(s, idx);
	if (!*state) {
		*state = malloc(16);
		atomic_fetch_add(&states_live, 1);
	}
	if (len != s->chunk_bytes)
		return NZ_EINVAL;
	if (s->sleep_us)
		usleep(s->sleep_us);
	{
		/* Workers block every signal, so SIGINT reaches the caller. */
		sigset_t cur;
		pthread_sigmask(SIG_BLOCK, NULL, &cur);
		if (!sigismember(&cur, SIGINT) || !sigismember(&cur, SIGUSR1))
			atomic_fetch_add(&signals_open, 1);
	}
	if ((long)lin == s->fail_at) {
		/* The sink reports like a store would: naming the key. */
		return nz__error_set(NZ_EIO, "put 'test/array/%" PRIu64 "': injected failure", lin);
	}
	atomic_fetch_add(&s->writes[lin], 1);
	free(s->got[lin]);
	s->got[lin] = malloc(len ? len : 1);
	memcpy(s->got[lin], data, len);
	return 0;
}

static void sink_state_free(void *state)
{
	atomic_fetch_sub(&states_live, 1);
	free(state);
}

/* The data: element at C-order linear index L has bytes byte_at(L, b). */
static void fill_data(unsigned char *data, uint64_t n, size_t itemsize)
{
	uint64_t i;
	size_t b;
	for (i = 0; i < n; i++)
		for (b = 0; b < itemsize; b++)
			data[i * itemsize + b] = byte_at(i, b);
}

typedef struct cb_ctx {
	const sink *s;
	uint64_t fail_row; /* UINT64_MAX = never */
} cb_ctx;

static int cb_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	const cb_ctx *c = ctx;
	const sink *s = c->s;
	uint64_t n = 1, k, idx[4], lin;
	unsigned char *o = out;
	int d;
	size_t b;
	for (d = 0; d < s->ndim; d++)
		n *= count[d];
	if (s->ndim > 0 && start[0] + count[0] > c->fail_row)
		return NZ_EIO;
	for (k = 0; k < n; k++) {
		uint64_t rest = k;
		for (d = s->ndim - 1; d >= 0; d--) {
			idx[d] = start[d] + rest % count[d];
			rest /= count[d];
		}
		for (lin = 0, d = 0; d < s->ndim; d++)
			lin = lin * s->shape[d] + idx[d];
		for (b = 0; b < s->itemsize; b++)
			*o++ = byte_at(lin, b);
	}
	return 0;
}

/* The chunk a serial writer would produce. */
static void reference_chunk(const sink *s, uint64_t lin_chunk, unsigned char *out)
{
	uint64_t cidx[4], rest = lin_chunk, k, n = s->chunk_bytes / s->itemsize;
	int d;
	for (d = s->ndim - 1; d >= 0; d--) {
		cidx[d] = rest % s->grid[d];
		rest /= s->grid[d];
	}
	for (k = 0; k < n; k++) {
		uint64_t r = k, lin = 0, e[4];
		int inside = 1;
		size_t b;
		for (d = s->ndim - 1; d >= 0; d--) {
			e[d] = cidx[d] * s->chunks[d] + r % s->chunks[d];
			r /= s->chunks[d];
			if (e[d] >= s->shape[d])
				inside = 0;
		}
		for (d = 0; d < s->ndim; d++)
			lin = lin * s->shape[d] + e[d];
		for (b = 0; b < s->itemsize; b++)
			out[k * s->itemsize + b] = inside ? byte_at(lin, b) : s->fill[b];
	}
}

static void sink_init(sink *s, int ndim, const uint64_t *shape, const uint64_t *chunks,
		      size_t itemsize)
{
	int d;
	memset(s, 0, sizeof *s);
	s->ndim = ndim;
	s->itemsize = itemsize;
	s->nchunks = 1;
	s->chunk_bytes = itemsize;
	for (d = 0; d < ndim; d++) {
		s->shape[d] = shape[d];
		s->chunks[d] = chunks[d];
		s->grid[d] = (shape[d] + chunks[d] - 1) / chunks[d];
		s->nchunks *= s->grid[d];
		s->chunk_bytes *= chunks[d];
	}
	s->writes = calloc(s->nchunks + 1, sizeof *s->writes);
	s->got = calloc(s->nchunks + 1, sizeof *s->got);
	s->fail_at = -1;
}

static void sink_clear(sink *s)
{
	uint64_t i;
	for (i = 0; i < s->nchunks; i++)
		free(s->got[i]);
	free(s->got);
	free((void *)s->writes);
}

static void target_of(nz__target *t, sink *s)
{
	memset(t, 0, sizeof *t);
	t->ndim = s->ndim;
	t->shape = s->shape;
	t->chunks = s->chunks;
	t->itemsize = s->itemsize;
	t->fill = s->fill;
	t->name = "test/array";
	t->put = sink_put;
	t->state_free = sink_state_free;
	t->ctx = s;
}

static pthread_t main_thread;

typedef struct progress_log {
	uint64_t calls, last_bytes, total, cancel_after;
	int monotonic;
} progress_log;

static int on_progress(const nz_progress *p, void *ctx)
{
	progress_log *l = ctx;
	if (!pthread_equal(pthread_self(), main_thread))
		NZ__FAIL("progress callback on a worker thread");
	if (p->bytes_done < l->last_bytes)
		l->monotonic = 0;
	l->last_bytes = p->bytes_done;
	l->total = p->bytes_total;
	l->calls++;
	return l->cancel_after && p->chunks_done >= l->cancel_after;
}

static const char *source_name[] = {"memory", "raw", "callback"};

/* One write of a random configuration, checked against the reference. */
static void run_case(unsigned *seed, int kind, int jobs, int ndim)
{
	uint64_t shape[4] = {0}, chunks[4] = {0}, tc[4] = {0}, n = 1, i, k, nparts;
	uint64_t chunks_sum = 0, bytes_sum = 0;
	size_t itemsizes[4] = {1, 2, 4, 8}, itemsize = itemsizes[rand_r(seed) % 4];
	unsigned char *data, *ref;
	char dtype[8], path[1024];
	nz_source *src = NULL;
	nz_write_opts opts = NZ_WRITE_OPTS_INIT;
	nz_write_stats stats;
	progress_log log = {0, 0, 0, 0, 1};
	cb_ctx cbc;
	nz__target t;
	sink s;
	int d;

	for (d = 0; d < ndim; d++) {
		shape[d] = rand_r(seed) % 5 == 0 ? 1 + rand_r(seed) % 3 : 1 + rand_r(seed) % 40;
		chunks[d] = 1 + rand_r(seed) % 12;
		tc[d] = 1 + rand_r(seed) % 4;
		n *= shape[d];
	}
	if (kind == 1 && ndim == 2 && rand_r(seed) % 2)
		chunks[1] = shape[1]; /* time-major: the direct path */
	sink_init(&s, ndim, shape, chunks, itemsize);
	for (d = 0; d < (int)itemsize; d++)
		s.fill[d] = rand_r(seed) % 3 ? (unsigned char)(0xA0 + d) : 0;
	data = malloc(n * itemsize + 1);
	fill_data(data, n, itemsize);
	snprintf(dtype, sizeof dtype, "<u%zu", itemsize);
	if (kind == 0) {
		ASSERT_OK(nz_source_from_memory(&src, data, dtype, ndim, shape));
	} else if (kind == 1) {
		nz_raw_opts ro = NZ_RAW_OPTS_INIT;
		FILE *f;
		snprintf(path, sizeof path, "%s/engine_write_%d.raw", getenv("NZ_TMP"), jobs);
		f = fopen(path, "wb");
		ASSERT(f && fwrite("hdr", 1, 3, f) == 3 && fwrite(data, itemsize, n, f) == n);
		fclose(f);
		ro.dtype = dtype;
		ro.nchannels = shape[1];
		ro.header_offset = 3;
		ASSERT_OK(nz_source_open_raw(&src, path, &ro));
	} else {
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
		cbc.s = &s;
		cbc.fail_row = UINT64_MAX;
		ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, dtype, ndim, shape));
		/* Half the time the callback asks for whole rows. */
		if (rand_r(seed) % 2)
			ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	}
	target_of(&t, &s);
	opts.jobs = jobs;
	opts.task_chunks = rand_r(seed) % 2 ? tc : NULL;
	opts.buffer_size = rand_r(seed) % 2 ? 0 : (1 + rand_r(seed) % 8) * s.chunk_bytes;
	opts.progress = on_progress;
	opts.progress_ctx = &log;
	opts.progress_interval_ms = 1;
	opts.stats = &stats;
	/* Sometimes in parts, as MPI ranks would: together, every chunk once. */
	nparts = rand_r(seed) % 3 == 0 ? 1 + rand_r(seed) % 4 : 1;
	opts.nparts = nparts;
	for (k = 0; k < nparts; k++) {
		opts.part = k;
		if (nz__write(&t, src, &opts) != 0)
			NZ__FAIL("write failed: %s source, %d-d, %d jobs, part %" PRIu64 " of %" PRIu64,
				 source_name[kind], ndim, jobs, k, nparts);
		ASSERT(stats.jobs >= 1 && stats.jobs <= jobs);
		ASSERT(log.monotonic);
		ASSERT_EQ_U64(log.last_bytes, log.total);
		ASSERT_EQ_U64(stats.bytes, log.total);
		chunks_sum += stats.chunks;
		bytes_sum += stats.bytes;
		log.last_bytes = 0;
	}
	ASSERT_EQ_U64(chunks_sum, s.nchunks);
	ASSERT_EQ_U64(bytes_sum, n * itemsize);
	ASSERT(log.calls >= 2);
	ref = malloc(s.chunk_bytes);
	for (i = 0; i < s.nchunks; i++) {
		ASSERT_EQ_INT(atomic_load(&s.writes[i]), 1);
		reference_chunk(&s, i, ref);
		if (memcmp(ref, s.got[i], s.chunk_bytes) != 0)
			NZ__FAIL("chunk %" PRIu64 " differs: %s source, %d-d, %d jobs, itemsize %zu",
				 i, source_name[kind], ndim, jobs, itemsize);
	}
	ASSERT_EQ_INT(atomic_load(&states_live), 0);
	free(ref);
	free(data);
	nz_source_free(src);
	sink_clear(&s);
	if (kind == 1)
		unlink(path);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* A failing source or sink, a cancel flag, a cancelling progress callback:
 * a clean error, prompt, with a message, nothing written twice. */
static void failures(int jobs)
{
	uint64_t shape[2] = {4000, 64}, chunks[2] = {100, 16}, i;
	nz_write_opts opts = NZ_WRITE_OPTS_INIT;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	volatile sig_atomic_t flag = 0;
	progress_log log = {0, 0, 0, 5, 1};
	nz_source *src;
	nz__target t;
	cb_ctx cbc;
	sink s;
	int64_t t0;

	sink_init(&s, 2, shape, chunks, 2);
	target_of(&t, &s);
	cbc.s = &s;
	cbc.fail_row = 2000;
	ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, "<i2", 2, shape));
	opts.jobs = jobs;
	ASSERT_ERR(NZ_EIO, nz__write(&t, src, &opts));
	ASSERT_CONTAINS(nz_error_last()->message, "test/array");
	ASSERT_CONTAINS(nz_error_last()->message, "callback");
	for (i = 0; i < s.nchunks; i++)
		ASSERT(atomic_load(&s.writes[i]) <= 1);

	/* The sink fails on one chunk; with a slow sink the others stop early. */
	cbc.fail_row = UINT64_MAX;
	for (i = 0; i < s.nchunks; i++)
		atomic_store(&s.writes[i], 0);
	s.fail_at = 7;
	s.sleep_us = 2000;
	t0 = now_ms();
	ASSERT_ERR(NZ_EIO, nz__write(&t, src, &opts));
	ASSERT(now_ms() - t0 < 2000); /* 160 chunks x 2 ms serially is 320 ms */
	ASSERT_EQ_INT(atomic_load(&s.writes[7]), 0);
	ASSERT_CONTAINS(nz_error_last()->message, "injected failure");
	ASSERT_EQ_INT(atomic_load(&states_live), 0);
	{
		uint64_t written = 0;
		for (i = 0; i < s.nchunks; i++)
			written += (uint64_t)atomic_load(&s.writes[i]);
		ASSERT(written < s.nchunks - 1);
	}

	/* A cancel flag already raised: NZ_ECANCELED, nothing much written. */
	s.fail_at = -1;
	flag = 1;
	opts.cancel_flag = &flag;
	ASSERT_ERR(NZ_ECANCELED, nz__write(&t, src, &opts));
	ASSERT_CONTAINS(nz_error_last()->message, "canceled");
	opts.cancel_flag = NULL;

	/* The progress callback cancels after 5 chunks. */
	opts.progress = on_progress;
	opts.progress_ctx = &log;
	opts.progress_interval_ms = 1;
	t0 = now_ms();
	ASSERT_ERR(NZ_ECANCELED, nz__write(&t, src, &opts));
	ASSERT(now_ms() - t0 < 2000);
	ASSERT(log.last_bytes < shape[0] * shape[1] * 2);
	s.sleep_us = 0;

	/* The source must match the target. */
	{
		uint64_t other[2] = {4000, 63};
		nz_source *bad;
		ASSERT_OK(nz_source_from_callback(&bad, &ops, &cbc, "<i2", 2, other));
		ASSERT_ERR(NZ_EMISMATCH, nz__write(&t, bad, NULL));
		ASSERT_CONTAINS(nz_error_last()->message, "dimension 1");
		nz_source_free(bad);
		ASSERT_OK(nz_source_from_callback(&bad, &ops, &cbc, "<i4", 2, shape));
		ASSERT_ERR(NZ_EMISMATCH, nz__write(&t, bad, NULL));
		nz_source_free(bad);
	}
	nz_source_free(src);
	sink_clear(&s);
}

/* A budget too small for whole bands: bands split into equal groups of the
 * width a worker's share allows (rows then read once per group); same
 * chunks as the reference, each once; a failing source mid-band stops
 * cleanly. */
static void small_budget(int jobs, size_t budget_chunks, uint64_t width, int fail)
{
	uint64_t shape[2] = {100, 30}, chunks[2] = {7, 4}, n = 3000, i;
	nz_write_opts opts = NZ_WRITE_OPTS_INIT;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	nz_write_stats stats;
	unsigned char *ref;
	nz_source *src;
	nz__target t;
	cb_ctx cbc;
	sink s;

	sink_init(&s, 2, shape, chunks, 2);
	s.fill[0] = 0x5A;
	target_of(&t, &s);
	cbc.s = &s;
	cbc.fail_row = fail ? 60 : UINT64_MAX;
	ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, "<u2", 2, shape));
	ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	opts.jobs = jobs;
	opts.buffer_size = budget_chunks * s.chunk_bytes;
	opts.stats = &stats;
	if (fail) {
		ASSERT_ERR(NZ_EIO, nz__write(&t, src, &opts));
		ASSERT_CONTAINS(nz_error_last()->message, "callback");
	} else {
		ASSERT_OK(nz__write(&t, src, &opts));
		ASSERT_EQ_INT(stats.jobs, jobs < 3 ? jobs : 3);
		ASSERT_EQ_U64(stats.task_chunks[1], width);
		ASSERT_EQ_U64(stats.chunks, s.nchunks);
		ASSERT_EQ_U64(stats.bytes, n * 2);
		ref = malloc(s.chunk_bytes);
		for (i = 0; i < s.nchunks; i++) {
			ASSERT_EQ_INT(atomic_load(&s.writes[i]), 1);
			reference_chunk(&s, i, ref);
			if (memcmp(ref, s.got[i], s.chunk_bytes) != 0)
				NZ__FAIL("chunk %" PRIu64 " differs, %d jobs, small budget", i, jobs);
		}
		free(ref);
	}
	for (i = 0; i < s.nchunks; i++)
		ASSERT(atomic_load(&s.writes[i]) <= 1);
	nz_source_free(src);
	sink_clear(&s);
}

/* Every allocation of a write may fail: NZ_ENOMEM, nothing leaked (ASan),
 * no hang, until enough succeed for the write to go through. `small` uses
 * a budget that splits bands. */
static void allocation_failures(int small)
{
	uint64_t shape[2] = {100, 30}, chunks[2] = {7, 4};
	nz_write_opts opts = NZ_WRITE_OPTS_INIT;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	nz_write_stats stats;
	nz_source *src;
	nz__target t;
	cb_ctx cbc;
	sink s;
	long n;
	int rc = -1;

	sink_init(&s, 2, shape, chunks, 2);
	target_of(&t, &s);
	cbc.s = &s;
	cbc.fail_row = UINT64_MAX;
	ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, "<u2", 2, shape));
	ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	opts.jobs = small ? 2 : 3;
	opts.buffer_size = small ? 10 * s.chunk_bytes : 0;
	opts.stats = &stats;
	for (n = 1; n < 10000 && rc != 0; n++) {
		nz__alloc_fail_after(n);
		rc = nz__write(&t, src, &opts);
		nz__alloc_fail_after(0);
		if (rc != 0 && rc != NZ_ENOMEM)
			NZ__FAIL("allocation %ld failing gave %d", n, rc);
	}
	ASSERT_EQ_INT(rc, 0);
	ASSERT(n > 3);
	ASSERT_EQ_U64(stats.task_chunks[1], small ? 4 : 8);
	ASSERT_EQ_INT(atomic_load(&states_live), 0);
	nz_source_free(src);
	sink_clear(&s);
}

int main(void)
{
	static const int jobs[4] = {1, 2, 3, 8};
	unsigned seed = 2024;
	int it, j, kind;

	main_thread = pthread_self();

	for (it = 0; it < 10; it++)
		for (j = 0; j < 4; j++)
			for (kind = 0; kind < 3; kind++) {
				int ndim = kind == 1 ? 2 : 1 + (int)(rand_r(&seed) % 4);
				run_case(&seed, kind, jobs[j], ndim);
			}
	ASSERT_EQ_INT(atomic_load(&signals_open), 0);
	{ /* empty: nothing written, progress still ends at 0 of 0 */
		uint64_t shape[2] = {0, 5}, chunks[2] = {4, 4};
		nz_write_opts opts = NZ_WRITE_OPTS_INIT;
		nz_write_stats stats;
		progress_log log = {0, 0, 1, 0, 1};
		nz_source *src;
		nz__target t;
		sink s;
		sink_init(&s, 2, shape, chunks, 2);
		target_of(&t, &s);
		ASSERT_OK(nz_source_from_memory(&src, "", "<i2", 2, shape));
		opts.stats = &stats;
		opts.progress = on_progress;
		opts.progress_ctx = &log;
		ASSERT_OK(nz__write(&t, src, &opts));
		ASSERT_EQ_U64(stats.chunks, 0);
		ASSERT(log.calls >= 1);
		ASSERT_EQ_U64(log.total, 0);
		nz_source_free(src);
		sink_clear(&s);
	}
	/* 0-d */
	for (j = 0; j < 4; j++)
		run_case(&seed, 0, jobs[j], 0);
	/* 8 chunks per band; a worker's share of the budget holds its group
	 * plus one chunk of output. 2 jobs in 10 chunks: groups of 4; 3 jobs
	 * in 11: groups of 2; 8 jobs in 6: only 3 workers fit, groups of 1. */
	small_budget(2, 10, 4, 0);
	small_budget(3, 11, 2, 0);
	small_budget(8, 6, 1, 0);
	small_budget(2, 10, 4, 1);
	small_budget(3, 11, 2, 1);
	failures(1);
	failures(3);
	allocation_failures(0);
	allocation_failures(1);
	printf("ok\n");
	return 0;
}
