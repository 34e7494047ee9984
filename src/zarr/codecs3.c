/* The Zarr v3 codec chain as zarr-python 3.4 writes and reads it:
 * array->array (transpose), exactly one array->bytes (bytes, vlen-utf8,
 * vlen-bytes), then bytes->bytes (blosc, zstd, gzip). The bytes->bytes
 * codecs reuse the numcodecs implementations (src/codec): their v3
 * configurations are translated, and the canonical v3 form is kept for
 * writing zarr.json back. Anything else is refused naming the array. */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

static const char *const shuffles[] = { "noshuffle", "shuffle", "bitshuffle" };

/* name and configuration of one codec entry ({"name", "configuration"} or
 * a bare name); *cfg is NULL when there is none. */
static int codec_name(const char **name, json_t **cfg, const json_t *c, size_t i, const char *what)
{
	const char *key;
	json_t *v;
	*cfg = NULL;
	if (json_is_string(c)) {
		*name = json_string_value(c);
		return 0;
	}
	if (!json_is_object(c) || !json_is_string(json_object_get(c, "name")))
		return nz__error_set(NZ_EFORMAT, "%s: 'codecs'[%zu] must be an object with a 'name'", what, i);
	json_object_foreach ((json_t *)c, key, v)
		if (strcmp(key, "name") != 0 && strcmp(key, "configuration") != 0)
			return nz__error_set(NZ_EFORMAT, "%s: codecs[%zu]: unexpected key '%s'", what, i, key);
	*name = json_string_value(json_object_get(c, "name"));
	*cfg = json_object_get(c, "configuration");
	if (*cfg && !json_is_object(*cfg))
		return nz__error_set(NZ_EFORMAT, "%s: codec '%s': 'configuration' must be an object", what, *name);
	return 0;
}

/* Refuse configuration keys outside `allowed` (NULL-terminated). */
static int check_keys(const json_t *cfg, const char *const *allowed, const char *name, const char *what)
{
	const char *key;
	json_t *v;
	json_object_foreach ((json_t *)cfg, key, v) {
		const char *const *k;
		for (k = allowed; *k && strcmp(*k, key) != 0; k++)
			;
		if (!*k)
			return nz__error_set(NZ_EFORMAT, "%s: codec '%s': unexpected configuration key '%s'", what, name,
					     key);
	}
	return 0;
}

int nz__codecs3_big_endian(const json_t *codecs)
{
	size_t i;
	for (i = 0; i < json_array_size(codecs); i++) {
		json_t *c = json_array_get(codecs, i);
		const char *e = json_string_value(json_object_get(json_object_get(c, "configuration"), "endian"));
		if (json_is_object(c) && json_is_string(json_object_get(c, "name")) &&
		    strcmp(json_string_value(json_object_get(c, "name")), "bytes") == 0)
			return e && strcmp(e, "big") == 0;
	}
	return 0;
}

/* 1 if the bytes codec writes an endian for this dtype (zarr-python omits
 * it for one-byte types and fixed-length bytes). */
static int has_endian(const nz__dtype *dt)
{
	return dt->kind == 'V' || dt->kind == 'U' || (dt->itemsize > 1 && dt->kind != 'S');
}

static int parse_transpose(nz_array *a, json_t **canon, const json_t *cfg, const char *what)
{
	static const char *const keys[] = { "order", NULL };
	json_t *order = json_object_get(cfg, "order");
	int seen[NZ_MAX_DIMS] = { 0 }, i, err;
	if ((err = check_keys(cfg, keys, "transpose", what)) < 0)
		return err;
	if (!json_is_array(order) || json_array_size(order) != (size_t)a->ndim)
		return nz__error_set(NZ_EFORMAT, "%s: transpose 'order' must list %d dimensions", what, a->ndim);
	for (i = 0; i < a->ndim; i++) {
		json_t *o = json_array_get(order, (size_t)i);
		json_int_t p = json_integer_value(o);
		if (!json_is_integer(o) || p < 0 || p >= a->ndim || seen[p]++)
			return nz__error_set(NZ_EFORMAT, "%s: transpose 'order' is not a permutation of 0..%d", what,
					     a->ndim - 1);
		a->perm[i] = (int)p;
		a->transposed |= p != i;
	}
	if (a->transposed && a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: transpose of a variable-length array is not supported", what);
	*canon = json_pack("{s:s,s:{s:O}}", "name", "transpose", "configuration", "order", order);
	return 0;
}

static int parse_bytes(nz_array *a, json_t **canon, const char *name, const json_t *cfg, const char *what)
{
	static const char *const keys[] = { "endian", NULL }, *const none[] = { NULL };
	const char *e;
	int err;
	if (strcmp(name, "bytes") != 0) { /* vlen-utf8 / vlen-bytes */
		nz_object_codec want = name[5] == 'u' ? NZ_OBJECT_VLEN_UTF8 : NZ_OBJECT_VLEN_BYTES;
		if ((err = check_keys(cfg, none, name, what)) < 0)
			return err;
		if (a->ocodec != want)
			return nz__error_set(NZ_EFORMAT, "%s: codec '%s' does not fit data_type %s", what, name,
					     a->dtype.str);
		*canon = json_pack("{s:s,s:{}}", "name", name, "configuration");
		return 0;
	}
	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EFORMAT, "%s: a variable-length data_type needs vlen-utf8 or vlen-bytes, "
				     "not 'bytes'", what);
	if ((err = check_keys(cfg, keys, name, what)) < 0)
		return err;
	e = json_string_value(json_object_get(cfg, "endian"));
	if (json_object_get(cfg, "endian") && (!e || (strcmp(e, "little") != 0 && strcmp(e, "big") != 0)))
		return nz__error_set(NZ_EFORMAT, "%s: bytes 'endian' must be \"little\" or \"big\"", what);
	if (!e && has_endian(&a->dtype))
		return nz__error_set(NZ_EFORMAT, "%s: bytes codec needs an 'endian' for data_type %s", what,
				     a->dtype.str);
	if (has_endian(&a->dtype))
		*canon = json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", e);
	else
		*canon = json_pack("{s:s}", "name", "bytes");
	return 0;
}

/* v3 blosc/zstd/gzip/crc32c configuration -> the numcodecs config src/codec
 * parses, and the canonical v3 entry. *typesize: blosc's element size. */
static int parse_b2b(json_t **numc, json_t **canon, size_t *typesize, const char *name, const json_t *cfg,
		     size_t itemsize, const char *what)
{
	static const char *const bk[] = { "typesize", "cname", "clevel", "shuffle", "blocksize", NULL };
	static const char *const zk[] = { "level", "checksum", NULL }, *const gk[] = { "level", NULL };
	static const char *const none[] = { NULL };
	json_t *level = json_object_get(cfg, "level");
	int err;
	*typesize = itemsize ? itemsize : 1;
	if (strcmp(name, "blosc") == 0) {
		json_t *ts = json_object_get(cfg, "typesize"), *bs = json_object_get(cfg, "blocksize");
		const char *sh = json_string_value(json_object_get(cfg, "shuffle"));
		int s;
		if ((err = check_keys(cfg, bk, name, what)) < 0)
			return err;
		for (s = 0; s < 3 && (!sh || strcmp(sh, shuffles[s]) != 0); s++)
			;
		if (s == 3)
			return nz__error_set(NZ_EFORMAT, "%s: blosc 'shuffle' must be noshuffle, shuffle or bitshuffle", what);
		if (ts && (!json_is_integer(ts) || json_integer_value(ts) < 1 || json_integer_value(ts) > (1 << 30)))
			return nz__error_set(NZ_EFORMAT, "%s: blosc 'typesize' must be a positive integer", what);
		if (ts)
			*typesize = (size_t)json_integer_value(ts);
		*numc = json_pack("{s:s,s:O?,s:O?,s:i,s:O*}", "id", "blosc", "cname", json_object_get(cfg, "cname"),
				  "clevel", json_object_get(cfg, "clevel"), "shuffle", s, "blocksize", bs);
		/* src/codec validates cname, clevel and blocksize. */
		*canon = json_pack("{s:s,s:{s:I,s:O?,s:O?,s:s,s:I}}", "name", "blosc", "configuration", "typesize",
				   (json_int_t)*typesize, "cname", json_object_get(cfg, "cname"), "clevel",
				   json_object_get(cfg, "clevel"), "shuffle", shuffles[s], "blocksize",
				   json_integer_value(bs));
	} else if (strcmp(name, "crc32c") == 0) {
		if ((err = check_keys(cfg, none, name, what)) < 0)
			return err;
		*numc = json_pack("{s:s}", "id", "crc32c");
		*canon = json_pack("{s:s}", "name", "crc32c");
	} else if (strcmp(name, "zstd") == 0) {
		json_t *ck = json_object_get(cfg, "checksum");
		if ((err = check_keys(cfg, zk, name, what)) < 0)
			return err;
		if (ck && !json_is_boolean(ck))
			return nz__error_set(NZ_EFORMAT, "%s: zstd 'checksum' must be a boolean", what);
		*numc = json_pack("{s:s,s:O?,s:b}", "id", "zstd", "level", level, "checksum", json_is_true(ck));
		*canon = json_pack("{s:s,s:{s:O?,s:b}}", "name", "zstd", "configuration", "level", level, "checksum",
				   json_is_true(ck));
	} else {
		if ((err = check_keys(cfg, gk, name, what)) < 0)
			return err;
		*numc = json_pack("{s:s,s:O?}", "id", "gzip", "level", level);
		*canon = json_pack("{s:s,s:{s:O?}}", "name", "gzip", "configuration", "level", level);
	}
	return 0;
}

/* "numcodecs.<id>", as zarr-python 3.4 names numcodecs' codecs in v3
 * (zarr.codecs.numcodecs): the configuration is numcodecs' own without
 * "id"; src/codec implements these ids. */
static const char *numcodecs_id(const char *name)
{
	static const char *const ids[] = { "lz4", "zlib", "gzip", "zstd", "shuffle", "crc32c", "blosc", NULL };
	const char *const *k;
	if (strncmp(name, "numcodecs.", 10) != 0)
		return NULL;
	for (k = ids; *k && strcmp(*k, name + 10) != 0; k++)
		;
	return *k;
}

static int is_b2b(const char *name)
{
	return strcmp(name, "blosc") == 0 || strcmp(name, "zstd") == 0 || strcmp(name, "gzip") == 0 ||
	       strcmp(name, "crc32c") == 0 || numcodecs_id(name);
}

/* numcodecs' config for a "numcodecs.<id>" entry, with the defaults
 * numcodecs' constructors (and zarr's wrapper, for shuffle's elementsize)
 * supply when zarr-python wrote an empty configuration. */
static int parse_numcodecs(json_t **numc, json_t **canon, const char *id, const json_t *cfg, size_t itemsize)
{
	static const char *const dkey[] = { "acceleration", "level", "level", "level", "elementsize", NULL };
	static const char *const ids[] = { "lz4", "zlib", "gzip", "zstd", "shuffle", NULL };
	int k;
	char name[24];
	if (!(*numc = json_deep_copy(cfg)) || json_object_set_new(*numc, "id", json_string(id)) < 0)
		return -1;
	for (k = 0; ids[k] && strcmp(ids[k], id) != 0; k++)
		;
	if (ids[k] && !json_object_get(cfg, dkey[k]) &&
	    json_object_set_new(*numc, dkey[k],
				json_integer(k == 4 ? (json_int_t)(itemsize ? itemsize : 1) : k == 3 ? 0 : 1)) < 0)
		return -1;
	snprintf(name, sizeof name, "numcodecs.%s", id);
	*canon = json_pack("{s:s,s:O}", "name", name, "configuration", cfg);
	return *canon ? 0 : -1;
}

int nz__codecs3_parse(nz_array *a, const json_t *codecs, const char *what)
{
	json_t *canon = NULL, *numc = NULL, *empty = json_object();
	size_t i, n = json_array_size(codecs);
	int stage = 0, err = 0; /* 0 array->array, 1 bytes->bytes */

	if (!json_is_array(codecs) || n == 0) {
		err = nz__error_set(NZ_EFORMAT, "%s: 'codecs' must be a non-empty list", what);
		goto done;
	}
	if (!empty || !(a->codecs3 = json_array()) || !(a->filters = nz__calloc(n, sizeof *a->filters)) ||
	    !(a->typesize = nz__calloc(n, sizeof *a->typesize)))
		goto nomem;
	for (i = 0; i < n; i++) {
		const char *name = NULL;
		json_t *cfg = NULL;
		if ((err = codec_name(&name, &cfg, json_array_get(codecs, i), i, what)) < 0)
			goto done;
		if (!cfg)
			cfg = empty;
		if (strcmp(name, "transpose") == 0 && stage == 0) {
			err = parse_transpose(a, &canon, cfg, what);
		} else if ((strcmp(name, "bytes") == 0 || strcmp(name, "vlen-utf8") == 0 ||
			    strcmp(name, "vlen-bytes") == 0) && stage == 0) {
			err = parse_bytes(a, &canon, name, cfg, what);
			stage = 1;
		} else if (is_b2b(name) && stage == 1) {
			if (numcodecs_id(name)) {
				a->typesize[a->nfilters] = 1;
				err = parse_numcodecs(&numc, &canon, numcodecs_id(name), cfg, a->dtype.itemsize);
				if (err < 0)
					goto nomem;
			} else {
				err = parse_b2b(&numc, &canon, &a->typesize[a->nfilters], name, cfg, a->dtype.itemsize,
						what);
			}
			if (err == 0 && numc &&
			    (err = nz__codec_from_json(&a->filters[a->nfilters], numc)) < 0)
				nz__error_wrap("%s: codec '%s'", what, name);
			if (err == 0 && !numc)
				goto nomem;
			if (err == 0)
				a->nfilters++;
			json_decref(numc);
			numc = NULL;
		} else if (strcmp(name, "transpose") == 0 || strcmp(name, "bytes") == 0 || is_b2b(name) ||
			   strcmp(name, "vlen-utf8") == 0 || strcmp(name, "vlen-bytes") == 0) {
			err = nz__error_set(NZ_EFORMAT, "%s: codec '%s' is out of place in 'codecs' (array->array, one "
					    "array->bytes, then bytes->bytes)", what, name);
		} else {
			err = nz__error_set(NZ_EUNSUPPORTED, "%s: codec '%s' is not supported (transpose, bytes, vlen-utf8, "
					    "vlen-bytes, blosc, zstd, gzip, crc32c, numcodecs.lz4/zlib/gzip/zstd/"
					    "shuffle/crc32c/blosc)", what, name);
		}
		if (err < 0)
			goto done;
		if (nz__json_take_append(a->codecs3, &canon) < 0)
			goto nomem;
	}
	if (stage == 0)
		err = nz__error_set(NZ_EFORMAT, "%s: 'codecs' has no array->bytes codec (bytes, vlen-utf8 or vlen-bytes)",
				    what);
	goto done;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory reading the codecs of %s", what);
done:
	json_decref(numc);
	json_decref(canon);
	json_decref(empty);
	return err;
}

/* One numcodecs config (as src/codec reads it) as zarr-python 3.4 writes
 * it: {"name": "numcodecs.<id>", "configuration": the rest}. */
static int numcodecs_entry(json_t **out, const json_t *numc, const char *path)
{
	const char *id = json_string_value(json_object_get(numc, "id"));
	char name[24];
	nz_codec *c = NULL;
	int err;
	*out = NULL;
	if (!json_is_object(numc) || !id)
		return nz__error_set(NZ_EINVAL, "array '%s': each filter must be a numcodecs config with an \"id\"", path);
	snprintf(name, sizeof name, "numcodecs.%.12s", id);
	if (!numcodecs_id(name) || strcmp(id, "crc32c") == 0)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': filter '%s' has no Zarr v3 codec here (shuffle, "
				     "lz4, zlib, gzip, zstd)", path, id);
	if ((err = nz__codec_from_json(&c, numc)) < 0) /* validated as on read */
		return nz__error_wrap("array '%s'", path);
	nz__codec_free(c);
	if (!(*out = json_pack("{s:s,s:O}", "name", name, "configuration", numc)) ||
	    json_object_del(json_object_get(*out, "configuration"), "id") < 0)
		return nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
	return 0;
}

/* The array->array codecs: transpose when asked for a non-identity order. */
static int transpose_entry(json_t **out, const nz_array_opts *o, const char *path)
{
	int seen[NZ_MAX_DIMS] = { 0 }, i, moved = 0;
	json_t *order;
	*out = NULL;
	if (!o->transpose_order || o->ndim == 0)
		return 0;
	for (i = 0; i < o->ndim; i++) {
		int p = o->transpose_order[i];
		if (p < 0 || p >= o->ndim || seen[p]++)
			return nz__error_set(NZ_EINVAL, "array '%s': transpose_order is not a permutation of 0..%d", path,
					     o->ndim - 1);
		moved |= p != i;
	}
	if (!moved)
		return 0;
	if (o->object_codec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': transpose of a variable-length array is not supported",
				     path);
	for (i = 0, order = json_array(); order && i < o->ndim; i++)
		if (json_array_append_new(order, json_integer(o->transpose_order[i])) < 0)
			break;
	if (order && i == o->ndim)
		*out = json_pack("{s:s,s:{s:O}}", "name", "transpose", "configuration", "order", order);
	json_decref(order);
	return *out ? 0 : nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
}

/* The bytes->bytes codec for the compressor choice; *v NULL for none. */
static int compressor_entry(json_t **v, const nz_compressor *c, const nz__dtype *dt, nz_object_codec oc,
			    const char *path)
{
	*v = NULL;
	if (!c->id)
		return nz__error_set(NZ_EINVAL, "array '%s': compressor has no id", path);
	if (strcmp(c->id, "blosc") == 0) {
		size_t ts = oc != NZ_OBJECT_NONE ? 1 : dt->itemsize; /* zarr-python: the item size, 1 if none */
		int s = c->shuffle < 0 ? (ts == 1 ? 2 : 1) : c->shuffle; /* numcodecs' AUTOSHUFFLE */
		if (s > 2)
			return nz__error_set(NZ_EINVAL, "array '%s': blosc shuffle %d (0, 1, 2 or -1)", path, c->shuffle);
		*v = json_pack("{s:s,s:{s:I,s:s,s:i,s:s,s:i}}", "name", "blosc", "configuration", "typesize",
			       (json_int_t)ts, "cname", c->cname ? c->cname : "", "clevel", c->clevel, "shuffle",
			       shuffles[s], "blocksize", c->blocksize);
	} else if (strcmp(c->id, "zstd") == 0) {
		*v = json_pack("{s:s,s:{s:i,s:b}}", "name", "zstd", "configuration", "level", c->clevel, "checksum",
			       nz__compressor_checksum(c));
	} else if (strcmp(c->id, "gzip") == 0) {
		*v = json_pack("{s:s,s:{s:i}}", "name", "gzip", "configuration", "level", c->clevel);
	} else if (strcmp(c->id, "lz4") == 0) { /* Zarr v3 has none: numcodecs' (zarr-python reads it) */
		*v = json_pack("{s:s,s:{s:i}}", "name", "numcodecs.lz4", "configuration", "acceleration", 1);
	} else if (strcmp(c->id, "zlib") == 0) {
		*v = json_pack("{s:s,s:{s:i}}", "name", "numcodecs.zlib", "configuration", "level", c->clevel);
	} else if (strcmp(c->id, "none") != 0) {
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': compressor '%s' has no Zarr v3 codec (blosc, zstd, "
				     "gzip, lz4, zlib or none)", path, c->id);
	} else {
		return 0;
	}
	return *v ? 0 : nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
}

int nz__codecs3_from_opts(json_t **out, const nz_array_opts *o, const nz__dtype *dt, nz_object_codec oc,
			  const char *path)
{
	nz_compressor def = NZ_COMPRESSOR_INIT;
	const nz_compressor *c = o->compressor ? o->compressor : &def;
	json_t *l = json_array(), *v = NULL, *filters = NULL;
	const char *e = dt->big_endian ? "big" : "little";
	size_t i;
	int err = 0;

	*out = NULL;
	if (!l)
		goto nomem;
	if ((err = transpose_entry(&v, o, path)) < 0)
		goto done;
	if (v && nz__json_take_append(l, &v) < 0)
		goto nomem;
	if (oc != NZ_OBJECT_NONE)
		v = json_pack("{s:s,s:{}}", "name", oc == NZ_OBJECT_VLEN_UTF8 ? "vlen-utf8" : "vlen-bytes", "configuration");
	else if (has_endian(dt))
		v = json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", e);
	else
		v = json_pack("{s:s}", "name", "bytes");
	if (nz__json_take_append(l, &v) < 0)
		goto nomem;
	/* numcodecs filters are bytes->bytes here, before the compressor, as
	 * zarr-python 3.4 lists them in 'compressors' */
	if (o->filters_json) {
		if ((err = nz__json_parse(&filters, o->filters_json, strlen(o->filters_json), "filters", 0)) < 0)
			goto done;
		if (!json_is_array(filters)) {
			err = nz__error_set(NZ_EINVAL, "array '%s': filters_json must be a JSON list", path);
			goto done;
		}
		for (i = 0; i < json_array_size(filters); i++) {
			if ((err = numcodecs_entry(&v, json_array_get(filters, i), path)) < 0)
				goto done;
			if (nz__json_take_append(l, &v) < 0)
				goto nomem;
		}
	}
	if ((err = compressor_entry(&v, c, dt, oc, path)) < 0)
		goto done;
	if (v && nz__json_take_append(l, &v) < 0)
		goto nomem;
	*out = l;
	l = NULL;
	goto done;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
done:
	json_decref(filters);
	json_decref(v);
	json_decref(l);
	return err;
}

void nz__transpose(unsigned char *dst, const unsigned char *src, const uint64_t *shape, const int *map, int ndim,
		   size_t itemsize)
{
	size_t stride[NZ_MAX_DIMS], dstep[NZ_MAX_DIMS], idx[NZ_MAX_DIMS] = { 0 }, off = 0, total = 1, n;
	int k;
	for (k = ndim - 1; k >= 0; k--) {
		stride[k] = total;
		total *= (size_t)shape[k];
	}
	/* dst dimension k walks src dimension map[k]. */
	for (k = 0; k < ndim; k++)
		dstep[k] = stride[map[k]] * itemsize;
	for (n = 0; n < total; n++) {
		memcpy(dst + n * itemsize, src + off, itemsize);
		for (k = ndim - 1; k >= 0; k--) {
			off += dstep[k];
			if (++idx[k] < shape[map[k]])
				break;
			off -= dstep[k] * idx[k];
			idx[k] = 0;
		}
	}
}
