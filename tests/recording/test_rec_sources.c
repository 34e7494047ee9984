/* nz_rec_sources: the column sets of one SpikeGLX AP file (the real .meta,
 * 385 columns) sharing one read of it.
 * - the first source's read keeps the other sets' columns: after it, the
 *   data file is rewritten in place, and the taps still give the rows it
 *   read as they were (they did not read them again), and the rewritten
 *   values for the rows it did not read (they read those themselves);
 * - a tap of scattered columns and a box of part of its columns;
 * - taps carry NZ_SOURCE_LAST, the first source not;
 * - the first source freed, a tap still reads (the file stays open);
 * - four threads reading the sources at once get the file's values;
 * - bad sets (no columns, a column past the file's) are NZ_EINVAL with
 *   every out[k] NULL. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/source.h"
#include "nwbzarr/recording.h"
#include "test.h"

#define COLS 385
#define FRAMES 5000

static char g_run[1024], g_bin[1100];

static int16_t value(uint64_t r, uint64_t c, int gen)
{
	return (int16_t)((r * 31 + c * 7) % 2003) - 1000 + gen * 3;
}

/* The data file, generation gen, written over the old one in place. */
static void write_bin(int gen)
{
	FILE *f = fopen(g_bin, gen ? "r+b" : "wb");
	ASSERT(f != NULL);
	for (uint64_t r = 0; r < FRAMES; r++)
		for (uint64_t c = 0; c < COLS; c++) {
			int16_t v = value(r, c, gen);
			ASSERT(fwrite(&v, sizeof v, 1, f) == 1);
		}
	ASSERT(fclose(f) == 0);
}

static void make_run(void)
{
	char from[2048], to[1100], cmd[4200];
	const char *tmp = getenv("NZ_TMP") ? getenv("NZ_TMP") : "/tmp";
	snprintf(g_run, sizeof g_run, "%s/rec_sources_g0", tmp);
	nz_test_rm_rf(g_run);
	ASSERT(mkdir(g_run, 0777) == 0);
	snprintf(from, sizeof from, "%s/recordings/spikeglx/sample3B_g0_t0.imec1.ap.meta",
		 getenv("NZ_REF"));
	snprintf(to, sizeof to, "%s/s_g0_t0.imec0.ap.meta", g_run);
	snprintf(cmd, sizeof cmd, "cp '%s' '%s'", from, to);
	ASSERT(system(cmd) == 0);
	snprintf(g_bin, sizeof g_bin, "%s/s_g0_t0.imec0.ap.bin", g_run);
	write_bin(0);
}

/* Rows [r0, r0+nr) x columns cols[c0..c0+nc) of src equal generation
 * gen_lo below row `split`, gen_hi from it on. */
static void check_rows(nz_source *src, const uint64_t *cols, uint64_t r0, uint64_t nr, uint64_t c0,
		       uint64_t nc, uint64_t split, int gen_lo, int gen_hi)
{
	uint64_t st[2] = {r0, c0}, ct[2] = {nr, nc};
	int16_t *got = malloc((size_t)(nr * nc) * sizeof *got);
	ASSERT(got != NULL);
	ASSERT_OK(nz_source_read(src, st, ct, got, (size_t)(nr * nc) * sizeof *got));
	for (uint64_t r = 0; r < nr; r++)
		for (uint64_t k = 0; k < nc; k++) {
			int gen = r0 + r < split ? gen_lo : gen_hi;
			if (got[r * nc + k] != value(r0 + r, cols[c0 + k], gen))
				NZ__FAIL("row %llu column %llu: %d, want %d (generation %d)",
					 (unsigned long long)(r0 + r), (unsigned long long)cols[c0 + k],
					 got[r * nc + k], value(r0 + r, cols[c0 + k], gen), gen);
		}
	free(got);
}

static uint64_t neural[384], sync_col[1] = {384}, scattered[3] = {384, 3, 0};

static int open_sets(nz_source **out, const nz_rec *r)
{
	const uint64_t *cols[3] = {neural, sync_col, scattered};
	size_t n[3] = {384, 1, 3};
	return nz_rec_sources(out, nz_rec_find(r, "imec0.ap"), cols, n, 3);
}

static void check_shared_read(const nz_rec *r)
{
	nz_source *src[3];
	ASSERT_OK(open_sets(src, r));
	ASSERT_EQ_INT(nz__source_runs_last(src[0]), 0);
	ASSERT_EQ_INT(nz__source_runs_last(src[1]), 1);
	ASSERT_EQ_INT(nz__source_runs_last(src[2]), 1);
	ASSERT_EQ_U64(nz_source_shape(src[1])[0], FRAMES);
	ASSERT_EQ_U64(nz_source_shape(src[2])[1], 3);
	/* the first source reads rows 0..3000, then the file changes */
	check_rows(src[0], neural, 0, 3000, 0, 384, FRAMES, 0, 0);
	write_bin(1);
	check_rows(src[1], sync_col, 0, FRAMES, 0, 1, 3000, 0, 1);
	/* rows 3000.. were read by the sync tap: kept for the other tap too */
	write_bin(2);
	check_rows(src[2], scattered, 1000, 3500, 1, 2, 3000, 0, 1);
	check_rows(src[2], scattered, 0, 10, 0, 3, FRAMES, 0, 0);
	/* the first source reads the file as it is now */
	check_rows(src[0], neural, 2990, 20, 100, 50, FRAMES, 2, 2);
	for (int i = 0; i < 3; i++)
		nz_source_free(src[i]);
	/* a tap whose first source is gone reads for itself */
	ASSERT_OK(open_sets(src, r));
	nz_source_free(src[0]);
	check_rows(src[1], sync_col, 4990, 10, 0, 1, FRAMES, 2, 2);
	nz_source_free(src[2]);
	nz_source_free(src[1]);
}

typedef struct job {
	nz_source *src;
	const uint64_t *cols;
	uint64_t nc, r0, nr;
} job;

static void *reader_thread(void *p)
{
	job *j = p;
	check_rows(j->src, j->cols, j->r0, j->nr, 0, j->nc, FRAMES, 3, 3);
	return NULL;
}

static void check_threads(const nz_rec *r)
{
	nz_source *src[3];
	pthread_t th[4];
	job jobs[4];
	write_bin(3);
	ASSERT_OK(open_sets(src, r));
	jobs[0] = (job){src[0], neural, 384, 0, FRAMES / 2};
	jobs[1] = (job){src[0], neural, 384, FRAMES / 2, FRAMES - FRAMES / 2};
	jobs[2] = (job){src[1], sync_col, 1, 0, FRAMES};
	jobs[3] = (job){src[2], scattered, 3, 100, FRAMES - 200};
	for (int i = 0; i < 4; i++)
		ASSERT(pthread_create(&th[i], NULL, reader_thread, &jobs[i]) == 0);
	for (int i = 0; i < 4; i++)
		ASSERT(pthread_join(th[i], NULL) == 0);
	for (int i = 0; i < 3; i++)
		nz_source_free(src[i]);
}

static void check_bad_sets(const nz_rec *r)
{
	const nz_rec_stream *s = nz_rec_find(r, "imec0.ap");
	uint64_t past[2] = {3, COLS};
	const uint64_t *cols[2] = {neural, past};
	size_t n[2] = {384, 2};
	nz_source *src[2] = {(nz_source *)1, (nz_source *)1};
	ASSERT_ERR(NZ_EINVAL, nz_rec_sources(src, s, cols, n, 2));
	ASSERT_CONTAINS(nz_error_last()->message, "column 385");
	ASSERT(src[0] == NULL && src[1] == NULL);
	n[1] = 0;
	src[0] = src[1] = (nz_source *)1;
	ASSERT_ERR(NZ_EINVAL, nz_rec_sources(src, s, cols, n, 2));
	ASSERT(src[0] == NULL && src[1] == NULL);
	ASSERT_ERR(NZ_EINVAL, nz_rec_sources(src, s, cols, n, 0));
}

int main(void)
{
	nz_rec *r = NULL;
	for (uint64_t c = 0; c < 384; c++)
		neural[c] = c;
	make_run();
	ASSERT_OK(nz_rec_open(&r, g_run));
	ASSERT(nz_rec_find(r, "imec0.ap") != NULL);
	check_shared_read(r);
	check_threads(r);
	check_bad_sets(r);
	nz_rec_free(r);
	nz_test_rm_rf(g_run);
	return 0;
}
