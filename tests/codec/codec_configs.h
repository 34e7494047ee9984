/* Codec configs exercised by the round-trip and corruption tests. */
#ifndef NZ_TEST_CODEC_CONFIGS_H
#define NZ_TEST_CODEC_CONFIGS_H

static const char *const codec_configs[] = {
	"{\"id\":\"blosc\",\"cname\":\"lz4\",\"clevel\":5,\"shuffle\":1,\"blocksize\":0}",
	"{\"id\":\"blosc\",\"cname\":\"lz4hc\",\"clevel\":9,\"shuffle\":2,\"blocksize\":0}",
	"{\"id\":\"blosc\",\"cname\":\"zstd\",\"clevel\":3,\"shuffle\":-1,\"blocksize\":4096}",
	"{\"id\":\"blosc\",\"cname\":\"blosclz\",\"clevel\":9,\"shuffle\":0,\"blocksize\":0}",
	"{\"id\":\"blosc\",\"cname\":\"zlib\",\"clevel\":0,\"shuffle\":1}",
	"{\"id\":\"zstd\",\"level\":1}",
	"{\"id\":\"zstd\",\"level\":-3,\"checksum\":false}",
	"{\"id\":\"zstd\",\"level\":19}",
	"{\"id\":\"lz4\",\"acceleration\":1}",
	"{\"id\":\"lz4\",\"acceleration\":8}",
	"{\"id\":\"zlib\",\"level\":1}",
	"{\"id\":\"zlib\",\"level\":9}",
	"{\"id\":\"zlib\",\"level\":0}",
	"{\"id\":\"zlib\",\"level\":-1}",
	"{\"id\":\"gzip\",\"level\":1}",
	"{\"id\":\"gzip\",\"level\":6}",
	"{\"id\":\"gzip\",\"level\":0}",
	"{\"id\":\"shuffle\",\"elementsize\":4}",
	"{\"id\":\"shuffle\",\"elementsize\":1}",
	"{\"id\":\"crc32c\"}",
	"{\"id\":\"crc32c\",\"location\":\"end\"}",
};
#define N_CODEC_CONFIGS (sizeof codec_configs / sizeof codec_configs[0])

static inline nz_codec *parse_codec(const char *text)
{
	json_error_t je;
	nz_codec *c = NULL;
	json_t *j = json_loads(text, 0, &je);
	if (!j)
		NZ__FAIL("bad JSON in test: %s", text);
	if (nz__codec_from_json(&c, j) != 0)
		NZ__FAIL("nz__codec_from_json(%s) failed", text);
	json_decref(j);
	return c;
}

#endif
