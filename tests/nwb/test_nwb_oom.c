/* Every allocation of a small NWB build fails in turn: each run must end in
 * an error (or success once past the last allocation), never a crash or a
 * leak (run under ASan in CI). */
#include <stdio.h>
#include <stdlib.h>

#include "test.h"
#include "util/alloc.h"

static int build(const char *out)
{
	static const int16_t data[6] = {1, 2, 3, 4, 5, 6};
	uint64_t shape[2] = {3, 2};
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_nwb_subject sub = NZ_NWB_SUBJECT_INIT;
	nz_source *src = NULL;
	nz_nwb *f = NULL;
	int err;
	o.identifier = "oom";
	o.session_description = "oom";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.file_create_date = "2024-01-02T03:04:05Z";
	o.overwrite = 1;
	o.jobs = 1;
	o.object_id_seed = 1;
	sub.subject_id = "m";
	e.group = "g";
	e.x = 1;
	e.filtering = "none";
	so.name = "es";
	so.rate = 10;
	if ((err = nz_nwb_create(&f, out, &o)) < 0 || (err = nz_nwb_set_subject(f, &sub)) < 0 ||
	    (err = nz_nwb_add_device(f, "d", "dev", NULL)) < 0 ||
	    (err = nz_nwb_add_electrode_group(f, "g", "grp", "CA1", "d")) < 0 ||
	    (err = nz_nwb_add_electrodes(f, &e, 2, 1)) < 0 ||
	    (err = nz_source_from_memory(&src, data, "<i2", 2, shape)) < 0 ||
	    (err = nz_nwb_add_electrical_series(f, &so, src)) < 0 || (err = nz_nwb_close(f)) < 0)
		goto done;
done:
	nz_source_free(src);
	nz_nwb_free(f);
	return err;
}

int main(void)
{
	char out[1024];
	long n, total, step;
	snprintf(out, sizeof out, "%s/nwb_oom.nwb.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz__alloc_fail_after(0);
	ASSERT_OK(build(out));
	total = nz__alloc_fail_after(0);
	ASSERT(total > 50);
	/* Each build writes a small store (tens of files) and waits for the
	 * engine: test about 80 failure points spread over the allocations
	 * (the first 20 always); NZ_OOM_ALL=1 in the environment runs them all. */
	step = getenv("NZ_OOM_ALL") || total <= 80 ? 1 : total / 80;
	for (n = 1; n <= total; n += n < 20 ? 1 : step) {
		int err;
		nz__alloc_fail_after(n);
		err = build(out);
		nz__alloc_fail_after(0);
		if (err < 0 && nz_error_last()->message[0] == '\0')
			NZ__FAIL("allocation %ld: error %d without a message", n, err);
	}
	ASSERT_OK(build(out)); /* and nothing was left broken */
	printf("%ld allocations; failures injected every %ld\n", total, step);
	return 0;
}
