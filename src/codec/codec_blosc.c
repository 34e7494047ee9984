/* Blosc through c-blosc 1.x's context API: no global state and one internal
 * thread per call, so concurrent calls from our workers are safe (the
 * global blosc_compress is not). The output equals numcodecs' Blosc, which
 * calls the same library with the same arguments. */
#include <blosc.h>
#include <string.h>

#include "codec/codec_impl.h"
#include "util/error.h"

int nz__blosc_has_cname(const char *cname)
{
	static const char *const known[] = {"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"};
	size_t i;
	for (i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(cname, known[i]) == 0)
			/* Debian may build c-blosc without some compressors. */
			return blosc_compname_to_compcode(cname) >= 0;
	return 0;
}

int nz__blosc_encode(const nz_codec *c, const void *src, size_t n, size_t itemsize, nz_buf *dst)
{
	int err, shuffle = c->shuffle, rc;
	if (n > BLOSC_MAX_BUFFERSIZE)
		return nz__error_set(NZ_EINVAL, "codec 'blosc': %zu bytes exceed blosc's limit of %d",
				     n, BLOSC_MAX_BUFFERSIZE);
	if (itemsize == 0)
		itemsize = 1;
	/* numcodecs' AUTOSHUFFLE (-1): bit shuffle for 1-byte items, else byte. */
	if (shuffle == -1)
		shuffle = itemsize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;
	if ((err = nz__buf_reserve(dst, n + BLOSC_MAX_OVERHEAD)) < 0)
		return err;
	rc = blosc_compress_ctx(c->clevel, shuffle, itemsize, n, src, dst->data,
				n + BLOSC_MAX_OVERHEAD, c->cname, (size_t)c->blocksize, 1);
	if (rc <= 0)
		return nz__error_set(NZ_ECODEC, "codec 'blosc': compression of %zu bytes failed (%d)",
				     n, rc);
	dst->len = (size_t)rc;
	return 0;
}

/* No codec inside c-blosc 1.x expands a block by more than this: zstd's
 * densest frames (RLE blocks) hold 128 KiB in 4 bytes, lz4 and blosclz
 * 255:1, zlib ~1032:1 (blosc's own headers only lower the ratio). A header
 * claiming more than its input could ever hold is refused before anything
 * is allocated for it. */
#define BLOSC_MAX_RATIO ((size_t)1 << 16)

int nz__blosc_decode(const void *src, size_t n, size_t expected, nz_buf *dst)
{
	size_t nbytes = 0;
	int err, rc;
	/* Validate the header against the real buffer length before trusting
	 * its sizes: input may be hostile or truncated. */
	if (n < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(src, n, &nbytes) != 0)
		return nz__error_set(NZ_EFORMAT, "codec 'blosc': %zu bytes are not a valid blosc buffer",
				     n);
	if (expected && nbytes != expected)
		return nz__error_set(NZ_EFORMAT, "codec 'blosc': buffer holds %zu bytes, expected %zu",
				     nbytes, expected);
	if (nbytes / BLOSC_MAX_RATIO > n)
		return nz__error_set(NZ_EFORMAT, "codec 'blosc': header claims %zu bytes from %zu, more than any "
				     "blosc codec expands to", nbytes, n);
	if ((err = nz__buf_reserve(dst, nbytes ? nbytes : 1)) < 0)
		return err;
	rc = blosc_decompress_ctx(src, dst->data, nbytes, 1);
	if (rc < 0 || (size_t)rc != nbytes)
		return nz__error_set(NZ_ECODEC, "codec 'blosc': decompression failed (%d)", rc);
	dst->len = nbytes;
	return 0;
}
