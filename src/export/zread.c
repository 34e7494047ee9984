/* Values of an NWB Zarr array in the normalised form of model.h. */
#include <stdlib.h>
#include <string.h>

#include "export/zread.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

static int put_text(unsigned char *dst, const char *s, size_t n, const char *path)
{
	char *copy = nz__strndup(s, n);
	if (!copy)
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", path);
	memcpy(dst, &copy, sizeof copy);
	return 0;
}

static int put_number(unsigned char *dst, const nz__xtype *t, const json_t *v, const char *path)
{
	double d = 0;
	if (t->cls == NZ__XT_BOOL) {
		dst[0] = json_is_true(v) || (json_is_integer(v) && json_integer_value(v) != 0);
		return 0;
	}
	if (t->cls == NZ__XT_FLOAT) {
		if (!json_is_number(v) && !nz__json_is_nonfinite(v, &d))
			return nz__error_set(NZ_EFORMAT, "'%s': expected a number, got %s", path,
					     nz__json_type_name(v));
		if (json_is_number(v))
			d = json_number_value(v);
		if (t->size == 4) {
			float f = (float)d;
			memcpy(dst, &f, 4);
		} else {
			memcpy(dst, &d, 8);
		}
		return 0;
	}
	if (!json_is_integer(v))
		return nz__error_set(NZ_EFORMAT, "'%s': expected an integer, got %s", path,
				     nz__json_type_name(v));
	{
		int64_t i = json_integer_value(v);
		memcpy(dst, &i, t->size); /* little-endian: the low bytes first */
	}
	return 0;
}

/* One '|O' element (text as stored) into the normalised form. */
static int put_elem(unsigned char *dst, const nz__xtype *t, const json_t *v, const char *path)
{
	size_t i;
	int err;
	switch (t->cls) {
	case NZ__XT_STRING:
		if (!json_is_string(v))
			return nz__error_set(NZ_EFORMAT, "'%s': expected text, got %s", path, nz__json_type_name(v));
		return put_text(dst, json_string_value(v), json_string_length(v), path);
	case NZ__XT_REF: {
		const json_t *p = json_object_get(v, "path");
		if (!json_is_string(p))
			return nz__error_set(NZ_EFORMAT, "'%s': a reference without a path", path);
		return put_text(dst, json_string_value(p), json_string_length(p), path);
	}
	case NZ__XT_COMPOUND:
		if (!json_is_array(v) || json_array_size(v) != t->nfields)
			return nz__error_set(NZ_EFORMAT, "'%s': expected a list of %zu fields", path, t->nfields);
		for (i = 0; i < t->nfields; i++)
			if ((err = put_elem(dst + t->fields[i].offset, &t->fields[i].type,
					    json_array_get(v, i), path)) < 0)
				return err;
		return 0;
	default:
		return put_number(dst, t, v, path);
	}
}

static int read_objects(nz_array *a, const nz__xnode *n, unsigned char *out, uint64_t total)
{
	uint64_t grid[NZ_MAX_DIMS], ci[NZ_MAX_DIMS] = { 0 };
	const uint64_t *shape = nz_array_shape(a), *chunks = nz_array_chunks(a);
	int nd = nz_array_ndim(a), d, err = 0;
	/* json2 and pickle elements are JSON values; vlen ones text. */
	int text = nz_array_object_codec(a) == NZ_OBJECT_VLEN_UTF8 || nz_array_object_codec(a) == NZ_OBJECT_VLEN_BYTES;
	uint64_t filled = 0;

	if (!total)
		return 0;
	nz_array_chunk_grid(a, grid);
	for (;;) {
		nz_vlen *v = NULL;
		size_t e;
		if ((err = nz_array_read_chunk_vlen(&v, a, ci)) < 0)
			return err;
		for (e = 0; e < v->count && !err; e++) {
			uint64_t rem = e, gi = 0, pos[NZ_MAX_DIMS];
			int inside = 1;
			for (d = nd - 1; d >= 0; d--) {
				pos[d] = ci[d] * chunks[d] + rem % chunks[d];
				rem /= chunks[d];
				inside = inside && pos[d] < shape[d];
			}
			if (!inside)
				continue;
			for (d = 0; d < nd; d++)
				gi = gi * shape[d] + pos[d];
			if (text) {
				err = put_text(out + gi * n->type.size, v->items[e], v->lens[e], n->path);
			} else {
				json_t *j = NULL;
				err = nz__json_parse(&j, v->items[e], v->lens[e], n->path, JSON_DECODE_ANY);
				if (!err)
					err = put_elem(out + gi * n->type.size, &n->type, j, n->path);
				json_decref(j);
			}
			if (!err)
				filled++;
		}
		nz_vlen_free(v);
		if (err < 0)
			return err;
		for (d = nd - 1; d >= 0; d--) {
			if (++ci[d] < grid[d])
				break;
			ci[d] = 0;
		}
		if (d < 0)
			break;
	}
	if (filled != total)
		return nz__error_set(NZ_EFORMAT, "'%s': %llu of %llu elements read", n->path,
				     (unsigned long long)filled, (unsigned long long)total);
	return 0;
}

/* UTF-32LE text of at most n code points (NUL ends it early) as UTF-8. */
static int put_utf32(unsigned char *dst, const unsigned char *src, size_t n, const char *path)
{
	char *u = nz__malloc(4 * n + 1);
	size_t len = 0, i;
	if (!u)
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", path);
	for (i = 0; i < n; i++) {
		uint32_t c = (uint32_t)src[4 * i] | (uint32_t)src[4 * i + 1] << 8 |
			     (uint32_t)src[4 * i + 2] << 16 | (uint32_t)src[4 * i + 3] << 24;
		if (!c)
			break;
		if (c > 0x10FFFF || (c >= 0xD800 && c <= 0xDFFF)) {
			nz__free(u);
			return nz__error_set(NZ_EFORMAT, "'%s': text field holds U+%X, not a character",
					     path, (unsigned)c);
		}
		if (c < 0x80) {
			u[len++] = (char)c;
		} else if (c < 0x800) {
			u[len++] = (char)(0xC0 | c >> 6);
			u[len++] = (char)(0x80 | (c & 0x3F));
		} else if (c < 0x10000) {
			u[len++] = (char)(0xE0 | c >> 12);
			u[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
			u[len++] = (char)(0x80 | (c & 0x3F));
		} else {
			u[len++] = (char)(0xF0 | c >> 18);
			u[len++] = (char)(0x80 | ((c >> 12) & 0x3F));
			u[len++] = (char)(0x80 | ((c >> 6) & 0x3F));
			u[len++] = (char)(0x80 | (c & 0x3F));
		}
	}
	u[len] = '\0';
	memcpy(dst, &u, sizeof u);
	return 0;
}

/* A struct holding text fields ('<Un', '|Sn': hdmf-zarr 0.14's compounds of
 * references) is stored in numpy's packed layout; each element is spread
 * into the normalised form field by field. */
static int read_struct(nz_array *a, const nz__xnode *n, const uint64_t *start, const uint64_t *count,
		       unsigned char *out, size_t total)
{
	const nz__xtype *t = &n->type;
	size_t item = nz_array_itemsize(a), bytes, e, f, roff[64], rsize[64];
	char kind[64];
	const char *dt = nz_array_dtype(a);
	unsigned char *tmp = NULL;
	json_t *list = NULL;
	int err;

	if ((err = nz__json_parse(&list, dt, strlen(dt), n->path, 0)) < 0)
		return err;
	if (json_array_size(list) != t->nfields || t->nfields > 64) {
		err = nz__error_set(NZ_EFORMAT, "'%s': struct has %zu fields, expected %zu", n->path,
				    json_array_size(list), t->nfields);
		goto done;
	}
	for (f = 0, bytes = 0; f < t->nfields; f++) {
		const char *fd = json_string_value(json_array_get(json_array_get(list, f), 1));
		kind[f] = fd && strlen(fd) > 2 ? fd[1] : '?';
		rsize[f] = kind[f] == '?' ? 0 : (size_t)strtoul(fd + 2, NULL, 10) * (kind[f] == 'U' ? 4 : 1);
		roff[f] = bytes;
		bytes += rsize[f];
	}
	if (bytes != item) {
		err = nz__error_set(NZ_EFORMAT, "'%s': struct fields take %zu bytes, items %zu", n->path,
				    bytes, item);
		goto done;
	}
	if (nz__mul_size(&bytes, total, item) < 0 || !(tmp = nz__malloc(bytes ? bytes : 1))) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	memset(out, 0, total * t->size);
	if (total && (err = nz_array_read_region(a, start, count, tmp, bytes)) < 0)
		goto done;
	for (e = 0; e < total && !err; e++) {
		for (f = 0; f < t->nfields && !err; f++) {
			const unsigned char *src = tmp + e * item + roff[f];
			unsigned char *dst = out + e * t->size + t->fields[f].offset;
			if (!nz__xtype_has_pointers(&t->fields[f].type))
				memcpy(dst, src, t->fields[f].type.size);
			else if (kind[f] == 'U')
				err = put_utf32(dst, src, rsize[f] / 4, n->path);
			else
				err = put_text(dst, (const char *)src, strnlen((const char *)src, rsize[f]), n->path);
		}
	}
	if (err < 0)
		nz__xvalues_free(t, out, total);
done:
	nz__free(tmp);
	json_decref(list);
	return err;
}

int nz__z_read(nz_array *a, const nz__xnode *n, const uint64_t *start, const uint64_t *count,
	       void *out, size_t len)
{
	static const uint64_t zero[1] = { 0 }, one[1] = { 1 };
	uint64_t total;
	int d, err;

	if (n->scalar) {
		start = zero;
		count = one;
	}
	if ((err = nz__xnode_count(&total, n, count)) < 0)
		return err;
	if (nz_array_object_codec(a) != NZ_OBJECT_NONE) {
		for (d = 0; d < n->ndim; d++)
			if (start[d] != 0 || count[d] != n->shape[d])
				return nz__error_set(NZ_EINVAL, "'%s': object arrays are read whole", n->path);
		memset(out, 0, len);
		if ((err = read_objects(a, n, out, total)) < 0)
			nz__xvalues_free(&n->type, out, (size_t)total);
		return err;
	}
	if (n->type.cls == NZ__XT_COMPOUND && nz__xtype_has_pointers(&n->type))
		return read_struct(a, n, start, count, out, (size_t)total);
	if (n->type.cls == NZ__XT_STRING) { /* '|Sn': fixed-length bytes */
		size_t w = n->type.fixed_len, i, bytes;
		unsigned char *tmp;
		if (nz__mul_size(&bytes, (size_t)total, w) < 0 || !(tmp = nz__malloc(bytes ? bytes : 1)))
			return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		err = total ? nz_array_read_region(a, start, count, tmp, bytes) : 0;
		for (i = 0; i < total && !err; i++)
			err = put_text((unsigned char *)out + i * sizeof(char *), (char *)tmp + i * w,
				       strnlen((char *)tmp + i * w, w), n->path);
		if (err < 0)
			nz__xvalues_free(&n->type, out, i);
		nz__free(tmp);
		return err;
	}
	return total ? nz_array_read_region(a, start, count, out, len) : 0;
}
