/* Fuzz target: the `nwbzarr` argument parser (src/cli/args.c, a pure
 * function of argv; linked in from the nwbzarr-cliargs library).
 *
 * Input: the arguments after the program name, separated by NUL bytes (at
 * most MAX_ARGS). Properties: never crashes; returns 0 or -1; -1 leaves a
 * non-empty message; on success every string field is NULL or points into one
 * of the arguments, a convert/info that is not --help has its operands, and
 * the numeric fields respect their documented ranges. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "args.h"
#include "fuzz_common.h"

#define MAX_ARGS 64

static int points_into(const char *p, char *const *argv, int argc)
{
	if (!p)
		return 1;
	for (int i = 1; i < argc; i++)
		if (p >= argv[i] && p <= argv[i] + strlen(argv[i]))
			return 1;
	return 0;
}

static void check_args(const nzc_args *a, char *const *argv, int argc)
{
	const char *strs[] = {a->input, a->output, a->meta, a->spec_from, a->dtype, a->compressor,
			      a->identifier, a->session_description, a->session_start_time,
			      a->create_date, a->experimenter, a->lab, a->institution,
			      a->subject_id, a->species, a->sex, a->age, a->location};
	for (size_t i = 0; i < sizeof strs / sizeof *strs; i++)
		CHECK(points_into(strs[i], argv, argc));
	CHECK(nzc_usage(a->cmd) != NULL);
	if ((a->cmd == NZC_CONVERT || a->cmd == NZC_INFO) && !a->help)
		CHECK(a->input && (a->cmd == NZC_INFO || a->output));
	CHECK(a->jobs >= 0 && a->jobs <= 4096);
	CHECK(a->clevel >= -1 && a->clevel <= 22);
	CHECK(!a->have_chunks || (a->chunks[0] >= 1 && a->chunks[1] >= 1));
	/* Shards only with Zarr v3 (convert's default), as multiples of the chunks. */
	CHECK(a->zarr_format == 0 || a->zarr_format == 2 || a->zarr_format == 3);
	CHECK(!a->have_shards || (a->zarr_format != 2 && a->shards[0] >= 1 && a->shards[1] >= 1));
	CHECK(!a->have_shards || !a->have_chunks ||
	      (a->shards[0] % a->chunks[0] == 0 && a->shards[1] % a->chunks[1] == 0));
	CHECK(a->rate == 0 || a->rate > 0);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2], err[256];
	int argc = 1, rc;
	nzc_args a;
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "nwbzarr";
	for (char *p = copy; argc <= MAX_ARGS;) {
		argv[argc++] = p;
		p += strlen(p) + 1;
		if (p > copy + size)
			break;
	}
	argv[argc] = NULL;
	rc = nzc_parse_args(&a, argc, argv, err, sizeof err);
	if (rc != 0) {
		CHECK(rc == -1);
		/* Not "no newline": the message quotes argv, which may hold any byte. */
		CHECK(err[0] != '\0');
	} else {
		check_args(&a, argv, argc);
	}
	/* A tiny message buffer must truncate, not overflow. */
	nzc_parse_args(&a, argc, argv, err, 1);
	CHECK(err[0] == '\0');
	free(copy);
	return 0;
}
