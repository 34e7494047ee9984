/* The shuffle filter against a plain byte transpose: element sizes with
 * their own loops (2, 4, 8) and generic ones (3, 5, 16), element counts
 * around the loops' block size (0, 1, 31, 32, 33, ...), an odd source
 * address; lengths that are not whole elements fail like numcodecs 0.11's
 * ValueError, for encode and decode, with no output. */
#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

/* Byte j of element i goes to j * count + i. */
static void reference(unsigned char *out, const unsigned char *in, size_t count, size_t es)
{
	for (size_t i = 0; i < count; i++)
		for (size_t j = 0; j < es; j++)
			out[j * count + i] = in[i * es + j];
}

static nz_codec *shuffle_codec(size_t es)
{
	char cfg[64];
	snprintf(cfg, sizeof cfg, "{\"id\":\"shuffle\",\"elementsize\":%zu}", es);
	return parse_codec(cfg);
}

int main(void)
{
	static const size_t sizes[] = {2, 4, 8, 3, 5, 16};
	static const size_t counts[] = {0, 1, 2, 31, 32, 33, 63, 64, 65, 1000, 4099};
	unsigned char *in = malloc(4099 * 16 + 1), *ref = malloc(4099 * 16 + 1);
	nz_buf enc = {0}, dec = {0};
	char want[80];

	ASSERT(in && ref);
	nz__alloc_init();
	for (size_t k = 0; k < 4099 * 16 + 1; k++)
		in[k] = (unsigned char)(k * 131 + (k >> 7));
	for (size_t e = 0; e < sizeof sizes / sizeof *sizes; e++) {
		size_t es = sizes[e];
		nz_codec *c = shuffle_codec(es);
		for (size_t k = 0; k < sizeof counts / sizeof *counts; k++) {
			size_t n = counts[k] * es;
			/* in + 1: no alignment to lean on. */
			reference(ref, in + 1, counts[k], es);
			ASSERT_OK(nz__codec_encode(c, in + 1, n, es, &enc));
			ASSERT_EQ_U64(enc.len, n);
			if (memcmp(enc.data, ref, n) != 0)
				NZ__FAIL("elementsize %zu, %zu elements: encoding differs", es, counts[k]);
			ASSERT_OK(nz__codec_decode(c, enc.data, enc.len, n, &dec));
			ASSERT_EQ_U64(dec.len, n);
			if (memcmp(dec.data, in + 1, n) != 0)
				NZ__FAIL("elementsize %zu, %zu elements: decoding differs", es, counts[k]);
		}
		/* 1 .. es-1 bytes past whole elements (and fewer bytes than one
		 * element): NZ_EFORMAT naming the codec and the sizes. */
		for (size_t extra = 1; extra < es; extra++) {
			size_t lens[2] = {extra, 33 * es + extra};
			for (size_t l = 0; l < 2; l++) {
				snprintf(want, sizeof want, "%zu bytes are not a multiple of elementsize %zu",
					 lens[l], es);
				ASSERT_ERR(NZ_EFORMAT, nz__codec_encode(c, in, lens[l], es, &enc));
				ASSERT_CONTAINS(nz_error_last()->message, "shuffle");
				ASSERT_CONTAINS(nz_error_last()->message, want);
				ASSERT_EQ_U64(enc.len, 0);
				ASSERT_ERR(NZ_EFORMAT, nz__codec_decode(c, in, lens[l], 0, &dec));
				ASSERT_CONTAINS(nz_error_last()->message, want);
			}
		}
		nz__codec_free(c);
	}
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	free(in);
	free(ref);
	printf("ok\n");
	return 0;
}
