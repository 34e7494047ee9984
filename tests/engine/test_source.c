/* Sources: raw files (header offset, full-row and narrow reads, size
 * validation), memory buffers, callbacks; concurrent reads of one source. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include "test.h"

#define ROWS 3000
#define CH 70

static int16_t value(uint64_t r, uint64_t c)
{
	return (int16_t)((r * 131 + c * 7919) % 65521 - 32000);
}

static void make_path(char *out, size_t n, const char *name)
{
	const char *tmp = getenv("NZ_TMP");
	snprintf(out, n, "%s/%s", tmp ? tmp : "/tmp", name);
}

/* Write ROWS x CH int16 after a header of `header` bytes, plus `extra`. */
static void write_raw(const char *path, size_t header, size_t extra)
{
	FILE *f = fopen(path, "wb");
	uint64_t r, c;
	size_t i;
	ASSERT(f);
	for (i = 0; i < header; i++)
		fputc('H', f);
	for (r = 0; r < ROWS; r++)
		for (c = 0; c < CH; c++) {
			int16_t v = value(r, c);
			fwrite(&v, 2, 1, f);
		}
	for (i = 0; i < extra; i++)
		fputc(0, f);
	ASSERT(fclose(f) == 0);
}

static void check_box(nz_source *src, uint64_t r0, uint64_t nr, uint64_t c0, uint64_t nc)
{
	uint64_t start[2] = {r0, c0}, count[2] = {nr, nc}, r, c;
	int16_t *buf = malloc((size_t)(nr * nc * 2) + 1);
	ASSERT_OK(nz_source_read(src, start, count, buf, (size_t)(nr * nc * 2)));
	for (r = 0; r < nr; r++)
		for (c = 0; c < nc; c++)
			if (buf[r * nc + c] != value(r0 + r, c0 + c))
				NZ__FAIL("element (%" PRIu64 ", %" PRIu64 ") differs", r0 + r, c0 + c);
	free(buf);
}

static void *reader(void *p)
{
	nz_source *src = p;
	unsigned seed = (unsigned)(uintptr_t)pthread_self();
	int i;
	for (i = 0; i < 200; i++) {
		uint64_t r0 = rand_r(&seed) % ROWS, c0 = rand_r(&seed) % CH;
		uint64_t nr = 1 + rand_r(&seed) % (ROWS - r0), nc = 1 + rand_r(&seed) % (CH - c0);
		if (i % 3 == 0) {
			c0 = 0;
			nc = CH;
		}
		if (nr > 600)
			nr = 600;
		check_box(src, r0, nr, c0, nc);
	}
	return NULL;
}

typedef struct cb_ctx {
	int fail_at_row;
	int freed;
} cb_ctx;

static int cb_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	cb_ctx *c = ctx;
	int16_t *o = out;
	uint64_t r, k;
	if (c->fail_at_row >= 0 && start[0] + count[0] > (uint64_t)c->fail_at_row)
		return NZ_EIO;
	for (r = 0; r < count[0]; r++)
		for (k = 0; k < count[1]; k++)
			*o++ = value(start[0] + r, start[1] + k);
	return 0;
}

static void cb_free(void *ctx)
{
	((cb_ctx *)ctx)->freed++;
}

int main(void)
{
	char path[1024], bad[1024];
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	nz_source *src;
	pthread_t th[4];
	int i;

	make_path(path, sizeof path, "engine_source.raw");
	make_path(bad, sizeof bad, "engine_source_bad.raw");
	write_raw(path, 100, 0);
	ro.dtype = "<i2";
	ro.nchannels = CH;
	ro.header_offset = 100;
	ASSERT_OK(nz_source_open_raw(&src, path, &ro));
	ASSERT_EQ_INT(nz_source_ndim(src), 2);
	ASSERT_EQ_U64(nz_source_shape(src)[0], ROWS);
	ASSERT_EQ_U64(nz_source_shape(src)[1], CH);
	ASSERT_EQ_INT(nz_source_itemsize(src), 2);
	ASSERT_EQ_STR(nz_source_dtype(src), "<i2");
	check_box(src, 0, ROWS, 0, CH);    /* everything, one pread */
	check_box(src, 17, 2500, 5, 32);   /* narrow: blocks of rows */
	check_box(src, ROWS - 1, 1, CH - 1, 1);
	for (i = 0; i < 4; i++)
		ASSERT(pthread_create(&th[i], NULL, reader, src) == 0);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	{ /* out of range, wrong length */
		uint64_t start[2] = {ROWS - 1, 0}, count[2] = {2, CH};
		int16_t buf[2 * CH];
		ASSERT_ERR(NZ_EINVAL, nz_source_read(src, start, count, buf, sizeof buf));
		ASSERT_CONTAINS(nz_error_last()->message, path);
		start[0] = 0;
		ASSERT_ERR(NZ_EINVAL, nz_source_read(src, start, count, buf, sizeof buf - 2));
	}
	nz_source_free(src);

	/* A size that is not a whole number of frames names the file. */
	write_raw(bad, 0, 3);
	ro.header_offset = 0;
	ASSERT_ERR(NZ_EFORMAT, nz_source_open_raw(&src, bad, &ro));
	ASSERT(src == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, bad);
	ASSERT_CONTAINS(nz_error_last()->message, "whole number of frames");
	ro.header_offset = 1 << 30;
	ASSERT_ERR(NZ_EFORMAT, nz_source_open_raw(&src, bad, &ro));
	ASSERT_CONTAINS(nz_error_last()->message, "header offset");
	ro.header_offset = 0;
	ro.dtype = "<x9";
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_source_open_raw(&src, path, &ro));
	ASSERT_CONTAINS(nz_error_last()->message, "<x9");
	ro.dtype = "<i2";
	make_path(bad, sizeof bad, "engine_source_missing.raw");
	unlink(bad);
	ASSERT_ERR(NZ_ENOTFOUND, nz_source_open_raw(&src, bad, &ro));
	ASSERT_CONTAINS(nz_error_last()->message, bad);
	ro.nchannels = 0;
	ASSERT_ERR(NZ_EINVAL, nz_source_open_raw(&src, path, &ro));

	/* A file truncated after opening: a clean error naming it. */
	{
		uint64_t start[2] = {0, 0}, count[2] = {ROWS, CH};
		int16_t *buf = malloc(ROWS * CH * 2);
		write_raw(bad, 0, 0);
		ro.nchannels = CH;
		ASSERT_OK(nz_source_open_raw(&src, bad, &ro));
		ASSERT(truncate(bad, 1000) == 0);
		ASSERT_ERR(NZ_EIO, nz_source_read(src, start, count, buf, ROWS * CH * 2));
		ASSERT_CONTAINS(nz_error_last()->message, bad);
		ASSERT_CONTAINS(nz_error_last()->message, "end of file");
		nz_source_free(src);
		free(buf);
	}

	/* Memory: a borrowed array, read by box. */
	{
		uint64_t shape[2] = {ROWS, CH}, r, c;
		int16_t *data = malloc(ROWS * CH * 2);
		for (r = 0; r < ROWS; r++)
			for (c = 0; c < CH; c++)
				data[r * CH + c] = value(r, c);
		ASSERT_OK(nz_source_from_memory(&src, data, "<i2", 2, shape));
		check_box(src, 3, 40, 7, 9);
		check_box(src, 0, ROWS, 0, CH);
		nz_source_free(src);
		ASSERT_ERR(NZ_EINVAL, nz_source_from_memory(&src, NULL, "<i2", 2, shape));
		ASSERT_ERR(NZ_EUNSUPPORTED, nz_source_from_memory(&src, data, "|O", 2, shape));
		ASSERT_ERR(NZ_EINVAL, nz_source_from_memory(&src, data, "<i2", -1, shape));
		free(data);
	}

	/* Callback: reads, failure with the region in the message, free hook. */
	{
		uint64_t shape[2] = {ROWS, CH}, start[2] = {2000, 0}, count[2] = {100, CH};
		cb_ctx ctx = {-1, 0};
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, cb_free};
		int16_t *buf = malloc(100 * CH * 2);
		ASSERT_OK(nz_source_from_callback(&src, &ops, &ctx, "<i2", 2, shape));
		check_box(src, 10, 20, 30, 40);
		ctx.fail_at_row = 2050;
		ASSERT_ERR(NZ_EIO, nz_source_read(src, start, count, buf, 100 * CH * 2));
		ASSERT_CONTAINS(nz_error_last()->message, "2000");
		ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
		ASSERT_ERR(NZ_EINVAL, nz_source_set_flags(src, 0x10));
		ASSERT_CONTAINS(nz_error_last()->message, "callback");
		nz_source_free(src);
		ASSERT_EQ_INT(ctx.freed, 1);
		ops.read = NULL;
		ASSERT_ERR(NZ_EINVAL, nz_source_from_callback(&src, &ops, &ctx, "<i2", 2, shape));
		ASSERT_EQ_INT(ctx.freed, 1);
		free(buf);
	}
	nz_source_free(NULL);
	unlink(path);
	unlink(bad);
	printf("ok\n");
	return 0;
}
