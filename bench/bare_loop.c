/* bare_loop: the machine's practical limit for the benchmark. Reads a raw
 * int16 recording, gathers the same chunks the engine writes, compresses
 * them with blosc_compress_ctx (same codec, one internal thread each) on N
 * threads and writes one plain file per chunk: no metadata, no atomic
 * rename, no format at all. It does the same gather work as the engine
 * (bands of G chunks sharing rows, rows read in 1 MiB blocks, G from the
 * same 160 MiB budget) so the comparison is honest; chunks spanning all
 * channels are read directly.
 *
 * usage: bare_loop IN OUTDIR --channels N --chunks R,C [--cname lz4]
 *        [--clevel 5] [--shuffle 1] [-j N] [--band G] */
#include <blosc.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bare_io.h"

static struct {
	int fd;
	const char *out, *cname;
	uint64_t rows, nch, crows, ccols, grid0, grid1, band, ngroups;
	int clevel, shuffle;
	atomic_uint_least64_t next;
	atomic_int failed;
} g;

static void put(uint64_t r, uint64_t c, const void *data, size_t len, void *dst, size_t dstcap)
{
	char path[4096];
	int n = blosc_compress_ctx(g.clevel, g.shuffle, 2, len, data, dst, dstcap, g.cname, 0, 1);
	int fd;
	if (n <= 0) {
		fprintf(stderr, "bare_loop: blosc failed\n");
		exit(1);
	}
	snprintf(path, sizeof path, "%s/%llu.%llu", g.out, (unsigned long long)r, (unsigned long long)c);
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0666)) < 0)
		die(path);
	write_all(fd, dst, (size_t)n, path);
	if (close(fd) != 0)
		die(path);
}

static void *worker(void *arg)
{
	size_t chunk = (size_t)(g.crows * g.ccols * 2), rowb = (size_t)g.nch * 2;
	uint64_t step = (1u << 20) / rowb ? (1u << 20) / rowb : 1, t, k;
	unsigned char **bufs = calloc(g.band, sizeof *bufs), *rd = malloc(step * rowb);
	unsigned char *dst = malloc(chunk + BLOSC_MAX_OVERHEAD);
	(void)arg;
	for (k = 0; k < g.band; k++)
		bufs[k] = malloc(chunk);
	while ((t = atomic_fetch_add(&g.next, 1)) < g.grid0 * g.ngroups) {
		uint64_t r = t / g.ngroups, grp = t % g.ngroups, r0 = r * g.crows;
		uint64_t nr = g.rows - r0 < g.crows ? g.rows - r0 : g.crows;
		uint64_t c0 = grp * g.band, c1 = c0 + g.band < g.grid1 ? c0 + g.band : g.grid1, x, c;
		if (g.ccols == g.nch) { /* time-major: one contiguous read */
			memset(bufs[0] + nr * rowb, 0, chunk - nr * rowb);
			pread_all(g.fd, bufs[0], nr * rowb, (off_t)(r0 * rowb), "bare_loop: read");
			put(r, 0, bufs[0], chunk, dst, chunk + BLOSC_MAX_OVERHEAD);
			continue;
		}
		for (c = c0; c < c1; c++)
			if (nr < g.crows || (c + 1) * g.ccols > g.nch)
				memset(bufs[c - c0], 0, chunk);
		for (x = 0; x < nr; x += step) {
			uint64_t m = nr - x < step ? nr - x : step, i;
			pread_all(g.fd, rd, m * rowb, (off_t)((r0 + x) * rowb), "bare_loop: read");
			for (c = c0; c < c1; c++) {
				uint64_t col = c * g.ccols, w = g.nch - col < g.ccols ? g.nch - col : g.ccols;
				for (i = 0; i < m; i++)
					memcpy(bufs[c - c0] + ((x + i) * g.ccols) * 2, rd + i * rowb + col * 2, w * 2);
			}
		}
		for (c = c0; c < c1; c++)
			put(r, c, bufs[c - c0], chunk, dst, chunk + BLOSC_MAX_OVERHEAD);
	}
	for (k = 0; k < g.band; k++)
		free(bufs[k]);
	free(bufs);
	free(rd);
	free(dst);
	return NULL;
}

int main(int argc, char **argv)
{
	struct stat st;
	pthread_t th[256];
	int jobs = 1, i;
	uint64_t band = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: bare_loop IN OUTDIR --channels N --chunks R,C [--cname lz4] "
				"[--clevel 5] [--shuffle 1] [-j N] [--band G]\n");
		return 2;
	}
	g.out = argv[2];
	g.cname = "lz4";
	g.clevel = 5;
	g.shuffle = 1;
	for (i = 3; i + 1 < argc; i += 2) {
		const char *a = argv[i], *v = argv[i + 1];
		if (!strcmp(a, "--channels"))
			g.nch = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--chunks"))
			sscanf(v, "%lu,%lu", (unsigned long *)&g.crows, (unsigned long *)&g.ccols);
		else if (!strcmp(a, "--cname"))
			g.cname = v;
		else if (!strcmp(a, "--clevel"))
			g.clevel = atoi(v);
		else if (!strcmp(a, "--shuffle"))
			g.shuffle = atoi(v);
		else if (!strcmp(a, "-j"))
			jobs = atoi(v);
		else if (!strcmp(a, "--band"))
			band = strtoull(v, NULL, 10);
	}
	if (!g.nch || !g.crows || !g.ccols || jobs < 1 || jobs > 256)
		return 2;
	if ((g.fd = open(argv[1], O_RDONLY)) < 0 || fstat(g.fd, &st) != 0)
		die(argv[1]);
	mkdir(g.out, 0777);
	blosc_init();
	g.rows = (uint64_t)st.st_size / (g.nch * 2);
	g.grid0 = (g.rows + g.crows - 1) / g.crows;
	g.grid1 = (g.nch + g.ccols - 1) / g.ccols;
	if (!band) { /* the engine's default: 160 MiB over the jobs, one chunk for output */
		band = (160u << 20) / (uint64_t)jobs / (g.crows * g.ccols * 2);
		band = band > 1 ? band - 1 : 1;
	}
	if (band > g.grid1)
		band = g.grid1;
	g.ngroups = (g.grid1 + band - 1) / band;
	g.band = (g.grid1 + g.ngroups - 1) / g.ngroups;
	for (i = 0; i < jobs; i++)
		pthread_create(&th[i], NULL, worker, NULL);
	for (i = 0; i < jobs; i++)
		pthread_join(th[i], NULL);
	blosc_destroy();
	return 0;
}
