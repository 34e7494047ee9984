/* The export's phases for multi-process exports (docs/mpi.md), in one
 * process: METADATA, then DATA as three parts with different jobs, then
 * nz_nwb_finalise; byte-identical to an ordinary export. */
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "nwbzarr/export.h"
#include "test.h"

#define ROWS 20000
#define COLS 64 /* /data: 5.1 MB, over the size export streams through the engine */

static char h5[1024], ref[1024], par[1024];

static int exists(const char *dir, const char *rel)
{
	char p[2200];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

/* /data: 20000 x 128 int16 in 500 x 64 chunks (80 of them), deflate. */
static void make_h5(void)
{
	hsize_t dims[2] = {ROWS, 2 * COLS}, chunk[2] = {500, COLS};
	int16_t *buf = malloc(sizeof *buf * ROWS * 2 * COLS);
	hid_t f, sp, pl, ds;
	ASSERT(buf);
	for (size_t i = 0; i < (size_t)ROWS * 2 * COLS; i++)
		buf[i] = (int16_t)((i * 2654435761u) >> 20);
	ASSERT((f = H5Fcreate(h5, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	sp = H5Screate_simple(2, dims, NULL);
	pl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(pl, 2, chunk);
	H5Pset_deflate(pl, 1);
	ASSERT((ds = H5Dcreate2(f, "data", H5T_STD_I16LE, sp, H5P_DEFAULT, pl, H5P_DEFAULT)) >= 0);
	ASSERT(H5Dwrite(ds, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) >= 0);
	H5Dclose(ds);
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

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	char cmd[4000];
	snprintf(h5, sizeof h5, "%s/mpi_export_parts.h5", tmp ? tmp : "/tmp");
	snprintf(ref, sizeof ref, "%s/mpi_export_ref.zarr", tmp ? tmp : "/tmp");
	snprintf(par, sizeof par, "%s/mpi_export_parts.zarr", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", ref, par);
	ASSERT(system(cmd) == 0);
	make_h5();
	/* Both formats: v3 (the default, sharded here) and v2. */
	for (int format = 3; format >= 2; format--) {
		static const uint64_t shards[2] = { 2000, 128 };
		o.zarr_format = format;
		o.shards = format == 3 ? shards : NULL;
		o.phase = NZ_EXPORT_ALL;
		o.jobs = 2;
		snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", ref, par);
		ASSERT(system(cmd) == 0);
		ASSERT_OK(nz_export_hdf5(h5, ref, &o));

		o.phase = NZ_EXPORT_METADATA;
		ASSERT_OK(nz_export_hdf5(h5, par, &o));
		if (format == 3)
			ASSERT(exists(par, "data/zarr.json") && !exists(par, "data/c"));
		else
			ASSERT(exists(par, "data/.zarray") && !exists(par, "data/0.0"));
		ASSERT(!exists(par, ".zmetadata"));
		o.phase = NZ_EXPORT_DATA;
		o.nparts = 3;
		for (int k = 0; k < 3; k++) {
			o.part = (uint64_t)k;
			o.jobs = k + 1;
			ASSERT_OK(nz_export_hdf5(h5, par, &o));
		}
		ASSERT(!exists(par, ".zmetadata"));
		ASSERT_OK(nz_nwb_finalise(par));
		snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' >/dev/null", ref, par);
		ASSERT(system(cmd) == 0);
	}

	/* DATA needs the store METADATA made; the error names it. */
	o.part = 0;
	ASSERT(nz_export_hdf5(h5, "/nonexistent/x.zarr", &o) < 0);
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/x.zarr");
	puts("ok");
	return 0;
}
