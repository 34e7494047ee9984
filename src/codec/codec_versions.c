/* nz_codec_versions(): the compression libraries as loaded at run time, for
 * `nwbzarr --version` and benchmark records. Each library reports its own
 * version (not the headers' macros), so a libzstd found through a RUNPATH or
 * LD_LIBRARY_PATH (cmake/zstd_root.cmake) shows as the one in use. */
#include <blosc.h>
#include <lz4.h>
#include <pthread.h>
#include <stdio.h>
#include <zlib.h>
#include <zstd.h>

#include "nwbzarr/common.h"

static char versions[160];
static pthread_once_t versions_once = PTHREAD_ONCE_INIT;

static void versions_init(void)
{
	unsigned int z = ZSTD_versionNumber();
	int n = snprintf(versions, sizeof versions, "blosc %s, zstd %s", blosc_get_version_string(),
	                 ZSTD_versionString());
	/* A libzstd other than the one compiled against is worth saying. */
	if (n > 0 && (size_t)n < sizeof versions && z != ZSTD_VERSION_NUMBER)
		n += snprintf(versions + n, sizeof versions - (size_t)n, " (built with %s)", ZSTD_VERSION_STRING);
	if (n > 0 && (size_t)n < sizeof versions)
		snprintf(versions + n, sizeof versions - (size_t)n, ", lz4 %s, zlib %s", LZ4_versionString(),
		         zlibVersion());
}

const char *nz_codec_versions(void)
{
	pthread_once(&versions_once, versions_init);
	return versions;
}
