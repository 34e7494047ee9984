/* Copying an array's chunks into another array of the same shape, dtype and
 * chunk grid (nz_array_copy_unit): Zarr v2 -> v3 for `nwbzarr upgrade`.
 * Where the codec chain carries over, the stored bytes move unchanged (no
 * decode, no encode: the v3 chunk is the v2 chunk file byte for byte);
 * otherwise each chunk is decoded and encoded again. Either way the result
 * depends only on the source, never on which thread copies which unit.
 * nz__array_chain_is tells other layers (export from HDF5) whether bytes
 * encoded elsewhere are an array's chunks as they stand. */
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "zarr/zarr_impl.h"

static int is_reusable_codec(const char *id)
{
	return strcmp(id, "blosc") == 0 || strcmp(id, "zstd") == 0 || strcmp(id, "gzip") == 0;
}

int nz_array_chunks_reusable(const nz_array *dst, const nz_array *src)
{
	json_t *a = NULL, *b = NULL;
	int d, err, same;
	/* v2: [compressor], no filters; v3: [bytes, one compressor], nothing
	 * that changes the bytes' layout (transpose) or meaning (endian: the
	 * dtype strings carry it). */
	if (src->format != 2 || dst->format != 3 || src->ocodec != NZ_OBJECT_NONE || dst->ocodec != NZ_OBJECT_NONE ||
	    src->nfilters || !src->compressor || dst->nfilters != 1 || dst->compressor || dst->transposed ||
	    src->ndim != dst->ndim || strcmp(src->dtype.str, dst->dtype.str) != 0 ||
	    !is_reusable_codec(nz__codec_id(src->compressor)) ||
	    strcmp(nz__codec_id(src->compressor), nz__codec_id(dst->filters[0])) != 0)
		return 0;
	for (d = 0; d < src->ndim; d++)
		if (src->shape[d] != dst->shape[d] || src->chunks[d] != dst->chunks[d])
			return 0;
	/* blosc's header records the typesize it shuffled by; v2 uses the itemsize. */
	if (strcmp(nz__codec_id(src->compressor), "blosc") == 0 && dst->typesize[0] != src->dtype.itemsize)
		return 0;
	if ((err = nz__codec_to_json(&a, src->compressor)) < 0 || (err = nz__codec_to_json(&b, dst->filters[0])) < 0) {
		json_decref(a);
		return err;
	}
	same = json_equal(a, b);
	json_decref(a);
	json_decref(b);
	return same;
}

int nz__array_chain_is(const nz_array *a, const char *const *ids, size_t n)
{
	size_t i;
	if (a->ocodec != NZ_OBJECT_NONE || a->transposed || a->dtype.kind == 'V' ||
	    (a->dtype.big_endian && a->dtype.itemsize > 1) || a->nfilters + (a->compressor != NULL) != n)
		return 0;
	for (i = 0; i < n; i++) {
		const nz_codec *c = i < a->nfilters ? a->filters[i] : a->compressor;
		json_t *cfg = NULL;
		int err, same;
		if (strcmp(nz__codec_id(c), ids[i]) != 0)
			return 0;
		if (strcmp(ids[i], "shuffle") != 0)
			continue;
		if ((err = nz__codec_to_json(&cfg, c)) < 0)
			return err;
		same = json_integer_value(json_object_get(cfg, "elementsize")) == (json_int_t)a->dtype.itemsize;
		json_decref(cfg);
		if (!same)
			return 0;
	}
	return 1;
}

/* The arrays must hold the same elements in the same chunks. */
static int check_pair(const nz_array *dst, const nz_array *src)
{
	int d;
	if (src->ocodec != NZ_OBJECT_NONE || dst->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "copying '%s' to '%s': object arrays are copied element by element",
				     src->path, dst->path);
	if (src->ndim != dst->ndim || strcmp(src->dtype.str, dst->dtype.str) != 0 ||
	    memcmp(src->fill, dst->fill, src->dtype.itemsize) != 0)
		return nz__error_set(NZ_EINVAL, "copying '%s' to '%s': dtype, dimensions or fill value differ",
				     src->path, dst->path);
	for (d = 0; d < src->ndim; d++)
		if (src->shape[d] != dst->shape[d] || src->chunks[d] != dst->chunks[d])
			return nz__error_set(NZ_EINVAL, "copying '%s' to '%s': shape or chunks differ in dimension %d",
					     src->path, dst->path, d);
	return 0;
}

/* Chunk `idx` of src into the shard job, as stored bytes or re-encoded. */
static int copy_one(nz__shard_job *j, const nz_array *src, nz_scratch *s, unsigned char *buf,
		    const uint64_t *idx, int reuse, uint64_t *reused)
{
	void *raw = NULL;
	char *key = NULL;
	size_t len = 0;
	int err;
	if (!reuse)
		return (err = nz_array_read_chunk((nz_array *)src, s, idx, buf, src->chunk_nbytes)) < 0
			       ? err : nz__shard_put_chunk(j, s, buf, src->chunk_nbytes);
	if ((err = nz_array_chunk_key(&key, src, idx)) < 0)
		return err;
	err = nz_store_get(src->store, key, &raw, &len);
	if (err == NZ_ENOTFOUND) /* missing stays missing: both read as the fill value */
		err = nz__shard_put_encoded(j, NULL, 0);
	else if (err == 0 && (err = nz__shard_put_encoded(j, raw, len)) == 0 && reused)
		(*reused)++;
	nz_free(raw);
	nz__free(key);
	return err;
}

int nz_array_copy_unit(nz_array *dst, const nz_array *src, nz_scratch *scratch, const uint64_t *unit_index,
		       uint64_t *reused)
{
	uint64_t per[NZ_MAX_DIMS], off[NZ_MAX_DIMS] = { 0 }, idx[NZ_MAX_DIMS], grid[NZ_MAX_DIMS], n = 1, k;
	nz_scratch local = { { 0 }, { 0 } }, *s = scratch ? scratch : &local;
	nz__shard_job *j = NULL;
	unsigned char *buf = NULL;
	int d, reuse, err;
	if ((err = check_pair(dst, src)) < 0 || (reuse = err = nz_array_chunks_reusable(dst, src)) < 0)
		return err;
	if (!reuse && !(buf = nz__malloc(src->chunk_nbytes ? src->chunk_nbytes : 1)))
		return nz__error_set(NZ_ENOMEM, "out of memory copying '%s'", src->path);
	nz_array_chunk_grid(src, grid);
	for (d = 0; d < dst->ndim; d++) {
		per[d] = nz_array_shards(dst)[d] / dst->chunks[d];
		n *= per[d];
	}
	if ((err = nz__shard_begin(&j, dst, unit_index)) < 0)
		goto done;
	/* The shard's inner chunks in C order, as the shard job takes them. */
	for (k = 0; k < n && !err; k++) {
		int inside = 1;
		for (d = 0; d < dst->ndim; d++) {
			idx[d] = unit_index[d] * per[d] + off[d];
			inside = inside && idx[d] < grid[d];
		}
		err = inside ? copy_one(j, src, s, buf, idx, reuse, reused) : nz__shard_put_encoded(j, NULL, 0);
		for (d = dst->ndim - 1; d >= 0 && ++off[d] == per[d]; d--)
			off[d] = 0;
	}
	if (err < 0) {
		nz__shard_abort(j);
		nz__error_wrap("copying '%s' to '%s'", src->path, dst->path);
		goto done;
	}
	err = nz__shard_end(j);
done:
	nz__free(buf);
	nz__buf_free(&local.a);
	nz__buf_free(&local.b);
	return err;
}
