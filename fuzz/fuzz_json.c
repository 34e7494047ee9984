/* Fuzz target: the JSON parser wrapper and the Python-compatible emitter
 * (src/util/json.h).
 *
 * Properties checked (abort on violation):
 * - nz__json_parse never crashes; failure is NZ_EFORMAT (or NZ_ENOMEM) with
 *   a message naming the document.
 * - Round trip, in both styles: parse -> emit -> parse gives a value equal
 *   to the first (json_equal), and emitting that again gives the same text
 *   (the emitter is a pure function of the value).
 * - The emitted text is ASCII only (ensure_ascii=True).
 * - Python's bare NaN/Infinity/-Infinity parse to non-finite values, at most
 *   one per token (counted by a scanner of our own): no string becomes one.
 * - The first 8 bytes read as a double: nz__json_emit_double writes text
 *   that strtod reads back as the same double (Python's repr property), or
 *   NaN/Infinity/-Infinity for non-finite values. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/json.h"
#include "fuzz_common.h"

static void check_double(const uint8_t *data, size_t size)
{
	double v;
	nz_buf b = {0};
	char text[80];
	if (size < sizeof v)
		return;
	memcpy(&v, data, sizeof v);
	if (nz__json_emit_double(&b, v) < 0)
		return; /* out of memory */
	CHECK(b.len > 0 && b.len < sizeof text);
	memcpy(text, b.data, b.len);
	text[b.len] = '\0';
	nz__buf_free(&b);
	if (isnan(v)) {
		CHECK(strcmp(text, "NaN") == 0);
	} else if (isinf(v)) {
		CHECK(strcmp(text, v < 0 ? "-Infinity" : "Infinity") == 0);
	} else {
		char *end;
		double back = strtod(text, &end);
		CHECK(*end == '\0');
		CHECK(memcmp(&back, &v, sizeof v) == 0); /* also keeps -0.0's sign */
		/* Python always shows a float as a float: "1.0", never "1". */
		CHECK(strpbrk(text, ".e") != NULL);
	}
}

/* Bare NaN/Infinity tokens outside strings, counted by a scanner of our own
 * ("-Infinity" holds "Infinity": one each). */
static size_t count_bare(const uint8_t *t, size_t n)
{
	size_t count = 0;
	int in_str = 0;
	for (size_t i = 0; i < n; i++) {
		if (in_str) {
			if (t[i] == '\\')
				i++;
			else if (t[i] == '"')
				in_str = 0;
		} else if (t[i] == '"') {
			in_str = 1;
		} else if ((n - i >= 3 && memcmp(t + i, "NaN", 3) == 0) ||
			   (n - i >= 8 && memcmp(t + i, "Infinity", 8) == 0)) {
			count++;
		}
	}
	return count;
}

/* Non-finite markers among the values of the tree. */
static size_t count_markers(const json_t *v)
{
	const char *key;
	json_t *item;
	size_t i, count = 0;
	double d;
	if (nz__json_is_nonfinite(v, &d))
		return 1;
	json_array_foreach(v, i, item)
		count += count_markers(item);
	json_object_foreach((json_t *)v, key, item)
		count += count_markers(item);
	return count;
}

static void check_roundtrip(const json_t *value, nz_json_style style)
{
	char *text = NULL, *again = NULL;
	json_t *back = NULL;
	if (nz__json_dumps(&text, value, style) < 0)
		goto done; /* out of memory */
	for (const char *p = text; *p; p++)
		CHECK((unsigned char)*p < 0x80);
	CHECK(nz__json_parse(&back, text, strlen(text), "emitted", JSON_DECODE_ANY | JSON_ALLOW_NUL) == 0);
	CHECK(json_equal(value, back));
	CHECK(nz__json_dumps(&again, back, style) == 0);
	CHECK(strcmp(text, again) == 0);
done:
	json_decref(back);
	nz__free(text);
	nz__free(again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	json_t *value = NULL;
	int rc;
	nz__alloc_init();
	check_double(data, size);
	rc = nz__json_parse(&value, data, size, "fuzz.json", JSON_DECODE_ANY | JSON_ALLOW_NUL);
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT || rc == NZ_ENOMEM);
		CHECK(strstr(nz_error_last()->message, "fuzz.json") != NULL);
		CHECK(value == NULL);
		return 0;
	}
	/* No string ever becomes a non-finite value: at most one per bare token
	 * (fewer when a duplicate key drops one, as Python's json does). */
	CHECK(count_markers(value) <= count_bare(data, size));
	check_roundtrip(value, NZ_JSON_ZARR);
	check_roundtrip(value, NZ_JSON_COMPACT);
	json_decref(value);
	return 0;
}
