/* `nwbzarr convert`: raw recording -> NWB Zarr with one ElectricalSeries.
 * Everything here goes through the public API; this file only resolves
 * where each setting comes from: flag, else session JSON, else side-car,
 * else default. */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_mpi.h"

static volatile sig_atomic_t g_cancel;

static void on_sigint(int sig)
{
	(void)sig;
	g_cancel = 1;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The engine's bound is the CLI's: -j above it would be silently lowered. */
_Static_assert(NZC_MAX_JOBS == NZ_WRITE_MAX_JOBS, "args.h NZC_MAX_JOBS != NZ_WRITE_MAX_JOBS");

int nzc_compressor_by_name(nz_compressor *c, const char *name, int clevel)
{
	char err[160];
	const nzc_codec_choice *k = nzc_codec_choose(name, clevel, err, sizeof err);
	if (!k)
		return -1;
	*c = (nz_compressor)NZ_COMPRESSOR_INIT;
	c->id = k->id;
	c->cname = k->cname;
	c->clevel = clevel >= 0 ? clevel : k->clevel;
	c->shuffle = k->shuffle;
	return 0;
}

/* Default session start: the recording's modification time, local zone. */
static void mtime_iso(char *buf, size_t cap, const char *path)
{
	struct stat st;
	struct tm tm;
	time_t t = stat(path, &st) == 0 ? st.st_mtime : time(NULL);
	size_t n;
	localtime_r(&t, &tm);
	n = strftime(buf, cap, "%Y-%m-%dT%H:%M:%S%z", &tm);
	if (n >= 5 && n + 1 < cap) { /* +hhmm -> +hh:mm */
		memmove(buf + n - 1, buf + n - 2, 3);
		buf[n - 2] = ':';
	}
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

#define PICK(a, b) ((a) ? (a) : (b))

/* The NWBFile fields and writing options every convert resolves the same
 * way: flag, else session JSON, else the given defaults (start, desc). */
void nzc_file_opts(nz_nwb_opts *o, const nzc_args *a, const nz_session *s, const char *start,
		   const char *desc, const nz_compressor *comp)
{
	if (s)
		*o = s->file;
	o->identifier = PICK(a->identifier, PICK(o->identifier, base_name(a->input)));
	o->session_description = PICK(a->session_description, PICK(o->session_description, desc));
	o->session_start_time = PICK(a->session_start_time, PICK(o->session_start_time, start));
	o->file_create_date = PICK(a->create_date, o->file_create_date);
	o->lab = PICK(a->lab, o->lab);
	o->institution = PICK(a->institution, o->institution);
	if (a->experimenter) {
		o->experimenter = &a->experimenter;
		o->n_experimenter = 1;
	}
	o->overwrite = a->overwrite;
	o->jobs = a->jobs;
	o->spec_from = a->spec_from;
	o->object_id_seed = a->seed;
	o->fsync = a->fsync;
	o->resume = a->resume;
	o->compressor = a->compressor || a->clevel >= 0 ? comp : NULL;
	o->zarr_format = a->zarr_format ? a->zarr_format : 3; /* convert writes v3 by default */
	o->cancel_flag = &g_cancel;
}

/* The subject from the session JSON and the flags; 1 when there is one. */
int nzc_subject(nz_nwb_subject *sub, const nzc_args *a, const nz_session *s)
{
	int have = 0;
	if (s && s->has_subject) {
		*sub = s->subject;
		have = 1;
	}
	if (a->subject_id || a->species || a->sex || a->age) {
		sub->subject_id = PICK(a->subject_id, sub->subject_id);
		sub->species = PICK(a->species, sub->species);
		sub->sex = PICK(a->sex, sub->sex);
		sub->age = PICK(a->age, sub->age);
		have = 1;
	}
	return have;
}

void nzc_catch_signals(int on)
{
	struct sigaction sa;
	if (!on) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		return;
	}
	g_cancel = 0;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL); /* a batch scheduler's stop: cancel, resumable */
}

/* Devices, groups and electrodes: from the session when it has them, else
 * one device, one group and one electrode per channel. */
static int add_probe(nz_nwb *f, const nz_session *s, const nzc_args *a, uint64_t channels)
{
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	const char *location = PICK(a->location, "unknown");
	int err = 0;
	if (s && s->n_devices) {
		for (size_t i = 0; i < s->n_devices && !err; i++)
			err = nz_nwb_add_device(f, s->devices[i].name, s->devices[i].description,
						s->devices[i].manufacturer);
	} else {
		err = nz_nwb_add_device(f, "probe", "recording device", NULL);
	}
	if (err < 0)
		return err;
	if (s && s->n_groups) {
		for (size_t i = 0; i < s->n_groups && !err; i++)
			err = nz_nwb_add_electrode_group(
				f, s->groups[i].name, PICK(s->groups[i].description, "electrode group"),
				PICK(s->groups[i].location, location),
				PICK(s->groups[i].device, s->n_devices ? s->devices[0].name : "probe"));
	} else {
		err = nz_nwb_add_electrode_group(f, "group0", "all channels", location,
						 s && s->n_devices ? s->devices[0].name : "probe");
	}
	if (err < 0)
		return err;
	if (s && s->n_electrodes) /* count checked against channels by the caller */
		return nz_nwb_add_electrodes(f, s->electrodes, s->n_electrodes, 0);
	e.group = s && s->n_groups ? s->groups[0].name : "group0";
	return nz_nwb_add_electrodes(f, &e, channels, 1);
}

/* After a failure, once the library let go of the output: what state it is
 * in, and --resume only where it can help (a resume of a request that fails
 * validation fails the same way). */
void nzc_say_output_state(const char *output, int code, int overwrite)
{
	char marker[4096];
	snprintf(marker, sizeof marker, "%s/%s", output, NZ_INCOMPLETE_MARKER);
	if (access(marker, F_OK) != 0) {
		if (overwrite && access(output, F_OK) == 0)
			fprintf(stderr, "nwbzarr: %s'%s' was left as it was\n", nzc_mpi_tag(), output);
		return;
	}
	if (code == NZ_ENOSPC || code == NZ_EIO || code == NZ_ECANCELED || code == NZ_ENOMEM ||
	    code == NZ_ECODEC)
		fprintf(stderr, "nwbzarr: %s'%s' is incomplete; once the cause is fixed, finish it "
			"by rerunning the same command with --resume, or replace it with "
			"--overwrite\n", nzc_mpi_tag(), output);
	else
		fprintf(stderr, "nwbzarr: %s'%s' is incomplete; fix the request and replace it "
			"with --overwrite\n", nzc_mpi_tag(), output);
}

static void say_incomplete(const char *output)
{
	fprintf(stderr, "nwbzarr: %s'%s' is incomplete; finish it by rerunning the same command "
		"with --resume, or replace it with --overwrite\n", nzc_mpi_tag(), output);
}

/* 1 if the existing `file` lies inside the existing directory `dir`. */
static int inside(const char *file, const char *dir)
{
	char *f = realpath(file, NULL), *d = realpath(dir, NULL);
	size_t n = d ? strlen(d) : 0;
	int in = f && d && strncmp(f, d, n) == 0 && (f[n] == '/' || d[n - 1] == '/');
	free(f);
	free(d);
	return in;
}

/* What the flags ask that cannot work, found before anything is written:
 * text that is not UTF-8 (readers would fail on the file), times that are
 * not ISO-8601, and an --overwrite that would delete an input. Returns 0, or the exit status
 * (2, a usage error) after printing why. */
int nzc_check_request(const nzc_args *a, const nz_nwb_opts *o)
{
	const struct {
		const char *what, *value;
	} text[] = {
		{"--identifier (default: the recording's file name)", o->identifier},
		{"--session-description (default: names the recording)", o->session_description},
		{"--experimenter", a->experimenter}, {"--lab", o->lab},
		{"--institution", o->institution},   {"--subject-id", a->subject_id},
		{"--species", a->species},           {"--sex", a->sex},
		{"--age", a->age},                   {"--location", a->location},
	};
	const char *inputs[] = {a->input, a->meta, a->spec_from};
	if (a->json && nzc_json_paths(a->input, a->output) < 0)
		return 2;
	for (size_t i = 0; i < sizeof text / sizeof *text; i++)
		if (nz_text_check(text[i].value, text[i].what) < 0) {
			fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
			return 2;
		}
	if ((a->session_start_time &&
	     nz_nwb_check_time(a->session_start_time, "--session-start-time") < 0) ||
	    (a->create_date && nz_nwb_check_time(a->create_date, "--create-date") < 0)) {
		fprintf(stderr, "nwbzarr: %s\n", nz_error_last()->message);
		return 2;
	}
	for (size_t i = 0; a->overwrite && i < sizeof inputs / sizeof *inputs; i++)
		if (inputs[i] && inside(inputs[i], a->output)) {
			fprintf(stderr, "nwbzarr: input '%s' lies inside the output '%s': "
				"--overwrite would delete it\n", inputs[i], a->output);
			return 2;
		}
	return 0;
}

/* Print the library's error as the CLI's message; returns exit status 1. */
void nzc_abandon_output(nz_nwb **f, const char *output, int overwrite)
{
	int code;
	if (!*f)
		return;
	code = nz_error_last()->code; /* before nz_nwb_free can touch it */
	nz_nwb_free(*f);
	*f = NULL;
	nzc_say_output_state(output, code, overwrite);
}

int nzc_fail(void)
{
	fprintf(stderr, "nwbzarr: %s%s\n", nzc_mpi_tag(), nz_error_last()->message);
	return 1;
}

/* A rank's share of the series data under mpirun (docs/mpi.md). */
struct mpi_part {
	const nzc_args *a;
	nz_source *src;
	char array[300];
};

static int write_part(void *ctx, uint64_t part, uint64_t nparts)
{
	struct mpi_part *p = ctx;
	return nzc_mpi_write_part(p->a->output, p->array, p->src, part, nparts, p->a->jobs,
				  p->a->fsync, p->a->resume, &g_cancel);
}

int nzc_convert(const nzc_args *a)
{
	nz_recording_info info;
	nz_session *s = NULL;
	nz_source *src = NULL;
	nz_nwb *f = NULL;
	nz_raw_opts ro = NZ_RAW_OPTS_INIT;
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_series_opts so = NZ_NWB_SERIES_OPTS_INIT;
	nz_nwb_subject sub = NZ_NWB_SUBJECT_INIT;
	nz_compressor comp;
	nz_nwb_resume_info ri = {0};
	nz_write_stats ws = {0};
	struct stat st;
	char start[40], desc[300];
	const char *dtype;
	uint64_t channels, frames;
	double rate, t0, elapsed;
	int found, rc = 1, have_sub = 0, rank, nranks, stream = nzc_is_stream(a->input), fd = -1;
	const char *in_name = strcmp(a->input, "-") == 0 ? "stdin" : base_name(a->input);
	struct mpi_part part;

	/* Under mpirun every rank runs this function (docs/mpi.md): all resolve
	 * the settings and open the input, rank 0 writes the metadata, each
	 * writes its part of the chunks, rank 0 finalises. */
	if (nzc_is_session(a))
		return nzc_convert_session(a);
	if (nzc_mpi_init() < 0)
		return 1;
	rank = nzc_mpi_rank();
	nranks = nzc_mpi_size();
	if (stream ? a->resume || nranks > 1 : a->have_flush_interval) {
		fprintf(stderr, "nwbzarr: %s\n", stream ? "a stream is recorded by one process and "
			"not resumed (a killed recording: `nwbzarr repair`)" : "--flush-interval is "
			"for streams (RECORDING - or a FIFO)");
		rc = 2;
		goto done;
	}
	/* A directory would fail late (after the output exists): only files
	 * with a size are recordings, and streams (- or a FIFO) are recorded. */
	if (!stream && stat(a->input, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "nwbzarr: %s'%s' is not a regular file\n", nzc_mpi_tag(), a->input);
		goto done;
	}
	if (a->meta && nz_session_load(&s, a->meta) < 0)
		goto fail;
	memset(&info, 0, sizeof info);
	if (!stream && (found = nz_recording_info_probe(&info, a->input)) < 0)
		goto fail;
	if (stream)
		found = 0;
	channels = a->channels ? a->channels : found ? info.channels : 0;
	rate = a->rate > 0 ? a->rate : found ? info.rate : 0;
	if (!channels || !(rate > 0)) {
		fprintf(stderr, "nwbzarr: %s: %s unknown: pass %s, or put a SpikeGLX .meta or an "
			"Open Ephys structure.oebin beside the recording\n", a->input,
			channels ? "sampling rate" : "channel count", channels ? "--rate" : "--channels");
		rc = 2;
		goto done;
	}
	/* --dtype, --compressor and --clevel were checked by the parser. */
	dtype = nzc_numpy_dtype(a->dtype ? a->dtype : found && info.dtype[0] ? info.dtype : "<i2");
	if (!dtype) {
		fprintf(stderr, "nwbzarr: %s: the side-car's sample type '%s' is not supported\n",
			a->input, info.dtype);
		goto done;
	}
	if (a->compressor || a->clevel >= 0)
		nzc_compressor_by_name(&comp, a->compressor ? a->compressor : "blosc-lz4", a->clevel);
	/* Open the input before touching the output: bad input, no output. */
	ro.dtype = dtype;
	ro.nchannels = channels;
	ro.header_offset = a->offset;
	if (!stream && nz_source_open_raw(&src, a->input, &ro) < 0)
		goto fail;
	frames = src ? nz_source_shape(src)[0] : 0;
	/* An empty file is a failed copy or the wrong path far more often than a
	 * recording of no frames: say so rather than write an empty series. */
	if (!stream && frames == 0) {
		fprintf(stderr, "nwbzarr: %s'%s' holds no frames (%llu bytes after the %llu-byte header)\n",
			nzc_mpi_tag(), a->input, (unsigned long long)(st.st_size > (off_t)a->offset ?
			st.st_size - (off_t)a->offset : 0), (unsigned long long)a->offset);
		goto done;
	}
	if (a->have_chunks && a->chunks[1] > channels) {
		fprintf(stderr, "nwbzarr: --chunks %llu,%llu: more columns than the %llu channels\n",
			(unsigned long long)a->chunks[0], (unsigned long long)a->chunks[1],
			(unsigned long long)channels);
		rc = 2;
		goto done;
	}

	if (s && ((s->n_electrodes && s->n_electrodes != channels) ||
		  (s->channel_conversion && s->n_channel_conversion != channels))) {
		fprintf(stderr, "nwbzarr: %s: %zu electrodes and %zu channel_conversion values "
			"for %llu channels (each must be absent or one per channel)\n", a->meta,
			s->n_electrodes, s->channel_conversion ? s->n_channel_conversion : 0,
			(unsigned long long)channels);
		goto done;
	}
	mtime_iso(start, sizeof start, stream ? "" : a->input); /* a stream starts now */
	snprintf(desc, sizeof desc, "%s %s by nwbzarr", stream ? "recorded from" : "converted from",
		 in_name);
	nzc_file_opts(&o, a, s, start, desc, &comp);
	o.identifier = PICK(a->identifier, PICK(s ? s->file.identifier : NULL, in_name));
	if ((rc = nzc_check_request(a, &o)) != 0)
		goto done;
	rc = 1;
	if (nranks == 1)
		o.progress = nzc_progress_for(a->quiet, a->json);
	o.resume_info = &ri;
	o.write_stats = &ws;
	o.skip_series_data = o.skip_finalise = nranks > 1;

	nzc_catch_signals(1);

	if (nranks > 1 && nzc_mpi_agree(nzc_mpi_test_fail("open"), "open") < 0)
		goto done;
	/* The stream before the output: a FIFO nobody writes to leaves no file. */
	if (stream && nzc_open_stream(&fd, a->input, &g_cancel) < 0)
		goto done;
	t0 = now_s();
	if (rank == 0 && nz_nwb_create(&f, a->output, &o) < 0)
		goto fail;
	have_sub = nzc_subject(&sub, a, s);
	if (f && ((have_sub && nz_nwb_set_subject(f, &sub) < 0) || add_probe(f, s, a, channels) < 0))
		goto fail;

	if (s)
		so = s->series;
	so.name = PICK(so.name, "ElectricalSeries");
	so.description = PICK(so.description, "raw recording");
	so.rate = rate;
	if (a->conversion > 0)
		so.conversion = a->conversion;
	else if (!(so.conversion > 0))
		so.conversion = found && info.conversion > 0 ? info.conversion : 1.0;
	if (!(a->conversion > 0) && !(found && info.conversion > 0) && !(s && s->series.conversion > 0) &&
	    rank == 0)
		fprintf(stderr, "nwbzarr: note: no gain is known (no --conversion, side-car gain or "
			"session conversion): data are stored as raw counts with conversion 1.0, which "
			"nwbinspector's check_electrical_series_unscaled_data reports\n");
	if (s && s->channel_conversion)
		so.channel_conversion = s->channel_conversion;
	so.chunks = a->have_chunks ? a->chunks : NULL;
	so.shards = a->have_shards ? a->shards : NULL;
	if (stream) {
		if ((rc = nzc_record_stream(&f, fd, &so, dtype, channels, a, &g_cancel, &frames)) != 0) {
			/* the recording did not start: as any failed convert */
			nzc_abandon_output(&f, a->output, a->overwrite);
			goto done;
		}
		rc = nzc_report(a, frames, channels, (size_t)(dtype[2] - '0'), rate,
				now_s() - t0, NULL, 0) < 0;
		goto done;
	}
	if (f && (nz_nwb_add_electrical_series(f, &so, src) < 0 || nz_nwb_close(f) < 0))
		goto fail;
	snprintf(part.array, sizeof part.array, "acquisition/%s/data", so.name);
	part.a = a;
	part.src = src;
	if (nranks > 1 && nzc_mpi_finish(a->output, 0, write_part, &part) < 0) {
		if (rank == 0)
			say_incomplete(a->output);
		goto done;
	}
	if (rank != 0) {
		rc = 0;
		goto done;
	}
	elapsed = now_s() - t0;
	if (a->resume && !a->quiet && nranks == 1) /* under mpirun: counts are per rank */
		fprintf(stderr, "nwbzarr: resumed '%s': %llu chunks kept, %llu corrupt rewritten, "
			"%llu written, %llu temporary files removed\n", a->output,
			(unsigned long long)ri.chunks_kept, (unsigned long long)ri.chunks_repaired,
			(unsigned long long)ri.chunks_written, (unsigned long long)ri.temp_removed);
	rc = nzc_report(a, frames, channels, nz_source_itemsize(src), rate, elapsed,
			found ? info.source_path : NULL, ws.jobs) < 0;
	goto done;
fail:
	nzc_progress_end();
	rc = nzc_fail();
	nzc_abandon_output(&f, a->output, a->overwrite);
done:
	/* A rank that stopped early still takes part in the remaining
	 * exchanges, as failed: no rank waits for it. */
	nzc_mpi_leave(NZC_MPI_PHASES);
	nzc_mpi_finalize();
	nzc_catch_signals(0);
	nz_nwb_free(f);
	nz_source_free(src);
	nz_session_free(s);
	if (fd > 0)
		close(fd);
	return rc;
}
