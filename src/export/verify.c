/* nz_verify: two NWB files (HDF5 or Zarr) as neutral models, compared node
 * by node; large fixed-size datasets block by block on a worker pool, each
 * worker holding two blocks at most (bounded memory). */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "engine/pool.h"
#include "export/export_impl.h"
#include "export/zread.h"
#include "nwbzarr/nwb.h" /* NZ_INCOMPLETE_MARKER, nz_nwb_check_complete */
#include "util/alloc.h"
#include "util/json.h"

#define DEFAULT_BUFFER ((size_t)64 << 20)

typedef struct vside {
	const char *path;
	int zarr;
	nz__h5file *f;
	nz_store *store;
	nz_hierarchy *h; /* its consolidated metadata; NULL when that disagrees with the documents */
	nz__xmodel m;
	char meta_diff[NZ_ERROR_MSG_MAX]; /* consolidated metadata disagreeing with the documents */
	const char *meta_key;             /* where it is: .zmetadata (v2) or the root zarr.json (v3) */
} vside;

typedef struct vctx {
	vside a, b;
	nz_verify_opts o;
	uint64_t ndiff;
	/* Files of different nwb_version: each caches the schema it was written
	 * with (pynwb's export re-caches its own), so that group is not
	 * compared; set to its path then. */
	char schema_skip[1024];
} vctx;

typedef struct vreader {
	vside *s;
	const nz__xnode *n;
	nz__h5ds *ds;
	nz_array *arr;
} vreader;

static void diff(vctx *v, const char *path, const char *fmt, ...) NZ__PRINTF(3, 4);
static void diff(vctx *v, const char *path, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	if (++v->ndiff > v->o.max_diffs || !v->o.report)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	v->o.report(path, msg, v->o.report_ctx);
}

static int open_side(vside *s, const char *path, int flags)
{
	struct stat sb;
	int err;
	s->path = path;
	s->zarr = stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
	if (s->zarr) {
		if ((err = nz_store_open_dir(&s->store, path, NZ_STORE_READ)) < 0)
			return err;
		/* A store our writer left unfinished: comparing it would report
		 * its missing chunks as fill values. (Stores of other tools may
		 * lack .zmetadata and are compared as they are.) */
		if (!(flags & NZ__VERIFY_UNFINISHED) &&
		    (err = nz_store_exists(s->store, NZ_INCOMPLETE_MARKER)) != 0)
			return err < 0 ? err : nz_nwb_check_complete(s->store);
		/* What readers of .zmetadata see must be what is compared: a
		 * document that does not parse stops verify, a consolidated copy
		 * that disagrees is a difference like any other. */
		s->meta_key = nz_store_zarr_format(s->store) == 3 ? "/zarr.json" : "/.zmetadata";
		if ((err = nz_metadata_check(s->store)) == NZ_EMISMATCH)
			snprintf(s->meta_diff, sizeof s->meta_diff, "%s", nz_error_last()->message);
		else if (err < 0)
			return err;
		/* Readers' view (the consolidated copy) when it equals the
		 * documents, else the documents, each difference named. */
		if ((!s->meta_diff[0] && (err = nz_hierarchy_open(&s->h, s->store)) < 0) ||
		    (err = nz__z_walk(&s->m, s->h, s->store)) < 0)
			return err;
	} else if ((err = nz__h5_open(&s->f, path)) < 0 || (err = nz__h5_walk(&s->m, s->f)) < 0) {
		return err;
	}
	return flags & NZ__VERIFY_NWB ? nz__xmodel_check_nwb(&s->m, path) : nz__xmodel_check_links(&s->m, path);
}

static void close_side(vside *s)
{
	nz__xmodel_clear(&s->m);
	nz_hierarchy_free(s->h);
	nz_store_free(s->store);
	nz__h5_close(s->f);
}

static int reader_open(vreader *r, vside *s, const nz__xnode *n)
{
	memset(r, 0, sizeof *r);
	r->s = s;
	r->n = n;
	if (s->zarr)
		return nz__z_array_open(&r->arr, s->h, s->store, n->path + 1);
	return nz__h5ds_open(&r->ds, s->f, n, 0);
}

static void reader_close(vreader *r)
{
	nz_array_free(r->arr);
	nz__h5ds_close(r->ds);
}

static int reader_read(vreader *r, const uint64_t *start, const uint64_t *count, void *out, size_t len)
{
	uint64_t total;
	int err;
	if (r->arr)
		return nz__z_read(r->arr, r->n, start, count, out, len);
	if ((err = nz__h5ds_read(r->ds, start, count, out, len)) < 0 ||
	    (err = nz__xnode_count(&total, r->n, count)) < 0)
		return err;
	if ((err = nz__xvalues_canon(&r->s->m, r->n, out, (size_t)total)) < 0)
		nz__xvalues_free(&r->n->type, out, (size_t)total);
	return err;
}

/* ---- attributes ---- */

static void compare_attrs(vctx *v, const char *path, const json_t *x, const json_t *y)
{
	const char *k;
	json_t *xv;
	char sx[256], sy[256];
	json_object_foreach((json_t *)x, k, xv) {
		json_t *yv = json_object_get(y, k);
		if (v->schema_skip[0] && strcmp(path, "/") == 0 && strcmp(k, "nwb_version") == 0)
			continue; /* reported once by schema_versions */
		if (!yv) {
			diff(v, path, "attribute '%s' is missing in '%s'", k, v->b.path);
		} else if (!nz__xjson_same(xv, yv)) {
			nz__xjson_show(sx, sizeof sx, xv);
			nz__xjson_show(sy, sizeof sy, yv);
			diff(v, path, "attribute '%s' differs: %s vs %s", k, sx, sy);
		}
	}
	json_object_foreach((json_t *)y, k, xv)
		if (!json_object_get(x, k) &&
		    !(v->schema_skip[0] && strcmp(path, "/") == 0 && strcmp(k, "nwb_version") == 0))
			diff(v, path, "attribute '%s' is missing in '%s'", k, v->a.path);
}

/* ---- values ---- */

/* A block of rows compared on a worker. */
typedef struct vblock {
	struct vdata *d;
	uint64_t start[NZ_MAX_DIMS], count[NZ_MAX_DIMS];
	uint64_t first_bad;  /* flat index in the dataset, UINT64_MAX = none */
	uint64_t nbad;
	char xs[128], ys[128];
	nz_error err;
} vblock;

typedef struct vdata {
	vreader rx, ry;
	const nz__xnode *n;
	atomic_int stop;
} vdata;

static int compare_block(vdata *d, vblock *b)
{
	const nz__xtype *t = &d->n->type;
	uint64_t total, i;
	unsigned char *x = NULL, *y = NULL;
	size_t bytes;
	int err = 0;

	b->first_bad = UINT64_MAX;
	if ((err = nz__xnode_count(&total, d->n, b->count)) < 0)
		return err;
	if (nz__mul_size(&bytes, (size_t)total, t->size) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s' is too large", d->n->path);
	x = nz__calloc(1, bytes ? bytes : 1);
	y = nz__calloc(1, bytes ? bytes : 1);
	if (!x || !y) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory comparing", d->n->path);
		goto done;
	}
	if ((err = reader_read(&d->rx, b->start, b->count, x, bytes)) < 0)
		goto done;
	if ((err = reader_read(&d->ry, b->start, b->count, y, bytes)) < 0) {
		nz__xvalues_free(t, x, (size_t)total);
		goto done;
	}
	for (i = 0; i < total; i++) {
		const unsigned char *px = x + i * t->size, *py = y + i * t->size;
		if (nz__xelem_same(t, px, py))
			continue;
		if (!b->nbad++) {
			/* Blocks are whole rows, so the block's flat offset is
			 * start[0] x (row size). */
			uint64_t row = 1;
			int k;
			for (k = 1; k < d->n->ndim; k++)
				row *= d->n->shape[k];
			b->first_bad = (d->n->ndim ? b->start[0] * row : 0) + i;
			nz__xelem_show(b->xs, sizeof b->xs, t, px);
			nz__xelem_show(b->ys, sizeof b->ys, t, py);
		}
	}
	nz__xvalues_free(t, x, (size_t)total);
	nz__xvalues_free(t, y, (size_t)total);
done:
	nz__free(x);
	nz__free(y);
	return err;
}

static void block_job(void *arg, int worker)
{
	vblock *b = arg;
	if (atomic_load(&b->d->stop))
		return;
	if (compare_block(b->d, b) < 0) {
		nz__error_save(&b->err);
		atomic_store(&b->d->stop, 1);
	}
}

static void index_text(char *buf, size_t cap, const nz__xnode *n, uint64_t flat)
{
	uint64_t idx[NZ_MAX_DIMS];
	size_t len = 0;
	int d;
	for (d = n->ndim - 1; d >= 0; d--) {
		idx[d] = n->shape[d] ? flat % n->shape[d] : 0;
		flat = n->shape[d] ? flat / n->shape[d] : 0;
	}
	len += (size_t)snprintf(buf, cap, "[");
	for (d = 0; d < n->ndim && len < cap; d++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%llu", d ? ", " : "",
					(unsigned long long)idx[d]);
	if (len < cap)
		snprintf(buf + len, cap - len, "]");
}

static int compare_values(vctx *v, const nz__xnode *nx, const nz__xnode *ny)
{
	vdata d;
	vblock *blocks = NULL;
	nz__pool *pool = NULL;
	uint64_t rows, row_bytes = nx->type.size, per, nblocks = 1, i, nbad = 0, total, align;
	size_t budget = v->o.buffer_size ? v->o.buffer_size : DEFAULT_BUFFER;
	int jobs = v->o.jobs > 0 ? v->o.jobs : nz_ncores(), k, err = 0;
	const vblock *worst = NULL;

	memset(&d, 0, sizeof d);
	d.n = nx;
	if ((err = nz__xnode_count(&total, nx, nx->shape)) < 0 || total == 0)
		return err;
	if ((err = reader_open(&d.rx, &v->a, nx)) < 0 || (err = reader_open(&d.ry, &v->b, ny)) < 0)
		goto done;
	rows = nx->ndim ? nx->shape[0] : 1;
	for (k = 1; k < nx->ndim; k++)
		row_bytes *= nx->shape[k];
	/* Object arrays are read whole (their chunks hold variable-size items). */
	per = nz__xtype_has_pointers(&nx->type) || !row_bytes
		      ? rows
		      : budget / (2 * (uint64_t)jobs * row_bytes);
	if (per < 1)
		per = 1;
	/* Whole source chunks per block, so no chunk is decoded twice. */
	align = nx->ndim ? (nx->chunks[0] ? nx->chunks[0] : ny->chunks[0]) : 0;
	if (align && per >= align)
		per -= per % align;
	if (per > rows)
		per = rows;
	nblocks = (rows + per - 1) / per;
	if (!(blocks = nz__calloc(nblocks, sizeof *blocks))) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", nx->path);
		goto done;
	}
	for (i = 0; i < nblocks; i++) {
		blocks[i].d = &d;
		for (k = 0; k < nx->ndim; k++)
			blocks[i].count[k] = nx->shape[k];
		if (nx->ndim) {
			blocks[i].start[0] = i * per;
			blocks[i].count[0] = i * per + per > rows ? rows - i * per : per;
		}
	}
	if (nblocks == 1) {
		block_job(&blocks[0], 0);
	} else {
		if ((err = nz__pool_new(&pool, jobs, (size_t)jobs)) < 0)
			goto done;
		for (i = 0; i < nblocks; i++)
			nz__pool_add(pool, block_job, &blocks[i], 0);
		nz__pool_free(pool);
	}
	for (i = 0; i < nblocks; i++) {
		if (blocks[i].err.code < 0) {
			err = nz__error_restore(&blocks[i].err);
			goto done;
		}
		nbad += blocks[i].nbad;
		if (blocks[i].nbad && !worst)
			worst = &blocks[i];
	}
	if (worst) {
		char at[256];
		index_text(at, sizeof at, nx, worst->first_bad);
		diff(v, nx->path, "%llu of %llu values differ; first at %s: %s vs %s",
		     (unsigned long long)nbad, (unsigned long long)total, at, worst->xs, worst->ys);
	}
done:
	nz__free(blocks);
	reader_close(&d.rx);
	reader_close(&d.ry);
	return err;
}

/* ---- nodes ---- */

static const char *kind_name(nz__xkind k)
{
	switch (k) {
	case NZ__X_GROUP: return "group";
	case NZ__X_DATASET: return "dataset";
	case NZ__X_SOFTLINK: return "link";
	default: return "external link";
	}
}

static void shape_text(char *buf, size_t cap, const nz__xnode *n)
{
	size_t len;
	int d;
	if (n->scalar) {
		snprintf(buf, cap, "scalar");
		return;
	}
	len = (size_t)snprintf(buf, cap, "(");
	for (d = 0; d < n->ndim && len < cap; d++)
		len += (size_t)snprintf(buf + len, cap - len, "%s%llu", d ? ", " : "",
					(unsigned long long)n->shape[d]);
	if (len < cap)
		snprintf(buf + len, cap - len, ")");
}

/* The files of two external links agree when they are named alike, or
 * when one is the other's export ("other.nwb" and "../other.nwb.zarr"). */
static int same_link_file(const char *a, const char *b)
{
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');
	size_t la, lb;
	if (strcmp(a, b) == 0)
		return 1;
	ba = ba ? ba + 1 : a;
	bb = bb ? bb + 1 : b;
	la = strlen(ba);
	lb = strlen(bb);
	if (la > lb)
		return same_link_file(b, a);
	return lb == la + 5 && strncmp(ba, bb, la) == 0 && strcmp(bb + la, ".zarr") == 0;
}

static int compare_node(vctx *v, const nz__xnode *x, const nz__xnode *y)
{
	char sx[256], sy[256];
	int d;
	if (x->kind != y->kind) {
		diff(v, x->path, "is a %s in '%s' but a %s in '%s'", kind_name(x->kind), v->a.path,
		     kind_name(y->kind), v->b.path);
		return 0;
	}
	if (x->kind == NZ__X_SOFTLINK || x->kind == NZ__X_EXTLINK) {
		if (strcmp(x->link_target, y->link_target) != 0 ||
		    (x->link_file && !same_link_file(x->link_file, y->link_file)))
			diff(v, x->path, "link target differs: %s%s%s vs %s%s%s",
			     x->link_file ? x->link_file : "", x->link_file ? ":" : "", x->link_target,
			     y->link_file ? y->link_file : "", y->link_file ? ":" : "", y->link_target);
		return 0;
	}
	compare_attrs(v, x->path, x->attrs, y->attrs);
	if (x->kind == NZ__X_GROUP)
		return 0;
	shape_text(sx, sizeof sx, x);
	shape_text(sy, sizeof sy, y);
	if (strcmp(sx, sy) != 0) {
		diff(v, x->path, "shape differs: %s vs %s", sx, sy);
		return 0;
	}
	if (!nz__xtype_same(&x->type, &y->type)) {
		diff(v, x->path, "type differs: %s vs %s", nz__xtype_describe(&x->type),
		     nz__xtype_describe(&y->type));
		return 0;
	}
	for (d = 0; d < x->ndim; d++)
		if (!x->shape[d])
			return 0;
	return compare_values(v, x, y);
}

static uint64_t value_bytes(const nz__xnode *n)
{
	uint64_t count = 0;
	if (n->kind != NZ__X_DATASET || nz__xnode_count(&count, n, n->shape) < 0)
		return 0;
	return count * n->type.size;
}

/* After each object of the first file; non-zero from the callback cancels. */
static int report_progress(vctx *v, nz_progress *p, const nz__xnode *x, double t0)
{
	struct timespec ts;
	if (!v->o.progress || !x)
		return 0;
	p->bytes_done += value_bytes(x);
	p->chunks_done++;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	p->elapsed_s = (double)ts.tv_sec + ts.tv_nsec * 1e-9 - t0;
	if (v->o.progress(p, v->o.progress_ctx) != 0)
		return nz__error_set(NZ_ECANCELED, "verify '%s' and '%s': canceled", v->a.path,
				     v->b.path);
	return 0;
}

/* Two files of different nwb_version differ once, there, not once per
 * document of the two cached schemas. */
static void schema_versions(vctx *v)
{
	const nz__xnode *x = nz__xmodel_find(&v->a.m, "/"), *y = nz__xmodel_find(&v->b.m, "/");
	const json_t *vx = x ? json_object_get(x->attrs, "nwb_version") : NULL;
	const json_t *vy = y ? json_object_get(y->attrs, "nwb_version") : NULL;
	const json_t *loc = x ? json_object_get(json_object_get(json_object_get(x->attrs, ".specloc"),
								 "value"), "path") : NULL;
	char sx[256], sy[256];
	if (!vx || !vy || nz__xjson_same(vx, vy))
		return;
	snprintf(v->schema_skip, sizeof v->schema_skip, "%s",
		 json_is_string(loc) ? json_string_value(loc) : "/specifications");
	nz__xjson_show(sx, sizeof sx, vx);
	nz__xjson_show(sy, sizeof sy, vy);
	diff(v, "/", "attribute 'nwb_version' differs: %s vs %s (the cached schemas in %s are not compared)",
	     sx, sy, v->schema_skip);
}

static int schema_node(const vctx *v, const nz__xnode *n)
{
	size_t len = strlen(v->schema_skip);
	return n && len && strncmp(n->path, v->schema_skip, len) == 0 &&
	       (n->path[len] == '\0' || n->path[len] == '/');
}

static int compare_models(vctx *v)
{
	size_t i = 0, j = 0;
	int err = 0;
	nz_progress p = {0, 0, 0, v->a.m.count, 0};
	struct timespec ts;
	double t0;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	t0 = (double)ts.tv_sec + ts.tv_nsec * 1e-9;
	for (size_t k = 0; v->o.progress && k < v->a.m.count; k++)
		p.bytes_total += value_bytes(&v->a.m.nodes[k]);
	while ((i < v->a.m.count || j < v->b.m.count) && !err) {
		const nz__xnode *x = i < v->a.m.count ? &v->a.m.nodes[i] : NULL;
		const nz__xnode *y = j < v->b.m.count ? &v->b.m.nodes[j] : NULL;
		int c = !x ? 1 : !y ? -1 : strcmp(x->path, y->path);
		if (c <= 0 && schema_node(v, x)) {
			i++;
			j += c == 0;
			continue;
		}
		if (c > 0 && schema_node(v, y)) {
			j++;
			continue;
		}
		if (c < 0) {
			diff(v, x->path, "%s is missing in '%s'", kind_name(x->kind), v->b.path);
			i++;
		} else if (c > 0) {
			diff(v, y->path, "%s is missing in '%s'", kind_name(y->kind), v->a.path);
			j++;
			x = NULL; /* nothing of the first file done */
		} else {
			err = compare_node(v, x, y);
			i++;
			j++;
		}
		if (!err)
			err = report_progress(v, &p, x, t0);
	}
	return err;
}

/* An export made with --copy-links holds copies (or soft links to them)
 * where HDF5 file `x` has external links: `x` is then compared as it reads
 * with its links followed, in the export's own form (nz__xmodel_inline). */
static int follow_links(vside *x, const vside *y)
{
	size_t i;
	if (x->zarr)
		return 0;
	for (i = 0; i < x->m.count; i++) {
		const nz__xnode *n = &x->m.nodes[i], *o;
		if (n->kind == NZ__X_EXTLINK && (o = nz__xmodel_find(&y->m, n->path)) && o->kind != NZ__X_EXTLINK)
			return nz__xmodel_inline(&x->m, x->path);
	}
	return 0;
}

int nz_verify(uint64_t *ndiff, const char *a, const char *b, const nz_verify_opts *opts)
{
	return nz__verify_files(ndiff, a, b, opts, NZ__VERIFY_NWB);
}

int nz__verify_files(uint64_t *ndiff, const char *a, const char *b, const nz_verify_opts *opts, int flags)
{
	static const nz_verify_opts dflt = NZ_VERIFY_OPTS_INIT;
	vctx v;
	int err;

	memset(&v, 0, sizeof v);
	if (ndiff)
		*ndiff = 0;
	if (!a || !b)
		return nz__error_set(NZ_EINVAL, "verify: two files are required");
	v.o = dflt;
	if (opts && opts->version == 1) /* ends before progress */
		memcpy(&v.o, opts, offsetof(nz_verify_opts, progress));
	else if (opts)
		v.o = *opts;
	if (v.o.version != NZ_VERIFY_OPTS_VERSION && v.o.version != 1)
		return nz__error_set(NZ_EINVAL, "verify: unknown options version %u", v.o.version);
	if (v.o.jobs < 0 || v.o.jobs > NZ_WRITE_MAX_JOBS)
		return nz__error_set(NZ_EINVAL, "verify: jobs must be 0 (all cores) to %d, not %d",
				     NZ_WRITE_MAX_JOBS, v.o.jobs);
	if (!v.o.max_diffs)
		v.o.max_diffs = 1000;
	nz__alloc_init();
	if ((err = open_side(&v.a, a, flags & NZ__VERIFY_NWB)) < 0 || (err = open_side(&v.b, b, flags)) < 0 ||
	    (err = follow_links(&v.a, &v.b)) < 0 || (err = follow_links(&v.b, &v.a)) < 0)
		goto done;
	if (v.a.meta_diff[0])
		diff(&v, v.a.meta_key, "%s", v.a.meta_diff);
	if (v.b.meta_diff[0])
		diff(&v, v.b.meta_key, "%s", v.b.meta_diff);
	schema_versions(&v);
	if ((err = compare_models(&v)) < 0)
		goto done;
	if (v.ndiff)
		err = nz__error_set(NZ_EMISMATCH, "'%s' and '%s' differ in %llu place%s", a, b,
				    (unsigned long long)v.ndiff, v.ndiff == 1 ? "" : "s");
done:
	if (ndiff)
		*ndiff = v.ndiff;
	close_side(&v.a);
	close_side(&v.b);
	return err;
}
