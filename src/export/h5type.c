/* HDF5 types -> the normalised element forms of model.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "export/h5.h"
#include "util/alloc.h"
#include "util/json.h"

struct errwalk {
	char inner[256];
	char outer[256];
	int n;
};

static herr_t walk_cb(unsigned n, const H5E_error2_t *e, void *payload)
{
	struct errwalk *w = payload;
	if (w->n++ == 0)
		snprintf(w->inner, sizeof w->inner, "%s", e->desc ? e->desc : "");
	snprintf(w->outer, sizeof w->outer, "%s: %s", e->func_name ? e->func_name : "",
		 e->desc ? e->desc : "");
	return 0;
}

int nz__h5_error(int code, const char *fmt, ...)
{
	char msg[NZ_ERROR_MSG_MAX];
	struct errwalk w;
	va_list ap;

	memset(&w, 0, sizeof w);
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, walk_cb, &w);
	H5Eclear2(H5E_DEFAULT);
	if (!w.n)
		return nz__error_set(code, "%s", msg);
	return nz__error_set(code, "%s (libhdf5: %s; %s)", msg, w.outer, w.inner);
}

NZ__H5_HELD static int int_type(nz__h5conv *c, hid_t ftype, nz__xclass cls, size_t size)
{
	static const hid_t *le_s[] = { &H5T_STD_I8LE_g, &H5T_STD_I16LE_g, &H5T_STD_I32LE_g,
				       &H5T_STD_I64LE_g };
	static const hid_t *le_u[] = { &H5T_STD_U8LE_g, &H5T_STD_U16LE_g, &H5T_STD_U32LE_g,
				       &H5T_STD_U64LE_g };
	int lg = size == 1 ? 0 : size == 2 ? 1 : size == 4 ? 2 : size == 8 ? 3 : -1;
	if (lg < 0)
		return -1;
	H5open();
	c->mtype = H5Tcopy(cls == NZ__XT_INT ? *le_s[lg] : *le_u[lg]);
	c->type.cls = cls;
	c->type.size = c->msize = size;
	c->raw_le = size == 1 || H5Tget_order(ftype) == H5T_ORDER_LE;
	return 0;
}

/* h5py writes numpy bools as an int8 enum {FALSE: 0, TRUE: 1}. */
NZ__H5_HELD static int is_h5py_bool(hid_t ftype)
{
	char *n0 = NULL, *n1 = NULL;
	int ok = 0;
	if (H5Tget_nmembers(ftype) != 2 || H5Tget_size(ftype) != 1)
		return 0;
	n0 = H5Tget_member_name(ftype, 0);
	n1 = H5Tget_member_name(ftype, 1);
	if (n0 && n1 && strcmp(n0, "FALSE") == 0 && strcmp(n1, "TRUE") == 0) {
		signed char v0 = -1, v1 = -1;
		H5Tget_member_value(ftype, 0, &v0);
		H5Tget_member_value(ftype, 1, &v1);
		ok = v0 == 0 && v1 == 1;
	}
	H5free_memory(n0);
	H5free_memory(n1);
	return ok;
}

NZ__H5_HELD static int compound_init(nz__h5conv *c, hid_t ftype, const char *what)
{
	int n = H5Tget_nmembers(ftype), i, err = 0;
	size_t moff = 0, noff = 0;

	if (n <= 0)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: empty compound type", what);
	c->type.cls = NZ__XT_COMPOUND;
	c->fields = nz__calloc((size_t)n, sizeof *c->fields);
	c->moffsets = nz__calloc((size_t)n, sizeof *c->moffsets);
	c->type.fields = nz__calloc((size_t)n, sizeof *c->type.fields);
	if (!c->fields || !c->moffsets || !c->type.fields)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory", what);
	c->nfields = c->type.nfields = (size_t)n;
	for (i = 0; i < n; i++) {
		hid_t mt = H5Tget_member_type(ftype, (unsigned)i);
		char *name = H5Tget_member_name(ftype, (unsigned)i);
		char sub[512];
		snprintf(sub, sizeof sub, "%s field '%s'", what, name ? name : "?");
		err = mt < 0 || !name ? nz__h5_error(NZ_EFORMAT, "%s: unreadable member", what)
				      : nz__h5conv_init(&c->fields[i], mt, sub);
		if (mt >= 0)
			H5Tclose(mt);
		if (!err && !(c->type.fields[i].name = nz__strdup(name)))
			err = nz__error_set(NZ_ENOMEM, "%s: out of memory", what);
		H5free_memory(name);
		if (err < 0)
			return err;
		if ((err = nz__xtype_copy(&c->type.fields[i].type, &c->fields[i].type)) < 0)
			return err;
		c->moffsets[i] = moff;
		c->type.fields[i].offset = noff;
		moff += c->fields[i].msize;
		noff += c->fields[i].type.size;
	}
	c->msize = moff;
	c->type.size = noff;
	c->mtype = H5Tcreate(H5T_COMPOUND, moff);
	for (i = 0; i < n; i++)
		if (H5Tinsert(c->mtype, c->type.fields[i].name, c->moffsets[i], c->fields[i].mtype) < 0)
			return nz__h5_error(NZ_EFORMAT, "%s: cannot build a memory type", what);
	return 0;
}

static const char *class_name(H5T_class_t cls)
{
	switch (cls) {
	case H5T_INTEGER: return "integer";
	case H5T_FLOAT: return "floating-point";
	case H5T_TIME: return "time";
	case H5T_STRING: return "string";
	case H5T_BITFIELD: return "bitfield";
	case H5T_OPAQUE: return "opaque";
	case H5T_COMPOUND: return "compound";
	case H5T_REFERENCE: return "reference";
	case H5T_ENUM: return "enum";
	case H5T_VLEN: return "variable-length sequence";
	case H5T_ARRAY: return "array";
	default: return "unknown";
	}
}

int nz__h5conv_init(nz__h5conv *c, hid_t ftype, const char *what)
{
	H5T_class_t cls = H5Tget_class(ftype);
	size_t size = H5Tget_size(ftype);
	int err = 0;

	memset(c, 0, sizeof *c);
	c->mtype = -1;
	switch (cls) {
	case H5T_INTEGER:
		err = int_type(c, ftype, H5Tget_sign(ftype) == H5T_SGN_NONE ? NZ__XT_UINT : NZ__XT_INT, size);
		break;
	case H5T_FLOAT:
		if (size != 4 && size != 8) {
			err = -1;
			break;
		}
		H5open();
		c->mtype = H5Tcopy(size == 4 ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
		c->type.cls = NZ__XT_FLOAT;
		c->type.size = c->msize = size;
		c->raw_le = H5Tget_order(ftype) == H5T_ORDER_LE;
		break;
	case H5T_ENUM: {
		/* Enums are stored as their base integers (their names are not
		 * representable in Zarr); h5py's bool enum becomes |b1. */
		hid_t base = H5Tget_super(ftype);
		err = int_type(c, base, H5Tget_sign(base) == H5T_SGN_NONE ? NZ__XT_UINT : NZ__XT_INT, size);
		H5Tclose(base);
		if (!err) {
			H5Tclose(c->mtype);
			c->mtype = H5Tget_native_type(ftype, H5T_DIR_ASCEND);
			if (is_h5py_bool(ftype))
				c->type.cls = NZ__XT_BOOL;
		}
		break;
	}
	case H5T_STRING:
		c->type.cls = NZ__XT_STRING;
		c->type.size = sizeof(char *);
		c->type.utf8 = H5Tget_cset(ftype) == H5T_CSET_UTF8;
		c->mtype = H5Tcopy(ftype);
		if (H5Tis_variable_str(ftype) > 0) {
			c->vlen_str = 1;
			c->msize = sizeof(char *);
		} else {
			c->type.fixed_len = size;
			c->msize = size;
		}
		break;
	case H5T_REFERENCE:
		if (H5Tequal(ftype, H5T_STD_REF_OBJ) <= 0)
			return nz__error_set(NZ_EUNSUPPORTED,
					     "%s: region references are not supported (hdmf-zarr has "
					     "no form for them)", what);
		c->type.cls = NZ__XT_REF;
		c->type.size = sizeof(char *);
		c->msize = sizeof(hobj_ref_t);
		c->mtype = H5Tcopy(H5T_STD_REF_OBJ);
		break;
	case H5T_COMPOUND:
		return compound_init(c, ftype, what);
	default:
		err = -1;
	}
	if (err == -1)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: HDF5 %s type of %zu bytes is not supported",
				     what, class_name(cls), size);
	return err;
}

void nz__h5conv_clear(nz__h5conv *c)
{
	size_t i;
	if (!c)
		return;
	for (i = 0; i < c->nfields; i++)
		nz__h5conv_clear(&c->fields[i]);
	nz__free(c->fields);
	nz__free(c->moffsets);
	if (c->mtype >= 0)
		H5Tclose(c->mtype);
	nz__xtype_clear(&c->type);
	memset(c, 0, sizeof *c);
	c->mtype = -1;
}

int nz__h5conv_has_vlen(const nz__h5conv *c)
{
	size_t i;
	if (c->vlen_str)
		return 1;
	for (i = 0; i < c->nfields; i++)
		if (nz__h5conv_has_vlen(&c->fields[i]))
			return 1;
	return 0;
}

static int put_str(void *dst, const char *s, size_t n, const char *what)
{
	char *copy = nz__strndup(s ? s : "", s ? n : 0);
	if (!copy)
		return nz__error_set(NZ_ENOMEM, "%s: out of memory", what);
	memcpy(dst, &copy, sizeof copy);
	return 0;
}

NZ__H5_HELD static int conv_one(const nz__h5conv *c, hid_t loc, const unsigned char *src, unsigned char *dst,
		    const char *what)
{
	size_t i;
	int err;
	switch (c->type.cls) {
	case NZ__XT_STRING:
		if (c->vlen_str) {
			const char *s;
			memcpy(&s, src, sizeof s);
			return put_str(dst, s, s ? strlen(s) : 0, what);
		}
		/* Fixed-length strings are NUL- or space-padded to their size. */
		return put_str(dst, (const char *)src, strnlen((const char *)src, c->msize), what);
	case NZ__XT_REF: {
		char name[4096];
		ssize_t n = H5Rget_name(loc, H5R_OBJECT, src, name, sizeof name);
		if (n < 0)
			return nz__h5_error(NZ_EFORMAT, "%s: cannot resolve an object reference", what);
		if ((size_t)n >= sizeof name)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: reference target path too long", what);
		return put_str(dst, name, (size_t)n, what);
	}
	case NZ__XT_COMPOUND:
		for (i = 0; i < c->nfields; i++)
			if ((err = conv_one(&c->fields[i], loc, src + c->moffsets[i],
					    dst + c->type.fields[i].offset, what)) < 0)
				return err;
		return 0;
	default:
		memcpy(dst, src, c->type.size);
		return 0;
	}
}

int nz__h5conv_apply(const nz__h5conv *c, hid_t loc, const void *src, void *dst, size_t n,
		     const char *what)
{
	size_t i;
	int err;
	for (i = 0; i < n; i++) {
		err = conv_one(c, loc, (const unsigned char *)src + i * c->msize,
			       (unsigned char *)dst + i * c->type.size, what);
		if (err < 0) {
			nz__xvalues_free(&c->type, dst, i);
			return err;
		}
	}
	return 0;
}

char *nz__h5_object_id(hid_t loc, const char *path)
{
	hid_t a = -1, t = -1;
	char *out = NULL, *s = NULL;
	if (H5Aexists_by_name(loc, path, "object_id", H5P_DEFAULT) <= 0)
		goto done;
	if ((a = H5Aopen_by_name(loc, path, "object_id", H5P_DEFAULT, H5P_DEFAULT)) < 0)
		goto done;
	t = H5Aget_type(a);
	if (H5Tget_class(t) != H5T_STRING || H5Tis_variable_str(t) <= 0) {
		size_t n = H5Tget_size(t);
		char buf[128] = { 0 };
		if (H5Tget_class(t) == H5T_STRING && n < sizeof buf && H5Aread(a, t, buf) >= 0)
			out = nz__strndup(buf, strnlen(buf, n));
		goto done;
	}
	if (H5Aread(a, t, &s) >= 0 && s) {
		out = nz__strdup(s);
		H5free_memory(s);
	}
done:
	H5Eclear2(H5E_DEFAULT);
	if (t >= 0)
		H5Tclose(t);
	if (a >= 0)
		H5Aclose(a);
	return out;
}
