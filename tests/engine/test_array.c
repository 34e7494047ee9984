/* nz_write_array through the real Zarr layer and directory store: round
 * trip, byte-identical files for 1, 2, 3 and 8 jobs, an unwritable chunk
 * path and a failing source mid-run (clean error, no temporary files). */
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

#define ROWS 5003
#define CH 100

static char tmp[2048];

static int16_t value(uint64_t r, uint64_t c)
{
	/* Smooth plus a little noise: compressible like real data. */
	return (int16_t)((int)(r % 97) * 3 - (int)(c % 13) * 5 + (int)((r * 7 + c * 3) % 11));
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *s;
	long n;
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = malloc((size_t)n + 1);
	ASSERT(fread(s, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return s;
}

/* Every entry of dir `a` is a file with the same bytes in `b`, and both
 * have the same number of entries; no temporary files in either. */
static int compare_dirs(const char *a, const char *b)
{
	DIR *d = opendir(a);
	struct dirent *e;
	int n = 0, m = 0;
	ASSERT(d);
	while ((e = readdir(d))) {
		char pa[4200], pb[4200];
		char *x, *y;
		size_t lx = 0, ly = 0;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (strstr(e->d_name, "nztmp"))
			NZ__FAIL("temporary file %s left in %s", e->d_name, a);
		snprintf(pa, sizeof pa, "%s/%s", a, e->d_name);
		snprintf(pb, sizeof pb, "%s/%s", b, e->d_name);
		x = slurp(pa, &lx);
		y = slurp(pb, &ly);
		if (!x || !y || lx != ly || memcmp(x, y, lx) != 0)
			NZ__FAIL("%s and %s differ", pa, pb);
		free(x);
		free(y);
		n++;
	}
	closedir(d);
	d = opendir(b);
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			m++;
	closedir(d);
	ASSERT_EQ_INT(n, m);
	return n;
}

static void write_raw(const char *path)
{
	FILE *f = fopen(path, "wb");
	uint64_t r, c;
	ASSERT(f);
	for (r = 0; r < ROWS; r++)
		for (c = 0; c < CH; c++) {
			int16_t v = value(r, c);
			fwrite(&v, 2, 1, f);
		}
	ASSERT(fclose(f) == 0);
}

/* Write the raw file into <tmp>/<name> as array "acq/data" with `jobs`. */
static void write_one(const char *name, const char *raw, const uint64_t *chunks,
		      const char *cname, int jobs, size_t budget)
{
	char root[2200];
	uint64_t shape[2] = {ROWS, CH};
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_compressor comp = NZ_COMPRESSOR_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats stats;
	nz_store *st;
	nz_array *a;
	nz_source *src;

	snprintf(root, sizeof root, "%s/%s", tmp, name);
	nz_test_rm_rf(root);
	ro.nchannels = CH;
	ASSERT_OK(nz_source_open_raw(&src, raw, &ro));
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
	comp.cname = cname;
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	ao.chunks = chunks;
	ao.compressor = &comp;
	ao.fill_value_json = "-3";
	ASSERT_OK(nz_array_create(&a, st, "acq/data", &ao));
	wo.jobs = jobs;
	wo.buffer_size = budget;
	wo.stats = &stats;
	ASSERT_OK(nz_write_array(a, src, &wo));
	ASSERT_EQ_U64(stats.chunks, nz_array_nchunks(a));
	ASSERT_EQ_U64(stats.bytes, (uint64_t)ROWS * CH * 2);
	nz_array_free(a);
	nz_store_free(st);
	nz_source_free(src);
}

static void check_roundtrip(const char *name)
{
	char root[2200];
	uint64_t start[2] = {0, 0}, count[2] = {ROWS, CH}, r, c;
	int16_t *back = malloc((size_t)ROWS * CH * 2), pad[2];
	nz_store *st;
	nz_array *a;
	uint64_t idx[2], grid[2];

	snprintf(root, sizeof root, "%s/%s", tmp, name);
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, "acq/data"));
	ASSERT_OK(nz_array_read_region(a, start, count, back, (size_t)ROWS * CH * 2));
	for (r = 0; r < ROWS; r++)
		for (c = 0; c < CH; c++)
			if (back[r * CH + c] != value(r, c))
				NZ__FAIL("%s: element (%" PRIu64 ", %" PRIu64 ") differs", name, r, c);
	/* The padding of the last chunk holds the fill value. */
	nz_array_chunk_grid(a, grid);
	idx[0] = grid[0] - 1;
	idx[1] = grid[1] - 1;
	{
		size_t n = nz_array_chunk_nbytes(a);
		int16_t *chunk = malloc(n);
		ASSERT_OK(nz_array_read_chunk(a, NULL, idx, chunk, n));
		pad[0] = chunk[n / 2 - 1];
		ASSERT_EQ_INT(pad[0], -3);
		free(chunk);
	}
	nz_array_free(a);
	nz_store_free(st);
	free(back);
}

typedef struct fail_ctx {
	nz_source *inner;
	uint64_t fail_row;
} fail_ctx;

static int failing_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	fail_ctx *f = ctx;
	size_t len = (size_t)(count[0] * count[1] * 2);
	if (start[0] + count[0] > f->fail_row)
		return NZ_EIO;
	return nz_source_read(f->inner, start, count, out, len);
}

int main(void)
{
	char raw[2200], a[4400], b[4400], blocker[4400];
	static const int jobs[] = {2, 3, 8};
	uint64_t hdmf[2] = {700, 32}, tmajor[2] = {640, CH};
	size_t i;
	int n;

	snprintf(tmp, sizeof tmp, "%s/engine_array", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz_test_rm_rf(tmp);
	ASSERT(mkdir(tmp, 0777) == 0);
	snprintf(raw, sizeof raw, "%s/in.raw", tmp);
	write_raw(raw);

	/* Bands of chunks (small budget: 2 chunks per task) and time-major. */
	write_one("j1", raw, hdmf, "lz4", 1, 4 * 700 * 32 * 2);
	check_roundtrip("j1");
	write_one("t1", raw, tmajor, "zstd", 1, 0);
	check_roundtrip("t1");
	for (i = 0; i < sizeof jobs / sizeof *jobs; i++) {
		write_one("jn", raw, hdmf, "lz4", jobs[i], i == 0 ? 0 : 6 * 700 * 32 * 2);
		snprintf(a, sizeof a, "%s/j1/acq/data", tmp);
		snprintf(b, sizeof b, "%s/jn/acq/data", tmp);
		n = compare_dirs(a, b);
		ASSERT_EQ_INT(n, 8 * 4 + 1); /* chunks + .zarray */
		write_one("tn", raw, tmajor, "zstd", jobs[i], 0);
		snprintf(a, sizeof a, "%s/t1/acq/data", tmp);
		snprintf(b, sizeof b, "%s/tn/acq/data", tmp);
		ASSERT_EQ_INT(compare_dirs(a, b), 8 + 1);
	}

	/* An unwritable chunk path: a non-empty directory where chunk 3.1
	 * goes. The write fails naming the key; no temporary file is left. */
	{
		char root[2400];
		uint64_t shape[2] = {ROWS, CH};
		nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
		nz_raw_opts ro = NZ_RAW_OPTS_INIT;
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		nz_source *src, *fs;
		nz_store *st;
		nz_array *arr;
		fail_ctx fc;
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, failing_read, NULL};

		snprintf(root, sizeof root, "%s/bad", tmp);
		nz_test_rm_rf(root);
		ro.nchannels = CH;
		ASSERT_OK(nz_source_open_raw(&src, raw, &ro));
		ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
		ao.dtype = "<i2";
		ao.ndim = 2;
		ao.shape = shape;
		ao.chunks = hdmf;
		ASSERT_OK(nz_array_create(&arr, st, "acq/data", &ao));
		snprintf(blocker, sizeof blocker, "%s/acq/data/3.1/x", root);
		ASSERT(mkdir(blocker, 0777) != 0); /* parent missing */
		snprintf(blocker, sizeof blocker, "%s/acq/data/3.1", root);
		ASSERT(mkdir(blocker, 0777) == 0);
		snprintf(blocker, sizeof blocker, "%s/acq/data/3.1/x", root);
		ASSERT(mkdir(blocker, 0777) == 0);
		for (n = 1; n <= 8; n *= 2) {
			wo.jobs = n;
			ASSERT(nz_write_array(arr, src, &wo) < 0);
			ASSERT_CONTAINS(nz_error_last()->message, "3.1");
			ASSERT_CONTAINS(nz_error_last()->message, "acq/data");
		}
		snprintf(a, sizeof a, "%s/acq/data", root);
		{
			DIR *d = opendir(a);
			struct dirent *e;
			while ((e = readdir(d)))
				if (strstr(e->d_name, "nztmp"))
					NZ__FAIL("temporary file %s left", e->d_name);
			closedir(d);
		}
		/* A source failing mid-run (the blocker gone). */
		snprintf(blocker, sizeof blocker, "%s/acq/data/3.1", root);
		nz_test_rm_rf(blocker);
		fc.inner = src;
		fc.fail_row = 3000;
		ASSERT_OK(nz_source_from_callback(&fs, &ops, &fc, "<i2", 2, shape));
		for (n = 1; n <= 8; n *= 2) {
			wo.jobs = n;
			ASSERT_ERR(NZ_EIO, nz_write_array(arr, fs, &wo));
			ASSERT_CONTAINS(nz_error_last()->message, "callback");
		}
		nz_source_free(fs);
		/* dtype mismatch */
		{
			nz_array *f4;
			ao.dtype = "<f4";
			ASSERT_OK(nz_array_create(&f4, st, "acq/f4", &ao));
			ASSERT_ERR(NZ_EMISMATCH, nz_write_array(f4, src, NULL));
			ASSERT_CONTAINS(nz_error_last()->message, "<f4");
			nz_array_free(f4);
		}
		nz_array_free(arr);
		nz_store_free(st);
		nz_source_free(src);
	}
	nz_test_rm_rf(tmp);
	printf("ok\n");
	return 0;
}
