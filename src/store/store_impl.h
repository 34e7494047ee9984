/* Internal: helpers shared by the store front end and its backends. */
#ifndef NZ_STORE_STORE_IMPL_H
#define NZ_STORE_STORE_IMPL_H

#include "nwbzarr/store.h"

/** 0 if `key` is a valid relative key ('/'-separated, no empty, "." or ".."
 *  segment, not absolute); NZ_EINVAL with a message naming it otherwise.
 *  allow_empty accepts "" (the root, for listing prefixes). */
int nz__store_check_key(const char *key, int allow_empty);

/** 1 if the file name `leaf` (no directory part) is a directory store's
 *  temporary name (".<name>.nztmp.<pid>.<n>"), which a killed writer may
 *  leave behind; 0 otherwise. */
int nz__store_is_temp_name(const char *leaf);

/** The part of a value of `size` bytes that a ranged get returns (see
 *  nz_store_ops.get_range): *start and *n. NZ_EINVAL naming `key` and
 *  `where` (the store) when offset is past the end, or when the part would
 *  not fit in memory (size_t). */
int nz__store_range(uint64_t size, uint64_t offset, uint64_t length, int suffix, const char *key,
		    const char *where, uint64_t *start, size_t *n);

/** Give a built-in backend's store its nz_store_remove_temps operation
 *  (custom backends have none: their streaming puts leave nothing). */
void nz__store_set_temps_op(nz_store *store, int (*op)(void *ctx, uint64_t *removed));

#endif
