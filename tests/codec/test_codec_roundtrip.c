/* Every codec config x several sizes and item sizes (0 bytes included)
 * decodes back to its input, with and without the expected size. */
#include <zlib.h>
#include <zstd.h>

#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

/* Compressible but not trivial: slowly varying little-endian integers. */
static void fill(unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (unsigned char)((i % 4 == 0) ? (i / 64) & 0xff : (i % 4 == 1) ? (i * 7) % 13 : 0);
}

/* a and b encode src to the same bytes (x and y hold them). */
static void same_bytes(nz_codec *a, nz_codec *b, const void *src, size_t n, nz_buf *x, nz_buf *y)
{
	ASSERT_OK(nz__codec_encode(a, src, n, 2, x));
	ASSERT_OK(nz__codec_encode(b, src, n, 2, y));
	ASSERT_EQ_U64(x->len, y->len);
	ASSERT_MEM_EQ(x->data, y->data, x->len);
}

int main(void)
{
	static const size_t sizes[] = {0, 1, 8, 100, 4096, 100000, 1 << 20};
	static const size_t itemsizes[] = {1, 2, 4, 8};
	unsigned char *src = malloc(1 << 20);
	nz_buf enc = {0}, dec = {0};
	ASSERT(src);
	fill(src, 1 << 20);
	nz__alloc_init();
	for (size_t c = 0; c < N_CODEC_CONFIGS; c++) {
		nz_codec *codec = parse_codec(codec_configs[c]);
		for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
			for (size_t k = 0; k < sizeof itemsizes / sizeof itemsizes[0]; k++) {
				/* Shuffle needs whole elements (elementsize 4 divides 8). */
				size_t unit = strstr(codec_configs[c], "\"id\":\"shuffle") ? 8 : itemsizes[k];
				size_t n = sizes[s] - sizes[s] % unit;
				int rc = nz__codec_encode(codec, src, n, itemsizes[k], &enc);
				if (rc != 0)
					NZ__FAIL("%s: encode %zu bytes failed", codec_configs[c], n);
				rc = nz__codec_decode(codec, enc.data, enc.len, n, &dec);
				if (rc != 0 || dec.len != n || (n && memcmp(dec.data, src, n) != 0))
					NZ__FAIL("%s: %zu bytes (itemsize %zu) do not round-trip",
						 codec_configs[c], n, itemsizes[k]);
				/* Unknown size: the codec finds it from its framing. */
				ASSERT_OK(nz__codec_decode(codec, enc.data, enc.len, 0, &dec));
				ASSERT_EQ_U64(dec.len, n);
				if (n == 1 << 20 && strstr(codec_configs[c], "level\":0") == NULL &&
				    strstr(codec_configs[c], "\"id\":\"shuffle") == NULL &&
				    strstr(codec_configs[c], "\"id\":\"crc32c") == NULL)
					if (enc.len >= n) /* it really compressed */
						NZ__FAIL("%s: %zu bytes (itemsize %zu) -> %zu",
							 codec_configs[c], n, itemsizes[k], enc.len);
				/* A wrong expected size is a format error, not a crash. */
				ASSERT_ERR(NZ_EFORMAT,
					   nz__codec_decode(codec, enc.data, enc.len, n + 8, &dec));
			}
		nz__codec_free(codec);
	}
	/* Shuffle really transposes: element bytes are gathered by position. */
	{
		nz_codec *sh = parse_codec("{\"id\":\"shuffle\",\"elementsize\":2}");
		ASSERT_OK(nz__codec_encode(sh, "aAbBcC", 6, 2, &enc));
		ASSERT_MEM_EQ(enc.data, "abcABC", 6);
		ASSERT_ERR(NZ_EFORMAT, nz__codec_encode(sh, "abc", 3, 1, &enc));
		ASSERT_CONTAINS(nz_error_last()->message, "shuffle");
		nz__codec_free(sh);
	}
	/* gzip output is deterministic (mtime 0) and starts with a gzip header. */
	{
		nz_codec *gz = parse_codec("{\"id\":\"gzip\",\"level\":1}");
		nz_buf again = {0};
		same_bytes(gz, gz, src, 1000, &enc, &again);
		ASSERT(enc.data[0] == 0x1f && enc.data[1] == 0x8b && enc.data[4] == 0);
		/* Two concatenated members (with zero padding) decode as one stream. */
		ASSERT_OK(nz__buf_append(&again, "\0\0", 2));
		ASSERT_OK(nz__buf_append(&again, enc.data, enc.len));
		ASSERT_OK(nz__codec_decode(gz, again.data, again.len, 0, &dec));
		ASSERT_EQ_U64(dec.len, 2000);
		ASSERT_MEM_EQ(dec.data + 1000, src, 1000);
		nz__buf_free(&again);
		nz__codec_free(gz);
	}
	/* zlib and gzip bytes come from libdeflate: zlib itself must read them
	 * (wbits 15: zlib wrapper; 31: gzip), at every level the configs allow
	 * (0 = stored blocks), with the header zlib/Python would write for the
	 * level. */
	for (int gzip = 0; gzip <= 1; gzip++)
		for (int level = -1; level <= 9; level++) {
			char cfg[64];
			nz_codec *dc;
			unsigned char *back = malloc(100001);
			z_stream zs;
			snprintf(cfg, sizeof cfg, "{\"id\":\"%s\",\"level\":%d}", gzip ? "gzip" : "zlib", level);
			dc = parse_codec(cfg);
			ASSERT(back);
			ASSERT_OK(nz__codec_encode(dc, src, 100000, 2, &enc));
			memset(&zs, 0, sizeof zs);
			ASSERT(inflateInit2(&zs, gzip ? 31 : 15) == Z_OK);
			zs.next_in = enc.data;
			zs.avail_in = (uInt)enc.len;
			zs.next_out = back;
			zs.avail_out = 100001;
			if (inflate(&zs, Z_FINISH) != Z_STREAM_END || zs.total_out != 100000 || zs.avail_in != 0 ||
			    memcmp(back, src, 100000) != 0)
				NZ__FAIL("%s: zlib does not read libdeflate's stream back", cfg);
			inflateEnd(&zs);
			if (gzip) {
				/* Python's gzip header with mtime 0: XFL 2 at level 9, 4 at 1. */
				static const unsigned char head[8] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0};
				ASSERT_MEM_EQ(enc.data, head, 8);
				ASSERT(enc.data[8] == (level == 9 ? 2 : level == 1 ? 4 : 0) && enc.data[9] == 255);
			} else {
				/* FLEVEL as zlib sets it: 0 below 2, 1 below 6, 2 at 6 (and -1), 3 above. */
				int eff = level < 0 ? 6 : level;
				ASSERT(enc.data[0] == 0x78 && (enc.data[0] * 256 + enc.data[1]) % 31 == 0);
				ASSERT_EQ_INT(enc.data[1] >> 6, eff < 2 ? 0 : eff < 6 ? 1 : eff == 6 ? 2 : 3);
			}
			if (level == 0)
				ASSERT(enc.len > 100000); /* stored, not compressed */
			else if (enc.len >= 100000)
				NZ__FAIL("%s: 100000 bytes -> %zu", cfg, enc.len);
			free(back);
			nz__codec_free(dc);
		}
	/* zlib's -1 (Z_DEFAULT_COMPRESSION) is level 6: the same bytes. */
	{
		nz_codec *dflt = parse_codec("{\"id\":\"zlib\",\"level\":-1}");
		nz_codec *six = parse_codec("{\"id\":\"zlib\",\"level\":6}");
		nz_buf again = {0};
		same_bytes(dflt, six, src, 100000, &enc, &again);
		nz__buf_free(&again);
		nz__codec_free(dflt);
		nz__codec_free(six);
	}
	/* zstd from streaming writers: no content size, several frames. */
	{
		nz_codec *zs = parse_codec("{\"id\":\"zstd\",\"level\":3}");
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		size_t cap = ZSTD_compressBound(300000) + ZSTD_compressBound(1000);
		unsigned char *z = malloc(cap);
		size_t a, b;
		ASSERT(cc && z);
		ASSERT(!ZSTD_isError(ZSTD_CCtx_setParameter(cc, ZSTD_c_contentSizeFlag, 0)));
		a = ZSTD_compress2(cc, z, cap, src, 300000);
		ASSERT(!ZSTD_isError(a));
		ASSERT(ZSTD_getFrameContentSize(z, a) == ZSTD_CONTENTSIZE_UNKNOWN);
		ASSERT_OK(nz__codec_decode(zs, z, a, 0, &dec));
		ASSERT_EQ_U64(dec.len, 300000);
		ASSERT_MEM_EQ(dec.data, src, 300000);
		ASSERT_OK(nz__codec_decode(zs, z, a, 300000, &dec));
		ASSERT_ERR(NZ_EFORMAT, nz__codec_decode(zs, z, a, 1000, &dec));
		ASSERT_ERR(NZ_ECODEC, nz__codec_decode(zs, z, a - 10, 0, &dec));
		b = ZSTD_compress(z + a, cap - a, src, 1000, 1);
		ASSERT(!ZSTD_isError(b));
		ASSERT_OK(nz__codec_decode(zs, z, a + b, 301000, &dec));
		ASSERT_MEM_EQ(dec.data + 300000, src, 1000);
		ZSTD_freeCCtx(cc);
		free(z);
		nz__codec_free(zs);
	}
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	free(src);
	return 0;
}
