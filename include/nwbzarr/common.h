/* nwbzarr: common definitions shared by every public header.
 *
 * Errors: every fallible function returns an int: 0 on success or a negative
 * nz_error_code. The failing call also records a message for the calling
 * thread (nz_error_last) that names the object or file and the problem.
 * The library never prints and never aborts.
 *
 * Ownership: a pointer returned through an `**out` parameter belongs to the
 * caller and is released with the matching *_free function (or nz_free for
 * plain buffers); every *_free accepts NULL.
 */
#ifndef NWBZARR_COMMON_H
#define NWBZARR_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define NZ_EXTERN __attribute__((visibility("default")))
#else
#define NZ_EXTERN
#endif

#define NZ_VERSION_MAJOR 0
#define NZ_VERSION_MINOR 1
#define NZ_VERSION_PATCH 0
#define NZ_VERSION_STRING "0.1.0"

/** The version of the library actually linked, e.g. "0.1.0". */
NZ_EXTERN const char *nz_version(void);

/** The compression libraries in use, as each reports its own version at run
 *  time, e.g. "blosc 1.21.3, zstd 1.5.7, lz4 1.9.4, zlib 1.2.13"; a libzstd
 *  other than the headers' adds "(built with X.Y.Z)". Static storage, never
 *  NULL; thread-safe. */
NZ_EXTERN const char *nz_codec_versions(void);

typedef enum nz_error_code {
	NZ_OK = 0,
	NZ_EINVAL = -1,       /**< invalid argument */
	NZ_ENOMEM = -2,       /**< out of memory */
	NZ_EIO = -3,          /**< operating system I/O failure (errno in message) */
	NZ_EFORMAT = -4,      /**< malformed or inconsistent data or metadata */
	NZ_ENOTFOUND = -5,    /**< key, file or object does not exist */
	NZ_EEXISTS = -6,      /**< target exists and overwriting was not asked for */
	NZ_EUNSUPPORTED = -7, /**< valid but not supported (dtype, codec, HDF5 type) */
	NZ_ECANCELED = -8,    /**< stopped by the caller (callback, signal) */
	NZ_ECODEC = -9,       /**< compression or decompression failed */
	NZ_EINCOMPLETE = -10, /**< store was not finalised (interrupted write) */
	NZ_EMISMATCH = -11,   /**< compared objects differ / resume does not match */
	NZ_ENOSPC = -12       /**< no space left on the output device */
} nz_error_code;

/** Capacity of an error message, including the terminating NUL. */
#define NZ_ERROR_MSG_MAX 1024

/** The last error of the calling thread. */
typedef struct nz_error {
	int code;                       /**< a negative nz_error_code, or 0 */
	char message[NZ_ERROR_MSG_MAX]; /**< human-readable, names path and problem */
} nz_error;

/** The calling thread's last error; never NULL (code 0 and "" when none).
 *  Valid until the next library call on the same thread. */
NZ_EXTERN const nz_error *nz_error_last(void);

/** Forget the calling thread's last error. */
NZ_EXTERN void nz_error_clear(void);

/** A short static description of an error code, e.g. "invalid argument". */
NZ_EXTERN const char *nz_strerror(int code);

/** 0 when `text` (NUL-terminated; NULL counts as valid) is well-formed
 *  UTF-8, which every string written into a file must be (zarr-python and
 *  pynwb fail to read anything else); otherwise NZ_EINVAL with a message
 *  naming `what` and the offset of the first bad byte. For callers that
 *  want to check their strings before starting a write. Thread-safe. */
NZ_EXTERN int nz_text_check(const char *text, const char *what);

/** Free a buffer that the library returned through an out-parameter. */
NZ_EXTERN void nz_free(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
