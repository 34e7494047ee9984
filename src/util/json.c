#include "util/json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

/* Private prefix of the non-finite marker strings. 0xff is never valid
 * UTF-8: jansson refuses it in every string it parses or builds with
 * json_string/json_stringn, so only nz__json_nonfinite (json_string_nocheck)
 * makes one, and no genuine text is ever taken for a marker. */
#define NONFINITE_PREFIX "\xffnz-nonfinite:"
/* nz__json_parse hands jansson bare NaN/Infinity as this placeholder string
 * (JSON text cannot spell 0xff) and then swaps each for a marker. */
#define PLACEHOLDER "\x01nz-nonfinite:"
#define PLACEHOLDER_JSON "\"\\u0001nz-nonfinite:"

static int put(nz_buf *out, const char *s, size_t n)
{
	return nz__buf_append(out, s, n);
}

static int puts_(nz_buf *out, const char *s)
{
	return nz__buf_append(out, s, strlen(s));
}

/* Python's repr of a float: the shortest digit string that reads back as the
 * same double (tried from 1 to 17 significant digits; glibc rounds %e
 * correctly), then laid out as float_repr_style 'short' does: positional
 * when -4 < decpt <= 16, else d.ddde+XX with at least two exponent digits. */
int nz__json_emit_double(nz_buf *out, double v)
{
	char tmp[40], digits[20], text[64];
	int prec, ndig = 0, exp10, decpt, n = 0;
	const char *p;

	if (isnan(v))
		return puts_(out, "NaN");
	if (isinf(v))
		return puts_(out, v < 0 ? "-Infinity" : "Infinity");
	for (prec = 1; prec <= 17; prec++) {
		snprintf(tmp, sizeof tmp, "%.*e", prec - 1, v);
		if (strtod(tmp, NULL) == v)
			break;
	}
	p = tmp;
	if (*p == '-')
		text[n++] = *p++;
	for (; *p && *p != 'e'; p++)
		if (*p != '.')
			digits[ndig++] = *p;
	exp10 = atoi(p + 1);
	while (ndig > 1 && digits[ndig - 1] == '0')
		ndig--;
	digits[ndig] = '\0';
	decpt = exp10 + 1;
	if (decpt > -4 && decpt <= 16) {
		int i;
		if (decpt <= 0) {
			text[n++] = '0';
			text[n++] = '.';
			for (i = decpt; i < 0; i++)
				text[n++] = '0';
			memcpy(text + n, digits, (size_t)ndig);
			n += ndig;
		} else {
			for (i = 0; i < decpt || i < ndig; i++) {
				if (i == decpt)
					text[n++] = '.';
				text[n++] = i < ndig ? digits[i] : '0';
			}
			if (decpt >= ndig) {
				text[n++] = '.';
				text[n++] = '0';
			}
		}
	} else {
		n += snprintf(text + n, sizeof text - (size_t)n, "%c%s%se%c%02d", digits[0],
			      ndig > 1 ? "." : "", digits + 1, exp10 < 0 ? '-' : '+',
			      exp10 < 0 ? -exp10 : exp10);
	}
	return put(out, text, (size_t)n);
}

json_t *nz__json_nonfinite(double v)
{
	char s[64];
	if (isfinite(v))
		return json_real(v);
	snprintf(s, sizeof s, "%s%s", NONFINITE_PREFIX,
		 isnan(v) ? "NaN" : (v < 0 ? "-Infinity" : "Infinity"));
	return json_string_nocheck(s);
}

/* The value named by `s` after a marker or placeholder prefix of plen bytes. */
static int nonfinite_value(const char *s, const char *prefix, size_t plen, double *v)
{
	if (strncmp(s, prefix, plen) != 0)
		return 0;
	s += plen;
	if (strcmp(s, "NaN") == 0)
		*v = NAN;
	else if (strcmp(s, "Infinity") == 0)
		*v = INFINITY;
	else if (strcmp(s, "-Infinity") == 0)
		*v = -INFINITY;
	else
		return 0;
	return 1;
}

int nz__json_is_nonfinite(const json_t *value, double *v)
{
	return json_is_string(value) &&
	       nonfinite_value(json_string_value(value), NONFINITE_PREFIX, sizeof NONFINITE_PREFIX - 1, v);
}

/* Decode one UTF-8 sequence (jansson only stores valid UTF-8). */
static unsigned long utf8_next(const unsigned char **pp, const unsigned char *end)
{
	const unsigned char *p = *pp;
	unsigned long c = *p++;
	int extra = c >= 0xf0 ? 3 : c >= 0xe0 ? 2 : c >= 0xc0 ? 1 : 0;
	if (extra)
		c &= 0x3f >> extra;
	while (extra-- > 0 && p < end)
		c = (c << 6) | (*p++ & 0x3f);
	*pp = p;
	return c;
}

/* json.dumps(ensure_ascii=True): \" \\ \b \f \n \r \t, every other byte
 * outside ' '..'~' as \u00XX, code points above U+FFFF as surrogate pairs. */
static int emit_string(nz_buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + len;
	char esc[32];
	int err;
	if ((err = put(out, "\"", 1)) < 0)
		return err;
	while (p < end) {
		const unsigned char *run = p;
		while (p < end && *p >= 0x20 && *p <= 0x7e && *p != '"' && *p != '\\')
			p++;
		if (p > run && (err = put(out, (const char *)run, (size_t)(p - run))) < 0)
			return err;
		if (p == end)
			break;
		switch (*p) {
		case '"': err = puts_(out, "\\\""), p++; break;
		case '\\': err = puts_(out, "\\\\"), p++; break;
		case '\b': err = puts_(out, "\\b"), p++; break;
		case '\f': err = puts_(out, "\\f"), p++; break;
		case '\n': err = puts_(out, "\\n"), p++; break;
		case '\r': err = puts_(out, "\\r"), p++; break;
		case '\t': err = puts_(out, "\\t"), p++; break;
		default: {
			unsigned long c = utf8_next(&p, end);
			if (c > 0xffff) {
				c -= 0x10000;
				snprintf(esc, sizeof esc, "\\u%04lx\\u%04lx", 0xd800 + (c >> 10),
					 0xdc00 + (c & 0x3ff));
			} else {
				snprintf(esc, sizeof esc, "\\u%04lx", c);
			}
			err = puts_(out, esc);
		}
		}
		if (err < 0)
			return err;
	}
	return put(out, "\"", 1);
}

static int newline(nz_buf *out, nz_json_style style, int depth)
{
	int err;
	if (style == NZ_JSON_COMPACT)
		return 0;
	if ((err = put(out, "\n", 1)) < 0)
		return err;
	while (depth-- > 0)
		if ((err = put(out, "    ", style == NZ_JSON_ZARR3 ? 2 : 4)) < 0)
			return err;
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int emit_value(nz_buf *out, const json_t *v, nz_json_style style, int depth);

static int emit_object(nz_buf *out, const json_t *v, nz_json_style style, int depth)
{
	size_t n = json_object_size(v), i = 0;
	const char **keys = NULL;
	const char *key;
	json_t *item;
	int err = 0;

	if (n == 0)
		return puts_(out, "{}");
	if (!(keys = nz__calloc(n, sizeof *keys)))
		return nz__error_set(NZ_ENOMEM, "out of memory sorting %zu JSON keys", n);
	json_object_foreach((json_t *)v, key, item)
		keys[i++] = key;
	/* jansson keeps insertion order, which is what Python's dicts give
	 * json.dumps when it is not told to sort. */
	if (style != NZ_JSON_ZARR3)
		qsort(keys, n, sizeof *keys, cmp_keys);
	if ((err = put(out, "{", 1)) < 0)
		goto done;
	for (i = 0; i < n; i++) {
		if (i && (err = put(out, ",", 1)) < 0)
			goto done;
		if ((err = newline(out, style, depth + 1)) < 0 ||
		    (err = emit_string(out, keys[i], strlen(keys[i]))) < 0 ||
		    (err = puts_(out, style == NZ_JSON_COMPACT ? ":" : ": ")) < 0 ||
		    (err = emit_value(out, json_object_get(v, keys[i]), style, depth + 1)) < 0)
			goto done;
	}
	if ((err = newline(out, style, depth)) < 0)
		goto done;
	err = put(out, "}", 1);
done:
	nz__free(keys);
	return err;
}

static int emit_array(nz_buf *out, const json_t *v, nz_json_style style, int depth)
{
	size_t i, n = json_array_size(v);
	int err;
	if (n == 0)
		return puts_(out, "[]");
	if ((err = put(out, "[", 1)) < 0)
		return err;
	for (i = 0; i < n; i++) {
		if (i && (err = put(out, ",", 1)) < 0)
			return err;
		if ((err = newline(out, style, depth + 1)) < 0 ||
		    (err = emit_value(out, json_array_get(v, i), style, depth + 1)) < 0)
			return err;
	}
	if ((err = newline(out, style, depth)) < 0)
		return err;
	return put(out, "]", 1);
}

static int emit_value(nz_buf *out, const json_t *v, nz_json_style style, int depth)
{
	char num[32];
	double d;
	if (!v)
		return nz__error_set(NZ_EINVAL, "cannot serialise a NULL JSON value");
	switch (json_typeof(v)) {
	case JSON_OBJECT: return emit_object(out, v, style, depth);
	case JSON_ARRAY: return emit_array(out, v, style, depth);
	case JSON_STRING:
		if (nz__json_is_nonfinite(v, &d))
			return nz__json_emit_double(out, d);
		return emit_string(out, json_string_value(v), json_string_length(v));
	case JSON_INTEGER:
		snprintf(num, sizeof num, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return puts_(out, num);
	case JSON_REAL: return nz__json_emit_double(out, json_real_value(v));
	case JSON_TRUE: return puts_(out, "true");
	case JSON_FALSE: return puts_(out, "false");
	case JSON_NULL: return puts_(out, "null");
	}
	return nz__error_set(NZ_EINVAL, "cannot serialise JSON value of unknown type");
}

int nz__json_emit(nz_buf *out, const json_t *value, nz_json_style style)
{
	return emit_value(out, value, style, 0);
}

int nz__json_dumps(char **out, const json_t *value, nz_json_style style)
{
	nz_buf b = { 0 };
	int err;
	*out = NULL;
	if ((err = nz__json_emit(&b, value, style)) < 0 || (err = nz__buf_append(&b, "", 1)) < 0) {
		nz__buf_free(&b);
		return err;
	}
	*out = (char *)b.data;
	return 0;
}

/* Python's json.loads accepts the bare tokens NaN, Infinity and -Infinity
 * (and json.dumps writes them), jansson does not. Rewrite each one found
 * outside a string into a placeholder string (as_null: into null), counting
 * them in *found. *out stays empty when there is none (the common case). */
static int rewrite_nonfinite(nz_buf *out, const char *t, size_t len, int as_null, size_t *found)
{
	static const char *const tokens[] = { "NaN", "Infinity", "-Infinity" };
	size_t i, start = 0;
	int in_str = 0, k, err;
	*found = 0;
	for (i = 0; i < len; i++) {
		if (in_str) {
			if (t[i] == '\\')
				i++;
			else if (t[i] == '"')
				in_str = 0;
			continue;
		}
		if (t[i] == '"') {
			in_str = 1;
			continue;
		}
		for (k = 0; k < 3; k++) {
			size_t n = strlen(tokens[k]);
			if (len - i >= n && memcmp(t + i, tokens[k], n) == 0) {
				if ((err = nz__buf_append(out, t + start, i - start)) < 0 ||
				    (as_null && (err = nz__buf_append(out, "null", 4)) < 0) ||
				    (!as_null &&
				     ((err = nz__buf_append(out, PLACEHOLDER_JSON, sizeof PLACEHOLDER_JSON - 1)) < 0 ||
				      (err = nz__buf_append(out, tokens[k], n)) < 0 ||
				      (err = nz__buf_append(out, "\"", 1)) < 0)))
					return err;
				i += n - 1;
				start = i + 1;
				(*found)++;
				break;
			}
		}
	}
	if (*found)
		return nz__buf_append(out, t + start, len - start);
	return 0;
}

static int is_placeholder(const char *s)
{
	return strncmp(s, PLACEHOLDER, sizeof PLACEHOLDER - 1) == 0;
}

/* 1 if a string value or key of the tree starts with the placeholder. */
static int has_placeholder(const json_t *v)
{
	const char *key;
	json_t *item;
	size_t i;
	if (json_is_string(v))
		return is_placeholder(json_string_value(v));
	json_array_foreach(v, i, item)
		if (has_placeholder(item))
			return 1;
	json_object_foreach((json_t *)v, key, item)
		if (is_placeholder(key) || has_placeholder(item))
			return 1;
	return 0;
}

/* Swap every placeholder value below *v for a marker. NZ_EFORMAT (no
 * message) for a placeholder key: Python refuses NaN as a key too. */
static int swap_placeholders(json_t **v)
{
	const char *key;
	json_t *item, *m;
	size_t i;
	double d;
	int err;
	if (json_is_string(*v)) {
		if (!nonfinite_value(json_string_value(*v), PLACEHOLDER, sizeof PLACEHOLDER - 1, &d))
			return 0;
		if (!(m = nz__json_nonfinite(d)))
			return NZ_ENOMEM;
		json_decref(*v);
		*v = m;
		return 0;
	}
	json_array_foreach(*v, i, item) {
		json_t *x = json_incref(item);
		if ((err = swap_placeholders(&x)) < 0 || json_array_set_new(*v, i, x) < 0)
			return err < 0 ? err : NZ_ENOMEM;
	}
	json_object_foreach(*v, key, item) {
		json_t *x = json_incref(item);
		if (is_placeholder(key)) {
			json_decref(x);
			return NZ_EFORMAT;
		}
		if ((err = swap_placeholders(&x)) < 0 || json_object_set_new(*v, key, x) < 0)
			return err < 0 ? err : NZ_ENOMEM;
	}
	return 0;
}

static int parse_error(const json_error_t *jerr, const char *what, unsigned long failures)
{
	/* jansson reports a failed allocation by its code, with no position and
	 * no text when the lexer cannot even start, or as an invalid token when
	 * a string cannot be copied: our allocator saw each of them fail. */
	if (json_error_code(jerr) == json_error_out_of_memory || (jerr->line == -1 && jerr->text[0] == '\0') ||
	    nz__alloc_failures() != failures)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory parsing JSON", what);
	return nz__error_set(NZ_EFORMAT, "%s: invalid JSON at line %d column %d: %s", what, jerr->line,
			     jerr->column, jerr->text);
}

/* With bare tokens in the text, the placeholders in *out are ours only if no
 * genuine string spells one: check that on a parse with the tokens as null
 * (the same strings, the same shape), then swap. */
static int resolve_nonfinite(json_t **out, const char *text, size_t len, size_t flags, const char *what)
{
	nz_buf nulls = { 0 };
	json_error_t jerr;
	json_t *plain = NULL;
	unsigned long failures;
	size_t n;
	int err;
	if ((err = rewrite_nonfinite(&nulls, text, len, 1, &n)) < 0)
		goto done;
	failures = nz__alloc_failures();
	if (!(plain = json_loadb((const char *)nulls.data, nulls.len, flags, &jerr))) {
		err = parse_error(&jerr, what, failures);
		goto done;
	}
	if (has_placeholder(plain)) {
		err = nz__error_set(NZ_EFORMAT, "%s: a string starts with nwbzarr's internal placeholder "
				    "for NaN/Infinity", what);
		goto done;
	}
	if ((err = swap_placeholders(out)) == NZ_EFORMAT)
		err = nz__error_set(NZ_EFORMAT, "%s: NaN/Infinity used as an object key", what);
	else if (err < 0)
		err = nz__error_set(NZ_ENOMEM, "%s: out of memory parsing JSON", what);
done:
	json_decref(plain);
	nz__buf_free(&nulls);
	return err;
}

int nz__json_parse(json_t **out, const void *text, size_t len, const char *what, size_t flags)
{
	json_error_t jerr;
	nz_buf fixed = { 0 };
	unsigned long failures;
	size_t found = 0;
	int err;
	*out = NULL;
	what = what ? what : "(text)";
	if ((err = rewrite_nonfinite(&fixed, text, len, 0, &found)) < 0) {
		nz__buf_free(&fixed);
		return err;
	}
	failures = nz__alloc_failures();
	if (found)
		*out = json_loadb((const char *)fixed.data, fixed.len, flags, &jerr);
	else
		*out = json_loadb(text, len, flags, &jerr);
	nz__buf_free(&fixed);
	if (!*out)
		return parse_error(&jerr, what, failures);
	if (found && (err = resolve_nonfinite(out, text, len, flags, what)) < 0) {
		json_decref(*out);
		*out = NULL;
	}
	return err;
}

const char *nz__json_type_name(const json_t *value)
{
	if (!value)
		return "missing";
	switch (json_typeof(value)) {
	case JSON_OBJECT: return "object";
	case JSON_ARRAY: return "array";
	case JSON_STRING: return "string";
	case JSON_INTEGER: return "integer";
	case JSON_REAL: return "float";
	case JSON_TRUE:
	case JSON_FALSE: return "boolean";
	case JSON_NULL: return "null";
	}
	return "unknown";
}
