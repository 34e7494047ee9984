/* Every allocation of a whole-session conversion fails in turn
 * (tests/oom.h): nz_rec_open of a SpikeGLX run (AP, LF, NIDQ with the real
 * .meta files) and nz_nwb_add_recording into a new file. Each refused
 * allocation ends in NZ_ENOMEM with a message and leaves no store that
 * nz_nwb_check_complete calls complete. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "oom.h"

static char g_run[1024], g_out[1024];

static void copy(const char *from, const char *to)
{
	char buf[65536];
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	size_t n;
	ASSERT(in && out);
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ASSERT(fwrite(buf, 1, n, out) == n);
	fclose(in);
	fclose(out);
}

static void stream(const char *meta, const char *name, int cols, int frames)
{
	char from[2048], to[2048];
	FILE *f;
	snprintf(from, sizeof from, "%s/recordings/spikeglx/%s", getenv("NZ_REF"), meta);
	snprintf(to, sizeof to, "%s/%s.meta", g_run, name);
	copy(from, to);
	snprintf(to, sizeof to, "%s/%s.bin", g_run, name);
	ASSERT((f = fopen(to, "wb")) != NULL);
	for (int i = 0; i < cols * frames; i++) {
		int16_t v = (int16_t)(i % 1000 - 500);
		ASSERT(fwrite(&v, sizeof v, 1, f) == 1);
	}
	fclose(f);
}

static int run(void *ctx)
{
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_recording_opts ro = NZ_NWB_RECORDING_OPTS_INIT;
	nz_rec *r = NULL;
	nz_nwb *f = NULL;
	int err;
	(void)ctx;
	o.identifier = "oom";
	o.session_description = "oom";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.file_create_date = "2024-01-02T03:04:05Z";
	o.jobs = 1;
	o.object_id_seed = 1;
	ro.location = "CA1";
	if ((err = nz_rec_open(&r, g_run)) < 0 || (err = nz_nwb_create(&f, g_out, &o)) < 0 ||
	    (err = nz_nwb_add_recording(f, r, &ro)) < 0 || (err = nz_nwb_close(f)) < 0)
		goto done;
done:
	nz_nwb_free(f);
	nz_rec_free(r);
	return err;
}

static void reset(void *ctx)
{
	(void)ctx;
	nz_test_rm_rf(g_out);
}

int main(void)
{
	nz_oom_sweep s = {"session", run, reset, nz_oom_nwb_not_complete, g_out, 30, 60, 0, 0};
	const char *tmp = getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp";
	snprintf(g_run, sizeof g_run, "%s/rec_oom_g0", tmp);
	snprintf(g_out, sizeof g_out, "%s/rec_oom.nwb.zarr", tmp);
	nz_test_rm_rf(g_run);
	ASSERT(mkdir(g_run, 0777) == 0);
	stream("sample3B_g0_t0.imec1.ap.meta", "o_g0_t0.imec0.ap", 385, 40);
	stream("sample3B_g0_t0.imec1.lf.meta", "o_g0_t0.imec0.lf", 385, 8);
	stream("sample3B_g0_t0.nidq.meta", "o_g0_t0.nidq", 2, 40);
	ASSERT(nz_oom_run_sweep(&s) > 60);
	return 0;
}
