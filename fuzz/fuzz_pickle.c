/* Fuzz target: the restricted pickle decoder (src/zarr/pickle.h), which
 * reads hdmf-zarr <= 0.13's pickle-coded object chunks.
 *
 * Input: byte 0 = ndim (0..3, mod 4), then ndim bytes = the chunk shape,
 * the rest = the pickle (seeds: fuzz/gen_pickle_seeds.py).
 *
 * Properties checked (abort on violation):
 * - nz__pickle_decode never crashes or runs away; failure is NZ_EFORMAT,
 *   NZ_EUNSUPPORTED or NZ_ENOMEM with a message, and *out stays NULL;
 * - allocation stays bounded by the input (ASan reports any oversized
 *   allocation; the elements' JSON text is checked below);
 * - on success, the result is a list of exactly prod(shape) elements whose
 *   compact JSON text, all together, stays within the decoder's bound of
 *   NZ__PICKLE_MAX_GROWTH times the input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/json.h"
#include "zarr/pickle.h"
#include "fuzz_common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t shape[3];
	json_t *out = NULL;
	nz_buf text = { 0 };
	size_t total = 1, i, body;
	int ndim, d, rc;
	if (size < 1)
		return 0;
	nz__alloc_init();
	ndim = data[0] % 4;
	if (size < 1 + (size_t)ndim)
		return 0;
	for (d = 0; d < ndim; d++) {
		shape[d] = data[1 + d];
		total *= shape[d];
	}
	body = 1 + (size_t)ndim;
	rc = nz__pickle_decode(&out, data + body, size - body, shape, ndim, "array 'fuzz'");
	if (rc < 0) {
		check_failure(rc);
		CHECK(rc == NZ_EFORMAT || rc == NZ_EUNSUPPORTED || rc == NZ_ENOMEM);
		CHECK(out == NULL);
		return 0;
	}
	CHECK(json_is_array(out) && json_array_size(out) == total);
	for (i = 0; i < total; i++) {
		rc = nz__json_emit(&text, json_array_get(out, i), NZ_JSON_COMPACT);
		CHECK(rc == 0 || rc == NZ_ENOMEM);
	}
	CHECK(text.len <= (size - body) * NZ__PICKLE_MAX_GROWTH + 4096);
	nz__buf_free(&text);
	json_decref(out);
	return 0;
}
