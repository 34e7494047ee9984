/* Fuzz target: nz_rec_parse_oebin (every continuous stream of an Open
 * Ephys structure.oebin).
 *
 * Properties: never crashes; failure is NZ_EFORMAT naming the document;
 * on success at least one stream, ids unique and sorted, each with as many
 * channels as columns, volts per count finite and not negative. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nwbzarr.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz_rec *r = NULL;
	int rc = nz_rec_parse_oebin(&r, (const char *)data, size, "fuzz.oebin", NULL);
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT && r == NULL);
		CHECK(strstr(nz_error_last()->message, "fuzz.oebin") != NULL);
		return 0;
	}
	CHECK(nz_rec_count(r) >= 1);
	for (size_t k = 0; k < nz_rec_count(r); k++) {
		const nz_rec_stream *s = nz_rec_get(r, k);
		CHECK(s->columns >= 1 && s->n_channels == s->columns);
		CHECK(s->rate > 0 && isfinite(s->rate));
		CHECK(k == 0 || strcmp(nz_rec_get(r, k - 1)->id, s->id) < 0);
		for (size_t i = 0; i < s->n_channels; i++)
			CHECK(isfinite(s->channels[i].volts_per_count) &&
			      s->channels[i].volts_per_count >= 0);
	}
	nz_rec_free(r);
	return 0;
}
