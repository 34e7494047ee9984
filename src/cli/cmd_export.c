/* nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME|keep [--clevel L]]
 *                [--chunks keep|auto] [--zarr-format 2|3] [--shards R,C]
 *                [--copy-links] [--overwrite | --resume] [--fsync] [--hdf5-decode]
 *                [--quiet] [--json] */
#include <errno.h>
#include <jansson.h>
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
	"usage: nwbzarr export IN.nwb OUT.nwb.zarr [-j N] [--compressor NAME|keep [--clevel L]]\n"
	"                      [--chunks keep|auto] [--zarr-format 2|3] [--shards R,C]\n"
	"                      [--copy-links] [--overwrite | --resume] [--fsync]\n"
	"                      [--hdf5-decode] [--quiet] [--json]\n"
	"  -j, --jobs N        worker threads, 0..256 (default 0: one per core)\n"
	"  --compressor NAME   blosc-lz4, blosc-zstd, zstd, lz4, zlib, gzip, none (default:\n"
	"                      zstd level 0 for v3, as hdmf-zarr 0.14; blosc-lz4 for v2),\n"
	"                      or keep: each dataset's HDF5 filters as Zarr codecs (shuffle,\n"
	"                      zlib at the file's level), as hdmf-zarr 0.14's export; its\n"
	"                      chunks then move as HDF5 stored them. Datasets without\n"
	"                      filters, or with one Zarr lacks (szip, ...; noted), get\n"
	"                      the default\n"
	"  --clevel L          the compressor's level (blosc-* 0..9, default 5; zstd 1..22,\n"
	"                      default 1; zlib, gzip 0..9, default 1)\n"
	"  --chunks keep|auto  keep the HDF5 chunk shapes (default) or use ~4 MiB chunks\n"
	"  --zarr-format 2|3   3 (default): hdmf-zarr 0.14's layout; 2: hdmf-zarr <= 0.13's\n"
	"  --shards R,C        Zarr v3 shard shape of 2-D datasets, a multiple of their\n"
	"                      chunks (default: datasets over 64 MiB in shards of all\n"
	"                      columns x ~256 MiB of rows)\n"
	"  --copy-links        copy what HDF5 external links lead to into OUT (one\n"
	"                      self-contained store) instead of exporting the linked files\n"
	"  --overwrite         replace an existing Zarr store at OUT (kept until the new\n"
	"                      one is complete; given back if the export fails)\n"
	"  --resume            finish an interrupted export of IN into OUT (same options)\n"
	"  --fsync             fsync every file and directory (durable on power loss)\n"
	"  --hdf5-decode       let libhdf5 decode every chunk (slower; for comparison)\n"
	"  -q, --quiet         no progress bar and no summary line\n"
	"  --json              print a JSON summary on stdout (also --stats, its old name)\n"
	"  -h, --help          this text\n"
	"\n"
	"A file an HDF5 external link leads into is exported too, beside OUT as\n"
	"<its name>.zarr, and the link names that store (\"../<name>.zarr\"); with\n"
	"--copy-links the linked groups and datasets are copied in (once each: a second\n"
	"link to one becomes a link to the copy) and no other store is written.\n"
	"\n"
	"exit status: 0 success, 1 failure, 2 usage error.\n";

/* --compressor keep: a dataset given the default codec instead. */
static void note(const char *path, const char *what, void *ctx)
{
	(void)ctx;
	fprintf(stderr, "nwbzarr: note: '%s': %s\n", path, what);
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "nwbzarr export: %s\n%s", msg, usage_text);
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

static void summary(const char *in, const char *out, const nz_export_stats *st, int json)
{
	double mbps = st->elapsed_s > 0 ? st->bytes / 1e6 / st->elapsed_s : 0;
	uint64_t stored = nzc_du(out, 0);
	if (json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:i}",
				      "input", in, "output", out, "groups", (json_int_t)st->groups,
				      "datasets", (json_int_t)st->datasets, "links",
				      (json_int_t)st->links, "attributes", (json_int_t)st->attributes,
				      "bytes", (json_int_t)st->bytes, "stored_bytes",
				      (json_int_t)stored, "raw_chunks", (json_int_t)st->raw_chunks,
				      "hdf5_reads", (json_int_t)st->hdf5_reads, "stored_chunks",
				      (json_int_t)st->stored_chunks, "seconds",
				      st->elapsed_s, "mb_per_s", mbps, "jobs", st->jobs);
		nzc_print_json(j);
		return;
	}
	printf("wrote %s: %llu groups, %llu datasets, %.1f MB in %.2f s = %.1f MB/s; "
	       "stored %.1f MB\n", out, (unsigned long long)st->groups,
	       (unsigned long long)st->datasets, st->bytes / 1e6, st->elapsed_s, mbps,
	       stored / 1e6);
}

int nz_cli_export(int argc, char **argv)
{
	nz_export_opts o = NZ_EXPORT_OPTS_INIT;
	nz_export_stats st;
	nz_compressor comp;
	const char *in = NULL, *out = NULL, *jobs = NULL, *compressor = NULL, *chunks = NULL;
	const char *format = NULL, *shard_text = NULL, *clevel_text = NULL;
	uint64_t shards[2], clevel = 0;
	char err[256];
	int i, json = 0, quiet = 0, rc, zarr_format = 0, have_shards = 0;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		/* Each value is checked as it comes (given twice, the last counts). */
		if ((rc = nzc_take_value(&jobs, argc, argv, &i, "--jobs", "-j", err, sizeof err))) {
			if (rc < 0 || nzc_parse_jobs(&o.jobs, jobs, err, sizeof err) < 0)
				return bad_usage(err);
		} else if ((rc = nzc_take_value(&compressor, argc, argv, &i, "--compressor", NULL,
						err, sizeof err))) {
			if (rc < 0 || (strcmp(compressor, "keep") != 0 &&
				       !nzc_codec_choose(compressor, -1, err, sizeof err)))
				return bad_usage(err);
		} else if ((rc = nzc_take_value(&clevel_text, argc, argv, &i, "--clevel", NULL, err,
						sizeof err))) {
			if (rc < 0 || nzc_parse_count(&clevel, clevel_text, 0, "--clevel", err, sizeof err) < 0)
				return bad_usage(err);
		} else if ((rc = nzc_take_value(&chunks, argc, argv, &i, "--chunks", NULL, err,
						sizeof err))) {
			if (rc < 0)
				return bad_usage(err);
			if (strcmp(chunks, "keep") != 0 && strcmp(chunks, "auto") != 0) {
				snprintf(err, sizeof err, "--chunks must be keep or auto, not '%s'",
					 chunks);
				return bad_usage(err);
			}
			o.chunks = chunks[0] == 'k' ? NZ_EXPORT_CHUNKS_KEEP : NZ_EXPORT_CHUNKS_AUTO;
		} else if ((rc = nzc_take_value(&format, argc, argv, &i, "--zarr-format", NULL, err,
						sizeof err))) {
			if (rc < 0)
				return bad_usage(err);
			if (strcmp(format, "2") != 0 && strcmp(format, "3") != 0) {
				snprintf(err, sizeof err, "--zarr-format needs 2 or 3, not '%s'", format);
				return bad_usage(err);
			}
			zarr_format = format[0] - '0';
		} else if ((rc = nzc_take_value(&shard_text, argc, argv, &i, "--shards", NULL, err,
						sizeof err))) {
			if (rc < 0)
				return bad_usage(err);
			if (nzc_parse_pair(shards, shard_text) < 0) {
				snprintf(err, sizeof err, "--shards needs ROWS,COLS (positive), not '%s'",
					 shard_text);
				return bad_usage(err);
			}
			have_shards = 1;
		} else if (strcmp(a, "--copy-links") == 0) {
			o.copy_links = 1;
		} else if (strcmp(a, "--overwrite") == 0) {
			o.overwrite = 1;
		} else if (strcmp(a, "--resume") == 0) {
			o.resume = 1;
		} else if (strcmp(a, "--fsync") == 0) {
			o.fsync = 1;
		} else if (strcmp(a, "--hdf5-decode") == 0) {
			o.hdf5_decode = 1;
		} else if (strcmp(a, "--json") == 0 || strcmp(a, "--stats") == 0) {
			json = 1;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = 1;
		} else if (nzc_take_operand(&in, &out, a, err, sizeof err) < 0) {
			return bad_usage(err);
		}
	}
	if (!in || !out || !*in || !*out)
		return bad_usage("IN.nwb and OUT.nwb.zarr are required");
	if (have_shards && zarr_format == 2)
		return bad_usage("--shards needs Zarr v3, not --zarr-format 2 (Zarr v2 has no shards)");
	o.zarr_format = zarr_format;
	o.shards = have_shards ? shards : NULL;
	if (o.resume && o.overwrite)
		return bad_usage("--resume and --overwrite exclude each other");
	if (clevel_text && !compressor)
		return bad_usage("--clevel needs --compressor (the default codec's level is fixed)");
	if (compressor && strcmp(compressor, "keep") == 0) {
		if (clevel_text)
			return bad_usage("--clevel does not apply to --compressor keep (the levels are "
					 "the HDF5 file's)");
		o.keep_filters = 1;
		o.note = note;
		compressor = NULL;
	}
	if (clevel_text && !nzc_codec_choose(compressor, clevel > 999 ? 999 : (int)clevel, err, sizeof err))
		return bad_usage(err);
	if (compressor && nzc_compressor_by_name(&comp, compressor, clevel_text ? (int)clevel : -1) == 0)
		o.compressor = &comp;
	if (json && nzc_json_paths(in, out) < 0)
		return 2;
	o.stats = &st;
	if (nzc_mpi_init() < 0)
		return 1;
	if (nzc_mpi_size() > 1) { /* --json: per process, not printed */
		struct export_job j = { in, out, o };
		int rc2 = export_ranks(&j);
		nzc_mpi_finalize();
		return rc2;
	}
	o.progress = nzc_progress_for(quiet, json);
	if (nz_export_hdf5(in, out, &o) < 0) {
		nzc_progress_end();
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		nzc_say_output_state(out, nz_error_last()->code, o.overwrite);
		return 1;
	}
	if (o.resume && !quiet)
		fprintf(stderr, "nwbzarr: resumed '%s': %llu chunks kept, %llu corrupt rewritten, "
			"%llu temporary files removed\n", out, (unsigned long long)st.chunks_kept,
			(unsigned long long)st.chunks_repaired, (unsigned long long)st.temp_removed);
	if (json || !quiet)
		summary(in, out, &st, json);
	return 0;
}
