/* Zarr v3 data types and fill values, in the names and JSON forms
 * zarr-python 3.4 writes, mapped onto the numpy dtypes the rest of the
 * library speaks (nz__dtype). Canonical fill JSON is made from the fill's
 * bytes, so every accepted spelling (v2's too, for upper layers that pass
 * them) comes out as zarr-python would write it. See docs/format.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

static const struct {
	const char *v3, *np;
} simple[] = {
	{ "bool", "|b1" },   { "int8", "|i1" },    { "int16", "<i2" },   { "int32", "<i4" },
	{ "int64", "<i8" },  { "uint8", "|u1" },   { "uint16", "<u2" },  { "uint32", "<u4" },
	{ "uint64", "<u8" }, { "float32", "<f4" }, { "float64", "<f8" },
};

/* length_bytes of a {"name", "configuration": {"length_bytes": n}} type. */
static int length_bytes(size_t *n, const json_t *dt, const char *name, const char *what)
{
	json_t *cfg = json_object_get(dt, "configuration"), *v = json_object_get(cfg, "length_bytes");
	if (!json_is_object(cfg) || json_object_size(cfg) != 1 || !json_is_integer(v) || json_integer_value(v) < 1 ||
	    json_integer_value(v) > (1 << 30))
		return nz__error_set(NZ_EFORMAT, "%s: data_type '%s' needs configuration {\"length_bytes\": n >= 1}",
				     what, name);
	*n = (size_t)json_integer_value(v);
	return 0;
}

/* The numpy spelling of one non-struct, non-object v3 data type. */
static int np_simple(char out[40], const json_t *dt, int big, const char *what)
{
	const char *name = json_is_string(dt) ? json_string_value(dt) : json_string_value(json_object_get(dt, "name"));
	size_t i, n;
	int err;
	if (!name)
		return nz__error_set(NZ_EFORMAT, "%s: 'data_type' must be a name or an object with a 'name'", what);
	if (json_is_string(dt)) {
		for (i = 0; i < sizeof simple / sizeof simple[0]; i++)
			if (strcmp(simple[i].v3, name) == 0) {
				strcpy(out, simple[i].np);
				if (big && out[0] == '<')
					out[0] = '>';
				return 0;
			}
	} else if (strcmp(name, "null_terminated_bytes") == 0) {
		if ((err = length_bytes(&n, dt, name, what)) < 0)
			return err;
		snprintf(out, 40, "|S%zu", n);
		return 0;
	} else if (strcmp(name, "fixed_length_utf32") == 0) {
		if ((err = length_bytes(&n, dt, name, what)) < 0)
			return err;
		if (n % 4)
			return nz__error_set(NZ_EFORMAT, "%s: fixed_length_utf32 length_bytes %zu is not a multiple of 4",
					     what, n);
		snprintf(out, 40, "%cU%zu", big ? '>' : '<', n / 4);
		return 0;
	}
	return nz__error_set(NZ_EUNSUPPORTED, "%s: data_type '%s' is not supported", what, name);
}

/* struct (zarr-python >= 3.2: fields [{"name", "data_type"}]) or 3.1's
 * structured (fields [[name, data_type]]) as numpy's [[name, dtype], ...]. */
static int np_struct(json_t **out, const json_t *dt, int big, const char *what)
{
	json_t *cfg = json_object_get(dt, "configuration"), *fields = json_object_get(cfg, "fields"), *l;
	size_t i;
	int err = 0;
	if (!json_is_object(cfg) || !json_is_array(fields))
		return nz__error_set(NZ_EFORMAT, "%s: struct data_type needs configuration {\"fields\": [...]}", what);
	if (!(l = json_array()))
		return nz__error_set(NZ_ENOMEM, "out of memory reading the data_type of %s", what);
	for (i = 0; i < json_array_size(fields); i++) {
		json_t *f = json_array_get(fields, i), *name, *ft;
		char np[40];
		if (json_is_object(f))
			name = json_object_get(f, "name"), ft = json_object_get(f, "data_type");
		else
			name = json_array_get(f, 0), ft = json_array_size(f) == 2 ? json_array_get(f, 1) : NULL;
		if (!json_is_string(name) || !ft) {
			err = nz__error_set(NZ_EFORMAT, "%s: struct field %zu: expected a name and a data_type", what, i);
			break;
		}
		if ((err = np_simple(np, ft, big, what)) < 0)
			break;
		if (json_array_append_new(l, json_pack("[O,s]", name, np)) < 0) {
			err = nz__error_set(NZ_ENOMEM, "out of memory reading the data_type of %s", what);
			break;
		}
	}
	if (err < 0)
		json_decref(l);
	else
		*out = l;
	return err;
}

int nz__dtype3_parse(nz__dtype *dt, nz_object_codec *oc, const json_t *v, int big, const char *what)
{
	const char *name = json_is_string(v) ? json_string_value(v) : json_string_value(json_object_get(v, "name"));
	json_t *np = NULL;
	char s[40];
	int err;
	*oc = NZ_OBJECT_NONE;
	memset(dt, 0, sizeof *dt);
	if (!v)
		return nz__error_set(NZ_EFORMAT, "%s: missing key 'data_type'", what);
	if (json_is_string(v) && (strcmp(name, "string") == 0 || strcmp(name, "variable_length_bytes") == 0)) {
		*oc = name[0] == 's' ? NZ_OBJECT_VLEN_UTF8 : NZ_OBJECT_VLEN_BYTES;
		strcpy(s, "|O");
	} else if (json_is_object(v) && name && (strcmp(name, "struct") == 0 || strcmp(name, "structured") == 0)) {
		if ((err = np_struct(&np, v, big, what)) < 0)
			return err;
	} else if ((err = np_simple(s, v, big, what)) < 0) {
		return err;
	}
	if (!np && !(np = json_string(s)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading the data_type of %s", what);
	err = nz__dtype_parse_ex(dt, np, 1, what);
	json_decref(np);
	return err;
}

/* The v3 data type of one simple numpy kind/size. */
static json_t *v3_simple(char kind, size_t size)
{
	char np[8];
	size_t i;
	if (kind == 'S' || kind == 'U')
		return json_pack("{s:s,s:{s:I}}", "name", kind == 'S' ? "null_terminated_bytes" : "fixed_length_utf32",
				 "configuration", "length_bytes", (json_int_t)size);
	snprintf(np, sizeof np, "%c%c%zu", size == 1 ? '|' : '<', kind, size);
	for (i = 0; i < sizeof simple / sizeof simple[0]; i++)
		if (strcmp(simple[i].np, np) == 0)
			return json_string(simple[i].v3);
	return NULL; /* parse_simple admits nothing else */
}

int nz__dtype3_json(json_t **out, const nz__dtype *dt, nz_object_codec oc, const char *what)
{
	json_t *fields = NULL;
	size_t i;
	*out = NULL;
	if (dt->kind == 'O') {
		if (oc == NZ_OBJECT_JSON2 || oc == NZ_OBJECT_PICKLE)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: the %s object codec has no Zarr v3 data type", what,
					     oc == NZ_OBJECT_JSON2 ? "json2" : "pickle");
		*out = json_string(oc == NZ_OBJECT_VLEN_UTF8 ? "string" : "variable_length_bytes");
	} else if (dt->kind == 'V') {
		if (!(fields = json_array()))
			goto nomem;
		for (i = 0; i < dt->nfields; i++)
			if (json_array_append_new(fields, json_pack("{s:s,s:o}", "name", dt->fields[i].name, "data_type",
								   v3_simple(dt->fields[i].kind, dt->fields[i].itemsize))) < 0)
				goto nomem;
		*out = json_pack("{s:s,s:{s:o}}", "name", "struct", "configuration", "fields", fields);
		fields = NULL;
	} else {
		*out = v3_simple(dt->kind, dt->itemsize);
	}
	if (*out)
		return 0;
nomem:
	json_decref(fields);
	return nz__error_set(NZ_ENOMEM, "out of memory writing the data_type of %s", what);
}

/* --- fill values --- */

static uint64_t get_uint(const unsigned char *b, size_t size, int big)
{
	uint64_t u = 0;
	size_t i;
	for (i = 0; i < size; i++)
		u |= (uint64_t)b[big ? size - 1 - i : i] << (8 * i);
	return u;
}

static void put_uint(unsigned char *b, size_t size, int big, uint64_t u)
{
	size_t i;
	for (i = 0; i < size; i++)
		b[big ? size - 1 - i : i] = (unsigned char)(u >> (8 * i));
}

static int put_utf8(nz_buf *o, uint32_t c)
{
	unsigned char s[4];
	size_t n;
	if (c < 0x80)
		s[0] = (unsigned char)c, n = 1;
	else if (c < 0x800)
		s[0] = (unsigned char)(0xc0 | c >> 6), s[1] = (unsigned char)(0x80 | (c & 0x3f)), n = 2;
	else if (c < 0x10000)
		s[0] = (unsigned char)(0xe0 | c >> 12), s[1] = (unsigned char)(0x80 | ((c >> 6) & 0x3f)),
		s[2] = (unsigned char)(0x80 | (c & 0x3f)), n = 3;
	else
		s[0] = (unsigned char)(0xf0 | c >> 18), s[1] = (unsigned char)(0x80 | ((c >> 12) & 0x3f)),
		s[2] = (unsigned char)(0x80 | ((c >> 6) & 0x3f)), s[3] = (unsigned char)(0x80 | (c & 0x3f)), n = 4;
	return nz__buf_append(o, s, n);
}

/* UTF-8 text (valid: jansson checked it) into size/4 code points; numpy
 * truncates longer text and pads with NULs. */
static void utf32_from_text(unsigned char *b, size_t size, int big, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	size_t k = 0;
	memset(b, 0, size);
	while (p < end && k + 4 <= size) {
		uint32_t c = *p++;
		int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
		if (extra)
			c &= 0x3fu >> extra;
		while (extra-- > 0 && p < end)
			c = (c << 6) | (*p++ & 0x3fu);
		put_uint(b + k, 4, big, c);
		k += 4;
	}
}

/* One element of a simple kind from its JSON value. Beyond v2's forms
 * (nz__fill_simple), floats may be "0x..." bit patterns and 'U' is text. */
static int fill_one(unsigned char *b, char kind, size_t size, int big, const json_t *v, const char *what)
{
	const char *s = json_string_value(v);
	json_t *ignored = NULL;
	int err;
	if (kind == 'U') {
		if (!s)
			return nz__error_set(NZ_EFORMAT, "%s: fill_value of a fixed_length_utf32 type must be a string, "
					     "not %s", what, nz__json_type_name(v));
		utf32_from_text(b, size, big, s, json_string_length(v));
		return 0;
	}
	if (kind == 'f' && s && s[0] == '0' && s[1] == 'x') {
		char *end;
		unsigned long long u = strtoull(s + 2, &end, 16);
		if (*end || strlen(s + 2) != 2 * size)
			return nz__error_set(NZ_EFORMAT, "%s: fill_value '%s' is not a %zu-byte hex float", what, s, size);
		put_uint(b, size, big, u);
		return 0;
	}
	if ((err = nz__fill_simple(b, &ignored, kind, size, big, v, what)) == 0)
		json_decref(ignored);
	return err;
}

/* zarr-python's JSON for one element (the canonical form). */
static int json_one(json_t **out, const unsigned char *b, char kind, size_t size, int big, const char *what)
{
	uint64_t u;
	*out = NULL;
	if (kind == 'b') {
		*out = json_boolean(b[0] != 0);
	} else if (kind == 'i' || kind == 'u') {
		u = get_uint(b, size, big);
		if (kind == 'i' && size < 8 && (u >> (8 * size - 1)))
			u |= ~(uint64_t)0 << (8 * size); /* sign-extend */
		if (kind == 'u' && u > INT64_MAX)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: uint64 fill_value above 2^63-1 is not supported", what);
		*out = json_integer((json_int_t)u);
	} else if (kind == 'f') {
		double d;
		u = get_uint(b, size, big);
		if (size == 4) {
			uint32_t w = (uint32_t)u;
			float f;
			memcpy(&f, &w, 4);
			d = f;
		} else {
			memcpy(&d, &u, 8);
		}
		*out = isnan(d) ? json_string("NaN") : isinf(d) ? json_string(d < 0 ? "-Infinity" : "Infinity") : json_real(d);
	} else if (kind == 'S') {
		size_t keep = size;
		char *enc = NULL;
		int err;
		while (keep > 0 && b[keep - 1] == 0) /* np.bytes_ drops trailing NULs */
			keep--;
		if ((err = nz__base64_encode(&enc, b, keep)) < 0)
			return err;
		*out = json_string(enc);
		nz__free(enc);
	} else { /* 'U': str(np.str_) drops trailing NULs */
		nz_buf t = { 0 };
		size_t k, n = size / 4;
		int err = 0;
		while (n > 0 && get_uint(b + 4 * (n - 1), 4, big) == 0)
			n--;
		for (k = 0; k < n && err == 0; k++) {
			uint32_t c = (uint32_t)get_uint(b + 4 * k, 4, big);
			if (c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
				err = nz__error_set(NZ_EFORMAT, "%s: fill_value holds code point 0x%x, not Unicode", what, c);
			else
				err = put_utf8(&t, c);
		}
		if (err == 0)
			*out = json_stringn(t.len ? (const char *)t.data : "", t.len);
		nz__buf_free(&t);
		if (err < 0)
			return err;
	}
	return *out ? 0 : nz__error_set(NZ_ENOMEM, "out of memory writing the fill_value of %s", what);
}

/* Structs: an object of per-field values (missing fields: zero), or the
 * base64 of the packed element (older zarr-python), or 0/null = zeros. */
static int fill_struct(unsigned char *b, const nz__dtype *dt, const json_t *v, const char *what)
{
	size_t i;
	int err;
	if (json_is_object(v)) {
		for (i = 0; i < dt->nfields; i++) {
			const nz__dtype_field *f = &dt->fields[i];
			json_t *fv = json_object_get(v, f->name);
			if (fv && (err = fill_one(b + f->offset, f->kind, f->itemsize, f->big_endian, fv, what)) < 0)
				return err;
		}
		return 0;
	}
	if (json_is_string(v)) {
		json_t *ignored = NULL;
		if ((err = nz__fill_parse(b, &ignored, dt, v, what)) == 0)
			json_decref(ignored);
		return err;
	}
	if (json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0))
		return 0;
	return nz__error_set(NZ_EFORMAT, "%s: fill_value of a struct must be an object, not %s", what,
			     nz__json_type_name(v));
}

static int canon_struct(json_t **out, const unsigned char *b, const nz__dtype *dt, const char *what)
{
	json_t *o = json_object(), *fv = NULL;
	size_t i;
	int err = 0;
	if (!o)
		return nz__error_set(NZ_ENOMEM, "out of memory writing the fill_value of %s", what);
	for (i = 0; i < dt->nfields && err == 0; i++) {
		const nz__dtype_field *f = &dt->fields[i];
		if ((err = json_one(&fv, b + f->offset, f->kind, f->itemsize, f->big_endian, what)) == 0 &&
		    json_object_set_new(o, f->name, fv) < 0)
			err = nz__error_set(NZ_ENOMEM, "out of memory writing the fill_value of %s", what);
	}
	if (err < 0)
		json_decref(o);
	else
		*out = o;
	return err;
}

int nz__fill3_parse(unsigned char *bytes, json_t **canon, const nz__dtype *dt, nz_object_codec oc,
		    const json_t *v, const char *what)
{
	int err;
	*canon = NULL;
	if (dt->kind == 'O') {
		/* string: the text; variable_length_bytes: its base64. v2's null
		 * and 0 (what upper layers pass) mean the empty value. */
		if (json_is_null(v) || (json_is_integer(v) && json_integer_value(v) == 0))
			*canon = json_string("");
		else if (!json_is_string(v))
			return nz__error_set(NZ_EFORMAT, "%s: fill_value of a %s array must be a string, not %s", what,
					     oc == NZ_OBJECT_VLEN_UTF8 ? "string" : "variable_length_bytes",
					     nz__json_type_name(v));
		else if (oc == NZ_OBJECT_VLEN_BYTES) {
			unsigned char *raw = NULL;
			size_t n = 0;
			if ((err = nz__base64_decode(&raw, &n, json_string_value(v), what)) < 0)
				return err;
			nz__free(raw);
			*canon = json_copy((json_t *)v);
		} else {
			*canon = json_copy((json_t *)v);
		}
		return *canon ? 0 : nz__error_set(NZ_ENOMEM, "out of memory reading the fill_value of %s", what);
	}
	memset(bytes, 0, dt->itemsize);
	if (dt->kind == 'V')
		err = fill_struct(bytes, dt, v, what);
	else if (json_is_null(v))
		err = 0; /* v2's null: zeros */
	else
		err = fill_one(bytes, dt->kind, dt->itemsize, dt->big_endian, v, what);
	if (err < 0)
		return err;
	if (dt->kind == 'V')
		return canon_struct(canon, bytes, dt, what);
	return json_one(canon, bytes, dt->kind, dt->itemsize, dt->big_endian, what);
}
