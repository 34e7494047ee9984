#include "engine/box.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "nwbzarr/zarr.h"
#include "util/alloc.h"
#include "util/error.h"

void nz__copy_box(void *dst, const uint64_t *dst_shape, const uint64_t *dst_off,
		  const void *src, const uint64_t *src_shape, const uint64_t *src_off,
		  const uint64_t *count, int ndim, size_t itemsize)
{
	size_t sstride[NZ_MAX_DIMS], dstride[NZ_MAX_DIMS];
	uint64_t idx[NZ_MAX_DIMS] = {0};
	const unsigned char *s = src;
	unsigned char *d = dst;
	size_t run = itemsize;
	int inner, k;

	if (ndim == 0) {
		memcpy(dst, src, itemsize);
		return;
	}
	for (k = 0; k < ndim; k++)
		if (count[k] == 0)
			return;
	sstride[ndim - 1] = dstride[ndim - 1] = itemsize;
	for (k = ndim - 1; k > 0; k--) {
		sstride[k - 1] = sstride[k] * (size_t)src_shape[k];
		dstride[k - 1] = dstride[k] * (size_t)dst_shape[k];
	}
	for (k = 0; k < ndim; k++) {
		s += sstride[k] * (size_t)src_off[k];
		d += dstride[k] * (size_t)dst_off[k];
	}
	/* Merge trailing dimensions that are whole in both arrays into one run,
	 * so a band of full rows is a single memcpy. */
	inner = ndim - 1;
	run = (size_t)count[inner] * itemsize;
	while (inner > 0 && count[inner] == src_shape[inner] && count[inner] == dst_shape[inner]) {
		inner--;
		run *= (size_t)count[inner];
	}
	/* The gather's usual case, rows of a chunk out of a band of whole rows:
	 * one loop, without the odometer's bookkeeping per row. */
	if (inner == 1) {
		for (idx[0] = 0; idx[0] < count[0]; idx[0]++, s += sstride[0], d += dstride[0])
			memcpy(d, s, run);
		return;
	}
	for (;;) {
		memcpy(d, s, run);
		/* Odometer over dimensions [0, inner). */
		for (k = inner - 1; k >= 0; k--) {
			s += sstride[k];
			d += dstride[k];
			if (++idx[k] < count[k])
				break;
			s -= sstride[k] * (size_t)count[k];
			d -= dstride[k] * (size_t)count[k];
			idx[k] = 0;
		}
		if (k < 0)
			return;
	}
}

void nz__fill_elements(void *dst, size_t n, const void *fill, size_t itemsize)
{
	unsigned char *d = dst;
	size_t done, total = n * itemsize, i;
	int zero = 1;

	for (i = 0; fill && i < itemsize; i++)
		if (((const unsigned char *)fill)[i] != 0)
			zero = 0;
	if (zero || total == 0) {
		memset(dst, 0, total);
		return;
	}
	memcpy(d, fill, itemsize);
	/* Double the filled prefix: log2(n) memcpy calls. */
	for (done = itemsize; done < total; done *= 2)
		memcpy(d + done, d, done < total - done ? done : total - done);
}

int nz__dtype_size(size_t *out, const char *dtype)
{
	const char *p = dtype;
	char *end;
	unsigned long n;

	if (!dtype || strlen(dtype) < 3 || !strchr("<>|=", p[0]) || !strchr("biufcSUVmM", p[1]) ||
	    !isdigit((unsigned char)p[2]))
		goto bad;
	n = strtoul(p + 2, &end, 10);
	if (*end != '\0' || n == 0 || n > (1ul << 30))
		goto bad;
	if (p[1] == 'U')
		n *= 4;
	*out = (size_t)n;
	return 0;
bad:
	return nz__error_set(NZ_EUNSUPPORTED, "dtype '%s' is not a fixed-size numpy dtype string",
			     dtype ? dtype : "(null)");
}

int nz__prod_size(size_t *out, const uint64_t *v, int n, size_t scale)
{
	size_t acc = scale;
	int i;

	for (i = 0; i < n; i++) {
		if (v[i] > SIZE_MAX || nz__mul_size(&acc, acc, (size_t)v[i]) < 0)
			return -1;
	}
	*out = acc;
	return 0;
}
