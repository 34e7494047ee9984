/* nz_write_array: the engine with the Zarr layer as its sink and one
 * nz_scratch per worker: nz_array_write_chunk per chunk, or, on a sharded
 * Zarr v3 array, one streaming put per shard (nz__shard_begin, the shard's
 * inner chunks as the engine delivers them, nz__shard_end). Kept apart
 * from the core so that the core links without the Zarr layer. */
#include <string.h>

#include "engine/box.h"
#include "engine/source.h"
#include "engine/write.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/zarr_impl.h"

static int array_put(void *ctx, void **state, const uint64_t *chunk_index, const void *data,
		     size_t len)
{
	int err;

	if (!*state && (err = nz_scratch_new((nz_scratch **)state)) < 0)
		return err;
	return nz_array_write_chunk(ctx, *state, chunk_index, data, len);
}

/* A chunk's stored bytes as its key's value (an empty one never comes
 * here: the engine puts it, see nz__target.leaves_out). */
int nz__array_put_stored(void *ctx, void **state, const uint64_t *chunk_index, const void *enc,
			    size_t len)
{
	(void)state;
	return nz__chunk_store(ctx, chunk_index, enc, len);
}

/* The Zarr layer's write_empty_chunks=False test, for moved chunks. */
static int array_leaves_out(const void *a, const void *data)
{
	return nz__chunk_is_empty(a, data);
}

static void array_state_free(void *state)
{
	nz_scratch_free(state);
}

/* The sharded sink's per-worker state: the shard being written, if any.
 * nz__shard_put_chunk takes a shard's inner chunks in C order of their
 * position, every position; the engine puts only those inside the array,
 * so a position it skips in the middle of a shard (a chunk wholly outside
 * the array at an edge shard's trailing dimensions) gets a fill chunk
 * here, which the Zarr layer leaves as an empty entry. */
typedef struct shard_state {
	nz_scratch *scratch;
	nz__shard_job *job;
	uint64_t unit[NZ_MAX_DIMS]; /* the shard's index */
	uint64_t next;              /* position of the next chunk to put */
	unsigned char *fill;        /* a chunk of fill values, for the gaps */
	size_t fill_len;
} shard_state;

void nz__array_unit_state_free(void *p)
{
	shard_state *s = p;

	if (!s)
		return;
	nz__shard_abort(s->job);
	nz_scratch_free(s->scratch);
	nz__free(s->fill);
	nz__free(s);
}

int nz__array_unit_begin(void *ctx, void **state, const uint64_t *unit_index)
{
	nz_array *a = ctx;
	shard_state *s = *state;
	int err;

	if (!s) {
		if (!(s = nz__calloc(1, sizeof *s)))
			return nz__error_set(NZ_ENOMEM, "writing '%s': out of memory",
					     nz_array_path(a));
		*state = s;
		if ((err = nz_scratch_new(&s->scratch)) < 0)
			return err;
	}
	memcpy(s->unit, unit_index, (size_t)a->ndim * sizeof *s->unit);
	s->next = 0;
	return nz__shard_begin(&s->job, a, unit_index);
}

/* Put fill chunks at positions s->next .. pos-1. */
static int put_gaps(nz_array *a, shard_state *s, uint64_t pos, size_t len)
{
	int err;

	if (s->next < pos && s->fill_len != len) {
		nz__free(s->fill);
		s->fill_len = 0;
		if (!(s->fill = nz__malloc(len ? len : 1)))
			return nz__error_set(NZ_ENOMEM, "writing '%s': out of memory for a fill "
					     "chunk of %zu bytes", nz_array_path(a), len);
		s->fill_len = len;
		nz__fill_elements(s->fill, len / a->dtype.itemsize, a->fill, a->dtype.itemsize);
	}
	for (; s->next < pos; s->next++)
		if ((err = nz__shard_put_chunk(s->job, s->scratch, s->fill, len)) < 0)
			return err;
	return 0;
}

/* Ready the shard for inner chunk `chunk_index`: fill chunks into the gap
 * before its position. */
static int unit_advance(nz_array *a, shard_state *s, const uint64_t *chunk_index)
{
	uint64_t pos = 0;
	int err;

	for (int d = 0; d < a->ndim; d++) {
		uint64_t per = a->shards[d] / a->chunks[d];
		pos = pos * per + (chunk_index[d] - s->unit[d] * per);
	}
	if (pos < s->next)
		return nz__error_set(NZ_EINVAL, "writing '%s': inner chunks out of order in a "
				     "shard", nz_array_path(a));
	if ((err = put_gaps(a, s, pos, a->chunk_nbytes)) < 0)
		return err;
	s->next++;
	return 0;
}

int nz__array_unit_put(void *ctx, void **state, const uint64_t *chunk_index, const void *data,
		       size_t len)
{
	shard_state *s = *state;
	int err = unit_advance(ctx, s, chunk_index);

	return err < 0 ? err : nz__shard_put_chunk(s->job, s->scratch, data, len);
}

int nz__array_unit_put_stored(void *ctx, void **state, const uint64_t *chunk_index, const void *enc,
			      size_t len)
{
	shard_state *s = *state;
	int err = unit_advance(ctx, s, chunk_index);

	return err < 0 ? err : nz__shard_put_encoded(s->job, enc, len);
}

int nz__array_unit_end(void *ctx, void **state)
{
	shard_state *s = *state;
	nz__shard_job *j = s->job;

	(void)ctx;
	/* Positions after the last chunk put lie wholly outside the array:
	 * never put, they stay empty entries. */
	s->job = NULL; /* end frees it, also when it fails */
	return nz__shard_end(j);
}

void nz__array_unit_abort(void *ctx, void **state)
{
	shard_state *s = *state;

	(void)ctx;
	if (!s)
		return;
	nz__shard_abort(s->job);
	s->job = NULL;
}

int nz__array_shard_stored(nz_array *a, nz_store *store, const uint64_t *unit_index)
{
	uint64_t first[NZ_MAX_DIMS], size = 0;
	nz__shard_entry *entries = NULL;
	char *key = NULL;
	int err;

	/* The key of the shard is that of any inner chunk it holds. */
	for (int d = 0; d < a->ndim; d++)
		first[d] = unit_index[d] * (a->shards[d] / a->chunks[d]);
	if ((err = nz_array_chunk_key(&key, a, first)) < 0)
		return err;
	err = nz__shard_read_index(&entries, &size, store, key, &a->layout);
	nz__free(entries);
	nz_free(key);
	if (err == NZ_ENOTFOUND || err == NZ_EFORMAT) {
		nz_error_clear(); /* expected after an interruption: write it */
		return err == NZ_ENOTFOUND ? 0 : 2;
	}
	return err < 0 ? err : 1;
}

void nz__target_sink_array(nz__target *t, nz_array *a)
{
	t->ctx = a;
	if (nz_array_zarr_format(a) == 3 && a->sharded) {
		/* The shard grid in inner chunks; shards are multiples of chunks. */
		for (int d = 0; d < t->ndim; d++)
			t->units[d] = a->shards[d] / a->chunks[d];
		t->unit_chunks = t->units;
		t->put = nz__array_unit_put;
		t->put_stored = nz__array_unit_put_stored;
		t->state_free = nz__array_unit_state_free;
		t->unit_begin = nz__array_unit_begin;
		t->unit_end = nz__array_unit_end;
		t->unit_abort = nz__array_unit_abort;
	} else {
		t->put = array_put;
		t->put_stored = nz__array_put_stored;
		t->state_free = array_state_free;
	}
}

int nz__target_from_array(nz__target *t, nz_array *a, const nz_source *src)
{
	const char *dtype = nz_array_dtype(a), *sdtype = nz_source_dtype(src);
	int err;

	memset(t, 0, sizeof *t);
	t->name = nz_array_path(a);
	if (nz_array_object_codec(a) != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EUNSUPPORTED, "writing '%s': object arrays are written with "
				     "nz_array_write_all_vlen, not the engine", t->name);
	/* Same size but another type ('<f4' into '<i4') would silently
	 * reinterpret the bits: refuse unless the dtypes are the same string
	 * (structured dtypes, spelled as JSON, are compared by size only). */
	if (dtype[0] != '[' && strcmp(dtype, sdtype) != 0)
		return nz__error_set(NZ_EMISMATCH, "writing '%s': the source's dtype %s differs "
				     "from the array's %s", t->name, sdtype, dtype);
	t->ndim = nz_array_ndim(a);
	t->shape = nz_array_shape(a);
	t->chunks = nz_array_chunks(a);
	t->itemsize = nz_array_itemsize(a);
	t->fill = nz_array_fill_value(a);
	if ((err = nz__source_stored_matches(src, a)) < 0)
		return err;
	t->passthru = err;
	if (t->passthru && a->skip_empty) {
		t->leaves_out = array_leaves_out;
		t->empty_ctx = a;
	}
	return 0;
}

int nz_write_array(nz_array *dst, nz_source *src, const nz_write_opts *opts)
{
	nz__target t;
	int err;

	if ((err = nz__target_from_array(&t, dst, src)) < 0)
		return err;
	nz__target_sink_array(&t, dst);
	return nz__write(&t, src, opts);
}

int nz_write_arrays(nz_array *const *dst, nz_source *const *src, size_t n,
		    const nz_write_opts *opts)
{
	nz__target *t = NULL;
	const nz__target **tp = NULL;
	int err = 0;

	if (n == 0 || !dst || !src)
		return nz__error_set(NZ_EINVAL, "nz_write_arrays: no arrays to write");
	if (!(t = nz__calloc(n, sizeof *t)) || !(tp = nz__calloc(n, sizeof *tp))) {
		err = nz__error_set(NZ_ENOMEM, "nz_write_arrays: out of memory for %zu arrays", n);
		goto done;
	}
	for (size_t i = 0; i < n; i++) {
		if ((err = nz__target_from_array(&t[i], dst[i], src[i])) < 0)
			goto done;
		nz__target_sink_array(&t[i], dst[i]);
		tp[i] = &t[i];
	}
	err = nz__write_multi(tp, src, n, opts);
done:
	nz__free(tp);
	nz__free(t);
	return err;
}
