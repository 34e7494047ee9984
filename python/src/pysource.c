/* Sources over Python objects (pysource.h). */
#include "pysource.h"

#include <string.h>

PyObject *nz_py_error_type;

PyObject *nz_py_raise(int code)
{
	const nz_error *e = nz_error_last();
	PyObject *args = Py_BuildValue("(is)", code, e->code ? e->message : nz_strerror(code));

	if (args) {
		PyErr_SetObject(nz_py_error_type, args);
		Py_DECREF(args);
	}
	return NULL;
}

int nz_pysource_buffer(nz_pysource *out, PyObject *obj, const char *dtype, int ndim,
		       const uint64_t *shape)
{
	uint64_t n = 1;
	int d, err;

	memset(out, 0, sizeof *out);
	if (PyObject_GetBuffer(obj, &out->view, PyBUF_C_CONTIGUOUS) < 0)
		return -1;
	for (d = 0; d < ndim; d++)
		n *= shape[d]; /* the Python side passed the array's own shape: no overflow */
	if ((err = nz_source_from_memory(&out->src, out->view.buf, dtype, ndim, shape)) < 0) {
		nz_py_raise(err);
		goto fail;
	}
	if ((uint64_t)out->view.len != n * nz_source_itemsize(out->src)) {
		PyErr_Format(PyExc_ValueError, "buffer holds %zd bytes, the array needs %llu",
			     out->view.len, (unsigned long long)(n * nz_source_itemsize(out->src)));
		goto fail;
	}
	return 0;
fail:
	nz_pysource_free(out);
	return -1;
}

/* The callable kind's context: what a read needs, and the first exception. */
struct nz_pycall {
	PyObject *read;
	PyObject *exc; /* first exception raised by read, or NULL */
	int ndim;
	size_t itemsize;
};

static PyObject *index_tuple(const uint64_t *v, int ndim)
{
	PyObject *t = PyTuple_New(ndim);
	int d;

	for (d = 0; t && d < ndim; d++) {
		PyObject *i = PyLong_FromUnsignedLongLong(v[d]);
		if (!i) {
			Py_CLEAR(t);
			break;
		}
		PyTuple_SET_ITEM(t, d, i);
	}
	return t;
}

/* Worker threads (and the caller, for small writes) call this with the GIL
 * released: take it for the Python call only. */
static int call_read(void *vctx, const uint64_t *start, const uint64_t *count, void *out)
{
	struct nz_pycall *c = vctx;
	PyGILState_STATE g = PyGILState_Ensure();
	PyObject *st = NULL, *ct = NULL, *mv = NULL, *r = NULL, *rel = NULL;
	size_t len = c->itemsize;
	int d, err = 0;

	if (c->exc) /* an earlier read failed: the engine is stopping */
		goto stopped;
	for (d = 0; d < c->ndim; d++)
		len *= (size_t)count[d]; /* fits: the engine allocated `out` of this size */
	if (!(st = index_tuple(start, c->ndim)) || !(ct = index_tuple(count, c->ndim)) ||
	    !(mv = PyMemoryView_FromMemory(out, (Py_ssize_t)len, PyBUF_WRITE)) ||
	    !(r = PyObject_CallFunctionObjArgs(c->read, st, ct, mv, NULL)))
		goto raised;
	/* `out` is the engine's buffer: nothing may keep a view of it. */
	if (!(rel = PyObject_CallMethod(mv, "release", NULL)))
		goto raised;
	goto done;
raised:
	c->exc = PyErr_GetRaisedException();
stopped:
	err = NZ_ECANCELED;
done:
	Py_XDECREF(rel);
	Py_XDECREF(r);
	Py_XDECREF(mv);
	Py_XDECREF(ct);
	Py_XDECREF(st);
	PyGILState_Release(g);
	return err;
}

static void call_free(void *vctx)
{
	struct nz_pycall *c = vctx;
	PyGILState_STATE g = PyGILState_Ensure();

	Py_XDECREF(c->read);
	Py_XDECREF(c->exc);
	PyMem_RawFree(c);
	PyGILState_Release(g);
}

int nz_pysource_callable(nz_pysource *out, PyObject *read, const char *dtype, int ndim,
			 const uint64_t *shape)
{
	static const nz_source_ops ops = { NZ_SOURCE_OPS_VERSION, call_read, call_free };
	struct nz_pycall *c;
	int err;

	memset(out, 0, sizeof *out);
	if (!(c = PyMem_RawCalloc(1, sizeof *c))) {
		PyErr_NoMemory();
		return -1;
	}
	c->read = Py_NewRef(read);
	c->ndim = ndim;
	if ((err = nz_source_from_callback(&out->src, &ops, c, dtype, ndim, shape)) < 0) {
		call_free(c);
		nz_py_raise(err);
		return -1;
	}
	c->itemsize = nz_source_itemsize(out->src);
	out->call = c;
	return 0;
}

PyObject *nz_pysource_take_exception(nz_pysource *s)
{
	PyObject *e = s->call ? s->call->exc : NULL;

	if (e)
		s->call->exc = NULL;
	return e;
}

void nz_pysource_free(nz_pysource *s)
{
	nz_source_free(s->src);
	s->src = NULL;
	s->call = NULL;
	if (s->view.obj)
		PyBuffer_Release(&s->view);
}
