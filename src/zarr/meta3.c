/* zarr.json of arrays: read strictly (anything we would misread is an
 * error naming the document), written with zarr-python 3.4's keys in its
 * order, so that our documents equal its own byte for byte. */
#include <math.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

static const char *const array_keys[] = { "shape",      "data_type",  "chunk_grid", "chunk_key_encoding",
					  "fill_value", "codecs",     "attributes", "dimension_names",
					  "zarr_format", "node_type", "storage_transformers", NULL };

/* Keys outside the spec are extensions: ignored only when they say
 * {"must_understand": false}, as zarr-python does. */
static int check_extensions(const json_t *meta, const char *what)
{
	const char *key;
	json_t *v;
	json_object_foreach ((json_t *)meta, key, v) {
		const char *const *k;
		for (k = array_keys; *k && strcmp(*k, key) != 0; k++)
			;
		if (*k)
			continue;
		if (!json_is_object(v) || !json_is_false(json_object_get(v, "must_understand")))
			return nz__error_set(NZ_EUNSUPPORTED, "%s: extension '%s' is not supported (and does not say "
					     "\"must_understand\": false)", what, key);
	}
	return 0;
}

static int parse_grid(nz_array *a, const json_t *meta, const char *what)
{
	json_t *g = json_object_get(meta, "chunk_grid"), *cfg = json_object_get(g, "configuration");
	const char *name = json_string_value(json_object_get(g, "name"));
	int n = 0, i, err;
	if (!name)
		return nz__error_set(NZ_EFORMAT, "%s: 'chunk_grid' must be an object with a 'name'", what);
	if (strcmp(name, "regular") != 0)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: chunk_grid '%s' is not supported (only regular)", what, name);
	if ((err = nz__zarr_parse_dims(a->chunks, &n, json_object_get(cfg, "chunk_shape"), "chunk_shape", what)) < 0)
		return err;
	if (n != a->ndim)
		return nz__error_set(NZ_EFORMAT, "%s: 'chunk_shape' has %d dimensions but 'shape' has %d", what, n, a->ndim);
	for (i = 0; i < n; i++)
		if (a->chunks[i] == 0)
			return nz__error_set(NZ_EFORMAT, "%s: 'chunk_shape'[%d] is 0 (must be >= 1)", what, i);
	return 0;
}

static int parse_keys(nz_array *a, const json_t *meta, const char *what)
{
	json_t *e = json_object_get(meta, "chunk_key_encoding"), *cfg = json_object_get(e, "configuration");
	const char *name = json_string_value(json_object_get(e, "name")), *sep;
	if (!name)
		return nz__error_set(NZ_EFORMAT, "%s: 'chunk_key_encoding' must be an object with a 'name'", what);
	if (strcmp(name, "default") != 0 && strcmp(name, "v2") != 0)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: chunk_key_encoding '%s' is not supported (default, v2)", what,
				     name);
	a->key_v2 = name[0] == 'v';
	a->sep = a->key_v2 ? '.' : '/';
	if (cfg && !json_is_object(cfg))
		return nz__error_set(NZ_EFORMAT, "%s: chunk_key_encoding 'configuration' must be an object", what);
	if (json_object_get(cfg, "separator")) {
		sep = json_string_value(json_object_get(cfg, "separator"));
		if (!sep || (strcmp(sep, "/") != 0 && strcmp(sep, ".") != 0))
			return nz__error_set(NZ_EFORMAT, "%s: chunk key 'separator' must be \"/\" or \".\"", what);
		a->sep = sep[0];
	}
	return 0;
}

static int parse_names(nz_array *a, const json_t *meta, const char *what)
{
	json_t *v = json_object_get(meta, "dimension_names");
	size_t i;
	if (!v || json_is_null(v))
		return 0;
	if (!json_is_array(v) || json_array_size(v) != (size_t)a->ndim)
		return nz__error_set(NZ_EFORMAT, "%s: 'dimension_names' must list %d names", what, a->ndim);
	for (i = 0; i < json_array_size(v); i++)
		if (!json_is_string(json_array_get(v, i)) && !json_is_null(json_array_get(v, i)))
			return nz__error_set(NZ_EFORMAT, "%s: 'dimension_names'[%zu] must be a string or null", what, i);
	if (!(a->dim_names = json_deep_copy(v)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
	return 0;
}

int nz__array_parse3(nz_array *a, const json_t *meta, const char *what)
{
	json_t *v, *codecs = json_object_get(meta, "codecs");
	const json_t *inner = codecs;
	const char *s;
	int err;

	if (!json_is_integer(v = json_object_get(meta, "zarr_format")) || json_integer_value(v) != 3)
		return nz__error_set(NZ_EFORMAT, "%s: 'zarr_format' must be 3", what);
	s = json_string_value(json_object_get(meta, "node_type"));
	if (!s || strcmp(s, "array") != 0)
		return nz__error_set(NZ_EFORMAT, "%s: 'node_type' must be \"array\"", what);
	if ((err = check_extensions(meta, what)) < 0 ||
	    (err = nz__zarr_parse_dims(a->shape, &a->ndim, json_object_get(meta, "shape"), "shape", what)) < 0 ||
	    (err = parse_grid(a, meta, what)) < 0 || (err = parse_keys(a, meta, what)) < 0 ||
	    (err = parse_names(a, meta, what)) < 0)
		return err;
	v = json_object_get(meta, "storage_transformers");
	if (v && (!json_is_array(v) || json_array_size(v) != 0))
		return nz__error_set(NZ_EUNSUPPORTED, "%s: storage_transformers are not supported", what);
	v = json_object_get(meta, "attributes");
	if (v && !json_is_object(v))
		return nz__error_set(NZ_EFORMAT, "%s: 'attributes' must be an object, not %s", what, nz__json_type_name(v));
	if (!json_is_array(codecs))
		return nz__error_set(NZ_EFORMAT, "%s: 'codecs' must be a list, not %s", what, nz__json_type_name(codecs));
	if ((err = nz__shard3_peek(a, &inner, codecs, what)) < 0)
		return err;
	if ((err = nz__dtype3_parse(&a->dtype, &a->ocodec, json_object_get(meta, "data_type"),
				    nz__codecs3_big_endian(inner), what)) < 0 ||
	    (err = nz__array_sizes(a, what)) < 0)
		return err;
	if (!(v = json_object_get(meta, "fill_value")))
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'fill_value'", what);
	if ((err = nz__fill3_parse(a->fill, &a->fill_json, &a->dtype, a->ocodec, v, what)) < 0)
		return err;
	if (a->dtype.kind == 'f') {
		double d = 0;
		if (a->dtype.itemsize == 4) {
			float f;
			memcpy(&f, a->fill, 4);
			d = f;
		} else {
			memcpy(&d, a->fill, 8);
		}
		a->fill_is_nan = !a->dtype.big_endian && isnan(d);
	}
	if ((err = nz__codecs3_parse(a, inner, what)) < 0)
		return err;
	return a->sharded ? nz__shard3_finish(a, codecs, what) : 0;
}

/* {"name": name, "configuration": {"<key>": v}} with v taken. */
static json_t *named(const char *name, const char *key, json_t *v)
{
	return v ? json_pack("{s:s,s:{s:o}}", "name", name, "configuration", key, v) : NULL;
}

int nz__array_to_meta3(json_t **out, const nz_array *a, const json_t *attrs)
{
	json_t *m = json_object(), *v = NULL;
	char sep[2] = { a->sep, '\0' };
	int err;

	*out = NULL;
	if (!m || (v = nz__dims_json(a->shape, a->ndim), nz__json_take(m, "shape", &v) < 0))
		goto nomem;
	if ((err = nz__dtype3_json(&v, &a->dtype, a->ocodec, a->path)) < 0)
		goto done;
	if (nz__json_take(m, "data_type", &v) < 0 ||
	    (v = named("regular", "chunk_shape", nz__dims_json(nz_array_shards(a), a->ndim)),
	     nz__json_take(m, "chunk_grid", &v) < 0) ||
	    (v = named(a->key_v2 ? "v2" : "default", "separator", json_string(sep)),
	     nz__json_take(m, "chunk_key_encoding", &v) < 0) ||
	    json_object_set(m, "fill_value", a->fill_json) < 0 || json_object_set(m, "codecs", a->codecs3) < 0 ||
	    (v = attrs ? json_deep_copy(attrs) : json_object(), nz__json_take(m, "attributes", &v) < 0) ||
	    (a->dim_names && json_object_set(m, "dimension_names", a->dim_names) < 0) ||
	    (v = json_integer(3), nz__json_take(m, "zarr_format", &v) < 0) ||
	    (v = json_string("array"), nz__json_take(m, "node_type", &v) < 0) ||
	    (v = json_array(), nz__json_take(m, "storage_transformers", &v) < 0))
		goto nomem;
	*out = m;
	return 0;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory building zarr.json of '%s'", a->path);
done:
	json_decref(v);
	json_decref(m);
	return err;
}

/* The data_type, fill_value and codecs of new-array options. */
static int opts_types(json_t *m, const nz_array_opts *o, const char *path)
{
	nz__dtype dt;
	json_t *v = NULL, *np = NULL;
	int err;
	if (o->dtype[0] == '[') {
		if ((err = nz__json_parse(&np, o->dtype, strlen(o->dtype), "dtype", 0)) < 0)
			return err;
	} else if (!(np = json_string(o->dtype))) {
		return nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
	}
	err = nz__dtype_parse_ex(&dt, np, 1, path);
	json_decref(np);
	if (err < 0)
		return err;
	/* (nz__json_take fails only for want of memory) */
	if ((err = nz__dtype3_json(&v, &dt, o->object_codec, path)) < 0)
		goto done;
	if (nz__json_take(m, "data_type", &v) < 0)
		goto nomem;
	if (o->fill_value_json)
		err = nz__json_parse(&v, o->fill_value_json, strlen(o->fill_value_json), "fill_value", JSON_DECODE_ANY);
	else
		v = json_null(); /* read as the data type's zero / empty value */
	if (err < 0)
		goto done;
	if (nz__json_take(m, "fill_value", &v) < 0)
		goto nomem;
	if ((err = nz__codecs3_from_opts(&v, o, &dt, o->object_codec, path)) < 0)
		goto done;
	if (nz__json_take(m, "codecs", &v) < 0)
		goto nomem;
	goto done;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
done:
	nz__dtype_clear(&dt);
	return err;
}

/* codecs = [sharding_indexed {chunk_shape, codecs: the chain opts_types
 * made, index_codecs: [bytes little, crc32c], index_location}], as
 * zarr-python writes it. */
static int shard_codecs(json_t *m, const nz_array_opts *o, const uint64_t *chunks, const char *path)
{
	json_t *inner = json_incref(json_object_get(m, "codecs")), *v;
	v = json_pack("[{s:s,s:{s:o,s:o,s:[{s:s,s:{s:s}},{s:s}],s:s}}]", "name", "sharding_indexed", "configuration",
		      "chunk_shape", nz__dims_json(chunks, o->ndim), "codecs", inner, "index_codecs", "name", "bytes",
		      "configuration", "endian", "little", "name", "crc32c", "index_location",
		      o->shard_index_location == NZ_SHARD_INDEX_START ? "start" : "end");
	if (!v || json_object_set_new(m, "codecs", v) < 0)
		return nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
	return 0;
}

int nz__opts_to_meta3(json_t **out, const nz_array_opts *o, const char *path)
{
	json_t *m = json_object(), *v = NULL;
	uint64_t chunks[NZ_MAX_DIMS];
	char sep[2] = { o->dimension_separator, '\0' };
	int i, err = 0;

	*out = NULL;
	if (!sep[0])
		sep[0] = o->chunk_key_encoding == NZ_CHUNK_KEY_V2 ? '.' : '/';
	for (i = 0; i < o->ndim; i++)
		chunks[i] = o->chunks ? o->chunks[i] : (o->shape[i] ? o->shape[i] : 1);
	if (!m || (v = nz__dims_json(o->shape, o->ndim), nz__json_take(m, "shape", &v) < 0))
		goto nomem;
	if ((err = opts_types(m, o, path)) < 0)
		goto done;
	for (i = 0; o->shards && i < o->ndim; i++)
		if (o->shards[i] == 0 || o->shards[i] % chunks[i] != 0) {
			err = nz__error_set(NZ_EINVAL, "array '%s': shards[%d] = %llu is not a multiple of chunks (%llu)", path,
					    i, (unsigned long long)o->shards[i], (unsigned long long)chunks[i]);
			goto done;
		}
	if (o->shards && (err = shard_codecs(m, o, chunks, path)) < 0)
		goto done;
	if ((v = named("regular", "chunk_shape", nz__dims_json(o->shards ? o->shards : chunks, o->ndim)),
	     nz__json_take(m, "chunk_grid", &v) < 0) ||
	    (v = named(o->chunk_key_encoding == NZ_CHUNK_KEY_V2 ? "v2" : "default", "separator", json_string(sep)),
	     nz__json_take(m, "chunk_key_encoding", &v) < 0))
		goto nomem;
	if (o->dimension_names) {
		if (!(v = json_array()))
			goto nomem;
		for (i = 0; i < o->ndim; i++) {
			const char *n = o->dimension_names[i];
			json_t *name = n ? json_string(n) : json_null(), *raw;
			if (!name && n && (raw = json_string_nocheck(n))) { /* it was the text, not memory */
				json_decref(raw);
				err = nz__error_set(NZ_EINVAL, "array '%s': dimension name %d is not UTF-8", path, i);
				goto done;
			}
			if (json_array_append_new(v, name) < 0)
				goto nomem;
		}
		if (nz__json_take(m, "dimension_names", &v) < 0)
			goto nomem;
	}
	if ((v = json_integer(3), nz__json_take(m, "zarr_format", &v) < 0) ||
	    (v = json_string("array"), nz__json_take(m, "node_type", &v) < 0))
		goto nomem;
	*out = m;
	return 0;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
done:
	json_decref(v);
	json_decref(m);
	return err;
}
