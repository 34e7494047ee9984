/* Every allocation of a small NWB build fails in turn (tests/oom.h): each
 * refused allocation ends the build in NZ_ENOMEM with a message and leaves no
 * store that nz_nwb_check_complete calls complete; never a crash or a leak
 * (run under ASan in CI). */
#include <stdio.h>
#include <stdlib.h>

#include "oom.h"

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

static char g_out[1024];

static int run(void *ctx)
{
	return build(g_out);
}

static void reset(void *ctx)
{
	nz_test_rm_rf(g_out);
}

int main(void)
{
	/* Each build writes a small store (tens of files) and waits for the
	 * engine: about 80 failure points (the first 20 always). */
	/* A failed build leaves no directory or an incomplete one. */
	nz_oom_sweep s = {"nwb build", run, reset, nz_oom_nwb_not_complete, g_out, 20, 80, 0, 0};
	snprintf(g_out, sizeof g_out, "%s/nwb_oom.nwb.zarr",
		 getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	ASSERT(nz_oom_run_sweep(&s) > 50);
	return 0;
}
