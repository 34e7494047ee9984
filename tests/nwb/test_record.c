/* The recording API (include/nwbzarr/record.h) on real stores:
 * - 4 series appended from 4 threads in blocks of changing sizes (one
 *   planar, one with timestamps, one with small chunks) while the main
 *   thread flushes; after every flush a separate reader opens the store,
 *   finds the consolidated metadata equal to the documents, every series at
 *   least as long as what was appended before the flush, and every
 *   published frame equal to the input; after close: complete, exact.
 *   After every flush the consolidated metadata the recorder kept (without
 *   listing the store) is byte for byte what nz_consolidate writes.
 * - kill -9 of a recording process after a flush and more appends: the
 *   store opens with the flushed frames; nz_record_repair finalises it and
 *   says how many; a second repair finds it complete.
 * - repair of a recording that stored shards past its last flush: every
 *   object of every series is then byte for byte that of a recording of
 *   the flushed frames closed normally (nothing outside the shape).
 * - the default layout on v3: inner chunks of about 4 MiB in shards of
 *   about 1 s (timestamps too), overridable; v2 is not sharded.
 * - misuse: wrong timestamps, append after close, repair of a convert.
 * - the allocation-failure sweep over begin/add/append/flush/close. */
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oom.h"
#include "test.h"

#define NSERIES 4
#define CH 8

static char dir[1000];

/* The value of frame i, channel c of series k (fits every dtype used). */
static int32_t value(int k, uint64_t i, uint64_t c)
{
	return (int32_t)((i * 7 + c * 131 + (uint64_t)k * 1000) % 30011) - 15000;
}

static double stamp(uint64_t i)
{
	return 10.0 + (double)i / 1000.0;
}

typedef struct spec {
	const char *name, *dtype;
	uint64_t channels;
	int electrical, timestamps, planar;
	uint64_t chunk; /* frames per chunk; 0 = default */
} spec;

static const spec specs[NSERIES] = {
	{"probe0", "<i2", CH, 1, 0, 0, 0},
	{"probe1", "<i2", CH, 1, 0, 0, 100},
	{"sync", "<f4", 0, 0, 1, 0, 64},
	{"aux", "<i4", 3, 0, 0, 1, 50},
};

static nz_nwb *make_file(const char *path)
{
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb_electrode e = NZ_NWB_ELECTRODE_INIT;
	nz_nwb *f = NULL;
	int err;
	o.identifier = "rec";
	o.session_description = "recording test";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.object_id_seed = 7;
	if ((err = nz_nwb_create(&f, path, &o)) < 0)
		return NULL;
	e.group = "shank0";
	if (nz_nwb_add_device(f, "probe", "a probe", "maker") < 0 ||
	    nz_nwb_add_electrode_group(f, "shank0", "shank", "CA1", "probe") < 0 ||
	    nz_nwb_add_electrodes(f, &e, CH, 1) < 0) {
		nz_nwb_free(f);
		return NULL;
	}
	return f;
}

static int add(nz_record_series **s, nz_record *r, int k)
{
	nz_record_series_opts o = NZ_RECORD_SERIES_OPTS_INIT;
	uint64_t chunks[2] = {specs[k].chunk, specs[k].channels};
	o.series.name = specs[k].name;
	o.series.rate = 1000.0;
	o.series.unit = "V";
	o.series.chunks = specs[k].chunk ? chunks : NULL;
	o.electrical = specs[k].electrical;
	o.dtype = specs[k].dtype;
	o.channels = specs[k].channels;
	o.timestamps = specs[k].timestamps;
	return nz_record_add_series(s, r, &o);
}

static size_t itemsize(int k)
{
	return (size_t)(specs[k].dtype[2] - '0');
}

static void put_value(void *dst, int k, int32_t v)
{
	if (specs[k].dtype[1] == 'f') {
		float x = (float)v;
		memcpy(dst, &x, 4);
	} else if (itemsize(k) == 2) {
		int16_t x = (int16_t)v;
		memcpy(dst, &x, 2);
	} else {
		memcpy(dst, &v, 4);
	}
}

/* Append frames [from, from + n) of series k. */
static int append(nz_record_series *s, int k, uint64_t from, uint64_t n)
{
	uint64_t ch = specs[k].channels ? specs[k].channels : 1;
	size_t sz = itemsize(k);
	unsigned char *buf = malloc((size_t)(n * ch) * sz + 1);
	double *ts = malloc((size_t)n * sizeof *ts + 1);
	const void *planes[8];
	int err;
	ASSERT(buf && ts);
	for (uint64_t i = 0; i < n; i++) {
		ts[i] = stamp(from + i);
		for (uint64_t c = 0; c < ch; c++)
			put_value(buf + (specs[k].planar ? (size_t)(c * n + i) : (size_t)(i * ch + c)) * sz,
				  k, value(k, from + i, c));
	}
	for (uint64_t c = 0; c < ch; c++)
		planes[c] = buf + (size_t)(c * n) * sz;
	err = specs[k].planar ? nz_record_append_planar(s, planes, n, NULL)
			      : nz_record_append(s, buf, n, specs[k].timestamps ? ts : NULL);
	free(buf);
	free(ts);
	return err;
}

/* Every series of the store at `path` holds frames equal to the input;
 * returns the length of series k in len[k] (at least min[k]). */
static void check_store(const char *path, const uint64_t *min, uint64_t *len, int complete)
{
	nz_store *st;
	char key[256];
	ASSERT_OK(nz_store_open_dir(&st, path, 0));
	ASSERT_OK(nz_metadata_check(st));
	ASSERT_EQ_INT(nz_store_exists(st, NZ_INCOMPLETE_MARKER), !complete);
	for (int k = 0; k < NSERIES; k++) {
		nz_array *a;
		uint64_t ch = specs[k].channels ? specs[k].channels : 1, start[2] = {0, 0}, count[2];
		unsigned char *got, *want;
		snprintf(key, sizeof key, "acquisition/%s/data", specs[k].name);
		ASSERT_OK(nz_array_open(&a, st, key));
		len[k] = nz_array_shape(a)[0];
		if (len[k] < min[k])
			NZ__FAIL("series %s: %" PRIu64 " frames published, %" PRIu64 " appended before "
				 "the flush", specs[k].name, len[k], min[k]);
		count[0] = len[k];
		count[1] = ch;
		got = malloc((size_t)(len[k] * ch) * itemsize(k) + 1);
		want = malloc((size_t)(len[k] * ch) * itemsize(k) + 1);
		ASSERT(got && want);
		for (uint64_t i = 0; i < len[k]; i++)
			for (uint64_t c = 0; c < ch; c++)
				put_value(want + (size_t)(i * ch + c) * itemsize(k), k, value(k, i, c));
		ASSERT_OK(nz_array_read_region(a, start, count, got, (size_t)(len[k] * ch) * itemsize(k)));
		ASSERT_MEM_EQ(got, want, (size_t)(len[k] * ch) * itemsize(k));
		nz_array_free(a);
		free(got);
		free(want);
		if (specs[k].timestamps) {
			double *t = malloc((size_t)len[k] * sizeof *t + 1);
			snprintf(key, sizeof key, "acquisition/%s/timestamps", specs[k].name);
			ASSERT_OK(nz_array_open(&a, st, key));
			ASSERT_EQ_U64(nz_array_shape(a)[0], len[k]);
			ASSERT_OK(nz_array_read_region(a, start, count, t, (size_t)len[k] * sizeof *t));
			for (uint64_t i = 0; i < len[k]; i++)
				if (t[i] != stamp(i))
					NZ__FAIL("%s timestamp %" PRIu64 ": %g", specs[k].name, i, t[i]);
			nz_array_free(a);
			free(t);
		}
	}
	nz_store_free(st);
}

/* The recorder's consolidated metadata is what nz_consolidate writes now. */
static void consolidated_as_full(const char *path)
{
	nz_store *st;
	void *kept, *full;
	size_t nkept, nfull;
	ASSERT_OK(nz_store_open_dir(&st, path, NZ_STORE_WRITE));
	ASSERT_OK(nz_store_get(st, "zarr.json", &kept, &nkept));
	ASSERT_OK(nz_consolidate(st));
	ASSERT_OK(nz_store_get(st, "zarr.json", &full, &nfull));
	ASSERT_EQ_U64(nkept, nfull);
	ASSERT_MEM_EQ(kept, full, nfull);
	nz_free(kept);
	nz_free(full);
	nz_store_free(st);
}

/* ---- 4 threads, flushes while they append ---------------------------------- */

typedef struct worker {
	nz_record_series *s;
	int k;
	uint64_t total;
	int err;
} worker;

/* The appenders stay at most a few blocks ahead of the flushes, so that
 * flushes see every series part-way whatever the machine's speed. */
static pthread_mutex_t pace_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t pace_cv = PTHREAD_COND_INITIALIZER;
static int pace_flushes, pace_done;

static void pace_flushed(int done)
{
	pthread_mutex_lock(&pace_mu);
	pace_flushes++;
	pace_done = done;
	pthread_cond_broadcast(&pace_cv);
	pthread_mutex_unlock(&pace_mu);
}

static void *appender(void *arg)
{
	worker *w = arg;
	static const uint64_t sizes[] = {1, 7, 250, 33, 1000, 3, 517};
	uint64_t at = 0;
	for (int i = 0; at < w->total && w->err == 0; i++) {
		uint64_t n = sizes[(i + w->k) % 7];
		pthread_mutex_lock(&pace_mu);
		while (!pace_done && pace_flushes < i / 4)
			pthread_cond_wait(&pace_cv, &pace_mu);
		pthread_mutex_unlock(&pace_mu);
		if (n > w->total - at)
			n = w->total - at;
		w->err = append(w->s, w->k, at, n);
		at += n;
	}
	return NULL;
}

static void test_threads(void)
{
	char path[1100];
	nz_nwb *f;
	nz_record *r;
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	worker w[NSERIES];
	pthread_t th[NSERIES];
	uint64_t min[NSERIES], len[NSERIES], last[NSERIES] = {0};
	int flushes = 0, grew = 0, running;

	snprintf(path, sizeof path, "%s/threads.nwb.zarr", dir);
	ASSERT((f = make_file(path)) != NULL);
	ro.flush_interval = -1;        /* the test flushes */
	ro.memory_budget = 64 << 10;   /* back-pressure: a few units */
	ASSERT_OK(nz_record_begin(&r, f, &ro));
	for (int k = 0; k < NSERIES; k++) {
		ASSERT_OK(add(&w[k].s, r, k));
		w[k].k = k;
		w[k].total = 20000 + (uint64_t)k * 1111;
		w[k].err = 0;
	}
	memset(min, 0, sizeof min);
	check_store(path, min, len, 0); /* opens before any frame */
	for (int k = 0; k < NSERIES; k++)
		ASSERT(pthread_create(&th[k], NULL, appender, &w[k]) == 0);
	do {
		running = 0;
		for (int k = 0; k < NSERIES; k++) {
			min[k] = nz_record_series_frames(w[k].s);
			running |= min[k] < w[k].total;
		}
		ASSERT_OK(nz_record_flush(r));
		check_store(path, min, len, 0);
		consolidated_as_full(path);
		for (int k = 0; k < NSERIES; k++) {
			grew += len[k] > last[k] && len[k] < w[k].total;
			last[k] = len[k];
		}
		flushes++;
		pace_flushed(0);
	} while (running);
	pace_flushed(1);
	for (int k = 0; k < NSERIES; k++) {
		pthread_join(th[k], NULL);
		ASSERT_OK(w[k].err);
	}
	ASSERT_OK(nz_record_close(r));
	ASSERT_ERR(NZ_EINVAL, append(w[0].s, 0, 0, 1));
	nz_record_free(r);
	for (int k = 0; k < NSERIES; k++)
		min[k] = w[k].total;
	check_store(path, min, len, 1);
	for (int k = 0; k < NSERIES; k++)
		ASSERT_EQ_U64(len[k], w[k].total);
	printf("threads: %d flushes, %d saw a series part-way\n", flushes, grew);
	ASSERT(grew >= NSERIES);
	ASSERT_EQ_INT(nz_test_temp_files(path), 0);
}

/* ---- kill -9, then repair --------------------------------------------------- */

static void test_kill(void)
{
	char path[1100];
	int pipefd[2], status;
	uint64_t flushed[NSERIES], len[NSERIES];
	nz_record_repair_info info;
	pid_t pid;

	snprintf(path, sizeof path, "%s/killed.nwb.zarr", dir);
	ASSERT(pipe(pipefd) == 0);
	pid = fork();
	ASSERT(pid >= 0);
	if (pid == 0) {
		nz_nwb *f = make_file(path);
		nz_record *r;
		nz_record_series *s[NSERIES];
		nz_record_opts ro = NZ_RECORD_OPTS_INIT;
		ro.flush_interval = -1;
		if (!f || nz_record_begin(&r, f, &ro) < 0)
			_exit(2);
		for (int k = 0; k < NSERIES; k++)
			if (add(&s[k], r, k) < 0 || append(s[k], k, 0, 3000 + (uint64_t)k * 17) < 0)
				_exit(3);
		if (nz_record_flush(r) < 0)
			_exit(4);
		/* More frames, never flushed: the repair must not show them. */
		for (int k = 0; k < NSERIES; k++)
			if (append(s[k], k, 3000 + (uint64_t)k * 17, 500) < 0)
				_exit(5);
		if (write(pipefd[1], "x", 1) != 1)
			_exit(6);
		pause();
		_exit(7);
	}
	close(pipefd[1]);
	{
		char c;
		ASSERT(read(pipefd[0], &c, 1) == 1);
	}
	close(pipefd[0]);
	kill(pid, SIGKILL);
	ASSERT(waitpid(pid, &status, 0) == pid);
	ASSERT(WIFSIGNALED(status));
	for (int k = 0; k < NSERIES; k++)
		flushed[k] = 3000 + (uint64_t)k * 17;
	check_store(path, flushed, len, 0);
	for (int k = 0; k < NSERIES; k++)
		ASSERT_EQ_U64(len[k], flushed[k]);
	ASSERT_OK(nz_record_repair(&info, path, 1));
	ASSERT_EQ_U64(info.series, NSERIES);
	ASSERT_EQ_U64(info.frames, 4 * 3000 + 17 * 6);
	check_store(path, flushed, len, 1);
	for (int k = 0; k < NSERIES; k++)
		ASSERT_EQ_U64(len[k], flushed[k]);
	ASSERT_ERR(NZ_EEXISTS, nz_record_repair(&info, path, 0));
}

/* ---- repair leaves exactly the file ----------------------------------------- */

typedef struct keylist {
	char **k;
	size_t n, cap;
} keylist;

static int add_key(const char *key, void *payload)
{
	keylist *l = payload;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		ASSERT((l->k = realloc(l->k, l->cap * sizeof *l->k)) != NULL);
	}
	ASSERT((l->k[l->n++] = strdup(key)) != NULL);
	return 0;
}

static void keylist_free(keylist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->k[i]);
	free(l->k);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* 1 when the objects under `prefix` differ between stores a and b (keys or
 * bytes). */
static int objects_differ(nz_store *a, nz_store *b, const char *prefix)
{
	keylist la = {0}, lb = {0};
	int differ = 0;
	ASSERT_OK(nz_store_list(a, prefix, add_key, &la));
	ASSERT_OK(nz_store_list(b, prefix, add_key, &lb));
	ASSERT(la.n > 0);
	qsort(la.k, la.n, sizeof *la.k, cmp_str);
	qsort(lb.k, lb.n, sizeof *lb.k, cmp_str);
	differ = la.n != lb.n;
	for (size_t i = 0; i < la.n && !differ; i++) {
		void *va, *vb;
		size_t na, nb;
		if ((differ = strcmp(la.k[i], lb.k[i]) != 0))
			break;
		ASSERT_OK(nz_store_get(a, la.k[i], &va, &na));
		ASSERT_OK(nz_store_get(b, lb.k[i], &vb, &nb));
		differ = na != nb || memcmp(va, vb, na) != 0;
		nz_free(va);
		nz_free(vb);
	}
	keylist_free(&la);
	keylist_free(&lb);
	return differ;
}

/* Record `flushed` frames per series, then (when `more`) flush, append
 * `more` frames and free without closing, as a dying writer leaves it. */
static void record_prefix(const char *path, const uint64_t *flushed, uint64_t more)
{
	nz_nwb *f = make_file(path);
	nz_record *r;
	nz_record_series *s[NSERIES];
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	ro.flush_interval = -1;
	ASSERT(f != NULL);
	ASSERT_OK(nz_record_begin(&r, f, &ro));
	for (int k = 0; k < NSERIES; k++) {
		ASSERT_OK(add(&s[k], r, k));
		ASSERT_OK(append(s[k], k, 0, flushed[k]));
	}
	if (!more) {
		ASSERT_OK(nz_record_close(r));
		nz_record_free(r);
		return;
	}
	ASSERT_OK(nz_record_flush(r));
	for (int k = 0; k < NSERIES; k++)
		ASSERT_OK(append(s[k], k, flushed[k], more));
	nz_record_free(r); /* the workers store the full shards queued */
}

static void test_trim(void)
{
	char path[1100], ref[1100], prefix[200];
	uint64_t flushed[NSERIES], len[NSERIES];
	nz_store *a, *b;
	int before = 0;
	snprintf(path, sizeof path, "%s/trim.nwb.zarr", dir);
	snprintf(ref, sizeof ref, "%s/trim-ref.nwb.zarr", dir);
	for (int k = 0; k < NSERIES; k++)
		flushed[k] = 3000 + (uint64_t)k * 17;
	/* 1500 more frames complete the shard of frame 3000 (1000 frames
	 * here): stored past the published length. */
	record_prefix(path, flushed, 1500);
	record_prefix(ref, flushed, 0);
	ASSERT_OK(nz_store_open_dir(&a, path, 0));
	ASSERT_OK(nz_store_open_dir(&b, ref, 0));
	for (int k = 0; k < NSERIES; k++) {
		snprintf(prefix, sizeof prefix, "acquisition/%s/data/", specs[k].name);
		before += objects_differ(a, b, prefix);
	}
	ASSERT(before >= 2); /* the sharded series held more than their shape */
	ASSERT_OK(nz_record_repair(NULL, path, 0));
	check_store(path, flushed, len, 1);
	for (int k = 0; k < NSERIES; k++) {
		snprintf(prefix, sizeof prefix, "acquisition/%s/data/", specs[k].name);
		if (objects_differ(a, b, prefix))
			NZ__FAIL("%s: after repair, the objects differ from a closed recording's", prefix);
		snprintf(prefix, sizeof prefix, "acquisition/%s/timestamps/", specs[k].name);
		if (specs[k].timestamps && objects_differ(a, b, prefix))
			NZ__FAIL("%s: after repair, the objects differ from a closed recording's", prefix);
	}
	nz_store_free(a);
	nz_store_free(b);
}

/* ---- the default layout ------------------------------------------------------- */

static void expect_layout(nz_store *st, const char *key, uint64_t chunk, uint64_t shard)
{
	nz_array *a;
	ASSERT_OK(nz_array_open(&a, st, key));
	ASSERT_EQ_U64(nz_array_chunks(a)[0], chunk);
	ASSERT_EQ_U64(nz_array_shards(a)[0], shard);
	if (nz_array_ndim(a) == 2) {
		ASSERT_EQ_U64(nz_array_chunks(a)[1], 384);
		ASSERT_EQ_U64(nz_array_shards(a)[1], 384);
	}
	nz_array_free(a);
}

static void layout(int zarr_format)
{
	char path[1100];
	nz_nwb_opts o = NZ_NWB_OPTS_INIT;
	nz_nwb *f;
	nz_record *r;
	nz_record_series *s[3];
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	nz_store *st;
	uint64_t shards[2] = {3 * 5461, 384};
	static const char *names[3] = {"ap", "stamped", "set"};
	snprintf(path, sizeof path, "%s/layout%d.nwb.zarr", dir, zarr_format);
	o.identifier = "layout";
	o.session_description = "recording layout";
	o.session_start_time = "2024-01-02T03:04:05Z";
	o.zarr_format = zarr_format;
	ASSERT_OK(nz_nwb_create(&f, path, &o));
	ro.flush_interval = -1;
	ASSERT_OK(nz_record_begin(&r, f, &ro));
	for (int i = 0; i < 3; i++) {
		nz_record_series_opts so = NZ_RECORD_SERIES_OPTS_INIT;
		so.series.name = names[i];
		so.series.rate = 30000.0;
		so.series.unit = "V";
		so.series.shards = i == 2 ? shards : NULL;
		so.electrical = 0;
		so.dtype = "<i2";
		so.channels = 384;
		so.timestamps = i == 1;
		ASSERT_OK(nz_record_add_series(&s[i], r, &so));
	}
	ASSERT_OK(nz_record_close(r));
	nz_record_free(r);
	ASSERT_OK(nz_store_open_dir(&st, path, 0));
	/* 4 MiB of 384 int16 channels: 5461 frames; 6 of them: 1.09 s. */
	expect_layout(st, "acquisition/ap/data", 5461, zarr_format == 3 ? 6 * 5461 : 5461);
	expect_layout(st, "acquisition/stamped/data", 5461, zarr_format == 3 ? 6 * 5461 : 5461);
	expect_layout(st, "acquisition/stamped/timestamps", 5461,
		      zarr_format == 3 ? 6 * 5461 : 5461);
	if (zarr_format == 3)
		expect_layout(st, "acquisition/set/data", 5461, 3 * 5461);
	nz_store_free(st);
}

static void test_layout(void)
{
	layout(3);
	layout(2);
}

/* ---- misuse ------------------------------------------------------------------ */

static void test_misuse(void)
{
	char path[1100];
	nz_nwb *f;
	nz_record *r;
	nz_record_series *s, *again;
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	double t = 1.0;
	int16_t v[CH] = {0};
	snprintf(path, sizeof path, "%s/misuse.nwb.zarr", dir);
	ASSERT((f = make_file(path)) != NULL);
	ro.threads = 99;
	ASSERT_ERR(NZ_EINVAL, nz_record_begin(&r, f, &ro));
	ro.threads = 1;
	ASSERT_OK(nz_record_begin(&r, f, &ro));
	ASSERT_OK(add(&s, r, 0));
	ASSERT_ERR(NZ_EEXISTS, add(&again, r, 0));
	ASSERT_ERR(NZ_EINVAL, nz_record_append(s, v, 1, &t)); /* a rate, not timestamps */
	ASSERT_OK(nz_record_append(s, v, 1, NULL));
	ASSERT_OK(nz_record_close(r));
	ASSERT_ERR(NZ_EINVAL, nz_record_flush(r));
	nz_record_free(r);
	ASSERT_ERR(NZ_EEXISTS, nz_record_repair(NULL, path, 0));
	/* An interrupted ordinary write is not a recording. */
	snprintf(path, sizeof path, "%s/convert.nwb.zarr", dir);
	ASSERT((f = make_file(path)) != NULL);
	nz_nwb_free(f);
	ASSERT_ERR(NZ_EINVAL, nz_record_repair(NULL, path, 0));
	ASSERT_ERR(NZ_ENOTFOUND, nz_record_repair(NULL, "/nonexistent/x.nwb.zarr", 0));
}

/* ---- allocation failures ------------------------------------------------------- */

static int oom_run(void *ctx)
{
	const char *path = ctx;
	nz_nwb *f = make_file(path);
	nz_record *r = NULL;
	nz_record_series *s[NSERIES];
	nz_record_opts ro = NZ_RECORD_OPTS_INIT;
	int err;
	if (!f)
		return nz_error_last()->code;
	ro.flush_interval = -1;
	ro.threads = 2;
	if ((err = nz_record_begin(&r, f, &ro)) < 0) {
		nz_nwb_free(f);
		return err;
	}
	for (int k = 0; k < NSERIES && err == 0; k++)
		if ((err = add(&s[k], r, k)) == 0)
			err = append(s[k], k, 0, 150);
	if (err == 0)
		err = nz_record_flush(r);
	for (int k = 0; k < NSERIES && err == 0; k++)
		err = append(s[k], k, 150, 70);
	if (err == 0)
		err = nz_record_close(r);
	nz_record_free(r);
	return err;
}

static void oom_reset(void *ctx)
{
	nz_test_rm_rf(ctx);
}

static void test_oom(void)
{
	static char path[1100];
	nz_oom_sweep sw = {0};
	snprintf(path, sizeof path, "%s/oom.nwb.zarr", dir);
	sw.what = "record";
	sw.run = oom_run;
	sw.reset = oom_reset;
	sw.failed = nz_oom_nwb_not_complete; /* a failed recording never looks complete */
	sw.ctx = path;
	sw.first = 25;
	sw.points = 60;
	sw.varies = 1;
	nz_oom_run_sweep(&sw);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	snprintf(dir, sizeof dir, "%s/record", tmp ? tmp : "/tmp");
	nz_test_rm_rf(dir);
	ASSERT(mkdir(dir, 0755) == 0);
	test_misuse();
	test_threads();
	test_kill();
	test_trim();
	test_layout();
	test_oom();
	nz_test_rm_rf(dir);
	return 0;
}
