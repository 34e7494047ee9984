/* nz_write_raw: write a raw recording into a Zarr array with the engine,
 * through the public API only. A stand-in for the NWB `convert` command in
 * benchmarks, and an example of the progress/cancel/--json conventions.
 *
 * usage: nz_write_raw IN OUT --channels N --chunks R,C [--dtype <i2]
 *        [--header BYTES] [--compressor blosc|zstd|lz4|zlib|none]
 *        [--cname lz4] [--clevel 5] [--shuffle 1] [-j N] [--buffer-size MiB]
 *        [--task-chunks R,C] [--zarr-format 2|3] [--shards R,C] [--quiet] [--json]
 *
 * --zarr-format 3 --shards R,C writes a sharded Zarr v3 array, each shard
 * one atomic streaming put (the engine's write units). Exit status 3 when
 * the library refuses the layout as unsupported (NZ_EUNSUPPORTED), with
 * its message: bench/bench_v3.sh reports that as "not available". */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "nwbzarr.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

/* A one-line bar on a terminal: percent, MB done, MB/s, ETA. */
static int show_progress(const nz_progress *p, void *ctx)
{
	double mb = p->bytes_done / 1e6, rate = p->elapsed_s > 0 ? mb / p->elapsed_s : 0;
	double frac = p->bytes_total ? (double)p->bytes_done / (double)p->bytes_total : 1;
	double eta = rate > 0 ? (p->bytes_total - p->bytes_done) / 1e6 / rate : 0;
	char bar[31];
	int i, fill = (int)(frac * 30);

	(void)ctx;
	for (i = 0; i < 30; i++)
		bar[i] = i < fill ? '#' : '-';
	bar[30] = '\0';
	fprintf(stderr, "\r[%s] %5.1f%% %8.1f MB %7.1f MB/s ETA %4.0fs", bar, frac * 100, mb, rate,
		eta);
	fflush(stderr);
	return 0;
}

static int usage(void)
{
	fprintf(stderr, "usage: nz_write_raw IN OUT --channels N --chunks R,C [--dtype <i2] "
			"[--header BYTES] [--compressor blosc] [--cname lz4] [--clevel 5] "
			"[--shuffle 1] [-j N] [--buffer-size MiB] [--task-chunks R,C] [--zarr-format 2|3] "
			"[--shards R,C] [--quiet] [--json]\n");
	return 2;
}

int main(int argc, char **argv)
{
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
	nz_compressor comp = NZ_COMPRESSOR_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_write_stats stats;
	nz_source *src = NULL;
	nz_store *st = NULL;
	nz_array *arr = NULL;
	uint64_t chunks[2] = {0, 0}, task[2] = {0, 0}, shards[2] = {0, 0};
	int quiet = 0, json = 0, err = 0, zarr_format = 0, i;
	const char *in, *out;

	if (argc < 3)
		return usage();
	in = argv[1];
	out = argv[2];
	for (i = 3; i < argc; i++) {
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--quiet")) {
			quiet = 1;
			continue;
		}
		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		if (!v)
			return usage();
		i++;
		if (!strcmp(a, "--channels"))
			ro.nchannels = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--dtype"))
			ro.dtype = v;
		else if (!strcmp(a, "--header"))
			ro.header_offset = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--chunks")) {
			if (sscanf(v, "%" SCNu64 ",%" SCNu64, &chunks[0], &chunks[1]) != 2)
				return usage();
		} else if (!strcmp(a, "--task-chunks")) {
			if (sscanf(v, "%" SCNu64 ",%" SCNu64, &task[0], &task[1]) != 2)
				return usage();
			wo.task_chunks = task;
		} else if (!strcmp(a, "--shards")) {
			if (sscanf(v, "%" SCNu64 ",%" SCNu64, &shards[0], &shards[1]) != 2)
				return usage();
		} else if (!strcmp(a, "--zarr-format"))
			zarr_format = atoi(v);
		else if (!strcmp(a, "--compressor"))
			comp.id = v;
		else if (!strcmp(a, "--cname"))
			comp.cname = v;
		else if (!strcmp(a, "--clevel"))
			comp.clevel = atoi(v);
		else if (!strcmp(a, "--shuffle"))
			comp.shuffle = atoi(v);
		else if (!strcmp(a, "-j") || !strcmp(a, "--jobs"))
			wo.jobs = atoi(v);
		else if (!strcmp(a, "--buffer-size"))
			wo.buffer_size = (size_t)strtoull(v, NULL, 10) << 20;
		else
			return usage();
	}
	if (!chunks[0] || !chunks[1])
		return usage();
	signal(SIGINT, on_sigint);
	wo.cancel_flag = &interrupted;
	wo.stats = &stats;
	if (!quiet && !json && isatty(STDERR_FILENO))
		wo.progress = show_progress;
	if ((err = nz_source_open_raw(&src, in, &ro)) < 0)
		goto done;
	if ((err = nz_store_open_dir(&st, out, NZ_STORE_CREATE)) < 0)
		goto done;
	ao.dtype = ro.dtype;
	ao.ndim = 2;
	ao.shape = nz_source_shape(src);
	ao.chunks = chunks;
	ao.compressor = &comp;
	ao.zarr_format = zarr_format;
	ao.shards = shards[0] ? shards : NULL;
	if ((err = nz_array_create(&arr, st, "data", &ao)) < 0)
		goto done;
	err = nz_write_array(arr, src, &wo);
	if (wo.progress)
		fprintf(stderr, "\n");
	if (json)
		printf("{\"input\": \"%s\", \"ok\": %s, \"bytes\": %" PRIu64 ", \"chunks\": %" PRIu64
		       ", \"jobs\": %d, \"task_chunks\": [%" PRIu64 ", %" PRIu64 "], \"seconds\": %.3f, "
		       "\"mb_per_s\": %.1f}\n", in, err ? "false" : "true", stats.bytes, stats.chunks,
		       stats.jobs, stats.task_chunks[0], stats.task_chunks[1], stats.elapsed_s,
		       stats.elapsed_s > 0 ? stats.bytes / 1e6 / stats.elapsed_s : 0.0);
done:
	if (err < 0)
		fprintf(stderr, "nz_write_raw: %s\n", nz_error_last()->message);
	nz_array_free(arr);
	nz_store_free(st);
	nz_source_free(src);
	return err == NZ_ECANCELED ? 130 : err == NZ_EUNSUPPORTED ? 3 : err < 0 ? 1 : 0;
}
