/* `nwbzarr convert`: raw recording -> NWB Zarr with one ElectricalSeries.
 * Everything here goes through the public API; this file only resolves
 * where each setting comes from: flag, else session JSON, else side-car,
 * else default. */
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_mpi.h"

static volatile sig_atomic_t g_cancel;
static int g_bar_open; /* the progress line awaits its newline */

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

/* A one-line progress bar on stderr (only installed on a TTY). */
static int progress(const nz_progress *p, void *ctx)
{
	double mb = p->bytes_done / 1e6, total = p->bytes_total / 1e6;
	double rate = p->elapsed_s > 0 ? mb / p->elapsed_s : 0;
	double eta = rate > 0 ? (total - mb) / rate : 0;
	(void)ctx;
	fprintf(stderr, "\r  %8.1f / %.1f MB  %7.1f MB/s  ETA %4.0fs ", mb, total, rate, eta);
	g_bar_open = p->bytes_done != p->bytes_total;
	if (!g_bar_open)
		fputc('\n', stderr);
	fflush(stderr);
	return 0;
}

static const char *numpy_dtype(const char *name)
{
	static const char *const map[][2] = {
		{"int8", "|i1"},   {"uint8", "|u1"},   {"int16", "<i2"},   {"uint16", "<u2"},
		{"int32", "<i4"},  {"uint32", "<u4"},  {"int64", "<i8"},   {"uint64", "<u8"},
		{"float32", "<f4"}, {"float64", "<f8"},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++)
		if (strcmp(name, map[i][0]) == 0 || strcmp(name, map[i][1]) == 0)
			return map[i][1];
	return NULL;
}

int nzc_compressor_by_name(nz_compressor *c, const char *name, int clevel)
{
	static const struct {
		const char *name, *id, *cname;
		int clevel, shuffle;
	} map[] = {
		{"blosc-lz4", "blosc", "lz4", 5, 1},  {"blosc-zstd", "blosc", "zstd", 5, 1},
		{"zstd", "zstd", NULL, 1, 0},         {"lz4", "lz4", NULL, 1, 0},
		{"zlib", "zlib", NULL, 1, 0},         {"gzip", "gzip", NULL, 1, 0},
		{"none", "none", NULL, 0, 0},
	};
	for (size_t i = 0; i < sizeof map / sizeof *map; i++) {
		if (strcmp(name, map[i].name) != 0)
			continue;
		*c = (nz_compressor)NZ_COMPRESSOR_INIT;
		c->id = map[i].id;
		c->cname = map[i].cname;
		c->clevel = clevel >= 0 ? clevel : map[i].clevel;
		c->shuffle = map[i].shuffle;
		return 0;
	}
	return -1;
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

static void say_incomplete(const char *output)
{
	fprintf(stderr, "nwbzarr: %s'%s' is incomplete; finish it by rerunning the same command "
		"with --resume, or replace it with --overwrite\n", nzc_mpi_tag(), output);
}

/* Print the library's error as the CLI's message; returns exit status 1. */
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
	struct stat st;
	struct sigaction sa;
	char start[40], desc[300];
	const char *dtype;
	uint64_t channels, frames;
	double rate, t0, elapsed;
	int found, rc = 1, have_sub = 0, rank, nranks;
	struct mpi_part part;

	/* Under mpirun every rank runs this function (docs/mpi.md): all resolve
	 * the settings and open the input, rank 0 writes the metadata, each
	 * writes its part of the chunks, rank 0 finalises. */
	if (nzc_mpi_init() < 0)
		return 1;
	rank = nzc_mpi_rank();
	nranks = nzc_mpi_size();
	/* A directory or a FIFO would fail late (after the output exists) or
	 * block forever in open: only files with a size are recordings. */
	if (stat(a->input, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode)) {
		fprintf(stderr, "nwbzarr: %s'%s' is not a regular file\n", nzc_mpi_tag(), a->input);
		goto done;
	}
	if (a->meta && nz_session_load(&s, a->meta) < 0)
		goto fail;
	if ((found = nz_recording_info_probe(&info, a->input)) < 0)
		goto fail;
	channels = a->channels ? a->channels : found ? info.channels : 0;
	rate = a->rate > 0 ? a->rate : found ? info.rate : 0;
	if (!channels || !(rate > 0)) {
		fprintf(stderr, "nwbzarr: %s: %s unknown: pass %s, or put a SpikeGLX .meta or an "
			"Open Ephys structure.oebin beside the recording\n", a->input,
			channels ? "sampling rate" : "channel count", channels ? "--rate" : "--channels");
		goto done;
	}
	dtype = numpy_dtype(a->dtype ? a->dtype : found && info.dtype[0] ? info.dtype : "<i2");
	if (!dtype) {
		fprintf(stderr, "nwbzarr: unknown --dtype '%s' (int16, uint16, int32, float32, ...)\n",
			a->dtype);
		goto done;
	}
	if (a->compressor && nzc_compressor_by_name(&comp, a->compressor, a->clevel) < 0) {
		fprintf(stderr, "nwbzarr: unknown --compressor '%s' (blosc-lz4, blosc-zstd, zstd, "
			"lz4, zlib, gzip, none)\n", a->compressor);
		goto done;
	}
	if (!a->compressor && a->clevel >= 0)
		nzc_compressor_by_name(&comp, "blosc-lz4", a->clevel);
	/* Open the input before touching the output: bad input, no output. */
	ro.dtype = dtype;
	ro.nchannels = channels;
	ro.header_offset = a->offset;
	if (nz_source_open_raw(&src, a->input, &ro) < 0)
		goto fail;
	frames = nz_source_shape(src)[0];
	if (a->have_chunks && a->chunks[1] > channels) {
		fprintf(stderr, "nwbzarr: --chunks %llu,%llu: more columns than the %llu channels\n",
			(unsigned long long)a->chunks[0], (unsigned long long)a->chunks[1],
			(unsigned long long)channels);
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
	if (s)
		o = s->file;
	mtime_iso(start, sizeof start, a->input);
	snprintf(desc, sizeof desc, "converted from %s by nwbzarr", base_name(a->input));
	o.identifier = PICK(a->identifier, PICK(o.identifier, base_name(a->input)));
	o.session_description = PICK(a->session_description, PICK(o.session_description, desc));
	o.session_start_time = PICK(a->session_start_time, PICK(o.session_start_time, start));
	o.file_create_date = PICK(a->create_date, o.file_create_date);
	o.lab = PICK(a->lab, o.lab);
	o.institution = PICK(a->institution, o.institution);
	if (a->experimenter) {
		o.experimenter = &a->experimenter;
		o.n_experimenter = 1;
	}
	o.overwrite = a->overwrite;
	o.jobs = a->jobs;
	o.spec_from = a->spec_from;
	o.object_id_seed = a->seed;
	o.fsync = a->fsync;
	o.resume = a->resume;
	o.resume_info = &ri;
	o.compressor = a->compressor || a->clevel >= 0 ? &comp : NULL;
	o.cancel_flag = &g_cancel;
	if (!a->quiet && !a->json && isatty(STDERR_FILENO) && nranks == 1)
		o.progress = progress;
	o.skip_series_data = o.skip_finalise = nranks > 1;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_sigint;
	sa.sa_flags = SA_RESETHAND; /* a second Ctrl-C kills at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL); /* a batch scheduler's stop: cancel, resumable */

	if (nranks > 1 && nzc_mpi_agree(nzc_mpi_test_fail("open"), "open") < 0)
		goto done;
	t0 = now_s();
	if (rank == 0 && nz_nwb_create(&f, a->output, &o) < 0)
		goto fail;
	if (s && s->has_subject) {
		sub = s->subject;
		have_sub = 1;
	}
	if (a->subject_id || a->species || a->sex || a->age) {
		sub.subject_id = PICK(a->subject_id, sub.subject_id);
		sub.species = PICK(a->species, sub.species);
		sub.sex = PICK(a->sex, sub.sex);
		sub.age = PICK(a->age, sub.age);
		have_sub = 1;
	}
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
	if (s && s->channel_conversion)
		so.channel_conversion = s->channel_conversion;
	so.chunks = a->have_chunks ? a->chunks : NULL;
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
	nzc_report(a, frames, channels, nz_source_itemsize(src), rate, elapsed,
		   found ? info.source_path : NULL);
	rc = 0;
	goto done;
fail:
	if (g_bar_open)
		fputc('\n', stderr);
	rc = nzc_fail();
	if (f)
		say_incomplete(a->output);
done:
	/* A rank that stopped early still takes part in the remaining
	 * exchanges, as failed: no rank waits for it. */
	nzc_mpi_leave(NZC_MPI_PHASES);
	nzc_mpi_finalize();
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	nz_nwb_free(f);
	nz_source_free(src);
	nz_session_free(s);
	return rc;
}
