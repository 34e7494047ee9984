/* Chunks of one array written from several threads at once (each with its
 * own scratch) read back intact; run under ThreadSanitizer in CI. Also the
 * allocation-failure sweep: every allocation of create/write/open/read/
 * consolidate may fail, and each failure must come back as NZ_ENOMEM. */
#include <pthread.h>

#include "oom.h"
#include "util/alloc.h"
#include "util/error.h"

#define NT 4
#define ROWS 64
#define COLS 8

static nz_array *arr;

typedef struct job {
	int id;
	int err;
	nz_error error;
} job;

static void chunk_data(int32_t *buf, uint64_t ci)
{
	int k;
	for (k = 0; k < 4 * COLS; k++)
		buf[k] = (int32_t)(ci * 1000 + (uint64_t)k);
}

static void *worker(void *arg)
{
	job *j = arg;
	nz_scratch *s = NULL;
	int32_t buf[4 * COLS];
	uint64_t ci;
	if ((j->err = nz_scratch_new(&s)) < 0)
		goto done;
	/* Thread id takes chunks id, id+NT, ...: each chunk has one writer. */
	for (ci = (uint64_t)j->id; ci < ROWS / 4 && j->err == 0; ci += NT) {
		uint64_t idx[2] = { ci, 0 };
		chunk_data(buf, ci);
		j->err = nz_array_write_chunk(arr, s, idx, buf, sizeof buf);
	}
done:
	if (j->err)
		nz__error_save(&j->error);
	nz_scratch_free(s);
	return NULL;
}

static void threads(nz_store *st)
{
	uint64_t shape[2] = { ROWS, COLS }, chunks[2] = { 4, COLS }, ci;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	pthread_t t[NT];
	job jobs[NT];
	int32_t all[ROWS * COLS], want[4 * COLS];
	int i;
	o.dtype = "<i4", o.ndim = 2, o.shape = shape, o.chunks = chunks;
	ASSERT_OK(nz_array_create(&arr, st, "threads", &o));
	for (i = 0; i < NT; i++) {
		jobs[i] = (job){ .id = i };
		ASSERT(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
	}
	for (i = 0; i < NT; i++) {
		ASSERT(pthread_join(t[i], NULL) == 0);
		if (jobs[i].err)
			nz__error_restore(&jobs[i].error);
		ASSERT_OK(jobs[i].err);
	}
	ASSERT_OK(nz_array_read_region(arr, (uint64_t[]){ 0, 0 }, shape, all, sizeof all));
	for (ci = 0; ci < ROWS / 4; ci++) {
		chunk_data(want, ci);
		ASSERT_MEM_EQ(all + ci * 4 * COLS, want, sizeof want);
	}
	nz_array_free(arr);
}

/* One pass of everything the zarr layer allocates for. */
static int exercise(nz_store *st)
{
	uint64_t shape[1] = { 5 }, chunks[1] = { 2 }, idx[1] = { 0 };
	const char *items[5] = { "a", "b", "c", "d", "e" };
	size_t lens[5] = { 1, 1, 1, 1, 1 };
	int16_t data[5] = { 1, 2, 3, 4, 5 }, back[5];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	nz_vlen *v = NULL;
	char *attrs = NULL;
	int err;
	o.dtype = "<i2", o.ndim = 1, o.shape = shape, o.chunks = chunks;
	if ((err = nz_array_create(&a, st, "af/x", &o)) < 0 || (err = nz_array_write_all(a, data, sizeof data)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	if ((err = nz_array_open(&a, st, "af/x")) < 0 ||
	    (err = nz_array_read_region(a, idx, shape, back, sizeof back)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	o.dtype = "|O", o.object_codec = NZ_OBJECT_JSON2, o.chunks = chunks;
	items[0] = "{\"k\": [1, 2]}", items[1] = "1", items[2] = "\"c\"", items[3] = "null", items[4] = "2.5";
	for (int k = 0; k < 5; k++)
		lens[k] = strlen(items[k]);
	if ((err = nz_array_create(&a, st, "af/o", &o)) < 0 ||
	    (err = nz_array_write_all_vlen(a, items, lens, 5)) < 0 ||
	    (err = nz_array_read_chunk_vlen(&v, a, idx)) < 0)
		goto done;
	if ((err = nz_attrs_write(st, "af", "{\"b\": [1.5, \"x\"]}")) < 0 || (err = nz_attrs_read(&attrs, st, "af")) < 0 ||
	    (err = nz_consolidate(st)) < 0)
		goto done;
	ASSERT_MEM_EQ(back, data, sizeof data);
	ASSERT_EQ_STR(v->items[0], "{\"k\":[1,2]}");
done:
	nz_free(attrs);
	nz_vlen_free(v);
	nz_array_free(a);
	return err;
}

static int run_exercise(void *ctx)
{
	return exercise(ctx);
}

/* Every failure point up to 200, then about 100 more (tests/oom.h) so the
 * sweep stays fast under ASan; the whole pass is a few thousand allocations,
 * most of them jansson's (whose parser's failures must come out as
 * NZ_ENOMEM too, not as invalid JSON). */
static void alloc_failures(const char *root)
{
	nz_store *st = NULL;
	nz_oom_sweep s = {"zarr metadata, arrays, attributes", run_exercise, NULL, NULL, NULL, 200,
			  100, 0, 0};
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
	/* The second pass is the one the sweep repeats (groups then exist). */
	ASSERT_OK(exercise(st));
	s.ctx = st;
	ASSERT(nz_oom_run_sweep(&s) > 200);
	nz_store_free(st);
}

int main(void)
{
	char root[4096];
	nz_store *st = NULL;
	snprintf(root, sizeof root, "%s/zarr_threads", getenv("NZ_TMP"));
	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
	threads(st);
	nz_store_free(st);
	snprintf(root, sizeof root, "%s/zarr_allocfail", getenv("NZ_TMP"));
	nz_test_rm_rf(root);
	alloc_failures(root);
	printf("ok\n");
	return 0;
}
