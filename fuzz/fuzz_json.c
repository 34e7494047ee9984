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
	check_roundtrip(value, NZ_JSON_ZARR);
	check_roundtrip(value, NZ_JSON_COMPACT);
	json_decref(value);
	return 0;
}
