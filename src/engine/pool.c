/* A small thread pool in the spirit of zstd's lib/common/pool.c: one mutex,
 * a ring buffer of items, and two condition variables (work available,
 * space available). */
#include "engine/pool.h"

#include <signal.h>

#include "nwbzarr/common.h"
#include "util/alloc.h"
#include "util/error.h"

typedef struct pool_item {
	nz__pool_fn fn;
	void *arg;
} pool_item;

typedef struct worker_arg {
	nz__pool *pool;
	int index;
} worker_arg;

struct nz__pool {
	pthread_mutex_t mu;
	pthread_cond_t has_work;
	pthread_cond_t has_space;
	pool_item *ring;
	size_t cap, head, len;
	int stopping;
	int nthreads;
	pthread_t *threads;
	worker_arg *args;
};

int nz__cond_init(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int rc;

	if (pthread_condattr_init(&attr) != 0)
		return -1;
	pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	rc = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return rc == 0 ? 0 : -1;
}

struct timespec nz__deadline(unsigned ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

double nz__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void *worker_main(void *p)
{
	worker_arg *wa = p;
	nz__pool *pool = wa->pool;

	pthread_mutex_lock(&pool->mu);
	for (;;) {
		pool_item item;
		while (pool->len == 0 && !pool->stopping)
			pthread_cond_wait(&pool->has_work, &pool->mu);
		if (pool->len == 0)
			break; /* stopping and drained */
		item = pool->ring[pool->head];
		pool->head = (pool->head + 1) % pool->cap;
		pool->len--;
		pthread_cond_signal(&pool->has_space);
		pthread_mutex_unlock(&pool->mu);
		item.fn(item.arg, wa->index);
		pthread_mutex_lock(&pool->mu);
	}
	pthread_mutex_unlock(&pool->mu);
	return NULL;
}

int nz__pool_new(nz__pool **out, int nthreads, size_t queue_size)
{
	nz__pool *pool;
	sigset_t all, old;
	int i, rc = 0;

	*out = NULL;
	if (nthreads < 1 || queue_size < 1)
		return nz__error_set(NZ_EINVAL, "thread pool: %d threads, queue of %zu", nthreads,
				     queue_size);
	if (!(pool = nz__calloc(1, sizeof *pool)))
		return nz__error_set(NZ_ENOMEM, "thread pool: out of memory");
	pool->cap = queue_size;
	pool->ring = nz__calloc(queue_size, sizeof *pool->ring);
	pool->threads = nz__calloc((size_t)nthreads, sizeof *pool->threads);
	pool->args = nz__calloc((size_t)nthreads, sizeof *pool->args);
	if (!pool->ring || !pool->threads || !pool->args) {
		nz__free(pool->ring);
		nz__free(pool->threads);
		nz__free(pool->args);
		nz__free(pool);
		return nz__error_set(NZ_ENOMEM, "thread pool: out of memory");
	}
	pthread_mutex_init(&pool->mu, NULL);
	pthread_cond_init(&pool->has_work, NULL);
	nz__cond_init(&pool->has_space);
	/* New threads inherit the creator's mask: block everything while
	 * creating them so that no signal handler ever runs on a worker. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	for (i = 0; i < nthreads; i++) {
		pool->args[i].pool = pool;
		pool->args[i].index = i;
		if ((rc = pthread_create(&pool->threads[i], NULL, worker_main, &pool->args[i])) != 0)
			break;
		pool->nthreads++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		nz__pool_free(pool);
		return nz__error_set(NZ_ENOMEM, "thread pool: cannot start thread %d of %d", i + 1,
				     nthreads);
	}
	*out = pool;
	return 0;
}

int nz__pool_add(nz__pool *pool, nz__pool_fn fn, void *arg, unsigned timeout_ms)
{
	struct timespec deadline = nz__deadline(timeout_ms);

	pthread_mutex_lock(&pool->mu);
	while (pool->len == pool->cap) {
		if (timeout_ms == 0) {
			pthread_cond_wait(&pool->has_space, &pool->mu);
		} else if (pthread_cond_timedwait(&pool->has_space, &pool->mu, &deadline) != 0 &&
			   pool->len == pool->cap) {
			pthread_mutex_unlock(&pool->mu);
			return 1;
		}
	}
	pool->ring[(pool->head + pool->len) % pool->cap] = (pool_item){fn, arg};
	pool->len++;
	pthread_cond_signal(&pool->has_work);
	pthread_mutex_unlock(&pool->mu);
	return 0;
}

void nz__pool_free(nz__pool *pool)
{
	int i;

	if (!pool)
		return;
	pthread_mutex_lock(&pool->mu);
	pool->stopping = 1;
	pthread_cond_broadcast(&pool->has_work);
	pthread_mutex_unlock(&pool->mu);
	for (i = 0; i < pool->nthreads; i++)
		pthread_join(pool->threads[i], NULL);
	pthread_mutex_destroy(&pool->mu);
	pthread_cond_destroy(&pool->has_work);
	pthread_cond_destroy(&pool->has_space);
	nz__free(pool->ring);
	nz__free(pool->threads);
	nz__free(pool->args);
	nz__free(pool);
}
