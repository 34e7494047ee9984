/* Every allocation of parsing, encoding and decoding can fail: each failure
 * point gives NZ_ENOMEM (never a crash or, under ASan, a leak). */
#include "codec/codec.h"
#include "test.h"
#include "util/alloc.h"
#include "codec_configs.h"

static int run(const char *config, const unsigned char *src, size_t n)
{
	json_error_t je;
	nz_codec *c = NULL;
	nz_buf enc = {0}, dec = {0};
	json_t *j = json_loads(config, 0, &je), *out = NULL;
	int rc = j ? 0 : NZ_ENOMEM;
	if (rc == 0)
		rc = nz__codec_from_json(&c, j);
	if (rc == 0)
		rc = nz__codec_to_json(&out, c);
	if (rc == 0)
		rc = nz__codec_encode(c, src, n, 4, &enc);
	if (rc == 0)
		rc = nz__codec_decode(c, enc.data, enc.len, 0, &dec);
	if (rc == 0 && (dec.len != n || memcmp(dec.data, src, n) != 0))
		NZ__FAIL("%s: wrong round trip", config);
	json_decref(out);
	json_decref(j);
	nz__codec_free(c);
	nz__buf_free(&enc);
	nz__buf_free(&dec);
	return rc;
}

int main(void)
{
	unsigned char src[3000];
	for (size_t i = 0; i < sizeof src; i++)
		src[i] = (unsigned char)(i / 10);
	nz__alloc_init();
	for (size_t c = 0; c < N_CODEC_CONFIGS; c++) {
		long k;
		for (k = 1; k < 1000; k++) {
			int rc;
			nz__alloc_fail_after(k);
			rc = run(codec_configs[c], src, sizeof src);
			nz__alloc_fail_after(0);
			if (rc == 0)
				break;
			if (rc != NZ_ENOMEM)
				NZ__FAIL("%s: allocation %ld failing gave %d", codec_configs[c], k, rc);
		}
		ASSERT(k > 1 && k < 1000); /* some allocation was made and then all succeeded */
	}
	return 0;
}
