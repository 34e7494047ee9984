/* nwbzarr verify SRC DST [-j N] [--max-diffs N] [--quiet] [--json] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "cli_export.h"
#include "nwbzarr.h"
#include "nwbzarr/export.h"

static const char usage_text[] =
	"usage: nwbzarr verify SRC DST [-j N] [--max-diffs N] [--quiet] [--json]\n"
	"  Compare two NWB files (HDF5 .nwb or Zarr v2/v3 directory): every group, dataset\n"
	"  value, attribute, link and reference target. Prints each difference.\n"
	"  Files of different nwb_version differ once there; their cached schemas\n"
	"  (/specifications) are then not compared.\n"
	"\n"
	"  -j, --jobs N        threads comparing chunks, 0..256 (default 0: one per core)\n"
	"  --max-diffs N       stop reporting after N differences (default 1000)\n"
	"  -q, --quiet         no progress bar and no final \"ok\" line\n"
	"  --json              each difference and a final summary as JSON lines\n"
	"  -h, --help          this text\n"
	"\n"
	"exit status: 0 the files match, 1 they differ or cannot be read, 2 usage error.\n";

/* A JSON string. Text that is not UTF-8 (a value read from a file) has
 * its non-ASCII bytes written as \u00XX, so the line stays valid JSON. */
static void json_text(const char *s)
{
	int raw = nz_text_check(s, "text") == 0;
	putchar('"');
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			printf("\\%c", c);
		else if (c < 0x20 || (c >= 0x80 && !raw))
			printf("\\u%04x", c);
		else
			putchar(c);
	}
	putchar('"');
}

static void print_diff(const char *path, const char *what, void *ctx)
{
	if (!*(const int *)ctx) {
		printf("%s: %s\n", path, what);
		return;
	}
	printf("{\"kind\": \"difference\", \"path\": ");
	json_text(path);
	printf(", \"what\": ");
	json_text(what);
	printf("}\n");
}

static int bad_usage(const char *msg)
{
	fprintf(stderr, "nwbzarr verify: %s\n%s", msg, usage_text);
	return 2;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int nz_cli_verify(int argc, char **argv)
{
	nz_verify_opts o = NZ_VERIFY_OPTS_INIT;
	const char *a = NULL, *b = NULL, *jobs = NULL, *maxd = NULL;
	char err[256];
	uint64_t ndiff = 0;
	int i, rc, json = 0, quiet = 0;
	double t0;

	for (i = 1; i < argc; i++) {
		const char *s = argv[i];
		if (strcmp(s, "-h") == 0 || strcmp(s, "--help") == 0) {
			fputs(usage_text, stdout);
			return 0;
		}
		/* Each value is checked as it comes (given twice, the last counts). */
		if ((rc = nzc_take_value(&jobs, argc, argv, &i, "--jobs", "-j", err, sizeof err))) {
			if (rc < 0 || nzc_parse_jobs(&o.jobs, jobs, err, sizeof err) < 0)
				return bad_usage(err);
		} else if ((rc = nzc_take_value(&maxd, argc, argv, &i, "--max-diffs", NULL, err,
						sizeof err))) {
			if (rc < 0 || nzc_parse_count(&o.max_diffs, maxd, 1, "--max-diffs", err,
						      sizeof err) < 0)
				return bad_usage(err);
		} else if (strcmp(s, "--json") == 0) {
			json = 1;
		} else if (strcmp(s, "-q") == 0 || strcmp(s, "--quiet") == 0) {
			quiet = 1;
		} else if (nzc_take_operand(&a, &b, s, err, sizeof err) < 0) {
			return bad_usage(err);
		}
	}
	if (!a || !b || !*a || !*b)
		return bad_usage("SRC and DST are required");
	if (json && nzc_json_paths(a, b) < 0)
		return 2;
	o.report = print_diff;
	o.report_ctx = &json;
	o.progress = nzc_progress_for(quiet, json);
	t0 = now_s();
	rc = nz_verify(&ndiff, a, b, &o);
	nzc_progress_end();
	if (json) {
		printf("{\"kind\": \"summary\", \"a\": ");
		json_text(a);
		printf(", \"b\": ");
		json_text(b);
		printf(", \"match\": %s, \"differences\": %llu, \"seconds\": %.3f, \"error\": ",
		       rc == 0 ? "true" : "false", (unsigned long long)ndiff, now_s() - t0);
		if (rc < 0 && rc != NZ_EMISMATCH)
			json_text(nz_error_last()->message);
		else
			printf("null");
		printf("}\n");
	}
	fflush(stdout);
	if (rc < 0) {
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		return 1;
	}
	if (!quiet && !json)
		printf("ok: '%s' and '%s' match\n", a, b);
	return 0;
}
