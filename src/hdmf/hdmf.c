/* hdmf-zarr conventions: object ids, typed attributes, references, links and
 * the small datasets hdmf writes from memory. See hdmf.h. */
#include "hdmf/hdmf.h"
#include "hdmf/hdmf3.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/* splitmix64: tiny, statistically fine for ids, and fully determined by
 * the seed, which is all a reproducible file needs. */
static uint64_t splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

int nz__hdmf_uuid4(nz__hdmf *h, char out[NZ_HDMF_OID_LEN])
{
	unsigned char b[16];
	if (h->seeded) {
		uint64_t a = splitmix64(&h->rng), c = splitmix64(&h->rng);
		for (int i = 0; i < 8; i++) {
			b[i] = (unsigned char)(a >> (8 * i));
			b[8 + i] = (unsigned char)(c >> (8 * i));
		}
	} else {
		size_t got = 0;
		while (got < sizeof b) {
			ssize_t n = getrandom(b + got, sizeof b - got, 0);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				return nz__error_errno(errno, "getrandom for an object_id", "");
			}
			got += (size_t)n;
		}
	}
	b[6] = (unsigned char)((b[6] & 0x0f) | 0x40); /* version 4 */
	b[8] = (unsigned char)((b[8] & 0x3f) | 0x80); /* RFC 4122 variant */
	snprintf(out, NZ_HDMF_OID_LEN,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1],
		 b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
		 b[15]);
	return 0;
}

int nz__hdmf_init_format(nz__hdmf *h, nz_store *store, uint64_t seed, const nz_compressor *compressor,
			 int zarr_format)
{
	static const nz_compressor dflt2 = NZ_COMPRESSOR_INIT;
	/* hdmf-zarr 0.14 leaves zarr-python 3's default: zstd level 0. */
	static const nz_compressor dflt3 = {NZ_COMPRESSOR_VERSION, "zstd", NULL, 0, 0, 0, 0};
	int err;
	memset(h, 0, sizeof *h);
	nz__alloc_init();
	if (zarr_format != 0 && zarr_format != 2 && zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "zarr_format %d (2 or 3)", zarr_format);
	if (zarr_format == 0 && !store)
		zarr_format = 2; /* a context that only draws ids */
	if (zarr_format == 0 && (zarr_format = nz_store_zarr_format(store)) < 0)
		return zarr_format;
	if (zarr_format == 3 && (err = nz_root_create(store, 3)) < 0)
		return err;
	h->store = store;
	h->zarr_format = zarr_format;
	h->compressor = compressor ? *compressor : zarr_format == 3 ? dflt3 : dflt2;
	h->seeded = seed != 0;
	h->rng = seed;
	return nz__hdmf_uuid4(h, h->root_oid);
}

int nz__hdmf_init(nz__hdmf *h, nz_store *store, uint64_t seed, const nz_compressor *compressor)
{
	return nz__hdmf_init_format(h, store, seed, compressor, 0);
}

/* The attributes as given (v2) or in hdmf-zarr 0.14's form (v3). */
static int attrs_put(nz__hdmf *h, const char *path, const json_t *attrs, int convert)
{
	json_t *v3 = NULL;
	char *text = NULL;
	int err = 0;
	if (convert && h->zarr_format == 3 && (err = nz__hdmf3_attrs(&v3, attrs, path)) < 0)
		return err;
	if ((err = nz__json_dumps(&text, v3 ? v3 : attrs, NZ_JSON_COMPACT)) < 0)
		err = nz__error_wrap("attributes of '/%s'", path);
	else
		err = nz_attrs_write(h->store, path, text);
	nz__free(text);
	json_decref(v3);
	return err;
}

int nz__hdmf_attrs_write(nz__hdmf *h, const char *path, const json_t *attrs)
{
	return attrs_put(h, path, attrs, 1);
}

static int oom(const char *what)
{
	return nz__error_set(NZ_ENOMEM, "out of memory building %s", what);
}

/* json_object_set_new that reports failure (it consumes `v` either way). */
static int set(json_t *obj, const char *key, json_t *v)
{
	if (!v || json_object_set_new(obj, key, v) != 0)
		return oom(key);
	return 0;
}

int nz__hdmf_set_type(json_t *attrs, nz__hdmf *h, const char *ns, const char *type,
		      const char *oid, char *oid_out)
{
	char id[NZ_HDMF_OID_LEN];
	int err;
	if (oid) {
		snprintf(id, sizeof id, "%s", oid);
	} else if ((err = nz__hdmf_uuid4(h, id)) < 0) {
		return err;
	}
	if ((err = set(attrs, "namespace", json_string(ns))) < 0 ||
	    (err = set(attrs, "neurodata_type", json_string(type))) < 0 ||
	    (err = set(attrs, "object_id", json_string(id))) < 0)
		return err;
	if (oid_out)
		memcpy(oid_out, id, NZ_HDMF_OID_LEN);
	return 0;
}

json_t *nz__hdmf_ref(const nz__hdmf *h, const char *target, const char *oid)
{
	return json_pack("{s:o, s:s, s:s, s:s}", "object_id", oid ? json_string(oid) : json_null(),
			 "path", target, "source", ".", "source_object_id", h->root_oid);
}

int nz__hdmf_set_ref_attr(json_t *attrs, const nz__hdmf *h, const char *name,
			  const char *target, const char *oid)
{
	json_t *ref = nz__hdmf_ref(h, target, oid);
	if (!ref)
		return oom(name);
	return set(attrs, name, json_pack("{s:o, s:s}", "value", ref, "zarr_dtype", "object"));
}

int nz__hdmf_add_link(json_t *attrs, const char *name, const char *target)
{
	json_t *links = json_object_get(attrs, "zarr_link");
	int err;
	if (!links) {
		if ((err = set(attrs, "zarr_link", json_array())) < 0)
			return err;
		links = json_object_get(attrs, "zarr_link");
	}
	if (json_array_append_new(links, json_pack("{s:s, s:s, s:s}", "name", name, "path", target,
						   "source", ".")) != 0)
		return oom("zarr_link");
	return 0;
}

int nz__hdmf_group(nz__hdmf *h, const char *path, const json_t *attrs)
{
	int err = nz_group_create(h->store, path);
	if (err < 0 || !attrs)
		return err;
	return nz__hdmf_attrs_write(h, path, attrs);
}

static const char *fill_for(const char *dtype)
{
	switch (dtype[1]) {
	case 'f': return "0.0";
	case 'b': return "false";
	default: return "0"; /* integers, and what hdmf-zarr writes for '|O' */
	}
}

/* zarr-python 3's fill values as hdmf-zarr 0.14 leaves them. */
static const char *fill3_for(const char *dtype)
{
	return dtype[1] == 'O' ? "\"\"" : fill_for(dtype);
}

/* Path components of a chunk key "path/c/i/j" with the "/" separator. */
static int key_depth(const char *path, int ndim)
{
	int n = *path ? 1 : 0;
	for (const char *p = path; *p; p++)
		n += *p == '/';
	return n + 1 + ndim;
}

char nz__hdmf_key_separator(const char *path, int ndim)
{
	return key_depth(path, ndim) > NZ__HDMF_MAX_KEY_DEPTH ? '.' : '/';
}

/* The v3 array of `d` (see hdmf.h): json2 and vlen-bytes become text, a
 * "scalar" becomes 0-d, attributes in hdmf-zarr 0.14's form. */
static int dset_create3(nz_array **out, nz__hdmf *h, const char *path, const nz__hdmf_dset *d)
{
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	uint64_t chunks[NZ_MAX_DIMS];
	int scalar = d->zarr_dtype && strcmp(d->zarr_dtype, "scalar") == 0;
	json_t *attrs = NULL;
	nz_array *a = NULL;
	int err = 0;

	if (scalar && (d->ndim != 1 || d->shape[0] != 1))
		return nz__error_set(NZ_EINVAL, "dataset '/%s': a scalar must have shape [1]", path);
	for (int i = 0; i < d->ndim; i++)
		chunks[i] = d->chunks ? d->chunks[i] : (d->shape[i] ? d->shape[i] : 1);
	ao.zarr_format = 3;
	ao.dtype = d->dtype;
	ao.ndim = scalar ? 0 : d->ndim;
	ao.shape = d->shape;
	ao.chunks = scalar ? NULL : chunks;
	ao.fill_value_json = fill3_for(d->dtype);
	ao.compressor = d->compressor ? d->compressor : &h->compressor;
	ao.filters_json = d->filters_json;
	ao.object_codec = d->object_codec == NZ_OBJECT_NONE ? NZ_OBJECT_NONE : NZ_OBJECT_VLEN_UTF8;
	ao.shards = d->shards;
	ao.dimension_separator = nz__hdmf_key_separator(path, ao.ndim);
	if ((err = nz_array_create(&a, h->store, path, &ao)) < 0 ||
	    (err = nz__hdmf3_dset_attrs(&attrs, h, path, d, ao.ndim)) < 0 ||
	    (err = attrs_put(h, path, attrs, 0)) < 0)
		goto done;
	if (out) {
		*out = a;
		a = NULL;
	}
done:
	json_decref(attrs);
	nz_array_free(a);
	return err;
}

int nz__hdmf_dset_create(nz_array **out, nz__hdmf *h, const char *path, const nz__hdmf_dset *d)
{
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	uint64_t chunks[NZ_MAX_DIMS];
	json_t *attrs = NULL;
	nz_array *a = NULL;
	int err = 0;

	if (d->ndim < 1 || d->ndim > NZ_MAX_DIMS || !d->dtype || strlen(d->dtype) < 2)
		return nz__error_set(NZ_EINVAL, "dataset '/%s': bad dtype or rank", path);
	if (h->zarr_format == 3)
		return dset_create3(out, h, path, d);
	for (int i = 0; i < d->ndim; i++)
		chunks[i] = d->chunks ? d->chunks[i] : (d->shape[i] ? d->shape[i] : 1);
	ao.dtype = d->dtype;
	ao.ndim = d->ndim;
	ao.shape = d->shape;
	ao.chunks = chunks;
	ao.fill_value_json = fill_for(d->dtype);
	ao.compressor = d->compressor ? d->compressor : &h->compressor;
	ao.filters_json = d->filters_json;
	ao.object_codec = d->object_codec;
	if ((err = nz_array_create(&a, h->store, path, &ao)) < 0)
		goto done;

	attrs = d->attrs ? json_deep_copy(d->attrs) : json_object();
	if (!attrs) {
		err = oom("dataset attributes");
		goto done;
	}
	if (d->zarr_dtype && (err = set(attrs, "zarr_dtype", json_string(d->zarr_dtype))) < 0)
		goto done;
	if (d->type && (err = nz__hdmf_set_type(attrs, h, d->ns, d->type, d->oid, d->oid_out)) < 0)
		goto done;
	if ((err = nz__hdmf_attrs_write(h, path, attrs)) < 0)
		goto done;
	if (out) {
		*out = a;
		a = NULL;
	}
done:
	json_decref(attrs);
	nz_array_free(a);
	return err;
}

int nz__hdmf_dset_write(nz__hdmf *h, const char *path, const nz__hdmf_dset *d, const void *data,
			size_t len)
{
	nz_array *a = NULL;
	int err = nz__hdmf_dset_create(&a, h, path, d);
	if (err < 0)
		return err;
	if (len > 0)
		err = nz_array_write_all(a, data, len);
	nz_array_free(a);
	return err;
}

/* Write `n` object elements (texts of lens[i] bytes) as a 1-D array. */
static int write_objects(nz__hdmf *h, const char *path, const nz__hdmf_dset *base,
			 const char *const *items, const size_t *lens, size_t n,
			 nz_object_codec codec, const char *zarr_dtype)
{
	nz__hdmf_dset d = *base;
	uint64_t shape[1] = {n};
	nz_array *a = NULL;
	int err;
	d.dtype = "|O";
	d.object_codec = codec;
	d.ndim = 1;
	d.shape = shape;
	if (!d.zarr_dtype)
		d.zarr_dtype = zarr_dtype;
	if ((err = nz__hdmf_dset_create(&a, h, path, &d)) < 0)
		return err;
	if (n > 0)
		err = nz_array_write_all_vlen(a, items, lens, n);
	nz_array_free(a);
	return err;
}

int nz__hdmf_text_list(nz__hdmf *h, const char *path, const char *const *items, size_t n,
		       nz_object_codec codec, const nz__hdmf_dset *d)
{
	static const nz__hdmf_dset none;
	size_t *lens = NULL;
	int err;
	if (n > 0 && !(lens = nz__calloc(n, sizeof *lens)))
		return oom(path);
	for (size_t i = 0; i < n; i++)
		lens[i] = strlen(items[i]);
	err = write_objects(h, path, d ? d : &none, items, lens, n, codec,
			    codec == NZ_OBJECT_VLEN_BYTES ? "bytes" : "str");
	nz__free(lens);
	return err;
}

int nz__hdmf_scalar_text(nz__hdmf *h, const char *path, const char *text, nz_object_codec codec,
			 const json_t *attrs)
{
	nz__hdmf_dset d = {0};
	size_t len = strlen(text);
	d.attrs = attrs;
	return write_objects(h, path, &d, &text, &len, 1, codec, "scalar");
}

int nz__hdmf_scalar_f64(nz__hdmf *h, const char *path, double v, const json_t *attrs)
{
	static const uint64_t one[1] = {1};
	nz__hdmf_dset d = {0};
	d.dtype = "<f8";
	d.zarr_dtype = "scalar";
	d.ndim = 1;
	d.shape = one;
	d.attrs = attrs;
	return nz__hdmf_dset_write(h, path, &d, &v, sizeof v);
}

int nz__hdmf_ref_list(nz__hdmf *h, const char *path, json_t *const *refs, size_t n,
		      const nz__hdmf_dset *d)
{
	static const nz__hdmf_dset none;
	char **texts = NULL;
	size_t *lens = NULL;
	int err = 0;
	if (n > 0 && (!(texts = nz__calloc(n, sizeof *texts)) || !(lens = nz__calloc(n, sizeof *lens)))) {
		err = oom(path);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		/* v3: hdmf-zarr 0.14 stores only the target's path. */
		const char *p = json_string_value(json_object_get(refs[i], "path"));
		if (h->zarr_format == 3 && !p) {
			err = nz__error_set(NZ_EINVAL, "dataset '/%s': reference %zu has no text 'path'", path, i);
			goto done;
		}
		if (h->zarr_format == 3 && !(texts[i] = nz__strdup(p))) {
			err = oom(path);
			goto done;
		}
		if (h->zarr_format != 3 && (err = nz__json_dumps(&texts[i], refs[i], NZ_JSON_COMPACT)) < 0)
			goto done;
		lens[i] = strlen(texts[i]);
	}
	err = write_objects(h, path, d ? d : &none, (const char *const *)texts, lens, n,
			    NZ_OBJECT_JSON2, "object");
done:
	for (size_t i = 0; texts && i < n; i++)
		nz__free(texts[i]);
	nz__free(texts);
	nz__free(lens);
	return err;
}

int nz__hdmf_region(nz__hdmf *h, const char *path, const char *description, const int64_t *rows,
		    size_t n, const char *table_path, const char *table_oid)
{
	return nz__hdmf_region_dim(h, path, description, rows, n, table_path, table_oid, "num_rows");
}

int nz__hdmf_region_dim(nz__hdmf *h, const char *path, const char *description, const int64_t *rows,
			size_t n, const char *table_path, const char *table_oid, const char *dim)
{
	nz__hdmf_dset d = {0};
	uint64_t shape[1] = {n};
	json_t *attrs = json_object();
	int err;
	if (!attrs)
		return oom(path);
	if ((err = set(attrs, "description", json_string(description))) < 0 ||
	    (err = nz__hdmf_set_ref_attr(attrs, h, "table", table_path, table_oid)) < 0)
		goto done;
	d.dtype = "<i8";
	d.zarr_dtype = "int64";
	d.ndim = 1;
	d.shape = shape;
	d.ns = "hdmf-common";
	d.type = "DynamicTableRegion";
	d.attrs = attrs;
	d.dims = &dim;
	err = nz__hdmf_dset_write(h, path, &d, rows, n * sizeof *rows);
done:
	json_decref(attrs);
	return err;
}

const char *nz__hdmf_dtype_name(const char *dtype)
{
	static const char *const map[][2] = {
		{"|b1", "bool_"},  {"|i1", "int8"},    {"|u1", "uint8"},   {"<i2", "int16"},
		{"<u2", "uint16"}, {"<i4", "int32"},   {"<u4", "uint32"},  {"<i8", "int64"},
		{"<u8", "uint64"}, {"<f4", "float32"}, {"<f8", "float64"},
	};
	for (size_t i = 0; dtype && i < sizeof map / sizeof map[0]; i++)
		if (strcmp(dtype, map[i][0]) == 0)
			return map[i][1];
	return NULL;
}
