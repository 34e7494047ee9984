/* A growable byte buffer. Zero-initialise ({0}) to start empty. */
#ifndef NZ_UTIL_BUF_H
#define NZ_UTIL_BUF_H

#include <stddef.h>

typedef struct nz_buf {
	unsigned char *data;
	size_t len; /**< bytes in use */
	size_t cap; /**< bytes allocated */
} nz_buf;

/** Ensure cap >= n (len unchanged). NZ_ENOMEM with a message on failure. */
int nz__buf_reserve(nz_buf *b, size_t n);
/** Append n bytes. */
int nz__buf_append(nz_buf *b, const void *p, size_t n);
/** Release the memory and reset to empty. */
void nz__buf_free(nz_buf *b);

#endif
