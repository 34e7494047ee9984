/* Allocations fail one by one through an NWB write: every failure returns
 * an error with a message, leaves a store that nz_nwb_check_complete calls
 * incomplete (or none at all), and a resume without failures then finishes
 * it into exactly the bytes of an uninterrupted write (fixed seed and date). Leaks are caught by
 * ASan in CI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test.h"
#include "util/alloc.h"

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

int main(void)
{
	char ref[1024], out[1024], cmd[2200];
	const char *tmp = getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp";
	long n, total, step, failed = 0;
	for (size_t i = 0; i < sizeof g_data / sizeof *g_data; i++)
		g_data[i] = (int16_t)(i * 7 % 1000);
	snprintf(ref, sizeof ref, "%s/rel_oom_ref.nwb.zarr", tmp);
	snprintf(out, sizeof out, "%s/rel_oom.nwb.zarr", tmp);
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", out);
	nz__alloc_fail_after(0);
	ASSERT_OK(build(ref, 0));
	total = nz__alloc_fail_after(0);
	ASSERT(total > 50);
	ASSERT_OK(status(ref));
	step = getenv("NZ_OOM_ALL") || total <= 30 ? 1 : total / 30;
	for (n = 1; n <= total; n += n < 10 ? 1 : step) {
		int err, st;
		ASSERT(system(cmd) == 0);
		nz__alloc_fail_after(n);
		err = build(out, 0);
		nz__alloc_fail_after(0);
		if (err == 0)
			continue; /* the failing allocation was not needed */
		failed++;
		if (nz_error_last()->message[0] == '\0')
			NZ__FAIL("allocation %ld: error %d without a message", n, err);
		st = status(out);
		if (st != NZ_EINCOMPLETE && st != NZ_ENOTFOUND)
			NZ__FAIL("allocation %ld failed (%s) but the store's status is %d", n,
				 nz_error_last()->message, st);
		/* A resume finishes it into the bytes of an uninterrupted write
		 * (every third failure: each finished write waits for a sync). */
		if (failed % 3 != 1)
			continue;
		/* The resume itself may fail too (at an allocation spread over
		 * its run): again an error and an incomplete store. */
		nz__alloc_fail_after(1 + (n * 7) % (total / 2));
		err = build(out, 1);
		nz__alloc_fail_after(0);
		if (err < 0 && (st = status(out)) != NZ_EINCOMPLETE && st != NZ_ENOTFOUND)
			NZ__FAIL("allocation %ld: a failed resume left status %d", n, st);
		if (err < 0)
			ASSERT_OK(build(out, 1));
		ASSERT_OK(status(out));
		if (!same_tree(ref, out))
			NZ__FAIL("allocation %ld: the resumed store differs from the reference", n);
	}
	ASSERT(failed > 10);
	printf("%ld allocations; failures injected every %ld; %ld failed runs (every third "
	       "resumed)\n", total, step, failed);
	return 0;
}
