/* Internal: a fixed set of worker threads fed by a bounded FIFO queue.
 *
 * Adding blocks while the queue is full, so a producer can never get ahead
 * of the workers by more than the queue size (back-pressure). Each item runs
 * on one worker and learns that worker's number (0..nthreads-1), so callers
 * can keep per-worker state (scratch buffers) without locks. Worker threads
 * block every signal: signals go to the caller's threads.
 *
 * Thread safety: nz__pool_add may be called from any thread, but not after
 * (or concurrently with) nz__pool_free. */
#ifndef NZ_ENGINE_POOL_H
#define NZ_ENGINE_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <time.h>

typedef struct nz__pool nz__pool;
typedef void (*nz__pool_fn)(void *arg, int worker);

/** Start nthreads (>= 1) workers with a queue of queue_size (>= 1) items. */
int nz__pool_new(nz__pool **out, int nthreads, size_t queue_size);

/** Queue fn(arg). Waits while the queue is full, at most timeout_ms
 *  milliseconds (0 = as long as it takes). Returns 0 when queued, 1 when the
 *  time ran out first (nothing queued). */
int nz__pool_add(nz__pool *pool, nz__pool_fn fn, void *arg, unsigned timeout_ms);

/** Run every queued item, then stop and join the workers. NULL is fine. */
void nz__pool_free(nz__pool *pool);

/** Initialise a condition variable that times out on CLOCK_MONOTONIC. */
int nz__cond_init(pthread_cond_t *cond);
/** The CLOCK_MONOTONIC time `ms` milliseconds from now. */
struct timespec nz__deadline(unsigned ms);
/** Seconds on CLOCK_MONOTONIC since an arbitrary origin. */
double nz__now(void);

#endif
