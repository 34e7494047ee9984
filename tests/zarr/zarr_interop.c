/* Interop helper for interop_matrix.py (Zarr v2) and interop3.py (Zarr v3,
 * spec "zarr_format": 3): writes the matrix of arrays that spec.json
 * describes (`write spec dir`) or checks a store written by zarr-python
 * against the same deterministic content (`check spec dir`). The value
 * generators mirror the scripts'. */
#include <jansson.h>
#include <math.h>

#include "test.h"
#include "util/alloc.h"
#include "util/json.h"

static int64_t mult(size_t size)
{
	return size == 1 ? 1 : size == 2 ? 256 : size == 4 ? (1 << 24) : (int64_t)1 << 56;
}

/* Element i of a simple dtype, little-endian, into out. */
static void value(unsigned char *out, char kind, size_t size, uint64_t i)
{
	int64_t iv = 0;
	double d;
	size_t k;
	if (kind == 'b') {
		out[0] = i % 3 == 0;
		return;
	}
	if (kind == 'U') { /* "u<i>" as UTF-32LE, NUL-padded */
		char tmp[32];
		size_t j, n;
		memset(out, 0, size);
		n = (size_t)snprintf(tmp, sizeof tmp, "u%d", (int)(i % 1000));
		for (j = 0; j < n && 4 * j < size; j++)
			out[4 * j] = (unsigned char)tmp[j];
		return;
	}
	if (kind == 'S') {
		char tmp[32];
		memset(out, 0, size);
		snprintf(tmp, sizeof tmp, "s%d", (int)(i % 1000));
		memcpy(out, tmp, strlen(tmp) < size ? strlen(tmp) : size);
		return;
	}
	if (kind == 'f') {
		d = i % 11 == 5 ? NAN : i % 13 == 7 ? INFINITY : i % 17 == 3 ? -INFINITY : (double)(i % 97) * 0.5 - 20.25;
		if (size == 4) {
			float f = (float)d;
			memcpy(out, &f, 4);
		} else {
			memcpy(out, &d, 8);
		}
		return;
	}
	/* Unsigned arithmetic: u8 values exceed INT64_MAX; the bits are the same. */
	iv = (int64_t)((i * 37 + 5) % 251) - (kind == 'i' ? 125 : 0);
	for (k = 0; k < size; k++)
		out[k] = (unsigned char)(((uint64_t)iv * (uint64_t)mult(size)) >> (8 * k));
}

static void element(unsigned char *out, json_t *dtype, uint64_t i)
{
	if (json_is_array(dtype)) { /* [["x","<u4"],["y","<f8"]] */
		uint32_t x = (uint32_t)(i * 3);
		double y = (double)i * 0.25 - 1;
		memcpy(out, &x, 4);
		memcpy(out + 4, &y, 8);
		return;
	}
	const char *s = json_string_value(dtype);
	size_t n = (size_t)atoi(s + 2) * (s[1] == 'U' ? 4 : 1), k;
	value(out, s[1], n, i);
	for (k = 0; s[0] == '>' && s[1] != 'U' && k < n / 2; k++) { /* big-endian dtype */
		unsigned char t = out[k];
		out[k] = out[n - 1 - k];
		out[n - 1 - k] = t;
	}
}

static char *object_value(const char *codec, uint64_t i, size_t *len)
{
	char *s = malloc(128);
	if (strcmp(codec, "vlen-utf8") == 0) {
		*len = (size_t)snprintf(s, 128, "\xc3\xa9%llu%s", (unsigned long long)i,
					i % 2 ? "\xf0\x9f\x98\x80" : "\xe2\x98\x83");
	} else if (strcmp(codec, "vlen-bytes") == 0) {
		*len = (size_t)snprintf(s, 128, "b%llu", (unsigned long long)i);
		memcpy(s + *len, "\0\xff", 2);
		*len += 2;
	} else {
		json_t *v = json_pack("{s:I,s:s+,s:f,s:[I,n]}", "i", (json_int_t)i, "s", "v", "", "f",
				      (double)i * 0.25, "l", (json_int_t)i);
		char num[32];
		snprintf(num, sizeof num, "v%llu", (unsigned long long)i);
		json_object_set_new(v, "s", json_string(num));
		free(s);
		ASSERT_OK(nz__json_dumps(&s, v, NZ_JSON_COMPACT));
		*len = strlen(s);
		json_decref(v);
	}
	return s;
}

static uint64_t nelems(const nz_array *a)
{
	uint64_t n = 1;
	int d;
	for (d = 0; d < nz_array_ndim(a); d++)
		n *= nz_array_shape(a)[d];
	return n;
}

static void fill_compressor(nz_compressor *c, json_t *cfg)
{
	c->id = json_is_null(cfg) ? "none" : json_string_value(json_object_get(cfg, "id"));
	if (json_is_null(cfg))
		return;
	if (strcmp(c->id, "blosc") == 0) {
		c->cname = json_string_value(json_object_get(cfg, "cname"));
		c->clevel = (int)json_integer_value(json_object_get(cfg, "clevel"));
		c->shuffle = (int)json_integer_value(json_object_get(cfg, "shuffle"));
	} else if (json_object_get(cfg, "level")) {
		c->clevel = (int)json_integer_value(json_object_get(cfg, "level"));
	}
	c->checksum = json_is_true(json_object_get(cfg, "checksum"));
}

static void write_one(nz_store *st, json_t *c, int format)
{
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_compressor comp = NZ_COMPRESSOR_INIT;
	uint64_t shape[NZ_MAX_DIMS], chunks[NZ_MAX_DIMS], shards[NZ_MAX_DIMS], n, i;
	json_t *sh = json_object_get(c, "shards"), *tr = json_object_get(c, "transpose");
	int order[NZ_MAX_DIMS];
	json_t *dt = json_object_get(c, "dtype"), *codec = json_object_get(c, "object_codec");
	char *dtype_s = NULL, *fill = NULL, *filters = NULL, *attrs = NULL;
	const char *names[NZ_MAX_DIMS];
	json_t *dn = json_object_get(c, "dimension_names"), *ke = json_object_get(c, "key_encoding");
	nz_array *a = NULL;
	size_t k;

	for (k = 0; k < json_array_size(json_object_get(c, "shape")); k++) {
		shape[k] = (uint64_t)json_integer_value(json_array_get(json_object_get(c, "shape"), k));
		chunks[k] = (uint64_t)json_integer_value(json_array_get(json_object_get(c, "chunks"), k));
	}
	o.ndim = (int)json_array_size(json_object_get(c, "shape"));
	o.shape = shape, o.chunks = chunks;
	if (json_is_array(dt))
		ASSERT_OK(nz__json_dumps(&dtype_s, dt, NZ_JSON_COMPACT));
	o.dtype = dtype_s ? dtype_s : json_string_value(dt);
	ASSERT_OK(nz__json_dumps(&fill, json_object_get(c, "fill"), NZ_JSON_COMPACT));
	o.fill_value_json = fill;
	fill_compressor(&comp, json_object_get(c, "compressor"));
	o.compressor = &comp;
	if (!json_is_null(json_object_get(c, "filters")))
		ASSERT_OK(nz__json_dumps(&filters, json_object_get(c, "filters"), NZ_JSON_COMPACT));
	o.filters_json = filters;
	if (json_is_string(codec)) {
		const char *id = json_string_value(codec);
		o.object_codec = strcmp(id, "vlen-utf8") == 0 ? NZ_OBJECT_VLEN_UTF8
				 : strcmp(id, "vlen-bytes") == 0 ? NZ_OBJECT_VLEN_BYTES : NZ_OBJECT_JSON2;
	}
	o.dimension_separator = json_string_value(json_object_get(c, "sep"))[0];
	o.skip_empty_chunks = json_is_false(json_object_get(c, "write_empty"));
	o.zarr_format = format;
	if (json_is_array(dn)) {
		for (k = 0; k < json_array_size(dn); k++)
			names[k] = json_string_value(json_array_get(dn, k));
		o.dimension_names = names;
	}
	if (json_is_array(sh)) {
		for (k = 0; k < json_array_size(sh); k++)
			shards[k] = (uint64_t)json_integer_value(json_array_get(sh, k));
		o.shards = shards;
		if (strcmp(json_string_value(json_object_get(c, "index_location")), "start") == 0)
			o.shard_index_location = NZ_SHARD_INDEX_START;
	}
	if (json_is_string(ke) && strcmp(json_string_value(ke), "v2") == 0)
		o.chunk_key_encoding = NZ_CHUNK_KEY_V2;
	for (k = 0; k < json_array_size(tr); k++)
		order[k] = (int)json_integer_value(json_array_get(tr, k));
	if (json_is_array(tr))
		o.transpose_order = order;
	ASSERT_OK(nz_array_create(&a, st, json_string_value(json_object_get(c, "name")), &o));
	/* In order: v3 keeps the attributes' key order (v2 sorts them). */
	if (json_is_object(json_object_get(c, "attrs"))) {
		ASSERT_OK(nz__json_dumps(&attrs, json_object_get(c, "attrs"), NZ_JSON_ZARR3));
		ASSERT_OK(nz_attrs_write(st, json_string_value(json_object_get(c, "name")), attrs));
		nz__free(attrs);
	}
	n = nelems(a);
	if (o.object_codec != NZ_OBJECT_NONE) {
		char **items = calloc(n + 1, sizeof *items);
		size_t *lens = calloc(n + 1, sizeof *lens);
		for (i = 0; i < n; i++)
			items[i] = object_value(json_string_value(codec), i, &lens[i]);
		ASSERT_OK(nz_array_write_all_vlen(a, (const char *const *)items, lens, n));
		for (i = 0; i < n; i++)
			free(items[i]);
		free(items);
		free(lens);
	} else {
		size_t isz = nz_array_itemsize(a);
		unsigned char *buf = calloc(n + 1, isz);
		for (i = 0; i < n; i++)
			element(buf + i * isz, dt, i);
		ASSERT_OK(nz_array_write_all(a, buf, n * isz));
		free(buf);
	}
	nz_array_free(a);
	nz__free(dtype_s);
	nz__free(fill);
	nz__free(filters);
}

static int same_element(const unsigned char *a, const unsigned char *b, const char *dtype, size_t isz)
{
	if (dtype[1] == 'f' && dtype[0] == '<') {
		double x, y;
		if (isz == 4) {
			float fx, fy;
			memcpy(&fx, a, 4), memcpy(&fy, b, 4);
			x = fx, y = fy;
		} else {
			memcpy(&x, a, 8), memcpy(&y, b, 8);
		}
		return (isnan(x) && isnan(y)) || x == y;
	}
	return memcmp(a, b, isz) == 0;
}

/* Compare every element of an object array, chunk by chunk. */
static int check_objects(nz_array *a, const char *codec, const char *name)
{
	uint64_t grid[NZ_MAX_DIMS], c[NZ_MAX_DIMS] = { 0 }, nch = nz_array_nchunks(a), ci;
	int nd = nz_array_ndim(a), d, bad = 0;
	const uint64_t *shape = nz_array_shape(a), *ch = nz_array_chunks(a);
	nz_array_chunk_grid(a, grid);
	for (ci = 0; ci < nch; ci++) {
		nz_vlen *v = NULL;
		uint64_t rem = ci, j;
		for (d = nd - 1; d >= 0; d--)
			c[d] = rem % grid[d], rem /= grid[d];
		ASSERT_OK(nz_array_read_chunk_vlen(&v, a, c));
		for (j = 0; j < v->count; j++) {
			uint64_t lr = j, flat = 0, mul = 1;
			int inside = 1, differs;
			size_t len;
			char *want;
			for (d = nd - 1; d >= 0; d--) {
				uint64_t g = c[d] * ch[d] + lr % ch[d];
				lr /= ch[d];
				inside &= g < shape[d];
				flat += g * mul;
				mul *= shape[d];
			}
			if (!inside)
				continue;
			want = object_value(codec, flat, &len);
			if (strcmp(codec, "json2") == 0) {
				json_t *x = json_loads(want, 0, NULL), *y = json_loads(v->items[j], JSON_DECODE_ANY, NULL);
				differs = !json_equal(x, y);
				json_decref(x), json_decref(y);
			} else {
				differs = len != v->lens[j] || memcmp(want, v->items[j], len) != 0;
			}
			if (differs)
				fprintf(stderr, "%s: element %llu is '%s', expected '%s'\n", name,
					(unsigned long long)flat, v->items[j], want);
			free(want);
			bad |= differs;
		}
		nz_vlen_free(v);
	}
	return bad;
}

static int check_one(nz_store *st, nz_hierarchy *h, json_t *c)
{
	const char *name = json_string_value(json_object_get(c, "name"));
	json_t *dt = json_object_get(c, "dtype"), *codec = json_object_get(c, "object_codec");
	uint64_t start[NZ_MAX_DIMS] = { 0 }, n, i;
	nz_array *a = NULL;
	int bad = 0;
	/* through the consolidated metadata when the store has it */
	ASSERT_OK(h ? nz_hierarchy_array_open(&a, h, name) : nz_array_open(&a, st, name));
	n = nelems(a);
	if (json_is_string(codec)) {
		bad = check_objects(a, json_string_value(codec), name);
	} else {
		size_t isz = nz_array_itemsize(a);
		unsigned char *got = calloc(n + 1, isz), *want = calloc(1, isz);
		ASSERT_OK(nz_array_read_region(a, start, nz_array_shape(a), got, n * isz));
		for (i = 0; i < n && !bad; i++) {
			element(want, dt, i);
			if (!same_element(got + i * isz, want, nz_array_dtype(a), isz)) {
				fprintf(stderr, "%s: element %llu differs\n", name, (unsigned long long)i);
				bad = 1;
			}
		}
		free(got);
		free(want);
	}
	nz_array_free(a);
	return bad;
}

int main(int argc, char **argv)
{
	json_t *spec = NULL, *arrays;
	FILE *f;
	char *text;
	size_t n;
	nz_store *st = NULL;
	nz_hierarchy *h = NULL;
	char *attrs = NULL;
	size_t i;
	int write, bad = 0, format;
	if (argc != 4) {
		fprintf(stderr, "usage: zarr_interop write|check spec.json dir\n");
		return 2;
	}
	nz__alloc_init();
	write = strcmp(argv[1], "write") == 0;
	/* Our parser: the attributes hold Python's bare NaN/Infinity. */
	ASSERT((f = fopen(argv[2], "rb")) != NULL);
	text = malloc(1 << 20);
	n = fread(text, 1, 1 << 20, f);
	fclose(f);
	ASSERT(n > 0 && n < (1 << 20));
	ASSERT_OK(nz__json_parse(&spec, text, n, argv[2], 0));
	free(text);
	arrays = json_object_get(spec, "arrays");
	format = json_is_integer(json_object_get(spec, "zarr_format")) ? (int)json_integer_value(json_object_get(spec, "zarr_format")) : 0;
	ASSERT_OK(nz_store_open_dir(&st, argv[3], write ? NZ_STORE_CREATE : NZ_STORE_READ));
	if (write) {
		ASSERT_OK(format == 3 ? nz_root_create(st, 3) : nz_group_create(st, ""));
		ASSERT_OK(nz__json_dumps(&attrs, json_object_get(spec, "attrs"), format == 3 ? NZ_JSON_ZARR3 : NZ_JSON_COMPACT));
		ASSERT_OK(nz_attrs_write(st, "", attrs));
		nz__free(attrs);
	}
	/* v3: zarr-python's consolidated metadata is what ours would be; a
	 * spec with "root": false checks arrays opened by path in a folder
	 * above the hierarchy (no root of its own) */
	if (!write && format == 3 && !json_is_false(json_object_get(spec, "root"))) {
		ASSERT_OK(nz_metadata_check(st));
		ASSERT_OK(nz_hierarchy_open(&h, st));
		ASSERT(nz_hierarchy_consolidated(h));
	}
	for (i = 0; i < json_array_size(arrays); i++) {
		if (write)
			write_one(st, json_array_get(arrays, i), format);
		else
			bad += check_one(st, h, json_array_get(arrays, i));
	}
	if (write)
		ASSERT_OK(nz_consolidate(st));
	printf("%s: %zu arrays, %d bad\n", argv[1], json_array_size(arrays), bad);
	nz_hierarchy_free(h);
	nz_store_free(st);
	json_decref(spec);
	return bad ? 1 : 0;
}
