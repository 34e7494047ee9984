/* Arrays: create/open, accessors, chunk keys, and the chunk pipeline
 * (object codec -> filters -> compressor on write, the reverse on read). */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

/* The .zarray document for `opts`, built as JSON so that creating and
 * opening go through the same validation (nz__array_from_meta). */
static int opts_to_meta(json_t **out, const nz_array_opts *o, const char *path)
{
	json_t *m = json_object(), *v = NULL, *filters = NULL;
	nz_codec *comp = NULL;
	nz_compressor def = NZ_COMPRESSOR_INIT;
	uint64_t chunks[NZ_MAX_DIMS];
	int i, err = 0;

	*out = NULL;
	for (i = 0; i < o->ndim; i++) {
		/* Default chunks = shape; a 0-length dimension still needs 1. */
		chunks[i] = o->chunks ? o->chunks[i] : (o->shape[i] ? o->shape[i] : 1);
		if (o->shape[i] > INT64_MAX || chunks[i] > INT64_MAX) {
			err = nz__error_set(NZ_EINVAL, "array '%s': shape or chunks too large in dimension %d", path, i);
			goto done;
		}
	}
	if (!m || (v = nz__dims_json(o->shape, o->ndim), nz__json_take(m, "shape", &v) < 0) ||
	    (v = nz__dims_json(chunks, o->ndim), nz__json_take(m, "chunks", &v) < 0))
		goto nomem;
	if (o->dtype[0] == '[') {
		if ((err = nz__json_parse(&v, o->dtype, strlen(o->dtype), "dtype", 0)) < 0)
			goto done;
	} else {
		v = json_string(o->dtype); /* ASCII checked: NULL only when out of memory */
	}
	if (nz__json_take(m, "dtype", &v) < 0)
		goto nomem;
	if (o->fill_value_json) {
		if ((err = nz__json_parse(&v, o->fill_value_json, strlen(o->fill_value_json), "fill_value",
					  JSON_DECODE_ANY)) < 0)
			goto done;
	} else {
		v = strcmp(o->dtype, "|O") == 0 ? json_null() : json_integer(0);
	}
	if (nz__json_take(m, "fill_value", &v) < 0)
		goto nomem;
	/* zarr-python stores a 0-d array uncompressed whatever was asked. */
	if (o->ndim > 0 && (err = nz__codec_from_compressor(&comp, o->compressor ? o->compressor : &def)) < 0)
		goto done;
	if (comp && (err = nz__codec_to_json(&v, comp)) < 0)
		goto done;
	if (!comp)
		v = json_null();
	if (nz__json_take(m, "compressor", &v) < 0)
		goto nomem;
	if (o->filters_json) {
		if ((err = nz__json_parse(&filters, o->filters_json, strlen(o->filters_json), "filters", 0)) < 0)
			goto done;
		if (!json_is_array(filters)) {
			err = nz__error_set(NZ_EINVAL, "array '%s': filters_json must be a JSON list", path);
			goto done;
		}
	}
	if (o->object_codec != NZ_OBJECT_NONE) {
		if (!filters && !(filters = json_array()))
			goto nomem;
		if (json_array_insert_new(filters, 0, nz__vlen_codec_json(o->object_codec)) < 0)
			goto nomem;
	}
	if (!filters)
		filters = json_null();
	if (nz__json_take(m, "filters", &filters) < 0 || (v = json_string("C"), nz__json_take(m, "order", &v) < 0) ||
	    (v = json_integer(2), nz__json_take(m, "zarr_format", &v) < 0))
		goto nomem;
	if (o->dimension_separator == '/' && (v = json_string("/"), nz__json_take(m, "dimension_separator", &v) < 0))
		goto nomem;
	*out = m;
	m = NULL;
	goto done;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
done:
	nz__codec_free(comp);
	json_decref(v);
	json_decref(filters);
	json_decref(m);
	return err;
}

static int check_opts(const nz_array_opts *o, const char *path)
{
	int i;
	if (o->zarr_format != 0 && o->zarr_format != 2 && o->zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "array '%s': zarr_format %d (2 or 3)", path, o->zarr_format);
	if (o->zarr_format != 3 && (o->shards || o->dimension_names || o->chunk_key_encoding || o->transpose_order))
		return nz__error_set(NZ_EINVAL, "array '%s': shards, dimension_names, chunk key encodings and "
				     "transpose_order are Zarr v3 options", path);
	if ((unsigned)o->chunk_key_encoding > NZ_CHUNK_KEY_V2 || (unsigned)o->shard_index_location > NZ_SHARD_INDEX_START)
		return nz__error_set(NZ_EINVAL, "array '%s': unknown chunk key encoding or shard index location", path);
	if (!o->dtype || !o->dtype[0])
		return nz__error_set(NZ_EINVAL, "array '%s': no dtype given", path);
	for (i = 0; o->dtype[i]; i++)
		if ((unsigned char)o->dtype[i] >= 0x80)
			return nz__error_set(NZ_EINVAL, "array '%s': dtype '%s' is not ASCII", path, o->dtype);
	if (o->ndim < 0 || o->ndim > NZ_MAX_DIMS || (o->ndim > 0 && !o->shape))
		return nz__error_set(NZ_EINVAL, "array '%s': ndim %d invalid or shape missing", path, o->ndim);
	for (i = 0; o->chunks && i < o->ndim; i++)
		if (o->chunks[i] == 0)
			return nz__error_set(NZ_EINVAL, "array '%s': chunks[%d] is 0", path, i);
	if ((strcmp(o->dtype, "|O") == 0) != (o->object_codec != NZ_OBJECT_NONE))
		return nz__error_set(NZ_EINVAL, "array '%s': dtype '|O' and an object codec go together", path);
	if (o->object_codec == NZ_OBJECT_PICKLE)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': the pickle object codec is read only", path);
	if (o->dimension_separator && o->dimension_separator != '.' && o->dimension_separator != '/')
		return nz__error_set(NZ_EINVAL, "array '%s': dimension_separator must be '.' or '/'", path);
	return 0;
}

/* The attributes an array being replaced had (v3 keeps them in zarr.json,
 * as v2 keeps .zattrs beside the .zarray it replaces); NULL when none. */
static int old_attrs(json_t **out, nz_store *store, const char *key)
{
	json_t *doc = NULL;
	int err;
	*out = NULL;
	if ((err = nz__zarr_get_doc(&doc, store, key)) == NZ_ENOTFOUND)
		return 0;
	if (err == 0 && json_is_object(json_object_get(doc, "attributes")))
		*out = json_incref(json_object_get(doc, "attributes"));
	json_decref(doc);
	return err;
}

int nz_array_create(nz_array **out, nz_store *store, const char *path, const nz_array_opts *opts)
{
	char *p = NULL, *key = NULL, *parent = NULL, *slash;
	json_t *meta = NULL, *canon = NULL, *attrs = NULL;
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	int err, fmt;

	*out = NULL;
	nz__alloc_init();
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	if (!opts || opts->version < 1 || opts->version > NZ_ARRAY_OPTS_VERSION) {
		err = nz__error_set(NZ_EINVAL, "array '%s': options missing or of an unknown version", p);
		goto done;
	}
	/* Version 1 options end at skip_empty_chunks, version 2 ones at
	 * shard_index_location (the rest keeps INIT's). */
	memcpy(&o, opts, opts->version == 1   ? offsetof(nz_array_opts, zarr_format)
			 : opts->version == 2 ? offsetof(nz_array_opts, transpose_order)
					      : sizeof o);
	o.version = NZ_ARRAY_OPTS_VERSION;
	if ((err = check_opts(&o, p)) < 0)
		goto done;
	if ((fmt = nz__zarr_format(store)) < 0) {
		err = fmt;
		goto done;
	}
	if (o.zarr_format && fmt && o.zarr_format != fmt) {
		err = nz__error_set(NZ_EINVAL, "array '%s': cannot create a Zarr v%d array in the Zarr v%d hierarchy of %s",
				    p, o.zarr_format, fmt, nz_store_describe(store));
		goto done;
	}
	if (!o.zarr_format)
		o.zarr_format = fmt ? fmt : 2;
	if (o.zarr_format == 3) {
		if ((err = nz__opts_to_meta3(&meta, &o, p)) < 0 || (err = nz__array_from_meta(&a, store, p, meta, 3)) < 0)
			goto done;
	} else if ((err = opts_to_meta(&meta, &o, p)) < 0 || (err = nz__array_from_meta(&a, store, p, meta, 2)) < 0) {
		goto done;
	}
	a->skip_empty = o.skip_empty_chunks;
	if (!(parent = nz__strdup(p))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", p);
		goto done;
	}
	slash = strrchr(parent, '/');
	*(slash ? slash : parent) = '\0';
	if (o.zarr_format == 3 && *p && (err = nz_root_create(store, 3)) < 0)
		goto done;
	/* (a v2 root array also gets a root .zgroup, as it always has) */
	if ((o.zarr_format == 2 || *p) && (err = nz_group_create(store, parent)) < 0)
		goto done;
	if (o.zarr_format == 2 && ((err = nz__zarr_key(&key, p, ".zarray")) < 0 ||
				   (err = nz__array_to_meta(&canon, a)) < 0))
		goto done;
	if (o.zarr_format == 3 && ((err = nz__zarr_key(&key, p, "zarr.json")) < 0 ||
				   (err = old_attrs(&attrs, store, key)) < 0 ||
				   (err = nz__array_to_meta3(&canon, a, attrs)) < 0))
		goto done;
	if ((err = nz__zarr_put_doc(store, key, canon)) < 0)
		goto done;
	*out = a;
	a = NULL;
done:
	nz_array_free(a);
	json_decref(meta);
	json_decref(canon);
	json_decref(attrs);
	nz__free(p);
	nz__free(key);
	nz__free(parent);
	return err;
}

int nz_array_open(nz_array **out, nz_store *store, const char *path)
{
	char *p = NULL, *key = NULL, *key3 = NULL;
	json_t *meta = NULL;
	int err, fmt;

	*out = NULL;
	nz__alloc_init();
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if ((err = nz__zarr_path_key(&p, &key, path, fmt == 3 ? "zarr.json" : ".zarray")) < 0)
		return err;
	err = nz__zarr_get_doc(&meta, store, key);
	/* Without a v3 root (an array inside a store another tool wrote, opened
	 * by its path), the array's own zarr.json says what it is, as
	 * zarr-python's open_array looks for either document. */
	if (err == NZ_ENOTFOUND && fmt != 3 && (err = nz__zarr_key(&key3, p, "zarr.json")) == 0 &&
	    (err = nz__zarr_get_doc(&meta, store, key3)) == 0)
		fmt = 3;
	if (err == NZ_ENOTFOUND && key3)
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' (neither %s nor %s in %s)", p, key, key3,
				    nz_store_describe(store));
	else if (err == NZ_ENOTFOUND)
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' (%s missing in %s)", p, key, nz_store_describe(store));
	else if (err == 0 && fmt == 3 && json_is_object(meta) && nz__zarr3_node_is(meta, "group"))
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' (%s is a group)", p, key3 ? key3 : key);
	if (err == 0)
		err = nz__array_from_meta(out, store, p, meta, fmt == 3 ? 3 : 2);
	json_decref(meta);
	nz__free(p);
	nz__free(key);
	nz__free(key3);
	return err;
}

void nz_array_set_skip_empty(nz_array *a, int skip)
{
	a->skip_empty = skip != 0;
}

void nz_array_free(nz_array *a)
{
	size_t i;
	if (!a)
		return;
	for (i = 0; i < a->nfilters; i++)
		nz__codec_free(a->filters[i]);
	nz__free(a->filters);
	nz__codec_free(a->compressor);
	nz__free(a->typesize);
	json_decref(a->codecs3);
	json_decref(a->dim_names);
	json_decref(a->ocodec_json);
	json_decref(a->fill_json);
	nz__free(a->fill);
	nz__dtype_clear(&a->dtype);
	nz__free(a->path);
	nz__free(a);
}

int nz_array_ndim(const nz_array *a) { return a->ndim; }
const uint64_t *nz_array_shape(const nz_array *a) { return a->shape; }
const uint64_t *nz_array_chunks(const nz_array *a) { return a->chunks; }
size_t nz_array_itemsize(const nz_array *a) { return a->dtype.itemsize; }
const char *nz_array_dtype(const nz_array *a) { return a->dtype.str; }
nz_object_codec nz_array_object_codec(const nz_array *a) { return a->ocodec; }
size_t nz_array_chunk_nbytes(const nz_array *a) { return a->chunk_nbytes; }
const void *nz_array_fill_value(const nz_array *a) { return a->fill; }
const char *nz_array_path(const nz_array *a) { return a->path; }
int nz_array_zarr_format(const nz_array *a) { return a->format; }
const uint64_t *nz_array_shards(const nz_array *a) { return a->sharded ? a->shards : a->chunks; }

/* Units of shape `unit` along each dimension, and their product
 * (saturating: more units than anyone can write). */
static uint64_t grid_of(const nz_array *a, const uint64_t *unit, uint64_t *grid)
{
	uint64_t n = 1;
	int i;
	for (i = 0; i < a->ndim; i++) {
		grid[i] = a->shape[i] / unit[i] + (a->shape[i] % unit[i] != 0);
		n = grid[i] != 0 && n > UINT64_MAX / grid[i] ? UINT64_MAX : n * grid[i];
	}
	return n;
}

int nz_array_shard_grid(const nz_array *a, uint64_t *grid)
{
	grid_of(a, nz_array_shards(a), grid);
	return a->ndim;
}

uint64_t nz_array_nshards(const nz_array *a)
{
	uint64_t grid[NZ_MAX_DIMS];
	return grid_of(a, nz_array_shards(a), grid);
}

int nz_array_chunk_grid(const nz_array *a, uint64_t *grid)
{
	grid_of(a, a->chunks, grid);
	return a->ndim;
}

uint64_t nz_array_nchunks(const nz_array *a)
{
	uint64_t grid[NZ_MAX_DIMS];
	return grid_of(a, a->chunks, grid);
}

int nz_array_chunk_key(char **out, const nz_array *a, const uint64_t *idx)
{
	char name[NZ_MAX_DIMS * 21 + 3];
	size_t n = 0;
	int i, v3default = a->format == 3 && !a->key_v2;
	*out = NULL;
	if (v3default) /* "c", then each index after a separator */
		name[n++] = 'c';
	else if (a->ndim == 0)
		name[n++] = '0';
	for (i = 0; i < a->ndim; i++) {
		uint64_t g = a->shape[i] / a->chunks[i] + (a->shape[i] % a->chunks[i] != 0);
		if (idx[i] >= g)
			return nz__error_set(NZ_EINVAL, "array '%s': chunk index %llu out of range in dimension %d (%llu chunks)",
					     a->path, (unsigned long long)idx[i], i, (unsigned long long)g);
		/* a sharded array stores the inner chunk in the shard that holds it */
		uint64_t k = a->sharded ? idx[i] / (a->shards[i] / a->chunks[i]) : idx[i];
		n += (size_t)snprintf(name + n, sizeof name - n, "%s%llu", i || v3default ? (a->sep == '/' ? "/" : ".") : "",
				      (unsigned long long)k);
	}
	name[n] = '\0';
	return nz__zarr_key(out, a->path, name);
}

int nz_scratch_new(nz_scratch **out)
{
	if (!(*out = nz__calloc(1, sizeof **out)))
		return nz__error_set(NZ_ENOMEM, "out of memory allocating scratch buffers");
	return 0;
}

void nz_scratch_free(nz_scratch *s)
{
	if (!s)
		return;
	nz__buf_free(&s->a);
	nz__buf_free(&s->b);
	nz__free(s);
}
