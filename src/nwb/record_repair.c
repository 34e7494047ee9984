/* Finalising an interrupted recording (nz_record_repair).
 *
 * Every flush left the store readable: each series' published length
 * covers only stored frames. What a kill can leave is a temporary file, a
 * series whose timestamps were published one flush ahead of its data (a
 * kill between the two puts), and consolidated metadata behind the
 * documents. So a repair removes the temporaries, cuts each series to the
 * shorter of data and timestamps, consolidates and removes the marker. */
#include <stdio.h>
#include <string.h>

#include "hdmf/hdmf.h"
#include "nwbzarr/record.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/resize.h"

/* Cut one series to the frames both its arrays hold; *frames = those. */
static int repair_series(uint64_t *frames, nz_store *store, const char *path)
{
	char *key = NULL;
	nz_array *data = NULL, *ts = NULL;
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
	if (ts && nz_array_shape(ts)[0] != n && (err = nz__array_resize(NULL, ts, &n)) < 0)
		goto done;
	memcpy(shape, nz_array_shape(data), (size_t)nz_array_ndim(data) * sizeof *shape);
	shape[0] = n;
	if (nz_array_shape(data)[0] != n && (err = nz__array_resize(NULL, data, shape)) < 0)
		goto done;
	*frames = n;
done:
	if (err < 0)
		nz__error_wrap("series '/%s'", path);
	nz_array_free(data);
	nz_array_free(ts);
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
