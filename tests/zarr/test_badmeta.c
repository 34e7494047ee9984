/* Hostile or broken .zarray documents and chunks must fail with the right
 * code and a message that names the document and the problem. */
#include "test.h"

static nz_store *st;

#define GOOD_TAIL "\"compressor\": null, \"filters\": null, \"order\": \"C\", \"zarr_format\": 2"

static void expect(int code, const char *zarray, const char *needle)
{
	nz_array *a = (nz_array *)1;
	ASSERT_OK(nz_store_put(st, "bad/.zarray", zarray, strlen(zarray)));
	nz_error_clear();
	if (nz_array_open(&a, st, "bad") != code)
		NZ__FAIL("opening %s: expected %d", zarray, code);
	ASSERT(a == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, "bad/.zarray");
	ASSERT_CONTAINS(nz_error_last()->message, needle);
}

static void bad_documents(void)
{
	expect(NZ_EFORMAT, "{\"shape\": [1], \"chunks\": [", "invalid JSON at line 1");
	expect(NZ_EFORMAT, "[1, 2]", "expected a JSON object");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, "
			   "\"compressor\": null, \"filters\": null, \"order\": \"C\"}", "'zarr_format'");
	expect(NZ_EUNSUPPORTED, "{\"zarr_format\": 3, \"shape\": [2]}", "zarr_format 3");
	expect(NZ_EFORMAT, "{\"shape\": \"2\", \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'shape' must be a list");
	expect(NZ_EFORMAT, "{\"shape\": [-2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'shape'[0] must be a non-negative integer");
	expect(NZ_EFORMAT, "{\"shape\": [2, 2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'chunks' has 1 dimensions but 'shape' has 2");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [0], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'chunks'[0] is 0");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [-1], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'chunks'[0]");
	expect(NZ_EUNSUPPORTED, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, "
				"\"compressor\": null, \"filters\": null, \"order\": \"F\", \"zarr_format\": 2}",
	       "order 'F'");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<x4\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "unknown dtype '<x4'");
	expect(NZ_EUNSUPPORTED, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<U8\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "'<U8' is not supported");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": 4, \"fill_value\": 0, " GOOD_TAIL "}",
	       "'dtype' must be a string or a list");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"fill_value\": 0, " GOOD_TAIL "}", "missing key 'dtype'");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", " GOOD_TAIL "}",
	       "missing key 'fill_value'");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|u1\", \"fill_value\": 300, " GOOD_TAIL "}",
	       "fill_value 300 out of range");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<f4\", \"fill_value\": \"nan\", " GOOD_TAIL "}",
	       "fill_value string is not valid");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|S4\", \"fill_value\": \"***\", " GOOD_TAIL "}",
	       "invalid base64");
	/* Each chunk dimension fits, their product does not. */
	expect(NZ_EFORMAT, "{\"shape\": [9, 9, 9], \"chunks\": [4294967296, 4294967296, 4294967296], "
			   "\"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}", "overflows");
	expect(NZ_EFORMAT, "{\"shape\": [9], \"chunks\": [4611686018427387904], "
			   "\"dtype\": \"<i8\", \"fill_value\": 0, " GOOD_TAIL "}", "overflows");
	expect(NZ_EUNSUPPORTED, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, "
				"\"compressor\": {\"id\": \"lzma9\"}, \"filters\": null, \"order\": \"C\", \"zarr_format\": 2}",
	       "compressor");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, "
			   "\"compressor\": [], \"filters\": null, \"order\": \"C\", \"zarr_format\": 2}",
	       "'compressor' must be an object or null");
	expect(NZ_EUNSUPPORTED, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\", \"fill_value\": 0, "
				"\"compressor\": null, \"filters\": [{\"id\": \"msgpack2\"}], \"order\": \"C\", \"zarr_format\": 2}",
	       "object codec 'msgpack2' is not supported");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\", \"fill_value\": 0, " GOOD_TAIL "}",
	       "needs an object codec");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"<i4\", \"fill_value\": 0, "
			   "\"dimension_separator\": \"-\", " GOOD_TAIL "}", "'dimension_separator'");
	expect(NZ_EUNSUPPORTED, "{\"shape\": [2], \"chunks\": [2], \"dtype\": [[\"a\", \"<i4\", [2]]], "
				"\"fill_value\": 0, " GOOD_TAIL "}", "subarray");
	expect(NZ_EFORMAT, "{\"shape\": [2], \"chunks\": [2], \"dtype\": [], \"fill_value\": 0, " GOOD_TAIL "}",
	       "no fields");
}

static void bad_chunks(void)
{
	const char *meta = "{\"shape\": [4], \"chunks\": [4], \"dtype\": \"<i4\", \"fill_value\": 0, " GOOD_TAIL "}";
	const char *vmeta = "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\", \"fill_value\": 0, "
			    "\"compressor\": null, \"filters\": [{\"id\": \"vlen-utf8\"}], \"order\": \"C\", \"zarr_format\": 2}";
	uint64_t idx[1] = { 0 };
	int32_t out[4];
	nz_array *a = NULL;
	nz_vlen *v = NULL;

	ASSERT_OK(nz_store_put(st, "c/.zarray", meta, strlen(meta)));
	ASSERT_OK(nz_store_put(st, "c/0", "123456", 6));
	ASSERT_OK(nz_array_open(&a, st, "c"));
	ASSERT_ERR(NZ_EFORMAT, nz_array_read_chunk(a, NULL, idx, out, sizeof out));
	ASSERT_CONTAINS(nz_error_last()->message, "chunk 'c/0' decodes to 6 bytes, expected 16");
	nz_array_free(a);

	ASSERT_OK(nz_store_put(st, "v/.zarray", vmeta, strlen(vmeta)));
	ASSERT_OK(nz_array_open(&a, st, "v"));
	ASSERT_OK(nz_store_put(st, "v/0", "\x02\0\0\0\x05\0\0\0ab", 10));
	ASSERT_ERR(NZ_EFORMAT, nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_CONTAINS(nz_error_last()->message, "runs past the chunk end");
	ASSERT_CONTAINS(nz_error_last()->message, "v/0");
	ASSERT_OK(nz_store_put(st, "v/0", "\x03\0\0\0", 4));
	ASSERT_ERR(NZ_EFORMAT, nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_CONTAINS(nz_error_last()->message, "holds 3 elements, expected 2");
	ASSERT(v == NULL);
	nz_array_free(a);

	/* A 32-byte blosc buffer whose header claims 2 GiB, in an object chunk
	 * (decoded without an expected size): refused before any allocation. */
	{
		const char *bmeta = "{\"shape\": [2], \"chunks\": [2], \"dtype\": \"|O\", \"fill_value\": 0, "
				    "\"compressor\": {\"blocksize\": 0, \"clevel\": 5, \"cname\": \"lz4\", \"id\": "
				    "\"blosc\", \"shuffle\": 1}, \"filters\": [{\"id\": \"vlen-utf8\"}], \"order\": "
				    "\"C\", \"zarr_format\": 2}";
		unsigned char hostile[32] = { 2, 1, 1, 1, 0x00, 0xff, 0xff, 0x7f, 0x00, 0x00, 0x01, 0x00, 32, 0, 0, 0 };
		ASSERT_OK(nz_store_put(st, "b/.zarray", bmeta, strlen(bmeta)));
		ASSERT_OK(nz_array_open(&a, st, "b"));
		ASSERT_OK(nz_store_put(st, "b/0", hostile, sizeof hostile));
		ASSERT_ERR(NZ_EFORMAT, nz_array_read_chunk_vlen(&v, a, idx));
		ASSERT_CONTAINS(nz_error_last()->message, "more than any blosc codec expands to");
		ASSERT_CONTAINS(nz_error_last()->message, "b/0");
		nz_array_free(a);
	}
	/* A vlen header announcing the right count in too few bytes. */
	ASSERT_OK(nz_array_open(&a, st, "v"));
	ASSERT_OK(nz_store_put(st, "v/0", "\x02\0\0\0\0\0", 6));
	/* (6 bytes: not even a length for each of the 2 elements) */
	ASSERT_ERR(NZ_EFORMAT, nz_array_read_chunk_vlen(&v, a, idx));
	ASSERT_CONTAINS(nz_error_last()->message, "cannot hold 2 elements");
	nz_array_free(a);
	/* A huge object chunk is refused at open, not allocated when missing. */
	{
		const char *hmeta = "{\"shape\": [1099511627776], \"chunks\": [1099511627776], \"dtype\": \"|O\", "
				    "\"fill_value\": 0, \"compressor\": null, \"filters\": [{\"id\": \"vlen-utf8\"}], "
				    "\"order\": \"C\", \"zarr_format\": 2}";
		ASSERT_OK(nz_store_put(st, "h/.zarray", hmeta, strlen(hmeta)));
		ASSERT_ERR(NZ_EUNSUPPORTED, nz_array_open(&a, st, "h"));
		ASSERT_CONTAINS(nz_error_last()->message, "object chunks of 1099511627776 elements");
	}

	ASSERT_ERR(NZ_ENOTFOUND, nz_array_open(&a, st, "nothing/here"));
	ASSERT_CONTAINS(nz_error_last()->message, "nothing/here/.zarray");
}

static void bad_options(void)
{
	uint64_t shape[1] = { 4 }, zero[1] = { 0 };
	nz_array_opts o = NZ_ARRAY_OPTS_INIT;
	nz_array *a = NULL;
	o.ndim = 1, o.shape = shape;
	ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "o", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "no dtype");
	o.dtype = "|O";
	ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "o", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "object codec");
	o.dtype = "<i4", o.chunks = zero;
	ASSERT_ERR(NZ_EINVAL, nz_array_create(&a, st, "o", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "chunks[0] is 0");
	o.chunks = NULL, o.fill_value_json = "[";
	ASSERT_ERR(NZ_EFORMAT, nz_array_create(&a, st, "o", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "fill_value");
	o.fill_value_json = NULL, o.dtype = "<q8";
	ASSERT_ERR(NZ_EFORMAT, nz_array_create(&a, st, "o", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "unknown dtype '<q8'");
	ASSERT(a == NULL);
}

int main(void)
{
	char root[4096];
	snprintf(root, sizeof root, "%s/zarr_badmeta", getenv("NZ_TMP"));
	nz_test_rm_rf(root);
	ASSERT_OK(nz_store_open_dir(&st, root, NZ_STORE_CREATE));
	bad_documents();
	bad_chunks();
	bad_options();
	nz_store_free(st);
	printf("ok\n");
	return 0;
}
