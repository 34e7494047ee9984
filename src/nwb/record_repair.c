/* Finalising an interrupted recording (nz_record_repair).
 *
 * Every flush left the store readable: each series' published length
 * covers only stored frames. What a kill can leave is a temporary file, a
 * series whose timestamps were published one flush ahead of its data (a
 * kill between the two puts), and consolidated metadata behind the
 * documents. So a repair removes the temporaries, cuts each series to the
 * shorter of data and timestamps, consolidates and removes the marker.
 *
 * The killed writer may also have stored frames past the last publish
 * (units written after it, the last unit rewritten with more rows), which
 * readers ignore. A repair removes those units and rewrites the last one
 * from the kept frames, so the store holds exactly the repaired file: the
 * objects a recording of those frames, closed, would have left. */
#include <stdio.h>
#include <string.h>

#include "hdmf/hdmf.h"
#include "nwbzarr/record.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/resize.h"

typedef struct keyset {
	nz_array *a;
	char **keys; /* the units' keys inside the shape, sorted */
	size_t n;
	char **drop; /* stored keys outside it */
	size_t n_drop, cap_drop;
} keyset;

static int cmp_key(const void *x, const void *y)
{
	return strcmp(*(char *const *)x, *(char *const *)y);
}

/* Every listed key of the array but its metadata documents and its units'. */
static int collect_outside(const char *key, void *payload)
{
	keyset *k = payload;
	const char *base = strrchr(key, '/');
	base = base ? base + 1 : key;
	if (strcmp(base, "zarr.json") == 0 || strcmp(base, ".zarray") == 0 ||
	    strcmp(base, ".zattrs") == 0 || bsearch(&key, k->keys, k->n, sizeof *k->keys, cmp_key))
		return 0;
	if (k->n_drop == k->cap_drop) {
		size_t cap = k->cap_drop ? 2 * k->cap_drop : 16;
		char **d = nz__realloc(k->drop, cap * sizeof *d);
		if (!d)
			return nz__error_set(NZ_ENOMEM, "out of memory repairing '%s'", key);
		k->drop = d, k->cap_drop = cap;
	}
	if (!(k->drop[k->n_drop] = nz__strdup(key)))
		return nz__error_set(NZ_ENOMEM, "out of memory repairing '%s'", key);
	k->n_drop++;
	return 0;
}

/* Rewrite the last unit of `a` (its time axis cut inside it) from the rows
 * the shape keeps: fill past them, inner chunks wholly past them empty. */
static int rewrite_last(nz_array *a, uint64_t units)
{
	const uint64_t *shape = nz_array_shape(a), *unit = nz_array_shards(a);
	uint64_t start[2] = {(units - 1) * unit[0], 0}, count[2], idx[2] = {units - 1, 0};
	size_t isz = nz_array_itemsize(a), row = isz, bytes;
	unsigned char *buf = NULL;
	int ndim = nz_array_ndim(a), err;
	if (shape[0] % unit[0] == 0)
		return 0;
	if (ndim == 2)
		row *= (size_t)unit[1];
	count[0] = shape[0] - start[0];
	count[1] = ndim == 2 ? shape[1] : 1;
	if (nz__mul_size(&bytes, (size_t)unit[0], row) < 0 || !(buf = nz__malloc(bytes)))
		return nz__error_set(NZ_ENOMEM, "out of memory repairing '%s'", nz_array_path(a));
	for (size_t i = 0; i < bytes; i += isz)
		memcpy(buf + i, nz_array_fill_value(a), isz);
	/* unit[1] spans every channel (a recording's rule): rows are dense. */
	if ((err = nz_array_read_region(a, start, count, buf, (size_t)count[0] * row)) == 0)
		err = nz_array_write_shard(a, NULL, idx, buf, bytes);
	nz__free(buf);
	return err;
}

/* Make the stored units of `a` (in `store`) exactly those of its shape. */
static int trim(nz_store *store, nz_array *a)
{
	keyset k = {a, NULL, 0, NULL, 0, 0};
	uint64_t grid[2], per = nz_array_shards(a)[0] / nz_array_chunks(a)[0];
	char *prefix = NULL;
	int err = 0;
	nz_array_shard_grid(a, grid);
	if (grid[0] && !(k.keys = nz__calloc((size_t)grid[0], sizeof *k.keys))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory repairing '%s'", nz_array_path(a));
		goto done;
	}
	for (; k.n < grid[0]; k.n++) {
		uint64_t idx[2] = {k.n * per, 0};
		if ((err = nz_array_chunk_key(&k.keys[k.n], a, idx)) < 0)
			goto done;
	}
	qsort(k.keys, k.n, sizeof *k.keys, cmp_key);
	if (!(prefix = nz__malloc(strlen(nz_array_path(a)) + 2))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory repairing '%s'", nz_array_path(a));
		goto done;
	}
	strcpy(prefix, nz_array_path(a));
	strcat(prefix, "/");
	if ((err = nz_store_list(store, prefix, collect_outside, &k)) < 0)
		goto done;
	for (size_t i = 0; i < k.n_drop; i++)
		if ((err = nz_store_remove(store, k.drop[i])) < 0)
			goto done;
	if (grid[0])
		err = rewrite_last(a, grid[0]);
done:
	for (size_t i = 0; i < k.n; i++)
		nz_free(k.keys[i]);
	for (size_t i = 0; i < k.n_drop; i++)
		nz__free(k.drop[i]);
	nz__free(k.keys);
	nz__free(k.drop);
	nz__free(prefix);
	return err;
}

/* Cut one series to the frames both its arrays hold; *frames = those. */
static int repair_series(uint64_t *frames, nz_store *store, const char *path)
{
	char *key = NULL;
	nz_array *data = NULL, *ts = NULL, *cut = NULL;
	uint64_t n, shape[2];
	int err;
	size_t len = strlen(path) + sizeof "/timestamps";
	if (!(key = nz__malloc(len)))
		return nz__error_set(NZ_ENOMEM, "out of memory repairing '/%s'", path);
	snprintf(key, len, "%s/data", path);
	if ((err = nz_array_open(&data, store, key)) < 0)
		goto done;
	snprintf(key, len, "%s/timestamps", path);
	if ((err = nz_array_open(&ts, store, key)) < 0 && err != NZ_ENOTFOUND)
		goto done;
	err = 0;
	n = nz_array_shape(data)[0];
	if (ts && nz_array_shape(ts)[0] < n)
		n = nz_array_shape(ts)[0];
	if (ts && ((err = nz__array_resize(&cut, ts, &n, NULL)) < 0 || (err = trim(store, cut)) < 0))
		goto done;
	nz_array_free(cut);
	cut = NULL;
	memcpy(shape, nz_array_shape(data), (size_t)nz_array_ndim(data) * sizeof *shape);
	shape[0] = n;
	if ((err = nz__array_resize(&cut, data, shape, NULL)) < 0 || (err = trim(store, cut)) < 0)
		goto done;
	*frames = n;
done:
	if (err < 0)
		nz__error_wrap("series '/%s'", path);
	nz_array_free(data);
	nz_array_free(ts);
	nz_array_free(cut);
	nz__free(key);
	return err;
}

int nz_record_repair(nz_record_repair_info *info, const char *path, int fsync)
{
	nz_record_repair_info got = {0};
	nz_store *store = NULL;
	json_t *marker = NULL, *list;
	int err;
	if (info)
		memset(info, 0, sizeof *info);
	if (!path || !*path)
		return nz__error_set(NZ_EINVAL, "repair: no path");
	if ((err = nz_store_open_dir(&store, path, NZ_STORE_WRITE | (fsync ? NZ_STORE_FSYNC : 0))) < 0)
		goto done;
	if ((err = nz__hdmf_marker_read(&marker, store)) == NZ_ENOTFOUND) {
		err = nz__error_set(NZ_EEXISTS, "'%s' is complete (no %s): nothing to repair", path,
				    NZ_INCOMPLETE_MARKER);
		goto done;
	}
	if (err < 0)
		goto done;
	list = json_object_get(json_object_get(marker, "recording"), "series");
	if (!json_is_array(list)) {
		err = nz__error_set(NZ_EINVAL, "'%s' is an interrupted write, not a recording: "
				    "resume it (convert --resume) instead", path);
		goto done;
	}
	if ((err = nz__hdmf_remove_temps(path, &got.temp_removed)) < 0)
		goto done;
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *s = json_string_value(json_array_get(list, i));
		uint64_t n = 0;
		if (!s) {
			err = nz__error_set(NZ_EFORMAT, "'%s/%s': series %zu is not a path", path,
					    NZ_INCOMPLETE_MARKER, i);
			goto done;
		}
		if ((err = repair_series(&n, store, s)) < 0)
			goto done;
		got.series++;
		got.frames += n;
	}
	if ((err = nz_consolidate(store)) < 0 || (err = nz__hdmf_marker_finish(store)) < 0)
		goto done;
	if (info)
		*info = got;
done:
	if (err < 0)
		nz__error_wrap("repairing '%s'", path);
	json_decref(marker);
	nz_store_free(store);
	return err;
}
