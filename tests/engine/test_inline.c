/* Small writes (and single chunks) run on the calling thread and return as
 * soon as their last chunk is stored: no worker thread, no wait at all
 * (counted by the engine, not timed). One chunk over the limit, worker threads run the write and
 * the caller's wait for them ends on the last task's signal: with a 60 s
 * poll interval, no wait may time out. A signal raised during an inline put
 * is held until the task ends, then delivered to the caller. */
#include <pthread.h>
#include <signal.h>

#include "engine/write.h"
#include "sink.h"
#include "test.h"

static volatile sig_atomic_t usr1_seen;
static int usr1_seen_in_put = -1;

static void on_usr1(int sig)
{
	(void)sig;
	usr1_seen = 1;
}

/* sink_put, raising SIGUSR1 at this thread first. */
static int raising_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len)
{
	raise(SIGUSR1);
	usr1_seen_in_put = usr1_seen;
	return sink_put(ctx, state, idx, data, len);
}

static int count_calls(const nz_progress *p, void *ctx)
{
	(void)p;
	(*(int *)ctx)++;
	return 0;
}

/* Write a 1-d uint8 array of `n` elements in chunks of `chunk` from the
 * callback source with `jobs` and the controls *ctl; every chunk must match
 * the reference. */
static void write_1d(nz__write_ctl *ctl, sink *s, uint64_t n, uint64_t chunk, int jobs,
		     int (*put)(void *, void **, const uint64_t *, const void *, size_t))
{
	uint64_t shape[1] = {n}, chunks[1] = {chunk}, i;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	nz_write_opts opts = NZ_WRITE_OPTS_INIT;
	nz_write_stats stats;
	nz_source *src;
	nz__target t;
	unsigned char *ref;
	int calls = 0;
	cb_ctx cbc;

	sink_init(s, 1, shape, chunks, 1);
	s->fill[0] = 0x77;
	target_of(&t, s);
	if (put)
		t.put = put;
	cbc.s = s;
	cbc.fail_row = UINT64_MAX;
	ASSERT_OK(nz_source_from_callback(&src, &ops, &cbc, "|u1", 1, shape));
	opts.jobs = jobs;
	opts.progress = count_calls;
	opts.progress_ctx = &calls;
	opts.progress_interval_ms = 60000;
	opts.stats = &stats;
	ASSERT_OK(nz__write_ctl_run(&t, src, &opts, ctl));
	ASSERT_EQ_U64(stats.chunks, s->nchunks);
	ASSERT_EQ_U64(stats.bytes, n);
	ASSERT(calls >= 2); /* at the start and at the end, whatever the interval */
	ref = malloc(s->chunk_bytes);
	for (i = 0; i < s->nchunks; i++) {
		ASSERT_EQ_INT(atomic_load(&s->writes[i]), 1);
		reference_chunk(s, i, ref);
		ASSERT_MEM_EQ(ref, s->got[i], s->chunk_bytes);
	}
	free(ref);
	nz_source_free(src);
	ASSERT_EQ_INT(atomic_load(&states_live), 0);
}

int main(void)
{
	sigset_t before, after;
	struct sigaction sa;
	const nz__write_ctl dflt = NZ__WRITE_CTL_INIT;
	nz__write_ctl ctl;
	sink s;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_usr1;
	ASSERT(sigaction(SIGUSR1, &sa, NULL) == 0);

	/* A tiny write (one chunk of 6 bytes, 2 jobs asked): on this thread,
	 * no worker, no wait; the caller's signal mask is as it was. */
	pthread_sigmask(SIG_BLOCK, NULL, &before);
	ctl = dflt;
	write_1d(&ctl, &s, 6, 4, 2, NULL);
	pthread_sigmask(SIG_BLOCK, NULL, &after);
	ASSERT_EQ_INT(ctl.threads, 0);
	ASSERT_EQ_U64(ctl.waits, 0);
	ASSERT_EQ_U64(ctl.timeouts, 0);
	ASSERT_EQ_INT(atomic_load(&s.on_caller), 2);
	ASSERT_EQ_INT(sigismember(&after, SIGINT), sigismember(&before, SIGINT));
	ASSERT_EQ_INT(sigismember(&after, SIGUSR1), sigismember(&before, SIGUSR1));
	sink_clear(&s);

	/* Exactly the limit (16 chunks of 64 KiB, the last one partial): still
	 * inline. */
	ctl = dflt;
	write_1d(&ctl, &s, 16 * 65536 - 5, 65536, 2, NULL);
	ASSERT_EQ_INT(ctl.threads, 0);
	ASSERT_EQ_U64(ctl.waits, 0);
	ASSERT_EQ_INT(atomic_load(&s.on_caller), 16);
	sink_clear(&s);

	/* One chunk over the limit (2 MiB, half of it padding): inline too, a
	 * thread could only take it whole. */
	ctl = dflt;
	write_1d(&ctl, &s, 1 << 20, 2 << 20, 2, NULL);
	ASSERT_EQ_INT(ctl.threads, 0);
	ASSERT_EQ_U64(ctl.waits, 0);
	ASSERT_EQ_INT(atomic_load(&s.on_caller), 1);
	sink_clear(&s);

	/* One chunk more: worker threads, and no wait for them timed out. */
	ctl = dflt;
	write_1d(&ctl, &s, 16 * 65536 + 1, 65536, 2, NULL);
	ASSERT_EQ_INT(ctl.threads, 2);
	ASSERT_EQ_U64(ctl.timeouts, 0);
	ASSERT_EQ_INT(atomic_load(&s.on_caller), 0);
	sink_clear(&s);

	/* Many small tasks through the threads, the queue full most of the
	 * time: still no timeout. */
	ctl = dflt;
	ctl.inline_bytes = 0;
	write_1d(&ctl, &s, 20000, 7, 3, NULL);
	ASSERT(ctl.threads >= 1);
	ASSERT_EQ_U64(ctl.timeouts, 0);
	sink_clear(&s);

	/* A signal raised during an inline put (one chunk) waits for the end of
	 * the task. */
	ctl = dflt;
	write_1d(&ctl, &s, 4, 4, 1, raising_put);
	ASSERT_EQ_INT(ctl.threads, 0);
	ASSERT_EQ_INT(usr1_seen_in_put, 0);
	ASSERT_EQ_INT(usr1_seen, 1);
	sink_clear(&s);

	ASSERT_EQ_INT(atomic_load(&signals_open), 0);
	printf("ok\n");
	return 0;
}
