/* HDF5 external links on export (docs/format.md, "External links"): a Zarr
 * reader follows a link only into another Zarr store, so each HDF5 file a
 * link leads into (and each one those lead into) is exported beside the
 * output, and the link names that store relative to the linking store, as
 * hdmf-zarr does ("../other.nwb.zarr"). The plan is made, and every linked
 * file opened and walked, before any output is touched. */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "export/export_impl.h"
#include "nwbzarr/nwb.h"
#include "util/alloc.h"
#include "util/error.h"

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* `dst`'s folder with `name` appended ("out/name"; "name" for a bare dst). */
static char *beside(const char *dst, const char *name, const char *suffix)
{
	const char *s = strrchr(dst, '/');
	size_t dir = s ? (size_t)(s - dst) + 1 : 0, len = dir + strlen(name) + strlen(suffix) + 1;
	char *out = nz__malloc(len);
	if (out)
		snprintf(out, len, "%.*s%s%s", (int)dir, dst, name, suffix);
	return out;
}

/* The file an external link of `from` names: absolute as written, else
 * relative to `from`'s folder (as libhdf5 looks first); its real path. */
int nz__xlinks_resolve(char *real, const char *from, const nz__xnode *n)
{
	char path[PATH_MAX];
	const char *s = strrchr(from, '/');
	struct stat sb;
	if (n->link_file[0] == '/' || !s)
		snprintf(path, sizeof path, "%s", n->link_file);
	else
		snprintf(path, sizeof path, "%.*s/%s", (int)(s - from), from, n->link_file);
	if (!realpath(path, real) || stat(real, &sb) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s': external link '%s' leads into '%s', which cannot be "
				     "opened: %s", from, n->path, n->link_file, strerror(errno));
	if (!S_ISREG(sb.st_mode))
		return nz__error_set(NZ_EFORMAT, "'%s': external link '%s' leads into '%s', which is not "
				     "a regular file", from, n->path, n->link_file);
	return 0;
}

static size_t find(const nz__xlinks *l, const char *real)
{
	size_t i;
	for (i = 0; i < l->n; i++)
		if (strcmp(l->v[i].real, real) == 0)
			return i;
	return SIZE_MAX;
}

static int add(nz__xlinks *l, const char *real, char *dst)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 4;
		void *p = nz__realloc(l->v, cap * sizeof *l->v);
		if (!p) {
			nz__free(dst);
			return nz__error_set(NZ_ENOMEM, "out of memory");
		}
		l->v = p;
		l->cap = cap;
	}
	l->v[l->n].real = nz__strdup(real);
	l->v[l->n].dst = dst;
	l->v[l->n].keep = 0;
	if (!l->v[l->n].real) {
		nz__free(dst);
		return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	l->n++;
	return 0;
}

/* A linked store that exists already (another export linking into the
 * same file wrote it) is kept when it is complete and verify finds it
 * equal to its file; anything else there is not ours to replace. */
static int keep_existing(struct nz__xlinked *e, const nz__xnode *n, const nz_export_opts *o)
{
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	nz_store *st = NULL;
	uint64_t ndiff = 0;
	int err = nz_store_open_dir(&st, e->dst, NZ_STORE_READ);
	if (!err)
		err = nz_nwb_check_complete(st);
	nz_store_free(st);
	vo.jobs = o->jobs;
	vo.max_diffs = 1;
	if (!err)
		err = nz__verify_files(&ndiff, e->real, e->dst, &vo, 0);
	if (err < 0) {
		char why[NZ_ERROR_MSG_MAX];
		snprintf(why, sizeof why, "%s", nz_error_last()->message);
		return nz__error_set(NZ_EEXISTS, "'%s' (the export of '%s', which external link '%s' leads "
				     "into) already exists and is not a complete, equal export of it: %s (use "
				     "--overwrite)", e->dst, e->real, n->path, why);
	}
	e->keep = 1;
	return 0;
}

/* The files file `i` links into, appended to the plan when new. */
static int plan_file(nz__xlinks *l, size_t i, const nz__xmodel *m, const nz_export_opts *o)
{
	char real[PATH_MAX];
	size_t k, j;
	int err;
	for (k = 0; k < m->count; k++) {
		const nz__xnode *n = &m->nodes[k];
		struct stat sb;
		char *dst;
		if (n->kind != NZ__X_EXTLINK)
			continue;
		if ((err = nz__xlinks_resolve(real, l->v[i].real, n)) < 0)
			return err;
		if (find(l, real) != SIZE_MAX)
			continue;
		if (!(dst = beside(l->v[0].dst, base_name(n->link_file), ".zarr")))
			return nz__error_set(NZ_ENOMEM, "out of memory");
		for (j = 0; j < l->n; j++)
			if (strcmp(base_name(l->v[j].dst), base_name(dst)) == 0) {
				err = nz__error_set(NZ_EINVAL, "'%s' and '%s' would both be exported to '%s' "
						    "(external links into two files of one name)",
						    l->v[j].real, real, dst);
				nz__free(dst);
				return err;
			}
		if ((err = add(l, real, dst)) < 0)
			return err;
		if (!o->overwrite && !o->resume && lstat(dst, &sb) == 0 &&
		    (err = keep_existing(&l->v[l->n - 1], n, o)) < 0)
			return err;
	}
	return 0;
}

int nz__xlinks_plan(nz__xlinks *l, const char *src, const char *dst, const nz__xmodel *m,
		    const nz_export_opts *o)
{
	char real[PATH_MAX];
	char *d = nz__strdup(dst);
	size_t i;
	int err;

	memset(l, 0, sizeof *l);
	if (!d)
		return nz__error_set(NZ_ENOMEM, "out of memory");
	if (!realpath(src, real))
		snprintf(real, sizeof real, "%s", src);
	if ((err = add(l, real, d)) < 0 || (err = plan_file(l, 0, m, o)) < 0)
		goto done;
	/* The linked stores are written first: a taken output must stop the
	 * export before them. */
	if (l->n > 1 && !o->overwrite && !o->resume && access(dst, F_OK) == 0) {
		err = nz__error_set(NZ_EEXISTS, "'%s' already exists (use --overwrite)", dst);
		goto done;
	}
	for (i = 1; i < l->n; i++) {
		nz__h5file *f = NULL;
		nz__xmodel lm = { 0 };
		err = nz__h5_open(&f, l->v[i].real);
		if (!err && !(err = nz__h5_walk(&lm, f)) && !(err = nz__xmodel_check_links(&lm, l->v[i].real)))
			err = plan_file(l, i, &lm, o);
		nz__xmodel_clear(&lm);
		nz__h5_close(f);
		if (err < 0)
			goto done;
	}
done:
	if (err < 0)
		nz__xlinks_clear(l);
	return err;
}

int nz__xlinks_source(char **out, const nz__xlinks *l, size_t from, const nz__xnode *n)
{
	char real[PATH_MAX];
	size_t t;
	int err;
	*out = NULL;
	if ((err = nz__xlinks_resolve(real, l->v[from].real, n)) < 0)
		return err;
	if ((t = find(l, real)) == SIZE_MAX)
		return nz__error_set(NZ_EINVAL, "'%s': external link '%s' is not in the export's plan",
				     l->v[from].real, n->path);
	/* Every store of the plan sits in one folder: "../<name>" from inside
	 * the linking store, as hdmf-zarr resolves a source. */
	if (t == from) {
		*out = nz__strdup(".");
	} else {
		size_t len = strlen(base_name(l->v[t].dst)) + 4;
		if ((*out = nz__malloc(len)))
			snprintf(*out, len, "../%s", base_name(l->v[t].dst));
	}
	return *out ? 0 : nz__error_set(NZ_ENOMEM, "out of memory");
}

void nz__xlinks_clear(nz__xlinks *l)
{
	size_t i;
	for (i = 0; i < l->n; i++) {
		nz__free(l->v[i].real);
		nz__free(l->v[i].dst);
	}
	nz__free(l->v);
	memset(l, 0, sizeof *l);
}
