/* The memory store: keys and values held in a hash table behind a mutex.
 *
 * It is the second backend behind nz_store_ops (proof that nothing above the
 * store layer knows about files) and lets tests and fuzz targets run the
 * zarr layer without touching the disk.
 *
 * Open addressing with linear probing and backward-shift deletion, so there
 * are no tombstones and a lookup stops at the first empty slot. Values are
 * copied on put and get: a caller never sees memory that another thread may
 * replace. Copies and frees happen outside the lock where they can.
 *
 * Unlike a directory, the table lets "a" and "a/b" coexist as keys; listing
 * follows the directory store's rule (a prefix matches itself and the keys
 * below "prefix/"). */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_impl.h"
#include "util/alloc.h"
#include "util/buf.h"
#include "util/error.h"

typedef struct entry {
	char *key; /* NULL = empty slot */
	uint64_t hash;
	unsigned char *data;
	size_t len;
} entry;

typedef struct memstore {
	pthread_mutex_t lock;
	entry *slots;
	size_t cap;   /* a power of two, or 0 before the first put */
	size_t count; /* occupied slots */
} memstore;

#define MIN_CAP 16

static uint64_t hash_key(const char *key)
{
	uint64_t h = 1469598103934665603ull; /* FNV-1a */
	for (const unsigned char *p = (const unsigned char *)key; *p; p++)
		h = (h ^ *p) * 1099511628211ull;
	return h;
}

/* The slot holding `key`, or the empty slot where it would go. Only called
 * with cap > 0 and at least one empty slot (the load factor guarantees it). */
static size_t find_slot(const memstore *ms, const char *key, uint64_t h)
{
	size_t mask = ms->cap - 1, i = (size_t)h & mask;
	while (ms->slots[i].key &&
	       (ms->slots[i].hash != h || strcmp(ms->slots[i].key, key) != 0))
		i = (i + 1) & mask;
	return i;
}

/* Keep the load factor at most 3/4 after one more insert. */
static int grow_if_needed(memstore *ms)
{
	size_t ncap;
	entry *ns;
	if (ms->cap && (ms->count + 1) <= ms->cap / 4 * 3)
		return 0;
	ncap = ms->cap ? ms->cap * 2 : MIN_CAP;
	if (ncap < ms->cap || !(ns = nz__calloc(ncap, sizeof *ns)))
		return nz__error_set(NZ_ENOMEM, "out of memory growing a memory store to %zu keys",
				     ms->count + 1);
	for (size_t i = 0; i < ms->cap; i++) {
		entry *e = &ms->slots[i];
		size_t j;
		if (!e->key)
			continue;
		for (j = (size_t)e->hash & (ncap - 1); ns[j].key; j = (j + 1) & (ncap - 1))
			;
		ns[j] = *e;
	}
	nz__free(ms->slots);
	ms->slots = ns;
	ms->cap = ncap;
	return 0;
}

/* Make `v` (nz__malloc'd, len bytes; the table takes it, success or not)
 * the value of `key`. */
static int insert(memstore *ms, const char *key, unsigned char *v, size_t len)
{
	int err = 0;
	uint64_t h = hash_key(key);
	char *k = NULL;
	unsigned char *old = NULL;
	size_t i;
	pthread_mutex_lock(&ms->lock);
	if (ms->cap && ms->slots[i = find_slot(ms, key, h)].key) {
		old = ms->slots[i].data; /* replace: the key string stays */
		ms->slots[i].data = v;
		ms->slots[i].len = len;
		v = NULL;
		goto done;
	}
	if (!(k = nz__strdup(key))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory storing key '%s'", key);
		goto done;
	}
	if ((err = grow_if_needed(ms)) < 0)
		goto done;
	i = find_slot(ms, key, h);
	ms->slots[i] = (entry){k, h, v, len};
	ms->count++;
	k = NULL;
	v = NULL;
done:
	pthread_mutex_unlock(&ms->lock);
	nz__free(old);
	nz__free(k);
	nz__free(v);
	return err;
}

static int ms_put(void *ctx, const char *key, const void *data, size_t len)
{
	unsigned char *v = nz__malloc(len);
	if (!v)
		return nz__error_set(NZ_ENOMEM, "out of memory storing %zu bytes at key '%s'", len,
				     key);
	if (len)
		memcpy(v, data, len);
	return insert(ctx, key, v, len);
}

/* A streaming put collects the value privately; commit inserts it whole. */
typedef struct ms_stream {
	char *key;
	nz_buf value;
} ms_stream;

static int ms_put_begin(void *ctx, const char *key, void **out)
{
	ms_stream *st = nz__calloc(1, sizeof *st);
	if (!st || !(st->key = nz__strdup(key))) {
		nz__free(st);
		return nz__error_set(NZ_ENOMEM, "out of memory writing key '%s' in a memory store",
				     key);
	}
	*out = st;
	return 0;
}

static int ms_put_write(void *ctx, void *stream, const void *data, size_t len)
{
	ms_stream *st = stream;
	int err = nz__buf_append(&st->value, data, len);
	return err < 0 ? nz__error_wrap("writing key '%s' in a memory store", st->key) : 0;
}

static void ms_put_abort(void *ctx, void *stream)
{
	ms_stream *st = stream;
	nz__buf_free(&st->value);
	nz__free(st->key);
	nz__free(st);
}

static int ms_put_commit(void *ctx, void *stream)
{
	ms_stream *st = stream;
	int err = 0;
	unsigned char *v = st->value.data;
	if (!v && !(v = nz__malloc(0)))
		err = nz__error_set(NZ_ENOMEM, "out of memory storing key '%s'", st->key);
	else
		err = insert(ctx, st->key, v, st->value.len);
	st->value.data = NULL;
	ms_put_abort(ctx, st);
	return err;
}

static int ms_get_range(void *ctx, const char *key, uint64_t offset, uint64_t length, int suffix,
			void **out, size_t *len)
{
	memstore *ms = ctx;
	int err = 0;
	uint64_t h = hash_key(key), start = 0;
	size_t n = 0;
	entry *e = NULL;
	pthread_mutex_lock(&ms->lock);
	if (ms->cap)
		e = &ms->slots[find_slot(ms, key, h)];
	if (!e || !e->key) {
		err = nz__error_set(NZ_ENOTFOUND, "key '%s' not found in memory store", key);
		goto done;
	}
	if ((err = nz__store_range(e->len, offset, length, suffix, key, "(memory store)", &start,
				   &n)) < 0)
		goto done;
	/* The copy must be made under the lock: a concurrent put of the same key
	 * frees the old value. */
	if (!(*out = nz__malloc(n))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading %zu bytes of key '%s'", n,
				    key);
		goto done;
	}
	if (n)
		memcpy(*out, e->data + start, n);
	*len = n;
done:
	pthread_mutex_unlock(&ms->lock);
	return err;
}

static int ms_get(void *ctx, const char *key, void **out, size_t *len)
{
	return ms_get_range(ctx, key, 0, UINT64_MAX, 0, out, len);
}

static int ms_size(void *ctx, const char *key, uint64_t *size)
{
	memstore *ms = ctx;
	int err = 0;
	uint64_t h = hash_key(key);
	entry *e = NULL;
	pthread_mutex_lock(&ms->lock);
	if (ms->cap)
		e = &ms->slots[find_slot(ms, key, h)];
	if (!e || !e->key)
		err = nz__error_set(NZ_ENOTFOUND, "key '%s' not found in memory store", key);
	else
		*size = e->len;
	pthread_mutex_unlock(&ms->lock);
	return err;
}

static int ms_exists(void *ctx, const char *key)
{
	memstore *ms = ctx;
	uint64_t h = hash_key(key);
	int found;
	pthread_mutex_lock(&ms->lock);
	found = ms->cap && ms->slots[find_slot(ms, key, h)].key != NULL;
	pthread_mutex_unlock(&ms->lock);
	return found;
}

static int ms_remove(void *ctx, const char *key)
{
	memstore *ms = ctx;
	uint64_t h = hash_key(key);
	size_t mask, i, j;
	entry gone = {0};
	pthread_mutex_lock(&ms->lock);
	if (!ms->cap || !ms->slots[i = find_slot(ms, key, h)].key)
		goto done;
	gone = ms->slots[i];
	ms->slots[i] = (entry){0};
	ms->count--;
	/* Backward-shift: move later members of the probe run into the hole when
	 * their home slot is not inside (hole, j], so lookups never meet a gap
	 * before their key. */
	mask = ms->cap - 1;
	for (j = (i + 1) & mask; ms->slots[j].key; j = (j + 1) & mask) {
		size_t home = (size_t)ms->slots[j].hash & mask;
		if (((j - home) & mask) >= ((j - i) & mask)) {
			ms->slots[i] = ms->slots[j];
			ms->slots[j] = (entry){0};
			i = j;
		}
	}
done:
	pthread_mutex_unlock(&ms->lock);
	nz__free(gone.key);
	nz__free(gone.data);
	return 0;
}

static int cmp_keys(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 if `key` is `prefix` itself or lies below "prefix/" ("" matches all). */
static int under(const char *key, const char *prefix, size_t plen)
{
	return plen == 0 ||
	       (strncmp(key, prefix, plen) == 0 && (key[plen] == '\0' || key[plen] == '/'));
}

/* The callback may call back into the store, so it runs on a sorted snapshot
 * of the matching keys taken under the lock, never with the lock held. The
 * sort makes the order reproducible, which tests and fuzzers like. */
static int ms_list(void *ctx, const char *prefix, nz_store_list_cb cb, void *payload)
{
	memstore *ms = ctx;
	int err = 0;
	size_t plen = strlen(prefix), n = 0, total;
	char **keys = NULL;
	pthread_mutex_lock(&ms->lock);
	total = ms->count;
	if (total && !(keys = nz__calloc(total, sizeof *keys))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory listing '%s' in a memory store",
				    prefix);
		goto unlock;
	}
	for (size_t i = 0; i < ms->cap; i++) {
		const char *k = ms->slots[i].key;
		if (!k || !under(k, prefix, plen))
			continue;
		if (!(keys[n] = nz__strdup(k))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory listing '%s' in a memory store",
					    prefix);
			goto unlock;
		}
		n++;
	}
unlock:
	pthread_mutex_unlock(&ms->lock);
	if (err == 0 && n > 1)
		qsort(keys, n, sizeof *keys, cmp_keys);
	for (size_t i = 0; err == 0 && i < n; i++)
		err = cb(keys[i], payload);
	for (size_t i = 0; i < n; i++)
		nz__free(keys[i]);
	nz__free(keys);
	return err;
}

static const char *ms_describe(void *ctx)
{
	return "(memory store)";
}

static void ms_free(void *ctx)
{
	memstore *ms = ctx;
	if (!ms)
		return;
	for (size_t i = 0; i < ms->cap; i++) {
		if (!ms->slots[i].key)
			continue;
		nz__free(ms->slots[i].key);
		nz__free(ms->slots[i].data);
	}
	nz__free(ms->slots);
	pthread_mutex_destroy(&ms->lock);
	nz__free(ms);
}

static const nz_store_ops mem_ops = {.version = NZ_STORE_OPS_VERSION,
				     .put = ms_put,
				     .get = ms_get,
				     .exists = ms_exists,
				     .remove = ms_remove,
				     .list = ms_list,
				     .describe = ms_describe,
				     .free = ms_free,
				     .put_begin = ms_put_begin,
				     .put_write = ms_put_write,
				     .put_commit = ms_put_commit,
				     .put_abort = ms_put_abort,
				     .get_range = ms_get_range,
				     .size = ms_size};

int nz_store_new_memory(nz_store **out)
{
	int err;
	memstore *ms;
	if (!out)
		return nz__error_set(NZ_EINVAL, "nz_store_new_memory: NULL out-parameter");
	*out = NULL;
	if (!(ms = nz__calloc(1, sizeof *ms)))
		return nz__error_set(NZ_ENOMEM, "out of memory creating a memory store");
	if (pthread_mutex_init(&ms->lock, NULL) != 0) {
		nz__free(ms);
		return nz__error_set(NZ_ENOMEM, "cannot create the lock of a memory store");
	}
	if ((err = nz_store_new(out, &mem_ops, ms)) < 0)
		ms_free(ms);
	return err;
}
