/* The library side of multi-process writes (docs/mpi.md), in one process:
 * metadata with skip_series_data + skip_finalise, the data written as
 * separate parts with different jobs (as ranks would), nz_nwb_finalise;
 * the result must be byte-identical to an ordinary write. Also: resume of
 * a part keeps whole chunks, and errors name the file and array. Zarr v2
 * (chunk by chunk) and v3 (whole shards) alike. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test.h"

#define FRAMES 10000
#define CHANNELS 6
#define ARRAY "acquisition/ElectricalSeries/data"

static int16_t data[FRAMES * CHANNELS];
static char ref[1024], par[1024];

static int exists(const char *dir, const char *rel)
{
	char p[2200];
	snprintf(p, sizeof p, "%s/%s", dir, rel);
	return access(p, F_OK) == 0;
}

static int same_tree(void)
{
	char cmd[2200];
	snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' >/dev/null", ref, par);
	return system(cmd) == 0;
}

/* 1 if the root zarr.json of `dir` holds consolidated metadata. */
static int consolidated3(const char *dir)
{
	char cmd[2200];
	snprintf(cmd, sizeof cmd, "grep -q consolidated_metadata '%s/zarr.json'", dir);
	return system(cmd) == 0;
}

static int consolidated2(const char *dir)
{
	return exists(dir, ".zmetadata");
}

/* The data of `par` as three parts written with jobs 1, 2 and 3 (as ranks
 * would); the file stays unconsolidated until nz_nwb_finalise. */
static void write_parts(nz_write_opts *wo, nz_source *src, int (*consolidated)(const char *))
{
	wo->nparts = 3;
	for (int k = 0; k < 3; k++) {
		wo->part = (uint64_t)k;
		wo->jobs = k + 1;
		ASSERT_OK(nz_nwb_write_series_part(par, ARRAY, src, wo, 0, 0, NULL));
		ASSERT(!consolidated(par));
	}
	ASSERT_OK(nz_nwb_finalise(par));
	ASSERT(consolidated(par) && !exists(par, NZ_INCOMPLETE_MARKER));
	ASSERT(same_tree());
}

/* Metadata and (unless skip) data of one ElectricalSeries file. */
static void write_file(const char *path, nz_source *src, int skip, int zarr_format)
{
	static const uint64_t chunks[2] = {700, 4}; /* a 15 x 2 chunk grid */
	static const uint64_t shards[2] = {1400, 8}; /* v3: 8 shards of 2 x 2 chunks */
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb *f = NULL;
	o.identifier = "parts";
	o.session_description = "parts test";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.file_create_date = "2024-01-02T03:04:05Z";
	o.object_id_seed = 5;
	o.jobs = 2;
	o.skip_series_data = o.skip_finalise = skip;
	o.zarr_format = zarr_format;
	ASSERT_OK(nz_nwb_create(&f, path, &o));
	ASSERT_OK(nz_nwb_add_device(f, "probe", "a probe", NULL));
	ASSERT_OK(nz_nwb_add_electrode_group(f, "g", "group", "CA1", "probe"));
	e.group = "g";
	ASSERT_OK(nz_nwb_add_electrodes(f, &e, CHANNELS, 1));
	so.name = "ElectricalSeries";
	so.rate = 30000;
	so.chunks = chunks;
	so.shards = shards;
	ASSERT_OK(nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_OK(nz_nwb_close(f));
	nz_nwb_free(f);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	const uint64_t shape[2] = {FRAMES, CHANNELS}, tc[2] = {1, 2};
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_nwb_resume_info info;
	nz_source *src = NULL, *wrong = NULL;
	char cmd[2200], chunk[1200];
	FILE *fp;

	for (size_t i = 0; i < FRAMES * CHANNELS; i++)
		data[i] = (int16_t)((i * 7919) % 4001 - 2000);
	snprintf(ref, sizeof ref, "%s/mpi_parts_ref", tmp ? tmp : "/tmp");
	snprintf(par, sizeof par, "%s/mpi_parts", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", ref, par);
	ASSERT(system(cmd) == 0);
	ASSERT_OK(nz_source_from_memory(&src, data, "<i2", 2, shape));
	write_file(ref, src, 0, 2);

	/* Metadata only: the array exists without chunks; incomplete. */
	write_file(par, src, 1, 2);
	ASSERT(exists(par, ARRAY "/.zarray") && !exists(par, ARRAY "/0.0"));
	ASSERT(!exists(par, ".zmetadata") && exists(par, NZ_INCOMPLETE_MARKER));

	/* Three parts with different jobs and the same task shape. */
	wo.task_chunks = tc;
	write_parts(&wo, src, consolidated2);

	/* Resume of a part: a missing and a corrupt chunk are written again,
	 * the 28 others kept. */
	snprintf(chunk, sizeof chunk, "%s/" ARRAY "/3.1", par);
	ASSERT(unlink(chunk) == 0);
	snprintf(chunk, sizeof chunk, "%s/" ARRAY "/5.0", par);
	ASSERT((fp = fopen(chunk, "wb")) != NULL);
	fputs("not a chunk", fp);
	fclose(fp);
	ASSERT(!same_tree());
	wo.part = 0;
	wo.nparts = 1;
	ASSERT_OK(nz_nwb_write_series_part(par, ARRAY, src, &wo, 1, 0, &info));
	ASSERT_EQ_U64(info.chunks_kept, 28);
	ASSERT_EQ_U64(info.chunks_written, 1);
	ASSERT_EQ_U64(info.chunks_repaired, 1);
	ASSERT(same_tree());

	/* Errors name the file and the array. */
	ASSERT(nz_nwb_write_series_part(par, "acquisition/nope/data", src, &wo, 0, 0, NULL) < 0);
	ASSERT_CONTAINS(nz_error_last()->message, "acquisition/nope/data");
	ASSERT_CONTAINS(nz_error_last()->message, par);
	ASSERT(nz_nwb_write_series_part("/nonexistent/x.zarr", ARRAY, src, &wo, 0, 0, NULL) < 0);
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/x.zarr");
	ASSERT_OK(nz_source_from_memory(&wrong, data, "<i2", 2, (const uint64_t[]){FRAMES, 5}));
	ASSERT_ERR(NZ_EMISMATCH, nz_nwb_write_series_part(par, ARRAY, wrong, &wo, 0, 0, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, ARRAY);
	ASSERT_ERR(NZ_EINVAL, nz_nwb_write_series_part(par, ARRAY, NULL, &wo, 0, 0, NULL));
	ASSERT(nz_nwb_finalise("/nonexistent/x.zarr") < 0);
	ASSERT_CONTAINS(nz_error_last()->message, "/nonexistent/x.zarr");

	/* Zarr v3: parts own whole shards; the same bytes as one write. */
	snprintf(ref, sizeof ref, "%s/mpi_parts3_ref", tmp ? tmp : "/tmp");
	snprintf(par, sizeof par, "%s/mpi_parts3", tmp ? tmp : "/tmp");
	snprintf(cmd, sizeof cmd, "rm -rf '%s' '%s'", ref, par);
	ASSERT(system(cmd) == 0);
	write_file(ref, src, 0, 3);
	write_file(par, src, 1, 3);
	ASSERT(exists(par, ARRAY "/zarr.json") && !exists(par, ARRAY "/c"));
	ASSERT(!consolidated3(par) && exists(par, NZ_INCOMPLETE_MARKER));
	wo.task_chunks = NULL;
	write_parts(&wo, src, consolidated3);
	/* a missing shard is written again on resume, the 7 others kept */
	snprintf(chunk, sizeof chunk, "%s/" ARRAY "/c/3/0", par);
	ASSERT(unlink(chunk) == 0);
	wo.part = 0;
	wo.nparts = 1;
	ASSERT_OK(nz_nwb_write_series_part(par, ARRAY, src, &wo, 1, 0, &info));
	ASSERT_EQ_U64(info.chunks_kept, 7);
	ASSERT_EQ_U64(info.chunks_written, 1);
	ASSERT(same_tree());

	nz_source_free(wrong);
	nz_source_free(src);
	puts("ok");
	return 0;
}
