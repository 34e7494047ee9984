/* HDF5 deflate (+ shuffle) chunks written through nz_source_open_hdf5 into a
 * zlib (+ shuffle) array of the same chunks and level are stored as their
 * bytes: every full chunk's Zarr bytes equal the HDF5 chunk's, values read
 * back equal (v2 and v3, 1 and 2 jobs, byte-identical). The edge chunks, a
 * chunk whose deflate was skipped (filter mask) and every chunk of a target
 * that differs (level, chunks, shuffle, gzip) are encoded as usual; an
 * all-zero chunk is still left out with skip_empty_chunks; a corrupt stored
 * chunk fails naming the file and the chunk. */
#include <hdf5.h>
#include <string.h>
#include <sys/stat.h>

#include "test.h"

#define ROWS 10000
#define COLS 8
#define CR 2048 /* chunk rows: the last chunk row is an edge */
#define CC 4
#define GR 5    /* chunk grid */
#define GC 2

static char tmp[1024];
static int16_t data[ROWS][COLS];

/* The C-order elements of chunk (r, c), byte-shuffled when `shuffle`. */
static void chunk_bytes(unsigned char *out, int r, int c, int shuffle)
{
	size_t k = 0, n = (size_t)CR * CC;
	for (int i = 0; i < CR; i++)
		for (int j = 0; j < CC; j++, k++) {
			uint16_t v = (uint16_t)data[r * CR + i][c * CC + j];
			out[shuffle ? k : 2 * k] = (unsigned char)(v & 0xff);
			out[shuffle ? n + k : 2 * k + 1] = (unsigned char)(v >> 8);
		}
}

/* /data: chunk (0, 0) all zeros; with `shuffle`, chunk (1, 1) is stored
 * with its deflate skipped (filter mask bit 1), as libhdf5 does when a
 * chunk does not compress. */
static void make_file(const char *path, int shuffle)
{
	hsize_t dims[2] = { ROWS, COLS }, chunks[2] = { CR, CC }, off[2] = { CR, CC };
	static unsigned char masked[CR * CC * 2];
	hid_t fid, sp, dcpl, d;
	uint32_t x = 777;

	for (int i = 0; i < ROWS; i++)
		for (int j = 0; j < COLS; j++) {
			x = x * 1103515245u + 12345u;
			data[i][j] = i < CR && j < CC ? 0 : (int16_t)(i % 300 - j * 90 + (int)(x >> 27));
		}
	ASSERT((fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	sp = H5Screate_simple(2, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 2, chunks);
	if (shuffle)
		H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 4);
	d = H5Dcreate2(fid, "data", H5T_STD_I16LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
	ASSERT(d >= 0 && H5Dwrite(d, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) >= 0);
	if (shuffle) {
		chunk_bytes(masked, 1, 1, 1);
		ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, 2, off, sizeof masked, masked) >= 0);
	}
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
	H5Fclose(fid);
}

/* The stored bytes of HDF5 chunk (r, c) and its filter mask (malloc'd). */
static void *h5_chunk(const char *path, int r, int c, size_t *len, uint32_t *mask)
{
	hsize_t off[2] = { (hsize_t)r * CR, (hsize_t)c * CC }, n;
	hid_t fid = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(fid, "data", H5P_DEFAULT);
	void *buf;

	ASSERT(d >= 0 && H5Dget_chunk_storage_size(d, off, &n) >= 0 && (buf = malloc(n)));
	ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, mask, buf) >= 0);
	*len = n;
	H5Dclose(d);
	H5Fclose(fid);
	return buf;
}

typedef struct target {
	int format;
	const char *id;
	int level;
	const char *filters;
	uint64_t chunk_rows;
} target;

/* Write /data of `path` into array "x" of a fresh memory store (*st) as
 * `tg` says: nz_write_array's result, the source's stats in *hs. */
static int write_rc(const char *path, const target *tg, int jobs, nz_hdf5_source_stats *hs, nz_store **st)
{
	uint64_t shape[2] = { ROWS, COLS }, chunks[2] = { tg->chunk_rows, CC };
	nz_compressor comp = NZ_COMPRESSOR_INIT;
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_array *a;
	nz_source *s;
	int rc;

	comp.id = tg->id;
	comp.cname = NULL;
	comp.clevel = tg->level;
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	ao.chunks = chunks;
	ao.compressor = &comp;
	ao.filters_json = tg->filters;
	ao.skip_empty_chunks = 1;
	ao.zarr_format = tg->format;
	wo.jobs = jobs;
	wo.buffer_size = 1u << 20; /* several tasks in flight */
	ASSERT_OK(nz_store_new_memory(st));
	ASSERT_OK(nz_root_create(*st, tg->format));
	ASSERT_OK(nz_array_create(&a, *st, "x", &ao));
	ASSERT_OK(nz_source_open_hdf5(&s, path, "/data", NULL));
	rc = nz_write_array(a, s, &wo);
	ASSERT_OK(nz_source_hdf5_stats(s, hs));
	nz_source_free(s);
	nz_array_free(a);
	return rc;
}

/* write_rc that must succeed and read back the values; returns the store. */
static nz_store *write(const char *path, const target *tg, int jobs, nz_hdf5_source_stats *hs)
{
	uint64_t shape[2] = { ROWS, COLS }, zero[2] = { 0, 0 };
	static int16_t back[ROWS][COLS];
	nz_store *st;
	nz_array *a;

	ASSERT_OK(write_rc(path, tg, jobs, hs, &st));
	ASSERT_OK(nz_array_open(&a, st, "x"));
	ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof back));
	ASSERT_MEM_EQ(back, data, sizeof data);
	nz_array_free(a);
	return st;
}

static void *zarr_chunk(nz_store *st, int format, int r, int c, size_t *len)
{
	char key[64];
	void *v = NULL;

	snprintf(key, sizeof key, format == 3 ? "x/c/%d/%d" : "x/%d.%d", r, c);
	return nz_store_get(st, key, &v, len) == 0 ? v : NULL;
}

/* Stored as HDF5's bytes: every full chunk but the zero one (left out) and,
 * with shuffle, the masked one; 2 jobs give the same store as 1. */
static void test_stored(const char *path, int shuffle, int format)
{
	target tg = { format, "zlib", 4, shuffle ? "[{\"id\": \"shuffle\", \"elementsize\": 2}]" : NULL, CR };
	nz_hdf5_source_stats hs;
	nz_store *one = write(path, &tg, 1, &hs), *two;
	int full = (GR - 1) * GC;

	ASSERT_EQ_U64(hs.stored_chunks, (uint64_t)(shuffle ? full - 1 : full));
	two = write(path, &tg, 2, &hs);
	ASSERT_EQ_U64(hs.stored_chunks, (uint64_t)(shuffle ? full - 1 : full));
	for (int r = 0; r < GR; r++)
		for (int c = 0; c < GC; c++) {
			size_t n1 = 0, n2 = 0, nh;
			uint32_t mask;
			void *a = zarr_chunk(one, format, r, c, &n1), *b = zarr_chunk(two, format, r, c, &n2);
			void *h = h5_chunk(path, r, c, &nh, &mask);
			ASSERT(r || c ? a && b : !a && !b); /* the zero chunk is not stored */
			if (a) {
				ASSERT(n1 == n2 && memcmp(a, b, n1) == 0);
				/* full and unmasked: HDF5's bytes; else our encoding */
				if (r < GR - 1 && !mask)
					ASSERT(n1 == nh && memcmp(a, h, nh) == 0);
				else
					ASSERT(n1 != nh || memcmp(a, h, nh) != 0);
			}
			free(a);
			free(b);
			free(h);
		}
	nz_store_free(one);
	nz_store_free(two);
}

/* Targets that differ in anything are encoded chunk by chunk (and still
 * read back equal, which write checks). */
static void test_mismatch(const char *path)
{
	static const char *sh = "[{\"id\": \"shuffle\", \"elementsize\": 2}]";
	const target tgs[] = {
		{ 3, "zlib", 5, sh, CR },   /* level */
		{ 3, "zlib", 4, NULL, CR }, /* no shuffle */
		{ 3, "zlib", 4, "[{\"id\": \"shuffle\", \"elementsize\": 4}]", CR },
		{ 3, "zlib", 4, sh, CR / 2 }, /* chunks */
		{ 3, "gzip", 4, sh, CR },
		{ 2, "blosc", 4, sh, CR },
	};
	for (size_t i = 0; i < sizeof tgs / sizeof tgs[0]; i++) {
		nz_hdf5_source_stats hs;
		target tg = tgs[i];
		if (strcmp(tg.id, "blosc") == 0)
			tg.id = "zstd";
		nz_store_free(write(path, &tg, 2, &hs));
		ASSERT_EQ_U64(hs.stored_chunks, 0);
		ASSERT(hs.raw_chunks > 0);
	}
}

/* Garbage inside a full chunk: the stored path inflates every chunk, so the
 * write fails naming the file and the chunk. */
static void test_corrupt(const char *bad)
{
	const target tg = { 3, "zlib", 4, "[{\"id\": \"shuffle\", \"elementsize\": 2}]", CR };
	hsize_t off[2] = { 2 * CR, 0 }, size;
	nz_hdf5_source_stats hs;
	haddr_t addr;
	unsigned mask;
	nz_store *st;
	hid_t fid, d;

	make_file(bad, 1);
	fid = H5Fopen(bad, H5F_ACC_RDONLY, H5P_DEFAULT);
	d = H5Dopen2(fid, "data", H5P_DEFAULT);
	ASSERT(H5Dget_chunk_info_by_coord(d, off, &mask, &addr, &size) >= 0 && size > 200);
	H5Dclose(d);
	H5Fclose(fid);
	nz_test_junk(bad, addr + size / 2);
	ASSERT(write_rc(bad, &tg, 2, &hs, &st) == NZ_ECODEC);
	ASSERT_CONTAINS(nz_error_last()->message, bad);
	ASSERT_CONTAINS(nz_error_last()->message, "chunk at [4096, 0]");
	nz_store_free(st);
}

int main(void)
{
	const char *t = getenv("NZ_TMP");
	char plain[1200], shuf[1200], bad[1200];

	snprintf(tmp, sizeof tmp, "%s/test_h5stored", t ? t : "/tmp");
	nz_test_rm_rf(tmp);
	ASSERT(mkdir(tmp, 0755) == 0);
	snprintf(plain, sizeof plain, "%s/deflate.h5", tmp);
	snprintf(shuf, sizeof shuf, "%s/shuffle.h5", tmp);
	snprintf(bad, sizeof bad, "%s/bad.h5", tmp);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	make_file(plain, 0);
	test_stored(plain, 0, 3);
	test_stored(plain, 0, 2);
	make_file(shuf, 1);
	test_stored(shuf, 1, 3);
	test_stored(shuf, 1, 2);
	test_mismatch(shuf);
	test_corrupt(bad);
	nz_test_rm_rf(tmp);
	printf("test_h5stored: ok\n");
	return 0;
}
