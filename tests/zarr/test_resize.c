/* Growable arrays (zarr/resize.h): in v2, v3 and v3 with shards, an array
 * created empty grows by writing its last unit through a reshaped handle
 * (partial, then rewritten whole) and publishing the new shape; a fresh
 * open sees the published shape and the data, v3 keeps its attributes, and
 * the handle a resize gives back equals what opening returns. The
 * consolidated document kept current by the resizes (no listing) is
 * stored byte for byte as nz_consolidate then writes it. */
#include <sys/stat.h>

#include "test.h"
#include "zarr/resize.h"

static void fill(int16_t *v, uint64_t from, uint64_t n, uint64_t ch)
{
	for (uint64_t i = 0; i < n; i++)
		for (uint64_t c = 0; c < ch; c++)
			v[i * ch + c] = (int16_t)((from + i) * 10 + c);
}

/* The stored consolidated document of `st` (v3 root zarr.json, v2
 * .zmetadata); the caller frees it. */
static char *consolidated_bytes(nz_store *st, int fmt, size_t *len)
{
	void *v = NULL;
	ASSERT_OK(nz_store_get(st, fmt == 3 ? "zarr.json" : ".zmetadata", &v, len));
	return v;
}

/* Publish `frames` rows and check what a reader opening now sees, and that
 * the consolidated document `cm` kept current is what consolidating writes. */
static void publish_and_check(nz_store *st, nz_array *a, uint64_t frames, int fmt, json_t *cm)
{
	uint64_t shape[2] = {frames, 4}, start[2] = {0, 0};
	nz_array *b, *c;
	int16_t got[64], want[64];
	char *kept, *full;
	size_t nkept, nfull;
	ASSERT_OK(nz__array_resize(&b, a, shape, cm));
	ASSERT_OK(nz__consolidated_put(st, cm));
	kept = consolidated_bytes(st, fmt, &nkept);
	ASSERT_OK(nz_consolidate(st));
	full = consolidated_bytes(st, fmt, &nfull);
	ASSERT_EQ_U64(nkept, nfull);
	ASSERT_MEM_EQ(kept, full, nfull);
	nz_free(kept);
	nz_free(full);
	ASSERT_EQ_U64(nz_array_shape(b)[0], frames);
	ASSERT_OK(nz_array_open(&c, st, "g/x"));
	ASSERT_EQ_U64(nz_array_shape(c)[0], frames);
	ASSERT_EQ_U64(nz_array_shape(c)[1], 4);
	ASSERT_OK(nz_array_read_region(c, start, shape, got, (size_t)frames * 4 * sizeof *got));
	fill(want, 0, frames, 4);
	ASSERT_MEM_EQ(got, want, (size_t)frames * 4 * sizeof *got);
	nz_array_free(b);
	nz_array_free(c);
}

static void grow(int fmt, int sharded)
{
	char path[600];
	const char *tmp = getenv("NZ_TMP");
	nz_store *st;
	nz_array *a, *w;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[2] = {0, 4}, chunks[2] = {3, 4}, shards[2] = {6, 4}, idx[2] = {0, 0};
	uint64_t unit = sharded ? 6 : 3;
	int16_t buf[24];
	char *attrs = NULL;
	json_t *cm = NULL;

	snprintf(path, sizeof path, "%s/resize-v%d%s", tmp ? tmp : "/tmp", fmt,
		 sharded ? "-sharded" : "");
	nz_test_rm_rf(path);
	ASSERT_OK(nz_store_open_dir(&st, path, NZ_STORE_WRITE | NZ_STORE_CREATE));
	o.dtype = "<i2";
	o.ndim = 2;
	o.shape = shape;
	o.chunks = chunks;
	o.zarr_format = fmt;
	o.shards = sharded ? shards : NULL;
	ASSERT_OK(nz_array_create(&a, st, "g/x", &o));
	ASSERT_OK(nz_attrs_write(st, "g/x", "{\"unit\": \"volts\"}"));
	ASSERT_OK(nz_consolidate(st));
	ASSERT_OK(nz__consolidated_read(&cm, st));

	/* Unit 0 part-way (2 rows), then whole; unit 1 part-way (1 row). */
	for (int step = 0; step < 3; step++) {
		uint64_t frames = step == 0 ? 2 : step == 1 ? unit : unit + 1, ws[2] = {frames, 4};
		idx[0] = step == 2;
		memset(buf, 0, sizeof buf);
		fill(buf, idx[0] * unit, frames - idx[0] * unit, 4);
		ASSERT_OK(nz__array_reshaped(&w, a, ws));
		ASSERT_EQ_U64(nz_array_shape(w)[0], frames);
		ASSERT_EQ_U64(nz_array_shape(a)[0], 0); /* the original is untouched */
		ASSERT_OK(nz_array_write_shard(w, NULL, idx, buf, (size_t)unit * 4 * sizeof *buf));
		nz_array_free(w);
		publish_and_check(st, a, frames, fmt, cm);
	}
	ASSERT_OK(nz_attrs_read(&attrs, st, "g/x"));
	ASSERT_EQ_STR(attrs, "{\"unit\":\"volts\"}");
	nz_free(attrs);
	ASSERT_OK(nz_consolidate(st));
	ASSERT_OK(nz_metadata_check(st));
	json_decref(cm);
	nz_array_free(a);
	nz_store_free(st);
	nz_test_rm_rf(path);
}

/* nz__grow_put with empty chunks skipped: an all-fill inner chunk in the
 * middle of a shard is an empty entry, and the chunks after it are still
 * stored, in a flush of the open shard (store set, a partial last chunk)
 * and when the shard completes. Once, the empty entry stopped the shard's
 * put there and the rest of the shard was lost. */
static void grow_empty_inner(void)
{
	char path[600];
	const char *tmp = getenv("NZ_TMP");
	nz_store *st;
	nz_array *a, *r;
	nz__grow *g = NULL;
	nz_scratch *scratch = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[2] = {0, 4}, chunks[2] = {3, 4}, shards[2] = {9, 4}, start[2] = {0, 0};
	int16_t chunk[12], got[36], want[36];

	snprintf(path, sizeof path, "%s/resize-empty", tmp ? tmp : "/tmp");
	nz_test_rm_rf(path);
	ASSERT_OK(nz_store_open_dir(&st, path, NZ_STORE_WRITE | NZ_STORE_CREATE));
	o.dtype = "<i2", o.ndim = 2, o.shape = shape, o.chunks = chunks, o.zarr_format = 3;
	o.shards = shards, o.skip_empty_chunks = 1;
	ASSERT_OK(nz_array_create(&a, st, "x", &o));
	ASSERT_OK(nz__grow_new(&g, a));
	ASSERT_OK(nz_scratch_new(&scratch));
	fill(want, 0, 9, 4);
	memset(want + 12, 0, 12 * sizeof *want); /* rows 3..5: the fill value */
	for (int pass = 0; pass < 2; pass++) {
		/* pass 0: chunk 2 has 2 rows, flushed; pass 1: whole, the shard done */
		uint64_t rows = pass == 0 ? 2 : 3, n = 6 + rows, ws[2] = {n, 4};
		for (uint64_t k = 0; k < 3; k++) {
			memcpy(chunk, want + k * 12, sizeof chunk);
			ASSERT_OK(nz__grow_put(g, scratch, k, chunk, k == 2 ? rows : 3, k == 2));
		}
		ASSERT_OK(nz__array_reshaped(&r, a, ws));
		memset(got, 0x55, sizeof got);
		ASSERT_OK(nz_array_read_region(r, start, ws, got, (size_t)n * 4 * sizeof *got));
		ASSERT_MEM_EQ(got, want, (size_t)n * 4 * sizeof *got);
		nz_array_free(r);
	}
	nz__grow_free(g);
	nz_scratch_free(scratch);
	nz_array_free(a);
	nz_store_free(st);
	nz_test_rm_rf(path);
}

int main(void)
{
	grow_empty_inner();
	grow(2, 0);
	grow(3, 0);
	grow(3, 1);
	return 0;
}
