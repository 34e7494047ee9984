/* See objstore.h. Objects are a sorted singly linked list (tests hold few);
 * an upload collects its bytes privately, and completing it swaps the whole
 * object in under the lock, which is what makes it atomic, as completing a
 * multipart upload is. */
#include "objstore.h"

#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct object {
	struct object *next;
	char *key;
	nz_buf value;
} object;

typedef struct objstore {
	pthread_mutex_t lock;
	object *head;
} objstore;

/* Uploads begun and not yet completed or aborted, in every object store. */
static atomic_long open_uploads;

typedef struct upload {
	objstore *os;
	object *obj; /* becomes the object at completion */
} upload;

static void object_free(object *o)
{
	if (!o)
		return;
	nz__buf_free(&o->value);
	nz__free(o->key);
	nz__free(o);
}

/* The link that points at `key`'s object, or where it would be inserted. */
static object **find(objstore *os, const char *key)
{
	object **p = &os->head;
	while (*p && strcmp((*p)->key, key) < 0)
		p = &(*p)->next;
	return p;
}

static int os_begin(void *ctx, const char *key, void **stream)
{
	upload *u = nz__calloc(1, sizeof *u);
	if (!u || !(u->obj = nz__calloc(1, sizeof *u->obj)) || !(u->obj->key = nz__strdup(key))) {
		if (u)
			nz__free(u->obj);
		nz__free(u);
		return nz__error_set(NZ_ENOMEM, "objstore: out of memory starting '%s'", key);
	}
	u->os = ctx;
	atomic_fetch_add(&open_uploads, 1);
	*stream = u;
	return 0;
}

static int os_write(void *ctx, void *stream, const void *data, size_t len)
{
	upload *u = stream;
	int err = nz__buf_append(&u->obj->value, data, len);
	return err < 0 ? nz__error_wrap("objstore: uploading '%s'", u->obj->key) : 0;
}

static void os_abort(void *ctx, void *stream)
{
	upload *u = stream;
	atomic_fetch_sub(&open_uploads, 1);
	object_free(u->obj);
	nz__free(u);
}

static int os_commit(void *ctx, void *stream)
{
	upload *u = stream;
	objstore *os = u->os;
	object **p, *old = NULL;
	pthread_mutex_lock(&os->lock);
	p = find(os, u->obj->key);
	if (*p && strcmp((*p)->key, u->obj->key) == 0) {
		old = *p;
		*p = old->next;
	}
	u->obj->next = *p;
	*p = u->obj;
	u->obj = NULL;
	pthread_mutex_unlock(&os->lock);
	object_free(old);
	os_abort(ctx, u);
	return 0;
}

static int os_get_range(void *ctx, const char *key, uint64_t offset, uint64_t length, int suffix,
			void **out, size_t *len)
{
	objstore *os = ctx;
	object *o;
	int err = 0;
	uint64_t start = 0;
	size_t n = 0;
	pthread_mutex_lock(&os->lock);
	o = *find(os, key);
	if (!o || strcmp(o->key, key) != 0) {
		err = nz__error_set(NZ_ENOTFOUND, "objstore: no object '%s'", key);
		goto done;
	}
	if ((err = nz__store_range(o->value.len, offset, length, suffix, key, "objstore", &start,
				   &n)) < 0)
		goto done;
	if (!(*out = nz__malloc(n))) {
		err = nz__error_set(NZ_ENOMEM, "objstore: out of memory reading '%s'", key);
		goto done;
	}
	if (n)
		memcpy(*out, o->value.data + start, n);
	*len = n;
done:
	pthread_mutex_unlock(&os->lock);
	return err;
}

static int os_size(void *ctx, const char *key, uint64_t *size)
{
	objstore *os = ctx;
	object *o;
	int err = 0;
	pthread_mutex_lock(&os->lock);
	o = *find(os, key);
	if (!o || strcmp(o->key, key) != 0)
		err = nz__error_set(NZ_ENOTFOUND, "objstore: no object '%s'", key);
	else
		*size = o->value.len;
	pthread_mutex_unlock(&os->lock);
	return err;
}

static int os_remove(void *ctx, const char *key)
{
	objstore *os = ctx;
	object **p, *gone = NULL;
	pthread_mutex_lock(&os->lock);
	p = find(os, key);
	if (*p && strcmp((*p)->key, key) == 0) {
		gone = *p;
		*p = gone->next;
	}
	pthread_mutex_unlock(&os->lock);
	object_free(gone);
	return 0;
}

/* Prefix listing with the directory store's rule: the prefix itself and
 * keys below "prefix/". A snapshot, so the callback may use the store. */
static int os_list(void *ctx, const char *prefix, nz_store_list_cb cb, void *payload)
{
	objstore *os = ctx;
	size_t plen = strlen(prefix), n = 0, cap = 0;
	char **keys = NULL;
	int err = 0;
	pthread_mutex_lock(&os->lock);
	for (object *o = os->head; o && err == 0; o = o->next) {
		if (plen && (strncmp(o->key, prefix, plen) != 0 ||
			     (o->key[plen] != '\0' && o->key[plen] != '/')))
			continue;
		if (n == cap) {
			char **k = nz__realloc(keys, (cap = cap ? 2 * cap : 16) * sizeof *k);
			if (!k) {
				err = nz__error_set(NZ_ENOMEM, "objstore: out of memory listing");
				break;
			}
			keys = k;
		}
		if (!(keys[n] = nz__strdup(o->key)))
			err = nz__error_set(NZ_ENOMEM, "objstore: out of memory listing");
		else
			n++;
	}
	pthread_mutex_unlock(&os->lock);
	for (size_t i = 0; i < n && err == 0; i++)
		err = cb(keys[i], payload);
	for (size_t i = 0; i < n; i++)
		nz__free(keys[i]);
	nz__free(keys);
	return err;
}

static const char *os_describe(void *ctx)
{
	return "objstore://test";
}

static void os_free(void *ctx)
{
	objstore *os = ctx;
	while (os->head) {
		object *o = os->head;
		os->head = o->next;
		object_free(o);
	}
	pthread_mutex_destroy(&os->lock);
	nz__free(os);
}

static const nz_store_ops obj_ops = {.version = 2,
				     .remove = os_remove,
				     .list = os_list,
				     .describe = os_describe,
				     .free = os_free,
				     .put_begin = os_begin,
				     .put_write = os_write,
				     .put_commit = os_commit,
				     .put_abort = os_abort,
				     .get_range = os_get_range,
				     .size = os_size};

int nz_test_objstore_new(nz_store **out)
{
	int err;
	objstore *os = nz__calloc(1, sizeof *os);
	if (!os)
		return nz__error_set(NZ_ENOMEM, "objstore: out of memory");
	pthread_mutex_init(&os->lock, NULL);
	if ((err = nz_store_new(out, &obj_ops, os)) < 0) {
		os_free(os);
		return err;
	}
	return 0;
}

long nz_test_objstore_open_uploads(void)
{
	return atomic_load(&open_uploads);
}
