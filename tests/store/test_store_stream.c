/* Store interface version 2 on every kind of backend: streaming puts
 * (invisible until commit, whole at commit, nothing after abort), ranged and
 * suffix gets, sizes. Backends: the directory store, the memory store, a
 * version-1 backend (the front end's emulation) and an object-storage-shaped
 * backend with no folders, no rename and no put/get/exists of its own
 * (objstore.c), which also holds a zarr array. Faults: a full disk
 * (NZ_TEST_STORE_MAX_BYTES), a file size limit part-way, allocation failures:
 * the old value survives and no temporary file is left. */
#include <dirent.h>
#include <signal.h>
#include <stddef.h>
#include <sys/resource.h>
#include <unistd.h>

#include "objstore.h"
#include "oom.h"
#include "test.h"
#include "util/alloc.h"

static char root[512];

static void rm_rf(const char *path)
{
	nz_test_rm_rf(path);
}

/* Entries of a folder; *temps counts temporary names among them. */
static int count_entries(const char *dir, int *temps)
{
	int n = 0;
	DIR *d = opendir(dir);
	struct dirent *e;
	if (temps)
		*temps = 0;
	if (!d)
		return 0;
	while ((e = readdir(d))) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		n++;
		if (temps && strstr(e->d_name, ".nztmp."))
			(*temps)++;
	}
	closedir(d);
	return n;
}

static int count_keys_cb(const char *key, void *payload)
{
	(*(int *)payload)++;
	return 0;
}

static int count_keys(nz_store *s, const char *prefix)
{
	int n = 0;
	ASSERT_OK(nz_store_list(s, prefix, count_keys_cb, &n));
	return n;
}

static void expect(nz_store *s, const char *key, const void *want, size_t n)
{
	void *v = NULL;
	size_t len = 0;
	uint64_t size = 0;
	ASSERT_OK(nz_store_get(s, key, &v, &len));
	ASSERT_EQ_U64(len, n);
	ASSERT(v != NULL);
	ASSERT_MEM_EQ(v, want, n);
	nz_free(v);
	ASSERT_OK(nz_store_size(s, key, &size));
	ASSERT_EQ_U64(size, n);
	ASSERT_EQ_INT(nz_store_exists(s, key), 1);
}

static void expect_range(nz_store *s, const char *key, uint64_t off, uint64_t len, int suffix,
			 const char *want)
{
	void *v = NULL;
	size_t n = 99;
	if (suffix)
		ASSERT_OK(nz_store_get_suffix(s, key, len, &v, &n));
	else
		ASSERT_OK(nz_store_get_range(s, key, off, len, &v, &n));
	ASSERT(v != NULL);
	ASSERT_EQ_U64(n, strlen(want));
	ASSERT_MEM_EQ(v, want, n);
	nz_free(v);
}

/* What every backend must do. */
static void check_contract(nz_store *s)
{
	nz_store_writer *w = NULL;
	void *v = (void *)1;
	size_t n = 5;
	uint64_t size = 7;
	const char *where = nz_store_describe(s);

	/* Pieces, an empty one included; nothing visible before commit. */
	ASSERT_OK(nz_store_put_begin(&w, s, "arr/c/0/0"));
	ASSERT_OK(nz_store_put_write(w, "hello ", 6));
	ASSERT_OK(nz_store_put_write(w, NULL, 0));
	ASSERT_OK(nz_store_put_write(w, "shard", 5));
	ASSERT_EQ_U64(nz_store_put_written(w), 11);
	ASSERT_EQ_INT(nz_store_exists(s, "arr/c/0/0"), 0);
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get(s, "arr/c/0/0", &v, &n));
	ASSERT(v == NULL && n == 0);
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_size(s, "arr/c/0/0", &size));
	ASSERT_CONTAINS(nz_error_last()->message, "arr/c/0/0");
	ASSERT_EQ_INT(count_keys(s, "arr"), 0);
	ASSERT_OK(nz_store_put_commit(w));
	expect(s, "arr/c/0/0", "hello shard", 11);
	ASSERT_EQ_INT(count_keys(s, "arr"), 1);

	/* Overwrite: the old value stays readable until the commit. */
	ASSERT_OK(nz_store_put_begin(&w, s, "arr/c/0/0"));
	ASSERT_OK(nz_store_put_write(w, "new", 3));
	expect(s, "arr/c/0/0", "hello shard", 11);
	ASSERT_OK(nz_store_put_commit(w));
	expect(s, "arr/c/0/0", "new", 3);

	/* Abort: the old value, and no new key. */
	ASSERT_OK(nz_store_put_begin(&w, s, "arr/c/0/0"));
	ASSERT_OK(nz_store_put_write(w, "discarded", 9));
	nz_store_put_abort(w);
	expect(s, "arr/c/0/0", "new", 3);
	ASSERT_OK(nz_store_put_begin(&w, s, "arr/c/1/0"));
	ASSERT_OK(nz_store_put_write(w, "discarded", 9));
	nz_store_put_abort(w);
	nz_store_put_abort(NULL);
	ASSERT_EQ_INT(nz_store_exists(s, "arr/c/1/0"), 0);
	ASSERT_EQ_INT(count_keys(s, "arr"), 1);

	/* A streamed empty value is a key of 0 bytes. */
	ASSERT_OK(nz_store_put_begin(&w, s, "arr/empty"));
	ASSERT_OK(nz_store_put_commit(w));
	expect(s, "arr/empty", "", 0);

	/* Ranges, as HTTP object stores serve them. */
	ASSERT_OK(nz_store_put(s, "arr/r", "0123456789", 10));
	expect_range(s, "arr/r", 0, 10, 0, "0123456789");
	expect_range(s, "arr/r", 3, 4, 0, "3456");
	expect_range(s, "arr/r", 8, 100, 0, "89");        /* clipped at the end */
	expect_range(s, "arr/r", 10, 5, 0, "");           /* at the end: nothing */
	expect_range(s, "arr/r", 0, UINT64_MAX, 0, "0123456789");
	expect_range(s, "arr/r", 2, 0, 0, "");
	expect_range(s, "arr/r", 0, 3, 1, "789");         /* the last 3 */
	expect_range(s, "arr/r", 0, 50, 1, "0123456789"); /* longer than the value */
	expect_range(s, "arr/r", 0, 0, 1, "");
	expect_range(s, "arr/empty", 0, 4, 1, "");
	ASSERT_ERR(NZ_EINVAL, nz_store_get_range(s, "arr/r", 11, 1, &v, &n));
	ASSERT_CONTAINS(nz_error_last()->message, "arr/r");
	ASSERT_CONTAINS(nz_error_last()->message, "past its end");
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get_range(s, "arr/none", 0, 1, &v, &n));
	ASSERT_CONTAINS(nz_error_last()->message, "arr/none");
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_get_suffix(s, "arr/none", 1, &v, &n));
	ASSERT_ERR(NZ_ENOTFOUND, nz_store_size(s, "arr/none", &size));
	ASSERT_EQ_INT(nz_store_exists(s, "arr/none"), 0);

	/* A big value in many pieces reads back exactly, piece by piece. */
	{
		enum { PIECE = 65536, PIECES = 64 };
		unsigned char *buf = malloc(PIECE);
		ASSERT(buf);
		ASSERT_OK(nz_store_put_begin(&w, s, "arr/big"));
		for (int p = 0; p < PIECES; p++) {
			memset(buf, p, PIECE);
			ASSERT_OK(nz_store_put_write(w, buf, PIECE));
		}
		ASSERT_OK(nz_store_put_commit(w));
		ASSERT_OK(nz_store_size(s, "arr/big", &size));
		ASSERT_EQ_U64(size, (uint64_t)PIECE * PIECES);
		for (int p = 0; p < PIECES - 1; p += 7) {
			ASSERT_OK(nz_store_get_range(s, "arr/big", (uint64_t)p * PIECE + 1, PIECE, &v,
						     &n));
			ASSERT_EQ_U64(n, PIECE);
			memset(buf, p, PIECE - 1);
			ASSERT_MEM_EQ(v, buf, PIECE - 1);
			ASSERT(((unsigned char *)v)[PIECE - 1] == (unsigned char)(p + 1));
			nz_free(v);
		}
		free(buf);
	}

	/* Bad arguments never reach the backend. */
	ASSERT_ERR(NZ_EINVAL, nz_store_put_begin(&w, s, "a/../b"));
	ASSERT(w == NULL);
	ASSERT_ERR(NZ_EINVAL, nz_store_put_begin(NULL, s, "k"));
	ASSERT_ERR(NZ_EINVAL, nz_store_put_begin(&w, NULL, "k"));
	ASSERT_ERR(NZ_EINVAL, nz_store_put_write(NULL, "x", 1));
	ASSERT_ERR(NZ_EINVAL, nz_store_put_commit(NULL));
	ASSERT_ERR(NZ_EINVAL, nz_store_get_range(s, "/abs", 0, 1, &v, &n));
	ASSERT_ERR(NZ_EINVAL, nz_store_get_suffix(s, "k", 1, NULL, &n));
	ASSERT_ERR(NZ_EINVAL, nz_store_size(s, "k", NULL));
	(void)where;
}

/* ---- a version-1 backend: the memory store behind a v1-sized table ---- */

static int v1_put(void *ctx, const char *k, const void *d, size_t n)
{
	return nz_store_put(ctx, k, d, n);
}
static int v1_get(void *ctx, const char *k, void **o, size_t *n)
{
	return nz_store_get(ctx, k, o, n);
}
static int v1_exists(void *ctx, const char *k)
{
	return nz_store_exists(ctx, k);
}
static int v1_remove(void *ctx, const char *k)
{
	return nz_store_remove(ctx, k);
}
static int v1_list(void *ctx, const char *p, nz_store_list_cb cb, void *pl)
{
	return nz_store_list(ctx, p, cb, pl);
}
static const char *v1_describe(void *ctx)
{
	return "v1://memory";
}
static void v1_free(void *ctx)
{
	nz_store_free(ctx);
}

static void test_version1(void)
{
	nz_store_ops full = {.version = 1,
			     .put = v1_put,
			     .get = v1_get,
			     .exists = v1_exists,
			     .remove = v1_remove,
			     .list = v1_list,
			     .describe = v1_describe,
			     .free = v1_free};
	/* Exactly as long as a version-1 table was: ASan flags any read past it. */
	size_t v1len = offsetof(nz_store_ops, put_begin);
	nz_store_ops *short_ops = malloc(v1len);
	nz_store *mem = NULL, *s = NULL;
	ASSERT(short_ops);
	memcpy(short_ops, &full, v1len);
	ASSERT_OK(nz_store_new_memory(&mem));
	ASSERT_OK(nz_store_new(&s, short_ops, mem));
	free(short_ops);
	check_contract(s);
	nz_store_free(s);
}

static void test_bad_tables(void)
{
	nz_store_ops ops = {.version = 2,
			    .remove = v1_remove,
			    .list = v1_list,
			    .describe = v1_describe};
	nz_store *s = NULL;
	/* Version 2 without its streaming/ranged functions is refused. */
	ASSERT_ERR(NZ_EINVAL, nz_store_new(&s, &ops, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "version 2");
	ops.version = 3;
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_store_new(&s, &ops, NULL));
	ops.version = 1; /* and version 1 needs put, get and exists */
	ASSERT_ERR(NZ_EINVAL, nz_store_new(&s, &ops, NULL));
	ASSERT(s == NULL);
}

/* ---- the object-storage backend --------------------------------------- */

static void test_objstore(void)
{
	nz_store *s = NULL;
	nz_array *a = NULL, *b = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[1] = {10}, chunks[1] = {4}, start[1] = {0}, cnt[1] = {10};
	int32_t in[10], out[10];
	ASSERT_OK(nz_test_objstore_new(&s));
	check_contract(s);
	ASSERT_EQ_INT(nz_test_objstore_open_uploads(), 0);
	/* One-piece put/get/exists are the front end's, over the object ops. */
	ASSERT_OK(nz_store_put(s, "k", "v", 1));
	expect(s, "k", "v", 1);
	/* The zarr layer runs on it unchanged. */
	for (int i = 0; i < 10; i++)
		in[i] = i * 3 - 11;
	o.dtype = "<i4";
	o.ndim = 1;
	o.shape = shape;
	o.chunks = chunks;
	ASSERT_OK(nz_array_create(&a, s, "g/data", &o));
	ASSERT_OK(nz_array_write_all(a, in, sizeof in));
	ASSERT_OK(nz_array_open(&b, s, "g/data"));
	ASSERT_OK(nz_array_read_region(b, start, cnt, out, sizeof out));
	ASSERT_MEM_EQ(in, out, sizeof in);
	nz_array_free(a);
	nz_array_free(b);
	ASSERT_EQ_INT(nz_test_objstore_open_uploads(), 0);
	nz_store_free(s);
}

/* ---- the directory store: files, temporary names, faults -------------- */

static void test_dir(void)
{
	nz_store *s = NULL;
	nz_store_writer *w = NULL;
	char dir[600], sub[700];
	int temps;

	snprintf(dir, sizeof dir, "%s/dir", root);
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_CREATE | NZ_STORE_FSYNC));
	check_contract(s);
	/* While streaming, the bytes sit in a temporary file in the key's own
	 * folder (so the rename stays on one filesystem), which list skips. */
	ASSERT_OK(nz_store_put_begin(&w, s, "x/y/shard"));
	ASSERT_OK(nz_store_put_write(w, "abc", 3));
	snprintf(sub, sizeof sub, "%s/x/y", dir);
	ASSERT_EQ_INT(count_entries(sub, &temps), 1);
	ASSERT_EQ_INT(temps, 1);
	ASSERT_EQ_INT(count_keys(s, "x"), 0);
	ASSERT_OK(nz_store_put_commit(w));
	ASSERT_EQ_INT(count_entries(sub, &temps), 1);
	ASSERT_EQ_INT(temps, 0);
	ASSERT_OK(nz_store_put_begin(&w, s, "x/y/other"));
	nz_store_put_abort(w);
	ASSERT_EQ_INT(count_entries(sub, &temps), 1);
	nz_store_free(s);

	/* Read-only: refused at begin, naming the key and the store. */
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_READ));
	ASSERT_ERR(NZ_EINVAL, nz_store_put_begin(&w, s, "x/y/shard"));
	ASSERT_CONTAINS(nz_error_last()->message, "x/y/shard");
	ASSERT_CONTAINS(nz_error_last()->message, "read-only");
	expect_range(s, "x/y/shard", 1, 5, 0, "bc");
	nz_store_free(s);

	/* A full disk part-way through a stream: ENOSPC, sticky, and at commit
	 * the old value is still there and no temporary file is left. */
	setenv("NZ_TEST_STORE_MAX_BYTES", "1000", 1);
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_WRITE));
	unsetenv("NZ_TEST_STORE_MAX_BYTES");
	{
		static char block[600];
		ASSERT_OK(nz_store_put_begin(&w, s, "x/y/shard"));
		ASSERT_OK(nz_store_put_write(w, block, sizeof block));
		ASSERT_ERR(NZ_ENOSPC, nz_store_put_write(w, block, sizeof block));
		ASSERT_CONTAINS(nz_error_last()->message, "x/y/");
		ASSERT_ERR(NZ_ENOSPC, nz_store_put_write(w, "z", 1)); /* sticky */
		ASSERT_EQ_U64(nz_store_put_written(w), sizeof block);
		ASSERT_ERR(NZ_ENOSPC, nz_store_put_commit(w));
	}
	expect(s, "x/y/shard", "abc", 3);
	ASSERT_EQ_INT(count_entries(sub, &temps), 1);
	ASSERT_EQ_INT(temps, 0);
	nz_store_free(s);

	/* A file size limit (a quota) mid-stream: NZ_EIO naming the file. */
	{
		static char big[5000];
		struct rlimit old, lim;
		ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_WRITE));
		ASSERT(getrlimit(RLIMIT_FSIZE, &old) == 0);
		lim = old;
		lim.rlim_cur = 1000;
		signal(SIGXFSZ, SIG_IGN);
		ASSERT_OK(nz_store_put_begin(&w, s, "x/y/shard"));
		ASSERT(setrlimit(RLIMIT_FSIZE, &lim) == 0);
		ASSERT_OK(nz_store_put_write(w, big, 500));
		ASSERT_ERR(NZ_EIO, nz_store_put_write(w, big, sizeof big));
		ASSERT(setrlimit(RLIMIT_FSIZE, &old) == 0);
		ASSERT_CONTAINS(nz_error_last()->message, "cannot write");
		ASSERT_CONTAINS(nz_error_last()->message, sub);
		ASSERT_ERR(NZ_EIO, nz_store_put_commit(w));
		expect(s, "x/y/shard", "abc", 3);
		ASSERT_EQ_INT(count_entries(sub, &temps), 1);
		ASSERT_EQ_INT(temps, 0);
		nz_store_free(s);
	}
}

/* ---- allocation failures ------------------------------------------------ */

static int stream_ops(nz_store *s)
{
	nz_store_writer *w = NULL;
	void *v = NULL;
	size_t n = 0;
	uint64_t size = 0;
	int rc = nz_store_put_begin(&w, s, "alloc/k");
	if (rc == 0 && (rc = nz_store_put_write(w, "abcdef", 6)) == 0)
		rc = nz_store_put_write(w, "ghij", 4);
	if (rc == 0) {
		rc = nz_store_put_commit(w);
		w = NULL;
	}
	if (rc == 0)
		rc = nz_store_get_range(s, "alloc/k", 2, 3, &v, &n);
	nz_free(v);
	v = NULL;
	if (rc == 0)
		rc = nz_store_get_suffix(s, "alloc/k", 2, &v, &n);
	nz_free(v);
	if (rc == 0)
		rc = nz_store_size(s, "alloc/k", &size);
	nz_store_put_abort(w);
	return rc;
}

/* The allocation-failure sweep (tests/oom.h) over a streaming put and the
 * ranged reads: every refused allocation is NZ_ENOMEM with a message, and
 * the key is then absent or whole, never partial, with no temporary file. */
typedef struct oom_ctx {
	nz_store *s;
	const char *dir; /* directory store: its folder, else NULL */
} oom_ctx;

/* The removal is part of the run, not a reset: the sweep counts a reset's
 * allocations in a run's total (tests/oom.h), and the directory store's
 * remove allocates. */
static int oom_run(void *ctx)
{
	oom_ctx *c = ctx;
	int err = nz_store_remove(c->s, "alloc/k");
	return err < 0 ? err : stream_ops(c->s);
}

static void oom_failed(void *ctx, long n)
{
	oom_ctx *c = ctx;
	void *v = NULL;
	size_t len = 0;
	int temps;
	if (nz_store_get(c->s, "alloc/k", &v, &len) == 0) {
		ASSERT_EQ_U64(len, 10);
		ASSERT_MEM_EQ(v, "abcdefghij", 10);
	}
	nz_free(v);
	if (c->dir) {
		count_entries(c->dir, &temps);
		ASSERT_EQ_INT(temps, 0);
	}
}

static void sweep(nz_store *s, const char *dir, const char *what)
{
	oom_ctx c = {s, dir};
	nz_oom_sweep sw = {what, oom_run, NULL, oom_failed, &c, 0, 0, 0, 0};
	nz_oom_run_sweep(&sw);
}

static void test_alloc_failures(void)
{
	nz_store *s = NULL;
	char dir[600], sub[700];
	snprintf(dir, sizeof dir, "%s/alloc", root);
	snprintf(sub, sizeof sub, "%s/alloc", dir);
	ASSERT_OK(nz_store_open_dir(&s, dir, NZ_STORE_CREATE));
	sweep(s, sub, "streaming put, directory store");
	nz_store_free(s);
	ASSERT_OK(nz_store_new_memory(&s));
	sweep(s, NULL, "streaming put, memory store");
	nz_store_free(s);
	ASSERT_OK(nz_test_objstore_new(&s));
	sweep(s, NULL, "streaming put, object store");
	nz_store_free(s);
	ASSERT_EQ_INT(nz_test_objstore_open_uploads(), 0);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	nz_store *s = NULL;
	snprintf(root, sizeof root, "%s/store_stream", tmp ? tmp : "/tmp");
	rm_rf(root);
	nz__alloc_init();
	ASSERT_OK(nz_store_new_memory(&s));
	check_contract(s);
	nz_store_free(s);
	test_version1();
	test_bad_tables();
	test_objstore();
	test_dir();
	test_alloc_failures();
	rm_rf(root);
	return 0;
}
