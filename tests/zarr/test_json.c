/* util/json: the emitter must write what Python's json.dumps writes. The
 * float table was produced with CPython 3.11's repr(). */
#include <math.h>

#include "oom.h"
#include "util/alloc.h"
#include "util/json.h"

static const struct {
	double v;
	const char *repr;
} floats[] = {
	{ 0x0.0p+0, "0.0" },
	{ -0x0.0p+0, "-0.0" },
	{ 0x1.0000000000000p+0, "1.0" },
	{ -0x1.0000000000000p+0, "-1.0" },
	{ 0x1.999999999999ap-4, "0.1" },
	{ 0x1.0000000000000p-1, "0.5" },
	{ 0x1.8000000000000p+0, "1.5" },
	{ 0x1.9000000000000p+6, "100.0" },
	{ 0x1.1c37937e08000p+53, "1e+16" },
	{ 0x1.c6bf526340000p+49, "1000000000000000.0" },
	{ 0x1.b69b4ba630f35p+56, "1.2345678901234568e+17" },
	{ 0x1.a36e2eb1c432dp-14, "0.0001" },
	{ 0x1.4f8b588e368f1p-17, "1e-05" },
	{ 0x1.f75104d551d69p-17, "1.5e-05" },
	{ 0x1.ad7f29abcaf48p-24, "1e-07" },
	{ 0x0.0000000000001p-1022, "5e-324" },
	{ 0x1.fffffffffffffp+1023, "1.7976931348623157e+308" },
	{ 0x1.0000000000000p-1022, "2.2250738585072014e-308" },
	{ 0x1.3333333333334p-2, "0.30000000000000004" },
	{ 0x1.5555555555555p-2, "0.3333333333333333" },
	{ 0x1.5555555555555p-1, "0.6666666666666666" },
	{ 0x1.921f9f01b866ep+1, "3.14159" },
	{ 0x1.0f0cf064dd592p+73, "1e+22" },
	{ 0x1.b1ae4d6e2ef50p+69, "1e+21" },
	{ 0x1.0000000000000p+53, "9007199254740992.0" },
	{ 0x1.34a456d5cfaadp+10, "1234.5678" },
	{ 0x1.d4c0000000000p+14, "30000.0" },
	{ 0x1.a2c2623ab2ae7p-23, "1.95e-07" },
	{ 0x1.01f31f46ed246p-13, "0.000123" },
	{ 0x1.99999a0000000p-4, "0.10000000149011612" },
	{ 0x1.249ad2594c37dp+332, "1e+100" },
	{ -0x1.12e0be826d695p-32, "-2.5e-10" },
	{ 0x1.5ee2a2eb5a5c4p+53, "1.2345678901234568e+16" },
	{ 0x1.0624dd2f1a9fcp-10, "0.001" },
	{ 0x1.1de784a000000p+28, "299792458.0" },
	{ 0x0.0000000000002p-1022, "1e-323" },
	{ 0x0.0501391c4b608p-1022, "4.35e-310" },
	{ 0x1.497d2855b39d7p-990, "1.23e-298" },
	{ 0x1.47ae147ae147bp-7, "0.01" },
	{ 0x1.4000000000000p+3, "10.0" },
	{ 0x1.0624dd2f1a9fcp-10, "0.001" },
};

static char *dump(const char *text, nz_json_style style)
{
	json_t *v = NULL;
	char *s = NULL;
	ASSERT_OK(nz__json_parse(&v, text, strlen(text), "test", JSON_DECODE_ANY));
	ASSERT_OK(nz__json_dumps(&s, v, style));
	json_decref(v);
	return s;
}

static void check(const char *text, nz_json_style style, const char *want)
{
	char *s = dump(text, style);
	ASSERT_EQ_STR(s, want);
	nz__free(s);
}

static int dump_parse(void *ctx)
{
	static const char text[] = "{\"a\": NaN, \"long string\": [\"abcdefghijklmnopqrstuvwxyz\"]}";
	char *s = NULL;
	json_t *back = NULL, *nan = NULL;
	int err;
	if ((err = nz__json_dumps(&s, ctx, NZ_JSON_ZARR)) == 0 &&
	    (err = nz__json_parse(&back, s, strlen(s), "dumped", 0)) == 0)
		err = nz__json_parse(&nan, text, sizeof text - 1, "text", 0);
	json_decref(nan);
	json_decref(back);
	nz__free(s);
	return err;
}

int main(void)
{
	size_t i;
	json_t *v = NULL, *arr;
	char *s = NULL;
	double d = 0;

	nz__alloc_init();
	for (i = 0; i < sizeof floats / sizeof floats[0]; i++) {
		nz_buf b = { 0 };
		ASSERT_OK(nz__json_emit_double(&b, floats[i].v));
		ASSERT_OK(nz__buf_append(&b, "", 1));
		ASSERT_EQ_STR((char *)b.data, floats[i].repr);
		nz__buf_free(&b);
	}

	/* Zarr style: indent 4, ": " and sorted keys; empty containers inline. */
	check("{\"b\": [1, 2.0, {}], \"a\": {\"z\": null, \"y\": []}, \"c\": true}", NZ_JSON_ZARR,
	      "{\n    \"a\": {\n        \"y\": [],\n        \"z\": null\n    },\n"
	      "    \"b\": [\n        1,\n        2.0,\n        {}\n    ],\n    \"c\": true\n}");
	check("{\"b\": [1, 2.0, {}], \"a\": false}", NZ_JSON_COMPACT, "{\"a\":false,\"b\":[1,2.0,{}]}");
	check("[]", NZ_JSON_ZARR, "[]");
	check("-9223372036854775808", NZ_JSON_COMPACT, "-9223372036854775808");
	/* ensure_ascii: BMP, astral (surrogate pair), controls, DEL, quotes. */
	check("\"\\u00e9\\u2603\\ud83d\\ude00\"", NZ_JSON_COMPACT, "\"\\u00e9\\u2603\\ud83d\\ude00\"");
	check("\"a\\\"b\\\\c/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f~\"", NZ_JSON_COMPACT,
	      "\"a\\\"b\\\\c/\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f~\"");
	/* Keys sort by code point (UTF-8 byte order), "B" < "a" < "\u00e9". */
	check("{\"\\u00e9\": 1, \"a\": 2, \"B\": 3}", NZ_JSON_COMPACT, "{\"B\":3,\"a\":2,\"\\u00e9\":1}");

	/* Non-finite markers are written bare, as Python does. */
	arr = json_array();
	json_array_append_new(arr, nz__json_nonfinite(NAN));
	json_array_append_new(arr, nz__json_nonfinite(INFINITY));
	json_array_append_new(arr, nz__json_nonfinite(-INFINITY));
	json_array_append_new(arr, nz__json_nonfinite(0.25));
	json_array_append_new(arr, json_string("NaN"));
	ASSERT_OK(nz__json_dumps(&s, arr, NZ_JSON_COMPACT));
	ASSERT_EQ_STR(s, "[NaN,Infinity,-Infinity,0.25,\"NaN\"]");
	ASSERT(nz__json_is_nonfinite(json_array_get(arr, 2), &d) && isinf(d) && d < 0);
	ASSERT(!nz__json_is_nonfinite(json_array_get(arr, 4), &d));
	nz__free(s);
	json_decref(arr);

	/* Bare NaN/Infinity/-Infinity parse as json.loads reads them (not
	 * inside strings) and are written back bare. */
	check("{\"a\": [NaN, -Infinity, 1.5], \"b\": \"NaN Infinity\", \"c\": Infinity}", NZ_JSON_COMPACT,
	      "{\"a\":[NaN,-Infinity,1.5],\"b\":\"NaN Infinity\",\"c\":Infinity}");
	check("[\"x\\\"NaN\", NaN]", NZ_JSON_COMPACT, "[\"x\\\"NaN\",NaN]");

	/* Parse errors name the document and the position. */
	ASSERT_ERR(NZ_EFORMAT, nz__json_parse(&v, "{\n  \"a\": [1,\n", 12, "x/.zarray", 0));
	ASSERT(v == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, "x/.zarray");
	ASSERT_CONTAINS(nz_error_last()->message, "line 2");
	ASSERT_ERR(NZ_EFORMAT, nz__json_parse(&v, "{\"a\": NaX}", 10, "y/.zattrs", 0));
	ASSERT_CONTAINS(nz_error_last()->message, "column");
	ASSERT_EQ_STR(nz__json_type_name(NULL), "missing");

	/* Allocation failure surfaces as NZ_ENOMEM, never a crash; in the
	 * parser too, where jansson calls a string it cannot copy an invalid
	 * token. */
	v = json_pack("{s:[i,s,f]}", "k", 1, "x", 0.5);
	ASSERT(nz_oom_run_sweep(&(nz_oom_sweep){"JSON out and in", dump_parse, NULL, NULL, v, 0, 0,
						0, 0}) > 10);
	json_decref(v);
	printf("ok\n");
	return 0;
}
