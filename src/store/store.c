/* The nz_store front end: validates keys once for every backend, then
 * forwards to the backend's nz_store_ops, filling in what a backend's
 * version lacks: streaming puts, ranged gets and sizes for version-1
 * backends, and put, get and exists for object-style version-2 backends. */
#include "store/store_impl.h"

#include <stddef.h>
#include <string.h>

#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

struct nz_store {
	nz_store_ops ops;
	void *ctx;
	int (*remove_temps)(void *ctx, uint64_t *removed); /* a built-in backend's, or NULL */
};

struct nz_store_writer {
	nz_store *store;
	char *key;
	int emulated; /* version-1 backend: the whole value is buffered in buf */
	void *stream; /* otherwise the backend's */
	nz_buf buf;
	uint64_t written;
	int err;         /* the first failure: later calls repeat it */
	nz_error error;
};

int nz__store_check_key(const char *key, int allow_empty)
{
	const char *seg;
	if (!key)
		return nz__error_set(NZ_EINVAL, "store key is NULL");
	if (key[0] == '\0') {
		if (allow_empty)
			return 0;
		return nz__error_set(NZ_EINVAL, "store key is empty");
	}
	if (key[0] == '/')
		return nz__error_set(NZ_EINVAL, "store key '%s' is absolute", key);
	/* Walk segments: none may be empty, "." or "..", so a key can never
	 * name a file outside the root or alias another key. */
	seg = key;
	for (;;) {
		const char *end = strchr(seg, '/');
		size_t n = end ? (size_t)(end - seg) : strlen(seg);
		if (n == 0)
			return nz__error_set(NZ_EINVAL, "store key '%s' has an empty segment", key);
		if ((n == 1 && seg[0] == '.') || (n == 2 && seg[0] == '.' && seg[1] == '.'))
			return nz__error_set(NZ_EINVAL, "store key '%s' has a '%.*s' segment", key,
					     (int)n, seg);
		if (!end)
			break;
		seg = end + 1;
	}
	return 0;
}

int nz__store_range(uint64_t size, uint64_t offset, uint64_t length, int suffix, const char *key,
		    const char *where, uint64_t *start, size_t *n)
{
	uint64_t count;
	if (suffix) {
		count = length < size ? length : size;
		*start = size - count;
	} else {
		if (offset > size)
			return nz__error_set(NZ_EINVAL,
					     "range of key '%s' in '%s' starts at byte %llu, past its "
					     "end (%llu bytes)",
					     key, where, (unsigned long long)offset,
					     (unsigned long long)size);
		count = size - offset < length ? size - offset : length;
		*start = offset;
	}
	if (count > (uint64_t)SIZE_MAX - 1)
		return nz__error_set(NZ_EINVAL, "range of %llu bytes of key '%s' in '%s' is too big",
				     (unsigned long long)count, key, where);
	*n = (size_t)count;
	return 0;
}

int nz_store_new(nz_store **out, const nz_store_ops *ops, void *ctx)
{
	nz_store *s;
	if (!out || !ops)
		return nz__error_set(NZ_EINVAL, "nz_store_new: NULL argument");
	*out = NULL;
	if (ops->version != 1 && ops->version != 2)
		return nz__error_set(NZ_EUNSUPPORTED, "store ops version %u, expected 1 or %u",
				     ops->version, (unsigned)NZ_STORE_OPS_VERSION);
	if (!ops->remove || !ops->list || !ops->describe ||
	    (ops->version == 1 && (!ops->put || !ops->get || !ops->exists)) ||
	    (ops->version == 2 && (!ops->put_begin || !ops->put_write || !ops->put_commit ||
				   !ops->put_abort || !ops->get_range || !ops->size)))
		return nz__error_set(NZ_EINVAL, "store ops (version %u) lack a required function",
				     ops->version);
	s = nz__calloc(1, sizeof *s);
	if (!s)
		return nz__error_set(NZ_ENOMEM, "out of memory allocating a store");
	/* A version-1 table may end where version 1 ended: read no further. */
	memcpy(&s->ops, ops,
	       ops->version == 1 ? offsetof(nz_store_ops, put_begin) : sizeof(nz_store_ops));
	s->ctx = ctx;
	*out = s;
	return 0;
}

void nz_store_free(nz_store *store)
{
	if (!store)
		return;
	if (store->ops.free)
		store->ops.free(store->ctx);
	nz__free(store);
}

/* The checks every keyed operation starts with. */
static int check(const nz_store *store, const char *key, const char *fn)
{
	if (!store)
		return nz__error_set(NZ_EINVAL, "%s: NULL store", fn);
	return nz__store_check_key(key, 0);
}

static int writer_fail(nz_store_writer *w, int err)
{
	w->err = err;
	nz__error_save(&w->error);
	return err;
}

int nz_store_put_begin(nz_store_writer **out, nz_store *store, const char *key)
{
	int err;
	nz_store_writer *w;
	if (!out)
		return nz__error_set(NZ_EINVAL, "nz_store_put_begin: NULL out-parameter");
	*out = NULL;
	if ((err = check(store, key, "nz_store_put_begin")) < 0)
		return err;
	if (!(w = nz__calloc(1, sizeof *w)) || !(w->key = nz__strdup(key))) {
		nz__free(w);
		return nz__error_set(NZ_ENOMEM, "out of memory starting to write '%s' in '%s'", key,
				     nz_store_describe(store));
	}
	w->store = store;
	w->emulated = !store->ops.put_begin;
	if (!w->emulated && (err = store->ops.put_begin(store->ctx, key, &w->stream)) < 0) {
		nz__free(w->key);
		nz__free(w);
		return err;
	}
	*out = w;
	return 0;
}

int nz_store_put_write(nz_store_writer *w, const void *data, size_t len)
{
	int err;
	if (!w || (!data && len))
		return nz__error_set(NZ_EINVAL, "nz_store_put_write: NULL argument");
	if (w->err)
		return nz__error_restore(&w->error);
	if (len == 0)
		return 0;
	if (!w->emulated)
		err = w->store->ops.put_write(w->store->ctx, w->stream, data, len);
	else if ((err = nz__buf_append(&w->buf, data, len)) < 0)
		nz__error_wrap("writing '%s' in '%s'", w->key, nz_store_describe(w->store));
	if (err < 0)
		return writer_fail(w, err);
	w->written += len;
	return 0;
}

uint64_t nz_store_put_written(const nz_store_writer *w)
{
	return w ? w->written : 0;
}

static void writer_free(nz_store_writer *w)
{
	nz__buf_free(&w->buf);
	nz__free(w->key);
	nz__free(w);
}

int nz_store_put_commit(nz_store_writer *w)
{
	int err;
	if (!w)
		return nz__error_set(NZ_EINVAL, "nz_store_put_commit: NULL writer");
	if (w->err) {
		err = nz__error_restore(&w->error);
		nz_store_put_abort(w);
		return err;
	}
	if (!w->emulated)
		err = w->store->ops.put_commit(w->store->ctx, w->stream);
	else
		err = w->store->ops.put(w->store->ctx, w->key, w->buf.data ? (void *)w->buf.data : "",
					w->buf.len);
	writer_free(w);
	return err;
}

void nz_store_put_abort(nz_store_writer *w)
{
	if (!w)
		return;
	if (!w->emulated)
		w->store->ops.put_abort(w->store->ctx, w->stream);
	writer_free(w);
}

/* put for a version-2 backend without one: a one-piece streaming put. */
static int put_by_stream(nz_store *store, const char *key, const void *data, size_t len)
{
	nz_store_writer *w = NULL;
	int err = nz_store_put_begin(&w, store, key);
	if (err == 0 && (err = nz_store_put_write(w, data, len)) < 0)
		nz_store_put_abort(w);
	else if (err == 0)
		err = nz_store_put_commit(w);
	return err;
}

int nz_store_put(nz_store *store, const char *key, const void *data, size_t len)
{
	int err = check(store, key, "nz_store_put");
	if (err < 0)
		return err;
	if (!data && len)
		return nz__error_set(NZ_EINVAL, "nz_store_put '%s': NULL data", key);
	if (!store->ops.put)
		return put_by_stream(store, key, data, len);
	return store->ops.put(store->ctx, key, data, len);
}

/* The ranged get of a version-1 backend: the whole value, then the part. */
static int range_by_get(nz_store *store, const char *key, uint64_t offset, uint64_t length,
			int suffix, void **out, size_t *len)
{
	int err;
	void *all = NULL;
	size_t n = 0, count = 0;
	uint64_t start = 0;
	if ((err = store->ops.get(store->ctx, key, &all, &n)) < 0)
		return err;
	if ((err = nz__store_range(n, offset, length, suffix, key, nz_store_describe(store), &start,
				   &count)) < 0)
		goto done;
	if (!(*out = nz__malloc(count))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading %zu bytes of '%s' in '%s'",
				    count, key, nz_store_describe(store));
		goto done;
	}
	if (count)
		memcpy(*out, (unsigned char *)all + start, count);
	*len = count;
done:
	nz_free(all);
	return err;
}

static int get_range(nz_store *store, const char *key, uint64_t offset, uint64_t length,
		     int suffix, void **out, size_t *len, const char *fn)
{
	int err;
	if (!out || !len)
		return nz__error_set(NZ_EINVAL, "%s: NULL out-parameter", fn);
	*out = NULL;
	*len = 0;
	if ((err = check(store, key, fn)) < 0)
		return err;
	if (!store->ops.get_range)
		return range_by_get(store, key, offset, length, suffix, out, len);
	return store->ops.get_range(store->ctx, key, offset, length, suffix, out, len);
}

int nz_store_get_range(nz_store *store, const char *key, uint64_t offset, uint64_t length,
		       void **out, size_t *len)
{
	return get_range(store, key, offset, length, 0, out, len, "nz_store_get_range");
}

int nz_store_get_suffix(nz_store *store, const char *key, uint64_t length, void **out, size_t *len)
{
	return get_range(store, key, 0, length, 1, out, len, "nz_store_get_suffix");
}

int nz_store_get(nz_store *store, const char *key, void **out, size_t *len)
{
	int err;
	if (store && !store->ops.get)
		return get_range(store, key, 0, UINT64_MAX, 0, out, len, "nz_store_get");
	if (!out || !len)
		return nz__error_set(NZ_EINVAL, "nz_store_get: NULL out-parameter");
	*out = NULL;
	*len = 0;
	if ((err = check(store, key, "nz_store_get")) < 0)
		return err;
	return store->ops.get(store->ctx, key, out, len);
}

int nz_store_size(nz_store *store, const char *key, uint64_t *size)
{
	int err;
	void *all = NULL;
	size_t n = 0;
	if (!size)
		return nz__error_set(NZ_EINVAL, "nz_store_size: NULL out-parameter");
	*size = 0;
	if ((err = check(store, key, "nz_store_size")) < 0)
		return err;
	if (store->ops.size)
		return store->ops.size(store->ctx, key, size);
	if ((err = store->ops.get(store->ctx, key, &all, &n)) == 0)
		*size = n;
	nz_free(all);
	return err;
}

int nz_store_exists(nz_store *store, const char *key)
{
	uint64_t size;
	int err = check(store, key, "nz_store_exists");
	if (err < 0)
		return err;
	if (store->ops.exists)
		return store->ops.exists(store->ctx, key);
	err = store->ops.size(store->ctx, key, &size);
	return err == NZ_ENOTFOUND ? 0 : err < 0 ? err : 1;
}

int nz_store_remove(nz_store *store, const char *key)
{
	int err = check(store, key, "nz_store_remove");
	return err < 0 ? err : store->ops.remove(store->ctx, key);
}

int nz_store_list(nz_store *store, const char *prefix, nz_store_list_cb cb, void *payload)
{
	int err;
	if (!store || !cb)
		return nz__error_set(NZ_EINVAL, "nz_store_list: NULL argument");
	if (!prefix)
		prefix = "";
	/* A trailing '/' is a common way to write a folder prefix. */
	if (prefix[0]) {
		size_t n = strlen(prefix);
		char *p = nz__strndup(prefix, n && prefix[n - 1] == '/' ? n - 1 : n);
		if (!p)
			return nz__error_set(NZ_ENOMEM, "out of memory copying a prefix");
		err = nz__store_check_key(p, 1);
		if (err == 0)
			err = store->ops.list(store->ctx, p, cb, payload);
		nz__free(p);
		return err;
	}
	return store->ops.list(store->ctx, "", cb, payload);
}

int nz_store_sync(nz_store *store)
{
	if (!store)
		return nz__error_set(NZ_EINVAL, "nz_store_sync: NULL store");
	return store->ops.sync ? store->ops.sync(store->ctx) : 0;
}

void nz__store_set_temps_op(nz_store *store, int (*op)(void *ctx, uint64_t *removed))
{
	store->remove_temps = op;
}

int nz_store_remove_temps(nz_store *store, uint64_t *removed)
{
	*removed = 0;
	return store->remove_temps ? store->remove_temps(store->ctx, removed) : 0;
}

const char *nz_store_describe(nz_store *store)
{
	return store ? store->ops.describe(store->ctx) : "(null store)";
}
