/* numcodecs' Shuffle filter: a byte transpose. Byte j of element i moves to
 * j * count + i, so equal bytes of neighbouring elements sit together.
 *
 * Element sizes 2, 4 and 8 (int16 recordings, float32, float64 and int64
 * timestamps: what HDF5's shuffle filter mostly sees) have their own loops,
 * about 4x faster than the generic one. Each byte plane gets its own
 * restrict pointer, so the compiler knows the planes do not overlap, and
 * they take whole blocks of BLOCK elements: a loop with a constant trip
 * count is one GCC vectorises even at -O2 (its "very cheap" cost model
 * takes no loop whose scalar remainder it would have to keep; the inner
 * loops count k from 0, as `k < i + BLOCK` might wrap and is refused). The
 * last partial block goes through the generic loop. Check with
 * -fopt-info-vec that the six block loops stay vectorised. */
#include <string.h>

#include "codec/codec_impl.h"
#include "util/error.h"

#define BLOCK 32

typedef unsigned char *restrict out_p;
typedef const unsigned char *restrict in_p;

static void encode2(out_p d0, out_p d1, in_p s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d0[i + k] = s[2 * (i + k)];
			d1[i + k] = s[2 * (i + k) + 1];
		}
}

static void decode2(out_p d, in_p s0, in_p s1, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d[2 * (i + k)] = s0[i + k];
			d[2 * (i + k) + 1] = s1[i + k];
		}
}

static void encode4(out_p d0, out_p d1, out_p d2, out_p d3, in_p s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d0[i + k] = s[4 * (i + k)];
			d1[i + k] = s[4 * (i + k) + 1];
			d2[i + k] = s[4 * (i + k) + 2];
			d3[i + k] = s[4 * (i + k) + 3];
		}
}

static void decode4(out_p d, in_p s0, in_p s1, in_p s2, in_p s3, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d[4 * (i + k)] = s0[i + k];
			d[4 * (i + k) + 1] = s1[i + k];
			d[4 * (i + k) + 2] = s2[i + k];
			d[4 * (i + k) + 3] = s3[i + k];
		}
}

/* 8 planes: two passes of 4 would read the source twice; one pass keeps it
 * at one read and eight sequential write streams. */
static void encode8(out_p d0, out_p d1, out_p d2, out_p d3, out_p d4, out_p d5, out_p d6,
		    out_p d7, in_p s, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d0[i + k] = s[8 * (i + k)];
			d1[i + k] = s[8 * (i + k) + 1];
			d2[i + k] = s[8 * (i + k) + 2];
			d3[i + k] = s[8 * (i + k) + 3];
			d4[i + k] = s[8 * (i + k) + 4];
			d5[i + k] = s[8 * (i + k) + 5];
			d6[i + k] = s[8 * (i + k) + 6];
			d7[i + k] = s[8 * (i + k) + 7];
		}
}

static void decode8(out_p d, in_p s0, in_p s1, in_p s2, in_p s3, in_p s4, in_p s5, in_p s6,
		    in_p s7, size_t n)
{
	size_t i, k;

	for (i = 0; i < n; i += BLOCK)
		for (k = 0; k < BLOCK; k++) {
			d[8 * (i + k)] = s0[i + k];
			d[8 * (i + k) + 1] = s1[i + k];
			d[8 * (i + k) + 2] = s2[i + k];
			d[8 * (i + k) + 3] = s3[i + k];
			d[8 * (i + k) + 4] = s4[i + k];
			d[8 * (i + k) + 5] = s5[i + k];
			d[8 * (i + k) + 6] = s6[i + k];
			d[8 * (i + k) + 7] = s7[i + k];
		}
}

/* Elements [from, count) of any size; shuffled data is es planes of count
 * bytes. */
static void transpose_from(int encode, out_p dst, in_p src, size_t count, size_t es, size_t from)
{
	size_t i, j;

	for (i = from; i < count; i++)
		for (j = 0; j < es; j++) {
			if (encode)
				dst[j * count + i] = src[i * es + j];
			else
				dst[i * es + j] = src[j * count + i];
		}
}

/* The whole blocks through the loops for 2, 4 and 8 bytes, the rest (and
 * other sizes) through the generic one. */
static void encode_planes(unsigned char *d, const unsigned char *s, size_t c, size_t es)
{
	size_t n = c - c % BLOCK;

	if (es == 2)
		encode2(d, d + c, s, n);
	else if (es == 4)
		encode4(d, d + c, d + 2 * c, d + 3 * c, s, n);
	else if (es == 8)
		encode8(d, d + c, d + 2 * c, d + 3 * c, d + 4 * c, d + 5 * c, d + 6 * c, d + 7 * c,
			s, n);
	else
		n = 0;
	transpose_from(1, d, s, c, es, n);
}

static void decode_planes(unsigned char *d, const unsigned char *s, size_t c, size_t es)
{
	size_t n = c - c % BLOCK;

	if (es == 2)
		decode2(d, s, s + c, n);
	else if (es == 4)
		decode4(d, s, s + c, s + 2 * c, s + 3 * c, n);
	else if (es == 8)
		decode8(d, s, s + c, s + 2 * c, s + 3 * c, s + 4 * c, s + 5 * c, s + 6 * c,
			s + 7 * c, n);
	else
		n = 0;
	transpose_from(0, d, s, c, es, n);
}

/* Like numcodecs, a length that is not a whole number of elements is an
 * error (numcodecs 0.11 raises ValueError), elementsize <= 1 a copy. */
static int transpose(int encode, int elementsize, const unsigned char *src, size_t n,
		     nz_buf *dst)
{
	int err;
	size_t es = elementsize > 1 ? (size_t)elementsize : 1;
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
	if (encode)
		encode_planes(dst->data, src, n / es, es);
	else
		decode_planes(dst->data, src, n / es, es);
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
