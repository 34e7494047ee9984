/* The allocation-failure sweep of the out-of-memory tests.
 *
 * A run without failures must succeed, making `total` allocations. Then the
 * n-th allocation (and every later one) is refused, for n = 1.. `first` one by
 * one, then about `points` more spread up to `total` and `total` itself:
 * - every such run must reach the refused allocation (nz__alloc_refused() > 0:
 *   otherwise the sweep did not test what it counts);
 * - and must end in NZ_ENOMEM with a message: any other result, success
 *   included, means a failure was swallowed or misreported;
 * - then `failed` (if set) checks that nothing left looks complete.
 * Past the last allocation (total + 1) nothing is refused and the run must
 * succeed, and so must a final run without failures (nothing left broken).
 * Where threads make the count vary (`varies`), a run that refuses nothing
 * must succeed, and the sweep ends with such a run.
 * `reset` (if set) runs before every run, e.g. to remove the output so that
 * a stale complete one cannot pass for the failed run's. NZ_OOM_ALL=1 in the
 * environment tests every allocation, NZ_OOM_STEP=k every k-th. Leaks are
 * ASan's to catch. */
#ifndef NZ_TEST_OOM_H
#define NZ_TEST_OOM_H

#include "nwbzarr/nwb.h"
#include "nwbzarr/store.h"
#include "test.h"
#include "util/alloc.h"

typedef struct nz_oom_sweep {
	const char *what;
	int (*run)(void *ctx);
	void (*reset)(void *ctx);
	void (*failed)(void *ctx, long n);
	void *ctx;
	long first;  /* allocations tested one by one from the first */
	long points; /* about how many after those (0 = every one) */
	/* 1 when the number of allocations depends on how threads interleave:
	 * a run may end before the n-th, and must then succeed; the sweep goes
	 * on past `total` until a run refuses nothing. */
	int varies;
	long total;  /* set by the sweep: allocations of a run without failures */
} nz_oom_sweep;

/* A `failed` check for writers of NWB files: `ctx` is the output's path, and
 * the refused run left no directory there or one that does not look
 * complete (nz_nwb_check_complete: the marker, and consolidated metadata in
 * either format). */
static inline void nz_oom_nwb_not_complete(void *ctx, long n)
{
	nz_store *st = NULL;
	int err = nz_store_open_dir(&st, ctx, NZ_STORE_READ);
	if (err == 0)
		err = nz_nwb_check_complete(st);
	nz_store_free(st);
	if (err != NZ_EINCOMPLETE && err != NZ_ENOTFOUND)
		NZ__FAIL("allocation %ld refused, but the status of '%s' is %d", n,
			 (const char *)ctx, err);
}

/* One run with the n-th allocation refused (n = 0: none); *refused says how
 * many were. */
static int nz_oom_try(const nz_oom_sweep *s, long n, long *refused)
{
	int err;
	if (s->reset)
		s->reset(s->ctx);
	nz__alloc_fail_after(n);
	err = s->run(s->ctx);
	*refused = nz__alloc_refused();
	nz__alloc_fail_after(0);
	return err;
}

/* Returns 1 if the n-th allocation was reached (and refused). */
static int nz_oom_expect_enomem(const nz_oom_sweep *s, long n, long total)
{
	long refused;
	int err = nz_oom_try(s, n, &refused);
	if (refused == 0 && s->varies) {
		if (err != 0)
			NZ__FAIL("%s: nothing refused (allocation %ld), but the run returned %d",
				 s->what, n, err);
		return 0;
	}
	if (refused == 0)
		NZ__FAIL("%s: allocation %ld of %ld was never made (returned %d)", s->what, n, total,
			 err);
	if (err != NZ_ENOMEM)
		NZ__FAIL("%s: allocation %ld of %ld refused, but the run returned %d, not NZ_ENOMEM",
			 s->what, n, total, err);
	if (nz_error_last()->message[0] == '\0')
		NZ__FAIL("%s: allocation %ld refused: NZ_ENOMEM without a message", s->what, n);
	if (s->failed)
		s->failed(s->ctx, n);
	return 1;
}

/** Run the sweep; returns the number of failure points reached. */
static long nz_oom_run_sweep(nz_oom_sweep *s)
{
	long total, refused, n, step, tested = 0, reached = 0;
	if (s->reset)
		s->reset(s->ctx);
	ASSERT_OK(s->run(s->ctx));
	/* The first run of a process may count differently (one-time set-up);
	 * the sweep's runs are like the second. */
	nz__alloc_fail_after(0);
	if (s->reset)
		s->reset(s->ctx);
	ASSERT_OK(s->run(s->ctx));
	total = nz__alloc_fail_after(0);
	if (total <= 0)
		NZ__FAIL("%s: the run made no allocation to refuse", s->what);
	s->total = total;
	step = getenv("NZ_OOM_ALL") || s->points <= 0 || total <= s->first + s->points
		       ? 1
		       : (total - s->first) / s->points;
	if (getenv("NZ_OOM_STEP") && atol(getenv("NZ_OOM_STEP")) > 0)
		step = atol(getenv("NZ_OOM_STEP"));
	for (n = 1; n < total; n += n < s->first ? 1 : step, tested++)
		reached += nz_oom_expect_enomem(s, n, total);
	reached += nz_oom_expect_enomem(s, total, total);
	tested++;
	if (s->varies) {
		for (n = total + 1; n < 4 * total + 100; n++, tested++)
			if (!nz_oom_expect_enomem(s, n, total))
				break;
			else
				reached++;
		if (n == 4 * total + 100)
			NZ__FAIL("%s: runs kept reaching allocation %ld (%ld without failures)", s->what,
				 n, total);
	} else if (nz_oom_try(s, total + 1, &refused) != 0 || refused != 0) {
		NZ__FAIL("%s: with nothing refused past allocation %ld the run must succeed "
			 "(%ld refused)", s->what, total, refused);
	}
	ASSERT_OK(nz_oom_try(s, 0, &refused));
	printf("%s: %ld allocations; %ld failure points (every %ld after the first %ld), %ld "
	       "reached, each NZ_ENOMEM with a message\n", s->what, total, tested, step, s->first,
	       reached);
	return reached;
}

#endif
