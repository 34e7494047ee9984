/* Opening an HDF5 file and walking it into the neutral model. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/h5.h"
#include "util/alloc.h"
#include "util/json.h"

int nz__h5_open(nz__h5file **out, const char *path)
{
	nz__h5file *f = NULL;
	struct stat st;
	htri_t is;
	int err = 0;

	*out = NULL;
	if (access(path, R_OK) != 0 || stat(path, &st) != 0)
		return nz__error_errno(errno, "cannot open HDF5 file", path);
	/* libhdf5 seeks and would block for ever on a FIFO (a directory falls
	 * through to the "not an HDF5 file" message below). */
	if (!S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode))
		return nz__error_set(NZ_EINVAL, "'%s' is not a regular file: an HDF5 file must be "
				     "seekable (not a FIFO, socket or device)", path);
	if (!(f = nz__calloc(1, sizeof *f)) || !(f->path = nz__strdup(path))) {
		nz__free(f);
		return nz__error_set(NZ_ENOMEM, "out of memory opening '%s'", path);
	}
	f->fid = -1;
	nz__h5_lock();
	/* libhdf5 prints its error stack by default; we report it ourselves. */
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	is = H5Fis_hdf5(path);
	if (is <= 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s' is not an HDF5 file (or is truncated or corrupt)", path);
	} else if ((f->fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "cannot open HDF5 file '%s' (truncated or corrupt?)", path);
	}
	nz__h5_unlock();
	if (err < 0) {
		nz__h5_close(f);
		return err;
	}
	*out = f;
	return 0;
}

void nz__h5_close(nz__h5file *f)
{
	if (!f)
		return;
	if (f->fid >= 0) {
		nz__h5_lock();
		H5Fclose(f->fid);
		nz__h5_unlock();
	}
	nz__free(f->path);
	nz__free(f);
}

struct seen {
	haddr_t addr;
	char *path;
};

struct walk {
	nz__h5file *f;
	nz__xmodel *m;
	char *root_oid;
	struct seen *seen;
	size_t nseen, capseen;
	const char *path; /* of the object whose attributes/children are visited */
	json_t *attrs;
	int err;
};

static char *join(const char *parent, const char *name)
{
	size_t a = strlen(parent), b = strlen(name);
	char *p = nz__malloc(a + b + 2);
	if (!p)
		return NULL;
	memcpy(p, parent, a);
	if (a == 0 || parent[a - 1] != '/')
		p[a++] = '/';
	memcpy(p + a, name, b + 1);
	return p;
}

NZ__H5_HELD static herr_t attr_cb(hid_t obj, const char *name, const H5A_info_t *info, void *payload)
{
	struct walk *w = payload;
	char what[1024];
	json_t *v = NULL;
	hid_t a;

	snprintf(what, sizeof what, "'%s' attribute '%s'", w->path, name);
	if ((a = H5Aopen(obj, name, H5P_DEFAULT)) < 0) {
		w->err = nz__h5_error(NZ_EFORMAT, "%s: cannot open", what);
		return -1;
	}
	w->err = nz__h5_attr_json(&v, a, w->f->fid, w->root_oid, what);
	H5Aclose(a);
	if (w->err < 0)
		return -1;
	if (json_object_set_new(w->attrs, name, v) < 0) {
		w->err = nz__error_set(NZ_ENOMEM, "%s: out of memory", what);
		return -1;
	}
	return 0;
}

NZ__H5_HELD static int read_attrs(struct walk *w, hid_t obj, nz__xnode *node)
{
	const char *saved = w->path;
	hsize_t idx = 0;
	w->path = node->path;
	w->attrs = node->attrs;
	w->err = 0;
	if (H5Aiterate2(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, attr_cb, w) < 0 && w->err == 0)
		w->err = nz__h5_error(NZ_EFORMAT, "'%s': cannot list attributes", node->path);
	w->path = saved;
	return w->err;
}

/* Export and verify visit every element: a dataset whose shape claims far
 * more than the file stores (no compressor packs a million to one; only
 * unwritten chunks read as fill values do) is a hostile or broken file, and
 * would keep both busy for days. Refused before anything is written. */
#define PLAUSIBLE_MIN_BYTES ((uint64_t)1 << 30)
#define PLAUSIBLE_RATIO_LOG2 20

NZ__H5_HELD static int plausible_size(const nz__xnode *node, hid_t d)
{
	hid_t ft = H5Dget_type(d);
	uint64_t bytes = ft >= 0 ? H5Tget_size(ft) : 0, stored = H5Dget_storage_size(d);
	int i, over = 0;
	if (ft >= 0)
		H5Tclose(ft);
	for (i = 0; i < node->ndim; i++) {
		if (node->shape[i] && bytes > UINT64_MAX / node->shape[i])
			over = 1;
		else
			bytes *= node->shape[i];
	}
	if (over)
		return nz__error_set(NZ_EFORMAT, "'%s': its shape asks for more than 2^64 bytes (an "
				     "absurd shape?)", node->path);
	if (bytes > PLAUSIBLE_MIN_BYTES && stored < bytes >> PLAUSIBLE_RATIO_LOG2)
		return nz__error_set(NZ_EFORMAT, "'%s': its shape asks for %" PRIu64 " bytes but the "
				     "file stores %" PRIu64 " of them (an absurd shape?)", node->path,
				     bytes, stored);
	return 0;
}

NZ__H5_HELD static int dataset_shape(nz__xnode *node, hid_t d)
{
	hid_t space = H5Dget_space(d), dcpl = H5Dget_create_plist(d);
	hsize_t dims[NZ_MAX_DIMS], ch[NZ_MAX_DIMS];
	int ndim, i, err = 0;

	ndim = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
	if (ndim < 0 || ndim > NZ_MAX_DIMS) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': unreadable dataspace", node->path);
		goto done;
	}
	if (H5Sget_simple_extent_type(space) == H5S_NULL) {
		err = nz__error_set(NZ_EUNSUPPORTED, "'%s': a null dataspace cannot be exported", node->path);
		goto done;
	}
	H5Sget_simple_extent_dims(space, dims, NULL);
	node->scalar = ndim == 0;
	node->ndim = ndim;
	for (i = 0; i < ndim; i++)
		node->shape[i] = dims[i];
	if (dcpl >= 0 && H5Pget_layout(dcpl) == H5D_CHUNKED && H5Pget_chunk(dcpl, ndim, ch) == ndim)
		for (i = 0; i < ndim; i++)
			node->chunks[i] = ch[i];
	err = plausible_size(node, d);
done:
	if (space >= 0)
		H5Sclose(space);
	if (dcpl >= 0)
		H5Pclose(dcpl);
	return err;
}

/* A dataset's kind, shape, chunks and normalised type (node->path set). */
NZ__H5_HELD static int dataset_node(nz__xnode *node, hid_t obj)
{
	hid_t ft;
	nz__h5conv c;
	char what[1024];
	int err;

	node->kind = NZ__X_DATASET;
	snprintf(what, sizeof what, "'%s'", node->path);
	if ((err = dataset_shape(node, obj)) < 0)
		return err;
	if ((ft = H5Dget_type(obj)) < 0)
		return nz__h5_error(NZ_EFORMAT, "%s: unreadable datatype", what);
	err = nz__h5conv_init(&c, ft, what);
	H5Tclose(ft);
	if (!err)
		err = nz__xtype_copy(&node->type, &c.type);
	nz__h5conv_clear(&c);
	return err;
}

NZ__H5_HELD static int visit(struct walk *w, hid_t loc, const char *name, char *path);

NZ__H5_HELD static herr_t link_cb(hid_t g, const char *name, const H5L_info_t *info, void *payload)
{
	struct walk *w = payload;
	char *path = join(w->path, name);
	if (!path) {
		w->err = nz__error_set(NZ_ENOMEM, "out of memory walking '%s'", w->path);
		return -1;
	}
	w->err = visit(w, g, name, path);
	return w->err < 0 ? -1 : 0;
}

NZ__H5_HELD static int add_link(struct walk *w, nz__xnode *node, hid_t loc, const char *name, H5L_type_t type)
{
	H5L_info_t li;
	char *val = NULL;
	const char *file = NULL, *obj = NULL;
	unsigned flags;
	int err = 0;

	if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0 || !(val = nz__malloc(li.u.val_size + 1)) ||
	    H5Lget_val(loc, name, val, li.u.val_size + 1, H5P_DEFAULT) < 0) {
		err = val ? nz__h5_error(NZ_EFORMAT, "'%s': unreadable link", node->path)
			  : nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	if (type == H5L_TYPE_SOFT) {
		node->kind = NZ__X_SOFTLINK;
		node->link_target = nz__strdup(val);
	} else {
		if (H5Lunpack_elink_val(val, li.u.val_size, &flags, &file, &obj) < 0) {
			err = nz__h5_error(NZ_EFORMAT, "'%s': unreadable external link", node->path);
			goto done;
		}
		node->kind = NZ__X_EXTLINK;
		node->link_target = nz__strdup(obj);
		node->link_file = nz__strdup(file);
		if (!node->link_file)
			err = nz__error_set(NZ_ENOMEM, "out of memory");
	}
	if (!node->link_target)
		err = nz__error_set(NZ_ENOMEM, "out of memory");
done:
	nz__free(val);
	return err;
}

static int remember(struct walk *w, haddr_t addr, const char *path)
{
	if (w->nseen == w->capseen) {
		size_t cap = w->capseen ? w->capseen * 2 : 64;
		struct seen *p = nz__realloc(w->seen, cap * sizeof *p);
		if (!p)
			return nz__error_set(NZ_ENOMEM, "out of memory");
		w->seen = p;
		w->capseen = cap;
	}
	w->seen[w->nseen].addr = addr;
	if (!(w->seen[w->nseen].path = nz__strdup(path)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	w->nseen++;
	return 0;
}

/* Takes ownership of `path`. A second hard link to an object already visited
 * becomes a soft link to its first path: Zarr has no hard links. */
NZ__H5_HELD static int visit(struct walk *w, hid_t loc, const char *name, char *path)
{
	nz__xnode node;
	H5L_info_t li;
	H5O_info_t oi;
	hid_t obj = -1;
	size_t i;
	int err = 0, added = 0;

	memset(&node, 0, sizeof node);
	node.path = path;
	if (!(node.attrs = json_object())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	if (strcmp(name, ".") != 0) {
		if (H5Lget_info(loc, name, &li, H5P_DEFAULT) < 0) {
			err = nz__h5_error(NZ_EFORMAT, "'%s': unreadable link", path);
			goto done;
		}
		if (li.type == H5L_TYPE_SOFT || li.type == H5L_TYPE_EXTERNAL) {
			err = add_link(w, &node, loc, name, li.type);
			goto add;
		}
		if (li.type != H5L_TYPE_HARD) {
			err = nz__error_set(NZ_EUNSUPPORTED, "'%s': user-defined link type %d", path,
					    (int)li.type);
			goto done;
		}
	}
	if (H5Oget_info_by_name2(loc, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': unreadable object", path);
		goto done;
	}
	for (i = 0; i < w->nseen; i++)
		if (w->seen[i].addr == oi.addr) {
			node.kind = NZ__X_SOFTLINK;
			node.hard_alias = 1;
			if (!(node.link_target = nz__strdup(w->seen[i].path)))
				err = nz__error_set(NZ_ENOMEM, "out of memory");
			goto add;
		}
	if ((err = remember(w, oi.addr, path)) < 0)
		goto done;
	if ((obj = H5Oopen(loc, name, H5P_DEFAULT)) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': cannot open object", path);
		goto done;
	}
	if (oi.type == H5O_TYPE_GROUP) {
		node.kind = NZ__X_GROUP;
	} else if (oi.type == H5O_TYPE_DATASET) {
		if ((err = dataset_node(&node, obj)) < 0)
			goto done;
	} else {
		err = nz__error_set(NZ_EUNSUPPORTED, "'%s': committed datatypes cannot be exported", path);
		goto done;
	}
	if ((err = read_attrs(w, obj, &node)) < 0)
		goto done;
add:
	if (err < 0 || (err = nz__xmodel_add(w->m, &node)) < 0)
		goto done;
	added = 1;
	if (node.kind == NZ__X_GROUP) {
		const char *saved = w->path;
		hsize_t idx = 0;
		w->path = path;
		w->err = 0;
		if (H5Literate(obj, H5_INDEX_NAME, H5_ITER_INC, &idx, link_cb, w) < 0)
			err = w->err < 0 ? w->err : nz__h5_error(NZ_EFORMAT, "'%s': cannot list members", path);
		w->path = saved;
	}
done:
	if (obj >= 0)
		H5Oclose(obj);
	if (!added)
		nz__xnode_clear(&node);
	return err;
}

int nz__h5_walk(nz__xmodel *out, nz__h5file *f)
{
	struct walk w;
	char *root = nz__strdup("/");
	size_t i;
	int err;

	memset(out, 0, sizeof *out);
	memset(&w, 0, sizeof w);
	w.f = f;
	w.m = out;
	w.path = "";
	if (!root)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	nz__h5_lock();
	w.root_oid = nz__h5_object_id(f->fid, "/");
	err = visit(&w, f->fid, ".", root);
	nz__h5_unlock();
	for (i = 0; i < w.nseen; i++)
		nz__free(w.seen[i].path);
	nz__free(w.seen);
	nz__free(w.root_oid);
	if (err < 0) {
		nz__xmodel_clear(out);
		return nz__error_wrap("'%s'", f->path);
	}
	nz__xmodel_sort(out);
	if ((err = nz__xmodel_canon_attrs(out)) < 0) {
		nz__xmodel_clear(out);
		return err;
	}
	return 0;
}

int nz__h5_dataset_node(nz__xnode *out, nz__h5file *f, const char *path)
{
	H5O_info_t oi;
	hid_t obj = -1;
	int err = 0;

	memset(out, 0, sizeof *out);
	if (!(out->path = nz__strdup(path)) || !(out->attrs = json_object())) {
		err = nz__error_set(NZ_ENOMEM, "out of memory opening '%s' in '%s'", path, f->path);
		goto done;
	}
	nz__h5_lock();
	/* H5Oget_info_by_name follows soft and external links, as h5py does. */
	if (path[0] != '/' || H5Oget_info_by_name2(f->fid, path, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
		H5Eclear2(H5E_DEFAULT);
		err = nz__error_set(NZ_ENOTFOUND, "'%s': no such object in '%s'%s", path, f->path,
				    path[0] == '/' ? "" : " (the path must be absolute)");
	} else if (oi.type != H5O_TYPE_DATASET) {
		err = nz__error_set(NZ_EINVAL, "'%s' in '%s' is not a dataset", path, f->path);
	} else if ((obj = H5Oopen(f->fid, path, H5P_DEFAULT)) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': cannot open dataset in '%s'", path, f->path);
	} else {
		err = dataset_node(out, obj);
		H5Oclose(obj);
	}
	nz__h5_unlock();
done:
	if (err < 0)
		nz__xnode_clear(out);
	return err;
}
