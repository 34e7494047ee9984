/* An NWB Zarr store (hdmf-zarr's conventions) read back into the neutral
 * model, and its dataset values in normalised form: the Zarr side of
 * verify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "export/zread.h"
#include "export/zwalk_impl.h"
#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

struct keys {
	char **v;
	size_t n, cap;
};

static int keys_add(struct keys *k, const char *key)
{
	if (k->n == k->cap) {
		size_t cap = k->cap ? 2 * k->cap : 64;
		char **p = nz__realloc(k->v, cap * sizeof *p);
		if (!p)
			return nz__error_set(NZ_ENOMEM, "out of memory listing the store");
		k->v = p;
		k->cap = cap;
	}
	if (!(k->v[k->n] = nz__strdup(key)))
		return nz__error_set(NZ_ENOMEM, "out of memory listing the store");
	k->n++;
	return 0;
}

static int key_cb(const char *key, void *payload)
{
	size_t len = strlen(key);
	if (!(len >= 7 && (strcmp(key + len - 7, ".zgroup") == 0 || strcmp(key + len - 7, ".zarray") == 0)))
		return 0;
	return keys_add(payload, key);
}

/* A node of the consolidated metadata, by the key of its document. */
static int member_cb(const char *path, int is_array, void *payload)
{
	char key[4096 + 9];
	snprintf(key, sizeof key, "%s/%s", path, is_array ? ".zarray" : ".zgroup");
	return keys_add(payload, key);
}

static int parse_simple(nz__xtype *t, const char *s)
{
	char kind;
	size_t size;
	if (strlen(s) < 3 || (s[0] != '<' && s[0] != '|'))
		return -1;
	kind = s[1];
	size = (size_t)strtoul(s + 2, NULL, 10);
	memset(t, 0, sizeof *t);
	t->size = size;
	switch (kind) {
	case 'i': t->cls = NZ__XT_INT; break;
	case 'u': t->cls = NZ__XT_UINT; break;
	case 'f': t->cls = NZ__XT_FLOAT; break;
	case 'b': t->cls = NZ__XT_BOOL; break;
	case 'S':
	case 'U': /* numpy's UTF-32 text, Zarr v3's fixed_length_utf32 */
		t->cls = NZ__XT_STRING;
		t->utf8 = kind == 'U';
		t->fixed_len = size;
		t->size = sizeof(char *);
		break;
	default: return -1;
	}
	return 0;
}

/* The type of a '|O' array from its codec and hdmf-zarr's zarr_dtype. */
static int object_type(nz__xtype *t, nz_object_codec codec, const json_t *zd, const char *path)
{
	size_t i, off = 0;
	memset(t, 0, sizeof *t);
	t->size = sizeof(char *);
	if (codec == NZ_OBJECT_VLEN_UTF8 || codec == NZ_OBJECT_VLEN_BYTES) {
		t->cls = NZ__XT_STRING;
		t->utf8 = codec == NZ_OBJECT_VLEN_UTF8;
		return 0;
	}
	if (json_is_string(zd) && strcmp(json_string_value(zd), "object") == 0) {
		t->cls = NZ__XT_REF;
		return 0;
	}
	if (!json_is_array(zd)) { /* json2 text, e.g. a cached spec document */
		t->cls = NZ__XT_STRING;
		t->utf8 = 1;
		return 0;
	}
	t->cls = NZ__XT_COMPOUND;
	if (!(t->fields = nz__calloc(json_array_size(zd) + 1, sizeof *t->fields)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	for (i = 0; i < json_array_size(zd); i++) {
		const json_t *f = json_array_get(zd, i);
		const char *name = json_string_value(json_object_get(f, "name"));
		const char *dt = json_string_value(json_object_get(f, "dtype"));
		nz__xtype *ft = &t->fields[i].type;
		char np[16];
		t->nfields = i + 1;
		if (!name || !dt || !(t->fields[i].name = nz__strdup(name)))
			return nz__error_set(NZ_EFORMAT, "'%s': bad compound zarr_dtype", path);
		if (strcmp(dt, "object") == 0 || strcmp(dt, "str") == 0 || strcmp(dt, "text") == 0 ||
		    strcmp(dt, "utf8") == 0 || strcmp(dt, "ascii") == 0 || strcmp(dt, "bytes") == 0) {
			ft->cls = dt[0] == 'o' ? NZ__XT_REF : NZ__XT_STRING;
			ft->size = sizeof(char *);
		} else {
			static const struct { const char *n, *np; } names[] = {
				{ "int8", "|i1" }, { "int16", "<i2" }, { "int32", "<i4" }, { "int64", "<i8" },
				{ "uint8", "|u1" }, { "uint16", "<u2" }, { "uint32", "<u4" }, { "uint64", "<u8" },
				{ "float32", "<f4" }, { "float64", "<f8" }, { "bool_", "|b1" }, { "bool", "|b1" },
			};
			size_t k;
			np[0] = '\0';
			for (k = 0; k < sizeof names / sizeof names[0]; k++)
				if (strcmp(dt, names[k].n) == 0)
					snprintf(np, sizeof np, "%s", names[k].np);
			if (parse_simple(ft, np) < 0)
				return nz__error_set(NZ_EUNSUPPORTED, "'%s': compound field '%s' has dtype '%s'",
						     path, name, dt);
		}
		t->fields[i].offset = off;
		off += ft->size;
	}
	t->size = off;
	return 0;
}

int nz__z_array_type(nz__xtype *t, nz_array *a, const json_t *zd, const char *path)
{
	const char *dt = nz_array_dtype(a);
	json_t *list = NULL;
	size_t i, off = 0;
	int err = 0;

	if (nz_array_object_codec(a) != NZ_OBJECT_NONE)
		return object_type(t, nz_array_object_codec(a), zd, path);
	if (dt[0] != '[') {
		if (dt[1] == 'U' || parse_simple(t, dt) < 0)
			return nz__error_set(NZ_EUNSUPPORTED, "'%s': dtype '%s' is not supported by verify", path, dt);
		return 0;
	}
	if ((err = nz__json_parse(&list, dt, strlen(dt), path, 0)) < 0)
		return err;
	memset(t, 0, sizeof *t);
	t->cls = NZ__XT_COMPOUND;
	if (!(t->fields = nz__calloc(json_array_size(list) + 1, sizeof *t->fields))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *f = json_array_get(list, i);
		const char *name = json_string_value(json_array_get(f, 0));
		const char *fdt = json_string_value(json_array_get(f, 1));
		t->nfields = i + 1;
		if (!name || !fdt || parse_simple(&t->fields[i].type, fdt) < 0 ||
		    !(t->fields[i].name = nz__strdup(name))) {
			err = nz__error_set(NZ_EUNSUPPORTED, "'%s': structured dtype %s is not supported", path, dt);
			goto done;
		}
		t->fields[i].offset = off;
		off += t->fields[i].type.size;
	}
	t->size = off;
done:
	json_decref(list);
	return err;
}

/* hdmf-zarr's root ".specloc" is the plain name of the specs group; the
 * model holds it as the reference HDF5 stores. */
int nz__z_fix_specloc(json_t *attrs)
{
	json_t *v = json_object_get(attrs, ".specloc");
	char path[1024];
	if (!json_is_string(v))
		return 0;
	snprintf(path, sizeof path, "/%s", json_string_value(v));
	v = json_pack("{s:o,s:s}", "value", nz__xref_dict(path, NULL, NULL), "zarr_dtype", "object");
	if (!v || json_object_set_new(attrs, ".specloc", v) < 0)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	return 0;
}

int nz__z_add_links(nz__xmodel *m, const char *group, const json_t *list)
{
	size_t i;
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *l = json_array_get(list, i);
		const char *name = json_string_value(json_object_get(l, "name"));
		const char *target = json_string_value(json_object_get(l, "path"));
		const char *source = json_string_value(json_object_get(l, "source"));
		nz__xnode n;
		char path[4096];
		memset(&n, 0, sizeof n);
		if (!name || !target)
			return nz__error_set(NZ_EFORMAT, "'%s': malformed zarr_link entry %zu", group, i);
		snprintf(path, sizeof path, "%s%s%s", group, strcmp(group, "/") ? "/" : "", name);
		n.kind = source && strcmp(source, ".") != 0 ? NZ__X_EXTLINK : NZ__X_SOFTLINK;
		n.path = nz__strdup(path);
		n.link_target = nz__strdup(target);
		n.link_file = n.kind == NZ__X_EXTLINK ? nz__strdup(source) : NULL;
		n.attrs = json_object();
		if (!n.path || !n.link_target || !n.attrs || (n.kind == NZ__X_EXTLINK && !n.link_file) ||
		    nz__xmodel_add(m, &n) < 0) {
			nz__xnode_clear(&n);
			return nz__error_set(NZ_ENOMEM, "out of memory");
		}
	}
	return 0;
}

int nz__z_array_open(nz_array **out, nz_hierarchy *h, nz_store *store, const char *path)
{
	return h ? nz_hierarchy_array_open(out, h, path) : nz_array_open(out, store, path);
}

static int add_node(nz__xmodel *m, nz_hierarchy *h, nz_store *store, const char *key)
{
	size_t len = strlen(key) - 7;
	int is_array = strcmp(key + len, ".zarray") == 0, err = 0, d;
	char *spath = nz__strndup(key, len ? len - 1 : 0), *text = NULL;
	nz_array *a = NULL;
	json_t *zd;
	nz__xnode n;

	memset(&n, 0, sizeof n);
	if (!spath || !(n.path = nz__malloc(len + 2))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	snprintf(n.path, len + 2, "/%s", spath);
	if ((err = h ? nz_hierarchy_attrs_read(&text, h, spath) : nz_attrs_read(&text, store, spath)) < 0 ||
	    (err = nz__json_parse(&n.attrs, text, strlen(text), key, 0)) < 0)
		goto done;
	if (!is_array) {
		n.kind = NZ__X_GROUP;
		if ((err = nz__z_add_links(m, n.path, json_object_get(n.attrs, "zarr_link"))) < 0)
			goto done;
		json_object_del(n.attrs, "zarr_link");
		if (strcmp(n.path, "/") == 0 && (err = nz__z_fix_specloc(n.attrs)) < 0)
			goto done;
	} else {
		n.kind = NZ__X_DATASET;
		if ((err = nz__z_array_open(&a, h, store, spath)) < 0)
			goto done;
		zd = json_object_get(n.attrs, "zarr_dtype");
		if ((err = nz__z_array_type(&n.type, a, zd, n.path)) < 0)
			goto done;
		n.ndim = nz_array_ndim(a);
		for (d = 0; d < n.ndim; d++) {
			n.shape[d] = nz_array_shape(a)[d];
			n.chunks[d] = nz_array_chunks(a)[d];
		}
		if (json_is_string(zd) && strcmp(json_string_value(zd), "scalar") == 0 && n.ndim == 1 &&
		    n.shape[0] == 1) {
			n.scalar = 1;
			n.ndim = 0;
		}
		json_object_del(n.attrs, "zarr_dtype");
		/* xarray's dimension names, which hdmf-zarr 0.13 adds to every
		 * array: Zarr bookkeeping, not an NWB attribute. */
		json_object_del(n.attrs, "_ARRAY_DIMENSIONS");
	}
	err = nz__xmodel_add(m, &n);
done:
	if (err < 0)
		nz__xnode_clear(&n);
	nz_array_free(a);
	nz__free(spath);
	nz__free(text);
	return err;
}

/* Sorts the model; a zarr_link named like a child of its group (or any two
 * objects at one path) would make every lookup of that path ambiguous. */
int nz__z_unique_paths(nz__xmodel *m)
{
	nz__xmodel_sort(m);
	for (size_t i = 1; i < m->count; i++)
		if (strcmp(m->nodes[i - 1].path, m->nodes[i].path) == 0)
			return nz__error_set(NZ_EFORMAT, "two objects at '%s' (a zarr_link named like a "
					     "group or array beside it)", m->nodes[i].path);
	return 0;
}

int nz__z_walk(nz__xmodel *out, nz_hierarchy *h, nz_store *store)
{
	struct keys k = { 0 };
	size_t i;
	int err = 0;

	memset(out, 0, sizeof *out);
	if ((err = nz_store_zarr_format(store)) < 0)
		goto done;
	if (err == 3) {
		err = nz__z_walk3(out, h, store);
		goto done;
	}
	if (h && nz_hierarchy_consolidated(h)) {
		/* .zmetadata names every node but the root, as readers see them:
		 * no listing. */
		if ((err = nz_store_exists(store, ".zgroup")) > 0)
			err = keys_add(&k, ".zgroup");
		if (err >= 0)
			err = nz_hierarchy_members(h, member_cb, &k);
	} else {
		err = nz_store_list(store, "", key_cb, &k);
	}
	if (err < 0)
		goto done;
	for (i = 0; i < k.n && !err; i++)
		err = add_node(out, h, store, k.v[i]);
	if (!err && !k.n)
		err = nz__error_set(NZ_EFORMAT, "'%s' holds no Zarr group", nz_store_describe(store));
	if (!err)
		err = nz__z_unique_paths(out);
done:
	for (i = 0; i < k.n; i++)
		nz__free(k.v[i]);
	nz__free(k.v);
	if (err < 0) {
		nz__xmodel_clear(out);
		return nz__error_wrap("'%s'", nz_store_describe(store));
	}
	return 0;
}
