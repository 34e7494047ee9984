/* Chunk I/O: the codec pipeline, empty-chunk skipping, missing chunks as
 * fill. Every function here only reads the nz_array, so distinct chunks can
 * be written from many threads (each with its own scratch). */
#include <math.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "zarr/zarr_impl.h"

/* Filters run in order, then the compressor. blosc's typesize is the
 * element size for the first stage only: after a filter the bytes no longer
 * have the dtype's structure (numcodecs passes 1 then too). */
int nz__chunk_encode(const nz_array *a, nz_scratch *s, const void *src, size_t len, size_t itemsize,
		     const void **res, size_t *reslen)
{
	nz_buf *bufs[2] = { &s->a, &s->b };
	size_t i, nstages = a->nfilters + (a->compressor ? 1 : 0), k = 0;
	int err;
	*res = src;
	*reslen = len;
	if (a->transposed) { /* v3 transpose, fixed-size dtypes only */
		if ((err = nz__buf_reserve(&s->a, len)) < 0)
			return err;
		nz__transpose(s->a.data, src, a->chunks, a->perm, a->ndim, itemsize);
		s->a.len = len;
		*res = s->a.data;
		k = 1;
	}
	for (i = 0; i < nstages; i++) {
		const nz_codec *c = i < a->nfilters ? a->filters[i] : a->compressor;
		nz_buf *dst = bufs[k];
		/* v3 names blosc's typesize per codec; v2 (numcodecs) gives the
		 * element size to the first stage only. */
		size_t ts = a->typesize ? a->typesize[i] : i == 0 ? itemsize : 1;
		/* src may be the other scratch buffer: never write into it. */
		if ((err = nz__codec_encode(c, *res, *reslen, ts, dst)) < 0)
			return err;
		*res = dst->data;
		*reslen = dst->len;
		k ^= 1;
	}
	return 0;
}

int nz__chunk_decode(const nz_array *a, nz_scratch *s, const void *src, size_t len, size_t expected,
		     const void **res, size_t *reslen)
{
	nz_buf *bufs[2] = { &s->a, &s->b };
	size_t nstages = a->nfilters + (a->compressor ? 1 : 0), i, k = 0;
	int err;
	*res = src;
	*reslen = len;
	for (i = 0; i < nstages; i++) {
		/* compressor first, then the filters backwards */
		const nz_codec *c = a->compressor ? (i == 0 ? a->compressor : a->filters[a->nfilters - i])
						  : a->filters[a->nfilters - 1 - i];
		if ((err = nz__codec_decode(c, *res, *reslen, i + 1 == nstages ? expected : 0, bufs[k])) < 0)
			return err;
		*res = bufs[k]->data;
		*reslen = bufs[k]->len;
		k ^= 1;
	}
	if (a->transposed && *reslen == a->chunk_nbytes) { /* other sizes: the caller's error */
		/* The stored chunk has shape chunks[perm[j]]; its dimension
		 * perm[j] is ours j, so ours m runs over its inv[m]. */
		uint64_t tshape[NZ_MAX_DIMS];
		int inv[NZ_MAX_DIMS], j;
		for (j = 0; j < a->ndim; j++) {
			tshape[j] = a->chunks[a->perm[j]];
			inv[a->perm[j]] = j;
		}
		if ((err = nz__buf_reserve(bufs[k], *reslen)) < 0)
			return err;
		nz__transpose(bufs[k]->data, *res, tshape, inv, a->ndim, a->dtype.itemsize);
		bufs[k]->len = *reslen;
		*res = bufs[k]->data;
	}
	return 0;
}

int nz__chunk_store(nz_array *a, const uint64_t *idx, const void *data, size_t len)
{
	char *key = NULL;
	int err;
	if (a->sharded)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s' is sharded: write whole shards (nz_array_write_shard), not chunks",
				     a->path);
	if ((err = nz_array_chunk_key(&key, a, idx)) < 0)
		return err;
	if (data)
		err = nz_store_put(a->store, key, data, len);
	else
		err = nz_store_remove(a->store, key); /* an empty chunk replaces an old one */
	nz__free(key);
	return err;
}

/* zarr's write_empty_chunks=False test: every element equals the fill value
 * (NaN equals NaN, as in zarr's all_equal). */
int nz__chunk_is_empty(const nz_array *a, const unsigned char *data)
{
	size_t i, sz = a->dtype.itemsize;
	for (i = 0; i < a->chunk_nelems; i++, data += sz) {
		if (memcmp(data, a->fill, sz) == 0)
			continue;
		if (a->fill_is_nan && !a->dtype.big_endian) {
			double d;
			if (sz == 4) {
				float f;
				memcpy(&f, data, 4);
				d = f;
			} else {
				memcpy(&d, data, 8);
			}
			if (isnan(d))
				continue;
		}
		return 0;
	}
	return 1;
}

static void scratch_release(nz_scratch *s, nz_scratch *local)
{
	if (s == local) {
		nz__buf_free(&local->a);
		nz__buf_free(&local->b);
	}
}

int nz_array_write_chunk(nz_array *a, nz_scratch *scratch, const uint64_t *idx, const void *data, size_t len)
{
	nz_scratch local = { { 0 }, { 0 } }, *s = scratch ? scratch : &local;
	const void *enc;
	size_t enclen;
	int err;
	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': object array: use nz_array_write_chunk_vlen", a->path);
	if (len != a->chunk_nbytes)
		return nz__error_set(NZ_EINVAL, "array '%s': chunk data is %zu bytes, a full chunk is %zu",
				     a->path, len, a->chunk_nbytes);
	if (a->skip_empty && nz__chunk_is_empty(a, data))
		return nz__chunk_store(a, idx, NULL, 0);
	if ((err = nz__chunk_encode(a, s, data, len, a->dtype.itemsize, &enc, &enclen)) == 0)
		err = nz__chunk_store(a, idx, enc, enclen);
	if (err < 0)
		nz__error_wrap("array '%s': writing a chunk", a->path);
	scratch_release(s, &local);
	return err;
}

/* Fetch a chunk's stored bytes; *data = NULL when it is missing. */
static int chunk_get(void **data, size_t *len, char **key, const nz_array *a, const uint64_t *idx)
{
	int err;
	*data = NULL;
	*key = NULL;
	if ((err = nz_array_chunk_key(key, a, idx)) < 0)
		return err;
	if (a->sharded)
		return nz__shard3_get(data, len, a, idx, *key);
	err = nz_store_get(a->store, *key, data, len);
	if (err == NZ_ENOTFOUND) {
		*data = NULL;
		return 0;
	}
	return err;
}

int nz_array_read_chunk(nz_array *a, nz_scratch *scratch, const uint64_t *idx, void *out, size_t len)
{
	nz_scratch local = { { 0 }, { 0 } }, *s = scratch ? scratch : &local;
	void *raw = NULL;
	char *key = NULL;
	const void *dec;
	size_t rawlen = 0, declen, i;
	int err;
	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': object array: use nz_array_read_chunk_vlen", a->path);
	if (len != a->chunk_nbytes)
		return nz__error_set(NZ_EINVAL, "array '%s': output is %zu bytes, a full chunk is %zu",
				     a->path, len, a->chunk_nbytes);
	if ((err = chunk_get(&raw, &rawlen, &key, a, idx)) < 0)
		goto done;
	if (!raw) {
		for (i = 0; i < a->chunk_nelems; i++)
			memcpy((unsigned char *)out + i * a->dtype.itemsize, a->fill, a->dtype.itemsize);
		goto done;
	}
	if ((err = nz__chunk_decode(a, s, raw, rawlen, len, &dec, &declen)) < 0) {
		nz__error_wrap("chunk '%s'", key);
		goto done;
	}
	if (declen != len) {
		err = nz__error_set(NZ_EFORMAT, "chunk '%s' decodes to %zu bytes, expected %zu", key, declen, len);
		goto done;
	}
	memcpy(out, dec, len);
done:
	nz_free(raw);
	nz__free(key);
	scratch_release(s, &local);
	return err;
}

int nz_array_write_chunk_vlen(nz_array *a, nz_scratch *scratch, const uint64_t *idx,
			      const char *const *items, const size_t *lens, size_t count)
{
	nz_scratch local = { { 0 }, { 0 } }, *s = scratch ? scratch : &local;
	nz_buf obj = { 0 };
	const void *enc;
	size_t enclen;
	int err;
	if (a->ocodec == NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s' is not an object array", a->path);
	if (count != a->chunk_nelems)
		return nz__error_set(NZ_EINVAL, "array '%s': %zu elements given, a full chunk has %zu",
				     a->path, count, a->chunk_nelems);
	if ((err = nz__vlen_encode(&obj, a, items, lens, count)) < 0 ||
	    (err = nz__chunk_encode(a, s, obj.data, obj.len, 1, &enc, &enclen)) < 0 ||
	    (err = nz__chunk_store(a, idx, enc, enclen)) < 0)
		nz__error_wrap("array '%s': writing a chunk", a->path);
	nz__buf_free(&obj);
	scratch_release(s, &local);
	return err;
}

/* A missing chunk: v2 reads empty elements (zarr 2 gives None / ""), v3
 * the fill value (text for string, base64 for variable_length_bytes). */
static int vlen_missing(nz_vlen **out, const nz_array *a)
{
	const char *f = a->format == 3 ? json_string_value(a->fill_json) : NULL;
	unsigned char *raw = NULL;
	size_t n = 0;
	int err;
	if (!f || !f[0])
		return nz__vlen_empty(out, a->chunk_nelems);
	if (a->ocodec == NZ_OBJECT_VLEN_UTF8)
		return nz__vlen_filled(out, a->chunk_nelems, f, json_string_length(a->fill_json));
	if ((err = nz__base64_decode(&raw, &n, f, a->path)) == 0)
		err = nz__vlen_filled(out, a->chunk_nelems, raw, n);
	nz__free(raw);
	return err;
}

int nz_array_read_chunk_vlen(nz_vlen **out, nz_array *a, const uint64_t *idx)
{
	nz_scratch s = { { 0 }, { 0 } };
	void *raw = NULL;
	char *key = NULL;
	const void *dec;
	size_t rawlen = 0, declen;
	int err;
	*out = NULL;
	if (a->ocodec == NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s' is not an object array", a->path);
	if ((err = chunk_get(&raw, &rawlen, &key, a, idx)) < 0)
		goto done;
	if (!raw) {
		err = vlen_missing(out, a);
		goto done;
	}
	if ((err = nz__chunk_decode(a, &s, raw, rawlen, 0, &dec, &declen)) < 0 ||
	    (err = nz__vlen_decode(out, a, dec, declen)) < 0)
		nz__error_wrap("chunk '%s'", key);
done:
	nz_free(raw);
	nz__free(key);
	scratch_release(&s, &s);
	return err;
}
