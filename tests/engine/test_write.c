/* The engine core against a serial reference, through a sink that records
 * every chunk: random shapes, chunks, task shapes, dtypes, fill values,
 * sources and job counts; every chunk written exactly once; failures,
 * cancellation and progress. Everything runs twice: always on worker
 * threads, then with small writes on the calling thread. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

#include "engine/write.h"
#include "sink.h"
#include "oom.h"
#include "util/alloc.h"
#include "util/error.h"

static pthread_t main_thread;

/* How writes run: 0 = always on worker threads, else the inline limit
 * (small writes on the calling thread). main runs the cases both ways. */
static size_t inline_limit;
static nz__write_ctl last_ctl;

static int write_mode(const nz__target *t, nz_source *src, const nz_write_opts *opts)
{
	last_ctl = (nz__write_ctl)NZ__WRITE_CTL_INIT;
	last_ctl.inline_bytes = inline_limit;
	return nz__write_ctl_run(t, src, opts, &last_ctl);
}

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
		if (write_mode(&t, src, &opts) != 0)
			NZ__FAIL("write failed: %s source, %d-d, %d jobs, part %" PRIu64 " of %" PRIu64,
				 source_name[kind], ndim, jobs, k, nparts);
		ASSERT(stats.jobs >= 1 && stats.jobs <= jobs);
		if (stats.chunks > 0 && inline_limit == 0)
			ASSERT_EQ_INT(last_ctl.threads, stats.jobs);
		if (last_ctl.threads == 0)
			ASSERT_EQ_U64(last_ctl.waits, 0);
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
	ASSERT_ERR(NZ_EIO, write_mode(&t, src, &opts));
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
	ASSERT_ERR(NZ_EIO, write_mode(&t, src, &opts));
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
	ASSERT_ERR(NZ_ECANCELED, write_mode(&t, src, &opts));
	ASSERT_CONTAINS(nz_error_last()->message, "canceled");
	opts.cancel_flag = NULL;

	/* The progress callback cancels after 5 chunks. */
	opts.progress = on_progress;
	opts.progress_ctx = &log;
	opts.progress_interval_ms = 1;
	t0 = now_ms();
	ASSERT_ERR(NZ_ECANCELED, write_mode(&t, src, &opts));
	ASSERT(now_ms() - t0 < 2000);
	ASSERT(log.last_bytes < shape[0] * shape[1] * 2);
	s.sleep_us = 0;

	/* The source must match the target. */
	{
		uint64_t other[2] = {4000, 63};
		nz_source *bad;
		ASSERT_OK(nz_source_from_callback(&bad, &ops, &cbc, "<i2", 2, other));
		ASSERT_ERR(NZ_EMISMATCH, write_mode(&t, bad, NULL));
		ASSERT_CONTAINS(nz_error_last()->message, "dimension 1");
		nz_source_free(bad);
		ASSERT_OK(nz_source_from_callback(&bad, &ops, &cbc, "<i4", 2, shape));
		ASSERT_ERR(NZ_EMISMATCH, write_mode(&t, bad, NULL));
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
		ASSERT_ERR(NZ_EIO, write_mode(&t, src, &opts));
		ASSERT_CONTAINS(nz_error_last()->message, "callback");
	} else {
		ASSERT_OK(write_mode(&t, src, &opts));
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

typedef struct oom_ctx {
	nz__target *t;
	nz_source *src;
	nz_write_opts *opts;
} oom_ctx;

static int run_write(void *ctx)
{
	oom_ctx *c = ctx;
	return write_mode(c->t, c->src, c->opts);
}

/* Every allocation of a write may fail (tests/oom.h): NZ_ENOMEM with a
 * message, nothing leaked (ASan), no hang; past the last one the write goes
 * through. `small` uses a budget that splits bands. */
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
	oom_ctx c = {&t, NULL, &opts};
	nz_oom_sweep sw = {small ? "engine write, small budget" : "engine write", run_write, NULL,
			   NULL, &c, 0, 0, 1, 0};

	sink_init(&s, 2, shape, chunks, 2);
	target_of(&t, &s);
	cbc.s = &s;
	cbc.fail_row = UINT64_MAX;
	ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, "<u2", 2, shape));
	ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	opts.jobs = small ? 2 : 3;
	opts.buffer_size = small ? 10 * s.chunk_bytes : 0;
	opts.stats = &stats;
	c.src = src;
	ASSERT(nz_oom_run_sweep(&sw) > 3);
	ASSERT_EQ_U64(stats.task_chunks[1], small ? 4 : 8);
	ASSERT_EQ_INT(atomic_load(&states_live), 0);
	nz_source_free(src);
	sink_clear(&s);
}

/* Empty: nothing written, progress still ends at 0 of 0. */
static void empty_write(void)
{
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
	ASSERT_OK(write_mode(&t, src, &opts));
	ASSERT_EQ_U64(stats.chunks, 0);
	ASSERT(log.calls >= 1);
	ASSERT_EQ_U64(log.total, 0);
	nz_source_free(src);
	sink_clear(&s);
}

int main(void)
{
	static const int jobs[4] = {1, 2, 3, 8};
	unsigned seed = 2024;
	int it, j, kind, mode;

	main_thread = pthread_self();

	/* Everything on worker threads, then with small writes inline. */
	for (mode = 0; mode < 2; mode++) {
		inline_limit = mode ? NZ__WRITE_INLINE_BYTES : 0;
		for (it = 0; it < (mode ? 4 : 10); it++)
			for (j = 0; j < 4; j++)
				for (kind = 0; kind < 3; kind++) {
					int ndim = kind == 1 ? 2 : 1 + (int)(rand_r(&seed) % 4);
					run_case(&seed, kind, jobs[j], ndim);
				}
		for (j = 0; j < 4; j++) /* 0-d */
			run_case(&seed, 0, jobs[j], 0);
		empty_write();
		failures(1);
		failures(3);
		allocation_failures(0);
		allocation_failures(1);
	}
	ASSERT_EQ_INT(atomic_load(&signals_open), 0);
	/* 8 chunks per band; a worker's share of the budget holds its group
	 * plus one chunk of output. 2 jobs in 10 chunks: groups of 4; 3 jobs
	 * in 11: groups of 2; 8 jobs in 6: only 3 workers fit, groups of 1. */
	inline_limit = 0;
	small_budget(2, 10, 4, 0);
	small_budget(3, 11, 2, 0);
	small_budget(8, 6, 1, 0);
	small_budget(2, 10, 4, 1);
	small_budget(3, 11, 2, 1);
	printf("ok\n");
	return 0;
}
