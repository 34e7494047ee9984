/* zlib and gzip. zlib compresses (its output is what Python's zlib module,
 * and so numcodecs, writes); libdeflate decompresses, several times faster.
 *
 * gzip members are written like Python's gzip.GzipFile into a BytesIO (no
 * file name, OS 255, XFL from the level) except that mtime is 0, so equal
 * input gives equal bytes. Decoding reads concatenated members and skips
 * zero padding between them, as Python's gzip module does. */
#include <libdeflate.h>
#include <limits.h>
#include <string.h>
#include <zlib.h>

#include "codec/codec_impl.h"
#include "util/error.h"

/* Deflate never expands more than 1032:1; beyond that, stop growing. */
#define MAX_RATIO 1032

static const char *name(int gzip)
{
	return gzip ? "gzip" : "zlib";
}

static void put_le32(unsigned char *p, unsigned long v)
{
	p[0] = (unsigned char)(v & 0xff);
	p[1] = (unsigned char)((v >> 8) & 0xff);
	p[2] = (unsigned char)((v >> 16) & 0xff);
	p[3] = (unsigned char)((v >> 24) & 0xff);
}

static int raw_deflate(int level, const unsigned char *src, size_t n, nz_buf *dst)
{
	int err = 0, rc;
	z_stream zs;
	memset(&zs, 0, sizeof zs);
	/* Python's gzip: compressobj(level, DEFLATED, -MAX_WBITS, DEF_MEM_LEVEL, 0). */
	if (deflateInit2(&zs, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY) != Z_OK)
		return nz__error_set(NZ_ENOMEM, "codec 'gzip': cannot initialise deflate");
	if ((err = nz__buf_reserve(dst, dst->len + deflateBound(&zs, n) + 8)) < 0)
		goto done;
	zs.next_in = (unsigned char *)src;
	zs.next_out = dst->data + dst->len;
	do {
		size_t in_left = n - (size_t)(zs.next_in - src);
		size_t out_left = dst->cap - (size_t)(zs.next_out - dst->data);
		zs.avail_in = in_left > UINT_MAX ? UINT_MAX : (unsigned)in_left;
		zs.avail_out = out_left > UINT_MAX ? UINT_MAX : (unsigned)out_left;
		rc = deflate(&zs, in_left > UINT_MAX ? Z_NO_FLUSH : Z_FINISH);
	} while (rc == Z_OK || rc == Z_BUF_ERROR);
	if (rc != Z_STREAM_END) {
		err = nz__error_set(NZ_ECODEC, "codec 'gzip': deflate failed (%d)", rc);
		goto done;
	}
	dst->len = (size_t)(zs.next_out - dst->data);
done:
	deflateEnd(&zs);
	return err;
}

int nz__deflate_encode(int gzip, int level, const void *src, size_t n, nz_buf *dst)
{
	int err;
	unsigned char *h;
	if (!gzip) {
		uLongf len = compressBound(n);
		if ((err = nz__buf_reserve(dst, len)) < 0)
			return err;
		if (compress2(dst->data, &len, src, n, level) != Z_OK)
			return nz__error_set(NZ_ECODEC, "codec 'zlib': compression of %zu bytes failed",
					     n);
		dst->len = len;
		return 0;
	}
	if ((err = nz__buf_reserve(dst, 10)) < 0)
		return err;
	h = dst->data;
	memset(h, 0, 10);
	h[0] = 0x1f;
	h[1] = 0x8b;
	h[2] = 8; /* deflate; flags and mtime stay 0 */
	h[8] = level == 9 ? 2 : level == 1 ? 4 : 0;
	h[9] = 255;
	dst->len = 10;
	if ((err = raw_deflate(level, src, n, dst)) < 0)
		return err;
	put_le32(dst->data + dst->len, crc32_z(0, src, n));
	put_le32(dst->data + dst->len + 4, (unsigned long)(n & 0xffffffffu));
	dst->len += 8;
	return 0;
}

/* Decode one zlib stream or gzip member from src into the end of dst; *used
 * is the input consumed. With `exact`, exactly `room` bytes are allowed;
 * otherwise the output room doubles until the stream fits. */
static int inflate_one(struct libdeflate_decompressor *d, int gzip, const unsigned char *src,
		       size_t n, size_t room, int exact, nz_buf *dst, size_t *used)
{
	size_t limit = n > (SIZE_MAX - 65536) / MAX_RATIO ? SIZE_MAX : n * MAX_RATIO + 65536;
	for (;;) {
		size_t out = 0;
		enum libdeflate_result r;
		int err;
		if (room > SIZE_MAX - dst->len)
			return nz__error_set(NZ_ENOMEM, "codec '%s': output too large", name(gzip));
		if ((err = nz__buf_reserve(dst, dst->len + (room ? room : 1))) < 0)
			return err;
		r = gzip ? libdeflate_gzip_decompress_ex(d, src, n, dst->data + dst->len, room, used,
							 &out)
			 : libdeflate_zlib_decompress_ex(d, src, n, dst->data + dst->len, room, used,
							 &out);
		if (r == LIBDEFLATE_SUCCESS) {
			dst->len += out;
			return 0;
		}
		if (r != LIBDEFLATE_INSUFFICIENT_SPACE || exact || room >= limit)
			return nz__error_set(exact && r == LIBDEFLATE_INSUFFICIENT_SPACE ? NZ_EFORMAT
											  : NZ_ECODEC,
					     "codec '%s': %s", name(gzip),
					     r == LIBDEFLATE_INSUFFICIENT_SPACE
						     ? "data decodes to more bytes than expected"
						     : "corrupt or truncated data");
		room = room > limit / 2 ? limit : room * 2;
	}
}

int nz__deflate_decode(int gzip, const void *src, size_t n, size_t expected, nz_buf *dst)
{
	int err = 0;
	const unsigned char *p = src;
	size_t pos = 0, used = 0;
	struct libdeflate_decompressor *d = libdeflate_alloc_decompressor();
	if (!d)
		return nz__error_set(NZ_ENOMEM, "codec '%s': out of memory", name(gzip));
	do {
		size_t room = expected ? expected - dst->len : (n - pos) * 4 + 1024;
		if ((err = inflate_one(d, gzip, p + pos, n - pos, room, expected != 0, dst, &used)) < 0)
			goto done;
		pos += used;
		while (gzip && pos < n && p[pos] == 0)
			pos++;
	} while (gzip && pos < n);
done:
	libdeflate_free_decompressor(d);
	return err;
}
