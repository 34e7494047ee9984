/* One process's part of a series' data in a multi-process write
 * (docs/mpi.md): the same data path as nz_nwb_add_* (resume included), on
 * a file another process created with skip_series_data. */
#include <string.h>

#include "nwb/nwb_impl.h"
#include "util/alloc.h"
#include "util/error.h"

int nz_nwb_write_series_part(const char *path, const char *array_path, nz_source *src,
			     const nz_write_opts *wopts, int resume, int fsync,
			     nz_nwb_resume_info *info)
{
	static const nz_write_opts dflt = NZ_WRITE_OPTS_INIT;
	nz_nwb *f = NULL;
	nz_array *a = NULL;
	int err;

	if (info)
		memset(info, 0, sizeof *info);
	if (!path || !array_path || !src)
		return nz__error_set(NZ_EINVAL, "nz_nwb_write_series_part: path, array or source "
				     "missing");
	if (!(f = nz__calloc(1, sizeof *f)) || !(f->path = nz__strdup(path))) {
		err = nz__error_set(NZ_ENOMEM, "out of memory writing '%s'", path);
		goto done;
	}
	f->wopts = wopts ? *wopts : dflt;
	f->resume = resume;
	f->resume_info = info;
	if ((err = nz_store_open_dir(&f->store, path,
				     NZ_STORE_WRITE | (fsync ? NZ_STORE_FSYNC : 0))) < 0 ||
	    (err = nz_array_open(&a, f->store, array_path)) < 0 ||
	    (err = nz__nwb_write_data(f, &a, src)) < 0)
		goto done;
	/* Durable before the caller reports its part done (and another
	 * process marks the file complete). */
	err = nz_store_sync(f->store);
done:
	nz_array_free(a);
	nz_nwb_free(f);
	if (err < 0)
		nz__error_wrap("writing part of '%s/%s'", path ? path : "", array_path ? array_path : "");
	return err;
}
