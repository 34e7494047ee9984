/* nz_array_copy_unit: Zarr v2 chunks into v3 arrays (the heart of
 * `nwbzarr upgrade`). Where the codec carries over (v2 blosc/zstd/gzip, no
 * filters -> v3 bytes + the same codec), each stored chunk moves unchanged:
 * the v3 chunk, or the sharded v3 array's inner chunk found through its
 * shard index, equals the v2 chunk file byte for byte. Otherwise chunks are
 * decoded and re-encoded. Values read back equal; chunks the source does
 * not store stay missing; 1, 2 or 3 threads give byte-identical stores;
 * mismatched arrays are refused. */
#include <pthread.h>
#include <stdio.h>

#include "test.h"
#include "util/alloc.h"
#include "zarr/shard.h"
#include "zarr/zarr_impl.h"

#define ROWS 1000
#define COLS 7
static const uint64_t shape[2] = { ROWS, COLS }, chunks[2] = { 100, 4 }, shards[2] = { 300, 8 };
static int16_t data[ROWS * COLS];
static char tmp[4096];

/* The v2 source: every chunk stored but (1, 0), which stays missing. It is
 * not the last inner chunk of its shard (0, 0): those after it in C order,
 * (1, 1) and (2, *), must still be moved (they were dropped once). */
static nz_store *make_v2(const char *name, const nz_compressor *c, const char *filters)
{
	char path[4200];
	nz_store *st = NULL;
	nz_array *a = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t i, j, idx[2];
	int16_t buf[100 * 4];
	snprintf(path, sizeof path, "%s/%s", tmp, name);
	nz_test_rm_rf(path);
	ASSERT_OK(nz_store_open_dir(&st, path, NZ_STORE_CREATE));
	o.dtype = "<i2", o.ndim = 2, o.shape = shape, o.chunks = chunks, o.compressor = c, o.filters_json = filters;
	o.zarr_format = 2;
	ASSERT_OK(nz_array_create(&a, st, "d", &o));
	for (idx[0] = 0; idx[0] < 10; idx[0]++)
		for (idx[1] = 0; idx[1] < 2; idx[1]++) {
			if (idx[0] == 1 && idx[1] == 0)
				continue;
			for (i = 0; i < 100; i++)
				for (j = 0; j < 4; j++) {
					uint64_t r = idx[0] * 100 + i, col = idx[1] * 4 + j;
					buf[i * 4 + j] = col < COLS ? data[r * COLS + col] : 0;
				}
			ASSERT_OK(nz_array_write_chunk(a, NULL, idx, buf, sizeof buf));
		}
	nz_array_free(a);
	return st;
}

static nz_array *make_v3(nz_store **st, const char *name, const nz_compressor *c, const uint64_t *sh,
			 const uint64_t *ch)
{
	char path[4200];
	nz_array *a = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	snprintf(path, sizeof path, "%s/%s", tmp, name);
	nz_test_rm_rf(path);
	ASSERT_OK(nz_store_open_dir(st, path, NZ_STORE_CREATE));
	o.dtype = "<i2", o.ndim = 2, o.shape = shape, o.chunks = ch ? ch : chunks, o.compressor = c;
	o.zarr_format = 3, o.shards = sh;
	ASSERT_OK(nz_array_create(&a, *st, "d", &o));
	return a;
}

typedef struct job {
	nz_array *dst;
	const nz_array *src;
	int t, nthreads;
	uint64_t reused;
	int err;
} job;

static void *worker(void *p)
{
	job *w = p;
	uint64_t grid[2], u, n, idx[2];
	nz_array_shard_grid(w->dst, grid);
	n = grid[0] * grid[1];
	for (u = (uint64_t)w->t; u < n && !w->err; u += (uint64_t)w->nthreads) {
		idx[0] = u / grid[1], idx[1] = u % grid[1];
		w->err = nz_array_copy_unit(w->dst, w->src, NULL, idx, &w->reused);
	}
	return NULL;
}

/* Copy every unit of dst with `nthreads` threads; the chunks moved as bytes. */
static uint64_t copy_all(nz_array *dst, const nz_array *src, int nthreads)
{
	pthread_t th[4];
	job w[4];
	uint64_t reused = 0;
	int t;
	for (t = 0; t < nthreads; t++) {
		w[t] = (job){ dst, src, t, nthreads, 0, 0 };
		ASSERT(pthread_create(&th[t], NULL, worker, &w[t]) == 0);
	}
	for (t = 0; t < nthreads; t++) {
		pthread_join(th[t], NULL);
		if (w[t].err)
			NZ__FAIL("thread %d: %d", t, w[t].err);
		reused += w[t].reused;
	}
	return reused;
}

static void read_back(nz_array *a)
{
	static int16_t got[ROWS * COLS];
	uint64_t zero[2] = { 0, 0 };
	size_t i;
	ASSERT_OK(nz_array_read_region(a, zero, shape, got, sizeof got));
	for (i = 0; i < ROWS * COLS; i++) {
		size_t r = i / COLS, c = i % COLS;
		int16_t want = r >= 100 && r < 200 && c < 4 ? 0 : data[i]; /* chunk (1, 0) missing: fill */
		if (got[i] != want)
			NZ__FAIL("element [%zu, %zu]: %d, want %d", r, c, got[i], want);
	}
}

static void *file_bytes(nz_store *st, const char *key, size_t *len)
{
	void *p = NULL;
	int rc = nz_store_get(st, key, &p, len);
	return rc == 0 ? p : NULL;
}

/* Every stored v2 chunk equals the v3 chunk (or inner chunk) byte for byte. */
static void same_chunks(nz_store *v2, nz_array *dst)
{
	uint64_t idx[2];
	for (idx[0] = 0; idx[0] < 10; idx[0]++)
		for (idx[1] = 0; idx[1] < 2; idx[1]++) {
			char k2[64], *k3 = NULL;
			size_t n2 = 0, n3 = 0;
			void *b2, *b3 = NULL;
			snprintf(k2, sizeof k2, "d/%llu.%llu", (unsigned long long)idx[0], (unsigned long long)idx[1]);
			b2 = file_bytes(v2, k2, &n2);
			ASSERT_OK(nz_array_chunk_key(&k3, dst, idx)); /* the shard's key when sharded */
			if (nz_array_shards(dst)[0] != nz_array_chunks(dst)[0])
				ASSERT_OK(nz__shard3_get(&b3, &n3, dst, idx, k3));
			else
				b3 = file_bytes(dst->store, k3, &n3);
			nz_free(k3);
			ASSERT((b2 == NULL) == (idx[0] == 1 && idx[1] == 0));
			ASSERT((b3 == NULL) == (b2 == NULL));
			if (b2) {
				ASSERT_EQ_U64(n2, n3);
				ASSERT_MEM_EQ(b2, b3, n2);
			}
			nz_free(b2);
			nz__free(b3);
		}
}

static void reuse_unsharded(const nz_compressor *c, const char *what)
{
	nz_store *v2 = make_v2("src", c, NULL), *v3 = NULL;
	nz_array *src = NULL, *dst = make_v3(&v3, "dst", c, NULL, NULL);
	ASSERT_OK(nz_array_open(&src, v2, "d"));
	if (nz_array_chunks_reusable(dst, src) != 1)
		NZ__FAIL("%s: not reusable", what);
	ASSERT_EQ_U64(copy_all(dst, src, 2), 19);
	same_chunks(v2, dst);
	read_back(dst);
	nz_array_free(src);
	nz_array_free(dst);
	nz_store_free(v2);
	nz_store_free(v3);
}

static void shard_files(char out[][8192], size_t *lens, nz_store *st)
{
	uint64_t i, j;
	for (i = 0; i < 4; i++)
		for (j = 0; j < 1; j++) {
			char key[64];
			void *p = NULL;
			size_t n = 0;
			snprintf(key, sizeof key, "d/c/%llu/%llu", (unsigned long long)i, (unsigned long long)j);
			ASSERT_OK(nz_store_get(st, key, &p, &n));
			ASSERT(n <= 8192);
			memcpy(out[i], p, n);
			lens[i] = n;
			nz_free(p);
		}
}

static void reuse_sharded(void)
{
	nz_compressor c = NZ_COMPRESSOR_INIT;
	nz_store *v2 = make_v2("src", &c, NULL);
	nz_array *src = NULL;
	static char first[4][8192], again[4][8192];
	size_t flen[4], alen[4];
	int t, i;
	ASSERT_OK(nz_array_open(&src, v2, "d"));
	for (t = 1; t <= 3; t++) {
		nz_store *v3 = NULL;
		nz_array *dst = make_v3(&v3, "dst", &c, shards, NULL);
		ASSERT_EQ_INT(nz_array_chunks_reusable(dst, src), 1);
		ASSERT_EQ_U64(copy_all(dst, src, t), 19);
		same_chunks(v2, dst);
		read_back(dst);
		shard_files(t == 1 ? first : again, t == 1 ? flen : alen, v3);
		for (i = 0; t > 1 && i < 4; i++) {
			ASSERT_EQ_U64(flen[i], alen[i]);
			ASSERT_MEM_EQ(first[i], again[i], flen[i]);
		}
		nz_array_free(dst);
		nz_store_free(v3);
	}
	nz_array_free(src);
	nz_store_free(v2);
}

/* No reuse: each chunk decoded and encoded with dst's codec; same values. */
static void reencode(const nz_compressor *c2, const char *filters, const nz_compressor *c3, const char *what)
{
	nz_store *v2 = make_v2("src", c2, filters), *v3 = NULL;
	nz_array *src = NULL, *dst = make_v3(&v3, "dst", c3, shards, NULL);
	ASSERT_OK(nz_array_open(&src, v2, "d"));
	if (nz_array_chunks_reusable(dst, src) != 0)
		NZ__FAIL("%s: reusable", what);
	ASSERT_EQ_U64(copy_all(dst, src, 3), 0);
	read_back(dst);
	nz_array_free(src);
	nz_array_free(dst);
	nz_store_free(v2);
	nz_store_free(v3);
}

static void refused(void)
{
	nz_compressor c = NZ_COMPRESSOR_INIT;
	static const uint64_t other[2] = { 50, 4 };
	nz_store *v2 = make_v2("src", &c, NULL), *v3 = NULL;
	nz_array *src = NULL, *dst = make_v3(&v3, "dst", &c, NULL, other);
	uint64_t zero[2] = { 0, 0 };
	ASSERT_OK(nz_array_open(&src, v2, "d"));
	ASSERT_EQ_INT(nz_array_chunks_reusable(dst, src), 0);
	ASSERT_ERR(NZ_EINVAL, nz_array_copy_unit(dst, src, NULL, zero, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "shape or chunks differ in dimension 0");
	ASSERT(nz_store_exists(v3, "d/c/0/0") == 0);
	nz_array_free(src);
	nz_array_free(dst);
	nz_store_free(v2);
	nz_store_free(v3);
}

int main(void)
{
	nz_compressor blosc = NZ_COMPRESSOR_INIT, zstd = blosc, zstd_ck, gzip = blosc, lz4 = blosc, blosc9 = blosc;
	size_t i;
	const char *env = getenv("NZ_TMP");
	ASSERT(env != NULL);
	snprintf(tmp, sizeof tmp, "%s/copy_raw", env);
	nz_test_rm_rf(tmp);
	for (i = 0; i < ROWS * COLS; i++)
		data[i] = (int16_t)((i * 7919) % 2001 - 1000);
	blosc9.clevel = 9;
	zstd.id = "zstd", zstd.cname = NULL, zstd.clevel = 3, zstd.shuffle = 0;
	zstd_ck = zstd, zstd_ck.checksum = 1;
	gzip.id = "gzip", gzip.cname = NULL, gzip.clevel = 6, gzip.shuffle = 0;
	lz4.id = "lz4", lz4.cname = NULL, lz4.clevel = 1, lz4.shuffle = 0;
	reuse_unsharded(&blosc, "blosc");
	reuse_unsharded(&zstd, "zstd");
	reuse_unsharded(&zstd_ck, "zstd with checksums");
	reuse_unsharded(&gzip, "gzip");
	reuse_sharded();
	reencode(&lz4, NULL, &zstd, "v2 lz4 -> v3 zstd");
	reencode(&blosc, NULL, &blosc9, "blosc clevel 5 -> 9");
	reencode(&blosc, "[{\"id\": \"shuffle\", \"elementsize\": 2}]", &blosc, "a v2 shuffle filter");
	reencode(&zstd, NULL, &gzip, "zstd -> gzip");
	reencode(&zstd, NULL, &zstd_ck, "zstd -> zstd with checksums");
	refused();
	nz_test_rm_rf(tmp);
	printf("ok\n");
	return 0;
}
