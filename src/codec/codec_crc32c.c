/* crc32c as Zarr v3 (and numcodecs' CRC32C, location "end") lay it out:
 * the data followed by the 4-byte little-endian CRC32C (Castagnoli, the
 * iSCSI polynomial) of the data. isa-l picks the fastest implementation for
 * the CPU at run time (SSE4.2 crc32 instructions, or PCLMUL folding). */
#include <isa-l/crc.h>
#include <limits.h>
#include <string.h>

#include "codec/codec_impl.h"
#include "util/error.h"

uint32_t nz__crc32c(uint32_t crc, const void *data, size_t n)
{
	unsigned char *p = (unsigned char *)data; /* isa-l's prototype is not const */
	/* isa-l takes an int length and works on the raw register value, so
	 * the standard pre/post inversion is ours and big buffers go in pieces. */
	crc = ~crc;
	while (n) {
		size_t step = n > (size_t)INT_MAX ? (size_t)1 << 30 : n;
		crc = crc32_iscsi(p, (int)step, crc);
		p += step;
		n -= step;
	}
	return ~crc;
}

void nz__le32_put(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
	p[2] = (unsigned char)((v >> 16) & 0xff);
	p[3] = (unsigned char)((v >> 24) & 0xff);
}

uint32_t nz__le32_get(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int nz__crc32c_encode(const void *src, size_t n, nz_buf *dst)
{
	int err;
	if (n > SIZE_MAX - 4)
		return nz__error_set(NZ_EINVAL, "codec 'crc32c': %zu bytes are too many", n);
	if ((err = nz__buf_reserve(dst, n + 4)) < 0)
		return err;
	if (n)
		memcpy(dst->data, src, n);
	nz__le32_put(dst->data + n, nz__crc32c(0, src, n));
	dst->len = n + 4;
	return 0;
}

int nz__crc32c_decode(const void *src, size_t n, size_t expected, nz_buf *dst)
{
	int err;
	uint32_t want, got;
	if (n < 4)
		return nz__error_set(NZ_EFORMAT,
				     "codec 'crc32c': %zu bytes cannot hold the 4-byte checksum", n);
	if (expected && n - 4 != expected)
		return nz__error_set(NZ_EFORMAT, "codec 'crc32c': %zu data bytes, expected %zu", n - 4,
				     expected);
	want = nz__le32_get((const unsigned char *)src + n - 4);
	got = nz__crc32c(0, src, n - 4);
	if (want != got)
		return nz__error_set(NZ_ECODEC,
				     "codec 'crc32c': checksum mismatch over %zu bytes (stored 0x%08x, "
				     "computed 0x%08x): the data is corrupt",
				     n - 4, (unsigned)want, (unsigned)got);
	if ((err = nz__buf_reserve(dst, n - 4 ? n - 4 : 1)) < 0)
		return err;
	if (n > 4)
		memcpy(dst->data, src, n - 4);
	dst->len = n - 4;
	return 0;
}
