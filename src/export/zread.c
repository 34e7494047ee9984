/* Values of an NWB Zarr array in the normalised form of model.h. */
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
