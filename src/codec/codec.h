/* Internal: bytes-to-bytes codecs compatible with numcodecs 0.11
 * (blosc, zstd, lz4, zlib, gzip, shuffle). Object codecs (vlen-utf8,
 * vlen-bytes, json2) turn elements into bytes and live in the zarr layer.
 *
 * An nz_codec is an immutable parsed configuration: safe to share between
 * threads. Encode/decode create whatever per-call context the library needs
 * (blosc_compress_ctx with one internal thread), so they are thread-safe.
 *
 * Output is byte-identical to numcodecs 0.11 with the same system libraries
 * (blosc, zstd, lz4, shuffle), checked by tests/codec/interop_numcodecs.py.
 * zlib and gzip are libdeflate's bytes (codec_deflate.c), not zlib's: any
 * reader decodes them, their headers and trailers are numcodecs' (gzip with
 * mtime 0). Details that matter:
 * - blosc shuffle -1 is numcodecs' AUTOSHUFFLE: bit shuffle when itemsize
 *   is 1, else byte shuffle; the config keeps -1. cname must be one of
 *   blosclz, lz4, lz4hc, snappy, zlib, zstd and built into c-blosc.
 * - zstd encodes with level clamped to 1..max like numcodecs (the config
 *   keeps the given level); "checksum": true (numcodecs >= 0.13) makes
 *   frames with zstd's content checksum, verified on decode.
 * - lz4 from nz_compressor always uses acceleration 1 (clevel is ignored).
 * - numcodecs 0.11 cannot decode 0-byte blosc/zstd/lz4 buffers (even its
 *   own); we can, but zarr never stores an empty chunk anyway.
 * - Decoding hostile input returns NZ_ECODEC/NZ_EFORMAT, never crashes.
 *   Without `expected`, a blosc header's size is trusted for allocation
 *   only up to 65536 x the input (no blosc codec expands more: zstd's
 *   densest frames are ~32768:1); lz4/zstd/zlib/gzip claims are bounded.
 * - crc32c ({"id": "crc32c"}, optional "location": "end", numcodecs >= 0.13's
 *   config) appends the 4-byte little-endian CRC32C of the data, as Zarr v3's
 *   crc32c codec does; decoding verifies and strips it (mismatch: NZ_ECODEC).
 *   numcodecs' "start" location is NZ_EUNSUPPORTED. */
#ifndef NZ_CODEC_CODEC_H
#define NZ_CODEC_CODEC_H

#include <jansson.h>
#include <stdint.h>

#include "nwbzarr/zarr.h"
#include "util/buf.h"

typedef struct nz_codec nz_codec;

/** Parse a numcodecs config object ({"id": "blosc", ...}). Unknown ids give
 *  NZ_EUNSUPPORTED, bad parameters NZ_EFORMAT, both with a message. */
int nz__codec_from_json(nz_codec **out, const json_t *config);

/** 1 if `c` asks for zstd's checksum (a version >= 2 nz_compressor). */
int nz__compressor_checksum(const nz_compressor *c);

/** Build from the public compressor choice; id "none" gives *out = NULL. */
int nz__codec_from_compressor(nz_codec **out, const nz_compressor *c);

/** The config as zarr-python writes it into .zarray (new reference). */
int nz__codec_to_json(json_t **out, const nz_codec *codec);

void nz__codec_free(nz_codec *codec);

/** CRC32C (Castagnoli) of n bytes, continuing from `crc` (0 to start; the
 *  usual pre/post inversion is done inside, so chained calls give the CRC of
 *  the concatenation). nz__crc32c(0, "123456789", 9) == 0xE3069283.
 *  Thread-safe; any length. */
uint32_t nz__crc32c(uint32_t crc, const void *data, size_t n);
/** Little-endian 32-bit store and load (4 bytes at p). */
void nz__le32_put(unsigned char *p, uint32_t v);
uint32_t nz__le32_get(const unsigned char *p);
const char *nz__codec_id(const nz_codec *codec);

/** Encode srclen bytes (elements of `itemsize` bytes, used by blosc's
 *  typesize and ignored elsewhere) into dst, replacing dst's contents.
 *  src must not point into dst. shuffle needs srclen to be a multiple of
 *  its elementsize (NZ_EFORMAT); blosc and lz4 take at most ~2 GiB. */
int nz__codec_encode(const nz_codec *codec, const void *src, size_t srclen, size_t itemsize,
		     nz_buf *dst);

/** Decode into dst, replacing its contents. `expected` is the decoded size
 *  when known (0 = unknown); a different size is NZ_EFORMAT. */
int nz__codec_decode(const nz_codec *codec, const void *src, size_t srclen, size_t expected,
		     nz_buf *dst);

#endif
