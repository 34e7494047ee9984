/* Zarr arrays through a directory store: keys, grids, padding, regions,
 * object codecs, groups, attributes and consolidation. */
#include <math.h>
#include <sys/stat.h>

#include "test.h"

static char root[4096];

static char *slurp(const char *rel)
{
	char p[4200];
	FILE *f;
	long n;
	char *s;
	snprintf(p, sizeof p, "%s/%s", root, rel);
	if (!(f = fopen(p, "rb")))
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	s = calloc(1, (size_t)n + 1);
	ASSERT(fread(s, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	return s;
}

static int exists(const char *rel)
{
	char p[4200];
	struct stat st;
	snprintf(p, sizeof p, "%s/%s", root, rel);
	return stat(p, &st) == 0;
}

static void test_2d(nz_store *st)
{
	/* 5x7 int32 in 2x3 chunks: 3x3 chunks, edge chunks padded with -1. */
	uint64_t shape[2] = { 5, 7 }, chunks[2] = { 2, 3 }, grid[2], idx[2] = { 2, 2 };
	uint64_t start[2] = { 1, 2 }, count[2] = { 3, 4 };
	int32_t data[35], region[12], chunk[6];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL, *b = NULL;
	char *key = NULL, *meta;
	int i, r, c;

	for (i = 0; i < 35; i++)
		data[i] = i * 10;
	o.dtype = "<i4", o.ndim = 2, o.shape = shape, o.chunks = chunks, o.fill_value_json = "-1";
	ASSERT_OK(nz_array_create(&a, st, "g1/g2/arr", &o));
	ASSERT_EQ_INT(nz_array_chunk_grid(a, grid), 2);
	ASSERT_EQ_U64(grid[0], 3);
	ASSERT_EQ_U64(grid[1], 3);
	ASSERT_EQ_U64(nz_array_nchunks(a), 9);
	ASSERT_EQ_INT(nz_array_chunk_nbytes(a), 24);
	ASSERT_OK(nz_array_chunk_key(&key, a, idx));
	ASSERT_EQ_STR(key, "g1/g2/arr/2.2");
	nz_free(key);
	idx[1] = 3;
	ASSERT_ERR(NZ_EINVAL, nz_array_chunk_key(&key, a, idx));
	ASSERT_CONTAINS(nz_error_last()->message, "out of range");
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	ASSERT(exists("g1/.zgroup") && exists("g1/g2/.zgroup") && exists(".zgroup"));
	ASSERT_EQ_INT(nz_group_exists(st, "g1/g2"), 1);
	ASSERT_EQ_INT(nz_group_exists(st, "g1/g2/arr"), 0);

	meta = slurp("g1/g2/arr/.zarray");
	ASSERT_EQ_STR(meta, "{\n    \"chunks\": [\n        2,\n        3\n    ],\n    \"compressor\": {\n"
			    "        \"blocksize\": 0,\n        \"clevel\": 5,\n        \"cname\": \"lz4\",\n"
			    "        \"id\": \"blosc\",\n        \"shuffle\": 1\n    },\n    \"dtype\": \"<i4\",\n"
			    "    \"fill_value\": -1,\n    \"filters\": null,\n    \"order\": \"C\",\n"
			    "    \"shape\": [\n        5,\n        7\n    ],\n    \"zarr_format\": 2\n}");
	free(meta);

	ASSERT_OK(nz_array_open(&b, st, "/g1/g2/arr/"));
	ASSERT_EQ_STR(nz_array_dtype(b), "<i4");
	ASSERT_EQ_INT(*(const int32_t *)nz_array_fill_value(b), -1);
	/* Region across four chunks. */
	ASSERT_OK(nz_array_read_region(b, start, count, region, sizeof region));
	for (r = 0; r < 3; r++)
		for (c = 0; c < 4; c++)
			ASSERT_EQ_INT(region[r * 4 + c], data[(r + 1) * 7 + c + 2]);
	/* The corner chunk holds one real row and column; the rest is fill. */
	idx[0] = 2, idx[1] = 2;
	ASSERT_OK(nz_array_read_chunk(b, NULL, idx, chunk, sizeof chunk));
	ASSERT_EQ_INT(chunk[0], 4 * 7 * 10 + 60);
	ASSERT_EQ_INT(chunk[1], -1);
	ASSERT_EQ_INT(chunk[3], -1);
	count[0] = 5;
	ASSERT_ERR(NZ_EINVAL, nz_array_read_region(b, start, count, region, sizeof region));
	ASSERT_CONTAINS(nz_error_last()->message, "outside dimension 0");
	count[0] = 3;
	ASSERT_ERR(NZ_EINVAL, nz_array_read_region(b, start, count, region, 8));
	nz_array_free(a);
	nz_array_free(b);
}

static void test_special_shapes(nz_store *st)
{
	uint64_t shape0[1] = { 0 }, idx[1] = { 0 }, shape1[1] = { 10 }, chunks1[1] = { 4 };
	double v = 2.5, out = 0, vals[10], got[10];
	float f[4];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	char *key = NULL, *meta;
	nz_compressor none = NZ_COMPRESSOR_INIT;
	int i;

	none.id = "none";
	/* 0-d: shape [], one chunk "0". */
	o.dtype = "<f8", o.ndim = 0, o.compressor = &none;
	ASSERT_OK(nz_array_create(&a, st, "scalar", &o));
	ASSERT_EQ_U64(nz_array_nchunks(a), 1);
	ASSERT_OK(nz_array_chunk_key(&key, a, NULL));
	ASSERT_EQ_STR(key, "scalar/0");
	nz_free(key);
	ASSERT_OK(nz_array_write_all(a, &v, sizeof v));
	ASSERT_OK(nz_array_read_region(a, NULL, NULL, &out, sizeof out));
	ASSERT(out == 2.5);
	meta = slurp("scalar/.zarray");
	ASSERT_CONTAINS(meta, "\"chunks\": [],");
	ASSERT_CONTAINS(meta, "\"compressor\": null,");
	ASSERT_CONTAINS(meta, "\"fill_value\": 0.0,");
	free(meta);
	nz_array_free(a);

	/* Empty: no chunks at all. */
	o.dtype = "<u2", o.ndim = 1, o.shape = shape0, o.compressor = NULL;
	ASSERT_OK(nz_array_create(&a, st, "empty", &o));
	ASSERT_EQ_U64(nz_array_nchunks(a), 0);
	ASSERT_OK(nz_array_write_all(a, "", 0));
	ASSERT(!exists("empty/0"));
	nz_array_free(a);

	/* NaN fill, skip empty chunks, nested keys. */
	for (i = 0; i < 10; i++)
		vals[i] = i < 4 ? NAN : i;
	o.dtype = "<f8", o.shape = shape1, o.chunks = chunks1, o.fill_value_json = "\"NaN\"";
	o.skip_empty_chunks = 1, o.dimension_separator = '/';
	ASSERT_OK(nz_array_create(&a, st, "nanfill", &o));
	ASSERT_OK(nz_array_write_all(a, vals, sizeof vals));
	ASSERT(!exists("nanfill/0") && exists("nanfill/1") && exists("nanfill/2"));
	meta = slurp("nanfill/.zarray");
	ASSERT_CONTAINS(meta, "\"fill_value\": \"NaN\",");
	ASSERT_CONTAINS(meta, "\"dimension_separator\": \"/\",");
	free(meta);
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, st, "nanfill"));
	ASSERT_OK(nz_array_read_region(a, (uint64_t[]){ 0 }, shape1, got, sizeof got));
	for (i = 0; i < 10; i++)
		ASSERT(i < 4 ? isnan(got[i]) : got[i] == i);
	/* An opened array stores every chunk until told otherwise; then an
	 * all-fill chunk is not stored and one already there is removed. */
	ASSERT_OK(nz_array_write_all(a, vals, sizeof vals));
	ASSERT(exists("nanfill/0"));
	nz_array_set_skip_empty(a, 1);
	ASSERT_OK(nz_array_write_all(a, vals, sizeof vals));
	ASSERT(!exists("nanfill/0") && exists("nanfill/1"));
	nz_array_free(a);

	/* float32 fill is written as float(np.float32(v)). */
	o.dtype = "<f4", o.fill_value_json = "0.1", o.skip_empty_chunks = 0, o.dimension_separator = 0;
	o.shape = chunks1;
	ASSERT_OK(nz_array_create(&a, st, "f32", &o));
	ASSERT_OK(nz_array_read_chunk(a, NULL, idx, f, sizeof f));
	ASSERT(f[3] == 0.1f);
	nz_array_free(a);
	meta = slurp("f32/.zarray");
	ASSERT_CONTAINS(meta, "\"fill_value\": 0.10000000149011612,");
	free(meta);
}

static void test_objects(nz_store *st)
{
	uint64_t shape[2] = { 3, 2 }, chunks[2] = { 2, 2 }, idx[2] = { 1, 0 };
	const char *text[6] = { "a", "\xc3\xa9t\xc3\xa9", "", "\xf0\x9f\x98\x80", "x\"y", "z" };
	const char *js[6] = { "{\"b\": 1, \"a\": [1.0, null]}", "\"s\"", "3", "[]", "{}", "0.5" };
	size_t lens[6], jl[6];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	nz_vlen *v = NULL;
	char *meta;
	int i;

	for (i = 0; i < 6; i++)
		lens[i] = strlen(text[i]), jl[i] = strlen(js[i]);
	o.dtype = "|O", o.ndim = 2, o.shape = shape, o.chunks = chunks;
	o.object_codec = NZ_OBJECT_VLEN_UTF8, o.fill_value_json = "0";
	ASSERT_OK(nz_array_create(&a, st, "strings", &o));
	ASSERT_EQ_INT(nz_array_itemsize(a), 0);
	ASSERT_OK(nz_array_write_all_vlen(a, text, lens, 6));
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_EQ_INT(v->count, 4);
	ASSERT_EQ_STR(v->items[0], "x\"y");
	ASSERT_EQ_STR(v->items[2], ""); /* padding beyond the edge */
	nz_vlen_free(v);
	ASSERT_ERR(NZ_EINVAL, nz_array_write_chunk(a, NULL, idx, "", 0));
	nz_array_free(a);
	meta = slurp("strings/.zarray");
	ASSERT_CONTAINS(meta, "\"filters\": [\n        {\n            \"id\": \"vlen-utf8\"\n        }\n    ],");
	ASSERT_CONTAINS(meta, "\"fill_value\": 0,");
	free(meta);

	o.object_codec = NZ_OBJECT_JSON2, o.fill_value_json = NULL;
	ASSERT_OK(nz_array_create(&a, st, "json", &o));
	ASSERT_OK(nz_array_write_all_vlen(a, js, jl, 6));
	idx[0] = 0;
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_EQ_STR(v->items[0], "{\"a\":[1.0,null],\"b\":1}");
	ASSERT_EQ_STR(v->items[3], "[]");
	nz_vlen_free(v);
	idx[0] = 1;
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_EQ_STR(v->items[1], "0.5");
	ASSERT_EQ_STR(v->items[2], "null");
	nz_vlen_free(v);
	nz_array_free(a);
	meta = slurp("json/.zarray");
	ASSERT_CONTAINS(meta, "\"id\": \"json2\",");
	ASSERT_CONTAINS(meta, "\"fill_value\": null,");
	free(meta);

	/* A missing chunk reads as empty elements. */
	o.object_codec = NZ_OBJECT_VLEN_BYTES;
	ASSERT_OK(nz_array_create(&a, st, "bytes", &o));
	ASSERT_OK(nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_EQ_INT(v->count, 4);
	ASSERT_EQ_INT(v->lens[3], 0);
	nz_vlen_free(v);
	nz_array_free(a);
}

static void test_structured_and_bytes(nz_store *st)
{
	uint64_t shape[1] = { 3 };
	unsigned char rec[3][12], got[3][12];
	char s[3][4] = { "ab", "cdef", "" }, sg[3][4];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	char *meta;
	int i;

	for (i = 0; i < 36; i++)
		((unsigned char *)rec)[i] = (unsigned char)(i * 7);
	o.dtype = "[[\"x\", \"<u4\"], [\"w\", \"<f8\"]]", o.ndim = 1, o.shape = shape;
	ASSERT_OK(nz_array_create(&a, st, "compound", &o));
	ASSERT_EQ_INT(nz_array_itemsize(a), 12);
	ASSERT_EQ_STR(nz_array_dtype(a), "[[\"x\",\"<u4\"],[\"w\",\"<f8\"]]");
	ASSERT_OK(nz_array_write_all(a, rec, sizeof rec));
	ASSERT_OK(nz_array_read_region(a, (uint64_t[]){ 0 }, shape, got, sizeof got));
	ASSERT_MEM_EQ(got, rec, sizeof rec);
	nz_array_free(a);
	meta = slurp("compound/.zarray");
	ASSERT_CONTAINS(meta, "\"fill_value\": \"AAAAAAAAAAAAAAAA\",");
	ASSERT_CONTAINS(meta, "\"dtype\": [\n        [\n            \"x\",\n            \"<u4\"\n        ],");
	free(meta);

	o.dtype = "|S4", o.fill_value_json = "\"YWI=\"";
	ASSERT_OK(nz_array_create(&a, st, "fixed", &o));
	ASSERT_MEM_EQ(nz_array_fill_value(a), "ab\0\0", 4);
	ASSERT_OK(nz_array_write_all(a, s, sizeof s));
	ASSERT_OK(nz_array_read_region(a, (uint64_t[]){ 0 }, shape, sg, sizeof sg));
	ASSERT_MEM_EQ(sg, s, sizeof s);
	nz_array_free(a);
}

static void test_groups_attrs(nz_store *st)
{
	char *s = NULL, *meta;
	ASSERT_OK(nz_group_create(st, "x/y/z"));
	ASSERT_EQ_INT(nz_group_exists(st, "x/y"), 1);
	ASSERT_ERR(NZ_EEXISTS, nz_group_create(st, "g1/g2/arr/sub"));
	ASSERT_CONTAINS(nz_error_last()->message, "g1/g2/arr");
	ASSERT_OK(nz_attrs_read(&s, st, "x"));
	ASSERT_EQ_STR(s, "{}");
	nz_free(s);
	ASSERT_OK(nz_attrs_write(st, "x/y", "{\"z\": 1e-7, \"a\": \"\\u00e9\", \"n\": [1, 2.0]}"));
	meta = slurp("x/y/.zattrs");
	ASSERT_EQ_STR(meta, "{\n    \"a\": \"\\u00e9\",\n    \"n\": [\n        1,\n        2.0\n    ],\n"
			    "    \"z\": 1e-07\n}");
	free(meta);
	ASSERT_OK(nz_attrs_read(&s, st, "x/y"));
	ASSERT_EQ_STR(s, "{\"a\":\"\\u00e9\",\"n\":[1,2.0],\"z\":1e-07}");
	nz_free(s);
	ASSERT_ERR(NZ_EINVAL, nz_attrs_write(st, "x", "[1]"));
	ASSERT_CONTAINS(nz_error_last()->message, "x/.zattrs");
	ASSERT_ERR(NZ_EFORMAT, nz_attrs_write(st, "x", "{\"a\": "));
	ASSERT_CONTAINS(nz_error_last()->message, "line 1");

	ASSERT_OK(nz_consolidate(st));
	meta = slurp(".zmetadata");
	ASSERT_CONTAINS(meta, "{\n    \"metadata\": {\n        \".zgroup\": {\n            \"zarr_format\": 2\n        },");
	ASSERT_CONTAINS(meta, "        \"x/y/.zattrs\": {\n            \"a\": \"\\u00e9\",");
	ASSERT_CONTAINS(meta, "\"g1/g2/arr/.zarray\": {");
	ASSERT_CONTAINS(meta, "\n    \"zarr_consolidated_format\": 1\n}");
	ASSERT(!strstr(meta, "arr/0.0"));
	free(meta);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	nz_store *st = NULL;
	ASSERT(tmp != NULL);
	snprintf(root, sizeof root, "%s/zarr_array", tmp);
	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
	test_2d(st);
	test_special_shapes(st);
	test_objects(st);
	test_structured_and_bytes(st);
	test_groups_attrs(st);
	nz_store_free(st);
	printf("ok\n");
	return 0;
}
