/* Rebuild $NZ_REF/zarr/reference_json.nwb.zarr through the
 * public NWB API (same metadata, same data read back from the reference
 * store), for compare_layout.py to diff against the original.
 *
 * usage: make_reference OUT [JOBS] [SPEC_FROM]   (object ids seeded) */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "test.h"

static void *read_all(nz_store *st, const char *path, size_t itemsize, uint64_t *n)
{
	nz_array *a = NULL;
	uint64_t start[1] = {0};
	void *buf;
	ASSERT_OK(nz_array_open(&a, st, path));
	*n = nz_array_shape(a)[0];
	buf = malloc(*n * itemsize);
	ASSERT(buf);
	ASSERT_OK(nz_array_read_region(a, start, n, buf, *n * itemsize));
	nz_array_free(a);
	return buf;
}

int main(int argc, char **argv)
{
	const char *data = getenv("NZ_REF");
	char ref[1024], raw[1024], spec[1024];
	const char *experimenter[] = {"Doe, Jane"};
	const char *keywords[] = {"ephys", "zarr", "reference"};
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_series_opts es = NZ_NWB_SERIES_OPTS_INIT, ts = NZ_NWB_SERIES_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	uint64_t chunks[2] = {5000, 4}, n_plain, n_speed, n_ts;
	nz_source *src = NULL;
	nz_store *st = NULL;
	nz_nwb *f = NULL;
	float *plain;
	double *speed, *stamps;

	if (argc < 2 || !data) {
		fprintf(stderr, "usage: make_reference OUT [JOBS] [SPEC_FROM] (needs NZ_REF)\n");
		return 2;
	}
	snprintf(ref, sizeof ref, "%s/zarr/reference_json.nwb.zarr", data);
	snprintf(raw, sizeof raw, "%s/raw/reference_ephys.int16", data);
	snprintf(spec, sizeof spec, "%s", argc > 3 ? argv[3] : ref);
	ASSERT_OK(nz_store_open_dir(&st, ref, NZ_STORE_READ));
	plain = read_all(st, "acquisition/plain_timeseries/data", sizeof *plain, &n_plain);
	speed = read_all(st, "processing/behavior/speed/data", sizeof *speed, &n_speed);
	stamps = read_all(st, "processing/behavior/speed/timestamps", sizeof *stamps, &n_ts);
	nz_store_free(st);

	o.zarr_format = 2; /* the reference is hdmf-zarr 0.6's v2 layout */
	o.identifier = "ref-0001-2f6d1c7e";
	o.session_description = "hdmf-zarr reference file for the C NWB-Zarr writer";
	o.session_start_time = "2024-01-02T03:04:05-08:00";
	o.file_create_date = "2024-01-02T04:00:00-08:00";
	o.experimenter = experimenter;
	o.n_experimenter = 1;
	o.keywords = keywords;
	o.n_keywords = 3;
	o.lab = "Reference Lab";
	o.institution = "Reference Institute";
	o.jobs = argc > 2 ? atoi(argv[2]) : 1;
	o.object_id_seed = 42;
	o.spec_from = spec;
	o.overwrite = 1;
	ASSERT_OK(nz_nwb_create(&f, argv[1], &o));
	ASSERT_OK(nz_nwb_add_device(f, "probe0", "4-channel test probe", "Acme"));
	ASSERT_OK(nz_nwb_add_electrode_group(f, "shank0", "shank 0", "CA1", "probe0"));
	for (int i = 0; i < 4; i++) {
		e.group = "shank0";
		e.x = i;
		e.y = 0;
		e.z = 10.0 * i;
		e.imp = 1e6;
		e.filtering = "none";
		ASSERT_OK(nz_nwb_add_electrodes(f, &e, 1, 0));
	}
	ASSERT_EQ_U64(nz_nwb_electrode_count(f), 4);

	ro.nchannels = 4;
	ASSERT_OK(nz_source_open_raw(&src, raw, &ro));
	es.name = "ElectricalSeries";
	es.description = "synthetic ephys (gen_ephys seed 1)";
	es.rate = 30000;
	es.conversion = 1.95e-7;
	es.chunks = chunks;
	ASSERT_OK(nz_nwb_add_electrical_series(f, &es, src));
	nz_source_free(src);

	ASSERT_OK(nz_source_from_memory(&src, plain, "<f4", 1, &n_plain));
	ts.name = "plain_timeseries";
	ts.description = "plain TimeSeries with rate";
	ts.comments = "float32 sine";
	ts.unit = "m";
	ts.rate = 100;
	ts.starting_time = 0.5;
	ASSERT_OK(nz_nwb_add_timeseries(f, &ts, src));
	nz_source_free(src);

	ASSERT_OK(nz_nwb_add_processing_module(f, "behavior", "processed behavior"));
	ASSERT_OK(nz_source_from_memory(&src, speed, "<f8", 1, &n_speed));
	ts = (nz_nwb_series_opts)NZ_NWB_SERIES_OPTS_INIT;
	ts.name = "speed";
	ts.module = "behavior";
	ts.description = "speed with explicit timestamps";
	ts.unit = "cm/s";
	ts.timestamps = stamps;
	ts.n_timestamps = n_ts;
	ASSERT_OK(nz_nwb_add_timeseries(f, &ts, src));
	nz_source_free(src);

	ASSERT_OK(nz_nwb_close(f));
	nz_nwb_free(f);
	free(plain);
	free(speed);
	free(stamps);
	return 0;
}
