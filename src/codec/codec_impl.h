/* Internal to src/codec: the parsed configuration and each codec's
 * encode/decode. Every function replaces dst's contents (dst->len is reset)
 * and must not be given a src that points into dst. */
#ifndef NZ_CODEC_CODEC_IMPL_H
#define NZ_CODEC_CODEC_IMPL_H

#include "codec/codec.h"

typedef enum nz_codec_kind {
	NZ_CODEC_BLOSC,
	NZ_CODEC_ZSTD,
	NZ_CODEC_LZ4,
	NZ_CODEC_ZLIB,
	NZ_CODEC_GZIP,
	NZ_CODEC_SHUFFLE,
	NZ_CODEC_CRC32C
} nz_codec_kind;

struct nz_codec {
	nz_codec_kind kind;
	char cname[16]; /* blosc */
	int clevel;     /* blosc */
	int shuffle;    /* blosc: -1 auto, 0 none, 1 byte, 2 bit */
	int blocksize;  /* blosc: 0 = automatic */
	int level;      /* zstd, zlib, gzip */
	int checksum;   /* zstd: frames carry a content checksum */
	int acceleration; /* lz4 */
	int elementsize;  /* shuffle */
};

int nz__blosc_encode(const nz_codec *c, const void *src, size_t n, size_t itemsize, nz_buf *dst);
int nz__blosc_decode(const void *src, size_t n, size_t expected, nz_buf *dst);
/** 1 if the linked c-blosc was built with compressor `cname`. */
int nz__blosc_has_cname(const char *cname);

/** checksum: the frame ends in zstd's content checksum (XXH64), which
 *  nz__zstd_decode (any zstd reader) verifies. */
int nz__zstd_encode(int level, int checksum, const void *src, size_t n, nz_buf *dst);
int nz__zstd_decode(const void *src, size_t n, size_t expected, nz_buf *dst);
int nz__lz4_encode(int acceleration, const void *src, size_t n, nz_buf *dst);
int nz__lz4_decode(const void *src, size_t n, size_t expected, nz_buf *dst);

/** gzip = 0: zlib stream; 1: a gzip member with mtime 0. level -1..9 on
 *  zlib's scale (-1 = 6); libdeflate's bytes, deterministic for equal input
 *  and level (not zlib's bytes). Thread-safe: no shared state. */
int nz__deflate_encode(int gzip, int level, const void *src, size_t n, nz_buf *dst);
/** Decodes a zlib stream, or every concatenated gzip member. */
int nz__deflate_decode(int gzip, const void *src, size_t n, size_t expected, nz_buf *dst);

int nz__shuffle_encode(int elementsize, const void *src, size_t n, nz_buf *dst);
int nz__shuffle_decode(int elementsize, const void *src, size_t n, nz_buf *dst);

/** Copy src and append its CRC32C (4 bytes, little-endian). */
int nz__crc32c_encode(const void *src, size_t n, nz_buf *dst);
/** Verify and strip the trailing CRC32C; a mismatch is NZ_ECODEC. */
int nz__crc32c_decode(const void *src, size_t n, size_t expected, nz_buf *dst);

#endif
