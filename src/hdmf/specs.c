/* The cached schema: /specifications/<namespace>/<version>/<document>, each
 * document one JSON text. HDF5 NWB files hold them as scalar strings;
 * hdmf-zarr as shape-[1] json2 arrays without a compressor, which is what we
 * write whatever the source. */
#include <errno.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hdmf/hdmf.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/h5lock.h"
#include "util/json.h"

/* hdmf-zarr 0.14: a 0-d "string" array holding the text itself, zarr-python
 * 3's default codecs (vlen-utf8, zstd level 0) and no attributes. */
static int put_doc3(nz__hdmf *h, const char *path, const char *text)
{
	static const nz_compressor zstd = {NZ_COMPRESSOR_VERSION, "zstd", NULL, 0, 0, 0, 0};
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	size_t len = strlen(text);
	nz_array *a = NULL;
	int err;
	ao.zarr_format = 3;
	ao.dtype = "|O";
	ao.object_codec = NZ_OBJECT_VLEN_UTF8;
	ao.fill_value_json = "\"\"";
	ao.compressor = &zstd;
	if ((err = nz_array_create(&a, h->store, path, &ao)) == 0)
		err = nz_array_write_all_vlen(a, &text, &len, 1);
	nz_array_free(a);
	return err;
}

int nz__hdmf_is_default_namespace(const char *ns)
{
	static const char *const names[] = {"core", "hdmf-common", "hdmf-experimental"};
	for (size_t i = 0; i < sizeof names / sizeof *names; i++)
		if (strcmp(ns, names[i]) == 0)
			return 1;
	return 0;
}

/* 1 if document "<ns>/<ver>/<doc>" is of a namespace the default schema has. */
static int default_rel(const char *rel)
{
	char ns[256];
	const char *slash = strchr(rel, '/');
	size_t n = slash ? (size_t)(slash - rel) : strlen(rel);
	if (n >= sizeof ns)
		return 0;
	memcpy(ns, rel, n);
	ns[n] = '\0';
	return nz__hdmf_is_default_namespace(ns);
}

/* Write one document (the text of a JSON schema file) at specifications/rel. */
static int put_doc(nz__hdmf *h, const char *rel, const char *text)
{
	static const uint64_t one[1] = {1};
	static const nz_compressor none = {NZ_COMPRESSOR_VERSION, "none", NULL, 0, 0, 0, 0};
	nz__hdmf_dset d = {0};
	char path[1024];
	unsigned long failures = nz__alloc_failures();
	json_t *s = json_string(text);
	char *elem = NULL;
	size_t len;
	nz_array *a = NULL;
	int err;

	if ((size_t)snprintf(path, sizeof path, "specifications/%s", rel) >= sizeof path) {
		err = nz__error_set(NZ_EINVAL, "specification path '%s' too long", rel);
		goto done;
	}
	if (!s) {
		err = nz__alloc_failures() != failures
			      ? nz__error_set(NZ_ENOMEM, "out of memory copying specification '%s'", rel)
			      : nz__error_set(NZ_EFORMAT, "specification '%s' is not valid UTF-8 text", rel);
		goto done;
	}
	if (h->zarr_format == 3) {
		err = put_doc3(h, path, text);
		goto done;
	}
	if ((err = nz__json_dumps(&elem, s, NZ_JSON_COMPACT)) < 0)
		goto done;
	d.dtype = "|O";
	d.object_codec = NZ_OBJECT_JSON2;
	d.zarr_dtype = "scalar";
	d.ndim = 1;
	d.shape = one;
	d.compressor = &none;
	if ((err = nz__hdmf_dset_create(&a, h, path, &d)) < 0)
		goto done;
	len = strlen(elem);
	err = nz_array_write_all_vlen(a, (const char *const *)&elem, &len, 1);
done:
	nz_array_free(a);
	nz__free(elem);
	json_decref(s);
	return err;
}

/* ---- from HDF5 ---------------------------------------------------------- */

/* Documents read from the file, written only once libhdf5 is done with. */
typedef struct doclist {
	char **rel, **text;
	size_t n, cap;
} doclist;

static void doclist_clear(doclist *l)
{
	for (size_t i = 0; i < l->n; i++) {
		nz__free(l->rel[i]);
		nz__free(l->text[i]);
	}
	nz__free(l->rel);
	nz__free(l->text);
	memset(l, 0, sizeof *l);
}

/* Takes `text` (freed on failure too). */
static int doclist_add(doclist *l, const char *rel, char *text)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 16;
		char **r = nz__realloc(l->rel, cap * sizeof *r), **t;
		if (r)
			l->rel = r;
		t = r ? nz__realloc(l->text, cap * sizeof *t) : NULL;
		if (!t) {
			nz__free(text);
			return nz__error_set(NZ_ENOMEM, "out of memory reading specification '%s'", rel);
		}
		l->text = t;
		l->cap = cap;
	}
	if (!(l->rel[l->n] = nz__strdup(rel))) {
		nz__free(text);
		return nz__error_set(NZ_ENOMEM, "out of memory reading specification '%s'", rel);
	}
	l->text[l->n++] = text;
	return 0;
}

typedef struct h5walk {
	doclist docs;
	const char *file;
	char rel[768];   /* "<ns>/<version>" being visited */
	int depth;       /* 0 namespaces, 1 versions, 2 documents */
	int err;
} h5walk;

NZ__H5_HELD static int read_h5_string(char **out, hid_t loc, const char *name, const char *file)
{
	hid_t d = -1, ft = -1, mt = -1, sp = -1;
	char *vl = NULL;
	int err = 0;
	*out = NULL;
	if ((d = H5Dopen2(loc, name, H5P_DEFAULT)) < 0 || (ft = H5Dget_type(d)) < 0 ||
	    (sp = H5Dget_space(d)) < 0 || H5Tget_class(ft) != H5T_STRING ||
	    H5Sget_simple_extent_npoints(sp) != 1) {
		err = nz__error_set(NZ_EFORMAT, "%s: specification '%s' is not a scalar string", file,
				    name);
		goto done;
	}
	mt = H5Tcopy(H5T_C_S1);
	H5Tset_cset(mt, H5Tget_cset(ft)); /* HDF5 converts no ASCII <-> UTF-8 */
	if (H5Tis_variable_str(ft) > 0) {
		H5Tset_size(mt, H5T_VARIABLE);
		if (H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, &vl) < 0 || !vl) {
			err = nz__error_set(NZ_EIO, "%s: cannot read specification '%s'", file, name);
			goto done;
		}
		*out = nz__strdup(vl);
		H5Dvlen_reclaim(mt, sp, H5P_DEFAULT, &vl);
	} else {
		size_t n = H5Tget_size(ft);
		char *buf = nz__calloc(n + 1, 1);
		H5Tset_size(mt, n);
		if (buf && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
			nz__free(buf);
			err = nz__error_set(NZ_EIO, "%s: cannot read specification '%s'", file, name);
			goto done;
		}
		*out = buf;
	}
	if (!*out)
		err = nz__error_set(NZ_ENOMEM, "out of memory reading specification '%s'", name);
done:
	if (mt >= 0)
		H5Tclose(mt);
	if (sp >= 0)
		H5Sclose(sp);
	if (ft >= 0)
		H5Tclose(ft);
	if (d >= 0)
		H5Dclose(d);
	return err;
}

NZ__H5_HELD static herr_t h5_visit(hid_t loc, const char *name, const H5L_info_t *info, void *payload)
{
	h5walk *w = payload;
	size_t keep = strlen(w->rel);
	char rel[1024];
	char *text = NULL;
	H5O_info_t oi;

	if (info->type != H5L_TYPE_HARD || H5Oget_info_by_name(loc, name, &oi, H5P_DEFAULT) < 0)
		return 0;
	if (w->depth < 2) {
		hid_t g;
		if (oi.type != H5O_TYPE_GROUP)
			return 0;
		if ((size_t)snprintf(w->rel + keep, sizeof w->rel - keep, "%s%s", keep ? "/" : "",
				     name) >= sizeof w->rel - keep) {
			w->err = nz__error_set(NZ_EFORMAT, "%s: specification name too long", w->file);
			return -1;
		}
		w->depth++;
		g = H5Gopen2(loc, name, H5P_DEFAULT);
		if (g < 0 || H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_visit, w) < 0) {
			if (!w->err)
				w->err = nz__error_set(NZ_EFORMAT, "%s: cannot read group '%s'",
						       w->file, name);
		}
		if (g >= 0)
			H5Gclose(g);
		w->depth--;
		w->rel[keep] = '\0';
		return w->err ? -1 : 0;
	}
	if (oi.type != H5O_TYPE_DATASET)
		return 0;
	snprintf(rel, sizeof rel, "%s/%s", w->rel, name);
	if ((w->err = read_h5_string(&text, loc, name, w->file)) < 0 ||
	    (w->err = doclist_add(&w->docs, rel, text)) < 0)
		return -1;
	return 0;
}

/* libhdf5 under the one lock (util/h5lock.h), the Zarr writes after it. */
static int specs_from_hdf5(nz__hdmf *h, const char *file, int *count, int skip_default)
{
	h5walk w;
	hid_t f = -1, g = -1;
	int err = 0;
	memset(&w, 0, sizeof w);
	w.file = file;
	nz__h5_lock();
	H5E_BEGIN_TRY {
		f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
		if (f >= 0)
			g = H5Gopen2(f, "/specifications", H5P_DEFAULT);
		if (g >= 0 && H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, NULL, h5_visit, &w) < 0 &&
		    !w.err)
			w.err = nz__error_set(NZ_EFORMAT, "%s: cannot list /specifications", file);
		if (g >= 0)
			H5Gclose(g);
		if (f >= 0)
			H5Fclose(f);
	} H5E_END_TRY;
	nz__h5_unlock();
	if (f < 0)
		err = nz__error_set(NZ_EFORMAT, "'%s' is neither an HDF5 NWB file nor a Zarr directory",
				    file);
	else if (g < 0)
		err = nz__error_set(NZ_ENOTFOUND, "'%s' has no /specifications to copy", file);
	else
		err = w.err;
	for (size_t i = 0; err == 0 && i < w.docs.n; i++)
		if ((skip_default && default_rel(w.docs.rel[i])) ||
		    (err = put_doc(h, w.docs.rel[i], w.docs.text[i])) == 0)
			(*count)++;
	doclist_clear(&w.docs);
	return err;
}

/* ---- from Zarr ---------------------------------------------------------- */

typedef struct zlist {
	char **keys;
	size_t n, cap;
} zlist;

/* Collect "specifications/<ns>/<ver>/<doc>/.zarray" (v2) or ".../zarr.json"
 * (v3) keys, exactly that depth, as the array paths. */
static int collect(const char *key, void *payload)
{
	zlist *l = payload;
	const char *p = key;
	int slashes = 0;
	size_t n = strlen(key), leaf;
	if (n >= 8 && strcmp(key + n - 8, "/.zarray") == 0)
		leaf = 8;
	else if (n >= 10 && strcmp(key + n - 10, "/zarr.json") == 0)
		leaf = 10;
	else
		return 0;
	for (; *p; p++)
		slashes += *p == '/';
	if (slashes != 4)
		return 0;
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **k = nz__realloc(l->keys, cap * sizeof *k);
		if (!k)
			return nz__error_set(NZ_ENOMEM, "out of memory listing specifications");
		l->keys = k;
		l->cap = cap;
	}
	if (!(l->keys[l->n] = nz__strndup(key, n - leaf)))
		return nz__error_set(NZ_ENOMEM, "out of memory listing specifications");
	l->n++;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int specs_from_zarr(nz__hdmf *h, const char *dir, int *count, int skip_default)
{
	static const uint64_t zero[1] = {0};
	nz_store *src = NULL;
	zlist l = {0};
	int err;

	if ((err = nz_store_open_dir(&src, dir, NZ_STORE_READ)) < 0 ||
	    (err = nz_store_list(src, "specifications", collect, &l)) < 0)
		goto done;
	if (l.n == 0) {
		err = nz__error_set(NZ_ENOTFOUND, "'%s' has no /specifications to copy", dir);
		goto done;
	}
	qsort(l.keys, l.n, sizeof *l.keys, cmp_str);
	for (size_t i = 0; i < l.n; i++) {
		nz_array *a = NULL;
		nz_vlen *v = NULL;
		json_t *doc = NULL;
		const char *rel = l.keys[i] + strlen("specifications/");
		if (skip_default && default_rel(rel)) {
			(*count)++;
			continue;
		}
		if ((err = nz_array_open(&a, src, l.keys[i])) < 0 ||
		    (err = nz_array_read_chunk_vlen(&v, a, zero)) < 0)
			goto next;
		/* v3 (hdmf-zarr 0.14): a 0-d string holding the text itself */
		if (v->count == 1 && nz_array_zarr_format(a) == 3 && nz_array_ndim(a) == 0 &&
		    nz_array_object_codec(a) == NZ_OBJECT_VLEN_UTF8) {
			err = put_doc(h, rel, v->items[0]);
			(*count)++;
			goto next;
		}
		if (v->count < 1 || nz_array_object_codec(a) != NZ_OBJECT_JSON2 ||
		    nz__json_parse(&doc, v->items[0], v->lens[0], l.keys[i], JSON_DECODE_ANY) < 0 ||
		    !json_is_string(doc)) {
			err = nz__error_set(NZ_EFORMAT, "%s: '%s' is not a json2 schema document",
					    dir, l.keys[i]);
			goto next;
		}
		err = put_doc(h, rel, json_string_value(doc));
		(*count)++;
next:
		json_decref(doc);
		nz_vlen_free(v);
		nz_array_free(a);
		if (err < 0)
			goto done;
	}
done:
	for (size_t i = 0; i < l.n; i++)
		nz__free(l.keys[i]);
	nz__free(l.keys);
	nz_store_free(src);
	return err;
}

int nz__hdmf_write_default_specs(nz__hdmf *h, json_t *root_attrs)
{
	int err;
	for (size_t i = 0; i < nz__hdmf_n_default_specs; i++)
		if ((err = put_doc(h, nz__hdmf_default_specs[i].rel, nz__hdmf_default_specs[i].text)) < 0)
			return err;
	if (json_object_set_new(root_attrs, ".specloc", json_string("specifications")) != 0)
		return nz__error_set(NZ_ENOMEM, "out of memory setting .specloc");
	return 0;
}

int nz__hdmf_copy_specs(nz__hdmf *h, const char *from_path, json_t *root_attrs)
{
	return nz__hdmf_copy_specs_ext(h, from_path, root_attrs, 0);
}

int nz__hdmf_copy_specs_ext(nz__hdmf *h, const char *from_path, json_t *root_attrs, int skip_default)
{
	struct stat st;
	int count = 0, err;
	if (stat(from_path, &st) != 0)
		return nz__error_errno(errno, "cannot read schema source", from_path);
	err = S_ISDIR(st.st_mode) ? specs_from_zarr(h, from_path, &count, skip_default)
				  : specs_from_hdf5(h, from_path, &count, skip_default);
	if (err < 0)
		return err;
	if (count == 0)
		return nz__error_set(NZ_ENOTFOUND, "'%s' has no schema documents under /specifications",
				     from_path);
	if (json_object_set_new(root_attrs, ".specloc", json_string("specifications")) != 0)
		return nz__error_set(NZ_ENOMEM, "out of memory setting .specloc");
	return 0;
}
