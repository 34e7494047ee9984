/* Every allocation of parsing, encoding and decoding can fail (tests/oom.h):
 * each refused allocation gives NZ_ENOMEM with a message, never success, a
 * crash or, under ASan, a leak. */
#include "codec/codec.h"
#include "oom.h"
#include "util/error.h"
#include "codec_configs.h"

static unsigned char g_src[3000];

static int run_config(const char *config, const unsigned char *src, size_t n)
{
	json_error_t je;
	nz_codec *c = NULL;
	nz_buf enc = {0}, dec = {0};
	json_t *j = json_loads(config, 0, &je), *out = NULL;
	int rc = j ? 0 : nz__error_set(NZ_ENOMEM, "out of memory parsing %s", config);
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

static int run(void *ctx)
{
	return run_config(ctx, g_src, sizeof g_src);
}

int main(void)
{
	for (size_t i = 0; i < sizeof g_src; i++)
		g_src[i] = (unsigned char)(i / 10);
	nz__alloc_init();
	for (size_t c = 0; c < N_CODEC_CONFIGS; c++) {
		nz_oom_sweep s = {codec_configs[c], run, NULL, NULL, (void *)codec_configs[c], 0, 0, 0, 0};
		nz_oom_run_sweep(&s);
	}
	return 0;
}
