/* nz_write_arrays: several arrays in one parallel write, through the real
 * Zarr layer and directory stores:
 * - a session-like set (a large sharded v3 array from a raw file, a small
 *   sharded one from memory, an unsharded v3 one from a callback, a 1-d
 *   one, and an unsharded v2 one in another store) written by one
 *   nz_write_arrays call at -j 1, 2 and 3 gives files byte-identical to
 *   writing each array alone with nz_write_array; stats and progress
 *   count every array;
 * - run order: with one worker, every task of the array with the largest
 *   tasks runs first, then the next largest, ties in the order given;
 *   an NZ_SOURCE_LAST source's tasks after all the others';
 * - memory: the workers are the fewest any array allows under the budget
 *   (an array that alone gets 3 workers gets 1 beside one that allows 1);
 * - a failing source stops the write with its array named and leaves no
 *   temporary file; a mismatched source is refused before any data; bad
 *   arguments (no arrays, task_chunks for several) are NZ_EINVAL. */
#include <stdatomic.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sink.h"
#include "test.h"

#define NARR 5

static char tmp[512];

static int16_t value(uint64_t r, uint64_t c, int k)
{
	return (int16_t)((int)(r % 89) * 3 - (int)(c % 7) * 5 + (int)((r * 7 + c * 3 + k) % 13));
}

/* The files under a and b are the same, byte for byte (diff -r), with no
 * temporary file in either; returns the number of files. */
static int compare_trees(const char *a, const char *b)
{
	char cmd[1600];
	FILE *p;
	int n = -1;
	snprintf(cmd, sizeof cmd, "diff -r '%s' '%s'", a, b);
	if (system(cmd) != 0)
		NZ__FAIL("%s and %s differ", a, b);
	ASSERT_EQ_INT(nz_test_temp_files(a), 0);
	ASSERT_EQ_INT(nz_test_temp_files(b), 0);
	snprintf(cmd, sizeof cmd, "find '%s' -type f | wc -l", a);
	ASSERT((p = popen(cmd, "r")) && fscanf(p, "%d", &n) == 1);
	pclose(p);
	return n;
}

/* The arrays: name, shape, chunks, shards (0 = none), store (0 v3, 1 v2),
 * source kind (0 raw file, 1 memory, 2 callback). */
static const struct spec {
	const char *name;
	int ndim;
	uint64_t shape[2], chunks[2], shards[2];
	int store, kind;
} specs[NARR] = {
	{"acquisition/ap/data", 2, {24000, 64}, {1000, 32}, {6000, 64}, 0, 0},
	{"acquisition/lf/data", 2, {2001, 64}, {500, 64}, {1000, 64}, 0, 1},
	{"acquisition/nidq/data", 2, {3001, 3}, {400, 3}, {0, 0}, 0, 2},
	{"acquisition/sync/data", 1, {24000, 0}, {5000, 0}, {0, 0}, 0, 1},
	{"acquisition/v2/data", 2, {5003, 40}, {700, 16}, {0, 0}, 1, 0},
};

typedef struct fixture {
	int16_t *mem[NARR];
	char raw[NARR][700];
	uint64_t fail_row; /* of the callback source; UINT64_MAX = never */
} fixture;

static fixture fx;

static int16_t at(int k, uint64_t lin)
{
	uint64_t cols = specs[k].ndim == 2 ? specs[k].shape[1] : 1;
	return value(lin / cols, lin % cols, k);
}

static int cb(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	int k = (int)(intptr_t)ctx;
	uint64_t cols = specs[k].shape[1], r, c;
	int16_t *o = out;
	if (start[0] + count[0] > fx.fail_row)
		return NZ_EIO;
	for (r = 0; r < count[0]; r++)
		for (c = 0; c < count[1]; c++)
			*o++ = at(k, (start[0] + r) * cols + start[1] + c);
	return 0;
}

static void setup(void)
{
	for (int k = 0; k < NARR; k++) {
		uint64_t n = specs[k].shape[0] * (specs[k].ndim == 2 ? specs[k].shape[1] : 1);
		fx.mem[k] = malloc((size_t)n * 2);
		for (uint64_t i = 0; i < n; i++)
			fx.mem[k][i] = at(k, i);
		if (specs[k].kind == 0) {
			FILE *f;
			snprintf(fx.raw[k], sizeof fx.raw[k], "%s/in%d.raw", tmp, k);
			ASSERT((f = fopen(fx.raw[k], "wb")));
			ASSERT(fwrite(fx.mem[k], 2, (size_t)n, f) == (size_t)n);
			ASSERT(fclose(f) == 0);
		}
	}
	fx.fail_row = UINT64_MAX;
}

static void open_source(nz_source **src, int k)
{
	const struct spec *s = &specs[k];
	if (s->kind == 0) {
		nz_raw_opts ro = NZ_RAW_OPTS_INIT;
		ro.nchannels = s->shape[1];
		ASSERT_OK(nz_source_open_raw(src, fx.raw[k], &ro));
	} else if (s->kind == 1) {
		ASSERT_OK(nz_source_from_memory(src, fx.mem[k], "<i2", s->ndim, s->shape));
	} else {
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb, NULL};
		ASSERT_OK(nz_source_from_callback(src, &ops, (void *)(intptr_t)k, "<i2", s->ndim,
						  s->shape));
	}
}

typedef struct run {
	nz_store *st[2];
	nz_array *a[NARR];
	nz_source *src[NARR];
} run;

/* Create the stores <tmp>/<name>/{v3,v2} and every array, and open the sources. */
static void run_open(run *r, const char *name)
{
	char root[700];
	snprintf(root, sizeof root, "%s/%s", tmp, name);
	nz_test_rm_rf(root);
	ASSERT(mkdir(root, 0777) == 0);
	for (int i = 0; i < 2; i++) {
		snprintf(root, sizeof root, "%s/%s/%s", tmp, name, i ? "v2" : "v3");
		ASSERT_OK(nz_store_open_dir(&r->st[i], root, NZ_STORE_CREATE));
	}
	for (int k = 0; k < NARR; k++) {
		const struct spec *s = &specs[k];
		nz_array_opts ao = NZ_ARRAY_OPTS_INIT;
		nz_compressor comp = NZ_COMPRESSOR_INIT;
		comp.cname = "zstd";
		ao.dtype = "<i2";
		ao.ndim = s->ndim;
		ao.shape = s->shape;
		ao.chunks = s->chunks;
		ao.compressor = &comp;
		ao.fill_value_json = "0";
		ao.zarr_format = s->store ? 2 : 3;
		ao.shards = s->shards[0] ? s->shards : NULL;
		ASSERT_OK(nz_array_create(&r->a[k], r->st[s->store], s->name, &ao));
		open_source(&r->src[k], k);
	}
}

static void run_close(run *r)
{
	for (int k = 0; k < NARR; k++) {
		nz_array_free(r->a[k]);
		nz_source_free(r->src[k]);
	}
	nz_store_free(r->st[0]);
	nz_store_free(r->st[1]);
}

typedef struct prog {
	uint64_t bytes_done, bytes_total, chunks_total, calls;
} prog;

static int on_progress(const nz_progress *p, void *ctx)
{
	prog *g = ctx;
	g->bytes_done = p->bytes_done;
	g->bytes_total = p->bytes_total;
	g->chunks_total = p->chunks_total;
	g->calls++;
	return 0;
}

static void check_equal_to_sequential(void)
{
	static const int jobs[] = {1, 2, 3};
	uint64_t chunks = 0, bytes = 0;
	char a[700], b[700];
	run r;

	run_open(&r, "seq");
	for (int k = 0; k < NARR; k++) {
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		wo.jobs = 2;
		ASSERT_OK(nz_write_array(r.a[k], r.src[k], &wo));
		chunks += nz_array_nchunks(r.a[k]);
		bytes += specs[k].shape[0] * (specs[k].ndim == 2 ? specs[k].shape[1] : 1) * 2;
	}
	run_close(&r);
	for (size_t j = 0; j < sizeof jobs / sizeof *jobs; j++) {
		nz_write_opts wo = NZ_WRITE_OPTS_INIT;
		nz_write_stats stats;
		prog g = {0};
		wo.jobs = jobs[j];
		wo.stats = &stats;
		wo.progress = on_progress;
		wo.progress_ctx = &g;
		run_open(&r, "multi");
		ASSERT_OK(nz_write_arrays(r.a, r.src, NARR, &wo));
		run_close(&r);
		ASSERT_EQ_U64(stats.chunks, chunks);
		ASSERT_EQ_U64(stats.bytes, bytes);
		ASSERT(stats.jobs >= 1 && stats.jobs <= jobs[j]);
		ASSERT_EQ_U64(g.bytes_total, bytes);
		ASSERT_EQ_U64(g.bytes_done, bytes);
		ASSERT_EQ_U64(g.chunks_total, chunks);
		ASSERT(g.calls >= 2);
		snprintf(a, sizeof a, "%s/seq", tmp);
		snprintf(b, sizeof b, "%s/multi", tmp);
		/* 4 + 2 shards, 8 + 5 chunks, 8*3 v2 chunks, metadata documents */
		ASSERT(compare_trees(a, b) > 4 + 2 + 8 + 5 + 24);
	}
}

/* ---- run order and workers, with the test sink ---------------------------- */

typedef struct ordered {
	sink s;
	atomic_uint_least64_t first, last; /* sequence numbers of its puts (+1) */
} ordered;

static atomic_uint_least64_t seq;

static int ordered_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len)
{
	ordered *o = ctx;
	uint64_t n = atomic_fetch_add(&seq, 1) + 1, zero = 0;
	atomic_compare_exchange_strong(&o->first, &zero, n);
	atomic_store(&o->last, n);
	return sink_put(&o->s, state, idx, data, len);
}

/* Write targets o[0..n) from callback sources in one write with `jobs`,
 * budget and no inline runs, source i with NZ_SOURCE_LAST where bit i of
 * `last` is set; returns the worker threads started. */
static int write_sinks(ordered *o, size_t n, int jobs, size_t budget, unsigned last)
{
	nz__target t[4];
	const nz__target *tp[4];
	nz_source *src[4];
	cb_ctx cc[4];
	nz__write_ctl ctl = NZ__WRITE_CTL_INIT;
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	ctl.inline_bytes = 0;
	wo.jobs = jobs;
	wo.buffer_size = budget;
	for (size_t i = 0; i < n; i++) {
		target_of(&t[i], &o[i].s);
		t[i].put = ordered_put;
		t[i].ctx = &o[i];
		tp[i] = &t[i];
		cc[i].s = &o[i].s;
		cc[i].fail_row = UINT64_MAX;
		ASSERT_OK(nz_source_from_callback(&src[i], &ops, &cc[i], "<i4", o[i].s.ndim,
						  o[i].s.shape));
		if (last >> i & 1)
			ASSERT_OK(nz_source_set_flags(src[i], NZ_SOURCE_LAST));
		atomic_store(&o[i].first, 0);
		atomic_store(&o[i].last, 0);
	}
	ASSERT_OK(nz__write_multi_ctl(tp, src, n, &wo, &ctl));
	for (size_t i = 0; i < n; i++) {
		/* every chunk once, equal to a serial writer's */
		unsigned char *ref = malloc(o[i].s.chunk_bytes);
		for (uint64_t c = 0; c < o[i].s.nchunks; c++) {
			ASSERT_EQ_INT(atomic_load(&o[i].s.writes[c]), 1);
			reference_chunk(&o[i].s, c, ref);
			ASSERT_MEM_EQ(o[i].s.got[c], ref, o[i].s.chunk_bytes);
		}
		free(ref);
		nz_source_free(src[i]);
	}
	return ctl.threads;
}

static void check_order_and_budget(void)
{
	/* Tasks of one chunk each (a callback source is not row-major):
	 * 400-, 2000- and 800-byte tasks, given in that order. */
	ordered o[3];
	uint64_t sh[3][2] = {{300, 10}, {400, 10}, {200, 10}};
	uint64_t ch[3][2] = {{10, 10}, {50, 10}, {20, 10}};
	memset(o, 0, sizeof o);
	for (int i = 0; i < 3; i++)
		sink_init(&o[i].s, 2, sh[i], ch[i], 4);
	ASSERT_EQ_INT(write_sinks(o, 3, 1, 0, 0), 1);
	/* one worker: all of array 1, then all of 2, then all of 0 */
	ASSERT(atomic_load(&o[1].last) < atomic_load(&o[2].first));
	ASSERT(atomic_load(&o[2].last) < atomic_load(&o[0].first));
	ASSERT_EQ_U64(atomic_load(&o[1].first), 1);
	for (int i = 0; i < 3; i++)
		sink_clear(&o[i].s);

	/* NZ_SOURCE_LAST on array 1 (the largest tasks): 2, 0, then 1, with
	 * every chunk still written once and right (write_sinks checks). */
	atomic_store(&seq, 0);
	for (int i = 0; i < 3; i++)
		sink_init(&o[i].s, 2, sh[i], ch[i], 4);
	ASSERT_EQ_INT(write_sinks(o, 3, 1, 0, 1u << 1), 1);
	ASSERT_EQ_U64(atomic_load(&o[2].first), 1);
	ASSERT(atomic_load(&o[2].last) < atomic_load(&o[0].first));
	ASSERT(atomic_load(&o[0].last) < atomic_load(&o[1].first));
	for (int i = 0; i < 3; i++)
		sink_clear(&o[i].s);

	/* Budget: array 1's chunks (2000 B) let 1000 B feed no second worker
	 * (a worker holds 2 chunks); array 0's alone get all 3. */
	for (int i = 0; i < 3; i++)
		sink_init(&o[i].s, 2, sh[i], ch[i], 4);
	ASSERT_EQ_INT(write_sinks(&o[0], 1, 3, 2400, 0), 3);
	for (int i = 0; i < 3; i++)
		sink_clear(&o[i].s);
	for (int i = 0; i < 3; i++)
		sink_init(&o[i].s, 2, sh[i], ch[i], 4);
	ASSERT_EQ_INT(write_sinks(o, 2, 3, 2400, 0), 1);
	for (int i = 0; i < 3; i++)
		sink_clear(&o[i].s);
}

/* ---- failures --------------------------------------------------------------- */

static void check_failures(void)
{
	nz_write_opts wo = NZ_WRITE_OPTS_INIT;
	uint64_t tc[2] = {1, 1}, other[2] = {7, 3};
	char root[700];
	nz_source *bad;
	nz_source *srcs[NARR];
	run r;

	/* The callback source (the nidq array) fails at row 2000. */
	wo.jobs = 3;
	fx.fail_row = 2000;
	run_open(&r, "fail");
	ASSERT_ERR(NZ_EIO, nz_write_arrays(r.a, r.src, NARR, &wo));
	ASSERT_CONTAINS(nz_error_last()->message, "acquisition/nidq/data");
	run_close(&r);
	fx.fail_row = UINT64_MAX;
	snprintf(root, sizeof root, "%s/fail", tmp);
	ASSERT_EQ_INT(nz_test_temp_files(root), 0);

	/* A source of another shape: refused, naming the array. */
	run_open(&r, "mismatch");
	ASSERT_OK(nz_source_from_memory(&bad, fx.mem[2], "<i2", 2, other));
	memcpy(srcs, r.src, sizeof srcs);
	srcs[3] = bad;
	ASSERT_ERR(NZ_EMISMATCH, nz_write_arrays(r.a, srcs, NARR, &wo));
	ASSERT_CONTAINS(nz_error_last()->message, "acquisition/sync/data");
	nz_source_free(bad);

	ASSERT_ERR(NZ_EINVAL, nz_write_arrays(r.a, r.src, 0, &wo));
	wo.task_chunks = tc;
	ASSERT_ERR(NZ_EINVAL, nz_write_arrays(r.a, r.src, 2, &wo));
	ASSERT_OK(nz_write_arrays(&r.a[1], &r.src[1], 1, &wo)); /* one array may */
	run_close(&r);
}

int main(void)
{
	snprintf(tmp, sizeof tmp, "%s/engine_multi", getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp");
	nz_test_rm_rf(tmp);
	ASSERT(mkdir(tmp, 0777) == 0);
	setup();
	check_equal_to_sequential();
	check_order_and_budget();
	check_failures();
	for (int k = 0; k < NARR; k++)
		free(fx.mem[k]);
	nz_test_rm_rf(tmp);
	printf("test_engine_multi: ok\n");
	return 0;
}
