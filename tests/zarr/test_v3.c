/* Zarr v3 in a memory store: strict reading of zarr.json (errors name the
 * document and the problem), the forms zarr-python writes that nwbzarr
 * never writes itself (3.1's "structured", hex float fills, base64 struct
 * fills, must_understand: false extensions), chunk keys, formats per
 * hierarchy, groups and attributes. Byte-for-byte output and real-reader
 * interop are tests/zarr/interop3.py's. */
#include "oom.h"
#include "test.h"

static nz_store *st;

/* A valid int16 array document with `extra` spliced in after its codecs
 * (and `dtype` / `fill` / `codecs` as given). */
static char *doc(const char *dtype, const char *fill, const char *codecs, const char *extra)
{
	static char buf[4096];
	snprintf(buf, sizeof buf,
		 "{\"shape\": [5, 4], \"data_type\": %s, \"chunk_grid\": {\"name\": \"regular\", \"configuration\": "
		 "{\"chunk_shape\": [2, 4]}}, \"chunk_key_encoding\": {\"name\": \"default\", \"configuration\": "
		 "{\"separator\": \"/\"}}, \"fill_value\": %s, \"codecs\": %s, \"attributes\": {}, %s"
		 "\"zarr_format\": 3, \"node_type\": \"array\", \"storage_transformers\": []}",
		 dtype, fill, codecs, extra);
	return buf;
}

#define BYTES_LE "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}]"

static nz_array *open_doc(const char *text)
{
	nz_array *a = NULL;
	ASSERT_OK(nz_store_put(st, "a/zarr.json", text, strlen(text)));
	ASSERT_OK(nz_array_open(&a, st, "a"));
	return a;
}

static void expect(int code, const char *text, const char *needle)
{
	nz_array *a = (nz_array *)1;
	ASSERT_OK(nz_store_put(st, "a/zarr.json", text, strlen(text)));
	nz_error_clear();
	if (nz_array_open(&a, st, "a") != code)
		NZ__FAIL("opening %s: expected %d (%s)", text, code, nz_error_last()->message);
	ASSERT(a == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, "a/zarr.json");
	ASSERT_CONTAINS(nz_error_last()->message, needle);
}

static void strict(void)
{
	expect(NZ_EUNSUPPORTED, doc("\"int16\"", "0", "[{\"name\": \"bytes\", \"configuration\": {\"endian\": "
		"\"little\"}}, {\"name\": \"lzma\"}]", ""), "codec 'lzma' is not supported");
	expect(NZ_EUNSUPPORTED, doc("\"int16\"", "0", BYTES_LE, "\"my_ext\": {\"must_understand\": true}, "),
	       "extension 'my_ext'");
	expect(NZ_EUNSUPPORTED, doc("\"int16\"", "0", BYTES_LE, "\"my_ext\": {\"x\": 1}, "), "extension 'my_ext'");
	expect(NZ_EUNSUPPORTED, doc("\"int16\"", "0", BYTES_LE, "\"my_ext\": 3, "), "extension 'my_ext'");
	expect(NZ_EUNSUPPORTED, doc("\"complex64\"", "0", BYTES_LE, ""), "data_type 'complex64'");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"bytes\"}]", ""), "needs an 'endian'");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"zstd\", \"configuration\": {\"level\": 1, "
		"\"checksum\": false}}, {\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}]", ""),
	       "out of place");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[]", ""), "non-empty list");
	expect(NZ_EFORMAT, doc("\"string\"", "\"\"", BYTES_LE, ""), "vlen-utf8 or vlen-bytes");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"vlen-utf8\", \"configuration\": {}}]", ""),
	       "does not fit data_type");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"transpose\", \"configuration\": {\"order\": [0, 0]}}, "
		"{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}]", ""), "not a permutation");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\", "
		"\"x\": 1}}]", ""), "unexpected configuration key 'x'");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"bytes\", \"configuration\": {\"endian\": \"little\"}}, "
		"{\"name\": \"blosc\", \"configuration\": {\"typesize\": 2, \"cname\": \"lz4\", \"clevel\": 5, "
		"\"shuffle\": \"sometimes\", \"blocksize\": 0}}]", ""), "blosc 'shuffle'");
	expect(NZ_EFORMAT, doc("\"int16\"", "\"x\"", BYTES_LE, ""), "fill_value");
	expect(NZ_EFORMAT, doc("{\"name\": \"null_terminated_bytes\", \"configuration\": {}}", "\"\"", "[{\"name\": "
		"\"bytes\"}]", ""), "length_bytes");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", BYTES_LE, "\"dimension_names\": [\"t\"], "), "dimension_names");
	/* sharding: a configuration that does not fit the grid */
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"sharding_indexed\", \"configuration\": {}}]", ""),
	       "chunk_shape");
	expect(NZ_EFORMAT, doc("\"int16\"", "0", "[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": "
		"[2, 3], \"codecs\": " BYTES_LE ", \"index_codecs\": " BYTES_LE "}}]", ""), "not a multiple");
	expect(NZ_EUNSUPPORTED, doc("\"int16\"", "0", "[{\"name\": \"sharding_indexed\", \"configuration\": {\"chunk_shape\": "
		"[1, 2], \"codecs\": " BYTES_LE ", \"index_codecs\": [{\"name\": \"gzip\"}]}}]", ""), "index_codecs");
	expect(NZ_EFORMAT, "{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [2], \"chunk_grid\": 5}",
	       "chunk_grid");
	expect(NZ_EFORMAT, "[]", "expected a JSON object");
}

static void lenient_forms(void)
{
	nz_array *a;
	const unsigned char *f;
	float nanf_bits;
	uint32_t w = 0;

	/* must_understand: false extensions are ignored. */
	a = open_doc(doc("\"int16\"", "-3", BYTES_LE, "\"my_ext\": {\"must_understand\": false, \"x\": 1}, "));
	ASSERT_EQ_STR(nz_array_dtype(a), "<i2");
	f = nz_array_fill_value(a);
	ASSERT(f[0] == 0xfd && f[1] == 0xff);
	nz_array_free(a);
	/* 3.1's "structured" with tuple fields; a base64 fill (older writers). */
	a = open_doc(doc("{\"name\": \"structured\", \"configuration\": {\"fields\": [[\"x\", \"uint8\"], [\"y\", "
			 "\"int16\"]]}}", "\"AQIA\"", BYTES_LE, ""));
	ASSERT_EQ_STR(nz_array_dtype(a), "[[\"x\",\"|u1\"],[\"y\",\"<i2\"]]");
	f = nz_array_fill_value(a);
	ASSERT(f[0] == 1 && f[1] == 2 && f[2] == 0);
	nz_array_free(a);
	/* struct fill object with a field left out (zero) */
	a = open_doc(doc("{\"name\": \"struct\", \"configuration\": {\"fields\": [{\"name\": \"x\", \"data_type\": "
			 "\"uint8\"}, {\"name\": \"y\", \"data_type\": \"float32\"}]}}", "{\"y\": \"Infinity\"}",
			 BYTES_LE, ""));
	f = nz_array_fill_value(a);
	memcpy(&nanf_bits, f + 1, 4);
	ASSERT(f[0] == 0 && isinf(nanf_bits));
	nz_array_free(a);
	/* hex float fill, big-endian bytes codec */
	a = open_doc(doc("\"float32\"", "\"0x7fc00001\"", "[{\"name\": \"bytes\", \"configuration\": {\"endian\": "
			 "\"big\"}}]", ""));
	ASSERT_EQ_STR(nz_array_dtype(a), ">f4");
	f = nz_array_fill_value(a);
	w = (uint32_t)f[0] << 24 | (uint32_t)f[1] << 16 | (uint32_t)f[2] << 8 | f[3];
	ASSERT(w == 0x7fc00001u);
	nz_array_free(a);
	/* fixed_length_utf32 */
	a = open_doc(doc("{\"name\": \"fixed_length_utf32\", \"configuration\": {\"length_bytes\": 8}}",
			 "\"\\u00e9\\ud83d\\ude00z\"", BYTES_LE, ""));
	ASSERT_EQ_STR(nz_array_dtype(a), "<U2");
	f = nz_array_fill_value(a);
	ASSERT(f[0] == 0xe9 && f[1] == 0 && f[4] == 0x00 && f[5] == 0xf6 && f[6] == 0x01); /* truncated to 2 */
	nz_array_free(a);
}

static void keys_and_formats(void)
{
	uint64_t shape[2] = { 5, 4 }, chunks[2] = { 2, 3 }, idx[2] = { 2, 1 };
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL, *b = NULL;
	char *key = NULL, *attrs = NULL;
	int16_t data[20], back[20];
	int i;

	ASSERT_EQ_INT(nz_store_zarr_format(st), 2); /* empty: v2 */
	o.dtype = "<i2", o.ndim = 2, o.shape = shape, o.chunks = chunks, o.zarr_format = 3;
	o.dimension_names = (const char *const[]){ "t", NULL };
	ASSERT_OK(nz_array_create(&a, st, "g/x", &o));
	ASSERT_EQ_INT(nz_store_zarr_format(st), 3);
	ASSERT_EQ_INT(nz_array_zarr_format(a), 3);
	ASSERT(nz_array_shards(a) == nz_array_chunks(a));
	ASSERT_OK(nz_array_chunk_key(&key, a, idx));
	ASSERT_EQ_STR(key, "g/x/c/2/1");
	nz_free(key);
	for (i = 0; i < 20; i++)
		data[i] = (int16_t)(i * 7 - 30);
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	ASSERT_OK(nz_array_open(&b, st, "g/x"));
	ASSERT_OK(nz_array_read_region(b, (uint64_t[]){ 0, 0 }, shape, back, sizeof back));
	ASSERT_MEM_EQ(back, data, sizeof data);
	nz_array_free(b);
	nz_array_free(a);
	/* groups and attributes live in zarr.json */
	ASSERT_EQ_INT(nz_group_exists(st, "g"), 1);
	ASSERT_EQ_INT(nz_group_exists(st, "g/x"), 0);
	ASSERT_OK(nz_group_create(st, "g/h/i"));
	ASSERT_EQ_INT(nz_group_exists(st, "g/h/i"), 1);
	ASSERT_OK(nz_attrs_write(st, "g/x", "{\"z\": 1, \"a\": [true]}"));
	ASSERT_OK(nz_attrs_read(&attrs, st, "g/x"));
	ASSERT_EQ_STR(attrs, "{\"a\":[true],\"z\":1}"); /* compact output is sorted */
	nz_free(attrs);
	ASSERT_ERR(NZ_ENOTFOUND, nz_attrs_write(st, "nowhere", "{}"));
	ASSERT_ERR(NZ_EEXISTS, nz_group_create(st, "g/x/sub"));
	/* re-creating the array keeps its attributes, as v2 keeps .zattrs */
	ASSERT_OK(nz_array_create(&a, st, "g/x", &o));
	nz_array_free(a);
	ASSERT_OK(nz_attrs_read(&attrs, st, "g/x"));
	ASSERT_EQ_STR(attrs, "{\"a\":[true],\"z\":1}");
	nz_free(attrs);
	/* v2 chunk key encoding inside v3 */
	o.chunk_key_encoding = NZ_CHUNK_KEY_V2;
	ASSERT_OK(nz_array_create(&a, st, "g/y", &o));
	ASSERT_OK(nz_array_chunk_key(&key, a, idx));
	ASSERT_EQ_STR(key, "g/y/2.1");
	nz_free(key);
	nz_array_free(a);
	/* a missing string chunk reads as the fill value */
	{
		nz_array_opts so = NZ_ARRAY_OPTS_INIT;
		nz_vlen *v = NULL;
		so.dtype = "|O", so.object_codec = NZ_OBJECT_VLEN_UTF8, so.ndim = 1, so.shape = shape;
		so.zarr_format = 3, so.fill_value_json = "\"\\u00e9t\"";
		ASSERT_OK(nz_array_create(&a, st, "g/s", &so));
		ASSERT_OK(nz_array_read_chunk_vlen(&v, a, (const uint64_t[]){ 0 }));
		ASSERT_EQ_INT(v->count, 5);
		ASSERT_EQ_STR(v->items[4], "\xc3\xa9t");
		nz_vlen_free(v);
		nz_array_free(a);
	}
	/* sharded: whole shards only; shards a multiple of chunks */
	{
		int16_t shard[2 * 6], got[6];
		for (i = 0; i < 12; i++)
			shard[i] = (int16_t)(100 + i);
		o.shards = (const uint64_t[]){ 2, 6 }, o.chunk_key_encoding = NZ_CHUNK_KEY_DEFAULT;
		ASSERT_OK(nz_array_create(&a, st, "g/sh", &o));
		ASSERT(nz_array_shards(a)[1] == 6 && nz_array_chunks(a)[1] == 3);
		ASSERT_EQ_U64(nz_array_nshards(a), 3);
		ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_write_chunk(a, NULL, idx, data, 12));
		ASSERT_OK(nz_array_write_shard(a, NULL, (const uint64_t[]){ 2, 0 }, shard, sizeof shard));
		ASSERT_OK(nz_array_read_chunk(a, NULL, (const uint64_t[]){ 2, 1 }, got, sizeof got));
		/* inner chunk (2, 1): shard row 0 (array row 4), columns 3..5; only column 3 is in the array */
		ASSERT(got[0] == 103 && got[1] == 0 && got[2] == 0 && got[3] == 0);
		nz_array_free(a);
		o.shards = (const uint64_t[]){ 2, 4 };
		ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "g/sh2", &o));
		o.shards = NULL;
	}
	/* one format per hierarchy */
	o.zarr_format = 2, o.chunk_key_encoding = NZ_CHUNK_KEY_DEFAULT, o.dimension_names = NULL;
	ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "g/z", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "Zarr v3 hierarchy");
	ASSERT_ERR(NZ_EINVAL, nz_root_create(st, 2));
	/* numcodecs' delta has no v3 codec here (nor a transpose of strings) */
	o.zarr_format = 3;
	o.filters_json = "[{\"id\": \"delta\", \"dtype\": \"<i4\"}]";
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_create(&a, st, "g/z", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "filter 'delta'");
	o.filters_json = "[{\"id\": \"shuffle\", \"elementsize\": -3}]";
	ASSERT_ERR(NZ_EFORMAT, nz_array_create(&a, st, "g/z", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "elementsize");
	o.filters_json = NULL;
	o.transpose_order = (const int[]){ 0, 0 };
	ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "g/z", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "not a permutation");
	o.transpose_order = NULL;
	ASSERT_OK(nz_metadata_check(st)); /* not consolidated yet */
	ASSERT_OK(nz_consolidate(st));
	ASSERT_OK(nz_metadata_check(st));
	ASSERT_OK(nz_attrs_write(st, "g/x", "{\"changed\": 1}"));
	ASSERT_ERR(NZ_EMISMATCH, nz_metadata_check(st));
	ASSERT_CONTAINS(nz_error_last()->message, "consolidated_metadata: its copy of 'g/x' differs");
	ASSERT_OK(nz_consolidate(st));
	ASSERT_OK(nz_group_create(st, "g/late"));
	ASSERT_ERR(NZ_EMISMATCH, nz_metadata_check(st));
	ASSERT_CONTAINS(nz_error_last()->message, "lacks 'g/late'");
}

/* zstd "checksum": true frames carry a checksum that a read verifies; a
 * transposed chunk is stored in the transposed order and reads back in
 * ours; numcodecs' lz4 and shuffle as v3 codecs round-trip. */
static void checksum_transpose(void)
{
	nz_compressor zc = NZ_COMPRESSOR_INIT, lz = NZ_COMPRESSOR_INIT;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	uint64_t shape[2] = { 3, 2 }, zero[2] = { 0, 0 };
	int16_t data[6] = { 1, 2, 3, 4, 5, 6 }, back[6];
	unsigned char *raw = NULL;
	size_t len = 0;
	nz_store *m = NULL;
	nz_array *a = NULL;
	ASSERT_OK(nz_store_new_memory(&m));
	zc.id = "zstd", zc.clevel = 3, zc.checksum = 1;
	o.zarr_format = 3, o.ndim = 2, o.shape = shape, o.dtype = "<i2", o.compressor = &zc;
	ASSERT_OK(nz_array_create(&a, m, "z", &o));
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	nz_array_free(a);
	ASSERT_OK(nz_store_get(m, "z/c/0/0", (void **)&raw, &len));
	ASSERT(len > 4 && (raw[4] & 4)); /* the frame header's Content_Checksum_flag */
	raw[len - 1] ^= 1;
	ASSERT_OK(nz_store_put(m, "z/c/0/0", raw, len));
	nz_free(raw);
	ASSERT_OK(nz_array_open(&a, m, "z"));
	ASSERT_ERR(NZ_ECODEC, nz_array_read_chunk(a, NULL, zero, back, sizeof back));
	ASSERT_CONTAINS(nz_error_last()->message, "zstd");
	nz_array_free(a);
	/* transpose [1, 0]: the stored chunk is the 2 x 3 transpose */
	o.compressor = &(nz_compressor){ NZ_COMPRESSOR_VERSION, "none", NULL, 0, 0, 0, 0 };
	o.transpose_order = (const int[]){ 1, 0 };
	ASSERT_OK(nz_array_create(&a, m, "t", &o));
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	nz_array_free(a);
	ASSERT_OK(nz_store_get(m, "t/c/0/0", (void **)&raw, &len));
	ASSERT_EQ_INT(len, sizeof data);
	ASSERT_MEM_EQ(raw, ((const int16_t[]){ 1, 3, 5, 2, 4, 6 }), sizeof data);
	nz_free(raw);
	ASSERT_OK(nz_array_open(&a, m, "t"));
	ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof back));
	ASSERT_MEM_EQ(back, data, sizeof data);
	nz_array_free(a);
	/* numcodecs.shuffle then numcodecs.lz4 */
	lz.id = "lz4";
	o.compressor = &lz, o.transpose_order = NULL, o.filters_json = "[{\"id\": \"shuffle\", \"elementsize\": 2}]";
	ASSERT_OK(nz_array_create(&a, m, "l", &o));
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	nz_array_free(a);
	ASSERT_OK(nz_array_open(&a, m, "l"));
	ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof back));
	ASSERT_MEM_EQ(back, data, sizeof data);
	nz_array_free(a);
	nz_store_free(m);
}

/* A v3 array in a store whose root has no zarr.json opens by its path;
 * a group there is not an array, and a missing one names both documents. */
static void open_without_root(void)
{
	uint64_t shape[1] = { 5 }, zero[1] = { 0 };
	int16_t data[5] = { 1, -2, 3, -4, 5 }, back[5];
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_store *m = NULL;
	nz_array *a = NULL;
	ASSERT_OK(nz_store_new_memory(&m));
	o.zarr_format = 3, o.ndim = 1, o.shape = shape, o.dtype = "<i2";
	ASSERT_OK(nz_array_create(&a, m, "deep/g/x", &o));
	ASSERT_OK(nz_array_write_all(a, data, sizeof data));
	nz_array_free(a);
	ASSERT_OK(nz_store_remove(m, "zarr.json"));
	ASSERT_EQ_INT(nz_store_zarr_format(m), 2); /* no root: the store says v2 */
	ASSERT_OK(nz_array_open(&a, m, "deep/g/x"));
	ASSERT_EQ_INT(nz_array_zarr_format(a), 3);
	ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof back));
	ASSERT_MEM_EQ(back, data, sizeof data);
	nz_array_free(a);
	ASSERT_ERR(NZ_ENOTFOUND, nz_array_open(&a, m, "deep/g"));
	ASSERT_CONTAINS(nz_error_last()->message, "deep/g/zarr.json is a group");
	ASSERT_ERR(NZ_ENOTFOUND, nz_array_open(&a, m, "deep/nothing"));
	ASSERT_CONTAINS(nz_error_last()->message, "neither deep/nothing/.zarray nor deep/nothing/zarr.json");
	nz_store_free(m);
}

static void version1_opts(void)
{
	/* A caller built against version 1 of nz_array_opts gets Zarr v2. */
	struct {
		unsigned int version;
		const char *dtype;
		int ndim;
		const uint64_t *shape, *chunks;
		const char *fill_value_json;
		const nz_compressor *compressor;
		const char *filters_json;
		nz_object_codec object_codec;
		char dimension_separator;
		int skip_empty_chunks;
	} v1 = { 1, "<u2", 1, (const uint64_t[]){ 4 }, NULL, NULL, NULL, NULL, NZ_OBJECT_NONE, 0, 0 };
	nz_store *m = NULL;
	nz_array *a = NULL;
	ASSERT_OK(nz_store_new_memory(&m));
	ASSERT_OK(nz_array_create(&a, m, "v", (const nz_array_opts *)&v1));
	ASSERT_EQ_INT(nz_array_zarr_format(a), 2);
	ASSERT_EQ_INT(nz_store_exists(m, "v/.zarray"), 1);
	nz_array_free(a);
	nz_store_free(m);
}

/* One pass over the v3 paths in a fresh memory store: root, arrays of a
 * struct, a string and a zstd int16 (chunk writes and reads), attributes,
 * re-opening, consolidation. */
static int exercise(void *unused)
{
	uint64_t shape[2] = { 3, 4 }, chunks[2] = { 2, 3 }, zero[2] = { 0, 0 };
	nz_compressor zstd = { NZ_COMPRESSOR_VERSION, "zstd", NULL, 3, 0, 0, 0};
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	const char *items[4] = { "a", "bc", "", "\xc3\xa9" };
	size_t lens[4] = { 1, 2, 0, 2 };
	int16_t data[12] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 }, chunk[6];
	nz_store *m = NULL;
	nz_array *a = NULL;
	nz_vlen *v = NULL;
	char *attrs = NULL;
	int err;
	(void)unused;
	if ((err = nz_store_new_memory(&m)) < 0 || (err = nz_root_create(m, 3)) < 0)
		goto done;
	o.zarr_format = 3, o.ndim = 2, o.shape = shape, o.chunks = chunks, o.dtype = "<i2", o.compressor = &zstd;
	o.dimension_names = (const char *const[]){ "t", "ch" }, o.fill_value_json = "-1";
	if ((err = nz_array_create(&a, m, "g/x", &o)) < 0 || (err = nz_array_write_all(a, data, sizeof data)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	if ((err = nz_array_open(&a, m, "g/x")) < 0 || (err = nz_array_read_chunk(a, NULL, zero, chunk, sizeof chunk)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	/* sharded: a whole write and one shard rewritten */
	o.shards = (const uint64_t[]){ 2, 6 };
	if ((err = nz_array_create(&a, m, "g/sh", &o)) < 0 || (err = nz_array_write_all(a, data, sizeof data)) < 0 ||
	    (err = nz_array_write_shard(a, NULL, (const uint64_t[]){ 1, 0 }, data, 2 * 6 * 2)) < 0 ||
	    (err = nz_array_read_chunk(a, NULL, zero, chunk, sizeof chunk)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	o.shards = NULL;
	o.dtype = "[[\"x\",\"<u4\"],[\"y\",\"<f8\"]]", o.fill_value_json = NULL, o.compressor = NULL;
	if ((err = nz_array_create(&a, m, "g/s", &o)) < 0)
		goto done;
	nz_array_free(a);
	a = NULL;
	o.dtype = "|O", o.object_codec = NZ_OBJECT_VLEN_UTF8, o.ndim = 1, o.dimension_names = NULL;
	if ((err = nz_array_create(&a, m, "g/t", &o)) < 0 || (err = nz_array_write_all_vlen(a, items, lens, 3)) < 0 ||
	    (err = nz_array_read_chunk_vlen(&v, a, zero)) < 0)
		goto done;
	nz_vlen_free(v);
	v = NULL;
	nz_array_free(a);
	a = NULL;
	/* sharded strings, read back from their shard */
	o.chunks = (const uint64_t[]){ 1 }, o.shards = (const uint64_t[]){ 2 };
	if ((err = nz_array_create(&a, m, "g/st", &o)) < 0 || (err = nz_array_write_all_vlen(a, items, lens, 3)) < 0 ||
	    (err = nz_array_read_chunk_vlen(&v, a, (const uint64_t[]){ 1 })) < 0)
		goto done;
	ASSERT_EQ_STR(v->items[0], "bc");
	nz_vlen_free(v);
	v = NULL;
	nz_array_free(a);
	a = NULL;
	/* transposed, checksummed zstd */
	zstd.checksum = 1;
	o.dtype = "<i2", o.object_codec = NZ_OBJECT_NONE, o.ndim = 2, o.chunks = chunks, o.shards = NULL;
	o.compressor = &zstd, o.transpose_order = (const int[]){ 1, 0 };
	if ((err = nz_array_create(&a, m, "g/tr", &o)) < 0 || (err = nz_array_write_all(a, data, sizeof data)) < 0 ||
	    (err = nz_array_read_chunk(a, NULL, zero, chunk, sizeof chunk)) < 0)
		goto done;
	ASSERT(chunk[0] == 1 && chunk[1] == 2 && chunk[3] == 5);
	nz_array_free(a);
	a = NULL;
	o.ndim = 1, o.dtype = "|O", o.object_codec = NZ_OBJECT_VLEN_UTF8, o.transpose_order = NULL;
	if ((err = nz_array_open(&a, m, "g/t")) < 0 || (err = nz_array_read_chunk_vlen(&v, a, zero)) < 0)
		goto done;
	if ((err = nz_attrs_write(m, "g/x", "{\"unit\": \"uV\", \"f\": [0.5, null]}")) < 0 ||
	    (err = nz_attrs_read(&attrs, m, "g/x")) < 0 || (err = nz_group_create(m, "g/h")) < 0 ||
	    (err = nz_consolidate(m)) < 0 || (err = nz_metadata_check(m)) < 0)
		goto done;
	ASSERT_EQ_STR(attrs, "{\"f\":[0.5,null],\"unit\":\"uV\"}");
	ASSERT_EQ_STR(v->items[1], "bc");
done:
	nz_free(attrs);
	nz_vlen_free(v);
	nz_array_free(a);
	nz_store_free(m);
	return err;
}

/* Every allocation of that pass may fail (tests/oom.h): NZ_ENOMEM with a
 * message each time, never a crash, a leak (ASan) or a swallowed error. */
static void alloc_failures(void)
{
	nz_oom_sweep s = { "zarr v3 arrays, groups, attributes, consolidation", exercise, NULL, NULL, NULL, 300,
			   200, 0, 0 };
	ASSERT(nz_oom_run_sweep(&s) > 300);
}

int main(void)
{
	ASSERT_OK(nz_store_new_memory(&st));
	ASSERT_OK(nz_root_create(st, 3));
	ASSERT_OK(nz_root_create(st, 3)); /* kept */
	strict();
	lenient_forms();
	nz_store_free(st);
	ASSERT_OK(nz_store_new_memory(&st));
	keys_and_formats();
	nz_store_free(st);
	version1_opts();
	checksum_transpose();
	open_without_root();
	alloc_failures();
	printf("ok\n");
	return 0;
}
