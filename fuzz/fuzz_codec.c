/* Fuzz target: numcodecs codec configurations and hostile encoded bytes.
 *
 * Input: a codec config (JSON text) and a payload, separated by the first NUL
 * byte ("config\0payload"); without a NUL the whole input is the config and
 * the payload is empty.
 *
 * Properties checked (abort on violation, so the fuzzer reports them):
 * - nz__codec_from_json never crashes; failure leaves a message.
 * - A parsed config serialises (nz__codec_to_json) and re-parses to the same
 *   JSON.
 * - Decoding the payload as encoded bytes fails cleanly or succeeds; when it
 *   succeeds, decoding again with `expected` = the decoded size gives the
 *   same bytes, and `expected` = size + 1 fails.
 * - Encoding the payload as raw data and decoding it gives the payload back.
 *
 * Blosc payloads whose header claims more than FUZZ_MAX_TRUSTED bytes are not
 * decoded (see fuzz_common.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "codec/codec.h"
#include "util/alloc.h"
#include "util/json.h"
#include "fuzz_common.h"

/* to_json -> from_json -> to_json is a fixed point (the input itself may
 * hold fields the writer normalises away, e.g. zstd's checksum). */
static void check_config_roundtrip(const nz_codec *c)
{
	json_t *out = NULL, *out2 = NULL;
	nz_codec *again = NULL;
	int rc = nz__codec_to_json(&out, c);
	if (rc < 0) { /* only allocation can fail here */
		CHECK(rc == NZ_ENOMEM);
		return;
	}
	CHECK(nz__codec_from_json(&again, out) == 0);
	CHECK(strcmp(nz__codec_id(again), nz__codec_id(c)) == 0);
	CHECK(nz__codec_to_json(&out2, again) == 0);
	CHECK(json_equal(out, out2));
	nz__codec_free(again);
	json_decref(out);
	json_decref(out2);
}

static void check_decode(const nz_codec *c, const uint8_t *p, size_t n)
{
	nz_buf a = {0}, b = {0};
	int rc;
	if (strcmp(nz__codec_id(c), "blosc") == 0 && blosc_claims_too_much(p, n))
		return;
	rc = nz__codec_decode(c, p, n, 0, &a);
	if (rc < 0) {
		check_failure(rc);
		goto done;
	}
	if (a.len > 0) {
		CHECK(nz__codec_decode(c, p, n, a.len, &b) == 0);
		CHECK(b.len == a.len && memcmp(a.data, b.data, a.len) == 0);
		check_failure(nz__codec_decode(c, p, n, a.len + 1, &b));
	}
done:
	nz__buf_free(&a);
	nz__buf_free(&b);
}

static void check_encode(const nz_codec *c, const uint8_t *p, size_t n)
{
	nz_buf enc = {0}, dec = {0};
	size_t itemsize = 1 + n % 8;
	int rc = nz__codec_encode(c, p, n, itemsize, &enc);
	if (rc < 0) { /* shuffle refuses a length that is not a multiple */
		check_failure(rc);
		goto done;
	}
	CHECK(nz__codec_decode(c, enc.data, enc.len, n, &dec) == 0);
	CHECK(dec.len == n && (n == 0 || memcmp(dec.data, p, n) == 0));
done:
	nz__buf_free(&enc);
	nz__buf_free(&dec);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *payload;
	size_t clen, plen;
	json_t *config = NULL;
	nz_codec *c = NULL;
	int rc;

	split_at_nul(&clen, &payload, &plen, data, size);
	nz__alloc_init();
	if (nz__json_parse(&config, data, clen, "codec config", 0) < 0)
		return 0;
	rc = nz__codec_from_json(&c, config);
	if (rc < 0) {
		check_failure(rc);
		CHECK(c == NULL);
		goto done;
	}
	check_config_roundtrip(c);
	check_decode(c, payload, plen);
	check_encode(c, payload, plen);
done:
	nz__codec_free(c);
	json_decref(config);
	return 0;
}
