/* An acquisition program writing NWB Zarr while it records.
 *
 *   record OUT.nwb.zarr [SECONDS]
 *
 * Four simulated probes (64 channels each, 30 kHz, int16) deliver 10 ms
 * blocks, each from its own thread, as DAQ callbacks would; one of them
 * also gives a timestamp per frame (its clock, not the nominal rate). The
 * recorder compresses full chunks on two threads shared by the file and
 * flushes every second: while it runs, any reader opening OUT sees every
 * probe up to the last flush. The main thread prints how far each probe
 * got, then closes the file. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "nwbzarr.h"

#define PROBES 4
#define CHANNELS 64
#define RATE 30000.0
#define BLOCK 300 /* frames per DAQ block: 10 ms */

typedef struct probe {
	nz_record_series *series;
	int index;
	uint64_t frames; /* to record */
	int err;
	char message[NZ_ERROR_MSG_MAX];
} probe;

/* One probe's DAQ loop: a block of samples, appended as it comes. */
static void *acquire(void *arg)
{
	probe *p = arg;
	static __thread int16_t block[BLOCK][CHANNELS];
	static __thread double stamps[BLOCK];
	for (uint64_t at = 0; at < p->frames && !p->err; at += BLOCK) {
		for (int t = 0; t < BLOCK; t++) {
			uint64_t ft = at + (uint64_t)t;
			stamps[t] = (double)ft / RATE * 1.0001 + 0.25; /* a drifting clock */
			for (int c = 0; c < CHANNELS; c++)
				block[t][c] = (int16_t)((ft * 7 + (uint64_t)c * 131 + (uint64_t)p->index) % 2000) - 1000;
		}
		p->err = nz_record_append(p->series, block, BLOCK, p->index == 3 ? stamps : NULL);
	}
	if (p->err)
		snprintf(p->message, sizeof p->message, "%s", nz_error_last()->message);
	return NULL;
}

int main(int argc, char **argv)
{
	const char *out = argc > 1 ? argv[1] : "record.nwb.zarr";
	double seconds = argc > 2 ? atof(argv[2]) : 3.0;
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	nz_nwb *f = NULL;
	nz_record *r = NULL;
	probe probes[PROBES];
	pthread_t threads[PROBES];
	int started = 0, rc = 1;

	o.identifier = "record-example";
	o.session_description = "four probes written while recording";
	o.session_start_time = "2024-05-06T10:00:00+02:00";
	o.overwrite = 1;
	e.group = "shanks";
	if (nz_nwb_create(&f, out, &o) < 0 || nz_nwb_add_device(f, "probes", "4 probes", NULL) < 0 ||
	    nz_nwb_add_electrode_group(f, "shanks", "every shank", "CA1", "probes") < 0 ||
	    nz_nwb_add_electrodes(f, &e, CHANNELS * PROBES, 1) < 0 || nz_record_begin(&r, f, &ro) < 0)
		goto fail;
	f = NULL; /* the recorder owns it */
	for (int i = 0; i < PROBES; i++) {
		nz_record_series_opts so = NZ_RECORD_SERIES_OPTS_INIT;
		int64_t rows[CHANNELS];
		char name[32];
		for (int c = 0; c < CHANNELS; c++)
			rows[c] = i * CHANNELS + c;
		snprintf(name, sizeof name, "probe%d", i);
		so.series.name = name;
		so.series.rate = RATE;
		so.series.electrodes = rows;
		so.dtype = "<i2";
		so.channels = CHANNELS;
		so.timestamps = i == 3;
		probes[i] = (probe){.index = i, .frames = (uint64_t)(seconds * RATE)};
		if (nz_record_add_series(&probes[i].series, r, &so) < 0)
			goto fail;
	}
	for (; started < PROBES; started++)
		if (pthread_create(&threads[started], NULL, acquire, &probes[started]) != 0)
			break;
	for (int i = 0; i < started; i++)
		pthread_join(threads[i], NULL);
	for (int i = 0; i < PROBES; i++)
		if (probes[i].err || i >= started) {
			fprintf(stderr, "%s: probe%d: %s\n", out, i,
				i >= started ? "no thread" : probes[i].message);
			goto done;
		}
	if (nz_record_close(r) < 0)
		goto fail;
	for (int i = 0; i < PROBES; i++)
		printf("probe%d: %llu frames\n", i,
		       (unsigned long long)nz_record_series_frames(probes[i].series));
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "%s: %s\n", out, nz_error_last()->message);
done:
	nz_record_free(r);
	nz_nwb_free(f);
	return rc;
}
