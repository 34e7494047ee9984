/* The engine's write units (nz__target.unit_chunks, Zarr v3 shards), with
 * the shard byte layer (src/zarr/shard.h) as the sink, writing real shards
 * into a directory store:
 * - every inner chunk of every shard (edge shards and chunks included)
 *   equals what a serial writer would produce, stored in C order of its
 *   position in the shard, for the gather, direct and memory-source paths;
 * - the files are byte-identical for -j 1, 2 and 3;
 * - a failing source leaves no shard that looks complete (the shard being
 *   written is aborted; the ones present are whole) and no temporary file;
 * - units that unit_begin reports as stored are skipped (resume) and left
 *   untouched;
 * - memory: writing two 230 MB shards ((300000, 384) int16, inner chunks
 *   (30000, 64)) at -j 2 peaks far below one shard's size, measured in a
 *   child process with getrusage. */
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sink.h"
#include "test.h"
#include "util/alloc.h"
#include "util/error.h"
#include "zarr/shard.h"

static char root[512];

typedef struct shard_sink {
	nz_store *store;
	int ndim;
	uint64_t unit_chunks[4];
	nz__shard_layout layout;
	int resume;       /* unit_begin skips a shard whose index reads back */
	const char *fail_key; /* unit_end of this shard fails */
	atomic_int begun, ended, aborted, skipped;
} shard_sink;

typedef struct unit_state {
	nz__shard_writer *w;
	uint64_t unit[4];
} unit_state;

static void shard_key(char *key, size_t cap, int ndim, const uint64_t *u)
{
	size_t n = (size_t)snprintf(key, cap, "c");
	for (int d = 0; d < ndim; d++)
		n += (size_t)snprintf(key + n, cap - n, "/%llu", (unsigned long long)u[d]);
}

static int ss_begin(void *ctx, void **state, const uint64_t *u)
{
	shard_sink *s = ctx;
	unit_state *st = *state;
	char key[128];
	if (!st && !(st = *state = calloc(1, sizeof *st)))
		return NZ_ENOMEM;
	ASSERT(st->w == NULL); /* the previous unit was ended or aborted */
	memcpy(st->unit, u, (size_t)s->ndim * sizeof *u);
	shard_key(key, sizeof key, s->ndim, u);
	if (s->resume) {
		nz__shard_entry *e = NULL;
		uint64_t size;
		if (nz__shard_read_index(&e, &size, s->store, key, &s->layout) == 0) {
			nz__free(e);
			atomic_fetch_add(&s->skipped, 1);
			return 1;
		}
	}
	atomic_fetch_add(&s->begun, 1);
	return nz__shard_writer_begin(&st->w, s->store, key, &s->layout);
}

static int ss_put(void *ctx, void **state, const uint64_t *idx, const void *data, size_t len)
{
	shard_sink *s = ctx;
	unit_state *st = *state;
	uint64_t local = 0;
	for (int d = 0; d < s->ndim; d++)
		local = local * s->unit_chunks[d] + (idx[d] - st->unit[d] * s->unit_chunks[d]);
	return nz__shard_writer_put(st->w, local, data, len);
}

static int ss_end(void *ctx, void **state)
{
	shard_sink *s = ctx;
	unit_state *st = *state;
	char key[128];
	int err;
	shard_key(key, sizeof key, s->ndim, st->unit);
	if (s->fail_key && strcmp(key, s->fail_key) == 0) {
		nz__shard_writer_abort(st->w);
		st->w = NULL;
		return nz__error_set(NZ_EIO, "shard '%s': injected failure at its end", key);
	}
	err = nz__shard_writer_end(st->w);
	st->w = NULL;
	atomic_fetch_add(&s->ended, 1);
	return err;
}

static void ss_abort(void *ctx, void **state)
{
	shard_sink *s = ctx;
	unit_state *st = *state;
	nz__shard_writer_abort(st->w);
	st->w = NULL;
	atomic_fetch_add(&s->aborted, 1);
}

static void ss_state_free(void *state)
{
	unit_state *st = state;
	ASSERT(st->w == NULL);
	free(st);
}

/* A target of geometry `ref` writing shards of `unit_chunks` chunks. */
static void unit_target(nz__target *t, sink *ref, shard_sink *ss, nz_store *store,
			const uint64_t *unit_chunks)
{
	uint64_t per = 1;
	target_of(t, ref);
	memset(ss, 0, sizeof *ss);
	ss->store = store;
	ss->ndim = ref->ndim;
	for (int d = 0; d < ref->ndim; d++) {
		ss->unit_chunks[d] = unit_chunks[d];
		per *= unit_chunks[d];
	}
	ss->layout = (nz__shard_layout){per, 0, 1, 0};
	t->put = ss_put;
	t->state_free = ss_state_free;
	t->ctx = ss;
	t->unit_chunks = ss->unit_chunks;
	t->unit_begin = ss_begin;
	t->unit_end = ss_end;
	t->unit_abort = ss_abort;
}

/* Every shard present: its index valid, chunks in C order of position
 * (offsets increasing), each equal to the reference chunk. Returns how many
 * shards were present; *complete says whether all were. */
static int check_shards(nz_store *store, const sink *ref, const shard_sink *ss, int *complete)
{
	uint64_t ugrid[4], nunits = 1, per = ss->layout.nchunks;
	unsigned char *want = malloc(ref->chunk_bytes);
	int present = 0;
	ASSERT(want);
	*complete = 1;
	for (int d = 0; d < ref->ndim; d++) {
		ugrid[d] = (ref->grid[d] + ss->unit_chunks[d] - 1) / ss->unit_chunks[d];
		nunits *= ugrid[d];
	}
	for (uint64_t k = 0; k < nunits; k++) {
		uint64_t u[4], rest = k, size, last_end = 0;
		nz__shard_entry *e = NULL;
		char key[128];
		for (int d = ref->ndim - 1; d >= 0; d--) {
			u[d] = rest % ugrid[d];
			rest /= ugrid[d];
		}
		shard_key(key, sizeof key, ref->ndim, u);
		if (nz_store_exists(store, key) != 1) {
			*complete = 0;
			continue;
		}
		present++;
		ASSERT_OK(nz__shard_read_index(&e, &size, store, key, &ss->layout));
		for (uint64_t i = 0; i < per; i++) {
			uint64_t c[4], r = i, lin = 0;
			int inside = 1;
			void *got = NULL;
			size_t n = 0;
			for (int d = ref->ndim - 1; d >= 0; d--) {
				c[d] = u[d] * ss->unit_chunks[d] + r % ss->unit_chunks[d];
				r /= ss->unit_chunks[d];
				inside &= c[d] < ref->grid[d];
			}
			if (!inside) { /* wholly outside the array: empty */
				ASSERT(e[i].offset == NZ__SHARD_EMPTY);
				continue;
			}
			ASSERT(e[i].offset != NZ__SHARD_EMPTY);
			ASSERT(e[i].offset >= last_end); /* C order of position */
			last_end = e[i].offset + e[i].nbytes;
			for (int d = 0; d < ref->ndim; d++)
				lin = lin * ref->grid[d] + c[d];
			reference_chunk(ref, lin, want);
			ASSERT_OK(nz__shard_read_chunk(&got, &n, store, key, &e[i]));
			ASSERT_EQ_U64(n, ref->chunk_bytes);
			if (memcmp(got, want, n) != 0)
				NZ__FAIL("%s: inner chunk %llu differs", key, (unsigned long long)i);
			nz_free(got);
		}
		nz__free(e);
	}
	free(want);
	return present;
}

static void rm_rf(const char *path)
{
	nz_test_rm_rf(path);
}

static void same_files(const char *a, const char *b)
{
	char cmd[1200];
	snprintf(cmd, sizeof cmd, "diff -r '%s' '%s' >/dev/null", a, b);
	if (system(cmd) != 0)
		NZ__FAIL("'%s' and '%s' differ", a, b);
}

/* Write `ref`'s data in shards of `uc` chunks with `jobs` workers into
 * root/<name>; check every shard; return the directory. */
static const char *write_case(const char *name, sink *ref, const uint64_t *uc, int jobs,
			      int memory)
{
	static char dir[700];
	nz_store *store = NULL;
	nz_source *src = NULL;
	nz__target t;
	shard_sink ss;
	nz_write_opts o = NZ_WRITE_OPTS_INIT;
	cb_ctx cb = {ref, UINT64_MAX};
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
	unsigned char *data = NULL;
	nz__write_ctl ctl = NZ__WRITE_CTL_INIT;
	int complete;
	uint64_t nelem = 1;
	snprintf(dir, sizeof dir, "%s/%s", root, name);
	rm_rf(dir);
	ASSERT_OK(nz_store_open_dir(&store, dir, NZ_STORE_CREATE));
	for (int d = 0; d < ref->ndim; d++)
		nelem *= ref->shape[d];
	if (memory) {
		ASSERT((data = malloc(nelem * ref->itemsize)));
		fill_data(data, nelem, ref->itemsize);
		ASSERT_OK(nz_source_from_memory(&src, data, "<i2", ref->ndim, ref->shape));
	} else {
		ASSERT_OK(nz_source_from_callback(&src, &ops, &cb, "<i2", ref->ndim, ref->shape));
		ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	}
	unit_target(&t, ref, &ss, store, uc);
	o.jobs = jobs;
	ctl.inline_bytes = 0; /* real worker threads, even for small cases */
	ASSERT_OK(nz__write_ctl_run(&t, src, &o, &ctl));
	ASSERT_EQ_INT(atomic_load(&ss.aborted), 0);
	ASSERT_EQ_INT(atomic_load(&ss.begun), atomic_load(&ss.ended));
	ASSERT(check_shards(store, ref, &ss, &complete) > 0 && complete);
	ASSERT_EQ_INT(nz_test_temp_files(dir), 0);
	nz_source_free(src);
	nz_store_free(store);
	free(data);
	return dir;
}

static void test_layouts(void)
{
	sink ref;
	/* Edge shards in both dimensions, edge chunks inside them. */
	uint64_t shape[2] = {1003, 10}, chunks[2] = {50, 4}, uc[2] = {3, 2};
	char d1[700];
	sink_init(&ref, 2, shape, chunks, 2);
	snprintf(d1, sizeof d1, "%s", write_case("gather_j1", &ref, uc, 1, 0));
	same_files(d1, write_case("gather_j2", &ref, uc, 2, 0));
	same_files(d1, write_case("gather_j3", &ref, uc, 3, 0));
	same_files(d1, write_case("memory_j2", &ref, uc, 2, 1));
	sink_clear(&ref);
	/* Chunks spanning all channels: the direct path. */
	{
		uint64_t c2[2] = {64, 10}, u2[2] = {4, 1};
		sink_init(&ref, 2, shape, c2, 2);
		snprintf(d1, sizeof d1, "%s", write_case("direct_j1", &ref, u2, 1, 0));
		same_files(d1, write_case("direct_j3", &ref, u2, 3, 0));
		sink_clear(&ref);
	}
	/* 3-d, units that are a single chunk, and one shard for everything. */
	{
		uint64_t s3[3] = {20, 6, 5}, c3[3] = {7, 4, 2}, u3[3] = {2, 1, 2}, one[3] = {1, 1, 1},
			 all[3] = {3, 2, 3};
		sink_init(&ref, 3, s3, c3, 2);
		write_case("three_d", &ref, u3, 2, 0);
		write_case("unit_is_chunk", &ref, one, 2, 0);
		write_case("one_shard", &ref, all, 2, 0);
		sink_clear(&ref);
	}
}

/* A source failing part-way and a sink failing at a shard's end: an error,
 * and no shard that looks complete is missing data. */
static void test_failures(void)
{
	sink ref;
	uint64_t shape[2] = {1003, 10}, chunks[2] = {50, 4}, uc[2] = {3, 2};
	char dir[700];
	for (int mode = 0; mode < 2; mode++) {
		nz_store *store = NULL;
		nz_source *src = NULL;
		nz__target t;
		shard_sink ss;
		nz_write_opts o = NZ_WRITE_OPTS_INIT;
		cb_ctx cb;
		nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, cb_read, NULL};
		nz__write_ctl ctl = NZ__WRITE_CTL_INIT;
		int complete, rc;
		sink_init(&ref, 2, shape, chunks, 2);
		cb = (cb_ctx){&ref, mode == 0 ? 620 : UINT64_MAX}; /* row 620: shard row 4 */
		snprintf(dir, sizeof dir, "%s/fail%d", root, mode);
		rm_rf(dir);
		ASSERT_OK(nz_store_open_dir(&store, dir, NZ_STORE_CREATE));
		ASSERT_OK(nz_source_from_callback(&src, &ops, &cb, "<i2", 2, shape));
		ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
		unit_target(&t, &ref, &ss, store, uc);
		if (mode == 1)
			ss.fail_key = "c/2/1";
		o.jobs = 2;
		ctl.inline_bytes = 0;
		rc = nz__write_ctl_run(&t, src, &o, &ctl);
		ASSERT(rc == NZ_EIO);
		ASSERT_CONTAINS(nz_error_last()->message, "test/array");
		/* Present shards are whole and right; the failing one is absent. */
		check_shards(store, &ref, &ss, &complete);
		ASSERT(!complete);
		ASSERT_EQ_INT(nz_store_exists(store, mode == 0 ? "c/4/0" : "c/2/1"), 0);
		if (mode == 0)
			ASSERT(atomic_load(&ss.aborted) >= 1);
		ASSERT_EQ_INT(nz_test_temp_files(dir), 0);

		/* Resume: stored shards are skipped, the rest written. */
		nz_source_free(src);
		cb.fail_row = UINT64_MAX;
		ASSERT_OK(nz_source_from_callback(&src, &ops, &cb, "<i2", 2, shape));
		{
			struct stat before, after;
			char kept[800];
			/* The first shard present, not c/0/0: a worker descheduled
			 * on c/0/0 while the other reached the failing shard has its
			 * shard aborted, and that is right (the flake of old). */
			int found = 0;
			for (int k = 0; k < 14 && !found; k++) {
				snprintf(kept, sizeof kept, "%s/c/%d/%d", dir, k / 2, k % 2);
				found = stat(kept, &before) == 0;
			}
			ASSERT(found);
			unit_target(&t, &ref, &ss, store, uc);
			ss.resume = 1;
			ASSERT_OK(nz__write_ctl_run(&t, src, &o, &ctl));
			ASSERT(atomic_load(&ss.skipped) >= 1);
			ASSERT(stat(kept, &after) == 0);
			ASSERT(before.st_ino == after.st_ino); /* not rewritten */
		}
		ASSERT(check_shards(store, &ref, &ss, &complete) == 14 && complete);
		nz_source_free(src);
		nz_store_free(store);
		sink_clear(&ref);
	}
}

/* Data made on the fly: no 460 MB input file, and cheap to generate. */
static int big_read(void *ctx, const uint64_t *start, const uint64_t *count, void *out)
{
	int16_t *o = out;
	for (uint64_t r = 0; r < count[0]; r++)
		for (uint64_t c = 0; c < count[1]; c++)
			*o++ = (int16_t)((start[0] + r) * 7 + (start[1] + c));
	return 0;
}

/* In a child: write two (300000, 384) int16 shards of (30000, 64) chunks
 * at -j 2 and report the peak RSS in KiB on `fd`. */
static void big_child(int fd, const char *dir)
{
	uint64_t shape[2] = {600000, 384}, chunks[2] = {30000, 64}, uc[2] = {10, 6};
	nz_store *store = NULL;
	nz_source *src = NULL;
	nz_source_ops ops = {NZ_SOURCE_OPS_VERSION, big_read, NULL};
	nz__target t;
	shard_sink ss;
	sink ref;
	nz_write_opts o = NZ_WRITE_OPTS_INIT;
	struct rusage ru;
	long kib;
	memset(&ref, 0, sizeof ref);
	ref.ndim = 2;
	ref.itemsize = 2;
	memcpy(ref.shape, shape, sizeof shape);
	memcpy(ref.chunks, chunks, sizeof chunks);
	ASSERT_OK(nz_store_open_dir(&store, dir, NZ_STORE_CREATE));
	ASSERT_OK(nz_source_from_callback(&src, &ops, NULL, "<i2", 2, shape));
	ASSERT_OK(nz_source_set_flags(src, NZ_SOURCE_ROWS));
	unit_target(&t, &ref, &ss, store, uc);
	o.jobs = 2;
	ASSERT_OK(nz__write(&t, src, &o));
	ASSERT_EQ_INT(atomic_load(&ss.ended), 2);
	ASSERT(getrusage(RUSAGE_SELF, &ru) == 0);
	kib = ru.ru_maxrss;
	ASSERT(write(fd, &kib, sizeof kib) == (ssize_t)sizeof kib);
	nz_source_free(src);
	nz_store_free(store);
	_exit(0);
}

static void test_memory_bound(void)
{
	char dir[700];
	int fds[2], status;
	long kib = 0;
	uint64_t size = 0;
	nz_store *store = NULL;
	pid_t pid;
	snprintf(dir, sizeof dir, "%s/big", root);
	rm_rf(dir);
	ASSERT(pipe(fds) == 0);
	if ((pid = fork()) == 0) {
		close(fds[0]);
		big_child(fds[1], dir);
	}
	close(fds[1]);
	ASSERT(read(fds[0], &kib, sizeof kib) == (ssize_t)sizeof kib);
	ASSERT(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fds[0]);
	ASSERT_OK(nz_store_open_dir(&store, dir, NZ_STORE_READ));
	ASSERT_OK(nz_store_size(store, "c/1/0", &size));
	ASSERT_EQ_U64(size, (uint64_t)300000 * 384 * 2 + 60 * 16 + 4); /* 230 MB */
	nz_store_free(store);
	printf("peak RSS writing two %.0f MB shards at -j 2: %.1f MiB\n", size / 1e6, kib / 1024.0);
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
	(void)kib; /* sanitizers' shadow memory makes RSS meaningless */
#else
	/* A worker holds one row of a shard's chunks (6 x 3.84 MB) plus its
	 * reads: far below one 230 MB shard, let alone two workers' worth. */
	ASSERT(kib < 100 * 1024);
#endif
	rm_rf(dir);
}

int main(void)
{
	const char *tmp = getenv("NZ_TMP");
	snprintf(root, sizeof root, "%s/engine_units", tmp ? tmp : "/tmp");
	rm_rf(root);
	nz__alloc_init();
	test_layouts();
	test_failures();
	test_memory_bound();
	rm_rf(root);
	return 0;
}
