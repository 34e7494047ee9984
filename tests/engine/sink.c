/* The recording sink and the reference data shared by the engine tests. */
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include "sink.h"
#include "test.h"
#include "util/error.h"

atomic_int signals_open; /* puts that ran with signals unblocked */

/* Per-worker sink states alive: every write must free all it made. */
atomic_int states_live;

unsigned char byte_at(uint64_t linear, size_t b)
{
	uint64_t x = linear * 0x9E3779B97F4A7C15ull + b * 0xBF58476D1CE4E5B9ull;
	x ^= x >> 31;
	return (unsigned char)(x * 0x94D049BB133111EBull >> 56);
}

uint64_t linear_of(const sink *s, const uint64_t *idx)
{
	uint64_t lin = 0;
	int d;
	for (d = 0; d < s->ndim; d++)
		lin = lin * s->grid[d] + idx[d];
	return lin;
}

int sink_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len)
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
	if (pthread_equal(pthread_self(), s->caller))
		atomic_fetch_add(&s->on_caller, 1);
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

void sink_state_free(void *state)
{
	atomic_fetch_sub(&states_live, 1);
	free(state);
}

/* The data: element at C-order linear index L has bytes byte_at(L, b). */
void fill_data(unsigned char *data, uint64_t n, size_t itemsize)
{
	uint64_t i;
	size_t b;
	for (i = 0; i < n; i++)
		for (b = 0; b < itemsize; b++)
			data[i * itemsize + b] = byte_at(i, b);
}

int cb_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
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
void reference_chunk(const sink *s, uint64_t lin_chunk, unsigned char *out)
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

void sink_init(sink *s, int ndim, const uint64_t *shape, const uint64_t *chunks,
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
	s->caller = pthread_self();
	atomic_init(&s->on_caller, 0);
}

void sink_clear(sink *s)
{
	uint64_t i;
	for (i = 0; i < s->nchunks; i++)
		free(s->got[i]);
	free(s->got);
	free((void *)s->writes);
}

void target_of(nz__target *t, sink *s)
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
