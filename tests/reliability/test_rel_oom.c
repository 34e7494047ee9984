/* Allocations fail one by one through an NWB write (tests/oom.h): every
 * refused allocation returns NZ_ENOMEM with a message, leaves a store that
 * nz_nwb_check_complete calls incomplete (or none at all), and a resume then
 * finishes it into exactly the bytes of an uninterrupted write (fixed seed
 * and date), even when the resume itself first fails the same way. Leaks are
 * caught by ASan in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "oom.h"

static int16_t g_data[40 * 4];

static int build(const char *out, int resume)
{
	uint64_t shape[2] = {40, 4}, chunks[2] = {10, 4};
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_source *src = NULL;
	nz_nwb *f = NULL;
	int err;
	o.identifier = "oom";
	o.session_description = "oom";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.file_create_date = "2024-01-02T03:04:05Z";
	o.object_id_seed = 9;
	o.overwrite = !resume;
	o.resume = resume;
	o.jobs = 2;
	e.group = "g";
	so.name = "es";
	so.rate = 10;
	so.chunks = chunks;
	if ((err = nz_nwb_create(&f, out, &o)) < 0 || (err = nz_nwb_add_device(f, "d", "dev", NULL)) < 0 ||
	    (err = nz_nwb_add_electrode_group(f, "g", "grp", "CA1", "d")) < 0 ||
	    (err = nz_nwb_add_electrodes(f, &e, 4, 1)) < 0 ||
	    (err = nz_source_from_memory(&src, g_data, "<i2", 2, shape)) < 0 ||
	    (err = nz_nwb_add_electrical_series(f, &so, src)) < 0 || (err = nz_nwb_close(f)) < 0)
		goto done;
done:
	nz_source_free(src);
	nz_nwb_free(f);
	return err;
}

/* 0 complete, NZ_EINCOMPLETE, NZ_ENOTFOUND when there is no directory. */
static int status(const char *path)
{
	nz_store *st = NULL;
	int err = nz_store_open_dir(&st, path, NZ_STORE_READ);
	if (err == 0)
		err = nz_nwb_check_complete(st);
	nz_store_free(st);
	return err;
}

typedef struct tree {
	nz_store *a, *b;
	int differ;
	size_t n;
} tree;

static int same_key(const char *key, void *payload)
{
	tree *t = payload;
	void *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	if (nz_store_get(t->a, key, &x, &nx) < 0 || nz_store_get(t->b, key, &y, &ny) < 0 ||
	    nx != ny || memcmp(x, y, nx) != 0) {
		fprintf(stderr, "key '%s' differs\n", key);
		t->differ = 1;
	}
	t->n++;
	nz_free(x);
	nz_free(y);
	return 0;
}

/* Every key of `b` is in `a` with the same bytes, and both have as many. */
static int same_tree(const char *a, const char *b)
{
	tree t = {NULL, NULL, 0, 0}, u = {NULL, NULL, 0, 0};
	ASSERT_OK(nz_store_open_dir(&t.a, a, NZ_STORE_READ));
	ASSERT_OK(nz_store_open_dir(&t.b, b, NZ_STORE_READ));
	u.a = t.b;
	u.b = t.a;
	ASSERT_OK(nz_store_list(t.b, "", same_key, &t));
	ASSERT_OK(nz_store_list(t.a, "", same_key, &u));
	nz_store_free(t.a);
	nz_store_free(t.b);
	return !t.differ && !u.differ && t.n == u.n && t.n > 20;
}

static char g_ref[1024], g_out[1024];
static long g_failed;
static nz_oom_sweep g_sweep;

static int run(void *ctx)
{
	return build(g_out, 0);
}

static void reset(void *ctx)
{
	nz_test_rm_rf(g_out);
}

static void failed(void *ctx, long n)
{
	long refused;
	int err, st = status(g_out);
	if (st != NZ_EINCOMPLETE && st != NZ_ENOTFOUND)
		NZ__FAIL("allocation %ld refused, but the store's status is %d", n, st);
	/* A resume finishes it into the bytes of an uninterrupted write
	 * (every third failure: each finished write waits for a sync). */
	if (g_failed++ % 3 != 0)
		return;
	/* The resume itself may fail too (at an allocation spread over its
	 * run): then NZ_ENOMEM again, and again an incomplete store. */
	nz__alloc_fail_after(1 + (n * 7) % (g_sweep.total / 2));
	err = build(g_out, 1);
	refused = nz__alloc_refused();
	nz__alloc_fail_after(0);
	if (refused && err != NZ_ENOMEM)
		NZ__FAIL("allocation %ld: a resume with an allocation refused returned %d", n, err);
	if (!refused && err != 0)
		NZ__FAIL("allocation %ld: a resume with nothing refused returned %d", n, err);
	if (err < 0 && (st = status(g_out)) != NZ_EINCOMPLETE && st != NZ_ENOTFOUND)
		NZ__FAIL("allocation %ld: a failed resume left status %d", n, st);
	if (err < 0)
		ASSERT_OK(build(g_out, 1));
	ASSERT_OK(status(g_out));
	if (!same_tree(g_ref, g_out))
		NZ__FAIL("allocation %ld: the resumed store differs from the reference", n);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp";
	nz_oom_sweep s = {"nwb write + resume", run, reset, failed, NULL, 10, 30, 1, 0};
	for (size_t i = 0; i < sizeof g_data / sizeof *g_data; i++)
		g_data[i] = (int16_t)(i * 7 % 1000);
	snprintf(g_ref, sizeof g_ref, "%s/rel_oom_ref.nwb.zarr", tmp);
	snprintf(g_out, sizeof g_out, "%s/rel_oom.nwb.zarr", tmp);
	ASSERT_OK(build(g_ref, 0));
	ASSERT_OK(status(g_ref));
	g_sweep = s;
	ASSERT(nz_oom_run_sweep(&g_sweep) > 30);
	printf("%ld failed runs, every third resumed\n", g_failed);
	return 0;
}
