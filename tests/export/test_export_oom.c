/* Allocation failures injected through export and verify of a small
 * reference file: each run must end in an error with a message (or success
 * once past the last allocation), never a crash or a leak (ASan in CI). */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "util/alloc.h"

static char src[1024], dst[1024];

static int run(void)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	int err;
	o.jobs = 2;
	o.overwrite = 1;
	vo.jobs = 2;
	if ((err = nz_export_hdf5(src, dst, &o)) < 0)
		return err;
	return nz_verify(NULL, src, dst, &vo);
}

int main(void)
{
	long n, total, step;
	const char *data = getenv("NZ_REF");
	if (!data) {
		printf("NZ_REF not set\n");
		return 1;
	}
	snprintf(src, sizeof src, "%s/nwb/2.2.0_subject_no_age__reference.nwb", data);
	snprintf(dst, sizeof dst, "%s/export_oom.nwb.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz__alloc_fail_after(0);
	ASSERT_OK(run());
	total = nz__alloc_fail_after(0);
	ASSERT(total > 100);
	/* About 80 failure points over the allocations (the first 20 always);
	 * NZ_OOM_ALL=1 runs them all, NZ_OOM_STEP=k every k-th. */
	step = getenv("NZ_OOM_ALL") || total <= 80 ? 1 : total / 80;
	if (getenv("NZ_OOM_STEP") && atol(getenv("NZ_OOM_STEP")) > 0)
		step = atol(getenv("NZ_OOM_STEP"));
	for (n = 1; n <= total; n += n < 20 ? 1 : step) {
		int err;
		nz__alloc_fail_after(n);
		err = run();
		nz__alloc_fail_after(0);
		if (err < 0 && nz_error_last()->message[0] == '\0')
			NZ__FAIL("allocation %ld: error %d without a message", n, err);
	}
	ASSERT_OK(run()); /* and nothing was left broken */
	printf("%ld allocations; failures injected every %ld\n", total, step);
	return 0;
}
