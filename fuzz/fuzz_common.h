/* Shared by the fuzz targets: a failed property aborts, which libFuzzer (and
 * the ctest replay) reports like a crash. */
#ifndef NZ_FUZZ_COMMON_H
#define NZ_FUZZ_COMMON_H

#include <blosc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr/common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(c)                                                                          \
	do {                                                                              \
		if (!(c))                                                                 \
			abort();                                                          \
	} while (0)

/* A library failure: a negative code that is also the thread's last error,
 * with a message. */
static inline void check_failure(int rc)
{
	CHECK(rc < 0);
	CHECK(nz_error_last()->code == rc && nz_error_last()->message[0] != '\0');
}

/* Split "<head>\0<tail>": *head_len bytes before the first NUL, and the tail
 * after it (empty when there is no NUL). */
static inline void split_at_nul(size_t *head_len, const uint8_t **tail, size_t *tail_len,
				const uint8_t *data, size_t size)
{
	const uint8_t *sep = memchr(data, 0, size);
	*head_len = sep ? (size_t)(sep - data) : size;
	*tail = sep ? sep + 1 : data + size;
	*tail_len = sep ? size - *head_len - 1 : 0;
}

/* Largest decoded size a target lets a blosc header claim when the decoder
 * has no expected size (object-array chunks, codec decode with expected 0):
 * the codec layer then trusts the header for its allocation, as numcodecs
 * does (codec.h), so a 32-byte input can ask for 2 GiB. That is documented
 * behaviour, not a finding, and would stop libFuzzer with out-of-memory. */
#define FUZZ_MAX_TRUSTED ((size_t)1 << 24)

/* 1 if `p` starts like a blosc buffer whose header claims more than
 * FUZZ_MAX_TRUSTED decoded bytes. */
static inline int blosc_claims_too_much(const void *p, size_t n)
{
	size_t nbytes = 0, cbytes = 0, blocksize = 0;
	if (n < BLOSC_MIN_HEADER_LENGTH)
		return 0;
	blosc_cbuffer_sizes(p, &nbytes, &cbytes, &blocksize);
	return nbytes > FUZZ_MAX_TRUSTED;
}

#endif
