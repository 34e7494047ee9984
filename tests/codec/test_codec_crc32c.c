/* crc32c: the standard check values, the Zarr v3 layout (data, then the
 * little-endian CRC32C), chaining, lengths beyond isa-l's int argument, and
 * clear errors for a wrong or missing checksum. */
#include <sys/mman.h>

#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

static void check_vectors(void)
{
	unsigned char z[32] = {0}, ff[32], inc[32];
	for (int i = 0; i < 32; i++) {
		ff[i] = 0xff;
		inc[i] = (unsigned char)i;
	}
	/* The CRC-32C catalogue's check value and RFC 3720's B.4 vectors. */
	ASSERT_EQ_U64(nz__crc32c(0, "123456789", 9), 0xE3069283u);
	ASSERT_EQ_U64(nz__crc32c(0, "", 0), 0);
	ASSERT_EQ_U64(nz__crc32c(0, z, 32), 0x8A9136AAu);
	ASSERT_EQ_U64(nz__crc32c(0, ff, 32), 0x62A8AB43u);
	ASSERT_EQ_U64(nz__crc32c(0, inc, 32), 0x46DD794Eu);
	/* Chained calls give the CRC of the concatenation. */
	ASSERT_EQ_U64(nz__crc32c(nz__crc32c(0, "1234", 4), "56789", 5), 0xE3069283u);
}

/* Over INT_MAX bytes (zero pages of an untouched anonymous mapping: no real
 * memory): one call equals the same bytes fed in pieces isa-l can take. */
static void check_big(void)
{
	size_t n = (size_t)INT32_MAX + 4097, piece = (size_t)1 << 28;
	unsigned char *p = mmap(NULL, n, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
				-1, 0);
	uint32_t chained = 0;
	ASSERT(p != MAP_FAILED);
	for (size_t off = 0; off < n; off += piece)
		chained = nz__crc32c(chained, p + off, n - off < piece ? n - off : piece);
	ASSERT_EQ_U64(nz__crc32c(0, p, n), chained);
	ASSERT(chained != nz__crc32c(0, p, n - 1));
	munmap(p, n);
}

int main(void)
{
	nz_codec *c;
	nz_buf enc = {0}, dec = {0};
	json_t *j = NULL;
	nz__alloc_init();
	check_vectors();
	check_big();

	c = parse_codec("{\"id\":\"crc32c\"}");
	ASSERT_EQ_STR(nz__codec_id(c), "crc32c");
	ASSERT_OK(nz__codec_encode(c, "123456789", 9, 1, &enc));
	ASSERT_EQ_U64(enc.len, 13);
	ASSERT_MEM_EQ(enc.data, "123456789\x83\x92\x06\xE3", 13);
	ASSERT_OK(nz__codec_decode(c, enc.data, enc.len, 9, &dec));
	ASSERT_EQ_U64(dec.len, 9);
	ASSERT_MEM_EQ(dec.data, "123456789", 9);
	/* Empty data: just the checksum of nothing. */
	ASSERT_OK(nz__codec_encode(c, NULL, 0, 1, &enc));
	ASSERT_EQ_U64(enc.len, 4);
	ASSERT_MEM_EQ(enc.data, "\0\0\0\0", 4);
	ASSERT_OK(nz__codec_decode(c, enc.data, 4, 0, &dec));
	ASSERT_EQ_U64(dec.len, 0);

	/* Corruption anywhere, data or checksum, is a named mismatch. */
	ASSERT_OK(nz__codec_encode(c, "123456789", 9, 1, &enc));
	for (size_t pos = 0; pos < enc.len; pos++) {
		enc.data[pos] ^= 0x10;
		ASSERT_ERR(NZ_ECODEC, nz__codec_decode(c, enc.data, enc.len, 0, &dec));
		ASSERT_CONTAINS(nz_error_last()->message, "crc32c");
		ASSERT_CONTAINS(nz_error_last()->message, "checksum mismatch");
		enc.data[pos] ^= 0x10;
	}
	ASSERT_ERR(NZ_EFORMAT, nz__codec_decode(c, enc.data, 3, 0, &dec));
	ASSERT_CONTAINS(nz_error_last()->message, "4-byte checksum");
	ASSERT_ERR(NZ_EFORMAT, nz__codec_decode(c, enc.data, enc.len, 10, &dec));

	/* The config as written, and what is refused. */
	ASSERT_OK(nz__codec_to_json(&j, c));
	{
		char *text = json_dumps(j, JSON_SORT_KEYS | JSON_COMPACT);
		ASSERT_EQ_STR(text, "{\"id\":\"crc32c\",\"location\":\"end\"}");
		free(text);
	}
	json_decref(j);
	nz__codec_free(c);
	{
		static const struct {
			const char *cfg;
			int code;
		} bad[] = {{"{\"id\":\"crc32c\",\"location\":\"start\"}", NZ_EUNSUPPORTED},
			   {"{\"id\":\"crc32c\",\"location\":1}", NZ_EFORMAT},
			   {"{\"id\":\"crc32c\",\"level\":1}", NZ_EFORMAT}};
		for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
			json_t *cfg = json_loads(bad[i].cfg, 0, NULL);
			ASSERT(cfg);
			ASSERT_ERR(bad[i].code, nz__codec_from_json(&c, cfg));
			ASSERT_CONTAINS(nz_error_last()->message, "crc32c");
			json_decref(cfg);
		}
	}
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	return 0;
}
