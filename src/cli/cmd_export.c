/* nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME]
 *                [--chunks keep|auto] [--zarr-format 2|3] [--shards R,C]
 *                [--overwrite] [--hdf5-decode] [--stats] */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_export.h"
#include "cli_mpi.h"
#include "nwbzarr.h"
#include "nwbzarr/export.h"

static const char usage_text[] =
	"usage: nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME]\n"
	"                      [--chunks keep|auto] [--zarr-format 2|3] [--shards R,C]\n"
	"                      [--overwrite | --resume] [--fsync] [--hdf5-decode] [--stats]\n"
	"  -j, --jobs N        worker threads (default: one per core)\n"
	"  --compressor NAME   blosc-lz4 (default), blosc-zstd, zstd, lz4, zlib, gzip, none\n"
	"  --chunks keep|auto  keep the HDF5 chunk shapes (default) or use ~4 MiB chunks\n"
	"  --zarr-format 2|3   Zarr format of the output (default 2; 3 is not available yet)\n"
	"  --shards R,C        Zarr v3 shard shape of 2-D datasets, a multiple of their\n"
	"                      chunks (default: all columns x ~256 MiB of rows)\n"
	"  --overwrite         replace an existing Zarr store at OUT\n"
	"  --resume            finish an interrupted export of IN into OUT (same options)\n"
	"  --fsync             fsync every file and directory (durable on power loss)\n"
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

/* Under mpirun (docs/mpi.md): rank 0 exports the metadata, every rank its
 * part of the large datasets' chunks, rank 0 finalises. */
struct export_job {
	const char *in, *out;
	nz_export_opts o;
};

static int export_part(void *ctx, uint64_t part, uint64_t nparts)
{
	struct export_job *j = ctx;
	nz_export_opts o = j->o;
	o.phase = NZ_EXPORT_DATA;
	o.part = part;
	o.nparts = nparts;
	return nz_export_hdf5(j->in, j->out, &o);
}

static int export_ranks(struct export_job *j)
{
	int st = nzc_mpi_test_fail("open"), rc = 1;
	if (st == 0 && access(j->in, R_OK) != 0) {
		fprintf(stderr, "nwbzarr: %scannot read '%s': %s\n", nzc_mpi_tag(), j->in,
			strerror(errno));
		st = -1;
	}
	if (nzc_mpi_agree(st, "open") < 0)
		goto done;
	if (nzc_mpi_rank() == 0) {
		nz_export_opts o = j->o;
		o.phase = NZ_EXPORT_METADATA;
		st = nz_export_hdf5(j->in, j->out, &o) < 0 ? -nzc_fail() : 0;
	}
	if (nzc_mpi_finish(j->out, st, export_part, j) < 0) {
		if (nzc_mpi_rank() == 0)
			fprintf(stderr, "nwbzarr: %s'%s' is incomplete; rerun the export with "
				"--overwrite\n", nzc_mpi_tag(), j->out);
		goto done;
	}
	rc = 0;
done:
	nzc_mpi_leave(NZC_MPI_PHASES);
	return rc;
}

int nz_cli_export(int argc, char **argv)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	nz_compressor comp;
	const char *in = NULL, *out = NULL;
	uint64_t shards[2];
	int i, stats = 0, zarr_format = 0, have_shards = 0;
	char err[256];

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
		} else if (strcmp(a, "--zarr-format") == 0) {
			if (++i >= argc || (strcmp(argv[i], "2") != 0 && strcmp(argv[i], "3") != 0))
				return bad_usage("--zarr-format needs 2 or 3, not '%s'",
						 i < argc ? argv[i] : "");
			zarr_format = argv[i][0] - '0';
		} else if (strcmp(a, "--shards") == 0) {
			if (++i >= argc || nzc_parse_pair(shards, argv[i]) < 0)
				return bad_usage("--shards needs ROWS,COLS (positive), not '%s'",
						 i < argc ? argv[i] : "");
			have_shards = 1;
		} else if (strcmp(a, "--overwrite") == 0) {
			o.overwrite = 1;
		} else if (strcmp(a, "--resume") == 0) {
			o.resume = 1;
		} else if (strcmp(a, "--fsync") == 0) {
			o.fsync = 1;
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
	if (nzc_check_format(zarr_format, have_shards ? shards : NULL, NULL, err, sizeof err) < 0)
		return bad_usage("%s", err);
	if (o.resume && o.overwrite)
		return bad_usage("%s", "--resume and --overwrite exclude each other");
	o.stats = &st;
	if (nzc_mpi_init() < 0)
		return 1;
	if (nzc_mpi_size() > 1) { /* --stats: per process, not printed */
		struct export_job j = { in, out, o };
		int rc = export_ranks(&j);
		nzc_mpi_finalize();
		return rc;
	}
	if (nz_export_hdf5(in, out, &o) < 0) {
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		return 1;
	}
	if (o.resume)
		fprintf(stderr, "nwbzarr: resumed '%s': %llu chunks kept, %llu corrupt rewritten, "
			"%llu temporary files removed\n", out, (unsigned long long)st.chunks_kept,
			(unsigned long long)st.chunks_repaired, (unsigned long long)st.temp_removed);
	if (stats)
		printf("{\"groups\": %llu, \"datasets\": %llu, \"links\": %llu, \"attributes\": %llu, "
		       "\"bytes\": %llu, \"raw_chunks\": %llu, \"hdf5_reads\": %llu, \"seconds\": %.3f}\n",
		       (unsigned long long)st.groups, (unsigned long long)st.datasets,
		       (unsigned long long)st.links, (unsigned long long)st.attributes,
		       (unsigned long long)st.bytes, (unsigned long long)st.raw_chunks,
		       (unsigned long long)st.hdf5_reads, st.elapsed_s);
	return 0;
}
