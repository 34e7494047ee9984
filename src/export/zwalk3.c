/* hdmf-zarr 0.14's Zarr v3 layout read into the neutral model: links in a
 * group's `_LINKS`, reference datasets as text arrays marked `_DTYPE:
 * "object_reference"` (elements are target paths), compounds as v3
 * `struct`s whose reference fields `_REFERENCE_FIELDS` names, references in
 * attributes as {"_REFERENCE": {source, path}}, scalars as 0-d arrays.
 * The layout's own bookkeeping (`_DTYPE`, `_ARRAY_DIMENSIONS`,
 * `_REFERENCE_FIELDS`, `_LINKS`) is not kept as attributes: HDF5 has no
 * counterpart, so verify compares what the file says, not how v3 says it. */
#include <stdio.h>
#include <string.h>

#include "export/zwalk_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

/* A copy of `v` with each {"_REFERENCE": {...}} in the model's reference
 * form ({"value": {...}, "zarr_dtype": "object"}); NULL when out of memory. */
static json_t *refs_to_model(const json_t *v)
{
	const json_t *r = json_object_get(v, "_REFERENCE");
	json_t *out;
	size_t i;
	if (json_is_object(v) && json_object_size(v) == 1 && json_is_object(r))
		return json_pack("{s:O,s:s}", "value", r, "zarr_dtype", "object");
	if (json_is_array(v)) {
		if (!(out = json_array()))
			return NULL;
		for (i = 0; i < json_array_size(v); i++)
			if (json_array_append_new(out, refs_to_model(json_array_get(v, i))) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	}
	if (json_is_object(v)) {
		const char *k;
		json_t *x;
		if (!(out = json_object()))
			return NULL;
		json_object_foreach((json_t *)v, k, x)
			if (json_object_set_new(out, k, refs_to_model(x)) < 0) {
				json_decref(out);
				return NULL;
			}
		return out;
	}
	return json_deep_copy(v);
}

static int field_listed(const json_t *names, const char *name)
{
	size_t i;
	for (i = 0; i < json_array_size(names); i++)
		if (json_is_string(json_array_get(names, i)) &&
		    strcmp(json_string_value(json_array_get(names, i)), name) == 0)
			return 1;
	return 0;
}

/* The array's type as the layout marks it: text arrays of object
 * references, struct fields holding references. */
static int mark_refs(nz__xtype *t, const json_t *dtype, const json_t *ref_fields, const char *path)
{
	size_t i, found = 0;
	if (json_is_string(dtype) && strcmp(json_string_value(dtype), "object_reference") == 0) {
		if (t->cls != NZ__XT_STRING)
			return nz__error_set(NZ_EFORMAT, "'%s': _DTYPE object_reference on an array "
					     "that does not hold text", path);
		t->cls = NZ__XT_REF;
	}
	if (!ref_fields)
		return 0;
	if (t->cls != NZ__XT_COMPOUND || !json_is_array(ref_fields))
		return nz__error_set(NZ_EFORMAT, "'%s': _REFERENCE_FIELDS on an array that is not a "
				     "struct, or not a list", path);
	for (i = 0; i < t->nfields; i++) {
		if (!field_listed(ref_fields, t->fields[i].name))
			continue;
		if (t->fields[i].type.cls != NZ__XT_STRING)
			return nz__error_set(NZ_EFORMAT, "'%s': reference field '%s' does not hold text",
					     path, t->fields[i].name);
		t->fields[i].type.cls = NZ__XT_REF;
		found++;
	}
	if (found != json_array_size(ref_fields))
		return nz__error_set(NZ_EFORMAT, "'%s': _REFERENCE_FIELDS names a field the struct "
				     "does not have", path);
	return 0;
}

static int array_node(nz__xnode *n, nz_hierarchy *h, nz_store *store, const char *spath)
{
	nz_array *a = NULL;
	int err, d;
	n->kind = NZ__X_DATASET;
	if ((err = nz__z_array_open(&a, h, store, spath)) < 0 ||
	    (err = nz__z_array_type(&n->type, a, NULL, n->path)) < 0 ||
	    (err = mark_refs(&n->type, json_object_get(n->attrs, "_DTYPE"),
			     json_object_get(n->attrs, "_REFERENCE_FIELDS"), n->path)) < 0)
		goto done;
	n->ndim = nz_array_ndim(a);
	n->scalar = n->ndim == 0;
	for (d = 0; d < n->ndim; d++) {
		n->shape[d] = nz_array_shape(a)[d];
		n->chunks[d] = nz_array_chunks(a)[d];
	}
	json_object_del(n->attrs, "_DTYPE");
	json_object_del(n->attrs, "_REFERENCE_FIELDS");
	json_object_del(n->attrs, "_ARRAY_DIMENSIONS");
done:
	nz_array_free(a);
	return err;
}

/* One node from its zarr.json document (or the consolidated copy of it). */
static int add_node(nz__xmodel *m, nz_hierarchy *h, nz_store *store, const char *spath,
		    const json_t *doc)
{
	const char *type = json_string_value(json_object_get(doc, "node_type"));
	const json_t *attrs = json_object_get(doc, "attributes");
	size_t len = strlen(spath);
	nz__xnode n;
	int err = 0;

	memset(&n, 0, sizeof n);
	if (!type || (strcmp(type, "group") != 0 && strcmp(type, "array") != 0) ||
	    (attrs && !json_is_object(attrs)))
		return nz__error_set(NZ_EFORMAT, "'/%s': zarr.json is not a v3 group or array", spath);
	if (!(n.path = nz__malloc(len + 2)) || !(n.attrs = attrs ? refs_to_model(attrs) : json_object())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	snprintf(n.path, len + 2, "/%s", spath);
	if (strcmp(type, "array") == 0) {
		if ((err = array_node(&n, h, store, spath)) < 0)
			goto done;
	} else {
		n.kind = NZ__X_GROUP;
		if ((err = nz__z_add_links(m, n.path, json_object_get(n.attrs, "_LINKS"))) < 0)
			goto done;
		json_object_del(n.attrs, "_LINKS");
		if (!len && (err = nz__z_fix_specloc(n.attrs)) < 0)
			goto done;
	}
	err = nz__xmodel_add(m, &n);
done:
	if (err < 0)
		nz__xnode_clear(&n);
	return err;
}

static int read_doc(json_t **out, nz_store *store, const char *key)
{
	void *buf = NULL;
	size_t len = 0;
	int err;
	*out = NULL;
	if ((err = nz_store_get(store, key, &buf, &len)) < 0)
		return err;
	err = nz__json_parse(out, buf, len, key, 0);
	nz__free(buf);
	return err;
}

struct docs {
	nz__xmodel *m;
	nz_hierarchy *h;
	nz_store *store;
};

/* Without consolidated metadata: every zarr.json of the store. */
static int key_cb(const char *key, void *payload)
{
	struct docs *d = payload;
	size_t len = strlen(key);
	json_t *doc = NULL;
	char *spath;
	int err;
	if (len < 9 || strcmp(key + len - 9, "zarr.json") != 0 || (len > 9 && key[len - 10] != '/'))
		return 0;
	if (len == 9) /* the root: added by nz__z_walk3 */
		return 0;
	if (!(spath = nz__strndup(key, len - 10)))
		return nz__error_set(NZ_ENOMEM, "out of memory listing the store");
	if ((err = read_doc(&doc, d->store, key)) == 0)
		err = add_node(d->m, d->h, d->store, spath, doc);
	json_decref(doc);
	nz__free(spath);
	return err;
}

int nz__z_walk3(nz__xmodel *out, nz_hierarchy *h, nz_store *store)
{
	struct docs d = { out, h, store };
	json_t *root = NULL, *members;
	const char *key;
	json_t *doc;
	int err;

	memset(out, 0, sizeof *out);
	if ((err = read_doc(&root, store, "zarr.json")) < 0 || (err = add_node(out, h, store, "", root)) < 0)
		goto done;
	/* The consolidated copy spares listing the store (an object store
	 * lists slowly); verify has checked it against the documents, and
	 * passes no hierarchy when they disagree. */
	members = h ? json_object_get(json_object_get(root, "consolidated_metadata"), "metadata") : NULL;
	if (json_is_object(members)) {
		json_object_foreach(members, key, doc)
			if ((err = add_node(out, h, store, key, doc)) < 0)
				goto done;
	} else if ((err = nz_store_list(store, "", key_cb, &d)) < 0) {
		goto done;
	}
	err = nz__z_unique_paths(out);
done:
	json_decref(root);
	if (err < 0)
		nz__xmodel_clear(out);
	return err;
}
