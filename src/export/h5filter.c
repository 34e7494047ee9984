/* An HDF5 dataset's filter pipeline: whether this library's libhdf5 can
 * decode it (the HDF5 source checks before a write starts), and the Zarr
 * codecs that keep it (export's keep_filters, as hdmf-zarr 0.14's export
 * maps filters: shuffle -> numcodecs shuffle, deflate -> numcodecs zlib). */
#include <stdio.h>
#include <string.h>

#include "export/h5.h"

int nz__h5_filters(nz__h5filters *out, nz__h5file *f, const char *path)
{
	hid_t d, dcpl = -1;
	int i, nf, err = 0;

	memset(out, 0, sizeof *out);
	nz__h5_lock();
	if ((d = H5Dopen2(f->fid, path, H5P_DEFAULT)) < 0 || (dcpl = H5Dget_create_plist(d)) < 0) {
		err = nz__h5_error(NZ_EFORMAT, "'%s': cannot open dataset in '%s'", path, f->path);
		goto done;
	}
	if ((nf = H5Pget_nfilters(dcpl)) < 0 || nf > NZ__H5_MAX_FILTERS) {
		err = nz__h5_error(NZ_EFORMAT, "'%s' in '%s': unreadable filter pipeline", path, f->path);
		goto done;
	}
	for (i = 0; i < nf; i++) {
		nz__h5filter *e = &out->v[i];
		unsigned flags, cd[8] = { 0 };
		size_t ncd = 8;
		e->id = H5Pget_filter2(dcpl, (unsigned)i, &flags, &ncd, cd, sizeof e->name, e->name, NULL);
		if (e->id < 0) {
			err = nz__h5_error(NZ_EFORMAT, "'%s' in '%s': unreadable filter pipeline", path, f->path);
			goto done;
		}
		e->cd0 = ncd ? cd[0] : 0;
		e->available = H5Zfilter_avail(e->id) > 0;
		if (!e->name[0])
			snprintf(e->name, sizeof e->name, "%d", (int)e->id);
	}
	out->n = nf;
done:
	if (dcpl >= 0)
		H5Pclose(dcpl);
	if (d >= 0)
		H5Dclose(d);
	H5Eclear2(H5E_DEFAULT);
	nz__h5_unlock();
	return err;
}

/* A filter the kept codecs leave out: fletcher32 is a checksum of the
 * stored bytes, the values are the same without it (hdmf-zarr drops it
 * too); shuffle where the values are written as objects. */
static int dropped(H5Z_filter_t id, int shuffle_ok)
{
	return id == H5Z_FILTER_FLETCHER32 || (id == H5Z_FILTER_SHUFFLE && !shuffle_ok);
}

int nz__h5_keep_codecs(nz__h5keep *out, const nz__h5filters *p, size_t itemsize, int shuffle_ok)
{
	size_t k = 0;
	int i, last = -1;

	memset(out, 0, sizeof *out);
	/* Anything else Zarr lacks here leaves the dataset to the default codec. */
	for (i = 0; i < p->n; i++) {
		H5Z_filter_t id = p->v[i].id;
		if (dropped(id, shuffle_ok))
			continue;
		if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_DEFLATE) {
			snprintf(out->missing, sizeof out->missing, "%s", p->v[i].name);
			return 0;
		}
		last = i;
	}
	if (last < 0)
		return 0;
	out->filters[0] = '[';
	k = 1;
	for (i = 0; i < p->n; i++) {
		H5Z_filter_t id = p->v[i].id;
		if (dropped(id, shuffle_ok))
			continue;
		if (i == last && id == H5Z_FILTER_DEFLATE) { /* the compressor */
			out->compressor = (nz_compressor){ NZ_COMPRESSOR_VERSION, "zlib", NULL, (int)p->v[i].cd0, 0, 0, 0 };
			continue;
		}
		k += (size_t)snprintf(out->filters + k, sizeof out->filters - k, "%s", k > 1 ? ", " : "");
		if (id == H5Z_FILTER_SHUFFLE)
			k += (size_t)snprintf(out->filters + k, sizeof out->filters - k,
					      "{\"id\": \"shuffle\", \"elementsize\": %zu}", itemsize);
		else
			k += (size_t)snprintf(out->filters + k, sizeof out->filters - k,
					      "{\"id\": \"zlib\", \"level\": %u}", p->v[i].cd0);
	}
	snprintf(out->filters + k, sizeof out->filters - k, "]");
	if (!out->compressor.id)
		out->compressor = (nz_compressor){ NZ_COMPRESSOR_VERSION, "none", NULL, 0, 0, 0, 0 };
	out->kept = 1;
	return 1;
}
