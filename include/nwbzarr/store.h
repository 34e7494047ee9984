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
 *  the thread's error message on failure, naming the key and the store.
 *
 *  Version 1 backends fill the functions up to `free`; the front end
 *  emulates streaming puts (buffering the whole value in memory, then one
 *  `put`), ranged gets and sizes (a whole `get`) for them. Version 2 adds the
 *  object-storage operations; a version-2 backend must provide put_begin,
 *  put_write, put_commit, put_abort, get_range, size, remove, list and
 *  describe, and may leave put, get and exists NULL (the front end builds
 *  them from the streaming and ranged operations), so an object store that
 *  has no folders and no rename (multipart upload, ranged GET, HEAD, prefix
 *  listing) maps onto it directly. */
typedef struct nz_store_ops {
	unsigned int version; /**< NZ_STORE_OPS_VERSION (1 or 2) */
	/** Atomic: a reader sees the old value, no value, or the whole new one. */
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

	/* Version 2. */
	/** Start a streaming put of `key`: *stream is the backend's state for
	 *  it. Nothing is visible under `key` until put_commit. */
	int (*put_begin)(void *ctx, const char *key, void **stream);
	/** Append `len` bytes (never called after a failed write). */
	int (*put_write)(void *ctx, void *stream, const void *data, size_t len);
	/** Publish the bytes written as the whole value of the key, atomically
	 *  as `put` is, and free the stream, success or not (on failure the old
	 *  value, or none, stays and nothing temporary is left). */
	int (*put_commit)(void *ctx, void *stream);
	/** Discard the stream: the key keeps its old value (or none) and
	 *  nothing temporary is left. Cannot fail. */
	void (*put_abort)(void *ctx, void *stream);
	/** Read part of a value into a new buffer (malloc; freed by nz_free):
	 *  suffix == 0: bytes [offset, offset + length), fewer when the value
	 *  ends first, NZ_EINVAL when offset is past the end; suffix != 0: the
	 *  last `length` bytes (the whole value when it is shorter), offset
	 *  ignored. This is how HTTP object stores serve Range requests. */
	int (*get_range)(void *ctx, const char *key, uint64_t offset, uint64_t length, int suffix,
			 void **out, size_t *len);
	/** Size in bytes of the value of `key`; NZ_ENOTFOUND when absent. */
	int (*size)(void *ctx, const char *key, uint64_t *size);
} nz_store_ops;

#define NZ_STORE_OPS_VERSION 2

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

/** Wrap a custom backend (version 1 or 2, see nz_store_ops; a version-1
 *  table only needs to be as long as version 1 defined it). On success the
 *  store owns ctx (ops->free is called by nz_store_free); on failure the
 *  caller still owns ctx. */
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
/** An in-progress streaming put (nz_store_put_begin). Use it from one thread
 *  at a time; different writers may run on different threads at once. */
typedef struct nz_store_writer nz_store_writer;

/** Start writing `key` in pieces, for values too big to hold in memory (a
 *  shard). The value appears at nz_store_put_commit, atomically: until then
 *  readers see the old value or none; nz_store_put_abort, or any failure,
 *  leaves the old value (or none) and nothing temporary. The directory
 *  store writes a temporary file in the key's folder and renames it at
 *  commit (both fsynced with NZ_STORE_FSYNC); a version-1 backend buffers
 *  the whole value in memory and puts it at commit. Caller owns *out. */
NZ_EXTERN int nz_store_put_begin(nz_store_writer **out, nz_store *store, const char *key);
/** Append `len` bytes (copied). After a failed write every later write and
 *  the commit return the same code; only abort is then useful. */
NZ_EXTERN int nz_store_put_write(nz_store_writer *w, const void *data, size_t len);
/** Bytes written to `w` so far. */
NZ_EXTERN uint64_t nz_store_put_written(const nz_store_writer *w);
/** Publish the value and free `w` (also on failure, which leaves the old
 *  value or none). */
NZ_EXTERN int nz_store_put_commit(nz_store_writer *w);
/** Discard what was written and free `w`. NULL ok. */
NZ_EXTERN void nz_store_put_abort(nz_store_writer *w);

/** Read `length` bytes of `key` from `offset` into a new buffer *out (caller
 *  frees with nz_free; never NULL on success) of *len bytes: fewer than
 *  `length` when the value ends first. NZ_ENOTFOUND when absent, NZ_EINVAL
 *  when `offset` is past the end of the value. */
NZ_EXTERN int nz_store_get_range(nz_store *store, const char *key, uint64_t offset,
				 uint64_t length, void **out, size_t *len);
/** The last `length` bytes of `key` (all of it when shorter), as
 *  nz_store_get_range returns them: an object store's suffix range. */
NZ_EXTERN int nz_store_get_suffix(nz_store *store, const char *key, uint64_t length, void **out,
				  size_t *len);
/** *size = the value's size in bytes. NZ_ENOTFOUND when absent. */
NZ_EXTERN int nz_store_size(nz_store *store, const char *key, uint64_t *size);

/** Remove what writers killed in the middle of a put left behind, anywhere
 *  in the store, and count it in *removed: the directory store's temporary
 *  files (".<name>.nztmp.<pid>.<n>", which nz_store_list never shows). Call
 *  it only when no writer is running. Memory and custom stores have no such
 *  leftovers (*removed = 0). NZ_EIO (errno in the message) naming the file
 *  that could not be removed. */
NZ_EXTERN int nz_store_remove_temps(nz_store *store, uint64_t *removed);

/** Where the store is, for messages (a directory store: its root). Owned by
 *  the store; never NULL. */
NZ_EXTERN const char *nz_store_describe(nz_store *store);

#ifdef __cplusplus
}
#endif
#endif
