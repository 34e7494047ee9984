/* Fuzz target: nz_spikeglx_meta_parse (SpikeGLX .meta side-cars, key=value
 * lines). The input is passed as is: the API takes (text, len) and must not
 * read past len (the buffer is not NUL-terminated).
 *
 * Properties: never crashes; failure is NZ_EFORMAT naming the document; on
 * success channels >= 1, the rate is positive and finite, the conversion is
 * not negative, format is "spikeglx" and dtype a terminated string. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	nz_recording_info info;
	int rc = nz_spikeglx_meta_parse(&info, (const char *)data, size, "fuzz.ap.meta");
	if (rc < 0) {
		CHECK(rc == NZ_EFORMAT);
		CHECK(strstr(nz_error_last()->message, "fuzz.ap.meta") != NULL);
		return 0;
	}
	CHECK(rc == 0);
	CHECK(info.version == NZ_RECORDING_INFO_VERSION);
	CHECK(info.format && strcmp(info.format, "spikeglx") == 0);
	CHECK(info.channels >= 1);
	CHECK(info.rate > 0 && isfinite(info.rate));
	CHECK(!(info.conversion < 0) && !isnan(info.conversion));
	CHECK(memchr(info.dtype, '\0', sizeof info.dtype) != NULL);
	return 0;
}
