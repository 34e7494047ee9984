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

static int ms_put(void *ctx, const char *key, const void *data, size_t len)
{
	memstore *ms = ctx;
	int err = 0;
	uint64_t h = hash_key(key);
	char *k = NULL;
	unsigned char *v = nz__malloc(len), *old = NULL;
	size_t i;
	if (!v)
		return nz__error_set(NZ_ENOMEM, "out of memory storing %zu bytes at key '%s'", len,
				     key);
	if (len)
		memcpy(v, data, len);
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

static int ms_get(void *ctx, const char *key, void **out, size_t *len)
{
	memstore *ms = ctx;
	int err = 0;
	uint64_t h = hash_key(key);
	entry *e = NULL;
	pthread_mutex_lock(&ms->lock);
	if (ms->cap)
		e = &ms->slots[find_slot(ms, key, h)];
	if (!e || !e->key) {
		err = nz__error_set(NZ_ENOTFOUND, "key '%s' not found in memory store", key);
		goto done;
	}
	/* The copy must be made under the lock: a concurrent put of the same key
	 * frees the old value. */
	if (!(*out = nz__malloc(e->len))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading %zu bytes of key '%s'",
				    e->len, key);
		goto done;
	}
	if (e->len)
		memcpy(*out, e->data, e->len);
	*len = e->len;
done:
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

static const nz_store_ops mem_ops = {NZ_STORE_OPS_VERSION, ms_put, ms_get, ms_exists, ms_remove,
				     ms_list, NULL, ms_describe, ms_free};

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
