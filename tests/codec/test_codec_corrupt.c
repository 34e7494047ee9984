/* Corrupt, truncated and hostile input never crashes a decoder: the result
 * is NZ_ECODEC or NZ_EFORMAT with a message naming the codec (or, for a
 * flip the framing cannot detect, a successful decode). Run under ASan to
 * check memory safety too. */
#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

static const char *id_of(const char *config)
{
	static char id[16];
	const char *p = strstr(config, "\"id\":\"") + 6;
	snprintf(id, sizeof id, "%.*s", (int)(strchr(p, '"') - p), p);
	return id;
}

static void check(const char *config, int rc, int must_fail)
{
	if (rc == 0 && !must_fail)
		return;
	if (rc != NZ_ECODEC && rc != NZ_EFORMAT)
		NZ__FAIL("%s: corrupt input gave %d", config, rc);
	ASSERT_CONTAINS(nz_error_last()->message, id_of(config));
}

int main(void)
{
	enum { N = 20000 };
	unsigned char *src = malloc(N), *bad = malloc(2 * N);
	nz_buf enc = {0}, dec = {0};
	unsigned seed = 12345;
	ASSERT(src && bad);
	for (size_t i = 0; i < N; i++)
		src[i] = (unsigned char)(i % 251 < 100 ? i % 7 : (i * 31) >> 3);
	nz__alloc_init();
	for (size_t c = 0; c < N_CODEC_CONFIGS; c++) {
		const char *cfg = codec_configs[c];
		int is_filter = strstr(cfg, "\"shuffle\"") != NULL && strstr(cfg, "blosc") == NULL;
		nz_codec *codec = parse_codec(cfg);
		ASSERT_OK(nz__codec_encode(codec, src, N, 4, &enc));
		/* Truncations: every compressor must notice. */
		for (size_t cut = 0; cut < enc.len; cut += 1 + enc.len / 50) {
			memcpy(bad, enc.data, cut);
			int rc = nz__codec_decode(codec, bad, cut, 0, &dec);
			check(cfg, rc, !is_filter);
			check(cfg, nz__codec_decode(codec, bad, cut, N, &dec), !is_filter);
		}
		/* Single-byte flips everywhere, header included. */
		for (size_t pos = 0; pos < enc.len; pos += 1 + enc.len / 300) {
			memcpy(bad, enc.data, enc.len);
			bad[pos] ^= (unsigned char)(1u << (pos % 8));
			check(cfg, nz__codec_decode(codec, bad, enc.len, 0, &dec), 0);
			check(cfg, nz__codec_decode(codec, bad, enc.len, N, &dec), 0);
		}
		/* Random garbage of several lengths. */
		for (int t = 0; t < 200; t++) {
			size_t len = (size_t)(t * 37 % 300) + 1;
			for (size_t i = 0; i < len; i++)
				bad[i] = (unsigned char)((seed = seed * 1103515245u + 12345u) >> 16);
			check(cfg, nz__codec_decode(codec, bad, len, 0, &dec), 0);
		}
		nz__codec_free(codec);
	}
	/* Hostile headers claiming huge sizes are refused before allocating. */
	{
		nz_codec *lz4 = parse_codec("{\"id\":\"lz4\",\"acceleration\":1}");
		unsigned char h[8] = {0xff, 0xff, 0xff, 0x7f, 0, 0, 0, 0};
		ASSERT_ERR(NZ_EFORMAT, nz__codec_decode(lz4, h, sizeof h, 0, &dec));
		ASSERT_CONTAINS(nz_error_last()->message, "lz4");
		nz__codec_free(lz4);
	}
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	free(src);
	free(bad);
	return 0;
}
