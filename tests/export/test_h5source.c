/* nz_source_open_hdf5 on files written here with libhdf5: values of both
 * reading paths (raw chunks decoded by the readers, libhdf5 decoding) and of
 * converted types, links followed, the engine writing the same chunks from
 * it on 1, 2 and 3 threads, a corrupt gzip chunk failing with the file,
 * dataset and chunk named, and every refusal naming the file and dataset. */
#include <hdf5.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

#define ROWS 100000
#define COLS 12

static char tmp[1024], file[1200], bad[1200];
static int16_t data[ROWS][COLS];

static void make_file(const char *path)
{
	hsize_t dims[2] = { ROWS, COLS }, chunks[2] = { 8192, 8 }, three = 3;
	int32_t be[3] = { 1, -2, 70000 };
	const char *strs[3] = { "a", "b", "c" };
	hid_t fid, sp, dcpl, d, t;
	uint32_t x = 12345;
	int i, j;

	/* noisy, so that every compressed chunk has bytes to corrupt */
	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++) {
			x = x * 1103515245u + 12345u;
			data[i][j] = (int16_t)(i * 7 - j * 1000 + (int)(x >> 24));
		}
	ASSERT((fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	sp = H5Screate_simple(2, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 2, chunks);
	H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 4);
	d = H5Dcreate2(fid, "data", H5T_STD_I16LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	ASSERT(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
	sp = H5Screate_simple(1, &three, NULL);
	d = H5Dcreate2(fid, "be", H5T_STD_I32BE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(H5Dwrite(d, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, be) >= 0);
	H5Dclose(d);
	t = H5Tcopy(H5T_C_S1);
	H5Tset_size(t, H5T_VARIABLE);
	d = H5Dcreate2(fid, "s", t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(H5Dwrite(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, strs) >= 0);
	H5Dclose(d);
	H5Tclose(t);
	H5Sclose(sp);
	H5Gclose(H5Gcreate2(fid, "g", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
	ASSERT(H5Lcreate_soft("/data", fid, "g/alias", H5P_DEFAULT, H5P_DEFAULT) >= 0);
	H5Fclose(fid);
}

/* A copy of `src` whose HDF5 chunk k of /data has garbage in its middle. */
static void corrupt_copy(const char *src, const char *dst, hsize_t k)
{
	haddr_t addr;
	hsize_t size, off[2];
	unsigned mask;
	unsigned char junk[64];
	hid_t fid, d, sp;
	FILE *in, *out;
	char buf[65536];
	size_t n;

	ASSERT((in = fopen(src, "rb")) && (out = fopen(dst, "wb")));
	while ((n = fread(buf, 1, sizeof buf, in)) > 0)
		ASSERT(fwrite(buf, 1, n, out) == n);
	fclose(in);
	fclose(out);
	fid = H5Fopen(dst, H5F_ACC_RDONLY, H5P_DEFAULT);
	d = H5Dopen2(fid, "data", H5P_DEFAULT);
	sp = H5Dget_space(d); /* 1.10 wants a real dataspace, not H5S_ALL */
	ASSERT(d >= 0 && H5Dget_chunk_info(d, sp, k, off, &mask, &addr, &size) >= 0 && size > 200);
	H5Sclose(sp);
	H5Dclose(d);
	H5Fclose(fid);
	memset(junk, 0xA5, sizeof junk);
	ASSERT((out = fopen(dst, "r+b")));
	ASSERT(fseek(out, (long)(addr + size / 2), SEEK_SET) == 0 && fwrite(junk, 1, sizeof junk, out) == sizeof junk);
	fclose(out);
}

static void check_region(nz_source *s)
{
	static int16_t got[3000][COLS];
	uint64_t start[2] = { 8000, 0 }, count[2] = { 3000, COLS };
	int i;

	memset(got, 0, sizeof got);
	ASSERT_OK(nz_source_read(s, start, count, got, sizeof got));
	for (i = 0; i < 3000; i++)
		ASSERT_MEM_EQ(got[i], data[8000 + i], sizeof got[i]);
}

static void test_values(void)
{
	nz_hdf5_source_opts o = NZ_HDF5_SOURCE_OPTS_INIT;
	nz_hdf5_source_stats st = NZ_HDF5_SOURCE_STATS_INIT;
	nz_source *s;
	int32_t be[3];
	uint64_t zero = 0, three = 3;

	ASSERT_OK(nz_source_open_hdf5(&s, file, "/data", NULL));
	ASSERT_EQ_STR(nz_source_dtype(s), "<i2");
	ASSERT_EQ_INT(nz_source_ndim(s), 2);
	ASSERT_EQ_U64(nz_source_shape(s)[0], ROWS);
	ASSERT_EQ_U64(nz_source_shape(s)[1], COLS);
	check_region(s);
	ASSERT_OK(nz_source_hdf5_stats(s, &st));
	/* rows 8000..10999 x 12 columns: 2 chunk rows x 2 chunk columns */
	ASSERT(st.raw_path == 1 && st.raw_chunks == 4 && st.hdf5_reads == 0);
	nz_source_free(s);

	o.hdf5_decode = 1;
	ASSERT_OK(nz_source_open_hdf5(&s, file, "/g/alias", &o));
	check_region(s);
	ASSERT_OK(nz_source_hdf5_stats(s, &st));
	ASSERT(st.raw_path == 0 && st.raw_chunks == 0 && st.hdf5_reads == 1);
	/* Version 1 (before stored_chunks) is filled without it; an unknown
	 * version is refused, the struct untouched. */
	st.version = 1;
	st.stored_chunks = 77;
	st.hdf5_reads = 0;
	ASSERT_OK(nz_source_hdf5_stats(s, &st));
	ASSERT(st.hdf5_reads == 1 && st.stored_chunks == 77);
	st.version = 0;
	st.hdf5_reads = 5;
	ASSERT_ERR(NZ_EINVAL, nz_source_hdf5_stats(s, &st));
	ASSERT_CONTAINS(nz_error_last()->message, "NZ_HDF5_SOURCE_STATS_INIT");
	st.version = NZ_HDF5_SOURCE_STATS_VERSION + 1;
	ASSERT_ERR(NZ_EINVAL, nz_source_hdf5_stats(s, &st));
	ASSERT(st.hdf5_reads == 5);
	st.version = NZ_HDF5_SOURCE_STATS_VERSION;
	nz_source_free(s);

	ASSERT_OK(nz_source_open_hdf5(&s, file, "/be", NULL));
	ASSERT_EQ_STR(nz_source_dtype(s), "<i4");
	ASSERT_OK(nz_source_read(s, &zero, &three, be, sizeof be));
	ASSERT(be[0] == 1 && be[1] == -2 && be[2] == 70000);
	nz_source_free(s);

	ASSERT_OK(nz_source_from_memory(&s, be, "<i4", 1, &three));
	ASSERT_ERR(NZ_EINVAL, nz_source_hdf5_stats(s, &st));
	nz_source_free(s);
}

/* The engine fills an array from the source: identical chunks for 1, 2, 3 jobs. */
static void test_engine(void)
{
	uint64_t shape[2] = { ROWS, COLS }, chunks[2] = { 10000, 6 };
	void *first[40] = { 0 };
	size_t first_len[40] = { 0 };
	int jobs, i;

	for (jobs = 1; jobs <= 3; jobs++) {
		nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		nz_store *st;
		nz_array *a;
		nz_source *s;
		int16_t *back = malloc(sizeof data);
		uint64_t zero[2] = { 0, 0 };

		ao.dtype = "<i2";
		ao.ndim = 2;
		ao.shape = shape;
		ao.chunks = chunks;
		ao.zarr_format = 3;
		wo.jobs = jobs;
		wo.buffer_size = 2u << 20; /* several tasks in flight */
		ASSERT(back);
		ASSERT_OK(nz_store_new_memory(&st));
		ASSERT_OK(nz_root_create(st, 3));
		ASSERT_OK(nz_array_create(&a, st, "x", &ao));
		ASSERT_OK(nz_source_open_hdf5(&s, file, "/data", NULL));
		ASSERT_OK(nz_write_array(a, s, &wo));
		ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof data));
		ASSERT_MEM_EQ(back, data, sizeof data);
		for (i = 0; i < 20; i++) {
			char key[64];
			void *v;
			size_t len;
			snprintf(key, sizeof key, "x/c/%d/%d", i / 2, i % 2);
			ASSERT_OK(nz_store_get(st, key, &v, &len));
			if (jobs == 1) {
				first[i] = v;
				first_len[i] = len;
				continue;
			}
			ASSERT(len == first_len[i] && memcmp(v, first[i], len) == 0);
			free(v);
		}
		free(back);
		nz_source_free(s);
		nz_array_free(a);
		nz_store_free(st);
	}
	for (i = 0; i < 20; i++)
		free(first[i]);
}

static void test_corrupt(void)
{
	uint64_t shape[2] = { ROWS, COLS };
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_store *st;
	nz_array *a;
	nz_source *s;

	corrupt_copy(file, bad, 5);
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	wo.jobs = 2;
	ASSERT_OK(nz_store_new_memory(&st));
	ASSERT_OK(nz_array_create(&a, st, "x", &ao));
	ASSERT_OK(nz_source_open_hdf5(&s, bad, "/data", NULL));
	ASSERT(nz_write_array(a, s, &wo) == NZ_ECODEC);
	ASSERT_CONTAINS(nz_error_last()->message, bad);
	ASSERT_CONTAINS(nz_error_last()->message, "'/data'");
	ASSERT_CONTAINS(nz_error_last()->message, "chunk at [");
	nz_source_free(s);
	nz_array_free(a);
	nz_store_free(st);
}

static void refused(int code, const char *path, const char *dataset, const char *why)
{
	nz_hdf5_source_opts o = NZ_HDF5_SOURCE_OPTS_INIT;
	nz_source *s = (nz_source *)&o; /* must come back NULL */

	ASSERT_ERR(code, nz_source_open_hdf5(&s, path, dataset, NULL));
	ASSERT(s == NULL);
	ASSERT_CONTAINS(nz_error_last()->message, path);
	ASSERT_CONTAINS(nz_error_last()->message, dataset);
	ASSERT_CONTAINS(nz_error_last()->message, why);
}

static void test_refusals(void)
{
	char missing[1300], text[1300];
	nz_hdf5_source_opts o = NZ_HDF5_SOURCE_OPTS_INIT;
	nz_source *s;
	FILE *f;

	snprintf(missing, sizeof missing, "%s/missing.h5", tmp);
	snprintf(text, sizeof text, "%s/text.h5", tmp);
	ASSERT((f = fopen(text, "w")) && fputs("not hdf5\n", f) >= 0 && fclose(f) == 0);
	refused(NZ_ENOTFOUND, missing, "/data", "missing.h5");
	refused(NZ_EFORMAT, text, "/data", "not an HDF5 file");
	refused(NZ_ENOTFOUND, file, "/nope", "no such object");
	refused(NZ_ENOTFOUND, file, "data", "must be absolute");
	refused(NZ_EINVAL, file, "/g", "not a dataset");
	refused(NZ_EUNSUPPORTED, file, "/s", "string");
	o.version = 99;
	ASSERT_ERR(NZ_EINVAL, nz_source_open_hdf5(&s, file, "/data", &o));
	ASSERT_CONTAINS(nz_error_last()->message, "version 99");
}

int main(void)
{
	nz_test_scratch_dir(tmp, sizeof tmp, "test_h5source");
	snprintf(file, sizeof file, "%s/src.h5", tmp);
	snprintf(bad, sizeof bad, "%s/bad.h5", tmp);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	make_file(file);
	test_values();
	test_engine();
	test_corrupt();
	test_refusals();
	nz_test_rm_rf(tmp);
	printf("test_h5source: ok\n");
	return 0;
}
