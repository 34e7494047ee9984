/* Arrays: create/open, accessors, chunk keys, and the chunk pipeline
 * (object codec -> filters -> compressor on write, the reverse on read). */
#include <math.h>
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
	if (!o || o->version != NZ_ARRAY_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "array '%s': options missing or of an unknown version", path);
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
	if (o->dimension_separator && o->dimension_separator != '.' && o->dimension_separator != '/')
		return nz__error_set(NZ_EINVAL, "array '%s': dimension_separator must be '.' or '/'", path);
	return 0;
}

int nz_array_create(nz_array **out, nz_store *store, const char *path, const nz_array_opts *opts)
{
	char *p = NULL, *key = NULL, *parent = NULL, *slash;
	json_t *meta = NULL, *canon = NULL;
	nz_array *a = NULL;
	int err;

	*out = NULL;
	nz__alloc_init();
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	if ((err = check_opts(opts, p)) < 0 || (err = opts_to_meta(&meta, opts, p)) < 0 ||
	    (err = nz__array_from_meta(&a, store, p, meta)) < 0)
		goto done;
	a->skip_empty = opts->skip_empty_chunks;
	if (!(parent = nz__strdup(p))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", p);
		goto done;
	}
	slash = strrchr(parent, '/');
	*(slash ? slash : parent) = '\0';
	if ((err = nz_group_create(store, parent)) < 0 || (err = nz__zarr_key(&key, p, ".zarray")) < 0 ||
	    (err = nz__array_to_meta(&canon, a)) < 0 || (err = nz__zarr_put_doc(store, key, canon)) < 0)
		goto done;
	*out = a;
	a = NULL;
done:
	nz_array_free(a);
	json_decref(meta);
	json_decref(canon);
	nz__free(p);
	nz__free(key);
	nz__free(parent);
	return err;
}

int nz_array_open(nz_array **out, nz_store *store, const char *path)
{
	char *p = NULL, *key = NULL;
	json_t *meta = NULL;
	int err;

	*out = NULL;
	nz__alloc_init();
	if ((err = nz__zarr_path_key(&p, &key, path, ".zarray")) < 0)
		return err;
	if ((err = nz__zarr_get_doc(&meta, store, key)) == NZ_ENOTFOUND)
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' (%s missing in %s)", p, key,
				    nz_store_describe(store));
	if (err == 0)
		err = nz__array_from_meta(out, store, p, meta);
	json_decref(meta);
	nz__free(p);
	nz__free(key);
	return err;
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

int nz_array_chunk_grid(const nz_array *a, uint64_t *grid)
{
	int i;
	for (i = 0; i < a->ndim; i++)
		grid[i] = a->shape[i] / a->chunks[i] + (a->shape[i] % a->chunks[i] != 0);
	return a->ndim;
}

uint64_t nz_array_nchunks(const nz_array *a)
{
	uint64_t grid[NZ_MAX_DIMS], n = 1;
	int i;
	nz_array_chunk_grid(a, grid);
	for (i = 0; i < a->ndim; i++) {
		if (grid[i] != 0 && n > UINT64_MAX / grid[i])
			return UINT64_MAX; /* saturate: more chunks than anyone can write */
		n *= grid[i];
	}
	return n;
}

int nz_array_chunk_key(char **out, const nz_array *a, const uint64_t *idx)
{
	char name[NZ_MAX_DIMS * 21 + 2];
	size_t n = 0;
	int i;
	*out = NULL;
	if (a->ndim == 0)
		name[n++] = '0';
	for (i = 0; i < a->ndim; i++) {
		uint64_t g = a->shape[i] / a->chunks[i] + (a->shape[i] % a->chunks[i] != 0);
		if (idx[i] >= g)
			return nz__error_set(NZ_EINVAL, "array '%s': chunk index %llu out of range in dimension %d (%llu chunks)",
					     a->path, (unsigned long long)idx[i], i, (unsigned long long)g);
		n += (size_t)snprintf(name + n, sizeof name - n, "%s%llu", i ? (a->sep == '/' ? "/" : ".") : "",
				      (unsigned long long)idx[i]);
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
