/* TimeSeries and ElectricalSeries (data through the engine), and the
 * electrodes table they point into. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"

/* ---- electrodes ----------------------------------------------------------- */

size_t nz_nwb_electrode_count(const nz_nwb *f)
{
	return f ? f->n_rows : 0;
}

static int add_rows(nz_nwb *f, const nz_nwb_electrode *e, size_t n, int repeat)
{
	if (!e && n)
		return nz__error_set(NZ_EINVAL, "add_electrodes: no rows given");
	if (f->n_rows + n > f->cap_rows) {
		size_t cap = f->n_rows + n + 64, bytes;
		nz__nwb_row *r = NULL;
		if (cap < n || nz__mul_size(&bytes, cap, sizeof *r) < 0)
			return nz__error_set(NZ_EINVAL, "add_electrodes: %zu rows are too many", n);
		if (!(r = nz__realloc(f->rows, bytes)))
			return nz__error_set(NZ_ENOMEM, "out of memory adding %zu electrodes", n);
		f->rows = r;
		f->cap_rows = cap;
	}
	for (size_t i = 0; i < n; i++) {
		const nz_nwb_electrode *src = repeat ? e : &e[i];
		nz__nwb_row *row = &f->rows[f->n_rows];
		long g = -1;
		if (src->version != NZ_NWB_ELECTRODE_VERSION)
			return nz__error_set(NZ_EINVAL, "electrode %zu: struct of another version",
					     f->n_rows);
		for (size_t k = 0; src->group && k < f->n_groups; k++)
			if (strcmp(f->groups[k].name, src->group) == 0)
				g = (long)k;
		if (g < 0)
			return nz__error_set(NZ_ENOTFOUND, "electrode %zu: electrode group '%s' was "
					     "not added", f->n_rows, src->group ? src->group : "(null)");
		memset(row, 0, sizeof *row);
		row->group = (size_t)g;
		row->x = src->x;
		row->y = src->y;
		row->z = src->z;
		row->imp = src->imp;
		row->location = nz__strdup(src->location ? src->location : f->groups[g].location);
		row->filtering = src->filtering ? nz__strdup(src->filtering) : NULL;
		if (!row->location || (src->filtering && !row->filtering)) {
			nz__free(row->location);
			nz__free(row->filtering);
			return nz__error_set(NZ_ENOMEM, "out of memory adding electrodes");
		}
		f->n_rows++;
	}
	return 0;
}

static void drop_rows(nz_nwb *f, size_t keep)
{
	while (f->n_rows > keep) {
		f->n_rows--;
		nz__free(f->rows[f->n_rows].location);
		nz__free(f->rows[f->n_rows].filtering);
	}
}

/* All rows or none: a bad row drops those of the same call. */
int nz_nwb_add_electrodes(nz_nwb *f, const nz_nwb_electrode *e, size_t n, int repeat)
{
	int err = nz__nwb_check_open(f, "add_electrodes");
	size_t before;
	if (err < 0)
		return err;
	before = f->n_rows;
	if ((err = add_rows(f, e, n, repeat)) < 0)
		drop_rows(f, before);
	return err;
}

/* A float64 column written only when some row knows the value. */
static int real_col(nz__hdmf_table *t, nz_nwb *f, const char *name, const char *desc,
		    size_t field_offset, double *buf)
{
	int any = 0;
	for (size_t i = 0; i < f->n_rows; i++) {
		memcpy(&buf[i], (const char *)&f->rows[i] + field_offset, sizeof(double));
		any |= !isnan(buf[i]);
	}
	if (!any)
		return 0;
	return nz__hdmf_table_col(t, name, desc, "<f8", "float", buf, f->n_rows * sizeof *buf);
}

int nz__nwb_write_electrodes(nz_nwb *f)
{
	size_t n = f->n_rows;
	const char **text = nz__calloc(n, sizeof *text);
	json_t **refs = nz__calloc(n, sizeof *refs);
	double *buf = nz__calloc(n, sizeof *buf);
	nz__hdmf_table *t = NULL;
	int err = 0, any_filtering = 0;

	if (!text || !refs || !buf) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing the electrodes table");
		goto done;
	}
	if ((err = nz__nwb_table_oid(f)) < 0 ||
	    (err = nz__hdmf_table_begin(&t, &f->h, NZ__NWB_ELECTRODES,
					/* NWB 2.11 (the v3 schema) types the table */
					f->zarr_format == 3 ? "core" : "hdmf-common",
					f->zarr_format == 3 ? "ElectrodesTable" : "DynamicTable",
					"metadata about extracellular electrodes",
					f->table_oid, n)) < 0)
		goto done;
	/* Column order as pynwb writes the table. */
	for (size_t i = 0; i < n; i++)
		text[i] = f->rows[i].location;
	if ((err = nz__hdmf_table_col_text(t, "location", "the location of channel within the "
					   "subject e.g. brain region", text)) < 0)
		goto done;
	for (size_t i = 0; i < n; i++) {
		char target[300];
		const nz__nwb_group *g = &f->groups[f->rows[i].group];
		snprintf(target, sizeof target, "/general/extracellular_ephys/%s", g->name);
		if (!(refs[i] = nz__hdmf_ref(&f->h, target, g->oid))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory writing electrode groups");
			goto done;
		}
		text[i] = g->name;
	}
	if ((err = nz__hdmf_table_col_refs(t, "group", "a reference to the ElectrodeGroup this "
					   "electrode is a part of", refs)) < 0 ||
	    (err = nz__hdmf_table_col_text(t, "group_name", "the name of the ElectrodeGroup this "
					   "electrode is a part of", text)) < 0 ||
	    (err = real_col(t, f, "x", "the x coordinate of the position (+x is posterior)",
			    offsetof(nz__nwb_row, x), buf)) < 0 ||
	    (err = real_col(t, f, "y", "the y coordinate of the position (+y is inferior)",
			    offsetof(nz__nwb_row, y), buf)) < 0 ||
	    (err = real_col(t, f, "z", "the z coordinate of the position (+z is right)",
			    offsetof(nz__nwb_row, z), buf)) < 0 ||
	    (err = real_col(t, f, "imp", "the impedance of the electrode, in ohms",
			    offsetof(nz__nwb_row, imp), buf)) < 0)
		goto done;
	for (size_t i = 0; i < n; i++) {
		any_filtering |= f->rows[i].filtering != NULL;
		text[i] = f->rows[i].filtering ? f->rows[i].filtering : "";
	}
	if (any_filtering &&
	    (err = nz__hdmf_table_col_text(t, "filtering", "description of hardware filtering, "
					   "including the filter name and frequency cutoffs",
					   text)) < 0)
		goto done;
	if ((err = nz__nwb_write_cols(f, t)) < 0)
		goto done;
	err = nz__hdmf_table_end(t, NULL);
	t = NULL;
done:
	nz__hdmf_table_free(t);
	for (size_t i = 0; refs && i < n; i++)
		json_decref(refs[i]);
	nz__free(refs);
	nz__free(text);
	nz__free(buf);
	if (err < 0)
		nz__error_wrap("electrodes table");
	return err;
}

/* ---- series ---------------------------------------------------------------- */

void nz_nwb_default_chunks(uint64_t *chunks, int ndim, const uint64_t *shape, size_t itemsize)
{
	uint64_t row = itemsize ? itemsize : 1, rows;
	for (int i = 1; i < ndim; i++) {
		chunks[i] = shape[i] ? shape[i] : 1;
		row *= chunks[i];
	}
	rows = ((uint64_t)4 << 20) / row;
	if (rows < 1)
		rows = 1;
	if (shape[0] && rows > shape[0])
		rows = shape[0];
	chunks[0] = rows;
}

int nz_nwb_default_shards(uint64_t *shards, int ndim, const uint64_t *shape, const uint64_t *chunks,
			  size_t itemsize)
{
	uint64_t row = itemsize ? itemsize : 1, per, n;
	for (int i = 1; i < ndim; i++) {
		shards[i] = chunks[i] * ((shape[i] + chunks[i] - 1) / chunks[i]);
		if (shards[i] == 0)
			shards[i] = chunks[i];
		row *= shards[i];
	}
	if (shape[0] <= chunks[0] && (ndim < 2 || shards[1] == chunks[1]))
		return 0;
	per = chunks[0] * row; /* bytes of one row of chunks */
	n = per ? ((uint64_t)256 << 20) / per : 1;
	if (n < 1)
		n = 1;
	if (n > (shape[0] + chunks[0] - 1) / chunks[0])
		n = (shape[0] + chunks[0] - 1) / chunks[0];
	shards[0] = (n ? n : 1) * chunks[0];
	return 1;
}

/* The options of any accepted version as the current struct. */
static int series_opts(nz_nwb_series_opts *out, const nz_nwb_series_opts *o)
{
	if (!o || (o->version != 1 && o->version != NZ_NWB_SERIES_OPTS_VERSION))
		return nz__error_set(NZ_EINVAL, "add series: options missing or of another version");
	memset(out, 0, sizeof *out);
	memcpy(out, o, o->version == 1 ? offsetof(nz_nwb_series_opts, shards) : sizeof *out);
	out->version = NZ_NWB_SERIES_OPTS_VERSION;
	return 0;
}

static int check_series(nz_nwb *f, const nz_nwb_series_opts *o, nz_source *src, char *parent,
			size_t cap)
{
	const uint64_t *shape;
	int ndim, err;
	if ((err = nz__nwb_check_open(f, "add series")) < 0)
		return err;
	if (!src)
		return nz__error_set(NZ_EINVAL, "add series: options or source missing");
	if ((err = nz__nwb_check_name(o->name, "series")) < 0)
		return err;
	ndim = nz_source_ndim(src);
	shape = nz_source_shape(src);
	if (ndim < 1 || ndim > 2)
		return nz__error_set(NZ_EINVAL, "series '%s': data must be 1-D or 2-D, not %d-D",
				     o->name, ndim);
	if (f->grow_timestamps ? shape[0] != 0 || o->n_timestamps
	    : o->n_timestamps ? o->n_timestamps != shape[0] || !o->timestamps
			      : !(o->rate > 0) || !isfinite(o->rate))
		return nz__error_set(NZ_EINVAL, "series '%s': needs rate > 0 or one timestamp per "
				     "frame (%llu frames, %zu timestamps)", o->name,
				     (unsigned long long)shape[0], o->n_timestamps);
	if (o->module && nz__nwb_find(f->modules, f->n_modules, o->module) < 0)
		return nz__error_set(NZ_ENOTFOUND, "series '%s': processing module '%s' was not "
				     "added", o->name, o->module);
	if ((o->module ? (size_t)snprintf(parent, cap, "processing/%s/%s", o->module, o->name)
		       : (size_t)snprintf(parent, cap, "acquisition/%s", o->name)) >= cap)
		return nz__error_set(NZ_EINVAL, "series '%s': path too long", o->name);
	return 0;
}

/* DANDI uploads an object over 5 GiB in parts it does not offer for Zarr. */
static int check_object_size(const char *name, const uint64_t *unit, int ndim, size_t itemsize)
{
	uint64_t n = itemsize ? itemsize : 1;
	for (int i = 0; i < ndim; i++) {
		if (unit[i] && n > NZ_NWB_MAX_OBJECT_BYTES / unit[i])
			n = NZ_NWB_MAX_OBJECT_BYTES + 1;
		else
			n *= unit[i];
	}
	if (n > NZ_NWB_MAX_OBJECT_BYTES)
		return nz__error_set(NZ_EINVAL, "series '%s': one chunk or shard would hold more than 5 GiB "
				     "(DANDI's limit on one object); use smaller --chunks or --shards", name);
	return 0;
}

/* A small 1-D dataset of n elements from memory (one chunk); dtype is
 * "<f4" or "<f8" (its digit is the itemsize); dim its v3 dimension name. */
static int write_1d(nz_nwb *f, const char *path, const char *dtype, const char *zarr_dtype,
		    const void *data, uint64_t n, const json_t *attrs, const char *dim)
{
	nz__hdmf_dset d = {0};
	uint64_t shape[1] = {n};
	d.dims = &dim;
	d.dtype = dtype;
	d.zarr_dtype = zarr_dtype;
	d.ndim = 1;
	d.shape = shape;
	d.attrs = attrs;
	return nz__hdmf_dset_write(&f->h, path, &d, data, (size_t)n * (size_t)(dtype[2] - '0'));
}

/* Group attributes, data (through the engine) and timing: what TimeSeries
 * and ElectricalSeries share. `data_zdt` is the zarr_dtype of data. */
static int write_series(nz_nwb *f, const nz_nwb_series_opts *o, nz_source *src,
			const char *parent, const char *type, const char *unit,
			const char *data_zdt)
{
	static const char *const es_dims[2] = {"num_times", "num_channels"};
	static const char *const ts_dims[2] = {"num_times", "num_DIM2"};
	char path[600];
	uint64_t chunks[2], shards[2];
	const uint64_t *shape = nz_source_shape(src);
	int ndim = nz_source_ndim(src);
	nz__hdmf_dset d = {0};
	json_t *g = json_object(), *da = json_object(), *ta = NULL;
	nz_array *a = NULL;
	int err;

	if (!g || !da) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing series '%s'", o->name);
		goto done;
	}
	if ((err = nz__nwb_set_str(g, "comments", o->comments ? o->comments : "no comments")) < 0 ||
	    (err = nz__nwb_set_str(g, "description",
				   o->description ? o->description : "no description")) < 0 ||
	    (err = nz__nwb_set_str(g, "filtering", o->filtering)) < 0 ||
	    (err = nz__hdmf_set_type(g, &f->h, "core", type, NULL, NULL)) < 0 ||
	    (err = nz__hdmf_group(&f->h, parent, g)) < 0)
		goto done;

	/* pynwb's order (v3 keeps it; v2 sorts the keys anyway). */
	if ((err = nz__nwb_set_str(da, "unit", unit)) < 0 ||
	    (err = nz__nwb_set_real(da, "conversion", o->conversion != 0 ? o->conversion : 1.0)) < 0 ||
	    (err = nz__nwb_set_real(da, "offset", o->offset)) < 0 ||
	    (err = nz__nwb_set_real(da, "resolution", o->resolution != 0 && !isnan(o->resolution)
							   ? o->resolution : -1.0)) < 0)
		goto done;
	if (o->chunks)
		memcpy(chunks, o->chunks, (size_t)ndim * sizeof *chunks);
	else
		nz_nwb_default_chunks(chunks, ndim, shape, nz_source_itemsize(src));
	if (f->zarr_format == 3 && o->shards) {
		memcpy(shards, o->shards, (size_t)ndim * sizeof *shards);
		d.shards = shards;
	} else if (f->zarr_format == 3 &&
		   nz_nwb_default_shards(shards, ndim, shape, chunks, nz_source_itemsize(src))) {
		d.shards = shards;
	}
	if ((err = check_object_size(o->name, d.shards ? shards : chunks, ndim,
				     nz_source_itemsize(src))) < 0)
		goto done;
	snprintf(path, sizeof path, "%s/data", parent);
	d.dtype = nz_source_dtype(src);
	d.zarr_dtype = data_zdt;
	d.ndim = ndim;
	d.shape = shape;
	d.chunks = chunks;
	d.compressor = o->compressor ? o->compressor : &f->data_compressor;
	d.attrs = da;
	d.dims = strcmp(type, "ElectricalSeries") == 0 ? es_dims : ts_dims;
	if ((err = nz__hdmf_dset_create(&a, &f->h, path, &d)) < 0 ||
	    (!f->skip_series_data && (err = nz__nwb_write_data(f, &a, src)) < 0))
		goto done;

	if (o->n_timestamps || f->grow_timestamps) {
		if (!(ta = json_pack("{s:i, s:s}", "interval", 1, "unit", "seconds"))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory writing timestamps");
			goto done;
		}
		snprintf(path, sizeof path, "%s/timestamps", parent);
		if (f->grow_timestamps) { /* a recording's: empty, grown in chunks */
			memset(&d, 0, sizeof d);
			d.dtype = "<f8";
			d.zarr_dtype = "float64";
			d.ndim = 1;
			d.shape = &(uint64_t){0};
			d.chunks = &f->grow_timestamps;
			d.shards = f->grow_ts_shards ? &f->grow_ts_shards : NULL;
			d.attrs = ta;
			err = nz__hdmf_dset_create(NULL, &f->h, path, &d);
		} else {
			err = write_1d(f, path, "<f8", "float64", o->timestamps, o->n_timestamps, ta, "num_times");
		}
	} else {
		if (!(ta = json_pack("{s:f, s:s}", "rate", o->rate, "unit", "seconds"))) {
			err = nz__error_set(NZ_ENOMEM, "out of memory writing starting_time");
			goto done;
		}
		snprintf(path, sizeof path, "%s/starting_time", parent);
		err = nz__hdmf_scalar_f64(&f->h, path, o->starting_time, ta);
	}
done:
	nz_array_free(a);
	json_decref(g);
	json_decref(da);
	json_decref(ta);
	if (err < 0)
		nz__error_wrap("%s '/%s'", type, parent);
	return err;
}

int nz_nwb_add_timeseries(nz_nwb *f, const nz_nwb_series_opts *opts, nz_source *src)
{
	char parent[600];
	const char *name;
	nz_nwb_series_opts oc, *o = &oc;
	int err;
	if ((err = series_opts(&oc, opts)) < 0 || (err = check_series(f, o, src, parent, sizeof parent)) < 0)
		return err;
	if (!o->unit)
		return nz__error_set(NZ_EINVAL, "TimeSeries '%s' needs a unit", o->name);
	name = nz__hdmf_dtype_name(nz_source_dtype(src));
	return write_series(f, o, src, parent, "TimeSeries", o->unit,
			    name ? name : nz_source_dtype(src));
}

int nz_nwb_add_electrical_series(nz_nwb *f, const nz_nwb_series_opts *opts, nz_source *src)
{
	char parent[600], path[700];
	uint64_t channels;
	int64_t *rows = NULL;
	nz_nwb_series_opts oc, *o = &oc;
	int err;

	if ((err = series_opts(&oc, opts)) < 0 || (err = check_series(f, o, src, parent, sizeof parent)) < 0)
		return err;
	channels = nz_source_ndim(src) == 2 ? nz_source_shape(src)[1] : 1;
	if (!o->electrodes && channels != f->n_rows)
		return nz__error_set(NZ_EINVAL, "ElectricalSeries '%s': %llu channels but %zu "
				     "electrodes in the table", o->name,
				     (unsigned long long)channels, f->n_rows);
	if (!(rows = nz__calloc((size_t)channels, sizeof *rows)))
		return nz__error_set(NZ_ENOMEM, "out of memory for electrodes of '%s'", o->name);
	for (uint64_t i = 0; i < channels; i++) {
		rows[i] = o->electrodes ? o->electrodes[i] : (int64_t)i;
		if (rows[i] < 0 || (uint64_t)rows[i] >= f->n_rows) {
			err = nz__error_set(NZ_EINVAL, "ElectricalSeries '%s': electrode row %lld "
					    "not in the table (%zu rows)", o->name,
					    (long long)rows[i], f->n_rows);
			goto done;
		}
	}
	/* Data first: the long part, and nothing else refers to it. */
	if ((err = write_series(f, o, src, parent, "ElectricalSeries", "volts",
				nz_source_dtype(src))) < 0 ||
	    (err = nz__nwb_table_oid(f)) < 0)
		goto done;
	snprintf(path, sizeof path, "%s/electrodes", parent);
	if ((err = nz__hdmf_region(&f->h, path, o->electrodes_description
					  ? o->electrodes_description : "all electrodes",
				   rows, (size_t)channels, "/" NZ__NWB_ELECTRODES,
				   f->table_oid)) < 0)
		goto done;
	if (o->channel_conversion) {
		json_t *ax = json_pack("{s:i}", "axis", 1);
		snprintf(path, sizeof path, "%s/channel_conversion", parent);
		err = ax ? write_1d(f, path, "<f4", "float32", o->channel_conversion, channels, ax, "num_channels")
			 : nz__error_set(NZ_ENOMEM, "out of memory writing channel_conversion");
		json_decref(ax);
	}
done:
	nz__free(rows);
	return err;
}
