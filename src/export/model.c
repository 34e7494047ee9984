#include "export/model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/alloc.h"
#include "util/error.h"
#include "util/json.h"

void nz__xtype_clear(nz__xtype *t)
{
	size_t i;
	if (!t)
		return;
	for (i = 0; i < t->nfields; i++) {
		nz__free(t->fields[i].name);
		nz__xtype_clear(&t->fields[i].type);
	}
	nz__free(t->fields);
	memset(t, 0, sizeof *t);
}

int nz__xtype_copy(nz__xtype *dst, const nz__xtype *src)
{
	size_t i;
	*dst = *src;
	dst->fields = NULL;
	dst->nfields = 0;
	if (!src->nfields)
		return 0;
	dst->fields = nz__calloc(src->nfields, sizeof *dst->fields);
	if (!dst->fields)
		return nz__error_set(NZ_ENOMEM, "out of memory copying a compound type");
	dst->nfields = src->nfields;
	for (i = 0; i < src->nfields; i++) {
		dst->fields[i].offset = src->fields[i].offset;
		dst->fields[i].name = nz__strdup(src->fields[i].name);
		if (!dst->fields[i].name || nz__xtype_copy(&dst->fields[i].type, &src->fields[i].type) < 0) {
			nz__xtype_clear(dst);
			return nz__error_set(NZ_ENOMEM, "out of memory copying a compound type");
		}
	}
	return 0;
}

int nz__xtype_has_pointers(const nz__xtype *t)
{
	size_t i;
	if (t->cls == NZ__XT_STRING || t->cls == NZ__XT_REF)
		return 1;
	for (i = 0; i < t->nfields; i++)
		if (nz__xtype_has_pointers(&t->fields[i].type))
			return 1;
	return 0;
}

static int simple_numpy(char *buf, size_t cap, const nz__xtype *t)
{
	char kind;
	switch (t->cls) {
	case NZ__XT_INT: kind = 'i'; break;
	case NZ__XT_UINT: kind = 'u'; break;
	case NZ__XT_FLOAT: kind = 'f'; break;
	case NZ__XT_BOOL: snprintf(buf, cap, "|b1"); return 0;
	default: return -1;
	}
	snprintf(buf, cap, "%c%c%zu", t->size == 1 ? '|' : '<', kind, t->size);
	return 0;
}

int nz__xtype_numpy(char **out, const nz__xtype *t)
{
	char tmp[16];
	json_t *list = NULL;
	size_t i;
	int err = 0;

	*out = NULL;
	if (t->cls != NZ__XT_COMPOUND) {
		if (simple_numpy(tmp, sizeof tmp, t) < 0)
			return 0;
		*out = nz__strdup(tmp);
		return *out ? 0 : nz__error_set(NZ_ENOMEM, "out of memory");
	}
	if (nz__xtype_has_pointers(t))
		return 0;
	if (!(list = json_array()))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	for (i = 0; i < t->nfields; i++) {
		if (simple_numpy(tmp, sizeof tmp, &t->fields[i].type) < 0 ||
		    json_array_append_new(list, json_pack("[ss]", t->fields[i].name, tmp)) < 0) {
			err = nz__error_set(NZ_EUNSUPPORTED, "compound field '%s' has no numpy form",
					    t->fields[i].name);
			goto done;
		}
	}
	err = nz__json_dumps(out, list, NZ_JSON_COMPACT);
done:
	json_decref(list);
	return err;
}

const char *nz__xtype_zarr_name(const nz__xtype *t)
{
	static const char *ints[] = { "int8", "int16", "int32", "int64" };
	static const char *uints[] = { "uint8", "uint16", "uint32", "uint64" };
	int lg = t->size == 1 ? 0 : t->size == 2 ? 1 : t->size == 4 ? 2 : 3;
	switch (t->cls) {
	case NZ__XT_INT: return ints[lg];
	case NZ__XT_UINT: return uints[lg];
	case NZ__XT_FLOAT: return t->size == 4 ? "float32" : t->size == 2 ? "float16" : "float64";
	case NZ__XT_BOOL: return "bool_";
	case NZ__XT_STRING: return "object_";
	case NZ__XT_REF: return "object";
	default: return "compound";
	}
}

const char *nz__xtype_describe(const nz__xtype *t)
{
	if (t->cls == NZ__XT_STRING)
		return t->utf8 ? "utf8 string" : "ascii string";
	if (t->cls == NZ__XT_REF)
		return "object reference";
	return nz__xtype_zarr_name(t);
}

int nz__xmodel_add(nz__xmodel *m, const nz__xnode *node)
{
	if (m->count == m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 64;
		nz__xnode *p = nz__realloc(m->nodes, cap * sizeof *p);
		if (!p)
			return nz__error_set(NZ_ENOMEM, "out of memory adding '%s'", node->path);
		m->nodes = p;
		m->cap = cap;
	}
	m->nodes[m->count++] = *node;
	return 0;
}

static int cmp_node(const void *a, const void *b)
{
	return strcmp(((const nz__xnode *)a)->path, ((const nz__xnode *)b)->path);
}

void nz__xmodel_sort(nz__xmodel *m)
{
	if (m->count)
		qsort(m->nodes, m->count, sizeof *m->nodes, cmp_node);
}

const nz__xnode *nz__xmodel_find(const nz__xmodel *m, const char *path)
{
	nz__xnode key;
	if (!m->count)
		return NULL;
	key.path = (char *)path;
	return bsearch(&key, m->nodes, m->count, sizeof *m->nodes, cmp_node);
}

int nz__xmodel_check_nwb(const nz__xmodel *m, const char *file)
{
	const nz__xnode *root = nz__xmodel_find(m, "/");
	if (!root || !json_is_string(json_object_get(root->attrs, "nwb_version")))
		return nz__error_set(NZ_EFORMAT, "'%s' is not an NWB file: its root has no "
				     "nwb_version attribute", file);
	return nz__xmodel_check_links(m, file);
}

int nz__xmodel_check_links(const nz__xmodel *m, const char *file)
{
	for (size_t i = 0; i < m->count; i++) {
		const nz__xnode *n = &m->nodes[i], *t = n;
		size_t steps = 0;
		if (n->kind != NZ__X_SOFTLINK)
			continue;
		/* follow a chain of links: it must end at a group or dataset */
		while (t && t->kind == NZ__X_SOFTLINK && steps++ <= m->count)
			t = nz__xmodel_find(m, t->link_target);
		if (!t)
			return nz__error_set(NZ_EFORMAT, "'%s': link '%s' leads to '%s', which does not "
					     "exist", file, n->path, n->link_target);
		if (t->kind == NZ__X_SOFTLINK)
			return nz__error_set(NZ_EFORMAT, "'%s': link '%s' leads round a circle of links",
					     file, n->path);
	}
	return 0;
}

void nz__xnode_clear(nz__xnode *n)
{
	nz__free(n->path);
	nz__free(n->link_target);
	nz__free(n->link_file);
	nz__xtype_clear(&n->type);
	json_decref(n->attrs);
	memset(n, 0, sizeof *n);
}

void nz__xmodel_clear(nz__xmodel *m)
{
	size_t i;
	for (i = 0; i < m->count; i++)
		nz__xnode_clear(&m->nodes[i]);
	nz__free(m->nodes);
	for (i = 0; i < m->nfiles; i++)
		nz__free(m->files[i]);
	nz__free(m->files);
	for (i = 0; i < m->ngrafts; i++) {
		nz__free(m->grafts[i].from);
		nz__free(m->grafts[i].to);
	}
	nz__free(m->grafts);
	memset(m, 0, sizeof *m);
}

int nz__xnode_count(uint64_t *out, const nz__xnode *n, const uint64_t *count)
{
	uint64_t total = 1;
	int d;
	for (d = 0; d < n->ndim; d++) {
		if (count[d] && total > UINT64_MAX / count[d])
			return nz__error_set(NZ_EFORMAT, "'%s': element count overflows", n->path);
		total *= count[d];
	}
	*out = total;
	return 0;
}

static void free_elem(const nz__xtype *t, unsigned char *p)
{
	size_t i;
	if (t->cls == NZ__XT_STRING || t->cls == NZ__XT_REF) {
		char *s;
		memcpy(&s, p, sizeof s);
		nz__free(s);
		memset(p, 0, sizeof s);
		return;
	}
	for (i = 0; i < t->nfields; i++)
		free_elem(&t->fields[i].type, p + t->fields[i].offset);
}

void nz__xvalues_free(const nz__xtype *t, void *buf, size_t n)
{
	size_t i;
	if (!buf || !nz__xtype_has_pointers(t))
		return;
	for (i = 0; i < n; i++)
		free_elem(t, (unsigned char *)buf + i * t->size);
}

static json_t *str_or_null(const char *s)
{
	return s ? json_string(s) : json_null();
}

json_t *nz__xref_dict(const char *path, const char *oid, const char *root_oid)
{
	return json_pack("{s:o,s:s,s:s,s:o}", "object_id", str_or_null(oid), "path", path, "source",
			 ".", "source_object_id", str_or_null(root_oid));
}

static json_t *ref_json(const char *path, const nz__xjson_ctx *c, int wrap)
{
	char *oid = c->oid ? c->oid(c->ctx, path) : NULL;
	json_t *v = nz__xref_dict(path, oid, c->root_oid);
	nz__free(oid);
	if (!v || !wrap)
		return v;
	return json_pack("{s:o,s:s}", "value", v, "zarr_dtype", "object");
}

json_t *nz__xelem_json(const nz__xtype *t, const void *vp, const nz__xjson_ctx *c, int wrap_ref)
{
	const unsigned char *p = vp;
	switch (t->cls) {
	case NZ__XT_INT: {
		int64_t v = 0;
		if (t->size == 1) { int8_t x; memcpy(&x, p, 1); v = x; }
		else if (t->size == 2) { int16_t x; memcpy(&x, p, 2); v = x; }
		else if (t->size == 4) { int32_t x; memcpy(&x, p, 4); v = x; }
		else memcpy(&v, p, 8);
		return json_integer(v);
	}
	case NZ__XT_UINT: {
		uint64_t v = 0;
		if (t->size == 1) v = p[0];
		else if (t->size == 2) { uint16_t x; memcpy(&x, p, 2); v = x; }
		else if (t->size == 4) { uint32_t x; memcpy(&x, p, 4); v = x; }
		else memcpy(&v, p, 8);
		return v > (uint64_t)INT64_MAX ? json_real((double)v) : json_integer((json_int_t)v);
	}
	case NZ__XT_FLOAT: {
		double v;
		if (t->size == 4) { float x; memcpy(&x, p, 4); v = x; }
		else memcpy(&v, p, 8);
		return nz__json_nonfinite(v);
	}
	case NZ__XT_BOOL:
		return json_boolean(p[0] != 0);
	case NZ__XT_STRING: {
		const char *s;
		memcpy(&s, p, sizeof s);
		return json_string(s);
	}
	case NZ__XT_REF: {
		const char *s;
		memcpy(&s, p, sizeof s);
		return ref_json(s, c, wrap_ref);
	}
	case NZ__XT_COMPOUND: {
		json_t *o = c->compound_as_list ? json_array() : json_object();
		size_t i;
		for (i = 0; o && i < t->nfields; i++) {
			json_t *f = nz__xelem_json(&t->fields[i].type, p + t->fields[i].offset, c, 0);
			int bad = !f || (c->compound_as_list ? json_array_append_new(o, f)
							     : json_object_set_new(o, t->fields[i].name, f)) < 0;
			if (bad) {
				json_decref(o);
				return NULL;
			}
		}
		return o;
	}
	}
	return NULL;
}


static const char *canonical(const nz__xmodel *m, const char *path)
{
	const nz__xnode *n = nz__xmodel_find(m, path);
	return n && n->hard_alias ? n->link_target : NULL;
}

/* The model path a reference to `path` names, for a node of graft
 * `origin` (a copied node's references name objects of its own file):
 * *out a new string, or NULL when `path` stands as it is. */
static int ref_target(char **out, const nz__xmodel *m, size_t origin, const char *path)
{
	char *placed = NULL;
	const char *to;
	int err;
	*out = NULL;
	if (origin && (err = nz__xmodel_place(&placed, m, origin, path)) < 0)
		return err;
	if (!(to = canonical(m, placed ? placed : path))) {
		*out = placed;
		return 0;
	}
	nz__free(placed);
	return (*out = nz__strdup(to)) ? 0 : nz__error_set(NZ_ENOMEM, "out of memory");
}

static int canon_elem(const nz__xmodel *m, size_t origin, const nz__xtype *t, unsigned char *p)
{
	size_t i;
	int err;
	if (t->cls == NZ__XT_REF) {
		char *s, *c;
		memcpy(&s, p, sizeof s);
		if (!s)
			return 0;
		if ((err = ref_target(&c, m, origin, s)) < 0 || !c)
			return err;
		nz__free(s);
		memcpy(p, &c, sizeof c);
		return 0;
	}
	for (i = 0; i < t->nfields; i++)
		if ((err = canon_elem(m, origin, &t->fields[i].type, p + t->fields[i].offset)) < 0)
			return err;
	return 0;
}
int nz__xvalues_canon(const nz__xmodel *m, const nz__xnode *node, void *buf, size_t n)
{
	const nz__xtype *t = &node->type;
	size_t i;
	int err;
	if (!nz__xtype_has_pointers(t))
		return 0;
	for (i = 0; i < n; i++)
		if ((err = canon_elem(m, node->origin, t, (unsigned char *)buf + i * t->size)) < 0)
			return nz__error_wrap("'%s'", node->path);
	return 0;
}
/* A reference attribute of node `n`: its path placed (copied nodes name
 * objects of their own file, whose root is no longer theirs) and canonical. */
static int canon_ref(const nz__xmodel *m, const nz__xnode *n, json_t *ref, const json_t *root_oid)
{
	const char *path = json_string_value(json_object_get(ref, "path"));
	char *to = NULL;
	int err;
	if (!path)
		return 0;
	if ((err = ref_target(&to, m, n->origin, path)) < 0)
		return nz__error_wrap("'%s' attribute", n->path);
	if (n->origin && json_object_get(ref, "source_object_id") &&
	    json_object_set_new(ref, "source_object_id", root_oid ? json_copy((json_t *)root_oid) : json_null()) < 0)
		err = nz__error_set(NZ_ENOMEM, "out of memory");
	if (!err && to && json_object_set_new(ref, "path", json_string(to)) < 0)
		err = nz__error_set(NZ_ENOMEM, "out of memory");
	nz__free(to);
	return err;
}
static int canon_json(const nz__xmodel *m, const nz__xnode *n, json_t *v, const json_t *root_oid)
{
	json_t *zd = json_object_get(v, "zarr_dtype"), *item;
	const char *k;
	size_t i;
	int err = 0;
	if (json_is_string(zd) && strcmp(json_string_value(zd), "object") == 0)
		return canon_ref(m, n, json_object_get(v, "value"), root_oid);
	/* the elements of a list of references are bare reference dicts */
	if (json_is_string(json_object_get(v, "path")) && json_object_get(v, "source_object_id"))
		return canon_ref(m, n, v, root_oid);
	if (json_is_array(v))
		json_array_foreach(v, i, item)
			if ((err = canon_json(m, n, item, root_oid)) < 0)
				return err;
	if (json_is_object(v))
		json_object_foreach(v, k, item)
			if ((err = canon_json(m, n, item, root_oid)) < 0)
				return err;
	return 0;
}
int nz__xmodel_canon_attrs(nz__xmodel *m)
{
	const nz__xnode *root = nz__xmodel_find(m, "/");
	const json_t *oid = root ? json_object_get(root->attrs, "object_id") : NULL;
	size_t i;
	int err;
	for (i = 0; i < m->count; i++)
		if ((err = canon_json(m, &m->nodes[i], m->nodes[i].attrs, oid)) < 0)
			return err;
	return 0;
}
