/* See cli_mpi.h. Compiled in every build; only NZ_HAVE_MPI builds call MPI. */
#include "cli_mpi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef NZ_HAVE_MPI
#include <mpi.h>
#endif

/* Process-wide, like MPI itself (cli_mpi.h). */
static struct {
	int active;    /* MPI_Init was called here, MPI_Finalize not yet */
	int rank, size;
	int exchanges; /* nzc_mpi_agree calls made */
	char tag[48];
} g_mpi = {0, 0, 1, 0, ""};

/* mpirun (OpenMPI, MPICH, Slurm's PMI) marks the processes it starts; a
 * program run by hand stays a single process and never touches MPI. */
static int launched_by_mpirun(void)
{
	static const char *const vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK",
					   "PMI_SIZE"};
	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i]))
			return 1;
	return 0;
}

int nzc_mpi_init(void)
{
	if (g_mpi.active || !launched_by_mpirun())
		return 0;
#ifdef NZ_HAVE_MPI
	int inited = 0, provided;
	MPI_Initialized(&inited);
	/* FUNNELED: the engine runs worker threads, but only this (main)
	 * thread calls MPI. */
	if (!inited && MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
		fprintf(stderr, "nwbzarr: cannot join the MPI job (MPI_Init failed)\n");
		return -1;
	}
	/* Errors of MPI calls come back as codes: a failed exchange is then a
	 * message and an exit, not an abort from inside MPI. */
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	MPI_Comm_rank(MPI_COMM_WORLD, &g_mpi.rank);
	MPI_Comm_size(MPI_COMM_WORLD, &g_mpi.size);
	g_mpi.active = 1;
	g_mpi.exchanges = 0;
	if (g_mpi.size > 1)
		snprintf(g_mpi.tag, sizeof g_mpi.tag, "rank %d of %d: ", g_mpi.rank, g_mpi.size);
	return 0;
#else
	/* Started by mpirun but built without MPI: every rank would write the
	 * whole file at once. Refuse rather than race. */
	{
		const char *n = getenv("OMPI_COMM_WORLD_SIZE");
		if (!n)
			n = getenv("PMI_SIZE");
		if (n && strcmp(n, "1") != 0) {
			fprintf(stderr, "nwbzarr: started by mpirun with %s processes, but this "
				"nwbzarr was built without MPI (cmake -DNZ_MPI=ON)\n", n);
			return -1;
		}
	}
	return 0;
#endif
}

void nzc_mpi_finalize(void)
{
#ifdef NZ_HAVE_MPI
	if (g_mpi.active)
		MPI_Finalize();
#endif
	g_mpi.active = 0;
}

int nzc_mpi_rank(void)
{
	return g_mpi.rank;
}

int nzc_mpi_size(void)
{
	return g_mpi.size;
}

const char *nzc_mpi_tag(void)
{
	return g_mpi.tag;
}

int nzc_mpi_agree(int status, const char *phase)
{
	int mine = status < 0 ? g_mpi.rank : g_mpi.size, first = mine;
	g_mpi.exchanges++;
#ifdef NZ_HAVE_MPI
	/* The lowest failing rank, or size when none failed. */
	if (g_mpi.active && MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) !=
				    MPI_SUCCESS) {
		fprintf(stderr, "nwbzarr: %sthe status exchange of phase '%s' failed\n", g_mpi.tag,
			phase);
		return -1;
	}
#endif
	if (first >= g_mpi.size)
		return 0;
	if (status >= 0)
		fprintf(stderr, "nwbzarr: %sstopping: rank %d failed in phase '%s'\n", g_mpi.tag, first,
			phase);
	return -1;
}

void nzc_mpi_leave(int nphases)
{
	while (g_mpi.size > 1 && g_mpi.exchanges < nphases)
		nzc_mpi_agree(-1, "leaving");
}

int nzc_mpi_test_fail(const char *phase)
{
	const char *r = getenv("NZ_TEST_FAIL_RANK"), *p = getenv("NZ_TEST_FAIL_PHASE");
	char *end;
	long k;
	if (!r || !*r)
		return 0;
	k = strtol(r, &end, 10);
	if (*end || k != g_mpi.rank || (p && *p && strcmp(p, phase) != 0))
		return 0;
	fprintf(stderr, "nwbzarr: %sinjected failure in phase '%s' (NZ_TEST_FAIL_RANK=%ld)\n",
		g_mpi.tag, phase, k);
	return -1;
}

/* Chunks per task: one chunk along the first (time) dimension, and along
 * the others as many whole chunks as fit in TASK_BYTES, so that a band
 * shares its rows of a row-major source. A function of the array alone:
 * every rank must cut the same plan (engine.h, nz_write_opts.part). */
#define TASK_BYTES ((uint64_t)8 << 20)

static void task_shape(uint64_t *tc, const nz_array *a)
{
	int ndim = nz_array_ndim(a);
	const uint64_t *shape = nz_array_shape(a), *chunks = nz_array_chunks(a);
	uint64_t cb = nz_array_chunk_nbytes(a), left = cb && cb < TASK_BYTES ? TASK_BYTES / cb : 1;
	for (int d = 0; d < ndim; d++)
		tc[d] = 1;
	for (int d = ndim - 1; d >= 1 && left > 1; d--) {
		uint64_t grid = shape[d] / chunks[d] + (shape[d] % chunks[d] != 0);
		tc[d] = grid < left ? (grid ? grid : 1) : left;
		left /= tc[d];
	}
}

int nzc_mpi_write_part(const char *store_path, const char *array_path, nz_source *src,
		       uint64_t part, uint64_t nparts, int jobs, int fsync, int resume,
		       const volatile sig_atomic_t *cancel_flag)
{
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	uint64_t tc[NZ_MAX_DIMS];
	nz_store *store = NULL;
	nz_array *a = NULL;
	int err;
	/* The array's shape and chunks decide the plan: read them first. */
	if ((err = nz_store_open_dir(&store, store_path, NZ_STORE_READ)) < 0 ||
	    (err = nz_array_open(&a, store, array_path)) < 0)
		goto done;
	task_shape(tc, a);
	wo.jobs = jobs;
	wo.task_chunks = tc;
	wo.part = part;
	wo.nparts = nparts;
	wo.cancel_flag = cancel_flag;
	/* Synced there: durable before the exchange that lets rank 0 mark the
	 * file complete. */
	err = nz_nwb_write_series_part(store_path, array_path, src, &wo, resume, fsync, NULL);
done:
	nz_array_free(a);
	nz_store_free(store);
	return err;
}

/* A library failure of this rank, printed with its tag; -1. */
static int fail_here(void)
{
	fprintf(stderr, "nwbzarr: %s%s\n", g_mpi.tag, nz_error_last()->message);
	return -1;
}

int nzc_mpi_finish(const char *store_path, int meta_status, nzc_mpi_data_fn data, void *ctx)
{
	int st = meta_status < 0 ? meta_status : nzc_mpi_test_fail("metadata");
	if (nzc_mpi_agree(st, "metadata") < 0)
		return -1;
	st = nzc_mpi_test_fail("data");
	if (st == 0 && data(ctx, (uint64_t)g_mpi.rank, (uint64_t)g_mpi.size) < 0)
		st = fail_here();
	if (nzc_mpi_agree(st, "data") < 0)
		return -1;
	/* Only rank 0 works in this phase: the others' part is already done. */
	st = g_mpi.rank == 0 ? nzc_mpi_test_fail("finalise") : 0;
	if (st == 0 && g_mpi.rank == 0 && nz_nwb_finalise(store_path) < 0)
		st = fail_here();
	return nzc_mpi_agree(st, "finalise");
}
