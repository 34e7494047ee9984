/* Internal error helpers. Every function that fails sets the thread's last
 * error through nz__error_set and returns the code it was given, so a caller
 * writes `return nz__error_set(NZ_EINVAL, "...%s", path);`. */
#ifndef NZ_UTIL_ERROR_H
#define NZ_UTIL_ERROR_H

#include "nwbzarr/common.h"

#if defined(__GNUC__)
#define NZ__PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NZ__PRINTF(a, b)
#endif

/** Record `code` and a formatted message for this thread; returns code. */
int nz__error_set(int code, const char *fmt, ...) NZ__PRINTF(2, 3);

/** Record an errno failure: "<op> '<path>': <strerror>"; maps ENOSPC and
 *  ENOENT/EEXIST to their codes; returns the code. */
int nz__error_errno(int errnum, const char *op, const char *path);

/** Prefix the current message with "<context>: " (keeps the code); returns
 *  the current code. Used when an error climbs a layer that knows more. */
int nz__error_wrap(const char *fmt, ...) NZ__PRINTF(1, 2);

/** Copy this thread's last error into `dst` (for a worker's job struct). */
void nz__error_save(nz_error *dst);

/** Make `src` this thread's last error (re-raise a job's error); returns its code. */
int nz__error_restore(const nz_error *src);

#endif
