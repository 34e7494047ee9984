/* nwbzarr: key/value stores that hold a Zarr hierarchy.
 *
 * A store maps '/'-separated keys ("acquisition/data/.zarray", "data/0.0")
 * to byte values. The directory store maps a key to a file below its root.
 * Other backends (object storage) implement nz_store_ops and are wrapped by
 * nz_store_new; nothing above this layer knows which backend it writes to.
 *
 * Thread safety: an nz_store may be used from several threads at once,
 * provided no two threads write the same key concurrently (the engine
 * guarantees this by giving each chunk to exactly one task).
 */
#ifndef NWBZARR_STORE_H
#define NWBZARR_STORE_H

#include "nwbzarr/common.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct nz_store nz_store;

/** Called once per key found by nz_store_list; a non-zero return stops the
 *  listing and is returned by nz_store_list. */
typedef int (*nz_store_list_cb)(const char *key, void *payload);

/** A backend. Every function returns 0 or a negative nz_error_code and sets
 *  the thread's error message on failure. `put` must be atomic: a reader
 *  sees either the old value, no value, or the whole new value. */
typedef struct nz_store_ops {
	unsigned int version; /**< NZ_STORE_OPS_VERSION */
	int (*put)(void *ctx, const char *key, const void *data, size_t len);
	/** On success *out is allocated with malloc (freed by nz_free). */
	int (*get)(void *ctx, const char *key, void **out, size_t *len);
	/** 1 if present, 0 if not, negative on error. */
	int (*exists)(void *ctx, const char *key);
	/** Removing a missing key is not an error. */
	int (*remove)(void *ctx, const char *key);
	/** Every key under `prefix` (recursively; "" = all), in no set order. */
	int (*list)(void *ctx, const char *prefix, nz_store_list_cb cb, void *payload);
	/** Make everything written so far durable (may be NULL). */
	int (*sync)(void *ctx);
	/** Human-readable location for messages, e.g. the root directory. */
	const char *(*describe)(void *ctx);
	void (*free)(void *ctx);
} nz_store_ops;

#define NZ_STORE_OPS_VERSION 1

/** Flags for nz_store_open_dir. */
enum {
	NZ_STORE_READ = 0,        /**< open an existing directory, read only */
	NZ_STORE_CREATE = 1 << 0, /**< create the root if missing (writable) */
	NZ_STORE_WRITE = 1 << 1,  /**< writable, root must exist */
	NZ_STORE_FSYNC = 1 << 2,  /**< fsync every file and its directory on put */
	NZ_STORE_NESTED = 1 << 3  /**< hint only: chunk keys use '/' separators */
};

/** Open a directory store rooted at `path`. The store copies `path`; the
 *  caller owns *out (nz_store_free). Errors, naming `path`: NZ_EINVAL for an
 *  empty path or a root that is not a directory, NZ_ENOTFOUND when the root
 *  is missing (without NZ_STORE_CREATE), NZ_EIO and the like (errno in the
 *  message) when it cannot be created or read. */
NZ_EXTERN int nz_store_open_dir(nz_store **out, const char *path, unsigned int flags);

/** Wrap a custom backend. On success the store owns ctx (ops->free is called
 *  by nz_store_free); on failure the caller still owns ctx. */
NZ_EXTERN int nz_store_new(nz_store **out, const nz_store_ops *ops, void *ctx);

/** Open an empty store that keeps keys and values in memory (for tests,
 *  fuzzing and small temporary hierarchies). Thread-safe: every operation
 *  takes the store's lock; values are copied in and out, and nz_store_list
 *  calls its callback outside the lock (in sorted key order) on a snapshot,
 *  so the callback may use the store. Unlike a directory, "a" and "a/b" may
 *  both be keys. Everything is freed by nz_store_free. */
NZ_EXTERN int nz_store_new_memory(nz_store **out);

/** Release the store (and a custom backend's ctx through ops->free). Arrays
 *  that borrow it must be freed first. NULL ok. */
NZ_EXTERN void nz_store_free(nz_store *store);

/* The operations below forward to the backend (see nz_store_ops for each
 * one's contract) and are thread-safe as the header comment says: any
 * threads, but not two writers of one key at once. Keys are relative,
 * '/'-separated, without "." or ".." segments (NZ_EINVAL otherwise).
 * Errors name the store and the key. */

/** Store `len` bytes (copied) under `key`, atomically: readers see the old
 *  value, none, or all of the new one. NZ_EINVAL on a read-only store,
 *  NZ_ENOSPC on a full device. */
NZ_EXTERN int nz_store_put(nz_store *store, const char *key, const void *data, size_t len);
/** Read `key` into a new buffer *out of *len bytes (caller frees with
 *  nz_free). NZ_ENOTFOUND when absent. */
NZ_EXTERN int nz_store_get(nz_store *store, const char *key, void **out, size_t *len);
/** 1 if `key` is present, 0 if not, a negative code on error. */
NZ_EXTERN int nz_store_exists(nz_store *store, const char *key);
/** Remove `key`; a missing key is not an error. */
NZ_EXTERN int nz_store_remove(nz_store *store, const char *key);
/** Call cb(key, payload) for every key under `prefix` ("" = all), in no set
 *  order; a non-zero return of cb stops the listing and is returned. */
NZ_EXTERN int nz_store_list(nz_store *store, const char *prefix, nz_store_list_cb cb, void *payload);
/** Make everything written so far durable (no-op for backends without sync). */
NZ_EXTERN int nz_store_sync(nz_store *store);
/** Where the store is, for messages (a directory store: its root). Owned by
 *  the store; never NULL. */
NZ_EXTERN const char *nz_store_describe(nz_store *store);

#ifdef __cplusplus
}
#endif
#endif
