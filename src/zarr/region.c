/* Whole-array writes and hyperslab reads across chunk boundaries. One copy
 * routine moves the overlap of a chunk and a dense C-order box in either
 * direction, for elements of any size (values, or item pointers/lengths of
 * object arrays). */
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

/* Advance the odometer idx over [lo, hi) in dimensions [0, n); 0 when done. */
static int next_index(uint64_t *idx, const uint64_t *lo, const uint64_t *hi, int n)
{
	int d;
	for (d = n - 1; d >= 0; d--) {
		if (++idx[d] < hi[d])
			return 1;
		idx[d] = lo[d];
	}
	return 0;
}

/* Copy the overlap of chunk `c` with the box [start, start+count) between
 * the chunk buffer and the box buffer (to_box: chunk -> box). */
static void copy_overlap(const nz_array *a, const uint64_t *c, const uint64_t *start, const uint64_t *count,
			 unsigned char *chunk, unsigned char *box, size_t isz, int to_box)
{
	uint64_t lo[NZ_MAX_DIMS], hi[NZ_MAX_DIMS], idx[NZ_MAX_DIMS];
	size_t cstride[NZ_MAX_DIMS], bstride[NZ_MAX_DIMS], run;
	int d, n = a->ndim;

	if (n == 0) {
		memcpy(to_box ? box : chunk, to_box ? chunk : box, isz);
		return;
	}
	for (d = n - 1; d >= 0; d--) {
		uint64_t o = c[d] * a->chunks[d], e = o + a->chunks[d], be = start[d] + count[d];
		lo[d] = o > start[d] ? o : start[d];
		hi[d] = e < be ? e : be;
		if (hi[d] > a->shape[d])
			hi[d] = a->shape[d];
		if (lo[d] >= hi[d])
			return;
		cstride[d] = d == n - 1 ? isz : cstride[d + 1] * (size_t)a->chunks[d + 1];
		bstride[d] = d == n - 1 ? isz : bstride[d + 1] * (size_t)count[d + 1];
		idx[d] = lo[d];
	}
	run = (size_t)(hi[n - 1] - lo[n - 1]) * isz;
	do {
		size_t co = 0, bo = 0;
		for (d = 0; d < n; d++) {
			co += (size_t)(idx[d] - c[d] * a->chunks[d]) * cstride[d];
			bo += (size_t)(idx[d] - start[d]) * bstride[d];
		}
		if (to_box)
			memcpy(box + bo, chunk + co, run);
		else
			memcpy(chunk + co, box + bo, run);
	} while (next_index(idx, lo, hi, n - 1));
}

/* Elements of the box (overflow-checked) times isz. */
static int box_bytes(size_t *out, const nz_array *a, const uint64_t *count, size_t isz)
{
	size_t n = isz;
	int d;
	for (d = 0; d < a->ndim; d++)
		if (count[d] > (size_t)-1 || nz__mul_size(&n, n, (size_t)count[d]) < 0)
			return nz__error_set(NZ_EINVAL, "array '%s': region size overflows", a->path);
	*out = n;
	return 0;
}

int nz_array_read_region(nz_array *a, const uint64_t *start, const uint64_t *count, void *out, size_t len)
{
	uint64_t clo[NZ_MAX_DIMS], chi[NZ_MAX_DIMS], c[NZ_MAX_DIMS];
	unsigned char *chunk = NULL;
	nz_scratch s = { { 0 }, { 0 } };
	size_t need = 0;
	int d, err = 0;

	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': read_region needs a fixed-size dtype", a->path);
	for (d = 0; d < a->ndim; d++) {
		if (start[d] > a->shape[d] || count[d] > a->shape[d] - start[d])
			return nz__error_set(NZ_EINVAL, "array '%s': region [%llu, +%llu) outside dimension %d of size %llu",
					     a->path, (unsigned long long)start[d], (unsigned long long)count[d], d,
					     (unsigned long long)a->shape[d]);
		if (count[d] == 0)
			return len == 0 ? 0 : nz__error_set(NZ_EINVAL, "array '%s': empty region but %zu bytes", a->path, len);
		clo[d] = c[d] = start[d] / a->chunks[d];
		chi[d] = (start[d] + count[d] - 1) / a->chunks[d] + 1;
	}
	if ((err = box_bytes(&need, a, count, a->dtype.itemsize)) < 0)
		return err;
	if (len != need)
		return nz__error_set(NZ_EINVAL, "array '%s': region needs %zu bytes, %zu given", a->path, need, len);
	if (!(chunk = nz__malloc(a->chunk_nbytes)))
		return nz__error_set(NZ_ENOMEM, "out of memory reading array '%s'", a->path);
	do {
		if ((err = nz_array_read_chunk(a, &s, c, chunk, a->chunk_nbytes)) < 0)
			goto done;
		copy_overlap(a, c, start, count, chunk, out, a->dtype.itemsize, 1);
	} while (next_index(c, clo, chi, a->ndim));
done:
	nz__free(chunk);
	nz__buf_free(&s.a);
	nz__buf_free(&s.b);
	return err;
}

/* One shard from the box [start, start+count) held densely in `box`:
 * each inner chunk filled, overlapped with the box, put in C order. */
static int shard_from_box(nz_array *a, nz_scratch *s, const uint64_t *shard, const uint64_t *start,
			  const uint64_t *count, const unsigned char *box, unsigned char *chunk)
{
	uint64_t lo[NZ_MAX_DIMS], hi[NZ_MAX_DIMS], c[NZ_MAX_DIMS];
	nz__shard_job *j = NULL;
	size_t i;
	int d, err;
	for (d = 0; d < a->ndim; d++) {
		uint64_t per = nz_array_shards(a)[d] / a->chunks[d];
		lo[d] = c[d] = shard[d] * per;
		hi[d] = lo[d] + per;
	}
	if ((err = nz__shard_begin(&j, a, shard)) < 0)
		return err;
	do {
		for (i = 0; i < a->chunk_nelems; i++)
			memcpy(chunk + i * a->dtype.itemsize, a->fill, a->dtype.itemsize);
		copy_overlap(a, c, start, count, chunk, (unsigned char *)box, a->dtype.itemsize, 0);
		if ((err = nz__shard_put_chunk(j, s, chunk, a->chunk_nbytes)) < 0) {
			nz__shard_abort(j);
			return err;
		}
	} while (next_index(c, lo, hi, a->ndim));
	return nz__shard_end(j);
}

int nz_array_write_shard(nz_array *a, nz_scratch *scratch, const uint64_t *shard_index, const void *data,
			 size_t len)
{
	uint64_t start[NZ_MAX_DIMS];
	nz_scratch local = { { 0 }, { 0 } };
	unsigned char *chunk = NULL;
	size_t need = 0;
	int d, err;
	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': nz_array_write_shard takes fixed-size dtypes", a->path);
	if ((err = box_bytes(&need, a, nz_array_shards(a), a->dtype.itemsize)) < 0)
		return err;
	if (len != need)
		return nz__error_set(NZ_EINVAL, "array '%s': a full shard is %zu bytes, %zu given", a->path, need, len);
	for (d = 0; d < a->ndim; d++)
		start[d] = shard_index[d] * nz_array_shards(a)[d];
	if (!(chunk = nz__malloc(a->chunk_nbytes ? a->chunk_nbytes : 1)))
		return nz__error_set(NZ_ENOMEM, "out of memory writing array '%s'", a->path);
	err = shard_from_box(a, scratch ? scratch : &local, shard_index, start, nz_array_shards(a), data, chunk);
	nz__free(chunk);
	nz__buf_free(&local.a);
	nz__buf_free(&local.b);
	return err;
}

int nz_array_write_all(nz_array *a, const void *data, size_t len)
{
	uint64_t zero[NZ_MAX_DIMS] = { 0 }, grid[NZ_MAX_DIMS], c[NZ_MAX_DIMS] = { 0 };
	unsigned char *chunk = NULL;
	nz_scratch s = { { 0 }, { 0 } };
	size_t need = 0, i;
	int err = 0;

	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': object array: use nz_array_write_all_vlen", a->path);
	if ((err = box_bytes(&need, a, a->shape, a->dtype.itemsize)) < 0)
		return err;
	if (len != need)
		return nz__error_set(NZ_EINVAL, "array '%s': whole array is %zu bytes, %zu given", a->path, need, len);
	if (nz_array_nchunks(a) == 0)
		return 0;
	if (!(chunk = nz__malloc(a->chunk_nbytes)))
		return nz__error_set(NZ_ENOMEM, "out of memory writing array '%s'", a->path);
	if (a->sharded) {
		nz_array_shard_grid(a, grid);
		do
			err = shard_from_box(a, &s, c, zero, a->shape, data, chunk);
		while (err == 0 && next_index(c, zero, grid, a->ndim));
		goto done;
	}
	nz_array_chunk_grid(a, grid);
	do {
		for (i = 0; i < a->chunk_nelems; i++)
			memcpy(chunk + i * a->dtype.itemsize, a->fill, a->dtype.itemsize);
		copy_overlap(a, c, zero, a->shape, chunk, (unsigned char *)data, a->dtype.itemsize, 0);
		if ((err = nz_array_write_chunk(a, &s, c, chunk, a->chunk_nbytes)) < 0)
			goto done;
	} while (next_index(c, zero, grid, a->ndim));
done:
	nz__free(chunk);
	nz__buf_free(&s.a);
	nz__buf_free(&s.b);
	return err;
}

/* One inner chunk's elements from the whole array's: `pad` where the
 * chunk passes the array's edge. */
static void chunk_items(const nz_array *a, const uint64_t *c, const char *const *items, const size_t *lens,
			const char **ci, size_t *cl, const char *pad)
{
	uint64_t zero[NZ_MAX_DIMS] = { 0 };
	size_t i;
	for (i = 0; i < a->chunk_nelems; i++)
		ci[i] = pad, cl[i] = strlen(pad);
	copy_overlap(a, c, zero, a->shape, (unsigned char *)ci, (unsigned char *)items, sizeof *ci, 0);
	copy_overlap(a, c, zero, a->shape, (unsigned char *)cl, (unsigned char *)lens, sizeof *cl, 0);
}

/* One shard of an object array from the whole array's elements, its inner
 * chunks put in C order. */
static int shard_from_items(nz_array *a, nz_scratch *s, const uint64_t *shard, const char *const *items,
			    const size_t *lens, const char **ci, size_t *cl, const char *pad)
{
	uint64_t lo[NZ_MAX_DIMS], hi[NZ_MAX_DIMS], c[NZ_MAX_DIMS];
	nz__shard_job *j = NULL;
	int d, err;
	for (d = 0; d < a->ndim; d++) {
		uint64_t per = a->shards[d] / a->chunks[d];
		lo[d] = c[d] = shard[d] * per;
		hi[d] = lo[d] + per;
	}
	if ((err = nz__shard_begin(&j, a, shard)) < 0)
		return err;
	do {
		chunk_items(a, c, items, lens, ci, cl, pad);
		if ((err = nz__shard_put_chunk_vlen(j, s, ci, cl, a->chunk_nelems)) < 0) {
			nz__shard_abort(j);
			return err;
		}
	} while (next_index(c, lo, hi, a->ndim));
	return nz__shard_end(j);
}

int nz_array_write_all_vlen(nz_array *a, const char *const *items, const size_t *lens, size_t count)
{
	uint64_t zero[NZ_MAX_DIMS] = { 0 }, grid[NZ_MAX_DIMS], c[NZ_MAX_DIMS] = { 0 };
	const char **ci = NULL;
	size_t *cl = NULL, need = 0;
	char *pad = NULL;
	nz_scratch s = { { 0 }, { 0 } };
	int err = 0;

	if (a->ocodec == NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s' is not an object array", a->path);
	if ((err = box_bytes(&need, a, a->shape, 1)) < 0)
		return err;
	if (count != need)
		return nz__error_set(NZ_EINVAL, "array '%s' has %zu elements, %zu given", a->path, need, count);
	if (nz_array_nchunks(a) == 0)
		return 0;
	/* Edge elements beyond the array: "" for vlen, the fill value's JSON
	 * for json2 (what zarr pads an object chunk with). */
	if (a->ocodec == NZ_OBJECT_JSON2) {
		if ((err = nz__json_dumps(&pad, a->fill_json, NZ_JSON_COMPACT)) < 0)
			return err;
	} else if (!(pad = nz__strdup(""))) {
		return nz__error_set(NZ_ENOMEM, "out of memory writing array '%s'", a->path);
	}
	if (!(ci = nz__calloc(a->chunk_nelems, sizeof *ci)) || !(cl = nz__calloc(a->chunk_nelems, sizeof *cl))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing array '%s'", a->path);
		goto done;
	}
	nz_array_shard_grid(a, grid);
	do {
		if (a->sharded) {
			err = shard_from_items(a, &s, c, items, lens, ci, cl, pad);
		} else {
			chunk_items(a, c, items, lens, ci, cl, pad);
			err = nz_array_write_chunk_vlen(a, &s, c, ci, cl, a->chunk_nelems);
		}
	} while (err == 0 && next_index(c, zero, grid, a->ndim));
done:
	nz__free(pad);
	nz__free(ci);
	nz__free(cl);
	nz__buf_free(&s.a);
	nz__buf_free(&s.b);
	return err;
}
