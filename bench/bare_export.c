/* bare_export: the machine's practical limit for issue 12's export
 * benchmark. Reads the chunks of one HDF5 dataset (filtered by shuffle then
 * deflate, as h5py/pynwb write gzip + shuffle) raw with H5Dread_chunk under
 * one lock, inflates them with libdeflate, unshuffles, recompresses each
 * with the output codec (zstd, or blosc with its shuffle) and writes Zarr v3
 * shards of whole HDF5 chunks: the inner chunks in C order, then the index
 * (little-endian (offset, nbytes) pairs, CRC32C appended). N threads take
 * whole shards. No format library, no temporary names, no rename: only the
 * work any exporter of this file to this layout must do.
 *
 * It writes a valid Zarr v3 array (its zarr.json is written here), so the
 * benchmark checks its output like every other variant's. HDF5 stores edge
 * chunks whole, so every inner chunk is written whole too.
 *
 * usage: bare_export IN.h5 DATASET OUTDIR --shards R,C [--codec zstd|blosc-lz4]
 *        [--clevel L] [-j N] */
#include <blosc.h>
#include <fcntl.h>
#include <hdf5.h>
#include <inttypes.h>
#include <libdeflate.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zstd.h>

#include "bare_io.h"

static struct {
	hid_t dset;
	const char *out;
	int blosc, clevel;
	size_t isz, chunk_bytes;
	uint64_t dims[2], cdims[2], sdims[2], sgrid[2];
	pthread_mutex_t h5;
	atomic_uint_least64_t next;
} g;

static void fail(const char *what)
{
	fprintf(stderr, "bare_export: %s\n", what);
	exit(1);
}

/* HDF5's shuffle: byte k of every element was stored in plane k. */
static void unshuffle(const unsigned char *src, unsigned char *dst, size_t n, size_t isz)
{
	size_t ne = n / isz, e, k;
	for (k = 0; k < isz; k++)
		for (e = 0; e < ne; e++)
			dst[e * isz + k] = src[k * ne + e];
}

typedef struct {
	struct libdeflate_decompressor *inflater;
	ZSTD_CCtx *zstd;
	unsigned char *raw, *plain, *shuf, *dst, *index;
	size_t raw_cap, dst_cap;
} worker_bufs;

/* One inner chunk: raw read under the lock, the rest on this thread.
 * Returns the compressed size in b->dst. */
static size_t one_chunk(worker_bufs *b, uint64_t r0, uint64_t c0)
{
	hsize_t off[2] = {r0, c0}, nbytes = 0;
	uint32_t mask = 0;
	size_t got = 0, n;

	pthread_mutex_lock(&g.h5);
	if (H5Dget_chunk_storage_size(g.dset, off, &nbytes) < 0 || nbytes == 0)
		fail("a chunk is not stored (the benchmark input stores every chunk)");
	if (nbytes > b->raw_cap) {
		free(b->raw);
		b->raw = xmalloc(b->raw_cap = (size_t)nbytes);
	}
	if (H5Dread_chunk(g.dset, H5P_DEFAULT, off, &mask, b->raw) < 0)
		fail("H5Dread_chunk failed");
	pthread_mutex_unlock(&g.h5);
	if (mask != 0)
		fail("a chunk skipped a filter (not what the benchmark input holds)");
	if (libdeflate_zlib_decompress(b->inflater, b->raw, (size_t)nbytes, b->shuf, g.chunk_bytes, &got) !=
		LIBDEFLATE_SUCCESS ||
	    got != g.chunk_bytes)
		fail("inflate failed");
	unshuffle(b->shuf, b->plain, g.chunk_bytes, g.isz);
	if (g.blosc) {
		int k = blosc_compress_ctx(g.clevel, 1, g.isz, g.chunk_bytes, b->plain, b->dst, b->dst_cap, "lz4",
					   0, 1);
		if (k <= 0)
			fail("blosc failed");
		return (size_t)k;
	}
	n = ZSTD_compressCCtx(b->zstd, b->dst, b->dst_cap, b->plain, g.chunk_bytes, g.clevel);
	if (ZSTD_isError(n))
		fail("zstd failed");
	return n;
}

static void write_shard(worker_bufs *b, uint64_t s0, uint64_t s1)
{
	uint64_t nr = g.sdims[0] / g.cdims[0], nc = g.sdims[1] / g.cdims[1], off = 0, i, j;
	size_t ilen = (size_t)(nr * nc * 16);
	char path[4096], dir[4096];
	int fd;

	memset(b->index, 0xFF, ilen);
	if ((size_t)snprintf(dir, sizeof dir, "%s/c/%" PRIu64, g.out, s0) >= sizeof dir ||
	    (size_t)snprintf(path, sizeof path, "%s/%" PRIu64, dir, s1) >= sizeof path)
		fail("output path too long");
	mkdir(dir, 0777); /* another shard of this row may have made it */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
		die(path);
	for (i = 0; i < nr; i++) {
		uint64_t r0 = s0 * g.sdims[0] + i * g.cdims[0];
		if (r0 >= g.dims[0])
			break; /* the rest of an edge shard: empty entries */
		for (j = 0; j < nc; j++) {
			uint64_t c0 = s1 * g.sdims[1] + j * g.cdims[1];
			size_t n;
			if (c0 >= g.dims[1])
				break;
			n = one_chunk(b, r0, c0);
			write_all(fd, b->dst, n, path);
			put_le64(b->index + (i * nc + j) * 16, off);
			put_le64(b->index + (i * nc + j) * 16 + 8, (uint64_t)n);
			off += n;
		}
	}
	write_shard_index(fd, b->index, ilen, path);
	if (close(fd) != 0)
		die(path);
}

static void *worker(void *arg)
{
	worker_bufs b = {0};
	uint64_t t, nin = g.sdims[0] / g.cdims[0] * (g.sdims[1] / g.cdims[1]);

	(void)arg;
	b.inflater = libdeflate_alloc_decompressor();
	b.zstd = ZSTD_createCCtx();
	if (!b.inflater || !b.zstd)
		fail("out of memory");
	b.dst_cap = g.blosc ? g.chunk_bytes + BLOSC_MAX_OVERHEAD : ZSTD_compressBound(g.chunk_bytes);
	b.plain = xmalloc(g.chunk_bytes);
	b.shuf = xmalloc(g.chunk_bytes);
	b.dst = xmalloc(b.dst_cap);
	b.index = xmalloc((size_t)nin * 16);
	while ((t = atomic_fetch_add(&g.next, 1)) < g.sgrid[0] * g.sgrid[1])
		write_shard(&b, t / g.sgrid[1], t % g.sgrid[1]);
	libdeflate_free_decompressor(b.inflater);
	ZSTD_freeCCtx(b.zstd);
	free(b.raw);
	free(b.plain);
	free(b.shuf);
	free(b.dst);
	free(b.index);
	return NULL;
}

/* The array's zarr.json: the HDF5 chunks as inner chunks, then the codec. */
static void write_metadata(void)
{
	char codec[256];

	if (g.blosc)
		snprintf(codec, sizeof codec,
			 "{\"name\": \"blosc\", \"configuration\": {\"cname\": \"lz4\", \"clevel\": %d, "
			 "\"shuffle\": \"shuffle\", \"typesize\": %zu, \"blocksize\": 0}}",
			 g.clevel, g.isz);
	else
		snprintf(codec, sizeof codec,
			 "{\"name\": \"zstd\", \"configuration\": {\"level\": %d, \"checksum\": false}}", g.clevel);
	write_shard_meta(g.out, g.dims, (int)(g.isz * 8), g.sdims, g.cdims, codec);
}

/* The dataset must be what the benchmark writes: 2-D little-endian signed
 * integers, chunked, filtered by shuffle then deflate. */
static void open_input(const char *file, const char *name)
{
	hid_t fid, space, dcpl, type;
	hsize_t d[2], c[2];
	unsigned flags, cd[8];
	size_t ncd = 8;

	if ((fid = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0 ||
	    (g.dset = H5Dopen2(fid, name, H5P_DEFAULT)) < 0)
		fail("cannot open the input dataset");
	space = H5Dget_space(g.dset);
	dcpl = H5Dget_create_plist(g.dset);
	type = H5Dget_type(g.dset);
	if (H5Sget_simple_extent_ndims(space) != 2 || H5Sget_simple_extent_dims(space, d, NULL) != 2 ||
	    H5Pget_layout(dcpl) != H5D_CHUNKED || H5Pget_chunk(dcpl, 2, c) != 2 ||
	    H5Tget_class(type) != H5T_INTEGER || H5Tget_order(type) != H5T_ORDER_LE)
		fail("the dataset is not a chunked 2-D little-endian integer array");
	if (H5Pget_nfilters(dcpl) != 2 ||
	    H5Pget_filter2(dcpl, 0, &flags, &ncd, cd, 0, NULL, NULL) != H5Z_FILTER_SHUFFLE ||
	    (ncd = 8, H5Pget_filter2(dcpl, 1, &flags, &ncd, cd, 0, NULL, NULL)) != H5Z_FILTER_DEFLATE)
		fail("the dataset's filters are not shuffle then deflate");
	g.isz = H5Tget_size(type);
	g.dims[0] = d[0], g.dims[1] = d[1], g.cdims[0] = c[0], g.cdims[1] = c[1];
	g.chunk_bytes = (size_t)(c[0] * c[1]) * g.isz;
	H5Tclose(type);
	H5Pclose(dcpl);
	H5Sclose(space);
}

int main(int argc, char **argv)
{
	const char *codec = "zstd";
	int jobs = 1, i;

	g.clevel = -1;
	if (argc < 4) {
	usage:
		fprintf(stderr, "usage: bare_export IN.h5 DATASET OUTDIR --shards R,C [--codec zstd|blosc-lz4] "
				"[--clevel L] [-j N]\n");
		return 2;
	}
	g.out = argv[3];
	for (i = 4; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--shards") && sscanf(v, "%" SCNu64 ",%" SCNu64, &g.sdims[0], &g.sdims[1]) == 2)
			continue;
		else if (!strcmp(a, "--codec"))
			codec = v;
		else if (!strcmp(a, "--clevel"))
			g.clevel = atoi(v);
		else if (!strcmp(a, "-j"))
			jobs = atoi(v);
		else
			goto usage;
	}
	if (i != argc || jobs < 1 || jobs > 256 || (strcmp(codec, "zstd") && strcmp(codec, "blosc-lz4")))
		goto usage;
	g.blosc = !strcmp(codec, "blosc-lz4");
	if (g.clevel < 0)
		g.clevel = g.blosc ? 5 : 3; /* nwbzarr's blosc-lz4; zstd's default level */
	open_input(argv[1], argv[2]);
	if (!g.sdims[0] || !g.sdims[1] || g.sdims[0] % g.cdims[0] || g.sdims[1] % g.cdims[1])
		fail("--shards must be a multiple of the HDF5 chunk shape");
	g.sgrid[0] = (g.dims[0] + g.sdims[0] - 1) / g.sdims[0];
	g.sgrid[1] = (g.dims[1] + g.sdims[1] - 1) / g.sdims[1];
	pthread_mutex_init(&g.h5, NULL);
	make_shard_dirs(g.out);
	write_metadata();
	blosc_init();
	run_workers(jobs, worker);
	blosc_destroy();
	return 0;
}
