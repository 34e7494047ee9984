/* The nz_store front end: validates keys once for every backend, then
 * forwards to the backend's nz_store_ops. */
#include "store/store_impl.h"

#include <string.h>

#include "util/alloc.h"
#include "util/error.h"

struct nz_store {
	nz_store_ops ops;
	void *ctx;
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

int nz_store_new(nz_store **out, const nz_store_ops *ops, void *ctx)
{
	nz_store *s;
	if (!out || !ops)
		return nz__error_set(NZ_EINVAL, "nz_store_new: NULL argument");
	*out = NULL;
	if (ops->version != NZ_STORE_OPS_VERSION)
		return nz__error_set(NZ_EUNSUPPORTED, "store ops version %u, expected %u",
				     ops->version, (unsigned)NZ_STORE_OPS_VERSION);
	if (!ops->put || !ops->get || !ops->exists || !ops->remove || !ops->list ||
	    !ops->describe)
		return nz__error_set(NZ_EINVAL, "store ops lack a required function");
	s = nz__calloc(1, sizeof *s);
	if (!s)
		return nz__error_set(NZ_ENOMEM, "out of memory allocating a store");
	s->ops = *ops;
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

int nz_store_put(nz_store *store, const char *key, const void *data, size_t len)
{
	int err = check(store, key, "nz_store_put");
	if (err < 0)
		return err;
	if (!data && len)
		return nz__error_set(NZ_EINVAL, "nz_store_put '%s': NULL data", key);
	return store->ops.put(store->ctx, key, data, len);
}

int nz_store_get(nz_store *store, const char *key, void **out, size_t *len)
{
	int err;
	if (!out || !len)
		return nz__error_set(NZ_EINVAL, "nz_store_get: NULL out-parameter");
	*out = NULL;
	*len = 0;
	if ((err = check(store, key, "nz_store_get")) < 0)
		return err;
	return store->ops.get(store->ctx, key, out, len);
}

int nz_store_exists(nz_store *store, const char *key)
{
	int err = check(store, key, "nz_store_exists");
	return err < 0 ? err : store->ops.exists(store->ctx, key);
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

const char *nz_store_describe(nz_store *store)
{
	return store ? store->ops.describe(store->ctx) : "(null store)";
}
