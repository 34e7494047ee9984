/* DynamicTable: a group of equally long VectorData columns plus `id`, whose
 * attributes list the column names in order (colnames). Ragged columns are
 * a VectorData and a VectorIndex of row end offsets. See hdmf.h. */
#include <stdio.h>
#include <string.h>

#include "hdmf/hdmf.h"
#include "util/alloc.h"
#include "util/error.h"

struct nz__hdmf_table {
	nz__hdmf *h;
	char *path;
	uint64_t nrows;
	json_t *attrs;    /* group attributes; colnames grows as columns arrive */
	char oid[NZ_HDMF_OID_LEN];
};

int nz__hdmf_table_begin(nz__hdmf_table **out, nz__hdmf *h, const char *path, const char *ns,
			 const char *type, const char *description, const char *oid, uint64_t nrows)
{
	nz__hdmf_table *t = nz__calloc(1, sizeof *t);
	int err = 0;
	*out = NULL;
	/* hdmf's order (v3 keeps it; v2 sorts the keys anyway). */
	if (!t || !(t->path = nz__strdup(path)) || !(t->attrs = json_object()) ||
	    json_object_set_new(t->attrs, "description", json_string(description)) != 0 ||
	    json_object_set_new(t->attrs, "colnames", json_array()) != 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory starting table '/%s'", path);
		goto done;
	}
	t->h = h;
	t->nrows = nrows;
	if ((err = nz__hdmf_set_type(t->attrs, h, ns, type, oid, t->oid)) < 0 ||
	    (err = nz_group_create(h->store, path)) < 0)
		goto done;
	*out = t;
	t = NULL;
done:
	nz__hdmf_table_free(t);
	return err;
}

const char *nz__hdmf_table_oid(const nz__hdmf_table *t)
{
	return t->oid;
}

void nz__hdmf_table_free(nz__hdmf_table *t)
{
	if (!t)
		return;
	json_decref(t->attrs);
	nz__free(t->path);
	nz__free(t);
}

/* "<table>/<name>" into buf; the names are ours or validated upstream. */
static int col_path(char *buf, size_t cap, const nz__hdmf_table *t, const char *name)
{
	if ((size_t)snprintf(buf, cap, "%s/%s", t->path, name) >= cap)
		return nz__error_set(NZ_EINVAL, "column path '/%s/%s' too long", t->path, name);
	return 0;
}

/* A column being written: its path, its typed dataset description with
 * attributes {description} (none when NULL); `listed` columns are appended to colnames
 * (index columns are not). c->attrs is set (maybe NULL) even on failure. */
typedef struct col {
	char path[1024];
	uint64_t shape[1];
	const char *dims[1]; /* hdmf's label from the spec's dims */
	nz__hdmf_dset d;
	json_t *attrs;
} col;

static int col_begin(col *c, nz__hdmf_table *t, const char *name, const char *description,
		     const char *type, uint64_t len, int listed)
{
	int err;
	memset(c, 0, sizeof *c);
	if ((err = col_path(c->path, sizeof c->path, t, name)) < 0)
		return err;
	c->attrs = json_object();
	if (!c->attrs ||
	    (description &&
	     json_object_set_new(c->attrs, "description", json_string(description)) != 0) ||
	    (listed && json_array_append_new(json_object_get(t->attrs, "colnames"),
					     json_string(name)) != 0))
		return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s' to '/%s'", name,
				     t->path);
	c->shape[0] = len;
	c->dims[0] = strcmp(type, "VectorData") == 0 ? "dim0" : "num_rows";
	c->d.dims = c->dims;
	c->d.ndim = 1;
	c->d.shape = c->shape;
	c->d.ns = "hdmf-common";
	c->d.type = type;
	c->d.attrs = c->attrs;
	return 0;
}

int nz__hdmf_table_col(nz__hdmf_table *t, const char *name, const char *description,
		       const char *dtype, const char *zarr_dtype, const void *data, size_t len)
{
	col c;
	int err = col_begin(&c, t, name, description, "VectorData", t->nrows, 1);
	if (err == 0) {
		c.d.dtype = dtype;
		c.d.zarr_dtype = zarr_dtype;
		err = nz__hdmf_dset_write(t->h, c.path, &c.d, data, len);
	}
	json_decref(c.attrs);
	return err;
}

int nz__hdmf_table_col_text(nz__hdmf_table *t, const char *name, const char *description,
			    const char *const *items)
{
	col c;
	int err = col_begin(&c, t, name, description, "VectorData", t->nrows, 1);
	if (err == 0)
		err = nz__hdmf_text_list(t->h, c.path, items, (size_t)t->nrows,
					 NZ_OBJECT_VLEN_UTF8, &c.d);
	json_decref(c.attrs);
	return err;
}

int nz__hdmf_table_col_refs(nz__hdmf_table *t, const char *name, const char *description,
			    json_t *const *refs)
{
	col c;
	int err = col_begin(&c, t, name, description, "VectorData", t->nrows, 1);
	if (err == 0)
		err = nz__hdmf_ref_list(t->h, c.path, refs, (size_t)t->nrows, &c.d);
	json_decref(c.attrs);
	return err;
}

int nz__hdmf_table_col_ragged_f64(nz__hdmf_table *t, const char *name, const char *description,
				  const double *data, size_t ndata, const uint64_t *ends)
{
	char iname[300], idesc[300], target[1100];
	char data_oid[NZ_HDMF_OID_LEN];
	col c, ic;
	int err;

	memset(&ic, 0, sizeof ic);
	for (uint64_t i = 0; i < t->nrows; i++)
		if (ends[i] > ndata || (i > 0 && ends[i] < ends[i - 1]))
			return nz__error_set(NZ_EINVAL,
					     "ragged column '%s' of '/%s': index %llu is not a "
					     "non-decreasing end offset <= %zu",
					     name, t->path, (unsigned long long)i, ndata);
	snprintf(iname, sizeof iname, "%s_index", name);
	snprintf(idesc, sizeof idesc, "Index for VectorData '%s'", name);
	snprintf(target, sizeof target, "/%s/%s", t->path, name);
	if ((err = col_begin(&c, t, name, description, "VectorData", ndata, 1)) < 0)
		goto done;
	c.d.dtype = "<f8";
	c.d.zarr_dtype = "float64";
	c.d.oid_out = data_oid;
	if ((err = nz__hdmf_dset_write(t->h, c.path, &c.d, data, ndata * sizeof *data)) < 0 ||
	    (err = col_begin(&ic, t, iname, idesc, "VectorIndex", t->nrows, 0)) < 0 ||
	    (err = nz__hdmf_set_ref_attr(ic.attrs, t->h, "target", target, data_oid)) < 0)
		goto done;
	ic.d.dtype = "<u8";
	ic.d.zarr_dtype = "uint64";
	err = nz__hdmf_dset_write(t->h, ic.path, &ic.d, ends, (size_t)t->nrows * sizeof *ends);
done:
	json_decref(c.attrs);
	json_decref(ic.attrs);
	return err;
}

int nz__hdmf_table_col_region(nz__hdmf_table *t, const char *name, const char *description,
			      const int64_t *rows, const char *table_path, const char *table_oid)
{
	char path[1024];
	int err;
	if ((err = col_path(path, sizeof path, t, name)) < 0)
		return err;
	if (json_array_append_new(json_object_get(t->attrs, "colnames"), json_string(name)) != 0)
		return nz__error_set(NZ_ENOMEM, "out of memory adding column '%s'", name);
	return nz__hdmf_region_dim(t->h, path, description, rows, (size_t)t->nrows, table_path,
				   table_oid, "dim0");
}

int nz__hdmf_table_end(nz__hdmf_table *t, const int64_t *ids)
{
	int64_t *seq = NULL;
	size_t nbytes;
	col c;
	int err;

	memset(&c, 0, sizeof c);
	if (nz__mul_size(&nbytes, (size_t)t->nrows, sizeof *ids) < 0) {
		err = nz__error_set(NZ_EINVAL, "table '/%s': too many rows", t->path);
		goto done;
	}
	if (!ids) {
		if (nbytes && !(seq = nz__malloc(nbytes))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory for ids of '/%s'", t->path);
			goto done;
		}
		for (uint64_t i = 0; i < t->nrows; i++)
			seq[i] = (int64_t)i;
		ids = seq;
	}
	if ((err = col_begin(&c, t, "id", NULL, "ElementIdentifiers", t->nrows, 0)) < 0)
		goto done;
	c.d.dtype = "<i8";
	c.d.zarr_dtype = "int64";
	if ((err = nz__hdmf_dset_write(t->h, c.path, &c.d, ids, nbytes)) < 0)
		goto done;
	err = nz__hdmf_attrs_write(t->h, t->path, t->attrs);
done:
	json_decref(c.attrs);
	nz__free(seq);
	nz__hdmf_table_free(t);
	return err;
}
