/* The NWB builder API: what it writes beyond the reference file (subject,
 * channel_conversion, timestamps) and how it refuses bad calls. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char out[1024];

static int exists(const char *rel)
{
	char p[1200];
	snprintf(p, sizeof p, "%s/%s", out, rel);
	return access(p, F_OK) == 0;
}

static void base_opts(nz_nwb_opts *o)
{
	*o = (nz_nwb_opts)NZ_NWB_OPTS_INIT;
	o->identifier = "api-test";
	o->session_description = "api test";
	o->session_start_time = "2024-01-02T03:04:05Z";
	o->file_create_date = "2024-01-02T03:04:05.123+05:30";
	o->object_id_seed = 9;
	o->jobs = 2;
	o->zarr_format = 2; /* these tests look at Zarr v2 keys; test_v3 at v3's */
}

static void test_create_errors(void)
{
	nz_nwb_opts o;
	nz_nwb *f = NULL;
	char cmd[2200];
	base_opts(&o);
	o.identifier = NULL;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "identifier");
	base_opts(&o);
	o.session_start_time = "2024-01-02T03:04:05"; /* no time zone */
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "2024-01-02T03:04:05");
	ASSERT_CONTAINS(nz_error_last()->message, "time zone");
	base_opts(&o);
	o.timestamps_reference_time = "yesterday";
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "timestamps_reference_time");
	ASSERT(f == NULL && !exists(""));

	/* an existing non-Zarr directory is never replaced, even with overwrite */
	snprintf(cmd, sizeof cmd, "mkdir -p '%s' && touch '%s/precious'", out, out);
	ASSERT(system(cmd) == 0);
	base_opts(&o);
	ASSERT_ERR(NZ_EEXISTS, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, out);
	ASSERT_CONTAINS(nz_error_last()->message, "--overwrite");
	o.overwrite = 1;
	ASSERT_ERR(NZ_EEXISTS, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "not a Zarr store");
	ASSERT(exists("precious"));
	nz_test_rm_rf(out);
}

/* Issue 16: what can be checked is checked before the output is touched,
 * and an --overwrite that fails gives the old store back. */
static void test_checked_first(void)
{
	nz_nwb_opts o;
	nz_nwb *f = NULL;
	nz_compressor c = NZ_COMPRESSOR_INIT;
	const char *bad_list[] = {"ok", "caf\xe9"};
	nz_nwb_subject sub = NZ_NWB_SUBJECT_INIT;
	/* an existing store that must survive every refusal below */
	base_opts(&o);
	ASSERT_OK(nz_nwb_create(&f, out, &o));
	ASSERT_OK(nz_nwb_close(f));
	nz_nwb_free(f);
	f = NULL;
	ASSERT(exists(".zmetadata"));
	base_opts(&o);
	o.overwrite = 1;
	o.identifier = "rec\xff";
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "not valid UTF-8");
	ASSERT_CONTAINS(nz_error_last()->message, "identifier");
	base_opts(&o);
	o.overwrite = 1;
	o.experimenter = bad_list;
	o.n_experimenter = 2;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "experimenter' entry 1");
	base_opts(&o);
	o.overwrite = 1;
	c.id = "gzip";
	c.clevel = 15;
	o.compressor = &c;
	ASSERT_ERR(NZ_EFORMAT, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "level");
	base_opts(&o);
	o.overwrite = 1;
	o.spec_from = "/nonexistent/spec.nwb";
	ASSERT_ERR(NZ_ENOTFOUND, nz_nwb_create(&f, out, &o));
	ASSERT_CONTAINS(nz_error_last()->message, "spec.nwb");
	base_opts(&o);
	o.overwrite = 1;
	o.jobs = NZ_WRITE_MAX_JOBS + 1;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_create(&f, out, &o));
	ASSERT(f == NULL && exists(".zmetadata") && !exists(NZ_INCOMPLETE_MARKER));

	/* a failure after create, then free: the old store is back whole */
	base_opts(&o);
	o.overwrite = 1;
	ASSERT_OK(nz_nwb_create(&f, out, &o));
	ASSERT(!exists(".zmetadata") && exists(NZ_INCOMPLETE_MARKER));
	sub.species = "Mus \xc0\xaf"; /* overlong '/': caught where text is encoded */
	ASSERT_ERR(NZ_EINVAL, nz_nwb_set_subject(f, &sub));
	ASSERT_CONTAINS(nz_error_last()->message, "UTF-8");
	nz_nwb_free(f);
	f = NULL;
	ASSERT(exists(".zmetadata") && !exists(NZ_INCOMPLETE_MARKER) && !exists("general/subject"));

	/* version-1 options (before write_stats) are still accepted */
	base_opts(&o);
	o.version = 1;
	o.overwrite = 1;
	ASSERT_OK(nz_nwb_create(&f, out, &o));
	ASSERT_OK(nz_nwb_close(f));
	nz_nwb_free(f);
	nz_test_rm_rf(out);
}

static void test_build(void)
{
	nz_nwb_opts o;
	nz_nwb *f = NULL;
	nz_nwb_subject sub = NZ_NWB_SUBJECT_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_source *src = NULL;
	int16_t data[10][3];
	double stamps[10];
	float cc[3] = {1, 2, 3};
	int64_t rows_bad[3] = {0, 1, 7};
	uint64_t shape[2] = {10, 3};
	char *attrs = NULL;

	for (int i = 0; i < 10; i++) {
		stamps[i] = 0.5 * i;
		for (int c = 0; c < 3; c++)
			data[i][c] = (int16_t)(i * 100 - c);
	}
	base_opts(&o);
	ASSERT_OK(nz_nwb_create(&f, out, &o));
	sub.subject_id = "m1";
	sub.age = "P90D";
	sub.date_of_birth = "2023-10-04T00:00:00Z";
	ASSERT_OK(nz_nwb_set_subject(f, &sub));
	ASSERT_ERR(NZ_EEXISTS, nz_nwb_set_subject(f, &sub));

	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_device(f, "a/b", NULL, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "a/b");
	ASSERT_OK(nz_nwb_add_device(f, "probe", NULL, "IMEC"));
	ASSERT_ERR(NZ_EEXISTS, nz_nwb_add_device(f, "probe", NULL, NULL));
	ASSERT_ERR(NZ_ENOTFOUND, nz_nwb_add_electrode_group(f, "g0", "d", "CA1", "nodevice"));
	ASSERT_CONTAINS(nz_error_last()->message, "nodevice");
	ASSERT_OK(nz_nwb_add_electrode_group(f, "g0", "d", "CA1", "probe"));
	e.group = "g1";
	ASSERT_ERR(NZ_ENOTFOUND, nz_nwb_add_electrodes(f, &e, 3, 1));
	ASSERT_CONTAINS(nz_error_last()->message, "g1");
	e.group = "g0";
	ASSERT_OK(nz_nwb_add_electrodes(f, &e, 2, 1));
	{
		nz_nwb_electrode two[2] = {e, e};
		two[1].group = "nogroup";
		ASSERT_ERR(NZ_ENOTFOUND, nz_nwb_add_electrodes(f, two, 2, 0));
		ASSERT_CONTAINS(nz_error_last()->message, "electrode 3");
		ASSERT_EQ_U64(nz_nwb_electrode_count(f), 2); /* all or none */
	}

	ASSERT_OK(nz_source_from_memory(&src, data, "<i2", 2, shape));
	so.name = "es";
	so.rate = 1000;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_CONTAINS(nz_error_last()->message, "3 channels but 2 electrodes");
	ASSERT_OK(nz_nwb_add_electrodes(f, &e, 1, 1));
	so.electrodes = rows_bad;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_CONTAINS(nz_error_last()->message, "row 7");
	so.electrodes = NULL;
	so.rate = 0;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_CONTAINS(nz_error_last()->message, "rate");
	so.module = "ecephys";
	so.rate = 1000;
	ASSERT_ERR(NZ_ENOTFOUND, nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_CONTAINS(nz_error_last()->message, "ecephys");
	ASSERT_OK(nz_nwb_add_processing_module(f, "ecephys", "processed"));
	so.rate = 0;
	so.timestamps = stamps;
	so.n_timestamps = 10;
	so.channel_conversion = cc;
	so.filtering = "300 Hz high-pass";
	ASSERT_OK(nz_nwb_add_electrical_series(f, &so, src));
	so.unit = NULL;
	so.name = "ts";
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_timeseries(f, &so, src));
	ASSERT_CONTAINS(nz_error_last()->message, "unit");
	nz_source_free(src);

	/* not closed yet: no .zmetadata, so the file does not look complete */
	ASSERT(!exists(".zmetadata"));
	ASSERT(exists("processing/ecephys/es/timestamps/.zarray"));
	ASSERT_OK(nz_nwb_close(f));
	ASSERT(exists(".zmetadata"));
	ASSERT(!exists("specifications")); /* no spec_from: no cached schema */
	ASSERT_ERR(NZ_EINVAL, nz_nwb_close(f));
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_device(f, "late", NULL, NULL));
	ASSERT_CONTAINS(nz_error_last()->message, "closed");
	nz_nwb_free(f);
	nz_nwb_free(NULL);

	nz_store *st = NULL;
	ASSERT_OK(nz_store_open_dir(&st, out, NZ_STORE_READ));
	ASSERT_OK(nz_attrs_read(&attrs, st, "processing/ecephys/es/channel_conversion"));
	ASSERT_CONTAINS(attrs, "\"axis\":1");
	nz_free(attrs);
	ASSERT_OK(nz_attrs_read(&attrs, st, "processing/ecephys/es"));
	ASSERT_CONTAINS(attrs, "\"filtering\":\"300 Hz high-pass\"");
	nz_free(attrs);
	ASSERT_OK(nz_attrs_read(&attrs, st, "general/subject/age"));
	ASSERT_CONTAINS(attrs, "\"reference\":\"birth\"");
	nz_free(attrs);
	ASSERT_OK(nz_attrs_read(&attrs, st, "processing/ecephys/es/timestamps"));
	ASSERT_CONTAINS(attrs, "\"interval\":1");
	nz_free(attrs);
	/* the electrodes table has no x/y/z/imp/filtering columns: no row set them */
	ASSERT_OK(nz_attrs_read(&attrs, st, "general/extracellular_ephys/electrodes"));
	ASSERT_CONTAINS(attrs, "\"colnames\":[\"location\",\"group\",\"group_name\"]");
	nz_free(attrs);
	nz_store_free(st);
}

static void test_default_chunks(void)
{
	uint64_t chunks[2], shape[2] = {1800000, 384}, small[1] = {10};
	nz_nwb_default_chunks(chunks, 2, shape, 2);
	ASSERT_EQ_U64(chunks[1], 384);
	ASSERT_EQ_U64(chunks[0], (4u << 20) / (384 * 2));
	nz_nwb_default_chunks(chunks, 1, small, 8);
	ASSERT_EQ_U64(chunks[0], 10);
}

/* The default shards: every channel, whole chunks of rows making about
 * 256 MiB, none for data that fits one chunk. */
static void test_default_shards(void)
{
	uint64_t chunks[2], shards[2], shape[2] = {1800000, 384}, small[2] = {100, 4};
	nz_nwb_default_chunks(chunks, 2, shape, 2);
	ASSERT_EQ_INT(nz_nwb_default_shards(shards, 2, shape, chunks, 2), 1);
	ASSERT_EQ_U64(shards[1], 384);
	ASSERT_EQ_U64(shards[0] % chunks[0], 0);
	ASSERT_EQ_U64(shards[0] / chunks[0], 64); /* 64 x 4 MiB */
	shape[0] = chunks[0] * 3 - 5; /* 3 chunks of rows: one shard of them */
	ASSERT_EQ_INT(nz_nwb_default_shards(shards, 2, shape, chunks, 2), 1);
	ASSERT_EQ_U64(shards[0], chunks[0] * 3);
	nz_nwb_default_chunks(chunks, 2, small, 2);
	ASSERT_EQ_INT(nz_nwb_default_shards(shards, 2, small, chunks, 2), 0);
}

/* Zarr v3 (the default): a complete file is consolidated in its root
 * zarr.json, series data are sharded, and a unit over DANDI's 5 GiB is
 * refused before anything of the series is written. */
static void test_v3(void)
{
	static int16_t data[20000][2];
	nz_nwb_opts o;
	nz_nwb *f = NULL;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_source *src = NULL, *huge = NULL;
	nz_store *st = NULL;
	nz_array *a = NULL;
	uint64_t shape[2] = {20000, 2}, chunks[2] = {1000, 2}, big[2] = {(uint64_t)1 << 32, 2};
	uint64_t start[2] = {19999, 0}, count[2] = {1, 2};
	int16_t last[2];

	for (int i = 0; i < 20000; i++)
		data[i][0] = (int16_t)i, data[i][1] = (int16_t)-i;
	nz_test_rm_rf(out);
	base_opts(&o);
	o.zarr_format = 0;
	ASSERT_OK(nz_nwb_create(&f, out, &o));
	ASSERT_OK(nz_nwb_add_device(f, "probe", "a probe", NULL));
	ASSERT_OK(nz_nwb_add_electrode_group(f, "g", "group", "CA1", "probe"));
	e.group = "g";
	ASSERT_OK(nz_nwb_add_electrodes(f, &e, 2, 1));
	ASSERT_OK(nz_source_from_memory(&src, data, "<i2", 2, shape));
	ASSERT_OK(nz_source_from_memory(&huge, data, "<i2", 2, big));
	so.name = "big";
	so.rate = 1000;
	so.chunks = big;
	ASSERT_ERR(NZ_EINVAL, nz_nwb_add_electrical_series(f, &so, huge));
	ASSERT_CONTAINS(nz_error_last()->message, "5 GiB");
	ASSERT(!exists("acquisition/big/data"));
	so.name = "es";
	so.chunks = chunks;
	ASSERT_OK(nz_nwb_add_electrical_series(f, &so, src));
	ASSERT_OK(nz_nwb_close(f));
	nz_nwb_free(f);
	ASSERT(exists("zarr.json") && !exists(".zgroup") && !exists(".zmetadata"));
	ASSERT(exists("acquisition/es/data/c/0/0") && !exists("acquisition/es/data/c/1/0"));
	ASSERT_OK(nz_store_open_dir(&st, out, 0));
	ASSERT_OK(nz_nwb_check_complete(st));
	ASSERT_OK(nz_array_open(&a, st, "acquisition/es/data"));
	ASSERT_EQ_INT(nz_array_zarr_format(a), 3);
	ASSERT_EQ_U64(nz_array_shards(a)[0], 20000); /* 20 chunks: one shard */
	ASSERT_EQ_U64(nz_array_chunks(a)[0], 1000);
	ASSERT_OK(nz_array_read_region(a, start, count, last, sizeof last));
	ASSERT(last[0] == 19999 && last[1] == -19999);
	nz_array_free(a);
	nz_store_free(st);
	nz_source_free(src);
	nz_source_free(huge);
}

int main(void)
{
	snprintf(out, sizeof out, "%s/nwb_api.nwb.zarr", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz_test_rm_rf(out);
	test_create_errors();
	test_checked_first();
	test_build();
	test_default_chunks();
	test_default_shards();
	test_v3();
	return 0;
}
