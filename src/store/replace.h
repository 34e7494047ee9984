/* Internal: the one routine that makes room for a new directory store at a
 * path that may already hold one (convert, export and every later command
 * that writes a store go through it; docs/reliability.md "Replacing an
 * output").
 *
 * The old store is never lost to a failed run: it is moved aside (renamed,
 * in the same folder) before anything is written, removed only once the new
 * store is complete, and moved back when the write fails. Nothing here ever
 * follows a symbolic link: an output that is a link, or a store holding one,
 * is refused before anything is touched.
 *
 * Not thread-safe with respect to the same path (two writers of one output
 * are a caller error); different paths may be prepared concurrently. */
#ifndef NZ_STORE_REPLACE_H
#define NZ_STORE_REPLACE_H

#include <stddef.h>

typedef struct nz__replace {
	char *path;  /**< the output (trailing '/' removed) */
	char *aside; /**< where the old store waits; NULL = nothing set aside */
} nz__replace;

#define NZ__REPLACE_INIT { NULL, NULL }

/** Decide whether `path` may become a new directory store and make room.
 *  Checks everything before changing anything:
 *  - absent: nothing to do (0);
 *  - present without `overwrite`: NZ_EEXISTS ("already exists (use
 *    --overwrite)");
 *  - a symbolic link (to anything), a regular file, a FIFO or other
 *    non-directory: refused (NZ_EEXISTS), untouched;
 *  - a directory that is empty or holds only temporary names
 *    (nz__store_is_temp_name; a writer killed early): its temporary files
 *    are removed and the directory itself is kept (it may be a mount
 *    point); nothing is set aside;
 *  - a directory with ".zgroup", "zarr.json" or `marker` (the incomplete
 *    marker; may be NULL) at its root: walked first without following
 *    anything; a symbolic link anywhere below, or one of the files `keep`
 *    (NULL-terminated list of paths, compared by device and inode, so other
 *    spellings and hard links count; NULL = none) inside it, refuses the
 *    whole store (NZ_EEXISTS naming the entry), and so does a folder above
 *    it that is itself a store (`path` is then a group of another store).
 *    Otherwise it is renamed
 *    to ".<name>.nzold.<pid>.<n>" beside it, and `path` is then absent;
 *  - any other directory: refused (NZ_EEXISTS, "is not a Zarr store").
 *  On success *r must later see nz__replace_commit or nz__replace_abort
 *  (both are no-ops when nothing was set aside). On failure *r holds
 *  nothing. Errors name the path and the problem. */
int nz__replace_begin(nz__replace *r, const char *path, int overwrite, const char *marker,
		      const char *const *keep);

/** The new store at r->path is complete: remove the old one (links below it
 *  are unlinked, never followed; no other filesystem is entered). Returns 0
 *  or NZ_EIO naming what could not be removed (the new store stays valid).
 *  Frees r's strings. */
int nz__replace_commit(nz__replace *r);

/** The write failed: remove what it left at r->path and rename the old store
 *  back, so the output is as it was before nz__replace_begin. Keeps the
 *  thread's current error message (the reason of the failure); if the old
 *  store cannot be moved back it stays at r->aside and the message says so.
 *  Frees r's strings. */
void nz__replace_abort(nz__replace *r);

/** 1 if `path` is a directory holding nothing but temporary files (regular
 *  files or links with nz__store_is_temp_name names: what a writer killed
 *  before its first key leaves), 0 if it holds anything else or is not a
 *  directory (or does not exist). The one definition of a "fresh" output,
 *  used here and by resume. */
int nz__store_dir_is_fresh(const char *path);

/** 1 when nz__replace_begin set an old store aside (abort will restore it). */
int nz__replace_pending(const nz__replace *r);

#endif
