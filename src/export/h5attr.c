/* HDF5 attributes -> JSON values in hdmf-zarr's form. */
#include <string.h>

#include "export/h5.h"
#include "util/alloc.h"
#include "util/json.h"

NZ__H5_HELD static char *h5_oid(void *ctx, const char *path)
{
	return nz__h5_object_id(*(hid_t *)ctx, path);
}

/* Nested lists following `dims`. */
static json_t *nest(const nz__xtype *t, const unsigned char **p, const hsize_t *dims, int ndim,
		    const nz__xjson_ctx *jc)
{
	json_t *list = json_array(), *v;
	hsize_t i;
	for (i = 0; list && i < dims[0]; i++) {
		if (ndim > 1) {
			v = nest(t, p, dims + 1, ndim - 1, jc);
		} else {
			v = nz__xelem_json(t, *p, jc, 0);
			*p += t->size;
		}
		if (!v || json_array_append_new(list, v) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

int nz__h5_attr_json(json_t **out, hid_t attr, hid_t loc, const char *root_oid, const char *what)
{
	hid_t space = -1, ftype = -1;
	nz__h5conv c;
	nz__xjson_ctx jc;
	hsize_t dims[NZ_MAX_DIMS];
	hssize_t npoints;
	void *mbuf = NULL, *nbuf = NULL;
	int ndim, err = 0, read = 0, converted = 1;
	size_t n = 0, bytes;
	unsigned long failures;

	*out = NULL;
	memset(&c, 0, sizeof c);
	c.mtype = -1;
	space = H5Aget_space(attr);
	ftype = H5Aget_type(attr);
	if (space < 0 || ftype < 0) {
		err = nz__h5_error(NZ_EFORMAT, "%s: unreadable attribute", what);
		goto done;
	}
	if (H5Sget_simple_extent_type(space) == H5S_NULL) {
		*out = json_null();
		goto done;
	}
	ndim = H5Sget_simple_extent_ndims(space);
	npoints = H5Sget_simple_extent_npoints(space);
	if (ndim < 0 || ndim > NZ_MAX_DIMS || npoints < 0) {
		err = nz__h5_error(NZ_EFORMAT, "%s: bad dataspace", what);
		goto done;
	}
	H5Sget_simple_extent_dims(space, dims, NULL);
	if ((err = nz__h5conv_init(&c, ftype, what)) < 0)
		goto done;
	n = (size_t)npoints;
	if (nz__mul_size(&bytes, n ? n : 1, c.msize > c.type.size ? c.msize : c.type.size) < 0) {
		err = nz__error_set(NZ_EFORMAT, "%s: attribute too large", what);
		goto done;
	}
	mbuf = nz__calloc(1, bytes);
	nbuf = nz__calloc(1, bytes);
	if (!mbuf || !nbuf) {
		err = nz__error_set(NZ_ENOMEM, "%s: out of memory", what);
		goto done;
	}
	if (n && H5Aread(attr, c.mtype, mbuf) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "%s: cannot read attribute", what);
		goto done;
	}
	read = 1;
	if (n && (err = nz__h5conv_apply(&c, loc, mbuf, nbuf, n, what)) < 0) {
		converted = 0; /* apply freed what it had converted */
		goto done;
	}
	jc.oid = h5_oid;
	jc.ctx = &loc;
	jc.root_oid = root_oid;
	jc.compound_as_list = 0;
	failures = nz__alloc_failures();
	if (ndim == 0) {
		*out = nz__xelem_json(&c.type, nbuf, &jc, 1);
	} else {
		const unsigned char *p = nbuf;
		*out = nest(&c.type, &p, dims, ndim, &jc);
	}
	if (!*out)
		err = nz__alloc_failures() != failures
			      ? nz__error_set(NZ_ENOMEM, "%s: out of memory", what)
			      : nz__error_set(NZ_EUNSUPPORTED,
					      "%s: value cannot be written as JSON (invalid UTF-8 text?)",
					      what);
done:
	if (read && n && nz__h5conv_has_vlen(&c))
		H5Dvlen_reclaim(c.mtype, space, H5P_DEFAULT, mbuf);
	if (nbuf && converted)
		nz__xvalues_free(&c.type, nbuf, n);
	nz__free(mbuf);
	nz__free(nbuf);
	nz__h5conv_clear(&c);
	if (space >= 0)
		H5Sclose(space);
	if (ftype >= 0)
		H5Tclose(ftype);
	return err;
}
