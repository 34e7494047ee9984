/* Zarr v3 groups, inline attributes and consolidated metadata, as
 * zarr-python 3.4 writes them; and how a store's format is told (its root). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"
#include "zarr/zarr_impl.h"

int nz__zarr3_node_is(const json_t *doc, const char *type)
{
	const char *t = json_string_value(json_object_get(doc, "node_type"));
	return json_is_object(doc) && t && strcmp(t, type) == 0;
}

int nz__zarr_format(nz_store *store)
{
	int err;
	if ((err = nz_store_exists(store, "zarr.json")) != 0)
		return err < 0 ? err : 3;
	if ((err = nz_store_exists(store, ".zgroup")) == 0)
		err = nz_store_exists(store, ".zarray");
	return err < 0 ? err : err ? 2 : 0;
}

int nz_store_zarr_format(nz_store *store)
{
	int f = nz__zarr_format(store);
	return f == 0 ? 2 : f;
}

json_t *nz__group3_doc(void)
{
	return json_pack("{s:{},s:i,s:s}", "attributes", "zarr_format", 3, "node_type", "group");
}

int nz__group3_one(nz_store *store, const char *path)
{
	char *key = NULL;
	json_t *doc = NULL;
	int err;
	if ((err = nz__zarr_key(&key, path, "zarr.json")) < 0)
		return err;
	if ((err = nz__zarr_get_doc(&doc, store, key)) == 0) {
		if (!nz__zarr3_node_is(doc, "group"))
			err = nz__error_set(NZ_EEXISTS, "cannot create group '%s': %s is not a group", path, key);
		goto done; /* an existing group is kept */
	}
	if (err != NZ_ENOTFOUND)
		goto done;
	if (!(doc = nz__group3_doc()))
		err = nz__error_set(NZ_ENOMEM, "out of memory creating group '%s'", path);
	else
		err = nz__zarr_put_doc(store, key, doc);
done:
	json_decref(doc);
	nz__free(key);
	return err;
}

int nz__attrs3_write(nz_store *store, const char *key, const json_t *attrs)
{
	json_t *doc = NULL;
	int err;
	if ((err = nz__zarr_get_doc(&doc, store, key)) == NZ_ENOTFOUND)
		return nz__error_set(NZ_ENOTFOUND, "cannot write attributes: no group or array (%s missing in %s)", key,
				     nz_store_describe(store));
	if (err == 0 && !json_is_object(doc))
		err = nz__error_set(NZ_EFORMAT, "%s: expected a JSON object, not %s", key, nz__json_type_name(doc));
	/* jansson replaces an existing key in place, keeping zarr's key order. */
	if (err == 0 && json_object_set(doc, "attributes", (json_t *)attrs) < 0)
		err = nz__error_set(NZ_ENOMEM, "out of memory writing %s", key);
	if (err == 0)
		err = nz__zarr_put_doc(store, key, doc);
	json_decref(doc);
	return err;
}

int nz__attrs3_read(json_t **out, nz_store *store, const char *key)
{
	json_t *doc = NULL, *a;
	int err;
	*out = NULL;
	if ((err = nz__zarr_get_doc(&doc, store, key)) == NZ_ENOTFOUND)
		return (*out = json_object()) ? 0 : nz__error_set(NZ_ENOMEM, "out of memory reading %s", key);
	if (err < 0)
		return err;
	a = json_object_get(doc, "attributes");
	if (!json_is_object(doc) || (a && !json_is_object(a)))
		err = nz__error_set(NZ_EFORMAT, "%s: 'attributes' must be an object", key);
	else if (!(*out = a ? json_incref(a) : json_object()))
		err = nz__error_set(NZ_ENOMEM, "out of memory reading %s", key);
	json_decref(doc);
	return err;
}

/* --- consolidated metadata --- */

typedef struct member {
	char *path; /* the node's path, "" never (the root is not a member) */
	json_t *doc;
} member;

typedef struct collect_ctx {
	nz_store *store;
	member *m;
	size_t n, cap;
} collect_ctx;

static int collect(const char *key, void *payload)
{
	collect_ctx *c = payload;
	size_t n = strlen(key);
	json_t *doc = NULL;
	int err;
	/* "<path>/zarr.json"; the root's own document is not a member. */
	if (n <= 10 || strcmp(key + n - 10, "/zarr.json") != 0)
		return 0;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		member *m = nz__realloc(c->m, cap * sizeof *m);
		if (!m)
			return nz__error_set(NZ_ENOMEM, "out of memory consolidating %s", key);
		c->m = m, c->cap = cap;
	}
	if ((err = nz__zarr_get_doc(&doc, c->store, key)) < 0)
		return err;
	if (!(c->m[c->n].path = nz__strndup(key, n - 10))) {
		json_decref(doc);
		return nz__error_set(NZ_ENOMEM, "out of memory consolidating %s", key);
	}
	c->m[c->n++].doc = doc;
	return 0;
}

static size_t depth(const char *p)
{
	size_t d = 0;
	for (; *p; p++)
		d += *p == '/';
	return d;
}

/* zarr-python's order: by depth, then by casefolded path (ASCII folding
 * here; non-ASCII names sort by code point), then as listed. */
static int cmp_members(const void *x, const void *y)
{
	const member *a = x, *b = y;
	const unsigned char *p = (const unsigned char *)a->path, *q = (const unsigned char *)b->path;
	size_t da = depth(a->path), db = depth(b->path);
	if (da != db)
		return da < db ? -1 : 1;
	for (; *p && tolower(*p) == tolower(*q); p++, q++)
		;
	if (tolower(*p) != tolower(*q))
		return tolower(*p) < tolower(*q) ? -1 : 1;
	return strcmp(a->path, b->path);
}

/* {"kind": "inline", "must_understand": false, "metadata": metadata}. */
static json_t *consolidated(json_t *metadata)
{
	return json_pack("{s:s,s:b,s:o}", "kind", "inline", "must_understand", 0, "metadata", metadata);
}

/* doc with "consolidated_metadata" set just before "node_type", where
 * zarr-python's GroupMetadata has it. */
static json_t *with_consolidated(const json_t *doc, json_t *cm)
{
	json_t *out = json_object(), *v;
	const char *key;
	if (!out || !cm)
		goto fail;
	json_object_foreach ((json_t *)doc, key, v) {
		if (strcmp(key, "consolidated_metadata") == 0)
			continue;
		if (strcmp(key, "node_type") == 0 && json_object_set(out, "consolidated_metadata", cm) < 0)
			goto fail;
		if (json_object_set(out, key, v) < 0)
			goto fail;
	}
	json_decref(cm);
	return out;
fail:
	json_decref(cm);
	json_decref(out);
	return NULL;
}

/* The root's document and the consolidated "metadata" object its members
 * make (*meta), as zarr.consolidate_metadata builds it; every member must
 * be a Zarr v3 group or array. */
static int build(nz_store *store, json_t **root, json_t **meta)
{
	collect_ctx c = { store, NULL, 0, 0 };
	size_t i;
	int err;

	*root = NULL;
	if (!(*meta = json_object()))
		goto nomem;
	if ((err = nz__zarr_get_doc(root, store, "zarr.json")) < 0 || (err = nz_store_list(store, "", collect, &c)) < 0)
		goto done;
	if (!nz__zarr3_node_is(*root, "group")) {
		err = nz__error_set(NZ_EFORMAT, "zarr.json: the root of %s is not a group", nz_store_describe(store));
		goto done;
	}
	qsort(c.m, c.n, sizeof *c.m, cmp_members);
	for (i = 0; i < c.n; i++) {
		json_t *d = c.m[i].doc;
		if (!nz__zarr3_node_is(d, "group") && !nz__zarr3_node_is(d, "array")) {
			err = nz__error_set(NZ_EFORMAT, "%s/zarr.json: not a Zarr v3 group or array", c.m[i].path);
			goto done;
		}
		/* A member group carries an empty consolidated_metadata of its own. */
		if (nz__zarr3_node_is(d, "group"))
			d = with_consolidated(d, consolidated(json_object()));
		else
			json_incref(d);
		if (!d || json_object_set_new(*meta, c.m[i].path, d) < 0)
			goto nomem;
	}
	err = 0;
	goto done;
nomem:
	err = nz__error_set(NZ_ENOMEM, "out of memory consolidating metadata");
done:
	for (i = 0; i < c.n; i++) {
		nz__free(c.m[i].path);
		json_decref(c.m[i].doc);
	}
	nz__free(c.m);
	if (err < 0) {
		json_decref(*root);
		json_decref(*meta);
		*root = *meta = NULL;
	}
	return err;
}

int nz__consolidate3(nz_store *store)
{
	json_t *root = NULL, *meta = NULL, *doc = NULL;
	int err;
	if ((err = build(store, &root, &meta)) == 0) {
		doc = consolidated(meta); /* takes meta */
		if (!(doc = with_consolidated(root, doc)))
			err = nz__error_set(NZ_ENOMEM, "out of memory consolidating metadata");
		else
			err = nz__zarr_put_doc(store, "zarr.json", doc);
	}
	if (err < 0)
		nz__error_wrap("consolidating metadata of %s", nz_store_describe(store));
	json_decref(root);
	json_decref(doc);
	return err;
}

int nz__metadata_check3(nz_store *store)
{
	json_t *root = NULL, *meta = NULL, *cm, *docs;
	int err;
	if ((err = build(store, &root, &meta)) == 0 && (cm = json_object_get(root, "consolidated_metadata"))) {
		docs = json_object_get(cm, "metadata");
		if (!json_is_object(docs) || !json_is_string(json_object_get(cm, "kind")) ||
		    strcmp(json_string_value(json_object_get(cm, "kind")), "inline") != 0)
			err = nz__error_set(NZ_EFORMAT, "zarr.json: 'consolidated_metadata' is not inline consolidated "
					    "metadata (kind \"inline\", a 'metadata' object)");
		else
			err = nz__consolidated_differs(docs, meta, "zarr.json's consolidated_metadata");
	}
	json_decref(root);
	json_decref(meta);
	if (err < 0)
		return nz__error_wrap("'%s'", nz_store_describe(store));
	return 0;
}
