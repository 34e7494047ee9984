/* Fuzz target: nz_oebin_parse (Open Ephys structure.oebin, JSON).
 *
 * Input: "<stream>\n<document>" when the first line is short and has no
 * '{' (the stream's folder name to select), else the whole input is the
 * document and the first stream is taken.
 *
 * Properties: never crashes; failure is NZ_EFORMAT or (for a stream that is
 * not there) NZ_ENOTFOUND, naming the document; on success channels >= 1,
 * the rate is positive and finite, and format is "openephys". */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz_recording_info info;
	char stream[64];
	const char *sel = NULL;
	const uint8_t *nl = memchr(data, '\n', size < sizeof stream ? size : sizeof stream);
	int rc;
	if (nl && !memchr(data, '{', (size_t)(nl - data)) && !memchr(data, '\0', (size_t)(nl - data))) {
		memcpy(stream, data, (size_t)(nl - data));
		stream[nl - data] = '\0';
		sel = stream;
		size -= (size_t)(nl - data) + 1;
		data = nl + 1;
	}
	rc = nz_oebin_parse(&info, (const char *)data, size, "fuzz.oebin", sel);
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT || (rc == NZ_ENOTFOUND && sel));
		CHECK(strstr(nz_error_last()->message, "fuzz.oebin") != NULL);
		return 0;
	}
	CHECK(rc == 0);
	CHECK(info.format && strcmp(info.format, "openephys") == 0);
	CHECK(info.channels >= 1);
	CHECK(info.rate > 0 && isfinite(info.rate));
	CHECK(isfinite(info.conversion));
	return 0;
}
