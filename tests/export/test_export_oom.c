/* Allocation failures injected through export and verify of a small
 * reference file (tests/oom.h): each refused allocation ends the run in
 * NZ_ENOMEM with a message; a failed export leaves no store that
 * nz_nwb_check_complete calls complete, and a failed verify never passes.
 * Never a crash or a leak (ASan in CI). */
#include <stdio.h>
#include <stdlib.h>

#include "oom.h"

static char src[1024], dst[1024];

static int g_export_err;

static int run(void *ctx)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	o.jobs = 2;
	o.overwrite = 1;
	vo.jobs = 2;
	if ((g_export_err = nz_export_hdf5(src, dst, &o)) < 0)
		return g_export_err;
	return nz_verify(NULL, src, dst, &vo);
}

static void reset(void *ctx)
{
	nz_test_rm_rf(dst);
}

/* The export's failure leaves nothing complete; a verify's failure (after a
 * successful export) is its own: the store stays as written. */
static void failed(void *ctx, long n)
{
	nz_store *st = NULL;
	int err;
	if (g_export_err == 0)
		return;
	err = nz_store_open_dir(&st, dst, NZ_STORE_READ);
	if (err == 0)
		err = nz_nwb_check_complete(st);
	nz_store_free(st);
	if (err != NZ_EINCOMPLETE && err != NZ_ENOTFOUND)
		NZ__FAIL("allocation %ld refused in export, but the store's status is %d", n, err);
}

int main(void)
{
	/* About 80 failure points over the allocations (the first 20 always);
	 * NZ_OOM_ALL=1 runs them all. */
	nz_oom_sweep s = {"export + verify", run, reset, failed, NULL, 20, 80, 1, 0};
	const char *data = getenv("NZ_REF");
	if (!data) {
		printf("NZ_REF not set\n");
		return 1;
	}
	snprintf(src, sizeof src, "%s/nwb/2.2.0_subject_no_age__reference.nwb", data);
	snprintf(dst, sizeof dst, "%s/export_oom.nwb.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	ASSERT(nz_oom_run_sweep(&s) > 50);
	return 0;
}
