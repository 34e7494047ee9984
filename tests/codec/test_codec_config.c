/* Parsing and serialising numcodecs configs: exact get_config keys, every
 * parameter validated with a message naming codec and field. */
#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"

static int from_text(nz_codec **c, const char *text)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	int rc;
	if (!j)
		NZ__FAIL("bad JSON in test: %s", text);
	rc = nz__codec_from_json(c, j);
	json_decref(j);
	return rc;
}

/* Parse, serialise with sorted keys (as zarr does) and compare. */
static void same(const char *in, const char *want)
{
	nz_codec *c = NULL;
	json_t *j = NULL;
	char *s;
	ASSERT_OK(from_text(&c, in));
	ASSERT_OK(nz__codec_to_json(&j, c));
	s = json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS);
	ASSERT_EQ_STR(s, want);
	/* The unsorted dump is sorted too: insertion order is alphabetical. */
	free(s);
	s = json_dumps(j, JSON_COMPACT);
	ASSERT_EQ_STR(s, want);
	free(s);
	json_decref(j);
	nz__codec_free(c);
}

static void bad(int code, const char *in, const char *field)
{
	nz_codec *c = (nz_codec *)1;
	ASSERT_ERR(code, from_text(&c, in));
	ASSERT(c == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, field);
}

int main(void)
{
	nz_codec *c = NULL;
	nz__alloc_init();
	same("{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
	     "{\"blocksize\":0,\"clevel\":5,\"cname\":\"lz4\",\"id\":\"blosc\",\"shuffle\":1}");
	same("{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":-1}",
	     "{\"blocksize\":0,\"clevel\":3,\"cname\":\"zstd\",\"id\":\"blosc\",\"shuffle\":-1}");
	same("{\"id\":\"zstd\",\"level\":3,\"checksum\":true}", "{\"checksum\":true,\"id\":\"zstd\",\"level\":3}");
	same("{\"id\":\"zstd\",\"level\":3,\"checksum\":false}", "{\"id\":\"zstd\",\"level\":3}");
	same("{\"id\":\"lz4\",\"acceleration\":1}", "{\"acceleration\":1,\"id\":\"lz4\"}");
	same("{\"id\":\"zlib\",\"level\":1}", "{\"id\":\"zlib\",\"level\":1}");
	same("{\"id\":\"gzip\",\"level\":9}", "{\"id\":\"gzip\",\"level\":9}");
	same("{\"id\":\"shuffle\",\"elementsize\":8}", "{\"elementsize\":8,\"id\":\"shuffle\"}");

	bad(NZ_EUNSUPPORTED, "{\"id\":\"bz2\",\"level\":1}", "bz2");
	bad(NZ_EFORMAT, "{\"level\":1}", "id");
	bad(NZ_EFORMAT, "[1]", "object");
	bad(NZ_EUNSUPPORTED, "{\"id\":\"blosc\",\"cname\":\"lzma\",\"clevel\":5,\"shuffle\":1}", "lzma");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":5,\"clevel\":5,\"shuffle\":1}", "cname");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"clevel\":5,\"shuffle\":1}", "cname");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":10,\"shuffle\":1}", "clevel");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":\"5\",\"shuffle\":1}", "clevel");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":3}", "shuffle");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5}", "shuffle");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":-1}",
	    "blocksize");
	bad(NZ_EFORMAT, "{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"x\":1}", "'x'");
	bad(NZ_EFORMAT, "{\"id\":\"zstd\"}", "level");
	bad(NZ_EFORMAT, "{\"id\":\"zstd\",\"level\":99}", "level");
	bad(NZ_EFORMAT, "{\"id\":\"zstd\",\"level\":1.5}", "level");
	bad(NZ_EFORMAT, "{\"id\":\"zstd\",\"level\":1,\"checksum\":1}", "checksum");
	bad(NZ_EFORMAT, "{\"id\":\"zlib\",\"level\":10}", "zlib");
	bad(NZ_EFORMAT, "{\"id\":\"gzip\",\"level\":true}", "gzip");
	bad(NZ_EFORMAT, "{\"id\":\"gzip\",\"level\":1,\"checksum\":false}", "checksum");
	bad(NZ_EFORMAT, "{\"id\":\"lz4\"}", "acceleration");
	bad(NZ_EFORMAT, "{\"id\":\"shuffle\",\"elementsize\":-2}", "elementsize");

	/* The public compressor struct. */
	{
		nz_compressor def = NZ_COMPRESSOR_INIT, z = {NZ_COMPRESSOR_VERSION, "zstd", NULL, 7, 0, 0, 0};
		nz_compressor none = {NZ_COMPRESSOR_VERSION, "none", NULL, 0, 0, 0, 0};
		nz_compressor badc = {NZ_COMPRESSOR_VERSION, "blosc", "nope", 5, 1, 0, 0};
		json_t *j;
		char *s;
		ASSERT_OK(nz__codec_from_compressor(&c, &def));
		ASSERT_EQ_STR(nz__codec_id(c), "blosc");
		ASSERT_OK(nz__codec_to_json(&j, c));
		s = json_dumps(j, JSON_COMPACT);
		ASSERT_EQ_STR(s, "{\"blocksize\":0,\"clevel\":5,\"cname\":\"lz4\",\"id\":\"blosc\",\"shuffle\":1}");
		free(s);
		json_decref(j);
		nz__codec_free(c);
		ASSERT_OK(nz__codec_from_compressor(&c, &z));
		ASSERT_EQ_STR(nz__codec_id(c), "zstd");
		nz__codec_free(c);
		c = (nz_codec *)1;
		ASSERT_OK(nz__codec_from_compressor(&c, &none));
		ASSERT(c == NULL);
		ASSERT_ERR(NZ_EUNSUPPORTED, nz__codec_from_compressor(&c, &badc));
		ASSERT_CONTAINS(nz_error_last()->message, "nope");
		badc.id = "snappy-ish";
		ASSERT_ERR(NZ_EUNSUPPORTED, nz__codec_from_compressor(&c, &badc));
		badc.version = 42;
		ASSERT_ERR(NZ_EUNSUPPORTED, nz__codec_from_compressor(&c, &badc));
		ASSERT_ERR(NZ_EINVAL, nz__codec_from_compressor(&c, NULL));
	}
	nz__codec_free(NULL);
	return 0;
}
