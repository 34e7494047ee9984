/* Plans: every chunk in exactly one task, C order of tasks, parts disjoint
 * and complete, edge cases (0-d, empty, oversized task shapes). */
#include "test.h"

/* Mark each chunk covered by the plan's tasks in `seen` (C-order grid). */
static void cover(unsigned *seen, const nz_plan *plan, int ndim, const uint64_t *grid)
{
	uint64_t i, n = nz_plan_ntasks(plan), k, idx[NZ_MAX_DIMS];
	nz_task t;
	int d;

	for (i = 0; i < n; i++) {
		uint64_t total = 1;
		ASSERT_OK(nz_plan_task(&t, plan, i));
		ASSERT_EQ_INT(t.ndim, ndim);
		for (d = 0; d < ndim; d++) {
			ASSERT(t.chunk_count[d] >= 1);
			ASSERT(t.chunk_start[d] + t.chunk_count[d] <= grid[d]);
			total *= t.chunk_count[d];
		}
		for (k = 0; k < total; k++) {
			uint64_t rest = k, lin = 0;
			for (d = ndim - 1; d >= 0; d--) {
				idx[d] = t.chunk_start[d] + rest % t.chunk_count[d];
				rest /= t.chunk_count[d];
			}
			for (d = 0; d < ndim; d++)
				lin = lin * grid[d] + idx[d];
			seen[lin]++;
		}
	}
}

static void check_plan(int ndim, const uint64_t *shape, const uint64_t *chunks, const uint64_t *tc)
{
	uint64_t grid[NZ_MAX_DIMS], nchunks = 1, i, K, k, sum;
	unsigned *seen;
	nz_plan *plan, *part;
	int d;

	for (d = 0; d < ndim; d++) {
		grid[d] = (shape[d] + chunks[d] - 1) / chunks[d];
		nchunks *= grid[d];
	}
	ASSERT_OK(nz_plan_new(&plan, ndim, shape, chunks, tc));
	ASSERT_EQ_U64(nz_plan_nchunks(plan), nchunks);
	seen = calloc(nchunks + 1, sizeof *seen);
	cover(seen, plan, ndim, grid);
	for (i = 0; i < nchunks; i++)
		ASSERT_EQ_INT(seen[i], 1);
	/* Parts: together exactly the whole plan, in order, each contiguous. */
	for (K = 1; K <= 5; K++) {
		uint64_t next = 0;
		memset(seen, 0, (nchunks + 1) * sizeof *seen);
		for (k = 0, sum = 0; k < K; k++) {
			nz_task t;
			ASSERT_OK(nz_plan_part(&part, plan, k, K));
			sum += nz_plan_ntasks(part);
			for (i = 0; i < nz_plan_ntasks(part); i++) {
				ASSERT_OK(nz_plan_task(&t, part, i));
				ASSERT_EQ_U64(t.index, next);
				next++;
			}
			cover(seen, part, ndim, grid);
			nz_plan_free(part);
		}
		ASSERT_EQ_U64(sum, nz_plan_ntasks(plan));
		for (i = 0; i < nchunks; i++)
			ASSERT_EQ_INT(seen[i], 1);
	}
	free(seen);
	nz_plan_free(plan);
}

int main(void)
{
	nz_plan *plan, *part, *sub;
	nz_task t;

	{ /* hdmf's chunks of a 1 s recording, bands of 6 chunks */
		uint64_t shape[2] = {30000, 384}, chunks[2] = {4096, 32}, tc[2] = {1, 6};
		check_plan(2, shape, chunks, tc);
		check_plan(2, shape, chunks, NULL);
		ASSERT_OK(nz_plan_new(&plan, 2, shape, chunks, tc));
		ASSERT_EQ_U64(nz_plan_ntasks(plan), 8 * 2);
		/* C order over the task grid: the second task is the second band
		 * of the first rows. */
		ASSERT_OK(nz_plan_task(&t, plan, 1));
		ASSERT_EQ_U64(t.chunk_start[0], 0);
		ASSERT_EQ_U64(t.chunk_start[1], 6);
		ASSERT_EQ_U64(t.chunk_count[1], 6);
		ASSERT_OK(nz_plan_task(&t, plan, 15));
		ASSERT_EQ_U64(t.chunk_start[0], 7);
		ASSERT_ERR(NZ_EINVAL, nz_plan_task(&t, plan, 16));
		ASSERT_CONTAINS(nz_error_last()->message, "out of range");
		/* A part of a part keeps whole-plan indices. */
		ASSERT_OK(nz_plan_part(&part, plan, 1, 2));
		ASSERT_OK(nz_plan_part(&sub, part, 1, 2));
		ASSERT_EQ_U64(nz_plan_ntasks(sub), 4);
		ASSERT_OK(nz_plan_task(&t, sub, 0));
		ASSERT_EQ_U64(t.index, 12);
		nz_plan_free(sub);
		ASSERT_ERR(NZ_EINVAL, nz_plan_part(&sub, part, 2, 2));
		ASSERT(sub == NULL);
		nz_plan_free(part);
		nz_plan_free(plan);
	}
	{ /* uneven edges, task shape larger than the grid */
		uint64_t shape[3] = {7, 5, 9}, chunks[3] = {3, 2, 4}, tc[3] = {2, 9, 2};
		check_plan(3, shape, chunks, tc);
		check_plan(3, shape, chunks, NULL);
	}
	{ /* chunks larger than the shape */
		uint64_t shape[2] = {3, 3}, chunks[2] = {10, 10};
		check_plan(2, shape, chunks, NULL);
	}
	{ /* 0-d: one task of one chunk */
		ASSERT_OK(nz_plan_new(&plan, 0, NULL, NULL, NULL));
		ASSERT_EQ_U64(nz_plan_ntasks(plan), 1);
		ASSERT_EQ_U64(nz_plan_nchunks(plan), 1);
		ASSERT_OK(nz_plan_task(&t, plan, 0));
		ASSERT_EQ_INT(t.ndim, 0);
		nz_plan_free(plan);
	}
	{ /* empty: no tasks, parts of it are empty too */
		uint64_t shape[2] = {0, 384}, chunks[2] = {100, 32};
		ASSERT_OK(nz_plan_new(&plan, 2, shape, chunks, NULL));
		ASSERT_EQ_U64(nz_plan_ntasks(plan), 0);
		ASSERT_EQ_U64(nz_plan_nchunks(plan), 0);
		ASSERT_OK(nz_plan_part(&part, plan, 2, 3));
		ASSERT_EQ_U64(nz_plan_ntasks(part), 0);
		nz_plan_free(part);
		nz_plan_free(plan);
	}
	{ /* bad arguments */
		uint64_t shape[2] = {10, 10}, chunks[2] = {0, 5}, tc[2] = {1, 0}, ok[2] = {5, 5};
		ASSERT_ERR(NZ_EINVAL, nz_plan_new(&plan, 2, shape, chunks, NULL));
		ASSERT(plan == NULL);
		ASSERT_CONTAINS(nz_error_last()->message, "dimension 0");
		ASSERT_ERR(NZ_EINVAL, nz_plan_new(&plan, 2, shape, ok, tc));
		ASSERT_ERR(NZ_EINVAL, nz_plan_new(&plan, NZ_MAX_DIMS + 1, shape, ok, NULL));
	}
	{ /* random shapes */
		unsigned seed = 12345;
		int it;
		for (it = 0; it < 200; it++) {
			uint64_t shape[4], chunks[4], tc[4];
			int ndim = 1 + (int)(rand_r(&seed) % 4), d;
			for (d = 0; d < ndim; d++) {
				shape[d] = 1 + rand_r(&seed) % 20;
				chunks[d] = 1 + rand_r(&seed) % 8;
				tc[d] = 1 + rand_r(&seed) % 4;
			}
			check_plan(ndim, shape, chunks, it % 2 ? tc : NULL);
		}
	}
	nz_plan_free(NULL);
	printf("ok\n");
	return 0;
}
