/* hdmf-zarr 0.14's Zarr v3 layout of what callers describe in the 0.6
 * (v2) form. Callers keep building attributes the v2 way (zarr_link lists,
 * {"value": ref, "zarr_dtype": "object"} references, zarr_dtype); this file
 * turns them into what hdmf-zarr 0.14's ZarrIO writes (backend.py:
 * __add_link__, write_attributes, __list_fill__, __scalar_fill__), so a
 * writer needs no knowledge of the format. See hdmf.h. */
#include <string.h>

#include "hdmf/hdmf3.h"
#include "util/error.h"

static int oom(const char *path)
{
	return nz__error_set(NZ_ENOMEM, "out of memory building the attributes of '/%s'", path);
}

/* A v2 reference attribute: {"value": {..., "path": ...}, "zarr_dtype": "object"}. */
static const json_t *ref_value(const json_t *v)
{
	const json_t *zd = json_object_get(v, "zarr_dtype"), *ref = json_object_get(v, "value");
	if (!json_is_object(v) || json_object_size(v) != 2 || !json_is_string(zd) ||
	    strcmp(json_string_value(zd), "object") != 0 || !json_is_object(ref))
		return NULL;
	return ref;
}

/* {"source": s, "path": p} of a v2 reference or link entry. */
static int source_path(json_t **out, const json_t *ref, const char *what, const char *path)
{
	const json_t *s = json_object_get(ref, "source"), *p = json_object_get(ref, "path");
	*out = NULL;
	if (!json_is_string(s) || !json_is_string(p))
		return nz__error_set(NZ_EINVAL, "%s of '/%s' has no text 'source' and 'path'", what, path);
	if (!(*out = json_pack("{s:O,s:O}", "source", s, "path", p)))
		return oom(path);
	return 0;
}

/* _LINKS: [{source, path, name}] from zarr_link: [{name, path, source}]. */
static int links3(json_t *out, const json_t *links, const char *path)
{
	json_t *l = json_array(), *e = NULL;
	const json_t *item;
	size_t i;
	int err = 0;
	if (!l || json_object_set_new(out, "_LINKS", l) != 0)
		return oom(path);
	if (!json_is_array(links))
		return nz__error_set(NZ_EINVAL, "zarr_link of '/%s' is not a list", path);
	json_array_foreach(links, i, item) {
		const json_t *name = json_object_get(item, "name");
		if (!json_is_string(name))
			return nz__error_set(NZ_EINVAL, "a link of '/%s' has no text 'name'", path);
		if ((err = source_path(&e, item, "a link", path)) < 0)
			return err;
		if (json_object_set(e, "name", (json_t *)name) != 0) {
			json_decref(e);
			return oom(path);
		}
		if (json_array_append_new(l, e) != 0)
			return oom(path);
	}
	return 0;
}

int nz__hdmf3_attrs(json_t **out, const json_t *attrs, const char *path)
{
	json_t *o = json_object(), *v = NULL;
	const json_t *links = json_object_get(attrs, "zarr_link"), *val, *ref;
	const char *key;
	int err = 0;

	*out = NULL;
	if (!o)
		return oom(path);
	/* hdmf-zarr writes a group's links before its attributes. */
	if (links && (err = links3(o, links, path)) < 0)
		goto done;
	json_object_foreach((json_t *)attrs, key, val) {
		if (strcmp(key, "zarr_link") == 0 || strcmp(key, "zarr_dtype") == 0)
			continue;
		if ((ref = ref_value(val))) {
			if ((err = source_path(&v, ref, "a reference attribute", path)) < 0)
				goto done;
			if (!(v = json_pack("{s:o}", "_REFERENCE", v))) {
				err = oom(path);
				goto done;
			}
		} else {
			v = json_incref((json_t *)val);
		}
		if (json_object_set_new(o, key, v) != 0) {
			err = oom(path);
			goto done;
		}
	}
	*out = o;
	o = NULL;
done:
	json_decref(o);
	return err;
}

const char *nz__hdmf3_dtype(const nz__hdmf_dset *d)
{
	const char *name;
	if (d->object_codec == NZ_OBJECT_JSON2 || (d->zarr_dtype && strcmp(d->zarr_dtype, "object") == 0))
		return "object_reference";
	if (d->object_codec != NZ_OBJECT_NONE)
		return "str"; /* numpy's StringDType holds text and bytes alike */
	if (strcmp(d->dtype, "|b1") == 0)
		return "bool"; /* numpy 2's np.bool_.__name__ */
	if ((name = nz__hdmf_dtype_name(d->dtype)))
		return name;
	if (d->dtype[0] == '[')
		return NULL; /* compound: the v3 data_type describes it */
	return d->zarr_dtype;
}

int nz__hdmf3_dset_attrs(json_t **out, nz__hdmf *h, const char *path, const nz__hdmf_dset *d, int ndim)
{
	const char *dt = nz__hdmf3_dtype(d);
	json_t *o = json_object(), *rest = NULL, *dims = NULL;
	const char *key;
	json_t *val;
	int err = 0;

	*out = NULL;
	if (!o || (dt && json_object_set_new(o, "_DTYPE", json_string(dt)) != 0)) {
		err = oom(path);
		goto done;
	}
	if (d->attrs) {
		if ((err = nz__hdmf3_attrs(&rest, d->attrs, path)) < 0)
			goto done;
		json_object_foreach(rest, key, val)
			if (json_object_set(o, key, val) != 0) {
				err = oom(path);
				goto done;
			}
	}
	if (d->type && (err = nz__hdmf_set_type(o, h, d->ns, d->type, d->oid, d->oid_out)) < 0)
		goto done;
	if (d->dims && ndim > 0) {
		if (!(dims = json_array()) || json_object_set_new(o, "_ARRAY_DIMENSIONS", dims) != 0) {
			err = oom(path);
			goto done;
		}
		for (int i = 0; i < ndim; i++)
			if (json_array_append_new(dims, json_string(d->dims[i])) != 0) {
				err = oom(path);
				goto done;
			}
	}
	*out = o;
	o = NULL;
done:
	json_decref(rest);
	json_decref(o);
	return err;
}
