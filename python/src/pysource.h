/* nwbzarr._nwbzarr: nz_source objects built from Python objects.
 *
 * Three kinds (docs/python.md, "Sources"):
 *  - a buffer (numpy array, memmap, bytes): borrowed through the buffer
 *    protocol, read by the engine with the GIL released, never copied;
 *  - a raw file (an np.memmap's file, offset, dtype, columns): the engine
 *    pread()s it itself, with the GIL released;
 *  - a Python callable read(start, count, out): called from the engine's
 *    worker threads with the GIL taken, filling the writable memoryview
 *    `out` (prod(count) items, C order). The first exception it raises is
 *    kept (nz_pysource_take_exception) and every later read fails at once,
 *    so the engine stops and the caller re-raises the exception itself.
 *
 * The functions here expect the GIL held unless they say otherwise.
 */
#ifndef NZ_PYSOURCE_H
#define NZ_PYSOURCE_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "nwbzarr.h"

/* A Python-backed source and what it borrows. */
typedef struct nz_pysource {
	nz_source *src;
	Py_buffer view;   /* the buffer kind's export (view.obj NULL otherwise) */
	struct nz_pycall *call; /* the callable kind's context (owned by src) */
} nz_pysource;

/** Wrap a C-contiguous buffer of `dtype` items in `shape`. Raises (and
 *  returns -1) when the buffer is not C-contiguous or its size is not
 *  prod(shape) x itemsize. */
int nz_pysource_buffer(nz_pysource *out, PyObject *obj, const char *dtype, int ndim,
		       const uint64_t *shape);

/** A callable source; `read` is borrowed for as long as the source lives
 *  (a reference is taken). */
int nz_pysource_callable(nz_pysource *out, PyObject *read, const char *dtype, int ndim,
			 const uint64_t *shape);

/** The exception the callable raised first, or NULL (a new reference; it is
 *  no longer held by the source). */
PyObject *nz_pysource_take_exception(nz_pysource *s);

/** Free the source and release what it borrows. */
void nz_pysource_free(nz_pysource *s);

/** Raise nwbzarr.NWBZarrError for the calling thread's last nwbzarr error
 *  (code `code`); returns NULL. */
PyObject *nz_py_raise(int code);

/** The module's exception type (set by module init). */
extern PyObject *nz_py_error_type;

#endif
