/* The export's phases for multi-process exports (docs/mpi.md), in one
 * process: METADATA, then DATA as three parts with different jobs, then
 * nz_nwb_finalise; byte-identical to an ordinary export. So with an
 * external link, its file exported beside by METADATA (or, copy_links,
 * its dataset copied in and shared out like the source's own). */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nwbzarr/export.h"
#include "test.h"

#define ROWS 20000
#define COLS 64 /* /data: 5.1 MB, over the size export streams through the engine */

static char h5[1024], ref[1024], par[1024], top[1024], linked[1200];

static int exists(const char *dir, const char *rel)
{
	char p[2200];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

/* /data: 20000 x 128 int16 in 500 x 64 chunks (80 of them), deflate; an
 * external link /ext to `link_file`:/data unless NULL. */
static void make_h5(const char *path, const char *link_file)
{
	hsize_t dims[2] = {ROWS, 2 * COLS}, chunk[2] = {500, COLS};
	int16_t *buf = malloc(sizeof *buf * ROWS * 2 * COLS);
	hid_t f, sp, pl, ds;
	ASSERT(buf);
	for (size_t i = 0; i < (size_t)ROWS * 2 * COLS; i++)
		buf[i] = (int16_t)((i * 2654435761u) >> 20);
	ASSERT((f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	sp = H5Screate_simple(2, dims, NULL);
	pl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(pl, 2, chunk);
	H5Pset_deflate(pl, 1);
	ASSERT((ds = H5Dcreate2(f, "data", H5T_STD_I16LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT)) >= 0);
	ASSERT(H5Dwrite(ds, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
	H5Dclose(ds);
	if (link_file)
		ASSERT(H5Lcreate_external(link_file, "/data", f, "ext", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	{ /* export takes NWB files only */
		hid_t ts = H5Tcopy(H5T_C_S1), as = H5Screate(H5S_SCALAR), at;
		H5Tset_size(ts, 5);
		ASSERT((at = H5Acreate2(f, "nwb_version", ts, as, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
		ASSERT(H5Awrite(at, ts, "2.6.0") >= 0);
		H5Aclose(at);
		H5Sclose(as);
		H5Tclose(ts);
	}
	H5Pclose(pl);
	H5Sclose(sp);
	H5Fclose(f);
	free(buf);
}

/* `src` exported into `ref` in one call and into `par` phase by phase
 * (METADATA, DATA in three parts with 1, 2, 3 jobs, finalise); the folders
 * holding them (with any linked stores) must be the same bytes. */
static void phases(const char *src, const char *ref_dir, const char *par_dir, nz_export_opts o)
{
	char cmd[8000], r[1200], p[1200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s' && mkdir '%s' '%s'", ref_dir, par_dir, ref_dir, par_dir);
	ASSERT(system(cmd) == 0);
	snprintf(r, sizeof r, "%s/out.zarr", ref_dir);
	snprintf(p, sizeof p, "%s/out.zarr", par_dir);
	o.phase = NZ_EXPORT_ALL;
	o.jobs = 2;
	ASSERT_OK(nz_export_hdf5(src, r, &o));

	o.phase = NZ_EXPORT_METADATA;
	ASSERT_OK(nz_export_hdf5(src, p, &o));
	if (o.zarr_format == 3)
		ASSERT(exists(p, "data/zarr.json") && !exists(p, "data/c"));
	else
		ASSERT(exists(p, "data/.zarray") && !exists(p, "data/0.0"));
	ASSERT(!exists(p, ".zmetadata"));
	o.phase = NZ_EXPORT_DATA;
	o.nparts = 3;
	for (int k = 0; k < 3; k++) {
		o.part = (uint64_t)k;
		o.jobs = k + 1;
		ASSERT_OK(nz_export_hdf5(src, p, &o));
	}
	ASSERT(!exists(p, ".zmetadata"));
	ASSERT_OK(nz_nwb_finalise(p));
	snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' >/dev/null", ref_dir, par_dir);
	ASSERT(system(cmd) == 0);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	snprintf(h5, sizeof h5, "%s/mpi_export_parts.h5", tmp ? tmp : "/tmp");
	snprintf(ref, sizeof ref, "%s/mpi_export_ref", tmp ? tmp : "/tmp");
	snprintf(par, sizeof par, "%s/mpi_export_parts", tmp ? tmp : "/tmp");
	snprintf(top, sizeof top, "%s/mpi_export_top.h5", tmp ? tmp : "/tmp");
	snprintf(linked, sizeof linked, "%s/mpi_export_parts.h5.zarr", par);
	make_h5(h5, NULL);
	make_h5(top, "mpi_export_parts.h5");
	/* Both formats: v3 (the default, sharded here) and v2. */
	for (int format = 3; format >= 2; format--) {
		static const uint64_t shards[2] = { 2000, 128 };
		o.zarr_format = format;
		o.shards = format == 3 ? shards : NULL;
		o.copy_links = 0;
		phases(h5, ref, par, o);
		/* An external link: METADATA exports its file beside, whole. */
		phases(top, ref, par, o);
		ASSERT(exists(linked, format == 3 ? "zarr.json" : ".zmetadata"));
		/* copy_links: its data is copied in, in parts like the rest. */
		o.copy_links = 1;
		phases(top, ref, par, o);
		ASSERT(!exists(linked, "") && exists(par, format == 3 ? "out.zarr/ext/zarr.json" : "out.zarr/ext/.zarray"));
	}

	/* DATA needs the store METADATA made; the error names it. */
	o.phase = NZ_EXPORT_DATA;
	o.nparts = 3;
	o.part = 0;
	ASSERT(nz_export_hdf5(h5, "/nonexistent/x.zarr", &o) < 0);
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/x.zarr");
	puts("ok");
	return 0;
}
