/* nz_upgrade: a Zarr v2 NWB file (hdmf-zarr <= 0.13's layout) rewritten in
 * hdmf-zarr 0.14's v3 layout. The v2 store is walked into the model verify
 * uses (zwalk.c) and checked whole before the output exists; then it is
 * written through src/hdmf as export writes an HDF5 model: groups and
 * attributes serially, object arrays decoded and written in 0.14's forms,
 * fixed-size datasets with their chunk grid kept, moved unit by unit
 * (nz_array_copy_unit: the stored bytes wherever the codec carries over) on
 * the job's threads (upcopy.c). The result is verified against the source
 * before its incomplete marker goes. */
#define _XOPEN_SOURCE 700 /* POSIX interfaces under -std=c11 */
#include <stdio.h>
#include <string.h>

#include "codec/codec.h"
#include "engine/pool.h" /* nz__now */
#include "export/export_impl.h"
#include "export/upgrade_impl.h"
#include "export/zread.h"
#include "hdmf/hdmf.h"
#include "store/replace.h"
#include "util/alloc.h"
#include "util/json.h"

static const uint64_t zero[NZ_MAX_DIMS];

typedef struct uctx {
	const char *src_path, *dst_path;
	nz_store *src, *store;
	nz__xmodel m;
	nz__hdmf h;
	nz_upgrade_opts o;
	nz_upgrade_stats st;
	json_t *links;       /* group path -> zarr_link list (v2 form) */
	const char *specloc; /* absolute path of the cached specs, or NULL */
	nz__replace replace;
	int created;         /* nz__replace_begin succeeded */
} uctx;

/* ---- the whole input, before any output -------------------------------- */

/* The output's chunks: the v2 grid, or the caller's for 2-D fixed-size data. */
static void out_chunks(const uctx *u, const nz__xnode *n, uint64_t *chunks)
{
	int d, own = u->o.chunks && n->ndim == 2 && !nz__xtype_has_pointers(&n->type);
	for (d = 0; d < n->ndim; d++)
		chunks[d] = own ? u->o.chunks[d] : n->chunks[d];
	if (n->ndim == 0)
		chunks[0] = 1;
}

static int choose_shards(const uctx *u, const nz__xnode *n, const uint64_t *chunks, uint64_t *shards,
			 const uint64_t **out);

/* The caller's shard shape fits every 2-D dataset: refused before any output. */
static int check_shards(const uctx *u, const nz__xnode *n)
{
	uint64_t chunks[NZ_MAX_DIMS], shards[NZ_MAX_DIMS];
	const uint64_t *p;
	if (!u->o.shards || n->ndim != 2 || nz__xtype_has_pointers(&n->type))
		return 0;
	out_chunks(u, n, chunks);
	return choose_shards(u, n, chunks, shards, &p);
}

/* Every chunk of `a` is stored: hdmf-zarr and our writers store them all,
 * so a missing one is damage that a reader would take for fill values. */
static int check_chunks(uctx *u, nz_array *a, const nz__xnode *n)
{
	uint64_t grid[NZ_MAX_DIMS], idx[NZ_MAX_DIMS] = { 0 }, k, nchunks = nz_array_nchunks(a), nelem;
	int d, err = 0, ndim = nz_array_ndim(a);
	if ((err = nz__xnode_count(&nelem, n, n->shape)) < 0 || nelem == 0)
		return err;
	nz_array_chunk_grid(a, grid);
	for (k = 0; k < nchunks && !err; k++) {
		char *key = NULL;
		if ((err = nz_array_chunk_key(&key, a, idx)) < 0)
			break;
		err = nz_store_exists(u->src, key);
		if (err == 0)
			err = nz__error_set(NZ_EFORMAT, "'%s': chunk '%s' of '%s' is missing (the file is "
					    "damaged: every chunk of an NWB-Zarr file is stored)",
					    u->src_path, key, n->path);
		else if (err > 0)
			err = 0;
		nz__free(key);
		for (d = ndim - 1; d >= 0 && ++idx[d] == grid[d]; d--)
			idx[d] = 0;
	}
	return err;
}

/* Object arrays are decoded now (a pickle the restricted decoder refuses
 * stops here), and again when written: they are small. */
static int check_dataset(uctx *u, const nz__xnode *n)
{
	nz_array *a = NULL;
	unsigned char *buf = NULL;
	uint64_t nelem;
	size_t bytes;
	int err;

	if ((err = nz_array_open(&a, u->src, n->path + 1)) < 0 || (err = check_chunks(u, a, n)) < 0 ||
	    (err = check_shards(u, n)) < 0)
		goto done;
	if (!nz__xtype_has_pointers(&n->type) || (err = nz__xnode_count(&nelem, n, n->shape)) < 0)
		goto done;
	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0 || !(buf = nz__calloc(1, bytes ? bytes : 1))) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	if (nelem && (err = nz__z_read(a, n, zero, n->shape, buf, bytes)) == 0)
		nz__xvalues_free(&n->type, buf, (size_t)nelem);
done:
	nz__free(buf);
	nz_array_free(a);
	return err < 0 ? nz__error_wrap("'%s'", u->src_path) : 0;
}

static int check_input(uctx *u)
{
	int err;
	size_t i;
	if ((err = nz_store_open_dir(&u->src, u->src_path, NZ_STORE_READ)) < 0 ||
	    (err = nz_store_zarr_format(u->src)) < 0)
		return err;
	if (err == 3)
		return nz__error_set(NZ_EINVAL, "'%s' is Zarr v3 already: nothing to upgrade", u->src_path);
	/* The documents are walked (no hierarchy): nz_metadata_check has made
	 * sure .zmetadata holds exactly them. */
	if ((err = nz_nwb_check_complete(u->src)) < 0 || (err = nz_metadata_check(u->src)) < 0 ||
	    (err = nz__z_walk(&u->m, NULL, u->src)) < 0 || (err = nz__xmodel_check_nwb(&u->m, u->src_path)) < 0)
		return err;
	for (i = 0; i < u->m.count && !err; i++)
		if (u->m.nodes[i].kind == NZ__X_DATASET)
			err = check_dataset(u, &u->m.nodes[i]);
	return err;
}

/* ---- groups and links --------------------------------------------------- */

/* An external link keeps its source as written: the store it names is not
 * upgraded. */
static int ext_source(char **out, void *ctx, const nz__xnode *n)
{
	(void)ctx;
	return (*out = nz__strdup(n->link_file)) ? 0 : nz__error_set(NZ_ENOMEM, "out of memory");
}

static int write_group(uctx *u, const nz__xnode *n, json_t *root_attrs)
{
	u->st.groups++;
	u->st.attributes += json_object_size(n->attrs);
	return nz__x_write_group(&u->h, n, u->links, root_attrs);
}

/* ---- datasets ------------------------------------------------------------ */

static int choose_shards(const uctx *u, const nz__xnode *n, const uint64_t *chunks, uint64_t *shards,
			 const uint64_t **out)
{
	return nz__x_choose_shards(n, chunks, n->type.size, u->o.shards, shards, out);
}

/* The v2 dataset's own compressor when it carries over to v3 unchanged
 * (blosc, zstd, gzip, no filters): then its chunks are reused. NULL for
 * any other (zlib, lz4, filters, none): the default re-encodes. */
static const nz_compressor *kept_codec(uctx *u, const nz__xnode *n, nz_compressor *c, char *cname,
				       size_t cap)
{
	char key[4200];
	void *raw = NULL;
	size_t len = 0;
	json_t *z = NULL, *comp, *filters;
	const char *id;
	const nz_compressor *out = NULL;
	nz_compressor init = NZ_COMPRESSOR_INIT;

	snprintf(key, sizeof key, "%s/.zarray", n->path + 1);
	if (nz_store_get(u->src, key, &raw, &len) < 0 || !(z = json_loadb(raw, len, 0, NULL)))
		goto done; /* checked already: re-encoding is always right */
	comp = json_object_get(z, "compressor");
	filters = json_object_get(z, "filters");
	id = json_string_value(json_object_get(comp, "id"));
	if (!id || (filters && !json_is_null(filters) && json_array_size(filters)))
		goto done;
	*c = init;
	c->cname = NULL;
	c->shuffle = 0;
	if (strcmp(id, "blosc") == 0) {
		const char *name = json_string_value(json_object_get(comp, "cname"));
		json_int_t shuffle = json_integer_value(json_object_get(comp, "shuffle"));
		if (!name || shuffle < 0 || shuffle > 2) /* AUTOSHUFFLE has no fixed v3 form */
			goto done;
		snprintf(cname, cap, "%s", name);
		c->id = "blosc";
		c->cname = cname;
		c->clevel = (int)json_integer_value(json_object_get(comp, "clevel"));
		c->shuffle = (int)shuffle;
		c->blocksize = (int)json_integer_value(json_object_get(comp, "blocksize"));
	} else if (strcmp(id, "zstd") == 0 || strcmp(id, "gzip") == 0) {
		c->id = id[0] == 'z' ? "zstd" : "gzip";
		c->clevel = (int)json_integer_value(json_object_get(comp, "level"));
		c->checksum = json_is_true(json_object_get(comp, "checksum"));
	} else {
		goto done;
	}
	out = c;
done:
	json_decref(z);
	nz_free(raw);
	return out;
}

/* xarray's dimension names of the v2 array (hdmf-zarr 0.13 writes them;
 * 0.14 keeps them in v3): ndim strings into names, else none. */
static const char *const *source_dims(uctx *u, const nz__xnode *n, json_t **attrs, const char **names)
{
	char *text = NULL;
	json_t *dims;
	size_t i;
	*attrs = NULL;
	if (n->scalar || nz_attrs_read(&text, u->src, n->path + 1) < 0 || !(*attrs = json_loads(text, 0, NULL))) {
		nz__free(text);
		return NULL;
	}
	nz__free(text);
	dims = json_object_get(*attrs, "_ARRAY_DIMENSIONS");
	if (json_array_size(dims) != (size_t)n->ndim)
		return NULL;
	for (i = 0; i < (size_t)n->ndim; i++)
		if (!(names[i] = json_string_value(json_array_get(dims, i))))
			return NULL;
	return names;
}

/* Strings, references and compounds holding them: decoded whole, written
 * as 0.14 writes them (text; references as the targets' paths; structs). */
static int write_objects(uctx *u, const nz__hdmf_dset *d, nz_array *src, const nz__xnode *n, uint64_t nelem)
{
	unsigned char *buf = NULL;
	char **items = NULL;
	size_t *lens = NULL, i, bytes;
	nz_array *dst = NULL;
	int err;

	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0 || !(buf = nz__calloc(1, bytes ? bytes : 1)))
		return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
	if (nelem && (err = nz__z_read(src, n, zero, n->shape, buf, bytes)) < 0)
		goto done;
	u->st.bytes += bytes;
	if (n->type.cls == NZ__XT_COMPOUND) {
		err = nz__x_put_struct3(&u->h, n, nelem, buf, d->attrs, d->chunks);
		goto done;
	}
	if ((err = nz__hdmf_dset_create(&dst, &u->h, n->path + 1, d)) < 0 || !nelem)
		goto done;
	items = nz__calloc((size_t)nelem, sizeof *items);
	lens = nz__calloc((size_t)nelem, sizeof *lens);
	if (!items || !lens) {
		err = nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		goto done;
	}
	for (i = 0; i < nelem; i++) {
		memcpy(&items[i], buf + i * sizeof(char *), sizeof(char *));
		lens[i] = strlen(items[i]);
	}
	err = nz_array_write_all_vlen(dst, (const char *const *)items, lens, (size_t)nelem);
done:
	nz_array_free(dst);
	nz__xvalues_free(&n->type, buf, (size_t)nelem);
	nz__free(buf);
	nz__free(items);
	nz__free(lens);
	return err;
}

/* A fixed-size dataset's values into the created v3 array `dst`. */
static int write_values(uctx *u, nz_array *dst, nz_array *src, const nz__xnode *n, uint64_t nelem)
{
	nz__ucopy_opts co = { u->o.jobs, u->o.progress, u->o.progress_ctx, u->o.cancel_flag };
	nz__ucopy_stats cs = { 0 };
	unsigned char *buf = NULL;
	size_t bytes;
	int err;

	if (nz__mul_size(&bytes, (size_t)nelem, n->type.size) < 0)
		return nz__error_set(NZ_EFORMAT, "'%s' is too large", n->path);
	u->st.bytes += bytes;
	if (!nelem)
		return 0;
	if (n->scalar) { /* a 0-d v3 array: one value */
		if (!(buf = nz__malloc(bytes)))
			return nz__error_set(NZ_ENOMEM, "'%s': out of memory", n->path);
		if ((err = nz__z_read(src, n, zero, n->shape, buf, bytes)) == 0)
			err = nz_array_write_all(dst, buf, bytes);
		nz__free(buf);
		u->st.chunks_recoded++;
		return err;
	}
	err = nz__ucopy_array(dst, src, &co, &cs);
	u->st.chunks_reused += cs.reused;
	u->st.chunks_recoded += cs.recoded;
	if (cs.jobs > u->st.jobs)
		u->st.jobs = cs.jobs;
	return err;
}

static int write_dataset(uctx *u, const nz__xnode *n)
{
	static const uint64_t one[1] = { 1 };
	uint64_t chunks[NZ_MAX_DIMS], shard_buf[NZ_MAX_DIMS], nelem;
	const uint64_t *shards = NULL;
	const char *dim_names[NZ_MAX_DIMS];
	nz_compressor kept;
	char cname[32];
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz__hdmf_dset d;
	json_t *attrs = NULL, *raw = NULL;
	nz_array *src = NULL, *dst = NULL;
	int err, objects = nz__xtype_has_pointers(&n->type);

	memset(&d, 0, sizeof d);
	if ((err = nz_array_open(&src, u->src, n->path + 1)) < 0 || (err = nz__xnode_count(&nelem, n, n->shape)) < 0)
		goto done;
	out_chunks(u, n, chunks);
	if (!objects && (err = choose_shards(u, n, chunks, shard_buf, &shards)) < 0)
		goto done;
	if (!(attrs = json_deep_copy(n->attrs))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	d.dtype = objects ? "|O" : nz_array_dtype(src);
	d.zarr_dtype = n->scalar ? "scalar" : n->type.cls != NZ__XT_COMPOUND ? nz__xtype_zarr_name(&n->type) : NULL;
	if (n->type.cls == NZ__XT_COMPOUND &&
	    json_object_set_new(attrs, "zarr_dtype", nz__x_compound_zarr_dtype(&n->type)) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	d.object_codec = !objects ? NZ_OBJECT_NONE
			 : n->type.cls != NZ__XT_STRING ? NZ_OBJECT_JSON2
			 : n->type.utf8 ? NZ_OBJECT_VLEN_UTF8 : NZ_OBJECT_VLEN_BYTES;
	d.ndim = n->scalar ? 1 : n->ndim;
	d.shape = n->scalar ? one : n->shape;
	d.chunks = chunks;
	d.compressor = u->o.compressor ? u->o.compressor : objects ? NULL : kept_codec(u, n, &kept, cname, sizeof cname);
	d.attrs = attrs;
	d.shards = shards;
	d.dims = source_dims(u, n, &raw, dim_names);
	/* Compounds are created here, not by hdmf, so their dimension names
	 * go in as the attribute itself. */
	if (d.dims && n->type.cls == NZ__XT_COMPOUND &&
	    json_object_set(attrs, "_ARRAY_DIMENSIONS", json_object_get(raw, "_ARRAY_DIMENSIONS")) < 0) {
		err = nz__error_set(NZ_ENOMEM, "out of memory");
		goto done;
	}
	if (objects) {
		err = write_objects(u, &d, src, n, nelem);
		goto done;
	}
	if (n->type.cls == NZ__XT_COMPOUND) {
		/* Structured dtypes need zarr's own fill value (base64 zeros). */
		ao.zarr_format = 3;
		ao.dtype = d.dtype;
		ao.ndim = n->ndim;
		ao.shape = n->shape;
		ao.chunks = chunks;
		ao.compressor = d.compressor ? d.compressor : &u->h.compressor;
		ao.shards = shards;
		ao.dimension_separator = nz__hdmf_key_separator(n->path + 1, ao.ndim);
		if ((err = nz_array_create(&dst, u->store, n->path + 1, &ao)) == 0)
			err = nz__hdmf_attrs_write(&u->h, n->path + 1, attrs);
	} else {
		err = nz__hdmf_dset_create(&dst, &u->h, n->path + 1, &d);
	}
	if (!err)
		err = write_values(u, dst, src, n, nelem);
done:
	u->st.datasets++;
	u->st.attributes += json_object_size(n->attrs);
	nz_array_free(dst);
	nz_array_free(src);
	json_decref(attrs);
	json_decref(raw);
	return err < 0 ? nz__error_wrap("upgrading '%s'", n->path) : 0;
}

/* ---- the whole upgrade ---------------------------------------------------- */

static int write_all(uctx *u)
{
	json_t *root = json_object();
	size_t i;
	int err = 0;

	if (!root || !(u->links = json_object())) {
		json_decref(root);
		return nz__error_set(NZ_ENOMEM, "out of memory");
	}
	u->specloc = nz__x_specloc(&u->m);
	if ((err = nz__x_collect_links(u->links, &u->st.links, &u->m, ext_source, NULL)) < 0)
		goto done;
	for (i = 0; i < u->m.count && !err; i++) {
		const nz__xnode *n = &u->m.nodes[i];
		if (u->o.cancel_flag && *u->o.cancel_flag)
			err = nz__error_set(NZ_ECANCELED, "cancelled");
		else if (nz__x_under(n->path, u->specloc))
			continue;
		else if (n->kind == NZ__X_GROUP)
			err = write_group(u, n, strcmp(n->path, "/") == 0 ? root : NULL);
		else if (n->kind == NZ__X_DATASET)
			err = write_dataset(u, n);
	}
	/* The file's own cached namespaces, extensions included. */
	if (!err && u->specloc)
		err = nz__hdmf_copy_specs(&u->h, u->src_path, root);
	if (!err)
		err = nz__hdmf_group(&u->h, "", root);
done:
	json_decref(root);
	return err;
}

static void first_diff(const char *path, const char *what, void *ctx)
{
	char *msg = ctx;
	if (!msg[0])
		snprintf(msg, 512, "%s: %s", path, what);
}

/* The output, consolidated but still marked incomplete, read back and
 * compared with the source as `nwbzarr verify` does. */
static int verify_output(uctx *u)
{
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	char first[512] = "";
	uint64_t ndiff = 0;
	double t0 = nz__now();
	int err;
	vo.jobs = u->o.jobs;
	vo.report = first_diff;
	vo.report_ctx = first;
	err = nz__verify_files(&ndiff, u->src_path, u->dst_path, &vo, NZ__VERIFY_NWB | NZ__VERIFY_UNFINISHED);
	u->st.verify_s = nz__now() - t0;
	if (err == NZ_EMISMATCH)
		return nz__error_set(NZ_EMISMATCH, "'%s' does not read back equal to '%s': %llu difference%s, "
				     "first %s", u->dst_path, u->src_path, (unsigned long long)ndiff,
				     ndiff == 1 ? "" : "s", first);
	return err < 0 ? nz__error_wrap("verifying '%s'", u->dst_path) : 0;
}

static int open_dst(uctx *u)
{
	unsigned int flags = u->o.fsync ? NZ_STORE_FSYNC : 0;
	const char *keep[] = { u->src_path, NULL };
	json_t *m;
	int err;
	if ((err = nz__replace_begin(&u->replace, u->dst_path, u->o.overwrite, NZ_INCOMPLETE_MARKER, keep)) < 0)
		return err;
	u->created = 1; /* from here a failure gives an --overwrite'n store back */
	if ((err = nz_store_open_dir(&u->store, u->dst_path, flags | NZ_STORE_CREATE)) < 0)
		return err;
	if (!(m = json_pack("{s:s,s:s}", "source", u->src_path, "command", "upgrade")))
		return nz__error_set(NZ_ENOMEM, "out of memory creating '%s'", u->dst_path);
	err = nz__hdmf_marker_write(u->store, m);
	json_decref(m);
	return err;
}

static int check_opts(const nz_upgrade_opts *o)
{
	nz_codec *c = NULL;
	int err;
	if (o->version != NZ_UPGRADE_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "upgrade: unknown options version %u", o->version);
	if (o->jobs < 0 || o->jobs > NZ_WRITE_MAX_JOBS)
		return nz__error_set(NZ_EINVAL, "jobs must be 0 (all cores) to %d, not %d", NZ_WRITE_MAX_JOBS, o->jobs);
	if ((o->chunks && (!o->chunks[0] || !o->chunks[1])) || (o->shards && (!o->shards[0] || !o->shards[1])))
		return nz__error_set(NZ_EINVAL, "upgrade: chunk and shard sizes must be positive");
	if (o->compressor && (err = nz__codec_from_compressor(&c, o->compressor)) < 0)
		return nz__error_wrap("compressor");
	nz__codec_free(c);
	return 0;
}

int nz_upgrade(const char *src, const char *dst, const nz_upgrade_opts *opts)
{
	static const nz_upgrade_opts dflt = NZ_UPGRADE_OPTS_INIT;
	double t0 = nz__now();
	uctx u;
	int err;

	memset(&u, 0, sizeof u);
	u.o = opts ? *opts : dflt;
	u.src_path = src;
	u.dst_path = dst;
	if (!src || !dst || !*src || !*dst)
		return nz__error_set(NZ_EINVAL, "upgrade: source and destination are required");
	nz__alloc_init();
	if ((err = check_opts(&u.o)) < 0 || (err = check_input(&u)) < 0)
		goto done;
	if ((err = open_dst(&u)) < 0 ||
	    (err = nz__hdmf_init_format(&u.h, u.store, 1, u.o.compressor, 3)) < 0 ||
	    (err = write_all(&u)) < 0 || (err = nz_consolidate(u.store)) < 0 || (err = nz_store_sync(u.store)) < 0)
		goto done;
	if (!u.o.no_verify && (err = verify_output(&u)) < 0)
		goto done;
	err = nz__hdmf_marker_finish(u.store); /* only now complete */
done:
	if (err == 0)
		err = nz__replace_commit(&u.replace);
	nz_store_free(u.store);
	u.store = NULL;
	if (err < 0 && u.created)
		nz__replace_abort(&u.replace);
	u.st.elapsed_s = nz__now() - t0;
	if (opts && opts->stats)
		*opts->stats = u.st;
	json_decref(u.links);
	nz__xmodel_clear(&u.m);
	nz_store_free(u.src);
	if (err < 0)
		return nz__error_wrap("upgrade '%s' -> '%s'", src, dst);
	return 0;
}
