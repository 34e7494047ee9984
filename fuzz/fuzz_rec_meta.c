/* Fuzz target: nz_rec_parse_meta (a SpikeGLX .meta as one stream, with
 * its probe table, gains and geometry).
 *
 * Input: "<file name>\n<meta text>" when the first line ends in ".meta",
 * else the whole input is the text of "fuzz_g0_t0.imec0.ap.meta".
 *
 * Properties: never crashes; failure is NZ_EFORMAT naming the file; on
 * success one stream whose channels match its columns, every neural
 * channel has a positive finite gain and a position, and columns are in
 * file order. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "nwbzarr.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char name[96] = "fuzz_g0_t0.imec0.ap.meta";
	const uint8_t *nl = memchr(data, '\n', size < sizeof name ? size : sizeof name);
	const nz_rec_stream *s;
	nz_rec *r = NULL;
	int rc;
	if (nl && nl - data > 5 && memcmp(nl - 5, ".meta", 5) == 0 &&
	    !memchr(data, '\0', (size_t)(nl - data))) {
		memcpy(name, data, (size_t)(nl - data));
		name[nl - data] = '\0';
		size -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	rc = nz_rec_parse_meta(&r, (const char *)data, size, name);
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT && r == NULL);
		CHECK(strstr(nz_error_last()->message, name) != NULL);
		return 0;
	}
	CHECK(nz_rec_count(r) == 1);
	s = nz_rec_get(r, 0);
	CHECK(s->columns >= 1 && s->n_channels == s->columns);
	CHECK(s->rate > 0 && isfinite(s->rate));
	for (size_t i = 0; i < s->n_channels; i++) {
		const nz_rec_channel *c = &s->channels[i];
		CHECK(c->column == i);
		CHECK(isfinite(c->volts_per_count) && c->volts_per_count >= 0);
		if (c->kind == NZ_REC_NEURAL)
			CHECK(c->volts_per_count > 0 && isfinite(c->x) && isfinite(c->y));
	}
	nz_rec_free(r);
	return 0;
}
