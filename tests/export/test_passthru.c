/* Stored HDF5 chunks moved unchanged (h5read.c's stored ops, the engine's
 * passthru): an array whose (inner) chunks are the HDF5 chunks and whose
 * codecs are the HDF5 filters (numcodecs shuffle + zlib, any level) gets
 * each chunk as H5Dread_chunk returns it, on 1, 2 and 3 threads alike, v3
 * unsharded and sharded and v2; every mismatch (another chunk shape, other
 * codecs, fletcher32, big-endian values) and every chunk that is not stored
 * so (a partial edge chunk left unfiltered, never written) goes through
 * decode and encode instead. Values always read back equal. A resumed
 * write keeps the moved chunks already there. */
#define _GNU_SOURCE /* memmem */
#include <hdf5.h>
#include <string.h>
#include <sys/stat.h>

#include "hdmf/hdmf.h" /* nz__hdmf_write_resumed */
#include "test.h"

#define ROWS 10000
#define COLS 12
#define CR 1000
#define CC 8
#define NCHUNKS ((ROWS / CR) * 2) /* 12 columns in chunks of 8: 2 per row */

static char tmp[1024], file[1200];
static int16_t data[ROWS][COLS];

static void dataset(hid_t fid, const char *name, hid_t type, int shuffle, int fletcher, int skip_partial,
		    hsize_t rows_written)
{
	hsize_t dims[2] = { ROWS, COLS }, chunks[2] = { CR, CC }, start[2] = { 0, 0 }, count[2] = { rows_written, COLS };
	hid_t sp = H5Screate_simple(2, dims, NULL), dcpl = H5Pcreate(H5P_DATASET_CREATE), d, ms;
	int16_t fill = 7;

	H5Pset_chunk(dcpl, 2, chunks);
	H5Pset_fill_value(dcpl, H5T_NATIVE_INT16, &fill);
	if (shuffle)
		H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 4);
	if (fletcher)
		H5Pset_fletcher32(dcpl);
	if (skip_partial)
		H5Pset_chunk_opts(dcpl, H5D_CHUNK_DONT_FILTER_PARTIAL_CHUNKS);
	ASSERT((d = H5Dcreate2(fid, name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
	ms = H5Screate_simple(2, count, NULL);
	H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
	ASSERT(H5Dwrite(d, H5T_NATIVE_INT16, ms, sp, H5P_DEFAULT, data) >= 0);
	H5Sclose(ms);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
}

static void make_file(void)
{
	uint32_t x = 99;
	hid_t fid;
	int i, j;

	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++) {
			x = x * 1103515245u + 12345u;
			data[i][j] = (int16_t)(i / 3 - j * 100 + (int)(x >> 28));
		}
	ASSERT((fid = H5Fcreate(file, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	dataset(fid, "gz", H5T_STD_I16LE, 1, 0, 0, ROWS);
	dataset(fid, "zlib_only", H5T_STD_I16LE, 0, 0, 0, ROWS);
	dataset(fid, "fletcher", H5T_STD_I16LE, 1, 1, 0, ROWS);
	dataset(fid, "be", H5T_STD_I16BE, 1, 0, 0, ROWS);
	dataset(fid, "skip", H5T_STD_I16LE, 1, 0, 1, ROWS);
	dataset(fid, "holes", H5T_STD_I16LE, 1, 0, 0, 3500); /* chunk rows 4..9 never written */
	H5Fclose(fid);
}

typedef struct spec {
	int format;            /* 2 or 3 */
	const uint64_t *chunks, *shards;
	int shuffle, level;    /* the array's codecs: [shuffle], zlib(level) */
} spec;

static const uint64_t hchunks[2] = { CR, CC }, other[2] = { 2 * CR, CC }, shards[2] = { 3 * CR, 2 * CC };

/* Write HDF5 dataset `name` into a new array of `sp` in memory store *st on
 * `jobs` threads; the values must read back equal (the fill value 7 where
 * no chunk was written). Returns the chunks moved as stored. */
static uint64_t export_into(nz_store **st, const char *name, const spec *sp, int jobs)
{
	uint64_t shape[2] = { ROWS, COLS }, zero[2] = { 0, 0 };
	nz_compressor zc = { NZ_COMPRESSOR_VERSION, "zlib", NULL, sp->level, 0, 0, 0 };
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_hdf5_source_stats hs;
	char path[64], filt[64];
	int16_t *back = malloc(sizeof data);
	nz_source *s;
	nz_array *a;
	int i, j, written = strcmp(name, "holes") == 0 ? 3500 : ROWS;

	snprintf(filt, sizeof filt, "[{\"id\": \"shuffle\", \"elementsize\": 2}]");
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	ao.chunks = sp->chunks;
	ao.fill_value_json = "7";
	ao.compressor = &zc;
	ao.filters_json = sp->shuffle ? filt : NULL;
	ao.zarr_format = sp->format;
	ao.shards = sp->shards;
	wo.jobs = jobs;
	wo.buffer_size = 1u << 20; /* several tasks in flight */
	ASSERT(back);
	ASSERT_OK(nz_store_new_memory(st));
	ASSERT_OK(nz_root_create(*st, sp->format));
	snprintf(path, sizeof path, "/%s", name);
	ASSERT_OK(nz_array_create(&a, *st, name, &ao));
	ASSERT_OK(nz_source_open_hdf5(&s, file, path, NULL));
	ASSERT_OK(nz_write_array(a, s, &wo));
	ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof data));
	for (i = 0; i < ROWS; i++)
		for (j = 0; j < COLS; j++)
			ASSERT_EQ_INT(back[i * COLS + j], i < written ? data[i][j] : 7);
	ASSERT_OK(nz_source_hdf5_stats(s, &hs));
	free(back);
	nz_source_free(s);
	nz_array_free(a);
	return hs.stored_chunks;
}

/* HDF5 chunk (r, c) of `name` as H5Dread_chunk gives it (malloc'd). */
static void *h5_chunk(const char *name, int r, int c, size_t *len, uint32_t *mask)
{
	hsize_t off[2] = { (hsize_t)r * CR, (hsize_t)c * CC }, size = 0;
	hid_t fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(fid, name, H5P_DEFAULT);
	void *buf;

	ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0 && size > 0);
	ASSERT((buf = malloc(size)));
	ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, mask, buf) >= 0);
	*len = (size_t)size;
	H5Dclose(d);
	H5Fclose(fid);
	return buf;
}

static int same_value(nz_store *a, nz_store *b, const char *key)
{
	void *x = NULL, *y = NULL;
	size_t nx = 0, ny = 0;
	int same;

	ASSERT_OK(nz_store_get(a, key, &x, &nx));
	ASSERT_OK(nz_store_get(b, key, &y, &ny));
	same = nx == ny && memcmp(x, y, nx) == 0;
	nz_free(x);
	nz_free(y);
	return same;
}

/* Every Zarr chunk is the HDF5 chunk, byte for byte, for 1, 2 and 3 jobs. */
static void test_moved(int format, int level)
{
	spec sp = { format, hchunks, NULL, 1, level };
	nz_store *st[3];
	int jobs, r, c;

	for (jobs = 1; jobs <= 3; jobs++)
		ASSERT_EQ_U64(export_into(&st[jobs - 1], "gz", &sp, jobs), NCHUNKS);
	for (r = 0; r < ROWS / CR; r++)
		for (c = 0; c < 2; c++) {
			char key[64];
			size_t len, zlen;
			uint32_t mask = 1;
			void *h = h5_chunk("/gz", r, c, &len, &mask), *z;
			snprintf(key, sizeof key, format == 3 ? "gz/c/%d/%d" : "gz/%d.%d", r, c);
			ASSERT_OK(nz_store_get(st[0], key, &z, &zlen));
			ASSERT(mask == 0 && zlen == len && memcmp(z, h, len) == 0);
			ASSERT(same_value(st[0], st[1], key) && same_value(st[0], st[2], key));
			free(h);
			nz_free(z);
		}
	for (jobs = 0; jobs < 3; jobs++)
		nz_store_free(st[jobs]);
}

/* Sharded v3: the shards hold the HDF5 chunks, identical for any jobs. */
static void test_shards(void)
{
	spec sp = { 3, hchunks, shards, 1, 4 };
	nz_store *st[3];
	int jobs, r;

	for (jobs = 1; jobs <= 3; jobs++)
		ASSERT_EQ_U64(export_into(&st[jobs - 1], "gz", &sp, jobs), NCHUNKS);
	for (r = 0; r < 4; r++) { /* shard rows of 3000 rows: 4, the last partial */
		char key[64];
		void *v;
		size_t len, hl;
		uint32_t mask;
		void *h = h5_chunk("/gz", 3 * r, 1, &hl, &mask);
		snprintf(key, sizeof key, "gz/c/%d/0", r);
		ASSERT(same_value(st[0], st[1], key) && same_value(st[0], st[2], key));
		/* the shard's bytes include its first row's second chunk as stored */
		ASSERT_OK(nz_store_get(st[0], key, &v, &len));
		ASSERT(len > hl && memmem(v, len, h, hl) != NULL);
		nz_free(v);
		free(h);
	}
	for (jobs = 0; jobs < 3; jobs++)
		nz_store_free(st[jobs]);
}

/* Mismatches and chunks not stored so are decoded and encoded. */
static void test_fallbacks(void)
{
	spec same = { 3, hchunks, NULL, 1, 4 }, shape = { 3, other, NULL, 1, 4 }, codec = { 3, hchunks, NULL, 0, 4 },
	     v2 = { 2, hchunks, NULL, 1, 4 }, only = { 3, hchunks, NULL, 0, 4 };
	nz_store *st;

	ASSERT_EQ_U64(export_into(&st, "gz", &shape, 2), 0); /* chunks of 2000 rows: not HDF5's */
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "gz", &codec, 2), 0); /* zlib without shuffle */
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "zlib_only", &only, 2), NCHUNKS); /* but for a file without shuffle, yes */
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "zlib_only", &same, 2), 0); /* and shuffle there is not */
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "fletcher", &same, 2), 0);
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "fletcher", &v2, 2), 0);
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "be", &same, 2), 0);
	nz_store_free(st);
	/* the right-hand column of chunks is partial (12 = 8 + 4): HDF5 left it
	 * unfiltered, though its filter mask says 0 (libhdf5 knows from the
	 * layout), so those are encoded; the left ones moved */
	ASSERT_EQ_U64(export_into(&st, "skip", &same, 2), NCHUNKS / 2);
	{
		size_t len;
		uint32_t mask = 1;
		free(h5_chunk("/skip", 0, 1, &len, &mask));
		ASSERT(mask == 0 && len == CR * CC * sizeof(int16_t));
	}
	nz_store_free(st);
	/* decoded, those partial chunks are taken as they are, not inflated */
	ASSERT_EQ_U64(export_into(&st, "skip", &shape, 2), 0);
	nz_store_free(st);
	/* rows 0..3499 written: chunk rows 0..3 allocated, 4..9 read as fill */
	ASSERT_EQ_U64(export_into(&st, "holes", &same, 2), 8);
	nz_store_free(st);
}

/* Resume (nz__hdmf_write_resumed): a moved chunk (or a shard) whose key
 * holds the bytes is kept, a missing one written, a damaged one written
 * again; the result is the uninterrupted write's, byte for byte. */
static void test_resume(const uint64_t *shard)
{
	spec sp = { 3, hchunks, shard, 1, 4 };
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_nwb_resume_info acc = { 0, 0, 0, 0 };
	nz_store *whole, *st;
	nz_array *a;
	nz_source *s;
	const char *gone = shard ? "gz/c/1/0" : "gz/c/3/0", *bad = shard ? "gz/c/2/0" : "gz/c/5/1";
	uint64_t units = shard ? 4 : NCHUNKS;
	int r, c;

	ASSERT_EQ_U64(export_into(&whole, "gz", &sp, 1), NCHUNKS);
	ASSERT_EQ_U64(export_into(&st, "gz", &sp, 2), NCHUNKS);
	ASSERT_OK(nz_store_remove(st, gone));
	ASSERT_OK(nz_store_put(st, bad, "damaged", 7));
	ASSERT_OK(nz_array_open(&a, st, "gz"));
	ASSERT_OK(nz_source_open_hdf5(&s, file, "/gz", NULL));
	wo.jobs = 2;
	ASSERT_OK(nz__hdmf_write_resumed(a, st, s, &wo, &acc));
	ASSERT_EQ_U64(acc.chunks_kept, units - 2);
	ASSERT_EQ_U64(acc.chunks_repaired, 1);
	ASSERT_EQ_U64(acc.chunks_written, 1);
	for (r = 0; r < (shard ? 4 : ROWS / CR); r++)
		for (c = 0; c < (shard ? 1 : 2); c++) {
			char key[64];
			snprintf(key, sizeof key, "gz/c/%d/%d", r, c);
			ASSERT(same_value(whole, st, key));
		}
	nz_source_free(s);
	nz_array_free(a);
	nz_store_free(st);
	nz_store_free(whole);
}

int main(void)
{
	nz_test_scratch_dir(tmp, sizeof tmp, "test_passthru");
	snprintf(file, sizeof file, "%s/src.h5", tmp);
	make_file();
	test_moved(3, 4);
	test_moved(3, 1); /* another level: decoding does not depend on it */
	test_moved(2, 4);
	test_shards();
	test_fallbacks();
	test_resume(NULL);
	test_resume(shards);
	nz_test_rm_rf(tmp);
	puts("test_passthru: ok");
	return 0;
}
