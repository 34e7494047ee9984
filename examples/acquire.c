/* An acquisition program writing NWB Zarr through the public API.
 *
 *   acquire OUT.nwb.zarr [SECONDS] [JOBS]
 *
 * A simulated 32-channel probe sampled at 30 kHz delivers int16 samples
 * through a callback source (a real program would read its DAQ buffers
 * here); the engine pulls hyperslabs from it on JOBS threads. The file gets
 * a subject, a device, two electrode groups, the electrodes table, the
 * ElectricalSeries, and a processed TimeSeries in a ProcessingModule. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "nwbzarr.h"

#define CHANNELS 32
#define RATE 30000.0

/* Sample (t, c) of the simulated probe: a deterministic function, so reads
 * of any region from any thread agree (the callback must be thread-safe). */
static int read_daq(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	int16_t *o = out;
	(void)ctx;
	for (uint64_t t = 0; t < count[0]; t++)
		for (uint64_t c = 0; c < count[1]; c++) {
			uint64_t ft = start[0] + t, fc = start[1] + c;
			double v = 800 * sin(2 * M_PI * (5 + fc) * (double)ft / RATE);
			*o++ = (int16_t)(v + (double)((ft * 2654435761u + fc) % 61) - 30);
		}
	return 0;
}

static int fail(const char *what)
{
	fprintf(stderr, "acquire: %s: %s\n", what, nz_error_last()->message);
	return 1;
}

int main(int argc, char **argv)
{
	const char *experimenter[] = {"Doe, Jane"};
	double seconds = argc > 2 ? atof(argv[2]) : 2.0;
	uint64_t shape[2] = {(uint64_t)(seconds * RATE), CHANNELS}, n_speed = 100;
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_subject subject = NZ_NWB_SUBJECT_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb_series_opts es = NZ_NWB_SERIES_OPTS_INIT, ts = NZ_NWB_SERIES_OPTS_INIT;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, read_daq, NULL};
	nz_source *daq = NULL, *mem = NULL;
	nz_nwb *f = NULL;
	double speed[100];
	int rc = 1;

	if (argc < 2 || shape[0] == 0) {
		fprintf(stderr, "usage: acquire OUT.nwb.zarr [SECONDS] [JOBS] [ZARR_FORMAT]\n");
		return 2;
	}
	for (int i = 0; i < 100; i++)
		speed[i] = 10 + 5 * sin(i / 10.0);

	o.identifier = "example-acquisition-0001";
	o.session_description = "simulated 32-channel recording";
	o.session_start_time = "2024-05-06T10:00:00+02:00";
	o.experimenter = experimenter;
	o.n_experimenter = 1;
	o.lab = "Example Lab";
	o.overwrite = 1;
	o.jobs = argc > 3 ? atoi(argv[3]) : 0;
	o.zarr_format = argc > 4 ? atoi(argv[4]) : 3; /* 2 for hdmf-zarr <= 0.13 */
	if (nz_nwb_create(&f, argv[1], &o) < 0)
		return fail("create");

	subject.subject_id = "mouse-7";
	subject.species = "Mus musculus";
	subject.age = "P90D";
	if (nz_nwb_set_subject(f, &subject) < 0 ||
	    nz_nwb_add_device(f, "probe", "simulated silicon probe", "Example Inc.") < 0 ||
	    nz_nwb_add_electrode_group(f, "shank0", "first shank", "CA1", "probe") < 0 ||
	    nz_nwb_add_electrode_group(f, "shank1", "second shank", "CA3", "probe") < 0)
		goto done;
	for (int c = 0; c < CHANNELS; c++) {
		e.group = c < CHANNELS / 2 ? "shank0" : "shank1";
		e.x = 0;
		e.y = 20.0 * (c % (CHANNELS / 2));
		e.z = 0;
		if (nz_nwb_add_electrodes(f, &e, 1, 0) < 0)
			goto done;
	}

	if (nz_source_from_callback(&daq, &ops, NULL, "<i2", 2, shape) < 0)
		goto done;
	es.name = "ElectricalSeries";
	es.description = "simulated wide-band signal";
	es.rate = RATE;
	es.conversion = 0.195e-6; /* volts per count */
	if (nz_nwb_add_electrical_series(f, &es, daq) < 0)
		goto done;

	if (nz_nwb_add_processing_module(f, "behavior", "processed behavior") < 0 ||
	    nz_source_from_memory(&mem, speed, "<f8", 1, &n_speed) < 0)
		goto done;
	ts.name = "running_speed";
	ts.module = "behavior";
	ts.unit = "cm/s";
	ts.rate = 10;
	if (nz_nwb_add_timeseries(f, &ts, mem) < 0 || nz_nwb_close(f) < 0)
		goto done;
	printf("wrote %s: %llu frames x %d channels\n", argv[1], (unsigned long long)shape[0],
	       CHANNELS);
	rc = 0;
done:
	if (rc)
		fail(argv[1]);
	nz_source_free(daq);
	nz_source_free(mem);
	nz_nwb_free(f);
	return rc;
}
