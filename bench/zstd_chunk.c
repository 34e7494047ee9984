/* zstd_chunk: where the time of blosc-zstd goes, on one inner chunk or a
 * whole shard row of the v3 benchmark (bench/bench_zstd.sh drives it).
 *
 * Input: a raw file of int16 inner chunks, each CHUNK bytes, back to back.
 * For every variant it compresses each chunk in turn, REPS times, and prints
 * one CSV line: variant, chunks, input bytes, output bytes, best CPU seconds
 * for all chunks (CPU, not wall: the machine is shared), and writes the output of the first chunk to OUTDIR/VARIANT.bin
 * for the driver to compare byte for byte with the peers' outputs.
 *
 *   blosc          blosc_compress_ctx(clevel, byte shuffle, 2, ..., "zstd",
 *                  blocksize 0, 1 thread): what src/codec/codec_blosc.c calls
 *   zstd-fresh     what c-blosc 1.21 does inside, by hand: byte shuffle of
 *                  each block, then ZSTD_compress (a new context per block)
 *                  at blosc's level mapping (clevel * 2 - 1); the output is
 *                  the concatenated zstd frames, no blosc header
 *   zstd-reused    the same frames from ZSTD_compressCCtx with one context
 *                  kept for the whole run (what a caller can do that
 *                  c-blosc 1.x does not)
 *
 * usage: zstd_chunk IN CHUNK_BYTES OUTDIR [CLEVEL=3] [REPS=5] [BLOCKSIZE=0] */
#include <blosc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		die("zstd_chunk: malloc");
	return p;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* c-blosc 1.21's block size for zstd (an "HCR" codec) on buffers of at
 * least L1 = 32 KiB: L1 * 2, then scaled by clevel (compute_blocksize). */
static size_t blosc_zstd_blocksize(int clevel, size_t nbytes)
{
	static const int scale[10] = {0, 0, 1, 2, 4, 4, 8, 8, 8, 16};
	size_t bs = (size_t)32768 * 2;
	if (nbytes < 32768)
		return nbytes;
	bs = clevel == 0 ? bs / 4 : clevel == 1 ? bs / 2 : bs * (size_t)scale[clevel];
	if (bs > nbytes)
		bs = nbytes;
	return bs / 2 * 2; /* a multiple of the typesize */
}

static void shuffle2(const unsigned char *src, unsigned char *dst, size_t n)
{
	size_t i, h = n / 2;
	for (i = 0; i < h; i++) {
		dst[i] = src[2 * i];
		dst[h + i] = src[2 * i + 1];
	}
	if (n & 1)
		dst[n - 1] = src[n - 1];
}

/* One chunk through zstd block by block; returns the bytes written. */
static size_t zstd_blocks(ZSTD_CCtx *cc, int level, size_t bs, const unsigned char *src, size_t n,
			  unsigned char *tmp, unsigned char *dst, size_t cap)
{
	size_t off, out = 0;
	for (off = 0; off < n; off += bs) {
		size_t len = n - off < bs ? n - off : bs, rc;
		shuffle2(src + off, tmp, len);
		rc = cc ? ZSTD_compressCCtx(cc, dst + out, cap - out, tmp, len, level)
			: ZSTD_compress(dst + out, cap - out, tmp, len, level);
		if (ZSTD_isError(rc)) {
			fprintf(stderr, "zstd_chunk: %s\n", ZSTD_getErrorName(rc));
			exit(1);
		}
		out += rc;
	}
	return out;
}

int main(int argc, char **argv)
{
	static const char *const names[] = {"blosc", "zstd-fresh", "zstd-reused"};
	const char *outdir;
	size_t chunk, total, nchunks, cap, bs;
	int clevel, reps, v, r, forced;
	unsigned char *in, *dst, *tmp;
	ZSTD_CCtx *cc;
	FILE *f;

	if (argc < 4) {
		fprintf(stderr, "usage: zstd_chunk IN CHUNK_BYTES OUTDIR [CLEVEL] [REPS] [BLOCKSIZE]\n");
		return 2;
	}
	chunk = strtoull(argv[2], NULL, 10);
	outdir = argv[3];
	clevel = argc > 4 ? atoi(argv[4]) : 3;
	reps = argc > 5 ? atoi(argv[5]) : 5;
	forced = argc > 6 ? atoi(argv[6]) : 0;
	if (!chunk || clevel < 1 || clevel > 9 || reps < 1) {
		fprintf(stderr, "zstd_chunk: bad arguments\n");
		return 2;
	}
	if (!(f = fopen(argv[1], "rb")) || fseek(f, 0, SEEK_END) != 0)
		die(argv[1]);
	total = (size_t)ftell(f);
	nchunks = total / chunk;
	if (!nchunks) {
		fprintf(stderr, "zstd_chunk: %s holds less than one chunk\n", argv[1]);
		return 1;
	}
	rewind(f);
	in = xmalloc(nchunks * chunk);
	if (fread(in, 1, nchunks * chunk, f) != nchunks * chunk)
		die(argv[1]);
	fclose(f);
	cap = ZSTD_compressBound(chunk) * 2 + BLOSC_MAX_OVERHEAD + chunk / 1024;
	dst = xmalloc(cap);
	tmp = xmalloc(chunk);
	bs = forced ? (size_t)forced : blosc_zstd_blocksize(clevel, chunk);
	if (!(cc = ZSTD_createCCtx()))
		die("zstd_chunk: ZSTD_createCCtx");
	printf("variant,chunks,in_bytes,out_bytes,best_s,zstd_version,blocksize\n");
	for (v = 0; v < 3; v++) {
		double best = 1e30;
		size_t outb = 0;
		for (r = 0; r < reps; r++) {
			double t0 = now();
			size_t k, sum = 0;
			for (k = 0; k < nchunks; k++) {
				size_t n;
				const unsigned char *src = in + k * chunk;
				if (v == 0) {
					int rc = blosc_compress_ctx(clevel, BLOSC_SHUFFLE, 2, chunk, src, dst,
								    chunk + BLOSC_MAX_OVERHEAD, "zstd",
								    (size_t)forced, 1);
					if (rc <= 0) {
						fprintf(stderr, "zstd_chunk: blosc failed (%d)\n", rc);
						return 1;
					}
					n = (size_t)rc;
				} else {
					n = zstd_blocks(v == 2 ? cc : NULL, clevel * 2 - 1, bs, src, chunk, tmp,
							dst, cap);
				}
				sum += n;
				if (r == 0 && k == 0) {
					char path[4096];
					FILE *o;
					snprintf(path, sizeof path, "%s/%s.bin", outdir, names[v]);
					if (!(o = fopen(path, "wb")) || fwrite(dst, 1, n, o) != n || fclose(o) != 0)
						die(path);
				}
			}
			t0 = now() - t0;
			if (t0 < best)
				best = t0;
			outb = sum;
		}
		printf("%s,%zu,%zu,%zu,%.6f,%s,%zu\n", names[v], nchunks, nchunks * chunk, outb, best,
		       ZSTD_versionString(), bs);
	}
	ZSTD_freeCCtx(cc);
	free(in);
	free(dst);
	free(tmp);
	return 0;
}
