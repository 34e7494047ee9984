/* numpy dtype strings and fill values as Zarr v2 (zarr-python 2.13) writes
 * them; see docs/format.md. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

/* Parse "<i4", "|b1", "|S12", "|O", ">f8" into kind/itemsize/endianness.
 * The canonical spelling (numpy's dtype.str) uses '|' when byte order does
 * not matter and '<'/'>' otherwise. */
static int parse_simple(char *kind, size_t *itemsize, int *big, char canon[32], const char *s,
			int allow_utf32, const char *what)
{
	char order = s[0], k;
	const char *num;
	char *end;
	unsigned long long n = 0;

	if (order != '<' && order != '>' && order != '|' && order != '=')
		return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': expected a byte order '<', '>' or '|' first", what, s);
	k = s[1];
	if (k == '\0') /* s + 2 would be past the terminator */
		return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': missing kind and item size", what, s);
	num = s + 2;
	if (k == 'O' && *num == '\0') {
		*kind = 'O', *itemsize = 0, *big = 0;
		strcpy(canon, "|O");
		return 0;
	}
	if (*num < '0' || *num > '9')
		return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': missing item size", what, s);
	n = strtoull(num, &end, 10);
	if (*end != '\0' || n == 0 || n > (1u << 30))
		return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': bad item size", what, s);
	switch (k) {
	case 'b':
		if (n != 1)
			return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': bool must be 1 byte", what, s);
		break;
	case 'i':
	case 'u':
		if (n != 1 && n != 2 && n != 4 && n != 8)
			return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': integer size must be 1, 2, 4 or 8", what, s);
		break;
	case 'f':
		if (n != 4 && n != 8)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: dtype '%s': only float32 and float64 are supported", what, s);
		break;
	case 'S': break;
	case 'U':
		/* Zarr v3's fixed_length_utf32: n code points of 4 bytes. */
		if (!allow_utf32)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: dtype '%s' is not supported", what, s);
		if (n > (1u << 28))
			return nz__error_set(NZ_EFORMAT, "%s: dtype '%s': bad item size", what, s);
		*kind = k;
		*itemsize = (size_t)n * 4;
		*big = order == '>';
		snprintf(canon, 32, "%cU%llu", *big ? '>' : '<', n);
		return 0;
	case 'c':
	case 'M':
	case 'm':
	case 'V':
		return nz__error_set(NZ_EUNSUPPORTED, "%s: dtype '%s' is not supported", what, s);
	default:
		return nz__error_set(NZ_EFORMAT, "%s: unknown dtype '%s'", what, s);
	}
	*kind = k;
	*itemsize = (size_t)n;
	*big = order == '>' && n > 1 && k != 'S';
	snprintf(canon, 32, "%c%c%llu", (n == 1 || k == 'S') ? '|' : (*big ? '>' : '<'), k, n);
	return 0;
}

static int parse_fields(nz__dtype *dt, const json_t *list, int allow_utf32, const char *what)
{
	size_t i, n = json_array_size(list), off = 0;
	char canon[32];
	int err = 0;
	if (n == 0)
		return nz__error_set(NZ_EFORMAT, "%s: structured dtype has no fields", what);
	if (!(dt->fields = nz__calloc(n, sizeof *dt->fields)))
		return nz__error_set(NZ_ENOMEM, "out of memory parsing the dtype of %s", what);
	dt->nfields = n;
	for (i = 0; i < n; i++) {
		json_t *f = json_array_get(list, i);
		nz__dtype_field *fd = &dt->fields[i];
		json_t *name = json_array_get(f, 0), *ft = json_array_get(f, 1);
		if (!json_is_array(f) || !json_is_string(name) || !ft)
			return nz__error_set(NZ_EFORMAT, "%s: structured dtype field %zu: expected [name, dtype]", what, i);
		if (json_array_size(f) != 2 || !json_is_string(ft))
			return nz__error_set(NZ_EUNSUPPORTED, "%s: structured dtype field '%s': nested or subarray fields are not supported",
					     what, json_string_value(name));
		if ((err = parse_simple(&fd->kind, &fd->itemsize, &fd->big_endian, canon,
					json_string_value(ft), allow_utf32, what)) < 0)
			return err;
		if (fd->kind == 'O')
			return nz__error_set(NZ_EUNSUPPORTED, "%s: structured dtype field '%s': object fields are not supported",
					     what, json_string_value(name));
		if (!(fd->name = nz__strdup(json_string_value(name))))
			return nz__error_set(NZ_ENOMEM, "out of memory parsing the dtype of %s", what);
		fd->offset = off;
		if (off > (size_t)-1 - fd->itemsize)
			return nz__error_set(NZ_EFORMAT, "%s: structured dtype too large", what);
		off += fd->itemsize;
		/* Store the canonical field dtype so the list we write back is
		 * numpy's descr. */
		if (json_array_set_new(f, 1, json_string(canon)) < 0)
			return nz__error_set(NZ_ENOMEM, "out of memory parsing the dtype of %s", what);
	}
	dt->kind = 'V';
	dt->itemsize = off;
	return 0;
}

int nz__dtype_parse(nz__dtype *dt, const json_t *value, const char *what)
{
	return nz__dtype_parse_ex(dt, value, 0, what);
}

int nz__dtype_parse_ex(nz__dtype *dt, const json_t *value, int allow_utf32, const char *what)
{
	char canon[32];
	int err = 0;
	memset(dt, 0, sizeof *dt);
	if (json_is_string(value)) {
		if ((err = parse_simple(&dt->kind, &dt->itemsize, &dt->big_endian, canon,
					json_string_value(value), allow_utf32, what)) < 0)
			goto done;
		dt->json = json_string(canon);
		dt->str = nz__strdup(canon);
	} else if (json_is_array(value)) {
		if (!(dt->json = json_deep_copy(value))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory parsing the dtype of %s", what);
			goto done;
		}
		if ((err = parse_fields(dt, dt->json, allow_utf32, what)) < 0)
			goto done;
		if ((err = nz__json_dumps(&dt->str, dt->json, NZ_JSON_COMPACT)) < 0)
			goto done;
	} else {
		err = nz__error_set(NZ_EFORMAT, "%s: 'dtype' must be a string or a list, not %s", what,
				    nz__json_type_name(value));
		goto done;
	}
	if (!dt->json || !dt->str)
		err = nz__error_set(NZ_ENOMEM, "out of memory parsing the dtype of %s", what);
done:
	if (err < 0)
		nz__dtype_clear(dt);
	return err;
}

void nz__dtype_clear(nz__dtype *dt)
{
	size_t i;
	for (i = 0; i < dt->nfields; i++)
		nz__free(dt->fields[i].name);
	nz__free(dt->fields);
	nz__free(dt->str);
	json_decref(dt->json);
	memset(dt, 0, sizeof *dt);
}

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

int nz__base64_encode(char **out, const unsigned char *d, size_t len)
{
	size_t i, o = 0;
	char *s;
	if (len > ((size_t)-1 - 4) / 4 * 3)
		return nz__error_set(NZ_EINVAL, "base64: input too large");
	if (!(s = nz__malloc((len + 2) / 3 * 4 + 1)))
		return nz__error_set(NZ_ENOMEM, "out of memory encoding base64");
	for (i = 0; i + 2 < len; i += 3) {
		unsigned long v = (unsigned long)d[i] << 16 | (unsigned long)d[i + 1] << 8 | d[i + 2];
		s[o++] = b64[v >> 18], s[o++] = b64[(v >> 12) & 63];
		s[o++] = b64[(v >> 6) & 63], s[o++] = b64[v & 63];
	}
	if (i < len) {
		unsigned long v = (unsigned long)d[i] << 16 | (i + 1 < len ? (unsigned long)d[i + 1] << 8 : 0);
		s[o++] = b64[v >> 18], s[o++] = b64[(v >> 12) & 63];
		s[o++] = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		s[o++] = '=';
	}
	s[o] = '\0';
	*out = s;
	return 0;
}

int nz__base64_decode(unsigned char **out, size_t *outlen, const char *text, const char *what)
{
	size_t n = strlen(text), i, o = 0;
	unsigned long acc = 0;
	int bits = 0;
	unsigned char *d;
	*out = NULL;
	if (!(d = nz__malloc(n / 4 * 3 + 3)))
		return nz__error_set(NZ_ENOMEM, "out of memory decoding base64");
	for (i = 0; i < n && text[i] != '='; i++) {
		const char *p = text[i] ? strchr(b64, text[i]) : NULL;
		if (!p) {
			nz__free(d);
			return nz__error_set(NZ_EFORMAT, "%s: invalid base64 character '%c' in fill_value", what, text[i]);
		}
		acc = (acc << 6) | (unsigned long)(p - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[o++] = (unsigned char)(acc >> bits);
		}
	}
	*out = d;
	*outlen = o;
	return 0;
}

/* Store an integer or float value as dtype `kind`/`size` little-endian. */
static void put_number(unsigned char *b, char kind, size_t size, long long iv, double dv, int big)
{
	unsigned char tmp[8];
	size_t i;
	if (kind == 'f' && size == 4) {
		float f = (float)dv;
		memcpy(tmp, &f, 4);
	} else if (kind == 'f') {
		memcpy(tmp, &dv, 8);
	} else {
		unsigned long long u = (unsigned long long)iv;
		for (i = 0; i < 8; i++)
			tmp[i] = (unsigned char)(u >> (8 * i));
	}
	for (i = 0; i < size; i++)
		b[i] = tmp[big ? size - 1 - i : i];
}

static int int_fits(char kind, size_t size, long long v)
{
	if (size == 8)
		return kind == 'i' || v >= 0; /* uint64 above INT64_MAX cannot reach us */
	if (kind == 'i')
		return v >= -(1LL << (8 * size - 1)) && v < (1LL << (8 * size - 1));
	return v >= 0 && v < (1LL << (8 * size));
}

/* One numeric/bool/bytes value of a simple kind: decode `value` into `b`
 * and return zarr's canonical JSON for it (*canon). */
int nz__fill_simple(unsigned char *b, json_t **canon, char kind, size_t size, int big,
		       const json_t *v, const char *what)
{
	double d;
	long long iv;
	if (kind == 'b') {
		if (!json_is_boolean(v) && !json_is_integer(v))
			goto bad;
		b[0] = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
		*canon = json_boolean(b[0]);
	} else if (kind == 'i' || kind == 'u') {
		if (json_is_integer(v))
			iv = json_integer_value(v);
		else if (json_is_real(v) && floor(json_real_value(v)) == json_real_value(v) &&
			 fabs(json_real_value(v)) < 9.2e18)
			iv = (long long)json_real_value(v);
		else
			goto bad;
		if (!int_fits(kind, size, iv))
			return nz__error_set(NZ_EFORMAT, "%s: fill_value %lld out of range for %c%zu", what, iv, kind, size);
		put_number(b, kind, size, iv, 0, big);
		*canon = json_integer(iv);
	} else if (kind == 'f') {
		const char *s = json_string_value(v);
		if (json_is_number(v))
			d = json_number_value(v);
		else if (s && strcmp(s, "NaN") == 0)
			d = NAN;
		else if (s && strcmp(s, "Infinity") == 0)
			d = INFINITY;
		else if (s && strcmp(s, "-Infinity") == 0)
			d = -INFINITY;
		else
			goto bad;
		if (size == 4)
			d = (double)(float)d; /* zarr writes float(np.float32(v)) */
		put_number(b, kind, size, 0, d, big);
		*canon = isnan(d) ? json_string("NaN") : isinf(d) ? json_string(d < 0 ? "-Infinity" : "Infinity")
								   : json_real(d);
	} else { /* 'S': base64; numpy pads with NULs and truncates */
		unsigned char *raw = NULL;
		size_t rawlen = 0, keep;
		char *enc = NULL;
		int err;
		if (!json_is_string(v))
			goto bad;
		if ((err = nz__base64_decode(&raw, &rawlen, json_string_value(v), what)) < 0)
			return err;
		keep = rawlen < size ? rawlen : size;
		memset(b, 0, size);
		memcpy(b, raw, keep);
		nz__free(raw);
		/* np.bytes_ drops trailing NULs before zarr base64-encodes it. */
		while (keep > 0 && b[keep - 1] == 0)
			keep--;
		if ((err = nz__base64_encode(&enc, b, keep)) < 0)
			return err;
		*canon = json_string(enc);
		nz__free(enc);
	}
	if (!*canon)
		return nz__error_set(NZ_ENOMEM, "out of memory reading fill_value of %s", what);
	return 0;
bad:
	return nz__error_set(NZ_EFORMAT, "%s: fill_value %s is not valid for dtype %c%zu", what,
			     nz__json_type_name(v), kind, size);
}

int nz__fill_parse(unsigned char *bytes, json_t **canon, const nz__dtype *dt, const json_t *value,
		   const char *what)
{
	char *enc = NULL;
	int err;
	*canon = NULL;
	if (dt->kind == 'O') {
		if (!json_is_null(value) && !json_is_integer(value) && !json_is_string(value))
			return nz__error_set(NZ_EFORMAT, "%s: fill_value of an object array must be null, 0 or a string, not %s",
					     what, nz__json_type_name(value));
		*canon = json_deep_copy(value);
		goto check;
	}
	memset(bytes, 0, dt->itemsize);
	if (json_is_null(value)) {
		*canon = json_null();
		goto check;
	}
	if (dt->kind != 'V')
		return nz__fill_simple(bytes, canon, dt->kind, dt->itemsize, dt->big_endian, value, what);
	/* Structured: base64 of the packed element; 0 = all zeros (zarr's
	 * normalize_fill_value). */
	if (json_is_integer(value) && json_integer_value(value) == 0) {
		/* zeros already */
	} else if (json_is_string(value)) {
		unsigned char *raw = NULL;
		size_t rawlen = 0;
		if ((err = nz__base64_decode(&raw, &rawlen, json_string_value(value), what)) < 0)
			return err;
		if (rawlen != dt->itemsize) {
			nz__free(raw);
			return nz__error_set(NZ_EFORMAT, "%s: fill_value decodes to %zu bytes, dtype needs %zu",
					     what, rawlen, dt->itemsize);
		}
		memcpy(bytes, raw, rawlen);
		nz__free(raw);
	} else {
		return nz__error_set(NZ_EFORMAT, "%s: fill_value of a structured dtype must be base64 text, not %s",
				     what, nz__json_type_name(value));
	}
	if ((err = nz__base64_encode(&enc, bytes, dt->itemsize)) < 0)
		return err;
	*canon = json_string(enc);
	nz__free(enc);
check:
	if (!*canon)
		return nz__error_set(NZ_ENOMEM, "out of memory reading fill_value of %s", what);
	return 0;
}
