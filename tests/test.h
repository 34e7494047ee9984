/* A minimal test harness: plain C executables run by ctest. A failed check
 * prints file:line, the expression and the library's last error, then exits
 * 1. Typed EQ macros print both values. */
#ifndef NZ_TEST_H
#define NZ_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "nwbzarr.h"

#define NZ__FAIL(...)                                                                     \
	do {                                                                              \
		fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);                           \
		fprintf(stderr, __VA_ARGS__);                                             \
		fprintf(stderr, "\n  last error: [%d] %s\n", nz_error_last()->code,        \
			nz_error_last()->message);                                        \
		exit(1);                                                                  \
	} while (0)

#define ASSERT(c)                                                                         \
	do {                                                                              \
		if (!(c))                                                                 \
			NZ__FAIL("assertion failed: %s", #c);                             \
	} while (0)

/** The call must return 0. */
#define ASSERT_OK(call)                                                                   \
	do {                                                                              \
		int nz__rc = (call);                                                      \
		if (nz__rc != 0)                                                          \
			NZ__FAIL("%s returned %d", #call, nz__rc);                        \
	} while (0)

/** The call must fail with `code`, leaving a non-empty message. */
#define ASSERT_ERR(code, call)                                                            \
	do {                                                                              \
		int nz__rc = (call);                                                      \
		if (nz__rc != (code))                                                     \
			NZ__FAIL("%s returned %d, expected %d", #call, nz__rc, (int)(code)); \
		if (nz_error_last()->message[0] == '\0')                                  \
			NZ__FAIL("%s failed without an error message", #call);            \
	} while (0)

#define ASSERT_EQ_INT(a, b)                                                               \
	do {                                                                              \
		long long nz__a = (long long)(a), nz__b = (long long)(b);                 \
		if (nz__a != nz__b)                                                       \
			NZ__FAIL("%s == %s: %lld != %lld", #a, #b, nz__a, nz__b);         \
	} while (0)

#define ASSERT_EQ_U64(a, b)                                                               \
	do {                                                                              \
		uint64_t nz__a = (uint64_t)(a), nz__b = (uint64_t)(b);                    \
		if (nz__a != nz__b)                                                       \
			NZ__FAIL("%s == %s: %" PRIu64 " != %" PRIu64, #a, #b, nz__a, nz__b); \
	} while (0)

#define ASSERT_EQ_STR(a, b)                                                               \
	do {                                                                              \
		const char *nz__a = (a), *nz__b = (b);                                    \
		if (!nz__a || !nz__b || strcmp(nz__a, nz__b) != 0)                        \
			NZ__FAIL("%s == %s: \"%s\" != \"%s\"", #a, #b, nz__a ? nz__a : "(null)", \
				 nz__b ? nz__b : "(null)");                                \
	} while (0)

#define ASSERT_CONTAINS(hay, needle)                                                      \
	do {                                                                              \
		const char *nz__h = (hay), *nz__n = (needle);                             \
		if (!nz__h || !strstr(nz__h, nz__n))                                      \
			NZ__FAIL("\"%s\" does not contain \"%s\"", nz__h ? nz__h : "(null)", nz__n); \
	} while (0)

#define ASSERT_MEM_EQ(a, b, n)                                                            \
	do {                                                                              \
		if (memcmp((a), (b), (n)) != 0)                                           \
			NZ__FAIL("memory differs: %s vs %s (%zu bytes)", #a, #b, (size_t)(n)); \
	} while (0)

/** rm -rf `path` (a test's own scratch directory). */
static inline void nz_test_rm_rf(const char *path)
{
	char cmd[4300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", path);
	if (system(cmd) != 0)
		NZ__FAIL("cannot remove '%s'", path);
}

/** `out` = "$NZ_TMP/<name>" (NZ_TMP unset: /tmp), made afresh: empty. */
static inline void nz_test_scratch_dir(char *out, size_t n, const char *name)
{
	const char *t = getenv("NZ_TMP");
	snprintf(out, n, "%s/%s", t ? t : "/tmp", name);
	nz_test_rm_rf(out);
	if (mkdir(out, 0755) != 0)
		NZ__FAIL("cannot make '%s'", out);
}

/** Temporary files (a store's ".<name>.nztmp.<...>" names) anywhere below
 *  `dir`: what an interrupted or failed write must not leave behind. */
static inline int nz_test_temp_files(const char *dir)
{
	char cmd[1200];
	FILE *p;
	int n = -1;
	snprintf(cmd, sizeof cmd, "find '%s' -name '.*.nztmp.*' | wc -l", dir);
	p = popen(cmd, "r");
	if (!p || fscanf(p, "%d", &n) != 1)
		NZ__FAIL("cannot count the temporary files below '%s'", dir);
	pclose(p);
	return n;
}

#ifdef H5_VERS_MAJOR /* hdf5.h included before this header */
/** A variable-length UTF-8 string attribute `name` = `value` on `obj` (an
 *  NWB file's object_id, nwb_version). */
static inline void nz_test_h5_str_attr(hid_t obj, const char *name, const char *value)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
	if (a < 0 || H5Awrite(a, t, &value) < 0)
		NZ__FAIL("cannot write the attribute '%s'", name);
	H5Aclose(a);
	H5Sclose(s);
	H5Tclose(t);
}
#endif

#endif
