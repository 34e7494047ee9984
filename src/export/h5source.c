/* nz_source_open_hdf5: one HDF5 dataset behind the engine's callback source,
 * read by export's own reader (h5read.c) so that raw chunks are decoded on
 * the workers exactly as nz_export_hdf5 decodes them. */
#include <string.h>

#include "engine/source.h"
#include "export/h5.h"
#include "nwbzarr/h5source.h"
#include "util/alloc.h"

/* What the source owns: the file, the node the reader borrows, the reader. */
typedef struct h5src {
	nz__h5file *f;
	nz__xnode node;
	nz__h5ds *ds;
} h5src;

static int h5src_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	h5src *s = ctx;
	uint64_t nelem;
	int err = nz__xnode_count(&nelem, &s->node, count);

	if (err < 0)
		return err;
	/* fits: the engine allocated `out` of prod(count) x itemsize bytes */
	return nz__h5ds_read(s->ds, start, count, out, (size_t)nelem * s->node.type.size);
}

static void h5src_free(void *ctx)
{
	h5src *s = ctx;

	if (!s)
		return;
	nz__h5ds_close(s->ds);
	nz__xnode_clear(&s->node);
	nz__h5_close(s->f);
	nz__free(s);
}

static const nz_source_ops h5src_ops = { NZ_SOURCE_OPS_VERSION, h5src_read, h5src_free };

/* Every filter of the dataset's pipeline must be one this libhdf5 has:
 * h5py and hdf5plugin register theirs (lzf, blosc, ...) only in their own
 * copy of libhdf5, and a read would fail halfway through the write. */
static int check_filters(nz__h5file *f, const char *path)
{
	nz__h5filters p;
	int i, err = nz__h5_filters(&p, f, path);

	for (i = 0; i < p.n && !err; i++)
		if (!p.v[i].available)
			err = nz__error_set(NZ_EUNSUPPORTED, "'%s' in '%s': HDF5 filter %d (%s) is not available "
					    "to nwbzarr's libhdf5", path, f->path, (int)p.v[i].id, p.v[i].name);
	return err;
}

int nz_source_open_hdf5(nz_source **out, const char *file, const char *dataset,
			const nz_hdf5_source_opts *opts)
{
	nz_hdf5_source_opts defaults = NZ_HDF5_SOURCE_OPTS_INIT;
	h5src *s = NULL;
	char *dtype = NULL;
	int err = 0;

	*out = NULL;
	if (!opts)
		opts = &defaults;
	if (!file || !dataset || opts->version != NZ_HDF5_SOURCE_OPTS_VERSION)
		return nz__error_set(NZ_EINVAL, "HDF5 source '%s' in '%s': bad arguments (NULL or options "
				     "version %u)", dataset ? dataset : "(null)", file ? file : "(null)",
				     opts->version);
	if (!(s = nz__calloc(1, sizeof *s)))
		return nz__error_set(NZ_ENOMEM, "HDF5 source '%s' in '%s': out of memory", dataset, file);
	if ((err = nz__h5_open(&s->f, file)) < 0) {
		err = nz__error_wrap("HDF5 source '%s'", dataset);
		goto done;
	}
	if ((err = nz__h5_dataset_node(&s->node, s->f, dataset)) < 0)
		goto done;
	if (s->node.type.cls == NZ__XT_STRING || s->node.type.cls == NZ__XT_REF ||
	    s->node.type.cls == NZ__XT_COMPOUND) {
		err = nz__error_set(NZ_EUNSUPPORTED, "'%s' in '%s' holds %s values: a source gives numbers "
				    "or booleans", dataset, file, nz__xtype_describe(&s->node.type));
		goto done;
	}
	if ((err = check_filters(s->f, dataset)) < 0 || (err = nz__xtype_numpy(&dtype, &s->node.type)) < 0 ||
	    (err = nz__h5ds_open(&s->ds, s->f, &s->node, opts->hdf5_decode)) < 0)
		goto done;
	if ((err = nz_source_from_callback(out, &h5src_ops, s, dtype, s->node.ndim, s->node.shape)) < 0)
		goto done;
	nz__h5ds_offer_stored(s->ds, *out);
	s = NULL; /* the source owns it */
done:
	h5src_free(s);
	nz__free(dtype);
	return err;
}

int nz_source_hdf5_stats(const nz_source *src, nz_hdf5_source_stats *out)
{
	h5src *s = nz__source_callback_ctx(src, &h5src_ops);
	nz__h5stats hs;

	if (!s)
		return nz__error_set(NZ_EINVAL, "nz_source_hdf5_stats: not a source of nz_source_open_hdf5");
	if (!out || out->version < 1 || out->version > NZ_HDF5_SOURCE_STATS_VERSION)
		return nz__error_set(NZ_EINVAL, "nz_source_hdf5_stats: stats version %u (this library "
				     "knows 1 to %d: NZ_HDF5_SOURCE_STATS_INIT)", out ? out->version : 0,
				     NZ_HDF5_SOURCE_STATS_VERSION);
	nz__h5ds_stats(s->ds, &hs);
	out->raw_path = nz__h5ds_raw_path(s->ds);
	out->raw_chunks = hs.raw_chunks;
	out->hdf5_reads = hs.hdf5_reads;
	if (out->version >= 2)
		out->stored_chunks = hs.stored_chunks;
	return 0;
}
