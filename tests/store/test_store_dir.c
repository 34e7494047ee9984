/* Directory store: atomic put, nested keys, get/exists/remove, list, bad
 * keys, read-only and unwritable stores, temporary-file cleanup, and a
 * custom backend via ops. */
#include <dirent.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "oom.h"
#include "util/alloc.h"

static char root[512];

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

static int has(const seen *s, const char *key)
{
	for (int i = 0; i < s->n; i++)
		if (strcmp(s->keys[i], key) == 0)
			return 1;
	return 0;
}

static void rm_rf(const char *path)
{
	nz_test_rm_rf(path);
}

static int count_entries(const char *dir)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	ASSERT(d != NULL);
	while ((e = readdir(d)))
		n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

static void test_basic(void)
{
	nz_store *s = NULL;
	void *v = NULL;
	size_t len = 0;
	seen sn = {0};
	char path[600];

	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_CREATE | NZ_STORE_FSYNC));
	ASSERT_EQ_STR(nz_store_describe(s), root);
	ASSERT_OK(nz_store_put(s, ".zgroup", "{}", 2));
	ASSERT_OK(nz_store_put(s, "a/b/c/0.0", "hello", 5));
	ASSERT_OK(nz_store_put(s, "a/.zarray", "", 0));
	/* Overwrite replaces the whole value. */
	ASSERT_OK(nz_store_put(s, "a/b/c/0.0", "hi", 2));
	ASSERT_OK(nz_store_get(s, "a/b/c/0.0", &v, &len));
	ASSERT_EQ_U64(len, 2);
	ASSERT_MEM_EQ(v, "hi", 2);
	nz_free(v);
	ASSERT_OK(nz_store_get(s, "a/.zarray", &v, &len));
	ASSERT_EQ_U64(len, 0);
	nz_free(v);
	/* No temporary file is left next to the value. */
	snprintf(path, sizeof path, "%s/a/b/c", root);
	ASSERT_EQ_INT(count_entries(path), 1);

	ASSERT_EQ_INT(nz_store_exists(s, "a/b/c/0.0"), 1);
	ASSERT_EQ_INT(nz_store_exists(s, "a/b"), 0); /* a folder is not a key */
	ASSERT_EQ_INT(nz_store_exists(s, "nope"), 0);
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get(s, "nope/x", &v, &len));
	ASSERT_CONTAINS(nz_error_last()->message, "nope/x");
	ASSERT(v == NULL);

	ASSERT_OK(nz_store_list(s, "", collect, &sn));
	ASSERT_EQ_INT(sn.n, 3);
	ASSERT(has(&sn, ".zgroup") && has(&sn, "a/b/c/0.0") && has(&sn, "a/.zarray"));
	memset(&sn, 0, sizeof sn);
	ASSERT_OK(nz_store_list(s, "a/b/", collect, &sn));
	ASSERT_EQ_INT(sn.n, 1);
	ASSERT_EQ_STR(sn.keys[0], "a/b/c/0.0");
	memset(&sn, 0, sizeof sn);
	ASSERT_OK(nz_store_list(s, "missing", collect, &sn));
	ASSERT_EQ_INT(sn.n, 0);

	/* A stray temporary file (crashed writer) is not a key. */
	snprintf(path, sizeof path, "%s/a/.x.nztmp.1.2", root);
	FILE *f = fopen(path, "w");
	ASSERT(f != NULL);
	fclose(f);
	memset(&sn, 0, sizeof sn);
	ASSERT_OK(nz_store_list(s, "a", collect, &sn));
	ASSERT_EQ_INT(sn.n, 2);

	ASSERT_OK(nz_store_remove(s, "a/b/c/0.0"));
	ASSERT_OK(nz_store_remove(s, "a/b/c/0.0")); /* missing is fine */
	ASSERT_EQ_INT(nz_store_exists(s, "a/b/c/0.0"), 0);
	ASSERT_OK(nz_store_sync(s));
	nz_store_free(s);
	nz_store_free(NULL);
}

static void test_bad_keys(void)
{
	static const char *bad[] = {"", "/abs", "a//b", "a/", "../x", "a/../b", "a/./b", ".", ".."};
	nz_store *s = NULL;
	void *v;
	size_t len;
	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_WRITE));
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ASSERT_ERR(NZ_EINVAL, nz_store_put(s, bad[i], "x", 1));
		ASSERT_CONTAINS(nz_error_last()->message, bad[i]);
		ASSERT_ERR(NZ_EINVAL, nz_store_get(s, bad[i], &v, &len));
		ASSERT(nz_store_exists(s, bad[i]) == NZ_EINVAL);
		ASSERT_ERR(NZ_EINVAL, nz_store_remove(s, bad[i]));
	}
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, NULL, "x", 1));
	ASSERT_ERR(NZ_EINVAL, nz_store_list(s, "../", collect, NULL));
	/* ".." inside a name is not a parent reference. */
	ASSERT_OK(nz_store_put(s, "a..b/c..", "x", 1));
	nz_store_free(s);
}

static void test_errors(void)
{
	nz_store *s = NULL;
	char path[600], ro[600];

	snprintf(path, sizeof path, "%s/does/not/exist", root);
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_open_dir(&s, path, NZ_STORE_READ));
	ASSERT_CONTAINS(nz_error_last()->message, path);
	ASSERT(s == NULL);

	/* A read-only store refuses writes, naming the key and the root. */
	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_READ));
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, "k", "x", 1));
	ASSERT_CONTAINS(nz_error_last()->message, root);
	nz_store_free(s);

	/* A root that is a file. */
	snprintf(path, sizeof path, "%s/.zgroup", root);
	ASSERT_ERR(NZ_EINVAL, nz_store_open_dir(&s, path, NZ_STORE_READ));

	/* An unwritable folder: the error names the path. Root ignores modes. */
	snprintf(ro, sizeof ro, "%s/ro", root);
	ASSERT_OK(nz_store_open_dir(&s, ro, NZ_STORE_CREATE));
	ASSERT(chmod(ro, 0555) == 0);
	if (geteuid() != 0) {
		ASSERT_ERR(NZ_EIO, nz_store_put(s, "sub/k", "x", 1));
		ASSERT_CONTAINS(nz_error_last()->message, ro);
		ASSERT_ERR(NZ_EIO, nz_store_put(s, "k", "x", 1));
		ASSERT_CONTAINS(nz_error_last()->message, ro);
	}
	ASSERT(chmod(ro, 0755) == 0);
	/* Works as root too: a key below a key (its parent is a file). */
	ASSERT_OK(nz_store_put(s, "file", "x", 1));
	ASSERT_ERR(NZ_EIO, nz_store_put(s, "file/k", "x", 1));
	ASSERT_CONTAINS(nz_error_last()->message, ro);
	ASSERT_CONTAINS(nz_error_last()->message, "file/");
	ASSERT_ERR(NZ_EIO, nz_store_put(s, "file/sub/k", "x", 1));
	ASSERT_CONTAINS(nz_error_last()->message, "file");
	ASSERT_EQ_INT(count_entries(ro), 1); /* no temporary file left behind */

	/* A write that fails part-way (file size limit, like a full disk): the
	 * error names the file, the old value survives, no temp file remains. */
	{
		static char big[5000];
		struct rlimit old, lim;
		void *v;
		size_t len;
		ASSERT(getrlimit(RLIMIT_FSIZE, &old) == 0);
		lim = old;
		lim.rlim_cur = 1000;
		signal(SIGXFSZ, SIG_IGN);
		ASSERT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		ASSERT_ERR(NZ_EIO, nz_store_put(s, "file", big, sizeof big));
		ASSERT(setrlimit(RLIMIT_FSIZE, &old) == 0);
		ASSERT_CONTAINS(nz_error_last()->message, "cannot write");
		ASSERT_CONTAINS(nz_error_last()->message, ro);
		ASSERT_EQ_INT(count_entries(ro), 1);
		ASSERT_OK(nz_store_get(s, "file", &v, &len));
		ASSERT_EQ_U64(len, 1);
		nz_free(v);
	}
	nz_store_free(s);
}

/* A minimal in-memory backend proves the ops vtable is what the front end uses. */
static int mem_calls;
static int mem_put(void *ctx, const char *key, const void *d, size_t n)
{
	mem_calls++;
	return 0;
}
static int mem_get(void *ctx, const char *key, void **out, size_t *n)
{
	return -5;
}
static int mem_exists(void *ctx, const char *key)
{
	return 1;
}
static int mem_remove(void *ctx, const char *key)
{
	return 0;
}
static int mem_list(void *ctx, const char *prefix, nz_store_list_cb cb, void *p)
{
	return cb("k", p);
}
static const char *mem_describe(void *ctx)
{
	return "mem://";
}
static void mem_free(void *ctx)
{
	*(int *)ctx = 1;
}

static void test_custom_backend(void)
{
	/* A version-1 table, as backends written before version 2 fill it. */
	nz_store_ops ops = {.version = 1,
			    .put = mem_put,
			    .get = mem_get,
			    .exists = mem_exists,
			    .remove = mem_remove,
			    .list = mem_list,
			    .describe = mem_describe,
			    .free = mem_free};
	nz_store *s = NULL;
	int freed = 0;
	seen sn = {0};
	ASSERT_OK(nz_store_new(&s, &ops, &freed));
	ASSERT_OK(nz_store_put(s, "x/y", "1", 1));
	ASSERT_EQ_INT(mem_calls, 1);
	ASSERT_ERR(NZ_EINVAL, nz_store_put(s, "x/../y", "1", 1));
	ASSERT_EQ_INT(mem_calls, 1); /* rejected before reaching the backend */
	ASSERT_OK(nz_store_list(s, NULL, collect, &sn));
	ASSERT_EQ_STR(sn.keys[0], "k");
	ASSERT_OK(nz_store_sync(s)); /* NULL sync is allowed */
	ASSERT_EQ_STR(nz_store_describe(s), "mem://");
	nz_store_free(s);
	ASSERT_EQ_INT(freed, 1);
	ops.version = 99;
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_store_new(&s, &ops, &freed));
}

/* Each allocation of open/put/get/list failing in turn gives NZ_ENOMEM. */
static int store_ops(void)
{
	nz_store *s = NULL;
	void *v = NULL;
	size_t len;
	seen sn = {0};
	int rc = nz_store_open_dir(&s, root, NZ_STORE_WRITE);
	if (rc == 0)
		rc = nz_store_put(s, "alloc/x/0", "abc", 3);
	if (rc == 0)
		rc = nz_store_get(s, "alloc/x/0", &v, &len);
	if (rc == 0)
		rc = nz_store_list(s, "alloc/", collect, &sn);
	if (rc == 0 && (rc = nz_store_exists(s, "alloc/x/0")) == 1)
		rc = nz_store_remove(s, "alloc/x/0");
	else if (rc == 0)
		rc = -99; /* the key must exist */
	nz_free(v);
	nz_store_free(s);
	return rc;
}

static int run_store_ops(void *ctx)
{
	return store_ops();
}

/* A failed run leaves the key absent or whole, never a part of it. */
static void store_ops_failed(void *ctx, long n)
{
	nz_store *s = NULL;
	void *v = NULL;
	size_t len = 0;
	int rc;
	ASSERT_OK(nz_store_open_dir(&s, root, NZ_STORE_READ));
	rc = nz_store_get(s, "alloc/x/0", &v, &len);
	if (rc != NZ_ENOTFOUND && (rc != 0 || len != 3 || memcmp(v, "abc", 3) != 0))
		NZ__FAIL("allocation %ld refused: key alloc/x/0 left with %d, %zu bytes", n, rc, len);
	nz_free(v);
	nz_store_free(s);
}

static void touch(const char *path)
{
	FILE *f = fopen(path, "w");
	ASSERT(f != NULL);
	fputs("x", f);
	fclose(f);
}

/* nz_store_remove_temps: a killed writer's temporary files go, at any
 * depth; keys, other hidden files and folders stay; read-only stores
 * refuse; memory stores have none. */
static void test_remove_temps(void)
{
	nz_store *s = NULL;
	uint64_t removed = 9;
	seen sn = {0};
	char p[700];
	snprintf(p, sizeof p, "%s/temps", root);
	rm_rf(p);
	ASSERT_OK(nz_store_open_dir(&s, p, NZ_STORE_CREATE));
	ASSERT_OK(nz_store_put(s, "a/b/c", "1", 1));
	ASSERT_OK(nz_store_put(s, ".zgroup", "{}", 2));
	snprintf(p, sizeof p, "%s/temps/.c.nztmp.123.4", root);
	touch(p);
	snprintf(p, sizeof p, "%s/temps/a/b/.c.nztmp.99.0", root);
	touch(p);
	snprintf(p, sizeof p, "%s/temps/a/.hidden", root);
	touch(p);
	ASSERT_OK(nz_store_remove_temps(s, &removed));
	ASSERT_EQ_INT(removed, 2);
	snprintf(p, sizeof p, "%s/temps/a/b", root);
	ASSERT_EQ_INT(count_entries(p), 1);
	ASSERT_OK(nz_store_list(s, "", collect, &sn));
	ASSERT(sn.n == 3 && has(&sn, "a/b/c") && has(&sn, "a/.hidden") && has(&sn, ".zgroup"));
	ASSERT_OK(nz_store_remove_temps(s, &removed));
	ASSERT_EQ_INT(removed, 0);
	nz_store_free(s);
	snprintf(p, sizeof p, "%s/temps", root);
	ASSERT_OK(nz_store_open_dir(&s, p, NZ_STORE_READ));
	ASSERT_ERR(NZ_EINVAL, nz_store_remove_temps(s, &removed));
	ASSERT_CONTAINS(nz_error_last()->message, "read-only");
	nz_store_free(s);
	ASSERT_OK(nz_store_new_memory(&s));
	removed = 9;
	ASSERT_OK(nz_store_remove_temps(s, &removed));
	ASSERT_EQ_INT(removed, 0);
	nz_store_free(s);
}

static void test_alloc_failures(void)
{
	nz_oom_sweep s = {"directory store", run_store_ops, NULL, store_ops_failed, NULL, 0, 0, 0, 0};
	ASSERT(nz_oom_run_sweep(&s) > 1);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	snprintf(root, sizeof root, "%s/store_dir", tmp ? tmp : "/tmp");
	rm_rf(root);
	test_basic();
	test_bad_keys();
	test_errors();
	test_custom_backend();
	test_remove_temps();
	test_alloc_failures();
	rm_rf(root);
	return 0;
}
