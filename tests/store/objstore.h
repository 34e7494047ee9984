/* A test backend shaped like object storage (S3, GCS): a flat map of
 * objects with no folders and no rename, implementing only version 2's
 * object operations (multipart-style streaming put, ranged get, size,
 * remove, prefix listing). put, get and exists are left NULL so the front
 * end's emulations of them are exercised too. Thread-safe (one lock). */
#ifndef NZ_TEST_OBJSTORE_H
#define NZ_TEST_OBJSTORE_H

#include "nwbzarr/store.h"

/** A new empty object store. */
int nz_test_objstore_new(nz_store **out);
/** Uploads begun and neither committed nor aborted, in all object stores
 *  of the process (0 when every streaming put was finished). */
long nz_test_objstore_open_uploads(void);

#endif
