/* .zarray: validating what we read (hostile metadata must fail cleanly,
 * never overflow) and writing what zarr-python 2.13 writes. */
#include <math.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

int nz__zarr_norm_path(char **out, const char *path)
{
	size_t n;
	if (!path)
		path = "";
	while (*path == '/')
		path++;
	n = strlen(path);
	while (n > 0 && path[n - 1] == '/')
		n--;
	if (!(*out = nz__strndup(path, n)))
		return nz__error_set(NZ_ENOMEM, "out of memory copying path '%s'", path);
	return 0;
}

int nz__zarr_key(char **out, const char *path, const char *name)
{
	size_t a = strlen(path), b = strlen(name);
	char *k;
	if (!(k = nz__malloc(a + b + 2)))
		return nz__error_set(NZ_ENOMEM, "out of memory building key %s/%s", path, name);
	if (a) {
		memcpy(k, path, a);
		k[a++] = '/';
	}
	memcpy(k + a, name, b + 1);
	*out = k;
	return 0;
}

int nz__zarr_path_key(char **p, char **key, const char *path, const char *name)
{
	int err;
	*key = NULL;
	if ((err = nz__zarr_norm_path(p, path)) < 0)
		return err;
	if ((err = nz__zarr_key(key, *p, name)) < 0) {
		nz__free(*p);
		*p = NULL;
	}
	return err;
}

int nz__zarr_put_doc(nz_store *store, const char *key, const json_t *doc)
{
	nz_buf b = { 0 };
	int err;
	size_t n = strlen(key);
	int v3 = n >= 9 && strcmp(key + n - 9, "zarr.json") == 0;
	if ((err = nz__json_emit(&b, doc, v3 ? NZ_JSON_ZARR3 : NZ_JSON_ZARR)) == 0)
		err = nz_store_put(store, key, b.data, b.len);
	nz__buf_free(&b);
	return err;
}

int nz__zarr_get_doc(json_t **out, nz_store *store, const char *key)
{
	void *text = NULL;
	size_t len = 0;
	int err;
	*out = NULL;
	if ((err = nz_store_get(store, key, &text, &len)) == 0)
		err = nz__json_parse(out, text, len, key, 0);
	nz_free(text);
	return err;
}

/* A list of non-negative integers no longer than NZ_MAX_DIMS. */
int nz__zarr_parse_dims(uint64_t *dims, int *ndim, const json_t *v, const char *key, const char *what)
{
	size_t i, n;
	if (!json_is_array(v))
		return nz__error_set(NZ_EFORMAT, "%s: '%s' must be a list of integers, not %s", what, key,
				     nz__json_type_name(v));
	n = json_array_size(v);
	if (n > NZ_MAX_DIMS)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: '%s' has %zu dimensions (at most %d supported)",
				     what, key, n, NZ_MAX_DIMS);
	for (i = 0; i < n; i++) {
		json_t *d = json_array_get(v, i);
		if (!json_is_integer(d) || json_integer_value(d) < 0)
			return nz__error_set(NZ_EFORMAT, "%s: '%s'[%zu] must be a non-negative integer", what, key, i);
		dims[i] = (uint64_t)json_integer_value(d);
	}
	*ndim = (int)n;
	return 0;
}

int nz__array_sizes(nz_array *a, const char *what)
{
	size_t n = 1;
	uint64_t total;
	int i;
	for (i = 0; i < a->ndim; i++)
		if (a->chunks[i] > (size_t)-1 || nz__mul_size(&n, n, (size_t)a->chunks[i]) < 0)
			return nz__error_set(NZ_EFORMAT, "%s: chunk size overflows (chunks too large)", what);
	a->chunk_nelems = n;
	/* An object chunk is held as one pointer and length per element even
	 * when it is missing (nz_vlen): refuse chunks whose bookkeeping alone
	 * would take hundreds of MB rather than allocate it for a hostile
	 * document. */
	if (a->dtype.kind == 'O' && n > NZ__MAX_OBJECT_CHUNK)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: object chunks of %zu elements are not supported (at most %zu)",
				     what, n, (size_t)NZ__MAX_OBJECT_CHUNK);
	if (nz__mul_size(&a->chunk_nbytes, n, a->dtype.itemsize) < 0)
		return nz__error_set(NZ_EFORMAT, "%s: chunk size in bytes overflows", what);
	/* Sizes of regions and whole arrays are uint64_t bytes everywhere: a
	 * shape beyond that is a hostile document, not data. */
	for (i = 0, total = a->dtype.itemsize ? a->dtype.itemsize : 1; i < a->ndim; i++) {
		if (a->shape[i] && total > UINT64_MAX / a->shape[i])
			return nz__error_set(NZ_EFORMAT, "%s: the shape holds more than 2^64 bytes (an "
					     "absurd shape)", what);
		total *= a->shape[i] ? a->shape[i] : 1;
	}
	if (a->dtype.kind != 'O' && !(a->fill = nz__calloc(1, a->dtype.itemsize)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
	return 0;
}

/* 1 if the first filter is pickle and `dtype` a structured dtype with an
 * '|O' field: hdmf-zarr <= 0.13 stores compounds holding references so,
 * each row one pickled tuple. Such an array is read as an object array
 * whose elements are the rows (JSON lists, as json2 compounds read). */
static int pickled_rows(const json_t *meta)
{
	const json_t *dt = json_object_get(meta, "dtype");
	const char *id = json_string_value(json_object_get(json_array_get(json_object_get(meta, "filters"), 0), "id"));
	size_t i;
	if (!json_is_array(dt) || !id || strcmp(id, "pickle") != 0)
		return 0;
	for (i = 0; i < json_array_size(dt); i++) {
		const char *t = json_string_value(json_array_get(json_array_get(dt, i), 1));
		if (t && strcmp(t, "|O") == 0)
			return 1;
	}
	return 0;
}

/* Everything except codecs: shape, chunks, dtype, fill, order, sizes. */
static int parse_layout(nz_array *a, const json_t *meta, const char *what)
{
	json_t *v;
	int i, cnd = 0, err;

	v = json_object_get(meta, "zarr_format");
	if (!json_is_integer(v))
		return nz__error_set(NZ_EFORMAT, "%s: 'zarr_format' must be an integer, not %s", what, nz__json_type_name(v));
	if (json_integer_value(v) != 2)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: zarr_format %lld is not supported (only 2)", what,
				     (long long)json_integer_value(v));
	if ((err = nz__zarr_parse_dims(a->shape, &a->ndim, json_object_get(meta, "shape"), "shape", what)) < 0 ||
	    (err = nz__zarr_parse_dims(a->chunks, &cnd, json_object_get(meta, "chunks"), "chunks", what)) < 0)
		return err;
	if (cnd != a->ndim)
		return nz__error_set(NZ_EFORMAT, "%s: 'chunks' has %d dimensions but 'shape' has %d", what, cnd, a->ndim);
	for (i = 0; i < a->ndim; i++)
		if (a->chunks[i] == 0)
			return nz__error_set(NZ_EFORMAT, "%s: 'chunks'[%d] is 0 (must be >= 1)", what, i);
	v = json_object_get(meta, "order");
	if (!json_is_string(v))
		return nz__error_set(NZ_EFORMAT, "%s: 'order' must be a string, not %s", what, nz__json_type_name(v));
	if (strcmp(json_string_value(v), "F") == 0)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: order 'F' (Fortran) is not supported, only 'C'", what);
	if (strcmp(json_string_value(v), "C") != 0)
		return nz__error_set(NZ_EFORMAT, "%s: 'order' must be \"C\" or \"F\", not \"%s\"", what, json_string_value(v));
	a->sep = '.';
	v = json_object_get(meta, "dimension_separator");
	if (v && !json_is_null(v)) {
		const char *s = json_string_value(v);
		if (!s || (strcmp(s, ".") != 0 && strcmp(s, "/") != 0))
			return nz__error_set(NZ_EFORMAT, "%s: 'dimension_separator' must be \".\" or \"/\"", what);
		a->sep = s[0];
		a->sep_explicit = 1;
	}
	v = json_object_get(meta, "dtype");
	if (!v)
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'dtype'", what);
	if (pickled_rows(meta)) {
		json_t *obj = json_string("|O");
		err = obj ? nz__dtype_parse(&a->dtype, obj, what) : nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
		json_decref(obj);
	} else {
		err = nz__dtype_parse(&a->dtype, v, what);
	}
	if (err < 0)
		return err;
	if ((err = nz__array_sizes(a, what)) < 0)
		return err;
	v = json_object_get(meta, "fill_value");
	if (!v)
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'fill_value'", what);
	if ((err = nz__fill_parse(a->fill, &a->fill_json, &a->dtype, v, what)) < 0)
		return err;
	a->fill_is_nan = a->dtype.kind == 'f' && json_is_string(a->fill_json) &&
			 strcmp(json_string_value(a->fill_json), "NaN") == 0;
	return 0;
}

static int parse_codecs(nz_array *a, const json_t *meta, const char *what)
{
	json_t *v = json_object_get(meta, "compressor"), *filters;
	size_t i, first = 0, n;
	int err;

	if (!v)
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'compressor'", what);
	if (!json_is_null(v)) {
		if (!json_is_object(v))
			return nz__error_set(NZ_EFORMAT, "%s: 'compressor' must be an object or null, not %s", what,
					     nz__json_type_name(v));
		if ((err = nz__codec_from_json(&a->compressor, v)) < 0)
			return nz__error_wrap("%s: compressor", what);
	}
	filters = json_object_get(meta, "filters");
	if (!filters)
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'filters'", what);
	if (!json_is_null(filters) && !json_is_array(filters))
		return nz__error_set(NZ_EFORMAT, "%s: 'filters' must be a list or null, not %s", what,
				     nz__json_type_name(filters));
	n = json_array_size(filters);
	if (a->dtype.kind == 'O') {
		if (n == 0)
			return nz__error_set(NZ_EFORMAT, "%s: object dtype '|O' needs an object codec as first filter", what);
		if ((err = nz__vlen_codec_parse(&a->ocodec, json_array_get(filters, 0), what)) < 0)
			return err;
		/* numcodecs 0.11's JSON codec can neither encode nor decode a 0-d
		 * chunk (ndarray.tolist() of a 0-d array is not a list). */
		if (a->ocodec == NZ_OBJECT_JSON2 && a->ndim == 0)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: 0-d arrays with the json2 codec are not supported "
					     "(numcodecs cannot read them)", what);
		a->ocodec_json = json_deep_copy(json_array_get(filters, 0));
		if (!a->ocodec_json)
			return nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
		first = 1;
	}
	if (n > first && !(a->filters = nz__calloc(n - first, sizeof *a->filters)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
	for (i = first; i < n; i++) {
		json_t *f = json_array_get(filters, i);
		if (!json_is_object(f))
			return nz__error_set(NZ_EFORMAT, "%s: 'filters'[%zu] must be an object, not %s", what, i,
					     nz__json_type_name(f));
		if ((err = nz__codec_from_json(&a->filters[a->nfilters], f)) < 0)
			return nz__error_wrap("%s: filters[%zu]", what, i);
		a->nfilters++;
	}
	return 0;
}

int nz__array_from_meta(nz_array **out, nz_store *store, const char *path, const json_t *meta, int format)
{
	nz_array *a = NULL;
	char *what = NULL;
	int err = 0;

	*out = NULL;
	if ((err = nz__zarr_key(&what, path, format == 3 ? "zarr.json" : ".zarray")) < 0)
		return err;
	if (!json_is_object(meta)) {
		err = nz__error_set(NZ_EFORMAT, "%s: expected a JSON object, not %s", what, nz__json_type_name(meta));
		goto done;
	}
	if (!(a = nz__calloc(1, sizeof *a)) || !(a->path = nz__strdup(path))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory opening %s", what);
		goto done;
	}
	a->store = store;
	a->format = format;
	if (format == 3)
		err = nz__array_parse3(a, meta, what);
	else if ((err = parse_layout(a, meta, what)) == 0)
		err = parse_codecs(a, meta, what);
	if (err < 0)
		goto done;
	*out = a;
	a = NULL;
done:
	nz_array_free(a);
	nz__free(what);
	return err;
}

int nz__json_take(json_t *m, const char *key, json_t **v)
{
	json_t *x = *v;
	*v = NULL;
	return x ? json_object_set_new(m, key, x) : -1;
}

int nz__json_take_append(json_t *l, json_t **v)
{
	json_t *x = *v;
	*v = NULL;
	return x ? json_array_append_new(l, x) : -1;
}

json_t *nz__dims_json(const uint64_t *d, int n)
{
	json_t *l = json_array();
	int i;
	for (i = 0; l && i < n; i++)
		if (json_array_append_new(l, json_integer((json_int_t)d[i])) < 0) {
			json_decref(l);
			return NULL;
		}
	return l;
}

int nz__array_to_meta(json_t **out, const nz_array *a)
{
	json_t *m = json_object(), *filters = NULL, *v = NULL;
	size_t i;
	int err = 0;

	*out = NULL;
	if (!m)
		goto nomem;
	if (a->ocodec != NZ_OBJECT_NONE || a->nfilters) {
		if (!(filters = json_array()))
			goto nomem;
		if (a->ocodec != NZ_OBJECT_NONE && json_array_append(filters, a->ocodec_json) < 0)
			goto nomem;
		for (i = 0; i < a->nfilters; i++) {
			if ((err = nz__codec_to_json(&v, a->filters[i])) < 0)
				goto done;
			if (json_array_append_new(filters, v) < 0) {
				v = NULL; /* taken by jansson even on failure */
				goto nomem;
			}
			v = NULL;
		}
	} else {
		filters = json_null();
	}
	if (a->compressor && (err = nz__codec_to_json(&v, a->compressor)) < 0)
		goto done;
	if (!a->compressor)
		v = json_null();
	if (nz__json_take(m, "compressor", &v) < 0 || nz__json_take(m, "filters", &filters) < 0 ||
	    (v = nz__dims_json(a->chunks, a->ndim), nz__json_take(m, "chunks", &v) < 0) ||
	    (v = nz__dims_json(a->shape, a->ndim), nz__json_take(m, "shape", &v) < 0) ||
	    json_object_set(m, "dtype", a->dtype.json) < 0 || json_object_set(m, "fill_value", a->fill_json) < 0 ||
	    (v = json_string("C"), nz__json_take(m, "order", &v) < 0) ||
	    (v = json_integer(2), nz__json_take(m, "zarr_format", &v) < 0))
		goto nomem;
	/* zarr 2.13 writes dimension_separator only when one was given; hdmf
	 * and zarr's defaults give none, so '.' stays implicit. */
	if ((a->sep == '/' || a->sep_explicit) &&
	    (v = json_string(a->sep == '/' ? "/" : "."), nz__json_take(m, "dimension_separator", &v) < 0))
		goto nomem;
	*out = m;
	return 0;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory building .zarray of '%s'", a->path);
done:
	json_decref(v);
	json_decref(filters);
	json_decref(m);
	return err;
}
