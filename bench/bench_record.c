/* bench_record: K simultaneous streams recorded into one NWB-Zarr file
 * through the public record API (include/nwbzarr/record.h), paced in real
 * time, while a reader measures when appended frames become readable.
 *
 *   bench_record IN.raw K SECONDS OUT.nwb.zarr [FLUSH_S=1]
 *
 * IN.raw is row-major int16 of 384 channels (bench/gen_ephys): each stream
 * cycles through it from its own offset, so compressors see ephys-like
 * data and nothing is generated inside the timed loop. Each stream is one
 * thread appending 10 ms blocks (300 frames of 384 channels, 30 kHz:
 * 23 MB/s) at the times a clock gives; a stream that falls behind appends
 * at once and its lag (now - scheduled time) is the backlog. The reader
 * thread opens the store as readers do (the consolidated metadata, every
 * 50 ms) and, for every block the published shapes newly cover, takes the
 * time since its append returned: the append-to-readable delay.
 *
 * Prints one CSV line (header with --header as argv[1]); in_MBps and ratio
 * count the bytes really appended (a stream that falls behind stops at the
 * end of the run: 23 MB/s x K when every stream keeps up):
 *   k,seconds,in_MBps,lag_q1_s,lag_q4_s,lag_end_s,keeps_up,delay_p50_s,
 *   delay_p99_s,delay_max_s,close_s,rss_peak_MiB,rss_per_series_MiB,
 *   stored_MB,ratio
 * keeps_up is 1 when the lag at the end is under 1 s and the last quarter's
 * worst lag exceeds the first quarter's by under 0.5 s (no growing
 * backlog). RSS counts the recording's memory above what the process held
 * before it started (the input buffer included in that baseline). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>

#include "nwbzarr.h"

#define CH 384
#define RATE 30000
#define BLOCK 300
#define MAX_K 64

static int16_t *input;
static uint64_t in_frames;
static double t0;
static int k_streams;
static uint64_t blocks;       /* per stream */
static volatile int stop_reader;

typedef struct stream {
	nz_record_series *s;
	int index;
	uint64_t *done_ns;    /* blocks: when the append of each returned */
	double lag_q1, lag_q4, lag_end;
	int err;
	char msg[NZ_ERROR_MSG_MAX];
} stream;

static stream streams[MAX_K];

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void sleep_until(double t)
{
	struct timespec ts;
	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) != 0)
		;
}

static long rss_kib(void)
{
	struct rusage u;
	getrusage(RUSAGE_SELF, &u);
	return u.ru_maxrss;
}

static void *appender(void *arg)
{
	stream *st = arg;
	uint64_t at = (uint64_t)st->index * (in_frames / (uint64_t)k_streams) / BLOCK * BLOCK;
	for (uint64_t b = 0; b < blocks; b++) {
		double due = t0 + (double)(b * BLOCK) / RATE, lag;
		sleep_until(due);
		lag = now() - due;
		/* A stream that cannot keep up stops at the run's end (plus 2 s),
		 * its lag then the backlog: the step stays SECONDS long. */
		if (now() > t0 + (double)blocks * BLOCK / RATE + 2.0) {
			st->lag_end = lag;
			st->lag_q4 = lag > st->lag_q4 ? lag : st->lag_q4;
			break;
		}
		if (b < blocks / 4 && lag > st->lag_q1)
			st->lag_q1 = lag;
		if (b >= blocks - blocks / 4 && lag > st->lag_q4)
			st->lag_q4 = lag;
		st->lag_end = lag;
		if (at + BLOCK > in_frames)
			at = 0;
		if (nz_record_append(st->s, input + at * CH, BLOCK, NULL) < 0) {
			st->err = 1;
			snprintf(st->msg, sizeof st->msg, "%s", nz_error_last()->message);
			return NULL;
		}
		__atomic_store_n(&st->done_ns[b], (uint64_t)(now() * 1e9), __ATOMIC_RELEASE);
		at += BLOCK;
	}
	return NULL;
}

static double *delays;
static size_t n_delays;

static void *reader(void *arg)
{
	const char *path = arg;
	uint64_t seen[MAX_K] = {0}; /* blocks covered so far, per stream */
	nz_store *store = NULL;
	if (nz_store_open_dir(&store, path, 0) < 0)
		return NULL;
	while (!stop_reader) {
		nz_hierarchy *h = NULL;
		double t;
		if (nz_hierarchy_open(&h, store) == 0) {
			t = now();
			for (int k = 0; k < k_streams; k++) {
				char key[64];
				nz_array *a = NULL;
				snprintf(key, sizeof key, "acquisition/probe%d/data", k);
				if (nz_hierarchy_array_open(&a, h, key) < 0)
					continue;
				uint64_t covered = nz_array_shape(a)[0] / BLOCK;
				for (; seen[k] < covered && seen[k] < blocks; seen[k]++) {
					uint64_t ns = __atomic_load_n(&streams[k].done_ns[seen[k]],
								      __ATOMIC_ACQUIRE);
					double d = ns ? t - (double)ns * 1e-9 : 0.0;
					delays[n_delays++] = d > 0 ? d : 0.0;
				}
				nz_array_free(a);
			}
			nz_hierarchy_free(h);
		}
		sleep_until(now() + 0.05);
	}
	nz_store_free(store);
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Bytes stored under `path` (du: the files' allocated size). */
static uint64_t stored_bytes(const char *path)
{
	char cmd[1200];
	unsigned long long kib = 0;
	FILE *p;
	snprintf(cmd, sizeof cmd, "du -sk '%s'", path);
	if ((p = popen(cmd, "r")) && fscanf(p, "%llu", &kib) != 1)
		kib = 0;
	if (p)
		pclose(p);
	return (uint64_t)kib * 1024;
}

int main(int argc, char **argv)
{
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	nz_nwb *f = NULL;
	nz_record *r = NULL;
	pthread_t th[MAX_K], rd;
	double seconds, tclose, q1 = 0, q4 = 0, end = 0;
	long base;
	FILE *in;
	struct stat sb;
	int keeps = 1, rc = 1;
	uint64_t stored;
	if (argc > 1 && strcmp(argv[1], "--header") == 0) {
		puts("k,seconds,in_MBps,lag_q1_s,lag_q4_s,lag_end_s,keeps_up,delay_p50_s,delay_p99_s,"
		     "delay_max_s,close_s,rss_peak_MiB,rss_per_series_MiB,stored_MB,ratio");
		return 0;
	}
	if (argc < 5) {
		fprintf(stderr, "usage: bench_record IN.raw K SECONDS OUT.nwb.zarr [FLUSH_S]\n");
		return 2;
	}
	k_streams = atoi(argv[2]);
	seconds = atof(argv[3]);
	if (k_streams < 1 || k_streams > MAX_K || !(seconds > 0)) {
		fprintf(stderr, "bench_record: K must be 1..%d and SECONDS > 0\n", MAX_K);
		return 2;
	}
	if (stat(argv[1], &sb) != 0 || !(in = fopen(argv[1], "rb"))) {
		perror(argv[1]);
		return 1;
	}
	in_frames = (uint64_t)sb.st_size / (CH * 2);
	if (in_frames < BLOCK || !(input = malloc((size_t)in_frames * CH * 2)) ||
	    fread(input, CH * 2, (size_t)in_frames, in) != in_frames) {
		fprintf(stderr, "bench_record: cannot read %s (at least %d frames)\n", argv[1], BLOCK);
		return 1;
	}
	fclose(in);
	blocks = (uint64_t)(seconds * RATE / BLOCK);
	if (!(delays = calloc((size_t)(blocks * (uint64_t)k_streams) + 1, sizeof *delays)))
		return 1;
	for (int k = 0; k < k_streams; k++)
		if (!(streams[k].done_ns = calloc((size_t)blocks, sizeof(uint64_t))))
			return 1;
	base = rss_kib();

	o.identifier = "bench-record";
	o.session_description = "K simultaneous 384-channel streams";
	o.session_start_time = "2024-05-06T10:00:00+02:00";
	o.overwrite = 1;
	e.group = "probes";
	ro.flush_interval = argc > 5 ? atof(argv[5]) : 1.0;
	if (nz_nwb_create(&f, argv[4], &o) < 0 || nz_nwb_add_device(f, "probes", "probes", NULL) < 0 ||
	    nz_nwb_add_electrode_group(f, "probes", "every probe", "CA1", "probes") < 0 ||
	    nz_nwb_add_electrodes(f, &e, (size_t)CH * (size_t)k_streams, 1) < 0 ||
	    nz_record_begin(&r, f, &ro) < 0)
		goto fail;
	f = NULL;
	for (int k = 0; k < k_streams; k++) {
		nz_record_series_opts so = NZ_RECORD_SERIES_OPTS_INIT;
		int64_t rows[CH];
		char name[32];
		for (int c = 0; c < CH; c++)
			rows[c] = (int64_t)k * CH + c;
		snprintf(name, sizeof name, "probe%d", k);
		so.series.name = name;
		so.series.rate = RATE;
		so.series.electrodes = rows;
		so.dtype = "<i2";
		so.channels = CH;
		streams[k].index = k;
		if (nz_record_add_series(&streams[k].s, r, &so) < 0)
			goto fail;
	}
	t0 = now() + 0.05;
	for (int k = 0; k < k_streams; k++)
		pthread_create(&th[k], NULL, appender, &streams[k]);
	pthread_create(&rd, NULL, reader, argv[4]);
	for (int k = 0; k < k_streams; k++)
		pthread_join(th[k], NULL);
	/* The last flush's delay is measured too. */
	sleep_until(now() + ro.flush_interval + 0.5);
	stop_reader = 1;
	pthread_join(rd, NULL);
	for (int k = 0; k < k_streams; k++) {
		if (streams[k].err) {
			fprintf(stderr, "probe%d: %s\n", k, streams[k].msg);
			goto done;
		}
		if (streams[k].lag_q1 > q1)
			q1 = streams[k].lag_q1;
		if (streams[k].lag_q4 > q4)
			q4 = streams[k].lag_q4;
		if (streams[k].lag_end > end)
			end = streams[k].lag_end;
	}
	tclose = now();
	if (nz_record_close(r) < 0)
		goto fail;
	tclose = now() - tclose;
	keeps = end < 1.0 && q4 - q1 < 0.5;
	qsort(delays, n_delays, sizeof *delays, cmp_double);
	stored = stored_bytes(argv[4]);
	{
		double raw = 0; /* what was appended: a stream behind stops early */
		for (int k = 0; k < k_streams; k++)
			raw += (double)nz_record_series_frames(streams[k].s) * CH * 2;
		long peak = rss_kib() - base;
		printf("%d,%.0f,%.1f,%.3f,%.3f,%.3f,%d,%.3f,%.3f,%.3f,%.3f,%.1f,%.1f,%.1f,%.2f\n",
		       k_streams, seconds, raw / seconds / 1e6, q1, q4, end, keeps,
		       n_delays ? delays[n_delays / 2] : -1.0,
		       n_delays ? delays[(size_t)((double)n_delays * 0.99)] : -1.0,
		       n_delays ? delays[n_delays - 1] : -1.0, tclose, (double)peak / 1024.0,
		       (double)peak / 1024.0 / k_streams, (double)stored / 1e6,
		       stored ? raw / (double)stored : 0.0);
		if (n_delays < (size_t)(blocks * (uint64_t)k_streams) / 2)
			fprintf(stderr, "bench_record: the reader saw only %zu of %llu blocks\n",
				n_delays, (unsigned long long)(blocks * (uint64_t)k_streams));
	}
	rc = 0;
	goto done;
fail:
	fprintf(stderr, "bench_record: %s\n", nz_error_last()->message);
done:
	nz_record_free(r);
	nz_nwb_free(f);
	free(input);
	return rc;
}
