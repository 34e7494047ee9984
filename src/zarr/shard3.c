/* Reading and writing sharded Zarr v3 arrays (codecs = [sharding_indexed]): the
 * sharding codec's configuration, and an inner chunk's bytes located
 * through the shard's index (the byte layer, shard.h, validates it). The
 * array's chunks are the inner chunks; its write unit (nz_array_shards) is
 * the shard, written as one streaming put of its encoded inner chunks
 * (the byte layer keeps memory independent of the shard's size). */
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

/* index_codecs: [bytes {endian}] then optionally [crc32c], as zarr-python
 * writes them; the layout flags and the canonical list. */
static int parse_index_codecs(nz_array *a, json_t **canon, const json_t *ic, const char *what)
{
	json_t *b = json_array_get(ic, 0), *c = json_array_get(ic, 1);
	const char *bn = json_string_value(json_object_get(b, "name"));
	const char *e = json_string_value(json_object_get(json_object_get(b, "configuration"), "endian"));
	const char *cn = json_string_value(json_object_get(c, "name"));
	size_t n = json_array_size(ic);
	if (!json_is_array(ic) || n < 1 || n > 2 || !bn || strcmp(bn, "bytes") != 0 || (e && strcmp(e, "little") != 0 &&
	    strcmp(e, "big") != 0) || (n == 2 && (!cn || strcmp(cn, "crc32c") != 0)))
		return nz__error_set(NZ_EUNSUPPORTED, "%s: sharding 'index_codecs' must be [bytes] or [bytes, crc32c]", what);
	a->layout.index_big_endian = e && strcmp(e, "big") == 0;
	a->layout.index_crc32c = n == 2;
	*canon = json_pack("[{s:s,s:{s:s}}]", "name", "bytes", "configuration", "endian",
			   a->layout.index_big_endian ? "big" : "little");
	if (*canon && n == 2 && json_array_append_new(*canon, json_pack("{s:s}", "name", "crc32c")) < 0) {
		json_decref(*canon);
		*canon = NULL;
	}
	return 0;
}

int nz__shard3_peek(nz_array *a, const json_t **inner, const json_t *codecs, const char *what)
{
	json_t *c = json_array_get(codecs, 0), *cfg = json_object_get(c, "configuration");
	const char *name = json_string_value(json_object_get(c, "name"));
	const char *loc = json_string_value(json_object_get(cfg, "index_location"));
	uint64_t n = 1;
	int nd = 0, i, err;

	*inner = codecs;
	if (!name || strcmp(name, "sharding_indexed") != 0)
		return 0;
	if (json_array_size(codecs) != 1)
		return nz__error_set(NZ_EUNSUPPORTED, "%s: sharding_indexed must be the only codec", what);
	if (!json_is_object(cfg))
		return nz__error_set(NZ_EFORMAT, "%s: sharding_indexed needs a configuration", what);
	memcpy(a->shards, a->chunks, sizeof a->shards);
	if ((err = nz__zarr_parse_dims(a->chunks, &nd, json_object_get(cfg, "chunk_shape"), "chunk_shape", what)) < 0)
		return err;
	if (nd != a->ndim)
		return nz__error_set(NZ_EFORMAT, "%s: sharding 'chunk_shape' has %d dimensions, the array %d", what, nd,
				     a->ndim);
	for (i = 0; i < nd; i++) {
		if (a->chunks[i] == 0 || a->shards[i] % a->chunks[i] != 0)
			return nz__error_set(NZ_EFORMAT, "%s: shard shape %llu is not a multiple of inner chunk %llu "
					     "(dimension %d)", what, (unsigned long long)a->shards[i],
					     (unsigned long long)a->chunks[i], i);
		n *= a->shards[i] / a->chunks[i]; /* bounded below by the byte layer's limit */
		if (n > NZ__SHARD_MAX_CHUNKS)
			return nz__error_set(NZ_EUNSUPPORTED, "%s: more than %llu inner chunks per shard", what,
					     (unsigned long long)NZ__SHARD_MAX_CHUNKS);
	}
	if (loc && strcmp(loc, "start") != 0 && strcmp(loc, "end") != 0)
		return nz__error_set(NZ_EFORMAT, "%s: sharding 'index_location' must be \"start\" or \"end\"", what);
	a->sharded = 1;
	a->layout.nchunks = n;
	a->layout.index_at_start = loc && strcmp(loc, "start") == 0;
	*inner = json_object_get(cfg, "codecs");
	return 0;
}

int nz__shard3_finish(nz_array *a, const json_t *codecs, const char *what)
{
	json_t *cfg = json_object_get(json_array_get(codecs, 0), "configuration"), *ic = NULL, *outer;
	int err;
	if ((err = parse_index_codecs(a, &ic, json_object_get(cfg, "index_codecs"), what)) < 0)
		return err;
	/* The inner list parsed so far becomes the sharding codec's "codecs". */
	outer = json_pack("[{s:s,s:{s:o,s:o,s:o,s:s}}]", "name", "sharding_indexed", "configuration", "chunk_shape",
			  nz__dims_json(a->chunks, a->ndim), "codecs", a->codecs3, "index_codecs", ic,
			  "index_location", a->layout.index_at_start ? "start" : "end");
	a->codecs3 = outer;
	return outer ? 0 : nz__error_set(NZ_ENOMEM, "out of memory reading %s", what);
}

int nz__shard3_get(void **data, size_t *len, const nz_array *a, const uint64_t *idx, const char *key)
{
	nz__shard_entry *entries = NULL;
	uint64_t size = 0, pos = 0;
	int i, err;
	*data = NULL;
	*len = 0;
	/* C-order position of the inner chunk inside its shard */
	for (i = 0; i < a->ndim; i++) {
		uint64_t per = a->shards[i] / a->chunks[i];
		pos = pos * per + idx[i] % per;
	}
	if ((err = nz__shard_read_index(&entries, &size, a->store, key, &a->layout)) == NZ_ENOTFOUND)
		return 0; /* a missing shard: every inner chunk is fill */
	if (err == 0)
		err = nz__shard_read_chunk(data, len, a->store, key, &entries[pos]);
	nz__free(entries);
	return err;
}

/* ---- writing ---------------------------------------------------------- */

struct nz__shard_job {
	nz_array *a;
	nz__shard_writer *w;
	uint64_t first[NZ_MAX_DIMS]; /* the shard's first inner chunk */
	uint64_t pos;                /* next inner chunk, C order in the shard */
};

int nz__shard_begin(nz__shard_job **out, nz_array *a, const uint64_t *shard_index)
{
	uint64_t grid[NZ_MAX_DIMS];
	nz__shard_job *j = NULL;
	char *key = NULL;
	int i, err;
	*out = NULL;
	nz_array_shard_grid(a, grid);
	for (i = 0; i < a->ndim; i++)
		if (shard_index[i] >= grid[i])
			return nz__error_set(NZ_EINVAL, "array '%s': shard index %llu out of range in dimension %d", a->path,
					     (unsigned long long)shard_index[i], i);
	if (!(j = nz__calloc(1, sizeof *j)))
		return nz__error_set(NZ_ENOMEM, "out of memory writing a shard of '%s'", a->path);
	j->a = a;
	for (i = 0; i < a->ndim; i++)
		j->first[i] = shard_index[i] * (nz_array_shards(a)[i] / a->chunks[i]);
	if ((err = nz_array_chunk_key(&key, a, j->first)) == 0 && a->sharded)
		err = nz__shard_writer_begin(&j->w, a->store, key, &a->layout);
	nz__free(key);
	if (err < 0) {
		nz__free(j);
		return err;
	}
	*out = j;
	return 0;
}

/* Step to the next inner chunk of the shard: 1 if it lies (partly) inside
 * the array and is to be written, 0 if wholly past the edge (an empty
 * entry, as zarr-python leaves it), negative on error. */
static int next_inner(nz__shard_job *j)
{
	nz_array *a = j->a;
	uint64_t idx[NZ_MAX_DIMS], rem = j->pos, grid[NZ_MAX_DIMS];
	int i;
	if (j->pos >= a->layout.nchunks)
		return nz__error_set(NZ_EINVAL, "array '%s': more inner chunks than a shard holds", a->path);
	nz_array_chunk_grid(a, grid);
	for (i = a->ndim - 1; i >= 0; i--) {
		uint64_t per = a->shards[i] / a->chunks[i];
		idx[i] = j->first[i] + rem % per;
		rem /= per;
	}
	j->pos++;
	for (i = 0; i < a->ndim; i++)
		if (idx[i] >= grid[i])
			return 0;
	return 1;
}

/* Encode the current inner chunk's bytes and stream them into the shard. */
static int put_encoded(nz__shard_job *j, nz_scratch *s, const void *data, size_t len, size_t itemsize)
{
	nz_scratch local = { { 0 }, { 0 } };
	const void *enc;
	size_t enclen;
	int err;
	if ((err = nz__chunk_encode(j->a, s ? s : &local, data, len, itemsize, &enc, &enclen)) == 0)
		err = nz__shard_writer_put(j->w, j->pos - 1, enc, enclen);
	nz__buf_free(&local.a);
	nz__buf_free(&local.b);
	return err;
}

int nz__shard_put_encoded(nz__shard_job *j, const void *enc, size_t len)
{
	int in;
	if (!j->a->sharded)
		return nz__chunk_store(j->a, j->first, enc, len);
	/* 0 for an empty entry too: callers loop while 0, and next_inner's 1
	 * ("inside the array") once stopped a copy at a missing chunk, dropping
	 * the rest of its shard. */
	if ((in = next_inner(j)) <= 0 || !enc)
		return in < 0 ? in : 0;
	return nz__shard_writer_put(j->w, j->pos - 1, enc, len);
}

int nz__shard_put_chunk(nz__shard_job *j, nz_scratch *s, const void *chunk, size_t len)
{
	nz_array *a = j->a;
	int err;
	if (!a->sharded) /* an unsharded array's "shard" is its chunk */
		return nz_array_write_chunk(a, s, j->first, chunk, len);
	if (len != a->chunk_nbytes || a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EINVAL, "array '%s': an inner chunk is %zu bytes of a fixed-size dtype, %zu given",
				     a->path, a->chunk_nbytes, len);
	if ((err = next_inner(j)) <= 0)
		return err;
	if (a->skip_empty && nz__chunk_is_empty(a, chunk))
		return 0;
	return put_encoded(j, s, chunk, len, a->dtype.itemsize);
}

int nz__shard_put_chunk_vlen(nz__shard_job *j, nz_scratch *s, const char *const *items, const size_t *lens,
			     size_t count)
{
	nz_array *a = j->a;
	nz_buf obj = { 0 };
	int err;
	if (!a->sharded)
		return nz_array_write_chunk_vlen(a, s, j->first, items, lens, count);
	if (a->ocodec == NZ_OBJECT_NONE || count != a->chunk_nelems)
		return nz__error_set(NZ_EINVAL, "array '%s': an inner chunk is %zu elements of an object dtype, %zu given",
				     a->path, a->chunk_nelems, count);
	if ((err = next_inner(j)) <= 0)
		return err;
	/* vlen chunks are stored whatever they hold, as unsharded ones are */
	if ((err = nz__vlen_encode(&obj, a, items, lens, count)) == 0)
		err = put_encoded(j, s, obj.data, obj.len, 1);
	nz__buf_free(&obj);
	return err;
}

int nz__shard_end(nz__shard_job *j)
{
	int err = j->w ? nz__shard_writer_end(j->w) : 0;
	if (err < 0)
		nz__error_wrap("array '%s': writing a shard", j->a->path);
	nz__free(j);
	return err;
}

void nz__shard_abort(nz__shard_job *j)
{
	if (!j)
		return;
	nz__shard_writer_abort(j->w);
	nz__free(j);
}
