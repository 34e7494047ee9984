/* Engine tests' helpers: a sink that records every chunk it is given (a
 * copy, how often, and whether signals were blocked), a callback source of
 * known data, and the chunk a serial writer would produce. */
#ifndef NZ_TEST_ENGINE_SINK_H
#define NZ_TEST_ENGINE_SINK_H

#include <pthread.h>
#include <stdatomic.h>

#include "engine/write.h"

extern atomic_int signals_open; /* puts that ran with signals unblocked */
extern atomic_int states_live;  /* per-worker sink states alive */

typedef struct sink {
	int ndim;
	uint64_t shape[4], chunks[4], grid[4], nchunks;
	size_t itemsize, chunk_bytes;
	unsigned char fill[8];
	atomic_int *writes;       /* per chunk */
	unsigned char **got;      /* per chunk, a copy */
	long fail_at;             /* linear chunk index that fails, -1 none */
	unsigned sleep_us;
	pthread_t caller;         /* the thread that ran sink_init */
	atomic_int on_caller;     /* puts that ran on it */
} sink;

typedef struct cb_ctx {
	const sink *s;
	uint64_t fail_row; /* UINT64_MAX = never */
} cb_ctx;

unsigned char byte_at(uint64_t linear, size_t b);
uint64_t linear_of(const sink *s, const uint64_t *idx);
int sink_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len);
void sink_state_free(void *state);
void fill_data(unsigned char *data, uint64_t n, size_t itemsize);
int cb_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out);
void reference_chunk(const sink *s, uint64_t lin_chunk, unsigned char *out);
void sink_init(sink *s, int ndim, const uint64_t *shape, const uint64_t *chunks, size_t itemsize);
void sink_clear(sink *s);
void target_of(nz__target *t, sink *s);

#endif
