/* bare_shard: the machine's practical limit for the Zarr v3 sharded
 * benchmark. Reads a raw int16 recording (frames x channels), cuts it into
 * shards of R x C elements made of inner chunks of r x c, compresses each
 * inner chunk with blosc_compress_ctx (one internal thread) and writes one
 * plain file per shard: the inner chunks in C order, then the index (one
 * little-endian (offset, nbytes) pair per inner chunk, CRC32C appended) at
 * the end. N threads take whole shards. No format library, no temporary
 * names, no rename: only the work any writer of this layout must do.
 *
 * It still writes a valid Zarr v3 array (a zarr.json printed here), so the
 * benchmark checks its output with zarr-python like every other variant's.
 * Inner chunks wholly outside the array are left out (empty index entries),
 * as zarr-python does; partial ones are zero-padded (fill value 0).
 *
 * Memory per thread: one inner-chunk row of the shard (C / c chunk buffers),
 * a 1 MiB read block and one compressed chunk; not the shard.
 *
 * usage: bare_shard IN OUTDIR --channels N --chunks r,c --shards R,C
 *        [--cname lz4] [--clevel 5] [-j N] */
#include <blosc.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bare_io.h"

static struct {
	int fd;
	const char *out, *cname;
	uint64_t rows, nch, crows, ccols, srows, scols, sgrid0, sgrid1;
	int clevel;
	atomic_uint_least64_t next;
} g;

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* One shard: for each inner-chunk row, read its frames in 1 MiB blocks,
 * gather the shard's columns into the chunk buffers, compress and append. */
static void write_shard(uint64_t s0, uint64_t s1, unsigned char **bufs, unsigned char *rd,
			unsigned char *dst, unsigned char *index)
{
	size_t chunk = (size_t)(g.crows * g.ccols * 2), rowb = (size_t)g.nch * 2, dstcap;
	uint64_t nr_in = g.srows / g.crows, nc_in = g.scols / g.ccols, step, off = 0, i, j, x;
	uint64_t col0 = s1 * g.scols, ncols = min64(g.scols, g.nch - col0);
	char path[4096], dir[4096];
	int fd;

	dstcap = chunk + BLOSC_MAX_OVERHEAD;
	step = (1u << 20) / rowb ? (1u << 20) / rowb : 1;
	memset(index, 0xFF, (size_t)(nr_in * nc_in * 16));
	if ((size_t)snprintf(dir, sizeof dir, "%s/c/%" PRIu64, g.out, s0) >= sizeof dir ||
	    (size_t)snprintf(path, sizeof path, "%s/%" PRIu64, dir, s1) >= sizeof path) {
		fprintf(stderr, "bare_shard: output path too long\n");
		exit(1);
	}
	mkdir(dir, 0777); /* another shard of this row may have made it */
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
		die(path);
	for (i = 0; i < nr_in; i++) {
		uint64_t r0 = s0 * g.srows + i * g.crows, nr, nc;
		if (r0 >= g.rows)
			break; /* the rest of an edge shard: empty entries */
		nr = min64(g.crows, g.rows - r0);
		nc = (ncols + g.ccols - 1) / g.ccols;
		for (j = 0; j < nc; j++)
			if (nr < g.crows || (j + 1) * g.ccols > ncols)
				memset(bufs[j], 0, chunk);
		for (x = 0; x < nr; x += step) {
			uint64_t m = min64(step, nr - x), k;
			pread_all(g.fd, rd, (size_t)(m * rowb), (off_t)((r0 + x) * rowb), "bare_shard: read");
			for (j = 0; j < nc; j++) {
				uint64_t c = col0 + j * g.ccols, w = min64(g.ccols, col0 + ncols - c);
				for (k = 0; k < m; k++)
					memcpy(bufs[j] + (x + k) * g.ccols * 2, rd + k * rowb + c * 2,
					       (size_t)(w * 2));
			}
		}
		for (j = 0; j < nc; j++) {
			int n = blosc_compress_ctx(g.clevel, 1, 2, chunk, bufs[j], dst, dstcap, g.cname, 0, 1);
			if (n <= 0) {
				fprintf(stderr, "bare_shard: blosc failed (cname %s)\n", g.cname);
				exit(1);
			}
			write_all(fd, dst, (size_t)n, path);
			put_le64(index + (i * nc_in + j) * 16, off);
			put_le64(index + (i * nc_in + j) * 16 + 8, (uint64_t)n);
			off += (uint64_t)n;
		}
	}
	write_shard_index(fd, index, (size_t)(nr_in * nc_in * 16), path);
	if (close(fd) != 0)
		die(path);
}

static void *worker(void *arg)
{
	size_t chunk = (size_t)(g.crows * g.ccols * 2);
	uint64_t nc_in = g.scols / g.ccols, nin = g.srows / g.crows * nc_in, t, k;
	unsigned char **bufs = xmalloc(nc_in * sizeof *bufs), *rd = xmalloc(1u << 20);
	unsigned char *dst = xmalloc(chunk + BLOSC_MAX_OVERHEAD), *index = xmalloc(nin * 16);

	(void)arg;
	if ((size_t)g.nch * 2 > (1u << 20)) {
		free(rd);
		rd = xmalloc((size_t)g.nch * 2);
	}
	for (k = 0; k < nc_in; k++)
		bufs[k] = xmalloc(chunk);
	while ((t = atomic_fetch_add(&g.next, 1)) < g.sgrid0 * g.sgrid1)
		write_shard(t / g.sgrid1, t % g.sgrid1, bufs, rd, dst, index);
	for (k = 0; k < nc_in; k++)
		free(bufs[k]);
	free(bufs);
	free(rd);
	free(dst);
	free(index);
	return NULL;
}

/* The array's zarr.json: what the shards above are. */
static void write_metadata(void)
{
	uint64_t shape[2] = {g.rows, g.nch}, shard[2] = {g.srows, g.scols}, chunk[2] = {g.crows, g.ccols};
	char codec[256];

	snprintf(codec, sizeof codec,
		 "{\"name\": \"blosc\", \"configuration\": {\"cname\": \"%s\", \"clevel\": %d, "
		 "\"shuffle\": \"shuffle\", \"typesize\": 2, \"blocksize\": 0}}",
		 g.cname, g.clevel);
	write_shard_meta(g.out, shape, 16, shard, chunk, codec);
}

static int pair(const char *v, uint64_t *a, uint64_t *b)
{
	return sscanf(v, "%" SCNu64 ",%" SCNu64, a, b) == 2;
}

int main(int argc, char **argv)
{
	struct stat st;
	int jobs = 1, i;

	if (argc < 3) {
	usage:
		fprintf(stderr, "usage: bare_shard IN OUTDIR --channels N --chunks r,c --shards R,C "
				"[--cname lz4] [--clevel 5] [-j N]\n");
		return 2;
	}
	g.out = argv[2];
	g.cname = "lz4";
	g.clevel = 5;
	for (i = 3; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--channels"))
			g.nch = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--chunks") && pair(v, &g.crows, &g.ccols))
			continue;
		else if (!strcmp(a, "--shards") && pair(v, &g.srows, &g.scols))
			continue;
		else if (!strcmp(a, "--cname"))
			g.cname = v;
		else if (!strcmp(a, "--clevel"))
			g.clevel = atoi(v);
		else if (!strcmp(a, "-j"))
			jobs = atoi(v);
		else
			goto usage;
	}
	if (i != argc || !g.nch || !g.crows || !g.ccols || !g.srows || !g.scols || jobs < 1 ||
	    jobs > 256 || g.srows % g.crows || g.scols % g.ccols) {
		fprintf(stderr, "bare_shard: need --channels, --chunks and --shards (each shard dimension a "
				"multiple of the chunk's), 1 <= -j <= 256\n");
		return 2;
	}
	if ((g.fd = open(argv[1], O_RDONLY)) < 0 || fstat(g.fd, &st) != 0)
		die(argv[1]);
	g.rows = (uint64_t)st.st_size / (g.nch * 2);
	g.sgrid0 = (g.rows + g.srows - 1) / g.srows;
	g.sgrid1 = (g.nch + g.scols - 1) / g.scols;
	make_shard_dirs(g.out);
	write_metadata();
	blosc_init();
	run_workers(jobs, worker);
	blosc_destroy();
	return 0;
}
