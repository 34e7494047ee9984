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

/** Open a directory store rooted at `path`. */
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

NZ_EXTERN void nz_store_free(nz_store *store);

NZ_EXTERN int nz_store_put(nz_store *store, const char *key, const void *data, size_t len);
NZ_EXTERN int nz_store_get(nz_store *store, const char *key, void **out, size_t *len);
NZ_EXTERN int nz_store_exists(nz_store *store, const char *key);
NZ_EXTERN int nz_store_remove(nz_store *store, const char *key);
NZ_EXTERN int nz_store_list(nz_store *store, const char *prefix, nz_store_list_cb cb, void *payload);
NZ_EXTERN int nz_store_sync(nz_store *store);
NZ_EXTERN const char *nz_store_describe(nz_store *store);

#ifdef __cplusplus
}
#endif
#endif
