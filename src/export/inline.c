/* export --copy-links (docs/format.md, "External links"): every HDF5
 * external link of a walked model is replaced by a copy of what it leads to,
 * so that the output is one self-contained store. The copied nodes keep
 * their paths through the link (the path by which libhdf5, following the
 * link, opens their datasets in the source file), their attributes and
 * object ids; graft records say where each copy came from, so that the
 * references they hold (paths in their own file) can be placed in the
 * model.
 *
 * The first link met (the source's own, in name order, then those inside
 * the copies, in the order the copies are made) copies its target; a link
 * to an object that a copy (or the source itself) holds already becomes a
 * soft link to it, as hdmf writes a container met twice: a group or typed
 * dataset is copied once. A dataset without an object id is copied at every
 * external link to it, as hdmf's export (link_data=False) does. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "export/export_impl.h"
#include "util/alloc.h"

/* Links of links of links: past this, the chain goes round a circle. */
#define MAX_HOPS 64

typedef struct pending {
	size_t node;  /* index of the link node in the model */
	size_t file;  /* index in model.files of the file its target is in */
	char *target; /* path in that file */
	int ext;      /* an external link on the way */
} pending;

typedef struct inliner {
	nz__xmodel *m;
	nz__xmodel *walked; /* walked[i]: files[i]'s model (0: m itself, not owned) */
	pending *q;
	size_t nq, capq;
} inliner;

static int grow(void **v, size_t *cap, size_t n, size_t size)
{
	size_t c;
	void *p;
	if (n < *cap)
		return 0;
	c = *cap ? 2 * *cap : 8;
	if (!(p = nz__realloc(*v, c * size)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	*v = p;
	*cap = c;
	return 0;
}

/* `base` with the part of `path` below `prefix` appended. */
static char *rebase(const char *base, const char *prefix, const char *path)
{
	/* what follows the prefix: "" for the prefix itself, else "/..." */
	const char *rest = strcmp(prefix, "/") == 0 ? (strcmp(path, "/") == 0 ? "" : path) : path + strlen(prefix);
	size_t a = strcmp(base, "/") == 0 && rest[0] ? 0 : strlen(base), b = strlen(rest);
	char *out = nz__malloc(a + b + 1);
	if (!out)
		return NULL;
	memcpy(out, base, a);
	memcpy(out + a, rest, b + 1);
	return out;
}

static int under(const char *path, const char *prefix)
{
	return strcmp(prefix, "/") == 0 ? path[0] == '/' : nz__x_under(path, prefix);
}

/* The graft of `file` holding `path`, or SIZE_MAX. */
static size_t holder(const nz__xmodel *m, size_t file, const char *path)
{
	for (size_t g = 0; g < m->ngrafts; g++)
		if (m->grafts[g].file == file && under(path, m->grafts[g].from))
			return g;
	return SIZE_MAX;
}

int nz__xmodel_place(char **out, const nz__xmodel *m, size_t origin, const char *path)
{
	size_t file = origin < m->ngrafts ? m->grafts[origin].file : 0, g;
	*out = NULL;
	if (!m->ngrafts)
		return (*out = nz__strdup(path)) ? 0 : nz__error_set(NZ_ENOMEM, "out of memory");
	if ((g = holder(m, file, path)) == SIZE_MAX)
		return nz__error_set(NZ_EFORMAT, "a reference to '%s' in '%s', which no copy holds (the "
				     "links lead into part of that file only: export without --copy-links)",
				     path, m->files[file]);
	if (!(*out = rebase(m->grafts[g].to, m->grafts[g].from, path)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	return 0;
}

/* The index of linked file `real` in m->files, walked and its links checked
 * when first met. */
static int load(inliner *in, size_t *out, const char *real)
{
	nz__xmodel *m = in->m;
	nz__h5file *f = NULL;
	size_t i, cap = m->nfiles;
	void *p;
	int err;
	for (i = 0; i < m->nfiles; i++)
		if (strcmp(m->files[i], real) == 0) {
			*out = i;
			return 0;
		}
	if ((err = grow((void **)&m->files, &cap, m->nfiles, sizeof *m->files)) < 0)
		return err;
	if (!(p = nz__realloc(in->walked, (m->nfiles + 1) * sizeof *in->walked)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	in->walked = p;
	memset(&in->walked[i], 0, sizeof *in->walked);
	if (!(m->files[i] = nz__strdup(real)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	m->nfiles++;
	err = nz__h5_open(&f, real);
	if (!err && !(err = nz__h5_walk(&in->walked[i], f)))
		err = nz__xmodel_check_links(&in->walked[i], real);
	nz__h5_close(f);
	*out = i;
	return err;
}

/* Queue link node `node`, which lives in file `file` (its target resolved
 * there: an external link's file relative to that file's folder). */
static int enqueue(inliner *in, size_t node, size_t file, const nz__xnode *link)
{
	char real[PATH_MAX];
	pending *p;
	int err;
	if (link->kind == NZ__X_EXTLINK) {
		if ((err = nz__xlinks_resolve(real, in->m->files[file], link)) < 0 ||
		    (err = load(in, &file, real)) < 0)
			return err;
	}
	if ((err = grow((void **)&in->q, &in->capq, in->nq, sizeof *in->q)) < 0)
		return err;
	p = &in->q[in->nq];
	p->node = node;
	p->file = file;
	p->ext = link->kind == NZ__X_EXTLINK;
	if (!(p->target = nz__strdup(link->link_target)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	in->nq++;
	return 0;
}

static int clone(nz__xnode *d, const nz__xnode *s, char *path, size_t origin)
{
	memset(d, 0, sizeof *d);
	d->path = path;
	d->kind = s->kind;
	d->hard_alias = s->hard_alias;
	d->scalar = s->scalar;
	d->ndim = s->ndim;
	memcpy(d->shape, s->shape, sizeof d->shape);
	memcpy(d->chunks, s->chunks, sizeof d->chunks);
	d->origin = origin;
	if (!path || !(d->attrs = json_deep_copy(s->attrs)) || nz__xtype_copy(&d->type, &s->type) < 0 ||
	    (s->link_target && !(d->link_target = nz__strdup(s->link_target))) ||
	    (s->link_file && !(d->link_file = nz__strdup(s->link_file)))) {
		nz__xnode_clear(d);
		return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	return 0;
}

/* hdmf copies a dataset that is no container of its own (no object id:
 * TimeSeries data) wherever an external link leads to it, and pynwb reads
 * a soft link to such data as a link to the other TimeSeries. */
static int untyped_dataset(const nz__xnode *t)
{
	return t->kind == NZ__X_DATASET && !json_object_get(t->attrs, "object_id");
}

/* An earlier copy (graft before `g`) of a part of file `file` below `from`
 * that holds `path`, or SIZE_MAX: that part is not copied twice. */
static size_t copied_before(const inliner *in, size_t g, size_t file, const char *from, const char *path)
{
	const nz__xmodel *m = in->m;
	for (size_t e = 1; file && e < g; e++) {
		const nz__xgraft *x = &m->grafts[e];
		const nz__xnode *root;
		if (x->file == file && strcmp(x->from, from) != 0 && under(x->from, from) && under(path, x->from) &&
		    (root = nz__xmodel_find(&in->walked[file], x->from)) && !untyped_dataset(root))
			return e;
	}
	return SIZE_MAX;
}

/* Node `d` (owned) into the model: at index `at` for the subtree's root,
 * else appended; *idx is where it went. */
static int put(nz__xmodel *m, nz__xnode *d, size_t at, int root, size_t *idx)
{
	if (root) {
		nz__xnode_clear(&m->nodes[at]);
		m->nodes[at] = *d;
		*idx = at;
		return 0;
	}
	*idx = m->count;
	return nz__xmodel_add(m, d);
}

/* Copy the subtree at `t` (index k of walked file `file`) in place of link
 * node `at`; the links it holds are queued. */
static int copy_in(inliner *in, size_t at, size_t file, size_t k)
{
	nz__xmodel *m = in->m;
	const char *from = in->walked[file].nodes[k].path; /* enqueue's load() moves walked, not nodes */
	char *to = nz__strdup(m->nodes[at].path);
	size_t g = m->ngrafts, cap = m->ngrafts, i, len = strcmp(from, "/") == 0 ? 1 : strlen(from);
	int err;
	if (!to || (err = grow((void **)&m->grafts, &cap, g, sizeof *m->grafts)) < 0) {
		nz__free(to);
		return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	m->grafts[g].file = file;
	m->grafts[g].to = to;
	if (!(m->grafts[g].from = nz__strdup(from)))
		return nz__error_set(NZ_ENOMEM, "out of memory");
	m->ngrafts++;
	/* Sorted by path: the subtree lies among the paths that start with
	 * its root's ("/a", "/a-b", "/a/c"). */
	for (i = k; i < in->walked[file].count && strncmp(in->walked[file].nodes[i].path, from, len) == 0; i++) {
		const nz__xnode *s = &in->walked[file].nodes[i];
		size_t idx, e;
		nz__xnode d;
		if (!under(s->path, from))
			continue;
		if ((e = copied_before(in, g, file, from, s->path)) != SIZE_MAX) {
			/* its root becomes a soft link to that copy, the rest is skipped */
			if (strcmp(s->path, m->grafts[e].from) != 0)
				continue;
			memset(&d, 0, sizeof d);
			d.kind = NZ__X_SOFTLINK;
			d.origin = g;
			d.path = rebase(to, from, s->path);
			d.link_target = nz__strdup(m->grafts[e].to);
			if (!d.path || !d.link_target || !(d.attrs = json_object())) {
				nz__xnode_clear(&d);
				return nz__error_set(NZ_ENOMEM, "out of memory");
			}
			if ((err = put(m, &d, at, i == k, &idx)) < 0)
				return err;
			continue;
		}
		if ((err = clone(&d, s, rebase(to, from, s->path), g)) < 0 || (err = put(m, &d, at, i == k, &idx)) < 0)
			return err;
		if ((s->kind == NZ__X_SOFTLINK || s->kind == NZ__X_EXTLINK) &&
		    (err = enqueue(in, idx, file, s)) < 0)
			return err;
	}
	return 0;
}

/* Link node p->node becomes a soft link to `to` (owned). */
static void relink(nz__xnode *n, char *to)
{
	nz__free(n->link_target);
	nz__free(n->link_file);
	n->link_file = NULL;
	n->link_target = to;
	n->kind = NZ__X_SOFTLINK;
}

static int resolve_one(inliner *in, pending *p)
{
	char real[PATH_MAX];
	size_t hops, g, k;
	int err;
	for (hops = 0; hops < MAX_HOPS; hops++) {
		const nz__xmodel *w = &in->walked[p->file]; /* load() moves walked */
		const nz__xnode *t = nz__xmodel_find(w, p->target);
		/* The source's own links are replaced as this goes: its model
		 * is read for its own datasets only, the rest is placed. */
		if (p->file == 0 && t && !(t->kind == NZ__X_DATASET && t->origin == 0))
			t = NULL;
		/* untyped data: copied at every external link to it */
		if (t && p->ext && untyped_dataset(t))
			return copy_in(in, p->node, p->file, (size_t)(t - w->nodes));
		if ((g = holder(in->m, p->file, p->target)) != SIZE_MAX) {
			char *to = rebase(in->m->grafts[g].to, in->m->grafts[g].from, p->target);
			if (!to)
				return nz__error_set(NZ_ENOMEM, "out of memory");
			relink(&in->m->nodes[p->node], to);
			return 0;
		}
		if (!t)
			return nz__error_set(NZ_EFORMAT, "link '%s' leads to '%s' in '%s', which does not exist",
					     in->m->nodes[p->node].path, p->target, in->m->files[p->file]);
		if (t->kind == NZ__X_GROUP || t->kind == NZ__X_DATASET)
			return copy_in(in, p->node, p->file, (size_t)(t - w->nodes));
		/* A link: what it leads to is copied. */
		if (t->kind == NZ__X_EXTLINK) {
			if ((err = nz__xlinks_resolve(real, in->m->files[p->file], t)) < 0 ||
			    (err = load(in, &k, real)) < 0)
				return err;
			p->file = k;
			p->ext = 1;
		}
		nz__free(p->target);
		if (!(p->target = nz__strdup(t->link_target)))
			return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	return nz__error_set(NZ_EFORMAT, "link '%s' leads round a circle of external links",
			     in->m->nodes[p->node].path);
}

int nz__xmodel_inline(nz__xmodel *m, const char *file)
{
	char real[PATH_MAX];
	inliner in;
	size_t i, n = m->count;
	int err = 0;

	memset(&in, 0, sizeof in);
	in.m = m;
	if (!realpath(file, real))
		snprintf(real, sizeof real, "%s", file);
	if (!(in.walked = nz__calloc(1, sizeof *in.walked)) || !(m->files = nz__calloc(1, sizeof *m->files)) ||
	    !(m->files[0] = nz__strdup(real)) || !(m->grafts = nz__calloc(1, sizeof *m->grafts)) ||
	    !(m->grafts[0].from = nz__strdup("/")) || !(m->grafts[0].to = nz__strdup("/"))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	m->nfiles = 1;
	m->ngrafts = 1;
	in.walked[0] = *m; /* borrowed: only its sorted nodes are read */
	for (i = 0; i < n && !err; i++)
		if (m->nodes[i].kind == NZ__X_EXTLINK)
			err = enqueue(&in, i, 0, &m->nodes[i]);
	/* The source's own nodes stay as they are (appends go after them), so
	 * its borrowed view stays sorted; the queue grows as copies are made. */
	for (i = 0; i < in.nq && !err; i++) {
		in.walked[0].nodes = m->nodes;
		in.walked[0].count = n;
		err = resolve_one(&in, &in.q[i]);
	}
	if (err < 0)
		goto done;
	nz__xmodel_sort(m);
	if ((err = nz__xmodel_canon_attrs(m)) == 0)
		err = nz__xmodel_check_links(m, file);
done:
	for (i = 0; i < in.nq; i++)
		nz__free(in.q[i].target);
	nz__free(in.q);
	for (i = 1; i < m->nfiles; i++)
		nz__xmodel_clear(&in.walked[i]);
	nz__free(in.walked);
	if (err < 0)
		return nz__error_wrap("'%s' (copying the objects its external links lead to)", file);
	return 0;
}
