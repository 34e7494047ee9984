/* Zarr v3 export of a compound dataset holding references or text, as
 * hdmf-zarr 0.14 writes one: a v3 `struct` whose number fields keep their
 * types (an int32 idx_start stays int32), whose text and reference fields
 * are numpy '<Un' (UTF-32, n = the longest value but at least 512
 * characters, 0.14's COMPOUND_DTYPE_MIN_STRING_LENGTH), references holding
 * the target's absolute path, and an attribute _REFERENCE_FIELDS naming
 * the reference fields. */
#include <stdio.h>
#include <string.h>

#include "export/export_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

#define MIN_CHARS 512

/* Code points of UTF-8 text into UTF-32LE at dst (cap code points, the
 * rest zero); with dst NULL only counts. -1 for text that is not UTF-8. */
static long utf32(unsigned char *dst, size_t cap, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;
	while (*p) {
		uint32_t c;
		int more, i;
		if (*p < 0x80) {
			c = *p;
			more = 0;
		} else if ((*p & 0xE0) == 0xC0) {
			c = *p & 0x1F;
			more = 1;
		} else if ((*p & 0xF0) == 0xE0) {
			c = *p & 0x0F;
			more = 2;
		} else if ((*p & 0xF8) == 0xF0) {
			c = *p & 0x07;
			more = 3;
		} else {
			return -1;
		}
		p++;
		for (i = 0; i < more; i++, p++) {
			if ((*p & 0xC0) != 0x80)
				return -1;
			c = c << 6 | (*p & 0x3F);
		}
		if (dst && n < cap) {
			dst[4 * n] = (unsigned char)c;
			dst[4 * n + 1] = (unsigned char)(c >> 8);
			dst[4 * n + 2] = (unsigned char)(c >> 16);
			dst[4 * n + 3] = (unsigned char)(c >> 24);
		}
		n++;
	}
	return (long)n;
}

static const char *field_text(const unsigned char *elem, const nz__xfield *f)
{
	const char *s;
	memcpy(&s, elem + f->offset, sizeof s);
	return s ? s : "";
}

/* The struct's numpy dtype (text fields '<U<chars>') and the bytes of one
 * item; chars[f] from the longest value of each text field. */
static int struct_dtype(char **out, size_t *item, size_t *chars, const nz__xnode *n,
			const unsigned char *buf, uint64_t nelem)
{
	const nz__xtype *t = &n->type;
	json_t *list = json_array();
	size_t f;
	uint64_t e;
	int err = 0;

	*item = 0;
	if (!list)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	for (f = 0; f < t->nfields && !err; f++) {
		const nz__xtype *ft = &t->fields[f].type;
		char np[32], *simple = NULL;
		chars[f] = 0;
		if (nz__xtype_has_pointers(ft)) {
			if (ft->cls != NZ__XT_STRING && ft->cls != NZ__XT_REF) {
				err = nz__error_set(NZ_EUNSUPPORTED, "'%s': compound field '%s' is itself a compound",
						    n->path, t->fields[f].name);
				break;
			}
			chars[f] = MIN_CHARS;
			for (e = 0; e < nelem; e++) {
				long c = utf32(NULL, 0, field_text(buf + e * t->size, &t->fields[f]));
				if (c < 0) {
					err = nz__error_set(NZ_EFORMAT, "'%s': field '%s' of element %llu is not "
							    "UTF-8 text", n->path, t->fields[f].name,
							    (unsigned long long)e);
					break;
				}
				if ((size_t)c > chars[f])
					chars[f] = (size_t)c;
			}
			snprintf(np, sizeof np, "<U%zu", chars[f]);
			*item += 4 * chars[f];
		} else if ((err = nz__xtype_numpy(&simple, ft)) == 0 && simple) {
			snprintf(np, sizeof np, "%s", simple);
			*item += ft->size;
		} else if (!err) {
			err = nz__error_set(NZ_EUNSUPPORTED, "'%s': compound field '%s' has no numpy form",
					    n->path, t->fields[f].name);
		}
		nz__free(simple);
		if (!err && json_array_append_new(list, json_pack("[ss]", t->fields[f].name, np)) < 0)
			err = nz__error_set(NZ_ENOMEM, "out of memory");
	}
	if (!err)
		err = nz__json_dumps(out, list, NZ_JSON_COMPACT);
	json_decref(list);
	return err;
}

int nz__x_put_struct3(nz__hdmf *h, const nz__xnode *n, uint64_t nelem, const unsigned char *buf,
		      const json_t *attrs, const uint64_t *chunks)
{
	const nz__xtype *t = &n->type;
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	unsigned char *packed = NULL;
	size_t *chars = NULL, item = 0, packed_bytes, f, off;
	json_t *a = NULL, *refs = NULL;
	char *dtype = NULL;
	nz_array *arr = NULL;
	uint64_t e;
	int err = 0;

	chars = nz__calloc(t->nfields + 1, sizeof *chars);
	if (!chars || !(a = json_deep_copy(attrs)) || !(refs = json_array())) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	if ((err = struct_dtype(&dtype, &item, chars, n, buf, nelem)) < 0)
		goto done;
	if (nz__mul_size(&packed_bytes, (size_t)nelem, item) < 0 ||
	    !(packed = nz__calloc(1, packed_bytes ? packed_bytes : 1))) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	for (e = 0; e < nelem; e++) {
		const unsigned char *src = buf + e * t->size;
		unsigned char *dst = packed + e * item;
		for (f = 0, off = 0; f < t->nfields; f++) {
			const nz__xfield *fd = &t->fields[f];
			if (chars[f]) {
				utf32(dst + off, chars[f], field_text(src, fd));
				off += 4 * chars[f];
			} else {
				memcpy(dst + off, src + fd->offset, fd->type.size);
				off += fd->type.size;
			}
		}
	}
	for (f = 0; f < t->nfields; f++)
		if (t->fields[f].type.cls == NZ__XT_REF &&
		    json_array_append_new(refs, json_string(t->fields[f].name)) < 0) {
			err = nz__error_set(NZ_ENOMEM, "out of memory");
			goto done;
		}
	json_object_del(a, "zarr_dtype");
	if (json_array_size(refs) && json_object_set(a, "_REFERENCE_FIELDS", refs) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	ao.zarr_format = 3;
	ao.dtype = dtype;
	ao.ndim = n->scalar ? 0 : n->ndim;
	ao.shape = n->shape;
	ao.chunks = n->scalar ? NULL : chunks;
	ao.compressor = &h->compressor;
	ao.dimension_separator = nz__hdmf_key_separator(n->path + 1, ao.ndim);
	if ((err = nz_array_create(&arr, h->store, n->path + 1, &ao)) < 0 ||
	    (err = nz__hdmf_attrs_write(h, n->path + 1, a)) < 0)
		goto done;
	if (nelem)
		err = nz_array_write_all(arr, packed, packed_bytes);
done:
	nz_array_free(arr);
	nz__free(packed);
	nz__free(chars);
	nz__free(dtype);
	json_decref(a);
	json_decref(refs);
	return err;
}

int nz__x_write_struct3(nz__hdmf *h, nz__h5ds *ds, const nz__xmodel *m, const nz__xnode *n,
			uint64_t nelem, const json_t *attrs, const uint64_t *chunks, uint64_t *bytes)
{
	static const uint64_t zero[1] = { 0 };
	unsigned char *buf = NULL;
	size_t nbytes;
	int err;

	if (nz__mul_size(&nbytes, (size_t)nelem, n->type.size) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s' is too large", n->path);
	if (!(buf = nz__calloc(1, nbytes ? nbytes : 1)))
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
	if (!nelem || ((err = nz__h5ds_read(ds, zero, n->shape, buf, nbytes)) == 0 &&
		       (err = nz__xvalues_canon(m, n, buf, (size_t)nelem)) == 0))
		err = nz__x_put_struct3(h, n, nelem, buf, attrs, chunks);
	if (err == 0)
		*bytes += nbytes;
	nz__xvalues_free(&n->type, buf, (size_t)nelem);
	nz__free(buf);
	return err;
}
