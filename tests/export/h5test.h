/* What the export tests that write their own HDF5 files share: a folder of
 * their own under NZ_TMP and string attributes. */
#ifndef NZ_TESTS_EXPORT_H5TEST_H
#define NZ_TESTS_EXPORT_H5TEST_H

#include <hdf5.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test.h"

static char tmp[1024];

/* Make "<NZ_TMP>/<name>_<pid>", the folder tpath names into. */
static inline void h5test_folder(const char *name)
{
	const char *env = getenv("NZ_TMP");
	snprintf(tmp, sizeof tmp, "%s/%s_%d", env ? env : "/tmp", name, (int)getpid());
	mkdir(env ? env : "/tmp", 0755);
	ASSERT(mkdir(tmp, 0755) == 0);
}

/* A path in the test's folder; valid until the 8th call after this one
 * (the files used throughout are copied in main). */
static inline const char *tpath(const char *name)
{
	static char buf[8][1200];
	static int k;
	k = (k + 1) % 8;
	snprintf(buf[k], sizeof buf[k], "%s/%s", tmp, name);
	return buf[k];
}

static inline void str_attr(hid_t obj, const char *name, const char *value)
{
	hid_t t = H5Tcopy(H5T_C_S1), s = H5Screate(H5S_SCALAR), a;
	H5Tset_size(t, H5T_VARIABLE);
	H5Tset_cset(t, H5T_CSET_UTF8);
	a = H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
	ASSERT(a >= 0 && H5Awrite(a, t, &value) >= 0);
	H5Aclose(a);
	H5Sclose(s);
	H5Tclose(t);
}

#endif
