/* nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME]
 *                [--chunks keep|auto] [--overwrite] [--hdf5-decode] [--stats] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_export.h"
#include "nwbzarr.h"
#include "nwbzarr/export.h"

static const char usage_text[] =
	"usage: nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME]\n"
	"                      [--chunks keep|auto] [--overwrite] [--hdf5-decode] [--stats]\n"
	"  -j, --jobs N        worker threads (default: one per core)\n"
	"  --compressor NAME   blosc-lz4 (default), blosc-zstd, zstd, lz4, zlib, gzip, none\n"
	"  --chunks keep|auto  keep the HDF5 chunk shapes (default) or use ~4 MiB chunks\n"
	"  --overwrite         replace an existing Zarr store at OUT\n"
	"  --hdf5-decode       let libhdf5 decode every chunk (slower; for comparison)\n"
	"  --stats             print a JSON line of statistics\n"
	"  -h, --help          this text\n";

static int bad_usage(const char *fmt, const char *arg)
{
	fprintf(stderr, "nwbzarr export: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "\n%s", usage_text);
	return 2;
}

int nz_cli_export(int argc, char **argv)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	nz_compressor comp;
	const char *in = NULL, *out = NULL;
	int i, stats = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		} else if (strcmp(a, "-j") == 0 || strcmp(a, "--jobs") == 0) {
			char *end;
			long j;
			if (++i >= argc)
				return bad_usage("%s needs a number", a);
			j = strtol(argv[i], &end, 10);
			if (*end || j < 0 || j > 4096)
				return bad_usage("bad job count '%s'", argv[i]);
			o.jobs = (int)j;
		} else if (strcmp(a, "--compressor") == 0) {
			if (++i >= argc)
				return bad_usage("%s needs a name", a);
			if (nzc_compressor_by_name(&comp, argv[i], -1) < 0)
				return bad_usage("unknown compressor '%s'", argv[i]);
			o.compressor = &comp;
		} else if (strcmp(a, "--chunks") == 0) {
			if (++i >= argc)
				return bad_usage("%s needs keep or auto", a);
			if (strcmp(argv[i], "keep") == 0)
				o.chunks = NZ_EXPORT_CHUNKS_KEEP;
			else if (strcmp(argv[i], "auto") == 0)
				o.chunks = NZ_EXPORT_CHUNKS_AUTO;
			else
				return bad_usage("--chunks must be keep or auto, not '%s'", argv[i]);
		} else if (strcmp(a, "--overwrite") == 0) {
			o.overwrite = 1;
		} else if (strcmp(a, "--hdf5-decode") == 0) {
			o.hdf5_decode = 1;
		} else if (strcmp(a, "--stats") == 0) {
			stats = 1;
		} else if (a[0] == '-' && a[1]) {
			return bad_usage("unknown option '%s'", a);
		} else if (!in) {
			in = a;
		} else if (!out) {
			out = a;
		} else {
			return bad_usage("unexpected argument '%s'", a);
		}
	}
	if (!in || !out)
		return bad_usage("%s", "IN.nwb and OUT.nwb.zarr are required");
	o.stats = &st;
	if (nz_export_hdf5(in, out, &o) < 0) {
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		return 1;
	}
	if (stats)
		printf("{\"groups\": %llu, \"datasets\": %llu, \"links\": %llu, \"attributes\": %llu, "
		       "\"bytes\": %llu, \"raw_chunks\": %llu, \"hdf5_reads\": %llu, \"seconds\": %.3f}\n",
		       (unsigned long long)st.groups, (unsigned long long)st.datasets,
		       (unsigned long long)st.links, (unsigned long long)st.attributes,
		       (unsigned long long)st.bytes, (unsigned long long)st.raw_chunks,
		       (unsigned long long)st.hdf5_reads, st.elapsed_s);
	return 0;
}
