/* nz_write_array on Zarr v3 arrays, sharded and not, through the real Zarr
 * layer and directory store:
 * - an (N, 384) int16 array, inner chunks (3000, 64), shards (30000, 384),
 *   an edge shard holding an edge chunk row, from a memory source and a
 *   raw file at -j 1, 2 and 3: the stores are byte-identical, read back
 *   equal, and the edge chunk's padding is the fill value;
 * - a layout whose edge shards hold inner chunks wholly outside the array
 *   (columns too), so that the chunks a shard receives skip positions;
 * - an unsharded v3 array through the same path;
 * - a source failing in the second shard: the write fails, no temporary
 *   file is left, that shard is absent and every shard present reads back
 *   whole and equal (nothing complete-looking but wrong);
 * - every allocation of a sharded write (gaps included) may fail: NZ_ENOMEM
 *   with a message, no temporary file, no shard that reads back wrong;
 * - peak RSS of a child writing shards of (300000, 384) (230 MB each) from
 *   a generated source at -j 2 stays far below one shard. */
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oom.h"
#include "test.h"

static char tmp[512];

static int16_t value(uint64_t r, uint64_t c)
{
	/* Smooth plus a little noise: compressible like real data. */
	return (int16_t)((int)(r % 97) * 3 - (int)(c % 13) * 5 + (int)((r * 7 + c * 3) % 11));
}

static int16_t *make_data(uint64_t rows, uint64_t cols)
{
	int16_t *d = malloc((size_t)(rows * cols * 2));
	ASSERT(d);
	for (uint64_t r = 0; r < rows; r++)
		for (uint64_t c = 0; c < cols; c++)
			d[r * cols + c] = value(r, c);
	return d;
}

/* One layout: shape, inner chunks, shards (NULL = unsharded). */
typedef struct layout {
	uint64_t shape[2], chunks[2];
	const uint64_t *shards;
} layout;

static nz_array *create(nz_store **st, const char *root, const layout *l)
{
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_compressor comp = NZ_COMPRESSOR_INIT;
	nz_array *a;

	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_open_dir(st, root, NZ_STORE_CREATE));
	ASSERT_OK(nz_root_create(*st, 3));
	ao.zarr_format = 3;
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = l->shape;
	ao.chunks = l->chunks;
	ao.shards = l->shards;
	comp.cname = "lz4";
	ao.compressor = &comp;
	ao.fill_value_json = "-3";
	ASSERT_OK(nz_array_create(&a, *st, "data", &ao));
	return a;
}

/* Write `src` into <tmp>/<name> with `jobs` workers. */
static void write_one(const char *name, const layout *l, nz_source *src, int jobs)
{
	char root[1024];
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats stats;
	nz_store *st;
	nz_array *a;

	snprintf(root, sizeof root, "%s/%s", tmp, name);
	a = create(&st, root, l);
	wo.jobs = jobs;
	wo.stats = &stats;
	ASSERT_OK(nz_write_array(a, src, &wo));
	ASSERT_EQ_U64(stats.chunks, nz_array_nchunks(a));
	ASSERT_EQ_U64(stats.bytes, l->shape[0] * l->shape[1] * 2);
	ASSERT_EQ_INT(nz_test_temp_files(root), 0);
	nz_array_free(a);
	nz_store_free(st);
}

/* <tmp>/<name> reads back as data, the last chunk padded with the fill. */
static void check_back(const char *name, const layout *l, const int16_t *data)
{
	char root[1024];
	uint64_t start[2] = {0, 0}, idx[2], grid[2];
	size_t n = (size_t)(l->shape[0] * l->shape[1] * 2), cn;
	int16_t *back = malloc(n), *chunk;
	nz_store *st;
	nz_array *a;

	snprintf(root, sizeof root, "%s/%s", tmp, name);
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, "data"));
	ASSERT_EQ_INT(nz_array_zarr_format(a), 3);
	ASSERT_OK(nz_array_read_region(a, start, l->shape, back, n));
	if (memcmp(back, data, n) != 0)
		NZ__FAIL("%s: the data read back differs", name);
	nz_array_chunk_grid(a, grid);
	idx[0] = grid[0] - 1;
	idx[1] = grid[1] - 1;
	cn = nz_array_chunk_nbytes(a);
	chunk = malloc(cn);
	ASSERT_OK(nz_array_read_chunk(a, NULL, idx, chunk, cn));
	ASSERT_EQ_INT(chunk[cn / 2 - 1], -3);
	free(chunk);
	free(back);
	nz_array_free(a);
	nz_store_free(st);
}

static void same_stores(const char *x, const char *y)
{
	char cmd[4600];
	snprintf(cmd, sizeof cmd, "diff -r '%s/%s' '%s/%s'", tmp, x, tmp, y);
	if (system(cmd) != 0)
		NZ__FAIL("stores %s and %s differ", x, y);
}

static void write_raw(const char *path, const int16_t *data, size_t n)
{
	FILE *f = fopen(path, "wb");
	ASSERT(f && fwrite(data, 1, n, f) == n && fclose(f) == 0);
}

/* Memory at -j 1, 2, 3 and (when raw) a raw file at -j 1 and 3. */
static void all_jobs(const char *tag, const layout *l, int raw)
{
	int16_t *data = make_data(l->shape[0], l->shape[1]);
	char name[64], first[64], path[2200];
	nz_source *src;

	snprintf(first, sizeof first, "%s_m1", tag);

	ASSERT_OK(nz_source_from_memory(&src, data, "<i2", 2, l->shape));
	for (int j = 1; j <= 3; j++) {
		snprintf(name, sizeof name, "%s_m%d", tag, j);
		write_one(name, l, src, j);
		if (j > 1)
			same_stores(first, name);
	}
	nz_source_free(src);
	check_back(first, l, data);
	if (raw) {
		nz_raw_opts ro = NZ_RAW_OPTS_INIT;
		snprintf(path, sizeof path, "%s/%s.raw", tmp, tag);
		write_raw(path, data, (size_t)(l->shape[0] * l->shape[1] * 2));
		ro.nchannels = l->shape[1];
		ASSERT_OK(nz_source_open_raw(&src, path, &ro));
		for (int j = 1; j <= 3; j += 2) {
			snprintf(name, sizeof name, "%s_r%d", tag, j);
			write_one(name, l, src, j);
			same_stores(first, name);
		}
		nz_source_free(src);
		unlink(path);
	}
	free(data);
}

typedef struct fail_ctx {
	const int16_t *data;
	uint64_t cols, fail_row;
} fail_ctx;

static int failing_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	fail_ctx *f = ctx;
	int16_t *o = out;
	if (start[0] + count[0] > f->fail_row)
		return NZ_EIO;
	for (uint64_t r = 0; r < count[0]; r++)
		memcpy(o + r * count[1], f->data + (start[0] + r) * f->cols + start[1],
		       (size_t)count[1] * 2);
	return 0;
}

/* A source failing inside shard 1 of `l` (shards of 30000 rows). */
static void failing(const layout *l)
{
	int16_t *data = make_data(l->shape[0], l->shape[1]);
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, failing_read, NULL};
	fail_ctx fc = {data, l->shape[1], 45000};
	char root[1024], key[64];
	uint64_t grid[2];
	nz_store *st;
	nz_array *a;
	nz_source *src;

	ASSERT_OK(nz_source_from_callback(&src, &ops, &fc, "<i2", 2, l->shape));
	for (int j = 1; j <= 2; j++) {
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		snprintf(root, sizeof root, "%s/fail%d", tmp, j);
		a = create(&st, root, l);
		wo.jobs = j;
		ASSERT(nz_write_array(a, src, &wo) < 0);
		ASSERT_CONTAINS(nz_error_last()->message, "data");
		ASSERT_EQ_INT(nz_test_temp_files(root), 0);
		ASSERT_EQ_INT(nz_store_exists(st, "data/c/1/0"), 0);
		if (j == 1) /* finished before the failure (with 2, it may be stopped) */
			ASSERT_EQ_INT(nz_store_exists(st, "data/c/0/0"), 1);
		/* Every shard there is whole: its rows read back equal. */
		nz_array_shard_grid(a, grid);
		for (uint64_t s = 0; s < grid[0]; s++) {
			uint64_t start[2] = {s * 30000, 0}, count[2];
			int16_t *back;
			snprintf(key, sizeof key, "data/c/%" PRIu64 "/0", s);
			if (nz_store_exists(st, key) != 1)
				continue;
			count[0] = l->shape[0] - start[0] < 30000 ? l->shape[0] - start[0] : 30000;
			count[1] = l->shape[1];
			back = malloc((size_t)(count[0] * count[1] * 2));
			ASSERT_OK(nz_array_read_region(a, start, count, back,
						       (size_t)(count[0] * count[1] * 2)));
			ASSERT_MEM_EQ(back, data + start[0] * l->shape[1], count[0] * count[1] * 2);
			free(back);
		}
		nz_array_free(a);
		nz_store_free(st);
	}
	nz_source_free(src);
	free(data);
}

typedef struct oom_ctx {
	const layout *l;
	const int16_t *data;
	nz_source *src;
	nz_store *st;
	nz_array *a;
	char root[1024];
	int jobs;
} oom_ctx;

static int oom_run(void *ctx)
{
	oom_ctx *c = ctx;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	wo.jobs = c->jobs;
	return nz_write_array(c->a, c->src, &wo);
}

static void oom_close(oom_ctx *c)
{
	nz_array_free(c->a);
	nz_store_free(c->st);
	c->a = NULL;
	c->st = NULL;
}

/* A fresh array for every run (made before the counted allocations; the
 * count varies with when the caller polls the workers, so varies = 1): a
 * complete store cannot pass for a failed run's. */
static void oom_reset(void *ctx)
{
	oom_ctx *c = ctx;
	oom_close(c);
	c->a = create(&c->st, c->root, c->l);
}

/* After a refused allocation: no temporary file; the shards there read back
 * equal (a missing one reads as fill, so compare only where stored). */
static void oom_failed(void *ctx, long n)
{
	oom_ctx *c = ctx;
	uint64_t grid[2], start[2], count[2];
	char key[64];
	nz_store *st;
	nz_array *a;

	if (nz_test_temp_files(c->root) != 0)
		NZ__FAIL("allocation %ld: temporary files left", n);
	ASSERT_OK(nz_store_open_dir(&st, c->root, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, "data"));
	nz_array_shard_grid(a, grid);
	for (uint64_t i = 0; i < grid[0]; i++)
		for (uint64_t k = 0; k < grid[1]; k++) {
			size_t len;
			int16_t *back;
			snprintf(key, sizeof key, "data/c/%" PRIu64 "/%" PRIu64, i, k);
			if (nz_store_exists(st, key) != 1)
				continue;
			start[0] = i * c->l->shards[0];
			start[1] = k * c->l->shards[1];
			count[0] = c->l->shape[0] - start[0] < c->l->shards[0]
					   ? c->l->shape[0] - start[0] : c->l->shards[0];
			count[1] = c->l->shape[1] - start[1] < c->l->shards[1]
					   ? c->l->shape[1] - start[1] : c->l->shards[1];
			len = (size_t)(count[0] * count[1] * 2);
			back = malloc(len);
			ASSERT_OK(nz_array_read_region(a, start, count, back, len));
			for (uint64_t r = 0; r < count[0]; r++)
				if (memcmp(back + r * count[1],
					   c->data + (start[0] + r) * c->l->shape[1] + start[1],
					   (size_t)count[1] * 2) != 0)
					NZ__FAIL("allocation %ld: shard %s reads back wrong", n, key);
			free(back);
		}
	nz_array_free(a);
	nz_store_free(st);
}

static void allocation_failures(const layout *l)
{
	int16_t *data = make_data(l->shape[0], l->shape[1]);
	oom_ctx c = {l, data, NULL, NULL, NULL, {0}, 1};
	/* The first 100 one by one: every allocation of the write itself (about
	 * 90; the sweep's total also counts what reset allocates). */
	nz_oom_sweep sw = {"sharded write", oom_run, oom_reset, oom_failed, &c, 100, 10, 1, 0};

	snprintf(c.root, sizeof c.root, "%s/oom", tmp);
	ASSERT_OK(nz_source_from_memory(&c.src, data, "<i2", 2, l->shape));
	ASSERT(nz_oom_run_sweep(&sw) > 3);
	c.jobs = 2;
	sw.what = "sharded write, 2 jobs";
	ASSERT(nz_oom_run_sweep(&sw) > 3);
	oom_close(&c);
	nz_source_free(c.src);
	free(data);
}

static int generated_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	int16_t *o = out;
	(void)ctx;
	for (uint64_t r = 0; r < count[0]; r++)
		for (uint64_t c = 0; c < count[1]; c++)
			o[r * count[1] + c] = value(start[0] + r, start[1] + c);
	return 0;
}

/* A child writes 330000 x 384 int16 in shards of 300000 rows (one shard of
 * 230 MB, one edge shard) at -j 2; its peak RSS stays under 64 MiB, and two
 * chunks read back equal (one per shard). */
static void big_shards(void)
{
	static const uint64_t shards[2] = {300000, 384};
	layout l = {{330000, 384}, {3000, 64}, shards};
	char root[1024];
	struct rusage ru;
	long peak = 0;
	pid_t pid;
	int status, fds[2];

	snprintf(root, sizeof root, "%s/big", tmp);
	ASSERT(pipe(fds) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, generated_read, NULL};
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		nz_store *st;
		nz_source *src;
		nz_array *a = create(&st, root, &l);
		if (nz_source_from_callback(&src, &ops, NULL, "<i2", 2, l.shape) < 0)
			_exit(2);
		wo.jobs = 2;
		if (nz_write_array(a, src, &wo) < 0) {
			fprintf(stderr, "big write: %s\n", nz_error_last()->message);
			_exit(1);
		}
		nz_array_free(a);
		nz_store_free(st);
		nz_source_free(src);
		/* Its own peak (RUSAGE_CHILDREN would include the tests' shell commands). */
		if (getrusage(RUSAGE_SELF, &ru) != 0 ||
		    write(fds[1], &ru.ru_maxrss, sizeof ru.ru_maxrss) != sizeof ru.ru_maxrss)
			_exit(3);
		_exit(0);
	}
	close(fds[1]);
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ASSERT(read(fds[0], &peak, sizeof peak) == sizeof peak);
	close(fds[0]);
	printf("big shard write: peak RSS %ld KiB (one shard: 230400000 bytes)\n", peak);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)peak; /* sanitizers' shadow memory and quarantine make RSS meaningless */
#else
	/* A worker holds one row of a shard's inner chunks (6 x 384 KB), its
	 * reads and one encoded chunk: far below one 230 MB shard. */
	ASSERT(peak < 64 * 1024);
#endif
	{
		static const uint64_t idx[2][2] = {{99, 5}, {109, 3}};
		nz_store *st;
		nz_array *a;
		size_t cn;
		int16_t *chunk;
		ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_READ));
		ASSERT_OK(nz_array_open(&a, st, "data"));
		cn = nz_array_chunk_nbytes(a);
		chunk = malloc(cn);
		for (int k = 0; k < 2; k++) {
			ASSERT_OK(nz_array_read_chunk(a, NULL, idx[k], chunk, cn));
			for (uint64_t r = 0; r < 3000; r++)
				for (uint64_t c = 0; c < 64; c++)
					if (chunk[r * 64 + c] !=
					    value(idx[k][0] * 3000 + r, idx[k][1] * 64 + c))
						NZ__FAIL("big: chunk %d differs at (%" PRIu64
							 ", %" PRIu64 ")", k, r, c);
		}
		free(chunk);
		nz_array_free(a);
		nz_store_free(st);
	}
	nz_test_rm_rf(root);
}

int main(void)
{
	static const uint64_t sh[2] = {30000, 384}, gaps[2] = {3000, 256};
	/* 65432 rows: shards of 30000, 30000 and 5432 (one full and one edge
	 * chunk row, then 8 rows of chunks outside the array). */
	layout big = {{65432, 384}, {3000, 64}, sh};
	/* 350 columns in shards of 256: the second shard column holds a full
	 * chunk, an edge chunk and two chunks outside; the last shard row two
	 * chunk rows of 1000 and 1 row, and one outside. */
	layout gap = {{7001, 350}, {1000, 64}, gaps};
	layout flat = {{7001, 350}, {1000, 64}, NULL};

	snprintf(tmp, sizeof tmp, "%s/engine_shards", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz_test_rm_rf(tmp);
	ASSERT(mkdir(tmp, 0777) == 0);
	all_jobs("big", &big, 1);
	all_jobs("gap", &gap, 0);
	all_jobs("flat", &flat, 0);
	failing(&big);
	nz__alloc_init();
	allocation_failures(&gap);
	big_shards();
	nz_test_rm_rf(tmp);
	printf("ok\n");
	return 0;
}
