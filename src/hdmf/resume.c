/* Resuming an interrupted write (docs/reliability.md), for every writer
 * built on this layer (src/nwb, src/export): a store wrapper that checks
 * metadata against what is already stored, the removal of a dead writer's
 * temporary files, and an engine sink that keeps chunks already stored
 * whole. */
#include <stdatomic.h>
#include <string.h>

#include "engine/write.h"
#include "hdmf/hdmf.h"
#include "store/replace.h"
#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/json.h"
#include "util/error.h"

/* ---- the comparing store -------------------------------------------------- */

/* 2: a v2 document, compared byte for byte; 3: a v3 zarr.json; 0: data. */
static int metadata_kind(const char *key)
{
	const char *leaf = strrchr(key, '/');
	leaf = leaf ? leaf + 1 : key;
	if (strcmp(leaf, "zarr.json") == 0)
		return 3;
	return strcmp(leaf, ".zarray") == 0 || strcmp(leaf, ".zattrs") == 0 ||
	       strcmp(leaf, ".zgroup") == 0 ? 2 : 0;
}

/* 1 when every attribute both objects hold has the same value in each. */
static int common_attrs_agree(const json_t *x, const json_t *y)
{
	const char *name;
	json_t *v, *w;
	if (!json_is_object(x) || !json_is_object(y))
		return x == NULL || y == NULL || json_equal(x, y);
	json_object_foreach((json_t *)x, name, v) {
		if ((w = json_object_get(y, name)) != NULL && !json_equal(v, w))
			return 0;
	}
	return 1;
}

/* A v3 zarr.json carries the node's attributes (and the root's, everything's
 * consolidated): a write rewrites it as attributes are added, so a stored
 * one may be from before or after the point this put is at. What must agree
 * is the node itself and every attribute both documents hold (a write only
 * ever adds attributes: one with another value, e.g. another --conversion,
 * is another request). *same = 1 when they agree. */
static int same_node(int *same, const void *a, size_t alen, const void *b, size_t blen, const char *key)
{
	json_t *x = NULL, *y = NULL;
	int err;
	if ((err = nz__json_parse(&x, a, alen, key, 0)) < 0 || (err = nz__json_parse(&y, b, blen, key, 0)) < 0)
		goto done;
	*same = common_attrs_agree(json_object_get(x, "attributes"), json_object_get(y, "attributes"));
	json_object_del(x, "attributes");
	json_object_del(x, "consolidated_metadata");
	json_object_del(y, "attributes");
	json_object_del(y, "consolidated_metadata");
	*same = *same && json_equal(x, y);
done:
	json_decref(x);
	json_decref(y);
	return err;
}

static int cmp_put(void *ctx, const char *key, const void *data, size_t len)
{
	nz_store *in = ctx;
	void *old = NULL;
	size_t n = 0;
	int err, same, kind = metadata_kind(key);
	if (!kind || (err = nz_store_exists(in, key)) == 0)
		return nz_store_put(in, key, data, len);
	if (err < 0 || (err = nz_store_get(in, key, &old, &n)) < 0)
		return err;
	same = n == len && memcmp(old, data, len) == 0;
	if (!same && kind == 3 && (err = same_node(&same, old, n, data, len, key)) == 0 && same) {
		nz_free(old);
		return nz_store_put(in, key, data, len);
	}
	nz_free(old);
	if (err < 0)
		return err;
	if (!same)
		return nz__error_set(NZ_EMISMATCH, "resume: '%s/%s' differs from what this request "
				     "writes (other options, metadata or input than the interrupted "
				     "run?)", nz_store_describe(in), key);
	return 0;
}

static int cmp_get(void *ctx, const char *key, void **out, size_t *len)
{
	return nz_store_get(ctx, key, out, len);
}

static int cmp_exists(void *ctx, const char *key)
{
	return nz_store_exists(ctx, key);
}

static int cmp_remove(void *ctx, const char *key)
{
	return nz_store_remove(ctx, key);
}

static int cmp_list(void *ctx, const char *prefix, nz_store_list_cb cb, void *payload)
{
	return nz_store_list(ctx, prefix, cb, payload);
}

static int cmp_sync(void *ctx)
{
	return nz_store_sync(ctx);
}

static const char *cmp_describe(void *ctx)
{
	return nz_store_describe(ctx);
}

static void cmp_free(void *ctx)
{
	nz_store_free(ctx);
}

/* Streamed values (shards) are data, never metadata: they pass through, so
 * a resumed write streams as the first run did instead of buffering. */
static int cmp_put_begin(void *ctx, const char *key, void **stream)
{
	return nz_store_put_begin((nz_store_writer **)stream, ctx, key);
}

static int cmp_put_write(void *ctx, void *stream, const void *data, size_t len)
{
	return nz_store_put_write(stream, data, len);
}

static int cmp_put_commit(void *ctx, void *stream)
{
	return nz_store_put_commit(stream);
}

static void cmp_put_abort(void *ctx, void *stream)
{
	nz_store_put_abort(stream);
}

static int cmp_get_range(void *ctx, const char *key, uint64_t offset, uint64_t length,
			 int suffix, void **out, size_t *len)
{
	return suffix ? nz_store_get_suffix(ctx, key, length, out, len)
		      : nz_store_get_range(ctx, key, offset, length, out, len);
}

static int cmp_size(void *ctx, const char *key, uint64_t *size)
{
	return nz_store_size(ctx, key, size);
}

static const nz_store_ops cmp_ops = {.version = NZ_STORE_OPS_VERSION,
				     .put = cmp_put,
				     .get = cmp_get,
				     .exists = cmp_exists,
				     .remove = cmp_remove,
				     .list = cmp_list,
				     .sync = cmp_sync,
				     .describe = cmp_describe,
				     .free = cmp_free,
				     .put_begin = cmp_put_begin,
				     .put_write = cmp_put_write,
				     .put_commit = cmp_put_commit,
				     .put_abort = cmp_put_abort,
				     .get_range = cmp_get_range,
				     .size = cmp_size};

int nz__hdmf_resume_store(nz_store **out, nz_store *inner)
{
	return nz_store_new(out, &cmp_ops, inner);
}

/* ---- leftovers of a killed writer ------------------------------------------ */

int nz__hdmf_remove_temps(const char *path, uint64_t *removed)
{
	nz_store *st = NULL;
	int err = nz_store_open_dir(&st, path, NZ_STORE_WRITE);
	if (err == 0)
		err = nz_store_remove_temps(st, removed);
	nz_store_free(st);
	return err;
}

int nz__hdmf_dir_is_fresh(const char *path)
{
	return nz__store_dir_is_fresh(path);
}

int nz__hdmf_resume_open(nz_store **out, json_t **marker, uint64_t *temps, const char *path,
			 unsigned int flags)
{
	nz_store *in = NULL;
	int err, meta;
	*out = NULL;
	*marker = NULL;
	/* A writer killed before its marker landed leaves nothing but temporary
	 * names (the marker's own among them): there is nothing to resume, and
	 * the fresh write that follows must not inherit those files. */
	if (nz__hdmf_dir_is_fresh(path))
		return nz__hdmf_remove_temps(path, temps);
	/* The store says whether there is anything to resume: a missing root
	 * is a fresh start, not an error. */
	if ((err = nz_store_open_dir(&in, path, flags | NZ_STORE_WRITE)) == NZ_ENOTFOUND) {
		nz_error_clear();
		return 0;
	}
	if (err < 0)
		return err;
	if ((err = nz_store_exists(in, NZ_INCOMPLETE_MARKER)) == 0) {
		meta = nz__hdmf_consolidated(in);
		err = meta == 1 ? nz__error_set(NZ_EEXISTS, "resume: '%s' is already complete: "
						"nothing to resume", path)
				: nz__error_set(NZ_EINCOMPLETE, "resume: '%s' has no %s: it was not "
						"started by this version of nwbzarr and cannot be "
						"resumed (use --overwrite)", path,
						NZ_INCOMPLETE_MARKER);
	}
	if (err < 0 || (err = nz__hdmf_marker_read(marker, in)) < 0 ||
	    (err = nz_store_remove_temps(in, temps)) < 0 ||
	    (err = nz__hdmf_resume_store(out, in)) < 0)
		goto done;
	in = NULL;
done:
	nz_store_free(in);
	if (err < 0) {
		json_decref(*marker);
		*marker = NULL;
	}
	return err;
}

/* ---- data ------------------------------------------------------------------- */

typedef struct resume_sink {
	nz_array *a;
	nz_store *store;
	atomic_uint_least64_t kept, repaired, written;
} resume_sink;

typedef struct resume_state {
	nz_scratch *scratch;
	void *buf;
} resume_state;

static void state_free(void *p)
{
	resume_state *s = p;
	if (!s)
		return;
	nz_scratch_free(s->scratch);
	nz__free(s->buf);
	nz__free(s);
}

/* Keep a stored chunk that decodes to exactly `data`; write it otherwise. */
static int resume_put(void *ctx, void **state, const uint64_t *index, const void *data, size_t len)
{
	resume_sink *r = ctx;
	resume_state *s = *state;
	char *key = NULL;
	int err, have;
	if (!s) {
		if (!(s = nz__calloc(1, sizeof *s)) || !(s->buf = nz__malloc(len ? len : 1))) {
			state_free(s);
			return nz__error_set(NZ_ENOMEM, "resume: out of memory for a chunk of '%s'",
					     nz_array_path(r->a));
		}
		*state = s;
		if ((err = nz_scratch_new(&s->scratch)) < 0)
			return err;
	}
	if ((err = nz_array_chunk_key(&key, r->a, index)) < 0)
		return err;
	have = nz_store_exists(r->store, key);
	nz_free(key);
	if (have < 0)
		return have;
	if (have) {
		if (nz_array_read_chunk(r->a, s->scratch, index, s->buf, len) == 0 &&
		    memcmp(s->buf, data, len) == 0) {
			atomic_fetch_add(&r->kept, 1);
			return 0;
		}
		nz_error_clear(); /* a corrupt chunk is expected here: rewrite it */
		atomic_fetch_add(&r->repaired, 1);
	} else {
		atomic_fetch_add(&r->written, 1);
	}
	return nz_array_write_chunk(r->a, s->scratch, index, data, len);
}

/* Sharded arrays: a shard is kept whole when its index reads back and
 * validates (every range inside the object, none overlapping), without
 * decoding its chunks: shards are committed atomically, so one that is
 * there was written whole, and a damaged one fails the index check (or
 * its CRC32C) and is written again. The writes go to the array sink. */
static int resume_unit_begin(void *ctx, void **state, const uint64_t *unit)
{
	resume_sink *r = ctx;
	int err = nz__array_shard_stored(r->a, r->store, unit);
	if (err < 0)
		return err;
	if (err == 1) {
		atomic_fetch_add(&r->kept, 1);
		return 1;
	}
	atomic_fetch_add(err == 2 ? &r->repaired : &r->written, 1);
	return nz__array_unit_begin(r->a, state, unit);
}

static int resume_unit_put(void *ctx, void **state, const uint64_t *index, const void *data,
			   size_t len)
{
	return nz__array_unit_put(((resume_sink *)ctx)->a, state, index, data, len);
}

static int resume_unit_end(void *ctx, void **state)
{
	return nz__array_unit_end(((resume_sink *)ctx)->a, state);
}

static void resume_unit_abort(void *ctx, void **state)
{
	nz__array_unit_abort(((resume_sink *)ctx)->a, state);
}

/* Point t at array a through the resume sink r. */
static int resume_target(nz__target *t, resume_sink *r, nz_array *a, nz_store *store,
			 const nz_source *src)
{
	int err;
	if ((err = nz__target_from_array(t, a, src)) < 0)
		return err;
	r->a = a;
	r->store = store;
	atomic_init(&r->kept, 0);
	atomic_init(&r->repaired, 0);
	atomic_init(&r->written, 0);
	nz__target_sink_array(t, a);
	t->ctx = r;
	if (t->unit_chunks) {
		t->put = resume_unit_put;
		t->unit_begin = resume_unit_begin;
		t->unit_end = resume_unit_end;
		t->unit_abort = resume_unit_abort;
	} else {
		t->put = resume_put;
		t->state_free = state_free;
	}
	return 0;
}

int nz__hdmf_write_resumed_n(nz_array *const *a, nz_source *const *src, size_t n,
			     nz_store *store, const nz_write_opts *wo, nz_nwb_resume_info *acc)
{
	nz__target *t = nz__calloc(n ? n : 1, sizeof *t);
	const nz__target **tp = nz__calloc(n ? n : 1, sizeof *tp);
	resume_sink *r = nz__calloc(n ? n : 1, sizeof *r);
	size_t i, ready = 0;
	int err = 0;
	if (!t || !tp || !r) {
		err = nz__error_set(NZ_ENOMEM, "resume: out of memory for %zu arrays", n);
		goto done;
	}
	for (i = 0; i < n; i++, ready++) {
		if ((err = resume_target(&t[i], &r[i], a[i], store, src[i])) < 0)
			goto done;
		tp[i] = &t[i];
	}
	err = nz__write_multi(tp, src, n, wo);
done:
	for (i = 0; i < ready; i++) {
		acc->chunks_kept += atomic_load(&r[i].kept);
		acc->chunks_repaired += atomic_load(&r[i].repaired);
		acc->chunks_written += atomic_load(&r[i].written);
	}
	nz__free(t);
	nz__free(tp);
	nz__free(r);
	return err;
}

int nz__hdmf_write_resumed(nz_array *a, nz_store *store, nz_source *src,
			   const nz_write_opts *wo, nz_nwb_resume_info *acc)
{
	return nz__hdmf_write_resumed_n(&a, &src, 1, store, wo, acc);
}
