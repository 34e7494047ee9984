/* nwbzarr upgrade OLD.nwb.zarr NEW.nwb.zarr [-j N] [--compressor NAME]
 *                 [--chunks R,C] [--shards R,C] [--overwrite] [--fsync]
 *                 [--no-verify] [--quiet] [--json] */
#define _XOPEN_SOURCE 700 /* access() under -std=c11 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_export.h"
#include "nwbzarr.h"
#include "nwbzarr/upgrade.h"

static const char usage_text[] =
	"usage: nwbzarr upgrade OLD.nwb.zarr NEW.nwb.zarr [-j N] [--compressor NAME]\n"
	"                       [--chunks R,C] [--shards R,C] [--overwrite] [--fsync]\n"
	"                       [--no-verify] [--quiet] [--json]\n"
	"  Rewrite a Zarr v2 NWB file (hdmf-zarr <= 0.13's layout, or ours written\n"
	"  with --zarr-format 2) as Zarr v3 in hdmf-zarr 0.14's layout, in parallel,\n"
	"  then verify it against OLD. Chunks keep their grid; where the v2 codec\n"
	"  carries over (blosc, zstd, gzip, no filters) each chunk moves as its stored\n"
	"  bytes.\n"
	"  OLD is checked whole (metadata, every chunk present, object arrays\n"
	"  decoded) before NEW is created. NEW may also be given as -o NEW.\n"
	"\n"
	"  -j, --jobs N        worker threads, 0..256 (default 0: one per core)\n"
	"  --compressor NAME   re-encode every dataset with blosc-lz4, blosc-zstd, zstd,\n"
	"                      lz4, zlib, gzip or none (default: keep each dataset's\n"
	"                      codec where it carries over, else zstd level 0)\n"
	"  --chunks R,C        chunk shape of 2-D datasets (re-encodes; default: OLD's)\n"
	"  --shards R,C        shard shape of 2-D datasets, a multiple of their chunks\n"
	"                      (default: datasets over 64 MiB in shards of all columns\n"
	"                      x ~256 MiB of rows)\n"
	"  -o, --output NEW    the output (instead of the second argument)\n"
	"  --overwrite         replace an existing Zarr store at NEW (kept until the new\n"
	"                      one is complete and verified; given back on failure)\n"
	"  --fsync             fsync every file and directory (durable on power loss)\n"
	"  --no-verify         skip the closing comparison with OLD (for measuring)\n"
	"  -q, --quiet         no progress bar and no summary line\n"
	"  --json              print a JSON summary on stdout\n"
	"  -h, --help          this text\n"
	"\n"
	"exit status: 0 success, 1 failure, 2 usage error.\n";

static int bad_usage(const char *msg)
{
	fprintf(stderr, "nwbzarr upgrade: %s\n%s", msg, usage_text);
	return 2;
}

static void summary(const char *in, const char *out, const nz_upgrade_stats *st, int json)
{
	uint64_t stored = nzc_du(out, 0);
	if (json) {
		json_t *j = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:f, s:i}",
				      "input", in, "output", out, "groups", (json_int_t)st->groups,
				      "datasets", (json_int_t)st->datasets, "links", (json_int_t)st->links,
				      "attributes", (json_int_t)st->attributes, "bytes", (json_int_t)st->bytes,
				      "stored_bytes", (json_int_t)stored, "chunks_reused",
				      (json_int_t)st->chunks_reused, "chunks_recoded",
				      (json_int_t)st->chunks_recoded, "seconds", st->elapsed_s,
				      "verify_seconds", st->verify_s, "jobs", st->jobs);
		nzc_print_json(j);
		return;
	}
	printf("upgraded %s -> %s: %llu groups, %llu datasets, %.1f MB (%llu chunks reused, "
	       "%llu re-encoded) in %.2f s (verify %.2f s); stored %.1f MB\n", in, out,
	       (unsigned long long)st->groups, (unsigned long long)st->datasets, st->bytes / 1e6,
	       (unsigned long long)st->chunks_reused, (unsigned long long)st->chunks_recoded,
	       st->elapsed_s, st->verify_s, stored / 1e6);
}

/* After a failure: upgrade has no --resume, so an unfinished NEW is
 * replaced by running again with --overwrite. */
static void say_output_state(const char *out, int overwrite)
{
	char marker[4096];
	snprintf(marker, sizeof marker, "%s/%s", out, NZ_INCOMPLETE_MARKER);
	if (access(marker, F_OK) == 0)
		fprintf(stderr, "nwbzarr: '%s' is incomplete; replace it by running the upgrade again "
			"with --overwrite\n", out);
	else if (overwrite && access(out, F_OK) == 0)
		fprintf(stderr, "nwbzarr: '%s' was left as it was\n", out);
}

/* --chunks / --shards R,C */
static int take_pair(uint64_t *out, const char *flag, const char *v, char *err, size_t cap)
{
	if (nzc_parse_pair(out, v) == 0)
		return 0;
	snprintf(err, cap, "%s needs ROWS,COLS (positive), not '%s'", flag, v);
	return -1;
}

int nz_cli_upgrade(int argc, char **argv)
{
	nz_upgrade_opts o = NZ_UPGRADE_OPTS_INIT;
	nz_upgrade_stats st;
	nz_compressor comp;
	const char *in = NULL, *out = NULL, *v = NULL;
	uint64_t chunks[2], shards[2];
	char err[256];
	int i, json = 0, quiet = 0, rc;

	for (i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		/* Each value is checked as it comes (given twice, the last counts). */
		if ((rc = nzc_take_value(&v, argc, argv, &i, "--jobs", "-j", err, sizeof err))) {
			if (rc < 0 || nzc_parse_jobs(&o.jobs, v, err, sizeof err) < 0)
				return bad_usage(err);
		} else if ((rc = nzc_take_value(&v, argc, argv, &i, "--compressor", NULL, err, sizeof err))) {
			if (rc < 0 || !nzc_codec_choose(v, -1, err, sizeof err) ||
			    nzc_compressor_by_name(&comp, v, -1) < 0)
				return bad_usage(err);
			o.compressor = &comp;
		} else if ((rc = nzc_take_value(&v, argc, argv, &i, "--chunks", NULL, err, sizeof err))) {
			if (rc < 0 || take_pair(chunks, "--chunks", v, err, sizeof err) < 0)
				return bad_usage(err);
			o.chunks = chunks;
		} else if ((rc = nzc_take_value(&v, argc, argv, &i, "--shards", NULL, err, sizeof err))) {
			if (rc < 0 || take_pair(shards, "--shards", v, err, sizeof err) < 0)
				return bad_usage(err);
			o.shards = shards;
		} else if ((rc = nzc_take_value(&v, argc, argv, &i, "--output", "-o", err, sizeof err))) {
			if (rc < 0)
				return bad_usage(err);
			if (out) {
				snprintf(err, sizeof err, "the output is given twice ('%s' and '%s')", out, v);
				return bad_usage(err);
			}
			out = v;
		} else if (strcmp(a, "--overwrite") == 0) {
			o.overwrite = 1;
		} else if (strcmp(a, "--fsync") == 0) {
			o.fsync = 1;
		} else if (strcmp(a, "--no-verify") == 0) {
			o.no_verify = 1;
		} else if (strcmp(a, "--json") == 0) {
			json = 1;
		} else if (strcmp(a, "-q") == 0 || strcmp(a, "--quiet") == 0) {
			quiet = 1;
		} else if (nzc_take_operand(&in, &out, a, err, sizeof err) < 0) {
			return bad_usage(err);
		}
	}
	if (!in || !out || !*in || !*out)
		return bad_usage("OLD.nwb.zarr and NEW.nwb.zarr are required");
	if (json && nzc_json_paths(in, out) < 0)
		return 2;
	o.stats = &st;
	o.progress = nzc_progress_for(quiet, json);
	if (nz_upgrade(in, out, &o) < 0) {
		nzc_progress_end();
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		say_output_state(out, o.overwrite);
		return 1;
	}
	if (json || !quiet)
		summary(in, out, &st, json);
	return 0;
}
