/* Task plans. A plan is the task grid (chunk grid divided by the task shape)
 * plus a contiguous run [first, first+count) of its C-order task indices, so
 * splitting a plan into parts needs no list and every part is computed
 * identically on every process. */
#include <inttypes.h>
#include <string.h>

#include "nwbzarr/engine.h"
#include "util/alloc.h"
#include "util/error.h"

struct nz_plan {
	int ndim;
	uint64_t shape[NZ_MAX_DIMS];
	uint64_t chunks[NZ_MAX_DIMS];
	uint64_t grid[NZ_MAX_DIMS];        /* chunks per dimension */
	uint64_t task_chunks[NZ_MAX_DIMS]; /* chunks per task per dimension */
	uint64_t task_grid[NZ_MAX_DIMS];   /* tasks per dimension */
	uint64_t first, count;             /* this plan's run of task indices */
};

static uint64_t ceil_div(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

int nz_plan_new(nz_plan **out, int ndim, const uint64_t *shape, const uint64_t *chunks,
		const uint64_t *task_chunks)
{
	nz_plan *p;
	uint64_t ntasks = 1;
	int d, empty = 0;

	*out = NULL;
	if (ndim < 0 || ndim > NZ_MAX_DIMS || (ndim > 0 && (!shape || !chunks)))
		return nz__error_set(NZ_EINVAL, "plan: ndim %d out of range 0..%d or shape/chunks "
				     "missing", ndim, NZ_MAX_DIMS);
	for (d = 0; d < ndim; d++) {
		if (chunks[d] == 0 || (task_chunks && task_chunks[d] == 0))
			return nz__error_set(NZ_EINVAL, "plan: chunk or task extent 0 in dimension %d", d);
		if (shape[d] == 0)
			empty = 1;
	}
	if (!(p = nz__calloc(1, sizeof *p)))
		return nz__error_set(NZ_ENOMEM, "plan: out of memory");
	p->ndim = ndim;
	for (d = 0; d < ndim; d++) {
		p->shape[d] = shape[d];
		p->chunks[d] = chunks[d];
		p->grid[d] = ceil_div(shape[d], chunks[d]);
		p->task_chunks[d] = task_chunks ? task_chunks[d] : 1;
		if (p->task_chunks[d] > p->grid[d])
			p->task_chunks[d] = p->grid[d] ? p->grid[d] : 1;
		p->task_grid[d] = ceil_div(p->grid[d], p->task_chunks[d]);
		if (p->task_grid[d] && ntasks > UINT64_MAX / p->task_grid[d]) {
			nz__free(p);
			return nz__error_set(NZ_EINVAL, "plan: number of tasks overflows");
		}
		ntasks *= p->task_grid[d];
	}
	p->first = 0;
	p->count = empty ? 0 : ntasks;
	*out = p;
	return 0;
}

int nz_plan_part(nz_plan **out, const nz_plan *plan, uint64_t k, uint64_t nparts)
{
	nz_plan *p;
	uint64_t lo, hi;

	*out = NULL;
	if (nparts == 0 || k >= nparts)
		return nz__error_set(NZ_EINVAL, "plan part %" PRIu64 " of %" PRIu64 ": no such part",
				     k, nparts);
	if (!(p = nz__malloc(sizeof *p)))
		return nz__error_set(NZ_ENOMEM, "plan part: out of memory");
	*p = *plan;
	/* floor(count*k/nparts) without overflowing for huge counts. */
	lo = plan->count / nparts * k + plan->count % nparts * k / nparts;
	hi = plan->count / nparts * (k + 1) + plan->count % nparts * (k + 1) / nparts;
	p->first = plan->first + lo;
	p->count = hi - lo;
	*out = p;
	return 0;
}

void nz_plan_free(nz_plan *plan)
{
	nz__free(plan);
}

uint64_t nz_plan_ntasks(const nz_plan *plan)
{
	return plan->count;
}

int nz_plan_task(nz_task *out, const nz_plan *plan, uint64_t i)
{
	uint64_t rest;
	int d;

	if (i >= plan->count)
		return nz__error_set(NZ_EINVAL, "plan: task %" PRIu64 " out of range (%" PRIu64
				     " tasks)", i, plan->count);
	memset(out, 0, sizeof *out);
	out->index = plan->first + i;
	out->ndim = plan->ndim;
	rest = out->index;
	for (d = plan->ndim - 1; d >= 0; d--) {
		uint64_t t = rest % plan->task_grid[d];
		rest /= plan->task_grid[d];
		out->chunk_start[d] = t * plan->task_chunks[d];
		out->chunk_count[d] = plan->grid[d] - out->chunk_start[d] < plan->task_chunks[d]
					      ? plan->grid[d] - out->chunk_start[d]
					      : plan->task_chunks[d];
	}
	return 0;
}

uint64_t nz_plan_nchunks(const nz_plan *plan)
{
	uint64_t n = 0, i;
	nz_task t;
	int d;

	/* Only edge tasks are smaller; summing task by task is cheap next to
	 * writing them. */
	for (i = 0; i < plan->count; i++) {
		uint64_t c = 1;
		nz_plan_task(&t, plan, i);
		for (d = 0; d < plan->ndim; d++)
			c *= t.chunk_count[d];
		n += c;
	}
	return n;
}
