/* Object codecs, byte-compatible with numcodecs 0.11 (pickle: read only,
 * pickle.c):
 *   vlen-utf8 / vlen-bytes: u32 count, then per item u32 length + bytes
 *     (little-endian), items in C order;
 *   json2: json.dumps(chunk.tolist() + ["|O", [shape]] (items nested by shape),
 *     separators=(',', ':'), sort_keys=True, ensure_ascii=True). */
#include <stdint.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/utf8.h"
#include "util/json.h"
#include "zarr/pickle.h"
#include "zarr/zarr_impl.h"

/* nz_vlen plus the one buffer its items point into. */
typedef struct vlen_impl {
	nz_vlen pub;
	nz_buf data;
} vlen_impl;

json_t *nz__vlen_codec_json(nz_object_codec c)
{
	if (c == NZ_OBJECT_VLEN_UTF8)
		return json_pack("{s:s}", "id", "vlen-utf8");
	if (c == NZ_OBJECT_VLEN_BYTES)
		return json_pack("{s:s}", "id", "vlen-bytes");
	/* numcodecs.JSON().get_config() with its defaults, as zarr stores it. */
	return json_pack("{s:b,s:b,s:s,s:b,s:s,s:n,s:[s,s],s:b,s:b,s:b}", "allow_nan", 1, "check_circular", 1,
			 "encoding", "utf-8", "ensure_ascii", 1, "id", "json2", "indent", "separators", ",", ":",
			 "skipkeys", 0, "sort_keys", 1, "strict", 1);
}

int nz__vlen_codec_parse(nz_object_codec *out, const json_t *config, const char *what)
{
	const char *id = json_string_value(json_object_get(config, "id"));
	if (!json_is_object(config) || !id)
		return nz__error_set(NZ_EFORMAT, "%s: 'filters'[0] must be an object codec config with an 'id'", what);
	if (strcmp(id, "vlen-utf8") == 0)
		*out = NZ_OBJECT_VLEN_UTF8;
	else if (strcmp(id, "vlen-bytes") == 0)
		*out = NZ_OBJECT_VLEN_BYTES;
	else if (strcmp(id, "json2") == 0)
		*out = NZ_OBJECT_JSON2;
	else if (strcmp(id, "pickle") == 0)
		*out = NZ_OBJECT_PICKLE;
	else
		return nz__error_set(NZ_EUNSUPPORTED, "%s: object codec '%s' is not supported "
				     "(vlen-utf8, vlen-bytes, json2, pickle to read)", what, id);
	return 0;
}

static int put_u32(nz_buf *b, size_t v)
{
	unsigned char le[4] = { (unsigned char)v, (unsigned char)(v >> 8), (unsigned char)(v >> 16),
				(unsigned char)(v >> 24) };
	return nz__buf_append(b, le, 4);
}

/* One nesting level of json2's list: chunk dimension `level`. */
static int json2_level(nz_buf *b, const nz_array *a, int level, const char *const *items,
		       const size_t *lens, size_t *i)
{
	uint64_t j;
	int err;
	json_t *v = NULL;
	if (level == a->ndim) {
		if ((err = nz__json_parse(&v, items[*i], lens[*i], "json2 element", JSON_DECODE_ANY)) < 0) {
			nz__error_wrap("element %zu", *i);
			return err;
		}
		(*i)++;
		err = nz__json_emit(b, v, NZ_JSON_COMPACT);
		json_decref(v);
		return err;
	}
	if ((err = nz__buf_append(b, "[", 1)) < 0)
		return err;
	for (j = 0; j < a->chunks[level]; j++)
		if ((j && (err = nz__buf_append(b, ",", 1)) < 0) ||
		    (err = json2_level(b, a, level + 1, items, lens, i)) < 0)
			return err;
	return nz__buf_append(b, "]", 1);
}

static int json2_encode(nz_buf *b, const nz_array *a, const char *const *items, const size_t *lens)
{
	char num[32];
	size_t i = 0;
	uint64_t j;
	int d, err;
	/* ndim >= 1 (0-d json2 is refused when the array is opened). The outer
	 * list is chunk.tolist() itself, so its brackets are shared with the
	 * dtype and shape numcodecs appends to it. */
	if ((err = nz__buf_append(b, "[", 1)) < 0)
		return err;
	for (j = 0; j < a->chunks[0]; j++)
		if ((j && (err = nz__buf_append(b, ",", 1)) < 0) ||
		    (err = json2_level(b, a, 1, items, lens, &i)) < 0)
			return err;
	if ((err = nz__buf_append(b, ",\"|O\",[", 7)) < 0)
		return err;
	for (d = 0; d < a->ndim; d++) {
		int n = snprintf(num, sizeof num, "%s%llu", d ? "," : "", (unsigned long long)a->chunks[d]);
		if ((err = nz__buf_append(b, num, (size_t)n)) < 0)
			return err;
	}
	return nz__buf_append(b, "]]", 2);
}

int nz__vlen_encode(nz_buf *b, const nz_array *a, const char *const *items, const size_t *lens, size_t count)
{
	size_t i;
	int err;
	if (a->ocodec == NZ_OBJECT_JSON2)
		return json2_encode(b, a, items, lens);
	if (a->ocodec == NZ_OBJECT_PICKLE)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': the pickle object codec is read only", a->path);
	if (count > UINT32_MAX)
		return nz__error_set(NZ_EINVAL, "array '%s': %zu elements do not fit vlen's u32 count", a->path, count);
	if ((err = put_u32(b, count)) < 0)
		return err;
	for (i = 0; i < count; i++) {
		if (lens[i] > UINT32_MAX)
			return nz__error_set(NZ_EINVAL, "array '%s': element %zu is %zu bytes, over vlen's u32 limit",
					     a->path, i, lens[i]);
		/* Checked here, the one place every vlen-utf8 element passes:
		 * zarr-python cannot read a chunk holding invalid UTF-8. */
		if (a->ocodec == NZ_OBJECT_VLEN_UTF8 && lens[i] &&
		    nz__utf8_invalid_at(items[i], lens[i]) != lens[i])
			return nz__error_set(NZ_EINVAL, "array '%s': element %zu is not valid UTF-8 "
					     "text (vlen-utf8)", a->path, i);
		if ((err = put_u32(b, lens[i])) < 0 || (err = nz__buf_append(b, items[i], lens[i])) < 0)
			return err;
	}
	return 0;
}

static int vlen_new(vlen_impl **out, size_t count)
{
	vlen_impl *v = nz__calloc(1, sizeof *v);
	if (!v || !(v->pub.items = nz__calloc(count, sizeof *v->pub.items)) ||
	    !(v->pub.lens = nz__calloc(count, sizeof *v->pub.lens))) {
		nz_vlen_free(v ? &v->pub : NULL);
		return nz__error_set(NZ_ENOMEM, "out of memory for %zu object elements", count);
	}
	v->pub.count = count;
	*out = v;
	return 0;
}

/* Items were appended NUL-terminated to v->data with their offsets kept in
 * items[]; now that the buffer no longer moves, make them pointers. */
static void vlen_fix(vlen_impl *v)
{
	size_t i;
	for (i = 0; i < v->pub.count; i++)
		v->pub.items[i] = (char *)v->data.data + (size_t)(uintptr_t)v->pub.items[i];
}

static int vlen_add(vlen_impl *v, size_t i, const void *p, size_t n)
{
	int err;
	v->pub.items[i] = (char *)(uintptr_t)v->data.len;
	v->pub.lens[i] = n;
	if ((err = nz__buf_append(&v->data, p, n)) < 0 || (err = nz__buf_append(&v->data, "", 1)) < 0)
		return err;
	return 0;
}

int nz__vlen_empty(nz_vlen **out, size_t count)
{
	return nz__vlen_filled(out, count, "", 0);
}

int nz__vlen_filled(nz_vlen **out, size_t count, const void *fill, size_t len)
{
	vlen_impl *v = NULL;
	size_t i;
	int err;
	*out = NULL;
	if ((err = vlen_new(&v, count)) < 0)
		return err;
	for (i = 0; i < count; i++)
		if ((err = vlen_add(v, i, fill, len)) < 0) {
			nz_vlen_free(&v->pub);
			return err;
		}
	vlen_fix(v);
	*out = &v->pub;
	return 0;
}

static uint32_t get_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The header must announce a full chunk, and the bytes must be about
 * enough for it (4 per element; the exact check is element by element),
 * before anything is allocated for its elements. */
static int vlen_check_count(const unsigned char *p, size_t len, const nz_array *a)
{
	if (len < 4 || get_u32(p) != a->chunk_nelems)
		return nz__error_set(NZ_EFORMAT, "array '%s': vlen chunk holds %lu elements, expected %zu", a->path,
				     len < 4 ? 0ul : (unsigned long)get_u32(p), a->chunk_nelems);
	if ((len - 4) / 4 + 1 < a->chunk_nelems)
		return nz__error_set(NZ_EFORMAT, "array '%s': vlen chunk of %zu bytes cannot hold %zu elements",
				     a->path, len, a->chunk_nelems);
	return 0;
}

static int vlen_decode_bytes(vlen_impl *v, const unsigned char *p, size_t len, const nz_array *a)
{
	size_t i, pos = 4;
	int err;
	for (i = 0; i < v->pub.count; i++) {
		size_t n;
		if (len - pos < 4)
			return nz__error_set(NZ_EFORMAT, "array '%s': vlen chunk truncated at element %zu", a->path, i);
		n = get_u32(p + pos);
		pos += 4;
		if (n > len - pos)
			return nz__error_set(NZ_EFORMAT, "array '%s': vlen element %zu (%zu bytes) runs past the chunk end",
					     a->path, i, n);
		if ((err = vlen_add(v, i, p + pos, n)) < 0)
			return err;
		pos += n;
	}
	return 0;
}

/* Flatten the nested lists down to depth ndim, emitting each item. */
static int json2_collect(vlen_impl *v, const json_t *node, const nz_array *a, int level, size_t *i, nz_buf *tmp)
{
	size_t j;
	int err;
	if (level == a->ndim) {
		if (*i >= v->pub.count)
			return nz__error_set(NZ_EFORMAT, "array '%s': json2 chunk has too many elements", a->path);
		tmp->len = 0;
		if ((err = nz__json_emit(tmp, node, NZ_JSON_COMPACT)) < 0 ||
		    (err = vlen_add(v, *i, tmp->data, tmp->len)) < 0)
			return err;
		(*i)++;
		return 0;
	}
	if (!json_is_array(node) || json_array_size(node) != a->chunks[level])
		return nz__error_set(NZ_EFORMAT, "array '%s': json2 chunk is not nested as the chunk shape (dimension %d)",
				     a->path, level);
	for (j = 0; j < json_array_size(node); j++)
		if ((err = json2_collect(v, json_array_get(node, j), a, level + 1, i, tmp)) < 0)
			return err;
	return 0;
}

static int json2_decode(vlen_impl *v, const void *data, size_t len, const nz_array *a)
{
	json_t *doc = NULL, *shape, *items = NULL;
	nz_buf tmp = { 0 };
	size_t n, i = 0, d;
	int err;
	if ((err = nz__json_parse(&doc, data, len, "json2 chunk", 0)) < 0)
		return err;
	n = json_array_size(doc);
	shape = json_array_get(doc, n - 1);
	if (n < 3 || !json_is_array(shape) || json_array_size(shape) != (size_t)a->ndim ||
	    !json_is_string(json_array_get(doc, n - 2))) {
		err = nz__error_set(NZ_EFORMAT, "array '%s': json2 chunk does not end with dtype and shape", a->path);
		goto done;
	}
	for (d = 0; d < (size_t)a->ndim; d++)
		if (json_integer_value(json_array_get(shape, d)) != (json_int_t)a->chunks[d]) {
			err = nz__error_set(NZ_EFORMAT, "array '%s': json2 chunk shape differs from the chunk shape", a->path);
			goto done;
		}
	/* The items are the list without its last two entries. */
	if (!(items = json_array())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory decoding json2");
		goto done;
	}
	for (d = 0; d + 2 < n; d++)
		if (json_array_append(items, json_array_get(doc, d)) < 0) {
			err = nz__error_set(NZ_ENOMEM, "out of memory decoding json2");
			goto done;
		}
	err = json2_collect(v, items, a, 0, &i, &tmp);
	if (err == 0 && i != v->pub.count)
		err = nz__error_set(NZ_EFORMAT, "array '%s': json2 chunk has %zu elements, expected %zu", a->path, i,
				    v->pub.count);
done:
	nz__buf_free(&tmp);
	json_decref(items);
	json_decref(doc);
	return err;
}

/* Each element of the decoded pickle as compact JSON text, as json2 gives. */
static int pickle_decode(vlen_impl *v, const void *data, size_t len, const nz_array *a)
{
	char what[300];
	json_t *items = NULL;
	nz_buf tmp = { 0 };
	size_t i;
	int err;
	snprintf(what, sizeof what, "array '%s'", a->path);
	if ((err = nz__pickle_decode(&items, data, len, a->chunks, a->ndim, what)) < 0)
		return err;
	for (i = 0; i < v->pub.count && !err; i++) {
		tmp.len = 0;
		if ((err = nz__json_emit(&tmp, json_array_get(items, i), NZ_JSON_COMPACT)) == 0)
			err = vlen_add(v, i, tmp.data, tmp.len);
	}
	nz__buf_free(&tmp);
	json_decref(items);
	return err;
}

int nz__vlen_decode(nz_vlen **out, const nz_array *a, const void *data, size_t len)
{
	vlen_impl *v = NULL;
	int json2 = a->ocodec == NZ_OBJECT_JSON2, pickle = a->ocodec == NZ_OBJECT_PICKLE;
	int err;
	*out = NULL;
	if (!json2 && !pickle && (err = vlen_check_count(data, len, a)) < 0)
		return err;
	/* json2 text spends at least 2 bytes per element ("0,"), a pickle one
	 * (an opcode): no bookkeeping for elements the bytes cannot hold. */
	if ((json2 && len / 2 < a->chunk_nelems) || (pickle && len < a->chunk_nelems))
		return nz__error_set(NZ_EFORMAT, "array '%s': %s chunk of %zu bytes cannot hold %zu elements",
				     a->path, json2 ? "json2" : "pickle", len, a->chunk_nelems);
	if ((err = vlen_new(&v, a->chunk_nelems)) < 0)
		return err;
	if (json2)
		err = json2_decode(v, data, len, a);
	else if (pickle)
		err = pickle_decode(v, data, len, a);
	else
		err = vlen_decode_bytes(v, data, len, a);
	if (err < 0) {
		nz_vlen_free(&v->pub);
		return err;
	}
	vlen_fix(v);
	*out = &v->pub;
	return 0;
}

void nz_vlen_free(nz_vlen *pub)
{
	vlen_impl *v = (vlen_impl *)pub;
	if (!v)
		return;
	nz__free(v->pub.items);
	nz__free(v->pub.lens);
	nz__buf_free(&v->data);
	nz__free(v);
}
