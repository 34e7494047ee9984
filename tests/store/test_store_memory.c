/* Memory store: put/get/overwrite/remove, list semantics (prefix, order,
 * early stop, re-entrant callback), hash-table growth and deletion with many
 * keys, concurrent writers and readers, allocation failures, and a zarr array
 * written and read back through it. */
#include <pthread.h>

#include "oom.h"
#include "util/alloc.h"

typedef struct seen {
	char keys[16][64];
	int n;
} seen;

static int collect(const char *key, void *payload)
{
	seen *s = payload;
	if (s->n == 16)
		return 99;
	snprintf(s->keys[s->n++], 64, "%s", key);
	return 0;
}

static int count(const char *key, void *payload)
{
	(*(long *)payload)++;
	return 0;
}

static void expect_value(nz_store *s, const char *key, const char *want)
{
	void *v = NULL;
	size_t len = 99;
	ASSERT_OK(nz_store_get(s, key, &v, &len));
	ASSERT_EQ_U64(len, strlen(want));
	ASSERT(v != NULL);
	ASSERT_MEM_EQ(v, want, len);
	nz_free(v);
}

static void test_basic(void)
{
	nz_store *s = NULL;
	void *v = (void *)1;
	size_t len = 7;
	ASSERT_ERR(NZ_EINVAL, nz_store_new_memory(NULL));
	ASSERT_OK(nz_store_new_memory(&s));
	ASSERT_CONTAINS(nz_store_describe(s), "memory");
	ASSERT_EQ_INT(nz_store_exists(s, "a"), 0);
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get(s, "a/.zarray", &v, &len));
	ASSERT_CONTAINS(nz_error_last()->message, "a/.zarray");
	ASSERT(v == NULL && len == 0);

	ASSERT_OK(nz_store_put(s, "a/.zarray", "{}", 2));
	expect_value(s, "a/.zarray", "{}");
	ASSERT_EQ_INT(nz_store_exists(s, "a/.zarray"), 1);
	ASSERT_EQ_INT(nz_store_exists(s, "a"), 0); /* a folder is not a key */
	ASSERT_OK(nz_store_put(s, "a/.zarray", "{\"x\": 1}", 8));
	expect_value(s, "a/.zarray", "{\"x\": 1}");

	/* An empty value is a value, and a caller's buffer is copied. */
	ASSERT_OK(nz_store_put(s, "empty", NULL, 0));
	expect_value(s, "empty", "");
	char buf[4] = "abc";
	ASSERT_OK(nz_store_put(s, "copied", buf, 3));
	buf[0] = 'X';
	expect_value(s, "copied", "abc");

	ASSERT_OK(nz_store_remove(s, "a/.zarray"));
	ASSERT_EQ_INT(nz_store_exists(s, "a/.zarray"), 0);
	ASSERT_OK(nz_store_remove(s, "a/.zarray")); /* missing: not an error */
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get(s, "a/.zarray", &v, &len));

	/* The front end's key checks apply to this backend too. */
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, "../x", "1", 1));
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, "a//b", "1", 1));
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, "x", NULL, 1));
	ASSERT_OK(nz_store_sync(s)); /* no sync op: a no-op */
	nz_store_free(s);
	nz_store_free(NULL);
}

static int put_from_callback(const char *key, void *payload)
{
	nz_store *s = payload;
	char k[80];
	snprintf(k, sizeof k, "copy/%s", key);
	return nz_store_put(s, k, key, strlen(key));
}

static void test_list(void)
{
	nz_store *s = NULL;
	seen sn = {0};
	long n = 0;
	const char *keys[] = {"g/b/0.0", "g/.zgroup", "g/a", "g/a/.zarray", "ga/x", "z", "g/b/1.0"};
	ASSERT_OK(nz_store_new_memory(&s));
	ASSERT_OK(nz_store_list(s, "", collect, &sn));
	ASSERT_EQ_INT(sn.n, 0);
	for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
		ASSERT_OK(nz_store_put(s, keys[i], "v", 1));

	ASSERT_OK(nz_store_list(s, "", collect, &sn));
	ASSERT_EQ_INT(sn.n, 7);
	for (int i = 1; i < sn.n; i++) /* sorted */
		ASSERT(strcmp(sn.keys[i - 1], sn.keys[i]) < 0);

	/* "g" and "g/" match "g/..." but never "ga/x". */
	sn.n = 0;
	ASSERT_OK(nz_store_list(s, "g/", collect, &sn));
	ASSERT_EQ_INT(sn.n, 5);
	ASSERT_EQ_STR(sn.keys[0], "g/.zgroup");
	ASSERT_EQ_STR(sn.keys[4], "g/b/1.0");
	/* A prefix that is itself a key lists it and the keys below it. */
	sn.n = 0;
	ASSERT_OK(nz_store_list(s, "g/a", collect, &sn));
	ASSERT_EQ_INT(sn.n, 2);
	ASSERT_EQ_STR(sn.keys[0], "g/a");
	ASSERT_EQ_STR(sn.keys[1], "g/a/.zarray");
	sn.n = 0;
	ASSERT_OK(nz_store_list(s, "nothing", collect, &sn));
	ASSERT_EQ_INT(sn.n, 0);
	ASSERT_ERR(NZ_EINVAL, nz_store_list(s, "/abs", collect, &sn));

	/* A non-zero callback result stops the listing and is returned. */
	sn.n = 16;
	ASSERT_EQ_INT(nz_store_list(s, "", collect, &sn), 99);

	/* The callback may write to the store it is listing (no deadlock); the
	 * snapshot does not see its own additions. */
	ASSERT_OK(nz_store_list(s, "g", put_from_callback, s));
	ASSERT_OK(nz_store_list(s, "copy", count, &n));
	ASSERT_EQ_INT(n, 5);
	expect_value(s, "copy/g/b/0.0", "g/b/0.0");
	nz_store_free(s);
}

/* Enough keys to grow the table several times, then removals in a pattern
 * that shifts probe runs back, checking every survivor stays reachable. */
static void test_many(void)
{
	enum { N = 5000 };
	nz_store *s = NULL;
	char key[32], val[32];
	long n = 0;
	ASSERT_OK(nz_store_new_memory(&s));
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof key, "d/%d.%d", i / 100, i % 100);
		snprintf(val, sizeof val, "%d", i);
		ASSERT_OK(nz_store_put(s, key, val, strlen(val)));
	}
	for (int i = 0; i < N; i += 3) {
		snprintf(key, sizeof key, "d/%d.%d", i / 100, i % 100);
		ASSERT_OK(nz_store_remove(s, key));
	}
	for (int i = 0; i < N; i++) {
		snprintf(key, sizeof key, "d/%d.%d", i / 100, i % 100);
		snprintf(val, sizeof val, "%d", i);
		ASSERT_EQ_INT(nz_store_exists(s, key), i % 3 != 0);
		if (i % 3)
			expect_value(s, key, val);
	}
	ASSERT_OK(nz_store_list(s, "d", count, &n));
	ASSERT_EQ_INT(n, N - (N + 2) / 3);
	nz_store_free(s);
}

#define THREADS 8
#define KEYS 300

typedef struct job {
	nz_store *store;
	int id;
	int err;
	nz_error error;
} job;

/* Each thread writes its own keys, overwrites one shared key with a value
 * whose bytes all equal its id, and reads the shared key back: a reader must
 * see one writer's whole value, never a mix. */
static void *worker(void *arg)
{
	job *j = arg;
	char key[64], val[64], shared[200];
	memset(shared, 'A' + j->id, sizeof shared);
	for (int k = 0; k < KEYS && !j->err; k++) {
		void *v = NULL;
		size_t len;
		snprintf(key, sizeof key, "t%d/%d", j->id, k);
		snprintf(val, sizeof val, "value %d %d", j->id, k);
		if ((j->err = nz_store_put(j->store, key, val, strlen(val))) ||
		    (j->err = nz_store_put(j->store, "shared", shared, sizeof shared)) ||
		    (j->err = nz_store_get(j->store, "shared", &v, &len)))
			break;
		if (len != sizeof shared || ((char *)v)[0] < 'A' || ((char *)v)[0] >= 'A' + THREADS ||
		    memcmp(v, (char *)v + 1, len - 1) != 0) {
			j->err = -100;
			snprintf(j->error.message, sizeof j->error.message, "torn value of 'shared'");
		}
		nz_free(v);
		if (k % 2 && !j->err)
			j->err = nz_store_remove(j->store, key);
	}
	if (j->err && j->err != -100)
		j->error = *nz_error_last();
	return NULL;
}

static void test_threads(void)
{
	nz_store *s = NULL;
	pthread_t t[THREADS];
	job jobs[THREADS];
	long n = 0;
	ASSERT_OK(nz_store_new_memory(&s));
	for (int i = 0; i < THREADS; i++) {
		jobs[i] = (job){s, i, 0, {0, ""}};
		ASSERT(pthread_create(&t[i], NULL, worker, &jobs[i]) == 0);
	}
	for (int i = 0; i < THREADS; i++) {
		ASSERT(pthread_join(t[i], NULL) == 0);
		if (jobs[i].err)
			NZ__FAIL("thread %d: %s", i, jobs[i].error.message);
	}
	ASSERT_OK(nz_store_list(s, "", count, &n));
	ASSERT_EQ_INT(n, THREADS * KEYS / 2 + 1);
	for (int i = 0; i < THREADS; i++)
		for (int k = 0; k < KEYS; k += 2) {
			char key[64], val[64];
			snprintf(key, sizeof key, "t%d/%d", i, k);
			snprintf(val, sizeof val, "value %d %d", i, k);
			expect_value(s, key, val);
		}
	nz_store_free(s);
}

static int store_ops(void)
{
	nz_store *s = NULL;
	void *v = NULL;
	size_t len;
	seen sn = {0};
	int rc = nz_store_new_memory(&s);
	for (int i = 0; rc == 0 && i < 20; i++) { /* crosses one table growth */
		char key[16];
		snprintf(key, sizeof key, "k/%d", i);
		rc = nz_store_put(s, key, "abc", 3);
	}
	if (rc == 0)
		rc = nz_store_put(s, "k/0", "abcd", 4);
	if (rc == 0)
		rc = nz_store_get(s, "k/0", &v, &len);
	if (rc == 0)
		rc = nz_store_list(s, "k/1", collect, &sn);
	if (rc == 0)
		rc = nz_store_remove(s, "k/0");
	nz_free(v);
	nz_store_free(s);
	return rc;
}

static int run_store_ops(void *ctx)
{
	return store_ops();
}

static void test_alloc_failures(void)
{
	nz_oom_sweep s = {"memory store", run_store_ops, NULL, NULL, NULL, 0, 0, 0, 0};
	ASSERT(nz_oom_run_sweep(&s) > 20);
}

/* The zarr layer runs unchanged on this backend. */
static void test_zarr(void)
{
	nz_store *s = NULL;
	nz_array *a = NULL, *b = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[1] = {10}, chunks[1] = {4};
	int32_t in[10], out[10];
	for (int i = 0; i < 10; i++)
		in[i] = i * i - 7;
	o.dtype = "<i4";
	o.ndim = 1;
	o.shape = shape;
	o.chunks = chunks;
	ASSERT_OK(nz_store_new_memory(&s));
	ASSERT_OK(nz_array_create(&a, s, "g/data", &o));
	ASSERT_OK(nz_array_write_all(a, in, sizeof in));
	ASSERT_EQ_INT(nz_store_exists(s, "g/data/2"), 1);
	ASSERT_OK(nz_array_open(&b, s, "g/data"));
	uint64_t start[1] = {0}, cnt[1] = {10};
	ASSERT_OK(nz_array_read_region(b, start, cnt, out, sizeof out));
	ASSERT_MEM_EQ(in, out, sizeof in);
	nz_array_free(a);
	nz_array_free(b);
	nz_store_free(s);
}

int main(void)
{
	test_basic();
	test_list();
	test_many();
	test_threads();
	test_alloc_failures();
	test_zarr();
	return 0;
}
