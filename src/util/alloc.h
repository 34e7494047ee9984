/* Internal allocation. Every allocation of the library (and jansson's, see
 * nz__alloc_init) goes through these so that the allocation-failure test can
 * make the Nth one fail. They never set an error message: the caller does,
 * since it knows what was being allocated. */
#ifndef NZ_UTIL_ALLOC_H
#define NZ_UTIL_ALLOC_H

#include <stddef.h>

void *nz__malloc(size_t n);
void *nz__calloc(size_t count, size_t size);
void *nz__realloc(void *p, size_t n);
char *nz__strdup(const char *s);
char *nz__strndup(const char *s, size_t n);
void nz__free(void *p);

/** Overflow-checked a*b; returns 0 and sets *out, or -1 on overflow. */
int nz__mul_size(size_t *out, size_t a, size_t b);

/** Test hook: make the allocation numbered `n` from now (1 = the next one)
 *  and all later ones fail; n <= 0 disables. Returns how many allocations
 *  were made since the last call. Not for production use. */
#include "nwbzarr/common.h"
NZ_EXTERN long nz__alloc_fail_after(long n);
/** Test hook: how many allocations were refused since the last
 *  nz__alloc_fail_after (0 = the injected failure was never reached). */
NZ_EXTERN long nz__alloc_refused(void);

/** Route jansson's allocations through nz__malloc/nz__free (idempotent). */
void nz__alloc_init(void);
/** How many allocations have failed on the calling thread (jansson's
 *  included). Some calls fail alike for bad input and for lack of memory
 *  (json_string on text that is not UTF-8; jansson's parser calls a failed
 *  copy an invalid token): compare the count before and after to tell
 *  NZ_ENOMEM from the input's fault. */
unsigned long nz__alloc_failures(void);

#endif
