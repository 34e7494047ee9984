/* Built only with -DNZ_ZSTD_ROOT (cmake/zstd_root.cmake): the process runs
 * the libzstd of that root, the one its headers describe, and c-blosc's zstd
 * goes through it too. Fails when the RUNPATH is missing (the system's
 * libzstd would load), when the headers came from /usr/include, or when a
 * second libzstd is mapped (c-blosc would then call the system's). */
#define _GNU_SOURCE
#include <blosc.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdint.h>
#include <stdlib.h>
#include <zstd.h>

#include "test.h"

typedef struct loaded {
	int zstd, blosc;
	char zstd_path[PATH_MAX];
} loaded;

static int each_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	loaded *l = arg;
	const char *base = strrchr(info->dlpi_name, '/');
	base = base ? base + 1 : info->dlpi_name;
	if (strncmp(base, "libzstd.so", 10) == 0) {
		l->zstd++;
		if (!realpath(info->dlpi_name, l->zstd_path))
			l->zstd_path[0] = '\0';
	}
	if (strncmp(base, "libblosc.so", 11) == 0)
		l->blosc++;
	return 0;
}

int main(void)
{
	char want_dir[PATH_MAX], where[PATH_MAX + 2];
	loaded l = {0};
	Dl_info info;
	enum { N = 1 << 16 };
	static int16_t in[N], back[N];
	static unsigned char packed[2 * N + BLOSC_MAX_OVERHEAD];
	int n;

	/* The headers compiled against are the root's, and the library running
	 * is the one they describe. */
	ASSERT_EQ_STR(ZSTD_VERSION_STRING, NZ_ZSTD_ROOT_VERSION);
	ASSERT_EQ_U64(ZSTD_versionNumber(), ZSTD_VERSION_NUMBER);

	/* Exactly one libzstd mapped, the root's, beside Debian's c-blosc: the
	 * loader found it by soname for c-blosc as well. */
	dl_iterate_phdr(each_object, &l);
	ASSERT_EQ_INT(l.zstd, 1);
	ASSERT_EQ_INT(l.blosc, 1);
	ASSERT(realpath(NZ_ZSTD_LIBDIR, want_dir));
	snprintf(where, sizeof where, "%s/", want_dir);
	if (strncmp(l.zstd_path, where, strlen(where)) != 0)
		NZ__FAIL("libzstd loaded from %s, not from %s", l.zstd_path, where);

	/* The symbol c-blosc's zstd codec calls resolves into that object. */
	ASSERT(dladdr(dlsym(RTLD_DEFAULT, "ZSTD_compress"), &info) && info.dli_fname);
	ASSERT(realpath(info.dli_fname, where));
	ASSERT_EQ_STR(where, l.zstd_path);

	/* c-blosc's zstd works through it, and the library reports it. */
	for (int i = 0; i < N; i++)
		in[i] = (int16_t)((i * 7) % 1000 - 500);
	blosc_init();
	ASSERT(blosc_set_compressor("zstd") >= 0);
	n = blosc_compress(3, BLOSC_SHUFFLE, sizeof in[0], sizeof in, in, packed, sizeof packed);
	ASSERT(n > 0 && (size_t)n < sizeof in);
	ASSERT_EQ_INT(blosc_decompress(packed, back, sizeof back), (int)sizeof back);
	ASSERT(memcmp(in, back, sizeof in) == 0);
	blosc_destroy();
	snprintf(where, sizeof where, "zstd %s,", ZSTD_VERSION_STRING);
	if (!strstr(nz_codec_versions(), where) || strstr(nz_codec_versions(), "built with"))
		NZ__FAIL("nz_codec_versions() says '%s', not '%s'", nz_codec_versions(), where);
	printf("ok: %s; libzstd %s\n", nz_codec_versions(), l.zstd_path);
	return 0;
}
