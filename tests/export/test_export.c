/* Export and verify on HDF5 files written here with libhdf5: both reading
 * paths (raw chunks decoded by workers, libhdf5 decoding), values read back,
 * overwrite rules, verify finding tampered values/attributes/datasets, and
 * loud failures (region references, truncated input). */
#include <hdf5.h>
#include <math.h>
#include <sys/stat.h>
#include <unistd.h>

#include "h5test.h"

/* Over the 4 MiB under which export reads a dataset in one call, so the
 * values stream through the engine on two workers. */
#define ROWS 200000
#define COLS 12

static void make_file(const char *path)
{
	static int16_t data[ROWS][COLS];
	hsize_t dims[2] = { ROWS, COLS }, chunks[2] = { 8192, 8 }, three = 3;
	double f[3] = { 1.5, NAN, -INFINITY };
	const char *strs[3] = { "alpha", "\xce\xb2" "eta", "" };
	hid_t fid, sp, dcpl, d, g, t, a;
	hobj_ref_t ref;
	int i, j;

	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++)
			data[i][j] = (int16_t)(i * 7 - j * 1000);
	fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(fid >= 0);
	nz_test_h5_str_attr(fid, "object_id", "00000000-0000-4000-8000-000000000000");
	nz_test_h5_str_attr(fid, "nwb_version", "2.6.0"); /* export takes NWB files only */
	sp = H5Screate_simple(2, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 2, chunks);
	H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 4);
	H5Pset_fletcher32(dcpl);
	d = H5Dcreate2(fid, "data", H5T_STD_I16LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	ASSERT(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
	nz_test_h5_str_attr(d, "object_id", "00000000-0000-4000-8000-000000000001");
	nz_test_h5_str_attr(d, "unit", "volts");
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);

	sp = H5Screate_simple(1, &three, NULL);
	d = H5Dcreate2(fid, "f", H5T_IEEE_F64LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, f) >= 0);
	H5Dclose(d);
	t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	d = H5Dcreate2(fid, "s", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) >= 0);
	H5Dclose(d);
	H5Tclose(t);
	H5Sclose(sp);

	g = H5Gcreate2(fid, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	nz_test_h5_str_attr(g, "object_id", "00000000-0000-4000-8000-000000000002");
	H5Rcreate(&ref, fid, "/data", H5R_OBJECT, -1);
	sp = H5Screate(H5S_SCALAR);
	a = H5Acreate2(g, "table", H5T_STD_REF_OBJ, sp, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(a >= 0 && H5Awrite(a, H5T_STD_REF_OBJ, &ref) >= 0);
	H5Aclose(a);
	H5Sclose(sp);
	ASSERT(H5Lcreate_soft("/data", g, "link", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	H5Gclose(g);
	H5Fclose(fid);
}

static void make_regref(const char *path)
{
	hsize_t n = 10, one = 1, start = 2, count = 3;
	int v[10] = { 0 };
	hdset_reg_ref_t rr;
	hid_t fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
	hid_t sp = H5Screate_simple(1, &n, NULL), d, sp1, d2;
	d = H5Dcreate2(fid, "data", H5T_STD_I32LE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	H5Dwrite(d, H5T_NATIVE_INT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v);
	H5Sselect_hyperslab(sp, H5S_SELECT_SET, &start, NULL, &count, NULL);
	ASSERT(H5Rcreate(&rr, fid, "/data", H5R_DATASET_REGION, sp) >= 0);
	sp1 = H5Screate_simple(1, &one, NULL);
	d2 = H5Dcreate2(fid, "regions", H5T_STD_REF_DSETREG, sp1, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(d2 >= 0 && H5Dwrite(d2, H5T_STD_REF_DSETREG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &rr) >= 0);
	H5Dclose(d2);
	H5Dclose(d);
	H5Sclose(sp1);
	H5Sclose(sp);
	H5Fclose(fid);
}

struct seen {
	int n;
	char path[256], what[512];
};

static void record(const char *path, const char *what, void *ctx)
{
	struct seen *s = ctx;
	if (s->n++ == 0) {
		snprintf(s->path, sizeof s->path, "%s", path);
		snprintf(s->what, sizeof s->what, "%s", what);
	}
}

static int count_progress(const nz_progress *p, void *ctx)
{
	ASSERT(p->chunks_done <= p->chunks_total && p->bytes_done <= p->bytes_total);
	(*(size_t *)ctx)++;
	return 0;
}

static int stop_progress(const nz_progress *p, void *ctx)
{
	(void)p;
	(void)ctx;
	return 1;
}

static int verify_seen(struct seen *s, const char *a, const char *b)
{
	nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
	uint64_t ndiff = 0;
	int rc;
	memset(s, 0, sizeof *s);
	vo.jobs = 2;
	vo.buffer_size = (size_t)1 << 20; /* 19 blocks: exercises the pool */
	vo.report = record;
	vo.report_ctx = s;
	rc = nz_verify(&ndiff, a, b, &vo);
	ASSERT_EQ_U64(ndiff, (uint64_t)s->n);
	return rc;
}

static void check_values(const char *zarr_path)
{
	static int16_t got[ROWS][COLS];
	uint64_t start[2] = { 0, 0 }, count[2] = { ROWS, COLS };
	nz_store *st = NULL;
	nz_array *a = NULL;
	int i, j;
	ASSERT_OK(nz_store_open_dir(&st, zarr_path, NZ_STORE_READ));
	ASSERT_OK(nz_array_open(&a, st, "data"));
	ASSERT_EQ_U64(nz_array_chunks(a)[0], 8192); /* HDF5 chunking kept */
	ASSERT_EQ_U64(nz_array_chunks(a)[1], 8);
	ASSERT_OK(nz_array_read_region(a, start, count, got, sizeof got));
	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++)
			ASSERT_EQ_INT(got[i][j], (int16_t)(i * 7 - j * 1000));
	nz_array_free(a);
	nz_store_free(st);
}

static void tamper_value(const char *zarr_path)
{
	nz_store *st = NULL;
	nz_array *a = NULL;
	uint64_t idx[2] = { 1, 0 };
	static int16_t chunk[8192][8];
	ASSERT_OK(nz_store_open_dir(&st, zarr_path, NZ_STORE_WRITE));
	ASSERT_OK(nz_array_open(&a, st, "data"));
	ASSERT_OK(nz_array_read_chunk(a, NULL, idx, chunk, sizeof chunk));
	chunk[3][2] += 1; /* element [8195, 2] */
	ASSERT_OK(nz_array_write_chunk(a, NULL, idx, chunk, sizeof chunk));
	nz_array_free(a);
	nz_store_free(st);
}

int main(void)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	struct seen seen;
	nz_store *store = NULL;
	char h5[1200], za[1200], zb[1200];
	FILE *in, *out;
	char buf[2000];
	size_t n;

	h5test_folder("test_export");
	snprintf(h5, sizeof h5, "%s", tpath("in.nwb"));
	snprintf(za, sizeof za, "%s", tpath("a.nwb.zarr"));
	snprintf(zb, sizeof zb, "%s", tpath("b.nwb.zarr"));
	make_file(h5);

	/* This test is about the v2 layout (readers_export_v3 covers v3). */
	o.zarr_format = 2;
	/* Raw chunks decoded by the workers. */
	o.jobs = 2;
	o.stats = &st;
	ASSERT_OK(nz_export_hdf5(h5, za, &o));
	ASSERT_EQ_U64(st.raw_chunks, 25 * 2); /* ceil(200000/8192) x ceil(12/8) chunks */
	ASSERT_EQ_U64(st.links, 1);
	ASSERT_OK(verify_seen(&seen, h5, za));
	ASSERT_EQ_INT(seen.n, 0);
	check_values(za);

	/* v3 shards of two chunks across: each HDF5 chunk is still decoded
	 * once (a band read in blocks of rows decoded each one per block). */
	{
		uint64_t shards[2] = { 8192 * 5, 16 };
		char zc[1200];
		snprintf(zc, sizeof zc, "%s", tpath("c.nwb.zarr"));
		o.zarr_format = 3;
		o.shards = shards;
		ASSERT_OK(nz_export_hdf5(h5, zc, &o));
		ASSERT_EQ_U64(st.raw_chunks, 25 * 2);
		ASSERT_OK(verify_seen(&seen, h5, zc));
		ASSERT_EQ_INT(seen.n, 0);
		o.zarr_format = 2;
		o.shards = NULL;
	}

	/* libhdf5 decoding under the lock gives the same store. */
	o.hdf5_decode = 1;
	ASSERT_OK(nz_export_hdf5(h5, zb, &o));
	ASSERT_EQ_U64(st.raw_chunks, 0);
	ASSERT(st.hdf5_reads > 0);
	ASSERT_OK(verify_seen(&seen, za, zb));
	check_values(zb);

	/* Overwrite rules. */
	ASSERT_ERR(NZ_EEXISTS, nz_export_hdf5(h5, zb, &o));
	ASSERT_CONTAINS(nz_error_last()->message, zb);
	o.overwrite = 1;
	ASSERT_OK(nz_export_hdf5(h5, zb, &o));
	ASSERT(mkdir(tpath("not_zarr"), 0755) == 0);
	ASSERT_OK(nz_export_hdf5(h5, tpath("not_zarr"), &o)); /* empty: fine */
	ASSERT(mkdir(tpath("data"), 0755) == 0);
	out = fopen(tpath("data/keep.txt"), "w");
	ASSERT(out && fclose(out) == 0);
	ASSERT_ERR(NZ_EEXISTS, nz_export_hdf5(h5, tpath("data"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "not a Zarr store");
	ASSERT(access(tpath("data/keep.txt"), F_OK) == 0);
	/* issue 16: the engine's threads are reported; bounds and a bad
	 * compressor refuse before the existing store is touched; version-1
	 * options still work (their stats end before jobs). */
	ASSERT_OK(nz_export_hdf5(h5, zb, &o));
	ASSERT(st.jobs >= 1 && st.jobs <= 2);
	o.jobs = NZ_WRITE_MAX_JOBS + 1;
	ASSERT_ERR(NZ_EINVAL, nz_export_hdf5(h5, zb, &o));
	o.jobs = 2;
	{
		nz_compressor bad = NZ_COMPRESSOR_INIT;
		nz_export_opts o1 = o;
		bad.clevel = 10;
		o1.compressor = &bad;
		ASSERT_ERR(NZ_EFORMAT, nz_export_hdf5(h5, zb, &o1));
		ASSERT(access(tpath("b.nwb.zarr/.zmetadata"), F_OK) == 0);
		o1.compressor = NULL;
		o1.version = 1;
		st.jobs = -7;
		ASSERT_OK(nz_export_hdf5(h5, zb, &o1));
		ASSERT_EQ_INT(st.jobs, -7); /* not written for a version-1 caller */
	}
	{
		nz_verify_opts vo = NZ_VERIFY_OPTS_INIT;
		vo.jobs = NZ_WRITE_MAX_JOBS + 1;
		ASSERT_ERR(NZ_EINVAL, nz_verify(NULL, h5, zb, &vo));
		vo.jobs = 2;
		vo.progress = count_progress;
		vo.progress_ctx = &n;
		n = 0;
		ASSERT_OK(nz_verify(NULL, h5, zb, &vo));
		ASSERT(n > 0);
		vo.progress = stop_progress;
		ASSERT_ERR(NZ_ECANCELED, nz_verify(NULL, h5, zb, &vo));
		vo.version = 1; /* ends before progress: none called */
		n = 0;
		vo.progress = count_progress;
		ASSERT_OK(nz_verify(NULL, h5, zb, &vo));
		ASSERT(n == 0);
	}

	/* verify finds a changed value, naming the element. */
	tamper_value(zb);
	ASSERT_EQ_INT(verify_seen(&seen, h5, zb), NZ_EMISMATCH);
	ASSERT_EQ_INT(seen.n, 1);
	ASSERT_EQ_STR(seen.path, "/data");
	ASSERT_CONTAINS(seen.what, "1 of 2400000 values differ; first at [8195, 2]");

	/* ... a changed attribute and a missing dataset. */
	ASSERT_OK(nz_export_hdf5(h5, zb, &o));
	ASSERT_OK(nz_store_open_dir(&store, zb, NZ_STORE_WRITE));
	ASSERT_OK(nz_attrs_write(store, "data", "{\"object_id\": \"00000000-0000-4000-8000-000000000001\", "
					       "\"unit\": \"millivolts\", \"zarr_dtype\": \"int16\"}"));
	ASSERT_OK(nz_store_remove(store, "f/.zarray"));
	/* (unconsolidated, readers of .zmetadata would still see the old
	 * attributes: that is one more difference) */
	ASSERT_EQ_INT(verify_seen(&seen, h5, zb), NZ_EMISMATCH);
	ASSERT_EQ_INT(seen.n, 3);
	ASSERT_EQ_STR(seen.path, "/.zmetadata");
	ASSERT_CONTAINS(seen.what, "its copy of 'data/.zattrs' differs from the file");
	ASSERT_OK(nz_consolidate(store));
	nz_store_free(store);
	ASSERT_EQ_INT(verify_seen(&seen, h5, zb), NZ_EMISMATCH);
	ASSERT_EQ_INT(seen.n, 2);
	ASSERT_EQ_STR(seen.path, "/data");
	ASSERT_CONTAINS(seen.what, "attribute 'unit' differs");
	ASSERT_CONTAINS(nz_error_last()->message, "2 places");

	/* Region references fail loudly, naming the dataset. */
	make_regref(tpath("regref.nwb"));
	ASSERT_ERR(NZ_EUNSUPPORTED, nz_export_hdf5(tpath("regref.nwb"), tpath("rr.zarr"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "'/regions': region references");

	/* A truncated file fails naming the file. */
	in = fopen(h5, "rb");
	out = fopen(tpath("trunc.nwb"), "wb");
	ASSERT(in && out);
	n = fread(buf, 1, sizeof buf, in);
	fwrite(buf, 1, n, out);
	fclose(in);
	fclose(out);
	ASSERT_ERR(NZ_EFORMAT, nz_export_hdf5(tpath("trunc.nwb"), tpath("t.zarr"), &o));
	ASSERT_CONTAINS(nz_error_last()->message, "trunc.nwb");
	ASSERT_ERR(NZ_ENOTFOUND, nz_verify(NULL, tpath("missing.nwb"), za, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "missing.nwb");
	printf("ok\n");
	return 0;
}
