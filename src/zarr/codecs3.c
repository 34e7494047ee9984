/* The Zarr v3 codec chain as zarr-python 3.4 writes and reads it:
 * array->array (transpose), exactly one array->bytes (bytes, vlen-utf8,
 * vlen-bytes), then bytes->bytes (blosc, zstd, gzip). The bytes->bytes
 * codecs reuse the numcodecs implementations (src/codec): their v3
 * configurations are translated, and the canonical v3 form is kept for
 * writing zarr.json back. Anything else is refused naming the array. */
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

static int is_b2b(const char *name)
{
	return strcmp(name, "blosc") == 0 || strcmp(name, "zstd") == 0 || strcmp(name, "gzip") == 0 ||
	       strcmp(name, "crc32c") == 0;
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
			if ((err = parse_b2b(&numc, &canon, &a->typesize[a->nfilters], name, cfg, a->dtype.itemsize,
					     what)) == 0 && numc &&
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
					    "vlen-bytes, blosc, zstd, gzip, crc32c)", what, name);
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
	json_decref(canon);
	json_decref(empty);
	return err;
}

int nz__codecs3_from_opts(json_t **out, const nz_array_opts *o, const nz__dtype *dt, nz_object_codec oc,
			  const char *path)
{
	nz_compressor def = NZ_COMPRESSOR_INIT;
	const nz_compressor *c = o->compressor ? o->compressor : &def;
	json_t *l = json_array(), *v = NULL;
	const char *e = dt->big_endian ? "big" : "little";
	int err = 0;

	*out = NULL;
	if (!l)
		goto nomem;
	if (oc != NZ_OBJECT_NONE)
		v = json_pack("{s:s,s:{}}", "name", oc == NZ_OBJECT_VLEN_UTF8 ? "vlen-utf8" : "vlen-bytes", "configuration");
	else if (has_endian(dt))
		v = json_pack("{s:s,s:{s:s}}", "name", "bytes", "configuration", "endian", e);
	else
		v = json_pack("{s:s}", "name", "bytes");
	if (nz__json_take_append(l, &v) < 0)
		goto nomem;
	if (!c->id) {
		err = nz__error_set(NZ_EINVAL, "array '%s': compressor has no id", path);
		goto done;
	}
	if (strcmp(c->id, "blosc") == 0) {
		size_t ts = dt->kind == 'O' ? 1 : dt->itemsize; /* zarr-python: the item size, 1 if none */
		int s = c->shuffle < 0 ? (ts == 1 ? 2 : 1) : c->shuffle; /* numcodecs' AUTOSHUFFLE */
		if (s > 2) {
			err = nz__error_set(NZ_EINVAL, "array '%s': blosc shuffle %d (0, 1, 2 or -1)", path, c->shuffle);
			goto done;
		}
		v = json_pack("{s:s,s:{s:I,s:s,s:i,s:s,s:i}}", "name", "blosc", "configuration", "typesize",
			      (json_int_t)ts, "cname", c->cname ? c->cname : "", "clevel", c->clevel, "shuffle",
			      shuffles[s], "blocksize", c->blocksize);
	} else if (strcmp(c->id, "zstd") == 0) {
		v = json_pack("{s:s,s:{s:i,s:b}}", "name", "zstd", "configuration", "level", c->clevel, "checksum", 0);
	} else if (strcmp(c->id, "gzip") == 0) {
		v = json_pack("{s:s,s:{s:i}}", "name", "gzip", "configuration", "level", c->clevel);
	} else if (strcmp(c->id, "none") != 0) {
		err = nz__error_set(NZ_EUNSUPPORTED, "array '%s': compressor '%s' has no Zarr v3 codec (blosc, zstd, gzip "
				    "or none)", path, c->id);
		goto done;
	}
	if (v && nz__json_take_append(l, &v) < 0)
		goto nomem;
	*out = l;
	return 0;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory creating array '%s'", path);
done:
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
