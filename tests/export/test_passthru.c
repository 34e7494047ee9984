/* Stored HDF5 chunks moved unchanged (h5read.c's stored ops, the engine's
 * passthru): an array whose (inner) chunks are the HDF5 chunks and whose
 * codecs are the HDF5 filters (numcodecs shuffle + zlib, any level) gets
 * each chunk as H5Dread_chunk returns it, on 1, 2 and 3 threads alike, v3
 * unsharded and sharded and v2; every mismatch (another chunk shape, other
 * codecs, fletcher32, big-endian values) and every chunk that is not stored
 * so (a partial edge chunk left unfiltered, never written) goes through
 * decode and encode instead. Values always read back equal. A resumed
 * write keeps the moved chunks already there. Each moved chunk is decoded
 * on the way: a corrupt one fails the write (and an export: marked
 * incomplete, an overwritten output left as it was) as a decoded one does,
 * and under write_empty_chunks=False one of fill values is left out as the
 * encode path leaves it out. */
#define _GNU_SOURCE /* memmem */
#include <hdf5.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hdmf/hdmf.h" /* nz__hdmf_write_resumed */
#include "test.h"

#define ROWS 50000 /* 1.2 MB: over the engine's inline limit, so workers run */
#define COLS 12
#define CR 1000
#define CC 8
#define NCHUNKS ((ROWS / CR) * 2) /* 12 columns in chunks of 8: 2 per row */
#define ZERO_ROW 2                /* "zeros": chunk row 2 (both chunks) all 0 */

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

/* Chunk row ZERO_ROW of `name` all zeros: the right-hand chunk is an edge
 * chunk, whose padding past column 12 HDF5 leaves as it fills it. */
static void zero_rows(hid_t fid, const char *name)
{
	static int16_t zeros[CR][COLS];
	hsize_t start[2] = { ZERO_ROW * CR, 0 }, count[2] = { CR, COLS };
	hid_t d = H5Dopen2(fid, name, H5P_DEFAULT), sp = H5Dget_space(d), ms = H5Screate_simple(2, count, NULL);

	H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, NULL, count, NULL);
	ASSERT(H5Dwrite(d, H5T_NATIVE_INT16, ms, sp, H5P_DEFAULT, zeros) >= 0);
	H5Sclose(ms);
	H5Sclose(sp);
	H5Dclose(d);
}

/* The stored chunk at element offsets (r, c) of `name` with 64 bytes of
 * junk in its middle. */
static void damage_chunk(hid_t fid, const char *name, hsize_t r, hsize_t c)
{
	hsize_t off[2] = { r, c }, size = 0;
	hid_t d = H5Dopen2(fid, name, H5P_DEFAULT);
	unsigned char *buf;
	uint32_t mask = 0;

	ASSERT(H5Dget_chunk_storage_size(d, off, &size) >= 0 && size > 200 && (buf = malloc(size)));
	ASSERT(H5Dread_chunk(d, H5P_DEFAULT, off, &mask, buf) >= 0);
	memset(buf + size / 2, 0xA5, 64);
	ASSERT(H5Dwrite_chunk(d, H5P_DEFAULT, mask, off, size, buf) >= 0);
	free(buf);
	H5Dclose(d);
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
	dataset(fid, "zeros", H5T_STD_I16LE, 1, 0, 0, ROWS);
	zero_rows(fid, "zeros");
	dataset(fid, "bad", H5T_STD_I16LE, 1, 0, 0, ROWS);
	damage_chunk(fid, "bad", 4 * CR, CC);
	H5Fclose(fid);
}

/* The values HDF5 dataset `name` holds (7: its fill value). */
static int16_t expected(const char *name, int i, int j)
{
	if (strcmp(name, "holes") == 0 && i >= 3500)
		return 7;
	if (strcmp(name, "zeros") == 0 && i / CR == ZERO_ROW)
		return 0;
	return data[i][j];
}

typedef struct spec {
	int format;            /* 2 or 3 */
	const uint64_t *chunks, *shards;
	int shuffle, level;    /* the array's codecs: [shuffle], zlib(level) */
	int skip_empty;        /* write_empty_chunks=False */
	int hdf5_decode;       /* libhdf5 decodes: nothing moves */
	const char *fill;      /* the array's fill value; NULL = 7 */
	size_t budget;         /* the write's buffer_size; 0 = 1 MiB */
	nz_write_stats *stats; /* the write's stats, or NULL */
} spec;

static const uint64_t hchunks[2] = { CR, CC }, other[2] = { 2 * CR, CC }, shards[2] = { 3 * CR, 2 * CC };

/* Write HDF5 dataset `name` into a new array of `sp` in memory store *st on
 * `jobs` threads; once written, the values must read back equal (the fill
 * value 7 where no chunk was written). Returns the write's result; *moved:
 * the chunks taken as stored. */
static int write_into(nz_store **st, const char *name, const spec *sp, int jobs, uint64_t *moved)
{
	uint64_t shape[2] = { ROWS, COLS }, zero[2] = { 0, 0 };
	nz_compressor zc = { NZ_COMPRESSOR_VERSION, "zlib", NULL, sp->level, 0, 0, 0 };
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_hdf5_source_opts ho = NZ_HDF5_SOURCE_OPTS_INIT;
	nz_hdf5_source_stats hs = NZ_HDF5_SOURCE_STATS_INIT;
	char path[64], filt[64];
	int16_t *back = malloc(sizeof data);
	nz_source *s;
	nz_array *a;
	int i, j, err;

	snprintf(filt, sizeof filt, "[{\"id\": \"shuffle\", \"elementsize\": 2}]");
	ao.dtype = "<i2";
	ao.ndim = 2;
	ao.shape = shape;
	ao.chunks = sp->chunks;
	ao.fill_value_json = sp->fill ? sp->fill : "7";
	ao.skip_empty_chunks = sp->skip_empty;
	ao.compressor = &zc;
	ao.filters_json = sp->shuffle ? filt : NULL;
	ao.zarr_format = sp->format;
	ao.shards = sp->shards;
	wo.jobs = jobs;
	wo.buffer_size = sp->budget ? sp->budget : 1u << 20; /* several tasks in flight */
	wo.stats = sp->stats;
	ASSERT(back);
	ASSERT_OK(nz_store_new_memory(st));
	ASSERT_OK(nz_root_create(*st, sp->format));
	snprintf(path, sizeof path, "/%s", name);
	ASSERT_OK(nz_array_create(&a, *st, name, &ao));
	ho.hdf5_decode = sp->hdf5_decode;
	ASSERT_OK(nz_source_open_hdf5(&s, file, path, &ho));
	if ((err = nz_write_array(a, s, &wo)) == 0) {
		ASSERT_OK(nz_array_read_region(a, zero, shape, back, sizeof data));
		for (i = 0; i < ROWS; i++)
			for (j = 0; j < COLS; j++)
				ASSERT_EQ_INT(back[i * COLS + j], expected(name, i, j));
	}
	ASSERT_OK(nz_source_hdf5_stats(s, &hs));
	*moved = hs.stored_chunks;
	free(back);
	nz_source_free(s);
	nz_array_free(a);
	return err;
}

/* write_into that must succeed; the chunks taken as stored. */
static uint64_t export_into(nz_store **st, const char *name, const spec *sp, int jobs)
{
	uint64_t moved = 0;

	ASSERT_OK(write_into(st, name, sp, jobs, &moved));
	return moved;
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
	spec sp = { format, hchunks, NULL, 1, level, 0, 0, NULL, 0, NULL };
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
	spec sp = { 3, hchunks, shards, 1, 4, 0, 0, NULL, 0, NULL };
	nz_store *st[3];
	int jobs, r;

	for (jobs = 1; jobs <= 3; jobs++)
		ASSERT_EQ_U64(export_into(&st[jobs - 1], "gz", &sp, jobs), NCHUNKS);
	for (r = 0; r < (ROWS + 3 * CR - 1) / (3 * CR); r++) { /* shard rows of 3000 rows, the last partial */
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
	spec same = { 3, hchunks, NULL, 1, 4, 0, 0, NULL, 0, NULL }, shape = { 3, other, NULL, 1, 4, 0, 0, NULL, 0, NULL },
	     codec = { 3, hchunks, NULL, 0, 4, 0, 0, NULL, 0, NULL }, v2 = { 2, hchunks, NULL, 1, 4, 0, 0, NULL, 0, NULL },
	     only = { 3, hchunks, NULL, 0, 4, 0, 0, NULL, 0, NULL };
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
	spec sp = { 3, hchunks, shard, 1, 4, 0, 0, NULL, 0, NULL };
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_nwb_resume_info acc = { 0, 0, 0, 0 };
	nz_store *whole, *st;
	nz_array *a;
	nz_source *s;
	const char *gone = shard ? "gz/c/1/0" : "gz/c/3/0", *bad = shard ? "gz/c/2/0" : "gz/c/5/1";
	uint64_t units = shard ? (ROWS + 3 * CR - 1) / (3 * CR) : NCHUNKS; /* shards: 3 chunk rows */
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
	for (r = 0; r < (int)(shard ? units : ROWS / CR); r++)
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

/* A corrupt stored chunk fails a moved write as it fails a decoded one:
 * NZ_ECODEC, the message naming the dataset, the chunk and the file. */
static void test_corrupt(void)
{
	spec moved = { 3, hchunks, NULL, 1, 4, 0, 0, NULL, 0, NULL }, sharded = { 3, hchunks, shards, 1, 4, 0, 0, NULL, 0, NULL },
	     decoded = { 3, other, NULL, 1, 4, 0, 0, NULL, 0, NULL };
	const spec *all[3] = { &moved, &sharded, &decoded };
	char want[1400];
	uint64_t n;
	nz_store *st;
	int i, jobs;

	snprintf(want, sizeof want, "'/bad': decoding the HDF5 chunk at [4000, 8] of '%s': codec 'zlib': ", file);
	for (i = 0; i < 3; i++)
		for (jobs = 1; jobs <= 2; jobs++) {
			ASSERT_ERR(NZ_ECODEC, write_into(&st, "bad", all[i], jobs, &n));
			ASSERT_CONTAINS(nz_error_last()->message, want);
			nz_store_free(st);
		}
}

/* Entry k of the index at the end of shard `key` (6 inner chunks, then the
 * crc32c): 1 when it is the empty pair (2^64-1, 2^64-1). */
static int shard_entry_empty(nz_store *st, const char *key, int k)
{
	unsigned char ff[16];
	void *v = NULL;
	size_t len = 0;
	int empty;

	memset(ff, 0xFF, sizeof ff);
	ASSERT_OK(nz_store_get(st, key, &v, &len));
	ASSERT(len >= 6 * 16 + 4);
	empty = memcmp((unsigned char *)v + len - 4 - (6 - k) * 16, ff, 16) == 0;
	nz_free(v);
	return empty;
}

/* write_empty_chunks=False: a moved chunk whose every element is the fill
 * value (0 here; the edge chunk's padding is not looked at) is left out,
 * exactly as the decode-and-encode path (libhdf5 decoding) leaves it: the
 * same keys, the same empty shard entries, reading back as the fill. With
 * every chunk stored it moves like any other. */
static void test_empty(const uint64_t *shard)
{
	spec moved = { 3, hchunks, shard, 1, 4, 1, 0, "0", 0, NULL }, encoded = { 3, hchunks, shard, 1, 4, 1, 1, "0", 0, NULL },
	     every = { 3, hchunks, shard, 1, 4, 0, 0, "0", 0, NULL };
	nz_store *m, *e, *a;
	char key[64];
	int r, c;

	ASSERT_EQ_U64(export_into(&m, "zeros", &moved, 2), NCHUNKS); /* each taken as stored, checked */
	ASSERT_EQ_U64(export_into(&e, "zeros", &encoded, 2), 0);
	ASSERT_EQ_U64(export_into(&a, "zeros", &every, 2), NCHUNKS);
	for (r = 0; r < ROWS / CR; r++)
		for (c = 0; c < 2; c++) {
			snprintf(key, sizeof key, "zeros/c/%d/%d", r, c);
			if (shard) {
				if (c == 1 || r != ZERO_ROW)
					continue;
				snprintf(key, sizeof key, "zeros/c/%d/0", r / 3);
				ASSERT(shard_entry_empty(m, key, 4) && shard_entry_empty(m, key, 5));
				ASSERT(shard_entry_empty(e, key, 4) && shard_entry_empty(e, key, 5));
				ASSERT(!shard_entry_empty(a, key, 4) && !shard_entry_empty(a, key, 5));
				ASSERT(!shard_entry_empty(m, key, 3) && !shard_entry_empty(e, key, 3)); /* row 1 */
				continue;
			}
			ASSERT_EQ_INT(nz_store_exists(m, key), r != ZERO_ROW);
			ASSERT_EQ_INT(nz_store_exists(e, key), r != ZERO_ROW);
			ASSERT_EQ_INT(nz_store_exists(a, key), 1);
		}
	nz_store_free(m);
	nz_store_free(e);
	nz_store_free(a);
}

#define BIG_CR 16384
#define BIG_ROWS (16 * BIG_CR) /* 6 MiB: over export's 4 MiB, so the engine writes it */

/* An NWB file of one large shuffle + deflate dataset /big; with `bad`, its
 * stored chunk 5 damaged. */
static void make_nwb(const char *path, int bad)
{
	hsize_t dims[2] = { BIG_ROWS, COLS }, chunks[2] = { BIG_CR, COLS };
	int16_t *v = malloc((size_t)BIG_ROWS * COLS * sizeof *v);
	hid_t fid, sp, dcpl, d;
	uint32_t x = 5;
	size_t i;

	ASSERT(v && (fid = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT)) >= 0);
	for (i = 0; i < (size_t)BIG_ROWS * COLS; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = (int16_t)((int)(i / COLS % 500) + (int)(x >> 27));
	}
	nz_test_h5_str_attr(fid, "object_id", "00000000-0000-4000-8000-000000000000");
	nz_test_h5_str_attr(fid, "nwb_version", "2.6.0");
	sp = H5Screate_simple(2, dims, NULL);
	dcpl = H5Pcreate(H5P_DATASET_CREATE);
	H5Pset_chunk(dcpl, 2, chunks);
	H5Pset_shuffle(dcpl);
	H5Pset_deflate(dcpl, 4);
	ASSERT((d = H5Dcreate2(fid, "big", H5T_STD_I16LE, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT)) >= 0);
	ASSERT(H5Dwrite(d, H5T_NATIVE_INT16, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
	H5Dclose(d);
	H5Pclose(dcpl);
	H5Sclose(sp);
	if (bad)
		damage_chunk(fid, "big", 5 * BIG_CR, 0);
	H5Fclose(fid);
	free(v);
}

/* The bytes of file `path` (malloc'd, NUL-terminated); NULL when missing. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return NULL;
	ASSERT(fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0);
	ASSERT((b = malloc((size_t)n + 1)) && fread(b, 1, (size_t)n, f) == (size_t)n);
	b[n] = 0;
	fclose(f);
	return b;
}

/* nz_export_hdf5 with --compressor keep of a file with a corrupt chunk
 * fails naming the file and the chunk; over an existing output (overwrite)
 * it leaves that output as it was, and a new one stays marked incomplete,
 * never consolidated. */
static void test_export_corrupt(void)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	char good[1200], bad[1200], out[1200], fresh[1200], p[1300], want[1400];
	char *before, *after;

	snprintf(good, sizeof good, "%s/good.nwb", tmp);
	snprintf(bad, sizeof bad, "%s/bad.nwb", tmp);
	snprintf(out, sizeof out, "%s/out.nwb.zarr", tmp);
	snprintf(fresh, sizeof fresh, "%s/fresh.nwb.zarr", tmp);
	make_nwb(good, 0);
	make_nwb(bad, 1);
	o.keep_filters = 1;
	o.zarr_format = 3;
	o.jobs = 2;
	o.stats = &st;
	ASSERT_OK(nz_export_hdf5(good, out, &o));
	ASSERT_EQ_U64(st.stored_chunks, 16);
	snprintf(p, sizeof p, "%s/zarr.json", out);
	ASSERT((before = slurp(p)) && strstr(before, "consolidated_metadata"));
	o.overwrite = 1;
	snprintf(want, sizeof want, "'/big': decoding the HDF5 chunk at [%d, 0] of '%s': codec 'zlib': ", 5 * BIG_CR, bad);
	ASSERT_ERR(NZ_ECODEC, nz_export_hdf5(bad, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, want);
	ASSERT((after = slurp(p)) && strcmp(before, after) == 0);
	snprintf(p, sizeof p, "%s/" NZ_INCOMPLETE_MARKER, out);
	ASSERT(access(p, F_OK) != 0);
	free(after);
	ASSERT_ERR(NZ_ECODEC, nz_export_hdf5(bad, fresh, &o));
	ASSERT_CONTAINS(nz_error_last()->message, want);
	snprintf(p, sizeof p, "%s/" NZ_INCOMPLETE_MARKER, fresh);
	ASSERT(access(p, F_OK) == 0);
	snprintf(p, sizeof p, "%s/zarr.json", fresh);
	after = slurp(p);
	ASSERT(!after || !strstr(after, "consolidated_metadata\": {"));
	free(after);
	free(before);
}

/* The memory budget counts what a worker moving stored chunks holds besides
 * an encoding worker's two chunks: the stored chunk and its two decode
 * buffers. With four chunks' worth and 3 jobs asked, two encoding workers
 * fit (libhdf5 decoding: nothing moves), one moving worker. */
static void test_budget(void)
{
	nz_write_stats ws;
	spec moving = { 3, hchunks, NULL, 1, 4, 0, 0, NULL, 4 * CR * CC * sizeof(int16_t), &ws };
	spec encoding = { 3, hchunks, NULL, 1, 4, 0, 1, NULL, 4 * CR * CC * sizeof(int16_t), &ws };
	nz_store *st;

	ASSERT_EQ_U64(export_into(&st, "gz", &moving, 3), NCHUNKS);
	ASSERT_EQ_INT(ws.jobs, 1);
	nz_store_free(st);
	ASSERT_EQ_U64(export_into(&st, "gz", &encoding, 3), 0);
	ASSERT_EQ_INT(ws.jobs, 2);
	nz_store_free(st);
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
	test_corrupt();
	test_empty(NULL);
	test_empty(shards);
	test_export_corrupt();
	test_budget();
	nz_test_rm_rf(tmp);
	puts("test_passthru: ok");
	return 0;
}
