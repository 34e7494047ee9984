/* Parsing, serialising and dispatching numcodecs configurations.
 *
 * Configs must carry exactly the keys numcodecs' get_config writes (plus the
 * optional ones older or newer numcodecs write: blosc "blocksize", zstd
 * "checksum", crc32c "location"), with integer values in the codec's range; anything else is
 * NZ_EFORMAT naming the codec and the field, since numcodecs itself would
 * refuse it. */
#include <limits.h>
#include <string.h>
#include <zstd.h>

#include "codec/codec_impl.h"
#include "util/alloc.h"
#include "util/error.h"

typedef struct field {
	const char *name;
	int required;
} field;

/* Reject keys that are not in `fields` (NULL-terminated). */
static int check_keys(const json_t *config, const char *id, const field *fields)
{
	const char *key;
	json_t *v;
	json_object_foreach ((json_t *)config, key, v) {
		const field *f;
		if (strcmp(key, "id") == 0)
			continue;
		for (f = fields; f->name; f++)
			if (strcmp(f->name, key) == 0)
				break;
		if (!f->name)
			return nz__error_set(NZ_EFORMAT, "codec '%s': unexpected field '%s'", id, key);
	}
	return 0;
}

/* Read integer field `name` into *out within [lo, hi]; a missing optional
 * field leaves *out unchanged. */
static int get_int(int *out, const json_t *config, const char *id, const char *name, int required,
		   long long lo, long long hi)
{
	json_t *v = json_object_get(config, name);
	long long x;
	if (!v) {
		if (required)
			return nz__error_set(NZ_EFORMAT, "codec '%s': missing field '%s'", id, name);
		return 0;
	}
	if (!json_is_integer(v))
		return nz__error_set(NZ_EFORMAT, "codec '%s': field '%s' must be an integer", id,
				     name);
	x = json_integer_value(v);
	if (x < lo || x > hi)
		return nz__error_set(NZ_EFORMAT, "codec '%s': field '%s' is %lld, expected %lld..%lld",
				     id, name, x, lo, hi);
	*out = (int)x;
	return 0;
}

static int parse_blosc(nz_codec *c, const json_t *cfg)
{
	static const field fields[] = {
		{"cname", 1}, {"clevel", 1}, {"shuffle", 1}, {"blocksize", 0}, {NULL, 0}};
	int err;
	json_t *cname = json_object_get(cfg, "cname");
	if ((err = check_keys(cfg, "blosc", fields)) < 0)
		return err;
	if (!cname)
		return nz__error_set(NZ_EFORMAT, "codec 'blosc': missing field 'cname'");
	if (!json_is_string(cname))
		return nz__error_set(NZ_EFORMAT, "codec 'blosc': field 'cname' must be a string");
	if (!nz__blosc_has_cname(json_string_value(cname)))
		return nz__error_set(NZ_EUNSUPPORTED, "codec 'blosc': unknown cname '%s'",
				     json_string_value(cname));
	strcpy(c->cname, json_string_value(cname)); /* length checked by has_cname */
	if ((err = get_int(&c->clevel, cfg, "blosc", "clevel", 1, 0, 9)) < 0 ||
	    (err = get_int(&c->shuffle, cfg, "blosc", "shuffle", 1, -1, 2)) < 0 ||
	    (err = get_int(&c->blocksize, cfg, "blosc", "blocksize", 0, 0, INT_MAX)) < 0)
		return err;
	return 0;
}

static int parse_level(nz_codec *c, const json_t *cfg, const char *id, int lo, int hi)
{
	static const field fields[] = {{"level", 1}, {NULL, 0}};
	static const field zstd_fields[] = {{"level", 1}, {"checksum", 0}, {NULL, 0}};
	int err;
	json_t *ck = json_object_get(cfg, "checksum");
	if ((err = check_keys(cfg, id, c->kind == NZ_CODEC_ZSTD ? zstd_fields : fields)) < 0)
		return err;
	/* Decoding verifies a checksum whenever a frame has one; encoding
	 * writes one when asked (numcodecs >= 0.13, Zarr v3's zstd). */
	if (ck && !json_is_boolean(ck))
		return nz__error_set(NZ_EFORMAT, "codec 'zstd': field 'checksum' must be a boolean");
	c->checksum = json_is_true(ck);
	return get_int(&c->level, cfg, id, "level", 1, lo, hi);
}

/* Only the trailing checksum is Zarr v3's layout; numcodecs' "start" is not. */
static int parse_crc32c(const json_t *cfg)
{
	static const field fields[] = {{"location", 0}, {NULL, 0}};
	int err;
	json_t *loc = json_object_get(cfg, "location");
	if ((err = check_keys(cfg, "crc32c", fields)) < 0)
		return err;
	if (loc && !json_is_string(loc))
		return nz__error_set(NZ_EFORMAT, "codec 'crc32c': field 'location' must be a string");
	if (loc && strcmp(json_string_value(loc), "end") != 0)
		return nz__error_set(NZ_EUNSUPPORTED,
				     "codec 'crc32c': location '%s' is not supported (only 'end')",
				     json_string_value(loc));
	return 0;
}

static int parse(nz_codec *c, const json_t *cfg, const char *id)
{
	static const field lz4_fields[] = {{"acceleration", 1}, {NULL, 0}};
	static const field shuffle_fields[] = {{"elementsize", 1}, {NULL, 0}};
	int err;
	if (strcmp(id, "blosc") == 0) {
		c->kind = NZ_CODEC_BLOSC;
		return parse_blosc(c, cfg);
	}
	if (strcmp(id, "zstd") == 0) {
		c->kind = NZ_CODEC_ZSTD;
		return parse_level(c, cfg, id, ZSTD_minCLevel(), ZSTD_maxCLevel());
	}
	if (strcmp(id, "zlib") == 0 || strcmp(id, "gzip") == 0) {
		c->kind = id[0] == 'z' ? NZ_CODEC_ZLIB : NZ_CODEC_GZIP;
		return parse_level(c, cfg, id, -1, 9); /* -1 = zlib's default (6) */
	}
	if (strcmp(id, "lz4") == 0) {
		c->kind = NZ_CODEC_LZ4;
		if ((err = check_keys(cfg, id, lz4_fields)) < 0)
			return err;
		/* LZ4 treats < 1 as 1 and caps large values itself, as in numcodecs. */
		return get_int(&c->acceleration, cfg, id, "acceleration", 1, INT_MIN, INT_MAX);
	}
	if (strcmp(id, "crc32c") == 0) {
		c->kind = NZ_CODEC_CRC32C;
		return parse_crc32c(cfg);
	}
	if (strcmp(id, "shuffle") == 0) {
		c->kind = NZ_CODEC_SHUFFLE;
		if ((err = check_keys(cfg, id, shuffle_fields)) < 0)
			return err;
		return get_int(&c->elementsize, cfg, id, "elementsize", 1, 0, INT_MAX);
	}
	return nz__error_set(NZ_EUNSUPPORTED, "codec '%s' is not supported", id);
}

int nz__codec_from_json(nz_codec **out, const json_t *config)
{
	int err;
	json_t *id;
	nz_codec *c;
	if (!out)
		return nz__error_set(NZ_EINVAL, "nz__codec_from_json: NULL out");
	*out = NULL;
	if (!json_is_object(config))
		return nz__error_set(NZ_EFORMAT, "codec config is not a JSON object");
	id = json_object_get(config, "id");
	if (!json_is_string(id))
		return nz__error_set(NZ_EFORMAT, "codec config lacks a string 'id'");
	if (!(c = nz__calloc(1, sizeof *c)))
		return nz__error_set(NZ_ENOMEM, "out of memory parsing codec '%s'",
				     json_string_value(id));
	if ((err = parse(c, config, json_string_value(id))) < 0) {
		nz__free(c);
		return err;
	}
	*out = c;
	return 0;
}

int nz__compressor_checksum(const nz_compressor *c)
{
	return c->version >= 2 && c->checksum;
}

int nz__codec_from_compressor(nz_codec **out, const nz_compressor *cmp)
{
	int err = 0;
	json_t *cfg = NULL;
	if (!out)
		return nz__error_set(NZ_EINVAL, "nz__codec_from_compressor: NULL out");
	*out = NULL;
	if (!cmp || !cmp->id)
		return nz__error_set(NZ_EINVAL, "compressor or its id is NULL");
	if (cmp->version != 1 && cmp->version != NZ_COMPRESSOR_VERSION)
		return nz__error_set(NZ_EUNSUPPORTED, "compressor version %u, expected 1..%u",
				     cmp->version, (unsigned)NZ_COMPRESSOR_VERSION);
	if (strcmp(cmp->id, "none") == 0)
		return 0;
	nz__alloc_init();
	/* Going through JSON gives one validation path for both entry points. */
	if (strcmp(cmp->id, "blosc") == 0)
		cfg = json_pack("{ss ss si si si}", "id", "blosc", "cname", cmp->cname ? cmp->cname : "",
				"clevel", cmp->clevel, "shuffle", cmp->shuffle, "blocksize",
				cmp->blocksize);
	else if (strcmp(cmp->id, "lz4") == 0)
		cfg = json_pack("{ss si}", "id", "lz4", "acceleration", 1);
	else if (strcmp(cmp->id, "zstd") == 0 && nz__compressor_checksum(cmp))
		cfg = json_pack("{ss si sb}", "id", "zstd", "level", cmp->clevel, "checksum", 1);
	else
		cfg = json_pack("{ss si}", "id", cmp->id, "level", cmp->clevel);
	if (!cfg)
		return nz__error_set(NZ_ENOMEM, "out of memory building compressor '%s'", cmp->id);
	err = nz__codec_from_json(out, cfg);
	json_decref(cfg);
	return err;
}

int nz__codec_to_json(json_t **out, const nz_codec *c)
{
	json_t *j = NULL;
	if (!out || !c)
		return nz__error_set(NZ_EINVAL, "nz__codec_to_json: NULL argument");
	nz__alloc_init();
	/* Keys in sorted order, as zarr-python's json.dumps(sort_keys=True). */
	switch (c->kind) {
	case NZ_CODEC_BLOSC:
		j = json_pack("{si si ss ss si}", "blocksize", c->blocksize, "clevel", c->clevel,
			      "cname", c->cname, "id", "blosc", "shuffle", c->shuffle);
		break;
	case NZ_CODEC_LZ4:
		j = json_pack("{si ss}", "acceleration", c->acceleration, "id", "lz4");
		break;
	case NZ_CODEC_SHUFFLE:
		j = json_pack("{si ss}", "elementsize", c->elementsize, "id", "shuffle");
		break;
	case NZ_CODEC_CRC32C:
		j = json_pack("{ss ss}", "id", "crc32c", "location", "end");
		break;
	case NZ_CODEC_ZSTD:
		/* numcodecs 0.11 has no checksum: written only when set */
		j = c->checksum ? json_pack("{sb ss si}", "checksum", 1, "id", "zstd", "level", c->level)
				: json_pack("{ss si}", "id", "zstd", "level", c->level);
		break;
	default:
		j = json_pack("{ss si}", "id", nz__codec_id(c), "level", c->level);
		break;
	}
	if (!j)
		return nz__error_set(NZ_ENOMEM, "out of memory serialising codec '%s'",
				     nz__codec_id(c));
	*out = j;
	return 0;
}

void nz__codec_free(nz_codec *codec)
{
	nz__free(codec);
}

const char *nz__codec_id(const nz_codec *codec)
{
	static const char *const ids[] = {"blosc", "zstd", "lz4", "zlib", "gzip", "shuffle",
						 "crc32c"};
	return codec ? ids[codec->kind] : "none";
}

int nz__codec_encode(const nz_codec *c, const void *src, size_t srclen, size_t itemsize,
		     nz_buf *dst)
{
	if (!c || !dst || (!src && srclen))
		return nz__error_set(NZ_EINVAL, "nz__codec_encode: NULL argument");
	dst->len = 0;
	switch (c->kind) {
	case NZ_CODEC_BLOSC: return nz__blosc_encode(c, src, srclen, itemsize, dst);
	case NZ_CODEC_ZSTD: return nz__zstd_encode(c->level, c->checksum, src, srclen, dst);
	case NZ_CODEC_LZ4: return nz__lz4_encode(c->acceleration, src, srclen, dst);
	case NZ_CODEC_ZLIB: return nz__deflate_encode(0, c->level, src, srclen, dst);
	case NZ_CODEC_GZIP: return nz__deflate_encode(1, c->level, src, srclen, dst);
	case NZ_CODEC_SHUFFLE: return nz__shuffle_encode(c->elementsize, src, srclen, dst);
	case NZ_CODEC_CRC32C: return nz__crc32c_encode(src, srclen, dst);
	}
	return nz__error_set(NZ_EINVAL, "corrupt codec");
}

int nz__codec_decode(const nz_codec *c, const void *src, size_t srclen, size_t expected,
		     nz_buf *dst)
{
	int err = NZ_EINVAL;
	if (!c || !dst || (!src && srclen))
		return nz__error_set(NZ_EINVAL, "nz__codec_decode: NULL argument");
	dst->len = 0;
	switch (c->kind) {
	case NZ_CODEC_BLOSC: err = nz__blosc_decode(src, srclen, expected, dst); break;
	case NZ_CODEC_ZSTD: err = nz__zstd_decode(src, srclen, expected, dst); break;
	case NZ_CODEC_LZ4: err = nz__lz4_decode(src, srclen, expected, dst); break;
	case NZ_CODEC_ZLIB: err = nz__deflate_decode(0, src, srclen, expected, dst); break;
	case NZ_CODEC_GZIP: err = nz__deflate_decode(1, src, srclen, expected, dst); break;
	case NZ_CODEC_SHUFFLE: err = nz__shuffle_decode(c->elementsize, src, srclen, dst); break;
	case NZ_CODEC_CRC32C: err = nz__crc32c_decode(src, srclen, expected, dst); break;
	}
	if (err == 0 && expected && dst->len != expected)
		err = nz__error_set(NZ_EFORMAT, "codec '%s': decoded %zu bytes, expected %zu",
				    nz__codec_id(c), dst->len, expected);
	return err;
}
