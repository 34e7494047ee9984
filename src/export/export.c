/* nz_export_hdf5: the HDF5 model written in hdmf-zarr's conventions. Groups
 * and attributes are written serially; each fixed-size dataset larger than
 * SMALL_BYTES, or with keep_filters whose HDF5 chunks can move as stored,
 * streams through nz_write_array from an HDF5 source. */
#define _XOPEN_SOURCE 700 /* POSIX interfaces under -std=c11 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "export/export_impl.h"
#include "codec/codec.h"
#include "hdmf/hdmf.h"
#include "store/replace.h"
#include "util/alloc.h"
#include "util/json.h"

#define SMALL_BYTES ((size_t)4 << 20)
#define AUTO_CHUNK_BYTES ((uint64_t)4 << 20)
#define KEEP_CONTIGUOUS_MAX ((uint64_t)64 << 20)

typedef struct xctx {
	nz__h5file *f;
	nz__xmodel m;
	nz__hdmf h;
	nz_store *store;
	nz_export_opts o;
	nz_export_stats st;
	json_t *links;      /* group path -> zarr_link list */
	const char *specloc; /* absolute path of the cached specs, or NULL */
	char *root_oid;
	int resume;                 /* store compares metadata; chunks kept */
	nz_nwb_resume_info resumed; /* what the resume found */
	nz__replace replace;        /* an overwritten old store, kept until the end */
	const nz__xlinks *plan;     /* the stores of this export (extlink.c) */
	size_t self;                /* this file's entry in plan */
} xctx;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *store_path(const char *path)
{
	return path[0] == '/' ? path + 1 : path;
}

char *nz__x_model_oid(void *ctx, const char *path)
{
	const nz__xnode *n = nz__xmodel_find(ctx, path);
	json_t *v = n ? json_object_get(n->attrs, "object_id") : NULL;
	return json_is_string(v) ? nz__strdup(json_string_value(v)) : NULL;
}

/* An external link names the export of its file, beside ours
 * (docs/format.md, "External links"). */
static int ext_source(char **out, void *ctx, const nz__xnode *n)
{
	const xctx *x = ctx;
	return nz__xlinks_source(out, x->plan, x->self, n);
}

static int write_group(xctx *x, const nz__xnode *n, json_t *root_attrs)
{
	int err = nz__x_write_group(&x->h, n, x->links, root_attrs);
	x->st.groups++;
	x->st.attributes += json_object_size(n->attrs);
	return err < 0 ? nz__error_wrap("exporting group '%s'", n->path) : 0;
}

static void choose_chunks(const xctx *x, const nz__xnode *n, uint64_t *chunks, uint64_t itemsize)
{
	uint64_t bytes = itemsize;
	int d, auto_ = x->o.chunks == NZ_EXPORT_CHUNKS_AUTO;

	for (d = 0; d < n->ndim; d++) {
		chunks[d] = n->shape[d] ? n->shape[d] : 1;
		bytes = bytes * chunks[d];
	}
	if (n->ndim == 0) {
		chunks[0] = 1;
		return;
	}
	if (n->chunks[0] && !auto_) {
		for (d = 0; d < n->ndim; d++)
			chunks[d] = n->chunks[d];
		return;
	}
	if (n->chunks[0]) {
		/* Whole HDF5 chunks stacked along the first dimension. */
		uint64_t one = itemsize, k;
		for (d = 0; d < n->ndim; d++)
			one *= n->chunks[d];
		k = one ? AUTO_CHUNK_BYTES / one : 1;
		for (d = 0; d < n->ndim; d++)
			chunks[d] = n->chunks[d];
		chunks[0] *= k ? k : 1;
		if (chunks[0] > n->shape[0])
			chunks[0] = n->shape[0] ? n->shape[0] : 1;
		return;
	}
	if (!auto_ && bytes <= KEEP_CONTIGUOUS_MAX)
		return;
	while (bytes > AUTO_CHUNK_BYTES) {
		int big = 0;
		for (d = 1; d < n->ndim; d++)
			if (chunks[d] > chunks[big])
				big = d;
		if (chunks[big] <= 1)
			break;
		bytes = bytes / chunks[big] * ((chunks[big] + 1) / 2);
		chunks[big] = (chunks[big] + 1) / 2;
	}
}

/* v3 only: the shards of a large dataset (xlayout.c's rule). */
static int choose_shards(const xctx *x, const nz__xnode *n, const uint64_t *chunks, uint64_t itemsize,
			 uint64_t *shards, const uint64_t **out)
{
	*out = NULL;
	if (x->o.zarr_format != 3)
		return 0;
	return nz__x_choose_shards(n, chunks, itemsize, x->o.shards, shards, out);
}

json_t *nz__x_compound_zarr_dtype(const nz__xtype *t)
{
	json_t *list = json_array();
	size_t i;
	for (i = 0; list && i < t->nfields; i++) {
		const nz__xtype *ft = &t->fields[i].type;
		const char *name = ft->cls == NZ__XT_STRING ? "str" : nz__xtype_zarr_name(ft);
		if (json_array_append_new(list, json_pack("{s:s,s:s}", "dtype", name, "name",
							  t->fields[i].name)) < 0) {
			json_decref(list);
			return NULL;
		}
	}
	return list;
}

static int h5_source_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	nz__h5ds *ds = ctx;
	const nz__xnode *n = nz__h5ds_node(ds);
	uint64_t nelem;
	int err = nz__xnode_count(&nelem, n, count);
	if (err < 0)
		return err;
	return nz__h5ds_read(ds, start, count, out, (size_t)nelem * n->type.size);
}

/* Fixed-size values: small ones in one read, large ones through the engine.
 * `stored`: the array's codecs are the dataset's HDF5 filters
 * (keep_filters), so a small one also goes through the engine, which moves
 * its stored chunks; METADATA writes it whole (DATA skips small ones). */
static int write_fixed(xctx *x, nz_array *a, nz__h5ds *ds, const nz__xnode *n, const char *dtype,
		       uint64_t nelem, int stored)
{
	uint64_t start[NZ_MAX_DIMS] = { 0 }, one[1] = { 1 }, ones[NZ_MAX_DIMS];
	nz_source_ops ops = { NZ_SOURCE_OPS_VERSION, h5_source_read, NULL };
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats ws = {0};
	nz_source *src = NULL;
	void *buf = NULL;
	char vdtype[32];
	size_t bytes;
	int err;

	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s' is too large", n->path);
	x->st.bytes += bytes;
	if (bytes <= SMALL_BYTES && !(stored && bytes > 0)) {
		if (!(buf = nz__malloc(bytes ? bytes : 1)))
			return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		err = nz__h5ds_read(ds, start, n->shape, buf, bytes);
		if (!err)
			err = nz_array_write_all(a, buf, bytes);
		nz__free(buf);
		return err;
	}
	if (x->o.phase == NZ_EXPORT_METADATA && bytes > SMALL_BYTES) /* their chunks come in DATA */
		return 0;
	/* The engine takes a structured dtype's records as opaque "|V<size>". */
	if (dtype[0] == '[')
		snprintf(vdtype, sizeof vdtype, "|V%zu", n->type.size);
	err = nz_source_from_callback(&src, &ops, ds, dtype[0] == '[' ? vdtype : dtype,
				      n->ndim ? n->ndim : 1, n->ndim ? n->shape : one);
	if (err < 0)
		return err;
	nz__h5ds_offer_stored(ds, src);
	wo.jobs = x->o.jobs;
	wo.buffer_size = x->o.buffer_size;
	wo.progress = x->o.progress;
	wo.progress_ctx = x->o.progress_ctx;
	wo.cancel_flag = x->o.cancel_flag;
	wo.stats = &ws;
	if (x->o.phase == NZ_EXPORT_DATA) {
		/* One chunk per task: the same plan in every process whatever
		 * its jobs (the engine's own shape depends on them). */
		for (int d = 0; d < NZ_MAX_DIMS; d++)
			ones[d] = 1;
		wo.task_chunks = ones;
		wo.part = x->o.part;
		wo.nparts = x->o.nparts;
	}
	err = x->resume ? nz__hdmf_write_resumed(a, x->store, src, &wo, &x->resumed)
			: nz_write_array(a, src, &wo);
	if (ws.jobs > x->st.jobs)
		x->st.jobs = ws.jobs;
	nz_source_free(src);
	return err;
}

/* Strings, references and compounds holding them: read whole, written as
 * '|O' elements (text for strings, JSON for the rest). */
static int write_objects(xctx *x, nz_array *a, nz__h5ds *ds, const nz__xnode *n, uint64_t nelem)
{
	uint64_t start[NZ_MAX_DIMS] = { 0 };
	nz__xjson_ctx jc = { nz__x_model_oid, &x->m, x->root_oid, 1 };
	char **items = NULL;
	size_t *lens = NULL, i, bytes;
	unsigned char *buf = NULL;
	int err = 0, text = n->type.cls == NZ__XT_STRING;

	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s' is too large", n->path);
	buf = nz__calloc(1, bytes ? bytes : 1);
	items = nz__calloc(nelem ? nelem : 1, sizeof *items);
	lens = nz__calloc(nelem ? nelem : 1, sizeof *lens);
	if (!buf || !items || !lens) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	if ((err = nz__h5ds_read(ds, start, n->shape, buf, bytes)) < 0 ||
	    (err = nz__xvalues_canon(&x->m, n, buf, (size_t)nelem)) < 0)
		goto done;
	for (i = 0; i < nelem; i++) {
		const unsigned char *p = buf + i * n->type.size;
		/* v3 reference arrays hold the targets' paths (hdmf-zarr 0.14). */
		if (text || (x->o.zarr_format == 3 && n->type.cls == NZ__XT_REF)) {
			memcpy(&items[i], p, sizeof(char *));
			lens[i] = strlen(items[i]);
			continue;
		}
		unsigned long failures = nz__alloc_failures();
		json_t *v = nz__xelem_json(&n->type, p, &jc, 0);
		err = v ? nz__json_dumps(&items[i], v, NZ_JSON_COMPACT)
		      : nz__alloc_failures() != failures
			? nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path)
			: nz__error_set(NZ_EUNSUPPORTED, "'%s': element %zu cannot be written as JSON",
					n->path, i);
		json_decref(v);
		if (err < 0)
			goto done;
		lens[i] = strlen(items[i]);
	}
	x->st.bytes += bytes;
	if (nelem)
		err = nz_array_write_all_vlen(a, (const char *const *)items, lens, (size_t)nelem);
done:
	if (!text && !(x->o.zarr_format == 3 && n->type.cls == NZ__XT_REF))
		for (i = 0; items && i < nelem; i++)
			nz__free(items[i]);
	nz__xvalues_free(&n->type, buf, (size_t)nelem);
	nz__free(buf);
	nz__free(items);
	nz__free(lens);
	return err;
}

/* keep_filters: dataset n's HDF5 filters as its Zarr codecs (out->kept), or
 * the default codec, with a note when a filter has no Zarr codec. Scalars
 * and compounds holding text or references are written whole with the
 * default codec, as are datasets without filters. */
static int keep_filters(xctx *x, const nz__xnode *n, int objects, nz__h5keep *out)
{
	nz__h5filters p;
	char why[160];
	int err;

	memset(out, 0, sizeof *out);
	if (n->scalar || (objects && n->type.cls == NZ__XT_COMPOUND))
		return 0;
	if ((err = nz__h5_filters(&p, x->f, n->path)) < 0 || nz__h5_keep_codecs(out, &p, n->type.size, !objects))
		return err;
	if (out->missing[0]) {
		x->st.keep_fallbacks++;
		snprintf(why, sizeof why, "HDF5 filter %s has no Zarr codec: written with the default codec",
			 out->missing);
		if (x->o.note)
			x->o.note(n->path, why, x->o.note_ctx);
	}
	return 0;
}

/* NZ_EXPORT_DATA: this process's part of a large dataset's chunks, into the
 * array a METADATA export created. Everything else was written there. */
static int write_dataset_part(xctx *x, const nz__xnode *n)
{
	uint64_t nelem;
	size_t bytes;
	nz__h5ds *ds = NULL;
	nz_array *a = NULL;
	char *dtype = NULL;
	int err;

	if (nz__xtype_has_pointers(&n->type))
		return 0;
	if ((err = nz__xnode_count(&nelem, n, n->shape)) < 0)
		goto done;
	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0 || bytes <= SMALL_BYTES)
		goto done; /* too large fails in METADATA already */
	if ((err = nz__xtype_numpy(&dtype, &n->type)) < 0 ||
	    (err = nz_array_open(&a, x->store, store_path(n->path))) < 0 ||
	    (err = nz__h5ds_open(&ds, x->f, n, x->o.hdf5_decode)) < 0)
		goto done;
	err = write_fixed(x, a, ds, n, dtype, nelem, 0);
done:
	nz__h5ds_close(ds);
	nz_array_free(a);
	nz__free(dtype);
	if (err < 0)
		return nz__error_wrap("exporting '%s'", n->path);
	return 0;
}

static int write_dataset(xctx *x, const nz__xnode *n)
{
	static const uint64_t one[1] = { 1 };
	uint64_t chunks[NZ_MAX_DIMS], shard_buf[NZ_MAX_DIMS], nelem;
	const uint64_t *shards = NULL;
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz__hdmf_dset d;
	nz__h5keep keep = { 0 };
	json_t *attrs = NULL;
	nz__h5ds *ds = NULL;
	nz_array *a = NULL;
	char *dtype = NULL;
	const char *zd = NULL;
	int err = 0, objects = nz__xtype_has_pointers(&n->type);

	memset(&d, 0, sizeof d);
	if ((err = nz__xtype_numpy(&dtype, &n->type)) < 0)
		goto done;
	if ((err = nz__xnode_count(&nelem, n, n->shape)) < 0)
		goto done;
	choose_chunks(x, n, chunks, objects ? 1 : n->type.size);
	if (!objects && (err = choose_shards(x, n, chunks, n->type.size, shard_buf, &shards)) < 0)
		goto done;
	if (!(attrs = json_deep_copy(n->attrs))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	if (n->scalar) {
		zd = "scalar";
	} else if (n->type.cls != NZ__XT_COMPOUND) {
		zd = nz__xtype_zarr_name(&n->type);
	} else if (json_object_set_new(attrs, "zarr_dtype", nz__x_compound_zarr_dtype(&n->type)) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	d.dtype = objects ? "|O" : dtype;
	d.zarr_dtype = zd;
	d.object_codec = !objects ? NZ_OBJECT_NONE
			 : n->type.cls != NZ__XT_STRING ? NZ_OBJECT_JSON2
			 : n->type.utf8 ? NZ_OBJECT_VLEN_UTF8 : NZ_OBJECT_VLEN_BYTES;
	d.ndim = n->scalar ? 1 : n->ndim;
	d.shape = n->scalar ? one : n->shape;
	d.chunks = chunks;
	d.compressor = x->o.compressor;
	d.attrs = attrs;
	d.shards = shards;
	if (x->o.keep_filters && (err = keep_filters(x, n, objects, &keep)) < 0)
		goto done;
	if (keep.kept) {
		d.compressor = &keep.compressor;
		d.filters_json = keep.filters;
	}
	if (n->type.cls == NZ__XT_COMPOUND && objects && x->o.zarr_format == 3) {
		if ((err = nz__h5ds_open(&ds, x->f, n, x->o.hdf5_decode)) == 0)
			err = nz__x_write_struct3(&x->h, ds, &x->m, n, nelem, attrs, chunks, &x->st.bytes);
		goto done;
	}
	if (n->type.cls == NZ__XT_COMPOUND && !objects) {
		/* Structured dtypes need zarr's own fill value (base64 zeros). */
		ao.dtype = dtype;
		ao.ndim = d.ndim;
		ao.shape = d.shape;
		ao.chunks = chunks;
		ao.compressor = x->o.compressor || x->o.zarr_format == 2 ? x->o.compressor : &x->h.compressor;
		if (keep.kept) {
			ao.compressor = &keep.compressor;
			ao.filters_json = keep.filters;
		}
		ao.shards = shards;
		if (x->o.zarr_format == 3)
			ao.dimension_separator = nz__hdmf_key_separator(store_path(n->path), ao.ndim);
		err = nz_array_create(&a, x->store, store_path(n->path), &ao);
		if (!err)
			err = nz__hdmf_attrs_write(&x->h, store_path(n->path), attrs);
	} else {
		err = nz__hdmf_dset_create(&a, &x->h, store_path(n->path), &d);
	}
	if (err < 0 || nelem == 0)
		goto done;
	if ((err = nz__h5ds_open(&ds, x->f, n, x->o.hdf5_decode)) < 0)
		goto done;
	err = objects ? write_objects(x, a, ds, n, nelem)
		      : write_fixed(x, a, ds, n, dtype, nelem, keep.kept);
	if (!err) {
		nz__h5stats hs;
		nz__h5ds_stats(ds, &hs);
		x->st.raw_chunks += hs.raw_chunks;
		x->st.hdf5_reads += hs.hdf5_reads;
		x->st.stored_chunks += hs.stored_chunks;
	}
done:
	x->st.datasets++;
	x->st.attributes += json_object_size(n->attrs);
	nz__h5ds_close(ds);
	nz_array_free(a);
	json_decref(attrs);
	nz__free(dtype);
	if (err < 0)
		return nz__error_wrap("exporting '%s'", n->path);
	return 0;
}

static int write_all(xctx *x)
{
	json_t *root = json_object();
	size_t i;
	int err = 0;

	if (!root || !(x->links = json_object())) {
		json_decref(root);
		return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	x->specloc = nz__x_specloc(&x->m);
	x->root_oid = nz__x_model_oid(&x->m, "/");
	/* (DATA writes no links: it has no plan of the linked stores) */
	if (x->o.phase != NZ_EXPORT_DATA &&
	    (err = nz__x_collect_links(x->links, &x->st.links, &x->m, ext_source, x)) < 0)
		goto done;
	for (i = 0; i < x->m.count && !err; i++) {
		const nz__xnode *n = &x->m.nodes[i];
		if (nz__x_under(n->path, x->specloc))
			continue;
		if (x->o.phase == NZ_EXPORT_DATA)
			err = n->kind == NZ__X_DATASET ? write_dataset_part(x, n) : 0;
		else if (n->kind == NZ__X_GROUP)
			err = write_group(x, n, strcmp(n->path, "/") == 0 ? root : NULL);
		else if (n->kind == NZ__X_DATASET)
			err = write_dataset(x, n);
	}
	if (err < 0 || x->o.phase == NZ_EXPORT_DATA)
		goto done;
	if (x->specloc) {
		/* The file's own cached namespaces, extensions included (hdmf
		 * takes the HDF5 lock for its reads). */
		if ((err = nz__hdmf_copy_specs(&x->h, x->f->path, root)) < 0)
			goto done;
	}
	if ((err = nz__hdmf_group(&x->h, "", root)) < 0) {
		err = nz__error_wrap("exporting group '/'");
		goto done;
	}
	/* METADATA: .zmetadata comes once every process wrote its data. */
	if (x->o.phase == NZ_EXPORT_METADATA)
		err = nz_store_sync(x->store);
	else if ((err = nz_consolidate(x->store)) == 0)
		err = nz__hdmf_marker_finish(x->store); /* only now complete */
done:
	json_decref(root);
	return err;
}

/* A resume must ask for what the interrupted export was asked: copy_links
 * (recorded in the marker) decides whether a linked object is copied in or
 * becomes a link, and the copies already stored cannot be told apart from
 * the source's own objects by their metadata alone. */
static int same_request(const xctx *x, const char *dst)
{
	nz_store *st = NULL;
	json_t *m = NULL;
	int began, err = 0;

	/* No store or no marker: open_dst says what there is to resume. */
	if (nz_store_open_dir(&st, dst, NZ_STORE_READ) < 0 || nz__hdmf_marker_read(&m, st) < 0) {
		nz_error_clear();
		goto done;
	}
	began = json_is_true(json_object_get(m, "copy_links"));
	if (began != (x->o.copy_links != 0))
		err = nz__error_set(NZ_EMISMATCH, "resume: '%s' was begun %s copy_links (what external "
				    "links lead to %s); resume it with the same request", dst,
				    began ? "with" : "without", began ? "copied in" : "exported beside");
done:
	json_decref(m);
	nz_store_free(st);
	return err;
}

/* The output store: reopened to resume, or created with the incomplete
 * marker as its first key. */
static int open_dst(xctx *x, const char *src, const char *dst)
{
	unsigned int flags = x->o.fsync ? NZ_STORE_FSYNC : 0;
	const char *keep[] = {src, NULL};
	nz_codec *c = NULL;
	json_t *m = NULL;
	int err;
	/* A compressor that would fail at the first dataset fails now, before
	 * the output is touched. */
	if (x->o.compressor && (err = nz__codec_from_compressor(&c, x->o.compressor)) < 0)
		return nz__error_wrap("compressor");
	nz__codec_free(c);
	if (x->o.jobs < 0 || x->o.jobs > NZ_WRITE_MAX_JOBS)
		return nz__error_set(NZ_EINVAL, "jobs must be 0 (all cores) to %d, not %d",
				     NZ_WRITE_MAX_JOBS, x->o.jobs);
	if (x->o.resume && x->o.overwrite)
		return nz__error_set(NZ_EINVAL, "'%s': resume and overwrite exclude each other", dst);
	if (x->o.resume && x->o.phase != NZ_EXPORT_ALL)
		return nz__error_set(NZ_EUNSUPPORTED, "'%s': resume of a multi-process export is not "
				     "supported; resume with one process", dst);
	if (x->o.resume) {
		err = nz__hdmf_resume_open(&x->store, &m, &x->resumed.temp_removed, dst, flags);
		json_decref(m);
		x->resume = x->store != NULL;
		if (err < 0 || x->store)
			return err;
	}
	/* Resuming with nothing to resume (no output, or an empty directory a
	 * writer killed before its marker left) starts afresh. */
	if ((err = nz__replace_begin(&x->replace, dst, x->o.overwrite || x->o.resume,
				     NZ_INCOMPLETE_MARKER, keep)) < 0 ||
	    (err = nz_store_open_dir(&x->store, dst, flags | NZ_STORE_CREATE)) < 0)
		return err;
	if (!(m = json_pack("{s:s}", "source", src)) ||
	    (x->o.copy_links && json_object_set_new(m, "copy_links", json_true()) != 0)) {
		json_decref(m);
		return nz__error_set(NZ_ENOMEM, "out of memory creating '%s'", dst);
	}
	err = nz__hdmf_marker_write(x->store, m);
	json_decref(m);
	return err;
}

static int export_file(const char *src, const char *dst, const nz_export_opts *opts,
		       const nz__xlinks *plan, size_t self);

/* A store of the plan that a resumed export finished already: kept. */
static int linked_done(const char *dst)
{
	nz_store *st = NULL;
	int done = nz_store_open_dir(&st, dst, NZ_STORE_READ) == 0 && nz_nwb_check_complete(st) == 0;
	nz_store_free(st);
	return done;
}

/* The files the source links into, each exported as the source is (its
 * own stats and checks; it need not be NWB), before the source. Several
 * processes (MPI): whole, by the METADATA one, before the source's
 * metadata; only the source's own large datasets are shared out. */
static int export_linked(const xctx *x)
{
	nz_export_opts o = x->o;
	size_t i;
	int err;
	o.stats = NULL;
	o.phase = NZ_EXPORT_ALL;
	o.part = o.nparts = 0;
	for (i = 1; i < x->plan->n; i++) {
		if (x->plan->v[i].keep || (o.resume && linked_done(x->plan->v[i].dst)))
			continue;
		if ((err = export_file(x->plan->v[i].real, x->plan->v[i].dst, &o, x->plan, i)) < 0)
			return err;
	}
	return 0;
}

static int export_file(const char *src, const char *dst, const nz_export_opts *opts,
		       const nz__xlinks *plan, size_t self)
{
	static const nz_export_opts dflt = NZ_EXPORT_OPTS_INIT;
	nz__xlinks own = { 0 };
	xctx x;
	double t0 = now_s();
	int err;

	memset(&x, 0, sizeof x);
	x.o = dflt;
	if (opts && opts->version >= 1 && opts->version < 3) { /* ends before zarr_format */
		memcpy(&x.o, opts, offsetof(nz_export_opts, zarr_format));
		x.o.zarr_format = 2;
	} else if (opts && opts->version == 3) { /* ends before keep_filters */
		memcpy(&x.o, opts, offsetof(nz_export_opts, keep_filters));
	} else if (opts && opts->version == 4) { /* ends before copy_links */
		memcpy(&x.o, opts, offsetof(nz_export_opts, copy_links));
	} else if (opts) {
		x.o = *opts;
	}
	x.plan = plan;
	x.self = self;
	if (!src || !dst)
		return nz__error_set(NZ_EINVAL, "export: source and destination are required");
	if (x.o.version < 1 || x.o.version > NZ_EXPORT_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "export: unknown options version %u", x.o.version);
	if (!x.o.zarr_format)
		x.o.zarr_format = 3;
	if (x.o.zarr_format != 2 && x.o.zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "export: zarr_format must be 2 or 3, not %d", x.o.zarr_format);
	if (x.o.keep_filters && x.o.compressor)
		return nz__error_set(NZ_EINVAL, "export: keep_filters takes each dataset's codecs from its "
				     "HDF5 filters: no compressor with it");
	if (x.o.shards && x.o.zarr_format != 3)
		return nz__error_set(NZ_EINVAL, "export: shards need Zarr v3 (Zarr v2 has no shards)");
	if (x.o.shards && (!x.o.shards[0] || !x.o.shards[1]))
		return nz__error_set(NZ_EINVAL, "export: shard sizes must be positive");
	nz__alloc_init();
	if ((err = nz__h5_open(&x.f, src)) < 0)
		goto done;
	if ((err = nz__h5_walk(&x.m, x.f)) < 0 ||
	    (err = plan ? nz__xmodel_check_links(&x.m, src) : nz__xmodel_check_nwb(&x.m, src)) < 0)
		goto done;
	/* Checked before anything is written, linked stores included. */
	if (x.o.resume && x.o.phase == NZ_EXPORT_ALL && (err = same_request(&x, dst)) < 0)
		goto done;
	if (!plan && x.o.copy_links) {
		/* One store: the linked objects walked into the model (every
		 * process of an MPI export makes the same one). */
		if ((err = nz__xmodel_inline(&x.m, src)) < 0)
			goto done;
	} else if (!plan && x.o.phase != NZ_EXPORT_DATA) {
		/* Every linked file opened and checked before any output (DATA:
		 * the METADATA process exported them). */
		if ((err = nz__xlinks_plan(&own, src, dst, &x.m, &x.o)) < 0)
			goto done;
		x.plan = &own;
		if ((err = export_linked(&x)) < 0)
			goto done;
	}
	if (x.o.phase == NZ_EXPORT_DATA) {
		/* Into the store a METADATA export made: nothing to prepare. */
		if ((err = nz_store_open_dir(&x.store, dst, NZ_STORE_WRITE)) < 0 ||
		    (err = write_all(&x)) < 0 || (err = nz_store_sync(x.store)) < 0)
			goto done;
		goto done;
	}
	if ((err = open_dst(&x, src, dst)) < 0)
		goto done;
	/* The root early (v3: made by init): with the marker, a failed export
	 * leaves a recognisable incomplete store that --resume finishes and
	 * --overwrite replaces. */
	if ((err = nz__hdmf_init_format(&x.h, x.store, 0, x.o.compressor, x.o.zarr_format)) < 0)
		goto done;
	if (x.o.zarr_format == 2 && (err = nz_group_create(x.store, "")) < 0)
		goto done;
	err = write_all(&x);
done:
	/* Only a finished store replaces the old one; a failed one gives it back. */
	if (err == 0)
		err = nz__replace_commit(&x.replace);
	nz_store_free(x.store);
	x.store = NULL;
	if (err < 0)
		nz__replace_abort(&x.replace);
	x.st.elapsed_s = now_s() - t0;
	x.st.chunks_kept = x.resumed.chunks_kept;
	x.st.chunks_repaired = x.resumed.chunks_repaired;
	x.st.temp_removed = x.resumed.temp_removed;
	if (opts && opts->stats)
		memcpy(opts->stats, &x.st, x.o.version == 1   ? offsetof(nz_export_stats, jobs)
					   : x.o.version < 4 ? offsetof(nz_export_stats, stored_chunks)
							     : sizeof x.st);
	json_decref(x.links);
	nz__free(x.root_oid);
	nz__xmodel_clear(&x.m);
	nz_store_free(x.store);
	nz__h5_close(x.f);
	nz__xlinks_clear(&own);
	if (err < 0)
		return nz__error_wrap("export '%s' -> '%s'", src, dst);
	return 0;
}

int nz_export_hdf5(const char *src, const char *dst, const nz_export_opts *opts)
{
	return export_file(src, dst, opts, NULL, 0);
}
