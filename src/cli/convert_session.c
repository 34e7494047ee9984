/* `nwbzarr convert SESSION`: every stream of a SpikeGLX run or an Open
 * Ephys recording into one NWB file (nz_rec_open + nz_nwb_add_recording).
 * The recording's metadata gives channels, rates, gains and geometry; the
 * flags and the session JSON give the NWBFile and subject fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "cli_mpi.h"

int nzc_is_session(const nzc_args *a)
{
	struct stat st;
	size_t n = strlen(a->input);
	if (a->streams)
		return 1;
	/* A folder with the flags of a raw recording is a mistaken raw input
	 * (refused as "not a regular file"), not a session. */
	if (stat(a->input, &st) == 0 && S_ISDIR(st.st_mode))
		return !(a->channels || a->rate > 0 || a->dtype || a->offset || a->conversion > 0);
	return (n > 5 && strcmp(a->input + n - 5, ".meta") == 0) ||
	       (n > 15 && strcmp(a->input + n - 15, "structure.oebin") == 0);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Split "a,b,c" into ids (pointers into *buf, which the caller frees). */
static int split_ids(const char *list, char **buf, const char ***ids, size_t *n)
{
	size_t k = 1;
	char *p;
	*buf = strdup(list);
	for (const char *c = list; *c; c++)
		k += *c == ',';
	*ids = calloc(k, sizeof **ids);
	if (!*buf || !*ids)
		return -1;
	*n = 0;
	for (p = strtok(*buf, ","); p; p = strtok(NULL, ","))
		(*ids)[(*n)++] = p;
	return *n ? 0 : -1;
}

static int usage_conflicts(const nzc_args *a, const nz_session *s)
{
	if (a->channels || a->rate > 0 || a->dtype || a->offset || a->conversion > 0 ||
	    a->have_chunks || a->have_shards) {
		fprintf(stderr, "nwbzarr: %s: --channels, --rate, --dtype, --offset, --conversion, "
			"--chunks and --shards do not apply to a session: its metadata gives them\n",
			a->input);
		return 2;
	}
	if (a->have_flush_interval) {
		fprintf(stderr, "nwbzarr: %s: --flush-interval is for streams (RECORDING - or a "
			"FIFO), not a session\n", a->input);
		return 2;
	}
	if (s && (s->n_devices || s->n_groups || s->n_electrodes || s->channel_conversion)) {
		fprintf(stderr, "nwbzarr: %s: devices, electrode groups, electrodes and "
			"channel_conversion come from the recording's metadata in a session\n",
			a->meta);
		return 2;
	}
	if (nzc_mpi_size() > 1) {
		fprintf(stderr, "nwbzarr: a session is converted by one process, not under mpirun\n");
		return 2;
	}
	return 0;
}

static int report(const nzc_args *a, const nz_rec *r, const char *const *ids, size_t n,
		  double elapsed, int jobs)
{
	double bytes = 0, stored = (double)nzc_du(a->output, 0);
	json_t *list = json_array();
	for (size_t i = 0; i < nz_rec_count(r); i++) {
		const nz_rec_stream *s = nz_rec_get(r, i);
		int take = !ids;
		for (size_t k = 0; ids && k < n; k++)
			take |= strcmp(ids[k], s->id) == 0;
		if (!take)
			continue;
		bytes += (double)s->frames * (double)s->columns * 2;
		json_array_append_new(list, json_pack("{s:s, s:I, s:I, s:f, s:s}", "id", s->id,
						      "frames", (json_int_t)s->frames, "channels",
						      (json_int_t)s->columns, "rate", s->rate,
						      "metadata", s->meta_path));
	}
	if (a->json)
		return nzc_print_json(json_pack("{s:s, s:s, s:o, s:f, s:f, s:f, s:f, s:i}", "input",
						a->input, "output", a->output, "streams", list,
						"bytes", bytes, "stored_bytes", stored, "seconds",
						elapsed, "mb_per_s",
						elapsed > 0 ? bytes / 1e6 / elapsed : 0, "jobs", jobs));
	if (!a->quiet)
		printf("wrote %s: %zu streams, %.1f MB in %.2f s = %.1f MB/s; stored %.1f MB\n",
		       a->output, json_array_size(list), bytes / 1e6, elapsed,
		       elapsed > 0 ? bytes / 1e6 / elapsed : 0, stored / 1e6);
	json_decref(list);
	return 0;
}

int nzc_convert_session(const nzc_args *a)
{
	nz_rec *r = NULL;
	nz_session *s = NULL;
	nz_nwb *f = NULL;
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_subject sub = NZ_NWB_SUBJECT_INIT;
	nz_nwb_recording_opts ro = NZ_NWB_RECORDING_OPTS_INIT;
	nz_nwb_resume_info ri = {0};
	nz_write_stats ws = {0};
	nz_compressor comp;
	char start[64], desc[300], ident[256], *idbuf = NULL;
	const char **ids = NULL;
	const char *b;
	size_t n_ids = 0;
	double t0;
	int rc = 1;

	if (a->meta && nz_session_load(&s, a->meta) < 0)
		goto fail;
	if ((rc = usage_conflicts(a, s)) != 0)
		goto done;
	rc = 1;
	if (a->streams && split_ids(a->streams, &idbuf, &ids, &n_ids) < 0) {
		fprintf(stderr, "nwbzarr: --streams '%s' names no stream\n", a->streams);
		rc = 2;
		goto done;
	}
	/* Bad input, no output: every stream's metadata and data file is
	 * checked before the output is touched. */
	if (nz_rec_open(&r, a->input) < 0)
		goto fail;
	for (size_t i = 0; i < n_ids; i++)
		if (!nz_rec_find(r, ids[i])) {
			fprintf(stderr, "nwbzarr: %s: no stream '%s'; it has:", a->input, ids[i]);
			for (size_t k = 0; k < nz_rec_count(r); k++)
				fprintf(stderr, " %s", nz_rec_get(r, k)->id);
			fprintf(stderr, "\n");
			rc = 2;
			goto done;
		}
	if (a->compressor || a->clevel >= 0)
		nzc_compressor_by_name(&comp, a->compressor ? a->compressor : "blosc-lz4", a->clevel);
	/* The files' own start time unless a flag or the JSON gives one; the
	 * rule for SpikeGLX's zone-less times is in docs/recordings.md. */
	if (nz_rec_start_time(r, start, sizeof start) < 0) {
		time_t now = time(NULL);
		struct tm tm;
		gmtime_r(&now, &tm);
		strftime(start, sizeof start, "%Y-%m-%dT%H:%M:%SZ", &tm);
		if (!a->session_start_time && !(s && s->file.session_start_time) && !a->quiet)
			fprintf(stderr, "nwbzarr: %s; session_start_time is now (give "
				"--session-start-time)\n", nz_error_last()->message);
	}
	snprintf(ident, sizeof ident, "%s", a->input);
	while (strlen(ident) > 1 && ident[strlen(ident) - 1] == '/')
		ident[strlen(ident) - 1] = '\0';
	b = strrchr(ident, '/') ? strrchr(ident, '/') + 1 : ident;
	snprintf(desc, sizeof desc, "%s session %s converted by nwbzarr",
		 nz_rec_get(r, 0)->format, b);
	nzc_file_opts(&o, a, s, start, desc, &comp);
	o.identifier = a->identifier ? a->identifier : s && s->file.identifier ? s->file.identifier : b;
	if ((rc = nzc_check_request(a, &o)) != 0)
		goto done;
	rc = 1;
	o.progress = nzc_progress_for(a->quiet, a->json);
	o.resume_info = &ri;
	o.write_stats = &ws;
	ro.streams = ids;
	ro.n_streams = n_ids;
	ro.location = a->location;
	/* "unknown" is what neuroconv writes too: the recording does not know
	 * the brain area. Say what to pass, since for a mouse nwbinspector
	 * 0.7 reports it (check_electrodes_location_allen_ccf). */
	if (!a->location && !a->quiet)
		fprintf(stderr, "nwbzarr: electrodes location 'unknown' (the recording does not "
			"say where the probe was); give --location with an Allen CCF area (e.g. CA1, "
			"VISp, or root for the brain): nwbinspector reports 'unknown' for mice\n");
	nzc_catch_signals(1);
	t0 = now_s();
	if (nz_nwb_create(&f, a->output, &o) < 0 ||
	    (nzc_subject(&sub, a, s) && nz_nwb_set_subject(f, &sub) < 0) ||
	    nz_nwb_add_recording(f, r, &ro) < 0 || nz_nwb_close(f) < 0)
		goto fail;
	rc = report(a, r, ids, n_ids, now_s() - t0, ws.jobs) < 0;
	goto done;
fail:
	nzc_progress_end();
	rc = nzc_fail();
	nzc_abandon_output(&f, a->output, a->overwrite);
done:
	nzc_catch_signals(0);
	nz_nwb_free(f);
	nz_rec_free(r);
	nz_session_free(s);
	free(idbuf);
	free(ids);
	return rc;
}
