/* zlib and gzip, both ways through libdeflate: it compresses 2x (level 4) to
 * 6x (level 6) faster than zlib at a ratio within 1% of zlib's on int16
 * recordings (docs/format.md), and decompresses faster too. Its bytes
 * are not zlib's (and so not Python's zlib module's or numcodecs'): any
 * zlib or gzip reader decodes them, but a chunk compressed by zarr-python
 * and by nwbzarr differ. Equal input and level give equal bytes.
 *
 * Levels: zlib's 0..9 are libdeflate's 0..9, whose scale is zlib's (0
 * stored blocks, 1 fastest, 6 the default, 9 slow); -1, zlib's
 * Z_DEFAULT_COMPRESSION, is 6. libdeflate's 10..12 are not offered: the
 * numcodecs configs allow 0..9.
 *
 * gzip members carry the header Python's gzip.GzipFile writes into a BytesIO
 * (no file name, OS 255, XFL from the level) except that mtime is 0, so equal
 * input gives equal bytes. Decoding reads concatenated members and skips
 * zero padding between them, as Python's gzip module does. */
#include <libdeflate.h>
#include <stdint.h>
#include <string.h>

#include "codec/codec_impl.h"
#include "util/error.h"

/* Deflate never expands more than 1032:1; beyond that, stop growing. */
#define MAX_RATIO 1032

static const char *name(int gzip)
{
	return gzip ? "gzip" : "zlib";
}

/* FLEVEL (the top two bits of FLG) as zlib's deflate writes it, and FCHECK
 * making the 16-bit header a multiple of 31 again. */
static void zlib_level_hint(unsigned char *h, int level)
{
	unsigned flg = (unsigned)(level < 2 ? 0 : level < 6 ? 1 : level == 6 ? 2 : 3) << 6;
	h[1] = (unsigned char)(flg + (31 - (h[0] * 256u + flg) % 31) % 31);
}

int nz__deflate_encode(int gzip, int level, const void *src, size_t n, nz_buf *dst)
{
	int err = 0;
	size_t bound, len;
	struct libdeflate_compressor *c = libdeflate_alloc_compressor(level < 0 ? 6 : level);

	if (!c)
		return nz__error_set(NZ_ENOMEM, "codec '%s': cannot allocate a level %d compressor",
				     name(gzip), level);
	bound = gzip ? libdeflate_gzip_compress_bound(c, n) : libdeflate_zlib_compress_bound(c, n);
	if ((err = nz__buf_reserve(dst, bound)) < 0)
		goto done;
	len = gzip ? libdeflate_gzip_compress(c, src, n, dst->data, bound)
		   : libdeflate_zlib_compress(c, src, n, dst->data, bound);
	if (len == 0) {
		err = nz__error_set(NZ_ECODEC, "codec '%s': compression of %zu bytes failed", name(gzip), n);
		goto done;
	}
	/* The headers' level hints (informative only) as zlib and Python's gzip
	 * set them, so that our headers equal theirs: libdeflate calls level 7
	 * "default" in a zlib header and 8 "slowest" in a gzip one. */
	if (gzip)
		dst->data[8] = level == 9 ? 2 : level == 1 ? 4 : 0;
	else
		zlib_level_hint(dst->data, level < 0 ? 6 : level);
	dst->len = len;
done:
	libdeflate_free_compressor(c);
	return err;
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
