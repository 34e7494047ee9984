/* Growing an array: a handle of another shape, and publishing a shape.
 *
 * Both go through the array's own document (nz__array_to_meta{,3}) and its
 * own validation (nz__array_from_meta), so a reshaped handle is exactly
 * what opening the store after the resize gives. */
#include "zarr/resize.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "zarr/zarr_impl.h"

int nz__array_reshaped(nz_array **out, const nz_array *a, const uint64_t *shape)
{
	json_t *doc = NULL, *v = NULL;
	int err;
	*out = NULL;
	if (a->format == 3 ? (err = nz__array_to_meta3(&doc, a, NULL)) < 0
			   : (err = nz__array_to_meta(&doc, a)) < 0)
		return err;
	if (!(v = nz__dims_json(shape, a->ndim)) || nz__json_take(doc, "shape", &v) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory resizing array '%s'", a->path);
		goto done;
	}
	if ((err = nz__array_from_meta(out, a->store, a->path, doc, a->format)) < 0) {
		nz__error_wrap("array '%s': cannot take the new shape", a->path);
		goto done;
	}
	(*out)->skip_empty = a->skip_empty;
done:
	json_decref(v);
	json_decref(doc);
	return err;
}

/* The key of `a`'s entry in a consolidated document, and the object that
 * holds the entries: v3 consolidated_metadata.metadata["<path>"], v2
 * metadata["<path>/.zarray"]. */
static int entry_of(json_t **entries, char **name, const nz_array *a, json_t *cm)
{
	*entries = a->format == 3 ? json_object_get(json_object_get(cm, "consolidated_metadata"),
						    "metadata")
				  : json_object_get(cm, "metadata");
	if (!json_is_object(*entries))
		return nz__error_set(NZ_EFORMAT, "array '%s': the consolidated metadata holds no "
				     "'metadata' object", a->path);
	return a->format == 3 ? ((*name = nz__strdup(a->path)) ? 0
				 : nz__error_set(NZ_ENOMEM, "out of memory resizing '%s'", a->path))
			      : nz__zarr_key(name, a->path, ".zarray");
}

static int set_entry(json_t *cm, const nz_array *a, json_t *doc)
{
	json_t *entries;
	char *name = NULL;
	int err;
	if ((err = entry_of(&entries, &name, a, cm)) < 0)
		return err;
	if (!json_object_get(entries, name))
		err = nz__error_set(NZ_EFORMAT, "array '%s' is not in the consolidated metadata",
				    a->path);
	else if (json_object_set(entries, name, doc) < 0)
		err = nz__error_set(NZ_ENOMEM, "out of memory resizing '%s'", a->path);
	nz__free(name);
	return err;
}

int nz__consolidated_read(json_t **out, nz_store *store)
{
	int fmt = nz__zarr_format(store);
	*out = NULL;
	if (fmt < 0)
		return fmt;
	return nz__zarr_get_doc(out, store, fmt == 3 ? "zarr.json" : ".zmetadata");
}

int nz__consolidated_put(nz_store *store, const json_t *cm)
{
	/* v3's root carries consolidated_metadata; v2's .zmetadata does not. */
	int v3 = json_object_get(cm, "consolidated_metadata") != NULL;
	int err = nz__zarr_put_doc(store, v3 ? "zarr.json" : ".zmetadata", cm);
	if (err < 0)
		nz__error_wrap("consolidating metadata of %s", nz_store_describe(store));
	return err;
}

int nz__array_resize(nz_array **out, const nz_array *a, const uint64_t *shape, json_t *cm)
{
	nz_array *b = NULL;
	json_t *doc = NULL, *attrs = NULL;
	char *key = NULL;
	int err;
	if (out)
		*out = NULL;
	if ((err = nz__array_reshaped(&b, a, shape)) < 0 ||
	    (err = nz__zarr_key(&key, a->path, a->format == 3 ? "zarr.json" : ".zarray")) < 0)
		goto done;
	if (a->format == 3 ? (err = nz__attrs3_read(&attrs, a->store, key)) < 0 ||
				     (err = nz__array_to_meta3(&doc, b, attrs)) < 0
			   : (err = nz__array_to_meta(&doc, b)) < 0)
		goto done;
	if ((err = nz__zarr_put_doc(a->store, key, doc)) < 0 ||
	    (cm && (err = set_entry(cm, a, doc)) < 0))
		goto done;
	if (out) {
		*out = b;
		b = NULL;
	}
done:
	if (err < 0)
		nz__error_wrap("resizing array '%s'", a->path);
	nz_array_free(b);
	json_decref(doc);
	json_decref(attrs);
	nz__free(key);
	return err;
}

/* ---- writing one inner chunk at a time ------------------------------------ */

struct nz__grow {
	const nz_array *a;
	uint64_t per;    /* inner chunks per unit: 1 unsharded */
	uint64_t unit;   /* the unit whose first `kept` chunks are in enc */
	uint64_t kept;
	nz_buf *enc;     /* per; an empty chunk (skip_empty) is kept with data NULL */
};

int nz__grow_new(nz__grow **out, const nz_array *a)
{
	nz__grow *g;
	*out = NULL;
	if (a->ocodec != NZ_OBJECT_NONE)
		return nz__error_set(NZ_EUNSUPPORTED, "array '%s': a growing array needs a fixed-size "
				     "dtype", a->path);
	for (int i = 1; i < a->ndim; i++)
		if (a->chunks[i] != a->shape[i] || nz_array_shards(a)[i] != a->shape[i])
			return nz__error_set(NZ_EUNSUPPORTED, "array '%s': grown along its first axis, "
					     "its chunks must span every other one", a->path);
	if (!(g = nz__calloc(1, sizeof *g)) ||
	    !(g->enc = nz__calloc((size_t)(nz_array_shards(a)[0] / a->chunks[0]), sizeof *g->enc))) {
		nz__free(g);
		return nz__error_set(NZ_ENOMEM, "out of memory writing array '%s'", a->path);
	}
	g->a = a;
	g->per = nz_array_shards(a)[0] / a->chunks[0];
	*out = g;
	return 0;
}

static void forget(nz__grow *g, uint64_t unit)
{
	for (uint64_t i = 0; i < g->kept; i++)
		nz__buf_free(&g->enc[i]);
	g->kept = 0;
	g->unit = unit;
}

/* Store unit g->unit up to row `end`: the kept chunks, then `enc` (its
 * entry empty when NULL) unless `with_last` is 0. */
static int store_unit(nz__grow *g, uint64_t end, int with_last, const void *enc, size_t len)
{
	uint64_t shape[NZ_MAX_DIMS], idx[NZ_MAX_DIMS] = {g->unit};
	nz_array *b = NULL;
	nz__shard_job *j = NULL;
	int err;
	memcpy(shape, g->a->shape, (size_t)g->a->ndim * sizeof *shape);
	shape[0] = end;
	if ((err = nz__array_reshaped(&b, g->a, shape)) < 0 || (err = nz__shard_begin(&j, b, idx)) < 0)
		goto done;
	for (uint64_t i = 0; i < g->kept && err == 0; i++)
		err = nz__shard_put_encoded(j, g->enc[i].data, g->enc[i].len);
	if (err == 0 && with_last)
		err = nz__shard_put_encoded(j, enc, len);
	if (err < 0) {
		nz__shard_abort(j);
		goto done;
	}
	err = nz__shard_end(j);
done:
	nz_array_free(b);
	return err;
}

/* Bytes [from, end) of `p` set to the fill value, in copies that double
 * (a flush pads half a chunk on average: one memcpy per element is slow). */
static void fill_rows(unsigned char *p, size_t from, size_t end, const unsigned char *fill,
		      size_t itemsize)
{
	size_t have = itemsize;
	if (from >= end)
		return;
	memcpy(p + from, fill, itemsize);
	while (from + have < end) {
		size_t n = have < end - from - have ? have : end - from - have;
		memcpy(p + from + have, p + from, n);
		have += n;
	}
}

int nz__grow_put(nz__grow *g, nz_scratch *scratch, uint64_t k, void *chunk, uint64_t rows,
		 int store)
{
	const nz_array *a = g->a;
	uint64_t crows = a->chunks[0], pos = k % g->per;
	size_t row = a->chunk_nbytes / (size_t)crows, len = 0;
	const void *enc = NULL;
	int err = 0;
	if (rows > crows || (rows && !chunk))
		return nz__error_set(NZ_EINVAL, "array '%s': chunk %llu: %llu rows of %llu", a->path,
				     (unsigned long long)k, (unsigned long long)rows,
				     (unsigned long long)crows);
	if (pos == 0 || g->unit != k / g->per)
		forget(g, k / g->per);
	if (g->kept != pos)
		return nz__error_set(NZ_EINVAL, "array '%s': chunk %llu out of order", a->path,
				     (unsigned long long)k);
	if (rows == 0)
		return store && g->kept ? store_unit(g, k * crows, 0, NULL, 0) : 0;
	fill_rows(chunk, (size_t)rows * row, a->chunk_nbytes, a->fill, a->dtype.itemsize);
	if (!(a->skip_empty && nz__chunk_is_empty(a, chunk)) &&
	    (err = nz__chunk_encode(a, scratch, chunk, a->chunk_nbytes, a->dtype.itemsize, &enc,
				    &len)) < 0)
		return err;
	if (rows == crows) {
		if (enc && (err = nz__buf_append(&g->enc[pos], enc, len)) < 0)
			return err;
		g->kept++;
		if (g->kept < g->per && !store)
			return 0;
		return store_unit(g, (k + 1) * crows, 0, NULL, 0);
	}
	return store_unit(g, k * crows + rows, 1, enc, len);
}

void nz__grow_free(nz__grow *g)
{
	if (!g)
		return;
	forget(g, 0);
	nz__free(g->enc);
	nz__free(g);
}
