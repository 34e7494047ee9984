/* Internal: UTF-8 validation. Text that zarr-python reads back (vlen-utf8
 * chunks, JSON attributes) must be valid UTF-8 or the reader fails; we check
 * before writing instead. */
#ifndef NZ_UTIL_UTF8_H
#define NZ_UTIL_UTF8_H

#include <stddef.h>

/** The offset of the first byte of `s` (n bytes) that is not part of a
 *  well-formed UTF-8 sequence (RFC 3629: no overlong forms, no surrogates,
 *  nothing above U+10FFFF), or n when all of it is valid. Thread-safe. */
size_t nz__utf8_invalid_at(const char *s, size_t n);

/** 0 when the NUL-terminated `s` is valid UTF-8 (NULL counts as valid);
 *  otherwise NZ_EINVAL with a message naming `what` and the offset of the
 *  bad byte. */
int nz__utf8_check(const char *s, const char *what);

#endif
