/* The incomplete marker (docs/reliability.md): a root key written before
 * anything else and removed only after .zmetadata, so a store whose writer
 * died, failed or was killed never looks complete. It also records what a
 * resume needs to write the same bytes again (object-id seed, create date). */
#include "hdmf/hdmf.h"

#include <string.h>

#include "nwbzarr/nwb.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

int nz__hdmf_marker_write(nz_store *store, const json_t *request)
{
	json_t *m = json_deep_copy(request);
	char *text = NULL;
	int err;
	nz__alloc_init();
	if (!m || json_object_set_new(m, "tool", json_string("nwbzarr")) != 0 ||
	    json_object_set_new(m, "version", json_string(NZ_VERSION_STRING)) != 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing the marker of '%s'",
				    nz_store_describe(store));
		goto done;
	}
	if ((err = nz__json_dumps(&text, m, NZ_JSON_ZARR)) < 0 ||
	    (err = nz_store_put(store, NZ_INCOMPLETE_MARKER, text, strlen(text))) < 0)
		goto done;
done:
	json_decref(m);
	nz__free(text);
	return err;
}

int nz__hdmf_marker_read(json_t **out, nz_store *store)
{
	void *data = NULL;
	size_t len = 0;
	int err;
	*out = NULL;
	nz__alloc_init();
	if ((err = nz_store_get(store, NZ_INCOMPLETE_MARKER, &data, &len)) < 0)
		return err;
	err = nz__json_parse(out, data, len, NZ_INCOMPLETE_MARKER, 0);
	nz_free(data);
	if (err == 0 && !json_is_object(*out)) {
		json_decref(*out);
		*out = NULL;
		err = nz__error_set(NZ_EFORMAT, "'%s/%s' is not a JSON object",
				    nz_store_describe(store), NZ_INCOMPLETE_MARKER);
	}
	return err;
}

int nz__hdmf_marker_finish(nz_store *store)
{
	int err;
	/* Everything, .zmetadata included, must be on disk before the marker
	 * goes. A crash before the removal is durable leaves the marker: the
	 * store reads as incomplete and a resume redoes the (idempotent) end.
	 * An NZ_STORE_FSYNC store syncs the removal itself. */
	if ((err = nz_store_sync(store)) < 0 ||
	    (err = nz_store_remove(store, NZ_INCOMPLETE_MARKER)) < 0)
		return err;
	return 0;
}

int nz__hdmf_consolidated(nz_store *store)
{
	void *buf = NULL;
	size_t len = 0;
	json_t *root = NULL;
	int err = nz_store_zarr_format(store), found;
	if (err < 0)
		return err;
	if (err == 2)
		return nz_store_exists(store, ".zmetadata");
	if ((err = nz_store_get(store, "zarr.json", &buf, &len)) < 0)
		return err;
	err = nz__json_parse(&root, buf, len, "zarr.json", 0);
	nz_free(buf);
	if (err < 0)
		return err;
	found = json_object_get(root, "consolidated_metadata") != NULL;
	json_decref(root);
	return found;
}

int nz_nwb_check_complete(nz_store *store)
{
	int marker, meta, fmt;
	const char *what;
	if (!store)
		return nz__error_set(NZ_EINVAL, "nz_nwb_check_complete: NULL store");
	if ((marker = nz_store_exists(store, NZ_INCOMPLETE_MARKER)) < 0 ||
	    (fmt = nz_store_zarr_format(store)) < 0 || (meta = nz__hdmf_consolidated(store)) < 0)
		return marker < 0 ? marker : fmt < 0 ? fmt : meta;
	what = fmt == 3 ? "no consolidated metadata in zarr.json" : "no .zmetadata";
	if (marker)
		return nz__error_set(NZ_EINCOMPLETE, "'%s' is INCOMPLETE: its writer was interrupted "
				     "or failed (%s present%s%s); finish it with --resume or "
				     "rewrite it with --overwrite", nz_store_describe(store),
				     NZ_INCOMPLETE_MARKER, meta ? "" : ", ", meta ? "" : what);
	if (!meta)
		return nz__error_set(NZ_EINCOMPLETE, "'%s' is INCOMPLETE or was not consolidated "
				     "(%s)", nz_store_describe(store), what);
	return 0;
}
