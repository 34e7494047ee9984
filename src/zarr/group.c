/* Groups, attributes and consolidated metadata, written as zarr-python 2.13
 * writes them (json_dumps: indent 4, sorted keys, ASCII); each function
 * hands a v3 hierarchy to group3.c. */
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

/* Make one group (not its parents); keep an existing one, refuse to turn an
 * array into a group. */
static int group_one(nz_store *store, const char *path)
{
	char *gkey = NULL, *akey = NULL;
	json_t *doc = NULL;
	int err;
	if ((err = nz__zarr_key(&gkey, path, ".zgroup")) < 0 || (err = nz__zarr_key(&akey, path, ".zarray")) < 0)
		goto done;
	if ((err = nz_store_exists(store, gkey)) != 0)
		goto done; /* 1 = exists: nothing to do (err reset below) */
	if ((err = nz_store_exists(store, akey)) < 0)
		goto done;
	if (err == 1) {
		err = nz__error_set(NZ_EEXISTS, "cannot create group '%s': an array is there", path);
		goto done;
	}
	if (!(doc = json_pack("{s:i}", "zarr_format", 2))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory creating group '%s'", path);
		goto done;
	}
	err = nz__zarr_put_doc(store, gkey, doc);
done:
	json_decref(doc);
	nz__free(gkey);
	nz__free(akey);
	return err < 0 ? err : 0;
}

int nz_root_create(nz_store *store, int zarr_format)
{
	int fmt;
	nz__alloc_init();
	if (zarr_format != 2 && zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "zarr_format %d (2 or 3)", zarr_format);
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if (fmt && fmt != zarr_format)
		return nz__error_set(NZ_EINVAL, "%s already holds a Zarr v%d hierarchy, not v%d", nz_store_describe(store),
				     fmt, zarr_format);
	if (fmt)
		return 0;
	return zarr_format == 3 ? nz__group3_one(store, "") : group_one(store, "");
}

int nz_group_create(nz_store *store, const char *path)
{
	char *p = NULL;
	size_t i, n;
	int err, fmt;
	nz__alloc_init();
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	n = strlen(p);
	/* Root first, then each prefix ending before a '/', then the path. */
	for (i = 0; i <= n && err == 0; i++) {
		if (i == 0 || i == n || p[i] == '/') {
			char c = p[i];
			p[i] = '\0';
			err = fmt == 3 ? nz__group3_one(store, p) : group_one(store, p);
			p[i] = c;
		}
	}
	nz__free(p);
	return err;
}

int nz_group_exists(nz_store *store, const char *path)
{
	char *p = NULL, *key = NULL;
	json_t *doc = NULL;
	int err, fmt;
	nz__alloc_init();
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if ((err = nz__zarr_path_key(&p, &key, path, fmt == 3 ? "zarr.json" : ".zgroup")) == 0 && fmt != 3)
		err = nz_store_exists(store, key);
	else if (err == 0 && (err = nz__zarr_get_doc(&doc, store, key)) == NZ_ENOTFOUND)
		err = 0;
	else if (err == 0)
		err = nz__zarr3_node_is(doc, "group");
	json_decref(doc);
	nz__free(p);
	nz__free(key);
	return err;
}

int nz_attrs_write(nz_store *store, const char *path, const char *json_object)
{
	char *p = NULL, *key = NULL;
	json_t *doc = NULL;
	int err, fmt;
	nz__alloc_init();
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if ((err = nz__zarr_path_key(&p, &key, path, fmt == 3 ? "zarr.json" : ".zattrs")) < 0)
		return err;
	if (!json_object)
		err = nz__error_set(NZ_EINVAL, "%s: no attributes JSON given", key);
	else if ((err = nz__json_parse(&doc, json_object, strlen(json_object), key, 0)) == 0 && !json_is_object(doc))
		err = nz__error_set(NZ_EINVAL, "%s: attributes must be a JSON object, not %s", key,
				    nz__json_type_name(doc));
	if (err == 0)
		err = fmt == 3 ? nz__attrs3_write(store, key, doc) : nz__zarr_put_doc(store, key, doc);
	json_decref(doc);
	nz__free(p);
	nz__free(key);
	return err;
}

int nz_attrs_read(char **out, nz_store *store, const char *path)
{
	char *p = NULL, *key = NULL;
	json_t *doc = NULL;
	int err, fmt;
	*out = NULL;
	nz__alloc_init();
	if ((fmt = nz__zarr_format(store)) < 0)
		return fmt;
	if ((err = nz__zarr_path_key(&p, &key, path, fmt == 3 ? "zarr.json" : ".zattrs")) < 0)
		return err;
	err = fmt == 3 ? nz__attrs3_read(&doc, store, key) : nz__zarr_get_doc(&doc, store, key);
	if (err == NZ_ENOTFOUND)
		err = (*out = nz__strdup("{}")) ? 0 : nz__error_set(NZ_ENOMEM, "out of memory reading %s", key);
	else if (err == 0 && !json_is_object(doc))
		err = nz__error_set(NZ_EFORMAT, "%s: expected a JSON object, not %s", key, nz__json_type_name(doc));
	else if (err == 0)
		err = nz__json_dumps(out, doc, NZ_JSON_COMPACT);
	json_decref(doc);
	nz__free(p);
	nz__free(key);
	return err;
}

typedef struct consolidate_ctx {
	nz_store *store;
	json_t *metadata;
} consolidate_ctx;

static int is_meta_key(const char *key)
{
	const char *base = strrchr(key, '/');
	base = base ? base + 1 : key;
	return strcmp(base, ".zarray") == 0 || strcmp(base, ".zgroup") == 0 || strcmp(base, ".zattrs") == 0;
}

static int consolidate_one(const char *key, void *payload)
{
	consolidate_ctx *ctx = payload;
	json_t *doc = NULL;
	int err;
	if (!is_meta_key(key))
		return 0;
	if ((err = nz__zarr_get_doc(&doc, ctx->store, key)) < 0)
		return err;
	if (json_object_set_new(ctx->metadata, key, doc) < 0)
		return nz__error_set(NZ_ENOMEM, "out of memory consolidating %s", key);
	return 0;
}

int nz_consolidate(nz_store *store)
{
	consolidate_ctx ctx = { store, NULL };
	json_t *doc = NULL;
	int err;
	nz__alloc_init();
	if ((err = nz__zarr_format(store)) == 3)
		return nz__consolidate3(store);
	if (err < 0)
		return err;
	if (!(ctx.metadata = json_object()) ||
	    !(doc = json_pack("{s:O,s:i}", "metadata", ctx.metadata, "zarr_consolidated_format", 1))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory consolidating metadata");
		goto done;
	}
	if ((err = nz_store_list(store, "", consolidate_one, &ctx)) < 0 ||
	    (err = nz__zarr_put_doc(store, ".zmetadata", doc)) < 0)
		nz__error_wrap("consolidating metadata of %s", nz_store_describe(store));
done:
	json_decref(ctx.metadata);
	json_decref(doc);
	return err;
}

/* Each document as nz_consolidate would copy it, checked on the way. */
static int check_one(const char *key, void *payload)
{
	consolidate_ctx *ctx = payload;
	const char *base = strrchr(key, '/');
	const json_t *doc;
	int err;
	if (!is_meta_key(key))
		return 0;
	if ((err = consolidate_one(key, payload)) < 0)
		return err;
	doc = json_object_get(ctx->metadata, key);
	base = base ? base + 1 : key;
	if (strcmp(base, ".zarray") != 0 && !json_is_object(doc))
		return nz__error_set(NZ_EFORMAT, "%s: expected a JSON object, not %s", key,
				     nz__json_type_name(doc));
	if (strcmp(base, ".zgroup") == 0 && json_integer_value(json_object_get(doc, "zarr_format")) != 2)
		return nz__error_set(NZ_EFORMAT, "%s: not a Zarr v2 group (zarr_format must be 2)", key);
	return 0;
}

/* The first key where consolidated `got` and the store's `want` disagree. */
int nz__consolidated_differs(const json_t *got, const json_t *want, const char *what)
{
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)want, key, v) {
		if (!json_object_get(got, key))
			return nz__error_set(NZ_EMISMATCH, "%s lacks '%s'", what, key);
		if (!json_equal(v, json_object_get(got, key)))
			return nz__error_set(NZ_EMISMATCH, "%s: its copy of '%s' differs from the "
					     "file", what, key);
	}
	json_object_foreach((json_t *)got, key, v)
		if (!json_object_get(want, key))
			return nz__error_set(NZ_EMISMATCH, "%s lists '%s', which the store lacks",
					     what, key);
	return 0;
}

int nz_metadata_check(nz_store *store)
{
	consolidate_ctx ctx = { store, NULL };
	json_t *meta = NULL, *docs;
	int err;
	nz__alloc_init();
	if ((err = nz__zarr_format(store)) == 3)
		return nz__metadata_check3(store);
	if (err < 0)
		return err;
	if (!(ctx.metadata = json_object())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory reading metadata");
		goto done;
	}
	if ((err = nz_store_list(store, "", check_one, &ctx)) < 0)
		goto done;
	err = nz__zarr_get_doc(&meta, store, ".zmetadata");
	if (err == NZ_ENOTFOUND) {
		err = 0;
		goto done;
	}
	if (err < 0)
		goto done;
	docs = json_object_get(meta, "metadata");
	if (!json_is_object(docs) ||
	    json_integer_value(json_object_get(meta, "zarr_consolidated_format")) != 1) {
		err = nz__error_set(NZ_EFORMAT, ".zmetadata: not consolidated metadata (a 'metadata' "
				    "object and zarr_consolidated_format 1)");
		goto done;
	}
	err = nz__consolidated_differs(docs, ctx.metadata, ".zmetadata");
done:
	json_decref(ctx.metadata);
	json_decref(meta);
	if (err < 0)
		return nz__error_wrap("'%s'", nz_store_describe(store));
	return 0;
}
