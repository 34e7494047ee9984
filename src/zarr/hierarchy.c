/* A hierarchy opened for reading: the root's consolidated metadata (v3's
 * inline consolidated_metadata, v2's .zmetadata) read once and kept, so
 * that opening a group or an array reads nothing more, as zarr-python 3.4's
 * open_group / open_consolidated do. Like zarr-python it trusts the copy:
 * a document changed after consolidating is served as consolidated, and a
 * node missing from it is not found (nz_metadata_check compares the two). */
#include <stdio.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

struct nz_hierarchy {
	nz_store *store; /* borrowed */
	int format;      /* 2 or 3; 0 = no root */
	json_t *root;    /* v3: the root's zarr.json; NULL otherwise */
	json_t *members; /* the consolidated documents, NULL = not consolidated */
};

/* The consolidated "metadata" object of doc, checked for its shape:
 * v3 {"kind": "inline", "metadata": {...}} (null = none), v2 .zmetadata
 * {"metadata": {...}, "zarr_consolidated_format": 1}. */
static int members_of(json_t **out, const json_t *doc, int format, const char *key)
{
	const json_t *cm = format == 3 ? json_object_get(doc, "consolidated_metadata") : doc;
	const json_t *m = json_object_get(cm, "metadata");
	const char *kind = json_string_value(json_object_get(cm, "kind"));
	const json_t *fmt = json_object_get(cm, "zarr_consolidated_format");
	*out = NULL;
	if (!cm || json_is_null(cm))
		return 0;
	if (!json_is_object(cm) || !json_is_object(m) ||
	    (format == 3 ? !kind || strcmp(kind, "inline") != 0 : !json_is_integer(fmt) || json_integer_value(fmt) != 1))
		return nz__error_set(NZ_EFORMAT, "%s: not consolidated metadata (%s)", key,
				     format == 3 ? "'consolidated_metadata' must be {\"kind\": \"inline\", \"metadata\": {...}}"
						 : "'zarr_consolidated_format' 1 and a 'metadata' object");
	*out = json_incref((json_t *)m);
	return 0;
}

int nz_hierarchy_open(nz_hierarchy **out, nz_store *store)
{
	nz_hierarchy *h = NULL;
	json_t *doc = NULL;
	int err = 0;

	*out = NULL;
	nz__alloc_init();
	if (!(h = nz__calloc(1, sizeof *h)))
		return nz__error_set(NZ_ENOMEM, "out of memory opening %s", nz_store_describe(store));
	h->store = store;
	if ((h->format = nz__zarr_format(store)) < 0) {
		err = h->format;
		goto done;
	}
	if (h->format == 3) {
		if ((err = nz__zarr_get_doc(&h->root, store, "zarr.json")) < 0)
			goto done;
		if (!json_is_object(h->root)) {
			err = nz__error_set(NZ_EFORMAT, "zarr.json: the root of %s is not a JSON object",
					    nz_store_describe(store));
			goto done;
		}
		err = members_of(&h->members, h->root, 3, "zarr.json");
	} else if (h->format == 2 && (err = nz__zarr_get_doc(&doc, store, ".zmetadata")) == 0) {
		err = members_of(&h->members, doc, 2, ".zmetadata");
	} else if (err == NZ_ENOTFOUND) {
		err = 0;
	}
done:
	json_decref(doc);
	if (err < 0) {
		nz_hierarchy_free(h);
		return nz__error_wrap("opening %s", nz_store_describe(store));
	}
	*out = h;
	return 0;
}

void nz_hierarchy_free(nz_hierarchy *h)
{
	if (!h)
		return;
	json_decref(h->root);
	json_decref(h->members);
	nz__free(h);
}

int nz_hierarchy_consolidated(const nz_hierarchy *h)
{
	return h->members != NULL;
}

int nz_hierarchy_zarr_format(const nz_hierarchy *h)
{
	return h->format ? h->format : 2;
}

/* The consolidated document of node p: v3 the member's zarr.json (the
 * root's own for ""), v2 the member "<p>/<name>"; NULL when absent. */
static const json_t *member(const nz_hierarchy *h, const char *p, const char *name)
{
	char key[4096];
	if (h->format == 3)
		return *p ? json_object_get(h->members, p) : h->root;
	if ((size_t)snprintf(key, sizeof key, "%s%s%s", p, *p ? "/" : "", name) >= sizeof key)
		return NULL;
	return json_object_get(h->members, key);
}

int nz_hierarchy_array_open(nz_array **out, nz_hierarchy *h, const char *path)
{
	const json_t *doc;
	char *p = NULL;
	int err;

	*out = NULL;
	if (!h->members)
		return nz_array_open(out, h->store, path);
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	doc = member(h, p, ".zarray");
	if (!doc)
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' in the consolidated metadata of %s", p,
				    nz_store_describe(h->store));
	else if (h->format == 3 && nz__zarr3_node_is(doc, "group"))
		err = nz__error_set(NZ_ENOTFOUND, "no array at '%s' (a group, says the consolidated metadata of %s)", p,
				    nz_store_describe(h->store));
	else if ((err = nz__array_from_meta(out, h->store, p, doc, h->format)) < 0)
		nz__error_wrap("the consolidated metadata of %s", nz_store_describe(h->store));
	nz__free(p);
	return err;
}

int nz_hierarchy_group_exists(nz_hierarchy *h, const char *path)
{
	const json_t *doc;
	char *p = NULL;
	int err;
	if (!h->members)
		return nz_group_exists(h->store, path);
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	doc = member(h, p, ".zgroup");
	err = h->format == 3 ? nz__zarr3_node_is(doc, "group") : doc != NULL;
	nz__free(p);
	return err;
}

int nz_hierarchy_attrs_read(char **out, nz_hierarchy *h, const char *path)
{
	const json_t *doc, *attrs;
	char *p = NULL;
	int err;
	*out = NULL;
	if (!h->members)
		return nz_attrs_read(out, h->store, path);
	if ((err = nz__zarr_norm_path(&p, path)) < 0)
		return err;
	doc = member(h, p, ".zattrs");
	attrs = h->format == 3 ? json_object_get(doc, "attributes") : doc;
	if (h->format == 3 && doc && !json_is_object(doc))
		err = nz__error_set(NZ_EFORMAT, "the consolidated metadata of %s: '%s' is not a JSON object",
				    nz_store_describe(h->store), p);
	else if (attrs && !json_is_object(attrs))
		err = nz__error_set(NZ_EFORMAT, "the consolidated metadata of %s: the attributes of '%s' are not a JSON "
				    "object", nz_store_describe(h->store), p);
	else if (attrs)
		err = nz__json_dumps(out, attrs, NZ_JSON_COMPACT);
	else if (!(*out = nz__strdup("{}")))
		err = nz__error_set(NZ_ENOMEM, "out of memory reading the attributes of '%s'", p);
	nz__free(p);
	return err;
}

int nz_hierarchy_members(nz_hierarchy *h, nz_hierarchy_member_cb cb, void *payload)
{
	const char *key;
	json_t *doc;
	int err;
	if (!h->members)
		return nz__error_set(NZ_EINVAL, "%s has no consolidated metadata to list", nz_store_describe(h->store));
	json_object_foreach (h->members, key, doc) {
		char path[4096];
		const char *base = strrchr(key, '/');
		int is_array;
		if (h->format == 3) {
			if (!nz__zarr3_node_is(doc, "group") && !nz__zarr3_node_is(doc, "array"))
				return nz__error_set(NZ_EFORMAT, "the consolidated metadata of %s: '%s' is not a Zarr v3 "
						     "group or array", nz_store_describe(h->store), key);
			is_array = nz__zarr3_node_is(doc, "array");
			snprintf(path, sizeof path, "%s", key);
		} else {
			/* .zattrs entries belong to a node listed by its .zgroup/.zarray */
			base = base ? base + 1 : key;
			if (strcmp(base, ".zarray") != 0 && strcmp(base, ".zgroup") != 0)
				continue;
			is_array = base[2] == 'a';
			snprintf(path, sizeof path, "%.*s", base > key ? (int)(base - key - 1) : 0, key);
			if (!*path)
				continue; /* the root */
		}
		if (strlen(key) >= sizeof path)
			return nz__error_set(NZ_EFORMAT, "the consolidated metadata of %s: a member path is over %zu bytes",
					     nz_store_describe(h->store), sizeof path - 1);
		if ((err = cb(path, is_array, payload)) != 0)
			return err;
	}
	return 0;
}
