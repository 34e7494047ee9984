/* nwbzarr._nwbzarr: the CPython extension over the public C API
 * (include/nwbzarr.h). The Python package (python/nwbzarr) is its only
 * client; docs/python.md says why this is a C extension and not cffi.
 *
 * Every long call (nz_write_array, nz_export_hdf5, nz_verify) runs with the
 * GIL released. Its progress callback runs on the calling thread: it takes
 * the GIL for PyErr_CheckSignals, so Ctrl-C (or _thread.interrupt_main)
 * cancels the call, which then re-raises the KeyboardInterrupt itself.
 * Signals reach the main thread only, so a write_array run on another
 * thread is cancelled through its cancel= object (a threading.Event) instead.
 */
#include "pysource.h"

#include <string.h>

/* The calling thread's state during a long call. */
typedef struct call_state {
	PyObject *exc;    /* raised by a signal handler (or cancel.is_set) during the call */
	PyObject *cancel; /* borrowed; its is_set() true stops the call (NZ_ECANCELED), or NULL */
} call_state;

static int check_signals(const nz_progress *p, void *vctx)
{
	call_state *cs = vctx;
	PyGILState_STATE g;
	int stop = 0;

	(void)p;
	g = PyGILState_Ensure();
	if (!cs->exc && PyErr_CheckSignals() < 0)
		cs->exc = PyErr_GetRaisedException();
	if (!cs->exc && cs->cancel) {
		PyObject *r = PyObject_CallMethod(cs->cancel, "is_set", NULL);

		if (!r || (stop = PyObject_IsTrue(r)) < 0)
			cs->exc = PyErr_GetRaisedException();
		Py_XDECREF(r);
	}
	stop = stop || cs->exc != NULL;
	PyGILState_Release(g);
	return stop;
}

/* Re-raise, in order of precedence: the user's exception, the signal's, the
 * library's error; NULL. */
static PyObject *finish_error(PyObject *user_exc, call_state *cs, int err)
{
	if (user_exc) {
		Py_XDECREF(cs->exc); /* a Ctrl-C during the unwinding: the user's came first */
		PyErr_SetRaisedException(user_exc);
		return NULL;
	}
	if (cs->exc) {
		PyErr_SetRaisedException(cs->exc);
		return NULL;
	}
	return nz_py_raise(err);
}

/* The engine's stats; for an HDF5 source `h5` also how its chunks were read. */
static PyObject *write_stats(const nz_write_stats *st, const nz_source *h5)
{
	nz_hdf5_source_stats hs = NZ_HDF5_SOURCE_STATS_INIT;
	PyObject *d = Py_BuildValue("{s:K,s:K,s:K,s:i,s:d}", "bytes", (unsigned long long)st->bytes, "chunks",
				    (unsigned long long)st->chunks, "tasks", (unsigned long long)st->tasks,
				    "jobs", st->jobs, "elapsed_s", st->elapsed_s);

	if (d && h5 && nz_source_hdf5_stats(h5, &hs) == 0) {
		PyObject *h = Py_BuildValue("{s:O,s:K,s:K,s:K}", "raw_path", hs.raw_path ? Py_True : Py_False,
					    "raw_chunks", (unsigned long long)hs.raw_chunks, "hdf5_reads",
					    (unsigned long long)hs.hdf5_reads, "stored_chunks",
					    (unsigned long long)hs.stored_chunks);
		if (!h || PyDict_SetItemString(d, "hdf5", h) < 0)
			Py_CLEAR(d);
		Py_XDECREF(h);
	}
	return d;
}

/* An HDF5 dataset read by the engine itself: hdf5=(file, dataset). Its
 * dtype and shape must be the array's (the engine checks them). */
static int open_hdf5(nz_pysource *ps, PyObject *hdf5)
{
	const char *file, *dataset;
	int err;

	if (!PyArg_ParseTuple(hdf5, "ss;hdf5= is (file, dataset)", &file, &dataset))
		return -1;
	Py_BEGIN_ALLOW_THREADS
	err = nz_source_open_hdf5(&ps->src, file, dataset, NULL);
	Py_END_ALLOW_THREADS
	if (err < 0) {
		nz_py_raise(err);
		return -1;
	}
	return 0;
}

/* Make the source that `kind` names for `a` (GIL held). */
static int open_source(nz_pysource *ps, nz_array *a, PyObject *buffer, PyObject *raw, PyObject *read,
		       PyObject *hdf5)
{
	int ndim = nz_array_ndim(a), err;
	const uint64_t *shape = nz_array_shape(a);
	const char *dtype = nz_array_dtype(a);

	memset(ps, 0, sizeof *ps);
	if ((buffer != Py_None) + (raw != Py_None) + (read != Py_None) + (hdf5 != Py_None) != 1) {
		PyErr_SetString(PyExc_TypeError, "write_array needs exactly one of buffer=, raw=, read=, hdf5=");
		return -1;
	}
	if (buffer != Py_None)
		return nz_pysource_buffer(ps, buffer, dtype, ndim, shape);
	if (read != Py_None)
		return nz_pysource_callable(ps, read, dtype, ndim, shape);
	if (hdf5 != Py_None)
		return open_hdf5(ps, hdf5);
	{
		nz_raw_opts ro = NZ_RAW_OPTS_INIT;
		const char *path;
		unsigned long long offset, nchannels;

		if (!PyArg_ParseTuple(raw, "sKK;raw= is (path, offset, nchannels)", &path, &offset, &nchannels))
			return -1;
		ro.dtype = dtype;
		ro.nchannels = nchannels;
		ro.header_offset = offset;
		Py_BEGIN_ALLOW_THREADS
		err = nz_source_open_raw(&ps->src, path, &ro);
		Py_END_ALLOW_THREADS
		if (err < 0) {
			nz_py_raise(err);
			return -1;
		}
	}
	return 0;
}

static PyObject *py_write_array(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "store", "path", "buffer", "raw", "read", "hdf5", "rows", "bands", "jobs",
				 "buffer_size", "skip_empty", "part", "nparts", "cancel", NULL };
	const char *store_path, *path;
	PyObject *buffer = Py_None, *raw = Py_None, *read = Py_None, *hdf5 = Py_None, *ret = NULL;
	PyObject *cancel = Py_None;
	PyObject *user_exc = NULL;
	int rows = 0, bands = 0, jobs = 1, skip_empty = 1, err = 0;
	Py_ssize_t buffer_size = 0;
	unsigned long long part = 0, nparts = 0;
	nz_store *store = NULL;
	nz_array *a = NULL;
	nz_pysource ps = { 0 };
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats st = { 0 };
	uint64_t task[NZ_MAX_DIMS];
	call_state cs = { NULL, NULL };

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|$OOOOppinpKKO", names, &store_path, &path, &buffer,
					 &raw, &read, &hdf5, &rows, &bands, &jobs, &buffer_size, &skip_empty, &part,
					 &nparts, &cancel))
		return NULL;
	if (cancel != Py_None)
		cs.cancel = cancel; /* borrowed: the caller's argument outlives the call */
	if (buffer_size < 0) {
		PyErr_SetString(PyExc_ValueError, "buffer_size must be >= 0");
		return NULL;
	}
	Py_BEGIN_ALLOW_THREADS
	if ((err = nz_store_open_dir(&store, store_path, NZ_STORE_WRITE)) == 0)
		err = nz_array_open(&a, store, path);
	Py_END_ALLOW_THREADS
	if (err < 0)
		goto done;
	nz_array_set_skip_empty(a, skip_empty);
	if (open_source(&ps, a, buffer, raw, read, hdf5) < 0)
		goto done;
	if (rows && (err = nz_source_set_flags(ps.src, NZ_SOURCE_ROWS)) < 0)
		goto done;
	/* bands: one task per row of write units, across the whole array, so a
	 * row-major source is read once, in order (an iterator's contract). */
	if (bands && nz_array_ndim(a) > 0) {
		nz_array_shard_grid(a, task);
		task[0] = 1;
		wo.task_chunks = task;
	}
	wo.jobs = jobs;
	wo.buffer_size = (size_t)buffer_size;
	wo.part = part;
	wo.nparts = nparts;
	wo.progress = check_signals;
	wo.progress_ctx = &cs;
	wo.stats = &st;
	Py_BEGIN_ALLOW_THREADS
	err = nz_write_array(a, ps.src, &wo);
	Py_END_ALLOW_THREADS
	user_exc = nz_pysource_take_exception(&ps);
	if (err == 0 && !user_exc && !cs.exc)
		ret = write_stats(&st, hdf5 != Py_None ? ps.src : NULL);
done:
	if (!ret && !PyErr_Occurred())
		finish_error(user_exc, &cs, err);
	else
		Py_XDECREF(user_exc);
	nz_pysource_free(&ps);
	nz_array_free(a);
	nz_store_free(store);
	return ret;
}

/* compressor=(id, cname, clevel, shuffle, blocksize) or None. */
static int parse_compressor(nz_compressor *c, PyObject *obj)
{
	nz_compressor init = NZ_COMPRESSOR_INIT;

	*c = init;
	if (obj == Py_None)
		return 0;
	if (!PyArg_ParseTuple(obj, "szii|i;compressor= is (id, cname, clevel, shuffle[, blocksize])", &c->id,
			      &c->cname, &c->clevel, &c->shuffle, &c->blocksize))
		return -1;
	if (!c->cname)
		c->cname = "";
	return 0;
}

static PyObject *py_export_hdf5(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "src", "dst", "jobs", "overwrite", "compressor", "buffer_size", "auto_chunks",
				 "copy_links", "keep_filters", NULL };
	const char *src, *dst;
	PyObject *comp = Py_None;
	int jobs = 0, overwrite = 0, auto_chunks = 0, copy_links = 0, keep_filters = 0, err;
	Py_ssize_t buffer_size = 0;
	nz_compressor c;
	nz_export_opts eo = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st = { 0 };
	call_state cs = { NULL, NULL };

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|$ipOnppp", names, &src, &dst, &jobs, &overwrite, &comp,
					 &buffer_size, &auto_chunks, &copy_links, &keep_filters) ||
	    parse_compressor(&c, comp) < 0)
		return NULL;
	if (keep_filters && comp != Py_None) {
		PyErr_SetString(PyExc_ValueError, "keep_filters takes no compressor (the codecs are the HDF5 "
						  "file's filters)");
		return NULL;
	}
	if (buffer_size < 0) {
		PyErr_SetString(PyExc_ValueError, "buffer_size must be >= 0");
		return NULL;
	}
	eo.jobs = jobs;
	eo.overwrite = overwrite;
	eo.compressor = comp == Py_None ? NULL : &c;
	eo.chunks = auto_chunks ? NZ_EXPORT_CHUNKS_AUTO : NZ_EXPORT_CHUNKS_KEEP;
	eo.buffer_size = (size_t)buffer_size;
	eo.copy_links = copy_links;
	eo.keep_filters = keep_filters;
	eo.progress = check_signals;
	eo.progress_ctx = &cs;
	eo.stats = &st;
	Py_BEGIN_ALLOW_THREADS
	err = nz_export_hdf5(src, dst, &eo);
	Py_END_ALLOW_THREADS
	if (err < 0 || cs.exc)
		return finish_error(NULL, &cs, err);
	return Py_BuildValue("{s:K,s:K,s:K,s:K,s:K,s:i,s:d,s:K,s:K}", "groups", (unsigned long long)st.groups,
			     "datasets", (unsigned long long)st.datasets, "links", (unsigned long long)st.links,
			     "attributes", (unsigned long long)st.attributes, "bytes", (unsigned long long)st.bytes,
			     "jobs", st.jobs, "elapsed_s", st.elapsed_s, "stored_chunks",
			     (unsigned long long)st.stored_chunks, "keep_fallbacks",
			     (unsigned long long)st.keep_fallbacks);
}

/* nz_verify's report callback runs on the calling thread, with the GIL
 * released: collect the differences in C and build the list afterwards. */
typedef struct diff_list {
	char **items;
	size_t n, cap;
	int nomem;
} diff_list;

static void collect_diff(const char *path, const char *what, void *vctx)
{
	diff_list *l = vctx;
	size_t len = strlen(path) + strlen(what) + 3;
	char *s;

	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **items = PyMem_RawRealloc(l->items, cap * sizeof *items);
		if (!items) {
			l->nomem = 1;
			return;
		}
		l->items = items;
		l->cap = cap;
	}
	if (!(s = PyMem_RawMalloc(len))) {
		l->nomem = 1;
		return;
	}
	snprintf(s, len, "%s: %s", path, what);
	l->items[l->n++] = s;
}

static PyObject *py_verify(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = { "a", "b", "jobs", "max_diffs", NULL };
	const char *a, *b;
	int jobs = 0, err;
	unsigned long long max_diffs = 0;
	uint64_t ndiff = 0;
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	diff_list l = { NULL, 0, 0, 0 };
	call_state cs = { NULL, NULL };
	PyObject *ret = NULL;
	size_t i;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(args, kw, "ss|$iK", names, &a, &b, &jobs, &max_diffs))
		return NULL;
	vo.jobs = jobs;
	vo.max_diffs = max_diffs;
	vo.report = collect_diff;
	vo.report_ctx = &l;
	vo.progress = check_signals;
	vo.progress_ctx = &cs;
	Py_BEGIN_ALLOW_THREADS
	err = nz_verify(&ndiff, a, b, &vo);
	Py_END_ALLOW_THREADS
	if (cs.exc || (err < 0 && err != NZ_EMISMATCH))
		finish_error(NULL, &cs, err);
	else if (l.nomem)
		PyErr_NoMemory();
	else if ((ret = PyList_New((Py_ssize_t)l.n)))
		for (i = 0; i < l.n; i++) {
			PyObject *s = PyUnicode_DecodeUTF8(l.items[i], (Py_ssize_t)strlen(l.items[i]), "replace");
			if (!s) {
				Py_CLEAR(ret);
				break;
			}
			PyList_SET_ITEM(ret, (Py_ssize_t)i, s);
		}
	for (i = 0; i < l.n; i++)
		PyMem_RawFree(l.items[i]);
	PyMem_RawFree(l.items);
	return ret;
}

static PyObject *py_ncores(PyObject *self, PyObject *unused)
{
	(void)self;
	(void)unused;
	return PyLong_FromLong(nz_ncores());
}

static PyMethodDef methods[] = {
	{ "write_array", (PyCFunction)(void (*)(void))py_write_array, METH_VARARGS | METH_KEYWORDS,
	  "write_array(store, path, *, buffer=None, raw=None, read=None, hdf5=None, rows=False, bands=False,\n"
	  "            jobs=1, buffer_size=0, skip_empty=True, part=0, nparts=0, cancel=None) -> stats dict\n"
	  "Fill every chunk (or part `part` of `nparts` of the tasks) of the existing array `path` of the\n"
	  "directory store `store` from one source. `cancel` (a threading.Event, for a call on another\n"
	  "thread than the main one, which signals do not reach): once set, the write stops (ECANCELED)." },
	{ "export_hdf5", (PyCFunction)(void (*)(void))py_export_hdf5, METH_VARARGS | METH_KEYWORDS,
	  "export_hdf5(src, dst, *, jobs=0, overwrite=False, compressor=None, buffer_size=0, auto_chunks=False, "
	  "copy_links=False, keep_filters=False)" },
	{ "verify", (PyCFunction)(void (*)(void))py_verify, METH_VARARGS | METH_KEYWORDS,
	  "verify(a, b, *, jobs=0, max_diffs=0) -> list of differences ('path: what')" },
	{ "ncores", py_ncores, METH_NOARGS, "ncores() -> the cores this process may run on" },
	{ NULL, NULL, 0, NULL }
};

static struct PyModuleDef module = { PyModuleDef_HEAD_INIT, "_nwbzarr",
				     "The nwbzarr C library (use the nwbzarr package, not this module).", -1,
				     methods, NULL, NULL, NULL, NULL };

PyMODINIT_FUNC PyInit__nwbzarr(void);
PyMODINIT_FUNC PyInit__nwbzarr(void)
{
	static const struct { const char *name; int code; } codes[] = {
		{ "EINVAL", NZ_EINVAL }, { "ENOMEM", NZ_ENOMEM }, { "EIO", NZ_EIO },
		{ "EFORMAT", NZ_EFORMAT }, { "ENOTFOUND", NZ_ENOTFOUND }, { "EEXISTS", NZ_EEXISTS },
		{ "EUNSUPPORTED", NZ_EUNSUPPORTED }, { "ECANCELED", NZ_ECANCELED }, { "ECODEC", NZ_ECODEC },
		{ "EINCOMPLETE", NZ_EINCOMPLETE }, { "EMISMATCH", NZ_EMISMATCH }, { "ENOSPC", NZ_ENOSPC },
	};
	PyObject *m = PyModule_Create(&module);
	size_t i;

	if (!m)
		return NULL;
	/* The Python package subclasses it into NWBZarrError (args: code, message). */
	if (!nz_py_error_type &&
	    !(nz_py_error_type = PyErr_NewException("nwbzarr._nwbzarr.Error", PyExc_RuntimeError, NULL)))
		goto fail;
	if (PyModule_AddObjectRef(m, "Error", nz_py_error_type) < 0 ||
	    PyModule_AddStringConstant(m, "version", nz_version()) < 0 ||
	    PyModule_AddStringConstant(m, "libraries", nz_codec_versions()) < 0 ||
	    PyModule_AddStringConstant(m, "INCOMPLETE_MARKER", NZ_INCOMPLETE_MARKER) < 0)
		goto fail;
	for (i = 0; i < sizeof codes / sizeof codes[0]; i++)
		if (PyModule_AddIntConstant(m, codes[i].name, codes[i].code) < 0)
			goto fail;
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
