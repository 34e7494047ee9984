/* numcodecs' Shuffle filter: a byte transpose. Byte j of element i moves to
 * j * count + i, so equal bytes of neighbouring elements sit together. */
#include <string.h>

#include "codec/codec_impl.h"
#include "util/error.h"

static int transpose(int encode, int elementsize, const unsigned char *src, size_t n,
		     nz_buf *dst)
{
	int err;
	size_t es = elementsize > 1 ? (size_t)elementsize : 1, count, i, j;
	if (n % es != 0)
		return nz__error_set(NZ_EFORMAT,
				     "codec 'shuffle': %zu bytes are not a multiple of elementsize %d",
				     n, elementsize);
	if ((err = nz__buf_reserve(dst, n ? n : 1)) < 0)
		return err;
	dst->len = n;
	if (es == 1) {
		if (n)
			memcpy(dst->data, src, n);
		return 0;
	}
	count = n / es;
	for (i = 0; i < count; i++)
		for (j = 0; j < es; j++) {
			if (encode)
				dst->data[j * count + i] = src[i * es + j];
			else
				dst->data[i * es + j] = src[j * count + i];
		}
	return 0;
}

int nz__shuffle_encode(int elementsize, const void *src, size_t n, nz_buf *dst)
{
	return transpose(1, elementsize, src, n, dst);
}

int nz__shuffle_decode(int elementsize, const void *src, size_t n, nz_buf *dst)
{
	return transpose(0, elementsize, src, n, dst);
}
