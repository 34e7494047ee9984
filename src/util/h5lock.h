/* Internal: the one process-wide lock around libhdf5.
 *
 * Debian's libhdf5 is a serial build and is not thread-safe, so every call
 * into libhdf5 made anywhere in the library (export, verify, hdmf's schema
 * copy) happens between nz__h5_lock() and nz__h5_unlock(). The lock lives
 * here, in the lowest layer, so that every layer can take it without
 * depending upward; it knows nothing of HDF5 itself. Not recursive: code
 * that holds it must not call a function that takes it.
 *
 * Under clang the lock is a capability of its thread-safety analysis:
 * functions that expect it held say NZ__H5_HELD, and the ctest case
 * h5_lock_analysis compiles every source with each libhdf5 function marked
 * as needing it, so a call made without the lock fails the build of that
 * test. With other compilers the annotations are empty. */
#ifndef NZ_UTIL_H5LOCK_H
#define NZ_UTIL_H5LOCK_H

#if defined(__clang__)
#define NZ__TSA(x) __attribute__((x))
#else
#define NZ__TSA(x)
#endif

/** The capability the analysis tracks (never touched at run time). */
typedef struct NZ__TSA(capability("mutex")) nz__h5_capability {
	int unused;
} nz__h5_capability;
extern nz__h5_capability nz__h5_cap;

/** Marks a function that must be called with the lock held. */
#define NZ__H5_HELD NZ__TSA(requires_capability(nz__h5_cap))
/** Marks a function that takes the lock itself (calling it with the lock
 *  held would deadlock). */
#define NZ__H5_FREE NZ__TSA(locks_excluded(nz__h5_cap))

void nz__h5_lock(void) NZ__TSA(acquire_capability(nz__h5_cap));
void nz__h5_unlock(void) NZ__TSA(release_capability(nz__h5_cap));

#endif
